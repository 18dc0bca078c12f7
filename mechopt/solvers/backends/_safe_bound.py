"""A rigorous lower bound on an LP's optimum from any (approximate) dual solution.

For ``min c'x  s.t.  A_ub x <= b_ub,  A_eq x = b_eq,  lo <= x <= hi`` (finite box)
and *any* multipliers ``y_ub >= 0`` and ``y_eq``, weak duality gives

::

    c'x >= c'x + y_ub'(A_ub x - b_ub) - y_eq'(A_eq x - b_eq)
         = -y_ub'b_ub + y_eq'b_eq + r'x,          r = c + A_ub'y_ub - A_eq'y_eq
        >= -y_ub'b_ub + y_eq'b_eq + sum_j min(r_j lo_j, r_j hi_j)

for every feasible ``x``. The duals need not be optimal nor feasible: a dual that is
infeasible by 1e-9 costs at most that much times the box. This is the safe bound of
Neumaier and Shcherbina, "Safe bounds in linear and mixed-integer linear programming"
(Math. Programming 99, 2004, §2) — there with interval arithmetic; here ``r`` is
computed in floating point and every rounding error is bounded by the classical
``gamma_n = n u / (1 - n u)`` estimate (Higham, *Accuracy and Stability of Numerical
Algorithms*, eq. 3.5), so the returned number is a lower bound on the LP optimum for the
data **as stored in floats**. A caller whose true coefficients are irrational (``e^ε``)
passes coefficients rounded outward, so that the float LP is a relaxation.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

_U = 2.0**-53  # unit roundoff of binary64


def _gamma(n: np.ndarray | int) -> np.ndarray | float:
    n = np.asarray(n, dtype=float) + 2.0  # one more for the addition of c, one for safety
    return n * _U / (1.0 - n * _U)


def _dot_lower(a: np.ndarray, b: np.ndarray) -> float:
    """A lower bound on the exact ``sum a_i b_i`` of two float vectors."""
    if a.size == 0:
        return 0.0
    prods = a * b
    # each product is off by at most u |a_i b_i| (plus the tiny underflow allowance);
    # fsum adds the rounded products with one final rounding
    err = _U * float(np.sum(np.abs(prods))) + a.size * 2.0**-1074
    s = math.fsum(prods.tolist())
    return s - err - _U * abs(s)


def _sure_sum(terms: np.ndarray) -> tuple[float, float]:
    """``(s, e)`` with the exact sum of the float ``terms`` in ``[s - e, s + e]``."""
    terms = np.asarray(terms, dtype=float)
    if not terms.size:
        return 0.0, 0.0
    s = math.fsum(terms.tolist())  # correctly rounded sum of the floats
    return s, _U * abs(s) + len(terms) * 2.0**-1074


class Transposed:
    """``A'`` prepared once for many residuals (``A'``, ``|A|'`` and terms per column)."""

    def __init__(self, A):
        A = sp.csc_matrix(A)
        self.T = A.T.tocsr()
        self.absT = abs(self.T)
        self.nterms = np.diff(A.indptr)


def residual_interval(c: np.ndarray, A_ub=None, y_ub=None, A_eq=None, y_eq=None, *,
                      rel_data: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``(r, err)`` with ``|r_exact - r| <= err`` for ``r = c + A_ub'y_ub - A_eq'y_eq``.

    ``A_ub`` and ``A_eq`` are matrices or :class:`Transposed`. ``rel_data`` is a relative
    uncertainty of every datum (``c`` and the matrices): the interval then covers every
    LP whose data lie within it of the float data.
    """
    c = np.asarray(c, dtype=float)
    r = c.copy()
    mag = np.abs(c)
    nterms = np.zeros(len(c))
    for A, y, sign in ((A_ub, y_ub, 1.0), (A_eq, y_eq, -1.0)):
        if A is None or y is None:
            continue
        if not isinstance(A, Transposed):
            A = Transposed(A)
        y = np.asarray(y, dtype=float)
        r += sign * (A.T @ y)
        mag += A.absT @ np.abs(y)
        nterms += A.nterms
    err = (_gamma(nterms) + rel_data) * mag * (1.0 + 4 * _U) + 2.0**-1060
    return r, err


def safe_lower_bound(c: np.ndarray, *, lo: np.ndarray, hi: np.ndarray, A_ub=None, b_ub=None, y_ub=None,
                     A_eq=None, b_eq=None, y_eq=None, rel_data: float = 0.0) -> float:
    """A lower bound on ``min c'x`` over the LP, valid despite rounding and dual error.

    Parameters
    ----------
    c : ndarray, shape (n,)
    lo, hi : ndarray, shape (n,)
        A finite box containing every feasible ``x`` (e.g. ``[0, 1]`` for channel
        entries, which rows summing to 1 imply).
    A_ub, b_ub, y_ub : sparse (p, n) or Transposed, (p,), (p,)
        Inequalities ``A_ub x <= b_ub`` and their multipliers; negative entries of
        ``y_ub`` (solver noise) are replaced by 0, which keeps the bound valid.
    A_eq, b_eq, y_eq : sparse (q, n), (q,), (q,)
        Equalities and free multipliers.
    rel_data : float
        Relative uncertainty of every datum (see :func:`residual_interval`): 0 when the
        float data are the problem (coefficients rounded outward by the caller).

    Returns
    -------
    float
        ``L`` with ``L <= c'x`` for every feasible ``x`` (exact real arithmetic on the
        float data); ``-inf`` if the box is not finite where ``r`` needs it.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> # min x0 + 2 x1  s.t.  x0 + x1 = 1, 0 <= x <= 1: optimum 1, dual y_eq = 1
    >>> L = safe_lower_bound(np.array([1.0, 2.0]), lo=np.zeros(2), hi=np.ones(2),
    ...                      A_eq=sp.csr_matrix([[1.0, 1.0]]), b_eq=np.array([1.0]), y_eq=np.array([1.0]))
    >>> 1 - 1e-14 < L <= 1
    True
    """
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    if y_ub is not None:
        y_ub = np.maximum(np.asarray(y_ub, dtype=float), 0.0)
    r, err = residual_interval(c, A_ub, y_ub, A_eq, y_eq, rel_data=rel_data)
    r_lo, r_hi = r - err, r + err
    # min over x in [lo, hi] and r in [r_lo, r_hi] of r x: attained at a corner
    with np.errstate(invalid="ignore"):
        cand = np.stack([r_lo * lo, r_lo * hi, r_hi * lo, r_hi * hi])
    cand = np.where(np.isnan(cand), 0.0, cand)  # 0 * inf: that corner has r = 0 there
    if np.any(np.isinf(cand) & (cand < 0)):
        return -math.inf
    terms = cand.min(axis=0)
    # the products above are rounded: allow u |term| each, fsum adds them with one rounding
    box = math.fsum(terms.tolist())
    box -= _U * float(np.sum(np.abs(terms))) + _U * abs(box) + len(terms) * 2.0**-1074
    parts = [box]
    if b_ub is not None and y_ub is not None:
        b = np.asarray(b_ub, dtype=float)
        parts.append(_dot_lower(-b, y_ub) - rel_data * float(np.abs(b) @ np.abs(y_ub)))
    if b_eq is not None and y_eq is not None:
        b, y = np.asarray(b_eq, dtype=float), np.asarray(y_eq, dtype=float)
        parts.append(_dot_lower(b, y) - rel_data * float(np.abs(b) @ np.abs(y)))
    # each part is a lower bound; their float sum rounds at most twice
    total = math.fsum(parts)
    return total - 3 * _U * sum(abs(p) for p in parts) - 2.0**-1060


#: relative uncertainty of every datum of mechopt's LPs: each coefficient is one correctly
#: rounded float (1, a prior entry) or at most two roundings and one ``exp`` away from the
#: true value (``e^ε``, ``P(x) L(x, y)``), i.e. a few units of 2^-53; we allow 9 units
REL_DATA = 1e-15


def lp_lower_bound(c: np.ndarray, A_ub, b_ub, A_eq, b_eq, lo: np.ndarray, hi: np.ndarray,
                   y_ub: np.ndarray | None, y_eq: np.ndarray | None, *, rel_data: float = REL_DATA) -> float:
    """:func:`safe_lower_bound` with scipy's dual conventions and mechopt's data uncertainty.

    ``y_ub`` and ``y_eq`` are scipy's ``ineqlin.marginals`` (``<= 0`` for ``<=`` rows of a
    minimisation) and ``eqlin.marginals``; the bound holds for every LP whose data lie
    within ``rel_data`` (relative) of the float data — the true LP, whose ``e^ε`` are
    irrational, among them. ``-inf`` when the guess proves nothing.

    Examples
    --------
    >>> import numpy as np
    >>> # min x0 + 2 x1 s.t. x0 + x1 = 1, 0 <= x <= 1: optimum 1, dual y_eq = 1
    >>> lb = lp_lower_bound(np.array([1.0, 2.0]), None, None, np.array([[1.0, 1.0]]), np.array([1.0]),
    ...                     np.zeros(2), np.ones(2), None, np.array([1.0]))
    >>> 1 - 1e-12 < lb <= 1
    True
    """
    for y in (y_ub, y_eq):
        if y is not None and not np.all(np.isfinite(y)):
            return -math.inf
    ub = None if y_ub is None else -np.minimum(np.asarray(y_ub, dtype=float), 0.0)
    A_ub = None if (A_ub is None or sp.csr_matrix(A_ub).shape[0] == 0) else A_ub
    A_eq = None if (A_eq is None or sp.csr_matrix(A_eq).shape[0] == 0) else A_eq
    bound = safe_lower_bound(np.asarray(c, dtype=float), lo=lo, hi=hi, A_ub=A_ub, b_ub=b_ub if A_ub is not None else None,
                             y_ub=ub if A_ub is not None else None, A_eq=A_eq,
                             b_eq=b_eq if A_eq is not None else None, y_eq=y_eq if A_eq is not None else None,
                             rel_data=rel_data)
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
