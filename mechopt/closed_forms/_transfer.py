"""Composition and transferability from 003 (Jiang, Seif, Tandon, Li): Thm 4, Cor 4-7, Lemma 3.

The composition bounds of Thm 4 and Cor. 4 (``lip_composition_bound``,
``bp_lip_composition_bound``) live in :mod:`mechopt._composition`, shared with the privacy
budget; :mod:`mechopt.closed_forms` re-exports them. Reads :mod:`._relations` (the
LIP → LDP bound of eq. (12)); nothing here is read back by it.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .._composition import lip_composition
from .._errors import InputError
from .._validation import check_channel, check_epsilon, check_k, check_prior, check_probability
from ._relations import lip_to_ldp_bound

# -- Thm 4, Cor 4, Cor 5: composition -------------------------------------------------


def compose_parallel(*channels: np.ndarray) -> np.ndarray:
    """Channel of releasing ``Y_1, ..., Y_n`` independently from the same ``X`` (003 §III-B).

    Row ``x`` is the Kronecker product of the rows ``Q_k[x]``; outputs are tuples in
    lexicographic order.

    Examples
    --------
    >>> import numpy as np
    >>> compose_parallel(np.eye(2), np.eye(2)).tolist()
    [[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
    """
    if not channels:
        raise InputError("channels", "need at least one channel")
    Qs = [check_channel(Q, f"channels[{i}]") for i, Q in enumerate(channels)]
    if len({Q.shape[0] for Q in Qs}) != 1:
        raise InputError("channels", "all channels must have the same number of inputs")
    out = Qs[0]
    for Q in Qs[1:]:
        out = np.einsum("xa,xb->xab", out, Q).reshape(out.shape[0], -1)
    return out


def compose_sequential(*channels: np.ndarray) -> np.ndarray:
    """Channel from ``(X_1, ..., X_n)`` to ``(Y_1, ..., Y_n)``, ``Y_k`` from ``X_k`` only (003 Cor. 5).

    The Kronecker product of the channels; inputs and outputs are tuples in lexicographic
    order.

    Examples
    --------
    >>> import numpy as np
    >>> compose_sequential(np.eye(2), np.full((2, 1), 1.0)).shape
    (4, 2)
    """
    if not channels:
        raise InputError("channels", "need at least one channel")
    out = check_channel(channels[0], "channels[0]")
    for i, Q in enumerate(channels[1:], start=1):
        out = np.kron(out, check_channel(Q, f"channels[{i}]"))
    return out


def _epsilons(epsilons: Sequence[float]) -> list[float]:
    if not isinstance(epsilons, (list, tuple, np.ndarray)) or len(epsilons) == 0:
        raise InputError("epsilons", f"must be a non-empty list of budgets, got {epsilons!r}")
    return [check_epsilon(v, f"epsilons[{i}]") for i, v in enumerate(epsilons)]


def sequential_composition_bound(joint: np.ndarray, epsilons: Sequence[float]) -> float:
    """003 Cor. 5, eq. (11): leakage of releasing ``X_1..X_n`` (joint pmf ``joint``) one by one.

    ``Y_k`` comes from ``X_k`` through an ``ε_k``-LIP mechanism for the marginal of ``X_k``.
    ``log(P_min^joint + exp(sum_k min{2ε_k, log((e^{ε_k} - 1 + P_min^k)/P_min^k)})(1 - P_min^joint))``.

    Parameters
    ----------
    joint : ndarray, shape (k_1, ..., k_n)
        Joint distribution of the sequence.
    epsilons : list of float, length n

    Examples
    --------
    >>> import numpy as np
    >>> round(sequential_composition_bound(np.full((2, 2), 0.25), [0.0, 0.0]), 12)
    0.0
    """
    J = np.asarray(joint, dtype=float)
    eps = _epsilons(epsilons)
    if J.ndim != len(eps):
        raise InputError("epsilons", f"need one budget per variable ({J.ndim}), got {len(eps)}")
    check_prior(J.ravel(), "joint")
    marginal_mins = [float(J.sum(axis=tuple(a for a in range(J.ndim) if a != axis)).min()) for axis in range(J.ndim)]
    return lip_composition(eps, marginal_mins, float(J.min()))


# -- Lemma 3, Cor 6, Cor 7: transferability -------------------------------------------


def total_variation(p1: Sequence[float], p2: Sequence[float]) -> float:
    """``D_TV(P1, P2) = sup_S |P1(S) - P2(S)| = ||P1 - P2||_1 / 2`` (003 Def. 7).

    Examples
    --------
    >>> total_variation([0.5, 0.5], [0.2, 0.8])
    0.3
    """
    a = check_prior(p1, "p1")
    b = check_prior(p2, "p2", k=a.size)
    return float(np.round(0.5 * np.abs(a - b).sum(), 15))


def transfer_gap_bound(p1: Sequence[float], p2: Sequence[float]) -> float:
    """003 Lemma 3: ``|L(M, P1) - L(M, P2)| <= log(1 + D_TV/c)``, ``c = min(P1_min, P2_min)``.

    Examples
    --------
    >>> round(transfer_gap_bound([0.5, 0.5], [0.4, 0.6]), 6)
    0.223144
    """
    a = check_prior(p1, "p1")
    b = check_prior(p2, "p2", k=a.size)
    c = min(float(a.min()), float(b.min()))
    tv = total_variation(a, b)
    if c == 0.0:
        return 0.0 if tv == 0.0 else math.inf
    return math.log(1 + tv / c)


def transfer_leakage_bound(p1: Sequence[float], p2: Sequence[float], epsilon: float) -> float:
    """003 eq. (12): an ε-LIP mechanism for ``P1`` leaks at most ``min[η + ε, 2ε, log((e^ε-1+P1_min)/P1_min)]`` under ``P2``.

    Examples
    --------
    >>> round(transfer_leakage_bound([0.5, 0.5], [0.4, 0.6], 1.0), 6)
    1.223144
    """
    a = check_prior(p1, "p1")
    eps = check_epsilon(epsilon)
    eta = transfer_gap_bound(a, p2)
    return min(eta + eps, lip_to_ldp_bound(a, eps))


def transfer_condition(p1: Sequence[float], p2: Sequence[float], epsilon: float, *, printed: bool = False) -> bool:
    """003 Cor. 6: whether ``η + ε`` is the smallest term of eq. (12).

    Condition ``D_TV <= c (e^{min(ε, Φ)} - 1)``, ``c = min(P1_min, P2_min)``. As printed,
    ``Φ = (e^ε - 1 + P1_min)/P1_min - ε``; the algebra of eq. (12) needs
    ``Φ = log((e^ε - 1 + P1_min)/P1_min) - ε`` (the default, ``printed=False``).

    Examples
    --------
    >>> transfer_condition([0.5, 0.5], [0.45, 0.55], 1.0)
    True
    """
    a = check_prior(p1, "p1")
    b = check_prior(p2, "p2", k=a.size)
    eps = check_epsilon(epsilon)
    c = min(float(a.min()), float(b.min()))
    pm = float(a.min())
    if pm == 0.0:
        return False
    A = (math.exp(eps) - 1 + pm) / pm
    phi = (A - eps) if printed else (math.log(A) - eps)
    m = min(eps, phi)
    return total_variation(a, b) <= c * math.expm1(m)


def empirical_prior_gap_bound(n: int, k: int, beta: float, c: float) -> float:
    """003 Cor. 7: with probability ``1 - β``, the leakage gap of a mechanism designed on the empirical prior is ``<= η``.

    ``η = log(1 + Δ/(2c))``, ``Δ = sqrt(2 (|X| - log β)/n)``, ``c = min(P_hat_min, P_min)``.

    Examples
    --------
    >>> round(empirical_prior_gap_bound(1000, 2, 0.01, 0.3), 6)
    0.175264
    """
    n = check_k(n, "n")
    k = check_k(k, "k")
    beta = check_probability(beta, "beta")
    c = check_probability(c, "c")
    if beta == 0.0:
        return math.inf
    if c == 0.0:
        return math.inf
    delta = math.sqrt(2.0 * (k - math.log(beta)) / n)
    return math.log(1 + delta / (2 * c))

