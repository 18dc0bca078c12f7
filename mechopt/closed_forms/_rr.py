"""k-ary randomized responses: k-RR (LDP) and the LIP randomized response of 003 eq. (19).

Outputs are the inputs (labeled channel, ``k x k``).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .._validation import check_epsilon, check_k, check_prior
from ._common import exp_or_inf

__all__ = [
    "k_rr",
    "lip_rr",
    "lip_rr_holds",
    "lip_rr_achieved_budget",
    "lip_rr_calibrated",
]


def k_rr(k: int, epsilon: float) -> np.ndarray:
    """k-ary randomized response, the "optimal LDP mechanism" of 003 §V-A (d) / 001 eq. (2) / 000 §IV-B.

    ``Q[x, x] = e^ε/(e^ε + k - 1)``, ``Q[x, y] = 1/(e^ε + k - 1)`` for ``y != x``.

    Parameters
    ----------
    k : int
        Number of inputs, ``>= 1``.
    epsilon : float
        Budget ``>= 0`` (``inf`` gives the identity).

    Returns
    -------
    ndarray, shape (k, k)

    Raises
    ------
    InputError
        If ``k < 1`` or ``epsilon`` is invalid.

    Examples
    --------
    >>> k_rr(3, math.log(2)).round(6).tolist()
    [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]]
    """
    k = check_k(k)
    e = exp_or_inf(check_epsilon(epsilon, allow_inf=True))
    if math.isinf(e):
        return np.eye(k)
    Q = np.full((k, k), 1.0 / (e + k - 1))
    np.fill_diagonal(Q, e / (e + k - 1))
    return Q


def lip_rr(prior: Sequence[float], epsilon: float) -> np.ndarray:
    """LIP randomized response for a fixed prior, **as printed**: 003 eq. (19) = 000 Thm 3 = 000 Thm 5.

    ``q_xy = P(y)/e^ε`` for ``x != y`` and ``q_xx = 1 - (1 - P(x))/e^ε``.

    Claimed optimal for MMSE of any weighted sum (000 Thm 3) and for the histogram MSE
    (000 Thm 5) under ε-LIP. It is ε-LIP **only when** ``min P >= 1/(1 + e^ε)``
    (:func:`lip_rr_holds`); otherwise its leakage is :func:`lip_rr_achieved_budget`.

    Parameters
    ----------
    prior : array_like, shape (k,)
    epsilon : float

    Examples
    --------
    >>> lip_rr([0.5, 0.5], math.log(2)).tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    """
    P = check_prior(prior)
    e = exp_or_inf(check_epsilon(epsilon, allow_inf=True))
    if math.isinf(e):
        return np.eye(P.size)
    Q = np.tile(P / e, (P.size, 1))
    np.fill_diagonal(Q, 1.0 - (1.0 - P) / e)
    return Q


def lip_rr_holds(prior: Sequence[float], epsilon: float) -> bool:
    """Whether 003 eq. (19) is ε-LIP: ``min P >= 1/(1 + e^ε)``.

    Derivation: column ``y`` has ``P . q_y = P(y)``; the only constraint that can fail is
    ``e^-ε q_yy <= P(y)``, i.e. ``P(y)(e^ε + 1) >= 1`` (000 App. B eq. (51) states the
    opposite sign).

    Examples
    --------
    >>> lip_rr_holds([0.1, 0.2, 0.7], 1.0)
    False
    >>> lip_rr_holds([0.3, 0.3, 0.4], 1.0)
    True
    """
    P = check_prior(prior)
    e = exp_or_inf(check_epsilon(epsilon, allow_inf=True))
    return math.isinf(e) or float(P.min()) * (1.0 + e) >= 1.0


def lip_rr_achieved_budget(prior: Sequence[float], epsilon: float) -> float:
    """Exact LIP leakage of :func:`lip_rr`: ``max(ε, log((e^ε - 1 + P_min)/(e^ε P_min)))``.

    Examples
    --------
    >>> round(lip_rr_achieved_budget([0.1, 0.2, 0.7], 1.0), 4)
    1.9005
    """
    P = check_prior(prior)
    eps = check_epsilon(epsilon, allow_inf=True)
    if math.isinf(eps):
        return math.inf if float(P.min()) == 0.0 else 0.0
    pmin = float(P.min())
    if pmin == 0.0:
        return math.inf if eps > 0 else 0.0
    e = math.exp(eps)
    return max(eps, math.log((e - 1.0 + pmin) / (e * pmin)))


def lip_rr_calibrated(prior: Sequence[float], epsilon: float) -> np.ndarray:
    """A *valid* repair of 003 eq. (19): eq. (19) evaluated at the largest ``ε' <= ε`` that meets ε-LIP.

    ``ε' = ε`` when ``min P >= 1/(1+e^ε)``, else ``ε' = log((1 - P_min)/(1 - P_min e^ε))``
    (solves ``lip_rr_achieved_budget(P, ε') = ε``). Valid but not optimal: the optimum in
    that regime is the ray LP of docs/model.md (see ``docs/closed_forms.md`` for the gap).
    Needs ``P_min > 0``.

    Examples
    --------
    >>> from mechopt.closed_forms import lip_budget
    >>> round(lip_budget(lip_rr_calibrated([0.1, 0.2, 0.7], 1.0), [0.1, 0.2, 0.7]), 9)
    1.0
    """
    P = check_prior(prior)
    eps = check_epsilon(epsilon, allow_inf=True)
    if lip_rr_holds(P, eps):
        return lip_rr(P, eps)
    pmin = float(P.min())
    if pmin == 0.0:
        # no eq. (19) channel with eps' > 0 is LIP; eps' = 0 is the constant channel
        return lip_rr(P, 0.0)
    eps2 = math.log((1.0 - pmin) / (1.0 - pmin * math.exp(eps)))
    return lip_rr(P, min(eps, eps2))
