"""Block-tridiagonal blocks of the structured IPM (:mod:`._ipm`): ``M = sum_y H_y^{-1}`` in ``O(m k^2 bs)``.

When the kept pairs join only inputs at most ``bs`` apart in some order (a grid's
neighbours in row-major order, a street graph in reverse Cuthill–McKee order), every
per-output matrix ``H_y = diag(z_y / q_y) + A' diag(pi_y / s_y) A`` of :mod:`._ipm` is
block tridiagonal: :class:`BandBlocks` factors it by blocks and forms the blocks of its
inverse row by row (the "recursive Green's function" recursion), as batched products
over the outputs, which two threads share out (numpy's batched products and Cholesky
factorisations release the GIL).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np
import scipy.sparse as sp

from . import _pool

#: regularisation added to each unit-diagonal block before its Cholesky factorisation
REG = 1e-14
#: at most this many threads share out the outputs of the band factorisation
MAX_WORKERS = 2
#: a thread of the band factorisation gets at least this many outputs
MIN_PART = 32
#: and factors at most this many at a time (its temporary arrays grow with them)
MAX_PART = 400
#: and at most as many as fill this many bytes with its two rows of inverse blocks in
#: double precision (48×48 grid: 395 outputs; 64×64: 166)
PART_BYTES = 700_000_000
#: a band solve multiplies by a block ``W_i`` and its transpose this many outputs at a time
SOLVE_CHUNK = 64
#: the factorisation's two rows of inverse blocks take a free block of the pool (:mod:`._pool`)
#: up to this many times their size (64×64 grid: 174 MB in single precision in the Newton
#: solves' 528 MB blocks)
FIT = 4


def ipm_workers() -> int:
    """Threads that share out the outputs of :class:`BandBlocks`: the cores this process may use, at most :data:`MAX_WORKERS`.

    numpy's batched products and Cholesky factorisations release the GIL, so the outputs'
    blocks factor in parallel; each thread's BLAS keeps to one thread
    (:mod:`mechopt._threads`).
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


_POOL: dict[int, ThreadPoolExecutor] = {}
_POOL_LOCK = threading.Lock()


def _forked() -> None:
    # a forked child has none of its parent's threads: its pools start anew
    global _POOL_LOCK
    _POOL.clear()
    _POOL_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def worker_pool(workers: int) -> ThreadPoolExecutor:
    """One process-wide pool of ``workers`` threads for the IPM's per-output work.

    A new pool for each factorisation or solve started two threads each time (20×20
    Euclidean: ~6 000 thread starts, 3 s). Only work that does not wait on the pool itself
    runs in it.

    >>> worker_pool(2) is worker_pool(2)
    True
    """
    with _POOL_LOCK:
        pool = _POOL.get(workers)
        if pool is None:
            pool = _POOL[workers] = ThreadPoolExecutor(workers, thread_name_prefix="mechopt-ipm")
        return pool


def _parts(m: int, workers: int, most: int | None = None) -> list[slice]:
    """``m`` outputs in contiguous parts: at least ``workers`` of at least :data:`MIN_PART`
    each where there are enough outputs, none over ``most`` (default :data:`MAX_PART`), and
    a multiple of ``workers`` of them when there are more than ``workers`` (three parts on
    two threads leave one idle a third of the time: a factorisation on 2 000 street
    intersections, 979 outputs, took 6.5 s in three parts, 4.8 s in four).

    >>> _parts(10, 2), _parts(1000, 2)
    ([slice(0, 10, None)], [slice(0, 250, None), slice(250, 500, None), slice(500, 750, None), slice(750, 1000, None)])
    """
    most = MAX_PART if most is None else most
    n = max(1, min(workers, m // MIN_PART), -(-m // most))
    if n > workers:
        n = -(-n // workers) * workers
    edges = np.linspace(0, m, n + 1).round().astype(int)
    return [slice(int(lo), int(hi)) for lo, hi in zip(edges[:-1], edges[1:])]


def _each_part(m: int, workers: int, work: Callable, most: int | None = None) -> list:
    """``[work(part) for part in _parts(m, workers, most)]``, in ``workers`` threads."""
    parts = _parts(m, workers, most)
    if len(parts) == 1 or workers == 1:
        return [work(p) for p in parts]
    return list(worker_pool(workers).map(work, parts))


def _tri_inv(L: np.ndarray) -> np.ndarray:
    """The inverses of a stack of lower-triangular matrices, by forward substitution.

    One batched product per row: for the small blocks of :class:`BandBlocks` about 4x
    faster than :func:`numpy.linalg.inv` (a general LU per matrix).

    Examples
    --------
    >>> import numpy as np
    >>> L = np.array([[[2.0, 0.0], [1.0, 4.0]]])
    >>> _tri_inv(L)[0] @ L[0]
    array([[1., 0.],
           [0., 1.]])
    """
    n = L.shape[-1]
    W = np.zeros_like(L)
    d = 1.0 / np.diagonal(L, axis1=-2, axis2=-1)
    W[..., 0, 0] = d[..., 0]
    for j in range(1, n):
        W[..., j:j + 1, :j] = -(L[..., j:j + 1, :j] @ W[..., :j, :j]) * d[..., j, None, None]
        W[..., j, j] = d[..., j]
    return W


def _mirror_upper(M: np.ndarray, band: int = 512) -> None:
    """The lower triangle of ``M`` from its upper one, in place: ``np.triu(M) + np.triu(M, 1).T``
    without a temporary of ``M``'s size (a band of columns at a time).

    >>> M = np.arange(9.0).reshape(3, 3)
    >>> _mirror_upper(M, band=2); M
    array([[0., 1., 2.],
           [1., 4., 5.],
           [2., 5., 8.]])
    """
    n = len(M)
    for lo in range(0, n, band):
        hi = min(lo + band, n)
        M[lo:hi, :lo] = M[:lo, lo:hi].T
        d = M[lo:hi, lo:hi]
        low = np.tril_indices(hi - lo, -1)
        d[low] = d.T[low]


def apart_in(perm: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How far apart each pair ``(a, b)`` is in the order ``perm`` (``perm[i]``: the place at position ``i``).

    >>> apart_in(np.array([2, 0, 1]), np.array([2, 0]), np.array([1, 1])).tolist()
    [2, 1]
    """
    pos = np.empty(len(perm), np.int64)
    pos[perm] = np.arange(len(perm))
    return np.abs(pos[a] - pos[b])


def band_order(k: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, int]:
    """An order of the inputs and the largest distance in it between paired inputs.

    The better of the given order (a grid's row-major order) and reverse Cuthill–McKee.

    Examples
    --------
    >>> import numpy as np
    >>> a, b = np.array([0, 1, 2, 3]), np.array([1, 2, 3, 4])     # a path
    >>> band_order(5, a, b)[1]
    1
    """
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    best = (np.arange(k), int(np.abs(a - b).max()) if len(a) else 1)
    G = sp.csr_matrix((np.ones(len(a)), (a, b)), shape=(k, k))
    G = (G + G.T).tocsr()
    perm = np.asarray(reverse_cuthill_mckee(G, symmetric_mode=True))
    bw = int(apart_in(perm, a, b).max()) if len(a) else 1
    if bw < best[1]:
        best = (perm, bw)
    return best[0], max(best[1], 1)


def fiedler_order(k: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, int] | None:
    """A band order of the pairs' graph and its largest distance between paired places:
    Cuthill–McKee (breadth first, each place's new neighbours in turn) from either end of
    the graph's Fiedler vector (its Laplacian's second eigenvector), neighbours taken in
    that vector's order, the narrower of the two; ``None`` when the graph is not connected
    or the eigensolver fails.

    Clustered places have no narrow order by reverse Cuthill–McKee from a place of least
    degree: 1 000 places from a map (``benchmarks.bench_geo.map_doc``) have their cheapest
    pairs within 93 in that order, within 75 in this one.

    >>> x = np.random.default_rng(0).permutation(30)          # a path, its places shuffled
    >>> p, bw = fiedler_order(30, x[:-1], x[1:])
    >>> bw, sorted({abs(int(np.flatnonzero(p == u)[0]) - int(np.flatnonzero(p == v)[0])) for u, v in zip(x[:-1], x[1:])})
    (1, [1])
    """
    from scipy.sparse.csgraph import connected_components, laplacian
    from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, eigsh

    G = sp.csr_matrix((np.ones(len(a)), (a, b)), shape=(k, k))
    G = ((G + G.T) > 0).astype(float).tocsr()
    if k < 3 or connected_components(G, directed=False)[0] > 1:
        return None
    try:  # (a fixed start vector: the same order every run)
        val, vec = eigsh(laplacian(G).tocsc(), k=2, sigma=-1e-3, which="LM", v0=np.linspace(1.0, 2.0, k))
    except (ArpackError, ArpackNoConvergence, RuntimeError):
        return None
    f = vec[:, np.argsort(val)[1]]
    best = None
    for start in (int(np.argmin(f)), int(np.argmax(f))):
        seen = np.zeros(k, bool)
        seen[start] = True
        order = [start]
        for v in order:  # (the list grows as it is read: breadth first)
            nb = G.indices[G.indptr[v]:G.indptr[v + 1]]
            nb = nb[~seen[nb]]
            nb = nb[np.argsort(f[nb], kind="stable")]
            seen[nb] = True
            order.extend(nb.tolist())
        perm = np.array(order, np.int64)
        bw = max(int(apart_in(perm, a, b).max()), 1) if len(a) else 1
        if best is None or bw < best[1]:
            best = (perm, bw)
    return best


def next_precision(rel: float, single: bool | None, room: float, t_step: float, t_factor: float,
                   above: float = 1e-3) -> tuple[bool, float]:
    """Whether the next band factorisation forms ``M`` in single precision (``single``: the
    last one did; None: not band blocks), and how long the next iteration will take.

    About as long as the last (``t_step``), its factorisation up to twice as long (the
    batched products' rate halves) if it is the first in double precision, at a relative
    gap ``rel`` at most ``above`` (the IPM's ``SINGLE_ABOVE``) — unless that would not fit
    the ``room`` left and one more in single precision would (a safeguard for a time limit's
    last iterations; the 64×64 runs that ended past 1 800 s did so for another reason, the
    decomposition after the IPM, see :mod:`._route`).

    >>> next_precision(1e-2, True, 100.0, 50.0, 40.0), next_precision(5e-4, True, 100.0, 50.0, 40.0)
    ((True, 50.0), (False, 90.0))
    >>> next_precision(5e-4, True, 80.0, 50.0, 40.0), next_precision(5e-4, None, 80.0, 50.0, 40.0)
    ((True, 50.0), (False, 50.0))
    """
    if single is None:
        return False, t_step
    if rel > above or (single and t_step + t_factor > room >= t_step):
        return True, t_step
    return False, t_step + (t_factor if single else 0.0)


class BandBlocks:
    """``M = sum_y H_y^{-1}`` when every ``H_y`` is block tridiagonal in the order ``perm``.

    Block Cholesky ``H = L L'`` with ``L[i, i] = chol(S_i)``, ``S_i = A_i - Y_{i-1}' Y_{i-1}``,
    ``Y_i = L[i, i]^{-1} B_i`` (``A_i``, ``B_i``: diagonal and upper blocks); the inverse's
    blocks by ``G[n-1, n-1] = S_{n-1}^{-1}``, ``G[i, j>i] = -X_i G[i+1, j]`` and
    ``G[i, i] = S_i^{-1} - G[i, i+1] X_i'`` with ``X_i = S_i^{-1} B_i`` — one row of
    blocks at a time, as one batched product over the outputs.

    When every upper block ``B_i`` is diagonal (a grid's neighbours in row-major order:
    the pair below a place is in the same column of the next block) :attr:`diagonal` is
    True and ``P_i = W_i' W_i = S_i^{-1}`` is used instead of ``Y_i``:
    ``Y_{i-1}' Y_{i-1} = B P B`` and ``X_i = P_i B_i`` are then scalings (one batched
    product a block instead of four; a factorisation of 384 outputs of a 48×48 grid 8–14 %
    faster). ``P_i`` is not kept: the forward pass needs the last one, the recursion forms
    each again from ``W_i`` (one product a block, against ``k / bs`` of the recursion),
    which halves the factor's memory (64×64: 8.6 GB instead of 17). The
    solves still multiply by ``W_i`` and ``W_i'`` in turn (``Y_i x = W_i (B_i x)``): with
    the explicit inverses ``P_i`` a 48×48 grid's IPM stalled at a gap of 1e-3.
    """

    def __init__(self, k: int, a: np.ndarray, b: np.ndarray, ca: np.ndarray, cb: np.ndarray,
                 perm: np.ndarray, bs: int, workers: int | None = None):
        self.workers = ipm_workers() if workers is None else max(int(workers), 1)
        self.perm = np.asarray(perm)
        inv = np.empty(k, np.int64)
        inv[self.perm] = np.arange(k)
        self.inv = inv
        nb = -(-k // bs)
        self.k, self.bs, self.nb, self.kp = k, bs, nb, nb * bs
        pa, pb = inv[a], inv[b]
        if len(a) and np.abs(pa - pb).max() > bs:
            raise ValueError("pairs farther apart than the block size")

        def slot(r, c):
            # diagonal block i -> slots [i*bs*bs, ...); upper block (i, i+1) -> (nb + i); entries
            # below the diagonal blocks are stored transposed in the upper block
            bi, bj = r // bs, c // bs
            low = bi > bj
            blk = np.where(bi == bj, bi, nb + np.minimum(bi, bj))
            rr = np.where(low, c % bs, r % bs)
            cc = np.where(low, r % bs, c % bs)
            return (blk * bs + rr) * bs + cc

        P = len(a)
        cross = (pa // bs) != (pb // bs)
        rows = np.concatenate([slot(pa, pa), slot(pb, pb), slot(pa, pb), slot(pb, pa)[~cross]])
        vals = np.concatenate([ca * ca, cb * cb, ca * cb, (ca * cb)[~cross]])
        cols = np.concatenate([np.arange(P)] * 3 + [np.arange(P)[~cross]])
        T = sp.csr_matrix((vals, (rows, cols)), shape=((2 * nb - 1) * bs * bs, P))
        i = np.arange(self.kp)
        self.dslot = ((i // bs) * bs + i % bs) * bs + i % bs
        # most slots of the blocks hold no pair (on 2 000 street intersections 85 %): the
        # product with the pair weights fills only the others, and each block is spread out
        # from them when it is used (a dense array of every block for 400 outputs took 0.7 GB
        # on a 48×48 grid)
        self.rows = np.union1d(np.flatnonzero(np.diff(T.indptr)), self.dslot)
        self.Tc = T[self.rows]
        self.drow = np.searchsorted(self.rows, self.dslot)
        #: block ``j``'s filled slots are ``rows[first[j]:first[j + 1]]``, at ``place`` within it
        self.first = np.searchsorted(self.rows, np.arange(2 * nb) * bs * bs)
        self.place = self.rows % (bs * bs)
        #: every pair across two blocks joins the same position in both (every ``B_i`` diagonal)
        self.diagonal = bool(np.all(pa[cross] % bs == pb[cross] % bs))
        # arrays kept from one factorisation to the next: a fresh gigabyte costs ~2 s of page
        # faults on this machine, more than the products that fill it
        self._kept: dict = {}
        self._spare: list = []
        #: form ``M``'s block rows in single precision (the factors and the solves stay double)
        self.single = False
        #: ``entries(part)``: the filled slots of the outputs ``part`` (``Tc @ D[:, part]``), when
        #: a caller forms them from rows of its own (:mod:`._heads`)
        self.entries: Callable | None = None
        #: outputs a thread factors at a time: its two rows of inverse blocks within
        #: :data:`PART_BYTES` in double precision (64×64 grid: 166 outputs)
        self.most = int(np.clip(PART_BYTES // (2 * 8 * bs * self.kp), MIN_PART, MAX_PART))

    def _array(self, name: str, shape: tuple) -> np.ndarray:
        """The array ``name`` of the last factorisation if its shape is ``shape``, else a new one."""
        arr = self._kept.get(name)
        if arr is None or arr.shape != shape:
            arr = self._kept[name] = np.empty(shape)
        return arr

    def factor(self, dq: np.ndarray, D: np.ndarray) -> np.ndarray:
        k, m = dq.shape
        nb, bs = self.nb, self.bs
        self.W = self._array("W", (nb, m, bs, bs))
        if self.diagonal:
            self.bt = self._array("bt", (max(nb - 1, 1), m, bs))
        else:
            self.Y = self._array("Y", (max(nb - 1, 1), m, bs, bs))
        self.scb = self._array("scb", (nb, m, bs))
        sums: dict[int, np.ndarray] = {}
        lock = threading.Lock()
        itemsize = 4 if self.single else 8
        _pool.keep_only(self.most * self.bs * self.kp * itemsize,
                        2 * min(self.workers, len(_parts(m, self.workers, self.most))), FIT)

        def part(sl):
            with self._work(sl.stop - sl.start) as work:
                # adds into the thread's ``M``, zeros when its arrays were made (they are
                # dropped after each factorisation)
                self._factor_into(dq[:, sl], D[:, sl], sl, work)
                with lock:
                    sums[id(work["M"])] = work["M"]

        _each_part(m, self.workers, part, self.most)
        # a thread's parts add into its own sum (adding each part's M into one shared M
        # read and wrote 2 · 134 MB a part on a 64×64 grid)
        M = functools.reduce(np.add, sums.values())
        sums.clear()
        # the work arrays go between factorisations, the solves' arrays take their place
        # (64×64 grid, double precision: 1.4 GB); within :func:`mechopt._heap.heap_kept`
        # the next factorisation reuses the freed memory without page faults
        self._spare.clear()
        _mirror_upper(M)
        M = M[:k, :k]
        if np.array_equal(self.inv, np.arange(k)):
            return M
        return M[np.ix_(self.inv, self.inv)]

    @contextlib.contextmanager
    def _work(self, m: int):
        """A thread's work arrays for ``m`` outputs: views of arrays for :attr:`most` outputs,
        kept in :attr:`_spare` from one part to the next within a factorisation (parts
        differ by one output; fresh arrays a part would cost page faults)."""
        try:
            w = self._spare.pop()
        except IndexError:
            w = {}
        dt = np.float32 if self.single else np.float64
        cap = max(m, self.most)
        if w.get("cap", 0) < m or w["R"].dtype != dt:
            # (from :mod:`._pool` where it is on: the same arrays every factorisation)
            w = {"cap": cap, "R": _pool.empty((cap, self.bs, self.kp), dt, fit=FIT),
                 "Rn": _pool.empty((cap, self.bs, self.kp), dt, fit=FIT), "M": np.zeros((self.kp, self.kp)),
                 "P": np.empty((cap, self.bs, self.bs))}
        try:
            yield {"R": w["R"][:m], "Rn": w["Rn"][:m], "M": w["M"], "P": w["P"][:m]}
        finally:
            self._spare.append(w)

    def _factor_into(self, dq: np.ndarray, D: np.ndarray, part: slice, work: dict) -> np.ndarray:
        k, m = dq.shape
        nb, bs = self.nb, self.bs
        Hc = self.Tc @ D if self.entries is None else self.entries(part)
        Hc[self.drow[:k]] += dq[self.perm]
        Hc[self.drow[k:]] = 1.0
        sc = 1.0 / np.sqrt(Hc[self.drow])  # (kp, m)
        scb = sc.reshape(nb, bs, m).transpose(0, 2, 1)  # (nb, m, bs)
        self.scb[:, part] = scb

        def Hb(j):  # block j of every H_y: (m, bs, bs); j < nb diagonal, else (j - nb, j - nb + 1)
            lo, hi = self.first[j], self.first[j + 1]
            out = np.zeros((m, bs * bs))
            out[:, self.place[lo:hi]] = Hc[lo:hi].T
            return out.reshape(m, bs, bs)

        if self.diagonal:
            sinv, nX = self._forward_diagonal(Hb, scb, part, work["P"])
        else:
            sinv, nX = self._forward(Hb, scb, part)

        # the current row of blocks of every H_y^{-1}, and the next one: two buffers in turn
        # (writing the product into the other buffer saves a copy of the row a step)
        R, Rn, M = work["R"], work["Rn"], work["M"]  # M: this part is added into its upper blocks
        dt = R.dtype
        ones = np.ones(m, dt)
        lo = (nb - 1) * bs
        R[:, :, lo:] = sinv(nb - 1)
        M[lo:, lo:] += R[:, :, lo:].sum(0)
        for i in range(nb - 2, -1, -1):
            nXi = nX(i).astype(dt)
            lo = (i + 1) * bs
            np.matmul(nXi, R[:, :, lo:], out=Rn[:, :, lo:])
            Rn[:, :, i * bs:lo] = sinv(i) + Rn[:, :, lo:lo + bs] @ nXi.transpose(0, 2, 1)
            for r in range(bs):  # the sum over the outputs, a BLAS product a row: twice numpy's sum(0)
                M[i * bs + r, i * bs:] += ones @ Rn[:, r, i * bs:]
            R, Rn = Rn, R
        return M

    def _forward(self, Hb: Callable, scb: np.ndarray, part: slice) -> tuple[Callable, Callable]:
        """Block Cholesky of the outputs ``part`` into :attr:`W`, :attr:`Y`; ``(S_i^{-1}, -X_i)`` for the recursion."""
        nb = self.nb
        eye = REG * np.eye(self.bs)
        W = self.W[:, part]
        Y = self.Y[:, part]
        for i in range(nb):
            Ai = Hb(i) * scb[i][:, :, None] * scb[i][:, None, :] + eye
            if i > 0:
                Ai -= Y[i - 1].transpose(0, 2, 1) @ Y[i - 1]
            W[i] = _tri_inv(np.linalg.cholesky(Ai))  # raises LinAlgError if not PD
            if i < nb - 1:
                Bi = Hb(nb + i) * scb[i][:, :, None] * scb[i + 1][:, None, :]
                np.matmul(W[i], Bi, out=Y[i])

        def sinv(i):  # S_i^{-1} in the unscaled variables: D W' W D
            Wi = W[i] * scb[i][:, None, :]
            return Wi.transpose(0, 2, 1) @ Wi

        def nX(i):
            return (scb[i][:, :, None] * (W[i].transpose(0, 2, 1) @ Y[i])) / -scb[i + 1][:, None, :]

        return sinv, nX

    def _forward_diagonal(self, Hb: Callable, scb: np.ndarray, part: slice,
                          buf: np.ndarray) -> tuple[Callable, Callable]:
        """:meth:`_forward` when every ``B_i`` is diagonal: :attr:`W` and the scaled diagonals
        of the ``B_i`` into :attr:`bt`; ``P_i = W_i' W_i`` formed into ``buf`` when used."""
        nb = self.nb
        eye = REG * np.eye(self.bs)
        W = self.W[:, part]
        bt = self.bt[:, part]
        last: dict = {}

        def P(i):  # the recursion asks for each i twice in a row (sinv, then nX)
            if last.get("i") != i:
                last["i"] = i
                np.matmul(W[i].transpose(0, 2, 1), W[i], out=buf)
            return buf

        for i in range(nb):
            Ai = Hb(i) * scb[i][:, :, None] * scb[i][:, None, :] + eye
            if i > 0:
                Ai -= P(i - 1) * bt[i - 1][:, :, None] * bt[i - 1][:, None, :]
            W[i] = _tri_inv(np.linalg.cholesky(Ai))  # raises LinAlgError if not PD
            if i < nb - 1:
                bt[i] = np.diagonal(Hb(nb + i), axis1=1, axis2=2) * scb[i] * scb[i + 1]

        def sinv(i):
            return P(i) * scb[i][:, :, None] * scb[i][:, None, :]

        def nX(i):
            return P(i) * scb[i][:, :, None] * (bt[i] / -scb[i + 1])[:, None, :]

        return sinv, nX

    def solve(self, G: np.ndarray) -> np.ndarray:
        k, m = G.shape
        out = np.empty((k, m))

        def part(sl):
            out[:, sl] = self._solve_part(G[:, sl], sl)

        _each_part(m, self.workers, part)
        return out

    def _solve_part(self, G: np.ndarray, part: slice) -> np.ndarray:
        k, m = G.shape
        nb, bs = self.nb, self.bs
        scb = self.scb[:, part]
        v = np.zeros((self.kp, m))
        v[:k] = G[self.perm]
        v = v.reshape(nb, bs, m).transpose(0, 2, 1) * scb  # (nb, m, bs)
        v = v[..., None]
        if self.diagonal:
            x = self._solve_diagonal(v, part)
        else:
            x = self._solve_general(v, part)
        xf = (x[..., 0] * scb).transpose(0, 2, 1).reshape(self.kp, m)[:k]
        return xf[self.inv]

    def _solve_diagonal(self, v: np.ndarray, part: slice) -> np.ndarray:
        # as :meth:`_solve_general` with Y_i = W_i B_i: u_i = W_i t_i, t_i = v_i - B_{i-1} W_{i-1}' u_{i-1};
        # x_i = W_i' W_i (t_i - B_i x_{i+1}). Both products with W_i are taken a few outputs
        # at a time, while their blocks are in cache: a solve reads the factor twice, not four times
        nb, m = self.nb, v.shape[1]
        W, bt = self.W[:, part], self.bt[:, part, :, None]
        cuts = range(0, m, SOLVE_CHUNK)

        def both(i, r, out):  # out = W_i' W_i r
            for lo in cuts:
                Wc = W[i, lo:lo + SOLVE_CHUNK]
                np.matmul(Wc.transpose(0, 2, 1), Wc @ r[lo:lo + SOLVE_CHUNK], out=out[lo:lo + SOLVE_CHUNK])

        t = np.empty_like(v)
        x = np.empty_like(v)
        t[0] = v[0]
        both(0, t[0], x[0])  # x[0] holds W_0' u_0 until the backward pass
        for i in range(1, nb):
            np.subtract(v[i], bt[i - 1] * x[i - 1], out=t[i])
            both(i, t[i], x[i])
        for i in range(nb - 2, -1, -1):
            both(i, t[i] - bt[i] * x[i + 1], x[i])
        return x

    def _solve_general(self, v: np.ndarray, part: slice) -> np.ndarray:
        return self.forward_back(v, part)[1]

    def forward_back(self, v: np.ndarray, part: slice) -> tuple[np.ndarray, np.ndarray]:
        """``(u, x)``: ``u = L^{-1} v`` and ``x = L^{-T} u`` for the outputs ``part`` (``v``:
        (nb, outputs, bs, columns), scaled as :meth:`solve` scales it; any number of columns)."""
        nb = self.nb
        W = self.W[:, part]
        # forward: u_i = W_i (v_i - Y_{i-1}' u_{i-1}); backward: x_i = W_i' (u_i - Y_i x_{i+1})
        # (a solve reads every W and Y twice, as it would the products W_i Y_{i-1}' and
        # W_i' Y_i: forming them would cost a gigabyte each on 2 000 street intersections);
        # with every B_i diagonal, Y_i = W_i B_i
        if self.diagonal:
            bt = self.bt[:, part, :, None]

            def Yt_u(i, u):  # Y_i' u
                return bt[i] * (W[i].transpose(0, 2, 1) @ u)

            def Y_x(i, x):  # Y_i x
                return W[i] @ (bt[i] * x)
        else:
            Y = self.Y[:, part]

            def Yt_u(i, u):
                return Y[i].transpose(0, 2, 1) @ u

            def Y_x(i, x):
                return Y[i] @ x
        u = np.empty_like(v)
        u[0] = W[0] @ v[0]
        for i in range(1, nb):
            u[i] = W[i] @ (v[i] - Yt_u(i - 1, u[i - 1]))
        x = np.empty_like(u)
        x[nb - 1] = W[nb - 1].transpose(0, 2, 1) @ u[nb - 1]
        for i in range(nb - 2, -1, -1):
            x[i] = W[i].transpose(0, 2, 1) @ (u[i] - Y_x(i, x[i + 1]))
        return u, x
