"""An interior-point method for the labeled metric LP that exploits its block structure.

::

    minimise    sum_y c_y . q_y                          (q_y = Q[:, y], c_y = C[:, y])
    subject to  sum_y q_y = 1                            (k linking rows, duals mu)
                A q_y + s_y = 0,  s_y >= 0               (P pair rows per output, duals pi_y >= 0)
                q_y >= 0                                 (reduced costs z_y = c_y - mu + A' pi_y)

with one row ``rho_p (q[a_p] - w_p q[b_p])`` per kept pair (``w = e^E``, ``rho`` a row
scale). A Mehrotra predictor–corrector step (Mehrotra, SIAM J. Optim. 2, 1992) with
Gondzio's multiple centrality correctors (Gondzio, Comput. Optim. Appl. 6, 1996) solves
one Newton system per iteration. Eliminating the pair rows leaves, per output, the
``k x k`` matrix ``H_y = diag(z_y / q_y) + A' diag(pi_y / s_y) A``, and the k linking
rows give the Schur complement ``M = sum_y H_y^{-1}`` (dense, ``k x k``): the step is
``M dmu = r``, then ``dq_y = H_y^{-1}(g_y + dmu)``. This is the classical treatment of
block-angular LPs by interior-point methods (Gondzio & Sarkissian, Math. Program. 96, 2003).

Two ways to form ``M`` (measured in docs/geo.md):

* :class:`DenseBlocks` — a Cholesky factor and inverse of each ``H_y``: ``O(m k^3)``;
  :class:`OutputDenseBlocks` the same when every output has pairs of its own
  (:class:`OutputRows`, ``metric_ipm(..., output=)``: the lazy pairs of :mod:`._lazy`).
* :class:`BandBlocks` — when the pairs connect only inputs ``<= bs`` apart in some
  order (a grid's neighbours in row-major order: ``bs`` = the row length), each ``H_y``
  is block tridiagonal with blocks of size ``bs``; a block Cholesky factor and the
  recursion ``G[i, j] = -X_i G[i+1, j]`` for the blocks of its inverse (the "recursive
  Green's function" recursion) give ``M`` in ``O(m k^2 bs)``: 20x fewer operations on a
  20×20 grid, all in batched matrix products over the outputs.

Each ``H_y`` is scaled to unit diagonal and regularised by ``1e-14`` on it before its
factorisation: near the optimum its entries span 20 orders of magnitude. Every direction
is refined once against the full Newton system late in the run (the residuals of all
five equation groups, the same factors), which keeps the last iterations' steps long.

The iterates are primal feasible from the start (``q = 1/m``) and stay so up to
rounding: stopping early (a time limit) still gives a channel. Nothing here is trusted:
the caller bounds the optimum from ``(mu, pi)`` with :mod:`mechopt.solvers.backends._safe_bound` and repairs and
verifies ``Q`` exactly.
"""

from __future__ import annotations

import contextlib
import functools
import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lapack

from ... import _heap
from . import _lapack, _pool
from ._band import REG, BandBlocks, band_order, ipm_workers, next_precision, worker_pool
from ._rows import (SharedRows, added, centring, corrector_rows, in_parts, moved, moved_products,
                    moved_products_sum, negated_products, pair_residual, parts_product, products_sum, row_parts,
                    step_to_bound)

#: Gondzio's centrality correctors per iteration at most, with dense blocks
GONDZIO = 3
#: ... and with band blocks, whose solves are cheap beside the factorisation (iterations to
#: a relative gap of 1e-3: 400 street intersections 34 -> 29, 1 000: 57 -> 49 with 12;
#: a 16×16 grid to 1e-9: 42 -> 37)
GONDZIO_BAND = 8
#: refine every direction once against the full Newton system below this relative gap
REFINE_BELOW = 1e-4
#: form ``M`` in single precision above this relative gap (band blocks; the link rows'
#: refinement with the double-precision factors makes up for it)
SINGLE_ABOVE = 1e-3
#: refinement steps of the link rows at most, with ``M`` in double / single precision
REFINE_LINK = (2, 8)
#: ... until the link rows' residual is below (double / single precision). Above ``SINGLE_ABOVE``
#: the next iterations take up a direction's residual (the IPM is infeasible-start): with
#: ``1e-6`` instead of ``1e-9`` a Newton solve needs one band solve fewer, and the iterations
#: to a relative gap of ``1e-3`` were the same on 24×24 and 32×32 grids (26) and 23 instead of
#: 24 on 48×48 (9 instead of 12-18 band solves an iteration)
LINK_TOL = (1e-14, 1e-6)
#: freed memory is kept for reuse (:mod:`mechopt._heap`) while the pair rows' arrays have at
#: most this many entries (48×48 grid: 2.1e7, ~10 s an iteration against ~11.5 s without);
#: above, memory counts first (64×64 grid, 6.6e7, two iterations: 16.7 GB peak with it
#: against 15.8 GB without; ~61 against ~70 s an iteration, the passes over the pair rows
#: ~7.5 against ~14 s)
HEAP_KEPT_MAX_ENTRIES = 40_000_000
#: stop when the relative gap has not halved over this many iterations (Euclidean
#: distances on a 10×10 grid: ~100 iterations of steady, slow progress)
STALL = 30


@dataclass
class IPMResult:
    status: str  # "optimal" (gap <= tol) | "stalled" | "time limit" | "error"
    Q: np.ndarray  # (k, m), rows sum to 1 up to rounding, pairs hold up to rounding
    mu: np.ndarray  # (k,) linking duals (cost units)
    Pi: np.ndarray  # (P, m) pair duals >= 0 (cost units, for the rows q_a - w q_b <= 0); (P,) with output=
    pobj: float
    dobj: float
    iterations: int
    message: str = ""
    stats: dict = field(default_factory=dict)


class DenseBlocks:
    """``M = sum_y H_y^{-1}`` by a Cholesky factorisation of each (dense) ``H_y``."""

    def __init__(self, k: int, a: np.ndarray, b: np.ndarray, ca: np.ndarray, cb: np.ndarray):
        P = len(a)
        self.k = k
        # H_flat[y] = T @ D[:, y]: the four entries of each pair's rank-one term
        self.T = sp.csr_matrix((np.concatenate([ca * ca, cb * cb, ca * cb, ca * cb]),
                                (np.concatenate([a * k + a, b * k + b, a * k + b, b * k + a]),
                                 np.tile(np.arange(P), 4))), shape=(k * k, P))
        self.diag = np.arange(k) * (k + 1)

    def factor(self, dq: np.ndarray, D: np.ndarray) -> np.ndarray:
        k, m = dq.shape
        # the previous iteration's array, written over: a fresh one costs page faults
        # (0.4 s for 400 outputs of 400 places, a fifth of the factorisation)
        W = getattr(self, "W", None)
        if W is None or W.shape != (m, k, k):
            W = np.empty((m, k, k))
        sc = np.empty((m, k))

        def blocks(ys) -> np.ndarray:
            M = np.zeros((k, k), order="F")  # its lower triangle
            for y in ys:
                H = self._block(y, D)  # a fresh array
                H.flat[self.diag] += dq[:, y]
                s = 1.0 / np.sqrt(H.flat[self.diag])
                sc[y] = s
                # the scaled block into W[y] (symmetric: W[y].T, a Fortran array, is the
                # same matrix), whose factor and its inverse are computed in place
                ss = np.multiply.outer(s, s)
                np.multiply(H, ss, out=W[y])
                W[y].flat[self.diag] += REG
                Wy = W[y].T
                if _lapack.AVAILABLE:
                    info = _lapack.inverse_factor(Wy)
                else:
                    # scipy's dpotrf clears the other triangle (clean=1): W[y] = L^{-T} is
                    # then upper triangular, as the einsum solves need (the BLAS ones and
                    # the products below read the triangle alone)
                    c, info = lapack.dpotrf(Wy, lower=1, overwrite_a=1)
                    if not info:
                        c, info = lapack.dtrtri(c, lower=1, overwrite_c=1)
                        if c is not Wy:
                            Wy[...] = c
                if info:
                    raise np.linalg.LinAlgError(f"block {y} is not positive definite")
                # X = L^{-1} S (the columns scaled back), X' X = S L^{-T} L^{-1} S = H^{-1}
                # in the lower triangle
                inv = np.multiply(Wy, s[None, :], order="F")
                if _lapack.AVAILABLE:
                    _lapack.triangular_product(inv)
                else:
                    inv = lapack.dlauum(inv, lower=1, overwrite_c=1)[0]
                M += inv
            return M

        nw = min(ipm_workers(), m) if _lapack.AVAILABLE else 1
        if nw > 1:
            # LAPACK without Python's lock: each thread factors every nw-th block
            M = sum(worker_pool(nw).map(blocks, [range(i, m, nw) for i in range(nw)]))
        else:
            M = blocks(range(m))
        # the solves multiply by the factors' inverses: two batched products instead of m
        # pairs of triangular solves
        self.W, self.sc, self._Hf = W, sc, None
        return np.tril(M) + np.tril(M, -1).T

    def _block(self, y: int, D: np.ndarray) -> np.ndarray:
        return (self.T @ D[:, y]).reshape(self.k, self.k)

    def solve(self, G: np.ndarray) -> np.ndarray:
        """``H_y^{-1} G[:, y]`` for every output (G: (k, m))."""
        # W[y] = L^{-T}: H^{-1} g = W[y] (W[y]' g)
        Gs = np.multiply(G.T, self.sc, order="C")
        m = len(Gs)
        if not _lapack.AVAILABLE:
            return (_block_solve(self.W, Gs) * self.sc).T
        nw = min(ipm_workers(), m)
        if nw == 1 or m * self.k * self.k < 1_000_000:
            _lapack.factor_products(self.W, Gs, 0, m)
        else:
            # BLAS without Python's lock: the outputs in nw contiguous parts
            cut = np.linspace(0, m, nw + 1).astype(int)
            list(worker_pool(nw).map(lambda i: _lapack.factor_products(self.W, Gs, cut[i], cut[i + 1]), range(nw)))
        Gs *= self.sc
        return Gs.T


def _block_solve(W: np.ndarray, G: np.ndarray) -> np.ndarray:
    """``W[y] W[y]' G[y]`` for every output (einsum: about twice as fast as a stacked matmul here)."""
    return np.einsum("yij,yj->yi", W, np.einsum("yji,yj->yi", W, G))


class OutputRows:
    """Pair rows of their own output each: ``rho_p (q_y[a_p] - w_p q_y[b_p])`` with ``y = y_p``.

    The operator of :func:`metric_ipm` when the outputs keep different pairs (lazy pairs
    per output, :mod:`._lazy`): ``A @ Q`` maps the ``(k, m)`` channel to the ``(P, 1)``
    row values and ``A.T @ Pi`` the ``(P, 1)`` duals back to ``(k, m)``.
    """

    def __init__(self, k: int, m: int, a: np.ndarray, b: np.ndarray, y: np.ndarray, ca: np.ndarray, cb: np.ndarray):
        P = len(a)
        self.shape_km = (k, m)
        # columns in output-major order (``y k + a``): the rows of one output read one
        # contiguous column of the channel (place-major, ``a m + y``: 1.7x slower products,
        # 1.4 million rows on 250 outputs of 400 places)
        self.M = sp.csr_matrix((np.concatenate([ca, cb]), (np.tile(np.arange(P), 2), np.concatenate([y * k + a, y * k + b]))),
                               shape=(P, k * m))
        self.MT = self.M.T.tocsr()
        # the products by row parts, in threads (scipy's sparse products release Python's
        # lock; 1.4 million rows: 2.1 -> 1.5 ms and 3.3 -> 1.7 ms on two)
        self._M, self._MT = row_parts(self.M), row_parts(self.MT)

    def __matmul__(self, Q: np.ndarray) -> np.ndarray:
        return parts_product(self._M, np.ascontiguousarray(Q.T).reshape(-1)).reshape(-1, 1)

    @property
    def T(self) -> "_OutputRowsT":
        return _OutputRowsT(self)


class _OutputRowsT:
    def __init__(self, rows: OutputRows):
        self.rows = rows

    def __matmul__(self, Pi: np.ndarray) -> np.ndarray:
        k, m = self.rows.shape_km
        return np.ascontiguousarray(parts_product(self.rows._MT, Pi.reshape(-1)).reshape(m, k).T)


class OutputDenseBlocks(DenseBlocks):
    """:class:`DenseBlocks` when each output has its own pair rows (:class:`OutputRows`)."""

    def __init__(self, k: int, m: int, a: np.ndarray, b: np.ndarray, y: np.ndarray, ca: np.ndarray, cb: np.ndarray):
        self.k = k
        # the four entries of each pair's rank-one term, grouped by output: a block is
        # formed when it is factored (one array of every block at once would cost
        # 8 m k^2 bytes, and their page faults)
        order = np.argsort(y, kind="stable")
        a, b, ca, cb = a[order], b[order], ca[order], cb[order]
        self.starts = 4 * np.searchsorted(y[order], np.arange(m + 1))
        self.pair = np.repeat(order, 4)
        self.idx = np.stack([a * k + a, b * k + b, a * k + b, b * k + a], axis=1).reshape(-1)
        self.coef = np.stack([ca * ca, cb * cb, ca * cb, ca * cb], axis=1).reshape(-1)
        self.diag = np.arange(k) * (k + 1)

    def _block(self, y: int, D: np.ndarray) -> np.ndarray:
        sl = slice(self.starts[y], self.starts[y + 1])
        w = self.coef[sl] * D.reshape(-1)[self.pair[sl]]
        return np.bincount(self.idx[sl], weights=w, minlength=self.k * self.k).reshape(self.k, self.k)


def choose_linalg(k: int, a: np.ndarray, b: np.ndarray, ca, cb, kind: str = "auto"):
    """:class:`BandBlocks` when an order with block size ``<= k / 2`` exists (or ``kind`` is
    one, ``(perm, bs)``), else :class:`DenseBlocks`. Band: about ``bs k^2`` operations per
    output (the inverse's block rows); dense: ``k^3``."""
    if kind in ("auto", "band") or not isinstance(kind, str):
        perm, bs = band_order(k, a, b) if isinstance(kind, str) else kind
        if kind != "auto" or 2 * bs <= k:
            return BandBlocks(k, a, b, ca, cb, perm, bs)
    return DenseBlocks(k, a, b, ca, cb)


def _schur_factor(lin, dq: np.ndarray, D: np.ndarray) -> np.ndarray:
    """The Cholesky factor of ``M = sum_y H_y^{-1}``, formed again in double precision if
    the single-precision one is not positive definite."""
    while True:
        Lm, info = lapack.dpotrf(lin.factor(dq, D), lower=1, overwrite_a=1)
        if not info:
            return Lm
        if not getattr(lin, "single", False):
            raise np.linalg.LinAlgError("linking Schur complement is not positive definite")
        lin.single = False


def _newton_system(A, AT, lin, Lm, q, s, pi, z, refine, residuals: list):
    """The Newton solve at one iterate (factors ``lin`` and ``Lm``), a refined direction, step lengths.

    ``residuals`` is ``[r_link, r_pair, r_d]``, read when a direction is asked for: the
    caller empties it once the last direction is taken (the pair rows' residuals are 0.5 GB
    on a 64×64 grid; the centrality correctors do not need them). ``newton(..., consume=True)``
    and ``direction(..., consume=True)`` write the direction's ``dpi`` over ``rs`` (one
    array of pair rows fewer: the peak of a 64×64 grid's run is in the Newton solves)."""
    m = q.shape[1]

    def newton(rq, rs, rl, rp=None, rd=None, consume=False):
        # Z dq + Q dz = rq, Pi ds + S dpi = rs, sum dq = rl, A dq + ds = rp, -dmu + A'dpi - dz = -rd
        # (rp, rd None: zero, as for the centrality correctors; the pair rows' arrays are the
        # largest, and every pass over them counts)
        t = _pool.empty_like(rs)

        def before(sl):
            u = np.divide(rs[sl], pi[sl], out=t[sl])
            if rp is not None:
                u -= rp[sl]
            u *= pi[sl]  # (no array of s / pi: 0.5 GB on a 64×64 grid)
            u /= s[sl]

        in_parts(t, before)
        g = rq / q - AT @ t
        t = None
        if rd is not None:
            g -= rd
        Hg = lin.solve(g)
        dmu = lapack.dpotrs(Lm, rl - Hg.sum(1), lower=1)[0]
        dq = lin.solve(g + dmu[:, None])
        single = int(getattr(lin, "single", False))
        for _ in range(REFINE_LINK[single]):
            e = rl - dq.sum(1)
            if float(np.abs(e).max()) <= LINK_TOL[single]:
                break
            d2 = lapack.dpotrs(Lm, e, lower=1)[0]
            dmu = dmu + d2
            dq = dq + lin.solve(np.repeat(d2[:, None], m, axis=1))
        ds = A @ dq
        dpi = rs if consume else _pool.empty_like(ds)

        def after(sl):
            d = np.negative(ds[sl], out=ds[sl])
            if rp is not None:
                d += rp[sl]
            if consume:
                e = np.subtract(rs[sl], pi[sl] * d, out=dpi[sl])
            else:
                e = np.multiply(pi[sl], d, out=dpi[sl])
                np.subtract(rs[sl], e, out=e)
            e /= s[sl]

        in_parts(ds, after)
        dz = AT @ dpi - dmu[:, None]
        if rd is not None:
            dz += rd
        return [dq, ds, dmu, dpi, dz]

    def direction(rq, rs, consume=False):
        rl, rp, rd = residuals
        d = newton(rq, rs, rl, rp, rd, consume=consume and not refine)
        if refine:
            dq, ds, dmu, dpi, dz = d
            cor = newton(rq - z * dq - q * dz, rs - pi * ds - s * dpi, rl - dq.sum(1), rp - A @ dq - ds,
                         rd + (AT @ dpi - dmu[:, None] - dz), consume=True)
            d = [u + v for u, v in zip(d, cor)]
        return d

    def steps(d):
        return (min(step_to_bound(q, d[0]), step_to_bound(s, d[1])), min(step_to_bound(z, d[4]), step_to_bound(pi, d[3])))

    return newton, direction, steps


def _heap_kept_for_rows(f: Callable) -> Callable:
    """Run ``f`` within :func:`mechopt._heap.heap_kept` unless its pair rows' arrays exceed
    :data:`HEAP_KEPT_MAX_ENTRIES` (there, the heap's free pieces outgrow the page faults
    saved), else within :func:`._pool.pooled` (only freed arrays of sizes asked for again are kept)."""
    @functools.wraps(f)
    def run(cost, a, *args, output=None, **kw):
        rows = len(a) * (1 if output is not None else np.shape(cost)[1])
        with _heap.heap_kept() if rows <= HEAP_KEPT_MAX_ENTRIES else _pool.pooled():
            return f(cost, a, *args, output=output, **kw)
    return run


@_heap_kept_for_rows
def metric_ipm(cost: np.ndarray, a: np.ndarray, b: np.ndarray, w: np.ndarray, *, tol: float = 1e-9,
               max_iter: int = 200, deadline: float | None = None, progress: Callable | None = None,
               enough: Callable | None = None, check_below: float = 1e-7,
               linalg: str = "auto", gondzio: int | None = None, row_scale: str = "none",
               start: str = "centred", output: np.ndarray | None = None, warm: tuple | None = None,
               save_at: float | None = None, q0: np.ndarray | Callable | None = None,
               heads: tuple | None = None) -> IPMResult:
    """Solve the labeled metric LP by a structured primal–dual interior-point method.

    Parameters
    ----------
    cost : ndarray, shape (k, m)
        ``C[x, y]`` (prior times loss).
    a, b, w : ndarray, shape (P,)
        The kept pairs: ``Q[a_p, y] <= w_p Q[b_p, y]`` for every output ``y``.
    tol : float
        Stop when the complementarity gap is ``<= tol`` relative to the objective.
    deadline : float, optional
        ``time.perf_counter()`` value after which the current iterate is returned.
    progress : callable(it, pobj, dobj, m), optional
    enough : callable(Q, mu, Pi, rel) -> bool, optional
        Asked at every iterate whose relative gap ``rel`` is ``<= check_below``; ``True`` stops the
        run (e.g. a proven bound from these duals already closes the caller's gap: the
        last iterations to ``tol`` cost the most on large grids).
    linalg : ``"auto"``, ``"dense"``, ``"band"`` or a band order ``(perm, bs)``
    gondzio : int, optional
        Centrality correctors per iteration at most: default :data:`GONDZIO` (dense blocks)
        or :data:`GONDZIO_BAND` (band blocks, where a solve costs ``1/k`` of a factorisation).
    row_scale : ``"none"`` or ``"sqrt"``
        Scale each pair row by ``1 / sqrt(w)`` (measured: no effect on the benchmarks).
    start : ``"centred"`` or ``"flat"``
        ``centred``: every complementarity product equal at the start (``z = mu0 / q``,
        ``pi = mu0 / s``); ``flat``: ``pi = 0.1`` and ``z`` from the dual residual.
    output : ndarray, shape (P,), optional
        The output of each pair row: row ``p`` is ``Q[a_p, output_p] <= w_p Q[b_p, output_p]``
        alone (each output keeps its own pairs; dense blocks). Default: every pair for every output.
    warm : tuple ``(q, s, mu, pi, z)``, optional
        The start: an iterate of an earlier run on related rows (``mu``, ``pi``, ``z`` in
        cost units, every entry of ``q``, ``s``, ``pi``, ``z`` positive; rows it breaks
        start primal infeasible), in place of ``start``.
    q0 : ndarray, shape (k, m), or callable() -> ndarray, optional
        The channel to start from in place of ``q = 1/m`` (e.g. :func:`._parts.exponential_start`),
        the duals centred on it as ``start`` says; taken only if it holds every pair row
        strictly (``s > 0``), else the run starts from ``1/m``.
    heads : tuple ``(perm, bs, most)``, optional
        With ``output``: a band order of the near pairs; each output's pairs farther apart
        in it are covered by at most ``most`` head places (:class:`._heads.OutputBandHeads`,
        ``O(k^2 (bs + h))`` an output instead of ``k^3``; dense blocks if one needs more).
    save_at : float, optional
        Keep a copy of the first iterate at a relative gap ``<= save_at`` in
        ``stats["saved"]`` (``(q, s, mu, pi, z, rel)``, the form ``warm`` takes).

    Returns
    -------
    IPMResult

    Examples
    --------
    >>> import numpy as np
    >>> C = 0.5 * (1 - np.eye(2))                      # 1-LDP on two inputs, Hamming loss
    >>> a, b = np.array([0, 1]), np.array([1, 0])
    >>> r = metric_ipm(C, a, b, np.full(2, np.e))
    >>> r.status, round(r.pobj, 8), round(r.dobj, 8)   # 1 / (1 + e)
    ('optimal', 0.26894142, 0.26894142)
    """
    t0 = time.perf_counter()
    cost = np.asarray(cost, dtype=float)
    k, m = cost.shape
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    w = np.asarray(w, dtype=float)
    P = len(a)
    scale = max(float(np.abs(cost).max()), 1e-300)
    c = cost / scale
    rho = 1.0 / np.sqrt(w) if row_scale == "sqrt" else np.ones(P)
    ca, cb = rho, -rho * w
    if output is None:
        A = SharedRows(sp.csr_matrix((np.concatenate([ca, cb]), (np.tile(np.arange(P), 2), np.concatenate([a, b]))),
                                     shape=(P, k)))
        AT = A.T
        lin = choose_linalg(k, a, b, ca, cb, linalg)
    else:
        output = np.asarray(output, np.int64)
        A = OutputRows(k, m, a, b, output, ca, cb)
        AT = A.T
        lin = None
        if heads is not None:
            from ._heads import OutputBandHeads, TooManyHeads
            with contextlib.suppress(TooManyHeads):
                lin = OutputBandHeads(k, m, a, b, output, ca, cb, *heads)
        if lin is None:
            lin = OutputDenseBlocks(k, m, a, b, output, ca, cb)
    if gondzio is None:
        gondzio = GONDZIO_BAND if isinstance(lin, BandBlocks) else GONDZIO

    def duals(pi):  # in cost units; (P, m), or (P,) with per-output rows
        out = pi * (scale * rho)[:, None]
        return out if output is None else out[:, 0]

    q = np.full((k, m), 1.0 / m)
    s = -(A @ q)
    if q0 is not None:
        # called here, the start is not kept by the caller for the whole run (64×64: 134 MB)
        q1 = np.asarray(q0() if callable(q0) else np.array(q0), dtype=float)
        q0 = None
        s1 = -(A @ q1) if q1.shape == (k, m) and float(q1.min()) > 0 else None
        if s1 is not None and float(s1.min()) > 0:
            q, s = q1, s1
        q1 = s1 = None
    mu = np.zeros(k)
    if start == "centred":
        # every complementarity product equal: a perfectly centred (dual infeasible) start
        mu0 = max(float(np.mean(np.abs(c))), 1e-3) / m
        pi = mu0 / np.maximum(s, 1e-300)
        z = mu0 / q
    else:
        pi = np.full(s.shape, 0.1)
        z = np.maximum(c - mu[:, None] + AT @ pi, 0.1)
    if warm is not None:
        # an earlier run's iterate (cost units), mapped onto these rows by the caller
        shape = s.shape
        q, s, mu, pi, z = (np.array(v, dtype=float) for v in warm)
        s, pi = s.reshape(shape), pi.reshape(shape)
        mu, pi, z = mu / scale, pi / scale, z / scale
    N = q.size + s.size
    status, message = "stalled", ""
    history: list[float] = []
    t_factor = t_factor_last = 0.0
    t_step, t_prev = 0.0, None  # the last iteration's duration
    it = 0
    stats_saved: dict = {}
    for it in range(max_iter + 1):
        r_link = 1.0 - q.sum(1)
        r_d = c - mu[:, None] + AT @ pi - z
        qz = q * z
        # (the pair rows' products and residual are formed after the factorisation, when its
        # work arrays are gone: 64×64 grid, 0.5 GB each)
        comp = float(np.sum(qz)) + products_sum(s, pi)
        pobj = float(np.sum(c * q))
        dobj = float(mu.sum())
        rel = comp / max(abs(pobj), 1e-300)
        if progress is not None:
            progress(it, pobj * scale, dobj * scale, m)
        if rel <= tol and float(np.abs(r_d).max()) <= 1e-12 and float(np.abs(r_link).max()) <= 1e-12:
            status = "optimal"
            break
        if enough is not None and rel <= check_below and enough(q, mu * scale, duals(pi), rel):
            status, message = "optimal", f"the caller's test passed at relative gap {rel:.1e}"
            break
        history.append(rel)
        if save_at is not None and rel <= save_at and "saved" not in stats_saved:
            stats_saved["saved"] = (q.copy(), s.copy(), mu * scale, pi * scale, z * scale, rel)
        if len(history) > STALL and rel > 0.5 * history[-STALL]:
            message = f"no progress at relative gap {rel:.1e}"
            break
        if it == max_iter:
            message = f"iteration limit at relative gap {rel:.1e}"
            break
        now = time.perf_counter()
        if t_prev is not None:
            t_step = now - t_prev
        room = math.inf if deadline is None else deadline - now
        single, t_next = next_precision(rel, getattr(lin, "single", None), room, t_step, t_factor_last,
                                        SINGLE_ABOVE)
        if t_next > room:
            status, message = "time limit", f"time limit at relative gap {rel:.1e}"
            break
        t_prev = now
        tt = time.perf_counter()
        if hasattr(lin, "single"):  # band blocks, and heads' band part
            lin.single = single
        try:
            Lm = _schur_factor(lin, z / q, np.divide(pi, s, out=_pool.empty_like(s)))
        except np.linalg.LinAlgError as e:
            message = f"stopped at relative gap {rel:.1e}: {e}"
            break
        t_factor_last = time.perf_counter() - tt
        t_factor += t_factor_last
        residuals = [r_link, pair_residual(A @ q, s), r_d]
        newton, direction, steps = _newton_system(A, AT, lin, Lm, q, s, pi, z, rel < REFINE_BELOW, residuals)
        mu_c = comp / N
        aff = direction(-qz, negated_products(s, pi), consume=True)
        ap, ad = steps(aff)
        comp_aff = float(np.sum(moved_products(q, aff[0], ap, z, aff[4], ad))) + moved_products_sum(
            s, aff[1], ap, pi, aff[3], ad)
        sigma = (comp_aff / comp) ** 3
        target = sigma * mu_c
        # the pair rows' arrays (64×64 grid: 0.5 GB each) go as soon as they are used: the
        # corrector's rows over the affine dpi, which with the affine ds goes before the solve
        rs = corrector_rows(target, s, pi, aff[1], aff[3])
        rq = target - qz - aff[0] * aff[4]
        aff = None
        d = direction(rq, rs, consume=True)
        rs = rq = None
        residuals.clear()
        ap, ad = steps(d)
        zero_k = np.zeros(k)
        for _ in range(gondzio):
            if deadline is not None and time.perf_counter() > deadline:
                break  # no more correctors past the deadline (an iteration can take longer than the last)
            # Gondzio: aim at a longer step, move the products outside [0.1, 10] x target back in
            tp, td = min(1.0, 1.5 * ap + 0.1), min(1.0, 1.5 * ad + 0.1)
            vq = moved_products(q, d[0], tp, z, d[4], td)
            vs = moved_products(s, d[1], tp, pi, d[3], td)
            lo, hi = 0.1 * target, 10.0 * target
            cq = np.maximum(np.clip(vq, lo, hi) - vq, -hi)
            cs = centring(vs, lo, hi)
            vs = None
            cor = newton(cq, cs, zero_k, consume=True)
            cs = None
            d2 = [added(u, v, out=v) for u, v in zip(d, cor)]
            cor = None
            ap2, ad2 = steps(d2)
            if ap2 + ad2 < 1.01 * (ap + ad) + 0.02:
                break
            d, ap, ad = d2, ap2, ad2
        # the closures hold this iterate's arrays: gone before the next ones are made
        newton = direction = steps = None
        eta = 0.995 if it < 5 else 0.9995
        ap, ad = min(1.0, eta * ap), min(1.0, eta * ad)
        q = moved(q, d[0], ap)
        s = moved(s, d[1], ap)
        mu = mu + ad * d[2]
        pi = moved(pi, d[3], ad)
        z = moved(z, d[4], ad)
        d = d2 = None
    stats = {"iterations": it, "factor_s": t_factor, "linalg": type(lin).__name__,
             "block_size": getattr(lin, "bs", k), "pairs": P, "ipm_s": time.perf_counter() - t0, **stats_saved}
    return IPMResult(status, q, mu * scale, duals(pi), float(np.sum(c * q)) * scale,
                     float(mu.sum()) * scale, it, message, stats)
