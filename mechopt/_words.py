"""Exact uniform draws from 32-bit random words: the sampling primitives of the clients (``docs/formats.md``).

Standard library only, like :mod:`mechopt.client` (matrix files) and
:mod:`mechopt.families._spec` (family files), which both draw through these: a uniform
integer below a total by rejection on big-endian 32-bit words, and the word sources
(:func:`os.urandom`, or an explicit stream for test vectors and cross-client checks).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from mechopt._errors import InputError

#: the words are 32-bit: each lies in ``[0, WORD)``
WORD = 1 << 32


def uniform_below(total: int, take) -> int:
    """A uniform integer in ``[0, total)`` from 32-bit words, by rejection (step 3).

    With ``b`` the bit length of ``total − 1`` and ``n = ceil(b / 32)``: read ``n``
    words, join them big-endian (the first word is the most significant), keep the low
    ``b`` bits; accept if below ``total``, otherwise read ``n`` new words. ``total = 1``
    reads nothing.

    Parameters
    ----------
    total : int
        ``>= 1``.
    take : callable
        ``take(n)`` returns the next ``n`` words joined big-endian, an integer below
        ``2**(32 n)``.

    Returns
    -------
    int

    Examples
    --------
    >>> words = iter([0xFFFFFFFF, 0x0000000C, 0x00000005])
    >>> take = lambda n: next(words)      # one word at a time here (total < 2**32)
    >>> uniform_below(10, take)           # 15 and 12 are rejected; 5 is accepted
    5
    """
    bits = (total - 1).bit_length()
    return uniform_masked(total, (bits + 31) // 32, (1 << bits) - 1, take)


def uniform_masked(total: int, count: int, mask: int, take) -> int:
    """:func:`uniform_below` with its word count and mask precomputed (0 and 0 for 1)."""
    while True:
        r = take(count) & mask
        if r < total:
            return r


class SecureWords:
    """Words from :func:`os.urandom`, read in 64 KiB blocks (big-endian 4-byte words).

    The block is never shared across processes: a forked child (a pre-forking server,
    a process pool) would otherwise replay its parent's unread bytes, so the buffer is
    dropped whenever the process id changes.
    """

    block = 65536

    def __init__(self) -> None:
        self._buf = b""
        self._pos = 0
        self._pid = os.getpid()

    def __call__(self, n: int) -> int:
        size = 4 * n
        if self._pid != os.getpid():
            self._buf, self._pos, self._pid = b"", 0, os.getpid()
        if self._pos + size > len(self._buf):
            self._buf = self._buf[self._pos:] + os.urandom(max(self.block, size))
            self._pos = 0
        start = self._pos
        self._pos = start + size
        return int.from_bytes(self._buf[start:start + size], "big")


class StreamWords:
    """Words from an explicit iterable of integers in ``[0, 2**32)`` (portable stream)."""

    def __init__(self, words: Iterable[int]) -> None:
        self._it: Iterator[int] = iter(words)
        self.used = 0

    def __call__(self, n: int) -> int:
        r = 0
        for _ in range(n):
            try:
                w = next(self._it)
            except StopIteration:
                raise InputError("words", f"the word stream ran out after {self.used} "
                                          "words") from None
            if isinstance(w, bool) or not isinstance(w, int) or not 0 <= w < WORD:
                raise InputError(f"words[{self.used}]", f"must be an integer in "
                                                        f"[0, 2**32), got {w!r}")
            r = (r << 32) | w
            self.used += 1
        return r
