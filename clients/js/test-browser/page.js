// The demo page: load a mechanism, privatize a value, show the reporting distribution,
// and run the shared test vectors. ?mechanism=<path under clients/vectors/> picks the file
// shown first; a user's own mechanism file can then be chosen (file input) or dropped on
// the page: it is read locally, checked and verified exactly, and replaces the one shown.
import { loadMechanism } from "../src/index.js";
import { runVectors } from "./vectors-runner.js";

const $ = (id) => document.getElementById(id);
const vectorsBase = new URL("../../vectors/", import.meta.url);
const read = async (rel) => {
  const r = await fetch(new URL(rel, vectorsBase));
  if (!r.ok) throw new Error(`${rel}: HTTP ${r.status}`);
  return r.text();
};
const params = new URLSearchParams(location.search);
const draws = Number(params.get("draws") ?? 200000);
let current = null; // { mech, file, sampler }

function showDistribution(x) {
  const { mech, file, sampler } = current;
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
}

function privatize() {
  const x = $("input").value;
  $("report").textContent = current.sampler.sample(x);
  showDistribution(x);
}

function show(mech, file, value) {
  if (!mech.outputs) throw new Error("a family file lists no outputs: this page shows matrix mechanisms");
  current = { mech, file, sampler: mech.sampler() }; // crypto.getRandomValues
  $("file").textContent = file;
  $("sha").textContent = mech.sha256;
  $("input").replaceChildren(...mech.inputs.map((x) => new Option(x, x)));
  $("input").value = value && mech.inputs.includes(value) ? value : mech.inputs[mech.inputs.length - 1];
  privatize();
}

/** A user's file (from the input or a drop): checked and verified exactly, then shown; else the reason. */
async function loadUserFile(f) {
  $("load-error").textContent = "";
  try {
    const mech = await loadMechanism(await f.text());
    show(mech, f.name, null);
    window.__mechoptUserFile = { name: f.name, ok: true, sha256: mech.sha256 };
  } catch (err) {
    const why = err && err.kind ? `${err.kind}: ${err.message}` : String(err);
    $("load-error").textContent = `${f.name} refused (${why})`;
    window.__mechoptUserFile = { name: f.name, ok: false, kind: err?.kind ?? "other", message: String(err?.message ?? err) };
  }
}

function wireUserFiles() {
  $("file-input").addEventListener("change", (e) => {
    if (e.target.files.length) loadUserFile(e.target.files[0]);
  });
  const zone = document.body;
  zone.addEventListener("dragover", (e) => {
    e.preventDefault();
    $("drop").classList.add("over");
  });
  zone.addEventListener("dragleave", () => $("drop").classList.remove("over"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    $("drop").classList.remove("over");
    if (e.dataTransfer?.files?.length) loadUserFile(e.dataTransfer.files[0]);
  });
}

async function main() {
  const file = params.get("mechanism") ?? "mechanisms/solved_web_high_low_v2.json";
  show(await loadMechanism(new URL(file, vectorsBase)), file, params.get("value"));
  $("privatize").addEventListener("click", privatize);
  wireUserFiles();
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
