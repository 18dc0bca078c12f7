"""Compare the benchmark suite of two revisions in one run: ``python -m benchmarks.compare REV``.

Checks ``REV`` (a commit, tag or branch) out into a temporary git worktree and runs each
benchmark case under both trees, alternating which goes first (``--rounds``), each side in
its own process with its own ``mechopt`` on ``PYTHONPATH``. For every measurement it
compares what a refactoring must not change and what it may:

* the LP sizes (rows × variables) must be identical,
* the objectives and bounds must agree to ``--rtol`` (default 1e-12, relative to
  ``max(1, |value|)``),
* the median of the time ratios (this tree / ``REV``, each side's best of the rounds) is
  reported against ``--max-ratio`` (default 1.1).

The table, the machine and the load averages are written to
``benchmarks/results/compare-<date>.md`` (and ``.json``); the exit code is 0 when every
check holds, 1 otherwise.

Usage::

    python -m benchmarks.compare HEAD~5 --quick
    python -m benchmarks.compare v0.1 --quick --cases ldp,metric_grid --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
#: cases run by default: every case of the suite except the ones that measure a foreign
#: program (node) rather than mechopt's solvers
SKIP = {"js_sampler"}


def _run_side(tree: Path, case: str, quick: bool, timeout: float | None, out: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    cmd = [sys.executable, "-m", "benchmarks", "--cases", case, "--json", str(out)]
    if quick:
        cmd.append("--quick")
    if timeout:
        cmd += ["--timeout", str(timeout)]
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if proc.returncode != 0 or not out.exists():
        return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]}
    return json.loads(out.read_text())


def _rows(report: dict) -> dict:
    """``(case, k) -> mechopt measurement`` of one report."""
    out = {}
    for c in report.get("cases", []):
        for r in c["rows"]:
            if r.get("mechopt") is not None:
                out[(c["name"], r["k"])] = r["mechopt"]
    return out


def _close(a, b, rtol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= rtol * max(1.0, abs(a), abs(b))


def compare(rev: str, *, quick: bool = True, cases: list[str] | None = None, rounds: int = 2,
            rtol: float = 1e-12, max_ratio: float = 1.1, timeout: float | None = None, log=print) -> dict:
    """Run both trees and compare; returns the report (see the module docstring)."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.run import CASES, machine

    names = cases or [c.name for c in CASES if c.name not in SKIP]
    work = Path(tempfile.mkdtemp(prefix="mechopt-compare-"))
    old_tree = work / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", str(old_tree), rev], cwd=ROOT, check=True,
                   capture_output=True)
    commit = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    report: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "rev": rev, "rev_commit": commit,
                    "head_commit": head, "quick": quick, "rounds": rounds, "machine": machine(), "rows": []}
    try:
        best: dict = {"old": {}, "new": {}}
        for case in names:
            for rnd in range(rounds):
                order = ("old", "new") if rnd % 2 == 0 else ("new", "old")
                for side in order:
                    tree = old_tree if side == "old" else ROOT
                    rep = _run_side(tree, case, quick, timeout, work / f"{side}-{case}-{rnd}.json")
                    if "error" in rep:
                        log(f"{case}: {side} side failed: {rep['error']}")
                        continue
                    for key, m in _rows(rep).items():
                        prev = best[side].get(key)
                        if prev is None or ("t" in m and m.get("t", 1e99) < prev.get("t", 1e99)):
                            best[side][key] = m
            log(f"{case}: done ({len([k for k in best['new'] if k[0] == case])} sizes)")
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(old_tree)], cwd=ROOT, capture_output=True)
    ratios = []
    ok = True
    for key in sorted(set(best["old"]) | set(best["new"]), key=lambda x: (names.index(x[0]), x[1])):
        o, n = best["old"].get(key), best["new"].get(key)
        row = {"case": key[0], "k": key[1]}
        if o is None or n is None or "t" not in o or "t" not in n or "error" in o or "error" in n:
            row["note"] = "measured on one side only" if (o is None) != (n is None) else "failed"
            row["ok"] = False
        else:
            row["t_old"], row["t_new"] = o["t"], n["t"]
            row["ratio"] = n["t"] / o["t"] if o["t"] > 0 else None
            row["sizes_equal"] = (o.get("rows"), o.get("variables")) == (n.get("rows"), n.get("variables"))
            row["size"] = f"{n.get('rows', '—')} × {n.get('variables', '—')}"
            row["objective_diff"] = (abs(o["objective"] - n["objective"])
                                     if o.get("objective") is not None and n.get("objective") is not None else None)
            row["objective_equal"] = _close(o.get("objective"), n.get("objective"), rtol)
            row["bound_equal"] = _close(o.get("bound"), n.get("bound"), rtol)
            row["ok"] = row["sizes_equal"] and row["objective_equal"] and row["bound_equal"]
            if row["ratio"] is not None:
                ratios.append(row["ratio"])
        ok = ok and row["ok"]
        report["rows"].append(row)
    report["median_ratio"] = statistics.median(ratios) if ratios else None
    report["ok"] = ok and report["median_ratio"] is not None and report["median_ratio"] <= max_ratio
    report["max_ratio"], report["rtol"] = max_ratio, rtol
    report["loadavg_at_end"] = os.getloadavg()
    return report


def markdown(report: dict) -> str:
    m = report["machine"]
    lines = [f"# Benchmarks: this tree against {report['rev']}",
             "",
             f"`python -m benchmarks.compare {report['rev']}{' --quick' if report['quick'] else ''} "
             f"--rounds {report['rounds']}`, started {report['started']}; this tree "
             f"{report['head_commit'][:10]}, {report['rev']} = {report['rev_commit'][:10]}; "
             f"{m.get('nproc')} cores, Python {m.get('python')}, numpy {m.get('numpy')}, scipy {m.get('scipy')}; "
             f"load average at start {m['loadavg_at_start'][0]:.2f}, at end {report['loadavg_at_end'][0]:.2f}. "
             "Times are each side's best of the rounds.",
             "",
             "| case | k | rows × variables | same sizes | objective diff | same objective and bound | "
             f"{report['rev']} s | this tree s | ratio |",
             "|---|---:|---:|---|---:|---|---:|---:|---:|"]
    for r in report["rows"]:
        if "t_new" not in r:
            lines.append(f"| {r['case']} | {r['k']} | — | — | — | — | — | — | {r['note']} |")
            continue
        d = "—" if r["objective_diff"] is None else f"{r['objective_diff']:.1e}"
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.2f}"
        lines.append(f"| {r['case']} | {r['k']} | {r['size']} | {'yes' if r['sizes_equal'] else '**no**'} | {d} | "
                     f"{'yes' if r['objective_equal'] and r['bound_equal'] else '**no**'} | {r['t_old']:.3f} | "
                     f"{r['t_new']:.3f} | {ratio} |")
    med = report["median_ratio"]
    lines += ["", f"Median time ratio (this tree / {report['rev']}): "
              f"{'—' if med is None else f'{med:.3f}'} (limit {report['max_ratio']}); objectives and bounds "
              f"compared to {report['rtol']:g} relative; verdict: {'pass' if report['ok'] else 'FAIL'}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    raw = argparse.RawDescriptionHelpFormatter
    ap = argparse.ArgumentParser(prog="python -m benchmarks.compare", description=__doc__, formatter_class=raw)
    ap.add_argument("rev", help="the revision to compare against (commit, tag, branch)")
    ap.add_argument("--rounds", type=int, default=2, help="runs per side, alternating which goes first (default 2)")
    ap.add_argument("--quick", action="store_true", help="the quick sizes of every case")
    ap.add_argument("--cases", help="comma-separated subset of the cases (default: all but js_sampler)")
    ap.add_argument("--rtol", type=float, default=1e-12)
    ap.add_argument("--max-ratio", type=float, default=1.1)
    ap.add_argument("--timeout", type=float, default=None, help="seconds per measurement (the suite's default)")
    ap.add_argument("--out", help="Markdown output (default benchmarks/results/compare-<date>.md)")
    args = ap.parse_args(argv)
    report = compare(args.rev, quick=args.quick, cases=args.cases.split(",") if args.cases else None,
                     rounds=args.rounds, rtol=args.rtol, max_ratio=args.max_ratio, timeout=args.timeout)
    md = markdown(report)
    out = Path(args.out) if args.out else RESULTS / f"compare-{time.strftime('%Y-%m-%d')}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(md)
    out.with_suffix(".json").write_text(json.dumps(report, indent=1, default=str))
    print(md)
    print(f"written to {out}")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
