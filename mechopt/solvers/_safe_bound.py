"""Safe bounds from approximate dual solutions (Neumaier & Shcherbina, 2004).

A solver's "optimal" objective is only as good as its tolerances: on an ill-conditioned
LP (budgets near 30 put ``e^30 = 1e13`` next to 1 in one row) HiGHS can report a value
that is not a bound at all. The bound mechopt reports is instead recomputed here from the
dual vector, by weak duality, with every rounding error accounted for:

For ``min c·x`` subject to ``A_ub x <= b_ub``, ``A_eq x = b_eq``, ``lo <= x <= hi`` and
*any* ``y_ub <= 0``, ``y_eq``, every feasible ``x`` satisfies ::

    c·x >= y_ub·b_ub + y_eq·b_eq + sum_j min over x_j in [lo_j, hi_j] of r_j x_j,
    r = c - A_ub^T y_ub - A_eq^T y_eq.

(Neumaier, Shcherbina, "Safe bounds in linear and mixed-integer linear programming",
Math. Program. 99, 2004.) The reduced costs are enclosed in intervals that cover the
floating-point evaluation *and* a relative uncertainty ``rel_data`` in every datum — the
LP's ``e^ε`` coefficients are floats within a few ulps of the true irrational ones, so the
bound holds for the true problem, not just for the float one. A variable whose interval of
``r_j`` reaches the wrong sign at an infinite bound makes the bound ``-inf``: the caller
must give finite boxes (every channel entry lies in [0, 1]).

The ray LP of SPEC §3 (a maximisation over ray weights) has the mirror bound
(:func:`ray_upper_bound`).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

_U = 2.0**-53
#: relative uncertainty allowed in every datum: each LP coefficient is one correctly
#: rounded float (1, a prior entry) or at most two roundings and one ``exp`` away from the
#: true value (``e^ε``, ``P(x) L(x, y)``), i.e. a few units of 2^-53; we allow 9 units
REL_DATA = 1e-15


def _gamma(n: int) -> float:
    """Higham's gamma_n = n u / (1 - n u), inflated: bound of a length-n dot product's error."""
    nu = (n + 2) * _U
    return 2.0 * nu / (1.0 - nu)


def _sure_sum(terms: np.ndarray) -> tuple[float, float]:
    """``(s, e)`` with the exact sum of the float ``terms`` in ``[s - e, s + e]``."""
    terms = np.asarray(terms, dtype=float)
    if not terms.size:
        return 0.0, 0.0
    s = math.fsum(terms.tolist())  # correctly rounded sum of the floats
    return s, _U * abs(s) + len(terms) * 2.0**-1074


def lp_lower_bound(c: np.ndarray, A_ub, b_ub, A_eq, b_eq, lo: np.ndarray, hi: np.ndarray,
                   y_ub: np.ndarray | None, y_eq: np.ndarray | None, *, rel_data: float = REL_DATA) -> float:
    """A rigorous lower bound on ``min c·x`` over the LP, from any dual guess.

    Parameters
    ----------
    c : ndarray (n,)
    A_ub, b_ub, A_eq, b_eq : sparse or dense matrices and vectors (may be None / empty)
    lo, hi : ndarray (n,)
        Bounds that hold for *some optimal solution* (they may be tighter than the LP's
        own: e.g. [0, 1] for channel entries and for auxiliaries that can be chosen so).
    y_ub, y_eq : ndarray
        Dual guesses (scipy's ``ineqlin.marginals`` / ``eqlin.marginals``); ``y_ub`` is
        clipped to ``<= 0``, which keeps the bound valid.
    rel_data : float
        Relative uncertainty of every datum of the LP.

    Returns
    -------
    float
        ``-inf`` when the dual guess proves nothing (a negative reduced cost at an
        infinite upper bound, say).

    Examples
    --------
    >>> import numpy as np
    >>> # min x0 + 2 x1 s.t. x0 + x1 = 1, 0 <= x <= 1: optimum 1, dual y_eq = 1
    >>> lb = lp_lower_bound(np.array([1.0, 2.0]), None, None, np.array([[1.0, 1.0]]), np.array([1.0]),
    ...                     np.zeros(2), np.ones(2), None, np.array([1.0]))
    >>> 1 - 1e-12 < lb <= 1
    True
    """
    c = np.asarray(c, dtype=float)
    n = len(c)
    r = c.copy()
    r_err = np.abs(c) * (rel_data + 2 * _U)
    base_terms = []
    base_err = 0.0
    for A, b, y, sign_clip in ((A_ub, b_ub, y_ub, True), (A_eq, b_eq, y_eq, False)):
        if A is None or y is None:
            continue
        A = sp.csr_matrix(A)
        if A.shape[0] == 0:
            continue
        y = np.asarray(y, dtype=float)
        if not np.all(np.isfinite(y)):
            return -math.inf
        if sign_clip:
            y = np.minimum(y, 0.0)
        b = np.asarray(b, dtype=float)
        AT = A.T.tocsr()
        r -= AT @ y
        absAT = abs(AT)
        nnz_col = np.diff(A.tocsc().indptr).max(initial=0)
        r_err += (absAT @ np.abs(y)) * (_gamma(int(nnz_col) + 2) + rel_data)
        prod = b * y
        base_terms.append(prod)
        base_err += float(np.abs(prod).sum()) * (rel_data + 2 * _U)
    r_err *= 1.0 + 1e-10  # the error bounds were themselves computed in floating point
    r_lo = r - r_err
    r_hi = r + r_err
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        if np.any((r_lo < 0) & np.isposinf(hi)) or np.any((r_hi > 0) & np.isneginf(lo)):
            return -math.inf
        # min over x in [lo, hi] of r x for r in [r_lo, r_hi]: at a corner; an infinite
        # bound is left out where r has the right sign (checked above)
        corners = [np.where(np.isfinite(b_), r_ * b_, np.inf) for r_ in (r_lo, r_hi) for b_ in (lo, hi)]
        box_terms = np.min(corners, axis=0)
    # every corner infinite: a free variable whose reduced cost is exactly 0
    box_terms = np.where(np.isposinf(box_terms), 0.0, box_terms)
    if n and not np.all(np.isfinite(box_terms)):
        return -math.inf
    s_box, e_box = _sure_sum(box_terms)
    e_box += 2 * _U * float(np.abs(box_terms).sum())  # each corner product rounded once
    base = np.concatenate(base_terms) if base_terms else np.zeros(0)
    s_base, e_base = _sure_sum(base)
    e_base += base_err
    total = s_box + s_base
    err = e_box + e_base + 2 * _U * (abs(s_box) + abs(s_base))
    bound = total - err * (1.0 + 1e-10)
    return float(bound) if math.isfinite(bound) else -math.inf


def ray_upper_bound(V: np.ndarray, mu: np.ndarray, d: np.ndarray, *, mu_rel: float = 1e-12,
                    rel_data: float = REL_DATA) -> float:
    """A rigorous upper bound on ``max mu·w`` s.t. ``V w = 1, w >= 0`` over the listed rays.

    For any ``d``: ``mu·w = 1·d + sum_r w_r (mu_r - v_r·d)`` on the feasible set, and
    ``0 <= w_r <= 1 / max_x v_r[x]`` (a row of ``V w = 1`` holds the ray's largest
    entry). ``mu_rel`` is the relative uncertainty of each ``mu_r`` (a sum of ``k``
    logarithms or ratios evaluated in floating point), ``rel_data`` that of ``V``.

    Examples
    --------
    >>> import numpy as np
    >>> V = np.eye(2); mu = np.array([1.0, 2.0])       # w = (1, 1): value 3
    >>> 3 <= ray_upper_bound(V, mu, np.array([1.0, 2.0])) < 3 + 1e-9
    True
    """
    V = np.asarray(V, dtype=float)
    mu = np.asarray(mu, dtype=float)
    d = np.asarray(d, dtype=float)
    if not (np.all(np.isfinite(d)) and np.all(np.isfinite(mu))):
        return math.inf
    k = V.shape[0]
    vd = d @ V
    vd_err = (np.abs(d) @ np.abs(V)) * (_gamma(k) + rel_data)
    red_hi = mu + np.abs(mu) * (mu_rel + 2 * _U) - vd + vd_err * (1 + 1e-10)
    vmax = V.max(axis=0)
    ub = np.where(vmax > 0, 1.0 / np.where(vmax > 0, vmax, 1.0), np.inf) * (1 + 4 * _U + rel_data)
    with np.errstate(invalid="ignore", over="ignore"):
        terms = np.where(red_hi > 0, red_hi * ub, 0.0)
    if not np.all(np.isfinite(terms)):
        return math.inf
    s_t, e_t = _sure_sum(terms)
    s_d, e_d = _sure_sum(d)
    total = s_t + s_d
    err = e_t + e_d + 2 * _U * float(np.abs(terms).sum()) + 2 * _U * (abs(s_t) + abs(s_d))
    return float(total + err * (1.0 + 1e-10))
