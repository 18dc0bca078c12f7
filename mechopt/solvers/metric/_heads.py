"""Per-output blocks that are banded but for a few *head* places: ``M = sum_y H_y^{-1}`` in ``O(m k^2 (bs + h))``.

With pairs of its own per output (the lazy pairs of :mod:`._lazy`), each output's matrix
``H_y = diag(z_y / q_y) + A_y' diag(pi_y / s_y) A_y`` is dense in general, and
:class:`._ipm.OutputDenseBlocks` factors it in ``O(k^3)``. But the pairs an output needs
are of two kinds: pairs between nearby places (a grid's or a map's cheapest pairs, which
have a band order) and pairs from a few places near the output's peak to far places
(an optimal column is tight on a tree from its plateau's edge: on a 20×20 Euclidean grid,
a vertex cover of each used output's tight far pairs has 34 places at the median, 53 at
the 90th percentile, of 400). Given a band order ``perm`` with block size ``bs``, every
output's far pairs (farther apart than ``bs`` in it) are covered by its *heads* ``h_y``
(a greedy vertex cover), and with ``N`` the other places

    H = [[A, B], [B', C]]   (A: N x N, banded;  C: heads x heads)
    H^{-1} = diag(A^{-1}, 0) + F S^{-1} F',   F = [A^{-1} B; -I],   S = C - B' A^{-1} B

(block elimination with the heads last). ``diag(A^{-1}, 0)`` is the inverse of the band
matrix with every head's row and column replaced by a huge diagonal (:data:`HEAD_DIAG`),
so one :class:`._band.BandBlocks` over the union of the outputs' near pairs forms their
sum for every output at once; ``A^{-1} B`` is a band solve with ``h`` right-hand sides,
and the low-rank terms add up in one product.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.linalg import blas

from ._band import REG, BandBlocks, _each_part, _tri_inv, ipm_workers, worker_pool

#: the diagonal a head's row and column get in the band part (its inverse, ``1e-200``,
#: is below every entry the IPM's blocks reach)
HEAD_DIAG = 1e200


def _each_thread(n: int, work) -> list:
    """``[work(i) for i in range(n)]`` in the IPM's ``n`` threads."""
    return [work(0)] if n == 1 else list(worker_pool(n).map(work, range(n)))


#: :func:`heads_band` leaves out at most this share of the cheapest pairs to narrow the band
TRIM = 0.05


def heads_band(k: int, a: np.ndarray, b: np.ndarray, order: tuple | None = None) -> tuple[np.ndarray, int, tuple]:
    """``(perm, bs, wide)``: the band of the pairs ``(a, b)`` for :class:`OutputBandHeads`, and the pairs left out of it.

    The band order of :func:`._band.band_order` (or ``order``) or :func:`._band.fiedler_order`,
    whichever is narrower once narrowed to the block size that holds all but :data:`TRIM`
    of the pairs when that is at most 3/4 of its full one: on a grid the border places'
    pairs two rows apart double the band's width (32×32, Euclidean: 66 → 33, 3.2 % of the
    pairs); 1 000 places from a map: 75 in the Fiedler order against 93, neither narrowed
    (the places' Fiedler vector alone holds 95 % of the pairs within 58, but a first round
    without the other 5 % left a weaker bound: 6.8 % against 3.8 % at 600 s). ``wide``:
    the index arrays ``(a, b)`` of the pairs left out (empty when the band is not narrowed).

    >>> x = np.arange(50)
    >>> a, b = np.r_[x[:-1], x[1:], 0, 49], np.r_[x[1:], x[:-1], 49, 0]   # a path, and one far pair
    >>> perm, bs, wide = heads_band(50, a, b, (np.arange(50), 49))
    >>> bs, [w.tolist() for w in wide]
    (1, [[0, 49], [49, 0]])
    """
    from ._band import apart_in, band_order, fiedler_order

    def narrowed(perm):
        apart = apart_in(perm, a, b)
        full = max(int(apart.max()), 1) if len(a) else 1
        narrow = max(int(np.quantile(apart, 1.0 - TRIM)), 1) if len(a) else full
        if narrow > 0.75 * full:
            return perm, full, (a[:0], b[:0])
        return perm, narrow, (a[apart > narrow], b[apart > narrow])

    best = narrowed((band_order(k, a, b) if order is None else order)[0])
    fiedler = fiedler_order(k, a, b) if len(a) else None
    if fiedler is not None:
        other = narrowed(fiedler[0])
        best = other if other[1] < best[1] else best
    return best


def banded_base(E: np.ndarray) -> bool:
    """Whether the cheapest pairs of ``E`` (:func:`._parts.base_pairs`, the lazy route's
    start) have a band order of block size ``<= k / 2``: the lazy route's blocks are then
    band blocks but for the heads (``_lazy.HEADS_FROM``), else dense.

    >>> xy = np.random.default_rng(0).uniform(0, 10, (300, 2))      # scattered places
    >>> banded_base(np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1)))
    True
    """
    from ._band import band_order
    from ._parts import base_pairs

    k = E.shape[0]
    a, b = np.nonzero(base_pairs(E))
    return len(a) > 0 and 2 * band_order(k, a, b)[1] <= k


class TooManyHeads(ValueError):
    """An output's far pairs need more heads than the caller allows."""


def cover(u: np.ndarray, v: np.ndarray, most: int) -> np.ndarray:
    """A vertex cover of the edges ``(u, v)`` by greedy largest degree, at most ``most`` places.

    >>> cover(np.array([0, 0, 0, 5]), np.array([1, 2, 3, 6]), 4).tolist()
    [0, 5]
    """
    chosen = []
    alive = np.ones(len(u), bool)
    while alive.any():
        if len(chosen) >= most:
            raise TooManyHeads(f"more than {most} heads")
        deg = np.bincount(np.concatenate([u[alive], v[alive]]))
        h = int(np.argmax(deg))
        chosen.append(h)
        alive &= (u != h) & (v != h)
    return np.array(sorted(chosen), np.int64)


class OutputBandHeads:
    """``M = sum_y H_y^{-1}`` for per-output pair rows that are banded in ``perm`` but for each output's heads.

    Parameters as :class:`._ipm.OutputDenseBlocks`, and the band order ``perm`` with block
    size ``bs``; :class:`TooManyHeads` when an output needs more than ``max_heads``.
    """

    def __init__(self, k: int, m: int, a: np.ndarray, b: np.ndarray, y: np.ndarray, ca: np.ndarray,
                 cb: np.ndarray, perm: np.ndarray, bs: int, max_heads: int):
        self.k, self.m = k, m
        inv = np.empty(k, np.int64)
        inv[np.asarray(perm)] = np.arange(k)
        far = np.abs(inv[a] - inv[b]) > bs
        is_head = np.zeros((m, k), bool)
        order = np.argsort(y[far], kind="stable")
        fy, fa, fb = y[far][order], a[far][order], b[far][order]
        cuts = np.searchsorted(fy, np.arange(m + 1))
        heads = [cover(fa[lo:hi], fb[lo:hi], max_heads) for lo, hi in zip(cuts[:-1], cuts[1:])]
        for j, h in enumerate(heads):
            is_head[j, h] = True
        self.h = h_max = max(1, max(len(h) for h in heads))
        slot = np.full((m, k), -1, np.int64)  # a head's column among its output's
        for j, h in enumerate(heads):
            slot[j, h] = np.arange(len(h))
        self.heads = heads
        self.head_of = is_head  # (m, k)
        ha, hb = is_head[y, a], is_head[y, b]
        near = ~ha & ~hb
        # the near rows: one band over the union of their pairs, each output weighing its own
        key = a[near] * k + b[near]
        uniq, j_near = np.unique(key, return_inverse=True)
        ua, ub = uniq // k, uniq % k
        first = np.zeros(len(uniq), np.int64)
        first[j_near] = np.flatnonzero(near)
        self.band = BandBlocks(k, ua, ub, ca[first], cb[first], perm, bs)
        # each near row's terms in the band's filled slots, output by output: a part's slots
        # are one weighted count (the band's own product of every pair with every output's
        # weight read pairs no output of the part keeps: 20 % of an iteration on 32×32)
        Tc = self.band.Tc.tocsc()
        near_rows = np.flatnonzero(near)
        by = np.argsort(y[near_rows], kind="stable")
        near_rows, j_near = near_rows[by], j_near[by]
        per = np.diff(Tc.indptr)[j_near]
        at = np.repeat(Tc.indptr[j_near], per) + (np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per))
        # (32-bit indices: 1 000 places from a map hold 5·10⁷ such terms)
        self.e_slot = Tc.indices[at].astype(np.int32)
        self.e_coef = Tc.data[at]
        self.e_row = np.repeat(near_rows, per).astype(np.int32)
        e_y = np.repeat(y[near_rows], per)
        self.e_y = e_y.astype(np.int32)
        self.e_first = np.searchsorted(e_y, np.arange(m + 1))
        self.n_slots = Tc.shape[0]
        self.band.entries = self._entries
        self._D = None
        # rows at a head: their terms outside the head block go to the band's diagonal
        # (the other end's c^2) or to B (c_x c_h), inside it to C
        rows = np.flatnonzero(~near)
        ry, ra, rb = y[rows], a[rows], b[rows]
        sa, sb = slot[ry, ra], slot[ry, rb]
        both = (sa >= 0) & (sb >= 0)
        self.diag_rows = np.concatenate([rows[sa < 0], rows[sb < 0]])
        self.diag_at = np.concatenate([ra[sa < 0] * m + ry[sa < 0], rb[sb < 0] * m + ry[sb < 0]])
        self.diag_c = np.concatenate([ca[rows][sa < 0] ** 2, cb[rows][sb < 0] ** 2])
        hh = h_max
        # C: (m, h, h) entries
        c_rows = [rows[sa >= 0], rows[sb >= 0], rows[both], rows[both]]
        c_at = [(ry * hh + sa) * hh + sa, (ry * hh + sb) * hh + sb, (ry * hh + sa) * hh + sb, (ry * hh + sb) * hh + sa]
        c_coef = [ca[rows] ** 2, cb[rows] ** 2, ca[rows] * cb[rows], ca[rows] * cb[rows]]
        masks = [sa >= 0, sb >= 0, both, both]
        self.c_rows = np.concatenate(c_rows)
        self.c_at = np.concatenate([x[mk] for x, mk in zip(c_at, masks)])
        self.c_coef = np.concatenate([x[mk] for x, mk in zip(c_coef, masks)])
        # B: (m, k, h) entries, the head at one end and a place that is not at the other
        one_a, one_b = (sa >= 0) & (sb < 0), (sb >= 0) & (sa < 0)
        self.b_rows = np.concatenate([rows[one_a], rows[one_b]])
        self.b_at = np.concatenate([(ry[one_a] * k + rb[one_a]) * hh + sa[one_a],
                                    (ry[one_b] * k + ra[one_b]) * hh + sb[one_b]])
        self.b_coef = (ca[self.b_rows] * cb[self.b_rows])
        # every head's own diagonal entry of C, and its -1 in F
        hy = np.concatenate([np.full(len(h), j, np.int64) for j, h in enumerate(heads)]) if heads else np.zeros(0, np.int64)
        hs = np.concatenate([np.arange(len(h)) for h in heads]) if heads else np.zeros(0, np.int64)
        hx = np.concatenate(heads) if heads else np.zeros(0, np.int64)
        self.hy, self.hs, self.hx = hy, hs, hx
        pad = np.ones((m, hh), bool)
        pad[hy, hs] = False
        self.pad = pad  # unused head slots: C gets 1 on its diagonal there, F nothing
        self.workers = ipm_workers()

    @property
    def single(self) -> bool:
        """Whether the band part forms its sum in single precision (:attr:`._band.BandBlocks.single`)."""
        return self.band.single

    @single.setter
    def single(self, value: bool) -> None:
        self.band.single = value

    # ------------------------------------------------------------------
    def factor(self, dq: np.ndarray, D: np.ndarray) -> np.ndarray:
        k, m, hh = self.k, self.m, self.h
        D = np.asarray(D).reshape(-1)
        dqp = dq + np.bincount(self.diag_at, weights=self.diag_c * D[self.diag_rows], minlength=k * m).reshape(k, m)
        dqp[self.head_of.T] = HEAD_DIAG
        self._D = D
        M = self.band.factor(dqp, np.empty((0, m)))  # (the band's slots from :meth:`_entries`)
        self._D = None
        C = np.bincount(self.c_at, weights=self.c_coef * D[self.c_rows], minlength=m * hh * hh).reshape(m, hh, hh)
        C[self.hy, self.hs, self.hs] += dq[self.hx, self.hy]
        ii = np.arange(hh)
        C[:, ii, ii] += self.pad  # (no row reaches an unused slot)
        B = np.bincount(self.b_at, weights=self.b_coef * D[self.b_rows], minlength=m * k * hh).reshape(m, k, hh)
        # Y = L^{-1} B and X = A^{-1} B = L^{-T} Y (A = L L', the band part's factor): S = C - Y'Y,
        # symmetric as the dense blocks' Cholesky forms it
        X, YY = self._band_solve_many(B)  # X: zero at the heads
        B = None
        S = C - YY
        d = 1.0 / np.sqrt(np.diagonal(S, axis1=1, axis2=2))
        L = np.linalg.cholesky(S * d[:, :, None] * d[:, None, :] + REG * np.eye(hh))  # LinAlgError if not PD
        # F = X - E; Wt = L^{-1} diag(d) F'  (m, h, k): F S^{-1} F' = Wt' Wt
        X[self.hy, self.hx, self.hs] -= 1.0
        Ft = X.transpose(0, 2, 1) * d[:, :, None]
        X = None
        self.Wt = np.matmul(_tri_inv(L), Ft)
        Ft = None
        flat = self.Wt[~self.pad]  # the rows of unused slots are zero
        cut = np.linspace(0, len(flat), self.workers + 1).astype(int)
        # the lower triangle of flat' flat, each thread over a share of its rows (BLAS
        # without Python's lock)
        lows = _each_thread(self.workers, lambda i: blas.dsyrk(1.0, flat[cut[i]:cut[i + 1]], trans=1, lower=1))
        low = functools.reduce(np.add, lows)
        M += np.tril(low) + np.tril(low, -1).T
        return M

    def _entries(self, part: slice) -> np.ndarray:
        lo, hi = self.e_first[part.start], self.e_first[part.stop]
        n = part.stop - part.start
        at = self.e_slot[lo:hi].astype(np.int64) * n + (self.e_y[lo:hi] - part.start)
        w = self.e_coef[lo:hi] * self._D[self.e_row[lo:hi]]
        return np.bincount(at, weights=w, minlength=self.n_slots * n).reshape(self.n_slots, n)

    def _band_solve_many(self, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(A_y^{-1} R[y], Y_y' Y_y)`` for every output with ``Y_y = L_y^{-1} R[y]``, ``R``: (m, k, h)."""
        band = self.band
        k, m, hh = self.k, self.m, self.h
        nb, bs = band.nb, band.bs
        out = np.empty((m, k, hh))
        yy = np.empty((m, hh, hh))

        def part(sl):
            n = sl.stop - sl.start
            scb = band.scb[:, sl]  # (nb, n, bs)
            v = np.zeros((band.kp, n, hh))
            v[:k] = R[sl].transpose(1, 0, 2)[band.perm]
            v = v.reshape(nb, bs, n, hh).transpose(0, 2, 1, 3) * scb[..., None]
            u, x = band.forward_back(v, sl)
            yy[sl] = np.einsum("inbh,inbg->nhg", u, u)
            x = (x * scb[..., None]).transpose(0, 2, 1, 3).reshape(band.kp, n, hh)[:k]
            out[sl] = x[band.inv].transpose(1, 0, 2)

        _each_part(m, self.workers, part)
        return out, yy

    def solve(self, G: np.ndarray) -> np.ndarray:
        """``H_y^{-1} G[:, y]`` for every output (G: (k, m))."""
        x = self.band.solve(G)
        t = np.matmul(self.Wt, np.ascontiguousarray(G.T)[:, :, None])  # (m, h, 1)
        x += np.matmul(self.Wt.transpose(0, 2, 1), t)[:, :, 0].T
        return x


def pairs_to_add(Q: np.ndarray, G: np.ndarray, keep: np.ndarray, inv: np.ndarray, bs: int, *, rel: float,
                 top: int, near: float, star: float) -> np.ndarray:
    """``(m, k, k)`` booleans: the pairs to add to each output's set, few of them far apart.

    As :func:`._lazy.violated_pairs` for the pairs within ``bs`` of each other in the band
    order (``inv``: each place's position), but a far pair only from a *source*: for each
    place, the place whose pair into it is broken the most (``Q[a] e^{-E[a, b]} > Q[b]``)
    is a source of that output, and every pair out of a source whose ratio is above
    ``star`` joins (its head row costs the same whatever its pairs, :class:`OutputBandHeads`).
    """
    k, m = Q.shape
    new = np.zeros((m, k, k), bool)
    idx = np.arange(k)
    far = np.abs(inv[:, None] - inv[None, :]) > bs
    top = min(top, k)

    def output(y):
        q = np.maximum(Q[:, y], 1e-300)
        R = (q[:, None] * G) / q[None, :]
        R[keep[y]] = 0.0
        if not (R > 1.0 + rel).any():
            return
        Rn = np.where(far, 0.0, R)
        into = np.argpartition(-Rn, top - 1, axis=0)[:top]
        out = np.argpartition(-Rn, top - 1, axis=1)[:, :top].T
        lim = min(near, 1.0 + rel)
        for j in range(top):
            ok = Rn[into[j], idx] > lim
            new[y, into[j, ok], idx[ok]] = True
            ok = Rn[idx, out[j]] > lim
            new[y, idx[ok], out[j, ok]] = True
        Rf = np.where(far, R, 0.0)
        src = np.argmax(Rf, axis=0)
        src = np.unique(src[Rf[src, idx] > 1.0 + rel])
        if len(src):
            new[y, src] |= Rf[src] > star

    # each output on its own (numpy's passes release Python's lock: two threads)
    n = ipm_workers()
    _each_thread(n, lambda i: [output(y) for y in range(i, m, n)])
    return new
