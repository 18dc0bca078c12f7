"""The pieces every exact pricer shares (:mod:`mechopt.solvers.free._pricing`).

The cones (:class:`Staircases`, :class:`LipSlice`), the result type (:class:`Priced`),
the collector of the best columns, best-first branch and bound with its node budget and
deadline, the linear-fractional prefixes of staircases and the Eisner-Severance envelope
search. The pricers themselves live in :mod:`._pricing` (staircases: MMSE, Bayes risk),
:mod:`._pricing_sep` (staircases: separable) and :mod:`._pricing_lip` (LIP slices).

May import: numpy and the measures layer (:mod:`mechopt.objectives`, :mod:`mechopt._problem`).
"""
from __future__ import annotations

import contextvars
import heapq
import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...objectives import Objective, column_utility

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


class Collector:
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


def rescore(obj: Objective, col: Collector, d: np.ndarray, s: np.ndarray, upper: float, mass: float,
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


def safety_margin(*scale: float) -> float:
    """A margin covering float rounding in the bounds (relative 1e-12 of the terms)."""
    return 1e-12 * max(1e-300, *[abs(v) for v in scale])


# -- staircases: linear-fractional prefixes -----------------------------------------------


def ratio_order(w: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Order of ``w / p`` descending, with ``p = 0`` items first (w > 0) or last (w <= 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        key = np.where(p > 0, w / np.where(p > 0, p, 1.0), np.where(w > 0, np.inf, -np.inf))
    return np.argsort(-key, kind="stable")


def prefix_fractions(n0: float, d0: float, w: np.ndarray, p: np.ndarray, a: float, order: np.ndarray):
    """Values ``(n0 + a w(S)) / (d0 + a p(S))`` of every prefix ``S`` of ``order`` (incl. empty)."""
    cw = np.concatenate([[0.0], np.cumsum(w[order])])
    cp = np.concatenate([[0.0], np.cumsum(p[order])])
    return (n0 + a * cw) / (d0 + a * cp), cp


def staircase_setup(cone: Staircases, obj: Objective):
    P = obj.prior
    U, G = np.asarray(cone.support, dtype=int), np.asarray(cone.ground, dtype=int)
    E = math.exp(cone.eps)
    s = np.zeros(len(P))
    s[U] = P[U]
    return P, U, G, E, E - 1.0, s, float(P[U].sum())


def zero_prior_staircases(cone: Staircases, obj: Objective, d: np.ndarray, top: int) -> Priced:
    """A piece where the prior is 0 on the whole support: ``mu = 0`` on every ray.

    Normalised by ``s = 1_U``: ``max_S -(d_U + a d(S)) / (|U| + a |S|)`` is
    linear-fractional, so the best ``S`` is a prefix of the inputs by increasing ``d``.
    """
    k = len(obj.prior)
    U, G = np.asarray(cone.support, dtype=int), np.asarray(cone.ground, dtype=int)
    a = math.exp(cone.eps) - 1.0
    s = np.zeros(k)
    s[U] = 1.0
    order = ratio_order(-d[G], np.ones(len(G)))
    vals, _ = prefix_fractions(-float(d[U].sum()), float(len(U)), -d[G], np.ones(len(G)), a, order)
    col = Collector(top)
    for j in np.argsort(-vals)[:top]:
        S = G[order[:j]]
        col.offer(float(vals[j]), S.tobytes(), lambda S=S: cone.ray(k, S))
    best = float(vals.max())
    return rescore(obj, col, d, s, best + safety_margin(best, *d[U]), float(len(U)), True, 1, k)


def envelope_search(oracle, lo: float, hi: float, floor: float, max_nodes: int | None, col_best):
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
        return alpha + beta * lm - lm * lm + safety_margin(e1, e2, l1 * l1, l2 * l2)

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
