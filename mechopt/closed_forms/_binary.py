"""Closed forms for binary inputs (k = 2), as printed, and their corrections.

Every function returns a ``2 x 2`` channel ``Q`` (rows = inputs ``x_1, x_2`` / ``0, 1``,
columns = outputs in the same order). The *printed* forms reproduce the papers exactly;
the ``*_corrected`` / ``binary_cone_optimum`` forms are what the definitions require.

The key fact behind the corrections: for k = 2 every privacy notion of docs/model.md that is a
cone is a 2-D cone ``{q >= 0 : t_min <= q_2 / q_1 <= t_max}`` with two extreme rays, so
the channel whose two columns are those rays is *universally* optimal (every other
feasible channel is a garbling of it; 002 Thm 2's argument). :func:`binary_cone_optimum`
builds it from ``(t_min, t_max)``.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from .._errors import InputError
from .._validation import check_epsilon, check_prior, check_probability
from ..notions import lip_cone_rows
from ._common import INF, exp_or_inf

__all__ = [
    "warner_rr",
    "mangat_rr",
    "binary_eldp_optimum",
    "binary_eldp_optimum_corrected",
    "binary_cone_optimum",
    "binary_ratio_range",
    "binary_lip_rr",
    "binary_lip_mse",
    "binary_ldp_mse",
    "binary_lip_optimum",
    "uncertain_prior_lip_rr",
    "uncertain_prior_lip_rr_holds",
    "uncertain_prior_lip_optimum",
]


def warner_rr(epsilon: float) -> np.ndarray:
    """Warner's randomized response calibrated to ε-LDP (002 eq. (10); 000 Example 1 with p = q = 1/(e^ε+1)).

    ``Q = [[e^ε, 1], [1, e^ε]] / (e^ε + 1)``; ``epsilon = inf`` gives the identity.

    Parameters
    ----------
    epsilon : float
        Budget ``>= 0`` (``inf`` allowed).

    Returns
    -------
    ndarray, shape (2, 2)

    Raises
    ------
    InputError
        If ``epsilon`` is negative or not a number.

    Examples
    --------
    >>> warner_rr(math.log(3)).round(6).tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    """
    e = exp_or_inf(check_epsilon(epsilon, allow_inf=True))
    if math.isinf(e):
        return np.eye(2)
    keep = e / (e + 1.0)
    return np.array([[keep, 1.0 - keep], [1.0 - keep, keep]])


def mangat_rr(epsilon: float) -> np.ndarray:
    """Mangat's improved randomized response, 002 eq. (11) with ``p = e^-ε``.

    ``Q = [[1 - p, p], [0, 1]]``: input 2 (the sensitive answer) always reports output 2;
    input 1 reports output 2 with probability ``p``. 001 §3.1 (Example) states it is
    ``({x_2}, {y_2}, ln(1/p))``-ULDP.

    Examples
    --------
    >>> mangat_rr(math.log(4)).tolist()
    [[0.75, 0.25], [0.0, 1.0]]
    """
    e = exp_or_inf(check_epsilon(epsilon, allow_inf=True))
    p = 0.0 if math.isinf(e) else 1.0 / e
    return np.array([[1.0 - p, p], [0.0, 1.0]])


def binary_cone_optimum(t_min: float, t_max: float) -> np.ndarray:
    """The universally optimal binary channel for the cone ``t_min <= q_2/q_1 <= t_max``.

    Its columns are the two extreme rays ``(1, t_min)`` and ``(1, t_max)`` scaled so rows
    sum to 1: ``w_A = (t_max - 1)/(t_max - t_min)``, ``w_B = (1 - t_min)/(t_max - t_min)``;
    ``t_max = inf`` means the ray ``(0, 1)``. Needs ``0 <= t_min <= 1 <= t_max``
    (the all-ones column must be feasible). When ``t_min = t_max = 1`` the cone is one
    ray and the channel is constant (``0.5`` each).

    Parameters
    ----------
    t_min, t_max : float
        Smallest and largest allowed ratio ``q_2/q_1`` of a column.

    Examples
    --------
    >>> binary_cone_optimum(1 / 3, 3).round(6).tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    >>> binary_cone_optimum(0.25, math.inf).tolist()
    [[1.0, 0.0], [0.25, 0.75]]
    """
    t_min, t_max = float(t_min), float(t_max)
    if not (0.0 <= t_min <= 1.0 + 1e-12 and t_max >= 1.0 - 1e-12) or math.isnan(t_min) or math.isnan(t_max):
        raise InputError("ratio range", f"needs 0 <= t_min <= 1 <= t_max, got ({t_min!r}, {t_max!r})")
    t_min, t_max = min(t_min, 1.0), max(t_max, 1.0)
    if t_max - t_min <= 1e-15:
        return np.full((2, 2), 0.5)
    if math.isinf(t_max):
        return np.array([[1.0, 0.0], [t_min, 1.0 - t_min]])
    w_a = (t_max - 1.0) / (t_max - t_min)
    w_b = (1.0 - t_min) / (t_max - t_min)
    return np.array([[w_a, w_b], [w_a * t_min, w_b * t_max]])


def binary_ratio_range(rows: Sequence[Sequence[float]]) -> tuple[float, float]:
    """Ratio interval ``[t_min, t_max]`` of the 2-D cone ``{q >= 0 : a q_1 + b q_2 <= 0 for (a, b) in rows}``.

    ``t = q_2 / q_1``. Every homogeneous constraint on a binary column is one such row.

    Examples
    --------
    >>> # LDP with eps = ln 2: q_2 <= 2 q_1 and q_1 <= 2 q_2
    >>> binary_ratio_range([(-2.0, 1.0), (1.0, -2.0)])
    (0.5, 2.0)
    """
    t_lo, t_hi = 0.0, INF
    for a, b in rows:
        a, b = float(a), float(b)
        # a + b t <= 0 for the ray (1, t); the ray (0, 1) needs b <= 0.
        if b > 0:
            t_hi = min(t_hi, -a / b)
        elif b < 0:
            t_lo = max(t_lo, -a / b)
        elif a > 0:
            raise InputError("constraints", f"row {(a, b)!r} excludes every column with q_1 > 0")
    return t_lo, t_hi


def _lip_rows(prior: Sequence[float], e: float) -> list[tuple[float, float]]:
    """The LIP rows of a binary column (:func:`mechopt.notions.lip_cone_rows`) as ``(a, b)`` pairs."""
    return [(float(a), float(b)) for a, b in lip_cone_rows(np.asarray(prior, dtype=float), e)]


def binary_eldp_optimum(eps12: float, eps21: float) -> np.ndarray:
    """002 Thm 2, eq. (9), **as printed**: the claimed optimal E-LDP channel for k = 2.

    ``Q* = 1/(e^{ε21} - e^{-ε12}) [[e^{ε21}(1 - e^{-ε12}), e^{-ε12}(e^{ε21} - 1)],
    [1 - e^{-ε12}, e^{ε21} - 1]]``.

    Under 002 Def. 2 (``Q(S|x) <= e^{ε_{x,x'}} Q(S|x')``) this matrix has
    ``max Q(y|1)/Q(y|2) = e^{ε21}`` and ``max Q(y|2)/Q(y|1) = e^{ε12}``: the two indices
    are exchanged, so it violates E-LDP whenever ``ε12 != ε21``. See
    :func:`binary_eldp_optimum_corrected`.

    Examples
    --------
    >>> binary_eldp_optimum(math.log(3), math.log(3)).round(6).tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    """
    a = check_epsilon(eps12, "eps12", allow_inf=True)
    b = check_epsilon(eps21, "eps21", allow_inf=True)
    # printed = corrected optimum of the transposed E (indices exchanged)
    return binary_eldp_optimum_corrected(b, a)


def binary_eldp_optimum_corrected(eps12: float, eps21: float) -> np.ndarray:
    """The optimal binary E-LDP channel under 002 Def. 2 (002 Thm 2 with ε12 and ε21 exchanged).

    ``Q = 1/(e^{ε12+ε21} - 1) [[e^{ε12}(e^{ε21} - 1), e^{ε12} - 1], [e^{ε21} - 1, e^{ε21}(e^{ε12} - 1)]]``,
    i.e. the extreme rays ``(e^{ε12}, 1)`` and ``(1, e^{ε21})``. ``eps21 = inf`` gives
    ``[[1, 0], [e^{-ε12}, 1 - e^{-ε12}]]`` (Mangat with input 1 the sensitive one).

    Examples
    --------
    >>> Q = binary_eldp_optimum_corrected(math.log(2), math.log(4))
    >>> Q.round(6).tolist()
    [[0.857143, 0.142857], [0.428571, 0.571429]]
    """
    a = exp_or_inf(check_epsilon(eps12, "eps12", allow_inf=True))
    b = exp_or_inf(check_epsilon(eps21, "eps21", allow_inf=True))
    return binary_cone_optimum(1.0 / a, b)


def binary_lip_rr(prior1: float, epsilon: float) -> np.ndarray:
    """000 Thm 2 (first solution) / 003 eq. (19) for k = 2, **as printed**.

    With ``q_0 = Pr(Y=1|X=0) = P_1/e^ε`` and ``q_1 = Pr(Y=0|X=1) = (1-P_1)/e^ε``:
    ``Q = [[1 - q_0, q_0], [q_1, 1 - q_1]]``. Holds (is ε-LIP) iff
    ``1/(1+e^ε) <= P_1 <= e^ε/(1+e^ε)``.

    Parameters
    ----------
    prior1 : float
        ``P_1 = Pr(X = 1)``.
    epsilon : float

    Examples
    --------
    >>> binary_lip_rr(0.5, math.log(2)).tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    """
    p1 = check_probability(prior1, "prior1")
    e = exp_or_inf(check_epsilon(epsilon, allow_inf=True))
    q0 = 0.0 if math.isinf(e) else p1 / e
    q1 = 0.0 if math.isinf(e) else (1.0 - p1) / e
    return np.array([[1.0 - q0, q0], [q1, 1.0 - q1]])


def binary_lip_mse(prior1: float, epsilon: float) -> float:
    """Per-user MSE of 000 Thm 2, eq. (21): ``P_1 (1 - P_1)(2 e^-ε - e^-2ε)`` (survey, ``f(X) = X``).

    Examples
    --------
    >>> round(binary_lip_mse(0.5, 0.0), 12)
    0.25
    """
    return _survey_mse(prior1, epsilon, lambda p1, eps: p1 * (1.0 - p1) * (2.0 * math.exp(-eps) - math.exp(-2.0 * eps)))


def binary_ldp_mse(prior1: float, epsilon: float) -> float:
    """Per-user MSE of 000 Prop. 4, eq. (24): Warner's RR with the MMSE estimator.

    ``P(1-P) - [P(1-P)(1-e^ε)]^2 / ((1 - P + P e^ε)(e^ε - P e^ε + P))``.

    Examples
    --------
    >>> round(binary_ldp_mse(0.5, 0.0), 12), binary_ldp_mse(0.5, math.inf)
    (0.25, 0.0)
    """
    return _survey_mse(prior1, epsilon, _warner_mse)


def _warner_mse(p: float, eps: float) -> float:
    e = math.exp(eps)
    return p * (1 - p) - (p * (1 - p) * (1 - e)) ** 2 / ((1 - p + p * e) * (e - p * e + p))


def _survey_mse(prior1: float, epsilon: float, formula: Callable[[float, float], float]) -> float:
    """``formula(P_1, ε)`` on validated arguments; 0 at ``ε = inf`` (the report is the input)."""
    p1 = check_probability(prior1, "prior1")
    eps = check_epsilon(epsilon, allow_inf=True)
    return 0.0 if math.isinf(eps) else formula(p1, eps)


def binary_lip_optimum(prior: Sequence[float], epsilon: float) -> np.ndarray:
    """Universally optimal ε-LIP channel for k = 2 and a fixed prior (corrects 000 Thm 2).

    The two extreme rays of the binary LIP cone. Equals :func:`binary_lip_rr` exactly when
    ``1/(1+e^ε) <= P_1 <= e^ε/(1+e^ε)``; outside that range it is the true optimum for
    every utility obeying the data-processing inequality (MMSE, MI, Bayes risk, ...).

    Examples
    --------
    >>> binary_lip_optimum([0.5, 0.5], math.log(2)).round(6).tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    """
    P = check_prior(prior, k=2)
    e = exp_or_inf(check_epsilon(epsilon, allow_inf=True))
    if math.isinf(e):
        return np.eye(2)
    return binary_cone_optimum(*binary_ratio_range(_lip_rows(P, e)))


def uncertain_prior_lip_rr(a: float, b: float, epsilon: float) -> np.ndarray:
    """003 §IV-B2, **as printed**: RR for an uncertain prior ``P(X=1) in [a, b]``.

    ``q_01 = Pr(Y=1|X=0) = b/(b - a + e^ε)``, ``q_10 = Pr(Y=0|X=1) = (1-a)/(b - a + e^ε)``;
    ``Q = [[1 - q_01, q_01], [q_10, 1 - q_10]]``. It is ε-BP-LIP iff
    ``a e^ε + b >= 1`` and ``a + b e^ε <= e^ε`` (:func:`uncertain_prior_lip_rr_holds`).

    Examples
    --------
    >>> uncertain_prior_lip_rr(0.0, 1.0, math.log(3)).round(6).tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    """
    a_, b_, e = _interval_e(a, b, epsilon)
    if math.isinf(e):
        return np.eye(2)
    d = b_ - a_ + e
    q01, q10 = b_ / d, (1.0 - a_) / d
    return np.array([[1.0 - q01, q01], [q10, 1.0 - q10]])


def uncertain_prior_lip_rr_holds(a: float, b: float, epsilon: float, *, tol: float = 0.0) -> bool:
    """Whether :func:`uncertain_prior_lip_rr` is ε-BP-LIP on ``[a, b]``: ``a e^ε + b >= 1 >= (a + b e^ε) e^-ε``.

    For ``a = b = P_1`` this is the regime ``1/(1+e^ε) <= P_1 <= e^ε/(1+e^ε)`` of 003 eq. (19).

    Examples
    --------
    >>> uncertain_prior_lip_rr_holds(0.1, 0.2, 1.0)
    False
    >>> uncertain_prior_lip_rr_holds(0.3, 0.5, 1.0)
    True
    """
    a_, b_, e = _interval_e(a, b, epsilon)
    if math.isinf(e):
        return True
    return a_ * e + b_ >= 1.0 - tol and a_ + b_ * e <= e + tol


def uncertain_prior_lip_optimum(a: float, b: float, epsilon: float) -> np.ndarray:
    """Universally optimal ε-BP-LIP channel for ``P(X=1) in [a, b]`` (corrects 003 §IV-B2).

    The BP-LIP cone is the intersection of the LIP cones at ``P_1 = a`` and ``P_1 = b``
    (003 Lemma 2: LIP is preserved under mixtures of priors); its two extreme rays form
    the channel. Equals :func:`uncertain_prior_lip_rr` inside its regime.

    Examples
    --------
    Inside the regime of :func:`uncertain_prior_lip_rr_holds` it is the printed channel:

    >>> uncertain_prior_lip_rr_holds(0.3, 0.5, 1.0)
    True
    >>> np.allclose(uncertain_prior_lip_optimum(0.3, 0.5, 1.0), uncertain_prior_lip_rr(0.3, 0.5, 1.0))
    True
    """
    a_, b_, e = _interval_e(a, b, epsilon)
    if math.isinf(e):
        return np.eye(2)
    rows = _lip_rows([1.0 - a_, a_], e) + _lip_rows([1.0 - b_, b_], e)
    return binary_cone_optimum(*binary_ratio_range(rows))


def _interval_e(a: float, b: float, epsilon: float) -> tuple[float, float, float]:
    """The checked interval ``[a, b]`` of ``P(X=1)`` and ``e^ε`` (``inf`` allowed)."""
    a_ = check_probability(a, "a")
    b_ = check_probability(b, "b")
    if a_ > b_:
        raise InputError("a", f"must be <= b, got a={a_!r} > b={b_!r}")
    return a_, b_, exp_or_inf(check_epsilon(epsilon, allow_inf=True))
