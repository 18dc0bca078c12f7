"""LP back-ends (mechopt/solvers/backends/_adapters.py), parametrised over every installed one.

Each back-end must give the same optimum, the same dual sign convention and the same
statuses on LPs whose answers are known by hand, and the whole pipeline must reach the
closed-form optimum through it.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import mechopt
from mechopt._errors import InputError
from mechopt.solvers.backends._adapters import LinearProgram, choose, get_backend, installed_backends, register_backend

BACKENDS = installed_backends()


def test_the_registry_lists_highs_and_what_cvxpy_has():
    assert {"highs", "highs-ipm", "highs-ds"} <= set(BACKENDS)
    import cvxpy as cp

    for name in BACKENDS:
        if name.startswith("cvxpy:"):
            assert name.split(":", 1)[1] in cp.installed_solvers()


@pytest.mark.parametrize("name", BACKENDS)
def test_a_transport_lp_with_a_known_optimum_and_duals(name):
    # min x1 + 2 x2 + 3 x3  s.t.  x1 + x2 + x3 = 1,  x1 <= 0.25,  x >= 0:
    # optimum 0.25 * 1 + 0.75 * 2 = 1.75; the equality's marginal is 2 (the price of x2),
    # the bound row's marginal is 1 - 2 = -1
    lp = LinearProgram(np.array([1.0, 2.0, 3.0]), A_ub=np.array([[1.0, 0.0, 0.0]]), b_ub=np.array([0.25]),
                       A_eq=np.ones((1, 3)), b_eq=np.ones(1))
    adapter = get_backend(name)
    sol = lp.solve(adapter)
    tol = 10 * adapter.accuracy  # each adapter states how accurate it is (SCS: first order)
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(1.75, abs=tol)
    assert sol.x == pytest.approx([0.25, 0.75, 0.0], abs=tol)
    assert sol.eq_duals == pytest.approx([2.0], abs=tol)
    assert sol.ub_duals == pytest.approx([-1.0], abs=tol)


@pytest.mark.parametrize("name", BACKENDS)
def test_an_infeasible_lp_is_called_infeasible(name):
    lp = LinearProgram(np.ones(2), A_ub=np.ones((1, 2)), b_ub=np.array([-1.0]))  # x >= 0, x1 + x2 <= -1
    assert lp.solve(get_backend(name)).status == "infeasible"


@pytest.mark.parametrize("name", BACKENDS)
@pytest.mark.parametrize("k, eps", [(2, 0.5), (3, 1.0), (4, 2.0)])
def test_the_labeled_pipeline_reaches_krr_through_every_backend(name, k, eps):
    # LDP, uniform prior, Hamming loss: k-RR is optimal, error (k-1) / (e^eps + k - 1)
    r = mechopt.solve({"k": k, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": eps}],
                       "objective": {"kind": "expected_loss", "loss": "hamming"}}, backend=name, quiet=True)
    assert r.status in ("optimal", "feasible") and r.certificate.verified
    assert r.objective == pytest.approx((k - 1) / (math.exp(eps) + k - 1), rel=1e-6)


def test_milp_goes_to_highs_whatever_lp_backend_was_asked():
    assert choose("cvxpy:CLARABEL" if "cvxpy:CLARABEL" in BACKENDS else "highs-ds", milp=True).name.startswith("highs")
    # a knapsack: max 3a + 2b + 2c  s.t.  2a + b + c <= 2, binary -> b = c = 1, value 4
    lp = LinearProgram(-np.array([3.0, 2.0, 2.0]), A_ub=np.array([[2.0, 1.0, 1.0]]), b_ub=np.array([2.0]),
                       bounds=np.array([[0, 1]] * 3, dtype=float), integrality=np.ones(3))
    sol = lp.solve()
    assert sol.status == "optimal" and sol.objective == pytest.approx(-4.0)


def test_choose_policy():
    assert choose(size=10).name == "highs"
    assert choose(size=10**6).name == "highs-ipm"
    assert choose(size=10**6, retry=True).name == "highs-ds"
    assert choose(size=10, retry=True).name == "highs-ipm"
    assert choose(vertex=True).name == "highs-ds"
    assert choose("highs-ds", size=10**6).name == "highs-ds"


def test_unknown_backends_are_bad_input():
    with pytest.raises(InputError, match="backend"):
        get_backend("gurobi")
    with pytest.raises(InputError, match="backend"):
        get_backend("cvxpy:NOPE")
    with pytest.raises(InputError, match="backend"):
        mechopt.solve({"k": 2, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1}],
                       "objective": {"kind": "expected_loss", "loss": "hamming"}}, backend="nope", quiet=True)


def test_a_registered_backend_is_used_by_name():
    calls = []

    class Counting:
        name = "counting"
        capabilities = frozenset({"lp", "duals"})

        def solve(self, *args, **kwargs):
            calls.append(1)
            return get_backend("highs").solve(*args, **kwargs)

    register_backend("counting", Counting, {"lp", "duals"}, tight=True)
    try:
        r = mechopt.solve({"k": 3, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
                           "objective": {"kind": "expected_loss", "loss": "hamming"}}, backend="counting", quiet=True)
        assert calls and r.status == "optimal"
        assert r.objective == pytest.approx(2 / (math.e + 2), rel=1e-9)
    finally:
        from mechopt.solvers.backends import _adapters as _backends

        _backends._REGISTRY.pop("counting")


_LABELED = {
    "ldp": ({"k": 4, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
             "objective": {"kind": "expected_loss", "loss": "hamming", "prior": [0.4, 0.3, 0.2, 0.1]}}, "auto"),
    "uldp": ({"inputs": ["a", "b", "c", "d"], "outputs": "inputs",
              "privacy": [{"notion": "uldp", "epsilon": 0.7, "sensitive": ["a", "b"]}],
              "objective": {"kind": "expected_loss", "loss": "hamming"}}, "auto"),
    "metric decomposed": ({"inputs": ["p0", "p1", "p2", "p3", "p4"], "outputs": "inputs",
                           "privacy": [{"notion": "metric", "epsilon": 1.0,
                                        "distance": [[abs(a - b) for b in range(5)] for a in range(5)]}],
                           "objective": {"kind": "expected_loss", "loss": "hamming"}}, "decompose"),
}


@pytest.mark.parametrize("case", sorted(_LABELED))
def test_the_cli_backend_reaches_every_lp_of_the_labeled_route(case, tmp_path, capsys, monkeypatch):
    """``--backend counting`` (a back-end registered here, wrapping HiGHS) sees every LP and MILP the
    labeled route solves: no HiGHS solve happens outside it."""
    from mechopt.cli import main
    from mechopt.solvers.backends._adapters import HighsAdapter

    doc, method = _LABELED[case]
    seen, bypassed, depth = [], [], [0]
    real_lp, real_milp = HighsAdapter.solve, HighsAdapter.solve_milp

    def watched(real):
        def call(self, *args, **kwargs):
            if depth[0] == 0:
                bypassed.append(self.name)
            return real(self, *args, **kwargs)
        return call

    monkeypatch.setattr(HighsAdapter, "solve", watched(real_lp))
    monkeypatch.setattr(HighsAdapter, "solve_milp", watched(real_milp))

    class Counting:
        name = "counting"
        capabilities = frozenset({"lp", "duals", "sparse", "milp"})

        def _through(self, what, *args, **kwargs):
            seen.append(what)
            depth[0] += 1
            try:
                return getattr(get_backend("highs"), what)(*args, **kwargs)
            finally:
                depth[0] -= 1

        def solve(self, *args, **kwargs):
            return self._through("solve", *args, **kwargs)

        def solve_milp(self, *args, **kwargs):
            return self._through("solve_milp", *args, **kwargs)

    register_backend("counting", Counting, Counting.capabilities, tight=True)
    try:
        problem = tmp_path / "p.json"
        problem.write_text(json.dumps(doc))
        code = main(["solve", str(problem), "-o", str(tmp_path / "m.json"), "--backend", "counting",
                     "--method", method])
        capsys.readouterr()
    finally:
        from mechopt.solvers.backends import _adapters as _backends

        _backends._REGISTRY.pop("counting")
    assert code == 0
    assert seen and bypassed == []
    if case == "uldp":
        assert "solve_milp" in seen or seen.count("solve") >= 2  # the roles: a MILP or its rounded relaxation
    # the exported channel is the one the exact verifier accepts
    assert mechopt.Mechanism.load(tmp_path / "m.json").verify().verified
