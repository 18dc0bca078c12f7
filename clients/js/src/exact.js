// Exact arithmetic for the claim checks: BigInt rationals for the decimals of JSON numbers
// and a rigorous rational enclosure of e^x. No dependencies; Node >= 18 and browsers.
//
// A rational is {n, d}: BigInts, d > 0 (not necessarily reduced). A JSON number stands for
// its shortest round-trip decimal (Number.prototype.toString), as in Python's repr and
// mechopt's exact verifier.
//
// e^x (x = n/d rational) is enclosed in fixed point with scale 2^W: argument reduction
// r = x / 2^s with r < 2^-7, then the Taylor series of e^r summed term by term, rounded down
// for the lower bound and up for the upper one, whose tail after the last kept term T_N is at
// most T_N * r/(N+1) / (1 - r) <= 2 T_N (r < 1/2) and is added to the upper bound; then s
// squarings, each rounded outward. Every step's error is directed, so lo <= e^x <= hi holds
// as a theorem, not as an estimate. With W = P + s + 16 working bits the relative width is
// below 2^-P (each squaring doubles the relative error, the 2^s growth is paid by the s
// extra bits). Negative x: 1/hi(-x) <= e^x <= 1/lo(-x). No floating-point function is
// trusted (ECMAScript does not bound the error of Math.exp).

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/;

/** The bit length of a non-negative BigInt. */
export function bitLength(v) {
  if (v === 0n) return 0;
  const hex = v.toString(16);
  return (hex.length - 1) * 4 + (32 - Math.clz32(Number.parseInt(hex[0], 16)));
}

/**
 * The exact value of a finite JS number's shortest decimal, as {n, d} with d a power of 10.
 *
 * decimalOf(0.1) -> {n: 1n, d: 10n}; decimalOf(1e21) -> {n: 10n ** 21n, d: 1n}.
 */
export function decimalOf(x) {
  if (typeof x !== "number" || !Number.isFinite(x)) throw new RangeError(`${x} is not a finite number`);
  const m = DECIMAL.exec(String(x));
  const frac = m[3] ?? "";
  let scale = frac.length - Number(m[4] ?? 0);
  let n = BigInt(m[2] + frac);
  if (scale < 0) {
    n *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { n: m[1] ? -n : n, d: 10n ** BigInt(scale) };
}

/** A rational from a JS number (its decimal), a BigInt, or {n, d} (returned as is). */
export function rat(v) {
  if (typeof v === "number") return decimalOf(v);
  if (typeof v === "bigint") return { n: v, d: 1n };
  if (v && typeof v.n === "bigint" && typeof v.d === "bigint" && v.d > 0n) return v;
  throw new TypeError(`not a rational: ${String(v)}`);
}

/** -1, 0 or 1 as a < b, a = b, a > b (rationals). */
export function cmp(a, b) {
  const l = a.n * b.d;
  const r = b.n * a.d;
  return l < r ? -1 : l > r ? 1 : 0;
}
export const add = (a, b) => (a.d === b.d ? { n: a.n + b.n, d: a.d } : { n: a.n * b.d + b.n * a.d, d: a.d * b.d });
export const sub = (a, b) => add(a, { n: -b.n, d: b.d });
export const mul = (a, b) => ({ n: a.n * b.n, d: a.d * b.d });
export const ZERO = Object.freeze({ n: 0n, d: 1n });
export const ONE = Object.freeze({ n: 1n, d: 1n });

const gcd = (a, b) => {
  if (a < 0n) a = -a;
  while (b) [a, b] = [b, a % b];
  return a;
};
/** The rational in lowest terms. */
export function reduce(a) {
  const g = gcd(a.n, a.d);
  return g > 1n ? { n: a.n / g, d: a.d / g } : a;
}

// ceil(a / 2^w) for a >= 0
const shiftUp = (a, w) => (a + (1n << w) - 1n) >> w;

// [lo, hi] * 2^-W enclosing e^(n/d) for n/d > 0 (hi only when wanted)
function expFixed(n, d, P, wantHi = true) {
  // s halvings bring r = x/2^s below 2^-7: x < 2^(bitlen(n) - bitlen(d) + 1)
  const s = Math.max(0, bitLength(n) - bitLength(d) + 8);
  const W = BigInt(P + s + 16);
  const one = 1n << W;
  // r = x / 2^s in units of 2^-W, rounded down: 0 <= r - rlo < 1 unit
  const rlo = (n << W) / (d << BigInt(s));
  // lower series: t_k = floor(floor(t_(k-1) rlo / 2^W) / k) <= the true term tau_k, and
  // tau_k - t_k <= (tau_(k-1) - t_(k-1)) r/k + tau_(k-1) (r - rlo)/k + 2 <= e_(k-1)/128 + 3,
  // so every term is within 3.03 units below the truth
  let lo = one;
  let term = one;
  let terms = 0n;
  for (let k = 1n; term > 0n; k += 1n) {
    term = ((term * rlo) >> W) / k;
    lo += term;
    terms += 1n;
  }
  // upper: the kept terms' deficit (<= 3.03 each, the last one is 0) plus the tail, which is
  // at most 2 tau_N (r < 1/2) <= 2 * 3.03 units
  let hi = wantHi ? lo + 4n * terms + 8n : 0n;
  for (let i = 0; i < s; i += 1) {
    lo = (lo * lo) >> W;
    if (wantHi) hi = shiftUp(hi * hi, W);
  }
  return { lo, hi, scale: one };
}

const boundsCache = new Map();

/**
 * A rigorous rational enclosure of e^(n/d): {lo, hi} (rationals) with lo <= e^x <= hi and
 * (hi - lo) / lo < 2^-bits (default 192 bits: relative width < 1.6e-58).
 *
 * |x| is limited to 2^24 (e^x would have tens of millions of digits).
 */
export function expBounds(n, d = 1n, bits = 192) {
  if (typeof n !== "bigint") ({ n, d } = rat(n));
  if (d <= 0n) throw new RangeError("expBounds: the denominator must be positive");
  const key = `${n}/${d}/${bits}`;
  const hit = boundsCache.get(key);
  if (hit) return hit;
  const neg = n < 0n;
  const a = neg ? -n : n;
  if (bitLength(a) - bitLength(d) > 24) throw new RangeError(`expBounds: |x| = ${a}/${d} is beyond 2^24`);
  let out;
  if (a === 0n) {
    out = { lo: ONE, hi: ONE };
  } else {
    const { lo, hi, scale } = expFixed(a, d, bits);
    out = neg ? { lo: { n: scale, d: hi }, hi: { n: scale, d: lo } } : { lo: { n: lo, d: scale }, hi: { n: hi, d: scale } };
  }
  if (boundsCache.size > 65536) boundsCache.clear();
  boundsCache.set(key, out);
  return out;
}

const CAP = 10000n; // as mechopt._claims: e^x for x beyond 10 000 is first tried as e^10000

/**
 * Exactly whether a <= e^eps * b, for non-negative a, b (JS numbers read as their decimals,
 * BigInts or {n, d}) and any rational eps.
 *
 * The enclosure of e^eps is refined (192, 384, ... bits) until it decides; it always does,
 * since e^eps is irrational for a rational eps != 0 (Lindemann), and eps = 0 is compared
 * directly.
 */
export function leqExp(a, b, eps) {
  a = rat(a);
  b = rat(b);
  eps = rat(eps);
  if (a.n <= 0n) return true;
  if (b.n <= 0n) return false;
  if (eps.n === 0n) return cmp(a, b) <= 0;
  const lhs = a.n * b.d; // a <= x b  <=>  a.n b.d x.d <= x.n b.n a.d
  const rhsBase = b.n * a.d;
  if (eps.n > CAP * eps.d) {
    const { lo } = expBounds(CAP, 1n);
    if (lhs * lo.d <= lo.n * rhsBase) return true;
  }
  for (let bits = 192; ; bits *= 2) {
    const { lo, hi } = expBounds(eps.n, eps.d, bits);
    if (lhs * lo.d <= lo.n * rhsBase) return true;
    if (lhs * hi.d >= hi.n * rhsBase) return false; // hi > e^eps strictly (irrational)
    if (bits > 1 << 20) throw new RangeError("leqExp: undecided"); // unreachable in practice
  }
}

/**
 * The largest double <= the rational a (a > 0; 0 when a is below the smallest double).
 */
export function floatDown(a) {
  if (a.n <= 0n) return a.n === 0n ? 0 : -floatUp({ n: -a.n, d: a.d });
  const shift = 64 - (bitLength(a.n) - bitLength(a.d));
  const q = shift >= 0 ? (a.n << BigInt(shift)) / a.d : a.n / (a.d << BigInt(-shift));
  const drop = bitLength(q) - 53;
  const e = drop - shift;
  if (e > 971) return Number.MAX_VALUE;
  // q >> drop has 53 bits; times 2^e is exact unless subnormal, where the product would
  // round: truncate to a multiple of 2^-1074 explicitly
  if (e + 52 < -1022) {
    const keep = -1074 - e; // bits to drop further
    if (keep >= 53) return 0;
    return Number((q >> BigInt(drop)) >> BigInt(keep)) * 2 ** -1074;
  }
  return Number(q >> BigInt(drop)) * 2 ** e;
}

/** The smallest double >= the rational a (a >= 0). */
export function floatUp(a) {
  if (a.n <= 0n) return a.n === 0n ? 0 : -floatDown({ n: -a.n, d: a.d });
  const f = floatDown(a);
  const back = decimalOfBinary(f);
  if (cmp(back, a) === 0) return f;
  return nextUp(f);
}

// the exact binary value of a double, as a rational
function decimalOfBinary(f) {
  if (f === 0) return ZERO;
  if (f < 0) {
    const r = decimalOfBinary(-f);
    return { n: -r.n, d: r.d };
  }
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, f);
  const bits = view.getBigUint64(0);
  const exp = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  let e;
  if (exp === 0) e = -1074;
  else {
    mant |= 1n << 52n;
    e = exp - 1075;
  }
  return e >= 0 ? { n: mant << BigInt(e), d: 1n } : { n: mant, d: 1n << BigInt(-e) };
}
export { decimalOfBinary as binaryValue };

/** The next double above f (f finite, >= 0). */
export function nextUp(f) {
  if (f === 0) return Number.MIN_VALUE;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, f);
  view.setBigUint64(0, view.getBigUint64(0) + 1n);
  return view.getFloat64(0);
}

const lowerCache = new Map();

/**
 * A double proven <= e^eps (eps a JS number, read as its decimal; beyond 700 the bound of
 * e^700, as mechopt._claims). Rounded down from the rational enclosure; relative gap to
 * e^eps below 2.3e-16.
 */
export function expLowerFloat(eps) {
  let v = lowerCache.get(eps);
  if (v !== undefined) return v;
  const x = Math.min(eps, 700);
  const { n, d } = decimalOf(x);
  if (n === 0n) v = 1;
  else if (n < 0n) v = floatDown(expBounds(n, d, 64).lo);
  else {
    const { lo, scale } = expFixed(n, d, 64, false);
    v = floatDown({ n: lo, d: scale });
  }
  if (lowerCache.size > 1 << 18) lowerCache.clear();
  lowerCache.set(eps, v);
  return v;
}

/** The double nearest to the rational a (ties to even), as a correctly rounded parse would give. */
export function floatNearest(a) {
  if (a.n < 0n) return -floatNearest({ n: -a.n, d: a.d });
  const f = floatDown(a);
  const lo = decimalOfBinary(f);
  if (cmp(lo, a) === 0 || f === Number.MAX_VALUE) return f;
  const g = nextUp(f);
  const hi = decimalOfBinary(g);
  const c = cmp(sub(a, lo), sub(hi, a));
  if (c < 0) return f;
  if (c > 0) return g;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, f);
  return (view.getBigUint64(0) & 1n) === 0n ? f : g;
}

/** Python's math.fsum: the correctly rounded sum of doubles (their binary values, exactly). */
export function fsum(values) {
  let n = 0n;
  for (const v of values) {
    if (v === 0) continue;
    const b = decimalOfBinary(v);
    // every double is a multiple of 2^-1074
    n += b.d === 1n ? b.n << 1074n : b.n << (1074n - BigInt(bitLength(b.d) - 1));
  }
  return floatNearest({ n, d: 1n << 1074n });
}

/** numpy's sum of a float64 vector (pairwise summation, blocks of 8 below 128). */
export function npSum(a, start = 0, n = a.length) {
  if (n < 8) {
    let r = 0;
    for (let i = 0; i < n; i += 1) r += a[start + i];
    return r;
  }
  if (n <= 128) {
    const r = a.slice(start, start + 8);
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j += 1) r[j] += a[start + i + j];
    let res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i += 1) res += a[start + i];
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return npSum(a, start, n2) + npSum(a, start + n2, n - n2);
}
