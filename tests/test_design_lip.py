"""Estimation design under LIP by column generation: the implicit pricing against full enumeration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from mechopt import estimation_risk, solve
from mechopt.solvers.design._colgen import column_generation_design
from mechopt.solvers.design._convex import design_cvxpy
from mechopt.solvers.design._pricing_lip import LipDesignPricer, _project, shor_bound


def _all_vertices(P, eps):
    """Every vertex of {P·v = 1, e^-eps <= v <= e^eps}, written independently of the pricer:
    all coordinates at a bound but one, ``j``, which the equation fixes (when within bounds)."""
    k = len(P)
    lo, hi = math.exp(-eps), math.exp(eps)
    out = []
    for j in range(k):
        others = [x for x in range(k) if x != j]
        for bits in itertools.product((0, 1), repeat=k - 1):
            v = np.full(k, lo)
            v[[o for o, b in zip(others, bits) if b]] = hi
            vj = (1.0 - (P @ v - P[j] * v[j])) / P[j]
            if lo - 1e-12 <= vj <= hi + 1e-12:
                v[j] = min(max(vj, lo), hi)
                out.append(v)
    return np.array(out)


def _psd(k, rng):
    A = rng.normal(size=(k, k))
    return A @ A.T


def _case(k, seed):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(k))
    eps = float(rng.uniform(0.3, 2.0))
    H, y = _psd(k, rng), rng.normal(size=k) * k
    return P, eps, H, y


@pytest.mark.parametrize("k, seed", [(3, 0), (4, 1), (5, 2), (6, 3), (7, 4), (7, 5)])
def test_exact_lip_pricing_is_the_maximum_over_every_vertex(k, seed):
    P, eps, H, y = _case(k, seed)
    pr = LipDesignPricer(P, eps)
    V = _all_vertices(P, eps)
    truth = np.einsum("ni,ij,nj->n", V, H, V) - V @ y  # on the slice P·v = 1
    assert np.allclose(pr.values(V, H, y, P), truth)
    ub, arg, cand, st = pr.exact(H, y, P, threshold=-np.inf)
    assert st["finished"]
    tol = 1e-8 * np.abs(truth).max()
    assert truth.max() <= ub <= truth.max() + tol
    assert float(arg @ H @ arg - y @ arg) >= truth.max() - tol
    # a threshold above the maximum: the bound stays above the maximum and at most the threshold
    ub2, _, cand2, _ = pr.exact(H, y, P, threshold=truth.max() + 1.0)
    assert truth.max() <= ub2 <= truth.max() + 1.0 + tol and cand2 == []


def test_stopped_search_still_bounds_the_maximum():
    P, eps, H, y = _case(7, 9)
    truth = (lambda V: (np.einsum("ni,ij,nj->n", V, H, V) - V @ y).max())(_all_vertices(P, eps))
    ub, _, _, st = LipDesignPricer(P, eps).exact(H, y, P, threshold=-np.inf, time_limit=0.0)
    assert not st["finished"] and ub >= truth


def test_heuristic_returns_vertices_of_the_slice_with_their_values():
    P, eps, H, y = _case(8, 3)
    pr = LipDesignPricer(P, eps)
    rng = np.random.default_rng(0)
    X, vals = pr.heuristic(pr.random_starts(rng, 20), H, y, P)
    lo, hi = math.exp(-eps), math.exp(eps)
    assert len(X) and np.allclose(X @ P, 1.0)
    inner = (X > lo + 1e-12) & (X < hi - 1e-12)
    assert np.all(inner.sum(axis=1) <= 1)  # vertices: every coordinate at a bound but one
    assert np.allclose(vals, np.einsum("ni,ij,nj->n", X, H, X) - X @ y)
    # a local maximum of the linearisation: no vertex beats it along its own gradient
    V = _all_vertices(P, eps)
    for x in X:
        g = 2 * H @ x - y
        assert (V @ g).max() <= g @ x + 1e-9 * np.abs(g).sum()


def test_projection_onto_the_node_is_the_nearest_point():
    rng = np.random.default_rng(4)
    p = rng.dirichlet(np.ones(6))
    lo, hi = np.full(6, 0.5), np.full(6, 2.0)
    z = rng.normal(size=6) * 2
    v = _project(z, p, 1.0, lo, hi)
    assert abs(p @ v - 1.0) < 1e-12 and np.all(v >= lo) and np.all(v <= hi)
    # optimality: no feasible direction (keeping p·v and the box) brings v closer to z
    for _ in range(200):
        u = np.clip(v + 0.05 * rng.normal(size=6), lo, hi)
        u = _project(u, p, 1.0, lo, hi)
        assert np.sum((u - z) ** 2) >= np.sum((v - z) ** 2) - 1e-12


@pytest.mark.parametrize("k, seed", [(4, 0), (5, 1), (6, 2)])
def test_colgen_design_equals_the_design_over_every_vertex(k, seed):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(k) * 2)
    eps = 1.0
    ref = design_cvxpy(_all_vertices(P, eps).T, P)  # the conic design over the listed vertices
    res = column_generation_design(LipDesignPricer(P, eps), P, time_limit=60)
    assert res.status == "optimal"
    assert res.lower <= ref.value * (1 + 1e-6) and res.value == pytest.approx(ref.value, rel=1e-6)
    # the design is a LIP channel with the risk the master reports
    Q = res.V * res.w
    assert np.allclose(Q.sum(axis=1), 1.0)
    q = P @ Q
    assert np.all(Q <= math.exp(eps) * q + 1e-12) and np.all(Q >= math.exp(-eps) * q - 1e-12)
    assert estimation_risk(Q, P) == pytest.approx(res.value, rel=1e-9)


def test_solve_routes_lip_beyond_enumeration_to_implicit_pricing():
    k = 16  # 16 · 2^15 vertex candidates: more than are listed
    P = np.random.default_rng(16).dirichlet(np.ones(k) * 3)
    doc = {"k": k, "outputs": "free", "privacy": [{"notion": "lip", "epsilon": 1, "prior": P.tolist()}],
           "objective": {"kind": "estimation_variance", "p0": P.tolist()}}
    r = solve(doc, quiet=True, time_limit=3)
    assert r.stats["pricing"] == "LIP slice"
    assert r.status in ("optimal", "feasible") and r.certificate.verified
    # the proven bound is below the exported channel's risk, computed here from its matrix
    assert r.bound <= estimation_risk(r.mechanism.matrix, P) * (1 + 1e-9)


@pytest.mark.parametrize("k, seed", [(5, 0), (6, 1), (7, 2)])
def test_shor_bound_is_above_the_maximum(k, seed):
    P, eps, H, y = _case(k, seed)
    V = _all_vertices(P, eps)
    truth = (np.einsum("ni,ij,nj->n", V, H, V) - V @ y).max()
    b, st = shor_bound(H, y, P, math.exp(-eps), math.exp(eps))
    assert truth <= b < math.inf
    # a linear objective (H = 0): the relaxation is the linear program over the slice, exact
    lin, _ = shor_bound(np.zeros((k, k)), y, P, math.exp(-eps), math.exp(eps))
    assert (-V @ y).max() <= lin <= (-V @ y).max() + 1e-5 * np.abs(y).sum()


@pytest.mark.parametrize("seed", range(4))
def test_scaled_dual_bound_is_below_the_optimum_and_above_the_plain_one(seed):
    from mechopt.solvers.design._colgen import tangent_basis
    from mechopt.solvers.design._dual import dual_value, pricing_matrix, scaled_bound

    rng = np.random.default_rng(seed)
    k, eps = 5, 1.0
    P = rng.dirichlet(np.ones(k) * 2)
    V = _all_vertices(P, eps)
    opt = design_cvxpy(V.T, P).value
    # an arbitrary dual point: Jinv positive definite, any y; delta over every vertex (P·v = 1)
    A = rng.normal(size=(k - 1, k - 1))
    Jinv = (A @ A.T + np.eye(k - 1)) * rng.uniform(0.1, 3.0)
    y = rng.normal(size=k)
    H = pricing_matrix(Jinv, tangent_basis(k))
    delta = float((np.einsum("ni,ij,nj->n", V, H, V) - V @ y).max())
    plain = dual_value(Jinv, y) - max(delta, 0.0)
    b = scaled_bound(Jinv, y, delta)
    assert plain <= b <= opt * (1 + 1e-7)
    # at the optimal dual (the master over every vertex) the bound meets the optimum
    from mechopt.solvers.design._colgen import restricted_design

    m = restricted_design(V.T, P)
    H = pricing_matrix(m.Jinv, tangent_basis(k))
    delta = float((np.einsum("ni,ij,nj->n", V, H, V) - V @ m.y).max())
    assert scaled_bound(m.Jinv, m.y, delta) == pytest.approx(opt, rel=1e-6)


# -- the variance bound (_lip_variance): below every design, attained by subset selection --


@pytest.mark.parametrize("k, seed", [(3, 0), (4, 1), (5, 2), (6, 3), (5, 4), (6, 5)])
def test_variance_bound_is_below_the_design_over_every_vertex(k, seed):
    from mechopt.solvers.design._lip_variance import diagonal_bound

    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(k))
    eps = float(rng.uniform(0.3, 2.5))
    opt = design_cvxpy(_all_vertices(P, eps).T, P).value  # the conic design over the listed vertices
    b, d = diagonal_bound(P, eps, P)
    assert 0 < b <= opt * (1 + 1e-6)
    assert np.all(d >= 0)


def _lip_subset_selection(k, size, eps):
    """Every ``size``-subset ``T`` an output; ``Q(T|x) = v_x(T) / C(k, size)`` with ``v_x`` at
    ``e^ε`` on ``T`` and ``e^-ε`` off it (ε-LIP for the uniform prior when ``size/k = 1/(1+e^ε)``)."""
    lo, hi = math.exp(-eps), math.exp(eps)
    subsets = list(itertools.combinations(range(k), size))
    Q = np.full((k, len(subsets)), lo)
    for j, T in enumerate(subsets):
        Q[list(T), j] = hi
    return Q / len(subsets)


@pytest.mark.parametrize("k, size", [(4, 1), (6, 2), (8, 2), (9, 3), (10, 4)])
def test_variance_bound_is_attained_by_subset_selection_at_a_uniform_prior(k, size):
    from mechopt.solvers.design._lip_variance import diagonal_bound

    eps = math.log(k / size - 1)  # size / k = 1 / (1 + e^eps)
    P = np.full(k, 1.0 / k)
    Q = _lip_subset_selection(k, size, eps)
    assert np.allclose(Q.sum(axis=1), 1.0)
    q = P @ Q
    assert np.all(Q <= math.exp(eps) * q * (1 + 1e-12)) and np.all(Q >= math.exp(-eps) * q * (1 - 1e-12))
    risk = estimation_risk(Q, P)
    b, _ = diagonal_bound(P, eps, P)
    assert b <= risk * (1 + 1e-12)
    assert b == pytest.approx(risk, rel=1e-9)


def test_variance_bound_needs_the_lip_prior_as_p0():
    from mechopt.solvers.design._lip_variance import diagonal_bound

    P = np.array([0.5, 0.3, 0.2])
    assert diagonal_bound(P, 1.0, np.array([0.4, 0.4, 0.2]))[0] == -math.inf


def test_solve_starts_from_the_variance_bound():
    from mechopt.solvers.design._lip_variance import diagonal_bound

    k = 20
    P = np.random.default_rng(20).dirichlet(np.ones(k))
    doc = {"k": k, "outputs": "free", "privacy": [{"notion": "lip", "epsilon": 1, "prior": P.tolist()}],
           "objective": {"kind": "estimation_variance", "p0": P.tolist()}}
    r = solve(doc, quiet=True, time_limit=5)
    b, _ = diagonal_bound(P, 1.0, P)
    assert r.stats["variance_bound"] == b and r.bound >= b
    assert b <= estimation_risk(r.mechanism.matrix, P) * (1 + 1e-9)


# -- polish: a local search over slice vertices, checked against the listed vertices --------


@pytest.mark.parametrize("k, seed", [(4, 0), (5, 1), (6, 2), (7, 3), (8, 4), (8, 5)])
def test_polish_ends_at_a_vertex_no_two_coordinate_neighbour_beats(k, seed):
    from mechopt.solvers.design._pricing_lip import polish

    P, eps, H, y = _case(k, seed)
    lo, hi = math.exp(-eps), math.exp(eps)
    V = _all_vertices(P, eps)
    q = np.einsum("ni,ij,nj->n", V, H, V) - V @ y
    scale = float(np.abs(q).max())
    for start in np.random.default_rng(seed).choice(len(V), size=min(len(V), 12), replace=False):
        v0 = V[start]
        w = polish(v0, H, y, P, lo, hi, max_steps=10_000)
        # a vertex of the slice: P·w = 1, within the bounds, at most one coordinate strictly inside
        assert abs(P @ w - 1) < 1e-12 and np.all(w >= lo - 1e-12) and np.all(w <= hi + 1e-12)
        assert np.sum((w > lo + 1e-9) & (w < hi - 1e-9)) <= 1
        qw = w @ H @ w - y @ w
        assert qw >= q[start] - 1e-9 * scale
        # no listed vertex that differs from w in at most two coordinates is better
        near = (np.abs(V - w) > 1e-9).sum(axis=1) <= 2
        assert q[near].max() <= qw + 1e-9 * scale
