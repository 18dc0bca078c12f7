"""Exact branch-and-bound pricing of histogram MSE and mutual information over staircases.

Part of the pricing of :mod:`mechopt.solvers.free._pricing` (see its module docstring for the reduced value,
the normalisation and the meaning of ``upper``, ``floor`` and ``max_nodes``).
"""

from __future__ import annotations

import heapq
import math
import time
from typing import Callable

import numpy as np

from ...objectives import HISTOGRAM_MSE, MUTUAL_INFORMATION, Objective, ObjectiveType
from ._ldp_neighbours import NEIGHBOURS, neighbour_masks
from ._pricing_base import (DEADLINE, Priced, Staircases, Collector, best_first, rescore, safety_margin,
                            staircase_setup, zero_prior_staircases)

# -- separable objectives: histogram MSE and mutual information ---------------------------


def _split_in_out(push: Callable) -> Callable:
    """Branch a staircase node ``(-ub, tie, inm, outm, j)`` on item ``j``: in ``S``, or out of it."""
    def branch(item):
        _, _, inm, outm, j = item
        i1, o1 = inm.copy(), outm.copy()
        i1[j] = True
        o1[j] = True
        push(i1, outm)
        push(inm, o1)
    return branch


def _with_neighbours(col: Collector, value: Callable, pG: np.ndarray, dG: np.ndarray, G: np.ndarray,
                     cone: Staircases, k: int, floor: float) -> Collector:
    """``col`` plus the best one-flip and swap neighbours of its sets (:mod:`._ldp_neighbours`)."""
    items = sorted(col.items, key=lambda it: -it[0])
    seeds = [np.unpackbits(np.frombuffer(it[2], np.uint8), count=len(pG)).astype(bool) for it in items]
    out = Collector(col.top + NEIGHBOURS)
    for val, _, key, v in items:
        out.offer(val, key, lambda v=v: v)
    for val, m in neighbour_masks(value, pG, dG, seeds, NEIGHBOURS, floor):
        S = G[m]
        out.offer(val, np.packbits(m).tobytes(), lambda S=S: cone.ray(k, S))
    return out


def _phi(kind: ObjectiveType, P: np.ndarray, t: np.ndarray | float) -> np.ndarray:
    """``phi_x(t)``: the objective on the slice is ``sum_x phi_x(v_x)`` (``P·v = 1``)."""
    t = np.asarray(t, dtype=float)
    if kind is HISTOGRAM_MSE:
        return (P * t) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(t > 0, P * t * np.log(np.where(t > 0, t, 1.0)), 0.0)


def _staircase_sep_value(kind: ObjectiveType, P: np.ndarray, U: np.ndarray, d: np.ndarray, E: float, eps: float,
                         pi: np.ndarray, sq: np.ndarray, dl: np.ndarray) -> np.ndarray:
    """Exact reduced value of raised sets with sums ``pi = P(S)``, ``sq = sum P^2``, ``dl = d(S)``."""
    a = E - 1.0
    PU, dU = float(P[U].sum()), float(d[U].sum())
    u = PU + a * pi
    if kind is HISTOGRAM_MSE:
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
    P, U, G, E, a, s, PU = staircase_setup(cone, obj)
    k = len(P)
    eps = float(cone.eps)
    Ee = E * eps
    pG, dG = P[G], d[G]
    dU = float(d[U].sum())
    zero = pG <= 0
    base_in = zero & (dG < 0)
    col = Collector(top)
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
        ub += safety_margin(ub, Ee, dU, float(np.abs(dG).sum()))
        if ub <= max(col.best, floor) or je < 0:
            pruned = max(pruned, ub)  # pruned, or solved: the bound is a real set's value
            return
        counter += 1
        heapq.heappush(heap, (-ub, counter, inm, outm, int(free[je])))

    push(base_in.copy(), zero & ~base_in)
    open_bound, exact, nodes = best_first(heap, _split_in_out(push), col, floor, max_nodes)
    pruned = max(pruned, open_bound)
    upper = max(pruned, col.best)
    col = _with_neighbours(col, lambda pi, sq, dl: F(pi, dl), pG, dG, G, cone, k, floor)
    return rescore(obj, col, d, s, upper, PU, exact, nodes, k)


#: below this many free items a node is finished by scoring all their subsets
ENUMERATE_FREE = 10


#: a node's ``u`` range with more cells of one greedy order than this is first bounded on
#: :data:`COARSE_CELLS` coarse cells, and only the coarse cells above the cut are refined
FINE_CELLS = 256
COARSE_CELLS = 32
#: exact cells are evaluated this many (cells x items) at a time (memory)
CELL_ELEMENTS = 1 << 21


def _cell_pieces(pf, df, H, D, u_lo, a, E, th_a, th_b, exact: bool):
    """The bound on each cell ``theta in [th_a[c], th_b[c]]`` split into pieces of one fractional item.

    ``exact``: the greedy order is constant on each cell and ``theta(u)`` enters exactly.
    Otherwise the order is the one at ``th_b`` and ``theta`` is over-estimated by ``th_b``
    (``K`` increases with ``theta``: ``sigma >= 0``), a valid upper bound on any cell.
    Returns ``(vals, cell, m, u_best, orders, cP)`` per piece.
    """
    n = len(pf)
    g = df / pf
    key_th = 0.5 * (th_a + th_b) if exact else th_b
    keys = key_th[:, None] * pf[None, :] - g[None, :]
    orders = np.argsort(-keys, axis=1, kind="stable")
    P_o, d_o = pf[orders], df[orders]
    zc = np.zeros((len(key_th), 1))
    cP = np.hstack([zc, np.cumsum(P_o, axis=1)])
    cS = np.hstack([zc, np.cumsum(P_o**2, axis=1)])
    cD = np.hstack([zc, np.cumsum(d_o, axis=1)])
    # cell c spans u in [(E+1)/th_b[c], (E+1)/th_a[c]]; capacity pi(u) = (u - u_lo)/a
    ua_c = (E + 1.0) / th_b
    ub_c = (E + 1.0) / th_a
    pa = np.clip((ua_c - u_lo) / a, 0.0, cP[:, -1])
    pb = np.clip((ub_c - u_lo) / a, 0.0, cP[:, -1])
    # the pieces of each cell: prefix index m with cP[m] < pi < cP[m+1] for pi in [pa, pb]
    m_a = np.clip((cP <= pa[:, None]).sum(axis=1) - 1, 0, n - 1)
    m_b = np.maximum(np.clip((cP < pb[:, None]).sum(axis=1) - 1, 0, n - 1), m_a)
    counts = m_b - m_a + 1
    cell = np.repeat(np.arange(len(key_th)), counts)
    m = np.repeat(m_a, counts) + (np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts))
    j = orders[cell, m]
    p0, s0, d0 = cP[cell, m], cS[cell, m], cD[cell, m]
    Pj, dj = pf[j], df[j]
    # the piece's u-range: the cell's, cut to where the capacity lies in [cP[m], cP[m+1]]
    u_a = np.maximum(ua_c[cell], u_lo + a * p0)
    u_b = np.minimum(ub_c[cell], u_lo + a * (p0 + Pj))
    ok = u_b >= u_a
    # sigma = sig0 + rs u/a, delta = del0 + rd u/a on the piece (pi = (u - u_lo)/a)
    rs, rd = Pj, dj / Pj
    sig0 = s0 - rs * (p0 + u_lo / a)
    del0 = d0 - rd * (p0 + u_lo / a)
    if exact:  # (H + b sigma)/u^2 - (D + a delta)/u
        b = E * E - 1.0
        alpha = H + b * sig0
        beta = b * rs / a - D - a * del0
        gamma = -rd
    else:  # H/u^2 - D/u + (a/u)(th_b sigma - delta)
        tb = th_b[cell]
        alpha = np.full(len(j), H)
        beta = a * (tb * sig0 - del0) - D
        gamma = tb * rs - rd

    def F(u):
        return alpha / (u * u) + beta / u + gamma
    with np.errstate(divide="ignore", invalid="ignore"):
        us = np.where(beta != 0, -2.0 * alpha / beta, u_a)
    us = np.where((us > u_a) & (us < u_b), us, u_a)
    cand = np.vstack([F(u_a), F(u_b), F(us)])
    cand[:, ~ok] = -np.inf
    which = np.argmax(cand, axis=0)
    vals = cand[which, np.arange(len(j))]
    u_best = np.choose(which, [u_a, u_b, us])
    return vals, cell, m, u_best, orders, cP


def _hist_parametric_bound(pf: np.ndarray, df: np.ndarray, H: float, D: float, u_lo: float, u_hi: float,
                           a: float, E: float, cut: float = -math.inf):
    """``max_u [H/u^2 - D/u + (a/u) K(theta(u), pi(u))]`` over ``[u_lo, u_hi]``, exactly where it exceeds ``cut``.

    ``K(theta, pi) = max {theta sigma(z) - delta(z) : P·z = pi, 0 <= z <= 1}`` is the
    continuous knapsack of the free items (``sigma = sum z P^2``, ``delta = sum z d``),
    ``theta(u) = (E + 1)/u`` and ``pi(u) = (u - u_lo)/a``. The greedy order (by
    ``theta P_x - d_x/P_x``) changes only where two items' keys cross, so ``[u_lo, u_hi]``
    splits into cells of one order; inside a cell the capacity crosses prefix sums, and
    between two crossings (one fractional item) the bound is ``alpha/u^2 + beta/u + gamma``,
    maximised in closed form. With more than :data:`FINE_CELLS` cells, :data:`COARSE_CELLS`
    coarse cells are bounded first (:func:`_cell_pieces` with ``exact=False``) and only those
    above ``cut`` are split into their exact cells; the result is then the exact maximum
    if it exceeds ``cut``, else a bound at most ``cut``. Returns ``(bound, order, m, u)``:
    the best piece has the first ``m`` items of ``order`` whole and item ``order[m]``
    fractional, unless it is attained at a prefix of an exact cell, or lies at most at
    ``cut`` (``u = -1`` then; ``m`` counts the prefix).
    """
    g = df / pf
    th_lo, th_hi = (E + 1.0) / u_hi, (E + 1.0) / u_lo
    dP = pf[:, None] - pf[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = (g[:, None] - g[None, :]) / dP
    cr = cross[np.triu_indices(len(pf), 1)]
    cr = np.unique(cr[np.isfinite(cr) & (cr > th_lo) & (cr < th_hi)])
    ths = np.concatenate([[th_lo], cr, [th_hi]])
    rest, rest_at = -math.inf, None
    if len(ths) - 1 > FINE_CELLS:
        tc = np.sort((E + 1.0) / np.geomspace(u_lo, u_hi, COARSE_CELLS + 1))
        tc[0], tc[-1] = th_lo, th_hi
        vals, cell, m, _, orders, _ = _cell_pieces(pf, df, H, D, u_lo, a, E, tc[:-1], tc[1:], exact=False)
        top = np.full(COARSE_CELLS, -np.inf)
        np.maximum.at(top, cell, vals)
        hot = top > cut
        if (~hot).any():
            i = int(np.argmax(np.where(hot[cell], -np.inf, vals)))
            rest, rest_at = float(vals[i]), (orders[cell[i]], int(m[i]))
        # the exact cells of the hot coarse cells
        lo, hi = [], []
        for c in np.flatnonzero(hot):
            inner = cr[(cr > tc[c]) & (cr < tc[c + 1])]
            edges = np.concatenate([[tc[c]], inner, [tc[c + 1]]])
            lo.append(edges[:-1])
            hi.append(edges[1:])
        if not lo:
            return rest, rest_at[0], rest_at[1], -1.0
        th_a, th_b = np.concatenate(lo), np.concatenate(hi)
    else:
        th_a, th_b = ths[:-1], ths[1:]
    best = None  # (value, order, m, u, cP of that order): the cells in chunks of CELL_ELEMENTS / n (memory)
    step = max(1, CELL_ELEMENTS // len(pf))
    for c0 in range(0, len(th_a), step):
        vals, cell, m, u_all, orders, cP = _cell_pieces(pf, df, H, D, u_lo, a, E, th_a[c0:c0 + step],
                                                        th_b[c0:c0 + step], exact=True)
        i = int(np.argmax(vals))
        if best is None or vals[i] > best[0]:
            best = (float(vals[i]), orders[cell[i]], int(m[i]), float(u_all[i]), cP[cell[i]])
    val, order, m_i, u_best, cP_i = best
    if rest >= val:
        return rest, rest_at[0], rest_at[1], -1.0
    # attained at a prefix (an end of the piece where the capacity is cP[m] or cP[m+1])?
    pi_best = (u_best - u_lo) / a
    tol = 1e-13 * max(1.0, cP_i[-1])
    if abs(pi_best - cP_i[m_i]) <= tol:
        return val, order, m_i, -1.0
    if abs(pi_best - cP_i[m_i + 1]) <= tol:
        return val, order, m_i + 1, -1.0
    return val, order, m_i, u_best


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
    kind = obj.type
    P, U, G, E, a, s, PU = staircase_setup(cone, obj)
    k = len(P)
    eps = float(cone.eps)
    pG, dG = P[G], d[G]
    zero = pG <= 0
    base_in = zero & (dG < 0)
    col = Collector(top)
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
    pruned = -math.inf

    def push(inm, outm, parent=math.inf):
        nonlocal counter, pruned
        fi = np.flatnonzero(~(inm | outm | zero))
        if parent < math.inf and len(fi) and time.perf_counter() > DEADLINE.get():
            # past the deadline: the child keeps its parent's bound, and the search stops within 64 nodes
            counter += 1
            heapq.heappush(heap, (-parent, counter, inm, outm, int(fi[0])))
            return
        if len(fi) <= ENUMERATE_FREE:
            best_here = enumerate_free(inm, fi)
            pruned = max(pruned, best_here + safety_margin(best_here, HU, dU))
            return
        pi_in = float(pG[inm].sum())
        H = HU + b * float((pG[inm] ** 2).sum())
        D = dU + a * float(dG[inm].sum())
        u_lo = PU + a * pi_in
        u_hi = u_lo + a * float(pG[fi].sum())
        ub, order, m, u = _hist_parametric_bound(pG[fi], dG[fi], H, D, u_lo, u_hi, a, E, max(col.best, floor))
        mask = inm.copy()
        mask[fi[order[:m]]] = True
        offer(mask)
        if u >= 0:
            m2 = mask.copy()
            m2[fi[order[m]]] = True
            offer(m2)
        ub += safety_margin(ub, H / (u_lo * u_lo), D / u_lo, float(np.abs(dG).sum()))
        if ub <= max(col.best, floor) or u < 0:
            pruned = max(pruned, ub)  # pruned, or solved: the bound is a prefix set's value
            return
        counter += 1
        heapq.heappush(heap, (-ub, counter, inm, outm, int(fi[order[m]])))

    def branch(item):  # as _split_in_out, handing the parent's bound to the children
        ub, _, inm, outm, j = -item[0], *item[1:]
        i1, o1 = inm.copy(), outm.copy()
        i1[j] = True
        o1[j] = True
        push(i1, outm, ub)
        push(inm, o1, ub)

    push(base_in.copy(), zero & ~base_in)
    open_bound, exact, nodes = best_first(heap, branch, col, floor, max_nodes)
    pruned = max(pruned, open_bound)
    upper = max(pruned, col.best)
    col = _with_neighbours(col, value_sets, pG, dG, G, cone, k, floor)
    return rescore(obj, col, d, s, upper, PU, exact, nodes, k)


def price_staircase_separable(cone: Staircases, obj: Objective, d: np.ndarray, *, floor: float = 0.0,
                              max_nodes: int | None = None, top: int = 10) -> Priced:
    """Branch-and-bound pricing of histogram MSE or mutual information over staircases.

    Mutual information: :func:`_staircase_mi_bnb` (items only, exact in ``P(S)``);
    histogram MSE: :func:`_staircase_hist_bnb` (items and ``t = 1/(P·v)``).

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt.objectives import Objective
    >>> P = np.array([0.4, 0.3, 0.2, 0.1])
    >>> o = Objective("mutual_information", P)
    >>> r = price_staircase_separable(Staircases(np.arange(4), np.arange(4), 1.0), o, np.zeros(4))
    >>> r.exact, bool(r.upper >= r.values[0] - 1e-15)
    (True, True)
    """
    if float(obj.prior[np.asarray(cone.support, dtype=int)].sum()) <= 0:
        return zero_prior_staircases(cone, obj, d, top)
    if obj.type is MUTUAL_INFORMATION:
        return _staircase_mi_bnb(cone, obj, d, floor, max_nodes, top)
    return _staircase_hist_bnb(cone, obj, d, floor, max_nodes, top)
