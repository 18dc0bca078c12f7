"""003's LIP bounds in one place: Prop. 1 / Thm 1 (LIP ↔ LDP) and Thm 4 / Cor. 4 / Cor. 5 (composition).

Jiang, Seif, Tandon, Li (003) bound the leakage of LIP mechanisms with two terms that
recur in every statement:

* ``ω(ε, P) = min{2ε, ln((e^ε − 1 + P)/P)}`` — Prop. 1: ε-LIP under a prior with smallest
  probability ``P`` implies ``ω``-LDP; it is also each report's term in Thm 4;
* ``outer(W, P) = ln(P + e^W (1 − P))`` — Thm 1: ``W``-LDP implies ``outer``-LIP; it is
  also the outer function of Thm 4.

Thm 4 (independent reports about one input), Cor. 4 (a set of priors) and Cor. 5, eq. (11)
(a correlated sequence) are ``outer(Σ_k ω(ε_k, P_k), P_out)`` with different ``P_k`` and
``P_out`` (:func:`lip_composition`). The privacy budget (:mod:`mechopt.runtime`) and the
notion relations (:mod:`mechopt.closed_forms`) read these functions; they validate
their own arguments first (this module does not).
"""

from __future__ import annotations

import math
from typing import Iterable

__all__ = ["lip_composition", "lip_omega", "lip_outer"]


def lip_omega(eps: float, p_min: float) -> float:
    """``min{2ε, ln((e^ε − 1 + P)/P)}`` (003 Prop. 1, Thm 4), without overflow; ``2ε`` at ``P = 0``.

    Examples
    --------
    >>> round(lip_omega(1.0, 0.5), 6)      # ln(2e - 1) < 2
    1.48988
    >>> lip_omega(1.0, 0.0)
    2.0
    """
    if math.isinf(eps):
        return math.inf
    if p_min <= 0.0:
        return 2.0 * eps
    second = math.log((math.expm1(eps) + p_min) / p_min) if eps < 700 else (
        eps + math.log1p((p_min - 1.0) * math.exp(-eps)) - math.log(p_min))
    return min(2.0 * eps, second)


def lip_outer(total: float, p_min: float) -> float:
    """``ln(P + e^W (1 − P))`` (003 Thm 1, Thm 4), stable for large ``W``; 0 at ``P = 1``.

    Examples
    --------
    >>> round(lip_outer(math.log(3), 0.5), 6)
    0.693147
    """
    if math.isinf(total):
        return math.inf
    if p_min >= 1.0:
        return 0.0
    # = W + ln(1 − P) + ln(1 + P e^{−W}/(1 − P))
    return total + math.log1p(-p_min) + math.log1p(p_min * math.exp(-total) / (1.0 - p_min))


def lip_composition(epsilons: Iterable[float], inner_p_mins: Iterable[float], outer_p_min: float) -> float:
    """``outer(Σ_k ω(ε_k, P_k), P_out)``: 003 Thm 4 (``P_k = P_out = P_min``), Cor. 4, Cor. 5 eq. (11).

    Examples
    --------
    >>> round(lip_composition([1.0, 1.0], [0.25, 0.25], 0.25), 4)
    3.7184
    """
    return lip_outer(math.fsum(lip_omega(e, p) for e, p in zip(epsilons, inner_p_mins, strict=True)), outer_p_min)
