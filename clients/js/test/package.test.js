// The package as users get it: `npm install ./clients/js` (the README's install line) and the
// release tarball of `npm pack` both install with no registry, import by the package's name and
// load a mechanism; the tarball holds the sources, the README and the TypeScript declarations
// (named by "types" and the "exports" map), and no tests.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = fileURLToPath(new URL("..", import.meta.url));
const VECTOR = fileURLToPath(new URL("../../vectors/mechanisms/solved_web_high_low_v2.json", import.meta.url));
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const npm = (args, cwd) => execFileSync(NPM, [...args, "--offline", "--no-audit", "--no-fund"], { cwd, encoding: "utf8" });

function consumer() {
  const dir = mkdtempSync(join(tmpdir(), "mechopt-client-user-"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "user", version: "1.0.0", type: "module" }));
  writeFileSync(join(dir, "use.mjs"), `
import { readFileSync } from "node:fs";
import { loadMechanism } from "mechopt-client";
const mech = await loadMechanism(readFileSync(process.argv[2], "utf8"));
console.log(JSON.stringify({ sha256: mech.sha256, report: mech.sampler().sample("clinic"), outputs: mech.outputs }));
`);
  return dir;
}

function loadsTheVector(dir) {
  const out = JSON.parse(execFileSync(process.execPath, ["use.mjs", VECTOR], { cwd: dir, encoding: "utf8" }));
  assert.equal(out.sha256, JSON.parse(readFileSync(VECTOR, "utf8")).sha256);
  assert.ok(out.outputs.includes(out.report));
}

test("npm install ./clients/js: imported by name, a mechanism loads", { timeout: 120_000 }, () => {
  const dir = consumer();
  npm(["install", HERE], dir);
  loadsTheVector(dir);
});

test("npm pack: the tarball installs offline and ships the types, not the tests", { timeout: 120_000 }, () => {
  const dir = consumer();
  const [info] = JSON.parse(npm(["pack", "--json", "--pack-destination", dir], HERE));
  const files = info.files.map((f) => f.path).sort();
  for (const need of ["README.md", "index.d.ts", "package.json", "src/index.js", "src/claims.js", "src/family.js"]) {
    assert.ok(files.includes(need), `${need} is not in the tarball: ${files}`);
  }
  assert.deepEqual(files.filter((f) => /^(test|test-browser|test-types|bench|tools)\//.test(f)), []);
  const pkg = JSON.parse(readFileSync(join(HERE, "package.json"), "utf8"));
  assert.equal(pkg.types, "./index.d.ts");
  assert.equal(pkg.exports["."].types, "./index.d.ts");
  npm(["install", join(dir, info.filename)], dir);
  loadsTheVector(dir);
});
