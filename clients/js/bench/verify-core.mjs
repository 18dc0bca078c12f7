// How long the client takes to verify a mechanism file (strict parse, structure, digest, and
// every claim decided exactly), for E-LDP, LDP and LIP files at k = 50, 200, 1000.
// Shared by bench/verify.mjs (Node) and bench/verify-browser.mjs (headless Chromium).
//
// Files (built in memory, deterministic):
//   ldp-tight     k-RR at e = Math.exp(1), claiming the smallest double eps with
//                 Q[x][x] <= e^eps Q[x'][x] exactly (every column within 1 ulp of its budget).
//   eldp-random   random budgets in [1, 3] (a k x k matrix), a k-RR channel at their minimum:
//                 true with room for every pair but the tightest.
//   eldp-tight    a random channel (entries in [1, 3], normalised) and, for every pair, the
//                 smallest double budget it meets exactly (its worst column within 1 ulp):
//                 the worst case, every pair goes to exact BigInt arithmetic once.
//                 (k = 1000: budgets 1e-14 above the float ratio instead; generating a million
//                 tight budgets takes longer than verifying them.)
//   lip           a random channel, a random prior, eps = the float achieved budget (1 + 1e-12).
import { checkClaims, checkDocument, digest, loadMechanism, parseStrict } from "../src/index.js";
import { clearCaches, leqExp, nextUp } from "../src/exact.js";

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const labels = (k, p) => Array.from({ length: k }, (_, i) => `${p}${i}`);

// the smallest double eps >= 0 with a <= e^eps b exactly (a, b doubles read as decimals)
function tightEps(a, b) {
  let eps = Math.max(0, Math.log(a / b));
  while (!leqExp(a, b, eps)) eps = nextUp(eps);
  for (;;) {
    const down = eps * (1 - 2 ** -53);
    if (down >= eps || down < 0 || !leqExp(a, b, down)) return eps;
    eps = down;
  }
}

function randomRows(k, m, r) {
  return Array.from({ length: k }, () => {
    const w = Array.from({ length: m }, () => 1 + 2 * r());
    const s = w.reduce((x, y) => x + y, 0);
    return w.map((v) => v / s);
  });
}

function krr(k, e) {
  return Array.from({ length: k }, (_, x) => Array.from({ length: k }, (__, y) => (x === y ? e : 1) / (e + k - 1)));
}

async function file(inputs, outputs, matrix, privacy) {
  const doc = {
    format: "mechopt-mechanism", version: 2, inputs, outputs, matrix, privacy,
    objective: { kind: "none", value: null, bound: null }, certificate: { verified: false, method: "none", checks: [] },
  };
  doc.sha256 = await digest(doc);
  return JSON.stringify(doc);
}

export async function build(kind, k) {
  const r = rng(1000 + k);
  const xs = labels(k, "x");
  if (kind === "ldp-tight") {
    const Q = krr(k, Math.exp(1));
    return file(xs, xs, Q, [{ notion: "ldp", epsilon: tightEps(Q[0][0], Q[1][0]) }]);
  }
  if (kind === "eldp-random") {
    const E = xs.map((_, x) => xs.map((__, y) => (x === y ? 0 : 1 + 2 * r())));
    const min = E.flat().reduce((a, v) => (v > 0 && v < a ? v : a), Infinity);
    return file(xs, xs, krr(k, Math.exp(min) * (1 - 1e-12)), [{ notion: "eldp", matrix: E }]);
  }
  if (kind === "eldp-tight") {
    const Q = randomRows(k, k, r);
    const E = Q.map((row, x) => Q.map((other, xp) => {
      if (x === xp) return 0;
      // the two largest float ratios (the exact worst column is one of them)
      let best = -1;
      let second = -1;
      for (let y = 0; y < k; y += 1) {
        const q = row[y] / other[y];
        if (best < 0 || q > row[best] / other[best]) {
          second = best;
          best = y;
        } else if (second < 0 || q > row[second] / other[second]) second = y;
      }
      if (k > 300) return Math.log(row[best] / other[best]) * (1 + 1e-14) + 1e-15;
      return Math.max(tightEps(row[best], other[best]), tightEps(row[second], other[second]));
    }));
    return file(xs, xs, Q, [{ notion: "eldp", matrix: E }]);
  }
  if (kind === "lip") {
    const Q = randomRows(k, k, r);
    const P = randomRows(1, k, r)[0];
    let worst = 0;
    for (let y = 0; y < k; y += 1) {
      let s = 0;
      let hi = 0;
      let lo = Infinity;
      for (let x = 0; x < k; x += 1) {
        s += P[x] * Q[x][y];
        hi = Math.max(hi, Q[x][y]);
        lo = Math.min(lo, Q[x][y]);
      }
      worst = Math.max(worst, Math.log(hi / s), Math.log(s / lo));
    }
    return file(xs, xs, Q, [{ notion: "lip", epsilon: worst * (1 + 1e-12), prior: P }]);
  }
  throw new Error(`unknown kind ${kind}`);
}

const ms = (t0) => Math.round((performance.now() - t0) * 10) / 10;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Time one file. `load_ms`: loadMechanism(text) — strict parse, structure, digest, every claim
 * exactly, the sampler's integer weights — the first time in this process (`cold`) and the
 * median of `repeat` more with the e^eps caches cleared (`warm`: the code is compiled, nothing
 * is cached). The parts (warm medians): parse, structure + digest, claims.
 */
export async function measure(kind, k, repeat = 3) {
  const text = await build(kind, k);
  clearCaches();
  let t0 = performance.now();
  const mech = await loadMechanism(text);
  const cold = ms(t0);
  const load = [];
  const parse = [];
  const digestOnly = [];
  const claims = [];
  for (let i = 0; i < repeat; i += 1) {
    clearCaches();
    t0 = performance.now();
    await loadMechanism(text);
    load.push(ms(t0));
    t0 = performance.now();
    const doc = parseStrict(text);
    parse.push(ms(t0));
    t0 = performance.now();
    await checkDocument(doc, { verifyClaims: false });
    digestOnly.push(ms(t0));
    clearCaches();
    t0 = performance.now();
    checkClaims(doc);
    claims.push(ms(t0));
  }
  return {
    kind, k, megabytes: Math.round(text.length / 1e4) / 100, load_ms_cold: cold, load_ms_warm: median(load),
    parse_ms: median(parse), structure_digest_ms: median(digestOnly), claims_ms: median(claims), outputs: mech.outputs.length,
  };
}

export const PLAN = [
  ["eldp-random", 50], ["eldp-tight", 50], ["ldp-tight", 50], ["lip", 50],
  ["eldp-random", 200], ["eldp-tight", 200], ["ldp-tight", 200], ["lip", 200],
  ["eldp-random", 1000], ["eldp-tight", 1000], ["ldp-tight", 1000], ["lip", 1000],
];
