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
const POW10 = [1n];
/** 10^s as a BigInt (cached). */
export function pow10(s) {
  while (POW10.length <= s) POW10.push(POW10[POW10.length - 1] * 10n);
  return POW10[s];
}

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
  let scale = frac.length - (m[4] === undefined ? 0 : Number(m[4]));
  let n = BigInt(m[2] + frac);
  if (scale < 0) {
    n *= pow10(-scale);
    scale = 0;
  }
  return { n: m[1] ? -n : n, d: pow10(scale) };
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

// the Taylor series of e^r, r = rlo / 2^W, summed in units of 2^-W with every term rounded
// down: { lo, terms } (the sum, and how many terms it added, the last one 0); see expFixed
function taylorLower(rlo, W) {
  const one = 1n << W;
  let lo = one;
  let term = one;
  let terms = 0n;
  for (let k = 1n; term > 0n; k += 1n) {
    term = ((term * rlo) >> W) / k;
    lo += term;
    terms += 1n;
  }
  return { lo, terms };
}

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
  let { lo, terms } = taylorLower(rlo, W);
  // upper: the kept terms' deficit (<= 3.03 each, the last one is 0) plus the tail, which is
  // at most 2 tau_N (r < 1/2) <= 2 * 3.03 units
  let hi = wantHi ? lo + 4n * terms + 8n : 0n;
  for (let i = 0; i < s; i += 1) {
    lo = (lo * lo) >> W;
    if (wantHi) hi = shiftUp(hi * hi, W);
  }
  return { lo, hi, scale: one };
}

// e^(j/1024) for the cells j used so far, per precision: {lo, hi} in fixed point 2^-W
const CELL = 1024n;
const cells = new Map(); // bits -> Map(j -> {lo, hi, W})
function cellBounds(j, bits) {
  let byJ = cells.get(bits);
  if (!byJ) cells.set(bits, (byJ = new Map()));
  const key = Number(j);
  let c = byJ.get(key);
  if (!c) {
    if (j === 0n) {
      const W = BigInt(bits + 24);
      c = { lo: 1n << W, hi: 1n << W, W };
    } else {
      const { lo, hi, scale } = expFixed(j, CELL, bits + 8);
      c = { lo, hi, W: BigInt(bitLength(scale) - 1) };
    }
    if (byJ.size > 1 << 16) byJ.clear();
    byJ.set(key, c);
  }
  return c;
}

// [lo, hi] enclosing e^(n/d), n/d >= 0: e^(j/1024) from its cell times e^t, t = n/d - j/1024 in
// [0, 1/1024), by its Taylor series (no squaring: t is small already), rounded as in expFixed
function expCells(n, d, bits) {
  const j = (n * CELL) / d;
  const tn = n * CELL - j * d; // t = tn / (1024 d)
  const c = cellBounds(j, bits);
  const W = BigInt(bits + 16);
  const tlo = (tn << W) / (d * CELL);
  const { lo, terms } = taylorLower(tlo, W);
  const hi = lo + 4n * terms + 8n;
  const scale = 1n << (W + c.W);
  return { lo: { n: c.lo * lo, d: scale }, hi: { n: c.hi * hi, d: scale } };
}

const boundsCache = new Map(); // by rational "n/d/bits"
const numberBounds = new Map(); // by JS number, per precision: Map(bits -> Map(x -> bounds))

/**
 * A rigorous rational enclosure of e^x: {lo, hi} (rationals) with lo <= e^x <= hi and
 * (hi - lo) / lo < 2^-bits (default 192 bits: relative width < 1.6e-58). x is a JS number
 * (read as its decimal), a BigInt, or n and d (BigInts, d > 0).
 *
 * |x| is limited to 2^24 (e^x would have tens of millions of digits).
 */
export function expBounds(n, d = 1n, bits = 192) {
  let byNumber = null;
  if (typeof n === "number") {
    byNumber = numberBounds.get(bits);
    if (!byNumber) numberBounds.set(bits, (byNumber = new Map()));
    const hit = byNumber.get(n);
    if (hit) return hit;
  }
  const x = typeof n === "bigint" ? { n, d } : rat(n);
  if (x.d <= 0n) throw new RangeError("expBounds: the denominator must be positive");
  let key = null;
  if (!byNumber) {
    key = `${x.n}/${x.d}/${bits}`;
    const hit = boundsCache.get(key);
    if (hit) return hit;
  }
  const neg = x.n < 0n;
  const a = neg ? -x.n : x.n;
  if (bitLength(a) - bitLength(x.d) > 24) throw new RangeError(`expBounds: |x| = ${a}/${x.d} is beyond 2^24`);
  let out;
  if (a === 0n) {
    out = { lo: ONE, hi: ONE };
  } else {
    const { lo, hi } = expCells(a, x.d, bits);
    out = neg ? { lo: { n: hi.d, d: hi.n }, hi: { n: lo.d, d: lo.n } } : { lo, hi };
  }
  const cache = byNumber ?? boundsCache;
  if (cache.size > 1 << 17) cache.clear();
  cache.set(byNumber ? n : key, out);
  return out;
}

const CAP = 10000n; // as mechopt._claims: e^x for x beyond 10 000 is first tried as e^10000
// 1 - 5e-59, the margin under the verifier's 60-digit bracket (see leqExp)
const MARGIN_DEN = 10n ** 60n;
const MARGIN_NUM = MARGIN_DEN - 50n;

/**
 * Whether a <= e^eps * b is proven, for non-negative a, b (JS numbers read as their decimals,
 * BigInts or {n, d}) and any rational eps: true only when a <= e^eps (1 - 5e-59) b, false
 * when a >= e^eps b or inside that sliver (as mechopt verify, whose 60-digit bracket of e^eps
 * refuses there too: the client never accepts what the verifier refuses).
 *
 * The enclosure of e^eps is refined (64, 128, 256 bits); eps = 0 is compared directly.
 */
export function leqExp(a, b, eps) {
  a = rat(a);
  b = rat(b);
  const e = rat(eps);
  if (a.n <= 0n) return true;
  if (b.n <= 0n) return false;
  if (e.n === 0n) return cmp(a, b) <= 0;
  const lhs = a.n * b.d; // a <= x b  <=>  a.n b.d x.d <= x.n b.n a.d
  const rhsBase = b.n * a.d;
  if (e.n > CAP * e.d) {
    const { lo } = expBounds(CAP, 1n);
    if (lhs * lo.d * MARGIN_DEN <= lo.n * rhsBase * MARGIN_NUM) return true;
  }
  // e^eps >= 1 + eps, exactly: what mechopt's verifiers also use as a floor of their bound
  // (equal entries under a budget below the 60th digit pass there, so they pass here)
  if (lhs * e.d <= (e.d + e.n) * rhsBase) return true;
  const x = typeof eps === "number" ? eps : e.n;
  // Accept only below lo * (1 - 5e-59): mechopt's verifiers accept a <= e^eps b only below
  // their 60-digit lower bound of e^eps, which is >= e^eps (1 - 4e-59) (3.5 units of the
  // 60th digit and 1e-60 for the argument). So whatever this accepts, `mechopt verify`
  // accepts too; inside that sliver (never met by a ratio of doubles) the file is refused.
  for (let bits = 64; bits <= 256; bits *= 2) {
    const { lo, hi } = expBounds(x, e.d, bits);
    if (lhs * lo.d * MARGIN_DEN <= lo.n * rhsBase * MARGIN_NUM) return true;
    if (lhs * hi.d >= hi.n * rhsBase) return false; // hi > e^eps strictly (irrational)
  }
  return false;
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

const cellFloats = new Map(); // j -> a double <= e^(j/1024) (floatDown of the cell's enclosure)
const U = 2 ** -53;
const C3 = 1 / 6; // the doubles nearest 1/6 and 1/24 are below them
const C4 = 1 / 24;

/**
 * A double proven <= e^eps (eps a JS number >= 0, read as its decimal; beyond 700 the bound of
 * e^700, as mechopt._claims). Relative gap to e^eps below (2 eps + 40) 2^-53.
 *
 * e^x = e^(j/1024) e^t with j = floor(1024 x), t = x - j/1024 in [0, 1/1024), both exact in
 * doubles. e^(j/1024) >= C_j, the double rounded down from the cell's rational enclosure
 * (expBounds' BigInt arithmetic, once per cell); e^t >= p(t) = 1 + t (1 + t (1/2 + t (c3 + t c4))),
 * c3 <= 1/6 and c4 <= 1/24 being doubles, evaluated in 8 rounded operations (within 8.1u
 * relative). The decimal of x is within x u of it, so e^decimal >= e^x (1 - x u); the product
 * C_j p(t) (within 9.2u above the truth at worst) times (1 - (x + 20) u), rounded, stays below.
 * Negative eps: the BigInt enclosure, rounded down.
 */
export function expLowerFloat(eps) {
  let v;
  const x = Math.min(eps, 700);
  if (!(x >= 0)) {
    v = floatDown(expBounds(x, 1n, 64).lo);
  } else if (x < 2 ** -30) {
    v = x === 0 ? 1 : 1 - 2 ** -40; // e^x >= 1
  } else {
    const j = Math.floor(x * 1024);
    const t = x - j / 1024;
    let c = cellFloats.get(j);
    if (c === undefined) {
      c = j === 0 ? 1 : floatDown(expFixedRational(BigInt(j), CELL, 64));
      cellFloats.set(j, c);
    }
    const p = 1 + t * (1 + t * (0.5 + t * (C3 + t * C4)));
    v = (c * p) * (1 - (x + 20) * U);
  }
  return v;
}

function expFixedRational(n, d, bits) {
  const { lo, scale } = expFixed(n, d, bits, false);
  return { n: lo, d: scale };
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

/** Forget every cached enclosure (benchmarks measure cold verification with it). */
export function clearCaches() {
  cells.clear();
  boundsCache.clear();
  numberBounds.clear();
  cellFloats.clear();
}
