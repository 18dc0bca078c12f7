// The shared client vectors, runnable anywhere `read(rel)` can fetch ../../vectors/<rel>.
// Used by the browser page (index.html); returns one {name, ok, message} per check.
import { canonicalize, checkDocument, loadMechanism, MechanismError, wordStream } from "../src/index.js";

// the shared vectors pin digests and sampling; some claim what they do not hold exactly
// (krr3_v2 claims eps = 0.6931471805599453, a decimal below ln 2): claims are tested in claims*.test.js
const DIGEST_ONLY = { verifyClaims: false };

export async function runVectors(read) {
  const results = [];
  const check = async (name, fn) => {
    try {
      await fn();
      results.push({ name, ok: true, message: "" });
    } catch (err) {
      results.push({ name, ok: false, message: String(err && err.stack ? err.stack : err) });
    }
  };
  const expect = (cond, message) => {
    if (!cond) throw new Error(message);
  };
  const manifest = JSON.parse(await read("manifest.json")).vectors;
  const sampling = JSON.parse(await read("sampling.json"));
  const numbers = JSON.parse(await read("numbers.json")).numbers;

  await check("RFC 8785 Appendix B numbers", () => {
    const view = new DataView(new ArrayBuffer(8));
    for (const { bits, text } of numbers) {
      view.setBigUint64(0, BigInt(`0x${bits}`));
      const got = canonicalize(view.getFloat64(0));
      expect(got === text, `${bits}: ${got} != ${text}`);
    }
  });
  for (const v of manifest) {
    await check(`manifest: ${v.file}`, async () => {
      const text = await read(v.file);
      const doc = JSON.parse(text);
      if (v.valid && v.portable !== false) {
        const mech = await loadMechanism(text, DIGEST_ONLY);
        expect(mech.sha256 === v.sha256, `sha256 ${mech.sha256} != ${v.sha256}`);
        const { inputs, outputs, matrix, privacy } = doc;
        const payload = { inputs, outputs, matrix, privacy, ...("memoize" in doc ? { memoize: doc.memoize } : {}) };
        expect(canonicalize(payload) === v.canonical, "canonical text differs");
        return;
      }
      const want = v.valid ? v.error_if_not_portable : v.error;
      let err = null;
      try {
        await checkDocument(doc, DIGEST_ONLY);
      } catch (e) {
        err = e;
      }
      expect(err instanceof MechanismError, `expected a MechanismError, got ${err}`);
      expect(err.kind === want.kind && err.field.startsWith(want.field), `got ${err.kind} ${err.field}: ${err.message}`);
    });
  }
  for (const c of sampling.cases) {
    await check(`sampling: ${c.mechanism}`, async () => {
      const mech = await loadMechanism(await read(c.mechanism), DIGEST_ONLY);
      const weights = mech.weights.map((row) => row.map(String));
      expect(JSON.stringify(weights) === JSON.stringify(c.weights), "weights differ");
      const words = wordStream(sampling.words);
      const got = mech.sampler({ words }).sampleMany(c.inputs);
      const want = mech.memoize ? c.memoized_outputs : c.outputs;
      const used = mech.memoize ? c.memoized_words_used : c.words_used;
      expect(JSON.stringify(got) === JSON.stringify(want), "reports differ");
      expect(words.used() === used, `read ${words.used()} words, expected ${used}`);
    });
  }
  // claims verified exactly in the browser: mechopt verify's verdict on every file of claims.json
  const claims = JSON.parse(await read("claims.json")).cases;
  for (let start = 0; start < claims.length; start += 100) {
    const part = claims.slice(start, start + 100);
    await check(`claims.json ${start}..${start + part.length - 1}: verdicts as mechopt verify`, async () => {
      for (const c of part) {
        let got = "accept";
        let field = "";
        try {
          await loadMechanism(c.text);
        } catch (err) {
          expect(err instanceof MechanismError, `${c.name}: ${err}`);
          got = err.kind;
          field = err.field;
        }
        expect(got === c.verdict, `${c.name}: mechopt verify ${c.verdict}, here ${got} ${field}`);
        if (got === "input" && c.field) expect(field.split(".")[0] === c.field.split(".")[0], `${c.name}: field ${field} vs ${c.field}`);
      }
    });
  }
  return results;
}
