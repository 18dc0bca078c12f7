"""The metric LP by the IPM over lazy pairs per output (``method="lazy"``).

Checked against an independent all-pairs LP (every pair, every output, one scipy/HiGHS
solve) on places with no grid structure; the per-output rows of the IPM against its
shared rows; the violation finder and the per-output bound against brute force.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mechopt.solvers.metric._ipm import metric_ipm
from mechopt.solvers.metric._lazy import base_pairs, safe_bound_per_output, solve_metric_lazy, start_pairs, violated_pairs
from mechopt.solvers.metric._lazy import warm_start as lazy_warm
from mechopt.solvers.metric._route import lazy_preferred

from test_metric_ipm import _highs_optimum
from test_metric_outputs import _irregular


@pytest.mark.parametrize("k, seed, eps", [(8, 0, 0.7), (11, 1, 0.7), (20, 2, 0.7), (30, 3, 0.7), (30, 4, 2.0)])
def test_lazy_route_matches_the_all_pairs_lp_and_brackets_it(k, seed, eps):
    E, cost, _ = _irregular(k, seed, eps)
    opt = _highs_optimum(E, cost)
    r = solve_metric_lazy(E, cost)
    assert r.status == "optimal"
    assert r.bound <= opt + 1e-12 * opt  # a proven lower bound
    assert abs(r.objective - opt) <= 1e-7 * opt
    Q = r.Q  # in the full cone (every pair, not only the kept ones), rows summing to 1
    assert np.all(Q >= 0) and np.abs(Q.sum(1) - 1).max() < 1e-8
    W = np.exp(E)
    assert np.all(Q[:, None, :] <= W[:, :, None] * Q[None, :, :] * (1 + 1e-9) + 1e-15)


def _euclidean_grid(n: int, eps: float = 0.7):
    xy = np.array([(i, j) for i in range(n) for j in range(n)], dtype=float)
    D = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    prior = np.random.default_rng(n).dirichlet(np.ones(n * n))
    return eps * D, prior[:, None] * D**2


@pytest.mark.parametrize("n", [5, 6])
def test_a_first_round_on_shared_band_pairs_reaches_the_all_pairs_optimum(monkeypatch, n):
    # a grid's base pairs have a band order: the first round factors band blocks, without stars
    import mechopt.solvers.metric._lazy as lazy

    monkeypatch.setattr(lazy, "SHARED_FROM", 0)
    E, cost = _euclidean_grid(n)
    opt = _highs_optimum(E, cost)
    r = solve_metric_lazy(E, cost)
    first = r.stats["rounds"][0]
    assert first["linalg"] == "BandBlocks" and first["pairs"] == int(np.count_nonzero(base_pairs(E))) * n * n
    assert r.stats["rounds"][1]["linalg"] == "OutputDenseBlocks"
    assert r.status == "optimal" and abs(r.objective - opt) <= 1e-7 * opt and r.bound <= opt * (1 + 1e-12)


def test_stars_start_every_round_when_the_base_pairs_have_no_band_order(monkeypatch):
    import mechopt.solvers.metric._lazy as lazy

    monkeypatch.setattr(lazy, "SHARED_FROM", 0)
    E, cost, _ = _irregular(30, 3)
    r = solve_metric_lazy(E, cost)
    assert r.stats["rounds"][0]["linalg"] == "OutputDenseBlocks"
    assert r.stats["rounds"][0]["pairs"] == int(start_pairs(E, 30).sum())


def test_the_start_leaves_pairs_out_and_rounds_add_them():
    E, cost, _ = _irregular(30, 3)
    r = solve_metric_lazy(E, cost)
    full = 30 * 29 * 30
    assert r.stats["pairs_active"] < full / 2  # far fewer rows than every pair for every output
    assert len(r.stats["rounds"]) >= 2 and r.stats["rounds"][0]["added"] > 0


def test_outputs_left_out_are_priced_and_come_back_when_needed(monkeypatch):
    import mechopt.solvers.metric._lazy as lazy

    E, cost, _ = _irregular(30, 4, 2.0)
    opt = _highs_optimum(E, cost)
    r = solve_metric_lazy(E, cost)
    assert min(x["outputs"] for x in r.stats["rounds"]) < 30  # unused outputs were left to the pricing
    # drop outputs the optimum needs (every column under half a row's mass): the pricing
    # must bring them back, and the bound (pricing terms included) must stay below the optimum
    monkeypatch.setattr(lazy, "USED_MASS", 0.5)
    r = solve_metric_lazy(E, cost)
    assert any(x["entering"] for x in r.stats["rounds"])
    assert r.status == "optimal" and abs(r.objective - opt) <= 1e-7 * opt and r.bound <= opt * (1 + 1e-12)


@pytest.mark.parametrize("seed, eps", [(4, 2.0), (3, 0.7)])
def test_rounds_stopped_early_report_only_bounds_with_every_output_priced(monkeypatch, seed, eps):
    import mechopt.solvers.metric._lazy as lazy

    # every final round stops at its first check that does not close, with outputs left
    # out: a bound reported there must include their pricing terms (the IPM's own duals
    # on the outputs kept bound only the LP restricted to them)
    E, cost, _ = _irregular(30, seed, eps)
    opt = _highs_optimum(E, cost)
    monkeypatch.setattr(lazy, "USED_MASS", 0.5)
    monkeypatch.setattr(lazy, "LIFT_DOMINATES", 0.0)
    r = solve_metric_lazy(E, cost, rel_gap=1e-6)
    assert any(x["outputs"] < 30 for x in r.stats["rounds"])
    for x in r.stats["rounds"]:
        assert x["bound"] <= opt * (1 + 1e-12)
    assert r.bound <= opt * (1 + 1e-12) and r.objective >= opt * (1 - 1e-12)


def test_per_output_rows_give_the_shared_rows_solution():
    E, cost, _ = _irregular(10, 7)
    a, b = np.nonzero(~np.eye(10, dtype=bool))
    shared = metric_ipm(cost, a, b, np.exp(E[a, b]), linalg="dense")
    A, B, Y = np.tile(a, 10), np.tile(b, 10), np.repeat(np.arange(10), len(a))
    own = metric_ipm(cost, A, B, np.exp(E[A, B]), output=Y)
    assert own.status == shared.status == "optimal"
    assert abs(own.pobj - shared.pobj) <= 1e-9 * shared.pobj
    assert np.abs(own.Pi - shared.Pi.T.ravel()).max() <= 1e-6 * np.abs(shared.Pi).max()


def _random_columns(seed: int, k: int, m: int):
    """Symmetric budgets ``E`` on ``k`` places, ``G = e^{-E}`` (0 on the diagonal), ``m``
    random columns and a random ~30 % of the pairs already kept per output."""
    rng = np.random.default_rng(seed)
    E = rng.uniform(0.1, 2.0, (k, k))
    E = (E + E.T) / 2
    np.fill_diagonal(E, 0.0)
    G = np.exp(-E)
    np.fill_diagonal(G, 0.0)
    return E, G, rng.random((k, m)) ** 3, rng.random((m, k, k)) < 0.3


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 7), st.integers(1, 4))
def test_violated_pairs_are_the_worst_into_and_out_of_each_place(seed, k, m):
    E, G, Q, keep = _random_columns(seed, k, m)
    new = violated_pairs(Q, G, keep)
    for y in range(m):
        bad = {(i, j) for i in range(k) for j in range(k)
               if i != j and not keep[y, i, j] and Q[i, y] > np.exp(E[i, j]) * Q[j, y] * (1 + 1e-9)}
        got = set(zip(*np.nonzero(new[y])))
        assert got <= bad  # only broken pairs, never kept ones
        for j in range(k):  # the worst broken pair into each place, and out of it, is there
            into = [(Q[i, y] * G[i, j] / Q[j, y], i) for i in range(k) if (i, j) in bad]
            if into:
                assert (max(into)[1], j) in got
            out = [(Q[j, y] * G[j, i] / Q[i, y], i) for i in range(k) if (j, i) in bad]
            if out:
                assert (j, max(out)[1]) in got


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 7), st.integers(1, 4), st.integers(2, 5), st.floats(0.3, 1.0))
def test_more_pairs_per_place_are_the_most_nearly_tight_of_outputs_with_a_broken_pair(seed, k, m, top, near):
    E, G, Q, keep = _random_columns(seed, k, m)
    worst = violated_pairs(Q, G, keep)
    new = violated_pairs(Q, G, keep, top=top, near=near)
    assert not np.any(worst & ~new)  # the worst broken pairs are among them
    for y in range(m):
        R = {(i, j): Q[i, y] * G[i, j] / Q[j, y] for i in range(k) for j in range(k) if i != j and not keep[y, i, j]}
        got = set(zip(*np.nonzero(new[y])))
        if not any(r > 1 + 1e-9 for r in R.values()):
            assert not got  # an output whose column breaks no pair gets none
            continue
        assert all(p in R and R[p] > near for p in got)
        for j in range(k):  # into each place: its `top` largest ratios above `near`
            want = sorted((r, i) for (i, jj), r in R.items() if jj == j)[::-1][:top]
            assert {(i, j) for r, i in want if r > near} <= got
            want = sorted((r, i) for (jj, i), r in R.items() if jj == j)[::-1][:top]
            assert {(j, i) for r, i in want if r > near} <= got


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_per_output_bound_from_any_duals_is_below_the_optimum(seed):
    E, cost, _ = _irregular(12, seed)
    opt = _highs_optimum(E, cost)
    keep = start_pairs(E, 12)
    y, a, b = np.nonzero(keep)
    r = metric_ipm(cost, a, b, np.exp(E[a, b]), output=y)
    rng = np.random.default_rng(seed)
    for mu, pi in [(r.mu, r.Pi), (r.mu * (1 + 0.1 * rng.standard_normal(12)), r.Pi * rng.random(len(a))),
                   (np.zeros(12), np.zeros(len(a)))]:
        assert safe_bound_per_output(E, cost, a, b, y, mu, pi) <= opt * (1 + 1e-12)
    # at the relaxation's own optimum the bound is the relaxation's value (below the full LP's)
    L = safe_bound_per_output(E, cost, a, b, y, r.mu, r.Pi)
    assert abs(L - r.dobj) <= 1e-6 * opt


def test_auto_takes_the_lazy_route_on_irregular_places_only():
    from mechopt.geo import Places

    E, _, _ = _irregular(120, 6)
    assert lazy_preferred(E, 120)
    assert not lazy_preferred(E[:60, :60], 60)  # below LAZY_MIN_K: the IPM on every output
    pl = Places.grid(12, 12)
    G = np.full((144, 144), np.inf)
    np.fill_diagonal(G, 0.0)
    for a, b, w in pl.grid_edges():
        G[a, b] = G[b, a] = 0.7 * w
    assert not lazy_preferred(G, 144)  # a grid's neighbours have a band order


def test_time_limit_gives_a_channel_and_a_valid_bound():
    E, cost, _ = _irregular(30, 4)
    opt = _highs_optimum(E, cost)
    r = solve_metric_lazy(E, cost, time_limit=0.0)
    assert r.status == "feasible" and r.stats["time_limit_hit"]
    assert r.Q is not None and r.objective >= opt * (1 - 1e-9)
    assert r.bound <= opt + 1e-12 * opt


def test_no_round_starts_without_room_for_it_and_the_bound_stays_valid(monkeypatch):
    # a limit far beyond the solve, but no room for any next round: one round, then stop
    import mechopt.solvers.metric._lazy as lazy

    monkeypatch.setattr(lazy, "ROUND_ROOM", 1e9)
    E, cost, _ = _irregular(30, 4)
    opt = _highs_optimum(E, cost)
    r = solve_metric_lazy(E, cost, time_limit=3600.0)
    assert len(r.stats["rounds"]) == 1 and r.stats["time_limit_hit"]
    assert r.Q is not None and r.objective >= opt * (1 - 1e-9)
    assert r.bound <= opt + 1e-12 * opt
    full = solve_metric_lazy(E, cost, time_limit=None)
    assert len(full.stats["rounds"]) > 1


def test_a_round_without_time_for_a_next_one_runs_on_and_the_result_stays_exact(monkeypatch):
    # no time for any next round (as near a limit): no round stops at the early gap or
    # for pairs to add, each solves its relaxation to the IPM's tolerance
    import mechopt.solvers.metric._lazy as lazy

    E, cost, _ = _irregular(30, 4)
    opt = _highs_optimum(E, cost)
    usual = solve_metric_lazy(E, cost, time_limit=3600.0)
    monkeypatch.setattr(lazy, "NEXT_ROUND", 1e9)
    r = solve_metric_lazy(E, cost, time_limit=3600.0)
    assert r.stats["rounds"][0]["iterations"] > usual.stats["rounds"][0]["iterations"]
    assert all(x["ipm_status"] == "optimal" for x in r.stats["rounds"])
    assert r.status == "optimal" and abs(r.objective - opt) <= 1e-7 * opt and r.bound <= opt * (1 + 1e-12)


@pytest.mark.parametrize("k, seed, eps", [(30, 4, 2.0), (40, 5, 0.7), (60, 6, 0.7)])
def test_rounds_started_from_the_last_iterate_reach_the_all_pairs_optimum(monkeypatch, k, seed, eps):
    import mechopt.solvers.metric._lazy as lazy

    # every final round after the first starts warm, however many new pairs break there
    # (some of these stall and run again from the centre); the first round with the stars
    # (60 places: with the base pairs alone it is the only final round)
    monkeypatch.setattr(lazy, "SHARED_FROM", 10**9)
    warm_start = lazy.warm_start
    monkeypatch.setattr(lazy, "warm_start", lambda *args: warm_start(*args, broken=1.0))
    E, cost, _ = _irregular(k, seed, eps)
    opt = _highs_optimum(E, cost)
    r = solve_metric_lazy(E, cost)
    assert any(x["warm"] for x in r.stats["rounds"]) or any(x.get("warm_stalled") for x in r.stats["rounds"])
    assert r.status == "optimal" and abs(r.objective - opt) <= 1e-7 * opt and r.bound <= opt * (1 + 1e-12)


def test_a_warm_start_keeps_the_rows_it_knows_and_gives_new_rows_positive_slacks():
    rng = np.random.default_rng(0)
    k, m = 6, 3
    q = rng.uniform(0.1, 1.0, (k, m))
    S0 = np.array([0, 2, 5])
    y0, a0, b0 = np.array([0, 1, 2]), np.array([0, 1, 2]), np.array([1, 2, 3])
    s0, pi0 = np.array([0.3, 0.2, 0.1]), np.array([1.0, 2.0, 3.0])
    q[4, 1], q[5, 1] = 0.9, 0.2  # row 3 below (output 2, places 4 and 5) is broken there
    z = rng.uniform(0.1, 1.0, (k, m))
    saved = (S0, y0, a0, b0, (q, s0, np.ones(k), pi0, z))
    S = np.array([2, 4, 5])  # output 0 left, output 4 new
    y, a, b = np.array([0, 2, 1, 0]), np.array([1, 2, 0, 4]), np.array([2, 3, 1, 5])
    w = np.array([2.0, 2.0, 2.0, 1.0])
    qn, sn, mu, pin, zn = lazy_warm(saved, S, y, a, b, w, broken=1.0)
    assert np.array_equal(qn[:, 0], q[:, 1]) and np.array_equal(qn[:, 2], q[:, 2])
    assert np.all(qn[:, 1] == q.min()) and np.array_equal(zn[:, 0], z[:, 1])
    # rows 0 and 1 are rows 1 and 2 of the saved round (outputs 2 and 5); rows 2 and 3 are new
    assert sn[0] == 0.2 and pin[0] == 2.0 and sn[1] == 0.1 and pin[1] == 3.0
    assert sn[2] == max(q.min(), 0.2) and sn[3] == 0.2  # max(-A q, median of the saved slacks)
    mean = (np.sum(q * z) + np.sum(s0 * pi0)) / (q.size + 3)
    assert np.allclose(sn[2:] * pin[2:], mean)
    # one of the two new rows is broken at the iterate
    assert lazy_warm(saved, S, y, a, b, w, broken=0.4) is None
    assert lazy_warm(saved, S, y, a, b, w, broken=0.5) is not None


def test_a_looser_gap_stops_sooner_and_still_brackets_the_all_pairs_optimum():
    # through the product: mechopt.solve(..., gap=) on 30 places with no grid, against
    # the one-LP route (every pair, one HiGHS solve)
    from mechopt import solve

    rng = np.random.default_rng(5)
    xy = rng.uniform(0, 4, (30, 2))
    doc = {"places": {"xy": xy.tolist()}, "privacy": [{"notion": "metric", "epsilon": 0.7, "distance": "euclidean"}],
           "objective": {"kind": "expected_loss", "loss": "squared", "prior": rng.dirichlet(np.ones(30)).tolist()}}
    exact = solve(doc, method="lp", quiet=True)
    tight = solve(doc, method="lazy", quiet=True)
    loose = solve(doc, method="lazy", quiet=True, gap=1e-3)
    assert exact.status == tight.status == loose.status == "optimal"
    assert loose.certificate.verified and tight.certificate.verified
    opt = exact.objective
    assert loose.bound <= opt * (1 + 1e-9) and loose.objective >= opt * (1 - 1e-9)
    assert loose.objective - loose.bound <= 1e-3 * loose.objective
    assert loose.stats["relative_gap"] <= 1e-3
    assert loose.stats["iterations"] < tight.stats["iterations"]
    assert abs(tight.objective - opt) <= 1e-7 * opt


@pytest.mark.parametrize("gap", [0, 1, -1e-3, 2.0, True, "1e-3", float("nan")])
def test_a_gap_outside_zero_one_is_bad_input(gap):
    from mechopt import InputError, solve

    doc = {"k": 3, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
           "objective": {"kind": "expected_loss", "loss": "hamming"}}
    with pytest.raises(InputError, match="gap"):
        solve(doc, quiet=True, gap=gap)


def test_the_pair_rows_worked_on_in_threaded_parts_give_the_same_channel_to_the_bit(monkeypatch):
    # elementwise passes, step lengths and sparse products over the pair rows split in
    # parts (threads) from SPLIT_FROM rows: each entry is computed as in one piece
    import mechopt.solvers.metric._ipm as ipm
    import mechopt.solvers.metric._rows as rows

    for module in (ipm, rows):  # two threads whatever the machine has
        monkeypatch.setattr(module, "ipm_workers", lambda: 2)
    E, cost, _ = _irregular(20, 2, 0.7)
    whole = solve_metric_lazy(E, cost)
    monkeypatch.setattr(rows, "SPLIT_FROM", 7)
    parts = solve_metric_lazy(E, cost)
    assert whole.status == parts.status == "optimal"
    assert whole.stats["iterations"] == parts.stats["iterations"]
    assert np.array_equal(whole.Q, parts.Q) and whole.bound == parts.bound
