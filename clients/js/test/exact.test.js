// exact.js: decimals of doubles, the rigorous enclosure of e^x (against 90-digit values from
// Python's decimal, clients/vectors/exp.json), a <= e^eps b decided exactly, float bounds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import {
  binaryValue, clearCaches, cmp, decimalOf, expBounds, expLowerFloat, floatDown, floatNearest, floatUp, fsum, leqExp, nextUp, npSum,
} from "../src/exact.js";

const { values } = JSON.parse(readFileSync(fileURLToPath(new URL("../../vectors/exp.json", import.meta.url)), "utf8"));

// "1.234...e+5" -> rational
function parseSci(s) {
  const [mant, exp] = s.split("e");
  const [a, b = ""] = mant.split(".");
  const n = BigInt(a + b);
  const e = Number(exp) - b.length;
  return e >= 0 ? { n: n * 10n ** BigInt(e), d: 1n } : { n, d: 10n ** BigInt(-e) };
}
const scale = (r, num, den) => ({ n: r.n * num, d: r.d * den });

test("decimalOf: the shortest decimal, exactly", () => {
  assert.deepEqual(decimalOf(0.1), { n: 1n, d: 10n });
  assert.deepEqual(decimalOf(1e21), { n: 10n ** 21n, d: 1n });
  assert.deepEqual(decimalOf(-2.5e-7), { n: -25n, d: 10n ** 8n });
  assert.deepEqual(decimalOf(5e-324), { n: 5n, d: 10n ** 324n });
  assert.deepEqual(decimalOf(0.30000000000000004), { n: 30000000000000004n, d: 10n ** 17n });
  assert.throws(() => decimalOf(NaN), RangeError);
});

test("expBounds encloses e^x (90-digit reference), with relative width below 2^-bits", () => {
  for (const { x, exp } of values) {
    const ref = parseSci(exp);
    // the reference is within 1e-89 relative of e^x
    const refLo = scale(ref, 10n ** 89n - 1n, 10n ** 89n);
    const refHi = scale(ref, 10n ** 89n + 1n, 10n ** 89n);
    for (const bits of [64, 192]) {
      clearCaches();
      const { lo, hi } = expBounds(x, 1n, bits);
      assert.ok(cmp(lo, refHi) <= 0, `lo above e^${x} at ${bits} bits`);
      assert.ok(cmp(hi, refLo) >= 0, `hi below e^${x} at ${bits} bits`);
      // width: hi - lo < 2^-bits lo
      const w = { n: hi.n * lo.d - lo.n * hi.d, d: hi.d * lo.d };
      assert.ok(cmp(scale(w, 2n ** BigInt(bits), 1n), lo) < 0, `width at x = ${x}, ${bits} bits`);
    }
  }
});

test("expLowerFloat is a double <= e^x, within (2x + 40) 2^-53 of it", () => {
  for (const { x, exp } of values) {
    if (x < 0 || x > 700) continue;
    clearCaches();
    const v = expLowerFloat(x);
    const ref = parseSci(exp);
    assert.ok(cmp(scale(binaryValue(v), 10n ** 89n + 1n, 10n ** 89n), ref) <= 0, `expLowerFloat(${x}) = ${v} above e^x`);
    if (x > 2 ** -30) assert.ok(1 - v / floatNearest(ref) <= (2 * x + 40) * 2 ** -53, `expLowerFloat(${x}) loose`);
  }
  assert.equal(expLowerFloat(1e300), expLowerFloat(700));
});

test("leqExp decides a <= e^eps b exactly, at and around the boundary", () => {
  // ln 2: 0.6931471805599453 (decimal) < ln 2 < 0.6931471805599454
  assert.equal(leqExp(2n, 1n, 0.6931471805599453), false);
  assert.equal(leqExp(2n, 1n, 0.6931471805599454), true);
  assert.equal(leqExp(0.5, 0.25, Math.LN2), false);
  // e^1 = 2.718281828459045235360287...
  assert.equal(leqExp({ n: 2718281828459045235360287n, d: 10n ** 24n }, 1n, 1), true);
  assert.equal(leqExp({ n: 2718281828459045235360288n, d: 10n ** 24n }, 1n, 1), false);
  // needs more than 64 bits: 40 digits of e
  assert.equal(leqExp({ n: 2718281828459045235360287471352662497757n, d: 10n ** 39n }, 1n, 1), true);
  assert.equal(leqExp({ n: 2718281828459045235360287471352662497758n, d: 10n ** 39n }, 1n, 1), false);
  // eps = 0 is exact; zeros
  assert.equal(leqExp(0.3, 0.3, 0), true);
  assert.equal(leqExp(0.30000000000000004, 0.3, 0), false);
  assert.equal(leqExp(0, 0, 1), true);
  assert.equal(leqExp(1e-300, 0, 50), false);
  // huge budgets: e^1e300 bounds every ratio of doubles
  assert.equal(leqExp(1.7976931348623157e308, 5e-324, 1e300), true);
  assert.equal(leqExp(1.7976931348623157e308, 5e-324, 1454), false); // the ratio is e^1454.22...
  assert.equal(leqExp(1.7976931348623157e308, 5e-324, 1455), true);
  // the sliver under mechopt's 60-digit bracket: 70 digits of e, truncated (below e) by 1e-57
  // relative is accepted; by 1e-60 it is refused, as mechopt verify refuses it
  const e70 = 271828182845904523536028747135266249775724709369995957496696762772407n; // floor(e 10^68)
  const d70 = 10n ** 68n;
  assert.equal(leqExp({ n: e70 - e70 / 10n ** 57n, d: d70 }, 1n, 1), true);
  assert.equal(leqExp({ n: e70 - e70 / 10n ** 60n, d: d70 }, 1n, 1), false);
  assert.equal(leqExp({ n: e70 + 1n, d: d70 }, 1n, 1), false);
  // a convergent of e^0.5, 4.15e-30 above it (as ratio of two matrix entries): refused
  assert.equal(leqExp(0.0445827626089761, 0.027040812417034, 0.5), false);
  assert.equal(leqExp(0.0445827626089761, 0.027040812417034, 0.50000000000001), true);
});

test("float helpers: floatDown/Up/Nearest, fsum as math.fsum, npSum as numpy", () => {
  assert.equal(floatDown({ n: 1n, d: 3n }), 0.3333333333333333);
  assert.equal(floatUp({ n: 1n, d: 3n }), 0.33333333333333337);
  assert.equal(floatNearest({ n: 1n, d: 10n }), 0.1);
  assert.equal(floatDown({ n: 1n, d: 10n ** 320n }), 1e-320);
  assert.equal(nextUp(1), 1 + 2 ** -52);
  assert.equal(fsum([0.1, 0.2, 0.3]), 0.6); // math.fsum; 0.1 + 0.2 + 0.3 = 0.6000000000000001
  assert.equal(fsum([1e100, 1, -1e100]), 1);
  const xs = Array.from({ length: 300 }, (_, i) => 1 / (i + 3));
  // numpy: np.sum([1/(i+3) for i in range(300)]) (pairwise)
  assert.equal(npSum(xs), npSum(xs.slice(0, 144)) + npSum(xs.slice(144)));
});
