"""The labeled E-LDP / metric-privacy LP under any prior, by decomposition over outputs.

::

    minimise    sum_{x,y} C[x, y] Q[x, y]              (C = prior x loss)
    subject to  sum_y Q[x, y] = 1                      for every input x
                Q[a, y] <= e^{E[a, b]} Q[b, y]          for every kept pair (a, b), output y
                Q >= 0

The LP is block-angular: one copy of the privacy cone per output column, linked only by
the k row sums. With ``mu`` the row-sum duals, column ``y`` can improve the objective iff

::

    p_y(mu) = min { (C[:, y] - mu) . q  :  q in cone, 0 <= q <= 1 } < 0,

an LP with k variables (the *pricing* LP; one HiGHS model for every output, only its
costs change, each output warm-started from its own last basis). For every ``mu``,
``sum(mu) + sum_y p_y(mu)`` is a lower bound (Lagrangian relaxation of the row sums,
with the valid box ``Q <= 1``); it is computed from the pricing duals with
:func:`~._safe_bound.safe_lower_bound`, so it is proven despite tolerances and rounding.

Two masters (measured in docs/geo.md):

* ``"block"`` — column generation over *outputs*: the restricted LP holds the full
  column ``Q[:, y]`` (k variables and the cone's rows) for each output of a growing set
  ``S``; outputs with ``p_y < 0`` join ``S``. Few rounds (an optimum uses few outputs:
  27 of 100 on the 10×10 benchmark), but the restricted LP grows with ``|S| k`` rows.
* ``"rays"`` — Dantzig–Wolfe: the master holds points ``v`` of the cone (the pricing
  solutions), each with its output, and has only the k row-sum rows; it is stabilised
  by Wentges' smoothing of the duals (``mu_sep = a mu_best + (1 - a) mu``). More rounds,
  each cheap.

Both run the rounds of :func:`mechopt.solvers._colgen_loop.run` (pricers
:class:`_OutputPricing` and :class:`_SmoothedPricing`).

Kept pairs are added lazily when there are many (a full Euclidean distance matrix):
the LP starts from each input's cheapest pairs (a sparse graph that approximates a
spanner), and pairs that a solution violates are added until none is — exact, since
every kept pair is then satisfied. A relaxation's duals still give a valid bound.
"""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ...notions import ELDP, MetricLDP
from ..backends._deadline import run_by
from .._colgen_loop import FAILED, LAST, PROVEN, Found, LoopResult, Round, run
from ._parts import (DENSE_PAIRS, RC_TOL, START_DEGREE, MetricLPResult, _closure, _highs, _label_bound,  # noqa: F401
                            _Lift, _Pairs, _Pricing, _sum_lower, snap_to_cone)


def solve_metric_lp(E: np.ndarray, cost: np.ndarray, *, master: str = "auto", rel_gap: float = 1e-7,
                    time_limit: float | None = None, progress: Callable | None = None,
                    alpha: float = 0.5) -> MetricLPResult:
    """Solve the labeled E-LDP LP exactly (to ``rel_gap``) by decomposition over outputs.

    Parameters
    ----------
    E : ndarray, shape (k, k)
        Pairwise budgets that must hold (``inf`` = none; implied pairs may be left out).
    cost : ndarray, shape (k, m)
        ``C[x, y] = P(x) L(x, y)``.
    master : ``"auto"``, ``"block"`` or ``"rays"``
        See the module docstring; ``auto`` takes ``block`` up to k = 150.
    rel_gap : float
        Stop when ``(objective - bound) <= rel_gap * |objective|``.
    time_limit : float, optional
        Seconds; on expiry the best mechanism found so far is returned with its bound
        (status ``"feasible"``).
    progress : callable(it, value, bound, size), optional

    Returns
    -------
    MetricLPResult
        ``Q`` (rows sum to 1 to the LP's tolerance; the caller repairs and verifies it)
        and a proven lower ``bound``.

    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[0, 1.0], [1.0, 0]])           # 1-LDP on two inputs
    >>> r = solve_metric_lp(E, 0.5 * (1 - np.eye(2)))
    >>> r.status, round(r.objective, 9), bool(r.objective - r.bound < 1e-9)
    ('optimal', 0.268941421, True)
    """
    t0 = time.perf_counter()
    E = np.asarray(E, dtype=float)
    cost = np.asarray(cost, dtype=float)
    k, m = cost.shape
    if master == "auto":
        master = "block" if k <= 150 else "rays"
    if master not in ("block", "rays"):
        raise ValueError(f"master must be 'block' or 'rays', got {master!r}")
    pairs = _Pairs(E)
    pricing = _Pricing(pairs)
    deadline = None if time_limit is None else t0 + float(time_limit)
    runner = _BlockMaster if master == "block" else _RayMaster
    solver = runner(pairs, pricing, cost, E)
    solver.deadline = deadline
    # the best constant channel (every input reports one output) is always feasible:
    # what a time limit returns if nothing better was found
    y0 = int(np.argmin(cost.sum(axis=0)))
    solver.fallback = np.zeros((k, m))
    solver.fallback[:, y0] = 1.0
    solver.fallback_value = float(cost[:, y0].sum())
    try:
        out = solver.run(rel_gap, deadline, progress, alpha)
    except _OutOfTime:
        Q, obj = solver.last if solver.last is not None and solver.last[1] < solver.fallback_value \
            else (solver.fallback, solver.fallback_value)
        out = solver._finish("feasible", Q, obj, "time limit", deadline_hit=True)
    if out.Q is not None:
        t = time.perf_counter()
        out.Q = snap_to_cone(out.Q, E)
        out.objective = float(np.sum(cost * out.Q))
        out.stats["snap_s"] = time.perf_counter() - t
    out.stats.update(master=master, pricing_iterations=pricing.iterations, pairs_active=pairs.n,
                     pairs_lazy=pairs.lazy, total_s=time.perf_counter() - t0)
    return out


def plateaus(G: np.ndarray, cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points of the cone that a good channel is made of: flat over a cell of places, tents outside.

    Every place reports itself with weight ``G[:, y]`` (its tent, rows normalised: the
    exponential mechanism at the full budget, not private itself); each report is sent
    to the output of least posterior loss (Bayesian remapping), which groups the places
    into cells; cell ``c`` gives the point ``max_{y in c} G[:, y]`` — the cone is closed
    under maxima, so it is a point of the cone — labelled with the cell's output. On a
    48×48 grid the Dantzig–Wolfe master with these beside the tents starts at 6.9925
    instead of 7.5678 (tents alone).

    >>> G = np.exp(-np.abs(np.subtract.outer(np.arange(4.0), np.arange(4.0))))   # a path, budget 1 a step
    >>> P, labels = plateaus(G, np.subtract.outer(np.arange(4.0), np.arange(4.0)) ** 2 / 4)
    >>> P.shape, labels.tolist()   # every place reports best as itself: no cell of two
    ((4, 0), [])
    >>> P, labels = plateaus(G, np.ones((4, 4)) - np.eye(4)[[0, 0, 3, 3]])   # two outputs worth having
    >>> bool(np.all(P[:-1] <= np.e * P[1:]) and np.all(P[1:] <= np.e * P[:-1])), labels.tolist()
    (True, [0, 3])
    """
    k = G.shape[0]
    Q = G / G.sum(axis=1, keepdims=True)
    to = np.argmin(Q.T @ cost, axis=1)  # report y -> the output of least posterior loss
    # a cell that is only its own output's place gives that place's tent, which the master
    # has: duplicate columns made HiGHS's simplex unstable on the 48×48 grid
    own = np.bincount(to, minlength=k) - (to == np.arange(k)) == 0
    labels = np.unique(to[~own[to]])
    P = np.empty((k, len(labels)))
    for j, c in enumerate(labels):
        P[:, j] = G[:, to == c].max(axis=1)
    return P, labels


def exponential_fallback(D: np.ndarray, G: np.ndarray) -> np.ndarray:
    """The exponential mechanism ``Q[x, y] ∝ e^{-t D[y, x]}`` at the largest ``t`` that keeps it private.

    ``Q[a, y] / Q[b, y] <= e^{t (D[a, b] + D[b, a])}`` (the triangle inequality, for the
    tent and for the row sums), so ``t = min D[a, b] / (D[a, b] + D[b, a])`` — one half
    for a symmetric metric — gives ``e^{D[a, b]} <= e^{E[a, b]}``: what a time limit
    returns when no master finished (on a 64×64 grid, far better than the best constant
    channel). ``G = e^{-D}.T`` as the master has it.

    >>> D = np.abs(np.subtract.outer(np.arange(3.0), np.arange(3.0)))   # a path, budget 1 a step
    >>> Q = exponential_fallback(D, np.exp(-D).T)
    >>> bool(np.allclose(Q.sum(1), 1) and np.all(Q[:-1] <= np.e * Q[1:] * (1 + 1e-12)) and np.all(Q[1:] <= np.e * Q[:-1] * (1 + 1e-12)))
    True
    """
    off = ~np.eye(len(D), dtype=bool) & np.isfinite(D) & np.isfinite(D.T)
    both = (D + D.T)[off]
    t = float(np.min(np.where(both > 0, D[off] / np.where(both > 0, both, 1.0), 0.0))) if off.any() else 0.5
    Q = G ** t
    return Q / Q.sum(axis=1, keepdims=True)


class _OutOfTime(Exception):
    pass


class _MasterBase:
    deadline: float | None = None

    def __init__(self, pairs: _Pairs, pricing: _Pricing, cost: np.ndarray, E: np.ndarray):
        self.pairs, self.pricing, self.cost, self.E = pairs, pricing, cost, E
        self.k, self.m = cost.shape
        self.scale = max(float(np.abs(cost).max()), 1e-300)
        self.best_bound = -math.inf
        self.last: tuple[np.ndarray, float] | None = None  # the last master channel and its value
        self.it = 0
        self.t_master = 0.0
        self.t_pricing = 0.0

    def price(self, mu: np.ndarray, labels) -> tuple[dict, float]:
        """Pricing at ``mu`` for ``labels``: ``{y: (q, value, safe bound)}`` and the sum of the bounds."""
        t = time.perf_counter()
        res = {}
        total = 0.0
        for y in labels:
            if self.deadline is not None and time.perf_counter() > self.deadline:
                raise _OutOfTime
            r = self.cost[:, y] - mu
            q, lam = self.pricing.solve(int(y), r)
            b = _label_bound(self.cost[:, y], mu, lam, self.pairs.bound_operator())
            res[int(y)] = (q, float(r @ q), b)
            total += b
        self.t_pricing += time.perf_counter() - t
        return res, total

    def _finish(self, status, Q, obj, message, deadline_hit=False):
        stats = {"iterations": self.it, "master_s": self.t_master, "pricing_s": self.t_pricing,
                 "time_limit_hit": deadline_hit}
        stats.update(self.extra_stats())
        return MetricLPResult(status, Q, obj, self.best_bound, message, stats)

    def extra_stats(self) -> dict:
        return {}

    def keep_if_better(self, Q: np.ndarray) -> None:
        """Make ``Q`` (a channel in the cone) what a time limit returns if it beats the fallback so far."""
        obj = float(np.sum(self.cost * Q))
        if obj < getattr(self, "fallback_value", math.inf):
            self.fallback, self.fallback_value = Q, obj

    def converged(self, obj: float, rel_gap: float) -> bool:
        return obj - self.best_bound <= rel_gap * max(abs(obj), 1e-300)

    def run_highs(self) -> str:
        """Solve the master's HiGHS model within the deadline: ``""`` or HiGHS's status when not optimal.

        Raises :class:`_OutOfTime` when the deadline stopped it.
        """
        t = time.perf_counter()
        stopped = run_by(self.h, self.deadline)
        self.t_master += time.perf_counter() - t
        if self.h.getModelStatus() == self.hs.HighsModelStatus.kOptimal:
            return ""
        if self.deadline is not None and (time.perf_counter() >= self.deadline or stopped):
            if self.h.getInfo().primal_solution_status == self.hs.SolutionStatus.kSolutionStatusFeasible:
                # stopped in the primal simplex's phase 2: its point is a channel (its
                # columns are points of the cone) better than the last round's
                Q = self.channel()
                obj = float(np.sum(self.cost * Q))
                if self.last is None or obj < self.last[1]:
                    self.last = (Q, obj)
            raise _OutOfTime
        return self.h.modelStatusToString(self.h.getModelStatus())

    def past_deadline(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline

    def report(self, progress: Callable | None):
        """The loop's ``progress(it, value, bound, size)`` with this master's round numbers (from 1)."""
        return None if progress is None else lambda it, *rest: progress(it + 1, *rest)

    def conclude(self, res: LoopResult) -> MetricLPResult:
        """The loop's stop as a result: proven, stalled (no output prices in), out of time, or failed."""
        if res.reason == FAILED:
            return self._finish("error", None, None, res.state.message)
        Q, obj = self.last
        if res.reason == PROVEN:
            return self._finish("optimal", Q, obj, "")
        if res.reason == LAST:
            return self._finish("feasible", Q, obj, "time limit", deadline_hit=True)
        # no column prices out at mu: the master is optimal over every output to the
        # tolerances; the bound at mu says how close that is
        return self._finish("feasible", Q, obj, f"stalled at relative gap "
                            f"{(obj - self.best_bound) / max(abs(obj), 1e-300):.2e}")


class _RayMaster(_MasterBase):
    """Dantzig–Wolfe master: columns are points of the cone with an output each; k rows."""

    def __init__(self, *args):
        super().__init__(*args)
        self.h, self.hs = _highs()
        self.h.setOptionValue("solver", "simplex")
        self.h.setOptionValue("simplex_strategy", 4)
        # 1e-9: HiGHS drops entries below 1e-9 (far ends of the tents), and a tighter
        # tolerance on those columns slowed the 48×48 grid's first master from 129 s to
        # over 450 s; the channel is lifted, renormalised and repaired exactly afterwards
        self.h.setOptionValue("primal_feasibility_tolerance", 1e-9)
        self.h.setOptionValue("dual_feasibility_tolerance", 1e-9)
        k = self.k
        self.h.addRows(k, np.ones(k), np.ones(k), 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        self.V: list[np.ndarray] = []
        self.labels: list[int] = []
        self.lift: _Lift | None = None
        self.cap = max(3000, 4 * k)
        self.max_add = max(50, k // 4)

    def add_points(self, V: np.ndarray, ys: np.ndarray, lift: bool = True) -> None:
        if V.shape[1] == 0:
            return
        # lift each point into the cone (pricing is exact only to 1e-10 absolute, a large
        # relative error on entries of 1e-12 where the loss is largest), so that the
        # master's value is the value of a truly feasible channel (the tents are already)
        if lift:
            if self.lift is None:
                self.lift = _Lift(self.E)
            V = self.lift(np.asarray(V, dtype=float))
        costs = np.einsum("xj,xj->j", self.cost[:, ys], V)
        A = sp.csc_matrix(V)
        n = V.shape[1]
        self.h.addCols(n, costs, np.zeros(n), np.full(n, np.inf), A.nnz, A.indptr[:-1].astype(np.int32),
                       A.indices.astype(np.int32), A.data)
        self.V.extend(V.T)
        self.labels.extend(int(y) for y in ys)

    def purge(self, mu: np.ndarray) -> None:
        if len(self.V) <= self.cap:
            return
        status = self.h.getBasis().col_status
        basic = np.array([s == self.hs.HighsBasisStatus.kBasic for s in status])
        Vm = np.array(self.V).T
        d = self.cost[:, self.labels].T.__mul__(Vm.T).sum(axis=1) - mu @ Vm
        d[basic] = -np.inf
        drop = np.argsort(-d)[: len(self.V) - self.cap // 2]
        drop = np.sort(drop[d[drop] > 0])
        if len(drop) == 0:
            return
        self.h.deleteCols(len(drop), drop.astype(np.int32))
        keep = np.ones(len(self.V), bool)
        keep[drop] = False
        self.V = [v for v, kk in zip(self.V, keep) if kk]
        self.labels = [y for y, kk in zip(self.labels, keep) if kk]

    def channel(self) -> np.ndarray:
        w = np.asarray(self.h.getSolution().col_value)
        Q = np.zeros((self.k, self.m))
        for j in np.flatnonzero(w > 0):
            Q[:, self.labels[j]] += w[j] * self.V[j]
        return Q

    def extra_stats(self) -> dict:
        return {"columns": len(self.V)}

    def solve(self) -> Round:
        self.it += 1
        failed = self.run_highs()
        if failed:
            return Round("error", message="master LP: " + failed)
        self.mu = np.asarray(self.h.getSolution().row_dual, dtype=float)
        obj = float(self.h.getInfo().objective_function_value)
        self.last = (self.channel(), obj)
        return Round("optimal", obj, self.mu, len(self.V))

    def add(self, columns) -> int:
        """Add the points ``Vn[:, add]`` (output ``y`` for ``add[j] = y``) the pricing found."""
        Vn, add = columns
        self.add_points(Vn[:, add], np.array(add))
        self.purge(self.mu)
        return len(add)

    def run(self, rel_gap, deadline, progress, alpha) -> MetricLPResult:
        k, m = self.k, self.m
        # start: the best constant channel (always feasible) and one "tent" e^{-D(y, .)} per output
        y0 = int(np.argmin(self.cost.sum(axis=0)))
        self.add_points(np.ones((k, 1)), np.array([y0]), lift=False)
        if m == k:
            D = _closure(self.E)
            G = np.exp(-D).T  # G[:, y] = e^{-D[y, .]}: the tent of place y
            self.add_points(G, np.arange(k), lift=False)
            self.keep_if_better(exponential_fallback(D, G))
            P, labels = plateaus(G, self.cost)
            self.add_points(P, labels, lift=False)
        # a primal feasible start: the constant channel basic (its row 0 at its bound,
        # the other rows' slacks basic), so the primal simplex skips its phase 1 — on a
        # 48×48 grid the first master took 32 s from here and > 72 s from HiGHS's crash
        B = self.hs.HighsBasis()
        n_col = self.h.getNumCol()
        B.col_status = [self.hs.HighsBasisStatus.kBasic] + [self.hs.HighsBasisStatus.kLower] * (n_col - 1)
        B.row_status = [self.hs.HighsBasisStatus.kLower] + [self.hs.HighsBasisStatus.kBasic] * (k - 1)
        B.valid = True
        self.h.setBasis(B)
        return self.conclude(run(self, _SmoothedPricing(self, alpha), sense="min",
                                 closed=lambda obj, bound: self.converged(obj, rel_gap), progress=self.report(progress)))


class _SmoothedPricing:
    """Every output priced at Wentges-smoothed duals ``alpha mu_best + (1 - alpha) mu``
    (at ``mu`` itself when the smoothed duals find nothing); the most negative
    ``max_add`` points enter."""

    def __init__(self, master: _RayMaster, alpha: float):
        self.master, self.alpha = master, alpha
        self.mu_best = None

    def price(self, state: Round) -> Found:
        M, mu = self.master, state.duals
        labels = range(M.m)
        mu_s = mu if self.mu_best is None else self.alpha * self.mu_best + (1 - self.alpha) * mu
        for _attempt in range(2):
            res, bsum = M.price(mu_s, labels)
            lb = _sum_lower(mu_s) + bsum
            if lb > M.best_bound:
                M.best_bound, self.mu_best = lb, mu_s.copy()
            Vn = np.array([res[y][0] for y in labels]).T
            rc = np.einsum("xy,xy->y", M.cost - mu[:, None], Vn)
            add = np.flatnonzero(rc < -RC_TOL * M.scale)
            if len(add) or np.array_equal(mu_s, mu):
                break
            mu_s = mu  # mispricing: the smoothed duals found nothing; price at mu itself
        if len(add) > M.max_add:
            add = add[np.argsort(rc[add])[: M.max_add]]
        return Found((Vn, add), len(add), M.best_bound, last=M.past_deadline())


class _BlockMaster(_MasterBase):
    """Column generation over outputs: the restricted LP holds whole columns ``Q[:, y]``.

    Each output keeps its own rows: the pairs tight at the pricing solution that brought
    it in (about half of a grid's edges), then the pairs its column breaks.
    """

    def __init__(self, *args):
        super().__init__(*args)
        self.h, self.hs = _highs()
        self.h.setOptionValue("solver", "simplex")
        self.h.setOptionValue("simplex_strategy", 1)  # dual: new rows (lazy pairs) keep it dual feasible
        self.h.setOptionValue("primal_feasibility_tolerance", 1e-10)
        self.h.setOptionValue("dual_feasibility_tolerance", 1e-10)
        k = self.k
        self.h.addRows(k, np.ones(k), np.ones(k), 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        self.S: list[int] = []
        self.var0: dict[int, int] = {}  # output -> index of its first variable
        self.rows: dict[int, list[tuple[int, np.ndarray]]] = {}  # output -> [(first row, pair indices)]
        self.has: dict[int, np.ndarray] = {}  # output -> which pairs it has rows for
        self.n_start = self.pairs.n
        self.per_round = max(3, k // 30)

    def _add_rows(self, y: int, pidx: np.ndarray) -> None:
        n = len(pidx)
        if n == 0:
            return
        a, b = self.pairs.a[pidx], self.pairs.b[pidx]
        base = self.var0[y]
        idx = (base + np.column_stack([a, b]).ravel()).astype(np.int32)
        val = np.column_stack([np.ones(n), -self.pairs.w(a, b)]).ravel()
        r0 = self.h.getNumRow()
        self.h.addRows(n, np.full(n, -np.inf), np.zeros(n), 2 * n, (2 * np.arange(n)).astype(np.int32), idx, val)
        self.rows.setdefault(y, []).append((r0, pidx))
        has = self.has[y]
        if len(has) < self.pairs.n:
            has = self.has[y] = np.concatenate([has, np.zeros(self.pairs.n - len(has), bool)])
        has[pidx] = True

    def add_output(self, y: int, hint: np.ndarray | None = None) -> None:
        k = self.k
        self.var0[y] = self.h.getNumCol()
        self.h.addCols(k, self.cost[:, y], np.zeros(k), np.full(k, np.inf), k, np.arange(k, dtype=np.int32),
                       np.arange(k, dtype=np.int32), np.ones(k))
        self.S.append(y)
        self.has[y] = np.zeros(self.pairs.n, bool)
        if hint is None:
            pidx = np.arange(self.n_start)
        else:
            # the pairs that shape the pricing solution (the tight ones); the others are
            # added if the column breaks them
            a, b = self.pairs.a, self.pairs.b
            pidx = np.flatnonzero(hint[a] >= self.pairs.w(a, b) * hint[b] * (1 - 1e-7))
        self._add_rows(y, pidx)

    def channel(self) -> np.ndarray:
        x = np.asarray(self.h.getSolution().col_value)
        Q = np.zeros((self.k, self.m))
        for y in self.S:
            Q[:, y] = x[self.var0[y]: self.var0[y] + self.k]
        return np.maximum(Q, 0.0)

    def separate(self, Q: np.ndarray) -> int:
        """Add to each output's rows the pairs its column breaks; returns how many."""
        added = 0
        for y in self.S:
            q = Q[:, y]
            if self.pairs.lazy:
                a, b = self.pairs.violated(q[:, None])  # pairs no LP has yet
                if len(a):
                    self.pairs.add(a, b)
                    self.pricing.sync()
            a, b = self.pairs.a, self.pairs.b
            has = self.has[y]
            if len(has) < self.pairs.n:
                has = self.has[y] = np.concatenate([has, np.zeros(self.pairs.n - len(has), bool)])
            bad = ~has & (q[a] > self.pairs.w(a, b) * q[b] * (1 + 1e-9) + 1e-300)
            pidx = np.flatnonzero(bad)
            self._add_rows(y, pidx)
            added += len(pidx)
        return added

    def lam(self, y: int, duals: np.ndarray) -> np.ndarray:
        lam = np.zeros(self.pairs.n)
        for r0, pidx in self.rows.get(y, []):
            lam[pidx] = np.maximum(-duals[r0: r0 + len(pidx)], 0.0)
        return lam

    def extra_stats(self) -> dict:
        return {"outputs_used": len(self.S), "rows": self.h.getNumRow(), "variables": self.h.getNumCol()}

    def solve(self) -> Round:
        """Solve the restricted LP, adding pairs its columns break (lazy pairs)."""
        self.it += 1
        while True:
            failed = self.run_highs()
            if failed:
                return Round("error", message="restricted LP: " + failed)
            Qn = self.channel()
            if not self.separate(Qn):
                break
        duals = np.asarray(self.h.getSolution().row_dual, dtype=float)
        obj = float(self.h.getInfo().objective_function_value)
        self.last = (Qn, obj)
        return Round("optimal", obj, duals, len(self.S))

    def add(self, columns) -> int:
        """Add the outputs ``(y, pricing solution)`` found, each with the pairs tight at its solution."""
        for y, hint in columns:
            self.add_output(y, hint)
        return len(columns)

    def run(self, rel_gap, deadline, progress, alpha) -> MetricLPResult:
        self.add_output(int(np.argmin(self.cost.sum(axis=0))))
        return self.conclude(run(self, _OutputPricing(self), sense="min",
                                 closed=lambda obj, bound: self.converged(obj, rel_gap), progress=self.report(progress)))


class _OutputPricing:
    """Every output priced at the master's row duals; the bound takes, for each output in
    the master, the better of its pricing bound and the bound from the master's own duals;
    the ``per_round`` most negative outputs not yet in the master enter."""

    def __init__(self, master: _BlockMaster):
        self.master = master

    def price(self, state: Round) -> Found:
        M, duals = self.master, state.duals
        m = M.m
        mu = duals[:M.k]
        res, _ = M.price(mu, range(m))
        bsum = 0.0
        for y in range(m):
            b = res[y][2]
            if y in M.var0:
                b = max(b, _label_bound(M.cost[:, y], mu, M.lam(y, duals), M.pairs.bound_operator()))
            bsum += b
        others = [y for y in range(m) if y not in M.var0]
        M.best_bound = max(M.best_bound, _sum_lower(mu) + bsum)
        neg = [y for y in others if res[y][1] < -RC_TOL * M.scale]
        neg.sort(key=lambda y: res[y][1])
        return Found([(y, res[y][0]) for y in neg[: M.per_round]], len(neg), M.best_bound, last=M.past_deadline())


def kept_budgets(notions, k: int, implied: bool = False) -> np.ndarray | None:
    """The pairwise budgets that must hold (implied pairs dropped unless ``implied``), or None.

    None unless every notion is pairwise E-LDP (``eldp`` or ``metric``: no clique
    groups, LIP rows or ULDP roles).
    """
    from ..labeled._structure import column_system

    if not all(isinstance(n, (ELDP, MetricLDP)) for n in notions):
        return None
    sysm = column_system(list(notions), k)
    if sysm.groups or sysm.factored is not None or np.any(sysm.b):
        return None
    if implied:
        return np.where(np.isnan(sysm.E), np.inf, sysm.E)
    A = sysm.A.tocoo()
    E = np.full((k, k), np.inf)
    np.fill_diagonal(E, 0.0)
    pos = A.data > 0
    rows_x = np.full(A.shape[0], -1)
    rows_x[A.row[pos]] = A.col[pos]
    neg = ~pos
    xs, xps = rows_x[A.row[neg]], A.col[neg]
    E[xs, xps] = sysm.E[xs, xps]
    return E


def decomposed(notions, k: int, m: int, cost: np.ndarray, *, time_limit: float | None = None,
               progress: Callable | None = None, master: str = "auto"):
    """:func:`solve_metric_lp` as a :class:`~mechopt.solvers._outcome.LabeledSolution`, or None if it does not apply."""
    from .._outcome import LabeledSolution

    t = time.perf_counter()
    E = kept_budgets(notions, k)
    if E is None:
        return None
    t_build = time.perf_counter() - t
    r = solve_metric_lp(E, cost, master=master, time_limit=time_limit, progress=progress)
    stats = dict(r.stats, method="decompose", build_s=t_build, bound=r.bound)
    if r.Q is None:
        return LabeledSolution("error", None, None, r.message, stats)
    bound = r.bound if math.isfinite(r.bound) else None
    return LabeledSolution(r.status, r.Q, r.objective, r.message, stats, bound=bound)
