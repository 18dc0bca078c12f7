// `npm run pack:release`: the release tarball of mechopt-client (npm pack), written to
// clients/js/dist/, with the files it holds listed. Install it with
// `npm install ./clients/js/dist/mechopt-client-<version>.tgz` (no registry needed).
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL("..", import.meta.url));
const dist = fileURLToPath(new URL("../dist/", import.meta.url));
mkdirSync(dist, { recursive: true });
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const [info] = JSON.parse(execFileSync(npm, ["pack", "--json", "--pack-destination", dist], { cwd: here, encoding: "utf8" }));
console.log(`${dist}${info.filename} (${info.size} bytes, ${info.entryCount} files):`);
for (const f of info.files) console.log(`  ${f.path}`);
