"""Numerical helpers shared by the closed-form modules.

Argument checks live in :mod:`mechopt._validation`, the one validation module.
"""

from __future__ import annotations

import math

INF = math.inf


def exp_or_inf(eps: float) -> float:
    """``e^eps`` with ``exp(inf) = inf`` and no overflow warning."""
    if math.isinf(eps) or eps > 700.0:
        return INF
    return math.exp(eps)
