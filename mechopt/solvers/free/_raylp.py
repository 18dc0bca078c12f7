"""The extreme-ray LP and column generation for sublinear objectives (docs/model.md).

For ``U(Q) = sum_y mu(q_y)`` with ``mu`` convex and positively homogeneous, an optimal
channel uses only multiples of extreme rays ``v_r`` of the privacy cone, and the
optimum is the LP ::

    maximise  sum_r w_r mu(v_r)   subject to   sum_r w_r v_r = 1,  w >= 0.

Its dual is ``min 1·d  s.t.  d·v_r >= mu(v_r)``. When the rays are too many to list,
column generation solves the LP over a growing set of rays; the *pricing* problem
``max_v mu(v) - d·v`` over the cone's slice ``{P·v = 1}`` is solved exactly for the
MMSE objective on the LIP and LDP slices with the identity
``(c·q)^2 = max_λ (2λ c·q - λ^2)``: for fixed λ pricing is linear — a continuous
knapsack (LIP) or a threshold set (LDP) — and the optimal vertex changes only where
two inputs swap places in a sort, so a finite list of λ covers every candidate. If the
best reduced value is δ, then ``d + δP`` is dual feasible, so ``LP + δ`` bounds the
optimum: the gap is proven, not estimated.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..._errors import SolverError
from ...objectives import HISTOGRAM_MSE, MUTUAL_INFORMATION
from ...objectives import column_utility
from ..._problem import Objective
from ...notions import LIP, same_prior
from .._colgen_loop import FAILED, NO_COLUMN, Found, Round, run
from ..backends._adapters import get_backend
from ._rays import slice_candidates


@dataclass
class RaySolution:
    status: str
    weights: np.ndarray | None
    V: np.ndarray | None
    value: float | None  # max sum w mu
    bound: float | None  # proven upper bound on max sum w mu
    message: str = ""
    stats: dict = field(default_factory=dict)


def solve_ray_lp(V: np.ndarray, mu: np.ndarray, *, backend: str = "highs") -> RaySolution:
    """``max mu·w  s.t.  V w = 1, w >= 0`` (rays as columns of ``V``).

    The solver sees the rows as ``v_0·w = 1`` and ``(v_x - v_0)·w / s_x = 0`` with
    ``s_x = max |v_x - v_0|`` — the same LP (an invertible row transform ``T``; the duals
    are mapped back, ``d = T^T d'``). At ε = 1e-9 every ray is within ~1e-9 of the
    constant column: on ``V w = 1`` HiGHS left residuals of ~2e-11 that differ from row
    to row — 2 % of the budget once the channel's rows are rescaled, beyond what mixing
    repairs — while on the differences its residual is common to all rows (a common
    scale, which rescaling removes) up to ~1e-10 of ``s_x``. No presolve: HiGHS's
    presolve called such LPs infeasible; without it the ray LP is also faster (LDP
    k = 15: 0.53 s instead of 0.98 s).
    """
    k, R = V.shape
    adapter = get_backend(backend)
    diff = V[1:] - V[0]
    s = np.abs(diff).max(axis=1) if k > 1 else np.ones(0)
    s[s == 0] = 1.0
    A = np.vstack([V[:1], diff / s[:, None]])
    b = np.zeros(k)
    b[0] = 1.0
    sol = adapter.solve(-mu, A_eq=A, b_eq=b, bounds=(0, None), presolve=False)
    if sol.status != "optimal":
        return RaySolution(sol.status, None, None, None, None, f"{adapter.name}: {sol.message}")
    w = np.clip(sol.x, 0, None)
    d = None
    if sol.eq_duals is not None:
        dp = -np.asarray(sol.eq_duals, dtype=float)
        d = np.concatenate([[dp[0] - np.sum(dp[1:] / s)], dp[1:] / s])
    return RaySolution("optimal", w, V, float(mu @ w), float(mu @ w), "", {"duals": d, "rays": R})


# -- pricing -----------------------------------------------------------------------


def _knapsack(a: np.ndarray, P: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """argmax a·q  s.t.  P·q = 1, lo <= q <= hi (continuous knapsack, by sorting)."""
    k = len(a)
    q = np.full(k, lo)
    free = P <= 0
    q[free & (a > 0)] = hi
    budget = 1.0 - lo * P[~free].sum()
    pos = np.flatnonzero(~free)
    order = pos[np.argsort(-(a[pos] / P[pos]), kind="stable")]
    for x in order:
        if budget <= 0:
            break
        step = min(hi - lo, budget / P[x])
        q[x] += step
        budget -= step * P[x]
    return q


def _lambda_grid(f: np.ndarray, g: np.ndarray) -> np.ndarray:
    """λ values covering every order of ``2λ f - g`` (breakpoints, midpoints, ends)."""
    df = f[:, None] - f[None, :]
    dg = g[:, None] - g[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = dg / (2 * df)
    lam = np.unique(lam[np.isfinite(lam)])
    if lam.size == 0:
        return np.array([0.0])
    mids = (lam[:-1] + lam[1:]) / 2
    span = max(1.0, float(np.abs(lam).max()))
    return np.concatenate([[lam[0] - span], lam, mids, [lam[-1] + span]])


def price_mmse_lip(c: np.ndarray, P: np.ndarray, d: np.ndarray, eps: float, top: int = 5) -> np.ndarray:
    """Best vertices of the LIP slice for ``(c·v)^2 - d·v`` (exact; see module doc)."""
    lo, hi = math.exp(-eps), math.exp(eps)
    Ps = np.where(P > 0, P, 1.0)
    f = c / Ps
    g = d / Ps
    cands = []
    for lam in _lambda_grid(f[P > 0], g[P > 0]):
        cands.append(_knapsack(2 * lam * c - d, P, lo, hi))
    C = np.unique(np.round(np.array(cands), 15), axis=0).T
    score = (c @ C) ** 2 - d @ C
    best = np.argsort(-score)[:top]
    return C[:, best]


def price_mmse_ldp(c: np.ndarray, P: np.ndarray, d: np.ndarray, eps: float, top: int = 5) -> np.ndarray:
    """Best normalised staircases for ``(c·v)^2/(P·v) - d·v`` over the LDP cone (exact)."""
    e = math.exp(eps)
    k = len(P)
    Ps = np.where(P > 0, P, 1e-300)
    cands = []
    for lam in _lambda_grid(c / Ps, d / Ps):
        a = 2 * lam * c - d
        order = np.argsort(-(a / Ps), kind="stable")
        for t in range(1, k):
            v = np.ones(k)
            v[order[:t]] = e
            cands.append(v / (P @ v))
    C = np.unique(np.round(np.array(cands), 15), axis=0).T
    score = (c @ C) ** 2 / (P @ C) - d @ C
    best = np.argsort(-score)[:top]
    return C[:, best]


def channel_from_rays(V: np.ndarray, w: np.ndarray, inv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The channel ``Q = V diag(w)`` over the rays with weight, invertible rays kept exact unit vectors.

    Returns ``(Q, invertible)``: the channel and which of its columns are invertible.

    Examples
    --------
    >>> Q, inv = channel_from_rays(np.array([[1.0, 1e-17], [0.5, 1.0]]), np.array([0.5, 0.5]),
    ...                            np.array([False, True]))
    >>> Q.tolist(), inv.tolist()
    ([[0.5, 0.0], [0.25, 0.5]], [False, True])
    """
    keep = w > 1e-13 * max(1.0, float(w.max()))
    Q = V[:, keep] * w[keep]
    for j in np.flatnonzero(inv[keep]):  # an invertible ray stays exactly a unit vector
        x = int(np.argmax(Q[:, j]))
        val = Q[x, j]
        Q[:, j] = 0.0
        Q[x, j] = val
    return Q, inv[keep]


class RayMaster:
    """The ray LP over a growing set of rays, solved from scratch each round (:func:`solve_ray_lp`).

    ``utility(V)`` gives the columns' values ``mu``; :attr:`sol` is the last solution and
    :attr:`solved` the rays it weighs (:attr:`V` may hold columns added after it, when the
    loop stopped after pricing).
    """

    def __init__(self, V: np.ndarray, utility, backend: str = "highs"):
        self.V = self.solved = V
        self.utility = utility
        self.backend = backend
        self.sol: RaySolution | None = None

    def solve(self) -> Round:
        self.solved = self.V
        self.sol = sol = solve_ray_lp(self.V, self.utility(self.V), backend=self.backend)
        if sol.status != "optimal" or sol.stats.get("duals") is None:
            return Round(sol.status if sol.status != "optimal" else "no duals", message=sol.message)
        return Round("optimal", sol.value, sol.stats["duals"], self.V.shape[1])

    def add(self, V: np.ndarray) -> int:
        self.V = np.hstack([self.V, V])
        return V.shape[1]


class _ReducedValuePricer:
    """``price(d, scale) -> (columns, reduced, upper)`` as a :class:`Pricer`: the columns above
    ``tol * scale`` enter, ``value + max(0, upper)`` is the bound."""

    def __init__(self, price, tol: float):
        self.fn = price
        self.tol = tol

    def price(self, state: Round) -> Found:
        scale = max(1.0, abs(state.value))
        new, red, upper = self.fn(state.duals, scale)
        keep = red > self.tol * scale
        return Found(new[:, keep], int(keep.sum()), state.value + max(0.0, upper))


def ray_column_generation(obj: Objective, k: int, price, *, backend: str = "highs", tol: float = 1e-10,
                          max_iter: int = 500, progress=None):
    """Column generation over rays (:func:`mechopt.solvers._colgen_loop.run`): the ray LP as master.

    ``price(d, scale) -> (columns, reduced, upper)`` gets the master's duals ``d``; it
    returns candidate columns, their reduced values and a proven upper bound ``upper``
    on the largest reduced value over the whole cone (so ``LP + max(0, upper)`` bounds
    the optimum, SPEC §3). The loop stops when no candidate's reduced value exceeds
    ``tol * max(1, |LP|)``. Returns ``(sol, V, best_bound, rounds, finished)``; ``sol``
    is the last master's solution (its status is not ``optimal`` when the LP failed).
    """
    master = RayMaster(np.ones((k, 1)), lambda V: column_utility(obj, V), backend)  # the constant column
    res = run(master, _ReducedValuePricer(price, tol), max_iter=max_iter, progress=progress)
    sol = master.sol
    if res.reason == FAILED and sol.status == "optimal":  # solved, but without duals to price with
        sol = RaySolution("error", None, None, None, None, "the ray LP gave no duals")
    return sol, master.solved, res.bound, res.rounds, res.reason == NO_COLUMN


def column_generation(obj: Objective, kind: str, eps: float, P_cone: np.ndarray, *, backend: str = "highs",
                      tol: float = 1e-10, max_iter: int = 500, progress=None) -> RaySolution:
    """Column generation for the MMSE objective on a LIP (``kind="lip"``) or LDP cone.

    ``P_cone`` is the LIP prior (``kind="lip"``) or the objective prior (LDP slice). The
    pricing is exact (:func:`price_mmse_lip`, :func:`price_mmse_ldp`), so the bound is the
    largest reduced value found.
    """
    t0 = time.perf_counter()
    k = len(obj.prior)
    P = np.asarray(P_cone, dtype=float)
    c = obj.values * obj.prior
    pricer = price_mmse_lip if kind == LIP.name else price_mmse_ldp

    def price(d, scale):
        new = pricer(c, P, d, eps)
        # reduced value of each candidate on the slice P·v = 1
        red = column_utility(obj, new) / (P @ new) - d @ (new / (P @ new))
        return new, red, float(red.max())

    sol, V, best_bound, rounds, finished = ray_column_generation(obj, k, price, backend=backend, tol=tol,
                                                                 max_iter=max_iter, progress=progress)
    if sol.status != "optimal":
        return sol
    if not finished:
        sol.message = f"column generation stopped after {max_iter} iterations"
    sol.bound = best_bound
    sol.V = V
    sol.stats.update(iterations=rounds, rays=V.shape[1], seconds=time.perf_counter() - t0)
    return sol


# -- separable objectives on the LIP slice ------------------------------------------------


def _slice_terms(obj: Objective, x_vals: np.ndarray, P: np.ndarray) -> np.ndarray:
    """``g_x(t)`` for every input x and value t (array (k, n)) with ``mu(v) = sum_x g_x(v_x)`` on ``P·v = 1``."""
    Pc = P[:, None]
    if obj.type is HISTOGRAM_MSE:
        return (Pc * x_vals) ** 2
    if obj.type is MUTUAL_INFORMATION:
        return Pc * x_vals * np.log(np.where(x_vals > 0, x_vals, 1.0))
    raise ValueError(obj.kind)


def price_separable_lip(obj: Objective, P: np.ndarray, d: np.ndarray, eps: float, top: int = 5):
    """Pricing ``max mu(v) - d·v`` on the LIP slice for a separable convex ``mu``.

    Returns ``(candidates (k, c), upper)``: the candidates come from a greedy scan (a
    lower bound on the pricing maximum), ``upper`` is a Lagrangian bound
    ``min_nu nu + sum_x max_{t in {lo, hi}} (g_x(t) - d_x t - nu P_x t)`` on it. The
    objective is convex in each coordinate, so the inner maximum sits at a bound.
    """
    k = len(P)
    lo, hi = math.exp(-eps), math.exp(eps)
    ends = np.array([lo, hi])
    G = _slice_terms(obj, np.tile(ends, (k, 1)), P) - d[:, None] * ends[None, :]  # (k, 2)
    Ps = np.where(P > 0, P, 1e-300)
    nus = (G[:, 1] - G[:, 0]) / (Ps * (hi - lo))
    grid = np.concatenate([nus, [nus.min() - 1.0, nus.max() + 1.0]])
    upper = math.inf
    for nu in grid:
        val = nu + np.maximum(G[:, 0] - nu * P * lo, G[:, 1] - nu * P * hi).sum()
        upper = min(upper, float(val))
    # primal candidates: top-t by nu_x at hi, the rest at lo, one coordinate adjusted
    order = np.argsort(-nus, kind="stable")
    cands = []
    for t in range(k + 1):
        q = np.full(k, lo)
        q[order[:t]] = hi
        for j in set(order[max(t - 1, 0): t + 1].tolist()):
            qq = q.copy()
            rest = 1.0 - (P @ qq - P[j] * qq[j])
            if P[j] > 0:
                qq[j] = rest / P[j]
                if lo - 1e-12 <= qq[j] <= hi + 1e-12:
                    qq[j] = min(max(qq[j], lo), hi)
                    cands.append(qq)
    if not cands:
        return np.ones((k, 1)), upper
    C = np.unique(np.round(np.array(cands), 15), axis=0).T
    score = _slice_terms(obj, C, P).sum(axis=0) - d @ C
    best = np.argsort(-score)[:top]
    improved = [_local_search(obj, P, d, C[:, b], lo, hi) for b in best]
    C = np.unique(np.round(np.hstack([C[:, best], np.array(improved).T]), 15), axis=1)
    score = _slice_terms(obj, C, P).sum(axis=0) - d @ C
    return C[:, np.argsort(-score)[:top]], upper


#: largest slice-vertex count k·2^(k-1) priced exactly by streaming (k <= 21)
EXACT_PRICING_MAX = 2**25


def price_separable_exact(obj: Objective, P: np.ndarray, d: np.ndarray, eps: float, top: int = 5,
                          chunk: int = 1 << 15) -> tuple[np.ndarray, float]:
    """Exact pricing ``max mu(v) - d·v`` over every vertex of the LIP slice, streamed.

    ``mu`` is convex, so its maximum over the slice ``{P·v = 1, e^-ε <= v <= e^ε}`` sits
    at a vertex: every coordinate at a bound but at most one (the one the hyperplane
    solves for). All ``k·2^(k-1)`` candidates are scored in chunks of ``chunk`` and
    the ``top`` best kept. Returns ``(candidates (k, c), exact maximum)``.
    """
    k = len(P)
    lo, hi = math.exp(-eps), math.exp(eps)
    best_vals = np.full(0, -np.inf)
    best_cols = np.zeros((k, 0))
    for j, others, Qo, qj in slice_candidates(P, eps, chunk):
        ok = (qj >= lo - 1e-12) & (qj <= hi + 1e-12)
        if not ok.any():
            continue
        C = np.empty((k, int(ok.sum())))
        C[others] = Qo[:, ok]
        C[j] = np.clip(qj[ok], lo, hi)
        score = _slice_terms(obj, C, P).sum(axis=0) - d @ C
        if len(score) > top:
            sel = np.argpartition(-score, top)[:top]
            score, C = score[sel], C[:, sel]
        best_vals = np.concatenate([best_vals, score])
        best_cols = np.hstack([best_cols, C])
        if len(best_vals) > 4 * top:
            sel = np.argsort(-best_vals)[:top]
            best_vals, best_cols = best_vals[sel], best_cols[:, sel]
    if not len(best_vals):
        return np.ones((k, 1)), -math.inf
    sel = np.argsort(-best_vals)[:top]
    return best_cols[:, sel], float(best_vals[sel[0]])


def _local_search(obj: Objective, P: np.ndarray, d: np.ndarray, q: np.ndarray, lo: float, hi: float,
                  max_pass: int = 20) -> np.ndarray:
    """Improve a slice vertex by flipping one coordinate's bound and re-solving another."""
    k = len(q)

    def value(v):
        return float(_slice_terms(obj, v[:, None], P).sum() - d @ v)

    best, best_val = q.copy(), value(q)
    for _ in range(max_pass):
        moved = False
        for x in range(k):
            cand = best.copy()
            cand[x] = lo if cand[x] > (lo + hi) / 2 else hi
            for j in range(k):
                if j == x or P[j] <= 0:
                    continue
                trial = cand.copy()
                trial[j] = (1.0 - (P @ trial - P[j] * trial[j])) / P[j]
                if lo - 1e-12 <= trial[j] <= hi + 1e-12:
                    trial[j] = min(max(trial[j], lo), hi)
                    v = value(trial)
                    if v > best_val + 1e-15:
                        best, best_val, moved = trial, v, True
        if not moved:
            break
    return best


def column_generation_separable(obj: Objective, eps: float, P_cone: np.ndarray, *, backend: str = "highs",
                                tol: float = 1e-9, max_iter: int = 2000, progress=None) -> RaySolution:
    """Column generation on a LIP cone for histogram MSE and mutual information.

    The pricing is heuristic with a proven Lagrangian bound, so the result carries a
    proven bound ``LP + max(0, upper)``. When the heuristic finds no improving column
    and the slice has at most ``EXACT_PRICING_MAX`` vertices (k <= 21), every vertex is
    priced (:func:`price_separable_exact`): the bound is then exact and the optimum
    proven. ``stats["proven"]`` says whether the final bound closes the gap.
    """
    t0 = time.perf_counter()
    k = len(obj.prior)
    P = np.asarray(P_cone, dtype=float)
    if not same_prior(P, obj.prior):
        raise SolverError("column generation needs the objective's prior to equal the LIP prior")
    exact_ok = k * 2 ** (k - 1) <= EXACT_PRICING_MAX
    exact_rounds = 0

    def price(d, scale):
        nonlocal exact_rounds
        new, upper = price_separable_lip(obj, P, d, eps)
        red = column_utility(obj, new) - d @ new
        if not (red > tol * scale).any() and exact_ok:
            # the heuristic found nothing: price every slice vertex (exact), which
            # either proves the optimum or hands over the columns it missed
            new, exact_upper = price_separable_exact(obj, P, d, eps)
            exact_rounds += 1
            red = column_utility(obj, new) - d @ new
            upper = min(upper, exact_upper)
        return new, red, upper

    sol, V, best_bound, rounds, _ = ray_column_generation(obj, k, price, backend=backend, tol=tol,
                                                          max_iter=max_iter, progress=progress)
    if sol.status != "optimal":
        return sol
    sol.bound = best_bound
    sol.V = V
    proven = best_bound - sol.value <= 1e-7 * max(1.0, abs(sol.value))
    sol.stats.update(iterations=rounds, rays=V.shape[1], seconds=time.perf_counter() - t0, proven=proven,
                     exact_pricing_rounds=exact_rounds)
    return sol
