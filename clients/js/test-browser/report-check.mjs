// Open an HTML page written by `mechopt report` in headless Chromium, offline, and say what
// happened: console errors, page errors, every request other than the page itself, and the
// rendered size of every figure (img: naturalWidth/Height and layout box; svg: bounding box).
// Used by report.test.js and by tests/test_report.py (`node report-check.mjs PAGE.html`
// prints the JSON). Needs Chromium: $CHROMIUM_PATH or /usr/bin/chromium.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { CHROMIUM, launchChromium } from "./serve.mjs";

/** Load `path` in headless Chromium with the network cut off; resolves to what was seen. */
export async function checkReport(path) {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}; set CHROMIUM_PATH`);
  const url = pathToFileURL(resolve(path)).href;
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ offline: true });
    const page = await context.newPage();
    const consoleErrors = [];
    const pageErrors = [];
    const requests = [];
    page.on("console", (msg) => {
      if (msg.type() === "error") consoleErrors.push(msg.text());
    });
    page.on("pageerror", (err) => pageErrors.push(String(err)));
    page.on("request", (req) => {
      const u = req.url();
      if (u !== url && !u.startsWith("data:")) requests.push(u);
    });
    page.on("requestfailed", (req) => {
      if (!req.url().startsWith("data:")) consoleErrors.push(`request failed: ${req.url()}`);
    });
    await page.goto(url, { waitUntil: "load" });
    const figures = await page.evaluate(async () => {
      const out = [];
      for (const img of document.querySelectorAll("img")) {
        try {
          await img.decode();
        } catch {
          // a broken image stays at naturalWidth 0
        }
        const box = img.getBoundingClientRect();
        out.push({ kind: "img", id: img.id, naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight,
          width: box.width, height: box.height });
      }
      for (const svg of document.querySelectorAll("svg")) {
        const box = svg.getBBox();
        out.push({ kind: "svg", id: svg.id, width: box.width, height: box.height });
      }
      return out;
    });
    const sections = await page.$$eval("section", (els) => els.map((e) => e.id));
    return { url, browser: browser.version(), consoleErrors, pageErrors, requests, figures, sections };
  } finally {
    await browser.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [path] = process.argv.slice(2);
  if (!path) {
    console.error("usage: node report-check.mjs PAGE.html");
    process.exit(2);
  }
  console.log(JSON.stringify(await checkReport(path)));
}
