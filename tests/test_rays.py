"""Extreme rays of E-LDP cones, enumerated in log space, checked from the definition and
against the exact double description in q (an independent formulation)."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import mechopt
from mechopt import ELDP
from mechopt.solvers.free._exact_dd import inner_outer_rays
from mechopt.solvers.free._rays import eldp_rays


@st.composite
def budget_matrices(draw, max_k=5):
    k = draw(st.integers(2, max_k))
    vals = draw(st.lists(st.sampled_from([0.0, 0.3, 0.7, 1.0, 1.8, math.inf]), min_size=k * k, max_size=k * k))
    E = np.array(vals, dtype=float).reshape(k, k)
    np.fill_diagonal(E, 0.0)
    return E


def is_extreme_ray(v, E, tol=1e-9):
    """In the cone, and its tight rows (ratios and zeros) have rank k - 1."""
    k = len(v)
    tight = []
    for x in range(k):
        if v[x] <= tol:
            tight.append(np.eye(k)[x])
        for xp in range(k):
            if x != xp and np.isfinite(E[x, xp]):
                bound = math.exp(E[x, xp]) * v[xp]
                if v[x] > bound * (1 + tol) + tol:
                    return False
                if abs(v[x] - bound) <= tol * max(1.0, bound):
                    row = np.zeros(k)
                    row[x], row[xp] = 1.0, -math.exp(E[x, xp])
                    tight.append(row)
    return v.max() > 0 and np.linalg.matrix_rank(np.array(tight), tol=1e-8) == k - 1


def as_set(V):
    V = V / V.max(axis=0, keepdims=True)
    return {tuple(c) for c in np.round(V.T, 8)}


@settings(max_examples=150, deadline=None)
@given(budget_matrices())
def test_log_space_rays_are_extreme_and_match_the_double_description_in_q(E):
    k = E.shape[0]
    V = eldp_rays(E)
    assert all(is_extreme_ray(V[:, j], E) for j in range(V.shape[1]))
    # the exact double description of the inner and outer rational cones in q: the same
    # rays up to their ~1e-14 difference (a degenerate budget may split one ray into two
    # that close, hence sets of rounded rays)
    W_in, W_out = inner_outer_rays([ELDP(E)], k)
    assert as_set(V) == as_set(W_in) == as_set(W_out)


def test_ldp_cone_gives_the_staircases():
    k, eps = 5, 0.8
    V = eldp_rays(np.where(np.eye(k, dtype=bool), 0.0, eps))
    assert V.shape[1] == 2**k - 2
    assert np.allclose(np.sort(np.unique(np.round(V / V.min(axis=0), 12))), [1.0, math.exp(eps)])


def test_large_budgets_keep_every_ray():
    # found by benchmarks/fuzz.py (seed 1, #1748): e^E spans 1e-13..1 and the float double
    # description in q lost rays ("the extreme rays found cannot make rows sum to 1")
    problem = {"inputs": ["x0", "x1", "x2", "x3", "x4"],
               "privacy": [{"notion": "metric", "epsilon": 5.87,
                            "edges": [["x0", "x1", 1.391], ["x0", "x2", 0.99], ["x0", "x4", 0.688],
                                      ["x1", "x4", 2.052], ["x2", "x3", 2.838]]}],
               "outputs": "free",
               "objective": {"kind": "mmse", "values": [0.02, 0.5, -0.48, -1.28, 0.03],
                             "prior": [0.1235, 0.2472, 0.2375, 0.1807, 0.2111]}}
    r = mechopt.solve(problem, quiet=True)
    assert r.status == "optimal" and r.certificate.verified
    # the exported channel is the ray LP's optimum up to the repair that makes entries
    # near e^-30 pass the exact check (its cost is in the certificate)
    assert r.bound <= r.objective <= r.bound * (1 + 1e-4)
