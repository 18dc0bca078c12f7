"""Geo inputs, spanner mode, baselines, maps, and the decomposition LP (solvers/metric/_decompose.py)."""

from __future__ import annotations

import time

import numpy as np
import pytest

import mechopt
from mechopt import InputError, MetricLDP, verify
from mechopt.geo import (Places, bayesian_remap, exact_baseline, expand_places, exponential_mechanism,
                         planar_laplace, plot_expected_error, plot_reporting, prior_from_counts, spanner)
from mechopt.solvers.metric._decompose import solve_metric_lp

from _geo_cases import clustered



def _plain_lp(E: np.ndarray, cost: np.ndarray) -> float:
    """The same LP with every finite pair, one scipy/HiGHS solve (independent of the decomposition)."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    k, m = cost.shape
    xs, xps = np.nonzero(np.isfinite(E) & ~np.eye(k, dtype=bool))
    rows, cols, vals = [], [], []
    r = 0
    for a, b in zip(xs, xps):
        for y in range(m):
            rows += [r, r]
            cols += [a * m + y, b * m + y]
            vals += [1.0, -np.exp(E[a, b])]
            r += 1
    A_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, k * m))
    A_eq = sp.csr_matrix((np.ones(k * m), (np.repeat(np.arange(k), m), np.arange(k * m))), shape=(k, k * m))
    res = linprog(cost.ravel(), A_ub=A_ub, b_ub=np.zeros(r), A_eq=A_eq, b_eq=np.ones(k), method="highs")
    assert res.status == 0
    return res.fun


@pytest.mark.parametrize("master", ["block", "rays"])
@pytest.mark.parametrize("case", ["grid_manhattan", "euclidean", "random_E"])
def test_decomposition_matches_one_plain_lp(master, case):
    if case == "grid_manhattan":
        pl = Places.grid(4, 4)
        E = np.full((16, 16), np.inf)
        np.fill_diagonal(E, 0)
        for a, b, w in pl.grid_edges():
            E[a, b] = E[b, a] = 0.7 * w
        cost = clustered(pl)[:, None] * pl.loss("squared")
    elif case == "euclidean":
        pl = Places.from_xy(np.random.default_rng(3).random((14, 2)) * 4)
        E = 0.9 * pl.distances("euclidean")
        cost = clustered(pl, 1)[:, None] * pl.loss("euclidean")
    else:
        rng = np.random.default_rng(5)
        E = rng.uniform(0.3, 2.0, (10, 10))
        E[rng.random((10, 10)) < 0.3] = np.inf
        np.fill_diagonal(E, 0)
        cost = rng.random((10, 7))  # outputs need not be the inputs
    r = solve_metric_lp(E, cost, master=master)
    opt = _plain_lp(E, cost)
    assert r.status == "optimal"
    assert r.bound <= opt + 1e-12  # the proven bound is below the true optimum ...
    assert r.objective - r.bound <= 1e-7 * abs(r.objective)  # ... and close to the channel found
    assert abs(r.objective - opt) <= 1e-7 * abs(opt)
    assert np.allclose(r.Q.sum(axis=1), 1, atol=1e-9)


def test_lazy_pairs_start_sparse_and_end_exact():
    pl = Places.from_xy(np.random.default_rng(11).random((40, 2)) * 6)
    E = 0.8 * pl.distances("euclidean")
    cost = clustered(pl, 2)[:, None] * pl.loss("squared")
    r = solve_metric_lp(E, cost, master="block")
    assert r.stats["pairs_lazy"] and r.stats["pairs_active"] < 40 * 39
    Q = np.maximum(r.Q, 0)
    W = np.exp(E)
    # every pair, not only the active ones, holds to the LP's tolerance
    assert np.all(Q[:, None, :] <= W[:, :, None] * Q[None, :, :] + 1e-9)


def test_time_limit_returns_a_feasible_verified_mechanism_with_its_gap():
    doc = {"places": {"grid": [6, 6]}, "privacy": [{"notion": "metric", "epsilon": 0.7, "distance": "euclidean"}],
           "objective": {"kind": "expected_loss", "loss": "squared",
                         "prior": clustered(Places.grid(6, 6)).tolist()}}
    full = mechopt.solve(doc, method="decompose", quiet=True)
    assert full.status == "optimal" and full.gap <= 1e-7 * full.objective
    short = mechopt.solve(doc, method="decompose", quiet=True, time_limit=1e-3)
    assert short.status in ("feasible", "optimal")
    assert short.certificate.verified
    assert short.objective >= full.bound - 1e-12
    if short.bound is not None:
        assert short.bound <= full.objective + 1e-12


def test_places_problem_file_and_counts(tmp_path):
    (tmp_path / "c.csv").write_text("label,count\nr0c0,6\nr1c2,2\n")
    doc = {"places": {"grid": [2, 3], "spacing": 0.5},
           "privacy": [{"notion": "metric", "epsilon": 1.0, "distance": "manhattan"}],
           "objective": {"kind": "expected_loss", "loss": "squared", "prior": {"counts": "c.csv"}}}
    plain = expand_places(doc, tmp_path)
    assert plain["inputs"] == ["r0c0", "r0c1", "r0c2", "r1c0", "r1c1", "r1c2"]
    assert len(plain["privacy"][0]["edges"]) == 7  # a grid's Manhattan metric is its edges
    assert plain["objective"]["prior"] == [0.75, 0, 0, 0, 0, 0.25]
    L = np.array(plain["objective"]["loss"])
    assert L[0, 5] == pytest.approx(0.5**2 + 1.0**2)
    r = mechopt.solve(mechopt._problem.problem_from_dict(doc, base=tmp_path), quiet=True)
    assert r.status == "optimal" and r.certificate.verified


def test_haversine_and_bad_places():
    pl = Places.from_xy([[48.8566, 2.3522], [51.5074, -0.1278]], ["paris", "london"], kind="latlon")
    assert pl.distances("haversine")[0, 1] == pytest.approx(343.5, abs=1.0)  # Paris - London, km
    with pytest.raises(InputError, match="haversine needs"):
        Places.grid(2, 2).distances("haversine")
    with pytest.raises(InputError, match="latitude"):
        Places.from_xy([[95.0, 0.0]], kind="latlon")
    with pytest.raises(InputError, match="not a place label"):
        prior_from_counts({"nowhere": 1}, pl)
    with pytest.raises(InputError, match="exactly one of"):
        expand_places({"places": {"grid": [2, 2], "xy": [[0, 0]]}}, None)
    with pytest.raises(InputError, match="not both"):
        expand_places({"places": {"grid": [2, 2]}, "k": 4}, None)


@pytest.mark.parametrize("delta", [1.0, 1.5, 2.0])
def test_spanner_stretch_and_privacy(delta):
    import networkx as nx

    pl = Places.from_xy(np.random.default_rng(4).random((25, 2)) * 5)
    D = pl.distances("euclidean")
    edges = spanner(D, delta)
    g = nx.Graph()
    g.add_weighted_edges_from(edges)
    DG = dict(nx.all_pairs_dijkstra_path_length(g))
    for a in range(25):
        for b in range(25):
            assert D[a, b] - 1e-12 <= DG[a][b] <= delta * D[a, b] * (1 + 1e-9) + 1e-12
    # the spanner mechanism (eps / delta on its edges) is eps * d private
    eps = 1.2
    sp_notion = MetricLDP(eps / delta, edges=[list(e) for e in edges]).bind(list(pl.labels))
    cost = clustered(pl)[:, None] * pl.loss("squared")
    E_sp = sp_notion.eldp_matrix(25)
    r = solve_metric_lp(E_sp, cost)
    from mechopt.solvers._repair import repair

    full = MetricLDP(eps, distance=D.tolist()).bind(list(pl.labels))
    rep = repair(r.Q, [sp_notion])
    assert verify(rep.Q, [full]).verified
    exact = solve_metric_lp(eps * D, cost)
    assert exact.objective <= r.objective + 1e-9  # spanner mode can only lose utility


def test_baselines_are_private_and_no_better_than_the_optimum():
    pl = Places.grid(4, 4)
    eps = 0.8
    D = pl.distances("euclidean")
    notion = MetricLDP(eps, distance=D.tolist()).bind(list(pl.labels))
    prior = clustered(pl, 3)
    L = pl.loss("squared")
    opt = solve_metric_lp(eps * D, prior[:, None] * L)
    em = exponential_mechanism(D, eps)
    Qe, _ = exact_baseline(em, [notion])
    lap = planar_laplace(pl, eps)
    Ql, t = exact_baseline(lap, [notion])
    assert t < 1e-3  # quadrature leaves only a tiny violation to mix away
    for Q in (Qe, Ql, bayesian_remap(Qe, prior, L), bayesian_remap(Ql, prior, L)):
        assert verify(Q, [notion]).verified
        assert float(np.sum(prior[:, None] * Q * L)) >= opt.bound - 1e-12
    # remapping never hurts
    assert np.sum(prior[:, None] * bayesian_remap(Ql, prior, L) * L) <= np.sum(prior[:, None] * Ql * L) + 1e-12


def test_maps(tmp_path):
    pl = Places.grid(3, 3)
    Q = exponential_mechanism(pl.distances("euclidean"), 1.0)
    a = plot_reporting(Q, pl, "r1c1", tmp_path / "rep.png")
    b = plot_expected_error(Q, pl, tmp_path / "err.png", prior=np.full(9, 1 / 9))
    assert a.stat().st_size > 1000 and b.stat().st_size > 1000
    with pytest.raises(InputError):
        plot_reporting(Q, pl, 12, tmp_path / "x.png")


@pytest.mark.parametrize("symmetric", [True, False])
def test_a_time_limit_before_any_master_returns_the_private_exponential_mechanism(symmetric):
    from mechopt.solvers.metric._decompose import solve_metric_lp

    rng = np.random.default_rng(5)
    xy = rng.uniform(0, 3, (9, 2))
    E = 4.0 * np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))  # a budget where reporting near beats one place
    if not symmetric:
        E = E * rng.uniform(0.5, 1.5, E.shape)  # budgets differ by direction
        np.fill_diagonal(E, 0.0)
    cost = rng.dirichlet(np.ones(9))[:, None] * ((xy[:, None] - xy[None]) ** 2).sum(-1)
    r = solve_metric_lp(E, cost, master="rays", time_limit=0.0)
    Q = r.Q
    assert r.status == "feasible" and np.allclose(Q.sum(1), 1.0)
    # every pair, every output (the snap may only raise entries into the cone)
    assert np.all(Q[:, None, :] <= np.exp(E)[:, :, None] * Q[None, :, :] * (1 + 1e-12))
    assert r.objective < cost.sum(axis=0).min()  # better than every constant channel


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class _Event:
    def __init__(self):
        self.interrupted = False

    def interrupt(self):
        self.interrupted = True


class _Subscribers(list):
    def __iadd__(self, fn):
        self.append(fn)
        return self

    def __isub__(self, fn):
        self.remove(fn)
        return self


class _FakeHighs:
    """Only the callback descriptor of ``highspy.Highs`` (``+=`` / ``-=``)."""

    def __init__(self):
        self.cbSimplexInterrupt = _Subscribers()


def test_the_early_stop_keeps_its_longest_pauses_before_the_deadline(monkeypatch):
    from mechopt.solvers.backends import _deadline

    monkeypatch.setattr(_deadline, "STOP_PAUSES", 1.5)
    clock = _Clock()
    monkeypatch.setattr(_deadline.time, "perf_counter", clock)
    h = _FakeHighs()
    stop = _deadline._EarlyStop(h, deadline=100.0, start=0.0)
    assert h.cbSimplexInterrupt == [stop._check]
    seen = []
    for t in [4.0, 5.0, 6.0, 15.0, 16.0, 50.0, 51.0, 52.0, 53.0]:  # pauses 4, 1, 1, 9, 1, 34, 1, 1, 1
        clock.now = t
        e = _Event()
        stop._check(e)
        seen.append(e.interrupted)
    # at 50 the longest pause is 34 (50 + 51 > 100): the first interruption; before it
    # the longest was 9 (16 + 13.5 < 100)
    assert seen == [False] * 5 + [True] * 4 and stop.pause == 34.0 and stop.stopped
    stop.detach()
    assert h.cbSimplexInterrupt == []


def test_run_by_interrupts_a_real_highs_simplex_and_detaches(monkeypatch):
    import highspy

    from mechopt.solvers.backends import _deadline
    from mechopt.solvers.metric import _decompose

    rng = np.random.default_rng(2)
    h, hs = _decompose._highs()
    h.setOptionValue("solver", "simplex")
    n = 300  # a random LP the simplex needs many iterations for
    A = rng.uniform(0, 1, (n, n))
    h.addVars(n, np.zeros(n), np.full(n, highspy.kHighsInf))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), -rng.uniform(1, 2, n))
    for i in range(n):
        h.addRow(-highspy.kHighsInf, 1.0, n, np.arange(n, dtype=np.int32), A[i])
    # any pause is too long here: the first iteration interrupts, long before HiGHS's own limit
    monkeypatch.setattr(_deadline, "STOP_PAUSES", 1e12)
    assert _deadline.run_by(h, time.perf_counter() + 600.0)
    assert h.getModelStatus() == hs.HighsModelStatus.kInterrupt
    h.run()  # detached: runs to the end
    assert h.getModelStatus() == hs.HighsModelStatus.kOptimal


def test_an_interrupted_master_is_a_time_limit_not_an_error(monkeypatch):
    from mechopt.solvers.backends import _deadline

    pl = Places.grid(6, 6)
    D = pl.distances("manhattan")
    E = np.where(np.isclose(D, 1.0), 0.7, np.inf)  # the grid's edges
    np.fill_diagonal(E, 0.0)
    cost = clustered(pl)[:, None] * D**2
    monkeypatch.setattr(_deadline, "STOP_PAUSES", 1e12)  # every master is interrupted at once
    r = solve_metric_lp(E, cost, master="rays", time_limit=600.0)
    assert r.status == "feasible" and r.stats["time_limit_hit"] and r.message == "time limit"
    assert np.allclose(r.Q.sum(1), 1.0) and r.objective < cost.sum(axis=0).min()
