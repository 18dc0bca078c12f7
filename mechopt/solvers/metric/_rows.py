"""The pair rows' arrays of :mod:`._ipm` in threaded parts.

The lazy route's IPM keeps ~1.4 million pair rows on 20×20 Euclidean places; between two
factorisations (which run on every core) each of its passes over them — elementwise
updates, step lengths, sparse products — ran on one core, a third of the solve. numpy's
loops and scipy's sparse products release Python's lock: here each pass runs on
contiguous parts of the rows in :func:`._band.worker_pool`'s threads, every entry
computed as it would be in one piece (the results are the same to the bit).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.sparse as sp

from . import _pool
from ._band import ipm_workers, worker_pool

try:  # y += A x for a CSR matrix and a block of vectors, into an array of ours
    from scipy.sparse._sparsetools import csr_matvecs as _csr_matvecs
except ImportError:  # pragma: no cover - a scipy without it: its own product, then a copy
    _csr_matvecs = None

#: arrays from this many entries (the pair rows) are worked on in :func:`ipm_workers`
#: parts at once: numpy's loops and scipy's sparse products release Python's lock
#: (20×20 Euclidean, 1.4 million rows: the work between factorisations on one core was a
#: third of the time)
SPLIT_FROM = 200_000


#: each thread works through its part in pieces of about this many entries, every step of
#: a pass on one piece while it is in cache (64×64 grid, 6.6·10⁷ pair rows × outputs: the
#: four steps of a Newton solve's first pass 0.10 -> 0.06 s)
CHUNK = 1 << 17


def in_parts(v: np.ndarray, work: Callable[[slice], None]) -> None:
    """``work(piece)`` for contiguous pieces of ``v``'s first axis covering it: when ``v``
    has at least :data:`SPLIT_FROM` entries (the lazy route's rows ``(P, 1)``, the shared
    rows ``(P, m)`` of grids and street graphs), in :func:`ipm_workers` threads, each
    thread's part in pieces of about :data:`CHUNK` entries.

    ``work`` must be elementwise along the first axis (or a reduction over pieces): each
    entry is computed as it would be at once, the results are the same to the bit.

    >>> out = np.zeros(300_000)
    >>> in_parts(out, lambda sl: out.__setitem__(sl, sl.stop - sl.start))
    >>> int(out.max()) <= CHUNK, bool(out.min() > 0)
    (True, True)
    """
    n = len(v)
    if v.size < SPLIT_FROM:
        work(slice(0, n))
        return
    nw = min(ipm_workers(), n)
    rows = max(1, CHUNK // max(v[:1].size, 1))
    cut = np.linspace(0, n, nw + 1).astype(int)

    def part(i):
        lo, hi = int(cut[i]), int(cut[i + 1])
        for r in range(lo, hi, rows):
            work(slice(r, min(r + rows, hi)))

    if nw == 1:
        part(0)
    else:
        list(worker_pool(nw).map(part, range(nw)))


def moved(v: np.ndarray, dv: np.ndarray, t: float) -> np.ndarray:
    """``v + t dv`` in one new array (the pair rows' arrays are the largest: every pass counts)."""
    out = _pool.empty_like(v)

    def part(sl):
        np.multiply(dv[sl], t, out=out[sl])
        out[sl] += v[sl]

    in_parts(v, part)
    return out


def _moved_product(out, sl, v, dv, tv, u, du, tu) -> np.ndarray:
    """``(v + tv dv) * (u + tu du)`` on the rows ``sl``, into ``out`` (None: a new piece)."""
    o = np.multiply(dv[sl], tv, out=None if out is None else out[sl])
    o += v[sl]
    x = du[sl] * tu
    x += u[sl]
    o *= x
    return o


def moved_products(v: np.ndarray, dv: np.ndarray, tv: float, u: np.ndarray, du: np.ndarray, tu: float) -> np.ndarray:
    """``(v + tv dv) * (u + tu du)`` in one new array."""
    out = _pool.empty_like(v)
    in_parts(v, lambda sl: _moved_product(out, sl, v, dv, tv, u, du, tu))
    return out


def added(u: np.ndarray, v: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``u + v`` (in parts for the pair rows), into ``out`` if given (it may be ``v``)."""
    out = _pool.empty_like(u) if out is None else out
    in_parts(u, lambda sl: np.add(u[sl], v[sl], out=out[sl]))
    return out


def piece_sum(v: np.ndarray, term: Callable[[slice], np.ndarray]) -> float:
    """The sum of ``term(piece)`` over :func:`in_parts`'s pieces of ``v``: each row's terms
    summed, then the rows' sums (the same total however the rows are split).

    >>> piece_sum(np.ones((300_000, 2)), lambda sl: np.ones((sl.stop - sl.start, 2)))
    600000.0
    """
    rows = np.empty(len(v))

    def part(sl):
        t = term(sl)
        rows[sl] = t.sum(axis=1) if t.ndim == 2 else t

    in_parts(v, part)
    return float(np.sum(rows))


def products_sum(s: np.ndarray, pi: np.ndarray) -> float:
    """``sum(s pi)`` without an array of the products (the complementarity of the pair rows).

    >>> products_sum(np.array([[2.0], [2.0]]), np.array([[0.5], [4.0]]))
    9.0
    """
    return piece_sum(s, lambda sl: s[sl] * pi[sl])


def moved_products_sum(v: np.ndarray, dv: np.ndarray, tv: float, u: np.ndarray, du: np.ndarray, tu: float) -> float:
    """``sum((v + tv dv) * (u + tu du))`` without an array of the products.

    >>> moved_products_sum(np.ones(3), np.ones(3), 1.0, np.ones(3), -np.ones(3), 0.5)
    3.0
    """
    return piece_sum(v, lambda sl: _moved_product(None, sl, v, dv, tv, u, du, tu))


def pair_residual(Aq: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``-(A q) - s`` in place of ``A q``, in parts.

    >>> pair_residual(np.array([[1.0], [-3.0]]), np.array([[2.0], [2.0]])).ravel().tolist()
    [-3.0, 1.0]
    """
    def part(sl):
        np.negative(Aq[sl], out=Aq[sl])
        Aq[sl] -= s[sl]

    in_parts(Aq, part)
    return Aq


def negated_products(s: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """``-(s pi)`` in one new array: the pair rows' right-hand side of the affine direction.

    >>> negated_products(np.array([2.0, 2.0]), np.array([0.5, 4.0])).tolist()
    [-1.0, -8.0]
    """
    out = _pool.empty_like(s)

    def part(sl):
        np.multiply(s[sl], pi[sl], out=out[sl])
        np.negative(out[sl], out=out[sl])

    in_parts(s, part)
    return out


def corrector_rows(target: float, s: np.ndarray, pi: np.ndarray, ds: np.ndarray, dpi: np.ndarray) -> np.ndarray:
    """``target - s pi - ds dpi`` (Mehrotra's corrector for the pair rows), in parts, in place
    of ``dpi`` (the affine direction's, not needed after it: one array of pair rows fewer).

    >>> corrector_rows(1.0, np.ones(2), np.array([0.5, 2.0]), np.array([1.0, -1.0]), np.array([0.25, 1.0])).tolist()
    [0.25, 0.0]
    """
    def part(sl):
        e = ds[sl] * dpi[sl]
        r = np.multiply(s[sl], pi[sl], out=dpi[sl])
        np.subtract(target, r, out=r)
        r -= e

    in_parts(dpi, part)
    return dpi


def centring(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """``max(clip(v, lo, hi) - v, -hi)`` in place of ``v``, in parts: Gondzio's correction
    of the products ``v`` (no second array of pair rows: 0.5 GB on a 64×64 grid).

    >>> centring(np.array([0.05, 1.0, 50.0]), 0.1, 10.0)
    array([  0.05,   0.  , -10.  ])
    """
    def part(sl):  # a piece of rows at a time (:func:`in_parts`): a small temporary
        c = np.clip(v[sl], lo, hi)
        c -= v[sl]
        np.maximum(c, -hi, out=v[sl])

    in_parts(v, part)
    return v


def step_to_bound(v: np.ndarray, dv: np.ndarray) -> float:
    """The largest ``t <= 1`` with ``v + t dv >= 0`` (``v > 0``): ``1 / max(1, max(-dv / v))``."""
    lows: list[float] = []

    def part(sl):
        lows.append(float((dv[sl] / v[sl]).min()) if sl.stop > sl.start else np.inf)

    in_parts(v, part)
    r = -min(lows)
    return 1.0 if r <= 1.0 else 1.0 / r


def row_parts(M: sp.csr_matrix) -> list[tuple[slice, sp.csr_matrix]]:
    """``M`` in :func:`ipm_workers` parts of rows (one part below :data:`SPLIT_FROM` rows)."""
    n = M.shape[0]
    nw = ipm_workers() if n >= SPLIT_FROM else 1
    cut = np.linspace(0, n, nw + 1).astype(int)
    return [(slice(int(lo), int(hi)), M[int(lo):int(hi)]) for lo, hi in zip(cut[:-1], cut[1:])]


def parts_product(parts: list[tuple[slice, sp.csr_matrix]], x: np.ndarray) -> np.ndarray:
    """``M @ x`` from :func:`row_parts` of ``M``, the parts in threads."""
    if len(parts) == 1:
        return parts[0][1] @ x
    out = _pool.empty((parts[-1][0].stop,))

    def part(i):
        sl, Mi = parts[i]
        out[sl] = Mi @ x

    list(worker_pool(len(parts)).map(part, range(len(parts))))
    return out


class SharedRows:
    """The pair rows every output shares (a ``(P, k)`` CSR matrix ``A``): ``A @ Q`` and
    ``A.T @ Pi`` for ``(k, m)`` and ``(P, m)`` arrays, into arrays of :mod:`._pool`, the
    rows in :func:`ipm_workers` parts (scipy's products release Python's lock).

    >>> import numpy as np, scipy.sparse as sp
    >>> A = SharedRows(sp.csr_matrix(np.array([[1.0, -2.0], [0.0, 3.0], [-1.0, 0.0]])))
    >>> Q = np.arange(6.0).reshape(2, 3)
    >>> bool(np.array_equal(A @ Q, A.A @ Q)), bool(np.array_equal(A.T @ (A @ Q), A.A.T @ (A.A @ Q)))
    (True, True)
    """

    def __init__(self, A: sp.csr_matrix, _t: "SharedRows | None" = None):
        self.A = A.tocsr()
        self.shape = self.A.shape
        self._t = _t

    @property
    def T(self) -> "SharedRows":
        if self._t is None:
            self._t = SharedRows(self.A.T.tocsr(), self)
        return self._t

    def __matmul__(self, X: np.ndarray) -> np.ndarray:
        X = np.ascontiguousarray(X, dtype=float)
        n, m = self.shape[0], X.shape[1]
        out = _pool.empty((n, m))
        if _csr_matvecs is None:  # pragma: no cover
            out[...] = self.A @ X
            return out
        A = self.A
        nw = min(ipm_workers(), n) if out.size >= SPLIT_FROM else 1
        cut = np.linspace(0, n, nw + 1).astype(int)

        def part(i):
            lo, hi = int(cut[i]), int(cut[i + 1])
            o = out[lo:hi]
            o.fill(0.0)
            ptr = A.indptr[lo:hi + 1]
            sl = slice(int(ptr[0]), int(ptr[-1]))
            _csr_matvecs(hi - lo, A.shape[1], m, ptr - ptr[0], A.indices[sl], A.data[sl], X.ravel(), o.ravel())

        if nw == 1:
            part(0)
        else:
            list(worker_pool(nw).map(part, range(nw)))
        return out
