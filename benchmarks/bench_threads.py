"""How many BLAS threads a solve should use: ``python -m benchmarks.bench_threads``.

Solves the same problems in fresh processes with the solve's BLAS/OpenMP pools limited to
1 thread and to one per core (``MECHOPT_BLAS_THREADS``), on a quiet machine and with
``--busy N`` processes spinning beside it (a machine shared with other work, as CI runners
and laptops are). The environment is a new user's: ``OPENBLAS_NUM_THREADS`` and
``OMP_NUM_THREADS`` are removed. Each solve runs under a time limit per run
(``--timeout``); a run past it counts as that time, marked ``>``.

Cases: ``problems/geo_city.yaml`` (7×7 places, Euclidean: the structured interior point
with dense 49 × 49 blocks) and a 14×14 Manhattan grid with a clustered prior (``benchmarks/bench_geo.py``),
and a 10×10 Euclidean grid (``euclid10``, on request).

Writes ``benchmarks/results/threads-<date>.md`` and ``.json`` (``--out`` to choose).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"

_CASES = {
    "geo_city": "from mechopt import solve; r = solve('problems/geo_city.yaml', quiet=True)",
    "grid14": ("from mechopt import solve; from benchmarks.bench_geo import geo_doc; "
               "r = solve(geo_doc(14, 'manhattan'), quiet=True)"),
    "euclid10": ("from mechopt import solve; from benchmarks.bench_geo import geo_doc; "
                 "r = solve(geo_doc(10, 'euclidean'), quiet=True)"),
}
_REPORT = "; import json, sys; print(json.dumps([r.status, r.objective, r.stats.get('blas_threads')]))"


def _spin():
    while True:
        pass


def _one(case: str, threads: int, timeout: float) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                            "MKL_NUM_THREADS")}
    env["MECHOPT_BLAS_THREADS"] = str(threads)
    env["PYTHONPATH"] = str(ROOT)
    code = "import time; t0 = time.perf_counter(); " + _CASES[case] + "; t = time.perf_counter() - t0" + \
        _REPORT.replace("r.stats.get('blas_threads')]", "r.stats.get('blas_threads'), t]")
    try:
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"t": timeout, "timeout": True}
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1:]}
    status, objective, used, t = json.loads(out.stdout.strip().splitlines()[-1])
    return {"t": t, "status": status, "objective": objective, "threads_used": used}


def run(runs: int = 5, busy: int = 1, timeout: float = 120.0, cases=("geo_city", "grid14"), log=print) -> dict:
    import multiprocessing as mp

    ncpu = os.cpu_count() or 1
    report: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "cores": ncpu, "runs": runs, "busy": busy,
                    "timeout": timeout, "loadavg_at_start": os.getloadavg(), "rows": []}
    for load in (0, busy):
        spinners = [mp.Process(target=_spin, daemon=True) for _ in range(load)]
        for p in spinners:
            p.start()
        try:
            for case in cases:
                for threads in (1, ncpu):
                    ts = []
                    for _ in range(runs):
                        m = _one(case, threads, timeout)
                        if "error" in m:
                            raise RuntimeError(f"{case}: {m['error']}")
                        ts.append(m)
                    row = {"case": case, "busy": load, "threads": threads,
                           "times": [m["t"] for m in ts], "timeouts": sum(bool(m.get("timeout")) for m in ts),
                           "median": statistics.median(m["t"] for m in ts), "max": max(m["t"] for m in ts),
                           "objective": next((m["objective"] for m in ts if "objective" in m), None)}
                    report["rows"].append(row)
                    log(f"{case} busy={load} threads={threads}: median {row['median']:.2f} s, max {row['max']:.2f} s"
                        f"{' (' + str(row['timeouts']) + ' past the limit)' if row['timeouts'] else ''}")
        finally:
            for p in spinners:
                p.kill()
    report["loadavg_at_end"] = os.getloadavg()
    return report


def markdown(report: dict) -> str:
    lines = ["# BLAS threads per solve", "",
             f"`python -m benchmarks.bench_threads --runs {report['runs']} --busy {report['busy']}`, started "
             f"{report['started']}, {report['cores']} cores, load average at start "
             f"{report['loadavg_at_start'][0]:.2f}, at end {report['loadavg_at_end'][0]:.2f}; every run a fresh "
             f"process without OPENBLAS_NUM_THREADS / OMP_NUM_THREADS; limit {report['timeout']:.0f} s a run.", "",
             "| case | spinning processes beside it | BLAS threads | median s | max s | runs (s) |",
             "|---|---:|---:|---:|---:|---|"]
    for r in report["rows"]:
        runs = ", ".join((">" if t >= report["timeout"] else "") + f"{t:.2f}" for t in r["times"])
        lines.append(f"| {r['case']} | {r['busy']} | {r['threads']} | {r['median']:.2f} | {r['max']:.2f} | {runs} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_threads", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="solves per setting (default 5)")
    ap.add_argument("--busy", type=int, default=1, help="spinning processes in the loaded half (default 1)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds a run may take (default 120)")
    ap.add_argument("--cases", default="geo_city,grid14", help=f"comma-separated: {','.join(_CASES)}")
    ap.add_argument("--out", help="Markdown output (default benchmarks/results/threads-<date>.md)")
    args = ap.parse_args(argv)
    report = run(args.runs, args.busy, args.timeout, tuple(args.cases.split(",")))
    md = markdown(report)
    out = Path(args.out) if args.out else RESULTS / f"threads-{time.strftime('%Y-%m-%d')}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(md)
    out.with_suffix(".json").write_text(json.dumps(report, indent=1))
    print(md)
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
