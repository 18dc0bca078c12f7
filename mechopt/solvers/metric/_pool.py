"""Large arrays of the structured IPM kept for reuse instead of given back to the system.

On a 64×64 grid every Newton solve of :mod:`._ipm` makes and drops arrays of 16 128 pair
rows × 4 096 outputs (528 MB each, ~20 an iteration). glibc gives each back to the
system when it is freed, and on a virtual machine that reports free memory to its host
(virtio's free page reporting) memory left free for a second or two is taken back: the
next array is paged in again from the host, ~1.6 s a GiB on this machine against
0.03 s for pages the process still holds. Between two factorisations (~40 s) every array
of the Newton solves was paged in anew: 10–20 s an iteration.

Within :func:`pooled`, :func:`empty` hands out arrays of at least :data:`FROM_BYTES` from
a pool of freed ones of the same size in bytes: an array goes back to the pool when the
last view of it is gone (its memory is owned by a lease object that every view keeps
alive), so no array is reused while anything can still read it. Unlike
:func:`mechopt._heap.heap_kept` (the C allocator keeps every freed block), only blocks
of sizes asked for again are kept, a request may take a larger free block (the band
factorisation's work arrays take the blocks the Newton solves left, so the pool holds no
second set of them), and the pool is let go on leaving.

Examples
--------
>>> import numpy as np
>>> with pooled():
...     a = empty((FROM_BYTES // 8,))
...     address = a.ctypes.data
...     del a                                        # back to the pool
...     b = empty((FROM_BYTES // 8,))
...     b.ctypes.data == address                     # the same memory again
True
"""

from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager

import numpy as np

#: arrays from this many bytes are taken from the pool (smaller ones are left to the C allocator)
FROM_BYTES = 64 * 2**20

_LOCK = threading.Lock()
_FREE: dict[int, list[np.ndarray]] = {}
_depth = 0


class _Lease:
    """Owns a pooled block while any array made from it lives (every view keeps it as its base)."""

    __slots__ = ("__array_interface__", "block", "__weakref__")


def _give_back(nbytes: int, block: np.ndarray) -> None:
    with _LOCK:
        if _depth:
            _FREE.setdefault(nbytes, []).append(block)


def empty(shape: tuple, dtype=np.float64, fit: float = 1.0) -> np.ndarray:
    """``np.empty(shape, dtype)``, from the pool when :func:`pooled` is on and it has :data:`FROM_BYTES` or more.

    A free block of the same size is taken, else (``fit > 1``) the smallest free one up to
    ``fit`` times as large, else a new one.
    """
    dtype = np.dtype(dtype)
    shape = tuple(int(n) for n in shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    with _LOCK:
        on = bool(_depth) and nbytes >= FROM_BYTES
        fits = [n for n, free in _FREE.items() if free and nbytes <= n <= fit * nbytes] if on else []
        block = _FREE[min(fits)].pop() if fits else None
    if not on:
        return np.empty(shape, dtype)
    if block is None:
        block = np.empty(nbytes, np.uint8)
    lease = _Lease()
    lease.block = block
    lease.__array_interface__ = {"shape": shape, "typestr": dtype.str, "data": (block.ctypes.data, False),
                                 "version": 3}
    out = np.asarray(lease)
    weakref.finalize(lease, _give_back, block.nbytes, block)
    return out


def empty_like(v: np.ndarray) -> np.ndarray:
    """:func:`empty` of ``v``'s shape and type (C order)."""
    return empty(v.shape, v.dtype)


def keep_only(nbytes: int, count: int, fit: float) -> None:
    """Let go of every free block but the ``count`` smallest of ``nbytes`` to ``fit`` times as
    many bytes: what a band factorisation's work arrays will take. The blocks the Newton
    solves freed are not held through the factorisation (64×64 grid: 13.3 GB in it against
    15.5 GB in the Newton solves, six arrays of pair rows at most)."""
    with _LOCK:
        fits = sorted((n for n, free in _FREE.items() for _ in free if nbytes <= n <= fit * nbytes))[:count]
        kept: dict[int, list[np.ndarray]] = {}
        for n in fits:
            kept.setdefault(n, []).append(_FREE[n].pop())
        _FREE.clear()
        _FREE.update(kept)


def held_bytes() -> int:
    """Bytes the pool holds for reuse now."""
    with _LOCK:
        return sum(n * len(blocks) for n, blocks in _FREE.items())


@contextmanager
def pooled():
    """Within it, :func:`empty` reuses freed large arrays; on leaving, the pool is let go.

    Nested uses (and uses from several threads) keep it until the last one ends.
    """
    global _depth
    with _LOCK:
        _depth += 1
    try:
        yield
    finally:
        with _LOCK:
            _depth -= 1
            if not _depth:
                _FREE.clear()
