"""The closed-form registry: every entry applies, builds a channel, and meets its notion where it claims to.

For each entry and several parameter points: ``applies`` is true, ``build`` returns a
channel with one label per output, and the notions of the spec hold (checked from the
definitions) exactly when the entry's ``regime`` predicts (always, when ``regime`` is
``None``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import mechopt.closed_forms as cf
from mechopt import load_problem
from mechopt._errors import InputError
from mechopt.closed_forms import (
    applicable,
    block_budget,
    bp_lip_budget,
    bp_lip_vertices,
    closed_form_objective,
    eldp_excess,
    high_low_budget,
    ldp_budget,
    lip_budget,
    registry,
    uldp_budget,
)

TOL = 1e-9


def achieved_ok(problem, Q):
    """All notions of the problem hold for Q, from the definitions (docs/model.md), read from the problem file."""
    idx = {lab: i for i, lab in enumerate(problem.inputs)}

    def ix(items):
        return [idx[i] if isinstance(i, str) else int(i) for i in items]

    for n in problem.privacy_spec():
        kind, eps = n["notion"], n.get("epsilon")
        if kind in ("ldp", "wc_lip"):
            ok = ldp_budget(Q) <= eps + TOL
        elif kind == "eldp":
            E = np.array([[math.inf if v == "inf" else float(v) for v in row] for row in n["matrix"]])
            ok = eldp_excess(Q, E) <= TOL
        elif kind == "block":
            ok = block_budget(Q, [ix(b) for b in n["blocks"]]) <= eps + TOL
        elif kind == "high_low":
            ok = high_low_budget(Q, ix(n["sensitive"])) <= eps + TOL
        elif kind == "lip":
            ok = lip_budget(Q, n["prior"]) <= eps + TOL
        elif kind == "bp_lip":
            Ps = n["priors"] if "priors" in n else bp_lip_vertices(n["lower"], n["upper"])
            ok = bp_lip_budget(Q, Ps) <= eps + TOL
        elif kind == "uldp":
            ok = uldp_budget(Q, ix(n["sensitive"])) <= eps + TOL
        elif kind == "metric":
            k = problem.k
            D = np.full((k, k), math.inf)
            np.fill_diagonal(D, 0.0)
            for a, b, length in n["edges"]:
                D[idx[a], idx[b]] = D[idx[b], idx[a]] = min(D[idx[a], idx[b]], length)
            for z in range(k):
                D = np.minimum(D, D[:, [z]] + D[[z], :])
            ok = eldp_excess(Q, eps * D) <= TOL
        else:  # pragma: no cover
            raise AssertionError(kind)
        if not ok:
            return False
    return True


def S(k, notions, outputs="inputs", objective=None, inputs=None):
    doc = {"inputs": inputs or [f"x{i}" for i in range(k)], "outputs": outputs, "privacy": notions}
    if objective is not None:
        doc["objective"] = objective
    return load_problem(doc)


# (entry name, spec) pairs; several parameter points per entry, in and out of regime
POINTS = [
    ("warner_rr", S(2, [{"notion": "ldp", "epsilon": 0.5}])),
    ("warner_rr", S(2, [{"notion": "wc_lip", "epsilon": 2.0}])),
    ("mangat_rr", S(2, [{"notion": "uldp", "epsilon": 1.0, "sensitive": ["x1"]}])),
    ("mangat_rr", S(2, [{"notion": "uldp", "epsilon": 0.3, "sensitive": ["x0"]}])),
    ("mangat_rr", S(2, [{"notion": "high_low", "epsilon": 1.0, "sensitive": ["x0"]}])),
    ("mangat_rr", S(2, [{"notion": "eldp", "matrix": [[0, "inf"], [0.7, 0]]}])),
    ("binary_eldp_optimum", S(2, [{"notion": "eldp", "matrix": [[0, 0.5], [2.0, 0]]}])),
    ("binary_eldp_optimum", S(2, [{"notion": "eldp", "matrix": [[0, 1.0], [1.0, 0]]}])),
    ("binary_eldp_optimum", S(2, [{"notion": "high_low", "epsilon": 1.0, "sensitive": ["x1"]}])),
    ("binary_eldp_optimum_corrected", S(2, [{"notion": "eldp", "matrix": [[0, 0.5], [2.0, 0]]}])),
    ("binary_eldp_optimum_corrected", S(2, [{"notion": "high_low", "epsilon": 1.0, "sensitive": ["x1"]}])),
    ("binary_eldp_optimum_corrected", S(2, [{"notion": "block", "epsilon": 1.0, "blocks": [["x0"], ["x1"]]}])),
    ("binary_cone_optimum", S(2, [{"notion": "lip", "epsilon": 1.0, "prior": [0.9, 0.1]}])),
    ("binary_cone_optimum", S(2, [{"notion": "lip", "epsilon": 1.0, "prior": [0.9, 0.1]},
                                  {"notion": "ldp", "epsilon": 1.5}])),
    ("binary_cone_optimum", S(2, [{"notion": "bp_lip", "epsilon": 0.8, "lower": [0.6, 0.1], "upper": [0.9, 0.4]}])),
    ("binary_cone_optimum", S(2, [{"notion": "metric", "epsilon": 0.5, "edges": [["x0", "x1", 2.0]]}])),
    ("binary_cone_optimum", S(2, [{"notion": "eldp", "matrix": [[0, "inf"], [0.4, 0]]},
                                  {"notion": "high_low", "epsilon": 2.0, "sensitive": ["x0"]}])),
    ("k_rr", S(5, [{"notion": "ldp", "epsilon": 1.2}])),
    ("lip_rr", S(3, [{"notion": "lip", "epsilon": 1.0, "prior": [0.1, 0.2, 0.7]}])),
    ("lip_rr", S(3, [{"notion": "lip", "epsilon": 2.0, "prior": [0.2, 0.3, 0.5]}])),
    ("lip_rr", S(4, [{"notion": "lip", "epsilon": 0.3, "prior": [0.25, 0.25, 0.25, 0.25]}])),
    ("lip_rr_calibrated", S(3, [{"notion": "lip", "epsilon": 1.0, "prior": [0.1, 0.2, 0.7]}])),
    ("lip_rr_calibrated", S(3, [{"notion": "lip", "epsilon": 2.0, "prior": [0.2, 0.3, 0.5]}])),
    ("binary_lip_rr", S(2, [{"notion": "lip", "epsilon": 1.0, "prior": [0.9, 0.1]}])),
    ("binary_lip_rr", S(2, [{"notion": "lip", "epsilon": 1.0, "prior": [0.6, 0.4]}])),
    ("uncertain_prior_lip_rr", S(2, [{"notion": "bp_lip", "epsilon": 1.0, "priors": [[0.9, 0.1], [0.8, 0.2]]}])),
    ("uncertain_prior_lip_rr", S(2, [{"notion": "bp_lip", "epsilon": 1.0, "lower": [0.4, 0.35], "upper": [0.65, 0.6]}])),
    ("uncertain_prior_lip_optimum", S(2, [{"notion": "bp_lip", "epsilon": 1.0, "priors": [[0.9, 0.1], [0.8, 0.2]]}])),
    ("urr", S(6, [{"notion": "uldp", "epsilon": 0.5, "sensitive": ["x1", "x4"]}])),
    ("urappor", S(5, [{"notion": "uldp", "epsilon": 1.0, "sensitive": ["x0", "x2"]}], outputs="free")),
    ("high_low_hadamard", S(7, [{"notion": "high_low", "epsilon": 1.0, "sensitive": ["x2", "x5", "x6"]}],
                             outputs="free")),
    ("block_hadamard", S(6, [{"notion": "block", "epsilon": 0.8, "blocks": [["x0", "x1", "x2"], ["x3"], ["x4", "x5"]]}],
                          outputs="free")),
]


def test_every_entry_is_exercised_and_well_formed():
    names = [c.name for c in registry()]
    assert len(names) == len(set(names))
    assert set(names) == {name for name, _ in POINTS}
    for c in registry():
        assert c.source and c.status in ("as printed", "corrected")


@pytest.mark.parametrize("name,spec", POINTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(POINTS)])
def test_entry_builds_a_channel_and_meets_its_notion_where_predicted(name, spec):
    entry = {c.name: c for c in registry()}[name]
    assert entry.applies(spec)
    assert entry in applicable(spec)
    outputs, Q = entry.build(spec)
    assert len(outputs) == Q.shape[1] == len(set(outputs))
    assert Q.shape[0] == spec.k
    assert np.all(Q >= 0) and np.allclose(Q.sum(axis=1), 1.0, atol=1e-12)
    predicted = True if entry.regime is None else entry.regime(spec)
    assert achieved_ok(spec, Q) == predicted


def test_regimes_fail_where_documented():
    reg = {c.name: c for c in registry()}
    fails = [("lip_rr", 0), ("binary_lip_rr", 0), ("uncertain_prior_lip_rr", 0), ("binary_eldp_optimum", 0)]
    for name, which in fails:
        spec = [s for n, s in POINTS if n == name][which]
        assert reg[name].regime(spec) is False


def test_applicable_sets():
    names = lambda spec: [c.name for c in applicable(spec)]  # noqa: E731
    assert names(S(2, [{"notion": "ldp", "epsilon": 1.0}])) == [
        "warner_rr", "binary_eldp_optimum", "binary_eldp_optimum_corrected", "binary_cone_optimum", "k_rr"]
    assert names(S(3, [{"notion": "ldp", "epsilon": 1.0}])) == ["k_rr"]
    lip3 = [{"notion": "lip", "epsilon": 1.0, "prior": [0.2, 0.3, 0.5]}]
    assert names(S(3, lip3)) == ["lip_rr", "lip_rr_calibrated"]
    assert names(S(3, [{**lip3[0], "delta": 0.1}])) == []
    uldp = [{"notion": "uldp", "epsilon": 1.0, "sensitive": ["x0"]}]
    assert names(S(4, uldp)) == ["urr"]
    assert names(S(4, uldp, outputs="free")) == ["urr", "urappor"]
    assert names(S(11, uldp, outputs="free")) == ["urr"]  # uRAPPOR's matrix needs k <= 10
    hl = [{"notion": "high_low", "epsilon": 1.0, "sensitive": ["x0"]}]
    assert names(S(4, hl)) == []  # Hadamard outputs are not labels
    assert names(S(4, [*hl, {"notion": "ldp", "epsilon": 1.0}], outputs="free")) == []


def test_objective_formulas_match_the_built_channel():
    reg = {c.name: c for c in registry()}
    obj = {"kind": "mmse", "values": [0, 1]}
    for p1 in (0.1, 0.4):
        spec = S(2, [{"notion": "lip", "epsilon": 1.0, "prior": [1 - p1, p1]}], objective=obj, outputs="free")
        outs, Q = reg["binary_lip_rr"].build(spec)
        assert reg["binary_lip_rr"].objective_formula(spec) == pytest.approx(closed_form_objective(spec, outs, Q))
    # eq. (21) is stated for the LIP prior: another objective prior gets no printed value
    other = S(2, [{"notion": "lip", "epsilon": 1.0, "prior": [0.9, 0.1]}], outputs="free",
              objective={**obj, "prior": [0.8, 0.2]})
    assert reg["binary_lip_rr"].objective_formula(other) is None
    spec = S(2, [{"notion": "ldp", "epsilon": 0.7}], outputs="free",
             objective={"kind": "mmse", "values": [1, 3], "prior": [0.2, 0.8]})
    outs, Q = reg["warner_rr"].build(spec)
    assert reg["warner_rr"].objective_formula(spec) == pytest.approx(closed_form_objective(spec, outs, Q))
    assert reg["warner_rr"].objective_formula(S(2, [{"notion": "ldp", "epsilon": 0.7}])) is None


def test_closed_form_objective_kinds():
    base = [{"notion": "lip", "epsilon": 1.0, "prior": [0.2, 0.3, 0.5]}]
    reg = {c.name: c for c in registry()}
    for kind, extra in [("expected_loss", {"loss": "hamming"}), ("expected_loss", {"loss": "squared", "values": [0, 1, 2]}),
                        ("mmse", {"values": [0, 1, 5]}), ("histogram_mse", {}), ("mutual_information", {}),
                        ("bayes_risk", {"loss": "absolute", "values": [0, 1, 2]}), ("estimation_variance", {})]:
        spec = S(3, base, objective={"kind": kind, **extra}, outputs="inputs" if kind == "expected_loss" else "free")
        outs, Q = reg["lip_rr"].build(spec)
        v = closed_form_objective(spec, outs, Q)
        assert v is not None and math.isfinite(v) and v >= 0
    # the expected loss is defined over the problem's outputs only: not for uRAPPOR's bit strings
    labeled = S(3, [{"notion": "uldp", "epsilon": 1.0, "sensitive": ["x0"]}],
                objective={"kind": "expected_loss", "loss": "hamming"})
    outs, Q = reg["urappor"].build(labeled)
    assert closed_form_objective(labeled, outs, Q) is None


def test_closed_forms_read_the_loaded_problem():
    problem = load_problem({"inputs": ["home", "work"], "outputs": "inputs",
                            "privacy": [{"notion": "ldp", "epsilon": 1.0}],
                            "objective": {"kind": "expected_loss", "loss": "hamming"}})
    assert [c.name for c in applicable(problem)][0] == "warner_rr"
    # labels are resolved once, by the parser: the builders read input indices
    problem = S(3, [{"notion": "uldp", "epsilon": 1.0, "sensitive": ["x2"]}])
    outs, Q = {c.name: c for c in registry()}["urr"].build(problem)
    assert outs == ["x0", "x1", "x2"] and uldp_budget(Q, [2]) <= 1.0 + TOL
    # bad parameters never reach a closed form: the parser refuses them with the field
    with pytest.raises(InputError, match=r"privacy\[0\]\.epsilon: must be >= 0"):
        S(2, [{"notion": "ldp", "epsilon": -1}])
    with pytest.raises(InputError, match="is not an input"):
        S(3, [{"notion": "uldp", "epsilon": 1.0, "sensitive": ["nope"]}])
    with pytest.raises(InputError, match=r"privacy\[0\]\.matrix\[0\]\[1\]: must be >= 0"):
        S(2, [{"notion": "eldp", "matrix": [[0, -1], [1, 0]]}])


def test_public_names_resolve():
    for name in cf.__all__:
        assert getattr(cf, name) is not None
    assert len(cf.__all__) == len(set(cf.__all__))
