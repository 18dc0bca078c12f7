"""Exact pricing on a LIP slice ``{P·v = 1, e^-eps <= v <= e^eps}`` (continuous knapsacks).

Part of the pricing of :mod:`mechopt.solvers.free._pricing` (see its module docstring for the reduced value,
the normalisation and the meaning of ``upper``, ``floor`` and ``max_nodes``).
"""

from __future__ import annotations

import heapq
import itertools
import math
import time

import numpy as np

from ...objectives import HISTOGRAM_MSE, Objective, ObjectiveType
from ._lip_mitm import MITM_MAX_ITEMS, near_chord_lists, price_lip_mitm
from ._pricing_base import DEADLINE, LipSlice, Priced, Collector, envelope_search, rescore, safety_margin, best_first
from ._pricing_sep import _phi


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
    >>> from mechopt.objectives import Objective
    >>> P = np.array([0.5, 0.3, 0.2])
    >>> o = Objective("bayes_risk", P, loss=1 - np.eye(3))
    >>> price_lip_bayes(LipSlice(P, 1.0), o, np.zeros(3)).exact
    True
    """
    P, k, lo, hi = _lip_setup(cone, obj)
    ell = P[:, None] * obj.loss
    col = Collector(top)
    best = -math.inf
    for xh in range(k):
        a = -(ell[:, xh] + d)
        v, _ = _knapsack_lip(a, P, lo, hi)
        val = float(a @ v)
        best = max(best, val)
        col.offer(val, np.round(v, 13).tobytes(), lambda v=v: v)
    return rescore(obj, col, d, P, best + safety_margin(best, *d), 1.0, True, k, k)


def price_lip_mmse(cone: LipSlice, obj: Objective, d: np.ndarray, *, floor: float = 0.0,
                   max_nodes: int | None = None, top: int = 10) -> Priced:
    """Exact pricing of the MMSE on a LIP slice (upper envelope in ``l`` of knapsacks).

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt.objectives import Objective
    >>> o = Objective("mmse", np.array([0.5, 0.3, 0.2]), values=np.array([0.0, 1.0, 2.0]))
    >>> price_lip_mmse(LipSlice(o.prior, 1.0), o, np.zeros(3)).exact    # exact: the whole envelope searched
    True
    """
    P, k, lo, hi = _lip_setup(cone, obj)
    c = obj.values * P
    col = Collector(top)

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
    upper, nodes, exact = envelope_search(oracle, lo_l, hi_l, floor, max_nodes, lambda: col.best)
    upper = max(upper, col.best)
    return rescore(obj, col, d, P, upper, 1.0, exact, nodes, k)


#: Seconds the branch and bound spends finding the first columns of the meet in the middle.
SEED_SECONDS = 0.03


def price_lip_separable(cone: LipSlice, obj: Objective, d: np.ndarray, *, floor: float = 0.0,
                        max_nodes: int | None = None, top: int = 10) -> Priced:
    """Exact pricing of histogram MSE or mutual information on a LIP slice.

    The branch and bound (:func:`lip_separable_bnb`) runs first for at most
    :data:`SEED_SECONDS`; if it has not finished, its columns seed the meet in the middle
    (:func:`._lip_mitm.price_lip_mitm`), which is exact over every vertex while the
    subsets under ``rho`` of half the inputs fit in a list; beyond, the branch and bound
    goes on.

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt.objectives import Objective
    >>> P = np.random.default_rng(0).dirichlet(np.ones(24))
    >>> o = Objective("mutual_information", P)
    >>> d = lip_chord_duals(LipSlice(P, 1.0), o)
    >>> r = price_lip_separable(LipSlice(P, 1.0), o, d)
    >>> r.exact, bool(r.upper <= 1e-12)          # the chord duals are dual feasible
    (True, True)
    """
    if len(cone.prior) > MITM_MAX_ITEMS:
        return lip_separable_bnb(cone, obj, d, floor=floor, max_nodes=max_nodes, top=top)
    token = DEADLINE.set(min(DEADLINE.get(), time.perf_counter() + SEED_SECONDS))
    try:
        seed = lip_separable_bnb(cone, obj, d, floor=floor, max_nodes=max_nodes, top=top)
    finally:
        DEADLINE.reset(token)
    if seed.exact:
        return seed
    r = price_lip_mitm(cone, obj, d, floor=floor, top=top, seed=seed)
    if r is not None:
        return r
    return lip_separable_bnb(cone, obj, d, floor=floor, max_nodes=max_nodes, top=top)


def lip_separable_bnb(cone: LipSlice, obj: Objective, d: np.ndarray, *, floor: float = 0.0,
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
    >>> from mechopt.objectives import Objective
    >>> P = np.array([0.5, 0.3, 0.2])
    >>> o = Objective("histogram_mse", P)
    >>> lip_separable_bnb(LipSlice(P, 1.0), o, np.zeros(3)).exact
    True
    """
    kind = obj.type
    P, k, lo_v, hi_v = _lip_setup(cone, obj)
    lo, hi = float(lo_v[0]), float(hi_v[0])
    delta_v = hi - lo
    rho = (1.0 - lo) / delta_v
    col = Collector(top)
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
        L += safety_margin(L, base_all, float(np.abs(w).sum()))
        c_out = L - np.maximum(r, 0.0)
        c_in = L - np.maximum(-r, 0.0)
        return order, c_out <= thr, c_in <= thr, c_out, c_in

    heap: list = []
    counter = 0
    pruned = -math.inf

    def push(j, inm, outm):
        nonlocal counter, pruned
        for rnd in range(6):
            ub, x, order, C, pi0, w0 = bound(j, inm, outm)
            if not math.isfinite(ub):
                return
            ub += safety_margin(ub, base_all, float(np.abs(w).sum()))
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
    def branch(item):  # coordinate x in the set of coordinates at their upper bound, or out of it
        _, _, j, inm, outm, x = item
        i1, o1 = inm.copy(), outm.copy()
        i1[x] = True
        o1[x] = True
        push(j, i1, outm)
        push(j, inm, o1)

    open_bound, exact, nodes = best_first(heap, branch, col, floor, max_nodes)
    pruned = max(pruned, open_bound)
    return rescore(obj, col, d, P, max(pruned, col.best), 1.0, exact, nodes, k)


# -- analytic dual points ----------------------------------------------------------------------


def _chords(kind: ObjectiveType, P: np.ndarray, lo: float, hi: float):
    """``(kappa, beta, phi(lo), phi(hi))``: the chord ``kappa_x t + beta_x`` of each ``phi_x`` on ``[lo, hi]``."""
    pl, ph = _phi(kind, P, np.full(len(P), lo)), _phi(kind, P, np.full(len(P), hi))
    kappa = (ph - pl) / (hi - lo)
    return kappa, pl - kappa * lo, pl, ph


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
    >>> from mechopt.objectives import Objective
    >>> P = np.array([0.5, 0.3, 0.2])
    >>> d = lip_chord_duals(LipSlice(P, 1.0), Objective("histogram_mse", P))
    >>> round(float(d.sum()), 6), round(0.38 * (np.e + 1 / np.e - 1), 6)   # sum P^2 (lo + hi - lo hi)
    (0.792741, 0.792741)
    """
    if not obj.type.separable:
        return None
    P, k, lo_v, hi_v = _lip_setup(cone, obj)
    kappa, beta, pl, ph = _chords(obj.type, P, float(lo_v[0]), float(hi_v[0]))
    # rounding: lift the chord by a relative margin so the inequality survives floats
    beta = beta + 1e-13 * (np.abs(pl) + np.abs(ph))
    return kappa + float(beta.sum()) * P


# -- primal heuristic: vertices near the chord -------------------------------------------------

#: Largest table of add/remove moves (subsets of at most ``q`` inputs) the heuristic builds.
NEAR_CHORD_MOVES = 150_000


def _phi_slope(kind: ObjectiveType, P: np.ndarray, t: float) -> np.ndarray:
    """``phi_x'(t)`` for :func:`._pricing_sep._phi`."""
    if kind is HISTOGRAM_MSE:
        return 2.0 * P * P * t
    return P * (math.log(t) + 1.0)


def near_chord_vertices(cone: LipSlice, obj: Objective, target: float, n: int, rng: np.random.Generator,
                        deadline: float = math.inf) -> np.ndarray:
    """Up to ``n`` vertices of the slice at most ``target`` below the chord bound's plane.

    A primal heuristic for :func:`lip_chord_duals`, whose bound every vertex with all
    coordinates at ``lo`` or ``hi`` meets with equality. A vertex ``v = lo + (hi - lo) z``
    raises a set ``S`` (``z = 1``) and leaves one coordinate ``j`` fractional, with
    ``P_j z_j = rho - P(S)``, ``rho = (1 - lo)/(hi - lo)``; it falls short of the chord
    only at ``j``, by a concave function of ``z_j`` that is 0 at both ends, so below its
    tangents there. A shortfall of at most ``target`` therefore asks ``P(S)`` to lie in
    a window of width ``target / slope`` next to ``rho`` or ``rho - P_j``. Where the
    subsets of half the inputs fit in a list (:func:`._lip_mitm.near_chord_lists`), every
    set in those windows comes from pairs of the two lists and the columns are picked
    among them; otherwise sets are drawn at random (each input with probability ``rho``, raised for inputs the columns so far
    cover less, then trimmed to ``P(S) <= rho``) and moved into a window by swapping at
    most ``q`` inputs in and ``q`` out (``q`` as large as :data:`NEAR_CHORD_MOVES` swaps
    allow): the sums of the swaps, sorted once, meet in the middle by binary search. Each
    set gives one column, its best ``j``. An optimum of the ray
    LP mixing such vertices is within ``target`` of the chord bound, which then proves it.
    The vertices are found, not proven: the master judges them.

    Returns ``(k, m)`` columns, ``m <= n`` (fewer if ``deadline`` passes first).

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt.objectives import Objective
    >>> from mechopt.objectives import column_utility
    >>> P = np.random.default_rng(0).dirichlet(np.ones(30))
    >>> obj = Objective("histogram_mse", P)
    >>> V = near_chord_vertices(LipSlice(P, 1.0), obj, 1e-9, 20, np.random.default_rng(1))
    >>> d = lip_chord_duals(LipSlice(P, 1.0), obj)
    >>> V.shape[1], bool(np.all(np.abs(P @ V - 1) < 1e-12))
    (20, True)
    >>> bool(np.all(d @ V - column_utility(obj, V) <= 1e-9))   # within target of the plane
    True
    """
    kind = obj.type
    P_all, k, lo_v, hi_v = _lip_setup(cone, obj)
    lo, hi = float(lo_v[0]), float(hi_v[0])
    delta_v = hi - lo
    rho = (1.0 - lo) / delta_v
    pos = np.flatnonzero(P_all > 0)
    P = P_all[pos]
    kp = len(P)
    if kp < 2:
        return np.zeros((k, 0))
    kappa, beta, _, _ = _chords(kind, P, lo, hi)
    # shortfall slopes at z_j = 0 and z_j = 1, and the windows of P(S) they leave
    s0 = delta_v * (kappa - _phi_slope(kind, P, lo))
    s1 = delta_v * (_phi_slope(kind, P, hi) - kappa)
    V = near_chord_lists(P_all, cone.eps, kind, (kappa, beta), (s0, s1), target, n, rng)
    if V is not None:
        return V
    with np.errstate(divide="ignore"):
        w0 = np.minimum(1.0, target / np.maximum(s0, 1e-300)) * P
        w1 = np.minimum(1.0, target / np.maximum(s1, 1e-300)) * P
    q = 1
    while q < kp and sum(math.comb(kp, r) for r in range(q + 2)) <= NEAR_CHORD_MOVES:
        q += 1
    moves = [()] + [c for r in range(1, q + 1) for c in itertools.combinations(range(kp), r)]
    idx = np.full((len(moves), q), kp)  # kp: padding, never raised
    for i, c in enumerate(moves):
        idx[i, : len(c)] = c
    size = (idx < kp).sum(axis=1)
    sums = np.append(P, 0.0)[idx].sum(axis=1)
    order = np.argsort(sums, kind="stable")
    idx, size, sums = idx[order], size[order], sums[order]
    by_window = np.argsort(-(w0 + w1), kind="stable")  # fractional inputs, widest windows first
    cols: list[np.ndarray] = []
    cover = np.zeros(kp)
    for _ in range(20 * n):
        if len(cols) >= n or time.perf_counter() > deadline:
            break
        # draw inputs the columns so far cover less (their z averages to rho in any mix
        # that meets V w = 1) more often
        deficit = rho - cover / max(len(cols), 1)
        S = rng.random(kp) < np.clip(rho + 2.0 * deficit, 0.02, 0.98)
        s = float(P[S].sum())
        while s > rho:
            i = int(rng.choice(np.flatnonzero(S)))
            S[i] = False
            s -= P[i]
        inside = np.append(S, False)[idx].sum(axis=1)
        add = np.flatnonzero(inside == 0)  # moves of inputs outside S
        rem = np.flatnonzero((inside == size) & (size > 0))  # moves of inputs in S
        rem = np.append(rem, 0)  # the empty move (sums[0] = 0)
        X, Y = sums[add], sums[rem]
        found = []
        for j in by_window[~S[by_window]][:16]:
            for a, b in ((rho - w0[j], rho), (rho - P[j], rho - P[j] + w1[j])):
                first = np.searchsorted(X, a - s + Y, "left")
                last = np.searchsorted(X, b - s + Y, "right")
                for yi in np.flatnonzero(last > first)[:2]:
                    T = S.copy()
                    T[idx[rem[yi]][idx[rem[yi]] < kp]] = False
                    xi = add[first[yi]]
                    T[idx[xi][idx[xi] < kp]] = True
                    if T[j]:
                        continue
                    vj = (1.0 - lo * (1.0 - P[j]) - delta_v * float(P[T].sum())) / P[j]
                    if not lo <= vj <= hi:
                        continue
                    short = kappa[j] * vj + beta[j] - float(_phi(kind, P[j], vj))
                    found.append((short, T, int(j), vj))
        found.sort(key=lambda f: f[0])
        for _short, T, j, vj in found[:1]:
            v = np.ones(k)  # a zero-prior input: any value in [lo, hi] costs nothing
            vp = np.where(T, hi, lo)
            vp[j] = vj
            v[pos] = vp
            cols.append(v)
            cover += (vp - lo) / delta_v
    return np.array(cols[:n]).T if cols else np.zeros((k, 0))
