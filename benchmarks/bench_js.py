"""Benchmark: the exact client samplers, JavaScript (Node) against Python, same files, same run.

``python -m benchmarks.bench_js [--sizes 10 100 1000] [--n 1000000]``

For each k, a k-RR mechanism (ε = 1) is written by mechopt (the Python writer: format
version 2, 17-digit decimals, so each draw needs 2 words of 32 bits before rejection)
and both clients draw ``n`` reports from it with their secure default words
(``crypto.getRandomValues`` in JavaScript, ``os.urandom`` in Python):

* *one input* — ``n`` reports of the middle input (JS: ``sampleIndices``; Python:
  ``sample_many`` of one repeated label);
* *mixed* — inputs cycling through all k labels (``sampleMany`` / ``sample_many``).

Python is timed on ``n / 5`` reports and scaled (it is the baseline). The table gives
reports per second, the JS / Python ratio, the random words read per report (JS), and
peak RSS (``ru_maxrss``) of each side. Seeded only in the sense that the mechanisms are
fixed: the words are secure random, as in deployment.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "clients" / "js" / "bench" / "sampler.mjs"
SIZES = (10, 100, 1000)
N_REPORTS = 10**6
#: the acceptance target of the JS sampler at k = 100 (issue 12)
TARGET_RATE = 1e6


def write_krr(k: int, folder: Path, eps: float = 1.0) -> Path:
    """A k-RR mechanism written by mechopt (exactly verified), as the clients receive it."""
    from mechopt import Mechanism

    e = np.exp(eps)
    Q = (np.ones((k, k)) + (e - 1.0) * np.eye(k)) / (e + k - 1.0)
    path = folder / f"krr_{k}.json"
    Mechanism.from_channel(Q, [{"notion": "ldp", "epsilon": eps}], inputs=[f"x{i}" for i in range(k)],
                           outputs=[f"y{i}" for i in range(k)]).save(path)
    return path


def node_available() -> bool:
    return shutil.which("node") is not None


def run_js(path: Path, n: int) -> dict:
    """One ``node bench/sampler.mjs`` run on a file; the JSON line it prints, plus peak RSS."""
    cmd = ["node", str(SCRIPT), str(path), "--n", str(n)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["peak_rss_mb"] = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    return out


def run_python(path: Path, n: int) -> dict:
    """The Python client on the same file: reports per second (timed on n / 5, scaled)."""
    from mechopt.client import Sampler, load_document

    doc = load_document(path)
    sampler = Sampler(doc)
    k = len(doc["inputs"])
    draws = max(1, n // 5)
    one = [doc["inputs"][k // 2]] * draws
    mixed = [doc["inputs"][i % k] for i in range(draws)]
    sampler.sample_many(one[:1000])
    t0 = time.perf_counter()
    sampler.sample_many(one)
    t_one = time.perf_counter() - t0
    t0 = time.perf_counter()
    sampler.sample_many(mixed)
    t_mixed = time.perf_counter() - t0
    return {"rate_one_input": draws / t_one, "rate_mixed": draws / t_mixed,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def measure(sizes=SIZES, n: int = N_REPORTS) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in sizes:
            path = write_krr(k, Path(tmp))
            js = run_js(path, n) if node_available() else None
            py = run_python(path, n)
            rows.append({"k": k, "n": n, "js": js, "python": py})
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| k | JS one input (reports/s) | JS mixed | Python one input | Python mixed | JS / Python (mixed) "
             "| words / report (JS) | peak RSS MB (JS / Py) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        js, py = r["js"], r["python"]
        if js is None:
            lines.append(f"| {r['k']} | — (node not found) | — | {py['rate_one_input']:,.0f} | {py['rate_mixed']:,.0f} "
                         "| — | — | — |")
            continue
        lines.append(f"| {r['k']} | {js['rate_one_input']:,.0f} | {js['rate_mixed']:,.0f} | "
                     f"{py['rate_one_input']:,.0f} | {py['rate_mixed']:,.0f} | "
                     f"{js['rate_mixed'] / py['rate_mixed']:.1f}× | {js['words_per_report']:.2f} | "
                     f"{js['peak_rss_mb']:.0f} / {py['peak_rss_mb']:.0f} |")
    return "\n".join(lines)


# -- benchmarks/run.py adapters: seconds for N_REPORTS reports (mixed inputs) -------------------


def case_js(k: int) -> dict:
    if not node_available():
        return {"error": "node not found"}
    with tempfile.TemporaryDirectory() as tmp:
        js = run_js(write_krr(k, Path(tmp)), N_REPORTS)
    return {"t": N_REPORTS / js["rate_mixed"], "rows": N_REPORTS, "variables": k, "objective": None,
            "note": f"{js['rate_mixed']:,.0f} reports/s, {js['words_per_report']:.2f} words/report"}


def case_python(k: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        py = run_python(write_krr(k, Path(tmp)), N_REPORTS)
    return {"t": N_REPORTS / py["rate_mixed"], "rows": N_REPORTS, "variables": k, "objective": None,
            "note": "timed on 2·10^5 reports, scaled"}


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_js", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--n", type=int, default=N_REPORTS)
    ap.add_argument("--json", metavar="OUT.json",
                    help="also write the rows here (the table goes to standard output)")
    args = ap.parse_args(argv)
    rows = measure(args.sizes, args.n)
    print(f"## exact client samplers: {args.n:,} reports per size, secure random words\n")
    print(table(rows))
    at100 = [r for r in rows if r["k"] == 100 and r["js"]]
    if at100:
        rate = at100[0]["js"]["rate_mixed"]
        verdict = "pass" if rate >= TARGET_RATE else "FAIL"
        print(f"\nJS sampler at k = 100 (mixed inputs): {rate:,.0f} reports/s — target >= {TARGET_RATE:,.0f}: {verdict}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return rows


if __name__ == "__main__":
    main()
