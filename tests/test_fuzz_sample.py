"""A small sample of the seeded fuzzer (benchmarks/fuzz.py) as a test.

Every mechanism the solver exports must survive a save / ``Mechanism.load`` (exact
re-verification of its own claims) and an exact ``verify`` against the original
problem's notions; nothing may escape ``solve`` as an exception.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:  # plain `pytest` does not put the repository root on sys.path
    sys.path.insert(0, ROOT)

from benchmarks.fuzz import run  # noqa: E402


@pytest.mark.parametrize("seed", [0, 1])
def test_fuzz_sample_has_no_violation_and_no_crash(seed):
    counts = run(40, seed)
    assert counts["n"] == 40
    assert counts["violations"] == 0, counts["examples"].get("violation")
    assert counts["crashes"] == 0, counts["examples"].get("crash")
    assert counts["objective_mismatch"] == 0, counts["examples"].get("objective_mismatch")
    assert counts["bound_inconsistent"] == 0, counts["examples"].get("bound_inconsistent")
    # every notion admits the constant channel: an "infeasible" answer would be wrong
    assert counts["infeasible_constant_ok"] == 0, counts["examples"].get("infeasible_constant_ok")
    # the sample is not vacuous: most problems are solved and checked
    assert counts["solved"] >= 30
