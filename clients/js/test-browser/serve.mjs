// Shared by test-browser/browser.test.js and bench/verify-browser.mjs: a static server over
// clients/ on 127.0.0.1 (a secure context: WebCrypto) and headless Chromium (playwright-core;
// Debian chromium at $CHROMIUM_PATH or /usr/bin/chromium). Not a test file itself.
import { createServer } from "node:http";
import { existsSync, readFileSync } from "node:fs";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

import { chromium } from "playwright-core";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url)); // clients/
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json" };
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Serve the files under clients/ on a free port of 127.0.0.1; resolves to the listening server. */
export function serve() {
  const server = createServer((req, res) => {
    const path = normalize(join(ROOT, decodeURIComponent(new URL(req.url, "http://x").pathname)));
    if (!path.startsWith(ROOT) || !existsSync(path) || path.endsWith(sep)) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": TYPES[extname(path)] ?? "application/octet-stream" });
    res.end(readFileSync(path));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/** Launch headless Chromium at CHROMIUM with these command-line arguments. */
export function launchChromium(args = ["--no-sandbox"]) {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args });
}
