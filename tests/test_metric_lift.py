"""The lift into the metric cone on sparse budgets (edges) against shortest paths from networkx."""

import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mechopt.solvers.metric._parts import _closure, _is_sparse, _Lift, snap_to_cone


def _grid_budgets(n: int, rng: np.random.Generator, symmetric: bool = False) -> np.ndarray:
    k = n * n
    E = np.full((k, k), np.inf)
    np.fill_diagonal(E, 0.0)
    for r in range(n):
        for c in range(n):
            i = r * n + c
            for j in ([i + 1] if c + 1 < n else []) + ([i + n] if r + 1 < n else []):
                E[i, j] = rng.uniform(0.1, 2.0)   # directed budgets may differ
                E[j, i] = E[i, j] if symmetric else rng.uniform(0.1, 2.0)
    return E


def _networkx_paths(E: np.ndarray) -> np.ndarray:
    k = E.shape[0]
    g = nx.DiGraph()
    g.add_nodes_from(range(k))
    a, b = np.nonzero(np.isfinite(E) & ~np.eye(k, dtype=bool))
    g.add_weighted_edges_from((int(x), int(y), float(E[x, y])) for x, y in zip(a, b))
    D = np.full((k, k), np.inf)
    for src, dist in nx.all_pairs_dijkstra_path_length(g):
        for dst, v in dist.items():
            D[src, dst] = v
    return D


@settings(max_examples=15, deadline=None)
@given(n=st.integers(6, 9), seed=st.integers(0, 10_000), power=st.sampled_from([1, 4, 12]))
def test_sparse_lift_is_the_max_over_shortest_paths(n, seed, power):
    rng = np.random.default_rng(seed)
    E = _grid_budgets(n, rng)
    assert _is_sparse(E)
    D = _networkx_paths(E)
    np.testing.assert_allclose(_closure(E), D, rtol=1e-12, atol=1e-12)
    Q = rng.random((n * n, 5)) ** power          # far from the cone for large powers
    Q[:, seed % 5] = 0.0                          # an unused output stays unused
    Q[:, (seed + 1) % 5] = np.exp(-D[seed % (n * n)])   # a tent: already in the cone
    want = np.max(Q[:, None, :] * np.exp(-D)[:, :, None], axis=0)   # max_z q[z] e^{-D[z, x]}
    got = _Lift(E)(Q)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    assert not got[:, seed % 5].any()
    np.testing.assert_allclose(got[:, (seed + 1) % 5], Q[:, (seed + 1) % 5], rtol=1e-14, atol=0)
    # every pair holds after the lift (up to rounding)
    a, b = np.nonzero(np.isfinite(E) & ~np.eye(n * n, dtype=bool))
    assert np.all(got[a] <= np.exp(E[a, b])[:, None] * got[b] * (1 + 1e-12))


def test_snap_renormalises_rows_on_sparse_budgets():
    rng = np.random.default_rng(5)
    E = _grid_budgets(7, rng, symmetric=True)    # a metric: lift and renormalise converge
    Q = rng.random((49, 49)) ** 6
    Q /= Q.sum(axis=1, keepdims=True)
    S = snap_to_cone(Q, E, rounds=200, tol=1e-13)
    assert np.abs(S.sum(axis=1) - 1).max() <= 1e-12
    a, b = np.nonzero(np.isfinite(E) & ~np.eye(49, dtype=bool))
    assert np.all(S[a] <= np.exp(E[a, b])[:, None] * S[b] * (1 + 1e-9))


def test_snap_keeps_its_least_rounds_past_the_deadline():
    # a relaxation's channel: the deadline has passed, yet the first `least` rounds run
    rng = np.random.default_rng(5)
    xy = rng.uniform(0, 5, (30, 2))
    E = 0.7 * np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    Q = rng.random((30, 30)) ** 6
    Q /= Q.sum(axis=1, keepdims=True)
    past = 0.0  # a time.perf_counter() value long gone
    for least in (1, 3):
        got = snap_to_cone(Q, E, rounds=50, deadline=past, least=least)
        assert np.array_equal(got, snap_to_cone(Q, E, rounds=least))
    assert not np.array_equal(snap_to_cone(Q, E, rounds=50, deadline=past, least=3), snap_to_cone(Q, E, rounds=50))
