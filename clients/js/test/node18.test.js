// Node 18 has no global `crypto`: the client falls back on node:crypto's webcrypto.
// Simulated here by hiding the global (node --test runs each file in its own process).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

Object.defineProperty(globalThis, "crypto", { value: undefined, configurable: true, writable: true });
const { loadMechanism, ready } = await import("../src/index.js");

const read = (rel) => readFileSync(fileURLToPath(new URL(`../../vectors/${rel}`, import.meta.url)), "utf8");

test("without a global crypto: digest via node:crypto, sampling after ready()", async () => {
  assert.equal(globalThis.crypto, undefined);
  const mech = await loadMechanism(read("mechanisms/memoized_v2.json")); // sha256 recomputed, claims verified
  const sampler = mech.sampler();
  assert.throws(() => sampler.sample("yes"), /await ready\(\)/);
  await ready();
  assert.ok(mech.outputs.includes(sampler.sample("yes")));
});
