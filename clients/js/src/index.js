// mechopt-client: load a mechopt mechanism file, check its digest and structure, and
// privatize values with an exact sampler. No runtime dependencies; Node >= 18 and browsers.
//
// The file format and the sampler are specified in mechopt's docs/formats.md; the
// vectors in clients/vectors pin both, and the Python client (mechopt.client) passes the
// same vectors, so two clients fed the same random words report the same outputs.

import { checkClaims } from "./claims.js";
import { MechanismError } from "./errors.js";
import { integralFloatEndpoints, parseStrict, unsafeIntegers } from "./json.js";

export { MechanismError };
export { checkClaims, readClaims } from "./claims.js";
export { parseStrict } from "./json.js";
// family files (structured mechanisms, mechopt's docs/families.md); loadMechanism dispatches to them
export { checkFamilyDocument, FamilyMechanism, FamilySampler, familyDigest } from "./family.js";

export const FORMAT = "mechopt-mechanism";
/** The file versions this client reads. Version 1's digest is Python-specific. */
export const VERSIONS = Object.freeze([2]);
const ROW_SUM_EXPONENT = 12n; // rows must sum to 1 within 1e-12, exactly on the decimals
const REQUIRED = ["format", "version", "inputs", "outputs", "matrix", "privacy", "objective",
  "certificate", "sha256"];

const inputError = (field, rule) => new MechanismError("input", field, rule);
const show = (v) => {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
};

// ------------------------------------------------------------------ RFC 8785 (JCS)

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The RFC 8785 canonical JSON text of a value (JSON Canonicalization Scheme).
 *
 * Numbers are written as ECMAScript's Number.prototype.toString writes them (RFC 8785
 * §3.2.2.3 adopts exactly that algorithm), strings as JSON.stringify writes them, and
 * object members sorted by the UTF-16 code units of their names (§3.2.3), which is
 * what Array.prototype.sort does by default.
 */
export function canonicalize(value) {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw inputError("", `${value} is not representable in RFC 8785 JSON`);
      return String(value); // -0 is written "0", as RFC 8785 requires
    case "string":
      if (LONE_SURROGATE.test(value)) throw inputError("", `string ${show(value)} has a lone surrogate (not I-JSON)`);
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value)) {
        // a row of finite numbers: JSON.stringify writes each with Number.prototype.toString
        // (-0 as "0"), exactly RFC 8785's form, natively
        if (value.every((v) => typeof v === "number" && Number.isFinite(v))) return JSON.stringify(value);
        return `[${value.map(canonicalize).join(",")}]`;
      }
      const keys = Object.keys(value).sort();
      return `{${keys.map((k) => `${canonicalize(k)}:${canonicalize(value[k])}`).join(",")}}`;
    }
    default:
      throw inputError("", `a ${typeof value} is not a JSON value`);
  }
}

const IN_BROWSER = typeof window !== "undefined" || typeof self !== "undefined" && typeof process === "undefined";

let subtlePromise = null;
async function subtle() {
  if (globalThis.crypto?.subtle) return globalThis.crypto.subtle;
  if (IN_BROWSER) {
    // crypto.subtle exists only in secure contexts (https, localhost)
    throw new MechanismError("input", "crypto", "WebCrypto (crypto.subtle) is unavailable: serve the page over https");
  }
  // Node 18 has no global crypto: node:crypto's webcrypto
  subtlePromise ??= import(/* webpackIgnore: true */ "node:crypto").then((m) => m.webcrypto.subtle);
  return subtlePromise;
}

let randomSource = null;
function getRandomValues(array) {
  if (globalThis.crypto?.getRandomValues) return globalThis.crypto.getRandomValues(array);
  if (randomSource) return randomSource(array);
  throw new MechanismError("input", "crypto", "no crypto.getRandomValues: on Node 18 call `await ready()` first");
}

/** Node 18 has no global `crypto`: await this once before sampling with secure words there. */
export async function ready() {
  if (globalThis.crypto?.getRandomValues) return;
  const { webcrypto } = await import(/* webpackIgnore: true */ "node:crypto");
  randomSource = (a) => webcrypto.getRandomValues(a);
}

/** SHA-256 of a string's UTF-8 bytes, as 64 lowercase hex digits (WebCrypto). */
export async function sha256Hex(text) {
  const bytes = new TextEncoder().encode(text);
  const hash = new Uint8Array(await (await subtle()).digest("SHA-256", bytes));
  return Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The hashed object of a version 2 file: inputs, outputs, matrix, privacy (+ memoize). */
export function hashedPayload(doc) {
  const payload = { inputs: doc.inputs, outputs: doc.outputs, matrix: doc.matrix, privacy: doc.privacy };
  if ("memoize" in doc) payload.memoize = doc.memoize;
  return payload;
}

/** The sha256 of a version 2 document: SHA-256 of the RFC 8785 text of its hashed payload. */
export async function digest(doc) {
  return sha256Hex(canonicalize(hashedPayload(doc)));
}

// ------------------------------------------------------------- exact decimal values

const DECIMAL = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/;

/**
 * The exact decimal value of a JSON number as [integer, scale]: value = integer / 10**scale.
 * The digits are the shortest round-trip ones (Number.prototype.toString), the same that
 * Python's repr and the exact verifier read.
 */
export function exactDecimal(x) {
  const m = DECIMAL.exec(String(x));
  if (!m) throw inputError("", `${x} is not a non-negative finite number`);
  const frac = m[2] ?? "";
  let scale = frac.length - Number(m[3] ?? 0);
  let digits = BigInt(m[1] + frac);
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return [digits, scale];
}

const gcd = (a, b) => {
  while (b) [a, b] = [b, a % b];
  return a;
};

/**
 * Step 1 of the exact sampler: the smallest non-negative integers proportional to the
 * row's exact decimals (BigInt). Output j is reported with probability c[j] / sum(c).
 */
export function rowWeights(row) {
  const decimals = row.map(exactDecimal);
  const scale = decimals.reduce((s, [, e]) => Math.max(s, e), 0);
  const ints = decimals.map(([d, e]) => d * 10n ** BigInt(scale - e));
  const g = ints.reduce(gcd, 0n);
  return ints.map((v) => v / g);
}

// ------------------------------------------------------------------- structure checks

function checkLabels(doc, field) {
  const labels = doc[field];
  if (!Array.isArray(labels) || labels.length === 0) {
    throw inputError(field, `must be a non-empty list of strings, got ${show(labels)}`);
  }
  const seen = new Map();
  labels.forEach((label, i) => {
    if (typeof label !== "string") throw inputError(`${field}[${i}]`, `must be a string, got ${show(label)}`);
    if (seen.has(label)) {
      throw inputError(`${field}[${i}]`, `labels must be unique, ${show(label)} also appears at ${field}[${seen.get(label)}]`);
    }
    seen.set(label, i);
  });
  return labels;
}

function checkMatrix(doc, k, m) {
  const matrix = doc.matrix;
  if (!Array.isArray(matrix) || matrix.length !== k) {
    throw inputError("matrix", `must be a list of ${k} rows (one per input), got ${Array.isArray(matrix) ? matrix.length : typeof matrix}`);
  }
  matrix.forEach((row, i) => {
    if (!Array.isArray(row) || row.length !== m) {
      throw inputError(`matrix[${i}]`, `must be a list of ${m} entries (one per output), got ${Array.isArray(row) ? row.length : typeof row}`);
    }
    let total = 0;
    for (let j = 0; j < m; j += 1) {
      const v = row[j];
      if (typeof v !== "number" || !Number.isFinite(v) || !(v >= 0)) {
        const field = `matrix[${i}][${j}]`;
        if (typeof v !== "number") throw inputError(field, `must be a number, got ${show(v)}`);
        if (!Number.isFinite(v)) throw inputError(field, `must be finite, got ${v}`);
        throw inputError(field, `must be >= 0, got ${v}`);
      }
      total += v;
    }
    // the float sum of m non-negative doubles is within (m - 1) u of theirs, and the decimals
    // within u each of the doubles: a sum this close to 1 proves the exact rule
    if (Math.abs(total - 1) <= 1e-12 - (m + 2) * 2 ** -52 * Math.max(total, 1)) return;
    const decimals = row.map(exactDecimal);
    const scale = decimals.reduce((s, [, e]) => Math.max(s, e), 0);
    const exact = decimals.reduce((acc, [d, e]) => acc + d * 10n ** BigInt(scale - e), 0n);
    const one = 10n ** BigInt(scale);
    const off = exact > one ? exact - one : one - exact;
    if (off * 10n ** ROW_SUM_EXPONENT > one) {
      throw inputError(`matrix[${i}]`, `row must sum to 1 within 1e-12, sums to ${total} (input ${show(doc.inputs[i])})`);
    }
  });
}

// objective and certificate: the fields mechopt's JSON Schema requires, of their types
function checkObjectiveCertificate(doc) {
  const { objective, certificate } = doc;
  const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  if (!isObject(objective)) throw inputError("objective", `must be an object, got ${show(objective)}`);
  if (!("kind" in objective)) throw inputError("objective.kind", "is required (the objective's name)");
  if (!isObject(certificate)) throw inputError("certificate", `must be an object, got ${show(certificate)}`);
  for (const name of ["verified", "method", "checks"]) {
    if (!(name in certificate)) throw inputError(`certificate.${name}`, "is required");
  }
  if (typeof objective.kind !== "string") throw inputError("objective.kind", `must be a string, got ${show(objective.kind)}`);
  for (const name of ["value", "bound"]) {
    const v = objective[name];
    if (name in objective && v !== null && typeof v !== "number") throw inputError(`objective.${name}`, `must be a number or null, got ${show(v)}`);
  }
  if (typeof certificate.verified !== "boolean") throw inputError("certificate.verified", `must be true or false, got ${show(certificate.verified)}`);
  if (typeof certificate.method !== "string") throw inputError("certificate.method", `must be a string, got ${show(certificate.method)}`);
  if (!Array.isArray(certificate.checks)) throw inputError("certificate.checks", `must be a list, got ${show(certificate.checks)}`);
  certificate.checks.forEach((c, i) => {
    if (!isObject(c) || !("notion" in c) || !("ok" in c)) {
      throw inputError(`certificate.checks[${i}]`, `must be an object with 'notion' and 'ok', got ${show(c)}`);
    }
  });
}

const HASHED = new Set(["inputs", "outputs", "matrix", "privacy", "memoize"]);

// ./family.js (family files) is loaded on first use; until it exists, family files are refused
let familyPromise = null;
async function familyModule() {
  familyPromise ??= import("./family.js").catch((err) => {
    if (err?.code === "ERR_MODULE_NOT_FOUND" || /dynamically imported module|Failed to fetch|Cannot find module/.test(String(err?.message))) return null;
    throw err;
  });
  const family = await familyPromise;
  if (!family?.checkFamilyDocument) {
    throw inputError("family", "structured mechanisms (a 'family' instead of 'outputs' and 'matrix') are an extension point of format version 2 that this client does not read yet");
  }
  return family;
}

/**
 * Check a parsed mechanism document, in the order of mechopt's one load path
 * (mechopt._client_document.check_text, which `mechopt verify` runs first):
 *
 * 1. structure (docs/formats.md): labels, a k x m matrix of finite numbers >= 0 whose rows
 *    sum to 1 within 1e-12 (exactly, on the decimals), privacy a list of objects with a
 *    string notion, objective and certificate with the fields the JSON Schema requires;
 * 2. the sha256, recomputed from the RFC 8785 canonical form of the hashed fields;
 * 3. the claims' own parameters (claims.js readClaims: numbers where numbers belong, labels
 *    that exist, sizes k, ...), then every claim verified exactly on the matrix (checkClaims).
 *
 * Resolves to the document; rejects with a MechanismError: kind "input" naming the field
 * (malformed), or "verification" (the digest does not match, no claim, or the matrix breaks
 * a claim: field "privacy[i]"). `{verifyClaims: false}` stops after the digest: for test
 * vectors of the digest and the sampler only, never for a file you privatize with.
 */
export async function checkDocument(doc, { verifyClaims = true } = {}) {
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    throw inputError("document", `must be a JSON object, got ${show(doc)}`);
  }
  if ("family" in doc) {
    // family files (structured mechanisms): ./family.js checks structure, digest and claims
    const family = await familyModule();
    return family.checkFamilyDocument(doc);
  }
  const missing = REQUIRED.filter((name) => !(name in doc));
  if (missing.length) throw inputError(missing[0], `required field is missing; missing: ${show(missing)}`);
  if (doc.format !== FORMAT) throw inputError("format", `must be ${show(FORMAT)}, got ${show(doc.format)}`);
  if (doc.version === 1) {
    throw inputError("version", "is 1: the version 1 digest is Python-specific; re-export the mechanism with mechopt (it writes version 2)");
  }
  if (!VERSIONS.includes(doc.version) || integralFloatEndpoints(doc).has("version")) {
    // 2.0 is not 2 for Python's reader (an int is required): refused alike
    throw inputError("version", `must be 2 (the version this client reads), got ${show(doc.version)}`);
  }
  const inputs = checkLabels(doc, "inputs");
  const outputs = checkLabels(doc, "outputs");
  checkMatrix(doc, inputs.length, outputs.length);
  if (!Array.isArray(doc.privacy)) throw inputError("privacy", `must be a list of notions, got ${show(doc.privacy)}`);
  doc.privacy.forEach((n, i) => {
    if (n === null || typeof n !== "object" || Array.isArray(n) || typeof n.notion !== "string") {
      throw inputError(`privacy[${i}]`, `must be an object with a string 'notion', got ${show(n)}`);
    }
  });
  checkObjectiveCertificate(doc);
  if ("memoize" in doc && typeof doc.memoize !== "boolean") {
    throw inputError("memoize", `must be true or false, got ${show(doc.memoize)}`);
  }
  const recorded = doc.sha256;
  if (typeof recorded !== "string" || !/^[0-9a-f]{64}$/.test(recorded)) {
    throw inputError("sha256", `must be 64 lowercase hex digits, got ${show(recorded)}`);
  }
  // an integer token beyond +-(2^53 - 1) in a hashed field: RFC 8785 cannot write it (Python
  // reads it exactly and refuses); JSON.parse would round it silently
  const unsafe = unsafeIntegers(doc).find((path) => HASHED.has(path.split(/[.[]/)[0]));
  if (unsafe) throw inputError("privacy", `cannot be written as canonical JSON: the integer at ${unsafe} is beyond +-(2^53 - 1), the range RFC 8785 allows`);
  let computed;
  try {
    computed = await digest(doc);
  } catch (err) {
    if (err instanceof MechanismError) throw inputError("privacy", `cannot be written as canonical JSON: ${err.rule}`);
    throw err;
  }
  if (computed !== recorded) {
    throw new MechanismError("verification", "sha256", `recorded digest ${recorded} does not match ${computed}, the digest of the hashed fields; the file was modified after export`);
  }
  if (verifyClaims) checkClaims(doc, { integralFloatEndpoints: integralFloatEndpoints(doc) });
  return doc;
}

/**
 * Load a mechanism: from JSON text, a parsed object, or (in browsers / Node 18+) a URL
 * or Response. Text is read by the strict reader (json.js: duplicate keys, nesting deeper
 * than 64, NaN/Infinity, numbers beyond float range and lone surrogates refused); then
 * checkDocument: structure, digest, and every privacy claim verified exactly. Resolves to
 * a Mechanism (a FamilyMechanism for a family file). `{verifyClaims: false}`: see checkDocument.
 */
export async function loadMechanism(source, { verifyClaims = true } = {}) {
  let doc = source;
  if (typeof Response !== "undefined" && source instanceof Response) {
    doc = await source.text();
  } else if (source instanceof URL) {
    const response = await fetch(source);
    if (!response.ok) throw inputError(String(source), `cannot fetch the mechanism file: HTTP ${response.status}`);
    doc = await response.text();
  }
  if (typeof doc === "string") {
    doc = parseStrict(doc); // duplicate keys, depth, range: refused
  } else if (doc !== null && typeof doc === "object") {
    // a private copy: what is verified is what is sampled, whatever the caller does meanwhile
    try {
      doc = structuredClone(doc);
    } catch (err) {
      throw inputError("document", `must be plain JSON data: ${err.message}`);
    }
  }
  if (doc !== null && typeof doc === "object" && !Array.isArray(doc) && "family" in doc) {
    // a family file: family.js checks it and builds its mechanism (inputs, sampler(), ...)
    const family = await familyModule();
    await family.checkFamilyDocument(doc);
    return new family.FamilyMechanism(doc);
  }
  await checkDocument(doc, { verifyClaims });
  return new Mechanism(doc);
}

// --------------------------------------------------------------------- random words

/**
 * A source of cryptographically secure 32-bit words: crypto.getRandomValues, read
 * 16 384 words at a time. A word source is a function returning the next word.
 */
export function secureWords(blockWords = 16384) {
  const buffer = new Uint32Array(blockWords);
  let pos = blockWords;
  return () => {
    if (pos === blockWords) {
      getRandomValues(buffer);
      pos = 0;
    }
    return buffer[pos++];
  };
}

/** A word source reading an explicit list of 32-bit words (test vectors); counts words read. */
export function wordStream(words) {
  let pos = 0;
  const take = () => {
    if (pos >= words.length) throw inputError("words", `the word stream ran out after ${pos} words`);
    const w = words[pos];
    if (!Number.isInteger(w) || w < 0 || w > 0xffffffff) throw inputError(`words[${pos}]`, `must be an integer in [0, 2**32), got ${show(w)}`);
    pos += 1;
    return w;
  };
  take.used = () => pos;
  return take;
}

// ------------------------------------------------------------------ exact sampling

const TWO32 = 4294967296;

function bitLength(v) {
  return v === 0n ? 0 : v.toString(2).length;
}

// Prepare one row: weights -> totals and cumulative sums as big-endian 32-bit limbs.
function prepareRow(weights) {
  let total = 0n;
  const cumulative = weights.map((w) => (total += w));
  const bits = bitLength(total - 1n);
  const count = Math.ceil(bits / 32);
  const topBits = bits - 32 * (count - 1);
  const mask0 = count === 0 ? 0 : topBits === 32 ? 0xffffffff : 2 ** topBits - 1;
  const limbs = (v) => {
    const out = new Array(count);
    for (let i = count - 1; i >= 0; i -= 1) {
      out[i] = Number(v & 0xffffffffn);
      v >>= 32n;
    }
    return out;
  };
  const m = weights.length;
  if (bits <= 53) {
    // small totals: exact in a double
    return { count, mask0, small: true, total: Number(total), cum: Float64Array.from(cumulative, Number), m };
  }
  const flat = new Uint32Array(m * count);
  cumulative.forEach((c, j) => flat.set(limbs(c), j * count));
  return { count, mask0, small: false, total: Uint32Array.from(limbs(total)), cum: flat, m };
}

// compare limbs r[0..n) with flat[off..off+n): true when r < flat value
function below(r, flat, off, n) {
  for (let i = 0; i < n; i += 1) {
    const a = r[i];
    const b = flat[off + i];
    if (a !== b) return a < b;
  }
  return false;
}

/**
 * Steps 2-4 of the exact sampler: a uniform integer U below the row's total from 32-bit
 * words (n = ceil(b/32) words joined big-endian, low b bits kept, rejected if >= total),
 * then the output j with C[j-1] <= U < C[j].
 */
function drawRow(row, take, scratch) {
  const { count, mask0 } = row;
  if (row.small) {
    let u;
    do {
      u = count === 0 ? 0 : count === 1 ? (take() & mask0) >>> 0 : ((take() & mask0) >>> 0) * TWO32 + take();
    } while (u >= row.total);
    // smallest j with u < cum[j]
    const cum = row.cum;
    let lo = 0;
    let hi = row.m - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (u < cum[mid]) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
  do {
    scratch[0] = (take() & mask0) >>> 0;
    for (let i = 1; i < count; i += 1) scratch[i] = take();
  } while (!below(scratch, row.total, 0, count));
  let lo = 0;
  let hi = row.m - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (below(scratch, row.cum, mid * count, count)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** A checked mechanism: labels, matrix, and samplers. Build it with loadMechanism. */
export class Mechanism {
  constructor(doc) {
    this.doc = doc;
    this.inputs = Object.freeze([...doc.inputs]);
    this.outputs = Object.freeze([...doc.outputs]);
    this.matrix = doc.matrix;
    this.privacy = doc.privacy;
    this.sha256 = doc.sha256;
    this.memoize = doc.memoize === true;
    this.#weights = new Array(doc.matrix.length);
    this.#rows = doc.matrix.map((row) => Float64Array.from(row)); // the verified values, kept
  }

  #weights;
  #rows;

  /** The integer weights of every row (computed on first use; a row's alone by rowWeightsOf). */
  get weights() {
    for (let x = 0; x < this.#weights.length; x += 1) this.rowWeightsOf(x);
    return this.#weights;
  }

  /** The integer weights of row x (docs/formats.md, step 1 of the exact sampler), computed once. */
  rowWeightsOf(x) {
    this.#weights[x] ??= rowWeights(Array.from(this.#rows[x]));
    return this.#weights[x];
  }

  /** Exact probabilities of each output for an input, as [numerator, denominator] BigInts. */
  probabilities(label) {
    const w = this.rowWeightsOf(this.#index(label));
    const total = w.reduce((a, b) => a + b, 0n);
    return w.map((c) => [c, total]);
  }

  #index(label) {
    const x = this.inputs.indexOf(label);
    if (x < 0) throw inputError("label", `${show(label)} is not an input of the mechanism`);
    return x;
  }

  /**
   * A sampler. Options: `words` — a word source (default: secureWords(), i.e.
   * crypto.getRandomValues); `store` — for a memoized mechanism, where the permanent
   * responses live: any object with get(key) and set(key, value), e.g. a Map (default)
   * or localStorageStore(); keys are "<sha256>:<input label>".
   */
  sampler({ words, store } = {}) {
    return new Sampler(this, words ?? secureWords(), store ?? new Map());
  }
}

/** Draws reports from a Mechanism (see Mechanism.sampler). */
export class Sampler {
  #rows;
  #take;
  #scratch;
  #index;
  #outputIndex;

  constructor(mechanism, take, store) {
    this.mechanism = mechanism;
    this.store = store;
    this.#take = take;
    this.#rows = new Array(mechanism.inputs.length); // prepared on first use
    this.#scratch = new Uint32Array(1);
    this.#index = new Map(mechanism.inputs.map((x, i) => [x, i]));
    this.#outputIndex = new Set(mechanism.outputs);
  }

  #row(x) {
    let row = this.#rows[x];
    if (!row) {
      row = this.#rows[x] = prepareRow(this.mechanism.rowWeightsOf(x));
      if (row.count > this.#scratch.length) this.#scratch = new Uint32Array(row.count);
    }
    return row;
  }

  #lookup(label) {
    const x = this.#index.get(label);
    if (x === undefined) throw inputError("label", `${show(label)} is not an input of the mechanism`);
    return x;
  }

  #fresh(x) {
    return this.mechanism.outputs[drawRow(this.#row(x), this.#take, this.#scratch)];
  }

  #memoized(x) {
    const label = this.mechanism.inputs[x];
    const key = `${this.mechanism.sha256}:${label}`;
    let kept = this.store.get(key);
    if (kept === undefined || kept === null) {
      kept = this.#fresh(x);
      this.store.set(key, kept);
    } else if (!this.#outputIndex.has(kept)) {
      throw inputError("store", `holds ${show(kept)} for input ${show(label)}, which is not an output of this mechanism`);
    }
    return kept;
  }

  /** Privatize one value: its report (the kept one, for a memoized mechanism). */
  sample(label) {
    const x = this.#lookup(label);
    return this.mechanism.memoize ? this.#memoized(x) : this.#fresh(x);
  }

  /** Privatize many values, in order; every label is checked before any draw. */
  sampleMany(labels) {
    const rows = Array.from(labels, (l) => this.#lookup(l));
    return rows.map((x) => (this.mechanism.memoize ? this.#memoized(x) : this.#fresh(x)));
  }

  /** Draw n fresh reports for one input as output indices (simulation and benchmarks). */
  sampleIndices(label, n) {
    const row = this.#row(this.#lookup(label));
    const out = new Uint32Array(n);
    for (let i = 0; i < n; i += 1) out[i] = drawRow(row, this.#take, this.#scratch);
    return out;
  }
}

/** A memoization store on localStorage (browsers): get/set with a key prefix. */
export function localStorageStore(prefix = "mechopt:", storage = globalThis.localStorage) {
  return {
    get: (key) => storage.getItem(prefix + key) ?? undefined,
    set: (key, value) => storage.setItem(prefix + key, value),
  };
}
