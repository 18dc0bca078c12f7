"""Exact pricing for column generation over privacy cones (SPEC §3, issue 10).

Column generation solves the ray LP ``max sum_r w_r mu(v_r)  s.t.  sum_r w_r v_r = 1``
over a growing set of rays. With duals ``d`` (``d·v_r >= mu(v_r)`` on the rays in the
master), *pricing* asks for the largest reduced value on a slice of the cone,

    delta = max { (mu(v) - d·v) / (s·v) : v a ray of the cone },

where ``s >= 0`` is a normalisation positive on the cone (here the objective's prior
restricted to the cone's support). Then ``d + delta s`` is dual feasible: for every
ray, ``(d + delta s)·v >= mu(v)``, so ``sum(d) + max(delta, 0) sum(s)`` bounds the
optimum. A cone that is a union of pieces (blocks, ULDP's protected and invertible
columns) gets one delta per piece and the bound adds them, weighted by each piece's
``sum(s)``. Every pricer here returns such a *proven* upper bound on its delta, with
the best columns it found; a pricer that finishes its search returns the maximum
itself (``exact=True``).

Two cone families:

* :class:`Staircases` — rays ``1_U + (e^eps - 1) 1_S`` for ``S ⊆ G ⊆ U``. With
  ``U = G = all`` these are the LDP (and WC-LIP, ULDP protected) rays; a block of
  block-LDP is ``U = G = block``; high-low LDP is ``U = all``, ``G = sensitive``.
* :class:`LipSlice` — the LIP cone sliced by its own prior,
  ``{P·v = 1, e^-eps <= v <= e^eps}``; its vertices have every coordinate at a bound
  but one.

Four objectives, three kinds of pricing:

* **MMSE**, ``mu(v) = (c·v)^2 / (P·v)``: on the slice ``(c·v)^2 = max_l (2 l c·v - l^2)``,
  so ``delta = max_l (E(l) - l^2)`` with ``E(l) = max_v (2 l c·v - d·v)`` the upper
  envelope of one line per vertex. For fixed ``l`` the inner problem is linear: a
  threshold set in the order of ``(2 l c_x - d_x) / P_x`` (staircases: a
  linear-fractional 0/1 problem, Dinkelbach) or a continuous knapsack (LIP). The
  envelope's pieces are found by Eisner-Severance bisection (intersect the lines found
  at two values of ``l``, evaluate there), with the convexity of ``E`` giving a chord
  bound that prunes intervals: exact, ``O(pieces · k log k)``.
* **Bayes risk**, ``mu(v) = max_xh -sum_x P(x) L(x, xh) v_x``: a maximum of linear
  functions, so ``delta`` is the maximum over ``xh`` of one linear-fractional (or
  knapsack) problem each: exact, ``O(k^2 log k)``.
* **Histogram MSE and mutual information**: on the slice both are separable convex,
  ``sum_x phi_x(v_x)`` with ``phi_x(t) = P_x^2 t^2`` or ``P_x t log t``. Maximising a
  separable convex function under one linear equation contains subset sum, so the
  pricing is an exact branch-and-bound: for staircases over the items of ``S`` and the
  normalisation ``t = 1 / (P·v)``, relaxing to a continuous knapsack at the two ends
  of each node's ``t`` range (every term is convex in ``t``); for LIP over the
  coordinates' intervals with the chord (secant) of ``phi_x`` as a concave
  over-estimator (spatial branch-and-bound). A search stopped early still returns a
  proven bound: the largest bound among the nodes left open.

This module holds the cones, the result type, the staircase pricers of MMSE and Bayes
risk and the dispatch (:func:`price`); :mod:`mechopt.solvers.free._pricing_sep` the staircase
branch-and-bound of histogram MSE and mutual information; :mod:`mechopt.solvers.free._pricing_lip` the LIP
slices. ``tests/test_pricing.py`` checks every pricer against full enumeration.

Every pricer has the signature ``pricer(cone, obj, d, *, floor=0.0, max_nodes=None,
top=10) -> Priced``: ``floor`` is the reduced value below which columns are of no
interest (the search prunes there), ``max_nodes`` caps the search.
"""

from __future__ import annotations

import contextvars
import heapq
import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..._objectives import column_utility
from ..._problem import Objective

# -- cones ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Staircases:
    """Rays ``1_U + (e^eps - 1) 1_S`` for every ``S ⊆ G`` (``G ⊆ U``), zero outside ``U``.

    Attributes
    ----------
    support : ndarray of int
        ``U``, the inputs where the rays are positive.
    ground : ndarray of int
        ``G``, the inputs that may be raised by ``e^eps``.
    eps : float
    """

    support: np.ndarray
    ground: np.ndarray
    eps: float

    def ray(self, k: int, S: np.ndarray) -> np.ndarray:
        """The ray of the raised set ``S`` (indices into the inputs)."""
        v = np.zeros(k)
        v[self.support] = 1.0
        v[np.asarray(S, dtype=int)] = math.exp(self.eps)
        return v


@dataclass(frozen=True)
class LipSlice:
    """The eps-LIP cone for ``prior``, sliced by ``prior·v = 1`` (the objective's prior)."""

    prior: np.ndarray
    eps: float


@dataclass
class Priced:
    """What a pricer returns.

    Attributes
    ----------
    columns : ndarray (k, c)
        Rays found, normalised so that ``s·v = 1``, best first.
    values : ndarray (c,)
        Their reduced values ``(mu(v) - d·v) / (s·v)``.
    upper : float
        Proven: no ray of the cone has a larger reduced value.
    mass : float
        ``sum(s)``: the bound adds ``max(upper, 0) * mass``.
    exact : bool
        The search finished (``upper`` is the maximum, or at most ``floor``).
    nodes : int
        Oracle calls or branch-and-bound nodes used.
    """

    columns: np.ndarray
    values: np.ndarray
    upper: float
    mass: float
    exact: bool
    nodes: int = 0
    stats: dict = field(default_factory=dict)


def reduced_values(obj: Objective, V: np.ndarray, d: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``(mu(v) - d·v) / (s·v)`` for every column, by the objective's own code.

    Examples
    --------
    >>> import numpy as np
    >>> o = Objective("histogram_mse", np.array([0.5, 0.5]))
    >>> reduced_values(o, np.eye(2), np.zeros(2), o.prior).tolist()   # (P_x^2 / P_x) / P_x
    [1.0, 1.0]
    """
    V = np.asarray(V, dtype=float)
    return (column_utility(obj, V) - d @ V) / (s @ V)


class _Collector:
    """The ``top`` best distinct columns seen, by reduced value."""

    def __init__(self, top: int):
        self.top = max(1, int(top))
        self.items: list[tuple[float, int, bytes, np.ndarray]] = []  # min-heap
        self.seen: set[bytes] = set()
        self.count = 0

    @property
    def best(self) -> float:
        return max((it[0] for it in self.items), default=-math.inf)

    @property
    def threshold(self) -> float:
        return self.items[0][0] if len(self.items) >= self.top else -math.inf

    def offer(self, value: float, key: bytes, make: Callable[[], np.ndarray]) -> None:
        if not math.isfinite(value) or value <= self.threshold or key in self.seen:
            return
        self.seen.add(key)
        self.count += 1
        heapq.heappush(self.items, (value, self.count, key, make()))
        if len(self.items) > self.top:
            heapq.heappop(self.items)

    def result(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        items = sorted(self.items, key=lambda it: -it[0])
        if not items:
            return np.zeros((k, 0)), np.zeros(0)
        return np.column_stack([it[3] for it in items]), np.array([it[0] for it in items])


def _finish(obj: Objective, col: _Collector, d: np.ndarray, s: np.ndarray, upper: float, mass: float,
            exact: bool, nodes: int, k: int, **stats) -> Priced:
    """Re-score the columns found with :func:`column_utility` (independent of the pricer's sums)."""
    V, _ = col.result(k)
    if V.shape[1]:
        V = V / (s @ V)[None, :]
        vals = reduced_values(obj, V, d, s)
        order = np.argsort(-vals, kind="stable")
        V, vals = V[:, order], vals[order]
        # the bound must cover what the columns really score (float noise in the sums)
        upper = max(upper, float(vals[0]))
    else:
        vals = np.zeros(0)
    return Priced(V, vals, float(upper), float(mass), exact, nodes, stats)


#: ``time.perf_counter()`` value after which every search stops (set by column generation's
#: time limit); a stopped search still returns a proven bound (the largest one left open)
DEADLINE: contextvars.ContextVar[float] = contextvars.ContextVar("pricing_deadline", default=math.inf)


def best_first(heap: list, branch: Callable, col, floor: float, max_nodes: int | None) -> tuple[float, bool, int]:
    """Best-first branch and bound over ``heap`` (items ``(-upper, tiebreak, *node)``).

    Pops the node of largest upper bound; prunes it when that bound is no better than
    the best column found (``col.best``) or ``floor``, else ``branch(item)`` pushes its
    children. Returns ``(bound, exact, nodes)``: the largest upper bound among the nodes
    pruned here or left open (with ``col.best``, a proven bound on the search's maximum),
    whether the search finished, and how many nodes were branched.
    """
    pruned, nodes, exact = -math.inf, 0, True
    while heap:
        item = heapq.heappop(heap)
        ub = -item[0]
        if ub <= max(col.best, floor):
            pruned = max(pruned, ub)
            continue
        if _budget_spent(max_nodes, nodes, col.best, ub):
            heapq.heappush(heap, item)
            exact = False
            break
        nodes += 1
        branch(item)
    if heap:
        pruned = max(pruned, max(-h[0] for h in heap))
    return pruned, exact, nodes


def _budget_spent(max_nodes: int | None, nodes: int, best: float, top_bound: float) -> bool:
    """A search may stop early once past its node budget *and* holding columns worth at
    least half of the best bound still open (so an early stop still leaves a useful
    bound: the largest open bound, at most twice the best column found), or at the
    :data:`DEADLINE`."""
    if nodes & 63 == 63 and time.perf_counter() > DEADLINE.get():
        return True
    return max_nodes is not None and nodes >= max_nodes and best > 0 and best >= 0.5 * top_bound


def _safety(*scale: float) -> float:
    """A margin covering float rounding in the bounds (relative 1e-12 of the terms)."""
    return 1e-12 * max(1e-300, *[abs(v) for v in scale])


# -- staircases: linear-fractional prefixes -----------------------------------------------


def _ratio_order(w: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Order of ``w / p`` descending, with ``p = 0`` items first (w > 0) or last (w <= 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        key = np.where(p > 0, w / np.where(p > 0, p, 1.0), np.where(w > 0, np.inf, -np.inf))
    return np.argsort(-key, kind="stable")


def _prefix_fractions(n0: float, d0: float, w: np.ndarray, p: np.ndarray, a: float, order: np.ndarray):
    """Values ``(n0 + a w(S)) / (d0 + a p(S))`` of every prefix ``S`` of ``order`` (incl. empty)."""
    cw = np.concatenate([[0.0], np.cumsum(w[order])])
    cp = np.concatenate([[0.0], np.cumsum(p[order])])
    return (n0 + a * cw) / (d0 + a * cp), cp


def _staircase_setup(cone: Staircases, obj: Objective):
    P = obj.prior
    U, G = np.asarray(cone.support, dtype=int), np.asarray(cone.ground, dtype=int)
    E = math.exp(cone.eps)
    s = np.zeros(len(P))
    s[U] = P[U]
    return P, U, G, E, E - 1.0, s, float(P[U].sum())


def _zero_prior_staircases(cone: Staircases, obj: Objective, d: np.ndarray, top: int) -> Priced:
    """A piece where the prior is 0 on the whole support: ``mu = 0`` on every ray.

    Normalised by ``s = 1_U``: ``max_S -(d_U + a d(S)) / (|U| + a |S|)`` is
    linear-fractional, so the best ``S`` is a prefix of the inputs by increasing ``d``.
    """
    k = len(obj.prior)
    U, G = np.asarray(cone.support, dtype=int), np.asarray(cone.ground, dtype=int)
    a = math.exp(cone.eps) - 1.0
    s = np.zeros(k)
    s[U] = 1.0
    order = _ratio_order(-d[G], np.ones(len(G)))
    vals, _ = _prefix_fractions(-float(d[U].sum()), float(len(U)), -d[G], np.ones(len(G)), a, order)
    col = _Collector(top)
    for j in np.argsort(-vals)[:top]:
        S = G[order[:j]]
        col.offer(float(vals[j]), S.tobytes(), lambda S=S: cone.ray(k, S))
    best = float(vals.max())
    return _finish(obj, col, d, s, best + _safety(best, *d[U]), float(len(U)), True, 1, k)


def price_staircase_bayes(cone: Staircases, obj: Objective, d: np.ndarray, *, floor: float = 0.0,
                          max_nodes: int | None = None, top: int = 10) -> Priced:
    """Exact pricing of the Bayes risk over staircases: one sort per decision.

    ``mu(v) = max_xh -sum_x P(x) L(x, xh) v_x``, so the reduced value of ``S`` is the
    maximum over ``xh`` of ``(n_xh + a w_xh(S)) / (P(U) + a P(S))`` with
    ``w_xh[x] = -(P(x) L(x, xh) + d_x)``: a linear-fractional 0/1 problem whose optimum
    is a prefix in the order of ``w_xh[x] / P(x)`` (Dinkelbach).

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt._problem import Objective
    >>> k = 4
    >>> o = Objective("bayes_risk", np.full(k, 0.25), loss=1 - np.eye(k))
    >>> cone = Staircases(np.arange(k), np.arange(k), 1.0)
    >>> r = price_staircase_bayes(cone, o, np.zeros(k))
    >>> r.exact, round(r.upper, 6), round(-3 / (np.e + 3), 6)   # max_x P(x) v_x / (P·v) - 1 at S = {x}
    (True, -0.524633, -0.524633)
    """
    P, U, G, E, a, s, PU = _staircase_setup(cone, obj)
    k = len(P)
    if PU <= 0:
        return _zero_prior_staircases(cone, obj, d, top)
    L = obj.loss
    ell = P[:, None] * L  # ell[x, xh]
    n0 = -(ell[U].sum(axis=0) + d[U].sum())  # (k,)
    W = -(ell[G] + d[G][:, None])  # (|G|, k)
    pG = P[G]
    col = _Collector(top)
    best = -math.inf
    for xh in range(k):
        order = _ratio_order(W[:, xh], pG)
        vals, _ = _prefix_fractions(float(n0[xh]), PU, W[:, xh], pG, a, order)
        j = int(np.argmax(vals))
        best = max(best, float(vals[j]))
        S = np.sort(G[order[:j]])
        col.offer(float(vals[j]), S.tobytes(), lambda S=S: cone.ray(k, S))
    return _finish(obj, col, d, s, best + _safety(best, PU, *n0), PU, True, k, k)


def _envelope_search(oracle, lo: float, hi: float, floor: float, max_nodes: int | None, col_best):
    """Eisner-Severance search for ``max_l (E(l) - l^2)`` over ``[lo, hi]``.

    ``oracle(l)`` returns ``(E, y, z)``: the envelope's value at ``l`` and the line
    ``2 l y - z`` attaining it (the oracle also records columns). ``E`` is convex, so
    on an interval between two evaluated points it lies under the chord: the interval
    is pruned when the chord's maximum of ``chord(l) - l^2`` is at most
    ``max(best, floor)``. Returns ``(upper, nodes, exact)``.
    """
    def chord_max(l1, e1, l2, e2):
        if l2 <= l1:
            return e1 - l1 * l1
        beta = (e2 - e1) / (l2 - l1)
        alpha = e1 - beta * l1
        lm = min(max(beta / 2, l1), l2)
        return alpha + beta * lm - lm * lm + _safety(e1, e2, l1 * l1, l2 * l2)

    e_lo, y_lo, z_lo = oracle(lo)
    e_hi, y_hi, z_hi = oracle(hi)
    nodes = 2
    pruned = -math.inf
    heap = [(-chord_max(lo, e_lo, hi, e_hi), lo, e_lo, y_lo, z_lo, hi, e_hi, y_hi, z_hi)]
    exact = True
    while heap:
        neg, l1, e1, y1, z1, l2, e2, y2, z2 = heapq.heappop(heap)
        ub = -neg
        if ub <= max(col_best(), floor):
            pruned = max(pruned, ub)
            continue
        if _budget_spent(max_nodes, nodes, col_best(), ub):
            heapq.heappush(heap, (neg, l1, e1, y1, z1, l2, e2, y2, z2))
            exact = False
            break
        if y2 - y1 <= 1e-15 * max(1.0, abs(y1), abs(y2)) or l2 - l1 <= 1e-13 * max(1.0, abs(l1), abs(l2)):
            # one line on the whole interval (or an interval at float resolution): the
            # chord bound is the best this interval holds
            pruned = max(pruned, ub)
            continue
        lm = (z2 - z1) / (2.0 * (y2 - y1))
        if not (l1 < lm < l2):
            lm = 0.5 * (l1 + l2)
        em, ym, zm = oracle(lm)
        nodes += 1
        for args in ((l1, e1, y1, z1, lm, em, ym, zm), (lm, em, ym, zm, l2, e2, y2, z2)):
            heapq.heappush(heap, (-chord_max(args[0], args[1], args[4], args[5]), *args))
    if heap:
        pruned = max(pruned, max(-h[0] for h in heap))
    return pruned, nodes, exact


def price_staircase_mmse(cone: Staircases, obj: Objective, d: np.ndarray, *, floor: float = 0.0,
                         max_nodes: int | None = None, top: int = 10) -> Priced:
    """Exact pricing of the MMSE over staircases (upper envelope in ``l``; module doc).

    For fixed ``l`` the best ``S`` for ``(2 l c·v - d·v) / (P·v)`` is a prefix in the
    order of ``2 l f_x - d_x / P_x`` (``c = f P``); every prefix of every order
    evaluated is scored with the true ``y^2 - z`` (``y = c·v/P·v``, ``z = d·v/P·v``).

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt._problem import Objective
    >>> o = Objective("mmse", np.full(3, 1 / 3), values=np.array([0.0, 1.0, 2.0]))
    >>> r = price_staircase_mmse(Staircases(np.arange(3), np.arange(3), 1.0), o, np.zeros(3))
    >>> r.exact, r.columns.shape[0]
    (True, 3)
    """
    P, U, G, E, a, s, PU = _staircase_setup(cone, obj)
    k = len(P)
    if PU <= 0:
        return _zero_prior_staircases(cone, obj, d, top)
    c = obj.values * P
    pG, cG, dG = P[G], c[G], d[G]
    cU, dU = float(c[U].sum()), float(d[U].sum())
    col = _Collector(top)

    def oracle(lam: float):
        w = 2.0 * lam * cG - dG
        order = _ratio_order(w, pG)
        cw = np.concatenate([[0.0], np.cumsum(w[order])])
        cp = np.concatenate([[0.0], np.cumsum(pG[order])])
        cc = np.concatenate([[0.0], np.cumsum(cG[order])])
        cd = np.concatenate([[0.0], np.cumsum(dG[order])])
        den = PU + a * cp
        lin = (2.0 * lam * cU - dU + a * cw) / den
        y = (cU + a * cc) / den
        z = (dU + a * cd) / den
        r = y * y - z
        j = int(np.argmax(lin))
        for i in np.argsort(-r)[: col.top]:
            if r[i] > col.threshold:
                S = np.sort(G[order[:i]])
                col.offer(float(r[i]), S.tobytes(), lambda S=S: cone.ray(k, S))
        return float(lin[j]), float(y[j]), float(z[j])

    pos = P[G] > 0
    fv = obj.values[G][pos] if pos.any() else np.zeros(1)
    fU = obj.values[U][P[U] > 0]
    lo = float(min(fv.min(), fU.min()))
    hi = float(max(fv.max(), fU.max()))
    if hi <= lo:
        hi = lo + 1.0
    upper, nodes, exact = _envelope_search(oracle, lo, hi, floor, max_nodes, lambda: col.best)
    upper = max(upper, col.best)
    return _finish(obj, col, d, s, upper, PU, exact, nodes, k)


# -- registry ---------------------------------------------------------------------------------


def _pricers() -> dict[tuple[str, object], Callable[..., Priced]]:
    """``(cone family, objective type) -> pricer`` (imported late: the pricers' modules use this one)."""
    from ...objectives import BAYES_RISK, HISTOGRAM_MSE, MMSE, MUTUAL_INFORMATION
    from ._pricing_lip import price_lip_bayes, price_lip_mmse, price_lip_separable
    from ._pricing_sep import price_staircase_separable

    return {
        ("staircases", MMSE): price_staircase_mmse,
        ("staircases", BAYES_RISK): price_staircase_bayes,
        ("staircases", HISTOGRAM_MSE): price_staircase_separable,
        ("staircases", MUTUAL_INFORMATION): price_staircase_separable,
        ("lip", MMSE): price_lip_mmse,
        ("lip", BAYES_RISK): price_lip_bayes,
        ("lip", HISTOGRAM_MSE): price_lip_separable,
        ("lip", MUTUAL_INFORMATION): price_lip_separable,
    }


def cone_family(cone) -> str:
    return "staircases" if isinstance(cone, Staircases) else "lip"


def price(cone, obj: Objective, d: np.ndarray, **options) -> Priced:
    """Dispatch to the pricer of ``(cone family, objective kind)``.

    Examples
    --------
    >>> import numpy as np
    >>> o = Objective("mutual_information", np.full(3, 1 / 3))
    >>> r = price(Staircases(np.arange(3), np.arange(3), 1.0), o, np.zeros(3))
    >>> r.exact, r.columns.shape[0]
    (True, 3)
    """
    return _pricers()[(cone_family(cone), obj.type)](cone, obj, d, **options)


def priced(obj: Objective) -> bool:
    """Whether every cone family has an exact pricer for ``obj``'s type (column generation applies)."""
    table = _pricers()
    return all((f, obj.type) in table for f, _ in table)
