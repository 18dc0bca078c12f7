"""Exact numbers for the verifier: decimals as written, rigorous bounds on e^x, certified enclosures.

Part of the exact verifier (:mod:`mechopt._verify`), and like it shared with no solver
code. A float in a file means the decimal it prints as (``repr``); ``e^x`` is a 60-digit
interval; :func:`_leq_scaled` decides ``a <= e^x b`` in exact arithmetic (every
:mod:`decimal` operation with ``Inexact`` trapped).
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, Inexact, localcontext
from fractions import Fraction
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

_PREC = 60
#: unit roundoff of binary64
_U = 2.0**-53
#: floats below this (in absolute value, non-zero) are treated as subnormal-ish: exact path
_NORMAL = 1e-290
#: relative slack of an enclosure of one entry or one product: the float-to-decimal
#: reading (2^-53 each) and the roundings of the enclosure itself, with room to spare.
#: ``e^ε`` carries its own allowance (:func:`_exp_lower`); a sum of n products n + 8 units.
_REL = 8 * _U
#: ``e^ε`` used by the enclosures is capped here: a lower bound of e^ε is still a lower bound
_EXP_CAP = 700.0



# -- exact numbers -------------------------------------------------------------


def exact(v: float) -> Fraction:
    """The exact decimal value of a float as it is written in a JSON file."""
    return Fraction(repr(float(v)))


def _dec(v: Any) -> Decimal:
    """A float as the decimal it prints as; a Fraction with a terminating decimal exactly."""
    if isinstance(v, Decimal):
        return v
    if isinstance(v, Fraction):
        with localcontext() as ctx:
            ctx.prec = 4000
            ctx.traps[Inexact] = True
            return Decimal(v.numerator) / Decimal(v.denominator)
    return Decimal(repr(float(v)))


#: exponents above this are bounded below by e^cap (a valid lower bound; what decides every
#: inequality ``a <= e^x b``), keeping the decimals finite; the upper end is then e^x's
#: own order of magnitude, not a tight bound
_EXP_ARG_CAP = Fraction(10_000)


@lru_cache(maxsize=4096)
def exp_bounds(x: Fraction) -> tuple[Fraction, Fraction | None]:
    """Rigorous bounds ``lo <= e^x <= hi`` (exact when e^x is rational, i.e. x = 0).

    Beyond ``x = 10 000``, ``lo`` is ``e^10000``'s lower bound (still a lower bound of
    ``e^x``, and what every decision ``a <= e^x b`` uses) and ``hi`` is None.
    """
    if x == 0:
        return Fraction(1), Fraction(1)
    if x > _EXP_ARG_CAP:
        lo, _ = exp_bounds(_EXP_ARG_CAP)
        return lo, None  # no finite upper bound is needed (or offered) this far out
    with localcontext() as ctx:
        ctx.prec = _PREC + 10
        # the argument as a Decimal interval
        d = Decimal(x.numerator) / Decimal(x.denominator)
        arg_exact = not ctx.flags[Inexact]
        ctx.clear_flags()
        ctx.prec = _PREC
        e = d.exp()
        ulp = Decimal(10) ** (e.adjusted() - _PREC + 1)
    slack = 3 * ulp if arg_exact else 3 * ulp + abs(e) * Decimal(10) ** (-_PREC)
    # in exact fractions: Decimal arithmetic out here would round to the caller's context
    # (28 digits by default): lo could land above e^x and hi below it
    # e^x >= 1 + x: keeps lo >= 1 for budgets below the 60th digit (equal entries pass)
    return max(Fraction(e) - Fraction(slack), 1 + x), Fraction(e) + Fraction(slack)


@lru_cache(maxsize=4096)
def _exp_bounds_dec(x: Fraction) -> tuple[Decimal, Decimal]:
    lo, hi = exp_bounds(x)
    hi = lo if hi is None else hi
    with localcontext() as ctx:
        ctx.prec = 2 * _PREC
        # lo/hi have at most ~70 significant digits (exact here), except the floor 1 + x of a
        # tiny budget: directed rounding keeps them a bracket either way
        ctx.rounding = ROUND_FLOOR
        lo_d = Decimal(lo.numerator) / Decimal(lo.denominator)
        ctx.rounding = ROUND_CEILING
        return lo_d, Decimal(hi.numerator) / Decimal(hi.denominator)


def _exact_context(ctx) -> None:
    ctx.prec = 100_000
    ctx.Emax = 10**9
    ctx.Emin = -(10**9)
    ctx.traps[Inexact] = True


def _leq_scaled(a: Any, b: Any, eps: Fraction) -> bool:
    """Exactly decide ``a <= e^eps * b`` for ``b >= 0``.

    ``a`` and ``b`` are floats (read as the decimals they print as), Decimals or
    Fractions. Every operation runs with the ``Inexact`` signal trapped, so it is exact;
    ``e^eps`` is a 60-digit interval ``[lo, hi]``: ``a <= lo b`` proves the inequality,
    anything else (including a value inside the ~1e-58 interval) refuses it.
    """
    if isinstance(a, Fraction) and a.denominator != 1 and not _terminates(a):
        lo, _hi = exp_bounds(eps)
        return a <= lo * Fraction(b if not isinstance(b, float) else exact(b))
    if isinstance(b, Fraction) and not _terminates(b):
        lo, _hi = exp_bounds(eps)
        return Fraction(a if not isinstance(a, float) else exact(a)) <= lo * b
    lo_d, _hi_d = _exp_bounds_dec(eps)
    with localcontext() as ctx:
        _exact_context(ctx)
        return _dec(a) <= lo_d * _dec(b)


def _terminates(f: Fraction) -> bool:
    d = f.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


def _exact_dot(P: Sequence[Any], q: Sequence[float]) -> Decimal:
    """``sum_i P_i q_i`` exactly (entries read as decimals)."""
    with localcontext() as ctx:
        _exact_context(ctx)
        total = Decimal(0)
        for p, v in zip(P, q):
            if p != 0 and v != 0:
                total += _dec(p) * _dec(v)
        return total


def _exp_lower(eps: float) -> float:
    """A float proven ``<= e^eps`` (eps read as its decimal), for the enclosures.

    ``math.exp`` is within 1 ulp; the budget's decimal differs from its float by at most
    ``|eps| 2^-53``, which moves ``e^eps`` by at most that much relatively; beyond the
    cap ``e^700`` is itself a lower bound.
    """
    x = min(float(eps), _EXP_CAP)
    return math.exp(x) * (1.0 - (abs(x) + 8) * _U)


def _is_normal(v: np.ndarray) -> np.ndarray:
    """Entries for which relative error bounds hold: zero or |v| >= 1e-290 (and finite)."""
    a = np.abs(v)
    return (a == 0) | ((a >= _NORMAL) & np.isfinite(a))


