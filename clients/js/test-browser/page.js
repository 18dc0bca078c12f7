// The demo page: load a mechanism, privatize a value, show the reporting distribution,
// and run the shared test vectors. ?mechanism=<path under clients/vectors/> picks the file.
import { loadMechanism } from "../src/index.js";
import { runVectors } from "./vectors-runner.js";

const $ = (id) => document.getElementById(id);
const vectorsBase = new URL("../../vectors/", import.meta.url);
const read = async (rel) => {
  const r = await fetch(new URL(rel, vectorsBase));
  if (!r.ok) throw new Error(`${rel}: HTTP ${r.status}`);
  return r.text();
};

async function main() {
  const params = new URLSearchParams(location.search);
  const file = params.get("mechanism") ?? "mechanisms/solved_web_high_low_v2.json";
  const draws = Number(params.get("draws") ?? 200000);
  const mech = await loadMechanism(new URL(file, vectorsBase));
  $("file").textContent = file;
  $("sha").textContent = mech.sha256;
  for (const x of mech.inputs) $("input").add(new Option(x, x));
  $("input").value = params.get("value") ?? mech.inputs[mech.inputs.length - 1];
  const sampler = mech.sampler(); // crypto.getRandomValues
  const privatize = () => {
    const x = $("input").value;
    $("report").textContent = sampler.sample(x);
    showDistribution(x);
  };
  const showDistribution = (x) => {
    const counts = new Array(mech.outputs.length).fill(0);
    for (const j of sampler.sampleIndices(x, draws)) counts[j] += 1;
    const probs = mech.probabilities(x);
    const body = $("dist").tBodies[0];
    body.replaceChildren();
    const rows = [];
    mech.outputs.forEach((y, j) => {
      const [num, den] = probs[j];
      const p = Number(num) / Number(den);
      const tr = body.insertRow();
      tr.insertCell().textContent = y;
      tr.insertCell().textContent = p.toFixed(6);
      tr.insertCell().textContent = (counts[j] / draws).toFixed(6);
      const bar = document.createElement("span");
      bar.className = "bar";
      bar.style.width = `${Math.round(300 * counts[j] / draws)}px`;
      tr.insertCell().append(bar);
      rows.push({ output: y, probability: p, observed: counts[j] / draws, count: counts[j] });
    });
    $("dist-input").textContent = x;
    $("draws").textContent = String(draws);
    window.__mechoptDemo = { file, sha256: mech.sha256, input: x, report: $("report").textContent, draws, rows };
  };
  $("privatize").addEventListener("click", privatize);
  privatize();
  const results = await runVectors(read);
  const failed = results.filter((r) => !r.ok);
  $("vectors").textContent = `${results.length - failed.length} of ${results.length} vector checks pass` +
    (failed.length ? `; failed: ${failed.map((r) => r.name).join(", ")}` : "");
  window.__mechoptVectors = results;
  $("status").textContent = "done";
}

main().catch((err) => {
  window.__mechoptError = String(err && err.stack ? err.stack : err);
  $("status").textContent = "error";
});
