"""Labeled LDP LP: mechopt against the all-pairs formulation written plainly in cvxpy.

Problem: k inputs, outputs = inputs, ε-LDP, Hamming loss, uniform prior (its optimum
is k-RR's error (k-1)/(e^ε+k-1), which both must reach). The baseline writes every
pairwise constraint ``Q[x, :] <= e^ε Q[x', :]`` (k^2 (k-1) scalar rows) and hands it
to HiGHS through cvxpy — what a user types by hand. mechopt uses two auxiliary
variables per column (docs/model.md) and HiGHS directly. Both run in the same process.

    python -m benchmarks.bench_lp --sizes 20 40 60 100 200 --baseline-max 60
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np


def problem(k: int, eps: float) -> dict:
    return {"k": k, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": eps}],
            "objective": {"kind": "expected_loss", "loss": "hamming"}}


def baseline_cvxpy(k: int, eps: float) -> tuple[float, float]:
    import cvxpy as cp

    t0 = time.perf_counter()
    Q = cp.Variable((k, k), nonneg=True)
    e = math.exp(eps)
    cons = [cp.sum(Q, axis=1) == 1]
    for x in range(k):
        for xp in range(k):
            if x != xp:
                cons.append(Q[x, :] <= e * Q[xp, :])
    L = 1 - np.eye(k)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(L, Q)) / k), cons)
    prob.solve(solver="HIGHS")
    return time.perf_counter() - t0, float(prob.value)


def mechopt_time(k: int, eps: float) -> tuple[float, float, dict]:
    from mechopt import solve

    t0 = time.perf_counter()
    r = solve(problem(k, eps), quiet=True)
    dt = time.perf_counter() - t0
    assert r.status == "optimal" and r.certificate.verified, r.message
    return dt, r.objective, r.stats


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__,
                                 epilog="Output: a Markdown table on standard output; --json also writes the rows.")
    ap.add_argument("--sizes", type=int, nargs="+", default=[20, 40, 60, 100, 200])
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--baseline-max", type=int, default=60, help="largest k for the all-pairs baseline")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rows = []
    print("| k | mechopt s | all-pairs cvxpy s | ratio | LP rows (mechopt) | objective | k-RR error |")
    print("|---|---|---|---|---|---|---|")
    for k in args.sizes:
        tm, obj, stats = mechopt_time(k, args.eps)
        exact = (k - 1) / (math.exp(args.eps) + k - 1)
        tb = ratio = None
        if k <= args.baseline_max:
            tb, objb = baseline_cvxpy(k, args.eps)
            ratio = tb / tm
            assert abs(objb - exact) < 1e-6
        rows.append({"k": k, "mechopt_s": tm, "baseline_s": tb, "ratio": ratio, "rows": stats.get("rows"),
                     "objective": obj, "krr": exact})
        print(f"| {k} | {tm:.3f} | {'-' if tb is None else f'{tb:.2f}'} | "
              f"{'-' if ratio is None else f'{ratio:.0f}x'} | {stats.get('rows')} | {obj:.10f} | {exact:.10f} |",
              flush=True)
    out = {"case": "labeled LDP hamming uniform", "eps": args.eps, "rows": rows}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return out


if __name__ == "__main__":
    main()
