"""Problem files (mechopt/_problem.py): laws of the parser for every registered notion.

A problem read back from its own ``to_spec`` is the same problem; the objective's
defaults are the documented ones (uniform prior, Hamming loss over the outputs); the
typed problem resolves labels, losses and priors exactly as docs/formats.md says.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechopt._errors import InputError
from mechopt._problem import load_problem, problem_from_dict
from mechopt.notions import notion_names

# one valid notion spec per registered name, over inputs "0".."k-1"
SPECS = {
    "ldp": lambda k: {"notion": "ldp", "epsilon": 1.25},
    "eldp": lambda k: {"notion": "eldp", "matrix": [[0 if i == j else 0.5 + (i + j) % 3 for j in range(k)]
                                                   for i in range(k)]},
    "block": lambda k: {"notion": "block", "epsilon": 0.75, "blocks": [[str(x) for x in range(k // 2)],
                                                                       [str(x) for x in range(k // 2, k)]]},
    "high_low": lambda k: {"notion": "high_low", "epsilon": 0.5, "sensitive": ["0"]},
    "metric": lambda k: {"notion": "metric", "epsilon": 0.3,
                         "edges": [[str(x), str(x + 1), 1 + x] for x in range(k - 1)]},
    "lip": lambda k: {"notion": "lip", "epsilon": 1.0, "prior": [1 / k] * k},
    "bp_lip": lambda k: {"notion": "bp_lip", "epsilon": 1.0, "priors": [[1 / k] * k, [1.0] + [0.0] * (k - 1)]},
    "wc_lip": lambda k: {"notion": "wc_lip", "epsilon": 2.0},
    "uldp": lambda k: {"notion": "uldp", "epsilon": 1.0, "sensitive": ["0", "1"]},
}


def test_every_registered_notion_has_a_spec_here():
    # a new notion in the registry must be added to SPECS (and so to the laws below)
    assert set(notion_names()) <= set(SPECS), set(notion_names()) - set(SPECS)


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.parametrize("outputs", ["inputs", "free"])
def test_to_spec_round_trips(name, outputs):
    k = 4
    objective = ({"kind": "expected_loss", "loss": "hamming"} if outputs == "inputs"
                 else {"kind": "mmse", "values": [0, 1, 2, 3]})
    p = load_problem({"k": k, "outputs": outputs, "privacy": [SPECS[name](k)], "objective": objective})
    q = problem_from_dict(p.to_spec())
    assert q.inputs == p.inputs and q.outputs == p.outputs
    assert q.privacy_spec() == p.privacy_spec()
    assert q.objective.kind == p.objective.kind
    assert np.array_equal(q.objective.prior, p.objective.prior)
    for a, b in [(q.objective.loss, p.objective.loss), (q.objective.values, p.objective.values)]:
        assert (a is None and b is None) or np.array_equal(a, b)


@given(k=st.integers(2, 7), m=st.integers(1, 7), data=st.data())
@settings(max_examples=40, deadline=None)
def test_default_objective_is_hamming_under_a_uniform_prior(k, m, data):
    outputs = [f"y{j}" for j in range(m)]
    p = load_problem({"inputs": [f"x{i}" for i in range(k)], "outputs": outputs,
                      "privacy": [{"notion": "ldp", "epsilon": 1}], "objective": {"kind": "expected_loss"}})
    assert np.array_equal(p.objective.prior, np.full(k, 1 / k))
    assert p.objective.loss.shape == (k, m)
    # inputs and outputs share no label: every output is a loss of 1 for every input
    assert np.array_equal(p.objective.loss, np.ones((k, m)))


def test_hamming_loss_matches_labels_not_positions():
    p = load_problem({"inputs": ["a", "b", "c"], "outputs": ["c", "a"], "privacy": [{"notion": "ldp", "epsilon": 1}],
                      "objective": {"kind": "expected_loss", "loss": "hamming"}})
    assert p.objective.loss.tolist() == [[1, 0], [1, 1], [0, 1]]


def test_absolute_and_squared_losses_read_numeric_labels():
    doc = {"inputs": ["1", "2", "4"], "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1}]}
    p = load_problem({**doc, "objective": {"kind": "expected_loss", "loss": "absolute"}})
    q = load_problem({**doc, "objective": {"kind": "expected_loss", "loss": "squared"}})
    d = np.abs(np.subtract.outer([1, 2, 4], [1, 2, 4]))
    assert np.array_equal(p.objective.loss, d) and np.array_equal(q.objective.loss, d**2)


def test_k_names_inputs_by_position():
    p = load_problem({"k": 3, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1}],
                      "objective": {"kind": "mutual_information"}})
    assert p.inputs == ("0", "1", "2") and p.free_outputs


@pytest.mark.parametrize("doc, field", [
    ({"k": 0}, "k"),
    ({"k": 2, "inputs": ["a", "b"]}, "inputs"),
    ({"k": 2, "outputs": "free", "objective": {"kind": "expected_loss", "loss": "hamming"}}, "outputs"),
    ({"k": 2, "objective": {"kind": "mmse", "values": [0, 1, 2]}}, "values"),
    ({"k": 2, "objective": {"kind": "expected_loss", "prior": [0.2, 0.2]}}, "prior"),
])
def test_bad_fields_name_themselves(doc, field):
    base = {"outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1}],
            "objective": {"kind": "expected_loss", "loss": "hamming"}}
    with pytest.raises(InputError) as exc:
        load_problem({**base, **doc})
    assert field in str(exc.value)
