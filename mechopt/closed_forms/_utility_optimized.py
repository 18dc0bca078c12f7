"""Utility-optimized mechanisms of 001: uRR (Def. 4) and uRAPPOR (Def. 5).

001 writes the sensitive symbols first; here ``sensitive`` is any subset of input indices
and bit ``j`` of a uRAPPOR report belongs to input ``j``.
"""

from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np

from .._errors import InputError
from .._validation import check_epsilon, check_k, check_prior, check_probability, check_subset

__all__ = [
    "urr_channel",
    "urr_estimate",
    "urr_l1_loss",
    "urappor_parameters",
    "urappor_channel",
    "urappor_sample",
    "urappor_estimate",
    "urappor_l1_loss",
]

MAX_URAPPOR_CHANNEL_K = 10


def urr_channel(k: int, sensitive: Sequence[int], epsilon: float) -> np.ndarray:
    """The ``(X_S, ε)``-utility-optimized RR, 001 Def. 4, eqs. (6)–(7). Outputs = inputs.

    ``c1 = e^ε/(|X_S| + e^ε - 1)``, ``c2 = 1/(|X_S| + e^ε - 1)``, ``c3 = 1 - |X_S| c2``.
    Sensitive ``x``: ``c1`` to itself, ``c2`` to every other sensitive output, 0 elsewhere.
    Non-sensitive ``x``: ``c2`` to every sensitive output, ``c3`` to itself.

    Parameters
    ----------
    k : int
    sensitive : list of int
        ``X_S`` (input indices).
    epsilon : float

    Returns
    -------
    ndarray, shape (k, k)

    Examples
    --------
    >>> urr_channel(3, [0], math.log(2)).round(6).tolist()
    [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.0, 0.5]]
    """
    k = check_k(k)
    S = check_subset(sensitive, k, "sensitive")
    eps = check_epsilon(epsilon)
    e = math.exp(eps)
    s = len(S)
    Q = np.zeros((k, k))
    if s == 0:
        return np.eye(k)
    c1, c2 = e / (s + e - 1), 1.0 / (s + e - 1)
    c3 = 1.0 - s * c2
    for x in range(k):
        Q[x, S] = c2
        if x in S:
            Q[x, x] = c1
        else:
            Q[x, x] = c3
    return Q


def urr_estimate(y: Sequence[int], *, k: int, sensitive: Sequence[int], epsilon: float) -> np.ndarray:
    """Empirical estimate of ``p`` from uRR reports (001 §2.5 / App. D.1, eq. (36)).

    ``m(x) = (e^ε-1)/u p(x) + 1/u`` on ``X_S`` and ``(e^ε-1)/u p(x)`` on ``X_N``
    (``u = |X_S| + e^ε - 1``), inverted coordinate-wise.

    Examples
    --------
    >>> urr_estimate([0, 1, 2, 2], k=3, sensitive=[0], epsilon=math.log(3)).round(6).tolist()
    [-0.125, 0.375, 0.75]
    """
    k = check_k(k)
    S = check_subset(sensitive, k, "sensitive")
    eps = check_epsilon(epsilon, positive=True, why=" to estimate (the channel is not invertible at 0)")
    y = np.asarray(y)
    if y.ndim != 1 or (y.size and (not np.issubdtype(y.dtype, np.integer) or y.min() < 0 or y.max() >= k)):
        raise InputError("y", f"must be a 1-D array of output indices in [0, {k - 1}]")
    m = np.bincount(y.astype(np.int64), minlength=k).astype(float) / max(y.size, 1)
    e = math.exp(eps)
    u = len(S) + e - 1
    p = m * u / (e - 1)
    p[S] = (m[S] - 1.0 / u) * u / (e - 1)
    return p


def urr_l1_loss(p: Sequence[float], *, sensitive: Sequence[int], epsilon: float, n: int) -> float:
    """Asymptotic expected l1 loss of uRR with the empirical estimator, 001 Prop. 6 eq. (12).

    ``sqrt(2/(n pi)) (sum_{X_S} sqrt((p + 1/u')(v - p - 1/u')) + sum_{X_N} sqrt(p (v - p)))``
    with ``u = |X_S| + e^ε - 1``, ``u' = e^ε - 1``, ``v = u/u'``.

    Examples
    --------
    >>> round(urr_l1_loss([0.5, 0.5], sensitive=[0], epsilon=1.0, n=100), 4) > 0
    True
    """
    P = check_prior(p, "p")
    S = check_subset(sensitive, P.size, "sensitive")
    eps = check_epsilon(epsilon)
    n = check_k(n, "n")
    e = math.exp(eps)
    u, u1 = len(S) + e - 1, e - 1
    v = u / u1
    total = 0.0
    for x in range(P.size):
        if x in S:
            total += math.sqrt(max((P[x] + 1 / u1) * (v - P[x] - 1 / u1), 0.0))
        else:
            total += math.sqrt(max(P[x] * (v - P[x]), 0.0))
    return math.sqrt(2.0 / (n * math.pi)) * total


def urappor_parameters(epsilon: float, theta: float | None = None) -> tuple[float, float, float]:
    """``(theta, d1, d2)`` of 001 Def. 5: ``d1 = theta/((1-theta)e^ε + theta)``, ``d2 = ((1-theta)e^ε + theta)/e^ε``.

    Default ``theta = e^{ε/2}/(e^{ε/2} + 1)`` (001 §4.2), which gives ``d1 = 1/(e^{ε/2}+1)``
    and ``d2 = e^{-ε/2}``.

    Examples
    --------
    >>> [round(v, 6) for v in urappor_parameters(2 * math.log(3))]
    [0.75, 0.25, 0.333333]
    """
    eps = check_epsilon(epsilon)
    e = math.exp(eps)
    if theta is None:
        h = math.exp(eps / 2)
        theta = h / (h + 1)
    theta = check_probability(theta, "theta")
    mix = (1 - theta) * e + theta
    return theta, theta / mix, mix / e


def _bit_probs(k: int, S: list[int], theta: float, d1: float, d2: float) -> np.ndarray:
    """``B[i, j] = Pr(y_j = 1 | x_i)`` of 001 eqs. (10)–(11)."""
    B = np.zeros((k, k))
    sens = np.zeros(k, dtype=bool)
    sens[S] = True
    for i in range(k):
        for j in range(k):
            if sens[j]:
                B[i, j] = theta if i == j else d1
            else:
                B[i, j] = 1 - d2 if i == j else 0.0
    return B


def urappor_channel(
    k: int, sensitive: Sequence[int], epsilon: float, *, theta: float | None = None, support_only: bool = True
) -> tuple[list[str], np.ndarray]:
    """Full channel of the ``(X_S, θ, ε)``-utility-optimized RAPPOR (001 Def. 5) over bit vectors.

    Output ``y in {0,1}^k`` is labeled by its bit string (bit ``j`` = input ``j``).
    ``Q(y|x_i) = prod_j Pr(y_j | x_i)`` with eqs. (10)–(11). With ``support_only`` (the
    default) outputs of probability 0 for every input (two or more non-sensitive bits set)
    are dropped: ``2^s (k - s + 1)`` outputs remain.

    Parameters
    ----------
    k : int
        ``<= 10`` (the matrix has up to ``2^k`` columns).
    sensitive : list of int
    epsilon : float
    theta : float, optional
        Default ``e^{ε/2}/(e^{ε/2}+1)``.
    support_only : bool, optional

    Returns
    -------
    outputs : list of str
    Q : ndarray, shape (k, m)

    Raises
    ------
    InputError
        If ``k > 10``.

    Examples
    --------
    >>> outs, Q = urappor_channel(2, [0], 2 * math.log(3))
    >>> outs
    ['00', '01', '10', '11']
    >>> Q.round(6).tolist()
    [[0.25, 0.0, 0.75, 0.0], [0.25, 0.5, 0.083333, 0.166667]]
    """
    k = check_k(k, maximum=MAX_URAPPOR_CHANNEL_K)
    S = check_subset(sensitive, k, "sensitive")
    theta, d1, d2 = urappor_parameters(epsilon, theta)
    B = _bit_probs(k, S, theta, d1, d2)
    outputs: list[str] = []
    cols = []
    for bits in itertools.product((0, 1), repeat=k):
        b = np.asarray(bits, dtype=float)
        col = np.prod(np.where(b > 0, B, 1.0 - B), axis=1)
        if support_only and not np.any(col > 0):
            continue
        outputs.append("".join(str(v) for v in bits))
        cols.append(col)
    return outputs, np.column_stack(cols)


def urappor_sample(
    x: Sequence[int], *, k: int, sensitive: Sequence[int], epsilon: float,
    theta: float | None = None, rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    """Privatize inputs ``x`` with uRAPPOR; returns an ``(n, k)`` array of 0/1 bits.

    Every bit is drawn independently with ``Pr(y_j = 1 | x_i)`` of 001 eqs. (10)–(11).

    Examples
    --------
    >>> urappor_sample([0, 1], k=3, sensitive=[0], epsilon=1.0, rng=0).shape
    (2, 3)
    """
    k = check_k(k)
    S = check_subset(sensitive, k, "sensitive")
    theta, d1, d2 = urappor_parameters(epsilon, theta)
    x = np.asarray(x)
    if x.ndim != 1 or (x.size and (not np.issubdtype(x.dtype, np.integer) or x.min() < 0 or x.max() >= k)):
        raise InputError("x", f"must be a 1-D array of input indices in [0, {k - 1}]")
    rng = np.random.default_rng(rng)
    sens = np.zeros(k, dtype=bool)
    sens[S] = True
    n = x.size
    # probability that bit j is 1, for every report: the off-diagonal value, then the diagonal
    prob = np.tile(np.where(sens, d1, 0.0), (n, 1))
    diag = np.where(sens[x], theta, 1 - d2)
    prob[np.arange(n), x] = diag
    return (rng.random((n, k)) < prob).astype(np.uint8)


def urappor_estimate(
    bits: np.ndarray, *, sensitive: Sequence[int], epsilon: float, theta: float | None = None
) -> np.ndarray:
    """Empirical estimate of ``p`` from uRAPPOR bit reports (001 App. D.2, eqs. (41)–(42)).

    Per bit: ``m_j = theta p_j + d1 (1 - p_j)`` on ``X_S`` and ``(1 - d2) p_j`` on ``X_N``,
    inverted: ``p_hat_j = (m_hat_j - d1)/(theta - d1)`` and ``m_hat_j/(1 - d2)``.

    Examples
    --------
    >>> b = urappor_sample([1] * 4000, k=3, sensitive=[0], epsilon=2.0, rng=2)
    >>> bool(abs(urappor_estimate(b, sensitive=[0], epsilon=2.0)[1] - 1) < 0.1)
    True
    """
    bits = np.asarray(bits)
    if bits.ndim != 2:
        raise InputError("bits", f"must be an (n, k) array of 0/1, got shape {bits.shape}")
    k = bits.shape[1]
    S = check_subset(sensitive, k, "sensitive")
    check_epsilon(epsilon, positive=True, why=" to estimate (the bits carry no information at 0)")
    theta, d1, d2 = urappor_parameters(epsilon, theta)
    m = bits.mean(axis=0) if bits.shape[0] else np.zeros(k)
    p = m / (1 - d2)
    p[S] = (m[S] - d1) / (theta - d1)
    return p


def urappor_l1_loss(p: Sequence[float], *, sensitive: Sequence[int], epsilon: float, n: int) -> float:
    """Asymptotic expected l1 loss of uRAPPOR (θ = e^{ε/2}/(e^{ε/2}+1)), 001 Prop. 9 eq. (17).

    ``sqrt(2/(n pi)) (sum_{X_S} sqrt((p + 1/u')(v_N - p)) + sum_{X_N} sqrt(p (v_N - p)))``
    with ``u' = e^{ε/2} - 1`` and ``v_N = e^{ε/2}/(e^{ε/2} - 1)``.

    Examples
    --------
    >>> urappor_l1_loss([0.5, 0.5], sensitive=[0], epsilon=1.0, n=100) > 0
    True
    """
    P = check_prior(p, "p")
    S = check_subset(sensitive, P.size, "sensitive")
    eps = check_epsilon(epsilon)
    n = check_k(n, "n")
    h = math.exp(eps / 2)
    u1, vN = h - 1, h / (h - 1)
    total = 0.0
    for x in range(P.size):
        if x in S:
            total += math.sqrt(max((P[x] + 1 / u1) * (vN - P[x]), 0.0))
        else:
            total += math.sqrt(max(P[x] * (vN - P[x]), 0.0))
    return math.sqrt(2.0 / (n * math.pi)) * total
