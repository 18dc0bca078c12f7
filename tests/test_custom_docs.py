"""docs/custom_utilities.md: every example runs as written, its exports pass ``mechopt verify``,
and each optimum matches a formulation written here independently (all pairs in cvxpy, or
enumeration of the ray LP's bases)."""

import math
import re
from pathlib import Path

import cvxpy as cp
import numpy as np
import pytest
import yaml

import mechopt
from mechopt.cli import main

DOC = Path(__file__).resolve().parents[1] / "docs" / "custom_utilities.md"
TEXT = DOC.read_text(encoding="utf-8")
PY = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)
YAML = re.findall(r"```yaml\n(.*?)```", TEXT, flags=re.S)


def _block(marker: str) -> str:
    (b,) = [b for b in PY if marker in b]
    return b


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """Run every Python block once, in a scratch directory; namespaces by block."""
    import os

    d = tmp_path_factory.mktemp("custom_docs")
    old = os.getcwd()
    os.chdir(d)
    try:
        out = []
        for i, b in enumerate(PY):
            ns: dict = {"__name__": "__doc_example__"}
            exec(compile(b, f"custom_utilities.md[python block {i}]", "exec"), ns)
            out.append(ns)
    finally:
        os.chdir(old)
    return d, out


def _ns(ran, marker):
    d, spaces = ran
    return d, spaces[PY.index(_block(marker))]


def _all_pairs_min(k, E, objective_fn, extra=lambda Q: []):
    """min objective(Q) over channels with Q[x, :] <= e^E[x, x'] Q[x', :] for every pair (HiGHS)."""
    Q = cp.Variable((k, k), nonneg=True)
    cons = [cp.sum(Q, axis=1) == 1]
    for x in range(k):
        for xp in range(k):
            if x != xp and math.isfinite(E[x, xp]):
                cons.append(Q[x, :] <= math.exp(E[x, xp]) * Q[xp, :])
    prob = cp.Problem(cp.Minimize(objective_fn(Q)), cons + extra(Q))
    prob.solve(solver="HIGHS")
    assert prob.status == "optimal"
    return float(prob.value)


def test_docs_have_the_three_examples():
    assert len(PY) >= 5
    for marker in ("minimax.json", "survey.json", "chi2.json"):
        assert _block(marker)


def test_minimax_location_example(ran):
    d, ns = _ns(ran, "minimax.json")
    km = np.array([0, 1, 2, 4, 7.0])
    E = 0.5 * np.abs(np.subtract.outer(km, km))        # metric on a line: eps * distance, every pair
    L = np.abs(np.subtract.outer(km, km))
    t = cp.Variable()
    Q = cp.Variable((5, 5), nonneg=True)
    cons = [cp.sum(Q, axis=1) == 1, cp.sum(cp.multiply(L, Q), axis=1) <= t]
    cons += [Q[x, :] <= math.exp(E[x, xp]) * Q[xp, :] for x in range(5) for xp in range(5) if x != xp]
    prob = cp.Problem(cp.Minimize(t), cons)
    prob.solve(solver="HIGHS")
    ref = float(prob.value)
    assert ns["result"].status == "optimal"
    assert abs(ns["result"].objective - ref) <= 1e-6
    assert ns["result"].bound <= ref + 1e-9
    assert ns["via_cvxpy"].status == "optimal"
    assert abs(ns["via_cvxpy"].objective - ref) <= 1e-6
    # the expected-loss optimum, all pairs, and its worst stop (the docs' 1.501)
    avg = _all_pairs_min(5, E, lambda Q: cp.sum(cp.multiply(L, Q)) / 5)
    assert abs(ns["average"].objective - avg) <= 1e-6
    assert ns["per_stop"].max() > ref + 0.3
    assert main(["verify", str(d / "minimax.json")]) == 0


def test_survey_floor_example(ran):
    d, ns = _ns(ran, "survey.json")
    v = np.arange(1, 6.0)
    P = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
    L = np.abs(np.subtract.outer(v, v))
    E = np.ones((5, 5)) - np.eye(5)
    cost = lambda Q: cp.sum(cp.multiply(P[:, None] * L, Q))
    free = _all_pairs_min(5, E, cost)
    floor = _all_pairs_min(5, E, cost, lambda Q: [cp.diag(Q) >= 0.3])
    assert abs(ns["free"].objective - free) <= 1e-6
    assert abs(ns["result"].objective - floor) <= 1e-6
    assert ns["result"].status == "optimal"
    assert np.all(np.diag(ns["result"].mechanism.matrix) >= 0.3 - 1e-9)
    assert np.diag(ns["free"].mechanism.matrix).min() < 1e-9    # the floor binds
    assert main(["verify", str(d / "survey.json")]) == 0


def _ldp_staircases(k, eps):
    e = math.exp(eps)
    return np.array([[e if (s >> x) & 1 else 1.0 for x in range(k)] for s in range(1, 2**k - 1)]).T


def test_chi2_information_example(ran, best_basis):
    d, ns = _ns(ran, "chi2.json")
    P = np.array([0.4, 0.3, 0.2, 0.1])

    def chi2(q):  # written again here, not taken from the docs
        py = float(P @ q)
        return sum(P[x] * (q[x] - py) ** 2 for x in range(4)) / py

    V = _ldp_staircases(4, 1.0)
    ref = best_basis(V, np.array([chi2(V[:, r]) for r in range(V.shape[1])]))
    for name in ("result", "by_colgen"):
        r = ns[name]
        assert r.status == "optimal"
        assert abs(r.objective - ref) <= 1e-6
        assert r.bound >= ref - 1e-9
        assert "rests on mu being sublinear" in r.message
    assert ns["result"].mechanism.certificate["assumption"].startswith("global optimality")
    assert main(["verify", str(d / "chi2.json")]) == 0


def test_yaml_problems_match_the_python(ran):
    _, ns1 = _ns(ran, "minimax.json")
    _, ns2 = _ns(ran, "survey.json")
    docs = [yaml.safe_load(b) for b in YAML]
    full = [doc for doc in docs if isinstance(doc, dict) and "inputs" in doc]
    assert len(full) == 2
    for doc, ns in zip(full, (ns1, ns2)):
        r = mechopt.solve(doc)
        assert r.status == "optimal"
        assert abs(r.objective - ns["result"].objective) <= 1e-9
    # the reference snippets are valid parts of problem files
    for doc in docs:
        if isinstance(doc, dict) and "inputs" not in doc:
            base = {"inputs": ["depot", "school", "market", "park", "bar"], "outputs": "inputs",
                    "privacy": [{"notion": "ldp", "epsilon": 1.0}]}
            if "objective" in doc and doc["objective"].get("values"):
                base["inputs"] = [str(v) for v in doc["objective"]["values"]]
            if "objective" in doc and doc["objective"].get("prior"):
                base["inputs"] = base["inputs"][: len(doc["objective"]["prior"])]
            if "constraints" in doc:
                base["objective"] = {"kind": "expected_loss", "loss": "absolute", "values": [0, 1, 2, 3, 4]}
            p = mechopt.load_problem({**base, **doc})
            assert p.to_spec()
