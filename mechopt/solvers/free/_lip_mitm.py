"""Exact pricing of histogram MSE / mutual information on a LIP slice by meet in the middle.

On the slice ``{P·v = 1, lo <= v <= hi}`` a vertex raises a set ``S`` to ``hi``, leaves
one coordinate ``j`` fractional and the rest at ``lo``; its reduced value is

    C_j + w(S) + g_j(P(S)),    P(S) in [L_j, U] = [max(rho - P_j, 0), rho],

with ``w_x`` the gain of raising ``x`` and ``g_j`` convex (the term of ``v_j``; see
:func:`._pricing_lip.price_lip_separable`). With a shift ``lambda`` (``omega = w -
lambda P``, ``h_j(pi) = g_j(pi) + lambda pi``) the value is ``C_j + omega(S) +
h_j(P(S))``. Near the chord duals every ``w_x / P_x`` is about the same, so ``omega``
is tiny and a knapsack relaxation cannot tell sets apart: only which sums of ``P`` land
next to the window's ends decides. So the positive-prior inputs are split into two
halves; every subset of each half with sum at most ``rho`` (plus the band below) is
listed once and sorted by its sum, and a set is a pair ``(a, b)`` of them (Horowitz and
Sahni's meet in the middle for subset sum). Two searches use the lists, both exact over
every vertex of the slice:

* **Bands** (near the chord duals). With ``Omega >= omega(S)`` for every ``S`` (the two
  lists' maxima), ``h_j`` convex gives an interval ``[a_j, b_j]`` around its minimum on
  which ``C_j + Omega + h_j <= tau`` (regula falsi from the inside: every secant root
  lies under the chord, so it stays inside): a vertex can beat ``tau`` only with
  ``P(S)`` within ``U - b_j`` of ``rho`` (``j`` not in ``S``), or with ``T = S + j``
  and ``P(T)`` within ``a_j - L_j`` above ``rho``. Both are sums of one band of width
  about ``Omega / slope`` around ``rho``: the pairs there are listed once for every
  ``j``, each bounded by ``omega(T)`` plus the largest ``C_j + h_j`` on a fine grid of
  the band (each ``h_j`` is convex, so its maximum on a cell is at a cell end), and the
  few pairs left are scored exactly for every ``j``.
* **Runs** (any duals; inputs ``j`` whose interval is empty or wide, and ``P_j > rho``).
  For each set ``a`` of the half holding ``j`` (``j`` not in ``a``) the sets ``b`` of
  the other half with ``P(a) + P(b)`` in a window form one run ``[i1, i2)`` of the
  sorted list, bounded by ``C_j + omega(a) + max_{i1 <= i < i2} omega(b_i) +
  max(h_j(pi_1), h_j(pi_2))`` (a sparse table of ``omega``; ``h_j`` convex, so largest at
  one of the run's two sums). Runs that cannot beat ``tau`` are dropped, the others
  halved, runs of a few sets scored exactly.

``tau`` is the collector's threshold (at least ``floor``; the columns handed in as
``seed`` count); every bound carries a margin of 1e-12 of the magnitudes summed. Applies
while each half has at most :data:`MITM_MAX_SETS` subsets under its cap (k <= 40 at every
epsilon: 2^20 subsets per half; k = 50 from epsilon = 2 under a Dirichlet(1) prior) and
the inputs fit in the int64 bit masks (k <= 63).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ...objectives import HISTOGRAM_MSE, Objective
from ._pricing_base import DEADLINE, Collector, LipSlice, Priced, rescore, safety_margin
from ._pricing_sep import _phi

#: Largest list of subsets one half may hold.
MITM_MAX_SETS = 1_500_000
#: Runs of at most this many sets are scored exactly instead of halved.
LEAF_RUN = 8
#: Inputs the bit masks hold (an int64 each).
MITM_MAX_ITEMS = 63
#: Most pairs the bands may list, and per input and set of the lists (about what the runs
#: would visit); beyond, the inputs with the widest bands go to the runs.
BAND_MAX_PAIRS = 40_000_000
BAND_PER_SET = 4
#: Pairs handled at once, and cells of the grid that bounds ``C_j + h_j`` in a band.
CHUNK = 1 << 21
GRID = 1 << 12
TOL = 1e-15


#: The lists of the last few priors (sums and masks do not depend on the duals).
_LISTS: dict = {}


def _subsets(items: np.ndarray, P: np.ndarray, cap: float, limit: int):
    """``(p, mask)``: the subsets of ``items`` with sum at most ``cap``, sorted by sum (``None`` past ``limit``).

    Cached per prior and items; a smaller cap takes a prefix of the cached list.
    """
    key = (P.tobytes(), items.tobytes())
    hit = _LISTS.get(key)
    if hit is not None and hit[0] >= cap:
        n = int(np.searchsorted(hit[1], cap, "right"))
        return hit[1][:n], hit[2][:n]
    failed = _LISTS.get(key + (limit,))
    if failed is not None and failed <= cap:
        return None
    p = np.zeros(1)
    m = np.zeros(1, dtype=np.int64)
    for x in items:
        keep = p + P[x] <= cap
        if len(p) + int(keep.sum()) > limit:
            _remember(key + (limit,), cap)  # a larger cap fails too
            return None
        p = np.concatenate([p, p[keep] + P[x]])
        m = np.concatenate([m, m[keep] | np.int64(1 << int(x))])
    order = np.argsort(p, kind="stable")
    p, m = p[order], m[order]
    _remember(key, (cap, p, m))
    return p, m


def _remember(key, value) -> None:
    if len(_LISTS) >= 8:
        _LISTS.pop(next(iter(_LISTS)))
    _LISTS[key] = value


class _Half:
    """One half's subsets: sums ``p``, bit masks, ``w`` and ``omega`` sums, a sparse table of ``omega``."""

    def __init__(self, p: np.ndarray, mask: np.ndarray, w: np.ndarray, lam: float):
        self.p, self.mask = p, mask
        # w(a) from byte tables: the sum over the mask's 8 bytes of that byte's subset sums
        ws = np.zeros(len(p))
        bits = np.arange(8)
        for byte in range(8):
            wb = np.zeros(8)
            n = min(8, len(w) - 8 * byte)
            if n <= 0:
                break
            wb[:n] = w[8 * byte: 8 * byte + n]
            table = ((np.arange(256)[:, None] >> bits[None, :]) & 1) @ wb
            ws += table[(mask >> (8 * byte)) & 255]
        self.w = ws
        self.om = ws - lam * p
        self._table = None

    def range_max(self, i1: np.ndarray, i2: np.ndarray) -> np.ndarray:
        """``max om[i1:i2]`` for each pair (``i2 > i1``), from a sparse table built on first use."""
        if self._table is None:
            table = [self.om]
            span = 1
            while 2 * span <= len(self.om):
                prev = table[-1]
                table.append(np.maximum(prev[: len(prev) - span], prev[span:]))
                span *= 2
            self._table = table
        lev = np.floor(np.log2(i2 - i1)).astype(np.int64)
        out = np.empty(len(i1))
        for l_ in np.unique(lev):
            sel = lev == l_
            t = self._table[int(l_)]
            out[sel] = np.maximum(t[i1[sel]], t[i2[sel] - (1 << int(l_))])
        return out


class _Search:
    """The state of one pricing call (module docstring)."""

    def __init__(self, cone: LipSlice, obj: Objective, d: np.ndarray, floor: float, top: int):
        self.kind = obj.type
        self.P = P = np.asarray(cone.prior, dtype=float)
        self.k = k = len(P)
        self.d = d
        self.lo, self.hi = lo, hi = math.exp(-cone.eps), math.exp(cone.eps)
        self.delta_v = hi - lo
        self.rho = (1.0 - lo) / self.delta_v
        self.zero = P <= 0
        self.pos = np.flatnonzero(~self.zero)
        self.fixed = np.where(d > 0, lo, hi)  # a zero-prior coordinate only adds -d_x v_x
        f_lo = _phi(self.kind, P, np.full(k, lo)) - d * lo
        self.w = _phi(self.kind, P, np.full(k, hi)) - d * hi - f_lo
        base = float(f_lo[self.pos].sum()) + float((-d * self.fixed)[self.zero].sum())
        self.C = base - f_lo
        self.lam = float(np.median(self.w[self.pos] / P[self.pos])) if len(self.pos) else 0.0
        self.om = self.w - self.lam * P
        self.L = np.maximum(self.rho - P, 0.0)
        self.margin = safety_margin(base, float(np.abs(self.w).sum()), self.lam)
        self.floor = floor
        self.col = Collector(top)
        self.pruned = -math.inf
        self.nodes = 0
        self.exact = True

    # -- the vertex's pieces --------------------------------------------------------------

    def g(self, j, pi):
        """``g_j(pi)`` (broadcasts over ``j`` and ``pi``)."""
        P = self.P[j]
        vj = (1.0 - self.lo * (1.0 - P) - self.delta_v * pi) / P
        return _phi(self.kind, P, vj) - self.d[j] * vj

    def h(self, j, pi):
        """``h_j(pi) = g_j(pi) + lambda pi`` at ``pi`` clipped to ``j``'s window."""
        pc = np.clip(pi, self.L[j], self.rho)
        return self.g(j, pc) + self.lam * pc

    def h_min(self, j: np.ndarray) -> np.ndarray:
        """The minimiser of the convex ``h_j`` on its window (where ``phi_j'(v_j) = d_j + lambda P_j / delta``)."""
        P = self.P[j]
        q = self.d[j] + self.lam * P / self.delta_v
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            v = q / (2.0 * P * P) if self.kind is HISTOGRAM_MSE else np.exp(q / P - 1.0)
            pi = (1.0 - self.lo * (1.0 - P) - P * v) / self.delta_v
        return np.clip(np.nan_to_num(pi, nan=self.rho, posinf=self.rho, neginf=0.0), self.L[j], self.rho)

    def vertex(self, j: int, mask: int) -> np.ndarray:
        v = np.where(self.zero, self.fixed, self.lo)
        S = np.array([(mask >> x) & 1 for x in range(self.k)], bool)
        v[S] = self.hi
        P = self.P
        v[j] = (1.0 - self.lo * (1.0 - P[j]) - self.delta_v * float(P[S].sum())) / P[j]
        return v

    def tau(self) -> float:
        return max(self.floor, self.col.threshold)

    def offer(self, vals: np.ndarray, js: np.ndarray, masks: np.ndarray) -> None:
        """Offer the best of these exact vertex values; every value counts towards the bound."""
        if not len(vals):
            return
        self.pruned = max(self.pruned, float(vals.max()) + self.margin)
        good = np.flatnonzero(vals > self.tau())
        if len(good) > self.col.top:
            good = good[np.argpartition(-vals[good], self.col.top - 1)[: self.col.top]]
        for i in good[np.argsort(-vals[good])]:
            self.offer_column(float(vals[i]), self.vertex(int(js[i]), int(masks[i])))

    def offer_column(self, val: float, v: np.ndarray) -> None:
        self.col.offer(val, np.round(v, 13).tobytes(), lambda: v)

    def coarse(self, j) -> np.ndarray:
        """A bound on every vertex of ``j`` (``h_j`` convex: largest at a window end)."""
        return self.C[j] + self.Omega + np.maximum(self.h(j, self.L[j]), self.h(j, self.rho)) + self.margin

    def timed_out(self) -> bool:
        if time.perf_counter() > DEADLINE.get():
            self.exact = False
            return True
        return False

    # -- the intervals where no vertex of j beats tau ----------------------------------------

    def quiet_intervals(self, J: np.ndarray):
        """``(a, b, ok)``: on ``[a_j, b_j]`` (``ok``) ``C_j + Omega + h_j <= tau``, a proven bound recorded."""
        theta = self.tau() - self.C[J] - self.Omega - 2 * self.margin
        m = self.h_min(J)
        hm = self.h(J, m)
        ok = hm <= theta

        def root(end):
            x0, h0 = m.copy(), hm.copy()
            x1 = np.full(len(J), end) if np.ndim(end) == 0 else end.copy()
            h1 = self.h(J, x1)
            done = ~ok | (h1 <= theta)
            x0[done & ok] = x1[done & ok]
            for _ in range(12):
                act = ~done
                if not act.any():
                    break
                with np.errstate(divide="ignore", invalid="ignore"):
                    r = x0 + (theta - h0) * (x1 - x0) / (h1 - h0)
                r = np.where(act & np.isfinite(r), r, x0)
                hr = self.h(J, r)
                move = act & (hr <= theta)
                x0, h0 = np.where(move, r, x0), np.where(move, hr, h0)
            return x0

        a, b = root(self.L[J]), root(np.full(len(J), self.rho))
        if ok.any():
            mid = self.C[J] + self.Omega + np.maximum(self.h(J, a), self.h(J, b)) + self.margin
            self.pruned = max(self.pruned, float(mid[ok].max()))
        return a, b, ok

    # -- bands -----------------------------------------------------------------------------------

    def grid_bound(self, J, s0, s1, upper_end: bool):
        """``(x, M)``: cells ``[x_i, x_i+1]`` of ``[s0, s1]``, ``M_i >=`` the largest term a pair's sum there adds.

        ``upper_end``: sums ``sigma = P(S)`` below ``rho``, term ``C_j + h_j(sigma)``;
        otherwise ``sigma = P(S) + P_j`` above ``rho``, term ``C_j - omega_j + h_j(sigma - P_j)``.
        """
        x = np.linspace(s0, s1, GRID + 1)
        Jc = J[:, None]
        if upper_end:
            vals = self.C[Jc] + self.h(Jc, x[None, :])
        else:
            vals = self.C[Jc] - self.om[Jc] + self.h(Jc, x[None, :] - self.P[Jc])
            dead = x[None, :] - self.P[Jc] > self.rho  # a cell past rho + P_j: its end is rho + P_j
            vals = np.where(dead, -np.inf, vals)
            # the cell that holds rho + P_j: add its value there
            cell = np.clip(np.searchsorted(x, self.rho + self.P[J], "right") - 1, 0, GRID - 1)
            end = self.C[J] - self.om[J] + self.h(J, np.full(len(J), self.rho))
        M = np.maximum(vals[:, :-1], vals[:, 1:]).max(axis=0)
        if not upper_end:
            np.maximum.at(M, cell, end)
        M = np.maximum(M, np.maximum(np.concatenate([[-np.inf], M[:-1]]), np.concatenate([M[1:], [-np.inf]])))
        return x, M + self.margin

    def bands(self, A: _Half, B: _Half, JU: np.ndarray, dU: float, JL: np.ndarray, dL: float) -> None:
        """Every pair with ``P(T)`` in ``[rho - dU, rho + dL]``, for the inputs ``JU`` (``j`` not in ``T``) and ``JL``
        (``j`` in ``T``)."""
        rho = self.rho
        s_lo, s_hi = rho - dU - TOL, rho + dL + TOL
        gU = self.grid_bound(JU, s_lo, rho + TOL, True) if len(JU) else None
        gL = self.grid_bound(JL, rho - TOL, s_hi, False) if len(JL) else None
        i1 = np.searchsorted(B.p, s_lo - A.p, "left")
        i2 = np.searchsorted(B.p, s_hi - A.p, "right")
        n = np.maximum(i2 - i1, 0)
        cum = np.cumsum(n)
        start = 0
        while start < len(A.p):
            if self.timed_out():
                return
            stop = int(np.searchsorted(cum, (cum[start - 1] if start else 0) + CHUNK, "right"))
            stop = max(stop, start + 1)
            nn = n[start:stop]
            rep = np.repeat(np.arange(start, stop), nn)
            ib = np.arange(int(nn.sum())) - np.repeat(np.cumsum(nn) - nn, nn) + np.repeat(i1[start:stop], nn)
            start = stop
            if not len(rep):
                continue
            self.nodes += len(rep)
            sig = A.p[rep] + B.p[ib]
            omT = A.om[rep] + B.om[ib]
            for g, upper_end, J in ((gU, True, JU), (gL, False, JL)):
                if g is None:
                    continue
                x, M = g
                sel = np.flatnonzero(sig <= rho + TOL) if upper_end else np.flatnonzero(sig >= rho - TOL)
                if not len(sel):
                    continue
                cell = np.clip(((sig[sel] - x[0]) / (x[1] - x[0])).astype(np.int64), 0, GRID - 1)
                ub = omT[sel] + M[cell]
                hot = ub > self.tau()
                if (~hot).any():
                    self.pruned = max(self.pruned, float(ub[~hot].max()))
                self.score_band(J, A, B, rep[sel[hot]], ib[sel[hot]], upper_end)

    def score_band(self, J, A: _Half, B: _Half, ia, ib, upper_end: bool) -> None:
        """Exact values of the pairs ``T`` for every ``j`` of ``J`` (``j`` outside ``T`` at the upper end, inside at
        the lower)."""
        for s in range(0, len(ia), 1 << 14):
            a, b = ia[s: s + (1 << 14)], ib[s: s + (1 << 14)]
            sig = (A.p[a] + B.p[b])[:, None]
            wT = (A.w[a] + B.w[b])[:, None]
            mask = (A.mask[a] | B.mask[b])[:, None]
            inside = ((mask >> J[None, :]) & 1) == 1
            Jr = np.broadcast_to(J[None, :], inside.shape)
            if upper_end:
                pi = sig
                vals = self.C[Jr] + wT + self.g(Jr, np.clip(pi, self.L[Jr], self.rho))
                valid = ~inside & (pi >= self.L[Jr] - TOL)
            else:
                pi = sig - self.P[Jr]
                vals = self.C[Jr] + wT - self.w[Jr] + self.g(Jr, np.clip(pi, self.L[Jr], self.rho))
                valid = inside & (pi <= self.rho + TOL)
                mask = mask & ~(np.int64(1) << Jr)
            self.nodes += int(valid.sum())
            r, c = np.nonzero(valid)
            self.offer(vals[r, c], Jr[r, c], np.broadcast_to(mask, inside.shape)[r, c])

    # -- runs ------------------------------------------------------------------------------------

    def runs(self, j: int, it: _Half, rm: _Half, windows) -> None:
        """Every vertex of ``j`` with ``P(S)`` in one of ``windows`` (``[(lo, hi)]``), by halving runs."""
        keep = np.flatnonzero(((it.mask >> j) & 1) == 0)
        om_b = float(rm.om.max())
        for w_lo, w_hi in windows:
            # a set a can only matter if C_j + omega(a) + max omega(b) + max h_j on the window beats tau
            h_max = float(np.max(self.h(j, np.array([w_lo, w_hi]))))
            cut = self.tau() - self.C[j] - om_b - h_max - self.margin
            inw = keep[it.p[keep] <= w_hi + TOL]
            hot = it.om[inw] > cut
            if (~hot).any():
                self.pruned = max(self.pruned, self.C[j] + float(it.om[inw[~hot]].max()) + om_b + h_max + self.margin)
            ia = inw[hot]
            i1 = np.searchsorted(rm.p, w_lo - it.p[ia] - TOL, "left")
            i2 = np.searchsorted(rm.p, w_hi - it.p[ia] + TOL, "right")
            ok = i2 > i1
            ia, i1, i2 = ia[ok], i1[ok], i2[ok]
            # the pairs at both ends of each run first (the likely best: they set tau)
            for ib in (i1, i2 - 1):
                self.score_pairs(j, it, ia, rm, ib)
            while len(ia):
                if self.timed_out():
                    pa = it.p[ia]
                    ub = (self.C[j] + it.om[ia] + rm.range_max(i1, i2)
                          + np.maximum(self.h(j, pa + rm.p[i1]), self.h(j, pa + rm.p[i2 - 1])) + self.margin)
                    self.pruned = max(self.pruned, float(ub.max()))
                    return
                small = i2 - i1 <= LEAF_RUN
                if small.any():
                    sa, s1, n = ia[small], i1[small], i2[small] - i1[small]
                    rep = np.repeat(np.arange(len(sa)), n)
                    off = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
                    self.score_pairs(j, it, sa[rep], rm, s1[rep] + off)
                    ia, i1, i2 = ia[~small], i1[~small], i2[~small]
                if not len(ia):
                    break
                self.nodes += len(ia)
                pa = it.p[ia]
                ub = (self.C[j] + it.om[ia] + rm.range_max(i1, i2)
                      + np.maximum(self.h(j, pa + rm.p[i1]), self.h(j, pa + rm.p[i2 - 1])) + self.margin)
                cut = ub <= self.tau()
                if cut.any():
                    self.pruned = max(self.pruned, float(ub[cut].max()))
                ia, i1, i2 = ia[~cut], i1[~cut], i2[~cut]
                mid = (i1 + i2) // 2
                ia, i1, i2 = np.concatenate([ia, ia]), np.concatenate([i1, mid]), np.concatenate([mid, i2])

    def score_pairs(self, j: int, it: _Half, ia, rm: _Half, ib) -> None:
        self.nodes += len(ia)
        pi = it.p[ia] + rm.p[ib]
        vals = self.C[j] + it.w[ia] + rm.w[ib] + self.g(j, np.clip(pi, self.L[j], self.rho))
        self.offer(vals, np.full(len(ia), j), it.mask[ia] | rm.mask[ib])


def price_lip_mitm(cone: LipSlice, obj: Objective, d: np.ndarray, *, floor: float = 0.0,
                   top: int = 10, seed: Priced | None = None) -> Priced | None:
    """Exact pricing by meet in the middle (module docstring), or ``None`` when the lists are too long.

    ``seed``: columns found before (their exact values set the first ``tau``). The search
    is exact unless the :data:`DEADLINE` passes (then ``upper`` is the largest bound left open).

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt.objectives import Objective
    >>> P = np.array([0.4, 0.3, 0.2, 0.1])
    >>> o = Objective("histogram_mse", P)
    >>> r = price_lip_mitm(LipSlice(P, 1.0), o, np.zeros(4))
    >>> v = r.columns[:, 0]                       # the best vertex: sum_x (P_x v_x)^2 with d = 0
    >>> r.exact, bool(abs(r.upper - r.values[0]) < 1e-9), bool(abs(r.values[0] - ((P * v) ** 2).sum()) < 1e-12)
    (True, True, True)
    """
    s = _Search(cone, obj, d, floor, top)
    pos, P, rho = s.pos, s.P, s.rho
    if not len(pos) or pos[-1] >= MITM_MAX_ITEMS:
        return None
    if seed is not None:
        for val, v in zip(seed.values, seed.columns.T):
            s.offer_column(float(val), v)
    by_p = pos[np.argsort(P[pos], kind="stable")]
    sides = (by_p[0::2], by_p[1::2])
    lists = [_subsets(x, P, rho + TOL, MITM_MAX_SETS) for x in sides]
    if any(li is None for li in lists):
        return None
    halves = [_Half(p, m, s.w, s.lam) for p, m in lists]
    A, B = halves
    # Omega >= omega(S) for every S under rho: the positive omegas, or the two lists' maxima
    s.Omega = min(float(np.maximum(s.om[pos], 0.0).sum()), float(A.om.max() + B.om.max())) + s.margin
    a, b, ok = s.quiet_intervals(pos)
    band = ok & (P[pos] <= rho)
    dU_j = np.where(band, rho - b, 0.0)
    dL_j = np.where(band, a - s.L[pos], 0.0)
    wide = np.maximum(dU_j, dL_j)
    # past about as many pairs as the runs would visit sets (a few per set of a list, per input),
    # the widest bands go to the runs
    limit = min(BAND_MAX_PAIRS, BAND_PER_SET * len(pos) * (len(A.p) + len(B.p)))
    ts = np.unique(wide[band])
    while True:
        band &= wide <= (ts[-1] if len(ts) else -1.0)
        dU, dL = float(dU_j[band].max(initial=0.0)), float(dL_j[band].max(initial=0.0))
        if not band.any():
            break
        lists = [_subsets(x, P, rho + dL + TOL, MITM_MAX_SETS) for x in sides]
        if all(li is not None for li in lists):
            (pa, _), (pb, _) = lists
            n = int((np.searchsorted(pb, rho + dL + TOL - pa, "right")
                     - np.searchsorted(pb, rho - dU - TOL - pa, "left")).sum())
            if n <= limit:
                break
        ts = ts[: len(ts) // 2]
    if band.any() and dL > 0:
        halves = [_Half(p, m, s.w, s.lam) for p, m in lists]
        A, B = halves
    done = np.zeros(len(pos), bool)
    if band.any():
        J = pos[band]
        s.bands(A, B, J[dU_j[band] > 0], dU, J[dL_j[band] > 0], dL)
        done[band] = s.exact
    side = np.zeros(s.k, dtype=np.int64)
    side[sides[1]] = 1
    for i in np.argsort(-s.coarse(pos), kind="stable"):  # the most promising inputs first: tau rises sooner
        j = int(pos[i])
        if band[i] or s.timed_out():
            continue
        # the runs cover what the bands do not: below a_j and above b_j, or the whole window
        windows = [(float(s.L[j]), float(a[i])), (float(b[i]), rho)] if ok[i] else [(float(s.L[j]), rho)]
        s.runs(j, halves[side[j]], halves[1 - side[j]], [(x, y) for x, y in windows if y > x])
        done[i] = s.exact
    if not done.all():
        s.pruned = max(s.pruned, float(s.coarse(pos[~done]).max()))
    return rescore(obj, s.col, d, P, max(s.pruned, s.col.best), 1.0, s.exact, s.nodes, s.k)


# -- vertices near the chord, from the lists ---------------------------------------------------

#: Most candidate sets (pairs) :func:`near_chord_lists` scores.
POOL_MAX = 200_000


def near_chord_lists(P: np.ndarray, eps: float, kind, chord: tuple, slopes: tuple, target: float, n: int,
                     rng: np.random.Generator) -> np.ndarray | None:
    """Up to ``n`` vertices at most ``target`` under the chords, from every set whose sum lands near ``rho``.

    The windows are those of :func:`._pricing_lip.near_chord_vertices` (``chord`` =
    ``(kappa, beta)``, ``slopes`` = ``(s0, s1)``: the shortfall's slopes at ``z_j = 0``
    and ``1``, per positive-prior input, in the order of ``P > 0``): a set ``T`` with
    ``P(T)`` just under ``rho`` leaves some ``j`` outside it slightly raised, one just
    over ``rho`` some ``j`` inside it slightly lowered. The pairs of the two halves'
    lists with sums in that band are every such set; a random pool of at most
    :data:`POOL_MAX` is scored (each set with its ``j`` of least shortfall), and ``n``
    of those within ``target`` are picked a batch at a time, favouring the inputs the
    picks so far raise less (any mix of columns meeting ``V w = 1`` raises each input
    by ``rho`` on average). Returns ``(k, m)`` columns, or ``None`` when the lists are
    too long (the caller's draws then search instead).
    """
    k = len(P)
    lo, hi = math.exp(-eps), math.exp(eps)
    dv = hi - lo
    rho = (1.0 - lo) / dv
    pos = np.flatnonzero(P > 0)
    if len(pos) < 2 or pos[-1] >= MITM_MAX_ITEMS:
        return None
    kappa, beta = np.zeros(k), np.zeros(k)
    kappa[pos], beta[pos] = chord
    with np.errstate(divide="ignore"):
        w0, w1 = np.zeros(k), np.zeros(k)
        w0[pos] = np.minimum(1.0, target / np.maximum(slopes[0], 1e-300)) * P[pos]
        w1[pos] = np.minimum(1.0, target / np.maximum(slopes[1], 1e-300)) * P[pos]
    d0, d1 = float(w0.max()), float(w1.max())
    by_p = pos[np.argsort(P[pos], kind="stable")]
    lists = [_subsets(x, P, rho + d1 + TOL, MITM_MAX_SETS) for x in (by_p[0::2], by_p[1::2])]
    if any(li is None for li in lists):
        return None
    (pa, ma), (pb, mb) = lists
    i1 = np.searchsorted(pb, rho - d0 - pa, "left")
    i2 = np.searchsorted(pb, rho + d1 - pa, "right")
    cnt = np.maximum(i2 - i1, 0)
    total = int(cnt.sum())
    if total == 0:
        return np.zeros((k, 0))
    # a random pool of pairs: pair number r is the (r - start_a)-th b of a's run
    picks = np.sort(rng.choice(total, size=min(total, POOL_MAX), replace=False))
    cum = np.cumsum(cnt)
    ia = np.searchsorted(cum, picks, "right")
    ib = i1[ia] + picks - (cum[ia] - cnt[ia])
    sig = pa[ia] + pb[ib]
    mask = ma[ia] | mb[ib]
    inside = ((mask[:, None] >> pos[None, :]) & 1) == 1
    Pp = P[pos][None, :]
    below = (sig <= rho)[:, None]
    # z of the fractional input: raised from 0 (outside T, sum below rho) or lowered from 1 (inside, above)
    z = np.where(below, (rho - sig[:, None]) / Pp, 1.0 - (sig[:, None] - rho) / Pp)
    valid = np.where(below, ~inside, inside) & (z >= 0.0) & (z <= 1.0)
    t = lo + dv * z
    short = kappa[pos][None, :] * t + beta[pos][None, :] - _phi(kind, Pp, t)
    short = np.where(valid, short, np.inf)
    jj = np.argmin(short, axis=1)
    best = short[np.arange(len(jj)), jj]
    keep = np.flatnonzero(best <= target)
    if not len(keep):
        return np.zeros((k, 0))
    Z = inside[keep].astype(float)
    Z[np.arange(len(keep)), jj[keep]] = z[keep, jj[keep]]
    chosen: list[int] = []
    free = np.ones(len(keep), bool)
    cover = np.zeros(len(pos))
    batch = max(1, n // 20)
    while len(chosen) < n and free.any():
        deficit = rho - cover / max(len(chosen), 1)
        score = np.where(free, Z @ deficit, -np.inf)
        m = min(batch, n - len(chosen), int(free.sum()))
        top = np.argpartition(-score, m - 1)[:m]
        chosen.extend(top.tolist())
        free[top] = False
        cover += Z[top].sum(axis=0)
    V = np.ones((k, len(chosen)))  # a zero-prior input: any value in [lo, hi] costs nothing
    V[pos] = lo + dv * Z[chosen].T
    return V
