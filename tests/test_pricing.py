"""Exact pricers of column generation (issue 10) against full enumeration of the cone's rays.

For a cone piece and duals ``d``, a pricer claims ``upper >= max_v (mu(v) - d·v) / (s·v)``
over every ray ``v`` of the piece (exactly the maximum when its search finished). The
rays are listed here by main's enumerators (``ldp_rays``, ``lip_slice_vertices``,
``enumerate_rays``) and the utilities computed from their textbook formulas, so neither
shares the pricer's sums, orders or bounds.
"""

import itertools
import math

import numpy as np
import pytest

from mechopt.objectives import Objective
from mechopt.notions import LDP, LIP, ULDP, BlockLDP, HighLowLDP
from mechopt.solvers.free._cones import decompose
from mechopt.solvers.free._pricing import LipSlice, Staircases, price
from mechopt.solvers.free._pricing_lip import lip_chord_duals, near_chord_vertices
from mechopt.solvers.free._rays import enumerate_rays, ldp_rays, lip_slice_vertices

KINDS = ("mmse", "histogram_mse", "mutual_information", "bayes_risk")


def mu(kind, P, V, f=None, L=None):
    """The objective's per-column utility, written from docs/model.md."""
    py = P @ V
    if kind == "mmse":
        return (((f * P) @ V) ** 2) / py
    if kind == "histogram_mse":
        return ((P[:, None] * V) ** 2).sum(axis=0) / py
    if kind == "mutual_information":
        out = np.zeros(V.shape[1])
        for j in range(V.shape[1]):
            v = V[:, j]
            m = (v > 0) & (P > 0)
            out[j] = float((P[m] * v[m] * np.log(v[m] / py[j])).sum())
        return out
    return np.array([-min(float((P * V[:, j]) @ L[:, xh]) for xh in range(len(P))) for j in range(V.shape[1])])


def make_obj(kind, P, rng):
    k = len(P)
    if kind == "mmse":
        return Objective(kind, P, values=rng.normal(size=k))
    if kind == "bayes_risk":
        return Objective(kind, P, loss=rng.uniform(0, 1, (k, k)) * (1 - np.eye(k)))
    return Objective(kind, P)


def duals(obj, P, rng, style):
    """Dual vectors of several shapes: zero, around the utility's scale, mixed signs."""
    k = len(P)
    scale = float(np.abs(mu(obj.kind, P, np.eye(k) + 0.1, obj.values, obj.loss)).max())
    if style == "zero":
        return np.zeros(k)
    if style == "scaled":
        return scale * rng.uniform(0.2, 1.5, k)
    return scale * rng.normal(size=k)


def true_max(obj, V, d, s):
    vals = (mu(obj.kind, obj.prior, V, obj.values, obj.loss) - d @ V) / (s @ V)
    return float(vals.max())


def staircase_rays(k, eps, U, G):
    """Every ray ``1_U + (e^eps - 1) 1_S``, ``S ⊆ G``, by listing the subsets."""
    out = []
    for r in range(len(G) + 1):
        for S in itertools.combinations(G, r):
            v = np.zeros(k)
            v[U] = 1.0
            v[list(S)] = math.exp(eps)
            out.append(v)
    return np.array(out).T


def check(obj, cone, V, d, s):
    best = true_max(obj, V, d, s)
    tol = 1e-9 * max(1.0, abs(best))
    r = price(cone, obj, d, floor=-math.inf)
    assert r.exact
    assert r.upper == pytest.approx(best, rel=1e-9, abs=tol)
    assert r.values[0] == pytest.approx(best, rel=1e-9, abs=tol)
    # the columns returned are rays of the cone, normalised s·v = 1, scored truthfully
    assert np.allclose(s @ r.columns, 1.0)
    got = (mu(obj.kind, obj.prior, r.columns, obj.values, obj.loss) - d @ r.columns) / (s @ r.columns)
    assert np.allclose(got, r.values, rtol=1e-9, atol=tol)
    # a stopped search still bounds the maximum
    stopped = price(cone, obj, d, floor=-math.inf, max_nodes=1, top=2)
    assert stopped.upper >= best - tol
    # with a floor (the default 0 included) the search may prune below it: the bound
    # still holds, and a finished search is exact above the floor
    for floor in (0.0, best - 10 * tol, best + 10 * tol):
        f = price(cone, obj, d, floor=floor)
        assert f.upper >= best - tol
        if f.exact and best > floor:
            assert f.upper == pytest.approx(best, rel=1e-9, abs=tol)
    return r


def random_prior(k, rng, zeros=False):
    P = rng.dirichlet(np.full(k, 0.7))
    if zeros:
        P[rng.choice(k, 2, replace=False)] = 0.0
        P /= P.sum()
    return P


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ldp_staircases(kind, seed):
    rng = np.random.default_rng(100 + seed)
    k = [6, 9, 12][seed]
    eps = [0.5, 1.0, 2.0][seed]
    P = random_prior(k, rng)
    obj = make_obj(kind, P, rng)
    idx = np.arange(k)
    V = np.hstack([ldp_rays(k, eps), np.ones((k, 1))])  # main's enumerator, plus the constant ray
    for style in ("zero", "scaled", "mixed"):
        check(obj, Staircases(idx, idx, eps), V, duals(obj, P, rng, style), P)


@pytest.mark.parametrize("kind", KINDS)
def test_zero_prior_entries(kind):
    rng = np.random.default_rng(7)
    k, eps = 8, 1.0
    P = random_prior(k, rng, zeros=True)
    obj = make_obj(kind, P, rng)
    idx = np.arange(k)
    V = np.hstack([ldp_rays(k, eps), np.ones((k, 1))])
    check(obj, Staircases(idx, idx, eps), V, duals(obj, P, rng, "mixed"), P)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1])
def test_block_pieces(kind, seed):
    rng = np.random.default_rng(200 + seed)
    k, eps = 11, [0.7, 1.5][seed]
    P = random_prior(k, rng)
    obj = make_obj(kind, P, rng)
    blocks = [list(range(0, 7)), list(range(7, 10)), [10]]
    n = BlockLDP(eps, blocks=blocks)
    cs = decompose([n], obj, k)
    assert cs.name == "block" and len(cs.pieces) == 2 and cs.fixed.shape == (k, 1)
    d = duals(obj, P, rng, "mixed")
    for piece, b in zip(cs.pieces, blocks):
        s = np.zeros(k)
        s[b] = P[b]
        V = staircase_rays(k, eps, b, b)
        r = check(obj, piece, V, d, s)
        assert r.mass == pytest.approx(P[b].sum())


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1])
def test_high_low_piece(kind, seed):
    rng = np.random.default_rng(300 + seed)
    k, eps = 10, [1.0, 0.4][seed]
    P = random_prior(k, rng)
    obj = make_obj(kind, P, rng)
    A = [1, 3, 4, 8, 9] if seed == 0 else [0, 2, 5, 6, 7, 8, 9]
    cs = decompose([HighLowLDP(eps, sensitive=A)], obj, k)
    assert cs.name == "high_low"
    (piece,) = cs.pieces
    # the piece's rays are main's enumeration of the high-low cone minus its unit rays
    V_main = enumerate_rays([HighLowLDP(eps, sensitive=A)], k).V
    units = (V_main > 0).sum(axis=0) == 1
    V_main = V_main[:, ~units] / V_main[:, ~units].min(axis=0)
    V = staircase_rays(k, eps, list(range(k)), A)
    assert same_columns(V_main, V[:, 1:])  # S = ∅ (the constant) is no extreme ray here
    check(obj, piece, V, duals(obj, P, rng, "mixed"), P)


@pytest.mark.parametrize("kind", KINDS)
def test_uldp_protected_piece(kind):
    rng = np.random.default_rng(400)
    k, eps = 9, 1.2
    P = random_prior(k, rng)
    obj = make_obj(kind, P, rng)
    n = ULDP(eps, sensitive=[0, 2, 5])
    cs = decompose([n], obj, k)
    assert cs.name == "uldp"
    # pieces + fixed rays are main's ULDP rays (protected staircases, invertible units)
    ray = enumerate_rays([n], k)
    assert same_columns(ray.V[:, ray.invertible], cs.fixed) and cs.invertible.all()
    (piece,) = cs.pieces
    check(obj, piece, ray.V[:, ~ray.invertible], duals(obj, P, rng, "mixed"), P)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lip_slice(kind, seed):
    rng = np.random.default_rng(500 + seed)
    k = [6, 8, 10][seed]
    eps = [0.5, 1.0, 2.0][seed]
    P = random_prior(k, rng)
    obj = make_obj(kind, P, rng)
    cs = decompose([LIP(eps, prior=P)], obj, k)
    (piece,) = cs.pieces
    assert isinstance(piece, LipSlice)
    V = lip_slice_vertices(P, eps)
    for style in ("zero", "scaled", "mixed"):
        check(obj, piece, V, duals(obj, P, rng, style), P)


@pytest.mark.parametrize("kind", ["histogram_mse", "mutual_information"])
def test_lip_chord_duals_are_dual_feasible(kind):
    """``d·v >= mu(v)`` on every slice vertex: ``sum(d)`` bounds the ray LP."""
    rng = np.random.default_rng(600)
    for k, eps in [(6, 0.5), (9, 1.0), (10, 2.5)]:
        P = random_prior(k, rng)
        obj = Objective(kind, P)
        d = lip_chord_duals(LipSlice(P, eps), obj)
        V = lip_slice_vertices(P, eps)
        assert np.all(d @ V >= mu(kind, P, V) - 1e-12)


@pytest.mark.parametrize("kind", ["histogram_mse", "mutual_information"])
@pytest.mark.parametrize("k,eps,zeros", [(30, 1.0, 0), (45, 0.5, 3), (60, 2.0, 1)])
def test_near_chord_vertices_are_vertices_within_the_target(kind, k, eps, zeros):
    """Every column is a vertex of the slice, and at most ``target`` under the chords."""
    rng = np.random.default_rng(700 + k)
    P = rng.dirichlet(np.ones(k))
    P[:zeros] = 0.0
    P /= P.sum()
    lo, hi = math.exp(-eps), math.exp(eps)
    obj = Objective(kind, P)
    target = 1e-9
    V = near_chord_vertices(LipSlice(P, eps), obj, target, 40, np.random.default_rng(1))
    assert V.shape[1] > 0
    assert np.all(np.abs(P @ V - 1.0) <= 1e-12)
    assert np.all((V >= lo - 1e-15) & (V <= hi + 1e-15))
    inner = (V > lo + 1e-12) & (V < hi - 1e-12) & (P[:, None] > 0)
    assert np.all(inner.sum(axis=0) <= 1)
    # the chords of phi_x(t) = (P t)^2 or P t log t through lo and hi, at each coordinate
    phi = (lambda t: (P[:, None] * t) ** 2) if kind == "histogram_mse" else (lambda t: P[:, None] * t * np.log(t))
    flo, fhi = phi(np.full((k, 1), lo)), phi(np.full((k, 1), hi))
    chord = flo + (fhi - flo) * (V - lo) / (hi - lo)
    shortfall = (chord - phi(V)).sum(axis=0)
    assert np.all(shortfall >= -1e-15)
    assert np.all(shortfall <= target + 1e-15)
    # the chords' plane is the bound of lip_chord_duals (lifted by its 1e-13 rounding margin)
    d = lip_chord_duals(LipSlice(P, eps), obj)
    assert np.all(np.abs(d @ V - mu(kind, P, V) - shortfall) <= 1e-11)


def test_decompose_refuses_what_it_cannot_price():
    P = np.full(4, 0.25)
    obj = Objective("mutual_information", P)
    assert decompose([LIP(1.0, prior=[0.4, 0.2, 0.2, 0.2])], obj, 4) is None  # another prior
    assert decompose([LDP(1.0)], Objective("estimation_variance", P), 4) is None
    # LDP inside block LDP at the same epsilon: the LDP cone decides
    cs = decompose([LDP(1.0), BlockLDP(1.0, blocks=[[0, 1], [2, 3]])], obj, 4)
    assert cs.name == "ldp"


def same_columns(A, B, tol=1e-9):
    if A.shape != B.shape:
        return False
    key = lambda M: sorted(map(tuple, np.round(M.T / M.T.max(axis=1, keepdims=True), 9)))
    return all(np.allclose(a, b, atol=tol) for a, b in zip(key(A), key(B)))
