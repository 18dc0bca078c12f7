"""The metric LP by the IPM over a growing set of outputs (``method="outputs"``).

Checked against an independent all-pairs LP (every pair, every output, one scipy/HiGHS
solve) on places with no grid structure, through the library call and through
``mechopt.solve`` (repair and exact verification included).
"""

from __future__ import annotations

import numpy as np
import pytest

import mechopt
from mechopt.solvers.metric._outputs import first_outputs, solve_metric_outputs

from test_metric_ipm import _highs_optimum


def _irregular(k: int, seed: int, eps: float = 0.7):
    """``(E, cost, doc)``: k random points in a 6×6 square, two hot spots, squared loss."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 6, (k, 2))
    hot = rng.uniform(0, 6, (2, 2))
    dens = sum(np.exp(-((xy - h) ** 2).sum(1)) for h in hot) + 0.05
    prior = dens / dens.sum()
    D = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    doc = {"places": {"xy": xy.tolist()}, "privacy": [{"notion": "metric", "epsilon": eps, "distance": "euclidean"}],
           "objective": {"kind": "expected_loss", "loss": "squared", "prior": prior.tolist()}}
    return eps * D, prior[:, None] * D**2, doc


@pytest.mark.parametrize("k, seed", [(8, 0), (14, 1), (20, 2), (30, 3)])
def test_outputs_route_matches_the_all_pairs_lp_and_brackets_it(k, seed):
    E, cost, _ = _irregular(k, seed)
    opt = _highs_optimum(E, cost)
    r = solve_metric_outputs(E, cost)
    assert r.status == "optimal"
    assert r.bound <= opt + 1e-12 * opt  # a proven lower bound
    assert abs(r.objective - opt) <= 1e-7 * opt
    # the channel the route returns is in the cone and has rows summing to 1 (to the LP's tolerance)
    Q = r.Q
    assert np.all(Q >= 0) and np.abs(Q.sum(1) - 1).max() < 1e-8
    W = np.exp(E)
    assert np.all(Q[:, None, :] <= W[:, :, None] * Q[None, :, :] * (1 + 1e-9) + 1e-15)


@pytest.mark.parametrize("seed, eps", [(0, 0.7), (2, 1.5)])
def test_first_outputs_is_not_always_enough_and_pricing_adds_what_it_missed(seed, eps):
    E, cost, _ = _irregular(30, seed, eps)
    r = solve_metric_outputs(E, cost)
    assert abs(r.objective - _highs_optimum(E, cost)) <= 1e-7 * r.objective
    first = set(first_outputs(E, cost))
    used = set(np.flatnonzero(r.Q.sum(0) > 1e-9).tolist())
    assert len(r.stats["rounds"]) >= 2 and used - first  # pricing brought outputs the remap missed
    assert r.stats["rounds"][-1]["entering"] == 0 or r.status == "optimal"


def test_time_limit_gives_a_channel_and_a_valid_bound():
    E, cost, _ = _irregular(30, 4)
    opt = _highs_optimum(E, cost)
    r = solve_metric_outputs(E, cost, time_limit=0.0)
    assert r.Q is not None and r.objective >= opt * (1 - 1e-9)
    assert r.bound <= opt + 1e-12 * opt


@pytest.mark.parametrize("method", ["outputs", "lazy"])
def test_solve_with_an_irregular_places_method_repairs_verifies_and_proves(method):
    E, cost, doc = _irregular(20, 5)
    res = mechopt.solve(doc, method=method, quiet=True)
    assert res.stats["method"] == method
    assert res.status == "optimal" and res.certificate.verified
    assert abs(res.objective - _highs_optimum(E, cost)) <= 1e-7 * res.objective


def test_the_bound_prices_only_the_outputs_the_ipm_duals_leave_open():
    from mechopt.solvers.metric._ipm import metric_ipm
    from mechopt.solvers.metric._outputs import _Bound
    from mechopt.solvers.metric._parts import _pairs

    E, cost, _ = _irregular(20, 2)
    opt = _highs_optimum(E, cost)
    a, b = _pairs(E)
    S = list(range(20))  # every output in the IPM: its duals settle every term
    r = metric_ipm(cost, a, b, np.exp(E[a, b]), tol=1e-10)
    B = _Bound(E, cost)
    lb, entering = B(S, r.mu, r.Pi, a, b)
    assert opt - 1e-7 * opt <= lb <= opt + 1e-12 * opt and not entering
    assert B.priced == 0  # no pricing LP was needed
    # past the deadline the outputs of S still have their terms; an output outside S has none
    assert B(S, r.mu, r.Pi, a, b, deadline=0.0)[0] == lb
    S2 = S[1:]
    r2 = metric_ipm(cost[:, S2], a, b, np.exp(E[a, b]), tol=1e-10)
    assert B(S2, r2.mu, r2.Pi, a, b, deadline=0.0)[0] == -np.inf
    lb2, _ = B(S2, r2.mu, r2.Pi, a, b)
    assert lb2 <= opt + 1e-12 * opt and B.priced >= 1  # output 0 is priced


def test_the_bound_is_the_same_priced_in_one_thread_or_two():
    from mechopt.solvers.metric._ipm import metric_ipm
    from mechopt.solvers.metric._outputs import _Bound
    from mechopt.solvers.metric._parts import _pairs

    E, cost, _ = _irregular(30, 5)
    opt = _highs_optimum(E, cost)
    a, b = _pairs(E)
    S = list(range(0, 30, 3))  # a third of the outputs: the other twenty are priced
    r = metric_ipm(cost[:, S], a, b, np.exp(E[a, b]), tol=1e-10)
    got = []
    for threads in (1, 2):
        B = _Bound(E, cost, threads=threads)
        lb, entering = B(S, r.mu, r.Pi, a, b)
        assert lb <= opt + 1e-12 * opt and B.priced >= 20 and len(B.models) == threads
        got.append((lb, [y for _, y in entering]))
    assert abs(got[0][0] - got[1][0]) <= 1e-9 * opt and got[0][1] == got[1][1] and got[0][1]
