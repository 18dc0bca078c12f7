"""Benchmark: location privacy at city scale (issue 13).

    python -m benchmarks.bench_geo [--cases grid10,euclid10,grid20,euclid20,grid32,spanner20,baselines]
                                   [--methods auto,decompose] [--md out.md]

Without ``--md`` the table goes to ``benchmarks/results/geo-<date>.md`` (and ``.json``),
headed by the machine and the load average at start and end.

Seeded cases: an n×n grid (unit spacing), a *clustered* prior (three Gaussian hotspots
plus a small floor), metric privacy with ε = 0.7 per unit, squared-distance loss.
Every mechopt time is end to end (``mechopt.solve``: model, decomposition, repair and
exact verification). The libqif baseline (PyPI ``qif``,
``qif.mechanism.d_privacy.min_loss_given_d`` with its ``d_priv_ch`` hook marking every
pair but the grid's neighbours as chainable, so that only neighbours get a constraint) runs in the same run; ratios are baseline / mechopt. Each
measurement runs in a forked child (its own peak RSS, ``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

from benchmarks.run import isolated, write_results

SEED = 20240601
EPS = 0.7


def clustered_prior(xy: np.ndarray, seed: int = SEED, floor: float = 0.03) -> np.ndarray:
    """Three Gaussian hotspots (random centres, widths, weights) plus a uniform floor."""
    rng = np.random.default_rng(seed)
    lo, hi = xy.min(0), xy.max(0)
    span = float((hi - lo).max()) + 1.0
    centres = lo + rng.random((3, 2)) * (hi - lo)
    sig = span * (0.06 + 0.08 * rng.random(3))
    w = rng.dirichlet(np.ones(3) * 2)
    dens = sum(w[h] * np.exp(-((xy - centres[h]) ** 2).sum(1) / (2 * sig[h] ** 2)) for h in range(3))
    dens = dens / dens.sum()
    p = (1 - floor) * dens + floor / len(xy)
    return p / p.sum()


def geo_doc(n: int, distance: str, *, spanner: float | None = None) -> dict:
    from mechopt.geo import Places

    pl = Places.grid(n, n)
    notion = {"notion": "metric", "epsilon": EPS, "distance": distance}
    if spanner is not None:
        notion["spanner"] = spanner
    return {"places": {"grid": [n, n]}, "privacy": [notion],
            "objective": {"kind": "expected_loss", "loss": "squared",
                          "prior": clustered_prior(pl.coords).tolist()}}


def map_doc(k: int = 150, seed: int = SEED, eps: float = 2.0) -> dict:
    """``k`` places from a map: latitude/longitude around a city centre, check-in counts as the prior.

    Four hot spots (widths 0.6–1.5 km) hold 60 % of the places, the rest are uniform in a
    12 km × 12 km box; each place's check-ins are Poisson around its hot-spot density.
    ``epsilon`` per km, haversine distance and loss: what a user with a CSV of points has.
    """
    rng = np.random.default_rng(seed)
    km_lat, km_lon = 1 / 110.574, 1 / (111.320 * math.cos(math.radians(48.8566)))
    hot = rng.uniform(-4, 4, (4, 2))
    width = rng.uniform(0.6, 1.5, 4)
    n_hot = int(0.6 * k)
    which = rng.integers(0, 4, n_hot)
    pts = np.vstack([hot[which] + rng.normal(size=(n_hot, 2)) * width[which, None],
                     rng.uniform(-6, 6, (k - n_hot, 2))])
    dens = sum(np.exp(-((pts - hot[h]) ** 2).sum(1) / (2 * width[h] ** 2)) for h in range(4))
    counts = rng.poisson(1 + 40 * dens) + 1
    latlon = np.column_stack([48.8566 + pts[:, 1] * km_lat, 2.3522 + pts[:, 0] * km_lon])
    return {"places": {"latlon": np.round(latlon, 6).tolist()},
            "privacy": [{"notion": "metric", "epsilon": eps, "distance": "haversine"}],
            "objective": {"kind": "expected_loss", "loss": "haversine", "prior": (counts / counts.sum()).tolist()}}


def _outputs_facts(r, t: float) -> dict:
    """What a run of the outputs route or on a map reports: time, status, value, bound, effort."""
    out = {"t": t, "status": r.status, "message": r.message}
    if r.ok:
        out.update(objective=r.objective, bound=r.bound, rel_gap=(r.gap / abs(r.objective)) if r.gap is not None else None,
                   verified=bool(r.certificate.verified), method=r.stats.get("method"),
                   iterations=r.stats.get("iterations"), outputs_used=r.stats.get("outputs_final"),
                   rounds=len(r.stats.get("rounds", [])), pairs_active=r.stats.get("pairs_active"),
                   block_size=r.stats.get("block_size"))
    return out


def run_map(k: int, time_limit: float | None = None, method: str = "auto", gap: float | None = None) -> dict:
    import mechopt

    t0 = time.perf_counter()
    r = mechopt.solve(map_doc(k), quiet=True, time_limit=time_limit, method=method, gap=gap)
    return _outputs_facts(r, time.perf_counter() - t0)


def run_mechopt(n: int, distance: str, time_limit: float | None = None, spanner: float | None = None,
                method: str = "auto", gap: float | None = None) -> dict:
    import mechopt

    t0 = time.perf_counter()
    r = mechopt.solve(geo_doc(n, distance, spanner=spanner), quiet=True, time_limit=time_limit, method=method,
                      gap=gap)
    t = time.perf_counter() - t0
    out = {"t": t, "status": r.status, "message": r.message}
    if r.ok:
        out.update(objective=r.objective, bound=r.bound, gap=r.gap,
                   rel_gap=(r.gap / abs(r.objective)) if r.gap is not None else None,
                   verified=bool(r.certificate.verified), master=r.stats.get("master"),
                   method=r.stats.get("method"), linalg=r.stats.get("linalg"),
                   iterations=r.stats.get("iterations"),
                   outputs_used=r.stats.get("outputs_used", r.stats.get("outputs_final")),
                   rounds=len(r.stats["rounds"]) if isinstance(r.stats.get("rounds"), list) else r.stats.get("rounds"),
                   block_size=r.stats.get("block_size"),
                   pairs_active=r.stats.get("pairs_active"), repair_t=r.stats.get("repair", {}).get("t"),
                   timings=dict(r.timings), ipm_s=r.stats.get("ipm_s"), factor_s=r.stats.get("factor_s"),
                   snap_bound_s=r.stats.get("snap_bound_s"), build_s=r.stats.get("build_s"))
    return out


def run_streets(nodes: int, time_limit: float) -> dict:
    """``mechopt solve`` on ``synthetic_city(nodes, seed=7)`` (ε = 4 per km), written as
    ``python -m benchmarks.street_city`` writes it, loaded from its files and saved as a
    mechanism file: the time is the command's work, files included."""
    import tempfile

    import mechopt
    from mechopt._street import write_city

    with tempfile.TemporaryDirectory() as tmp:
        path = write_city(tmp, nodes, 7, epsilon=4.0)
        t0 = time.perf_counter()
        r = mechopt.solve(str(path), quiet=True, time_limit=time_limit)
        if r.ok:
            r.mechanism.save(f"{tmp}/m.json")
        t = time.perf_counter() - t0
    return _outputs_facts(r, t)


def run_libqif(n: int) -> dict:
    import qif

    from mechopt.geo import Places

    pl = Places.grid(n, n)
    k = pl.k
    xy = pl.coords
    pi = clustered_prior(xy)

    def d_priv(a, b):
        return EPS * float(abs(xy[a, 0] - xy[b, 0]) + abs(xy[a, 1] - xy[b, 1]))

    def loss(a, b):
        return float(((xy[a] - xy[b]) ** 2).sum())

    def chain(a, b):  # libqif's hook: True = "chainable", i.e. implied, no constraint; only neighbours need one
        return abs(xy[a, 0] - xy[b, 0]) + abs(xy[a, 1] - xy[b, 1]) != 1

    t0 = time.perf_counter()
    C = qif.mechanism.d_privacy.min_loss_given_d(pi, k, d_priv, loss, "all", chain)
    t = time.perf_counter() - t0
    L = pl.loss("squared")
    return {"t": t, "objective": float(np.sum(pi[:, None] * np.asarray(C) * L)), "status": "ok"}


def run_baselines(n: int) -> dict:
    """Exponential mechanism and discretised planar Laplace, each with Bayesian remapping, vs the optimum."""
    from mechopt import MetricLDP, verify
    from mechopt.geo import Places, bayesian_remap, exact_baseline, exponential_mechanism, planar_laplace

    import mechopt

    pl = Places.grid(n, n)
    D = pl.distances("euclidean")
    prior = clustered_prior(pl.coords)
    L = pl.loss("squared")
    notion = MetricLDP(EPS, distance=D.tolist()).bind(list(pl.labels))
    t0 = time.perf_counter()
    opt = mechopt.solve(geo_doc(n, "euclidean"), quiet=True)
    t_opt = time.perf_counter() - t0
    out = {"t": t_opt, "optimum": opt.objective, "bound": opt.bound}
    for name, Q in (("exponential", exponential_mechanism(D, EPS)), ("planar_laplace", planar_laplace(pl, EPS))):
        Qx, t_mix = exact_baseline(Q, [notion])
        Qr = bayesian_remap(Qx, prior, L)
        assert verify(Qr, [notion]).verified
        out[name] = float(np.sum(prior[:, None] * Qx * L))
        out[name + "+remap"] = float(np.sum(prior[:, None] * Qr * L))
        out[name + "_mix_t"] = t_mix
    return out


CASES = {
    "grid10": "10×10 grid, Manhattan (grid edges), clustered prior: mechopt vs libqif",
    "grid12": "12×12 grid, Manhattan (grid edges), clustered prior: mechopt vs libqif",
    "euclid10": "10×10 grid, Euclidean distances, clustered prior",
    "grid20": "20×20 grid, Manhattan, clustered prior",
    "euclid20": "20×20 grid (400 places), Euclidean distances, clustered prior, time limit 600 s",
    "euclid20gap": "the same to a proven relative gap of 1e-6 (`mechopt solve --gap 1e-6`)",
    "grid32": "32×32 grid (1 024 places), Manhattan, clustered prior, time limit 600 s",
    "euclid32": "32×32 grid (1 024 places), Euclidean distances, to a proven relative gap of 1e-4, time limit 600 s "
                "(not in the default run)",
    "spanner20": "20×20 grid, Euclidean: spanner mode (δ = 1.1, 1.5) vs exact",
    "baselines": "10×10 grid, Euclidean: exponential mechanism and planar Laplace (+ remap) vs optimum",
    "map150": "150 places from a map (latitude/longitude, haversine, check-in prior), ε = 2 per km",
    "map1000": "1 000 places from a map, to a proven relative gap of 1e-4, time limit 600 s (not in the default run)",
    "streets": "synthetic street networks (benchmarks.street_city, seed 7, ε = 4 per km), shortest-path metric, "
               "nodes in --streets (default 1000,2000), time limit 600 s; not in the default run (~14 min)",
    "scaling": "n×n Manhattan grids, clustered prior, n in --sizes (default 16,24,32,48,64): time, peak memory, "
               "proven gap at a time limit of 600 s (n <= 48) or 1 800 s (not in the default run: ~50 min)",
}
#: the cases of the acceptance's largest sizes, run only when named (each takes 10-30 minutes)
NOT_DEFAULT = ("scaling", "streets", "euclid32", "map1000")


def _fmt(v, spec=".4g"):
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def _phases(m: dict) -> str:
    """Where the time of an IPM run went (the time limit's checks: ``; ipm 1 650 s (factorisations ...``)."""
    if m.get("ipm_s") is None:
        return ""
    t = m.get("timings", {})
    return (f"; model {_fmt(m.get('build_s'), '.1f')} s, IPM {_fmt(m.get('ipm_s'), '.1f')} s "
            f"(factorisations {_fmt(m.get('factor_s'), '.1f')} s), snap and bound {_fmt(m.get('snap_bound_s'), '.1f')} s, "
            f"repair and verification {_fmt(t.get('repair_verify'), '.1f')} s, solve total {_fmt(t.get('total'), '.1f')} s")


def _how(m: dict) -> str:
    """Which method ran and its effort, for the notes column."""
    if m.get("method") == "ipm":
        return f"ipm ({m.get('linalg')}), {m.get('iterations')} iterations, {m.get('pairs_active')} pairs"
    if m.get("method") == "outputs":
        return (f"outputs: the IPM on {m.get('outputs_used')} outputs at the end, {m.get('rounds')} rounds, "
                f"{m.get('iterations')} iterations, {m.get('pairs_active')} pairs")
    if m.get("method") == "lazy":
        return (f"lazy pairs per output: {m.get('rounds')} rounds, {m.get('iterations')} IPM iterations, "
                f"{m.get('outputs_used')} outputs at the end, {m.get('pairs_active')} pair rows in all")
    if m.get("method") == "relax":
        return f"relax: the IPM on {m.get('pairs_active')} of the pairs (block size {m.get('block_size')})"
    return (f"{m.get('method')} (master {m.get('master')}), {m.get('iterations')} rounds, "
            f"{m.get('outputs_used') or ''} outputs, {m.get('pairs_active')} pairs")


def main(argv=None) -> list[str]:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_geo", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=",".join(c for c in CASES if c not in NOT_DEFAULT))
    ap.add_argument("--sizes", default="16,24,32,48,64", help="grid sizes of the scaling case")
    ap.add_argument("--streets", default="1000,2000", help="intersections of the streets case")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--methods", default="auto", help="labeled LP methods to run for grid10/euclid10/grid20/euclid20/grid32 "
                    "(auto, ipm, decompose), each in the same run")
    ap.add_argument("--md", metavar="OUT.md", help="write the table here (default: benchmarks/results/geo-<date>.md)")
    args = ap.parse_args(argv)
    started, load_start = time.strftime("%Y-%m-%d %H:%M:%S"), os.getloadavg()
    import mechopt

    # warm the imports in the parent (every forked measurement starts warm): a free-output
    # solve, a 5x5 geo solve (25 places: the IPM route, Dijkstra, symmetry) and, when
    # installed, libqif
    mechopt.solve({"k": 2, "privacy": [{"notion": "ldp", "epsilon": 1.0}]}, quiet=True)
    run_mechopt(5, "manhattan")
    try:
        run_libqif(3)
    except ImportError:  # libqif is an optional extra
        pass
    lines = ["| case | mechopt s | status | objective | proven rel. gap | baseline | baseline s | ratio | "
             "peak RSS MB | notes |", "|---|---:|---|---:|---:|---|---:|---:|---:|---|"]

    def emit(line: str) -> None:
        lines.append(line)
        print(line, flush=True)

    print("\n".join(lines), flush=True)
    for case in args.cases.split(","):
        if case in ("grid10", "grid12"):
            n = int(case[4:])
            b = isolated(run_libqif, n, timeout=args.timeout)
            for method in args.methods.split(","):
                m = isolated(run_mechopt, n, "manhattan", None, None, method, timeout=args.timeout)
                same = abs(m.get("objective", math.nan) - b.get("objective", math.nan)) / abs(b.get("objective", 1.0))
                emit(f"| {case} [{method}] | {_fmt(m.get('t'), '.2f')} | {m.get('status', m.get('error', m.get('timeout')))} | "
                     f"{_fmt(m.get('objective'), '.10g')} | {_fmt(m.get('rel_gap'), '.1e')} | libqif | "
                     f"{_fmt(b.get('t'), '.2f')} | {_fmt(b.get('t', math.nan) / m.get('t', math.nan), '.1f')}× | "
                     f"{_fmt(m.get('peak_mb'), '.0f')} / {_fmt(b.get('peak_mb'), '.0f')} | "
                     f"libqif objective {_fmt(b.get('objective'), '.10g')}, relative difference {_fmt(same, '.1e')}; "
                     f"{_how(m)} |")
        elif case in ("euclid10", "grid20", "euclid20", "euclid20gap", "grid32", "euclid32"):
            n, dist, tl = {"euclid10": (10, "euclidean", None), "grid20": (20, "manhattan", None),
                           "euclid20": (20, "euclidean", 600.0), "euclid20gap": (20, "euclidean", 600.0),
                           "grid32": (32, "manhattan", 600.0), "euclid32": (32, "euclidean", 600.0)}[case]
            gap = {"euclid20gap": 1e-6, "euclid32": 1e-4}.get(case)
            for method in args.methods.split(","):
                m = isolated(run_mechopt, n, dist, tl, None, method, gap, timeout=args.timeout)
                emit(f"| {case} [{method}] | {_fmt(m.get('t'), '.2f')} | "
                     f"{m.get('status', m.get('error', m.get('timeout')))} | "
                     f"{_fmt(m.get('objective'), '.10g')} | {_fmt(m.get('rel_gap'), '.1e')} | — | — | — | "
                     f"{_fmt(m.get('peak_mb'), '.0f')} | {_how(m)}; {m.get('message', '') if m.get('status') != 'optimal' else ''} |")
        elif case == "spanner20":
            ex = isolated(run_mechopt, 20, "euclidean", 600.0, timeout=args.timeout)
            emit(f"| spanner20 exact | {_fmt(ex.get('t'), '.2f')} | {ex.get('status', ex.get('timeout'))} | "
                 f"{_fmt(ex.get('objective'), '.10g')} | {_fmt(ex.get('rel_gap'), '.1e')} | — | — | — | "
                 f"{_fmt(ex.get('peak_mb'), '.0f')} | {ex.get('message', '')} |")
            for delta in (1.1, 1.5):
                s = isolated(run_mechopt, 20, "euclidean", 600.0, delta, timeout=args.timeout)
                # the exact optimum lies in [bound, objective] of the exact run (its channel is
                # exactly private, its bound proven): the spanner's extra loss lies in between
                lo = s.get("objective", math.nan) / ex.get("objective", math.nan) - 1 if ex.get("objective") else None
                hi = s.get("objective", math.nan) / ex.get("bound", math.nan) - 1 if ex.get("bound") else None
                emit(f"| spanner20 δ={delta} | {_fmt(s.get('t'), '.2f')} | {s.get('status', s.get('timeout'))} | "
                     f"{_fmt(s.get('objective'), '.10g')} | — | exact | {_fmt(ex.get('t'), '.2f')} | "
                     f"{_fmt(ex.get('t', math.nan) / s.get('t', math.nan), '.1f')}× | {_fmt(s.get('peak_mb'), '.0f')} | "
                     f"utility loss vs the exact optimum: {_fmt(100 * lo if lo is not None else None, '.1f')} % to "
                     f"{_fmt(100 * hi if hi is not None else None, '.1f')} % (the exact run's channel and bound) |")
        elif case == "scaling":
            for n in (int(v) for v in args.sizes.split(",")):
                tl = 600.0 if n <= 48 else 1800.0
                m = isolated(run_mechopt, n, "manhattan", tl, None, "auto", timeout=tl + 1800)
                emit(f"| scaling {n}×{n} ({n * n} places, limit {tl:.0f} s) | {_fmt(m.get('t'), '.2f')} | "
                     f"{m.get('status', m.get('error', m.get('timeout')))} | {_fmt(m.get('objective'), '.10g')} | "
                     f"{_fmt(m.get('rel_gap'), '.1e')} | — | — | — | {_fmt(m.get('peak_mb'), '.0f')} | "
                     f"bound {_fmt(m.get('bound'), '.10g')}; {_how(m)}{_phases(m)} |")
        elif case == "streets":
            for nodes in (int(v) for v in args.streets.split(",")):
                m = isolated(run_streets, nodes, 600.0, timeout=1800.0)
                emit(f"| streets {nodes} (limit 600 s) | {_fmt(m.get('t'), '.2f')} | "
                     f"{m.get('status', m.get('error', m.get('timeout')))} | {_fmt(m.get('objective'), '.10g')} | "
                     f"{_fmt(m.get('rel_gap'), '.1e')} | — | — | — | {_fmt(m.get('peak_mb'), '.0f')} | "
                     f"bound {_fmt(m.get('bound'), '.10g')}; {_how(m)} |")
        elif case in ("map150", "map1000"):
            k, tl, gap = (150, None, None) if case == "map150" else (1000, 600.0, 1e-4)
            for method in args.methods.split(","):
                m = isolated(run_map, k, tl, method, gap, timeout=args.timeout)
                emit(f"| {case} [{method}] | {_fmt(m.get('t'), '.2f')} | "
                     f"{m.get('status', m.get('error', m.get('timeout')))} | "
                     f"{_fmt(m.get('objective'), '.10g')} | {_fmt(m.get('rel_gap'), '.1e')} | — | — | — | "
                     f"{_fmt(m.get('peak_mb'), '.0f')} | {_how(m)}; {m.get('message', '') if m.get('status') != 'optimal' else ''} |")
        elif case == "baselines":
            r = isolated(run_baselines, 10, timeout=args.timeout)
            opt = r.get("optimum", math.nan)
            notes = "; ".join(f"{key} {_fmt(r.get(key), '.5g')} ({_fmt(r.get(key, math.nan) / opt, '.3f')}× opt)"
                              for key in ("exponential", "exponential+remap", "planar_laplace", "planar_laplace+remap"))
            emit(f"| baselines | {_fmt(r.get('t'), '.2f')} | — | {_fmt(opt, '.10g')} | — | — | — | — | "
                 f"{_fmt(r.get('peak_mb'), '.0f')} | {notes} |")
        else:
            raise SystemExit(f"unknown case {case!r}; choose from {list(CASES)}")
    default = args.cases == ",".join(c for c in CASES if c not in NOT_DEFAULT)
    # a run of chosen cases is named after them: it must not replace the day's full table
    name = "geo" if default else "geo-" + args.cases.replace(",", "-")
    if "scaling" in args.cases.split(",") and args.sizes != ap.get_default("sizes"):
        name += "-" + args.sizes.replace(",", "-")  # e.g. geo-scaling-48-64-<date>.md
    if "streets" in args.cases.split(",") and args.streets != ap.get_default("streets"):
        name += "-" + args.streets.replace(",", "-")
    write_results("bench_geo", name, "\n".join(lines), {"cases": args.cases, "methods": args.methods, "table": lines},
                  args.md, None, started, load_start)
    return lines


if __name__ == "__main__":
    main()
