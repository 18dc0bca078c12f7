"""The column-generation loop (mechopt/solvers/_colgen_loop.py) on toy masters and pricers.

The masters here are written out by hand (a list of numbers, a tiny LP with a known
optimum) so that each stop rule, the bound kept and the order of the checks can be
read off; the six real loops are tested through their own routes.
"""

from __future__ import annotations

import math
import pathlib
import time

import numpy as np
import pytest

from mechopt.solvers._colgen_loop import (FAILED, LAST, MAX_ITER, NO_COLUMN, PROVEN, STALLED, TIME_LIMIT, Found,
                                          Round, run)


class ListMaster:
    """Maximise ``max(cols)``: the incumbent is the largest number added so far."""

    def __init__(self, cols=(1.0,), fail_at=None, dedupe=False):
        self.cols = list(cols)
        self.solves = 0
        self.fail_at = fail_at
        self.dedupe = dedupe

    def solve(self):
        self.solves += 1
        if self.fail_at == self.solves:
            return Round("error", message="boom")
        return Round("optimal", max(self.cols), None, len(self.cols))

    def add(self, cols):
        new = [c for c in cols if not (self.dedupe and c in self.cols)]
        self.cols += new
        return len(new)


class StepPricer:
    """Offers ``value + step`` up to ``top``; proves the bound ``top`` (or nothing)."""

    def __init__(self, top=3.0, step=1.0, proven=True, repeat=False):
        self.top, self.step, self.proven, self.repeat = top, step, proven, repeat
        self.calls = 0

    def price(self, state):
        self.calls += 1
        if self.repeat:
            return Found([state.value], 1, self.top if self.proven else None)
        new = [state.value + self.step] if state.value < self.top else []
        return Found(new, len(new), self.top if self.proven else None)


def test_closes_the_gap_and_counts_master_solves():
    trace = []
    res = run(ListMaster(), StepPricer(), closed=lambda v, b: b - v <= 0, progress=lambda *a: trace.append(a))
    assert (res.reason, res.rounds, res.state.value, res.bound) == (PROVEN, 3, 3.0, 3.0)
    assert [t[0] for t in trace] == [0, 1, 2] and [t[1] for t in trace] == [1.0, 2.0, 3.0]
    assert [t[3] for t in trace] == [1, 2, 3]  # the master's size at each round


def test_without_a_gap_test_it_stops_when_no_column_improves():
    res = run(ListMaster(), StepPricer(proven=False))
    assert (res.reason, res.rounds, res.state.value) == (NO_COLUMN, 3, 3.0)
    assert res.bound == math.inf  # a heuristic pricer proves nothing


def test_bounds_kept_are_the_best_for_the_sense():
    class Bounds:
        def __init__(self, seq):
            self.seq = list(seq)

        def price(self, state):
            b = self.seq.pop(0)
            return Found([0.0], 1 if self.seq else 0, b)

    assert run(ListMaster(), Bounds([5.0, 7.0, 4.0, 6.0])).bound == 4.0  # maximise: the smallest upper bound
    assert run(ListMaster(), Bounds([5.0, 7.0, 4.0, 6.0]), sense="min").bound == 7.0  # the largest lower bound
    assert run(ListMaster(), Bounds([5.0, None, 6.0]), bound=4.5).bound == 4.5  # None leaves the bound


def test_check_first_uses_an_initial_bound_without_pricing():
    pricer = StepPricer()
    res = run(ListMaster([3.0]), pricer, bound=3.0, closed=lambda v, b: b - v <= 0, check_first=True)
    assert (res.reason, res.rounds, pricer.calls) == (PROVEN, 1, 0)
    pricer = StepPricer()
    res = run(ListMaster([3.0]), pricer, bound=3.0, closed=lambda v, b: b - v <= 0)
    assert (res.reason, pricer.calls) == (PROVEN, 1)  # checked only after pricing


def test_master_failure_stops_at_once():
    pricer = StepPricer(top=10.0)
    res = run(ListMaster(fail_at=3), pricer)
    assert (res.reason, res.rounds, res.state.message, pricer.calls) == (FAILED, 3, "boom", 2)


def test_stalled_when_the_master_takes_nothing():
    res = run(ListMaster(dedupe=True), StepPricer(repeat=True, top=10.0))
    assert (res.reason, res.rounds) == (STALLED, 1)


def test_max_iter_and_the_pricers_last_round():
    res = run(ListMaster(), StepPricer(top=100.0), max_iter=4)
    assert (res.reason, res.rounds, res.state.value) == (MAX_ITER, 4, 4.0)

    class Last(StepPricer):
        def price(self, state):
            f = super().price(state)
            return Found(f.columns, f.n, f.bound, last=state.value >= 2.0)

    master = ListMaster()
    res = run(master, Last(top=100.0))
    assert (res.reason, res.rounds, master.cols) == (LAST, 2, [1.0, 2.0])  # the last round's columns not added


def test_deadline_is_checked_after_adding():
    master = ListMaster()
    res = run(master, StepPricer(top=100.0), deadline=time.perf_counter() - 1.0)
    assert (res.reason, res.rounds, master.cols) == (TIME_LIMIT, 1, [1.0, 2.0])


def test_order_of_the_checks_after_pricing():
    # closed before "no column" before "last": a pricer that finds nothing, proves the
    # bound and is out of time reports the proof
    class All:
        def price(self, state):
            return Found([], 0, state.value, last=True)

    assert run(ListMaster(), All(), closed=lambda v, b: b <= v).reason == PROVEN
    assert run(ListMaster(), All()).reason == NO_COLUMN


def test_ray_lp_column_generation_reaches_the_enumerated_optimum():
    # free outputs, MMSE under 1-LDP: column generation over the rays (priced exactly)
    # must reach the LP over every staircase, listed here by brute force
    import itertools

    from mechopt.objectives import Objective, column_utility
    from mechopt.solvers.free._raylp import column_generation, solve_ray_lp

    k, eps = 5, 1.0
    P = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
    obj = Objective("mmse", P, values=np.array([-1.0, 0.5, 2.0, 0.0, 1.0]))
    S = [np.array([math.exp(eps) if x in s else 1.0 for x in range(k)])
         for r in range(1, k) for s in itertools.combinations(range(k), r)]
    V = np.array(S).T
    ref = solve_ray_lp(V, column_utility(obj, V)).value
    sol = column_generation(obj, "ldp", eps, P)
    assert sol.status == "optimal"
    assert abs(sol.value - ref) <= 1e-9 * max(1.0, abs(ref))
    assert sol.bound >= ref - 1e-9 and sol.bound - sol.value <= 1e-8


def test_a_ray_lp_stopped_after_pricing_returns_the_rays_its_weights_belong_to():
    # max_iter stops the loop after a pricing round added columns the master never solved:
    # the answer must be the last solved LP, its rays and weights of one length, its channel a channel
    from mechopt.objectives import Objective
    from mechopt.solvers.free._raylp import channel_from_rays, column_generation

    eps = 1.0
    P = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
    obj = Objective("mmse", P, values=np.array([-1.0, 0.5, 2.0, 0.0, 1.0]))
    full = column_generation(obj, "ldp", eps, P)
    sol = column_generation(obj, "ldp", eps, P, max_iter=2)
    assert "stopped after 2 iterations" in sol.message
    assert sol.V.shape[1] == len(sol.weights) < full.V.shape[1]
    Q, _ = channel_from_rays(sol.V, sol.weights, np.zeros(sol.V.shape[1], bool))
    assert np.allclose(Q.sum(axis=1), 1.0, atol=1e-9) and (Q >= 0).all()
    assert sol.value <= full.value + 1e-12  # MMSE is maximised as a utility: fewer rays, no better value


def test_highs_models_come_from_the_adapters():
    root = pathlib.Path(__file__).resolve().parent.parent / "mechopt"
    outside = [str(p.relative_to(root)) for p in root.rglob("*.py")
               if "backends" not in p.parts and ("import highspy" in p.read_text() or "Highs()" in p.read_text())]
    assert outside == []


@pytest.mark.parametrize("sense", ["max", "min"])
def test_no_bound_is_infinite_for_the_sense(sense):
    res = run(ListMaster(), StepPricer(proven=False), sense=sense)
    assert res.bound == (math.inf if sense == "max" else -math.inf)
