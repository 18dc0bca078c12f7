// Verification time in headless Chromium (playwright-core; Debian chromium at $CHROMIUM_PATH or
// /usr/bin/chromium): node bench/verify-browser.mjs [--only KIND] [--k K]
// Serves clients/ on 127.0.0.1 (a secure context: WebCrypto), opens bench/verify.html, prints
// one JSON object per file (see bench/verify-core.mjs).
import { launchChromium, serve } from "../test-browser/serve.mjs";

const args = process.argv.slice(2);
const query = new URLSearchParams();
if (args.includes("--only")) query.set("only", args[args.indexOf("--only") + 1]);
if (args.includes("--k")) query.set("k", args[args.indexOf("--k") + 1]);

const server = await serve();
const browser = await launchChromium(["--headless", "--no-sandbox", "--disable-gpu"]);
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
