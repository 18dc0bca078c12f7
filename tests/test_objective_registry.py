"""The objective registry: one list of kinds the parser, the docs and the solvers read — and two
objectives defined in this test file, registered without editing mechopt, that are parsed,
solved, verified exactly and exported, their optima checked against closed forms and an
independent LP."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linprog

import mechopt
from mechopt import InputError, Mechanism, ObjectiveType, load_problem, register_objective, solve, verify
from mechopt.objectives import REGISTRY, LabeledForm, Objective, objective_kinds, objective_scale

BUILTIN = ["expected_loss", "mmse", "histogram_mse", "mutual_information", "bayes_risk", "estimation_variance",
           "worst_case_loss", "weighted"]
DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_the_registry_lists_the_builtin_objectives_first():
    assert objective_kinds()[: len(BUILTIN)] == BUILTIN


def test_the_file_formats_list_of_kinds_is_the_registry():
    text = (DOCS / "formats.md").read_text()
    (line,) = [t for t in text.splitlines() if re.match(r"\s+kind: expected_loss\s+#", t)]
    kinds = re.findall(r"[a-z_]+", line.split("kind:", 1)[1])
    assert kinds == BUILTIN


def test_an_unknown_kind_names_the_registry():
    with pytest.raises(InputError, match=r"objective\.kind: unknown objective 'utility'.*'mmse'"):
        load_problem({"k": 2, "privacy": [{"notion": "ldp", "epsilon": 1}], "objective": {"kind": "utility"}})


SPECS = [
    ("inputs", {"kind": "expected_loss", "loss": "absolute", "values": [0, 1, 4]}),
    ("inputs", {"kind": "worst_case_loss", "loss": [[0, 1, 2], [1, 0, 1], [2, 1, 0]]}),
    ("inputs", {"kind": "weighted", "terms": [{"weight": 1, "kind": "expected_loss"},
                                              {"weight": 0.5, "kind": "worst_case_loss", "loss": "squared"}]}),
    ("free", {"kind": "mmse", "values": [0, 1, 2], "prior": [0.2, 0.3, 0.5]}),
    ("free", {"kind": "histogram_mse"}),
    ("free", {"kind": "mutual_information", "prior": [0.1, 0.2, 0.7]}),
    ("free", {"kind": "bayes_risk", "loss": "squared"}),
    ("free", {"kind": "estimation_variance", "p0": [0.25, 0.25, 0.5]}),
    ("free", {"kind": "weighted", "terms": [{"weight": 2, "kind": "mmse", "values": [1, 0, 0]},
                                            {"weight": 1, "kind": "mutual_information"}]}),
]


@pytest.mark.parametrize("outputs,spec", SPECS, ids=[f"{s['kind']}-{o}" for o, s in SPECS])
def test_every_builtin_kind_round_trips_through_to_spec(outputs, spec):
    doc = {"k": 3, "outputs": outputs, "privacy": [{"notion": "ldp", "epsilon": 1.0}], "objective": spec}
    p = load_problem(doc)
    again = load_problem({**doc, "objective": p.objective.to_spec()})
    assert again.objective.to_spec() == p.objective.to_spec()
    assert again.objective.kind == spec["kind"]
    Q = np.full((3, 3), 1 / 3) if outputs == "free" else np.eye(3)
    assert mechopt.evaluate(again.objective, Q) == mechopt.evaluate(p.objective, Q)


# -- a labeled objective defined here: the Hamming loss with a weight per input ----------------------


class WeightedHamming(ObjectiveType):
    """``sum_x P(x) w_x Pr[report != x]``: a wrong report of input x costs ``w_x``."""

    name = "weighted_hamming_test"
    fields = frozenset({"weights"})
    outputs = "labeled"
    unit_text = "weighted errors"

    def parse(self, spec, prior, ctx):
        w = spec.get("weights")
        if not isinstance(w, list) or len(w) != len(ctx.inputs):
            raise InputError("objective.weights", f"must list one weight per input ({len(ctx.inputs)}), got {w!r}")
        for i, v in enumerate(w):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0 or not math.isfinite(v):
                raise InputError(f"objective.weights[{i}]", f"must be a finite number >= 0, got {v!r}")
        return {"params": (("weights", [float(v) for v in w]),)}

    def labeled_form(self, obj):
        w = np.asarray(obj.param("weights"))
        return LabeledForm(obj.prior[:, None] * w[:, None] * (1.0 - np.eye(len(w))))


register_objective(WeightedHamming)


def _problem(k, eps, prior, weights, **extra):
    return {"k": k, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": eps}],
            "objective": {"kind": "weighted_hamming_test", "prior": prior, "weights": weights, **extra}}


def test_a_registered_objective_parses_and_round_trips():
    p = load_problem(_problem(2, 1.0, [0.5, 0.5], [1.2, 1]))
    assert isinstance(p.objective, Objective) and p.objective.type is REGISTRY["weighted_hamming_test"]
    assert p.objective.to_spec() == {"kind": "weighted_hamming_test", "prior": [0.5, 0.5], "weights": [1.2, 1.0]}
    assert load_problem(p.to_spec()).objective.to_spec() == p.objective.to_spec()
    assert mechopt.evaluate(p.objective, np.array([[0.75, 0.25], [0.5, 0.5]])) == pytest.approx(0.5 * 1.2 * 0.25
                                                                                               + 0.5 * 0.5)


@pytest.mark.parametrize("weights,field", [([1.0], "objective.weights"), ([1.0, -2.0], r"objective.weights\[1\]"),
                                           ([1.0, "x"], r"objective.weights\[1\]"), (None, "objective.weights")])
def test_a_registered_objectives_parameters_are_validated_naming_the_field(weights, field):
    with pytest.raises(InputError, match=f"^{field}: ") as err:
        load_problem(_problem(2, 1.0, [0.5, 0.5], weights))
    assert "\n" not in str(err.value)


def test_a_registered_objective_refuses_unknown_fields_and_free_outputs():
    with pytest.raises(InputError, match=r"^objective\.loss: is not a field of objective 'weighted_hamming_test'"):
        load_problem(_problem(2, 1.0, [0.5, 0.5], [1, 1], loss="hamming"))
    with pytest.raises(InputError, match=r"^outputs: weighted_hamming_test needs labeled outputs"):
        load_problem({**_problem(2, 1.0, [0.5, 0.5], [1, 1]), "outputs": "free"})


@pytest.mark.parametrize("eps,prior,weights", [(1.0, [0.5, 0.5], [1.2, 1.0]), (0.5, [0.5, 0.5], [3.0, 1.0]),
                                               (2.0, [0.3, 0.7], [1.0, 1.0]), (0.1, [0.9, 0.1], [1.0, 4.0])])
def test_the_toy_labeled_optimum_is_the_binary_closed_form(eps, prior, weights, tmp_path):
    # k = 2 under eps-LDP: Q[0, 0] and Q[1, 1] range over the polygon with vertices (1, 0), (0, 1)
    # and the Warner point (e/(1+e), e/(1+e)); the loss is sum_x a_x - (a_0 Q00 + a_1 Q11), a_x = P(x) w_x
    a = np.asarray(prior) * np.asarray(weights)
    e = math.exp(eps)
    expected = a.sum() - max(a[0], a[1], a.sum() * e / (1 + e))
    r = solve(_problem(2, eps, prior, weights))
    assert r.status == "optimal"
    assert r.objective == pytest.approx(expected, rel=1e-9, abs=1e-12)
    path = tmp_path / "m.json"
    r.mechanism.save(path)
    m = Mechanism.load(path)  # strict JSON, digest and exact re-verification
    assert m.objective["kind"] == "weighted_hamming_test" and m.objective["weights"] == [float(w) for w in weights]
    assert verify(m.matrix, m.notions).verified


def _ldp_lp(C, eps):
    """min sum C * Q over k x k eps-LDP channels, written out by hand for scipy (independent of mechopt)."""
    k = C.shape[0]
    A_ub, b_ub = [], []
    for y in range(k):
        for x in range(k):
            for x2 in range(k):
                if x != x2:
                    row = np.zeros(k * k)
                    row[x * k + y], row[x2 * k + y] = 1.0, -math.exp(eps)
                    A_ub.append(row)
                    b_ub.append(0.0)
    A_eq = np.kron(np.eye(k), np.ones(k))
    res = linprog(C.ravel(), A_ub=np.array(A_ub), b_ub=b_ub, A_eq=A_eq, b_eq=np.ones(k), bounds=(0, None),
                  method="highs")
    assert res.status == 0
    return res.fun


@pytest.mark.parametrize("seed", range(3))
def test_the_toy_labeled_optimum_matches_an_independent_lp(seed):
    rng = np.random.default_rng(seed)
    k, eps = 4, float(rng.uniform(0.2, 2.0))
    prior = rng.dirichlet(np.ones(k))
    prior = (prior / prior.sum()).tolist()
    weights = rng.uniform(0.1, 3.0, k).round(3).tolist()
    p = load_problem(_problem(k, eps, prior, weights))
    C = np.asarray(p.objective.prior)[:, None] * np.asarray(weights)[:, None] * (1 - np.eye(k))
    r = solve(p)
    assert r.status == "optimal" and r.certificate.verified
    assert r.objective == pytest.approx(_ldp_lp(C, eps), rel=1e-8, abs=1e-12)


def test_the_toy_is_a_term_of_a_weighted_objective():
    doc = _problem(2, 1.0, [0.5, 0.5], [1.2, 1.0])
    toy = doc["objective"]
    doc["objective"] = {"kind": "weighted", "prior": toy["prior"],
                        "terms": [{"weight": 2.0, "kind": toy["kind"], "weights": toy["weights"]}]}
    r = solve(doc)
    alone = solve(_problem(2, 1.0, [0.5, 0.5], [1.2, 1.0]))
    assert r.status == "optimal" and r.objective == pytest.approx(2 * alone.objective, rel=1e-9)


# -- a free-output objective defined here: the probability the best guess is right ---------------------


class GuessAccuracy(ObjectiveType):
    """``sum_y max_x P(x) Q[x, y]``, maximised: ``mu(v) = max_x P(x) v[x]``, convex and 1-homogeneous."""

    name = "guess_accuracy_test"
    outputs = "free"
    minimize = False
    column_sum = True

    def column_utility(self, obj, V):
        return (obj.prior[:, None] * np.asarray(V, dtype=float)).max(axis=0)

    def offset_sign(self, obj):
        return 0.0, 1.0

    def scale(self, obj):
        return 1.0


register_objective(GuessAccuracy())


@pytest.mark.parametrize("eps,p", [(1.0, 0.5), (0.3, 0.5), (0.5, 0.8), (2.0, 0.3)])
def test_the_toy_free_optimum_is_the_binary_closed_form(eps, p, tmp_path):
    # k = 2: the decoder maps each output to an input; the same polygon gives max(p, 1 - p, e/(1+e))
    e = math.exp(eps)
    doc = {"k": 2, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": eps}],
           "objective": {"kind": "guess_accuracy_test", "prior": [p, 1 - p]}}
    r = solve(doc)
    assert r.status == "optimal"
    assert r.objective == pytest.approx(max(p, 1 - p, e / (1 + e)), rel=1e-9)
    path = tmp_path / "m.json"
    r.mechanism.save(path)
    m = Mechanism.load(path)
    assert m.objective["kind"] == "guess_accuracy_test"
    assert verify(m.matrix, m.notions).verified


def test_registering_a_taken_name_is_refused():
    class Other(WeightedHamming):
        pass

    with pytest.raises(InputError, match="already registered"):
        register_objective(Other)
    with pytest.raises(InputError, match="is a field of every objective"):
        register_objective(type("Bad", (ObjectiveType,), {"name": "bad_fields_test", "fields": frozenset({"prior"})}))


def test_a_type_with_no_value_is_refused_at_registration():
    class NoValue(ObjectiveType):
        name = "no_value_test"
        outputs = "labeled"

    with pytest.raises(InputError, match="has no value"):
        register_objective(NoValue)
    assert "no_value_test" not in REGISTRY


def test_the_toy_is_evaluated_by_the_closed_forms_and_has_its_unit():
    from mechopt._units import objective_unit
    from mechopt.closed_forms import objective_value

    spec = {"kind": "weighted_hamming_test", "weights": [1.0, 2.0]}
    assert objective_value(np.eye(2), spec, prior=[0.5, 0.5], labeled=True) == 0.0
    # every report wrong half the time: 0.5 * 1 * 0.5 + 0.5 * 2 * 0.5
    assert objective_value(np.full((2, 2), 0.5), spec, prior=[0.5, 0.5], labeled=True) == pytest.approx(0.75)
    assert objective_value(np.full((2, 3), 1 / 3), spec, prior=[0.5, 0.5], labeled=False) is None
    assert objective_unit(spec) == "weighted errors"


def test_the_docs_example_runs_twice_and_its_export_verifies(tmp_path, monkeypatch):
    from mechopt.cli import main

    text = (DOCS / "custom_utilities.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "weighted.json" in b]
    monkeypatch.chdir(tmp_path)
    for _ in range(2):  # a re-run script or notebook cell registers the same class again
        ns: dict = {"__name__": "__doc_example__"}
        exec(compile(block, "custom_utilities.md", "exec"), ns)
    a, e = np.array([0.6, 0.5]), math.exp(1.0)
    assert ns["r"].status == "optimal"
    assert ns["r"].objective == pytest.approx(a.sum() - max(a.max(), a.sum() * e / (1 + e)), rel=1e-9)
    assert main(["verify", str(tmp_path / "weighted.json")]) == 0


@pytest.mark.parametrize("seed", range(6))
def test_every_optimum_lies_in_the_prior_range_and_the_constant_one_at_its_top(seed):
    rng = np.random.default_rng(seed)
    k = 5
    prior = rng.dirichlet(np.ones(k))
    L = rng.uniform(0, 3, (k, k))
    np.fill_diagonal(L, 0.0)
    lo = sum(prior[x] * min(L[x]) for x in range(k))  # every input told apart
    hi = min(sum(prior[x] * L[x, y] for x in range(k)) for y in range(k))  # one report for all
    values = []
    for eps in (0.0, 0.3, 1.0, 3.0):
        doc = {"k": k, "privacy": [{"notion": "ldp", "epsilon": eps}],
               "objective": {"kind": "expected_loss", "loss": L.tolist(), "prior": prior.tolist()}}
        r = solve(doc, quiet=True)
        assert r.status == "optimal"
        assert lo - 1e-12 <= r.objective <= hi + 1e-9
        values.append(r.objective)
        scale = objective_scale(load_problem(doc).objective)
    assert values[0] == pytest.approx(hi, abs=1e-9)  # eps = 0: only constant channels
    assert scale == pytest.approx(hi - lo, rel=1e-12)


def test_mmse_is_judged_against_the_prior_variance_so_a_shift_of_f_claims_nothing_more():
    # MMSE does not change when f is shifted; the gap an `optimal` status allows must not
    # grow with the shift (it did with E[f^2] as the scale: 5e-4 on a value of 3.07)
    k = 8
    prior = np.random.default_rng(1).dirichlet(np.ones(k))
    f = np.arange(k, dtype=float)
    var = float(sum(p * (v - prior @ f) ** 2 for p, v in zip(prior, f)))
    values = []
    for shift in (0.0, 1e4):
        r = solve({"k": k, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
                   "objective": {"kind": "mmse", "values": (f + shift).tolist(), "prior": prior.tolist()}}, quiet=True)
        assert r.ok and r.gap is not None
        if r.status == "optimal":
            assert r.gap <= 1e-7 * max(abs(r.objective), var)
        values.append(r.objective)
    assert values[1] == pytest.approx(values[0], rel=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_every_worst_case_optimum_lies_in_its_range(seed):
    rng = np.random.default_rng(100 + seed)
    k = 4
    L = rng.uniform(0, 3, (k, k))
    np.fill_diagonal(L, 0.0)
    prior = np.full(k, 1 / k)
    lo = max(min(L[x]) for x in range(k))  # every channel's worst loss is at least this
    hi = min(max(L[x, y] for x in range(k)) for y in range(k))  # the best channel with one report
    # eps = 0: every row the same distribution r over reports, the game value min_r max_x (L r)_x
    game = linprog(np.r_[np.zeros(k), 1.0], A_ub=np.c_[L, -np.ones(k)], b_ub=np.zeros(k),
                   A_eq=np.r_[np.ones(k), 0.0][None], b_eq=[1.0], bounds=[(0, None)] * k + [(None, None)]).fun
    for eps in (0.0, 0.5, 2.0):
        doc = {"k": k, "privacy": [{"notion": "ldp", "epsilon": eps}],
               "objective": {"kind": "worst_case_loss", "loss": L.tolist(), "prior": prior.tolist()}}
        r = solve(doc, quiet=True)
        assert r.status == "optimal"
        assert lo - 1e-9 <= r.objective <= hi + 1e-9
        if eps == 0.0:
            assert r.objective == pytest.approx(game, abs=1e-8)
    assert objective_scale(load_problem(doc).objective) == pytest.approx(hi - lo, rel=1e-12)
