"""LDP histogram MSE under a non-uniform prior (docs/large.md, "LDP histogram MSE under a non-uniform prior").

    python -m benchmarks.bench_ldp_hmse [--eps 1] [--limit 600] [--md out.md] [--json out.json]

Two rows per ε: k = 200 with the Dirichlet(1) prior of :mod:`benchmarks.bench_large`
(seed ``SEED + 200``) and k = 1 000 with the Zipf(1.1) prior ``p_i ∝ i^-1.1``; free
outputs, ε-LDP, ``mechopt.solve`` with ``time_limit``. Each solve runs in a forked child
(:func:`benchmarks.run.isolated`): the peak RSS is its own. Without ``--md`` and ``--json``
the report goes to ``benchmarks/results/ldp_hmse-<date>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from benchmarks.bench_large import problem
from benchmarks.run import isolated, write_results


def zipf(k: int, eps: float, s: float = 1.1) -> dict:
    P = np.arange(1, k + 1) ** -s
    return {"k": k, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": eps}],
            "objective": {"kind": "histogram_mse", "prior": (P / P.sum()).tolist()}}


def case(name: str, eps: float, limit: float) -> dict:
    import resource
    import warnings

    from mechopt import solve

    warnings.simplefilter("ignore")
    if name == "dirichlet200":
        doc = problem("ldp", "histogram_mse", 200)
        doc["privacy"][0]["epsilon"] = eps
    else:
        doc = zipf(1000, eps)
    t0 = time.perf_counter()
    r = solve(doc, quiet=True, time_limit=limit)
    st = r.stats
    return {"case": name, "eps": eps, "t": time.perf_counter() - t0, "status": r.status, "objective": r.objective,
            "bound": r.bound, "gap": r.gap, "verified": bool(r.certificate.verified),
            "aggregated_rows": st.get("aggregated_rows"), "aggregated_rounds": st.get("aggregated_rounds"),
            "pricing_s": st.get("aggregated_pricing_s", 0.0) + st.get("pricing_s", 0.0),
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eps", default="1", help="comma-separated budgets")
    ap.add_argument("--limit", type=float, default=600.0, help="time limit of each solve (s)")
    ap.add_argument("--md")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    started, load_start = time.strftime("%Y-%m-%d %H:%M:%S"), os.getloadavg()
    rows = []
    for eps in (float(e) for e in args.eps.split(",")):
        for name in ("dirichlet200", "zipf1000"):
            out = isolated(case, name, eps, args.limit, timeout=args.limit + 300)
            rows.append({"case": name, "eps": eps, **out})
            print(rows[-1], flush=True)
    lines = ["| prior, k | ε | status | histogram MSE | proven bound | gap | aggregated rows / rounds | pricing (s) "
             "| time (s) | peak MB |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "objective" not in r:
            lines.append(f"| {r['case']} | {r['eps']:g} | {r.get('error', r.get('timeout'))} |||||||")
            continue
        lines.append(f"| {r['case']} | {r['eps']:g} | {r['status']} | {r['objective']:.10f} | {r['bound']:.10f} | "
                     f"{r['gap']:.1e} | {r['aggregated_rows']} / {r['aggregated_rounds']} | {r['pricing_s']:.1f} | "
                     f"{r['t']:.1f} | {r['peak_mb']:.0f} |")
    md = "\n".join(lines)
    print(md)
    write_results("bench_ldp_hmse", "ldp_hmse", md, rows, args.md, args.json, started, load_start)
    return rows


if __name__ == "__main__":
    main()
