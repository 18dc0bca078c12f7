"""Estimation design by column generation: the exact pricing, the master, the proven bound."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from mechopt import estimation_risk, solve
from mechopt.solvers.backends._adapters import get_backend
from mechopt.solvers.design._convex import design_cvxpy
from mechopt.solvers.design._colgen import column_generation_design, restricted_design
from mechopt.solvers.design._pricing import ExplicitPricer, StaircasePricer
from mechopt.solvers.free._rays import enumerate_rays, ldp_rays


def _all_staircases(k):
    return np.array([b for b in itertools.product((0.0, 1.0), repeat=k) if 0 < sum(b) < k])


def _psd(k, rng, rank=None):
    A = rng.normal(size=(k, rank or k))
    return A @ A.T


@pytest.mark.parametrize("k", [3, 5, 8, 11, 13])
def test_exact_staircase_pricing_is_the_maximum_over_every_staircase(k):
    rng = np.random.default_rng(k)
    pr = StaircasePricer(k, float(rng.uniform(0.3, 2.5)))
    H, y, p0 = _psd(k, rng), rng.normal(size=k) * k, rng.dirichlet(np.ones(k))
    X = _all_staircases(k)
    truth = pr.values(X, H, y, p0)  # written independently: v^T H v / p0·v - y·v
    V = pr.rays(X)
    assert np.allclose(truth, np.einsum("ir,ij,jr->r", V, H, V) / (p0 @ V) - y @ V)
    ub, arg, cand, st = pr.exact(H, y, p0, threshold=-np.inf, top=10**6)
    assert st["finished"] and st["leaves_evaluated"] == 2**k  # the two constant vectors are masked
    assert truth.max() <= ub <= truth.max() + 1e-9 * np.abs(truth).max()
    assert pr.values(arg[None], H, y, p0)[0] == pytest.approx(truth.max(), rel=1e-12, abs=1e-12)
    # a threshold prunes, but never a staircase above it: the candidates are exactly those
    thr = float(np.quantile(truth, 0.9))
    ub2, _, cand2, st2 = pr.exact(H, y, p0, threshold=thr, top=10**6)
    assert st2["leaves_evaluated"] <= st["leaves_evaluated"]
    assert ub2 >= truth.max()
    got = {tuple(x) for _, x in cand2}
    assert got == {tuple(x) for x, v in zip(X, truth) if v > thr}


def test_exact_pricing_with_a_time_limit_still_bounds_the_maximum():
    rng = np.random.default_rng(7)
    k = 12
    pr = StaircasePricer(k, 1.0)
    H, y, p0 = _psd(k, rng), rng.normal(size=k), rng.dirichlet(np.ones(k))
    truth = pr.values(_all_staircases(k), H, y, p0).max()
    ub, _, _, st = pr.exact(H, y, p0, threshold=-np.inf, time_limit=0.0, block=8)
    assert not st["finished"] and ub >= truth


def test_local_search_returns_true_values_and_local_maxima():
    rng = np.random.default_rng(3)
    k = 9
    pr = StaircasePricer(k, 1.3)
    H, y, p0 = _psd(k, rng), rng.normal(size=k), rng.dirichlet(np.ones(k))
    starts = (rng.random((30, k)) < 0.4).astype(float)
    starts = starts[(starts.sum(1) > 0) & (starts.sum(1) < k)]
    X, v = pr.heuristic(starts, H, y, p0)
    assert len(X) and np.allclose(v, pr.values(X, H, y, p0))
    for x, val in zip(X, v):  # no single flip improves
        for i in range(k):
            z = x.copy()
            z[i] = 1 - z[i]
            if 0 < z.sum() < k:
                assert pr.values(z[None], H, y, p0)[0] <= val + 1e-9 * abs(val)


def test_restricted_master_matches_the_conic_program():
    rng = np.random.default_rng(11)
    k = 6
    p0 = rng.dirichlet(np.ones(k))
    V = ldp_rays(k, 0.8)
    m = restricted_design(V, p0)
    assert m.converged
    assert np.abs(V @ m.w - 1).max() < 1e-12 and m.w.min() >= 0
    assert estimation_risk(V * m.w, p0) == pytest.approx(m.value, rel=1e-12)
    cv = design_cvxpy(V, p0)
    assert m.value == pytest.approx(cv.value, rel=1e-6)


def _random_feasible_designs(V, rng, n):
    """Vertices of {w >= 0 : V w = 1} for random costs, and mixtures of them."""
    lp = get_backend("highs")
    verts = []
    for _ in range(n):
        sol = lp.solve(rng.normal(size=V.shape[1]), A_eq=V, b_eq=np.ones(V.shape[0]), bounds=(0, None))
        verts.append(np.clip(sol.x, 0, None))
    out = []
    for _ in range(n):
        lam = rng.dirichlet(np.ones(n))
        out.append(np.array(verts).T @ lam)
    return out


@pytest.mark.parametrize("case", ["ldp", "eldp", "uldp"])
def test_the_proven_bound_is_below_every_feasible_design(case):
    rng = np.random.default_rng({"ldp": 1, "eldp": 2, "uldp": 3}[case])
    k = 6
    p0 = rng.dirichlet(np.ones(k) * 2)
    if case == "ldp":
        V = ldp_rays(k, 1.1)
    elif case == "eldp":
        from mechopt import ELDP

        E = rng.uniform(0.3, 2.0, (k, k))
        np.fill_diagonal(E, 0)
        V, _, _ = enumerate_rays([ELDP(E)], k)
    else:
        from mechopt import ULDP

        V, _, _ = enumerate_rays([ULDP(0.7, sensitive=(0, 1, 2))], k)
    res = column_generation_design(ExplicitPricer(V), p0)
    assert res.status == "optimal" and res.lower <= res.value
    assert (res.value - res.lower) / res.value <= 1e-6
    for w in _random_feasible_designs(V / V.max(axis=0), rng, 12):
        assert res.lower <= estimation_risk((V / V.max(axis=0)) * w, p0)


def test_staircase_and_listed_pricing_reach_the_same_optimum():
    rng = np.random.default_rng(5)
    k = 9
    p0 = rng.dirichlet(np.ones(k))
    a = column_generation_design(StaircasePricer(k, 0.7), p0)
    b = column_generation_design(ExplicitPricer(ldp_rays(k, 0.7)), p0)
    assert a.status == b.status == "optimal"
    assert a.value == pytest.approx(b.value, rel=1e-9)
    assert max(a.lower, b.lower) <= min(a.value, b.value) * (1 + 1e-12)


def test_a_time_limited_run_is_feasible_with_a_valid_bound():
    rng = np.random.default_rng(8)
    k = 11
    p0 = rng.dirichlet(np.ones(k))
    res = column_generation_design(StaircasePricer(k, 1.0), p0, time_limit=0.0)
    assert res.status in ("feasible", "optimal") and res.lower <= res.value
    full = column_generation_design(StaircasePricer(k, 1.0), p0)
    assert res.lower <= full.value * (1 + 1e-12) and full.value <= res.value * (1 + 1e-12)


def test_solve_nonuniform_ldp_design_k16_is_proven_optimal():
    rng = np.random.default_rng(16)
    p0 = rng.dirichlet(np.ones(16))
    r = solve({"k": 16, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
               "objective": {"kind": "estimation_variance", "p0": p0.tolist()}}, quiet=True)
    assert r.status == "optimal" and r.certificate.verified
    assert r.stats["method"] == "colgen" and r.stats["pricing"] == "staircases"
    assert r.bound <= r.objective <= r.bound * (1 + 1e-6)
    assert estimation_risk(r.mechanism.matrix, p0) == pytest.approx(r.objective, rel=1e-12)
    assert r.mechanism.matrix.shape[1] <= 16 * 15 // 2 + 16  # a vertex: Carathéodory


@pytest.mark.parametrize("privacy", [
    [{"notion": "lip", "epsilon": 1.0, "prior": [0.1, 0.2, 0.3, 0.4]}],
    [{"notion": "block", "epsilon": 0.8, "blocks": [["0", "1"], ["2", "3"]]}],
    [{"notion": "high_low", "epsilon": 0.9, "sensitive": ["0"]}],
])
def test_colgen_is_never_worse_than_the_conic_design_and_bounds_it(privacy):
    problem = {"k": 4, "outputs": "free", "privacy": privacy,
               "objective": {"kind": "estimation_variance", "p0": [0.4, 0.3, 0.2, 0.1]}}
    cg = solve(problem, method="colgen", quiet=True)
    cv = solve(problem, method="cvxpy", quiet=True)
    assert cg.status == "optimal" and cg.stats["pricing"] == "listed rays"
    assert cg.bound <= cv.objective * (1 + 1e-12)
    assert cg.objective <= cv.objective * (1 + 1e-6)
    assert math.isfinite(cg.objective)


@pytest.mark.parametrize("k,k1", [(6, 1), (9, 3), (12, 6)])
def test_the_bound_only_pricing_is_an_upper_bound(k, k1):
    rng = np.random.default_rng(k + k1)
    pr = StaircasePricer(k, 1.0)
    H, y, p0 = _psd(k, rng), rng.normal(size=k) * 3, rng.dirichlet(np.ones(k))
    truth = pr.values(_all_staircases(k), H, y, p0).max()
    ub, arg, cand, st = pr._bound_only(H, y, p0, threshold=-np.inf, t0=0.0, k1=k1)
    assert ub >= truth and st["bound_only"] and arg is None and cand == []
