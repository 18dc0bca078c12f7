"""Solvers return candidates; the dispatcher (mechopt/_settle.py) alone repairs, verifies and sets the status."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np

from mechopt._problem import load_problem
from mechopt._settle import settle
from mechopt.solvers._outcome import Candidate, Failure

PKG = Path(__file__).resolve().parents[1] / "mechopt"
DISPATCHER = {"mechopt._solve", "mechopt._solve_design", "mechopt._settle", "mechopt.cli", "mechopt._export"}

KRR3 = {"k": 3, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
        "objective": {"kind": "expected_loss", "loss": "hamming"}}


def _imports(path: Path) -> set[str]:
    """Every mechopt module ``path`` imports, at any depth (relative imports resolved)."""
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    package = parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            name = ".".join(base + ([node.module] if node.module else []))
            found.add(name)
            found.update(f"{name}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_no_solver_imports_the_dispatcher():
    offenders = {str(p.relative_to(PKG)): sorted(_imports(p) & DISPATCHER) for p in (PKG / "solvers").rglob("*.py")}
    assert {p: names for p, names in offenders.items() if names} == {}


def test_a_candidate_within_its_gap_is_optimal():
    """k-RR at ratio e on 3 inputs has Hamming error 2 / (2 + e), the optimum (Kairouz et al.)."""
    problem = load_problem(KRR3)
    e = math.e
    Q = (np.ones((3, 3)) + (e - 1) * np.eye(3)) / (2 + e)
    best = 2 / (2 + e)
    res = settle(problem, Candidate(Q, ("x0", "x1", "x2"), best * (1 - 1e-12), {"method": "test"}), {})
    assert res.status == "optimal" and res.certificate.verified
    assert abs(res.objective - best) < 1e-12
    # the same channel against a bound it cannot reach: feasible, the gap said
    loose = settle(problem, Candidate(Q, ("x0", "x1", "x2"), 0.5 * best, {"method": "test"}), {})
    assert loose.status == "feasible" and abs(loose.gap - 0.5 * best) < 1e-12 and "gap" in loose.message
    # not proven: never optimal, whatever the gap
    unproven = settle(problem, Candidate(Q, ("x0", "x1", "x2"), best, {}, proven=False), {})
    assert unproven.status == "feasible"


def test_a_failure_is_a_status_or_the_best_verified_standard_channel():
    problem = load_problem(KRR3)
    failed = settle(problem, Failure("error", "the route gave up", {"method": "test"}), {})
    assert failed.status == "error" and failed.mechanism is None and failed.message == "the route gave up"
    fallen = settle(problem, Failure("error", "the route gave up", {"method": "test"}, fallback=True), {})
    # randomized response is among the fallback's candidates: never below the optimum, better than a constant (2/3)
    assert fallen.status in ("optimal", "feasible") and fallen.certificate.verified
    assert 2 / (2 + math.e) - 1e-12 <= fallen.objective < 2 / 3
    assert fallen.message.startswith("the route gave up") and fallen.stats["fallback"]["why"] == "the route gave up"


def test_a_channel_that_cannot_be_repaired_falls_back_only_when_asked(monkeypatch):
    """When the repair fails on the route's channel the answer is an error, or with ``fallback`` a verified channel."""
    import mechopt
    import mechopt._settle as S
    from mechopt.solvers._repair import Repair

    real, calls = S.repair, []

    def fails_first(Q, notions, **kw):
        calls.append(1)
        if len(calls) == 1:  # rows summing to 6: the exact check refuses it
            return Repair(Q, math.nan, mechopt.verify(np.full(Q.shape, 2.0), notions), 1)
        return real(Q, notions, **kw)

    monkeypatch.setattr(S, "repair", fails_first)
    problem = load_problem(KRR3)
    Q = np.full((3, 3), 1 / 3)
    alone = settle(problem, Candidate(Q, ("x0", "x1", "x2"), None, {}), {})
    assert alone.status == "error" and "repaired" in alone.message and alone.mechanism is None
    calls.clear()
    rescued = settle(problem, Candidate(Q, ("x0", "x1", "x2"), None, {}, fallback="the test's channel"), {})
    assert rescued.status == "feasible" and rescued.certificate.verified and rescued.bound is None
    assert rescued.stats["fallback"]["why"].startswith("the solver's channel could not be repaired")
