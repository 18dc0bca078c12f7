"""The safe LP bound (solvers/_safe_bound.py) against exact rational arithmetic."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from mechopt.solvers._safe_bound import residual_interval, safe_lower_bound


def _exact_lagrangian(c, lo, hi, A_ub, b_ub, y_ub, A_eq, b_eq, y_eq) -> Fraction:
    """The same Lagrangian bound in exact rationals (every float read exactly)."""
    F = Fraction
    n = len(c)
    y_ub = [max(F(v), F(0)) for v in y_ub]
    y_eq = [F(v) for v in y_eq]
    r = [F(v) for v in c]
    Au, Ae = A_ub.toarray(), A_eq.toarray()
    for i in range(Au.shape[0]):
        for j in range(n):
            if Au[i, j]:
                r[j] += F(Au[i, j]) * y_ub[i]
    for i in range(Ae.shape[0]):
        for j in range(n):
            if Ae[i, j]:
                r[j] -= F(Ae[i, j]) * y_eq[i]
    total = -sum(F(b) * y for b, y in zip(b_ub, y_ub)) + sum(F(b) * y for b, y in zip(b_eq, y_eq))
    for j in range(n):
        total += min(r[j] * F(lo[j]), r[j] * F(hi[j]))
    return total


def _random_lp(seed: int, n: int = 7, p: int = 6, q: int = 2):
    rng = np.random.default_rng(seed)
    # scales from 1e-8 to 1e8 so that rounding matters
    scale = 10.0 ** rng.uniform(-8, 8, size=n)
    c = rng.standard_normal(n) * scale
    A_ub = sp.csr_matrix(rng.standard_normal((p, n)) * (rng.random((p, n)) < 0.6))
    b_ub = rng.standard_normal(p)
    A_eq = sp.csr_matrix(rng.random((q, n)) * (rng.random((q, n)) < 0.7) + np.eye(q, n))
    b_eq = rng.random(q)
    lo = -rng.random(n)
    hi = rng.random(n) + 0.1
    return c, lo, hi, A_ub, b_ub, A_eq, b_eq


@pytest.mark.parametrize("seed", range(25))
def test_safe_bound_below_exact_lagrangian_for_any_duals(seed):
    c, lo, hi, A_ub, b_ub, A_eq, b_eq = _random_lp(seed)
    rng = np.random.default_rng(1000 + seed)
    # arbitrary (non-optimal, partly negative) multipliers, wildly scaled
    y_ub = rng.standard_normal(A_ub.shape[0]) * 10.0 ** rng.uniform(-3, 6, A_ub.shape[0])
    y_eq = rng.standard_normal(A_eq.shape[0]) * 10.0 ** rng.uniform(-3, 6, A_eq.shape[0])
    L = safe_lower_bound(c, lo=lo, hi=hi, A_ub=A_ub, b_ub=b_ub, y_ub=y_ub, A_eq=A_eq, b_eq=b_eq, y_eq=y_eq)
    exact = _exact_lagrangian(c, lo, hi, A_ub, b_ub, y_ub, A_eq, b_eq, y_eq)
    assert Fraction(L) <= exact
    # and it is tight: the allowance is a few ulps of the magnitudes involved
    r, err = residual_interval(c, A_ub, np.maximum(y_ub, 0), A_eq, y_eq)
    mag = float(np.abs(r).sum() + err.sum()) * float(np.max(np.maximum(np.abs(lo), np.abs(hi)))) + 1.0
    mag += float(np.abs(b_ub) @ np.abs(np.maximum(y_ub, 0)) + np.abs(b_eq) @ np.abs(y_eq))
    assert float(exact) - L <= 1e-12 * mag


def test_safe_bound_at_optimal_duals_is_the_optimum():
    # a small transportation-like LP with a known rational optimum
    c = np.array([0.1, 0.7, 0.3, 0.2])
    A_eq = sp.csr_matrix(np.array([[1.0, 1.0, 0, 0], [0, 0, 1.0, 1.0]]))
    b_eq = np.array([1.0, 1.0])
    A_ub = sp.csr_matrix(np.array([[1.0, 0, -2.0, 0]]))  # x0 <= 2 x2
    b_ub = np.zeros(1)
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=[(0, 1)] * 4, method="highs")
    y_eq = res.eqlin.marginals
    y_ub = -res.ineqlin.marginals
    L = safe_lower_bound(c, lo=np.zeros(4), hi=np.ones(4), A_ub=A_ub, b_ub=b_ub, y_ub=y_ub, A_eq=A_eq, b_eq=b_eq,
                         y_eq=y_eq)
    assert L <= res.fun + 1e-15
    assert res.fun - L < 1e-12


def test_infinite_box_where_the_residual_needs_it_gives_minus_infinity():
    L = safe_lower_bound(np.array([1.0, -1.0]), lo=np.zeros(2), hi=np.array([1.0, np.inf]))
    assert L == -math.inf
