"""Brute-force exact definitions and decimal channels shared by the property tests.

Independent of ``mechopt``: the tests compare the exact verifier (and the client's
checker) against these loops over every entry, in rational arithmetic (SPEC §2).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Sequence

import numpy as np
from hypothesis import strategies as st

DEN = 1000  # matrix entries are multiples of 1/1000: their decimals are exact


def fr(v) -> Fraction:
    """The exact value of the decimal a float prints as."""
    return Fraction(repr(float(v)))


@st.composite
def decimal_channels(draw):
    """Channels whose entries are multiples of 1/1000 (zeros allowed), rows summing to 1 exactly."""
    k = draw(st.integers(2, 4))
    m = draw(st.integers(2, 4))
    rows = []
    for _ in range(k):
        cuts = sorted(draw(st.lists(st.integers(0, DEN), min_size=m - 1, max_size=m - 1)))
        rows.append([p / DEN for p in np.diff([0, *cuts, DEN])])
    return np.array(rows)


def eldp_holds(Q: np.ndarray, bound: Callable[[int, int], Fraction | None]) -> bool:
    """``Q[x, y] <= bound(x, x') Q[x', y]`` for all ``x != x'`` and ``y`` (``None``: no constraint)."""
    k, m = Q.shape
    for x in range(k):
        for xp in range(k):
            e = None if x == xp else bound(x, xp)
            if e is None:
                continue
            for y in range(m):
                if fr(Q[x, y]) > e * fr(Q[xp, y]):
                    return False
    return True


def lip_holds(Q: np.ndarray, P: Sequence[Fraction], e: Fraction, delta: Fraction) -> bool:
    """``e^-ε Q[x,y] - δ <= P·Q[:,y] <= e^ε Q[x,y] + δ`` for all ``x, y``, ``e = e^ε`` (exact)."""
    k, m = Q.shape
    for y in range(m):
        s = sum((P[i] * fr(Q[i, y]) for i in range(k)), Fraction(0))
        for x in range(k):
            q = fr(Q[x, y])
            if q > e * (s + delta) or s - delta > e * q:
                return False
    return True
