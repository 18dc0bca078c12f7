// Family mechanism files (docs/families.md): verdicts, digests and reports against the
// vectors Python wrote (clients/vectors/families.json), plus cases by hand.
// Run: node --test test/   (in clients/js)
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import { canonicalize, checkDocument, loadMechanism, MechanismError, wordStream } from "../src/index.js";
import { checkFamilyClaim, claimValues, familyDigest, parseFamily, uniformBelow } from "../src/family.js";

const VECTORS = new URL("../../vectors/", import.meta.url);
const read = (rel) => readFileSync(fileURLToPath(new URL(rel, VECTORS)), "utf8");
const families = JSON.parse(read("families.json"));

const rejectsWith = (promise, kind, field) =>
  assert.rejects(promise, (err) => {
    assert.ok(err instanceof MechanismError, String(err));
    assert.equal(err.kind, kind, err.message);
    assert.ok(err.field.startsWith(field), `${err.field} vs ${field}: ${err.message}`);
    return true;
  });

for (const v of families.vectors) {
  test(`family file: ${v.file}`, async () => {
    const text = read(v.file);
    if (v.valid) {
      const mech = await loadMechanism(text);
      assert.equal(mech.sha256, v.sha256);
      const doc = JSON.parse(text);
      assert.equal(canonicalize({ inputs: doc.inputs, family: doc.family, privacy: doc.privacy }), v.canonical);
      assert.equal(await familyDigest(doc), v.sha256);
      assert.deepEqual([...mech.inputs], doc.inputs);
      return;
    }
    // text_only: the fault is in how a number is written ("d": 3.0), which a parsed object loses
    if (!v.text_only) await rejectsWith(checkDocument(JSON.parse(text)), v.error.kind, v.error.field);
    await rejectsWith(loadMechanism(text), v.error.kind, v.error.field);
  });
}

for (const c of families.cases) {
  test(`family sampling: ${c.mechanism}`, async () => {
    const mech = await loadMechanism(read(c.mechanism));
    const words = wordStream(families.words);
    assert.deepEqual(mech.sampler({ words }).sampleMany(c.inputs), c.outputs);
    assert.equal(words.used(), c.words_used);
  });
}

test("family claims: the verdicts of mechopt's exact family verifier", () => {
  const tally = { ok: 0, fail: 0, input: 0 };
  for (const [i, c] of families.claims.entries()) {
    const fam = parseFamily(c.family, c.inputs);
    let verdict;
    try {
      verdict = checkFamilyClaim(fam, claimValues(c.claim, c.inputs)).length ? "fail" : "ok";
    } catch (err) {
      if (!(err instanceof MechanismError)) throw err;
      verdict = "input";
    }
    assert.equal(verdict, c.verdict, `claims[${i}]: ${JSON.stringify(c)}`);
    tally[verdict] += 1;
  }
  assert.ok(tally.ok >= 100 && tally.fail >= 50, JSON.stringify(tally));
});

const letters = ["a", "b", "c", "d"];
const subset = (ratio, mixture) => ({ kind: "subset_selection", ratio, mixture: mixture.map(([d, weight]) => ({ d, weight })) });

async function familyFile(inputs, family, privacy) {
  const doc = {
    format: "mechopt-mechanism", version: 2, inputs, family, privacy,
    objective: { kind: "none", value: null, bound: null },
    certificate: { verified: true, method: "exact-family", checks: [] },
    sha256: "0".repeat(64),
  };
  doc.sha256 = await familyDigest(doc);
  return doc;
}

test("sampling by hand: the docs/families.md example", async () => {
  // k = 4, d = 2, ratio 2, input a: a = 2*C(3,1) = 6, Z = 6 + C(3,2) = 9; U(9) = 5 < 6 puts a
  // in S; Floyd draws U(3) = 1 over the other positions: position 2
  const doc = await familyFile(letters, subset(2, [[2, 1]]), [{ notion: "ldp", epsilon: 0.7 }]);
  const mech = await loadMechanism(doc);
  const words = wordStream([5, 1]);
  assert.equal(mech.sampler({ words }).sample("a"), "{0,2}");
  assert.equal(words.used(), 2);
  // 0xFFFFFFF9 & 15 = 9 >= 9 is rejected; 12 & 15 = 12 rejected; 6 >= 6: a is not in S;
  // Floyd for m = 2 over {0,1,2}: j = 1: U(2) = 1 -> {1}; j = 2: U(3) = 1 taken -> {1,2}
  const more = wordStream([0xfffffff9, 12, 6, 1, 1]);
  assert.equal(mech.sampler({ words: more }).sample("a"), "{2,3}");
  assert.equal(more.used(), 5);
});

test("uniformBelow reads n = ceil(b/32) words big-endian and rejects >= total", () => {
  const words = wordStream([0xffffffff, 0xffffffff, 1, 0]);
  // total 2^32 + 1: b = 33, two words; 0xffffffff_ffffffff & (2^33 - 1) = 2^33 - 1 >= total is
  // rejected, then 0x00000001_00000000 = 2^32 < total
  assert.equal(uniformBelow(4294967297n, words), 4294967296n);
  assert.equal(words.used(), 4);
  assert.equal(uniformBelow(1n, wordStream([])), 0n); // T = 1 reads no word
});

test("the issue's file: a re-hashed subset selection with d = 1, ratio 1e300 claiming eps = 1 is refused", async () => {
  const inputs = Array.from({ length: 10 }, (_, i) => String(i));
  const doc = await familyFile(inputs, subset(1e300, [[1, 1]]), [{ notion: "ldp", epsilon: 1 }]);
  await rejectsWith(loadMechanism(doc), "verification", "privacy[0]");
  // the same ratio at eps = 700 > ln(1e300) = 690.8 holds, at 690 it does not
  await loadMechanism(await familyFile(inputs, subset(1e300, [[1, 1]]), [{ notion: "ldp", epsilon: 700 }]));
  await rejectsWith(loadMechanism(await familyFile(inputs, subset(1e300, [[1, 1]]), [{ notion: "ldp", epsilon: 690 }])),
    "verification", "privacy[0]");
});

test("the ratio's boundary is decided exactly: the largest double below e passes eps = 1, the next one fails", async () => {
  const ok = await familyFile(letters, subset(2.718281828459045, [[2, 1]]), [{ notion: "ldp", epsilon: 1 }]);
  await loadMechanism(ok);
  const bad = await familyFile(letters, subset(2.7182818284590455, [[2, 1]]), [{ notion: "ldp", epsilon: 1 }]);
  await rejectsWith(loadMechanism(bad), "verification", "privacy[0]");
  // a constant family (only d = 0 and d = k) meets every E-LDP claim, even eps = 0
  await loadMechanism(await familyFile(letters, subset(50, [[0, 0.5], [4, 0.5]]), [{ notion: "ldp", epsilon: 0 }]));
});

test("a family mechanism answers like a Mechanism: inputs, sampler(), sample()", async () => {
  const doc = await familyFile(letters, { kind: "hadamard_response", ratio: 2, sensitive: ["b", "a"] },
    [{ notion: "high_low", epsilon: 0.7, sensitive: ["a", "b"] }]);
  const mech = await loadMechanism(JSON.stringify(doc));
  assert.deepEqual([...mech.inputs], letters);
  const outputs = new Set(["h0", "h1", "h2", "h3", "d2", "d3"]);
  for (const x of letters) assert.ok(outputs.has(mech.sample(x)));
  assert.throws(() => mech.sampler().sample("z"), (err) => err.field === "label");
  // the sensitive list is read by position: row 1 is input a (position 0), whatever the order
  const words = wordStream([0, 1]); // U(3) = 0 < 2: a +1 slot; U(4) = 1, H[1][1] = -1 -> 1 ^ 1 = 0
  assert.equal(mech.sampler({ words }).sample("a"), "h0");
});
