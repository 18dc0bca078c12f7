// mechopt-client: FAMILY mechanism files (structured mechanisms: d-subset selection
// mixtures and the Hadamard response), checked and verified EXACTLY, then sampled with the
// same 32-bit words and the same draw order as Python's mechopt.families.FamilySampler.
// No dependencies; Node >= 18 and browsers.
//
// The file format, the families and the order of the draws are specified in mechopt's
// docs/families.md; clients/vectors/families.json pins digests, verdicts and reports.
//
// checkFamilyDocument mirrors what `mechopt verify` does with a family file, in the same
// order: structure (the schema mechopt/schema/family-mechanism.schema.json), the family's
// parameters (mechopt.families.family_from_spec), the sha256 (RFC 8785 of inputs, family,
// privacy), the claims' own parameters, then every claim decided EXACTLY from the
// parameters (mechopt/families/_privacy.py): ratio, weights, budgets and priors are read as
// the exact decimals they print as (BigInt rationals) and every comparison with e^eps is
// decided by exact.js's leqExp (a rigorous BigInt enclosure of e^eps, refined until it
// decides; no floating-point function, no logarithm, is trusted).

import { add, cmp, decimalOf, leqExp, mul, ONE, reduce, sub, ZERO } from "./exact.js";

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
 * them. Returns {kind: "subset_selection", k, ratio, components: [[d, weight], ...]} (exact
 * weights renormalised to sum to 1, zero weights dropped, increasing d) or
 * {kind: "hadamard_response", k, ratio, sensitive: [positions, increasing], slots, others}.
 */
export function parseFamily(spec, inputs, where = "family") {
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
      if (!Number.isInteger(d) || d < 0 || d > k) throw inputError(`${w}.d`, `must be an integer in [0, ${k}], got ${show(d)}`);
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
  let text;
  try {
    text = client.canonicalize({ inputs: doc.inputs, family: doc.family, privacy: doc.privacy });
  } catch (err) {
    if (err instanceof client.MechanismError) throw inputError("family", `cannot be written as RFC 8785 canonical JSON: ${err.rule}`);
    throw err;
  }
  return client.sha256Hex(text);
}

// ------------------------------------------------------------ structure (the schema)

function checkStructure(doc) {
  if (!isObject(doc)) throw inputError("document", `must be a JSON object, got ${show(doc)}`);
  const missing = REQUIRED.filter((name) => !(name in doc));
  if (missing.length) throw inputError(missing[0], `required field is missing from a family mechanism file; missing: ${show(missing)}`);
  if (doc.format !== client.FORMAT) throw inputError("format", `must be ${show(client.FORMAT)}, got ${show(doc.format)}`);
  if (doc.version !== 2) throw inputError("version", `a family file is format version 2, got ${show(doc.version)}`);
  const inputs = doc.inputs;
  if (!Array.isArray(inputs) || inputs.length === 0) throw inputError("inputs", `must be a non-empty list of unique strings, got ${show(inputs)}`);
  const seen = new Map();
  inputs.forEach((label, i) => {
    if (typeof label !== "string") throw inputError(`inputs[${i}]`, `must be a string, got ${show(label)}`);
    if (seen.has(label)) throw inputError(`inputs[${i}]`, `labels must be unique, ${show(label)} also appears at inputs[${seen.get(label)}]`);
    seen.set(label, i);
  });
  const fam = doc.family;
  if (!isObject(fam)) throw inputError("family", `must be an object, got ${show(fam)}`);
  for (const key of ["kind", "ratio"]) if (!(key in fam)) throw inputError(`family.${key}`, "is required");
  if (!FAMILY_KINDS.includes(fam.kind)) throw inputError("family.kind", `must be one of ${FAMILY_KINDS.join(", ")}, got ${show(fam.kind)}`);
  if (!isNumber(fam.ratio)) throw inputError("family.ratio", `must be a number, got ${show(fam.ratio)}`);
  if (fam.ratio < 1) throw inputError("family.ratio", `must be >= 1, got ${show(fam.ratio)}`);
  if ("mixture" in fam) {
    if (!Array.isArray(fam.mixture) || fam.mixture.length === 0) throw inputError("family.mixture", `must be a non-empty list, got ${show(fam.mixture)}`);
    fam.mixture.forEach((c, i) => {
      const w = `family.mixture[${i}]`;
      if (!isObject(c)) throw inputError(w, `must be an object {"d": int, "weight": number}, got ${show(c)}`);
      for (const key of ["d", "weight"]) if (!(key in c)) throw inputError(`${w}.${key}`, "is required");
      const extra = unknownKeys(c, ["d", "weight"]);
      if (extra.length) throw inputError(`${w}.${extra[0]}`, "is not a key of a mixture component (d, weight)");
      if (!Number.isInteger(c.d) || c.d < 0) throw inputError(`${w}.d`, `must be an integer >= 0, got ${show(c.d)}`);
      if (!isNumber(c.weight) || c.weight < 0) throw inputError(`${w}.weight`, `must be a number >= 0, got ${show(c.weight)}`);
    });
  }
  if ("sensitive" in fam) {
    if (!Array.isArray(fam.sensitive) || fam.sensitive.length === 0) throw inputError("family.sensitive", `must be a non-empty list of labels, got ${show(fam.sensitive)}`);
    fam.sensitive.forEach((s, i) => {
      if (typeof s !== "string") throw inputError(`family.sensitive[${i}]`, `must be a string, got ${show(s)}`);
    });
  }
  if (!Array.isArray(doc.privacy)) throw inputError("privacy", `must be a list of notions, got ${show(doc.privacy)}`);
  doc.privacy.forEach((n, i) => {
    if (!isObject(n) || !("notion" in n)) throw inputError(`privacy[${i}]`, `must be an object with a 'notion', got ${show(n)}`);
  });
  if (!isObject(doc.objective) || !("kind" in doc.objective)) throw inputError("objective", `must be an object with a 'kind', got ${show(doc.objective)}`);
  const cert = doc.certificate;
  if (!isObject(cert)) throw inputError("certificate", `must be an object, got ${show(cert)}`);
  for (const key of ["verified", "method", "checks"]) if (!(key in cert)) throw inputError(`certificate.${key}`, "is required");
  if (typeof doc.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(doc.sha256)) {
    throw inputError("sha256", `must be 64 lowercase hex digits, got ${show(doc.sha256)}`);
  }
}

// ------------------------------------------------------------------- the claims

const NOTION_FIELDS = {
  ldp: ["epsilon"],
  wc_lip: ["epsilon"],
  block: ["epsilon", "blocks"],
  high_low: ["epsilon", "sensitive"],
  uldp: ["epsilon", "sensitive"],
  eldp: ["matrix"],
  metric: ["epsilon", "edges", "distance"],
  lip: ["epsilon", "prior", "delta"],
  bp_lip: ["epsilon", "priors", "lower", "upper"],
};
const NOTION_REQUIRED = {
  ldp: ["epsilon"], wc_lip: ["epsilon"], block: ["epsilon", "blocks"], high_low: ["epsilon", "sensitive"],
  uldp: ["epsilon", "sensitive"], eldp: ["matrix"], metric: ["epsilon"], lip: ["epsilon", "prior"], bp_lip: ["epsilon"],
};
const INF_WORD = /^\s*(inf|infinity)\s*$/i;
const isInf = (v) => (typeof v === "string" && INF_WORD.test(v)) || v === Infinity;
// the largest float sum error of a prior (Python's math.fsum is exact then rounded once)
const PRIOR_SUM_TOLERANCE = 1e-9;

// a budget: a number >= 0 (mechopt._validation.check_epsilon); "inf" where allowed
function budget(value, field, allowInf = false) {
  if (allowInf && isInf(value)) return null;
  if (!isNumber(value)) throw inputError(field, `must be a number${allowInf ? " or 'inf'" : ""}, got ${show(value)}`);
  if (value < 0) throw inputError(field, `must be >= 0, got ${show(value)}`);
  if (!Number.isFinite(value)) {
    if (allowInf) return null;
    throw inputError(field, "must be finite (write no notion for 'no constraint')");
  }
  return decimalOf(value);
}

// labels (or integer indices) to positions, as mechopt.notions._eldp._resolve
function resolve(items, inputs, pos, field) {
  if (!Array.isArray(items)) throw inputError(field, `must be a list of input labels, got ${show(items)}`);
  return items.map((it, i) => {
    if (typeof it === "string") {
      if (!pos.has(it)) throw inputError(`${field}[${i}]`, `${show(it)} is not an input label`);
      return pos.get(it);
    }
    if (Number.isInteger(it)) {
      if (pos.has(String(it))) return pos.get(String(it));
      if (it >= 0 && it < inputs.length) return it;
      throw inputError(`${field}[${i}]`, `${show(it)} is not an input label`);
    }
    throw inputError(`${field}[${i}]`, `must be an input label, got ${show(it)}`);
  });
}

function prior(values, field, k) {
  if (!Array.isArray(values) || values.length === 0) throw inputError(field, `must be a non-empty list of probabilities, got ${show(values)}`);
  let sum = 0;
  const out = values.map((v, i) => {
    if (!isNumber(v)) throw inputError(`${field}[${i}]`, `must be a number, got ${show(v)}`);
    if (!Number.isFinite(v)) throw inputError(`${field}[${i}]`, `must be finite, got ${v}`);
    if (v < 0) throw inputError(`${field}[${i}]`, `must be >= 0, got ${v}`);
    sum += v;
    return decimalOf(v);
  });
  if (k !== undefined && out.length !== k) throw inputError(field, `must have one entry per input (${k}), got ${out.length}`);
  const exact = sumRat(out);
  const off = Math.abs(Number(exact.n - exact.d) / Number(exact.d));
  if (off > PRIOR_SUM_TOLERANCE) throw inputError(field, `must sum to 1, got sum ${sum}`);
  return out;
}

// a prior that does not sum to 1 exactly must sum to within a factor e^eps of 1, exactly
// (else no channel meets LIP: mechopt.notions._lip._exact_sum_check, delta = 0)
function priorSumWithinEps(P, eps, field) {
  const total = sumRat(P);
  if (cmp(total, ONE) === 0) return;
  if (!leqExp(total, ONE, eps) || !leqExp(ONE, total, eps)) {
    throw inputError(field, "sums to a value beyond a factor e^epsilon of 1 as written: LIP is satisfiable only within it; write the prior's decimals to sum to 1");
  }
}

/**
 * A claim of the `privacy` list as the family check needs it: {name, eps, ...} with exact
 * rationals and input positions. Structural rules follow mechopt.notions.notion_from_spec
 * (fields, required fields, budgets >= 0, label resolution, shapes k x k, priors summing
 * to 1); the claims module of this client applies the full set to matrix files.
 */
export function parseNotion(spec, inputs, where) {
  const k = inputs.length;
  const pos = new Map(inputs.map((x, i) => [x, i]));
  const name = spec.notion;
  if (typeof name !== "string" || !(name in NOTION_FIELDS)) {
    throw inputError(`${where}.notion`, `unknown notion ${show(name)}; expected one of ${show(Object.keys(NOTION_FIELDS).sort())}`);
  }
  const allowed = [...NOTION_FIELDS[name], "notion"];
  const extra = Object.keys(spec).filter((key) => !allowed.includes(key)).sort();
  if (extra.length) throw inputError(`${where}.${extra[0]}`, `is not a field of notion ${show(name)}`);
  const missing = NOTION_REQUIRED[name].filter((key) => !(key in spec)).sort();
  if (missing.length) throw inputError(`${where}.${missing[0]}`, `is required for notion ${show(name)}`);
  const f = (field) => `${where}.${field}`;
  const out = { name };
  if (name !== "eldp") out.eps = budget(spec.epsilon, f("epsilon"));
  switch (name) {
    case "block": {
      if (!Array.isArray(spec.blocks) || spec.blocks.length === 0) throw inputError(f("blocks"), `must be a non-empty list of lists of input labels, got ${show(spec.blocks)}`);
      out.blocks = spec.blocks.map((b, i) => {
        const r = resolve(b, inputs, pos, f(`blocks[${i}]`));
        if (r.length === 0) throw inputError(f(`blocks[${i}]`), "must not be empty");
        return r;
      });
      const seen = new Map();
      out.blocks.forEach((b, i) => b.forEach((x) => {
        if (seen.has(x)) throw inputError(f("blocks"), `input ${show(inputs[x])} is in block ${seen.get(x)} and block ${i}: blocks must not overlap`);
        seen.set(x, i);
      }));
      if (seen.size !== k) throw inputError(f("blocks"), "must cover every input");
      break;
    }
    case "high_low":
    case "uldp": {
      const s = resolve(spec.sensitive, inputs, pos, f("sensitive"));
      if (name === "high_low" && s.length === 0) throw inputError(f("sensitive"), "must name at least one sensitive input (else the notion constrains nothing)");
      if (new Set(s).size !== s.length) throw inputError(f("sensitive"), "must not repeat a label");
      if (name === "uldp" && k > 1 && s.length === 0) throw inputError(f("sensitive"), "must name at least one sensitive input (else the notion constrains nothing)");
      out.sensitive = s;
      break;
    }
    case "eldp":
      out.matrix = squareMatrix(spec.matrix, f("matrix"), k);
      break;
    case "metric": {
      const given = ["edges", "distance"].filter((key) => key in spec && spec[key] !== null);
      if (given.length !== 1) throw inputError(f("metric"), "give exactly one of 'edges', 'graph' or 'distance'");
      if (given[0] === "edges") {
        if (!Array.isArray(spec.edges)) throw inputError(f("edges"), `must be a list of [a, b, length], got ${show(spec.edges)}`);
        const lengths = spec.edges.map((e, i) => {
          if (!Array.isArray(e) || (e.length !== 2 && e.length !== 3)) throw inputError(f(`edges[${i}]`), `must be [a, b] or [a, b, length], got ${show(e)}`);
          if (e.length === 2) return ONE;
          const w = e[2];
          if (isInf(w)) throw inputError(f(`edges[${i}][2]`), "edge length must be finite");
          if (!isNumber(w)) throw inputError(f(`edges[${i}][2]`), `must be a number or 'inf', got ${show(w)}`);
          if (w < 0) throw inputError(f(`edges[${i}][2]`), `edge length must be >= 0, got ${w}`);
          return decimalOf(w);
        });
        out.edges = spec.edges.map((e, i) => [...resolve(e.slice(0, 2), inputs, pos, f(`edges[${i}]`)), lengths[i]]);
        if (k > 1 && out.edges.length === 0) throw inputError(f("edges"), "must list at least one edge [a, b, length] (else the notion constrains nothing)");
      } else {
        out.distance = squareMatrix(spec.distance, f("distance"), k);
      }
      break;
    }
    case "lip": {
      const P = prior(spec.prior, f("prior"));
      const delta = "delta" in spec ? spec.delta : 0;
      if (!isNumber(delta)) throw inputError(f("delta"), `must be a number, got ${show(delta)}`);
      if (!(delta >= 0 && delta <= 1)) throw inputError(f("delta"), `must lie in [0, 1], got ${delta}`);
      if (delta === 0) priorSumWithinEps(P, out.eps, f("prior"));
      if (P.length !== k) throw inputError(f("prior"), `must have one entry per input (${k}), got ${P.length}`);
      out.priors = [P];
      out.delta = delta;
      break;
    }
    case "bp_lip": {
      if ("priors" in spec && spec.priors !== null) {
        if (("lower" in spec && spec.lower !== null) || ("upper" in spec && spec.upper !== null)) throw inputError(f("priors"), "give either 'priors' or 'lower'/'upper', not both");
        if (!Array.isArray(spec.priors) || spec.priors.length === 0) throw inputError(f("priors"), `must be a non-empty list of priors, got ${show(spec.priors)}`);
        out.priors = spec.priors.map((p, i) => prior(p, f(`priors[${i}]`)));
        if (new Set(out.priors.map((p) => p.length)).size !== 1) throw inputError(f("priors"), "all priors must have the same length");
        out.priors.forEach((p, i) => priorSumWithinEps(p, out.eps, f(`priors[${i}]`)));
        if (out.priors[0].length !== k) throw inputError(f("priors"), `must have one entry per input (${k}), got ${out.priors[0].length}`);
      } else {
        if (!Array.isArray(spec.lower) || !Array.isArray(spec.upper)) throw inputError(f("priors"), "BP-LIP needs 'priors' or both 'lower' and 'upper'");
        const num = (v, field) => {
          if (isInf(v)) return Infinity;
          if (!isNumber(v)) throw inputError(field, `must be a number or 'inf', got ${show(v)}`);
          return v;
        };
        const lo = spec.lower.map((v, i) => num(v, f(`lower[${i}]`)));
        const hi = spec.upper.map((v, i) => num(v, f(`upper[${i}]`)));
        if (lo.length !== hi.length) throw inputError(f("upper"), `must have as many entries as 'lower' (${lo.length}), got ${hi.length}`);
        lo.forEach((l, i) => {
          if (!(l >= 0 && l <= hi[i] && hi[i] <= 1)) throw inputError(f(`lower[${i}]`), `must satisfy 0 <= lower <= upper <= 1, got lower=${l}, upper=${hi[i]}`);
        });
        if (lo.length > 20) throw inputError(f("lower"), `box priors are supported up to 20 inputs, got ${lo.length}`);
        if (lo.length !== k) throw inputError(f("priors"), `must have one entry per input (${k}), got ${lo.length}`);
        out.lower = lo.map(decimalOf);
        out.upper = hi.map(decimalOf);
        const sum = (xs) => xs.reduce((s, v) => add(s, v), ZERO);
        if (cmp(sum(out.lower), ONE) > 0 || cmp(sum(out.upper), ONE) < 0) {
          throw inputError(f("lower"), "the box lower <= P <= upper contains no probability vector");
        }
      }
      break;
    }
    default:
      break;
  }
  return out;
}

// a k x k budget matrix: entries >= 0 or "inf" (null), zero diagonal
function squareMatrix(M, field, k) {
  if (!Array.isArray(M) || M.length === 0) throw inputError(field, `must be a non-empty square list of lists, got ${show(M)}`);
  const n = M.length;
  const out = M.map((row, i) => {
    if (!Array.isArray(row) || row.length !== n) throw inputError(`${field}[${i}]`, `must have ${n} entries (E must be square)`);
    return row.map((v, j) => {
      const b = budget(v, `${field}[${i}][${j}]`, true);
      if (i === j && (b === null || b.n !== 0n)) throw inputError(`${field}[${i}][${j}]`, `diagonal entries must be 0, got ${show(v)}`);
      return b;
    });
  });
  if (n !== k) throw inputError(field, `must be ${k}x${k} (one row and column per input), got ${n}x${n}`);
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
 * Exactly check one parsed claim (parseNotion) on a parsed family (parseFamily), as
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
 * Check a parsed family document as `mechopt verify` does: structure, the family's
 * parameters, the sha256, the claims' parameters, then every claim exactly. Resolves to the
 * document; rejects with a MechanismError ("input": malformed, naming the field;
 * "verification": the digest does not match or a claim fails, field "sha256" or
 * "privacy[i]").
 */
export async function checkFamilyDocument(doc) {
  checkStructure(doc);
  const fam = parseFamily(doc.family, doc.inputs);
  const computed = await familyDigest(doc);
  if (computed !== doc.sha256) {
    throw verificationError("sha256", `recorded digest ${doc.sha256} does not match ${computed}, the digest of inputs, family and privacy; the file was modified after export`);
  }
  const notions = doc.privacy.map((spec, i) => parseNotion(spec, doc.inputs, `privacy[${i}]`));
  // every claim is decided first (a claim that cannot be checked is an input error), then
  // the first failing one is reported, as mechopt.families.verify_family does
  const failures = notions.map((n) => checkFamilyClaim(fam, n));
  const i = failures.findIndex((f) => f.length > 0);
  if (i >= 0) throw verificationError(`privacy[${i}]`, `(${notions[i].name}) the family fails its claim: ${failures[i].slice(0, 2).join("; ")}`);
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
