// Reports per second of the exact sampler (secure words from crypto.getRandomValues).
// Usage: node bench/sampler.mjs [MECHANISM.json ...] [--n N]
// Without files, builds k-RR mechanisms (k = 10, 100, 1000, eps = 1) in memory.
// Prints one JSON object per mechanism: {file, k, m, n, seconds_one_input, rate_one_input,
// seconds_mixed, rate_mixed, words_per_report}.
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { digest, loadMechanism, secureWords } from "../src/index.js";

const args = process.argv.slice(2);
let n = 1_000_000;
const files = [];
for (let i = 0; i < args.length; i += 1) {
  if (args[i] === "--n") n = Number(args[++i]);
  else files.push(args[i]);
}

async function krr(k, eps) {
  const e = Math.exp(eps);
  const inputs = Array.from({ length: k }, (_, i) => `x${i}`);
  const matrix = inputs.map((_, i) => inputs.map((__, j) => (i === j ? e : 1) / (e + k - 1)));
  // rows of floats sum to 1 within ~1e-16: allowed (renormalised exactly by the sampler)
  const doc = { format: "mechopt-mechanism", version: 2, inputs, outputs: inputs, matrix,
    privacy: [{ notion: "ldp", epsilon: eps }], objective: {}, certificate: {} };
  doc.sha256 = await digest(doc);
  return doc;
}

const docs = files.length
  ? files.map((f) => ({ file: f, doc: readFileSync(f, "utf8") }))
  : await Promise.all([10, 100, 1000].map(async (k) => ({ file: `krr-${k}`, doc: await krr(k, 1) })));

for (const { file, doc } of docs) {
  const mech = await loadMechanism(doc);
  let words = 0;
  const source = secureWords();
  const counting = () => {
    words += 1;
    return source();
  };
  const sampler = mech.sampler({ words: counting });
  const k = mech.inputs.length;
  sampler.sampleIndices(mech.inputs[0], 10_000); // warm-up
  words = 0;
  let t = performance.now();
  sampler.sampleIndices(mech.inputs[k >> 1], n);
  const one = (performance.now() - t) / 1000;
  const perReport = words / n;
  const labels = Array.from({ length: n }, (_, i) => mech.inputs[i % k]);
  t = performance.now();
  sampler.sampleMany(labels);
  const mixed = (performance.now() - t) / 1000;
  console.log(JSON.stringify({ file, k, m: mech.outputs.length, n, seconds_one_input: one, rate_one_input: n / one,
    seconds_mixed: mixed, rate_mixed: n / mixed, words_per_report: perReport }));
}
