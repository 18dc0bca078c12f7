"""Labeled ULDP with (ε, δ)-LIP: mechopt's MILP against a brute force over every role assignment.

Issue 20, item 4. Each output column of a labeled ULDP channel is *protected* (ε-LDP
over all inputs) or *invertible* (one non-zero entry, at a non-sensitive input;
Murakami & Kawamoto, Def. 2). This script draws random labeled problems (k = 2..5,
outputs = the inputs, or the inputs and one extra label; ULDP with a random sensitive
set, (ε, δ)-LIP with δ > 0, sometimes another notion; expected loss with a random,
Hamming or squared loss) and solves each one independently:

* every assignment of roles to the outputs (protected, or invertible at one input that
  is non-sensitive for every ULDP notion) is fixed in turn, and the LP with those roles
  is written out densely from the notions' definitions (every pair of E-LDP, every row
  of LIP; nothing from mechopt's builder) and solved by ``scipy.optimize.linprog``;
* the best of them is the optimum (the brute force covers every feasible channel: each
  column of a ULDP channel has a role); its channel is cleaned (invertible columns get
  exact zeros off their input, rows renormalised) and, if it does not pass
  :func:`mechopt.verify`, mixed with the uniform distribution over its protected
  columns until it does.

A run is a *false optimum* when mechopt says ``optimal`` while its objective lies more
than the allowed gap (1e-7 of the objective's scale) above a verified brute-force
channel, or when its bound lies above one (a false bound).

Usage::

    python -m benchmarks.uldp_roles [--n 80] [--seed 0] [--pattern]

``--pattern`` draws only problems of the shape that broke (one non-sensitive input whose
loss favours several outputs, a δ much smaller than its prior).
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

#: an ULDP budget below which a protected column's rows are written out
MAX_ROLE_ASSIGNMENTS = 40_000


# -----------------------------------------------------------------------------
# random problems
# -----------------------------------------------------------------------------


def _prior(rng: np.random.Generator, k: int) -> list[float]:
    """A prior with 6-decimal entries summing to 1 (the last one takes the rest)."""
    p = np.round(rng.dirichlet(np.ones(k)) * 0.98 + 0.02 / k, 6)
    p[-1] = round(1.0 - float(p[:-1].sum()), 6)
    return [float(v) for v in p]


def random_problem(rng: np.random.Generator, *, pattern: bool = False) -> dict:
    """A labeled problem with ULDP and (ε, δ)-LIP (δ > 0), sometimes another notion.

    ``pattern``: the shape that broke the MILP's cut "an input uses at most one invertible
    output": a non-sensitive input with a large prior whose loss is small on 2–3 outputs,
    and a δ well below that prior (so each invertible column of that input is capped).
    """
    k = int(rng.integers(2, 6))
    inputs = [f"x{j}" for j in range(k)]
    extra = bool(rng.random() < 0.3)
    outputs = inputs + ["other"] if extra else list(inputs)
    m = len(outputs)
    n_sens = int(rng.integers(1, k)) if k > 1 else 1
    sens = sorted(rng.choice(k, size=n_sens, replace=False).tolist())
    lip_prior = _prior(rng, k)
    kind = ["random", "hamming", "squared"][int(rng.integers(0, 3))]
    if kind == "random":
        L = rng.random((k, m))
    elif kind == "hamming":
        L = np.ones((k, m))
        L[np.arange(k), np.arange(k)] = 0.0
    else:
        pos = np.concatenate([np.arange(k), [k + 0.5]])[:m]
        L = (np.arange(k)[:, None] - pos[None, :]) ** 2
    delta = float(round(rng.uniform(0.005, 0.3), 4))
    if pattern:
        free = [x for x in range(k) if x not in sens]
        x = int(rng.choice(free))
        lip_prior = np.array(lip_prior)
        lip_prior[x] += 1.0
        lip_prior = list(np.round(lip_prior / lip_prior.sum(), 6))
        lip_prior[-1] = round(1.0 - sum(lip_prior[:-1]), 6)
        L = rng.random((k, m)) * 0.2 + 0.8
        cheap = rng.choice(m, size=min(m, int(rng.integers(2, 4))), replace=False)
        L[x, cheap] = rng.random(len(cheap)) * 0.1
        delta = float(round(lip_prior[x] * rng.uniform(0.1, 0.45), 4))
    privacy = [
        {"notion": "uldp", "epsilon": float(round(rng.uniform(0.2, 3.0), 3)), "sensitive": [inputs[s] for s in sens]},
        {"notion": "lip", "epsilon": float(round(rng.uniform(0.2, 3.0), 3)), "delta": max(delta, 1e-4),
         "prior": [float(v) for v in lip_prior]},
    ]
    r = rng.random()
    eps2 = float(round(rng.uniform(0.3, 3.0), 3))
    if r < 0.12:
        privacy.append({"notion": "high_low", "epsilon": eps2,
                        "sensitive": [inputs[s] for s in sens[: max(1, len(sens) // 2)]]})
    elif r < 0.24 and k >= 3:
        cut = int(rng.integers(1, k))
        perm = rng.permutation(k)
        privacy.append({"notion": "block", "epsilon": eps2,
                        "blocks": [[inputs[j] for j in perm[:cut]], [inputs[j] for j in perm[cut:]]]})
    elif r < 0.36:
        privacy.append({"notion": "lip", "epsilon": eps2, "delta": float(round(rng.uniform(0.01, 0.3), 4)),
                        "prior": _prior(rng, k)})
    elif r < 0.48:
        E = np.where(rng.random((k, k)) < 0.5, np.round(rng.uniform(0.3, 4.0, (k, k)), 3), math.inf)
        np.fill_diagonal(E, 0.0)
        privacy.append({"notion": "eldp", "matrix": [[float(v) for v in row] for row in E]})
    elif r < 0.55:
        others = [x for x in range(k) if x not in sens]
        extra_s = sens + ([int(rng.choice(others))] if others and rng.random() < 0.5 else [])
        privacy.append({"notion": "uldp", "epsilon": eps2, "sensitive": [inputs[s] for s in sorted(set(extra_s))]})
    prior = _prior(rng, k)
    return {"inputs": inputs, "outputs": outputs, "privacy": privacy,
            "objective": {"kind": "expected_loss", "loss": L.tolist(), "prior": prior}}


# -----------------------------------------------------------------------------
# the brute force (dense rows written from the definitions)
# -----------------------------------------------------------------------------


def _column_rows(problem: dict) -> tuple[list[tuple[np.ndarray, float]], list[tuple[np.ndarray, float]], set[int]]:
    """Rows ``a·q <= b`` on one column: (every column's, protected columns' extra, sensitive inputs).

    E-LDP-type notions give ``q[x] - e^E q[x'] <= 0`` for every finite ``E[x][x']``
    (Acharya et al., Def. 2 and 3-4); LIP gives ``q[x] - e^ε P·q <= e^ε δ`` and
    ``P·q - e^ε q[x] <= δ`` (Jiang et al., eq. 4); ULDP's protected columns ``q[x] <= e^ε q[x']``
    for all pairs (Murakami & Kawamoto, Def. 2).
    """
    inputs = problem["inputs"]
    k = len(inputs)
    idx = {s: i for i, s in enumerate(inputs)}
    every: list[tuple[np.ndarray, float]] = []
    prot: list[tuple[np.ndarray, float]] = []
    sens: set[int] = set()

    def pairs(E, into):
        for x in range(k):
            for xp in range(k):
                if x != xp and math.isfinite(E[x][xp]):
                    a = np.zeros(k)
                    a[x] += 1.0
                    a[xp] -= math.exp(E[x][xp])
                    into.append((a, 0.0))

    for n in problem["privacy"]:
        kind = n["notion"]
        if kind == "uldp":
            pairs([[0.0 if x == xp else n["epsilon"] for xp in range(k)] for x in range(k)], prot)
            sens |= {idx[s] for s in n["sensitive"]}
        elif kind == "lip":
            P = np.asarray(n["prior"], dtype=float)
            e, d = math.exp(n["epsilon"]), float(n.get("delta", 0.0))
            for x in range(k):
                a = -e * P.copy()
                a[x] += 1.0
                every.append((a, e * d))
                a = P.copy()
                a[x] -= e
                every.append((a, d))
        elif kind == "high_low":
            A = {idx[s] for s in n["sensitive"]}
            pairs([[0.0 if x == xp else (n["epsilon"] if x in A else math.inf) for xp in range(k)]
                   for x in range(k)], every)
        elif kind == "block":
            blk = {idx[s]: b for b, block in enumerate(n["blocks"]) for s in block}
            pairs([[0.0 if x == xp else (n["epsilon"] if blk[x] == blk[xp] else math.inf) for xp in range(k)]
                   for x in range(k)], every)
        elif kind == "eldp":
            pairs(n["matrix"], every)
        elif kind == "ldp":
            pairs([[0.0 if x == xp else n["epsilon"] for xp in range(k)] for x in range(k)], every)
        else:
            raise ValueError(f"no brute-force rows for notion {kind!r}")
    return every, prot, sens


@dataclass
class BruteForce:
    value: float  # the best LP value over all role assignments
    roles: tuple  # per output: None (protected) or the input it is invertible at
    Q: np.ndarray  # that LP's channel
    assignments: int
    verified_value: float | None = None  # the objective of the verified channel (None: none verified)
    verified_Q: np.ndarray | None = None


def roles_lp(problem: dict, roles) -> tuple[float, np.ndarray] | None:
    """The LP with the given roles fixed: ``(value, Q)`` or None when infeasible."""
    k, m = len(problem["inputs"]), len(problem["outputs"])
    every, prot, _ = _column_rows(problem)
    obj = problem["objective"]
    cost = (np.asarray(obj["prior"])[:, None] * np.asarray(obj["loss"], dtype=float)).ravel()
    A, b = [], []
    bounds = [(0.0, None)] * (k * m)
    for y, owner in enumerate(roles):
        rows = every + (prot if owner is None else [])
        for a, rhs in rows:
            v = np.zeros(k * m)
            v[np.arange(k) * m + y] = a
            A.append(v)
            b.append(rhs)
        if owner is not None:
            for x in range(k):
                if x != owner:
                    bounds[x * m + y] = (0.0, 0.0)
    A_eq = np.kron(np.eye(k), np.ones((1, m)))
    res = linprog(cost, A_ub=np.array(A) if A else None, b_ub=np.array(b) if b else None, A_eq=A_eq,
                  b_eq=np.ones(k), bounds=bounds, method="highs")
    if res.status != 0:
        return None
    return float(res.fun), res.x.reshape(k, m)


def _notions(problem: dict):
    from mechopt import load_problem

    return list(load_problem(problem).notions)


def verified_channel(problem: dict, Q: np.ndarray, roles) -> np.ndarray | None:
    """``Q`` cleaned (and mixed toward uniform on its protected columns if needed) to pass ``verify``."""
    from mechopt import verify

    notions = _notions(problem)
    Q = np.clip(np.array(Q, dtype=float), 0.0, None)
    for y, owner in enumerate(roles):
        if owner is not None:
            Q[np.arange(len(Q)) != owner, y] = 0.0
    Q = Q / Q.sum(axis=1, keepdims=True)
    prot = np.array([r is None for r in roles])
    if not prot.any():
        return Q if verify(Q, notions).verified else None
    U = np.where(prot, 1.0 / prot.sum(), 0.0)[None, :]
    for t in (0.0, 1e-12, 1e-10, 1e-8, 1e-6, 1e-4):
        cand = Q if t == 0 else (1 - t) * Q + t * U
        if verify(cand, notions).verified:
            return cand
    return None


def brute_force(problem: dict) -> BruteForce:
    """The best channel over every role assignment (each LP written densely, solved by HiGHS)."""
    k, m = len(problem["inputs"]), len(problem["outputs"])
    _, _, sens = _column_rows(problem)
    owners = [x for x in range(k) if x not in sens]
    choices = [None] + owners
    n = len(choices) ** m
    if n > MAX_ROLE_ASSIGNMENTS:
        raise ValueError(f"{n} role assignments: too many to enumerate")
    best = None
    for roles in itertools.product(choices, repeat=m):
        got = roles_lp(problem, roles)
        if got is not None and (best is None or got[0] < best.value):
            best = BruteForce(got[0], roles, got[1], n)
    assert best is not None, "the constant protected channel is always feasible"
    Qv = verified_channel(problem, best.Q, best.roles)
    if Qv is not None:
        obj = problem["objective"]
        cost = np.asarray(obj["prior"])[:, None] * np.asarray(obj["loss"], dtype=float)
        best.verified_value, best.verified_Q = float((cost * Qv).sum()), Qv
    return best


# -----------------------------------------------------------------------------
# the comparison
# -----------------------------------------------------------------------------


def compare(problem: dict) -> dict:
    """mechopt against the brute force on one problem."""
    import warnings

    import mechopt

    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # identifiability warnings: not what is measured here
        r = mechopt.solve(problem, quiet=True)
    t_solve = time.perf_counter() - t
    bf = brute_force(problem)
    scale = max(1.0, float(np.max(np.abs(problem["objective"]["loss"]))))
    tol = 1e-7 * scale
    out = {"status": r.status, "objective": r.objective, "bound": r.bound, "brute": bf.value,
           "brute_verified": bf.verified_value, "roles": bf.roles, "assignments": bf.assignments,
           "solve_s": t_solve, "verified": bool(r.certificate and r.certificate.verified)}
    ref = bf.verified_value if bf.verified_value is not None else bf.value
    out["false_optimum"] = bool(r.status == "optimal" and r.objective is not None and r.objective > ref + tol)
    out["false_bound"] = bool(r.bound is not None and math.isfinite(r.bound) and r.bound > ref + 1e-12 * scale)
    out["gap_to_brute"] = None if r.objective is None else r.objective - bf.value
    # the broken pattern: one input invertible in two or more outputs
    inv = [x for x in bf.roles if x is not None]
    out["multi_invertible"] = len(inv) != len(set(inv))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="Output: the counts on standard output (nothing is written to disk).")
    ap.add_argument("--n", type=int, default=80)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pattern", action="store_true", help="draw only the pattern that broke")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    rows = []
    t0 = time.perf_counter()
    for i in range(args.n):
        problem = random_problem(rng, pattern=args.pattern)
        try:
            row = compare(problem)
        except ValueError as exc:  # too many roles to enumerate
            print(f"#{i}: skipped ({exc})")
            continue
        rows.append(row)
        if args.verbose or row["false_optimum"] or row["false_bound"]:
            rel = (row["objective"] - row["brute"]) / max(abs(row["brute"]), 1e-12)
            print(f"#{i}: k={len(problem['inputs'])} m={len(problem['outputs'])} status={row['status']} "
                  f"obj={row['objective']:.6g} bound={row['bound']:.6g} brute={row['brute']:.6g} "
                  f"verified={row['brute_verified']} ({100 * rel:.3g} % worse) roles={row['roles']}"
                  + (" FALSE OPTIMUM" if row["false_optimum"] else "") + (" FALSE BOUND" if row["false_bound"] else ""))
    n = len(rows)
    fo = sum(r["false_optimum"] for r in rows)
    fb = sum(r["false_bound"] for r in rows)
    multi = sum(r["multi_invertible"] for r in rows)
    worst = max((r["gap_to_brute"] for r in rows if r["gap_to_brute"] is not None), default=0.0)
    not_opt = sum(r["status"] != "optimal" for r in rows)
    unverified = sum(not r["verified"] for r in rows)
    ts = np.array([r["solve_s"] for r in rows])
    print(f"{n} problems (seed {args.seed}{', pattern' if args.pattern else ''}): {fo} false optima, {fb} false bounds, "
          f"{not_opt} not optimal, {unverified} not verified, {multi} whose best roles reuse an input; largest objective - brute force "
          f"{worst:.3g}; mechopt solve time median {np.median(ts) * 1e3:.1f} ms, max {ts.max() * 1e3:.1f} ms, "
          f"total {ts.sum():.2f} s; run {time.perf_counter() - t0:.1f} s")
    return 1 if fo or fb else 0


if __name__ == "__main__":
    raise SystemExit(main())
