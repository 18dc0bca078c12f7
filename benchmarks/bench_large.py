"""Free outputs at large k (issue 10 A): exact-pricing column generation and the orbit.

    python -m benchmarks.bench_large [--quick] [--md out.md] [--json out.json] [--only k50,k200,...]

Without ``--md`` and ``--json`` the report goes to ``benchmarks/results/large-<date>.md``
(``large-quick-<date>`` with ``--quick``, ``large-<sections>-<date>`` with ``--only``) and
``.json``, headed by the machine and the load average at start and end.

Seeded problems (prior Dirichlet(1), seed ``SEED + k``; MMSE values N(0, 1); Bayes risk
with a random loss in [0, 1) off the diagonal), ε = 1, on five notions: LDP, block LDP
(blocks of k/2, k/2 − 1 and 1 inputs), high-low LDP (every second input sensitive),
ULDP (every third input sensitive) and LIP with the objective's prior. Sections:

* ``vs_rays`` — k = 12 (and 14 for LDP): ``method="colgen"`` against main's ray
  enumeration (``method="rays"``): time ratio and agreement of the optima;
* ``k50`` — every objective × notion at k = 50, time limit 60 s (target: proven optimal);
* ``k200`` — the same at k = 200 (target: proven gap <= 1e-3 within 600 s);
* ``lip_mmse`` — LIP MMSE at k = 100 (target: proven optimal in <= 30 s);
* ``lip_design`` — LIP ``estimation_variance`` (the prior as ``p0``) at k = 100, time
  limit 600 s (target: proven gap <= 1e-3), with the Dirichlet(1) prior and (row
  ``lip_design_zipf``) the Zipf(1.1) prior ``P_x ∝ x^-1.1``;
* ``lip_window`` — LIP histogram MSE and MI at k = 24, 27, 30 (ε = 1) and k = 50 (ε = 2, 3),
  time limit 60 s (target: proven optimal; sections ``lip_eps1``, ``lip_eps2``, ``lip_eps3``);
* ``uniform`` — LDP with a uniform prior, histogram MSE and MI, k = 10 000 (target: <= 5 s,
  <= k outputs or a family, verified).

Every solve runs in a forked child (:func:`benchmarks.run.isolated`): peak RSS is its own.
The machine is shared: times are pessimistic.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from benchmarks.run import SEED, isolated, write_results

EPS = 1.0
KINDS = ("mmse", "histogram_mse", "mutual_information", "bayes_risk")
NOTIONS = ("ldp", "block", "high_low", "uldp", "lip")


def problem(notion: str, kind: str, k: int, uniform: bool = False, eps: float | None = None,
            zipf: bool = False) -> dict:
    e = EPS if eps is None else eps
    rng = np.random.default_rng(SEED + k)
    P = np.full(k, 1.0 / k) if uniform else rng.dirichlet(np.ones(k))
    if zipf:  # P_x ∝ x^-1.1 (the MMSE values and Bayes losses still come from the seed)
        P = np.arange(1, k + 1, dtype=float) ** -1.1
        P /= P.sum()
    labels = [str(x) for x in range(k)]
    priv = {"ldp": {"notion": "ldp", "epsilon": e},
            "block": {"notion": "block", "epsilon": e,
                      "blocks": [labels[: k // 2], labels[k // 2: k - 1], labels[-1:]]},
            "high_low": {"notion": "high_low", "epsilon": e, "sensitive": labels[::2]},
            "uldp": {"notion": "uldp", "epsilon": e, "sensitive": labels[::3]},
            "lip": {"notion": "lip", "epsilon": e, "prior": P.tolist()}}[notion]
    obj: dict = {"kind": kind} if uniform else {"kind": kind, "prior": P.tolist()}
    if kind == "estimation_variance":
        obj = {"kind": kind, "p0": P.tolist()}
    if kind == "mmse":
        obj["values"] = rng.normal(size=k).tolist()
    if kind == "bayes_risk":
        obj["loss"] = (rng.uniform(0, 1, (k, k)) * (1 - np.eye(k))).tolist()
    return {"k": k, "outputs": "free", "privacy": [priv], "objective": obj}


def run(notion: str, kind: str, k: int, method: str = "auto", time_limit: float | None = None,
        uniform: bool = False, eps: float | None = None, zipf: bool = False) -> dict:
    import warnings

    from mechopt import solve
    from mechopt.objectives import objective_scale
    from mechopt._problem import load_problem

    doc = problem(notion, kind, k, uniform, eps, zipf)
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    r = solve(doc, method=method, quiet=True, time_limit=time_limit)
    t = time.perf_counter() - t0
    if r.mechanism is None:
        raise RuntimeError(f"{r.status}: {r.message}")
    scale = max(abs(r.objective), objective_scale(load_problem(doc).objective))
    st = r.stats
    return {"t": t, "status": r.status, "objective": r.objective, "bound": r.bound,
            "rel_gap": r.gap / scale if r.gap is not None else None, "method": st.get("method"),
            "outputs": (f"family ({st.get('subset_size')}-subsets)" if hasattr(r.mechanism, "family_spec")
                        else len(r.mechanism.outputs)), "verified": bool(r.certificate.verified), "rounds": st.get("rounds"),
            "columns": st.get("columns", st.get("rays")), "pricing_s": st.get("pricing_s"), "message": r.message[:120]}


def _row(section: str, notion: str, kind: str, k: int, out: dict, extra: dict | None = None) -> dict:
    row = {"section": section, "notion": notion, "kind": kind, "k": k, **out, **(extra or {})}
    if "error" in out or "timeout" in out:
        row["status"] = "timeout" if "timeout" in out else "error"
    gap = row.get("rel_gap")
    print(f"{section:8s} {notion:8s} {kind:18s} k={k:<6d} {row.get('t', float('nan')):8.2f}s "
          f"{row.get('status', '?'):9s} gap={gap if gap is None else f'{gap:.1e}'} "
          f"outputs={row.get('outputs')} peak={row.get('peak_mb', float('nan')):.0f}MB "
          f"{row.get('vs', '')} {row.get('error', row.get('timeout', ''))}", flush=True)
    return row


def vs_rays(k: int, notions=NOTIONS, kinds=KINDS, timeout: float = 300) -> list[dict]:
    rows = []
    for notion in notions:
        for kind in kinds:
            cg = isolated(run, notion, kind, k, "colgen", None, timeout=timeout)
            rays = isolated(run, notion, kind, k, "rays", None, timeout=timeout)
            extra = {}
            if "objective" in cg and "objective" in rays:
                extra = {"rays_t": rays["t"], "agree": abs(cg["objective"] - rays["objective"])
                         / max(abs(rays["objective"]), 1e-300),
                         "vs": f"rays {rays['t']:.2f}s ({rays['t'] / cg['t']:.1f}x), |diff| "
                               f"{abs(cg['objective'] - rays['objective']) / max(abs(rays['objective']), 1e-300):.0e}"}
            rows.append(_row("vs_rays", notion, kind, k, cg, extra))
    return rows


def grid(section: str, k: int, limit: float, notions=NOTIONS, kinds=KINDS) -> list[dict]:
    return [_row(section, n, kind, k, isolated(run, n, kind, k, "auto", limit, timeout=limit + 120))
            for n in notions for kind in kinds]


def lip_window(limit: float = 60) -> list[dict]:
    """LIP histogram MSE and MI where the chord bound is not tight: k = 24, 27, 30 at ε = 1, k = 50 at ε = 2, 3."""
    return [_row(f"lip_eps{eps:g}", "lip", kind, k,
                 isolated(run, "lip", kind, k, "auto", limit, False, eps, timeout=limit + 120))
            for k, eps in ((24, 1.0), (27, 1.0), (30, 1.0), (50, 2.0), (50, 3.0))
            for kind in ("histogram_mse", "mutual_information")]


def uniform(k: int = 10_000) -> list[dict]:
    return [_row("uniform", "ldp", kind, k, isolated(run, "ldp", kind, k, "auto", None, True, timeout=120))
            for kind in ("histogram_mse", "mutual_information")]


def table(rows: list[dict]) -> str:
    lines = ["| section | notion | objective | k | time (s) | status | proven rel. gap | outputs | peak MB | "
             "vs rays |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        gap = r.get("rel_gap")
        lines.append(f"| {r['section']} | {r['notion']} | {r['kind']} | {r['k']} | {r.get('t', float('nan')):.2f} | "
                     f"{r.get('status')} | {'—' if gap is None else f'{gap:.1e}'} | {r.get('outputs', '—')} | "
                     f"{r.get('peak_mb', float('nan')):.0f} | {r.get('vs', '')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a subset that runs in under a minute")
    ap.add_argument("--only", help="comma-separated sections: vs_rays,k50,k200,lip_mmse,lip_design,lip_window,uniform")
    ap.add_argument("--limit200", type=float, default=600.0, help="time limit of each k = 200 case (s)")
    ap.add_argument("--md", help="write the table here (default: benchmarks/results/large-<date>.md)")
    ap.add_argument("--json", help="write the rows here (default: benchmarks/results/large-<date>.json)")
    args = ap.parse_args(argv)
    started, load_start = time.strftime("%Y-%m-%d %H:%M:%S"), os.getloadavg()
    only = set(args.only.split(",")) if args.only else {"vs_rays", "k50", "k200", "lip_mmse", "lip_design", "lip_window",
                                                         "uniform"}
    rows: list[dict] = []
    if args.quick:
        rows += vs_rays(12, notions=("ldp", "lip"), kinds=("mmse", "bayes_risk"))
        rows += grid("k50", 50, 60, notions=("ldp", "uldp"), kinds=("mmse", "bayes_risk"))
        rows += grid("lip_mmse", 100, 30, notions=("lip",), kinds=("mmse",))
        rows += uniform()
    else:
        if "vs_rays" in only:
            rows += vs_rays(12) + vs_rays(14, notions=("ldp",))
        if "k50" in only:
            rows += grid("k50", 50, 60)
        if "lip_mmse" in only:
            rows += grid("lip_mmse", 100, 30, notions=("lip",), kinds=("mmse",))
        if "lip_design" in only:
            rows += grid("lip_design", 100, 600, notions=("lip",), kinds=("estimation_variance",))
            rows.append(_row("lip_design_zipf", "lip", "estimation_variance", 100,
                             isolated(run, "lip", "estimation_variance", 100, "auto", 600, False, None, True,
                                      timeout=720)))
        if "lip_window" in only:
            rows += lip_window()
        if "uniform" in only:
            rows += uniform()
        if "k200" in only:
            rows += grid("k200", 200, args.limit200)
    md = table(rows)
    print(md)
    stem = "large-quick" if args.quick else "large" + (f"-{'_'.join(sorted(only))}" if args.only else "")
    write_results("bench_large", stem, md, rows, args.md, args.json, started, load_start)
    return rows


def run_case(k: int) -> dict:
    """One case for ``python -m benchmarks`` (benchmarks/run.py): MI on LDP by column generation."""
    out = run("ldp", "mutual_information", k, "colgen" if k <= 14 else "auto", 600.0)
    out.update(rows=k, variables=out.get("columns"), note=f"{out['status']}, proven gap {out['rel_gap']:.1e}")
    return out


def run_case_rays(k: int) -> dict:
    out = run("ldp", "mutual_information", k, "rays")
    out.update(rows=k, variables=out.get("columns"))
    return out


if __name__ == "__main__":
    main()
