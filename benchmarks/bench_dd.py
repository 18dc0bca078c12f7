"""Exact double description against the floating-point one it replaced (issue 14, item 4).

For cones no structured enumerator covers — a BP-LIP box alone, with a metric, LIP with
LDP and a tiny prior entry, BP-LIP with several priors — this times, at k = 4..8:

* **new**: mechopt's rays (``enumerate_rays``: the box BP-LIP structure, or the exact double
  description of the inner and outer rational cones with pplpy), and the whole free-output
  solve (mutual information);
* **old** (the baseline, measured in the same run): the floating-point pycddlib path of
  mechopt before this change, kept here verbatim (``old_cdd_rays``: several row and column
  scalings and row orders, the union of what each returns), with the same ray LP.

Columns: time of each ray enumeration, ray counts (old; new inner / outer), the ray LP's
optimum over each set of rays (the old one is lower when it lost rays), time of the new
full solve, and the peak memory of each child process. Timings on a shared 2-core machine
are pessimistic.

    python -m benchmarks.bench_dd [--sizes 4 5 6 7 8] [--timeout 120] [--cases box,box_metric]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from benchmarks.run import isolated

SEED = 20240601



# -- the old path, verbatim from mechopt before issue 14 item 4 (imports adapted) -----------

from mechopt._errors import InputError, SolverError  # noqa: E402
from mechopt._notions import Notion  # noqa: E402
from mechopt.solvers.labeled._structure import column_system  # noqa: E402


def old_cdd_rays(A: np.ndarray, k: int) -> np.ndarray:
    """Extreme rays of ``{q >= 0 : A q <= 0}`` by double description (pycddlib).

    pycddlib runs in floating point here (with an internal zero tolerance near 1e-7),
    and what it returns depends on how the rows are scaled and ordered. Found by
    ``benchmarks/fuzz.py``: on a BP-LIP box x metric cone it kept 28 of 88 rays and the
    ray LP answered "infeasible"; on a BP-LIP box at eps = 4.65 it stopped with
    "numerical inconsistency"; on a 6-input metric cone at eps = 4.87 it returns 10 to
    48 rays depending on the row order. So cdd runs on the rows as given and scaled to
    max / min |entry| = 1, with its default (lexicographic) and max-index row orders,
    and for k <= 8 also on column scalings ``q = D r`` (geometric mean, and 8 seeded
    random ones for k <= 6, 3 above), and the union of the returned vectors that satisfy every row (relative error
    <= 1e-9) is kept. Every returned vector lies in the cone and extra non-extreme ones
    do not change the ray LP's optimum, but completeness is not proven: exact
    arithmetic (pycddlib built with GMP) would be. If every run fails, SolverError.
    """
    import cdd

    A = np.asarray(A, dtype=float)
    if len(A):
        A = A[np.abs(A).max(axis=1) > 0]  # an all-zero row (LIP at eps = 0, P = e_x) says nothing
    variants = [A]
    if len(A):
        absA = np.abs(A)
        small = np.where(absA > 0, absA, np.inf).min(axis=1, keepdims=True)
        variants += [A / absA.max(axis=1, keepdims=True), A / small]
    runs = [(M, order, None) for M in variants for order in (None, cdd.RowOrderType.MAX_INDEX)][:5]
    if len(A) and k <= 8:
        # column scalings q = D r (the cone {A D r <= 0} has rays D^-1 q): found by
        # benchmarks/fuzz.py, a BP-LIP prior entry of 5e-9 next to an E-LDP made every row
        # scaling lose rays (8 of them, the ray LP infeasible); a random D found 20
        absA = np.abs(A)
        big = absA.max(axis=0)
        small = np.where(absA > 0, absA, np.inf).min(axis=0)
        small = np.where(np.isfinite(small), small, big)
        geo = np.ones(k)
        geo[big > 0] = 1.0 / np.sqrt(big[big > 0] * small[big > 0])  # geometric-mean column scaling
        rng = np.random.default_rng(20240601)
        n_random = 8 if k <= 6 else 3
        for d in [geo] + [np.exp(rng.uniform(-2.0, 2.0, k)) for _ in range(n_random)]:
            Ad = A * d[None, :]
            Ad = Ad / np.abs(Ad).max(axis=1, keepdims=True)
            runs += [(Ad, None, d), (Ad, cdd.RowOrderType.MAX_INDEX, d)]
    found, errors = [], []
    for M, order, d in runs:
        rows = [[0.0] + list(-row) for row in M] + [[0.0] + list(e) for e in np.eye(k)]
        try:
            mat = cdd.matrix_from_array(rows, rep_type=cdd.RepType.INEQUALITY)
            gen = np.array(cdd.copy_generators(cdd.polyhedron_from_matrix(mat, row_order=order)).array, dtype=float)
        except RuntimeError as err:  # cdd's "numerical inconsistency"
            errors.append(str(err).strip())
            continue
        if gen.size == 0:
            continue
        rays = gen[gen[:, 0] == 0, 1:]
        rays = rays[rays.max(axis=1) > 0] if len(rays) else rays
        if not len(rays):
            continue
        if d is not None:
            rays = rays * d[None, :]
        rays = rays / rays.max(axis=1, keepdims=True)
        rays = np.where(rays < 0, np.where(rays > -1e-13, 0.0, rays), rays)
        ok = rays.min(axis=1) >= 0
        if len(A):
            lhs = rays @ A.T
            size = rays @ np.abs(A).T
            ok &= np.all(lhs <= 1e-9 * size, axis=1)
        found.append(rays[ok])
    found = [f for f in found if len(f)]
    if not found:
        if errors:
            raise SolverError(f"double description failed: {errors[0]}")
        return np.zeros((k, 0))
    rays = np.vstack(found)
    _, first = np.unique(np.round(rays, 12), axis=0, return_index=True)
    return rays[np.sort(first)].T


def old_explicit_rows(notions: list[Notion], k: int) -> np.ndarray:
    """Dense H-representation ``A q <= 0`` (groups expanded to pairs)."""
    sysm = column_system(notions, k, reduce=True)
    rows = [sysm.A.toarray()] if sysm.A.shape[0] else []
    for upper, lower, eps in sysm.groups:
        e = math.exp(eps)
        for a in upper:
            for b in lower:
                if a != b:
                    r = np.zeros(k)
                    r[a] += 1.0
                    r[b] -= e
                    rows.append(r[None, :])
    if any(np.any(s.b) for s in [sysm]):
        raise InputError("privacy", "(eps, delta)-LIP with delta > 0 is not a cone: use labeled outputs")
    return np.vstack(rows) if rows else np.zeros((0, k))


# -- problems ----------------------------------------------------------------------------


def _box(k: int, rng: np.random.Generator, width: float = 0.1) -> tuple[list[float], list[float]]:
    c = rng.dirichlet(np.ones(k))
    lo = np.round(np.clip(c - rng.uniform(0, width, k), 0, 1), 3)
    hi = np.round(np.clip(c + rng.uniform(0, width, k), 0, 1), 3)
    return lo.tolist(), hi.tolist()


def privacy(case: str, k: int) -> list[dict]:
    rng = np.random.default_rng(SEED + k)
    if case == "box":
        lo, hi = _box(k, rng)
        return [{"notion": "bp_lip", "epsilon": 1.0, "lower": lo, "upper": hi}]
    if case == "box_metric":
        lo, hi = _box(k, rng)
        edges = [[i, i + 1, float(rng.uniform(0.5, 2.0))] for i in range(k - 1)]
        return [{"notion": "bp_lip", "epsilon": 1.5, "lower": lo, "upper": hi},
                {"notion": "metric", "epsilon": 1.0, "edges": edges}]
    if case == "lip_ldp_tiny":
        P = rng.dirichlet(np.ones(k))
        P[0] = 5e-9
        P = P / P.sum()
        return [{"notion": "lip", "epsilon": 0.8, "prior": P.tolist()}, {"notion": "ldp", "epsilon": 2.0}]
    if case == "bp_lip_3priors":
        return [{"notion": "bp_lip", "epsilon": 1.0, "priors": rng.dirichlet(np.full(k, 2.0), size=3).tolist()}]
    if case == "bp_lip_eps1e-9":
        return [{"notion": "bp_lip", "epsilon": 1e-9, "priors": rng.dirichlet(np.full(k, 2.0), size=2).tolist()}]
    raise ValueError(case)


CASES = ("box", "box_metric", "lip_ldp_tiny", "bp_lip_3priors", "bp_lip_eps1e-9")


def _problem(case: str, k: int):
    from mechopt import load_problem

    return load_problem({"k": k, "outputs": "free", "privacy": privacy(case, k),
                         "objective": {"kind": "mutual_information"}})


def _ray_lp_value(problem, V: np.ndarray) -> float | None:
    from mechopt.objectives import column_utility
    from mechopt.solvers.free._raylp import solve_ray_lp

    if V.shape[1] == 0:
        return None
    V = V / V.max(axis=0, keepdims=True)
    sol = solve_ray_lp(V, column_utility(problem.objective, V))
    return sol.value if sol.status == "optimal" else None


def run_old(case: str, k: int) -> dict:
    p = _problem(case, k)
    t0 = time.perf_counter()
    V = old_cdd_rays(old_explicit_rows(list(p.notions), k), k)
    t = time.perf_counter() - t0
    return {"t": t, "rays": int(V.shape[1]), "value": _ray_lp_value(p, V)}


def run_new(case: str, k: int) -> dict:
    from mechopt import solve
    from mechopt.solvers.free._rays import enumerate_rays

    p = _problem(case, k)
    t0 = time.perf_counter()
    V, _, V_bound = enumerate_rays(list(p.notions), k)
    t = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = solve(p, quiet=True)
    t_solve = time.perf_counter() - t0
    return {"t": t, "rays": int(V.shape[1]), "bound_rays": int(V_bound.shape[1]), "value": _ray_lp_value(p, V),
            "t_solve": t_solve, "status": r.status, "gap": r.gap, "verified": bool(r.certificate.verified)}


# -- runner-compatible entries (benchmarks/run.py: case "dd_box") ----------------------------


def run_new_box(k: int) -> dict:
    out = run_new("box", k)
    return {"t": out["t_solve"], "rows": k, "variables": out["rays"], "objective": out["value"], "bound": None,
            "note": f"{out['status']}, rays {out['t']:.3f} s"}


def run_old_box(k: int) -> dict:
    out = run_old("box", k)
    return {"t": out["t"], "rows": k, "variables": out["rays"], "objective": out["value"]}


# -- table ---------------------------------------------------------------------------------


def _fmt(m: dict, key: str = "t") -> str:
    if "timeout" in m:
        return f"> {m['t']:.0f} (timeout)"
    if "error" in m:
        return "error: " + str(m["error"])[:60]
    return f"{m[key]:.3f}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="Output: a Markdown table on standard output (nothing is written to disk).")
    ap.add_argument("--sizes", type=int, nargs="+", default=[4, 5, 6, 7, 8])
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per measurement")
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args(argv)
    # warm the imports (pplpy, HiGHS) in the parent: every forked measurement starts warm
    run_new("box_metric", 3)
    print("| case | k | old cdd s | new rays s | ratio | rays old | rays new in / out | LP old | LP new "
          "| new solve s | status (gap) | peak MB old / new |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for case in args.cases.split(","):
        old_dead = False
        for k in args.sizes:
            new = isolated(run_new, case, k, timeout=args.timeout)
            old = {"timeout": "skipped", "t": args.timeout} if old_dead else isolated(run_old, case, k,
                                                                                      timeout=args.timeout)
            old_dead = old_dead or "timeout" in old
            ok_n, ok_o = "t" in new and "rays" in new, "rays" in old
            ratio = f"{old['t'] / new['t']:,.0f}×" if ok_n and ok_o and new["t"] > 0 else "—"
            lp_o = f"{old['value']:.9g}" if ok_o and old.get("value") is not None else ("lost" if ok_o else "—")
            lp_n = f"{new['value']:.9g}" if ok_n and new.get("value") is not None else "—"
            rays_n = f"{new['rays']} / {new['bound_rays']}" if ok_n else "—"
            status = f"{new['status']} ({new['gap']:.1e})" if ok_n and new.get("gap") is not None else (
                new.get("status", "—") if ok_n else "—")
            mem = f"{old.get('peak_mb', math.nan):.0f} / {new.get('peak_mb', math.nan):.0f}"
            print(f"| {case} | {k} | {_fmt(old)} | {_fmt(new)} | {ratio} | {old.get('rays', '—')} | {rays_n} "
                  f"| {lp_o} | {lp_n} | {_fmt(new, 't_solve') if ok_n else '—'} | {status} | {mem} |", flush=True)


if __name__ == "__main__":
    main()
