// Headless Chromium: the demo page loads a mechanism, privatizes a value, shows the
// reporting distribution, runs every shared vector in the browser, and takes a user's own
// mechanism file (file input and drop; a tampered one is refused with its reason).
// Run: npm run test:browser (needs Chromium: $CHROMIUM_PATH or /usr/bin/chromium).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { CHROMIUM, ROOT, launchChromium, serve } from "./serve.mjs";

test("demo page and every vector in headless Chromium", { timeout: 180_000 }, async () => {
  assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}; set CHROMIUM_PATH (Debian: apt-get install chromium)`);
  const server = await serve();
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    const url = `http://127.0.0.1:${server.address().port}/js/test-browser/index.html?value=clinic`;
    await page.goto(url);
    await page.waitForFunction(() => ["done", "error"].includes(document.getElementById("status").textContent), null, { timeout: 120_000 });
    const status = await page.textContent("#status");
    assert.equal(status, "done", await page.evaluate(() => window.__mechoptError));
    assert.deepEqual(errors, []);
    const version = browser.version();

    const results = await page.evaluate(() => window.__mechoptVectors);
    const failed = results.filter((r) => !r.ok);
    assert.deepEqual(failed, [], `failed in Chromium ${version}`);
    assert.ok(results.length >= 20, `only ${results.length} vector checks ran`);

    const demo = await page.evaluate(() => window.__mechoptDemo);
    const manifest = JSON.parse(readFileSync(join(ROOT, "vectors/manifest.json"), "utf8")).vectors;
    assert.equal(demo.sha256, manifest.find((v) => v.file === demo.file).sha256);
    assert.equal(demo.input, "clinic");
    assert.ok(demo.rows.some((r) => r.output === demo.report), `report ${demo.report} is not an output`);
    // the distribution shown: chi-square against the exact probabilities (alpha = 1e-3)
    let stat = 0;
    let df = -1;
    for (const r of demo.rows) {
      if (r.probability === 0) {
        assert.equal(r.count, 0);
        continue;
      }
      stat += (r.count - demo.draws * r.probability) ** 2 / (demo.draws * r.probability);
      df += 1;
    }
    const a = 2 / (9 * df);
    const critical = df * (1 - a + 3.0902 * Math.sqrt(a)) ** 3;
    assert.ok(stat < critical, `chi-square ${stat} >= ${critical}`);
    const shown = await page.$$eval("#dist tbody tr", (trs) => trs.length);
    assert.equal(shown, demo.rows.length);

    // a user's own mechanism file, through the file input: checked, verified, shown
    const own = join(ROOT, "vectors/mechanisms/solved_quickstart_v2.json");
    const ownDoc = JSON.parse(readFileSync(own, "utf8"));
    const userFile = () => page.evaluate(() => window.__mechoptUserFile);
    await page.setInputFiles("#file-input", own);
    await page.waitForFunction(() => window.__mechoptUserFile?.name === "solved_quickstart_v2.json");
    assert.deepEqual(await userFile(), { name: "solved_quickstart_v2.json", ok: true, sha256: ownDoc.sha256 });
    assert.equal(await page.textContent("#sha"), ownDoc.sha256);
    assert.deepEqual(await page.$$eval("#input option", (os) => os.map((o) => o.value)), ownDoc.inputs);
    assert.equal(await page.$$eval("#dist tbody tr", (trs) => trs.length), ownDoc.outputs.length);
    assert.ok(ownDoc.outputs.includes(await page.textContent("#report")));
    // a re-hashed file whose matrix breaks its claim is refused, with the reason on the page
    // (krr3_v2 claims ε = 0.6931471805599453, a decimal below ln 2, which its matrix needs)
    await page.setInputFiles("#file-input", join(ROOT, "vectors/mechanisms/krr3_v2.json"));
    await page.waitForFunction(() => window.__mechoptUserFile?.name === "krr3_v2.json");
    assert.equal((await userFile()).kind, "verification");
    assert.match(await page.textContent("#load-error"), /krr3_v2\.json refused \(verification: privacy\[0\]/);
    assert.equal(await page.textContent("#sha"), ownDoc.sha256); // the checked file stays shown
    // dropped on the page
    const memo = readFileSync(join(ROOT, "vectors/mechanisms/memoized_v2.json"), "utf8");
    await page.evaluate((text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], "dropped.json", { type: "application/json" }));
      document.body.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, memo);
    await page.waitForFunction(() => window.__mechoptUserFile?.name === "dropped.json");
    assert.deepEqual(await userFile(), { name: "dropped.json", ok: true, sha256: JSON.parse(memo).sha256 });
    assert.equal(await page.textContent("#file"), "dropped.json");
    assert.deepEqual(errors, []);
    console.log(`Chromium ${version}: ${results.length} vector checks pass; demo report ${demo.report}, chi-square ${stat.toFixed(2)} (df ${df}); user files: chosen, refused, dropped`);
  } finally {
    await browser.close();
    server.close();
  }
});
