// Verification time in headless Chromium (playwright-core; Debian chromium at $CHROMIUM_PATH or
// /usr/bin/chromium): node bench/verify-browser.mjs [--only KIND] [--k K]
// Serves clients/ on 127.0.0.1 (a secure context: WebCrypto), opens bench/verify.html, prints
// one JSON object per file (see bench/verify-core.mjs).
import { createServer } from "node:http";
import { existsSync, readFileSync } from "node:fs";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

import { chromium } from "playwright-core";

const ROOT = fileURLToPath(new URL("../../", import.meta.url)); // clients/
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json" };
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const args = process.argv.slice(2);
const query = new URLSearchParams();
if (args.includes("--only")) query.set("only", args[args.indexOf("--only") + 1]);
if (args.includes("--k")) query.set("k", args[args.indexOf("--k") + 1]);

const server = createServer((req, res) => {
  const path = normalize(join(ROOT, decodeURIComponent(new URL(req.url, "http://x").pathname)));
  if (!path.startsWith(ROOT) || !existsSync(path) || path.endsWith(sep)) {
    res.writeHead(404).end("not found");
    return;
  }
  res.writeHead(200, { "content-type": TYPES[extname(path)] ?? "application/octet-stream" });
  res.end(readFileSync(path));
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
try {
  const page = await browser.newPage();
  page.on("pageerror", (e) => console.error(String(e)));
  await page.goto(`http://127.0.0.1:${server.address().port}/js/bench/verify.html?${query}`, { waitUntil: "commit" });
  await page.waitForFunction(() => ["done", "error"].includes(document.getElementById("status").textContent), null, { timeout: 1_200_000 });
  if ((await page.textContent("#status")) === "error") throw new Error(await page.evaluate(() => window.__benchError));
  for (const row of await page.evaluate(() => window.__bench)) console.log(JSON.stringify({ ...row, chromium: browser.version() }));
} finally {
  await browser.close();
  server.close();
}
