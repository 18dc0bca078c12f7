"""Per-output blocks banded but for a few head places (:mod:`mechopt.solvers.metric._heads`).

Each factorisation is compared with the inverses numpy computes from the dense blocks,
and the IPM on such rows with the whole LP solved by HiGHS.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mechopt.solvers.metric._band import band_order, fiedler_order
from mechopt.solvers.metric._heads import OutputBandHeads, TooManyHeads, cover, heads_band, pairs_to_add
from mechopt.solvers.metric._ipm import metric_ipm
from mechopt.solvers.metric._lazy import base_pairs, violated_pairs

from test_metric_ipm import _highs_optimum


def _grid_rows(n: int, m: int, heads_per_output: int, seed: int):
    """A grid's base pairs for every output, and far pairs from a few places per output
    (some between two of them), shuffled; Euclidean budgets at 0.7 per unit."""
    rng = np.random.default_rng(seed)
    k = n * n
    xy = np.array([(i, j) for i in range(n) for j in range(n)], dtype=float)
    E = 0.7 * np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    a0, b0 = np.nonzero(base_pairs(E))
    rows = {(int(p), int(q), y) for y in range(m) for p, q in zip(a0, b0)}
    for y in range(m):
        if y == m - 1:
            continue  # an output with no far pair: no head
        src = rng.choice(k, heads_per_output, replace=False)
        for s in src:
            for t in rng.choice(k, k // 2, replace=False):
                if t != s:
                    rows.add((int(s), int(t), y) if rng.random() < 0.7 else (int(t), int(s), y))
    rows = sorted(rows)
    rng.shuffle(rows)
    a, b, y = (np.array(c) for c in zip(*rows))
    return k, E, a, b, y, a0, b0


def _dense_blocks(k, m, a, b, y, w, dq, D):
    Hs = []
    for j in range(m):
        sel = np.nonzero(y == j)[0]
        A = np.zeros((len(sel), k))
        A[np.arange(len(sel)), a[sel]] += 1.0
        A[np.arange(len(sel)), b[sel]] -= w[sel]
        Hs.append(np.diag(dq[:, j]) + A.T @ (D[sel, 0][:, None] * A))
    return Hs


@pytest.mark.parametrize("n, m, h, seed", [(4, 3, 2, 0), (5, 4, 3, 1), (6, 5, 4, 2)])
def test_band_and_heads_blocks_give_the_inverses_numpy_gives(n, m, h, seed):
    k, E, a, b, y, a0, b0 = _grid_rows(n, m, h, seed)
    w = np.exp(E[a, b])
    perm, bs = band_order(k, a0, b0)
    lin = OutputBandHeads(k, m, a, b, y, np.ones(len(a)), -w, perm, bs, max_heads=k)
    assert len(lin.heads[m - 1]) == 0 and 0 < max(len(x) for x in lin.heads) <= h + 1
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((k, m))
    for _ in range(2):  # the arrays of one factorisation are written over by the next
        dq = rng.uniform(1e-3, 1e3, (k, m))
        D = rng.uniform(1e-3, 1e3, (len(a), 1))
        Hs = _dense_blocks(k, m, a, b, y, w, dq, D)
        want = sum(np.linalg.inv(H) for H in Hs)
        M = lin.factor(dq, D)
        assert np.allclose(M, want, rtol=1e-8, atol=1e-11 * np.abs(want).max())
        X = lin.solve(G)
        for j in range(m):
            assert np.allclose(Hs[j] @ X[:, j], G[:, j], rtol=1e-7, atol=1e-9 * np.abs(G[:, j]).max())
    # the band part's sum in single precision (the IPM's iterates above a gap of 1e-3): M to
    # float32's rounding, the solves (double-precision factors) exact as before
    lin.single = True
    assert lin.band.single
    M = lin.factor(dq, D)
    err = np.abs(M - want).max() / np.abs(want).max()
    assert 1e-12 < err < 1e-5
    X = lin.solve(G)
    for j in range(m):
        assert np.allclose(Hs[j] @ X[:, j], G[:, j], rtol=1e-7, atol=1e-9 * np.abs(G[:, j]).max())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=30), st.integers(0, 10))
def test_the_heads_cover_every_far_pair_or_the_cover_is_refused(edges, most):
    edges = [(u, v) for u, v in edges if u != v]
    u = np.array([e[0] for e in edges], np.int64)
    v = np.array([e[1] for e in edges], np.int64)
    try:
        h = cover(u, v, most)
    except TooManyHeads:
        # a matching of more than ``most`` edges needs more than ``most`` places; greedy
        # needs at most twice the smallest cover, which a maximal matching bounds below
        matched: set = set()
        size = 0
        for p, q in edges:
            if p not in matched and q not in matched:
                matched |= {p, q}
                size += 1
        assert 2 * size > most
        return
    assert len(h) <= most
    assert all(p in h or q in h for p, q in edges)


def test_an_output_needing_more_heads_than_allowed_falls_back_to_dense_blocks():
    k, E, a, b, y, a0, b0 = _grid_rows(5, 3, 4, 3)
    perm, bs = band_order(k, a0, b0)
    with pytest.raises(TooManyHeads):
        OutputBandHeads(k, 3, a, b, y, np.ones(len(a)), -np.exp(E[a, b]), perm, bs, max_heads=1)
    cost = np.random.default_rng(3).dirichlet(np.ones(k))[:, None] * (E / 0.7) ** 2
    r = metric_ipm(cost[:, :3], a, b, np.exp(E[a, b]), output=y, heads=(perm, bs, 1))
    assert r.stats["linalg"] == "OutputDenseBlocks"


@pytest.mark.parametrize("n", [4, 5])
def test_the_ipm_on_band_and_heads_blocks_reaches_the_all_pairs_optimum(n):
    # every pair for every output, as per-output rows: the relaxation is the whole LP
    k = n * n
    xy = np.array([(i, j) for i in range(n) for j in range(n)], dtype=float)
    D = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    E = 0.7 * D
    cost = np.random.default_rng(n).dirichlet(np.ones(k))[:, None] * D**2
    a1, b1 = np.nonzero(~np.eye(k, dtype=bool))
    a, b, y = np.tile(a1, k), np.tile(b1, k), np.repeat(np.arange(k), len(a1))
    a0, b0 = np.nonzero(base_pairs(E))
    perm, bs = band_order(k, a0, b0)
    opt = _highs_optimum(E, cost)
    r = metric_ipm(cost, a, b, np.exp(E[a, b]), output=y, heads=(perm, bs, k))
    assert r.stats["linalg"] == "OutputBandHeads"
    assert r.status == "optimal"
    assert abs(r.pobj - opt) <= 1e-7 * opt and abs(r.dobj - opt) <= 1e-7 * opt


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_far_pairs_are_added_only_from_sources_and_near_ones_as_without_heads(seed):
    rng = np.random.default_rng(seed)
    n, m = 5, 4
    k = n * n
    xy = np.array([(i, j) for i in range(n) for j in range(n)], dtype=float)
    E = 0.7 * np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    G = np.exp(-E)
    np.fill_diagonal(G, 0.0)
    Q = rng.dirichlet(np.ones(m), size=k)
    keep = rng.random((m, k, k)) < 0.2
    inv = np.arange(k)
    bs = n + 1
    new = pairs_to_add(Q, G, keep, inv, bs, rel=1e-9, top=2, near=0.9, star=0.5)
    far = np.abs(inv[:, None] - inv[None, :]) > bs
    for y in range(m):
        R = Q[:, y][:, None] * G / Q[:, y][None, :]
        R[keep[y]] = 0.0
        broken = R > 1 + 1e-9
        if not broken.any():
            assert not new[y].any()
            continue
        # far: from the places whose far pair into some place is its worst broken far pair
        Rf = np.where(far, R, 0.0)
        sources = {int(np.argmax(Rf[:, x])) for x in range(k) if Rf[:, x].max() > 1 + 1e-9}
        want_far = np.zeros((k, k), bool)
        for s in sources:
            want_far[s] = Rf[s] > 0.5
        assert np.array_equal(new[y] & far, want_far)
        # near: the pairs violated_pairs gives when the far ones are out of reach (when a
        # near pair is broken: else it looks no further)
        if (broken & ~far).any():
            near_only = violated_pairs(Q[:, [y]], np.where(far, 0.0, G), (keep[y] | far)[None], top=2, near=0.9)[0]
            assert np.array_equal(new[y] & ~far, near_only)
        else:
            assert not (new[y] & ~far & ~(R > 0.9)).any()
        assert not (new[y] & keep[y]).any()


@pytest.mark.parametrize("n", [5, 6])
def test_lazy_rounds_on_band_and_heads_blocks_reach_the_all_pairs_optimum(monkeypatch, n):
    import mechopt.solvers.metric._lazy as lazy

    monkeypatch.setattr(lazy, "SHARED_FROM", 0)
    monkeypatch.setattr(lazy, "HEADS_FROM", 0)
    monkeypatch.setattr(lazy, "HEADS_SHARE", 1.0)
    k = n * n
    xy = np.array([(i, j) for i in range(n) for j in range(n)], dtype=float)
    D = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    E = 0.7 * D
    cost = np.random.default_rng(n).dirichlet(np.ones(k))[:, None] * D**2
    opt = _highs_optimum(E, cost)
    r = lazy.solve_metric_lazy(E, cost)
    assert r.stats["rounds"][0]["linalg"] == "BandBlocks"
    assert {x["linalg"] for x in r.stats["rounds"][1:]} == {"OutputBandHeads"}
    assert r.status == "optimal" and abs(r.objective - opt) <= 1e-7 * opt and r.bound <= opt * (1 + 1e-12)
    W = np.exp(E)
    assert np.all(r.Q[:, None, :] <= W[:, :, None] * r.Q[None, :, :] * (1 + 1e-9) + 1e-15)


def test_auto_takes_the_heads_past_dense_blocks_only_where_the_relaxations_have_no_level():
    from benchmarks.bench_geo import map_doc
    from mechopt.solvers.metric._route import LAZY_HEADS_MAX_K, LAZY_MAX_K, lazy_preferred, relaxation_levels

    def places(k):  # the benchmark's places from a map: haversine km, eps = 2 per km
        lat, lon = np.radians(np.array(map_doc(k)["places"]["latlon"])).T
        h = (np.sin((lat[:, None] - lat[None]) / 2) ** 2
             + np.cos(lat[:, None]) * np.cos(lat[None]) * np.sin((lon[:, None] - lon[None]) / 2) ** 2)
        return 2.0 * 2 * 6371.0088 * np.arcsin(np.sqrt(np.minimum(h, 1.0)))

    n = 27  # a grid past LAZY_MAX_K: it has threshold levels, the relaxations keep it
    g = np.array([(i, j) for i in range(n) for j in range(n)], dtype=float)
    grid = np.sqrt(((g[:, None] - g[None]) ** 2).sum(-1))
    assert LAZY_MAX_K < n * n <= LAZY_HEADS_MAX_K
    E = places(800)
    assert not relaxation_levels(E, 800) and lazy_preferred(E, 800)
    assert relaxation_levels(grid, n * n) and not lazy_preferred(grid, n * n)
    assert not lazy_preferred(places(LAZY_HEADS_MAX_K + 1), LAZY_HEADS_MAX_K + 1)


def _apart(perm, a, b):
    inv = np.empty(len(perm), np.int64)
    inv[perm] = np.arange(len(perm))
    return np.abs(inv[a] - inv[b])


@settings(max_examples=30, deadline=None)
@given(st.integers(3, 120), st.integers(0, 2**31 - 1))
def test_the_fiedler_order_is_an_order_of_the_places_and_says_its_band(k, seed):
    # clustered places, each with its cheapest pairs: the order is a permutation and its
    # band the largest distance of a pair in it; not connected: no order
    rng = np.random.default_rng(seed)
    xy = np.vstack([rng.normal(c, 0.3, (k // 3 + 1, 2)) for c in rng.uniform(0, 5, (3, 2))])[:k]
    a, b = np.nonzero(base_pairs(np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))))
    got = fiedler_order(k, a, b)
    if got is None:
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import connected_components
        assert connected_components(csr_matrix((np.ones(len(a)), (a, b)), shape=(k, k)), directed=False)[0] > 1
        return
    perm, bw = got
    assert sorted(perm.tolist()) == list(range(k))
    assert bw == max(int(_apart(perm, a, b).max()), 1)
    assert fiedler_order(2 * k, np.r_[a, a + k], np.r_[b, b + k]) is None  # two copies, apart


def test_the_heads_band_holds_every_pair_but_those_it_leaves_out_and_is_no_wider_than_either_order():
    rng = np.random.default_rng(7)
    xy = np.vstack([rng.normal(c, 0.4, (60, 2)) for c in rng.uniform(0, 2, (4, 2))])
    k = len(xy)
    a, b = np.nonzero(base_pairs(np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))))
    order, fiedler = band_order(k, a, b), fiedler_order(k, a, b)
    assert fiedler is not None  # (the clusters overlap: one connected graph)
    perm, bs, (wa, wb) = heads_band(k, a, b, order)
    out = set(zip(wa.tolist(), wb.tolist()))
    inside = np.array([(p, q) not in out for p, q in zip(a.tolist(), b.tolist())])
    assert _apart(perm, a[inside], b[inside]).max() <= bs < _apart(perm, wa, wb).min(initial=k)
    assert len(out) <= 0.05 * len(a) + 1
    assert bs <= order[1] and bs <= fiedler[1]
