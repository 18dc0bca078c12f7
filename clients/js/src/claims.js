// Exact verification of a mechanism file's privacy claims on the device: every notion of
// mechopt's docs/formats.md, decided as `mechopt verify` decides it (mechopt/_verify.py and the
// standard-library copy mechopt/_claims.py): matrix entries and budgets are the exact decimals
// their JSON numbers print as, e^eps is enclosed rigorously (./exact.js) and every inequality is
// either PROVEN by a certified float enclosure or decided in exact BigInt rationals. A float
// comparison never fails a claim and never passes one it could get wrong.
//
// How the work is organised (as in Python):
//   1. Order, exactly. Floats order like their decimals, so the extreme entries found in floats
//      are the extreme decimals: one inequality per column decides an LDP-like group
//      (max_upper q <= e^eps min_lower q) or a LIP side (max q <= e^eps (P.q + delta)).
//   2. Certified enclosures. Each remaining inequality A <= B is computed in floats with a
//      relative error bound (a normal double is within 2^-53 of its decimal; a sum of n
//      non-negative products within (n + 8) 2^-53; e^eps bounded below by expLowerFloat, a
//      double rounded down from the rational enclosure). Only A's upper end <= B's lower end
//      is accepted as a proof. Subnormal numbers never take this path.
//   3. Exact arithmetic for everything else: a <= e^eps b with a, b BigInt rationals (leqExp).
//
// The claims' own parameters are checked first, with the rules `mechopt verify` applies (its
// JSON Schema and the notions' validation in mechopt/notions): a malformed claim is
// MechanismError("input", "privacy[i].<field>", rule); a claim the matrix breaks is
// MechanismError("verification", "privacy[i]", "(<notion>): column y: ...").

import { MechanismError } from "./errors.js";
import { decimalOf, expLowerFloat, fsum, leqExp, npSum } from "./exact.js";

const U = 2 ** -53;
const NORMAL = 1e-290; // below this (non-zero), relative error bounds do not hold: exact path
const REL = 8 * U;
const PRIOR_SUM_TOL = 1e-9;
const BOX_MAX_INPUTS = 20;

/** The notions this client verifies (docs/formats.md), with their fields and required fields. */
export const NOTIONS = Object.freeze({
  eldp: { fields: ["matrix"], required: ["matrix"] },
  ldp: { fields: ["epsilon"], required: ["epsilon"] },
  wc_lip: { fields: ["epsilon"], required: ["epsilon"] },
  block: { fields: ["epsilon", "blocks"], required: ["epsilon", "blocks"] },
  high_low: { fields: ["epsilon", "sensitive"], required: ["epsilon", "sensitive"] },
  uldp: { fields: ["epsilon", "sensitive"], required: ["epsilon", "sensitive"] },
  metric: { fields: ["epsilon", "edges", "distance"], required: ["epsilon"] },
  lip: { fields: ["epsilon", "prior", "delta"], required: ["epsilon", "prior"] },
  bp_lip: { fields: ["epsilon", "priors", "lower", "upper"], required: ["epsilon"] },
});

const show = (v) => {
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : s.length > 80 ? `${s.slice(0, 77)}...` : s;
  } catch {
    return String(v);
  }
};

// ------------------------------------------------------------------ decimals (n / 10^s)

const POW10 = [1n];
const pow10 = (s) => {
  while (POW10.length <= s) POW10.push(POW10[POW10.length - 1] * 10n);
  return POW10[s];
};
const scaleOf = (d) => d.toString().length - 1; // d = 10^s
function dec(x) {
  const { n, d } = decimalOf(x);
  return { n, s: scaleOf(d) };
}
const decAdd = (a, b) => (a.s === b.s ? { n: a.n + b.n, s: a.s }
  : a.s > b.s ? { n: a.n + b.n * pow10(a.s - b.s), s: a.s } : { n: a.n * pow10(b.s - a.s) + b.n, s: b.s });
const decSub = (a, b) => decAdd(a, { n: -b.n, s: b.s });
const decMul = (a, b) => ({ n: a.n * b.n, s: a.s + b.s });
const decMin = (a, b) => (decSub(a, b).n <= 0n ? a : b);
const ratOf = (a) => ({ n: a.n, d: pow10(a.s) });
const DZERO = { n: 0n, s: 0 };
const DONE = { n: 1n, s: 0 };

// exact dot product of decimals p (pre-read) with a column of doubles (zeros skipped)
function exactDot(pDec, col) {
  let total = DZERO;
  for (let i = 0; i < col.length; i += 1) {
    const q = col[i];
    if (q === 0 || pDec[i].n === 0n) continue;
    total = decAdd(total, decMul(pDec[i], dec(q)));
  }
  return total;
}

// ------------------------------------------------------------------ the kernels

const isNormal = (v) => v === 0 || (Math.abs(v) >= NORMAL && Number.isFinite(v));

/** A budget epsilon (a JS number, read as its decimal) and a double proven <= e^epsilon. */
class Budget {
  constructor(x) {
    this.exact = x; // leqExp reads a number as its decimal (and caches e^x by it)
    this.shown = String(x);
    this.eLow = undefined;
  }

  static of(x) {
    return new Budget(x);
  }

  get expLow() {
    this.eLow ??= expLowerFloat(this.exact);
    return this.eLow;
  }
}

// a <= e^budget b, a and b doubles (read as their decimals), a, b >= 0
function leq(a, b, budget) {
  if (a === 0) return true;
  if (isNormal(a) && isNormal(b) && a * (1 + REL) <= budget.expLow * b * (1 - REL)) return true;
  return leqExp(decimalOf(a), decimalOf(b), budget.exact);
}

class Fail extends Error {}

/** The matrix with what the checks share: columns, row extremes (computed once). */
class Channel {
  constructor(matrix, inputs) {
    this.rows = matrix;
    this.inputs = inputs;
    this.k = matrix.length;
    this.m = matrix[0].length;
  }

  get cols() {
    if (!this._cols) {
      const { k, m, rows } = this;
      this._cols = Array.from({ length: m }, (_, y) => {
        const c = new Float64Array(k);
        for (let x = 0; x < k; x += 1) c[x] = rows[x][y];
        return c;
      });
    }
    return this._cols;
  }

  get floatRows() {
    this._floatRows ??= this.rows.map((r) => Float64Array.from(r));
    return this._floatRows;
  }

  label(x) {
    return show(this.inputs[x]);
  }

  // per column, the index of the largest entry among `rowsUp` and the smallest among `rowsLow`
  extremes(rowsUp, rowsLow) {
    const { m, rows } = this;
    const hi = new Int32Array(m).fill(rowsUp[0]);
    const lo = new Int32Array(m).fill(rowsLow[0]);
    const hv = Float64Array.from(rows[rowsUp[0]]);
    const lv = Float64Array.from(rows[rowsLow[0]]);
    for (const x of rowsUp) {
      const r = rows[x];
      for (let y = 0; y < m; y += 1) if (r[y] > hv[y]) {
        hv[y] = r[y];
        hi[y] = x;
      }
    }
    for (const x of rowsLow) {
      const r = rows[x];
      for (let y = 0; y < m; y += 1) if (r[y] < lv[y]) {
        lv[y] = r[y];
        lo[y] = x;
      }
    }
    return { hi, lo, hv, lv };
  }
}

// max_{x in upper} q[x] <= e^eps min_{x in lower} q[x] on the listed columns (all if null)
function groups(ch, upper, lower, budget, columns = null) {
  if (!upper.length || !lower.length) return;
  const { hi, lo, hv, lv } = ch.extremes(upper, lower);
  const ys = columns ?? Array.from({ length: ch.m }, (_, y) => y);
  for (const y of ys) {
    if (!leq(hv[y], lv[y], budget)) {
      throw new Fail(`column ${y}: Q[${ch.label(hi[y])}][${y}] = ${hv[y]} > e^${budget.shown} * Q[${ch.label(lo[y])}][${y}] = ${lv[y]}`);
    }
  }
}

/**
 * Pairwise budgets (E-LDP, metric): pair p is q[xs[p]] <= e^b q[xps[p]] on every column, b with
 * a double lower bound lows[p] (its decimal <= b) and exact value exact(p) (a number, read as
 * its decimal, or a rational), shown as shown(p).
 */
class PairList {
  constructor(capacity) {
    this.xs = new Int32Array(capacity);
    this.xps = new Int32Array(capacity);
    this.lows = new Float64Array(capacity);
    this.n = 0;
  }

  push(x, xp, low) {
    const p = this.n;
    this.xs[p] = x;
    this.xps[p] = xp;
    this.lows[p] = low;
    this.n += 1;
    return p;
  }
}

// q[x] <= e^b q[x'] on every column, for each pair of the list
function pairs(ch, list, exact, shown) {
  const { m } = ch;
  const rows = ch.floatRows;
  const rowMax = rows.map((r) => r.reduce((a, b) => (b > a ? b : a), 0));
  const rowMin = rows.map((r) => r.reduce((a, b) => (b < a ? b : a), Infinity));
  const allNormal = rows.map((r) => r.every(isNormal));
  const hi = rowMax.map((v) => (isNormal(v) ? v * (1 + REL) : null));
  const lo = rowMin.map((v) => (v > 0 && isNormal(v) ? v * (1 - REL) : null));
  const up = 1 + REL;
  const { xs, xps, lows } = list;
  for (let p = 0; p < list.n; p += 1) {
    const x = xs[p];
    const xp = xps[p];
    if (rowMax[x] === 0) continue;
    const eLow = expLowerFloat(lows[p]);
    // the row's largest entry below e^b times the other row's smallest: every column holds
    if (hi[x] !== null && lo[xp] !== null && hi[x] <= eLow * lo[xp]) continue;
    const a = rows[x];
    const b = rows[xp];
    const e = eLow * (1 - REL);
    const normal = allNormal[x] && allNormal[xp];
    for (let y = 0; y < m; y += 1) {
      const qa = a[y];
      if (qa * up <= e * b[y] && (normal || (isNormal(qa) && isNormal(b[y])))) continue;
      if (qa === 0) continue;
      const qb = b[y];
      if (!leqExp(decimalOf(qa), decimalOf(qb), exact(p))) {
        throw new Fail(`column ${y}: Q[${ch.label(x)}][${y}] = ${qa} > e^${shown(p)} * Q[${ch.label(xp)}][${y}] = ${qb}`);
      }
    }
  }
}

/**
 * (eps, delta)-LIP for one prior: max q <= e^eps (P.q + delta) where max q > 0 (upper), and
 * P.q - delta <= e^eps min q where P.q - delta > 0 (lower), on every column.
 * `prior` holds doubles (their decimals are the prior), `delta` a double.
 */
function lip(ch, prior, budget, delta, note = "") {
  const { k, m, cols } = ch;
  const pDec = prior.map(dec);
  const dDec = delta ? dec(delta) : DZERO;
  const rel = (k + 8) * U;
  const normalDelta = delta === 0 || delta >= NORMAL;
  const e = budget.expLow;
  for (let y = 0; y < m; y += 1) {
    const col = cols[y];
    let a = 0;
    let b = 0;
    let s = 0;
    for (let x = 0; x < k; x += 1) {
      const q = col[x];
      if (q > col[a]) a = x;
      if (q < col[b]) b = x;
      s += prior[x] * q;
    }
    const qmax = col[a];
    const qmin = col[b];
    const sNormal = s >= NORMAL && normalDelta;
    // upper: qmax <= e^eps (s + delta); s + delta within (k + 8) u of P.q + delta
    let ok1 = qmax === 0 || (sNormal && isNormal(qmax) && qmax * (1 + REL) <= e * (s + delta) * (1 - rel));
    // lower: s - delta <= e^eps qmin, unless s - delta <= 0 (the difference may cancel:
    // bound it from above by s (1 + rel) - delta (1 - 4u), plus that subtraction's rounding)
    const sHi = s * (1 + rel);
    const dLo = delta * (1 - 4 * U);
    const aHi = (sHi - dLo) + 4 * U * (sHi + dLo);
    let ok2 = sNormal && (aHi <= 0 || (isNormal(qmin) && aHi <= e * qmin * (1 - 4 * U)));
    if (ok1 && ok2) continue;
    const sx = exactDot(pDec, col);
    if (!ok1 && !leqExp(decimalOf(qmax), ratOf(decAdd(sx, dDec)), budget.exact)) {
      throw new Fail(`column ${y}: Q[${ch.label(a)}][${y}] = ${qmax} > e^${budget.shown} * (P.q + delta)${note}`);
    }
    const lhs = decSub(sx, dDec);
    if (!ok2 && lhs.n > 0n && !leqExp(ratOf(lhs), decimalOf(qmin), budget.exact)) {
      throw new Fail(`column ${y}: P.q - delta > e^${budget.shown} * Q[${ch.label(b)}][${y}] = ${qmin}${note}`);
    }
    ok1 = ok2 = true;
  }
}

/**
 * eps-LIP for every prior of the box lower <= P <= upper, sum P = 1: q[x] <= e^eps P.q for
 * every P iff at the P minimising P.q, and P.q <= e^eps q[x] iff at the P maximising it:
 * two continuous knapsacks per column (the remaining mass to the smallest, resp. largest,
 * entries first; floats order like their decimals), in exact decimals.
 */
function box(ch, lower, upper, budget) {
  const { k, m, cols } = ch;
  const lo = lower.map(dec);
  const hi = upper.map(dec);
  const room = hi.map((h, i) => decSub(h, lo[i]));
  const rest0 = decSub(DONE, lo.reduce(decAdd, DZERO));
  const idx = Array.from({ length: k }, (_, i) => i);
  for (let y = 0; y < m; y += 1) {
    const col = cols[y];
    const qd = Array.from(col, (q) => (q === 0 ? DZERO : dec(q)));
    const up = [...idx].sort((i, j) => col[i] - col[j] || i - j);
    const down = [...idx].sort((i, j) => col[j] - col[i] || i - j);
    const extreme = (order) => {
      let s = DZERO;
      for (let i = 0; i < k; i += 1) if (qd[i].n !== 0n) s = decAdd(s, decMul(lo[i], qd[i]));
      let rest = rest0;
      for (const i of order) {
        if (rest.n <= 0n) break;
        const add = decMin(room[i], rest);
        if (qd[i].n !== 0n) s = decAdd(s, decMul(add, qd[i]));
        rest = decSub(rest, add);
      }
      return s;
    };
    const a = up[k - 1];
    const b = up[0];
    const qmax = col[a];
    const qmin = col[b];
    if (qmax !== 0 && !leqExp(decimalOf(qmax), ratOf(extreme(up)), budget.exact)) {
      throw new Fail(`column ${y}: Q[${ch.label(a)}][${y}] = ${qmax} > e^${budget.shown} * P.q (for a prior of the box)`);
    }
    const sMax = extreme(down);
    if (sMax.n > 0n && !leqExp(ratOf(sMax), decimalOf(qmin), budget.exact)) {
      throw new Fail(`column ${y}: P.q > e^${budget.shown} * Q[${ch.label(b)}][${y}] = ${qmin} (for a prior of the box)`);
    }
  }
}

// ULDP: the columns to protect (all but those with one non-zero entry, at a non-sensitive input)
function protectedColumns(ch, sensitive) {
  const out = [];
  for (let y = 0; y < ch.m; y += 1) {
    let count = 0;
    let first = -1;
    for (let x = 0; x < ch.k && count < 2; x += 1) {
      if (ch.rows[x][y] !== 0) {
        count += 1;
        if (first < 0) first = x;
      }
    }
    if (!(count === 1 && !sensitive.has(first))) out.push(y);
  }
  return out;
}

// ------------------------------------------------------------------ reading a claim

const isNumber = (v) => typeof v === "number";
const isList = Array.isArray;

function readClaim(spec, i, inputs, floatEnds) {
  const where = `privacy[${i}]`;
  const bad = (field, rule) => new MechanismError("input", field ? `${where}.${field}` : where, rule);
  const k = inputs.length;
  const kind = spec.notion;
  const type = Object.prototype.hasOwnProperty.call(NOTIONS, kind) ? NOTIONS[kind] : null;
  if (!type) throw bad("notion", `unknown notion ${show(kind)}; expected one of ${Object.keys(NOTIONS).sort().join(", ")}`);
  const extra = Object.keys(spec).filter((f) => f !== "notion" && !type.fields.includes(f)).sort();
  if (extra.length) throw bad(extra[0], `is not a field of notion ${show(kind)} (fields: ${["notion", ...type.fields].sort().join(", ")})`);
  const missing = type.required.filter((f) => !(f in spec)).sort();
  if (missing.length) throw bad(missing[0], `is required for notion ${show(kind)}`);
  for (const f of type.fields) {
    if (f in spec && spec[f] === null) throw bad(f, "must not be null");
  }
  const labelIndex = new Map(inputs.map((l, x) => [l, x]));

  // the JSON Schema's rules for the fields present, then the notion's own
  let epsilon = null;
  if ("epsilon" in spec) {
    const v = spec.epsilon;
    if (!isNumber(v) || !Number.isFinite(v)) throw bad("epsilon", `must be a number, got ${show(v)}`);
    if (v < 0) throw bad("epsilon", `must be >= 0, got ${v}`);
    epsilon = v;
  }
  const labels = (field, rule) => {
    const items = spec[field];
    if (!isList(items)) throw bad(field, `must be a list of input labels, got ${show(items)}`);
    return items.map((it, j) => {
      if (typeof it !== "string") throw bad(`${field}[${j}]`, `must be a string (an input label), got ${show(it)}`);
      if (!labelIndex.has(it)) throw bad(`${field}[${j}]`, `${show(it)} is not an input label${rule ?? ""}`);
      return labelIndex.get(it);
    });
  };
  // a k x k matrix of budgets >= 0 or the string "inf" (exactly), zero diagonal (E-LDP's matrix, metric's distance)
  const budgetMatrix = (field) => {
    const M = spec[field];
    if (!isList(M) || M.length === 0) throw bad(field, `must be a non-empty square list of lists, got ${show(M)}`);
    const n = M.length;
    const E = M.map((row, r) => {
      if (!isList(row) || row.length !== n) {
        throw bad(`${field}[${r}]`, `must have ${n} entries (the matrix must be square), got ${isList(row) ? row.length : show(row)}`);
      }
      return row.map((v, c) => {
        const at = `${field}[${r}][${c}]`;
        let x;
        if (isNumber(v) && Number.isFinite(v)) {
          if (v < 0) throw bad(at, `must be >= 0, got ${v}`);
          x = v;
        } else if (v === "inf") {
          x = Infinity;
        } else {
          throw bad(at, `must be a number >= 0 or "inf", got ${show(v)}`);
        }
        if (r === c && x !== 0) throw bad(at, `diagonal entries must be 0, got ${show(v)}`);
        return x;
      });
    });
    if (n !== k) throw bad(field, `must be ${k}x${k} (one row and column per input), got ${n}x${n}`);
    return E;
  };
  // a probability vector as mechopt's check_prior reads it: numbers >= 0 summing to 1 within 1e-9
  const prior = (field, values) => {
    if (!isList(values)) throw bad(field, `must be a list of probabilities, got ${show(values)}`);
    values.forEach((v, j) => {
      if (!isNumber(v) || !Number.isFinite(v)) throw bad(`${field}[${j}]`, `must be a number, got ${show(v)}`);
      if (v < 0) throw bad(`${field}[${j}]`, `must be >= 0, got ${v}`);
    });
    if (!values.length) throw bad(field, "must be a non-empty list of probabilities");
    const total = fsum(values);
    if (Math.abs(total - 1) > PRIOR_SUM_TOL) throw bad(field, `must sum to 1, got sum ${total}`);
    return values;
  };
  // LIP is satisfiable only if the prior's decimals sum within e^-eps - delta .. e^eps + delta
  const exactSum = (field, values, delta) => {
    const total = values.map(dec).reduce(decAdd, DZERO);
    if (total.n === pow10(total.s)) return;
    const d = delta ? dec(delta) : DZERO;
    const eps = decimalOf(epsilon);
    const over = decSub(total, d); // total <= e^eps + delta
    const under = decAdd(total, d); // 1 <= e^eps (total + delta)
    if ((over.n > 0n && !leqExp(ratOf(over), 1n, eps)) || !leqExp(1n, ratOf(under), eps)) {
      throw bad(field, `sums to ${Number(total.n) / Number(pow10(total.s))} as written; with epsilon = ${epsilon} LIP is satisfiable only if the sum is within a factor e^epsilon of 1: write the prior's decimals to sum to 1`);
    }
  };

  switch (kind) {
    case "ldp":
    case "wc_lip": {
      const all = inputs.map((_, x) => x);
      return { kind, run: (ch) => groups(ch, all, all, Budget.of(epsilon)) };
    }
    case "block": {
      const blocks = spec.blocks;
      if (!isList(blocks) || blocks.length === 0) throw bad("blocks", `must be a non-empty list of lists of input labels, got ${show(blocks)}`);
      blocks.forEach((b, j) => {
        if (!isList(b)) throw bad(`blocks[${j}]`, `must be a list of input labels, got ${show(b)}`);
        b.forEach((it, t) => {
          if (typeof it !== "string") throw bad(`blocks[${j}][${t}]`, `must be a string (an input label), got ${show(it)}`);
        });
      });
      blocks.forEach((b, j) => {
        if (b.length === 0) throw bad(`blocks[${j}]`, "must not be empty");
      });
      const seen = new Map();
      const idx = blocks.map((b, j) => b.map((it, t) => {
        if (!labelIndex.has(it)) throw bad(`blocks[${j}][${t}]`, `${show(it)} is not an input label`);
        return labelIndex.get(it);
      }));
      idx.forEach((b, j) => b.forEach((x) => {
        if (seen.has(x)) throw bad("blocks", `input ${show(inputs[x])} is in block ${seen.get(x)} and block ${j}: blocks must not overlap`);
        seen.set(x, j);
      }));
      const uncovered = inputs.filter((_, x) => !seen.has(x));
      if (uncovered.length) throw bad("blocks", `must cover every input; missing ${show(uncovered)}`);
      return {
        kind,
        run: (ch) => {
          const budget = Budget.of(epsilon);
          for (const b of idx) if (b.length > 1) groups(ch, b, b, budget);
        },
      };
    }
    case "high_low":
    case "uldp": {
      const sens = labels("sensitive");
      if (new Set(sens).size !== sens.length) throw bad("sensitive", "must not repeat a label");
      if (!sens.length && (kind === "high_low" || k > 1)) {
        throw bad("sensitive", "must name at least one sensitive input (else the notion constrains nothing)");
      }
      if (kind === "high_low") {
        const all = inputs.map((_, x) => x);
        return { kind, run: (ch) => groups(ch, sens, all, Budget.of(epsilon)) };
      }
      const set = new Set(sens);
      const all = inputs.map((_, x) => x);
      return { kind, run: (ch) => groups(ch, all, all, Budget.of(epsilon), protectedColumns(ch, set)) };
    }
    case "eldp": {
      const E = budgetMatrix("matrix");
      return {
        kind,
        run: (ch) => {
          const list = new PairList(k * k);
          E.forEach((row, x) => row.forEach((v, xp) => {
            if (x !== xp && v !== Infinity) list.push(x, xp, v);
          }));
          const value = (p) => E[list.xs[p]][list.xps[p]];
          pairs(ch, list, value, (p) => String(value(p)));
        },
      };
    }
    case "metric": {
      const given = ["edges", "distance"].filter((f) => f in spec);
      if (given.length !== 1) throw bad("metric", "give exactly one of 'edges', 'graph' or 'distance'");
      const eps = decimalOf(epsilon);
      // the exact budget eps * w, and a double whose decimal is below it: the float product is
      // within 3u of the exact one; lowered by 8u it stays below, and its decimal (within u of
      // it) too. Tiny budgets use 0 (e^0 = 1 <= e^budget).
      const low = (w) => {
        const v = epsilon * w * (1 - 8 * U);
        return v >= NORMAL ? v : 0;
      };
      const exactTimes = (w) => {
        const d = decimalOf(w);
        return { n: eps.n * d.n, d: eps.d * d.d };
      };
      const scaledPairs = (ch, list, ws) => pairs(ch, list, (p) => exactTimes(ws[p]), (p) => `(${epsilon}*${ws[p]})`);
      if (given[0] === "distance") {
        const D = budgetMatrix("distance");
        return {
          kind,
          run: (ch) => {
            const list = new PairList(k * k);
            const ws = [];
            D.forEach((row, x) => row.forEach((v, xp) => {
              if (x !== xp && v !== Infinity) ws[list.push(x, xp, low(v))] = v;
            }));
            scaledPairs(ch, list, ws);
          },
        };
      }
      const edges = spec.edges;
      if (!isList(edges)) throw bad("edges", `must be a list of [a, b, length], got ${show(edges)}`);
      const weights = edges.map((e, j) => {
        if (!isList(e) || e.length < 2 || e.length > 3) throw bad(`edges[${j}]`, `must be [a, b] or [a, b, length], got ${show(e)}`);
        if (e.length === 2) return 1;
        const w = e[2];
        if (!isNumber(w) || !Number.isFinite(w)) throw bad(`edges[${j}][2]`, `must be a finite number, got ${show(w)}`);
        if (w < 0) throw bad(`edges[${j}][2]`, `edge length must be >= 0, got ${w}`);
        return w;
      });
      const ends = edges.map((e, j) => [0, 1].map((t) => {
        const it = e[t];
        if (typeof it === "string") {
          if (labelIndex.has(it)) return labelIndex.get(it);
        } else if (isNumber(it) && Number.isInteger(it) && !floatEnds.has(`${where}.edges[${j}][${t}]`)) {
          if (labelIndex.has(String(it))) return labelIndex.get(String(it));
          if (it >= 0 && it < k) return it;
        } else {
          throw bad(`edges[${j}][${t}]`, `must be an input label, got ${show(it)}`);
        }
        throw bad(`edges[${j}][${t}]`, `${show(it)} is not an input label`);
      }));
      if (k > 1 && edges.length === 0) throw bad("edges", "must list at least one edge [a, b, length] (else the notion constrains nothing)");
      return {
        kind,
        run: (ch) => {
          const list = new PairList(2 * ends.length);
          const ws = [];
          ends.forEach(([a, b], j) => {
            if (a === b) return;
            ws[list.push(a, b, low(weights[j]))] = weights[j];
            ws[list.push(b, a, low(weights[j]))] = weights[j];
          });
          scaledPairs(ch, list, ws);
        },
      };
    }
    case "lip": {
      const P = prior("prior", spec.prior);
      let delta = 0;
      if ("delta" in spec) {
        const d = spec.delta;
        if (!isNumber(d) || !Number.isFinite(d)) throw bad("delta", `must be a number, got ${show(d)}`);
        if (d < 0 || d > 1) throw bad("delta", `must lie in [0, 1], got ${d}`);
        delta = d;
      }
      exactSum("prior", P, delta);
      if (P.length !== k) throw bad("prior", `must have one entry per input (${k}), got ${P.length}`);
      return { kind, run: (ch) => lip(ch, P, Budget.of(epsilon), delta) };
    }
    case "bp_lip": {
      if ("priors" in spec) {
        if ("lower" in spec || "upper" in spec) throw bad("priors", "give either 'priors' or 'lower'/'upper', not both");
        const Ps = spec.priors;
        if (!isList(Ps) || Ps.length === 0) throw bad("priors", `must be a non-empty list of priors, got ${show(Ps)}`);
        Ps.forEach((p, j) => prior(`priors[${j}]`, p));
        if (new Set(Ps.map((p) => p.length)).size !== 1) throw bad("priors", "all priors must have the same length");
        Ps.forEach((p, j) => exactSum(`priors[${j}]`, p, 0));
        if (Ps[0].length !== k) throw bad("priors", `must have one entry per input (${k}), got ${Ps[0].length}`);
        return {
          kind,
          run: (ch) => Ps.forEach((p, j) => lip(ch, p, Budget.of(epsilon), 0, ` (prior ${j})`)),
        };
      }
      if (!("lower" in spec) || !("upper" in spec)) throw bad("priors", "BP-LIP needs 'priors' or both 'lower' and 'upper'");
      const vec = (field) => {
        const v = spec[field];
        if (!isList(v)) throw bad(field, `must be a list of numbers, got ${show(v)}`);
        v.forEach((x, j) => {
          if (!isNumber(x) || !Number.isFinite(x)) throw bad(`${field}[${j}]`, `must be a number, got ${show(x)}`);
          if (x < 0) throw bad(`${field}[${j}]`, `must be >= 0, got ${x}`);
        });
        return v;
      };
      const lo = vec("lower");
      const hi = vec("upper");
      if (lo.length !== hi.length) throw bad("upper", `must have as many entries as 'lower' (${lo.length}), got ${hi.length}`);
      for (let j = 0; j < lo.length; j += 1) {
        if (!(lo[j] <= hi[j] && hi[j] <= 1)) {
          throw bad(`lower[${j}]`, `must satisfy 0 <= lower <= upper <= 1, got lower=${lo[j]}, upper=${hi[j]}`);
        }
      }
      // numpy's sum (mechopt.notions) and math.fsum (mechopt._claims): refused if either refuses
      const sLo = Math.max(npSum(lo), fsum(lo));
      const sHi = Math.min(npSum(hi), fsum(hi));
      if (sLo > 1 + 1e-12 || sHi < 1 - 1e-12) {
        throw bad("lower", `the box lower <= P <= upper contains no probability vector (sum(lower) = ${sLo}, sum(upper) = ${sHi})`);
      }
      if (lo.length > BOX_MAX_INPUTS) throw bad("lower", `box priors are supported up to ${BOX_MAX_INPUTS} inputs, got ${lo.length}`);
      if (lo.length !== k) throw bad("priors", `must have one entry per input (${k}), got ${lo.length}`);
      return { kind, run: (ch) => box(ch, lo, hi, Budget.of(epsilon)) };
    }
    default:
      throw bad("notion", `unknown notion ${show(kind)}`);
  }
}

/**
 * Read every claim of a structurally checked document (inputs, a k x m matrix of finite
 * numbers >= 0, privacy a list of objects with a string notion). Throws
 * MechanismError("input", "privacy[i].<field>", rule) for a malformed claim; returns the
 * claims, ready to check.
 */
export function readClaims(doc, { integralFloatEndpoints = new Set() } = {}) {
  return doc.privacy.map((spec, i) => readClaim(spec, i, doc.inputs, integralFloatEndpoints));
}

/**
 * Verify, exactly, that the matrix of a structurally checked document meets every claim in
 * its `privacy` list. A document claiming nothing is refused (nothing to trust).
 *
 * Throws MechanismError("input", "privacy[i].<field>", ...) for a malformed claim (all claims
 * are read before any is checked, as `mechopt verify` does) and
 * MechanismError("verification", "privacy[i]", "(<notion>): column y: ...") for the first
 * claim the matrix breaks.
 *
 * checkClaims({inputs: ["a", "b"], matrix: [[0.7, 0.3], [0.3, 0.7]],
 *              privacy: [{notion: "ldp", epsilon: 1}]})            // ln(7/3) = 0.85 <= 1: passes
 * ... privacy: [{notion: "ldp", epsilon: 0.5}]                    // throws privacy[0] (ldp): column 0 ...
 */
export function checkClaims(doc, options = {}) {
  if (!doc.privacy.length) {
    throw new MechanismError("verification", "privacy", "the file claims no privacy notion; nothing to verify");
  }
  const claims = readClaims(doc, options);
  const ch = new Channel(doc.matrix, doc.inputs);
  claims.forEach((claim, i) => {
    try {
      claim.run(ch);
    } catch (err) {
      if (err instanceof Fail) throw new MechanismError("verification", `privacy[${i}]`, `(${claim.kind}): ${err.message}`);
      throw err;
    }
  });
}
