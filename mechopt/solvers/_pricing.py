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

Every pricer has the signature ``pricer(cone, obj, d, *, floor=0.0, max_nodes=None,
top=10) -> Priced``: ``floor`` is the reduced value below which columns are of no
interest (the search prunes there), ``max_nodes`` caps the search.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .._objectives import column_utility
from .._problem import Objective

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


def _budget_spent(max_nodes: int | None, nodes: int, best: float, top_bound: float) -> bool:
    """A search may stop early once past its node budget *and* holding columns worth at
    least half of the best bound still open (so an early stop still leaves a useful
    bound: the largest open bound, at most twice the best column found)."""
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


# -- LIP slices: continuous knapsacks ---------------------------------------------------------


def _knapsack_lip(a: np.ndarray, P: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """``argmax a·v  s.t.  P·v = 1, lo <= v <= hi`` (continuous knapsack, by sorting).

    Returns ``(v, j)`` with ``j`` the coordinate strictly between its bounds (or -1),
    or ``(None, -1)`` when the box misses the hyperplane.
    """
    v = lo.copy()
    free = P <= 0
    v[free & (a > 0)] = hi[free & (a > 0)]
    budget = 1.0 - float(P @ lo)
    cap = P * (hi - lo)
    if budget < -1e-15 or budget > cap[~free].sum() + 1e-15:
        return None, -1
    idx = np.flatnonzero(~free)
    order = idx[np.argsort(-(a[idx] / P[idx]), kind="stable")]
    cum = np.cumsum(cap[order])
    n = int(np.searchsorted(cum, budget, side="left"))
    full = order[:n]
    v[full] = hi[full]
    if n < len(order):
        j = int(order[n])
        rest = budget - (cum[n - 1] if n else 0.0)
        v[j] = lo[j] + max(0.0, rest) / P[j]
        if v[j] >= hi[j]:
            v[j] = hi[j]
        if lo[j] < v[j] < hi[j]:
            return v, j
    return v, -1


def _lip_setup(cone: LipSlice, obj: Objective):
    P = np.asarray(cone.prior, dtype=float)
    k = len(P)
    lo, hi = math.exp(-cone.eps), math.exp(cone.eps)
    return P, k, np.full(k, lo), np.full(k, hi)


def price_lip_bayes(cone: LipSlice, obj: Objective, d: np.ndarray, *, floor: float = 0.0,
                    max_nodes: int | None = None, top: int = 10) -> Priced:
    """Exact pricing of the Bayes risk on a LIP slice: one continuous knapsack per decision.

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt._problem import Objective
    >>> P = np.array([0.5, 0.3, 0.2])
    >>> o = Objective("bayes_risk", P, loss=1 - np.eye(3))
    >>> price_lip_bayes(LipSlice(P, 1.0), o, np.zeros(3)).exact
    True
    """
    P, k, lo, hi = _lip_setup(cone, obj)
    ell = P[:, None] * obj.loss
    col = _Collector(top)
    best = -math.inf
    for xh in range(k):
        a = -(ell[:, xh] + d)
        v, _ = _knapsack_lip(a, P, lo, hi)
        val = float(a @ v)
        best = max(best, val)
        col.offer(val, np.round(v, 13).tobytes(), lambda v=v: v)
    return _finish(obj, col, d, P, best + _safety(best, *d), 1.0, True, k, k)


def price_lip_mmse(cone: LipSlice, obj: Objective, d: np.ndarray, *, floor: float = 0.0,
                   max_nodes: int | None = None, top: int = 10) -> Priced:
    """Exact pricing of the MMSE on a LIP slice (upper envelope in ``l`` of knapsacks).

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt._problem import Objective
    >>> P = np.array([0.5, 0.3, 0.2])
    >>> o = Objective("mmse", P, values=np.array([0.0, 1.0, 2.0]))
    >>> price_lip_mmse(LipSlice(P, 1.0), o, np.zeros(3)).exact
    True
    """
    P, k, lo, hi = _lip_setup(cone, obj)
    c = obj.values * P
    col = _Collector(top)

    def oracle(lam: float):
        a = 2.0 * lam * c - d
        v, _ = _knapsack_lip(a, P, lo, hi)
        y, z = float(c @ v), float(d @ v)
        col.offer(y * y - z, np.round(v, 13).tobytes(), lambda v=v: v)
        return float(a @ v), y, z

    pos = P > 0
    f = obj.values[pos]
    lo_l, hi_l = float(f.min()), float(f.max())
    if hi_l <= lo_l:
        hi_l = lo_l + 1.0
    upper, nodes, exact = _envelope_search(oracle, lo_l, hi_l, floor, max_nodes, lambda: col.best)
    upper = max(upper, col.best)
    return _finish(obj, col, d, P, upper, 1.0, exact, nodes, k)


# -- separable objectives: histogram MSE and mutual information ---------------------------


def _phi(kind: str, P: np.ndarray, t: np.ndarray | float) -> np.ndarray:
    """``phi_x(t)``: the objective on the slice is ``sum_x phi_x(v_x)`` (``P·v = 1``)."""
    t = np.asarray(t, dtype=float)
    if kind == "histogram_mse":
        return (P * t) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(t > 0, P * t * np.log(np.where(t > 0, t, 1.0)), 0.0)


def _staircase_sep_terms(kind: str, P: np.ndarray, U: np.ndarray, G: np.ndarray, d: np.ndarray, E: float,
                         eps: float):
    """``A(t)`` and ``w_x(t)`` with ``value(S) = A(t) + sum_{x in S} w_x(t)``, ``t = 1/(P·v)``.

    Both are convex in ``t`` (every ``phi_x`` is convex and ``t -> phi_x(E t)`` too).
    """
    a = E - 1.0
    pG, dG = P[G], d[G]
    PU, dU = float(P[U].sum()), float(d[U].sum())
    if kind == "histogram_mse":
        HU = float((P[U] ** 2).sum())
        q = (E * E - 1.0) * pG**2

        def A(t):
            return HU * t * t - dU * t

        def w(t):
            return q * t * t - a * dG * t
    else:
        def A(t):
            return PU * t * math.log(t) - dU * t

        def w(t):
            return pG * t * (E * eps + a * math.log(t)) - a * dG * t
    return A, w


def _staircase_sep_value(kind: str, P: np.ndarray, U: np.ndarray, d: np.ndarray, E: float, eps: float,
                         pi: np.ndarray, sq: np.ndarray, dl: np.ndarray) -> np.ndarray:
    """Exact reduced value of raised sets with sums ``pi = P(S)``, ``sq = sum P^2``, ``dl = d(S)``."""
    a = E - 1.0
    PU, dU = float(P[U].sum()), float(d[U].sum())
    u = PU + a * pi
    if kind == "histogram_mse":
        HU = float((P[U] ** 2).sum())
        return (HU + (E * E - 1.0) * sq) / (u * u) - (dU + a * dl) / u
    return -np.log(u) + (E * eps * pi - dU - a * dl) / u


def _staircase_mi_bnb(cone: Staircases, obj: Objective, d: np.ndarray, floor: float, max_nodes: int | None,
                      top: int) -> Priced:
    """Branch-and-bound for mutual information over staircases (exact in ``P(S)``).

    The reduced value of ``S`` depends on ``pi = P(S)`` and ``delta = d(S)`` only,
    ``F = -log u + (E eps pi - d(U) - a delta) / u`` with ``u = P(U) + a pi``, and
    decreases in ``delta``. A node's sets ``I ∪ T`` (``T`` among the free items) have
    their points ``(P(T), d(T))`` above the lower convex hull of those points, whose
    vertices are the prefixes of the free items sorted by ``d_x / P_x``. On a hull edge
    ``F = C1 - C0/u - log u``, unimodal in ``u`` with its top at ``u = C0``: the node's
    bound is the largest of these closed-form maxima, reached at a vertex (a real set:
    the node is solved) or inside an edge (branch on that edge's item).
    """
    P, U, G, E, a, s, PU = _staircase_setup(cone, obj)
    k = len(P)
    eps = float(cone.eps)
    Ee = E * eps
    pG, dG = P[G], d[G]
    dU = float(d[U].sum())
    zero = pG <= 0
    base_in = zero & (dG < 0)
    col = _Collector(top)
    order = np.flatnonzero(~zero)[np.argsort(dG[~zero] / pG[~zero], kind="stable")]

    def F(pi, dl):
        u = PU + a * pi
        return -np.log(u) + (Ee * pi - dU - a * dl) / u

    def offer(mask, val=None):
        if val is None:
            val = float(F(pG[mask].sum(), dG[mask].sum()))
        if val > col.threshold:
            S = G[mask]
            col.offer(val, np.packbits(mask).tobytes(), lambda S=S: cone.ray(k, S))

    def bound(inm, outm):
        free = order[~(inm[order] | outm[order])]
        pi0, d0 = float(pG[inm].sum()), float(dG[inm].sum())
        cp = pi0 + np.concatenate([[0.0], np.cumsum(pG[free])])
        cd = d0 + np.concatenate([[0.0], np.cumsum(dG[free])])
        vert = F(cp, cd)
        jv = int(np.argmax(vert))
        best_v = float(vert[jv])
        if len(free) == 0:
            return best_v, free, jv, -1, best_v
        slope = dG[free] / pG[free]
        u0, u1 = PU + a * cp[:-1], PU + a * cp[1:]
        C1 = (Ee - a * slope) / a
        C0 = C1 * PU - a * slope * cp[:-1] + a * cd[:-1] + dU
        us = np.clip(C0, u0, u1)
        inner = C1 - C0 / us - np.log(us)
        je = int(np.argmax(inner))
        if inner[je] > best_v and u0[je] < us[je] < u1[je]:
            return float(inner[je]), free, jv, je, best_v
        return best_v, free, jv, -1, best_v

    nodes = 0
    pruned = -math.inf
    heap: list = []
    counter = 0

    def push(inm, outm):
        nonlocal counter, pruned
        ub, free, jv, je, vbest = bound(inm, outm)
        mask = inm.copy()
        mask[free[:jv]] = True
        offer(mask, vbest)
        if je >= 0:
            for n_in in (je, je + 1):
                m2 = inm.copy()
                m2[free[:n_in]] = True
                offer(m2)
        ub += _safety(ub, Ee, dU, float(np.abs(dG).sum()))
        if ub <= max(col.best, floor) or je < 0:
            pruned = max(pruned, ub)  # pruned, or solved: the bound is a real set's value
            return
        counter += 1
        heapq.heappush(heap, (-ub, counter, inm, outm, int(free[je])))

    push(base_in.copy(), zero & ~base_in)
    exact = True
    while heap:
        neg, _, inm, outm, j = heapq.heappop(heap)
        ub = -neg
        if ub <= max(col.best, floor):
            pruned = max(pruned, ub)
            continue
        if _budget_spent(max_nodes, nodes, col.best, ub):
            heapq.heappush(heap, (neg, 0, inm, outm, j))
            exact = False
            break
        nodes += 1
        i1, o1 = inm.copy(), outm.copy()
        i1[j] = True
        o1[j] = True
        push(i1, outm)
        push(inm, o1)
    if heap:
        pruned = max(pruned, max(-h[0] for h in heap))
    return _finish(obj, col, d, s, max(pruned, col.best), PU, exact, nodes, k)


class _Lagrangian:
    """``f_i(mu) = c_i + mu r_i(mu) + sum_x max(0, w_i[x] - mu p_x)`` for two ends ``i``.

    ``r_i(mu) = rho_i`` for ``mu >= 0`` and ``l_i`` for ``mu < 0``; each ``f_i`` is convex
    piecewise linear in ``mu`` and evaluated in ``O(log n)`` per point from sorted
    ratios and cumulative sums.
    """

    def __init__(self, c, rho, l, W, p):
        self.c, self.rho, self.l = np.asarray(c, float), np.asarray(rho, float), np.asarray(l, float)
        self.W, self.p = W, p
        self.q, self.cw, self.cp = [], [], []
        for w in W:
            q = w / p
            o = np.argsort(-q, kind="stable")
            self.q.append(-q[o])  # ascending
            self.cw.append(np.concatenate([[0.0], np.cumsum(w[o])]))
            self.cp.append(np.concatenate([[0.0], np.cumsum(p[o])]))

    def f(self, i: int, mus: np.ndarray) -> np.ndarray:
        m = np.searchsorted(self.q[i], -mus, side="left")  # items with ratio > mu
        r = np.where(mus >= 0, self.rho[i], self.l[i])
        return self.c[i] + mus * r + self.cw[i][m] - mus * self.cp[i][m]

    def minmax(self) -> tuple[float, float]:
        """``(min_mu max_i f_i(mu), mu)``: the minimum is at a breakpoint or a crossing."""
        mus = np.unique(np.concatenate([-self.q[0], -self.q[1], [0.0]]))
        F = np.vstack([self.f(0, mus), self.f(1, mus)])
        cand = [mus]
        if len(mus) > 1:
            g = F[0] - F[1]
            sw = np.flatnonzero(np.sign(g[:-1]) * np.sign(g[1:]) < 0)
            if len(sw):
                ma, mb = mus[sw], mus[sw + 1]
                cand.append(ma + (mb - ma) * g[sw] / (g[sw] - g[sw + 1]))
        allm = np.concatenate(cand)
        G = np.maximum(self.f(0, allm), self.f(1, allm))
        i = int(np.argmin(G))
        return float(G[i]), float(allm[i])

    def child_bounds(self, mu: float) -> tuple[np.ndarray, np.ndarray]:
        """Bounds at ``mu`` of the children that force each item out / in."""
        fm = np.array([self.f(0, np.array([mu]))[0], self.f(1, np.array([mu]))[0]])
        red = self.W - mu * self.p[None, :]  # (2, n)
        out = np.max(fm[:, None] - np.maximum(0.0, red), axis=0)
        inn = np.max(fm[:, None] - np.maximum(0.0, -red), axis=0)
        return out, inn


#: below this many free items a node is finished by scoring all their subsets
ENUMERATE_FREE = 10


def _hist_parametric_bound(pf: np.ndarray, df: np.ndarray, H: float, D: float, u_lo: float, u_hi: float,
                           a: float, E: float):
    """``max_u [H/u^2 - D/u + (a/u) K(theta(u), pi(u))]`` exactly, over ``[u_lo, u_hi]``.

    ``K(theta, pi) = max {theta sigma(z) - delta(z) : P·z = pi, 0 <= z <= 1}`` is the
    continuous knapsack of the free items (``sigma = sum z P^2``, ``delta = sum z d``),
    ``theta(u) = (E + 1)/u`` and ``pi(u) = (u - u_lo)/a``. The greedy order (by
    ``theta P_x - d_x/P_x``) changes only where two items' keys cross, so ``[u_lo, u_hi]``
    splits into cells of one order; inside a cell the capacity crosses prefix sums, and
    between two crossings (one fractional item) the bound is ``alpha/u^2 + beta/u + gamma``,
    maximised in closed form. Returns ``(bound, order, m, u)``: the best piece has the
    first ``m`` items of ``order`` whole and item ``order[m]`` fractional, unless it is
    attained at a prefix (``u`` there; then ``order[m]`` is not fractional and ``m`` counts
    the prefix).
    """
    n = len(pf)
    g = df / pf
    th_lo, th_hi = (E + 1.0) / u_hi, (E + 1.0) / u_lo
    dP = pf[:, None] - pf[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = (g[:, None] - g[None, :]) / dP
    iu = np.triu_indices(n, 1)
    cr = cross[iu]
    cr = np.unique(cr[np.isfinite(cr) & (cr > th_lo) & (cr < th_hi)])
    ths = np.concatenate([[th_lo], cr, [th_hi]])
    mids = 0.5 * (ths[:-1] + ths[1:])
    keys = mids[:, None] * pf[None, :] - g[None, :]
    orders = np.argsort(-keys, axis=1, kind="stable")
    P_o, d_o = pf[orders], df[orders]
    zc = np.zeros((len(mids), 1))
    cP = np.hstack([zc, np.cumsum(P_o, axis=1)])
    cS = np.hstack([zc, np.cumsum(P_o**2, axis=1)])
    cD = np.hstack([zc, np.cumsum(d_o, axis=1)])
    # cell c spans u in [(E+1)/ths[c+1], (E+1)/ths[c]]; capacity pi(u) = (u - u_lo)/a
    ua_c = (E + 1.0) / ths[1:]
    ub_c = (E + 1.0) / ths[:-1]
    pa = np.clip((ua_c - u_lo) / a, 0.0, cP[:, -1])
    pb = np.clip((ub_c - u_lo) / a, 0.0, cP[:, -1])
    # the pieces of each cell: prefix index m with cP[m] < pi < cP[m+1] for pi in [pa, pb]
    m_a = np.clip((cP <= pa[:, None]).sum(axis=1) - 1, 0, n - 1)
    m_b = np.maximum(np.clip((cP < pb[:, None]).sum(axis=1) - 1, 0, n - 1), m_a)
    counts = m_b - m_a + 1
    cell = np.repeat(np.arange(len(mids)), counts)
    m = np.repeat(m_a, counts) + (np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts))
    j = orders[cell, m]
    p0, s0, d0 = cP[cell, m], cS[cell, m], cD[cell, m]
    Pj, dj = pf[j], df[j]
    # the piece's u-range: the cell's, cut to where the capacity lies in [cP[m], cP[m+1]]
    u_a = np.maximum(ua_c[cell], u_lo + a * p0)
    u_b = np.minimum(ub_c[cell], u_lo + a * (p0 + Pj))
    ok = u_b >= u_a
    # sigma = s0 + (pi - p0) Pj, delta = d0 + (pi - p0) dj/Pj, pi = (u - u_lo)/a
    rs, rd = Pj, dj / Pj
    sig0 = s0 - rs * (p0 + u_lo / a)
    del0 = d0 - rd * (p0 + u_lo / a)
    b = E * E - 1.0
    alpha = H + b * sig0
    beta = b * rs / a - D - a * del0
    gamma = -rd  # -(a/u) * (rd u / a)
    def F(u):
        return alpha / (u * u) + beta / u + gamma
    with np.errstate(divide="ignore", invalid="ignore"):
        us = np.where(beta != 0, -2.0 * alpha / beta, u_a)
    us = np.where((us > u_a) & (us < u_b), us, u_a)
    cand = np.vstack([F(u_a), F(u_b), F(us)])
    cand[:, ~ok] = -np.inf
    which = np.argmax(cand, axis=0)
    vals = cand[which, np.arange(len(j))]
    i = int(np.argmax(vals))
    u_best = [u_a, u_b, us][int(which[i])][i]
    # attained at a prefix (an end of the piece where the capacity is cP[m] or cP[m+1])?
    pi_best = (u_best - u_lo) / a
    c_i, m_i = int(cell[i]), int(m[i])
    tol = 1e-13 * max(1.0, cP[c_i, -1])
    if abs(pi_best - cP[c_i, m_i]) <= tol:
        return float(vals[i]), orders[c_i], m_i, -1.0
    if abs(pi_best - cP[c_i, m_i + 1]) <= tol:
        return float(vals[i]), orders[c_i], m_i + 1, -1.0
    return float(vals[i]), orders[c_i], m_i, float(u_best)


def _staircase_hist_bnb(cone: Staircases, obj: Objective, d: np.ndarray, floor: float, max_nodes: int | None,
                        top: int) -> Priced:
    """Branch-and-bound for histogram MSE over staircases, exact in ``u = P·v``.

    The reduced value of ``S`` is ``(H + b sigma)/u^2 - (D + a delta)/u`` with
    ``u = P(U) + a P(S)``, ``sigma = sum_S P_x^2``, ``delta = d(S)``, ``b = E^2 - 1``. For
    fixed ``u`` it is linear in ``(sigma, delta)``, so relaxing the free items of a node
    to a continuous knapsack and maximising over ``u`` exactly
    (:func:`_hist_parametric_bound`) bounds the node; the bound is a real set's value
    when the knapsack has no fractional item there (the node is solved), else the
    search branches on that item. Nodes with at most :data:`ENUMERATE_FREE` free items
    are finished by scoring every subset.
    """
    kind = obj.kind
    P, U, G, E, a, s, PU = _staircase_setup(cone, obj)
    k = len(P)
    eps = float(cone.eps)
    pG, dG = P[G], d[G]
    zero = pG <= 0
    base_in = zero & (dG < 0)
    col = _Collector(top)
    HU = float((P[U] ** 2).sum())
    dU = float(d[U].sum())
    b = E * E - 1.0

    def value_sets(pi, sq, dl):
        return _staircase_sep_value(kind, P, U, d, E, eps, pi, sq, dl)

    def offer(mask, val=None):
        if val is None:
            val = float(value_sets(np.array([pG[mask].sum()]), np.array([(pG[mask] ** 2).sum()]),
                                   np.array([dG[mask].sum()]))[0])
        if val > col.threshold:
            S = G[mask]
            col.offer(val, np.packbits(mask).tobytes(), lambda S=S: cone.ray(k, S))

    def enumerate_free(inm, fi):
        n = len(fi)
        bits = ((np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1).astype(float)
        pi = float(pG[inm].sum()) + bits @ pG[fi]
        sq = float((pG[inm] ** 2).sum()) + bits @ (pG[fi] ** 2)
        dl = float(dG[inm].sum()) + bits @ dG[fi]
        vals = value_sets(pi, sq, dl)
        for i in np.argsort(-vals)[:top]:
            if vals[i] > col.threshold:
                mask = inm.copy()
                mask[fi[bits[i] > 0]] = True
                offer(mask, float(vals[i]))
        return float(vals.max())

    heap: list = []
    counter = 0
    nodes = 0
    pruned = -math.inf

    def push(inm, outm):
        nonlocal counter, pruned
        fi = np.flatnonzero(~(inm | outm | zero))
        if len(fi) <= ENUMERATE_FREE:
            best_here = enumerate_free(inm, fi)
            pruned = max(pruned, best_here + _safety(best_here, HU, dU))
            return
        pi_in = float(pG[inm].sum())
        H = HU + b * float((pG[inm] ** 2).sum())
        D = dU + a * float(dG[inm].sum())
        u_lo = PU + a * pi_in
        u_hi = u_lo + a * float(pG[fi].sum())
        ub, order, m, u = _hist_parametric_bound(pG[fi], dG[fi], H, D, u_lo, u_hi, a, E)
        mask = inm.copy()
        mask[fi[order[:m]]] = True
        offer(mask)
        if u >= 0:
            m2 = mask.copy()
            m2[fi[order[m]]] = True
            offer(m2)
        ub += _safety(ub, H / (u_lo * u_lo), D / u_lo, float(np.abs(dG).sum()))
        if ub <= max(col.best, floor) or u < 0:
            pruned = max(pruned, ub)  # pruned, or solved: the bound is a prefix set's value
            return
        counter += 1
        heapq.heappush(heap, (-ub, counter, inm, outm, int(fi[order[m]])))

    push(base_in.copy(), zero & ~base_in)
    exact = True
    while heap:
        item = heapq.heappop(heap)
        neg, _, inm, outm, j = item
        ub = -neg
        if ub <= max(col.best, floor):
            pruned = max(pruned, ub)
            continue
        if _budget_spent(max_nodes, nodes, col.best, ub):
            heapq.heappush(heap, item)
            exact = False
            break
        nodes += 1
        i1, o1 = inm.copy(), outm.copy()
        i1[j] = True
        o1[j] = True
        push(i1, outm)
        push(inm, o1)
    if heap:
        pruned = max(pruned, max(-h[0] for h in heap))
    return _finish(obj, col, d, s, max(pruned, col.best), PU, exact, nodes, k)


def price_staircase_separable(cone: Staircases, obj: Objective, d: np.ndarray, *, floor: float = 0.0,
                              max_nodes: int | None = None, top: int = 10) -> Priced:
    """Branch-and-bound pricing of histogram MSE or mutual information over staircases.

    Mutual information: :func:`_staircase_mi_bnb` (items only, exact in ``P(S)``);
    histogram MSE: :func:`_staircase_hist_bnb` (items and ``t = 1/(P·v)``).

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt._problem import Objective
    >>> P = np.array([0.4, 0.3, 0.2, 0.1])
    >>> o = Objective("mutual_information", P)
    >>> r = price_staircase_separable(Staircases(np.arange(4), np.arange(4), 1.0), o, np.zeros(4))
    >>> r.exact, bool(r.upper >= r.values[0] - 1e-15)
    (True, True)
    """
    if float(obj.prior[np.asarray(cone.support, dtype=int)].sum()) <= 0:
        return _zero_prior_staircases(cone, obj, d, top)
    if obj.kind == "mutual_information":
        return _staircase_mi_bnb(cone, obj, d, floor, max_nodes, top)
    return _staircase_hist_bnb(cone, obj, d, floor, max_nodes, top)


def price_lip_separable(cone: LipSlice, obj: Objective, d: np.ndarray, *, floor: float = 0.0,
                        max_nodes: int | None = None, top: int = 10) -> Priced:
    """Branch-and-bound pricing of histogram MSE or mutual information on a LIP slice.

    On ``{P·v = 1, lo <= v <= hi}`` the reduced value is ``sum_x phi_x(v_x) - d·v`` with
    ``phi_x`` convex, so its maximum is at a vertex: every coordinate at a bound but
    one, ``j``. For ``j`` fixed, with ``S`` the coordinates at ``hi``, the value is
    ``C_j + w(S) + g_j(P(S))``: ``w_x`` is the gain of raising ``x`` and ``g_j`` (the
    term of ``v_j = (1 - lo (1 - P_j) - (hi - lo) P(S)) / P_j``) is convex, and
    ``P(S)`` must lie in ``[rho - P_j, rho]``, ``rho = (1 - lo)/(hi - lo)``, for
    ``v_j`` to stay within its bounds. Relaxing ``w(S)`` to the knapsack hull (concave,
    through the prefixes of the free items sorted by ``w_x / P_x``) leaves a function
    convex on every hull edge: its maximum is at a hull vertex (a real set: the node is
    solved) or at an end of the range (branch on the item of the edge there). One
    search covers every ``j``, best bound first.

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt._problem import Objective
    >>> P = np.array([0.5, 0.3, 0.2])
    >>> o = Objective("histogram_mse", P)
    >>> price_lip_separable(LipSlice(P, 1.0), o, np.zeros(3)).exact
    True
    """
    kind = obj.kind
    P, k, lo_v, hi_v = _lip_setup(cone, obj)
    lo, hi = float(lo_v[0]), float(hi_v[0])
    delta_v = hi - lo
    rho = (1.0 - lo) / delta_v
    col = _Collector(top)
    zero = P <= 0
    fixed = np.where(d > 0, lo, hi)  # a zero-prior coordinate only adds -d_x v_x
    const0 = float((-d * fixed)[zero].sum())
    f_lo = _phi(kind, P, np.full(k, lo)) - d * lo
    f_hi = _phi(kind, P, np.full(k, hi)) - d * hi
    w = f_hi - f_lo
    pos = np.flatnonzero(~zero)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(P > 0, w / np.where(P > 0, P, 1.0), -np.inf)
    order_all = pos[np.argsort(-ratio[pos], kind="stable")]
    base_all = float(f_lo[pos].sum()) + const0

    def vertex(j, S_mask):
        v = np.where(zero, fixed, lo)
        v[S_mask] = hi
        v[j] = (1.0 - lo * (1.0 - P[j]) - delta_v * float(P[S_mask].sum())) / P[j]
        return v

    def g(j, pi):
        vj = (1.0 - lo * (1.0 - P[j]) - delta_v * pi) / P[j]
        return _phi(kind, P[j], vj) - d[j] * vj

    def offer(j, S_mask, val):
        if val > col.threshold:
            col.offer(val, S_mask.tobytes() + int(j).to_bytes(4, "little"), lambda: vertex(j, S_mask))

    def bound(j, inm, outm):
        """(bound, fractional item or -1)."""
        order = order_all[~(inm[order_all] | outm[order_all])]
        order = order[order != j]
        C = base_all - float(f_lo[j])
        pi0, w0 = float(P[inm].sum()), float(w[inm].sum())
        cp = pi0 + np.concatenate([[0.0], np.cumsum(P[order])])
        cw = w0 + np.concatenate([[0.0], np.cumsum(w[order])])
        a_end, b_end = rho - P[j], rho
        inr = (cp >= a_end - 1e-15) & (cp <= b_end + 1e-15)
        best, frac_item = -math.inf, -1
        if inr.any():
            vals = C + cw[inr] + g(j, np.clip(cp[inr], a_end, b_end))
            i = int(np.argmax(vals))
            best = float(vals[i])
            m = int(np.flatnonzero(inr)[i])
            mask = inm.copy()
            mask[order[:m]] = True
            mask[j] = False
            offer(j, mask, best)
        for end in (a_end, b_end):
            if end <= cp[0] or end >= cp[-1]:
                continue
            m = int(np.searchsorted(cp, end, side="right")) - 1  # cp[m] <= end < cp[m + 1]
            if cp[m] >= end:
                continue
            x = order[m]
            val = C + float(cw[m]) + (end - cp[m]) * w[x] / P[x] + float(g(j, end))
            if val > best:
                best, frac_item = val, int(x)
        return best, frac_item, order, C, pi0, w0

    def fixing(j, order, C, pi0, w0, x, thr):
        """Reduced-cost fixing with the Lagrangian bound at ``mu = w_x / P_x``.

        For any ``mu``, ``L(mu) = C + w(I) + sum_F max(0, w_y - mu P_y)
        + max_{pi in range} (mu (pi - pi0) + g_j(pi))`` bounds the node (``g_j`` convex:
        the range's ends), and forcing ``y`` out (in) lowers it by ``max(0, r_y)``
        (``max(0, -r_y)``), ``r_y = w_y - mu P_y``: a child bound at most ``thr`` fixes
        ``y`` the other way. Returns ``(must_in, must_out, child bounds cut off)``.
        """
        mu = w[x] / P[x]
        r = w[order] - mu * P[order]
        lo_r = max(rho - P[j], pi0)
        hi_r = min(rho, pi0 + float(P[order].sum()))
        if lo_r > hi_r:
            return None
        ends = np.array([lo_r, hi_r])
        L = C + w0 + float(np.maximum(r, 0.0).sum()) + float(np.max(mu * (ends - pi0) + g(j, ends)))
        L += _safety(L, base_all, float(np.abs(w).sum()))
        c_out = L - np.maximum(r, 0.0)
        c_in = L - np.maximum(-r, 0.0)
        return order, c_out <= thr, c_in <= thr, c_out, c_in

    heap: list = []
    counter = 0
    nodes = 0
    pruned = -math.inf

    def push(j, inm, outm):
        nonlocal counter, pruned
        for rnd in range(6):
            ub, x, order, C, pi0, w0 = bound(j, inm, outm)
            if not math.isfinite(ub):
                return
            ub += _safety(ub, base_all, float(np.abs(w).sum()))
            thr = max(col.best, floor)
            if ub <= thr or x < 0 or rnd == 5:
                break
            fx = fixing(j, order, C, pi0, w0, x, thr)
            if fx is None:
                return
            order, must_in, must_out, c_out, c_in = fx
            if np.any(must_in & must_out):
                pruned = max(pruned, thr)
                return
            if not (must_in.any() or must_out.any()):
                break
            pruned = max(pruned, float(np.max(np.concatenate([c_out[must_in], c_in[must_out]]))))
            inm, outm = inm.copy(), outm.copy()
            inm[order[must_in]] = True
            outm[order[must_out]] = True
        if ub <= max(col.best, floor) or x < 0:
            pruned = max(pruned, ub)  # pruned, or solved at a hull vertex
            return
        counter += 1
        heapq.heappush(heap, (-ub, counter, j, inm, outm, x))

    empty = np.zeros(k, bool)
    for j in pos:
        push(int(j), empty, zero.copy())
    exact = True
    while heap:
        item = heapq.heappop(heap)
        neg, _, j, inm, outm, x = item
        ub = -neg
        if ub <= max(col.best, floor):
            pruned = max(pruned, ub)
            continue
        if _budget_spent(max_nodes, nodes, col.best, ub):
            heapq.heappush(heap, item)
            exact = False
            break
        nodes += 1
        i1, o1 = inm.copy(), outm.copy()
        i1[x] = True
        o1[x] = True
        push(j, i1, outm)
        push(j, inm, o1)
    if heap:
        pruned = max(pruned, max(-h[0] for h in heap))
    return _finish(obj, col, d, P, max(pruned, col.best), 1.0, exact, nodes, k)


# -- analytic dual points ----------------------------------------------------------------------


def lip_chord_duals(cone: LipSlice, obj: Objective) -> np.ndarray | None:
    """Dual-feasible ``d`` for a separable objective on a LIP slice, from chords.

    On ``[lo, hi]`` the convex ``phi_x`` lies under its chord ``kappa_x t + beta_x``, so on
    the slice ``mu(v) = sum_x phi_x(v_x) <= kappa·v + sum(beta) (P·v)``: ``d = kappa +
    sum(beta) P`` satisfies ``d·v >= mu(v)`` on every ray (``mu`` is homogeneous), and
    ``sum(d) = sum_x (kappa_x + beta_x)`` (the chords at ``t = 1``) bounds the optimum.
    For many inputs the bound is nearly tight: the optimal channel mixes vertices whose
    coordinates sit at the bounds. Returns ``None`` for other objectives.

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt._problem import Objective
    >>> P = np.array([0.5, 0.3, 0.2])
    >>> d = lip_chord_duals(LipSlice(P, 1.0), Objective("histogram_mse", P))
    >>> round(float(d.sum()), 6), round(0.38 * (np.e + 1 / np.e - 1), 6)   # sum P^2 (lo + hi - lo hi)
    (0.792741, 0.792741)
    """
    if obj.kind not in ("histogram_mse", "mutual_information"):
        return None
    P, k, lo_v, hi_v = _lip_setup(cone, obj)
    lo, hi = float(lo_v[0]), float(hi_v[0])
    pl, ph = _phi(obj.kind, P, np.full(k, lo)), _phi(obj.kind, P, np.full(k, hi))
    kappa = (ph - pl) / (hi - lo)
    beta = pl - kappa * lo
    # rounding: lift the chord by a relative margin so the inequality survives floats
    beta = beta + 1e-13 * (np.abs(pl) + np.abs(ph))
    return kappa + float(beta.sum()) * P


# -- registry ---------------------------------------------------------------------------------

PRICERS: dict[tuple[str, str], Callable[..., Priced]] = {
    ("staircases", "mmse"): price_staircase_mmse,
    ("staircases", "bayes_risk"): price_staircase_bayes,
    ("staircases", "histogram_mse"): price_staircase_separable,
    ("staircases", "mutual_information"): price_staircase_separable,
    ("lip", "mmse"): price_lip_mmse,
    ("lip", "bayes_risk"): price_lip_bayes,
    ("lip", "histogram_mse"): price_lip_separable,
    ("lip", "mutual_information"): price_lip_separable,
}


def cone_family(cone) -> str:
    return "staircases" if isinstance(cone, Staircases) else "lip"


def price(cone, obj: Objective, d: np.ndarray, **options) -> Priced:
    """Dispatch to the pricer of ``(cone family, objective kind)``; see :data:`PRICERS`."""
    return PRICERS[(cone_family(cone), obj.kind)](cone, obj, d, **options)
