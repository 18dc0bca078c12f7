"""Relations between notions from 003 (Jiang, Seif, Tandon, Li): bounds as printed, and exact values.

Where the paper states an optimisation (Thm 1 eq. (9), Thm 3 eq. (10)) it is solved here as
linear programs over one output column: every notion involved is a polyhedral cone
``{q >= 0 : A q <= 0}`` (docs/model.md), LIP is scale-free per column, and the largest ratio
``q[x'] / q[x]`` over a cone is the LP ``max q[x'] s.t. q[x] = 1, A q <= 0``. Any ray of
such a cone is a column of some channel (the all-ones column is interior), so these
LP values are the exact worst cases over mechanisms.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy.optimize import linprog

from .._composition import lip_omega, lip_outer
from .._errors import InputError, SolverError
from ..notions import box_prior_vertices, lip_cone_rows
from .._validation import check_epsilon, check_k, check_prior, check_probability
from ._common import exp_or_inf

__all__ = [
    "lip_to_ldp_exact",
    "lip_to_ldp_bound",
    "ldp_to_lip_exact",
    "ldp_to_lip_bound",
    "bp_lip_vertices",
    "bp_lip_to_ldp_exact",
    "bp_lip_to_ldp_bound",
    "ldp_to_bp_lip_exact",
    "ldp_to_bp_lip_bound",
    "approx_lip_to_ldp",
    "approx_lip_to_ldp_corrected",
    "approx_ldp_to_lip",
    "lip_to_di_exact",
    "lip_to_di_bound",
    "di_to_lip_exact",
    "di_to_lip_bound",
    "prior_divergence",
]


# -- cones and LPs ------------------------------------------------------------------


def _ldp_rows(k: int, e: float) -> np.ndarray:
    rows = []
    for x in range(k):
        for x2 in range(k):
            if x != x2:
                r = np.zeros(k)
                r[x] += 1.0
                r[x2] -= e
                rows.append(r)
    return np.array(rows) if rows else np.zeros((0, k))


def _di_rows(P: np.ndarray, e: float) -> np.ndarray:
    """``P(x) q_x <= e^eps P(x') q_x'``: posterior ratios bounded (pointwise DI)."""
    k = P.size
    rows = []
    for x in range(k):
        for x2 in range(k):
            if x != x2:
                r = np.zeros(k)
                r[x] += P[x]
                r[x2] -= e * P[x2]
                rows.append(r)
    return np.array(rows)


def _lp_max(c: np.ndarray, A_ub: np.ndarray, A_eq: np.ndarray, b_eq: np.ndarray) -> float:
    """``max c.q`` s.t. ``A_ub q <= 0``, ``A_eq q = b_eq``, ``q >= 0``; ``inf`` if unbounded."""
    res = linprog(-c, A_ub=A_ub if A_ub.size else None, b_ub=np.zeros(A_ub.shape[0]) if A_ub.size else None,
                  A_eq=A_eq, b_eq=b_eq, bounds=[(0, None)] * c.size, method="highs")
    if res.status == 3:
        return math.inf
    if res.status == 2:
        return -math.inf
    if res.status != 0:
        raise SolverError(f"linprog failed ({res.status}): {res.message}")
    return float(-res.fun)


def _max_log_ratio_over_cone(A: np.ndarray, k: int, P: np.ndarray | None = None) -> float:
    """``max_{x != x'} log(max{q[x'] : q[x] = 1, A q <= 0, q >= 0} · P(x') / P(x))`` (0 when k = 1).

    Without ``P`` the ratio of two entries (LDP); with it the ratio of two posteriors (DI),
    over the inputs with ``P(x) > 0``.
    """
    best = 0.0
    for x in range(k):
        for x2 in range(k):
            if x == x2 or (P is not None and P[x] == 0):
                continue
            eq = np.zeros((1, k))
            eq[0, x] = 1.0
            c = np.zeros(k)
            c[x2] = 1.0
            v = _lp_max(c, A, eq, np.array([1.0]))
            if math.isinf(v):
                return math.inf
            r = v if P is None else v * P[x2] / P[x]
            if r > 0:
                best = max(best, math.log(r))
    return best


def _max_lip_over_cone(A: np.ndarray, P: np.ndarray) -> float:
    """``max |log(q[x] / P.q)|`` over the cone ``A q <= 0`` (LIP leakage of its worst column)."""
    k = P.size
    best = 0.0
    for x in range(k):
        eq = np.zeros((1, k))
        eq[0, x] = 1.0
        up = _lp_max(P.copy(), A, eq, np.array([1.0]))  # max P.q / q[x]
        c = np.zeros(k)
        c[x] = 1.0
        down = _lp_max(c, A, P[None, :], np.array([1.0]))  # max q[x] / P.q
        for v in (up, down):
            if math.isinf(v):
                return math.inf
            if v > 0:
                best = max(best, math.log(v))
    return best


# -- Thm 1 / Prop 1 and Thm 2: LIP, BP-LIP <-> LDP ------------------------------------
#
# One home for each relation: the private cores take the validated priors (one for LIP,
# several for BP-LIP: the worst prior decides), the public functions validate and call them.


def _lip_to_ldp_exact(Ps: list[np.ndarray], epsilon: float) -> float:
    e = exp_or_inf(check_epsilon(epsilon))
    return _max_log_ratio_over_cone(np.vstack([lip_cone_rows(P, e) for P in Ps]), Ps[0].size)


def _lip_to_ldp_bound(Ps: list[np.ndarray], epsilon: float) -> float:
    return lip_omega(check_epsilon(epsilon), max(float(P.min()) for P in Ps))


def _ldp_to_lip_bound(Ps: list[np.ndarray], epsilon: float) -> float:
    return lip_outer(check_epsilon(epsilon), min(float(P.min()) for P in Ps))


def _ldp_to_lip_exact(Ps: list[np.ndarray], epsilon: float) -> float:
    A = _ldp_rows(Ps[0].size, exp_or_inf(check_epsilon(epsilon)))
    return max(_max_lip_over_cone(A, P) for P in Ps)


def lip_to_ldp_exact(prior: Sequence[float], epsilon: float) -> float:
    """Exact LDP budget implied by ε-LIP, 003 Thm 1 eq. (9), solved as ``k(k-1)`` LPs.

    ``max_{x != x'} log max{q[x'] : q[x] = 1, q in the ε-LIP cone of P}``.

    Examples
    --------
    Prop. 1 is attained for a uniform binary prior:

    >>> math.isclose(lip_to_ldp_exact([0.5, 0.5], 1.0), lip_to_ldp_bound([0.5, 0.5], 1.0))
    True
    """
    return _lip_to_ldp_exact([check_prior(prior)], epsilon)


def lip_to_ldp_bound(prior: Sequence[float], epsilon: float) -> float:
    """003 Prop. 1: ε-LIP implies ``min{2ε, log((e^ε - 1 + P_min)/P_min)}``-LDP.

    Examples
    --------
    >>> round(lip_to_ldp_bound([0.25, 0.25, 0.25, 0.25], 1.0), 6), round(lip_to_ldp_bound([0.5, 0.5], 1.0), 6)
    (2.0, 1.48988)
    """
    return _lip_to_ldp_bound([check_prior(prior)], epsilon)


def ldp_to_lip_bound(prior: Sequence[float], epsilon: float) -> float:
    """003 Thm 1 (converse): ε-LDP implies ``log(P_min + e^ε (1 - P_min))``-LIP.

    Examples
    --------
    >>> round(ldp_to_lip_bound([0.5, 0.5], math.log(3)), 6)
    0.693147
    """
    return _ldp_to_lip_bound([check_prior(prior)], epsilon)


def ldp_to_lip_exact(prior: Sequence[float], epsilon: float) -> float:
    """Exact worst LIP leakage of an ε-LDP mechanism for ``prior`` (LPs over the LDP cone).

    Examples
    --------
    >>> math.isclose(ldp_to_lip_exact([0.5, 0.5], 1.0), ldp_to_lip_bound([0.5, 0.5], 1.0))  # Thm 1 attained
    True
    """
    return _ldp_to_lip_exact([check_prior(prior)], epsilon)


def bp_lip_vertices(lower: Sequence[float], upper: Sequence[float], *, tol: float = 1e-12) -> np.ndarray:
    """Vertices of the prior set ``{P : lower <= P <= upper, sum P = 1}`` (docs/model.md, BP-LIP box).

    A vertex has at most one coordinate strictly between its bounds, so it is enough to
    try, for each free coordinate, every assignment of the others to a bound
    (``k 2^(k-1)`` candidates; ``k <= 16``).

    Raises
    ------
    InputError
        If the bounds are malformed or the set is empty.

    Examples
    --------
    >>> bp_lip_vertices([0.2, 0.2], [0.8, 0.8]).tolist()
    [[0.2, 0.8], [0.8, 0.2]]
    """
    lo = np.asarray(lower, dtype=float)
    hi = np.asarray(upper, dtype=float)
    if lo.ndim != 1 or lo.shape != hi.shape or lo.size == 0:
        raise InputError("lower", f"lower and upper must be vectors of equal length, got {lo.shape} and {hi.shape}")
    check_k(lo.size, "len(lower)", maximum=16)
    if np.any(~np.isfinite(lo)) or np.any(~np.isfinite(hi)) or np.any(lo < 0) or np.any(hi > 1) or np.any(lo > hi):
        raise InputError("lower", f"need 0 <= lower <= upper <= 1 entrywise, got {lo.tolist()!r}, {hi.tolist()!r}")
    found = box_prior_vertices(lo, hi, tol=tol)
    if not len(found):
        raise InputError("lower", "the box lower <= P <= upper contains no probability vector")
    return found


def _priors(priors: Sequence[Sequence[float]]) -> list[np.ndarray]:
    if not isinstance(priors, (list, tuple, np.ndarray)) or len(priors) == 0:
        raise InputError("priors", f"must be a non-empty list of priors, got {priors!r}")
    out = [check_prior(p, f"priors[{i}]") for i, p in enumerate(priors)]
    if len({p.size for p in out}) != 1:
        raise InputError("priors", "all priors must have the same length")
    return out


def bp_lip_to_ldp_exact(priors: Sequence[Sequence[float]], epsilon: float) -> float:
    """Exact LDP budget implied by ε-BP-LIP on the convex hull of ``priors`` (LPs over the intersected cone).

    Examples
    --------
    >>> v = bp_lip_to_ldp_exact([[0.5, 0.5], [0.3, 0.7]], 1.0)
    >>> v <= bp_lip_to_ldp_bound([[0.5, 0.5], [0.3, 0.7]], 1.0) + 1e-9
    True
    """
    return _lip_to_ldp_exact(_priors(priors), epsilon)


def bp_lip_to_ldp_bound(priors: Sequence[Sequence[float]], epsilon: float) -> float:
    """003 Thm 2 (converse): ε-BP-LIP implies ``min{2ε, log((e^ε - 1 + maxP)/maxP)}``-LDP, ``maxP = max_P P_min``.

    Examples
    --------
    The largest ``P_min`` of the listed priors decides (here 0.5):

    >>> bp_lip_to_ldp_bound([[0.5, 0.5], [0.3, 0.7]], 1.0) == lip_to_ldp_bound([0.5, 0.5], 1.0)
    True
    >>> round(bp_lip_to_ldp_bound([[0.5, 0.5], [0.3, 0.7]], 1.0), 6)
    1.48988
    """
    return _lip_to_ldp_bound(_priors(priors), epsilon)


def ldp_to_bp_lip_bound(priors: Sequence[Sequence[float]], epsilon: float) -> float:
    """003 Thm 2: ε-LDP implies ``log(minP + e^ε (1 - minP))``-BP-LIP, ``minP = min_{P, x} P(x)``.

    Examples
    --------
    >>> ldp_to_bp_lip_bound([[0.5, 0.5], [0.3, 0.7]], 1.0) == ldp_to_lip_bound([0.3, 0.7], 1.0)  # min entry
    True
    """
    return _ldp_to_lip_bound(_priors(priors), epsilon)


def ldp_to_bp_lip_exact(priors: Sequence[Sequence[float]], epsilon: float) -> float:
    """Exact worst BP-LIP leakage of an ε-LDP mechanism over the listed priors (LPs).

    The LPs of :func:`ldp_to_lip_exact` for each prior; the worst prior counts.

    Examples
    --------
    >>> round(ldp_to_bp_lip_exact([[0.5, 0.5], [0.3, 0.7]], 1.0), 6)
    0.789728
    """
    return _ldp_to_lip_exact(_priors(priors), epsilon)


# -- Cor 3: approximate versions ----------------------------------------------------


def approx_ldp_to_lip(epsilon: float, delta: float) -> tuple[float, float]:
    """003 Cor. 3 (first half): (ε, δ)-LDP implies (ε, δ)-LIP. Returns ``(ε, δ)``.

    Examples
    --------
    >>> approx_ldp_to_lip(1.0, 0.1)
    (1.0, 0.1)
    """
    return _eps_delta(epsilon, delta)


def _eps_delta(epsilon: float, delta: float) -> tuple[float, float]:
    return check_epsilon(epsilon), check_probability(delta, "delta")


def approx_lip_to_ldp(epsilon: float, delta: float) -> tuple[float, float]:
    """003 Cor. 3 (second half), **as printed**: (ε, δ)-LIP implies ``(2ε, (e^ε + 1)δ)``-LDP.

    This is false for ε > 0, δ > 0 (see :func:`approx_lip_to_ldp_corrected`).

    Examples
    --------
    >>> [round(v, 6) for v in approx_lip_to_ldp(1.0, 0.1)]
    [2.0, 0.371828]
    """
    eps, d = _eps_delta(epsilon, delta)
    return 2 * eps, (math.exp(eps) + 1) * d


def approx_lip_to_ldp_corrected(epsilon: float, delta: float) -> tuple[float, float]:
    """Corrected 003 Cor. 3: (ε, δ)-LIP implies ``(2ε, 2 e^ε δ)``-LDP, and ``2e^ε`` is tight.

    Proof: ``Q(S|x) <= e^ε P(S) + e^ε δ`` and ``P(S) <= e^ε Q(S|x') + δ`` give
    ``Q(S|x) <= e^{2ε} Q(S|x') + 2 e^ε δ``. Tight for ``P = (1/(2e^ε), 1 - 1/(2e^ε))``,
    ``Q = [[1 - 2e^ε δ, 2e^ε δ], [1, 0]]`` when ``δ <= 1/(2(e^ε + 1))``.

    Examples
    --------
    ``2 e^ε δ`` exceeds the printed ``(e^ε + 1) δ`` (:func:`approx_lip_to_ldp`):

    >>> [round(v, 6) for v in approx_lip_to_ldp_corrected(1.0, 0.1)]
    [2.0, 0.543656]
    """
    eps, d = _eps_delta(epsilon, delta)
    return 2 * eps, min(1.0, 2 * math.exp(eps) * d)


# -- Thm 3: LIP <-> DI --------------------------------------------------------------


def prior_divergence(prior: Sequence[float]) -> float:
    """``D_inf(P) = max_{x, x'} log(P(x)/P(x'))`` (003 Thm 3).

    Examples
    --------
    >>> round(prior_divergence([0.2, 0.8]), 6)
    1.386294
    """
    P = check_prior(prior)
    if float(P.min()) == 0.0:
        return math.inf
    return float(math.log(P.max() / P.min()))


def lip_to_di_bound(prior: Sequence[float], epsilon: float) -> float:
    """003 Thm 3.1: ε-LIP implies ``(2ε + D_inf(P))``-DI.

    Examples
    --------
    >>> round(lip_to_di_bound([0.5, 0.5], 1.0), 6)
    2.0
    """
    return 2 * check_epsilon(epsilon) + prior_divergence(prior)


def lip_to_di_exact(prior: Sequence[float], epsilon: float) -> float:
    """Exact DI leakage implied by ε-LIP, 003 eq. (10): ``max P(x')q[x'] / (P(x)q[x])`` over the LIP cone (LPs).

    Examples
    --------
    >>> lip_to_di_exact([0.2, 0.8], 1.0) <= lip_to_di_bound([0.2, 0.8], 1.0)
    True
    """
    P = check_prior(prior)
    return _max_log_ratio_over_cone(lip_cone_rows(P, exp_or_inf(check_epsilon(epsilon))), P.size, P)


def di_to_lip_bound(prior: Sequence[float], epsilon: float) -> float:
    """003 Thm 3.1 (converse): ε-DI implies ``log(P_min + (1 - P_min) e^{ε + D_inf(P)})``-LIP.

    Examples
    --------
    >>> round(di_to_lip_bound([0.5, 0.5], math.log(3)), 6)
    0.693147
    """
    P = check_prior(prior)
    eps = check_epsilon(epsilon)
    pmin = float(P.min())
    d = prior_divergence(P)
    if math.isinf(d):
        return math.inf
    return math.log(pmin + (1 - pmin) * math.exp(eps + d))


def di_to_lip_exact(prior: Sequence[float], epsilon: float) -> float:
    """Exact worst LIP leakage of an ε-DI mechanism (LPs over the DI cone ``P(x)q_x <= e^ε P(x')q_x'``).

    Examples
    --------
    >>> di_to_lip_exact([0.2, 0.8], 1.0) <= di_to_lip_bound([0.2, 0.8], 1.0) + 1e-9
    True
    """
    P = check_prior(prior)
    e = exp_or_inf(check_epsilon(epsilon))
    return _max_lip_over_cone(_di_rows(P, e), P)
