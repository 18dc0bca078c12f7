// mechopt-client: FAMILY mechanism files (structured mechanisms: d-subset selection
// mixtures and the Hadamard response), checked and verified EXACTLY, then sampled with the
// same 32-bit words and the same draw order as Python's mechopt.families.FamilySampler.
// No dependencies; Node >= 18 and browsers.
//
// The file format, the families and the order of the draws are specified in mechopt's
// docs/families.md; clients/vectors/families.json pins digests, verdicts and reports.
//
// checkFamilyDocument mirrors what mechopt's one load-and-verify path does with a family
// file (mechopt._client_document.check_text, which `mechopt verify` runs first), in the same
// order: the required fields, format, version, inputs; the family's parameters
// (mechopt.families.family_from_spec); objective, certificate; the sha256 (RFC 8785 of
// inputs, family, privacy); the claims' own parameters (claims.js, as mechopt._claims); then
// every claim decided EXACTLY from the parameters (mechopt/families/_privacy.py): ratio,
// weights, budgets and priors are read as the exact decimals they print as (BigInt
// rationals) and every comparison with e^eps is decided by exact.js's leqExp (a rigorous
// BigInt enclosure of e^eps, refined until it decides; no floating-point function, no
// logarithm, is trusted).

import { add, cmp, decimalOf, leqExp, mul, ONE, reduce, sub, ZERO } from "./exact.js";

import { readClaims } from "./claims.js";
import { integralFloatEndpoints, unsafeIntegers } from "./json.js";
// index.js imports this module dynamically; the names below are read at call time only
import * as client from "./index.js";

export const FAMILY_KINDS = Object.freeze(["subset_selection", "hadamard_response"]);
const REQUIRED = ["format", "version", "inputs", "family", "privacy", "objective", "certificate", "sha256"];
// mixture weights must sum to 1 within 1e-12, computed exactly (as matrix rows)
const WEIGHT_TOLERANCE = { n: 1n, d: 10n ** 12n };

const inputError = (field, rule) => new client.MechanismError("input", field, rule);
const verificationError = (field, rule) => new client.MechanismError("verification", field, rule);
const show = (v) => {
  try {
    const text = JSON.stringify(v);
    return text === undefined ? String(v) : text.length > 80 ? `${text.slice(0, 77)}...` : text;
  } catch {
    return String(v);
  }
};
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isNumber = (v) => typeof v === "number";

/** The exact decimal value of a finite JSON number, as a rational (mechopt's exact_number). */
function exactNumber(value, field) {
  if (!isNumber(value)) throw inputError(field, `must be a number, got ${show(value)}`);
  if (!Number.isFinite(value)) throw inputError(field, `must be finite, got ${value}`);
  return decimalOf(value);
}

// ------------------------------------------------------------------- the families

function parseRatio(spec, where) {
  if (!("ratio" in spec)) {
    throw inputError(`${where}.ratio`, "is required: the exact probability ratio e^epsilon' (a number >= 1)");
  }
  const r = exactNumber(spec.ratio, `${where}.ratio`);
  if (cmp(r, ONE) < 0) throw inputError(`${where}.ratio`, `must be >= 1, got ${show(spec.ratio)}`);
  return reduce(r);
}

function unknownKeys(spec, allowed) {
  return Object.keys(spec).filter((key) => !allowed.includes(key)).sort();
}

/**
 * The parameters of a `family` object, checked as mechopt.families.family_from_spec checks
 * them (`writtenAsFloat`: paths such as "family.mixture[0].d" whose integer was written as a
 * decimal, json.js's integralFloatEndpoints; Python refuses a float size). Returns
 * {kind: "subset_selection", k, ratio, components: [[d, weight], ...], informative} (exact
 * weights renormalised to sum to 1, zero weights dropped, increasing d) or
 * {kind: "hadamard_response", k, ratio, sensitive: [positions, increasing], others, slots}.
 *
 * parseFamily({kind: "subset_selection", ratio: 2, mixture: [{d: 1, weight: 1}]}, ["a", "b"])
 *   -> {kind: "subset_selection", k: 2, ratio: {n: 2n, d: 1n}, components: [[1, {n: 1n, d: 1n}]], informative: [1]}
 */
export function parseFamily(spec, inputs, where = "family", writtenAsFloat = new Set()) {
  if (!isObject(spec)) throw inputError(where, `must be an object, got ${show(spec)}`);
  const k = inputs.length;
  if (spec.kind === "subset_selection") {
    const extra = unknownKeys(spec, ["kind", "ratio", "mixture"]);
    if (extra.length) throw inputError(where, `unknown key(s) ${show(extra)}; a subset_selection has kind, ratio, mixture`);
    const ratio = parseRatio(spec, where);
    const mix = spec.mixture;
    if (!Array.isArray(mix) || mix.length === 0) {
      throw inputError(`${where}.mixture`, "must be a non-empty list of {\"d\": int, \"weight\": number}");
    }
    const comps = new Map();
    mix.forEach((c, i) => {
      const w = `${where}.mixture[${i}]`;
      if (!isObject(c) || Object.keys(c).length !== 2 || !("d" in c) || !("weight" in c)) {
        throw inputError(w, `must be an object with exactly the keys 'd' and 'weight', got ${show(c)}`);
      }
      const d = c.d;
      if (!Number.isInteger(d) || d < 0 || d > k || writtenAsFloat.has(`${w}.d`)) {
        throw inputError(`${w}.d`, `must be an integer in [0, ${k}], got ${show(d)}${writtenAsFloat.has(`${w}.d`) ? " written as a decimal" : ""}`);
      }
      if (comps.has(d)) throw inputError(`${w}.d`, `${d} appears twice; each subset size may appear once`);
      const wt = exactNumber(c.weight, `${w}.weight`);
      if (wt.n < 0n) throw inputError(`${w}.weight`, `must be >= 0, got ${show(c.weight)}`);
      comps.set(d, wt);
    });
    let total = ZERO;
    for (const w of comps.values()) total = reduce(add(total, w));
    const off = sub(total, ONE);
    if (cmp(off.n < 0n ? { n: -off.n, d: off.d } : off, WEIGHT_TOLERANCE) > 0) {
      const sum = [...comps.values()].reduce((s, w) => s + Number(w.n) / Number(w.d), 0);
      throw inputError(`${where}.mixture`, `weights must sum to 1 within 1e-12, they sum to ${sum}`);
    }
    const components = [...comps.entries()]
      .filter(([, w]) => w.n > 0n)
      .sort(([a], [b]) => a - b)
      .map(([d, w]) => [d, reduce({ n: w.n * total.d, d: w.d * total.n })]);
    return { kind: "subset_selection", k, ratio, components, informative: components.map(([d]) => d).filter((d) => d > 0 && d < k) };
  }
  if (spec.kind === "hadamard_response") {
    const extra = unknownKeys(spec, ["kind", "ratio", "sensitive"]);
    if (extra.length) throw inputError(where, `unknown key(s) ${show(extra)}; a hadamard_response has kind, ratio, sensitive`);
    const ratio = parseRatio(spec, where);
    const sens = spec.sensitive;
    if (!Array.isArray(sens) || sens.length === 0) throw inputError(`${where}.sensitive`, "must be a non-empty list of input labels");
    const pos = new Map(inputs.map((x, i) => [x, i]));
    const idx = sens.map((s, j) => {
      if (typeof s !== "string" || !pos.has(s)) throw inputError(`${where}.sensitive[${j}]`, `${show(s)} is not an input label`);
      return pos.get(s);
    });
    if (new Set(idx).size !== idx.length) throw inputError(`${where}.sensitive`, "labels must be unique");
    const sensitive = idx.sort((a, b) => a - b);
    const set = new Set(sensitive);
    const others = [];
    for (let x = 0; x < k; x += 1) if (!set.has(x)) others.push(x);
    const slots = 2 ** sensitive.length.toString(2).length; // 2^ceil(log2(s+1))
    return { kind: "hadamard_response", k, ratio, sensitive, others, slots };
  }
  throw inputError(`${where}.kind`, `must be one of ${FAMILY_KINDS.join(", ")}, got ${show(spec.kind)}`);
}

/** The sha256 of a family document: SHA-256 of the RFC 8785 text of {inputs, family, privacy}. */
export async function familyDigest(doc) {
  // an integer token beyond +-(2^53 - 1) in a hashed field: RFC 8785 cannot write it (Python
  // reads it exactly and refuses); JSON.parse has rounded it
  const unsafe = unsafeIntegers(doc).find((path) => ["inputs", "family", "privacy"].includes(path.split(/[.[]/)[0]));
  if (unsafe) throw inputError("family", `cannot be written as RFC 8785 canonical JSON: the integer at ${unsafe} is beyond +-(2^53 - 1)`);
  let text;
  try {
    text = client.canonicalize({ inputs: doc.inputs, family: doc.family, privacy: doc.privacy });
  } catch (err) {
    if (err instanceof client.MechanismError) throw inputError("family", `cannot be written as RFC 8785 canonical JSON: ${err.rule}`);
    throw err;
  }
  return client.sha256Hex(text);
}

// ----------------------------------------------------------------------- structure

// the rules of mechopt._client_document's family branch, in its order (the objective,
// certificate and sha256 fields are checked after the family's parameters, the claims'
// parameters after the digest)
function checkHead(doc) {
  if (!isObject(doc)) throw inputError("document", `must be a JSON object, got ${show(doc)}`);
  const missing = REQUIRED.filter((name) => !(name in doc));
  if (missing.length) {
    throw inputError(missing[0], `required field is missing from a family mechanism file (it requires ${REQUIRED.join(", ")}); missing: ${show(missing)}`);
  }
  if (doc.format !== client.FORMAT) throw inputError("format", `must be ${show(client.FORMAT)}, got ${show(doc.format)}`);
  if (doc.version !== 2 || integralFloatEndpoints(doc).has("version")) {
    throw inputError("version", `a family file is version 2, got ${show(doc.version)}${doc.version === 2 ? " written as a decimal" : ""}`);
  }
  for (const name of ["outputs", "matrix"]) {
    if (name in doc) throw inputError(name, "a family file lists no outputs and no matrix ('family' replaces them)");
  }
  // the family digest does not cover a memoize flag: an added one must not pass unseen (as Python)
  if ("memoize" in doc) throw inputError("memoize", "family mechanisms are not memoized (their digest covers no 'memoize' field); remove it");
  const inputs = doc.inputs;
  if (!Array.isArray(inputs) || inputs.length === 0) throw inputError("inputs", `must be a non-empty list of strings, got ${show(inputs)}`);
  const seen = new Map();
  inputs.forEach((label, i) => {
    if (typeof label !== "string") throw inputError(`inputs[${i}]`, `must be a string, got ${show(label)}`);
    if (seen.has(label)) throw inputError(`inputs[${i}]`, `labels must be unique, ${show(label)} also appears at inputs[${seen.get(label)}]`);
    seen.set(label, i);
  });
}

function checkTail(doc) {
  const { objective, certificate } = doc;
  if (!isObject(objective)) throw inputError("objective", `must be an object, got ${show(objective)}`);
  if (!("kind" in objective)) throw inputError("objective.kind", "is required (the objective's name)");
  if (!isObject(certificate)) throw inputError("certificate", `must be an object, got ${show(certificate)}`);
  for (const key of ["verified", "method", "checks"]) if (!(key in certificate)) throw inputError(`certificate.${key}`, "is required");
  if (typeof doc.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(doc.sha256)) {
    throw inputError("sha256", `must be 64 lowercase hex digits, got ${show(doc.sha256)}`);
  }
}

// ------------------------------------------------------------------- the claims

const budgetOrNull = (v) => (isNumber(v) && Number.isFinite(v) ? decimalOf(v) : null); // "inf": null

/**
 * The values of a claim the family check reads, as exact rationals and input positions:
 * {name, eps, blocks, sensitive, matrix, edges, distance, priors, delta, lower, upper}. The
 * claim must have passed the claim rules of this client (claims.js's readClaims, the rules
 * of mechopt._claims.parse_claim); this only reads it.
 */
export function claimValues(spec, inputs) {
  const pos = new Map(inputs.map((x, i) => [x, i]));
  const index = (it) => (typeof it === "string" ? pos.get(it) : pos.has(String(it)) ? pos.get(String(it)) : it);
  const out = { name: spec.notion };
  if ("epsilon" in spec) out.eps = decimalOf(spec.epsilon);
  switch (spec.notion) {
    case "block":
      out.blocks = spec.blocks.map((b) => b.map(index));
      break;
    case "high_low":
    case "uldp":
      out.sensitive = spec.sensitive.map(index);
      break;
    case "eldp":
      out.matrix = spec.matrix.map((row) => row.map(budgetOrNull));
      break;
    case "metric":
      if ("edges" in spec) out.edges = spec.edges.map((e) => [index(e[0]), index(e[1]), e.length === 2 ? ONE : decimalOf(e[2])]);
      else out.distance = spec.distance.map((row) => row.map(budgetOrNull));
      break;
    case "lip":
      out.priors = [spec.prior.map(decimalOf)];
      out.delta = "delta" in spec ? spec.delta : 0;
      break;
    case "bp_lip":
      if ("priors" in spec) {
        out.priors = spec.priors.map((P) => P.map(decimalOf));
      } else {
        out.lower = spec.lower.map(decimalOf);
        out.upper = spec.upper.map(decimalOf);
      }
      break;
    default:
      break;
  }
  return out;
}

// ---------------------------------------------------------- exact privacy of a family

const minRat = (a, b) => (a === null ? b : b === null ? a : cmp(a, b) <= 0 ? a : b);
const maxRat = (a, b) => (cmp(a, b) >= 0 ? a : b);
const sumRat = (xs) => xs.reduce((s, v) => add(s, v), ZERO);
const popcount = (v) => {
  let c = 0;
  for (; v; v &= v - 1) c += 1;
  return c;
};

// b_x = min over x' != x of E[x][x'] (null: no finite budget), for the E-LDP-like notions
function rowBudgets(n, k) {
  const out = new Array(k).fill(null);
  switch (n.name) {
    case "ldp":
    case "wc_lip":
      return out.fill(k > 1 ? n.eps : null);
    case "block":
      for (const b of n.blocks) if (b.length > 1) for (const x of b) out[x] = n.eps;
      return out;
    case "high_low":
      for (const a of n.sensitive) out[a] = k > 1 ? n.eps : null;
      return out;
    case "eldp":
      return n.matrix.map((row, x) => row.reduce((m, v, xp) => (xp === x || v === null ? m : minRat(m, v)), null));
    case "metric":
      if (n.edges) {
        for (const [a, b, w] of n.edges) {
          if (a === b) continue;
          const v = mul(n.eps, w);
          out[a] = minRat(out[a], v);
          out[b] = minRat(out[b], v);
        }
        return out;
      }
      return n.distance.map((row, x) => row.reduce((m, v, xp) => (xp === x || v === null ? m : minRat(m, mul(n.eps, v))), null));
    default:
      return null;
  }
}

// LIP conditions of one column type (entries r on a set of prior mass loMass, entries 1 on
// one of mass hiMass; null: no such entry): r <= e^eps (1 + (r-1) loMass) and
// 1 + (r-1) hiMass <= e^eps
function lipPair(r, loMass, hiMass, eps, fails, where) {
  const r1 = sub(r, ONE);
  if (loMass !== null) {
    const den = add(ONE, mul(r1, loMass));
    if (!leqExp(r, den, eps)) fails.push(`${where}: ratio / (P.q) > e^epsilon`);
  }
  if (hiMass !== null) {
    if (!leqExp(add(ONE, mul(r1, hiMass)), ONE, eps)) fails.push(`${where}: (P.q) / q[x] > e^epsilon`);
  }
}

function hadamardLip(fam, r, eps, masses, fails, where) {
  for (let c = 0; c < fam.slots; c += 1) {
    const plus = fam.sensitive.filter((a, i) => popcount((i + 1) & c) % 2 === 0);
    const [lo, hi] = masses(plus);
    lipPair(r, plus.length ? lo : null, plus.length < fam.k ? hi : null, eps, fails, `slot h${c}${where}`);
  }
  if (fam.others.length && cmp(r, ONE) > 0) {
    fails.push(`direct output d${fam.others[0]}: P.q > 0 = e^eps q[x] for the other inputs`);
  }
}

/**
 * Exactly check one claim (claimValues) on a parsed family (parseFamily), as
 * mechopt.families.check_family decides it. Returns the failures (empty: the claim holds).
 */
export function checkFamilyClaim(fam, n) {
  const k = fam.k;
  const r = fam.ratio;
  const above = cmp(r, ONE) > 0;
  const subset = fam.kind === "subset_selection";
  const informative = subset ? fam.informative.length > 0 : true;
  const fails = [];
  if (n.name === "uldp") {
    if (subset) {
      if (informative && above && !leqExp(r, ONE, n.eps)) fails.push("ratio > e^epsilon");
    } else {
      if (above && !leqExp(r, ONE, n.eps)) fails.push("ratio > e^epsilon");
      const sens = new Set(n.sensitive);
      const bad = fam.others.filter((x) => sens.has(x));
      if (bad.length && above) fails.unshift(`the direct output of sensitive input ${bad[0]} is not invertible-safe (ULDP)`);
    }
  } else if (n.name === "bp_lip" && n.lower && subset) {
    const lo = [...n.lower].sort(cmp);
    const hi = [...n.upper].sort(cmp);
    for (const d of fam.informative) {
      const pmin = maxRat(sumRat(lo.slice(0, d)), sub(ONE, sumRat(hi.slice(d))));
      const pmax = minRat(sumRat(hi.slice(k - d)), sub(ONE, sumRat(lo.slice(0, k - d))));
      lipPair(r, maxRat(pmin, ZERO), minRat(pmax, ONE), n.eps, fails, `component d=${d} (prior box)`);
    }
  } else if (n.name === "bp_lip" && n.lower) {
    const L = sumRat(n.lower);
    const U = sumRat(n.upper);
    const masses = (plus) => {
      const lt = sumRat(plus.map((a) => n.lower[a]));
      const ut = sumRat(plus.map((a) => n.upper[a]));
      return [maxRat(lt, sub(ONE, sub(U, ut))), minRat(ut, sub(ONE, sub(L, lt)))];
    };
    hadamardLip(fam, r, n.eps, masses, fails, " (prior box)");
  } else if (n.name === "lip" || n.name === "bp_lip") {
    if (n.name === "lip" && n.delta !== 0) {
      throw inputError("privacy", "(eps, delta)-LIP with delta > 0 has no exact check for a family mechanism");
    }
    for (const P of n.priors) {
      if (subset) {
        const srt = [...P].sort(cmp);
        for (const d of fam.informative) {
          lipPair(r, sumRat(srt.slice(0, d)), sumRat(srt.slice(k - d)), n.eps, fails, `component d=${d}`);
        }
      } else {
        const masses = (plus) => {
          const m = sumRat(plus.map((a) => P[a]));
          return [m, m];
        };
        hadamardLip(fam, r, n.eps, masses, fails, "");
      }
    }
  } else {
    const budgets = rowBudgets(n, k);
    let constrained;
    if (subset) {
      constrained = informative ? [...Array(k).keys()] : [];
    } else {
      constrained = fam.sensitive;
      if (above) {
        const x = fam.others.find((o) => budgets[o] !== null);
        if (x !== undefined) fails.push(`input ${x} has a finite budget but its direct output d${x} is reached by no other input (infinite ratio)`);
      }
    }
    if (above) {
      for (const x of constrained) {
        const b = budgets[x];
        if (b !== null && !leqExp(r, ONE, b)) {
          fails.push(`input ${x}: ratio ${Number(r.n) / Number(r.d)} > e^${Number(b.n) / Number(b.d)}`);
          break;
        }
      }
    }
  }
  return fails;
}

/**
 * Check a parsed family document as `mechopt verify` does (mechopt._client_document's
 * family branch, then mechopt.families._privacy), in its order: the required fields,
 * format, version, inputs; the family's parameters; privacy a list of notions; objective,
 * certificate, the sha256's form; the digest; the claims' parameters (at least one claim,
 * claims.js's rules); then every claim exactly.
 * Resolves to the document; rejects with a MechanismError ("input": malformed, naming the
 * field; "verification": the digest does not match ("sha256"), there is no claim
 * ("privacy") or a claim fails ("privacy[i]")).
 */
export async function checkFamilyDocument(doc) {
  checkHead(doc);
  const fam = parseFamily(doc.family, doc.inputs, "family", integralFloatEndpoints(doc));
  if (!Array.isArray(doc.privacy)) throw inputError("privacy", `must be a list of notions, got ${show(doc.privacy)}`);
  doc.privacy.forEach((spec, i) => {
    if (!isObject(spec) || typeof spec.notion !== "string") throw inputError(`privacy[${i}]`, `must be an object with a string 'notion', got ${show(spec)}`);
  });
  checkTail(doc);
  const computed = await familyDigest(doc);
  if (computed !== doc.sha256) {
    throw verificationError("sha256", `recorded digest ${doc.sha256} does not match ${computed}, the digest of inputs, family and privacy; the file was modified after export`);
  }
  if (doc.privacy.length === 0) throw verificationError("privacy", "the file claims no privacy notion; nothing to verify");
  readClaims(doc, { integralFloatEndpoints: integralFloatEndpoints(doc) }); // the claims' own rules
  doc.privacy.forEach((spec, i) => {
    const n = claimValues(spec, doc.inputs);
    const fails = checkFamilyClaim(fam, n);
    if (fails.length) throw verificationError(`privacy[${i}]`, `(${n.name}) ${fails.slice(0, 2).join("; ")}`);
  });
  return doc;
}

// ------------------------------------------------------------------------ sampling

function bitLengthBig(v) {
  return v === 0n ? 0 : v.toString(2).length;
}

/**
 * A uniform integer below `total` (a BigInt >= 1) from 32-bit words: n = ceil(b/32) words
 * joined big-endian, the low b bits kept (b = bit length of total - 1), rejected if >=
 * total; total = 1 reads no word. The matrix sampler's step 3 (docs/formats.md).
 */
export function uniformBelow(total, take) {
  if (total <= 4294967296n) return BigInt(uniformBelowSmall(Number(total), take));
  const bits = bitLengthBig(total - 1n);
  const count = Math.ceil(bits / 32);
  const mask = (1n << BigInt(bits)) - 1n;
  for (;;) {
    let v = 0n;
    for (let i = 0; i < count; i += 1) v = (v << 32n) | BigInt(take());
    v &= mask;
    if (v < total) return v;
  }
}

// the same for a total <= 2^32 given as a Number
function uniformBelowSmall(total, take) {
  if (total === 1) return 0;
  const bits = 32 - Math.clz32(total - 1);
  const mask = bits === 32 ? 0xffffffff : 2 ** bits - 1;
  for (;;) {
    const v = (take() & mask) >>> 0;
    if (v < total) return v;
  }
}

function comb(n, r) {
  if (r < 0 || r > n) return 0n;
  r = Math.min(r, n - r);
  let c = 1n;
  for (let i = 1; i <= r; i += 1) c = (c * BigInt(n - r + i)) / BigInt(i);
  return c;
}

const subsetLabel = (members) => `{${members.sort((a, b) => a - b).join(",")}}`;

/**
 * A checked family mechanism: labels, parameters and samplers. Build it with
 * loadMechanism (which checks and verifies the file first). Its outputs are never listed.
 */
export class FamilyMechanism {
  #default = null;

  constructor(doc) {
    this.doc = doc;
    this.inputs = Object.freeze([...doc.inputs]);
    this.family = parseFamily(doc.family, doc.inputs);
    this.kind = this.family.kind;
    this.privacy = doc.privacy;
    this.sha256 = doc.sha256;
    this.memoize = false; // a family's digest covers no memoize flag: reports are always fresh
  }

  /**
   * A sampler. Options: `words` — a word source (default: secureWords(), i.e.
   * crypto.getRandomValues); `store` — accepted for the Mechanism interface and unused
   * (family mechanisms are not memoized).
   */
  sampler({ words, store } = {}) {
    return new FamilySampler(this, words ?? client.secureWords(), store ?? new Map());
  }

  /** Privatize one value with a secure sampler (crypto.getRandomValues). */
  sample(label) {
    this.#default ??= this.sampler();
    return this.#default.sample(label);
  }
}

/**
 * Draws reports from a FamilyMechanism, in the order docs/families.md specifies ("Exact
 * sampling of a family"), so that a given word stream gives the same reports as Python's
 * FamilySampler(family, words=...).
 */
export class FamilySampler {
  #take;
  #index;

  constructor(mechanism, take, store) {
    this.mechanism = mechanism;
    this.store = store;
    this.#take = take;
    this.#index = new Map(mechanism.inputs.map((x, i) => [x, i]));
    const fam = mechanism.family;
    const rn = fam.ratio.n;
    const rd = fam.ratio.d;
    this.rn = rn;
    this.rd = rd;
    if (fam.kind === "subset_selection") {
      // the smallest integers proportional to the weights (increasing d): lcm of denominators
      const g = (a, b) => {
        while (b) [a, b] = [b, a % b];
        return a;
      };
      let den = 1n;
      for (const [, w] of fam.components) den = (den * w.d) / g(den, w.d);
      let run = 0n;
      this.cum = fam.components.map(([, w]) => (run += w.n * (den / w.d)));
      this.total = run;
      const k = fam.k;
      this.incl = fam.components.map(([d]) => {
        if (d === 0 || d === k) return [0n, 1n];
        const a = rn * comb(k - 1, d - 1);
        return [a, a + rd * comb(k - 1, d)];
      });
    } else {
      this.row = new Map(fam.sensitive.map((x, i) => [x, i + 1]));
      this.total = rn + rd;
    }
  }

  #lookup(label) {
    const x = this.#index.get(label);
    if (x === undefined) throw inputError("label", `${show(label)} is not an input of the mechanism`);
    return x;
  }

  // Floyd's algorithm: a uniform m-subset of {0..k-1} minus {skip}
  #subset(k, m, skip) {
    const take = this.#take;
    const chosen = new Set();
    for (let j = k - 1 - m; j < k - 1; j += 1) {
      const t = uniformBelowSmall(j + 1, take);
      chosen.add(chosen.has(t) ? j : t);
    }
    return Array.from(chosen, (i) => (i >= skip ? i + 1 : i));
  }

  #draw(x) {
    const fam = this.mechanism.family;
    const take = this.#take;
    if (fam.kind === "subset_selection") {
      const u = uniformBelow(this.total, take);
      let j = 0;
      while (this.cum[j] <= u) j += 1;
      const d = fam.components[j][0];
      const k = fam.k;
      if (d === 0) return "{}";
      if (d === k) return subsetLabel([...Array(k).keys()]);
      const [a, z] = this.incl[j];
      if (uniformBelow(z, take) < a) return subsetLabel([...this.#subset(k, d - 1, x), x]);
      return subsetLabel(this.#subset(k, d, x));
    }
    const S = fam.slots;
    const row = this.row.get(x);
    if (row !== undefined) {
      const plus = uniformBelow(this.total, take) < this.rn; // ratio / (ratio + 1)
      let c = uniformBelowSmall(S, take);
      if ((popcount(row & c) % 2 === 0) !== plus) c ^= row & -row;
      return `h${c}`;
    }
    // a direct report with probability (ratio - 1) / (ratio + 1)
    if (uniformBelow(this.total, take) < this.rn - this.rd) return `d${x}`;
    return `h${uniformBelowSmall(S, take)}`;
  }

  /** Privatize one value: its report (an output label, docs/families.md). */
  sample(label) {
    return this.#draw(this.#lookup(label));
  }

  /** Privatize many values, in order; every label is checked before any draw. */
  sampleMany(labels) {
    const xs = Array.from(labels, (l) => this.#lookup(l));
    return xs.map((x) => this.#draw(x));
  }
}
