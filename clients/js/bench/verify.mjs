// Verification time in Node: node bench/verify.mjs [--only KIND] [--k K]
// Prints one JSON object per file (see bench/verify-core.mjs for the files and the fields).
import { measure, PLAN } from "./verify-core.mjs";

const args = process.argv.slice(2);
const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : null;
const onlyK = args.includes("--k") ? Number(args[args.indexOf("--k") + 1]) : null;
for (const [kind, k] of PLAN) {
  if ((only && kind !== only) || (onlyK && k !== onlyK)) continue;
  console.log(JSON.stringify({ runtime: `node ${process.version}`, ...(await measure(kind, k, k >= 1000 ? 1 : 3)) }));
}
