"""Safe bounds: never above the exact optimum, for any dual guess; tight at the solver's duals.

The exact optimum of each small LP is found here by brute force in rational arithmetic:
every basic solution (n active constraints out of rows and bounds) solved with
``fractions.Fraction`` Gaussian elimination, the feasible ones compared.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from mechopt.solvers.backends._safe_bound import lp_lower_bound, ray_upper_bound


def solve_exact(M: list[list[Fraction]], b: list[Fraction]) -> list[Fraction] | None:
    n = len(M)
    A = [row[:] + [b[i]] for i, row in enumerate(M)]
    for col in range(n):
        piv = next((r for r in range(col, n) if A[r][col] != 0), None)
        if piv is None:
            return None
        A[col], A[piv] = A[piv], A[col]
        for r in range(n):
            if r != col and A[r][col] != 0:
                f = A[r][col] / A[col][col]
                A[r] = [a - f * p for a, p in zip(A[r], A[col])]
    return [A[i][n] / A[i][i] for i in range(n)]


def exact_lp_min(c, A_ub, b_ub, A_eq, b_eq, lo, hi) -> Fraction | None:
    """min c·x over the polytope, by enumerating basic solutions exactly (tiny n only)."""
    F = lambda v: Fraction(repr(float(v)))  # noqa: E731
    n = len(c)
    rows = []  # (a, b, kind) with a·x <= b ("ub"), = b ("eq")
    for a, bb in zip(A_ub, b_ub):
        rows.append(([F(v) for v in a], F(bb), "ub"))
    for a, bb in zip(A_eq, b_eq):
        rows.append(([F(v) for v in a], F(bb), "eq"))
    for j in range(n):
        e = [Fraction(0)] * n
        e[j] = Fraction(1)
        rows.append((e, F(hi[j]), "ub"))
        rows.append(([-v for v in e], -F(lo[j]), "ub"))
    best = None
    cF = [F(v) for v in c]
    eqs = [r for r in rows if r[2] == "eq"]
    ubs = [r for r in rows if r[2] == "ub"]
    for active in itertools.combinations(ubs, n - len(eqs)):
        sys_rows = eqs + list(active)
        x = solve_exact([r[0] for r in sys_rows], [r[1] for r in sys_rows])
        if x is None:
            continue
        if all(sum(a * xi for a, xi in zip(r[0], x)) <= r[1] for r in ubs) and all(
                sum(a * xi for a, xi in zip(r[0], x)) == r[1] for r in eqs):
            val = sum(ci * xi for ci, xi in zip(cF, x))
            best = val if best is None or val < best else best
    return best


@st.composite
def small_lps(draw):
    n = draw(st.integers(2, 4))
    m_ub = draw(st.integers(0, 3))
    num = st.floats(-3, 3, allow_nan=False).map(lambda v: round(v, 3))
    c = [draw(num) for _ in range(n)]
    A_ub = [[draw(num) for _ in range(n)] for _ in range(m_ub)]
    b_ub = [draw(st.floats(0, 3).map(lambda v: round(v, 3))) for _ in range(m_ub)]  # x = 0 feasible
    A_eq = [[draw(st.floats(0.1, 2).map(lambda v: round(v, 3))) for _ in range(n)]]
    b_eq = [draw(st.floats(0, 1).map(lambda v: round(v, 3)))]
    return np.array(c), np.array(A_ub).reshape(m_ub, n), np.array(b_ub), np.array(A_eq), np.array(b_eq)


@settings(max_examples=60, deadline=None)
@given(lp=small_lps(), noise=st.floats(0, 1), seed=st.integers(0, 2**32 - 1))
def test_bound_never_exceeds_the_exact_optimum(lp, noise, seed):
    c, A_ub, b_ub, A_eq, b_eq = lp
    n = len(c)
    lo, hi = np.zeros(n), np.ones(n)
    opt = exact_lp_min(c, A_ub, b_ub, A_eq, b_eq, lo, hi)
    if opt is None:
        return  # infeasible
    res = linprog(c, A_ub=A_ub if len(A_ub) else None, b_ub=b_ub if len(b_ub) else None, A_eq=A_eq, b_eq=b_eq,
                  bounds=[(0, 1)] * n, method="highs")
    assert res.status == 0
    y_ub = res.ineqlin.marginals if len(A_ub) else None
    y_eq = res.eqlin.marginals
    lb = lp_lower_bound(c, A_ub if len(A_ub) else None, b_ub, A_eq, b_eq, lo, hi, y_ub, y_eq)
    assert lb <= opt
    assert lb >= float(opt) - 1e-9 * max(1.0, abs(float(opt)))  # tight at the solver's duals
    # any other dual guess still gives a valid bound
    rng = np.random.default_rng(seed)
    y_ub2 = None if y_ub is None else y_ub + noise * rng.normal(size=len(y_ub))
    y_eq2 = y_eq + noise * rng.normal(size=len(y_eq))
    assert lp_lower_bound(c, A_ub if len(A_ub) else None, b_ub, A_eq, b_eq, lo, hi, y_ub2, y_eq2) <= opt


def test_a_false_dual_claim_is_not_a_bound():
    """A solver that reports the dual of a wrong optimum cannot push the bound above the truth."""
    c = np.array([1.0, 0.0])
    A_eq = np.array([[1.0, 1.0]])
    # true optimum 0 (x = (0, 1)); a dual of 0.5 "claims" 0.5
    lb = lp_lower_bound(c, None, None, A_eq, np.array([1.0]), np.zeros(2), np.ones(2), None, np.array([0.5]))
    assert lb <= 0.0


def test_infinite_box_with_wrong_sign_proves_nothing():
    lb = lp_lower_bound(np.array([-1.0]), None, None, None, None, np.zeros(1), np.array([np.inf]), None, None)
    assert lb == -math.inf


@settings(max_examples=60, deadline=None)
@given(k=st.integers(2, 4), R=st.integers(2, 7), seed=st.integers(0, 2**32 - 1), noise=st.floats(0, 1))
def test_ray_bound_is_above_every_feasible_weighting(k, R, seed, noise, best_basis):
    rng = np.random.default_rng(seed)
    V = np.hstack([np.eye(k), rng.uniform(0.1, 1, (k, R))])
    mu = rng.uniform(0, 1, V.shape[1])
    res = linprog(-mu, A_eq=V, b_eq=np.ones(k), bounds=(0, None), method="highs")
    assert res.status == 0
    d = -res.eqlin.marginals
    ub = ray_upper_bound(V, mu, d)
    assert ub >= -res.fun - 1e-15
    assert ub <= -res.fun + 1e-9
    # the exact optimum of the ray LP by brute force over bases (k x k subsets of rays)
    best = best_basis(V, mu)
    assert ray_upper_bound(V, mu, d + noise * rng.normal(size=k)) >= best - 1e-12


@pytest.mark.parametrize("eps", [1.0, 20.0, 30.0])
def test_ldp_labeled_lp_bound_is_the_krr_error(eps):
    """Labeled LDP, Hamming, uniform prior: the optimum is k-RR's error (k - 1)/(e^ε + k - 1)."""
    from mechopt import solve

    k = 4
    r = solve({"k": k, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": eps}],
               "objective": {"kind": "expected_loss"}}, quiet=True)
    truth = (k - 1) / (math.exp(eps) + k - 1)
    assert r.ok and r.bound <= truth * (1 + 1e-12) + 1e-300
    assert r.objective >= truth * (1 - 1e-12)


# -- the generic safe bound (safe_lower_bound) against the exact Lagrangian, for any duals ------------

import scipy.sparse as sp  # noqa: E402

from mechopt.solvers.backends._safe_bound import residual_interval, safe_lower_bound  # noqa: E402


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
