"""Estimation design at real domain sizes (issue 10): seeded cases, times, gaps, memory.

    python -m benchmarks.bench_design [--quick] [--md docs/baselines.md] [--json out.json]

Without ``--md`` and ``--json`` the report goes to ``benchmarks/results/design-<date>.md``
(``design-quick-<date>`` with ``--quick``) and ``.json``: the baselines table (the Markdown)
and every measurement (the JSON), headed by the machine and the load average at start and end.

1. **Non-uniform p0** (Dirichlet(1), seed 20240601 + k), ε-LDP, ε = 1: column generation
   over the staircases with exact pricing (:mod:`mechopt.solvers.design._colgen`), through
   ``mechopt.solve``. Reported: wall time, status, risk, proven bound, relative gap, the
   exact pricing's share, peak RSS; baseline ratio = best standard mechanism / optimum.
2. **Uniform p0**: the subset-selection orbit (any k), the exported family verified
   exactly, and 100 000 simulated users estimated from it (numpy simulation, 5 runs; and
   one run through the exact client sampler) against the predicted risk ``R/n``.
3. **The table** of docs/baselines.md: k ∈ {10, 100, 1000}, ε ∈ {0.5, 1, 2, 4}, the
   optimum's risk against each baseline's.

Every solve runs in a forked child (:func:`benchmarks.run.isolated`), so peak RSS is its own.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import time

import numpy as np

from benchmarks.run import SEED, isolated, write_results

EPS = 1.0


def nonuniform_problem(k: int, seed: int | None = None) -> dict:
    p0 = np.random.default_rng(SEED + k if seed is None else seed).dirichlet(np.ones(k))
    return {"k": k, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": EPS}],
            "objective": {"kind": "estimation_variance", "p0": p0.tolist()}}


def run_nonuniform(k: int, seed: int | None = None) -> dict:
    from mechopt import baselines, solve

    t0, c0 = time.perf_counter(), time.process_time()
    r = solve(nonuniform_problem(k, seed), quiet=True)
    t, cpu = time.perf_counter() - t0, time.process_time() - c0
    if not r.ok:
        raise RuntimeError(f"{r.status}: {r.message}")
    rows = [b for b in baselines(nonuniform_problem(k, seed)) if b["privacy_ok"] and b["objective"] is not None]
    best = min(rows, key=lambda b: b["objective"])
    st = r.stats
    ex = st.get("exact_last", {})
    return {"t": t, "cpu": cpu, "status": r.status, "objective": r.objective, "bound": r.bound,
            "rel_gap": (r.objective - r.bound) / r.objective, "rounds": st.get("rounds"),
            "exact_s": st.get("exact_seconds"), "leaves": ex.get("leaves_evaluated"), "leaves_total": ex.get("leaves_total"),
            "outputs": len(r.mechanism.outputs), "best_baseline": best["name"], "best_baseline_risk": best["objective"],
            "scored_by": best["scored_by"], "verified": bool(r.certificate.verified), "rows": k,
            "variables": st.get("working_set"),
            "note": f"{r.status}, proven gap {(r.objective - r.bound) / r.objective:.1e}; best standard mechanism "
                    f"({best['name']}) ×{best['objective'] / r.objective:.3f}"}


def run_uniform(k: int) -> dict:
    from mechopt import solve
    from mechopt.families import FamilyMechanism

    doc = {"k": k, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": EPS}],
           "objective": {"kind": "estimation_variance"}}
    t0 = time.perf_counter()
    r = solve(doc, quiet=True)
    t = time.perf_counter() - t0
    if not r.ok:
        raise RuntimeError(f"{r.status}: {r.message}")
    fam = isinstance(r.mechanism, FamilyMechanism)
    t1 = time.perf_counter()
    ok = r.mechanism.verify().verified
    tv = time.perf_counter() - t1
    e = math.exp(EPS)
    d = r.stats["subset_size"]
    p = d * e / (d * e + k - d)  # Ye & Barg eq. (8), independent of the orbit formula
    q = d * ((d - 1) * e + k - d) / ((k - 1) * (d * e + k - d))
    lit = d * (k - d) / (k * (p - q) ** 2)
    return {"t": t, "status": r.status, "objective": r.objective, "bound": r.bound, "d": d,
            "export": "family" if fam else f"matrix ({len(r.mechanism.outputs)} outputs)",
            "verify_s": tv, "verified": ok, "literature": lit, "lit_rel_diff": abs(r.objective - lit) / lit,
            "rows": k, "variables": d,
            "note": f"{r.status}; d = {d}; {'family' if fam else 'matrix'}; Ye & Barg rel. diff "
                    f"{abs(r.objective - lit) / lit:.0e}"}


def run_simulation(k: int, n: int = 100_000, runs: int = 5, exact_runs: int = 1) -> dict:
    """Users from the uniform p0 through the exported family; ||p̂ - p||^2 against R/n."""
    from mechopt import solve
    from mechopt.families import count_reports, simulate_subset_counts, subset_inversion

    r = solve({"k": k, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": EPS}],
               "objective": {"kind": "estimation_variance"}}, quiet=True)
    mech = r.mechanism
    fam = mech.family
    predicted = r.objective / n
    rng = np.random.default_rng(SEED)
    p = np.full(k, 1 / k)
    out = {"k": k, "n": n, "predicted": predicted, "numpy": [], "exact": []}
    for _ in range(runs):
        x = rng.choice(k, size=n, p=p)
        est, _ = subset_inversion(fam, simulate_subset_counts(fam, x, rng))
        out["numpy"].append(float(np.sum((est - p) ** 2)))
    t0 = time.perf_counter()
    for j in range(exact_runs):
        sampler = mech.sampler(seed=SEED + j)  # the client's exact sampler (seeded: simulation)
        x = rng.choice(k, size=n, p=p)
        counts, _ = count_reports(fam, [sampler.sample_index(int(v)) for v in x])
        est, _ = subset_inversion(fam, counts)
        out["exact"].append(float(np.sum((est - p) ** 2)))
    out["exact_s"] = time.perf_counter() - t0
    return out


def table(ks=(10, 100, 1000), epss=(0.5, 1.0, 2.0, 4.0)) -> list[dict]:
    from mechopt import baselines
    from mechopt.solvers.design._orbit import best_subset_size

    rows = []
    for k in ks:
        for eps in epss:
            d, opt = best_subset_size(k, eps)
            doc = {"k": k, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": eps}],
                   "objective": {"kind": "estimation_variance"}}
            bl = baselines(doc, optimum=opt)
            rows.append({"k": k, "eps": eps, "d": d, "optimum": opt,
                         "baselines": {b["name"].split(" (")[0]: (b["objective"], b["ratio"], b["name"]) for b in bl
                                       if b["objective"] is not None and b["privacy_ok"]}})
    return rows


def table_markdown(rows: list[dict]) -> str:
    names = ["k-RR", "SUE", "OUE", "OLH", "subset selection", "Hadamard response"]
    head = "| k | ε | optimum (best d-subset selection) | " + " | ".join(names) + " |"
    lines = [head, "|" + "---|" * (3 + len(names))]
    for r in rows:
        cells = []
        for n in names:
            v = r["baselines"].get(n)
            cells.append("—" if v is None else f"{v[0]:.4g} (×{v[1]:.3f})")
        lines.append(f"| {r['k']} | {r['eps']:g} | {r['optimum']:.4g} (d = {r['d']}) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--json", default=None,
                    help="write every measurement here (default: benchmarks/results/design-<date>.json)")
    ap.add_argument("--md", default=None,
                    help="write the baselines table (Markdown) here (default: benchmarks/results/design-<date>.md)")
    args = ap.parse_args(argv)
    report: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "loadavg": list(map(float, os.getloadavg()))}
    import mechopt  # noqa: F401  (warm imports before forking)
    from mechopt import solve

    solve({"k": 2, "privacy": [{"notion": "ldp", "epsilon": 1.0}]}, quiet=True)

    print("## Non-uniform p0 (Dirichlet(1)), ε-LDP ε=1: column generation with exact staircase pricing\n")
    print("| k | seed | wall s | CPU s | status | risk | proven bound | rel. gap | rounds | exact pricing s | "
          "leaves evaluated | outputs | best baseline (risk, ratio) | peak MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    report["nonuniform"] = []
    runs = [(k, None) for k in ([12, 16, 20] if args.quick else [12, 16, 20, 24, 28, 30])]
    runs += [] if args.quick else [(30, s) for s in (1, 2, 3)]
    for k, seed in runs:
        m = isolated(run_nonuniform, k, seed, timeout=args.timeout)
        m["k"], m["seed"] = k, SEED + k if seed is None else seed
        report["nonuniform"].append(m)
        if "error" in m or "timeout" in m:
            print(f"| {k} | {m['seed']} | {m['t']:.1f} | {m.get('error') or m.get('timeout')} |")
            continue
        print(f"| {k} | {m['seed']} | {m['t']:.1f} | {m['cpu']:.1f} | {m['status']} | {m['objective']:.10g} | {m['bound']:.10g} | {m['rel_gap']:.1e} | "
              f"{m['rounds']} | {m['exact_s']:.1f} | {m['leaves'] / m['leaves_total']:.0%} of 2^{k} | {m['outputs']} | "
              f"{m['best_baseline']} {m['best_baseline_risk']:.6g} (×{m['best_baseline_risk'] / m['objective']:.3f}) | "
              f"{m['peak_mb']:.0f} |", flush=True)

    print("\n## Uniform p0, ε-LDP ε=1: the subset-selection orbit\n")
    print("| k | s | status | risk | d | export | verify s | Ye & Barg formula (rel. diff) | peak MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    report["uniform"] = []
    for k in ([10, 100, 1000] if args.quick else [10, 100, 1000, 10_000]):
        m = isolated(run_uniform, k, timeout=args.timeout)
        m["k"] = k
        report["uniform"].append(m)
        if "error" in m or "timeout" in m:
            print(f"| {k} | {m['t']:.1f} | {m.get('error') or m.get('timeout')} |")
            continue
        print(f"| {k} | {m['t']:.3f} | {m['status']} | {m['objective']:.10g} | {m['d']} | {m['export']} | "
              f"{m['verify_s']:.3f} | {m['literature']:.10g} ({m['lit_rel_diff']:.1e}) | {m['peak_mb']:.0f} |",
              flush=True)

    print("\n## 100 000 simulated users through the exported k = 1000 family\n")
    sim = isolated(run_simulation, 1000, 100_000, 5, 0 if args.quick else 1, timeout=args.timeout)
    report["simulation"] = sim
    if "error" in sim or "timeout" in sim:
        print(sim)
    else:
        pred = sim["predicted"]
        sd = pred * math.sqrt(2 / 1000)  # ||p̂ - p||^2 sums ~k independent squared errors
        for kind in ("numpy", "exact"):
            for v in sim[kind]:
                print(f"- {kind} sampler: ||p̂ - p||² = {v:.6g}, predicted R/n = {pred:.6g}, ratio {v / pred:.3f} "
                      f"({(v - pred) / sd:+.1f} s.d.)")
        print(f"- exact client sampler: {sim['exact_s']:.1f} s for {len(sim['exact'])} × 100 000 reports; "
              f"peak {sim['peak_mb']:.0f} MB")

    print("\n## Optimum against the standard mechanisms (uniform p0, estimation risk tr(B J⁻¹ Bᵀ))\n")
    rows = table([10, 100] if args.quick else [10, 100, 1000])
    md = table_markdown(rows)
    print(md)
    report["table"] = rows
    report["peak_mb_parent"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    write_results("bench_design", "design-quick" if args.quick else "design", md, report, args.md, args.json,
                  report["started"], tuple(report["loadavg"]))
    return report


if __name__ == "__main__":
    main()
