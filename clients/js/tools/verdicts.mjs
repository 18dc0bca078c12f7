// The JavaScript client's verdict on many mechanism files at once, for mechopt's
// differential test (tests/test_client_differential.py, tests/_differential.py).
//
// Reads from standard input either a JSON array of file TEXTS, or an object
//   {"texts": [text, ...], "samples": {"<index>": {"inputs": [...], "words": [...]}}}
// and prints a JSON array with one entry per text:
//   {"verdict": "accept" | "refuse:input:<field>" | "refuse:verification" | "crash:<what>",
//    "reports": [...], "used": n}     (reports/used: only for an accepted file with a sample)
// Every text goes through loadMechanism as text, so the client's own JSON reading is tested.
// Not a test file (it waits on standard input): it lives outside test/ so `npm test` skips it.

import { loadMechanism, wordStream } from "../src/index.js";

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

function verdictOf(err) {
  if (err && err.kind === "input") return `refuse:input:${err.field ?? ""}`;
  if (err && err.kind === "verification") return "refuse:verification";
  const name = err && err.name ? err.name : typeof err;
  const message = err && err.message ? String(err.message).slice(0, 120) : String(err).slice(0, 120);
  return `crash:${name}: ${message}`;
}

function sampleWith(mechanism, request) {
  const stream = wordStream(request.words);
  const sampler = mechanism.sampler({ words: stream });
  const reports = typeof sampler.sampleMany === "function"
    ? sampler.sampleMany(request.inputs)
    : request.inputs.map((x) => sampler.sample(x));
  return { reports, used: typeof stream.used === "function" ? stream.used() : null };
}

const raw = JSON.parse(await readStdin());
const texts = Array.isArray(raw) ? raw : raw.texts;
const samples = Array.isArray(raw) ? {} : raw.samples ?? {};
const out = [];
for (let i = 0; i < texts.length; i += 1) {
  const entry = {};
  let mechanism = null;
  try {
    mechanism = await loadMechanism(texts[i]);
    entry.verdict = "accept";
  } catch (err) {
    entry.verdict = verdictOf(err);
  }
  const request = samples[String(i)];
  if (mechanism && request) {
    try {
      Object.assign(entry, sampleWith(mechanism, request));
    } catch (err) {
      entry.sample_error = verdictOf(err);
    }
  }
  out.push(entry);
}
process.stdout.write(JSON.stringify(out));
