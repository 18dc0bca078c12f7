"""LAPACK's Cholesky routines called without Python's global lock.

scipy's wrappers (``scipy.linalg.lapack``) keep the lock while LAPACK runs, so two
threads factoring blocks take as long as one. scipy also exports the same routines as
function pointers for Cython (``scipy.linalg.cython_lapack``); called through ``ctypes``
(which releases the lock during a foreign call) two threads factor two blocks at once:
200 blocks of 400 × 400 (``dpotrf`` and ``dtrtri``) in 0.15 s instead of 0.28 s.

Only what the dense blocks of :mod:`._ipm` need: the inverse of a block's Cholesky factor
and the product ``L' L`` of a lower triangular matrix, in place on Fortran-ordered
float64 arrays. :data:`AVAILABLE` is False when scipy does not export them (the caller
then uses scipy's wrappers in one thread).

Examples
--------
>>> import numpy as np
>>> H = np.asfortranarray([[4.0, 2.0], [2.0, 5.0]])
>>> if AVAILABLE:
...     assert inverse_factor(H) == 0          # H = L L': H now holds inv(L) (lower)
...     assert triangular_product(H) == 0      # inv(L)' inv(L) = inv(H) (lower)
...     assert np.allclose(np.tril(H), np.tril(np.linalg.inv([[4.0, 2.0], [2.0, 5.0]])))
"""

from __future__ import annotations

import ctypes

import numpy as np


def _routines():
    try:
        from scipy.linalg import cython_lapack

        capi = cython_lapack.__pyx_capi__
        name = ctypes.pythonapi.PyCapsule_GetName
        name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
        pointer = ctypes.pythonapi.PyCapsule_GetPointer
        pointer.restype, pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        from scipy.linalg import cython_blas

        out = {}
        for api, routine, args in ((capi, "dpotrf", 5), (capi, "dtrtri", 6), (capi, "dlauum", 5),
                                   (cython_blas.__pyx_capi__, "dtrmv", 8)):
            cap = api[routine]
            out[routine] = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * args))(pointer(cap, name(cap)))
        return out
    except Exception:  # pragma: no cover - an interpreter or scipy without the capsules
        return None


_F = _routines()
#: whether the lock-free routines are there
AVAILABLE = _F is not None


def _check(A: np.ndarray) -> tuple[ctypes.c_int, ctypes.c_void_p]:
    if not (A.dtype == np.float64 and A.flags.f_contiguous and A.ndim == 2 and A.shape[0] == A.shape[1]):
        raise ValueError("needs a square Fortran-ordered float64 array")
    return ctypes.c_int(A.shape[0]), A.ctypes.data_as(ctypes.c_void_p)


def inverse_factor(A: np.ndarray) -> int:
    """``A = L L'`` (lower Cholesky factor), then ``inv(L)`` into ``A``'s lower triangle; LAPACK's ``info``.

    ``info > 0``: ``A`` is not positive definite (its contents are then undefined). The
    upper triangle is left as it was.
    """
    n, p = _check(A)
    info = ctypes.c_int(0)
    lower, nonunit = ctypes.c_char_p(b"L"), ctypes.c_char_p(b"N")
    _F["dpotrf"](lower, ctypes.byref(n), p, ctypes.byref(n), ctypes.byref(info))
    if info.value:
        return info.value
    _F["dtrtri"](lower, nonunit, ctypes.byref(n), p, ctypes.byref(n), ctypes.byref(info))
    return info.value


def triangular_product(A: np.ndarray) -> int:
    """``L' L`` into the lower triangle of ``A``, whose lower triangle is ``L``; LAPACK's ``info``."""
    n, p = _check(A)
    info = ctypes.c_int(0)
    _F["dlauum"](ctypes.c_char_p(b"L"), ctypes.byref(n), p, ctypes.byref(n), ctypes.byref(info))
    return info.value


def factor_products(W: np.ndarray, X: np.ndarray, lo: int, hi: int) -> None:
    """``X[y] <- W[y] W[y]' X[y]`` for ``lo <= y < hi``, with ``W[y]`` upper triangular.

    ``W``: ``(m, n, n)`` C-ordered (its strict lower triangles are not read), ``X``:
    ``(m, n)`` C-ordered, overwritten. Two BLAS ``dtrmv`` a block, which read its triangle
    alone (a batched ``einsum`` reads the zeros too: 250 blocks of 400 × 400 on two threads,
    7.9 ms against 14.8 ms).

    >>> W = np.triu(np.arange(1.0, 10.0).reshape(3, 3))[None]
    >>> X = np.array([[1.0, 0.0, 2.0]])
    >>> if AVAILABLE:
    ...     factor_products(W, X, 0, 1)
    ...     assert np.allclose(X, W[0] @ W[0].T @ [1.0, 0.0, 2.0])
    """
    m, n, n2 = W.shape
    if not (W.dtype == X.dtype == np.float64 and W.flags.c_contiguous and X.flags.c_contiguous
            and n == n2 and X.shape == (m, n) and 0 <= lo <= hi <= m):
        raise ValueError("needs (m, n, n) and (m, n) C-ordered float64 arrays")
    trmv = _F["dtrmv"]
    size, one = ctypes.c_int(n), ctypes.c_int(1)
    pn, p1 = ctypes.byref(size), ctypes.byref(one)
    lower, notrans, trans = ctypes.c_char_p(b"L"), ctypes.c_char_p(b"N"), ctypes.c_char_p(b"T")
    w0, sw, x0, sx = W.ctypes.data, W.strides[0], X.ctypes.data, X.strides[0]
    for y in range(lo, hi):
        # W[y] read in Fortran order is its transpose: lower triangular, L = W[y]'
        w, x = w0 + y * sw, x0 + y * sx
        trmv(lower, notrans, notrans, pn, w, pn, x, p1)  # x <- W' x
        trmv(lower, trans, notrans, pn, w, pn, x, p1)  # x <- W x
