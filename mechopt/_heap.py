"""Freed memory kept by the C allocator while the interior-point method runs.

The structured IPM (:mod:`mechopt.solvers.metric._ipm`) makes and drops arrays of
``pairs × outputs`` entries many times an iteration (a 48×48 grid: 9 024 pairs × 2 304
outputs, 166 MB each, ~10 Newton solves an iteration). glibc's ``malloc`` serves every
request above 32 MB with a fresh ``mmap`` and gives it back on ``free``: each array was
paged in and zeroed by the kernel again (2.1 million page faults and 31 s of system time
in 97 s of a 48×48 solve). :func:`heap_kept` tells the allocator, for its duration, to
take such requests from its heap (``M_MMAP_MAX = 0``) and to keep what is freed there
(``M_TRIM_THRESHOLD``), so the next array of the same size reuses the same pages (0.4
million faults in the same 97 s; ~10 s an iteration instead of ~11.5 s); on leaving it restores
glibc's defaults and returns the free pages to the system (``malloc_trim``). Where the C
library has no ``mallopt`` (not glibc) it does nothing.

Examples
--------
>>> from mechopt._heap import heap_kept
>>> import numpy as np
>>> with heap_kept():
...     float(np.ones(10).sum())
10.0
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from contextlib import contextmanager

# mallopt parameters (glibc's malloc.h) and glibc's defaults for them
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4
_DEFAULT_TRIM_THRESHOLD, _DEFAULT_MMAP_MAX = 128 * 1024, 65536
#: free memory at the top of the heap above this is still given back while kept (bytes)
KEEP_AT_MOST = 2**31 - 1


def _libc():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt, trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return libc


_LIBC = _libc()
_LOCK = threading.Lock()
_depth = 0


@contextmanager
def heap_kept():
    """Within it, large freed blocks stay with the allocator for reuse (glibc; elsewhere a no-op).

    Nested uses (and uses from several threads) keep the setting until the last one ends.
    Usable as a decorator.
    """
    global _depth
    with _LOCK:
        _depth += 1
        if _depth == 1 and _LIBC is not None:
            _LIBC.mallopt(_M_MMAP_MAX, 0)
            _LIBC.mallopt(_M_TRIM_THRESHOLD, KEEP_AT_MOST)
    try:
        yield
    finally:
        with _LOCK:
            _depth -= 1
            if _depth == 0 and _LIBC is not None:
                _LIBC.mallopt(_M_MMAP_MAX, _DEFAULT_MMAP_MAX)
                _LIBC.mallopt(_M_TRIM_THRESHOLD, _DEFAULT_TRIM_THRESHOLD)
                _LIBC.malloc_trim(0)
