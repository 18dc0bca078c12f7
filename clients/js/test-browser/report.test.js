// Headless Chromium: the page `mechopt report` writes loads offline with no console error, no
// request beyond itself, and every figure rendered. The page is written here by the `mechopt`
// command ($MECHOPT, else `mechopt` on PATH; skipped when it has no `report`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { ROOT } from "./serve.mjs";
import { checkReport } from "./report-check.mjs";

const MECHOPT = process.env.MECHOPT ?? "mechopt";
const available = spawnSync(MECHOPT, ["report", "--help"], { encoding: "utf8" }).status === 0;

test("mechopt report: offline, no console error, every figure rendered", { timeout: 180_000, skip: !available && `no "${MECHOPT} report" command` }, async () => {
  const out = join(mkdtempSync(join(tmpdir(), "mechopt-report-")), "report.html");
  const mech = join(ROOT, "vectors/mechanisms/solved_quickstart_v2.json"); // every section draws a figure
  const run = spawnSync(MECHOPT, ["report", mech, "-o", out, "--n", "20000"], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  const seen = await checkReport(out);
  assert.deepEqual(seen.consoleErrors, []);
  assert.deepEqual(seen.pageErrors, []);
  assert.deepEqual(seen.requests, []);
  assert.deepEqual(seen.sections, ["channel", "certificate", "error", "baselines", "shuffle", "pld"]);
  assert.deepEqual(seen.figures.map((f) => f.id).sort(), ["fig-baselines", "fig-error", "fig-heatmap", "fig-pld", "fig-shuffle"]);
  for (const f of seen.figures) {
    const w = f.kind === "img" ? f.naturalWidth : f.width;
    assert.ok(w > 0 && f.width > 0 && f.height > 0, `figure ${f.id} did not render: ${JSON.stringify(f)}`);
  }
  console.log(`Chromium ${seen.browser}: report with ${seen.figures.length} figures, no error, no request`);
});
