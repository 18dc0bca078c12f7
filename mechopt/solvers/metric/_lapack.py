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
        out = {}
        for routine, args in (("dpotrf", 5), ("dtrtri", 6), ("dlauum", 5)):
            cap = capi[routine]
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
