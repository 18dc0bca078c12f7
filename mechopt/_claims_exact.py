"""The exact arithmetic of the standard-library claim checker (:mod:`mechopt._claims`).

Standard library only, like the client it serves. Inequalities ``a <= e^ε b`` and the LIP
conditions on plain lists: extreme entries found by ordering, a certified float enclosure
that can only *prove* an inequality, and exact rationals (``e^ε`` bounded below to 60
digits) for everything else. A violation raises :class:`_Fail` with the column and the
entries that break it.

Examples
--------
>>> from fractions import Fraction
>>> _leq(0.7, 0.3, Fraction(1), 1.0)      # 0.7 <= e * 0.3
True
>>> e_24 = Fraction(2718281828459045235360287, 10**24)      # e = 2.718281828459045235360287471...
>>> e_24 < _exp_lo(Fraction(1)) < e_24 + Fraction(1, 10**24)
True
"""

from __future__ import annotations

import math
from decimal import Decimal, Inexact, localcontext
from fractions import Fraction
from functools import lru_cache
from typing import Any


_U = 2.0**-53
_NORMAL = 1e-290
_REL = 8 * _U


def _frac(v: Any) -> Fraction:
    """The exact decimal of a validated claim number (as the verifier reads it: ``repr(float(v))``)."""
    if isinstance(v, Fraction):
        return v
    return Fraction(repr(float(v)))


@lru_cache(maxsize=4096)
def _exp_lo(x: Fraction) -> Fraction:
    """A rational ``<= e^x`` (60 significant digits; e^10000 beyond 10 000)."""
    if x == 0:
        return Fraction(1)
    x = min(x, Fraction(10_000))
    with localcontext() as ctx:
        ctx.prec = 70
        d = Decimal(x.numerator) / Decimal(x.denominator)
        arg_exact = not ctx.flags[Inexact]
        ctx.prec = 60
        e = d.exp()
        ulp = Decimal(10) ** (e.adjusted() - 59)
    slack = 3 * ulp if arg_exact else 3 * ulp + abs(e) * Decimal(10) ** -60
    # in exact fractions: Decimal arithmetic out here would round to the caller's context
    # (28 digits by default), possibly above e^x
    # e^x >= 1 + x: keeps the bound >= 1 for budgets below the 60th digit (equal entries pass)
    return max(Fraction(e) - Fraction(slack), 1 + x)


@lru_cache(maxsize=65536)
def _exp_lo_float(eps: float) -> float:
    x = min(float(eps), 700.0)
    return math.exp(x) * (1.0 - (abs(x) + 8) * _U)


def _normal(v: float) -> bool:
    return v == 0 or (abs(v) >= _NORMAL and math.isfinite(v))


def _leq(a: Any, b: Any, eps: Fraction, eps_f: float) -> bool:
    """Exactly ``a <= e^eps b`` for ``a, b >= 0`` (floats read as their decimals, or Fractions)."""
    if isinstance(a, float) and isinstance(b, float):
        if a == 0:
            return True
        if _normal(a) and _normal(b) and a * (1 + _REL) <= _exp_lo_float(eps_f) * b * (1 - _REL):
            return True
    fa = a if isinstance(a, Fraction) else _frac(a)
    fb = b if isinstance(b, Fraction) else _frac(b)
    if fa <= 0:
        return True
    return fa <= _exp_lo(eps) * fb


class _Fail(Exception):
    pass


def _groups(cols: list[list[float]], upper: list[int], lower: list[int], eps: Any, label) -> None:
    if not upper or not lower:
        return
    e = _frac(eps)
    ef = float(eps)
    for y, col in enumerate(cols):
        a_i = max(upper, key=lambda i: col[i])
        b_i = min(lower, key=lambda i: col[i])
        if not _leq(col[a_i], col[b_i], e, ef):
            raise _Fail(f"column {y}: Q[{label(a_i)}][{y}] = {col[a_i]!r} > e^{eps!r} * Q[{label(b_i)}][{y}] = "
                        f"{col[b_i]!r}")


def _pairs_matrix(rows: list[list[float]], E: list[list[float]], label) -> None:
    """``q[x] <= e^{E[x][x']} q[x']`` on every column for every finite off-diagonal budget.

    :func:`_pairs` with the pairs read from ``E`` row by row (no list of k^2 tuples).
    """
    hi = [max(r) * (1 + _REL) if _normal(max(r)) else None for r in rows]
    lo = [min(r) * (1 - _REL) if (min(r) > 0 and _normal(min(r))) else None for r in rows]
    inf, exp, u = math.inf, math.exp, _U
    for x, Erow in enumerate(E):
        if max(rows[x]) == 0:
            continue
        hx = hi[x]
        for xp, b in enumerate(Erow):
            if xp == x or b == inf:
                continue
            lxp = lo[xp]
            # the row's largest entry below e^b (a float lower bound, as _exp_lo_float) times the other's smallest
            if hx is not None and lxp is not None and hx <= exp(min(b, 700.0)) * (1.0 - (min(b, 700.0) + 8) * u) * lxp:
                continue
            _pairs(rows, [(x, xp, b, b)], label)


def _pairs(rows: list[list[float]], pairs: list[tuple[int, int, Any, float]], label) -> None:
    """``q[x] <= e^b q[x']`` on every column, for each listed pair.

    A pair is ``(x, x', budget, lower float of the budget)``; ``budget`` is a float (read as
    its decimal) or an exact Fraction, turned into an exact number only when needed.
    """
    # the row's largest entry (inflated) and the other row's smallest (deflated), where
    # relative error bounds hold (normal numbers); None where they do not
    hi = [max(r) * (1 + _REL) if _normal(max(r)) else None for r in rows]
    lo = [min(r) * (1 - _REL) if (min(r) > 0 and _normal(min(r))) else None for r in rows]
    zero = [max(r) == 0 for r in rows]
    for x, xp, b, bf in pairs:
        if zero[x]:
            continue
        if hi[x] is not None and lo[xp] is not None and hi[x] <= _exp_lo_float(bf) * lo[xp]:
            continue  # the row's largest entry below e^b times the other's smallest
        be = b if isinstance(b, Fraction) else _frac(b)
        for y, (qa, qb) in enumerate(zip(rows[x], rows[xp])):
            if not _leq(qa, qb, be, bf):
                raise _Fail(f"column {y}: Q[{label(x)}][{y}] = {qa!r} > e^{bf!r} * Q[{label(xp)}][{y}] = {qb!r}")


def _lip(cols: list[list[float]], prior: list[Fraction], eps: Any, delta: Any, label, *, upper: bool = True,
         lower: bool = True, first: int = 0) -> None:
    e = _frac(eps)
    ef = float(eps)
    d = _frac(delta) if delta else Fraction(0)
    pf = [float(p) for p in prior]
    k = len(prior)
    for y, col in enumerate(cols, start=first):
        a_i = max(range(k), key=lambda i: col[i])
        b_i = min(range(k), key=lambda i: col[i])
        s_f = math.fsum(p * q for p, q in zip(pf, col))
        s = None
        # upper: max q <= e^eps (P.q + delta); lower: P.q - delta <= e^eps min q
        rel = (k + 8) * _U
        ok1 = not upper or col[a_i] == 0 or (all(_normal(v) for v in (col[a_i], s_f)) and s_f > 0 and
                                col[a_i] * (1 + _REL) <= _exp_lo_float(ef) * (s_f + float(d)) * (1 - rel))
        if not ok1:
            s = sum((p * _frac(q) for p, q in zip(prior, col) if p and q), Fraction(0))
            if not _leq(_frac(col[a_i]), s + d, e, ef):
                raise _Fail(f"column {y}: Q[{label(a_i)}][{y}] = {col[a_i]!r} > e^{eps!r} * (P.q + delta)")
        if not lower:
            continue
        if s is None:
            s = sum((p * _frac(q) for p, q in zip(prior, col) if p and q), Fraction(0))
        if s - d > 0 and not _leq(s - d, _frac(col[b_i]), e, ef):
            raise _Fail(f"column {y}: P.q - delta > e^{eps!r} * Q[{label(b_i)}][{y}] = {col[b_i]!r}")


def _box_extremes(col: list[float], lower: list[Fraction], upper: list[Fraction]) -> tuple[list, list]:
    rest0 = 1 - sum(lower, Fraction(0))
    out = []
    for rev in (False, True):
        P = list(lower)
        rest = rest0
        for i in sorted(range(len(col)), key=lambda i: col[i], reverse=rev):
            if rest <= 0:
                break
            add = min(upper[i] - lower[i], rest)
            P[i] += add
            rest -= add
        out.append(P)
    return out[0], out[1]


# -- the claims' own parameters ------------------------------------------------------------

#: the notions a mechanism file may claim, their fields and required fields: the client's
#: copy of :mod:`mechopt.notions` (``tests/test_trust_load.py`` checks the two agree)
