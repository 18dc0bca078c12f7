"""The structured interior-point method for the labeled metric LP (solvers/metric/_ipm.py,
solvers/metric/_route.py), checked against one plain HiGHS LP of the whole problem."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import mechopt
from mechopt.geo import Places
from mechopt.solvers.metric._band import BandBlocks, band_order
from mechopt.solvers.metric._ipm import DenseBlocks, OutputDenseBlocks, metric_ipm
from mechopt.solvers.metric._parts import snap_to_cone
from mechopt.solvers.metric._route import (relaxation_levels, safe_bound_from_duals, solve_metric_ipm,
                                           solve_metric_relaxed)

from _geo_cases import clustered

EPS = 0.7



def _problem(n: int, metric: str, seed: int = 0):
    """``(E, cost, doc)``: an n×n grid, ε = 0.7 per unit, squared loss, clustered prior."""
    pl = Places.grid(n, n)
    k = pl.k
    E = np.full((k, k), np.inf)
    np.fill_diagonal(E, 0.0)
    if metric == "grid":
        for a, b, w in pl.grid_edges():
            E[a, b] = E[b, a] = EPS * w
        dist = "manhattan"
    else:
        E = EPS * pl.distances("euclidean")
        dist = "euclidean"
    prior = clustered(pl, seed)
    cost = prior[:, None] * pl.loss("squared")
    doc = {"places": {"grid": [n, n]}, "privacy": [{"notion": "metric", "epsilon": EPS, "distance": dist}],
           "objective": {"kind": "expected_loss", "loss": "squared", "prior": prior.tolist()}}
    return E, cost, doc


def _highs_optimum(E: np.ndarray, cost: np.ndarray) -> float:
    """The whole LP (every finite pair, every output) in one scipy/HiGHS solve."""
    k, m = cost.shape
    a, b = np.nonzero(np.isfinite(E) & ~np.eye(k, dtype=bool))
    P = len(a)
    r = np.arange(P * m)
    pa = (a[:, None] * m + np.arange(m)[None]).ravel()
    pb = (b[:, None] * m + np.arange(m)[None]).ravel()
    wv = np.repeat(np.exp(E[a, b]), m)
    A_ub = sp.csr_matrix((np.concatenate([np.ones(P * m), -wv]), (np.concatenate([r, r]), np.concatenate([pa, pb]))),
                         shape=(P * m, k * m))
    A_eq = sp.csr_matrix((np.ones(k * m), (np.repeat(np.arange(k), m), np.arange(k * m))), shape=(k, k * m))
    res = linprog(cost.ravel(), A_ub=A_ub, b_ub=np.zeros(P * m), A_eq=A_eq, b_eq=np.ones(k), method="highs")
    assert res.status == 0
    return float(res.fun)


def _pairs(E):
    a, b = np.nonzero(np.isfinite(E) & ~np.eye(E.shape[0], dtype=bool))
    return a, b, np.exp(E[a, b])


CASES = [(3, "grid", 0), (3, "euclidean", 1), (4, "euclidean", 2), (5, "grid", 3), (6, "grid", 4),
         (5, "euclidean", 5)]


@pytest.mark.parametrize("n,metric,seed", CASES)
def test_ipm_matches_highs_and_its_safe_bound_is_below_the_optimum(n, metric, seed):
    E, cost, _ = _problem(n, metric, seed)
    opt = _highs_optimum(E, cost)
    a, b, w = _pairs(E)
    r = metric_ipm(cost, a, b, w)
    assert r.status == "optimal"
    assert abs(r.pobj - opt) <= 1e-6 * opt and abs(r.dobj - opt) <= 1e-6 * opt
    # the raw iterate: rows sum to 1 and every pair holds, up to rounding
    assert np.allclose(r.Q.sum(axis=1), 1.0, atol=1e-9)
    assert np.all(r.Q[a] <= w[:, None] * r.Q[b] * (1 + 1e-9) + 1e-12)
    # the safe bound from its duals: below HiGHS's optimum, and within the IPM's gap of it
    L = safe_bound_from_duals(E, cost, a, b, r.mu, r.Pi)
    assert L <= opt * (1 + 1e-12)
    assert opt - L <= 1e-7 * opt
    # ... and valid for any multipliers, not only near-optimal ones
    rng = np.random.default_rng(seed)
    L2 = safe_bound_from_duals(E, cost, a, b, r.mu * (1 + 0.1 * rng.standard_normal(len(r.mu))),
                               r.Pi * rng.uniform(0, 2, r.Pi.shape))
    assert L2 <= opt * (1 + 1e-12)


@pytest.mark.parametrize("n,metric,seed", [(4, "grid", 6), (5, "euclidean", 7), (6, "grid", 8)])
def test_solve_with_ipm_repairs_verifies_and_proves(n, metric, seed):
    E, cost, doc = _problem(n, metric, seed)
    opt = _highs_optimum(E, cost)
    res = mechopt.solve(doc, method="ipm", quiet=True)
    assert res.stats["method"] == "ipm"
    assert res.status == "optimal" and res.certificate.verified
    # the exported channel passes the exact verifier afresh, and has the optimum's value
    assert mechopt.verify(res.mechanism.matrix, list(mechopt.load_problem(doc).notions)).verified
    assert abs(res.objective - opt) <= 1e-7 * opt
    assert res.bound <= opt * (1 + 1e-12) and res.gap <= 1e-7 * res.objective


def test_auto_takes_the_ipm_from_25_places_and_decompose_still_works():
    _, _, doc = _problem(5, "grid", 9)
    auto = mechopt.solve(doc, quiet=True)
    dec = mechopt.solve(doc, method="decompose", quiet=True)
    assert auto.stats["method"] == "ipm" and dec.stats["method"] == "decompose"
    assert auto.status == dec.status == "optimal"
    assert abs(auto.objective - dec.objective) <= 1e-7 * dec.objective


def test_time_limit_gives_a_verified_channel_with_a_proven_gap():
    E, cost, doc = _problem(6, "euclidean", 10)
    opt = _highs_optimum(E, cost)
    r = solve_metric_ipm(E, cost, time_limit=0.0)  # stops before the first step
    assert r.status == "feasible" and r.stats["time_limit_hit"]
    assert r.bound <= opt * (1 + 1e-12) <= r.objective * (1 + 1e-12)
    short = mechopt.solve(doc, method="ipm", quiet=True, time_limit=1e-3)
    assert short.status == "feasible" and short.certificate.verified
    assert short.gap is None or short.gap > 1e-7 * short.objective
    assert short.objective >= opt * (1 - 1e-12)
    assert short.bound is None or short.bound <= opt * (1 + 1e-12)
    assert "gap" in short.message


def _grid_rows(rows: int, cols: int, rng, diagonals: bool = False):
    """A grid's neighbour pairs both ways with random budgets: ``(k, a, b, ca, cb, A)``, ``A`` the dense pair rows.

    With ``diagonals`` the diagonal neighbours too (then the blocks of consecutive rows
    are joined off their diagonal)."""
    k = rows * cols
    a, b = np.array([[e[0], e[1]] for e in Places.grid(rows, cols).grid_edges()]).T
    if diagonals:
        cell = np.arange(k).reshape(rows, cols)
        a = np.concatenate([a, cell[:-1, :-1].ravel(), cell[:-1, 1:].ravel()])
        b = np.concatenate([b, cell[1:, 1:].ravel(), cell[1:, :-1].ravel()])
    a, b = np.concatenate([a, b]), np.concatenate([b, a])
    w = np.exp(rng.uniform(0.2, 1.5, len(a)))
    ca, cb = np.ones(len(a)), -w
    A = sp.csr_matrix((np.concatenate([ca, cb]), (np.tile(np.arange(len(a)), 2), np.concatenate([a, b]))),
                      shape=(len(a), k)).toarray()
    return k, a, b, ca, cb, A


@given(st.integers(1, 5000), st.integers(1, 4), st.integers(32, 600))
@settings(max_examples=200, deadline=None)
def test_output_parts_cover_the_outputs_and_keep_every_thread_busy(m, workers, most):
    from mechopt.solvers.metric import _band

    parts = _band._parts(m, workers, most)
    assert parts[0].start == 0 and parts[-1].stop == m
    assert all(p.stop == q.start for p, q in zip(parts, parts[1:]))
    sizes = [p.stop - p.start for p in parts]
    assert max(sizes) <= most and min(sizes) >= 1
    assert max(sizes) - min(sizes) <= 1
    if len(parts) > workers:  # no thread is left with one part fewer than another
        assert len(parts) % workers == 0
    assert len(parts) >= -(-m // most)


@pytest.mark.parametrize("diagonals", [False, True])
def test_band_and_dense_schur_complements_agree_with_numpy(monkeypatch, diagonals):
    from mechopt.solvers.metric import _band

    monkeypatch.setattr(_band, "MIN_PART", 2)  # six outputs in two threads' parts
    assert len(_band._parts(6, 2)) == 2
    rng = np.random.default_rng(12)
    k, a, b, ca, cb, A = _grid_rows(4, 5, rng, diagonals)
    m = 6
    perm, bs = band_order(k, a, b)
    assert bs <= 6  # a 4×5 grid: neighbours at most one row apart
    G = rng.standard_normal((k, m))
    lins = (DenseBlocks(k, a, b, ca, cb), BandBlocks(k, a, b, ca, cb, perm, bs, workers=1),
            BandBlocks(k, a, b, ca, cb, perm, bs, workers=2), BandBlocks(k, a, b, ca, cb, perm, bs, workers=2))
    # at most two outputs a part: four parts of one or two outputs in two threads, each
    # added to M when done, the work arrays' views of different lengths
    lins[3].most = 2
    assert sorted(p.stop - p.start for p in _band._parts(m, 2, 2)) == [1, 1, 2, 2]
    # 4-neighbours in row-major order: the place below is in the same column of the next
    # block (W_i kept, P_i formed when used); diagonal neighbours join other columns (W_i
    # and Y_i kept)
    assert lins[1].diagonal is (not diagonals)
    for _ in range(2):  # twice: the band blocks keep their arrays from one factorisation to the next
        dq = rng.uniform(1e-3, 1e3, (k, m))
        D = rng.uniform(1e-3, 1e3, (len(a), m))
        want = sum(np.linalg.inv(np.diag(dq[:, y]) + A.T @ np.diag(D[:, y]) @ A) for y in range(m))
        for lin in lins:
            M = lin.factor(dq, D)
            assert np.allclose(M, want, rtol=1e-8, atol=1e-12 * np.abs(want).max())
            X = lin.solve(G)
            for y in range(m):
                H = np.diag(dq[:, y]) + A.T @ np.diag(D[:, y]) @ A
                assert np.allclose(H @ X[:, y], G[:, y], rtol=1e-7, atol=1e-9 * np.abs(G[:, y]).max())


def test_dense_blocks_with_pairs_of_their_own_agree_with_numpy():
    # the lazy route's operator: every output its own rows (unsorted by output); twice, as
    # the blocks' array is written over from one factorisation to the next
    rng = np.random.default_rng(5)
    k, m = 7, 4
    rows = [(a, b, y) for y in range(m) for a in range(k) for b in range(k) if a != b and rng.random() < 0.4]
    rng.shuffle(rows)
    a, b, y = (np.array(c) for c in zip(*rows))
    w = np.exp(rng.uniform(0.1, 3.0, len(a)))
    lin = OutputDenseBlocks(k, m, a, b, y, np.ones(len(a)), -w)
    G = rng.standard_normal((k, m))
    for _ in range(2):
        dq = rng.uniform(1e-3, 1e3, (k, m))
        D = rng.uniform(1e-3, 1e3, (len(a), 1))
        Hs = []
        for j in range(m):
            A = np.zeros((len(a), k))
            sel = np.nonzero(y == j)[0]
            A[sel, a[sel]] = 1.0
            A[sel, b[sel]] = -w[sel]
            Hs.append(np.diag(dq[:, j]) + A.T @ np.diag(D[:, 0]) @ A)
        want = sum(np.linalg.inv(H) for H in Hs)
        M = lin.factor(dq, D)
        assert np.allclose(M, want, rtol=1e-8, atol=1e-12 * np.abs(want).max())
        X = lin.solve(G)
        for j in range(m):
            assert np.allclose(Hs[j] @ X[:, j], G[:, j], rtol=1e-7, atol=1e-9 * np.abs(G[:, j]).max())


@pytest.mark.parametrize("diagonals", [False, True])
def test_band_blocks_in_single_precision_form_m_to_single_precision_and_solve_exactly(diagonals):
    rng = np.random.default_rng(21)
    k, a, b, ca, cb, A = _grid_rows(5, 6, rng, diagonals)
    m = 4
    dq = rng.uniform(1e-2, 1e2, (k, m))
    D = rng.uniform(1e-2, 1e2, (len(a), m))
    Hs = [np.diag(dq[:, y]) + A.T @ np.diag(D[:, y]) @ A for y in range(m)]
    want = sum(np.linalg.inv(H) for H in Hs)
    perm, bs = band_order(k, a, b)
    lin = BandBlocks(k, a, b, ca, cb, perm, bs, workers=1)
    lin.single = True
    M = lin.factor(dq, D)
    err = np.abs(M - want).max() / np.abs(want).max()
    assert 1e-12 < err < 1e-5  # single precision: neither exact nor far off
    G = rng.standard_normal((k, m))
    X = lin.solve(G)  # the factors stay double
    for y in range(m):
        assert np.allclose(Hs[y] @ X[:, y], G[:, y], rtol=1e-9, atol=1e-11)
    lin.single = False
    assert np.allclose(lin.factor(dq, D), want, rtol=1e-9, atol=1e-13 * np.abs(want).max())


def test_a_single_precision_schur_complement_that_is_not_positive_definite_is_formed_again():
    from mechopt.solvers.metric._ipm import _schur_factor

    class Lin:
        def __init__(self, double):
            self.single, self.double, self.calls = True, double, []

        def factor(self, dq, D):
            self.calls.append(self.single)
            return -np.eye(3) if self.single else self.double

    lin = Lin(4.0 * np.eye(3))
    L = _schur_factor(lin, None, None)
    assert lin.calls == [True, False] and np.allclose(np.tril(L), 2.0 * np.eye(3))
    lin = Lin(-np.eye(3))
    with pytest.raises(np.linalg.LinAlgError):
        _schur_factor(lin, None, None)  # in double precision too: not positive definite
    assert lin.calls == [True, False]


def test_ipm_with_single_precision_schur_complements_reaches_the_lp_optimum(monkeypatch):
    from mechopt.solvers.metric import _ipm

    pl = Places.grid(6, 6)
    k = pl.k
    a, b = np.array([[e[0], e[1]] for e in pl.grid_edges()]).T
    a, b = np.concatenate([a, b]), np.concatenate([b, a])
    w = np.full(len(a), np.exp(0.7))
    prior = clustered(pl)
    D = np.abs(pl.coords[:, None, :] - pl.coords[None, :, :]).sum(-1)
    C = prior[:, None] * D**2
    E = np.full((k, k), np.inf)
    E[a, b] = 0.7
    np.fill_diagonal(E, 0.0)
    opt = _highs_optimum(E, C)
    monkeypatch.setattr(_ipm, "SINGLE_ABOVE", 1e-6)  # single precision almost to the end
    r = metric_ipm(C, a, b, w, tol=1e-9, linalg="band")
    assert r.status == "optimal" and abs(r.pobj - opt) <= 1e-7 * opt


def test_ipm_on_outputs_other_than_the_inputs():
    rng = np.random.default_rng(13)
    k, m = 8, 5
    E = rng.uniform(0.3, 2.0, (k, k))
    E = np.minimum(E, E.T)
    np.fill_diagonal(E, 0.0)
    cost = rng.random((k, m))
    opt = _highs_optimum(E, cost)
    r = solve_metric_ipm(E, cost)
    assert r.status == "optimal"
    assert r.bound <= opt * (1 + 1e-12) and abs(r.objective - opt) <= 1e-7 * opt
    assert not math.isinf(r.bound)


def test_auto_prefers_the_ipm_only_where_it_was_measured_to_win():
    from mechopt.solvers.metric._route import ipm_preferred

    def grid_E(n):
        pl = Places.grid(n, n)
        E = np.full((pl.k, pl.k), np.inf)
        np.fill_diagonal(E, 0.0)
        for a, b, w in pl.grid_edges():
            E[a, b] = E[b, a] = EPS * w
        return E

    assert ipm_preferred(grid_E(13), 169)  # 169 places, band blocks of 13
    rng = np.random.default_rng(14)
    E = rng.uniform(0.5, 1.0, (160, 160))  # every pair, no band order: dense blocks
    np.fill_diagonal(E, 0.0)
    assert not ipm_preferred(E, 160)
    assert ipm_preferred(E[:100, :100], 100)  # dense blocks on few places
    assert not ipm_preferred(E[:100, :100], 10**6)  # the (pairs x outputs) arrays would not fit
    # a 48×48 grid: 9 024 pairs x 2 304 outputs is past IPM_MAX_ENTRIES, but its band factor
    # (k m bs = 2.5e8 entries) fits; with five times the outputs it would not
    from mechopt.solvers.metric._route import IPM_MAX_ENTRIES

    E48 = grid_E(48)
    assert 9024 * 2304 > IPM_MAX_ENTRIES and np.isfinite(E48).sum() - 2304 == 9024
    assert ipm_preferred(E48, 2304) and not ipm_preferred(E48, 5 * 2304)


def test_an_ipm_stopped_by_the_callers_limit_is_not_followed_by_the_decomposition(monkeypatch):
    # what is left of the limit is kept for the checks after the solve
    import mechopt.solvers.metric._decompose as decompose
    import mechopt.solvers.metric._route as route

    E, cost, doc = _problem(5, "grid", 9)
    real = route.solve_metric_ipm
    monkeypatch.setattr(route, "solve_metric_ipm", lambda E, cost, **kw: real(E, cost, time_limit=0.0))
    tried = []
    monkeypatch.setattr(decompose, "solve_metric_lp", lambda *a, **kw: tried.append(1))
    res = mechopt.solve(doc, quiet=True, time_limit=60)
    assert not tried and res.stats["method"] == "ipm" and "tried" not in res.stats
    assert res.status == "feasible" and res.certificate.verified and res.bound <= _highs_optimum(E, cost) + 1e-9


def test_auto_falls_back_to_the_decomposition_when_the_ipm_does_not_close_the_gap(monkeypatch):
    import mechopt.solvers.metric._route as route

    E, cost, doc = _problem(5, "grid", 9)  # (a seed whose prior has no symmetry: no orbit LP)
    real = route.solve_metric_ipm
    monkeypatch.setattr(route, "solve_metric_ipm", lambda E, cost, **kw: real(E, cost, time_limit=0.0))
    res = mechopt.solve(doc, quiet=True)
    assert res.stats["method"] == "decompose" and set(res.stats["tried"]) == {"ipm", "decompose"}
    assert res.stats["tried"]["ipm"]["status"] == "feasible"
    assert res.status == "optimal" and res.certificate.verified
    assert abs(res.objective - _highs_optimum(E, cost)) <= 1e-7 * res.objective


@pytest.mark.parametrize("n,seed", [(6, 11), (7, 12)])
def test_relaxation_brackets_the_exact_optimum_and_its_channel_is_private(n, seed):
    # the IPM on the pairs of small budget is a relaxation: its bound is below the full
    # LP's optimum (HiGHS on every pair), and the lifted channel is feasible for every pair
    E, cost, doc = _problem(n, "euclidean", seed)
    opt = _highs_optimum(E, cost)
    r = solve_metric_relaxed(E, cost)
    assert r.stats["levels"] and r.stats["pairs_active"] < np.isfinite(E).sum() - E.shape[0]
    assert r.bound <= opt * (1 + 1e-12) <= r.objective * (1 + 1e-12)
    a, b, w = _pairs(E)
    assert np.all(r.Q[a] <= w[:, None] * r.Q[b] * (1 + 1e-12))
    assert np.allclose(r.Q.sum(axis=1), 1.0, atol=1e-12)
    # through solve(): repaired, verified exactly, never called optimal with that gap
    res = mechopt.solve(doc, method="relax", quiet=True)
    assert res.stats["method"] == "relax" and res.certificate.verified
    assert mechopt.verify(res.mechanism.matrix, list(mechopt.load_problem(doc).notions)).verified
    assert res.bound <= opt * (1 + 1e-12) <= res.objective * (1 + 1e-12)
    assert res.status == ("optimal" if res.objective - res.bound <= 1e-7 * res.objective else "feasible")


def test_a_relaxations_ipm_stops_once_the_lift_dominates_its_gap():
    from mechopt.solvers.metric._route import LIFT_CHECK_FROM, LIFT_SHARE

    E, cost, doc = _problem(7, "euclidean", 12)
    opt = _highs_optimum(E, cost)
    theta = relaxation_levels(E, E.shape[0])[0]
    Er = np.where(E <= theta, E, np.inf)
    full = solve_metric_ipm(Er, cost, rel_gap=1e-8)
    early = solve_metric_ipm(Er, cost, rel_gap=1e-8, lift=E)
    assert full.stats["lift_stop"] is None and early.stats["lift_stop"] <= LIFT_CHECK_FROM
    assert early.stats["iterations"] < full.stats["iterations"]
    # both bound the full optimum; stopping lost less of the bound than the lift adds
    assert early.bound <= full.bound * (1 + 1e-12) <= opt * (1 + 1e-12)
    lifted = float(np.sum(cost * snap_to_cone(early.Q, E, rounds=200, tol=1e-13)))
    assert full.bound - early.bound <= 2 * LIFT_SHARE * (lifted - full.bound)


def test_places_with_no_threshold_level_relax_to_their_nearest_pairs():
    # two dense clusters: the threshold that joins them keeps every pair inside each one
    # (no band order), their nearest pairs have one; the relaxation brackets HiGHS's optimum
    from mechopt.solvers.metric._route import neighbour_pairs

    rng = np.random.default_rng(5)
    xy = np.vstack([rng.normal(0, 1, (22, 2)), rng.normal(8, 1, (22, 2))])
    k = len(xy)
    D = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    E, cost = EPS * D, np.full(k, 1 / k)[:, None] * D**2
    assert relaxation_levels(E, k) == []
    keep = neighbour_pairs(E, k)
    assert keep is not None and np.array_equal(keep, keep.T) and not keep.diagonal().any()
    assert keep.sum() < k * (k - 1) / 2
    from scipy.sparse.csgraph import connected_components

    assert connected_components(sp.csr_matrix(keep), directed=False)[0] == 1
    opt = _highs_optimum(E, cost)
    r = solve_metric_relaxed(E, cost, thetas=[keep])
    assert r.stats["levels"][0]["theta"] == "neighbours"
    assert r.bound <= opt * (1 + 1e-12) <= r.objective * (1 + 1e-12)
    a, b, w = _pairs(E)
    assert np.all(r.Q[a] <= w[:, None] * r.Q[b] * (1 + 1e-12))
    doc = {"places": {"xy": xy.tolist()}, "privacy": [{"notion": "metric", "epsilon": EPS, "distance": "euclidean"}],
           "objective": {"kind": "expected_loss", "loss": "squared", "prior": [1 / k] * k}}
    res = mechopt.solve(doc, method="relax", quiet=True)
    assert res.stats["method"] == "relax" and res.certificate.verified
    assert res.bound <= opt * (1 + 1e-12) <= res.objective * (1 + 1e-12)


@pytest.mark.parametrize("n,theta", [(6, 1.0), (7, 1.5), (8, 1.5), (9, 2.3)])
def test_widened_pairs_stay_inside_the_band_and_enter_cheapest_first(n, theta):
    from mechopt.solvers.metric._route import WIDEN_SHARE, widened

    E = Places.grid(n, n).distances("euclidean")
    k = n * n
    base = (E > 0) & (E <= theta)
    keep = widened(E, theta, k)
    added = keep & ~base
    assert np.all(keep >= base) and np.array_equal(keep, keep.T)
    assert band_order(k, *np.nonzero(keep))[1] <= band_order(k, *np.nonzero(base))[1]
    assert added.sum() <= WIDEN_SHARE * base.sum()
    # cheapest first: every in-band pair left out costs at least what every added pair does
    perm, bs = band_order(k, *np.nonzero(base))
    pos = np.argsort(perm)
    inside = [(x, y) for x in range(k) for y in range(k)
              if x != y and not base[x, y] and abs(pos[x] - pos[y]) <= bs]
    left = [E[x, y] for x, y in inside if not keep[x, y]]
    if added.any() and left:
        assert E[added].max() <= min(left)


def test_relaxation_levels_tighten_and_respect_the_band_rule():
    pl = Places.grid(12, 12)
    E = EPS * pl.distances("euclidean")
    levels = relaxation_levels(E, pl.k, 3)
    assert levels == sorted(levels) and len(set(levels)) == len(levels)
    for theta in levels:
        a, b = np.nonzero((E <= theta) & ~np.eye(pl.k, dtype=bool))
        assert 4 * band_order(pl.k, a, b)[1] <= pl.k
    # a metric with no band order at all (random points, every pair as close): no level
    rng = np.random.default_rng(0)
    xy = rng.uniform(size=(40, 2))
    D = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    assert relaxation_levels(np.where(np.eye(40, dtype=bool), 0.0, 1.0 + 0 * D), 40) == []


def test_auto_grows_the_outputs_on_street_graphs_and_not_on_clustered_grids(tmp_path):
    from benchmarks.bench_geo import geo_doc
    from mechopt._problem import load_problem, problem_from_dict
    from mechopt._street import write_city
    from mechopt.solvers.metric._decompose import kept_budgets
    from mechopt.solvers.metric._route import ipm_preferred, outputs_preferred

    def form(p):
        return kept_budgets(list(p.notions), p.k), p.objective.type.labeled_form(p.objective).cost

    E, cost = form(load_problem(write_city(tmp_path, 400, 7, epsilon=4.0)))
    assert ipm_preferred(E, cost.shape[1]) and outputs_preferred(E, cost)  # 112 of 400 outputs to start
    E, cost = form(problem_from_dict(geo_doc(20, "manhattan")))
    assert ipm_preferred(E, cost.shape[1]) and not outputs_preferred(E, cost)  # 233 of 400


@pytest.mark.parametrize("metric", ["grid", "euclidean"])
def test_shared_rows_worked_on_in_threaded_parts_give_the_same_iterates_to_the_bit(monkeypatch, metric):
    # the (pairs, outputs) arrays of band and dense blocks split by pairs across threads
    import mechopt.solvers.metric._ipm as ipm
    import mechopt.solvers.metric._rows as rows

    for module in (ipm, rows):
        monkeypatch.setattr(module, "ipm_workers", lambda: 2)
    E, cost, _ = _problem(5, metric)
    a, b = np.nonzero(np.isfinite(E) & ~np.eye(len(E), dtype=bool))
    whole = metric_ipm(cost, a, b, np.exp(E[a, b]))
    monkeypatch.setattr(rows, "SPLIT_FROM", 10)
    parts = metric_ipm(cost, a, b, np.exp(E[a, b]))
    # and each thread's part in pieces of a few rows (the pieces a pass works on in cache)
    monkeypatch.setattr(rows, "CHUNK", 3 * cost.shape[1])
    pieces = metric_ipm(cost, a, b, np.exp(E[a, b]))
    assert whole.status == parts.status == pieces.status == "optimal"
    assert whole.iterations == parts.iterations == pieces.iterations
    for run in (parts, pieces):
        assert np.array_equal(whole.Q, run.Q) and np.array_equal(whole.mu, run.mu)


def test_dense_blocks_without_the_lock_free_lapack_and_blas_reach_the_same_optimum(monkeypatch):
    # scipy without the Cython capsules: scipy's wrappers in one thread and einsum solves
    # (which need the inverse factors' strict lower triangles cleared)
    import mechopt.solvers.metric._lapack as lapack_free

    E, cost, _ = _problem(4, "euclidean")
    a, b = np.nonzero(np.isfinite(E) & ~np.eye(len(E), dtype=bool))
    fast = metric_ipm(cost, a, b, np.exp(E[a, b]), linalg="dense")
    monkeypatch.setattr(lapack_free, "AVAILABLE", False)
    slow = metric_ipm(cost, a, b, np.exp(E[a, b]), linalg="dense")
    opt = _highs_optimum(E, cost)
    assert fast.status == slow.status == "optimal"
    assert abs(fast.pobj - opt) <= 1e-7 * opt and abs(slow.pobj - opt) <= 1e-7 * opt


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 5), st.sampled_from(["grid", "euclidean"]), st.integers(0, 2**31 - 1))
def test_exponential_start_holds_every_pair_strictly(n, metric, seed):
    """The start is a channel (rows sum to 1, entries positive) inside every pair row the kept
    pairs imply: their closure by Floyd–Warshall here."""
    from mechopt.solvers.metric._route import exponential_start

    E, _, _ = _problem(n, metric, seed)
    k = E.shape[0]
    D = E.copy()
    for j in range(k):  # Floyd–Warshall: every chain of kept pairs
        D = np.minimum(D, D[:, j:j + 1] + D[j:j + 1, :])
    q = exponential_start(E)
    assert q.shape == (k, k) and q.min() > 0
    assert np.allclose(q.sum(axis=1), 1.0, atol=1e-12)
    a, b = np.nonzero(~np.eye(k, dtype=bool))
    assert np.all(q[a] < np.exp(D[a, b])[:, None] * q[b])


@pytest.mark.parametrize("n,metric,seed", [(4, "grid", 10), (4, "euclidean", 11)])
def test_ipm_from_a_given_start_or_a_refused_one_reaches_the_optimum(n, metric, seed):
    from mechopt.solvers.metric._route import exponential_start

    E, cost, _ = _problem(n, metric, seed)
    opt = _highs_optimum(E, cost)
    a, b, w = _pairs(E)
    good = exponential_start(E)
    bad = np.eye(E.shape[0]) * 0.9 + 0.1 / E.shape[0]  # breaks the pair rows: refused, 1/m instead
    first: list[float] = []

    def progress(it, pobj, dobj, m):
        if it == 0:
            first.append(pobj)

    runs = [metric_ipm(cost, a, b, w, q0=q0, progress=progress) for q0 in (good, bad, None, lambda: good)]
    for r in runs:
        assert r.status == "optimal" and abs(r.pobj - opt) <= 1e-6 * opt
    # the start taken: the given channel (as an array or from a callable), else 1/m
    uniform = float(cost.sum()) / cost.shape[1]
    assert first == pytest.approx([float(np.sum(cost * good)), uniform, uniform, float(np.sum(cost * good))], rel=1e-12)
    assert runs[1].iterations == runs[2].iterations


def test_the_pool_of_large_arrays_changes_no_iterate(monkeypatch):
    """Above ``HEAP_KEPT_MAX_ENTRIES`` the IPM reuses freed arrays (:mod:`._pool`): the same
    iterates to the bit as with fresh ones, and the pool is let go at the end."""
    import mechopt.solvers.metric._ipm as ipm
    import mechopt.solvers.metric._pool as pool

    E, cost, _ = _problem(5, "grid")
    a, b = np.nonzero(np.isfinite(E) & ~np.eye(len(E), dtype=bool))
    fresh = metric_ipm(cost, a, b, np.exp(E[a, b]))
    monkeypatch.setattr(ipm, "HEAP_KEPT_MAX_ENTRIES", 0)
    monkeypatch.setattr(pool, "FROM_BYTES", 64)  # every pair-row and channel array from the pool
    taken = []
    real = pool.empty
    monkeypatch.setattr(pool, "empty", lambda *s, **kw: taken.append(1) or real(*s, **kw))
    pooled = metric_ipm(cost, a, b, np.exp(E[a, b]))
    assert len(taken) > 100 and pool.held_bytes() == 0
    assert fresh.status == pooled.status == "optimal" and fresh.iterations == pooled.iterations
    assert np.array_equal(fresh.Q, pooled.Q) and np.array_equal(fresh.mu, pooled.mu)
    assert np.array_equal(fresh.Pi, pooled.Pi)


@pytest.mark.parametrize("metric", ["grid", "euclidean"])
def test_directions_written_over_their_right_hand_sides_change_no_iterate(monkeypatch, metric):
    """Each Newton solve may write its ``dpi`` over its right-hand side (one array of pair
    rows fewer): the same iterates to the bit as with a new array for every ``dpi``, down
    to the refined directions of the last iterations."""
    import mechopt.solvers.metric._ipm as ipm

    E, cost, _ = _problem(4, metric)
    a, b = np.nonzero(np.isfinite(E) & ~np.eye(len(E), dtype=bool))
    over = metric_ipm(cost, a, b, np.exp(E[a, b]))
    real = ipm._newton_system
    asked = []

    def apart(*args, **kw):
        newton, direction, steps = real(*args, **kw)
        return (lambda *v, consume=False, **o: asked.append(consume) or newton(*v, **o),
                lambda *v, consume=False, **o: asked.append(consume) or direction(*v, **o), steps)

    monkeypatch.setattr(ipm, "_newton_system", apart)
    fresh = metric_ipm(cost, a, b, np.exp(E[a, b]))
    assert any(asked)  # the runs differ in what they write over
    assert over.status == fresh.status == "optimal" and over.iterations == fresh.iterations
    assert np.array_equal(over.Q, fresh.Q) and np.array_equal(over.Pi, fresh.Pi)
    assert np.array_equal(over.mu, fresh.mu)
