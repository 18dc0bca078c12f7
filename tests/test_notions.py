"""The notions registry: one list of names that the parser, the schema, the verifier and the
budget read — and a notion defined in this test file, registered without editing mechopt,
that is parsed, solved, verified exactly and exported, and that the closed-form report, the
baselines, the trade-off, the privacy budget and the standard-library client answer."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from fractions import Fraction
from importlib import resources
from typing import Any, Sequence

import numpy as np
import pytest
import scipy.sparse as sp

import mechopt
from mechopt import InputError, Mechanism, load_problem, solve, verify
from mechopt.notions import ADDITIVE, REGISTRY, ColumnConstraints, Notion, notion_names, register_notion

BUILTIN = ["block", "bp_lip", "eldp", "high_low", "ldp", "lip", "metric", "uldp", "wc_lip"]


def test_the_registry_is_the_one_list_of_names():
    assert notion_names(builtin_only=True) == BUILTIN


def test_the_schema_file_lists_the_registry():
    text = resources.files("mechopt").joinpath("schema/mechanism.schema.json").read_text()
    enum = json.loads(text)["properties"]["privacy"]["items"]["properties"]["notion"]["enum"]
    assert sorted(enum) == BUILTIN


def test_every_builtin_notion_brings_an_exact_checker_from_the_verifier():
    import mechopt._verify as verifier

    for name in BUILTIN:
        checker = REGISTRY[name].checker
        # the verifier's own code, not a method of the notion that builds the LP rows
        assert checker is not None and checker.__module__ == verifier.__name__, name


def test_the_budget_reads_the_notions_composition():
    from mechopt.runtime._budget import BUDGET_NOTIONS

    additive = {n for n in BUILTIN if REGISTRY[n].cls.composition is not None
                and REGISTRY[n].cls.composition.kind == "additive"}
    assert additive == {"ldp", "block", "high_low", "metric", "uldp"}
    assert additive | {"lip", "bp_lip"} <= set(BUDGET_NOTIONS)


def test_an_unknown_notion_names_the_registry():
    with pytest.raises(InputError, match=r"privacy\[0\]\.notion: unknown notion 'gdpr'.*'ldp'"):
        load_problem({"k": 2, "privacy": [{"notion": "gdpr"}]})


def test_a_notion_without_an_exact_checker_is_refused():
    class Loose(Notion):
        name = "loose_test_notion"

        def column_constraints(self, k):  # pragma: no cover - never built
            raise AssertionError

        def achieved(self, Q):  # pragma: no cover
            return 0.0

        def to_spec(self, inputs):  # pragma: no cover
            return {"notion": self.name}

    with pytest.raises(InputError, match="needs an exact checker"):
        register_notion(Loose)


# -- a notion defined here: "the first input is hidden from the second" --------------------------


@dataclass(frozen=True)
class OneWay(Notion):
    """``q[a] <= e^ε q[b]`` on every column, for one ordered pair of inputs ``(a, b)``."""

    name = "one_way_test"
    fields = ("epsilon", "pair")
    required = ("epsilon", "pair")
    # an E-LDP notion with a fixed pattern: the budgets of repeated reports add up
    composition = ADDITIVE
    epsilon: float = 1.0
    pair: Any = ()

    def bind(self, inputs: Sequence[str]) -> "OneWay":
        a, b = (list(inputs).index(p) for p in self.pair)
        return OneWay(float(self.epsilon), (a, b))

    def eldp_matrix(self, k: int) -> np.ndarray:
        E = np.full((k, k), np.inf)
        np.fill_diagonal(E, 0.0)
        E[self.pair[0], self.pair[1]] = self.epsilon
        return E

    def column_constraints(self, k: int) -> ColumnConstraints:
        a, b = self.pair
        A = sp.csr_matrix(([1.0, -math.exp(self.epsilon)], ([0, 0], [a, b])), shape=(1, k))
        return ColumnConstraints(k, A, np.zeros(1), eldp=self.eldp_matrix(k))

    def achieved(self, Q: np.ndarray) -> float:
        a, b = self.pair
        r = max((Q[a, y] / Q[b, y] if Q[b, y] > 0 else math.inf) for y in range(Q.shape[1]) if Q[a, y] > 0)
        return max(0.0, math.log(r))

    def to_spec(self, inputs: Sequence[str]) -> dict:
        return {"notion": self.name, "epsilon": self.epsilon, "pair": [inputs[p] for p in self.pair]}


def one_way_exact(Q, notion) -> tuple[bool, str]:
    """The exact check, written here: decimals as written, e^ε bounded below at 50 digits."""
    from decimal import Decimal, localcontext

    a, b = notion.pair
    with localcontext() as ctx:
        ctx.prec = 50
        e_lo = Fraction(Decimal(repr(float(notion.epsilon))).exp()) * (1 - Fraction(1, 10**45))
    for y in range(Q.shape[1]):
        if Fraction(repr(float(Q[a, y]))) > e_lo * Fraction(repr(float(Q[b, y]))):
            return False, f"column {y}: Q[{a}][{y}] > e^eps Q[{b}][{y}]"
    return True, ""


@pytest.fixture(scope="module")
def one_way():
    register_notion(OneWay, checker=one_way_exact)
    yield OneWay
    REGISTRY.pop(OneWay.name)


@pytest.mark.parametrize("outputs,kind", [("inputs", "expected_loss"), ("free", "mutual_information")])
def test_a_notion_registered_in_a_test_file_is_parsed_solved_verified_exported(one_way, tmp_path, outputs, kind):
    doc = {"inputs": ["a", "b", "c"], "outputs": outputs,
           "privacy": [{"notion": "one_way_test", "epsilon": 0.5, "pair": ["a", "b"]}],
           "objective": {"kind": kind}}
    problem = load_problem(doc)
    assert isinstance(problem.notions[0], OneWay) and problem.notions[0].pair == (0, 1)
    r = solve(problem, quiet=True)
    assert r.status == "optimal" and r.certificate.verified
    Q = r.mechanism.matrix
    assert one_way_exact(Q, problem.notions[0])[0]
    # the constraint binds: without it the optimum is the identity (error 0, MI = ln 3)
    if kind == "expected_loss":
        assert r.objective > 1e-3
        # a reports itself; b must then put e^-0.5 of its mass on output a (and the rest on b)
        truth = math.exp(-0.5) / 3
        assert r.objective == pytest.approx(truth, rel=1e-7)
    else:
        assert r.objective < math.log(3) - 1e-3
    path = tmp_path / "m.json"
    r.mechanism.save(path)
    again = Mechanism.load(path)  # schema, digest and exact re-verification through the registry
    assert again.certificate["verified"] and verify(again.matrix, again.notions).verified
    # a violating matrix is refused by the notion's own exact check
    bad = np.array([[0.9, 0.1, 0.0], [0.1, 0.9, 0.0], [0.0, 0.0, 1.0]])
    assert not verify(bad, problem.notions).verified


def test_the_registered_notion_through_closed_forms_baselines_tradeoff_budget_and_client(one_way, tmp_path):
    from mechopt import client
    from mechopt._baselines import baselines, baselines_report
    from mechopt._closed_form_report import closed_form_report
    from mechopt._plots import tradeoff
    from mechopt.closed_forms import applicable, compose_parallel
    from mechopt.runtime import BudgetExceededError, PrivacyBudget

    doc = {"inputs": ["a", "b", "c"], "outputs": "inputs",
           "privacy": [{"notion": "one_way_test", "epsilon": 0.5, "pair": ["a", "b"]}],
           "objective": {"kind": "expected_loss"}}
    problem = load_problem(doc)
    notion = problem.notions[0]
    # optimum: a reports itself, b must put e^-eps of its mass on a; Hamming loss e^-eps / 3
    optimum = math.exp(-0.5) / 3

    # closed forms: none is stated for this notion, and the report says so instead of raising
    assert applicable(problem) == []
    report = closed_form_report(problem)
    assert report["note"] == "no closed form applies to this problem"
    assert not any(row["applies"] for row in report["closed_forms"])
    assert report["optimum"] == pytest.approx(optimum, rel=1e-7)

    # baselines: eps-LDP implies the notion at its own eps (its E-matrix says so), but the
    # family verifier has no exact check for a run-time notion: an empty answer, with the reason
    assert notion.ldp_equivalent(3) == 0.5
    assert baselines(problem) == []
    answer = baselines_report(problem)
    assert answer["baselines"] == [] and "one_way_test" in answer["note"]

    # trade-off along the notion's eps: e^-eps / 3, against k-RR's 2 / (e^eps + 2) under eps-LDP
    data = tradeoff(problem, "0.5,1")
    assert data["notion"] == "one_way_test"
    assert data["curves"]["one_way_test"] == pytest.approx([optimum, math.exp(-1) / 3], rel=1e-7)
    assert data["curves"]["ldp"] == pytest.approx([2 / (math.exp(e) + 2) for e in (0.5, 1.0)], rel=1e-7)
    assert not any(label.startswith("baseline") for label in data["curves"])

    # the privacy budget reads the notion's composition rule: by class, instance or name
    for given in (OneWay, notion, "one_way_test"):
        ledger = PrivacyBudget(1.0, given)
        assert ledger.notion == "one_way_test"
        assert ledger.spend(0.5) == 0.5 and ledger.spend(0.5) == 1.0
        with pytest.raises(BudgetExceededError):
            ledger.spend(0.25)
    # the rule is right: two independent 0.5-reports of the optimal channel are one 1.0-report
    Q = solve(problem, quiet=True).mechanism.matrix
    twice = compose_parallel(Q, Q)
    assert one_way_exact(twice, OneWay(1.0 + 1e-9, (0, 1)))[0]
    assert not one_way_exact(twice, OneWay(0.99, (0, 1)))[0]
    # a notion that states no composition rule is refused by name
    with pytest.raises(InputError, match=r"notion: must be one of .*one_way_test.*got 'wc_lip'"):
        PrivacyBudget(1.0, "wc_lip")

    # the standard-library client cannot run a checker registered at run time: it refuses
    # the file with the notion named (the numpy side, Mechanism.load, verifies it)
    path = tmp_path / "one_way.json"
    solve(problem, quiet=True).mechanism.save(path)
    assert Mechanism.load(path).certificate["verified"]
    with pytest.raises(InputError, match=r"privacy\[0\]\.notion: unknown notion 'one_way_test'"):
        client.load_document(path)


def test_every_builtin_notion_is_exported_through_mechopt(one_way):
    assert set(BUILTIN) < set(mechopt.notions.notion_names())


def test_the_verifier_s_uldp_role_rule_agrees_with_the_notions():
    """The verifier keeps its own copy of the ULDP role rule (it shares no code with the notions)."""
    from mechopt._verify import _uldp_protected
    from mechopt.notions import uldp_roles

    rng = np.random.default_rng(5)
    for _ in range(200):
        k, m = rng.integers(2, 6), rng.integers(1, 8)
        Q = rng.random((k, m)) * (rng.random((k, m)) < rng.choice([0.2, 0.5, 0.9]))
        sensitive = sorted(rng.choice(k, size=rng.integers(0, k + 1), replace=False).tolist())
        roles = uldp_roles(Q, sensitive)
        assert [y for y, r in enumerate(roles) if r != "invertible"] == _uldp_protected(Q, sensitive)
        assert all((r == "zero") == (not Q[:, y].any()) for y, r in enumerate(roles))


def test_box_prior_vertices_are_the_boxs_vertices():
    # the definition, one candidate at a time: a vertex of a box cut by sum P = 1 has at most
    # one coordinate strictly between its bounds
    import itertools

    from mechopt.notions._lip import box_prior_vertices

    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(200):
        k = int(rng.integers(2, 8))
        lo = np.round(rng.uniform(0, 1.0 / k, k), int(rng.integers(1, 4)))
        hi = np.minimum(1, np.round(lo + rng.uniform(0, 0.8, k), int(rng.integers(1, 4))))
        if lo.sum() > 1 or hi.sum() < 1:
            continue
        want = set()
        for j in range(k):
            for bits in itertools.product((0, 1), repeat=k - 1):
                P = [0.0] * k
                others = [i for i in range(k) if i != j]
                for i, b in zip(others, bits):
                    P[i] = float(hi[i] if b else lo[i])
                rest = 1.0 - math.fsum(P)
                if lo[j] - 1e-12 <= rest <= hi[j] + 1e-12:
                    P[j] = min(max(rest, lo[j]), hi[j])
                    want.add(tuple(round(v, 12) for v in P))
        got = {tuple(round(float(v), 12) for v in row) for row in box_prior_vertices(lo, hi)}
        assert got == want, (lo, hi)
        checked += 1
    assert checked > 50
