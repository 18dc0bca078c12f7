// The strict JSON reader (json.js) and loadMechanism on hostile text: one MechanismError("input")
// naming the place, never a crash, never a silent choice.
import { test } from "node:test";
import assert from "node:assert/strict";

import { digest, loadMechanism, MechanismError } from "../src/index.js";
import { integralFloatEndpoints, MAX_DEPTH, parseStrict, unsafeIntegers } from "../src/json.js";

const refuses = (text, field, pattern) => assert.throws(() => parseStrict(text), (e) => {
  assert.ok(e instanceof MechanismError, String(e));
  assert.equal(e.kind, "input");
  assert.equal(e.field, field, e.message);
  if (pattern) assert.match(e.rule, pattern);
  return true;
});

test("reads what JSON.parse reads, to the same values", () => {
  const texts = ['{"a": [1, 2.5, -0, 1e-400, 1E5, "x\\u00e9\\n", true, false, null, {}], "b": {"c": []}}', " [ ] ", '"\\ud83d\\ude00"',
    "0", "-1.5e+300", '{"__proto__": {"x": 1}}', "[1.7976931348623157e308]"];
  for (const t of texts) assert.deepEqual(parseStrict(t), JSON.parse(t), t);
  assert.equal(Object.getPrototypeOf(parseStrict('{"__proto__": {"x": 1}}')), Object.prototype);
});

test("refuses what JSON.parse refuses, as a typed error on the document", () => {
  for (const t of ["", "[1,]", "{'a': 1}", "01", "[1 2]", '{"a" 1}', '"\\x"', '"a\tb"', "\ufeff{}", "[1] x", "tru", "{", '"\\u12"']) {
    assert.throws(() => JSON.parse(t));
    refuses(t, "document", /not valid JSON/);
  }
});

test("duplicate keys are refused, naming the key and where", () => {
  refuses('{"a": 1, "a": 2}', "document", /"a" twice/);
  refuses('{"privacy": [{"notion": "ldp", "epsilon": 0.1, "epsilon": 50}]}', "privacy[0]", /"epsilon" twice/);
  refuses('{"x": {"matrix": 1, "y": 2, "matrix": 3}}', "x", /"matrix" twice/);
  parseStrict('{"a": {"b": 1}, "b": {"a": 1}}'); // the same key in different objects is fine
});

test("nesting deeper than 64 is refused before the parser recurses further", () => {
  assert.equal(MAX_DEPTH, 64);
  parseStrict("[".repeat(64) + "]".repeat(64));
  refuses("[".repeat(65) + "]".repeat(65), "document", /deeper than 64/);
  refuses("[".repeat(1_000_000), "document", /deeper than 64/); // no RangeError (stack)
  refuses('{"a":'.repeat(100_000), "document", /deeper than 64/);
});

test("NaN, Infinity and numbers beyond float range are refused; small ones underflow as in Python", () => {
  refuses("[NaN]", "[0]", /NaN is not a JSON number/);
  refuses('{"e": Infinity}', "e", /Infinity/);
  refuses('{"e": -Infinity}', "e", /-Infinity/);
  refuses('{"privacy": [{"epsilon": 1e400}]}', "privacy[0].epsilon", /beyond the range of a float/);
  refuses(`{"m": [[${"9".repeat(400)}]]}`, "m[0][0]", /400 characters/);
  refuses("[-1.8e308]", "[0]", /beyond/);
  assert.deepEqual(parseStrict("[1e-400, 1.7976931348623157e308]"), [0, 1.7976931348623157e308]);
});

test("lone surrogates are refused (not I-JSON); pairs are fine", () => {
  refuses('{"inputs": ["a", "\\ud800"]}', "inputs[1]", /lone surrogate/);
  refuses('["\\udc00x"]', "[0]", /lone surrogate/);
  refuses('{"\\ud800": 1}', "document", /lone surrogate/);
  assert.equal(parseStrict('"\\ud83d\\ude00"'), "\u{1F600}");
});

test("integer tokens beyond 2^53 - 1 and integral floats in edge endpoints are recorded", () => {
  const v = parseStrict('{"a": 9007199254740991, "b": [9007199254740992, -9007199254740992, 1e20, 2.0], "privacy": [{"edges": [[1.0, 2, 3.0]]}]}');
  assert.deepEqual(unsafeIntegers(v), ["b[0]", "b[1]"]);
  assert.deepEqual([...integralFloatEndpoints(v)], ["privacy[0].edges[0][0]"]);
  assert.deepEqual(unsafeIntegers(JSON.parse("{}")), []);
});

test("loadMechanism: a file with two matrix keys, deep nesting or 1e400 is refused (input)", async () => {
  const doc = {
    format: "mechopt-mechanism", version: 2, inputs: ["a", "b"], outputs: ["a", "b"], matrix: [[0.6, 0.4], [0.4, 0.6]],
    privacy: [{ notion: "ldp", epsilon: 1 }], objective: { kind: "none", value: null, bound: null },
    certificate: { verified: false, method: "none", checks: [] },
  };
  doc.sha256 = await digest(doc);
  const text = JSON.stringify(doc);
  await loadMechanism(text);
  const isInput = (field) => (e) => e instanceof MechanismError && e.kind === "input" && e.field === field;
  // last key wins in JSON.parse: an identity matrix hidden behind a valid one
  await assert.rejects(loadMechanism(text.replace('"matrix":', '"matrix":[[1,0],[0,1]],"matrix":')), isInput("document"));
  await assert.rejects(loadMechanism(text.replace('"epsilon":1', '"epsilon":1,"epsilon":50')), isInput("privacy[0]"));
  await assert.rejects(loadMechanism(text.replace('"epsilon":1', '"epsilon":1e400')), isInput("privacy[0].epsilon"));
  await assert.rejects(loadMechanism(text.replace('"epsilon":1', `"epsilon":1${"0".repeat(400)}`)), isInput("privacy[0].epsilon"));
  await assert.rejects(loadMechanism(text.replace('"kind":"none"', `"kind":${"[".repeat(100)}${"]".repeat(100)}`)), isInput("document"));
  // a string number with a stale digest: the digest is checked first (as mechopt verify does)
  await assert.rejects(loadMechanism(text.replace('"epsilon":1', '"epsilon":"1"')), (e) => e.kind === "verification" && e.field === "sha256");
  await assert.rejects(loadMechanism(text.replace('"version":2', '"version":2.0')), isInput("version"));
});

test("on 20 000 mutated texts: parseStrict accepts only what JSON.parse accepts, with the same value", () => {
  let s = 12345;
  const rnd = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  const bases = ['{"a": [1, -2.5e3, "x\\u00e9", true, null], "b": {"c": [[]], "d": "\\ud83d\\ude00"}}',
    '[0, 1E-7, 123456789012345678, "q\\"\\\\/\\b\\f\\n\\r\\t", {"k": false}]', '{"format": "m", "matrix": [[0.5, 0.5]], "privacy": [{"epsilon": 1}]}'];
  const alphabet = '{}[]",:0123456789-+.eE \\ntrufalsn\\u\ud800\t';
  let accepted = 0;
  for (let i = 0; i < 20000; i += 1) {
    let t = bases[i % bases.length];
    for (let j = 0, edits = 1 + Math.floor(rnd() * 3); j < edits; j += 1) {
      const at = Math.floor(rnd() * (t.length + 1));
      const ch = alphabet[Math.floor(rnd() * alphabet.length)];
      const op = rnd();
      t = op < 0.4 ? t.slice(0, at) + ch + t.slice(at) : op < 0.7 ? t.slice(0, at) + t.slice(at + 1) : t.slice(0, at) + ch + t.slice(at + 1);
    }
    let expected;
    try {
      expected = JSON.parse(t);
    } catch {
      assert.throws(() => parseStrict(t), MechanismError, t);
      continue;
    }
    let got;
    try {
      got = parseStrict(t);
    } catch (e) {
      assert.ok(e instanceof MechanismError && e.kind === "input", `${t}: ${e}`);
      continue; // refused for one of the strict rules (duplicate key, lone surrogate, range)
    }
    accepted += 1;
    assert.deepEqual(got, expected, t);
  }
  assert.ok(accepted > 2000, `only ${accepted} accepted`);
});
