"""Issue 14's reproducers, each a regression test: the ε range, false optima, hostile files.

Expected values are independent of the solver: closed forms (k-RR's error), channels built
here and verified exactly, or the plain rule stated in the notion's definition.
"""

from __future__ import annotations

import json
import math
import resource
import time

import numpy as np
import pytest

import mechopt
from mechopt import InputError, load_problem, solve, verify
from mechopt.cli import main


def run(argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


# -- the whole ε range: never infeasible, never a failure, always verified --------------------------

NOTIONS = {
    "ldp": lambda e, k: {"notion": "ldp", "epsilon": e},
    "eldp": lambda e, k: {"notion": "eldp", "matrix": [[0 if a == b else e for b in range(k)] for a in range(k)]},
    "lip": lambda e, k: {"notion": "lip", "epsilon": e, "prior": [0.2, 0.3, 0.5][:k]},
    "bp_lip": lambda e, k: {"notion": "bp_lip", "epsilon": e, "priors": [[0.2, 0.3, 0.5], [0.4, 0.4, 0.2]]},
    "uldp": lambda e, k: {"notion": "uldp", "epsilon": e, "sensitive": ["0"]},
    "high_low": lambda e, k: {"notion": "high_low", "epsilon": e, "sensitive": ["0"]},
}


@pytest.mark.parametrize("eps", [1e-9, 30.0, 35.0, 700.0, 1e5])
@pytest.mark.parametrize("name", sorted(NOTIONS))
@pytest.mark.parametrize("outputs", ["inputs", "free"])
def test_every_budget_gives_a_verified_channel(outputs, name, eps):
    k = 3
    obj = {"kind": "expected_loss"} if outputs == "inputs" else {"kind": "mutual_information"}
    r = solve({"k": k, "outputs": outputs, "privacy": [NOTIONS[name](eps, k)], "objective": obj}, quiet=True)
    assert r.status in ("optimal", "feasible"), r.message
    assert verify(r.mechanism.matrix, load_problem({"k": k, "privacy": [NOTIONS[name](eps, k)]}).notions).verified
    if r.bound is not None:  # a proven bound is never beaten by the exported channel
        assert (r.bound <= r.objective + 1e-15) if outputs == "inputs" else (r.bound >= r.objective - 1e-15)


@pytest.mark.parametrize("eps", [1.0, 20.0, 35.0, 100.0])
def test_labeled_ldp_is_krr_over_the_whole_range(eps):
    """Labeled LDP, Hamming, uniform prior: the optimum is k-RR's error (k - 1)/(e^ε + k - 1)."""
    k = 4
    r = solve({"k": k, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": eps}],
               "objective": {"kind": "expected_loss"}}, quiet=True)
    truth = (k - 1) / (math.exp(eps) + k - 1)
    assert r.status == "optimal"
    assert r.bound <= truth * (1 + 1e-12)
    assert r.objective >= truth * (1 - 1e-12) and r.objective - truth <= 1e-7


@pytest.mark.parametrize("eps", [30.0, 35.0, 50.0])
def test_bp_lip_at_large_budgets_is_not_an_optimum_with_a_false_bound(eps):
    """Issue 14: BP-LIP at large ε was 'optimal' at 0.5 while a verified channel had 5.5e-13.

    Here an independent near-identity channel (the identity mixed with the uniform
    channel by the smallest t that passes the exact check) sets the bar.
    """
    k = 3
    priors = [[0.2, 0.3, 0.5], [0.4, 0.4, 0.2]]
    notion = {"notion": "bp_lip", "epsilon": eps, "priors": priors}
    r = solve({"k": k, "outputs": "inputs", "privacy": [notion], "objective": {"kind": "expected_loss"}}, quiet=True)
    ns = load_problem({"k": k, "privacy": [notion]}).notions
    t = 1e-15
    while not verify((1 - t) * np.eye(k) + t / k, ns).verified:
        t *= 2
    reference = t * (k - 1) / k  # its Hamming error under the uniform prior
    assert r.ok and r.objective <= reference * (1 + 1e-9) + 1e-13
    assert r.bound is None or r.bound <= r.objective


# -- hostile and oversized input --------------------------------------------------------------------


def test_a_huge_k_is_refused_before_any_allocation(tmp_path, capsys):
    path = tmp_path / "big.yaml"
    path.write_text("k: 100000\nprivacy: [{notion: ldp, epsilon: 1}]\n")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    rc, _, err = run(["solve", str(path), "-o", str(tmp_path / "m.json")], capsys)
    assert rc == 2 and "outputs" in err and "entries" in err and len(err.strip().splitlines()) == 1
    assert time.perf_counter() - t0 < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # kB


def test_deeply_nested_json_is_one_line(tmp_path, capsys):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    rc, _, err = run(["solve", str(path), "-o", str(tmp_path / "m.json")], capsys)
    assert rc == 2 and "nests deeper" in err and len(err.strip().splitlines()) == 1
    mpath = tmp_path / "deep_mech.json"
    mpath.write_text('{"a": ' * 50_000 + "1" + "}" * 50_000)
    rc, _, err = run(["verify", str(mpath)], capsys)
    assert rc == 2 and "nests" in err and "deep" in err and len(err.strip().splitlines()) == 1


def test_yaml_numbers_follow_yaml_1_2(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("inputs: [yes, no]\nprivacy: [{notion: ldp, epsilon: 1e-9}]\n")
    p = load_problem(path)
    assert p.inputs == ("yes", "no") and p.notions[0].epsilon == 1e-9


def test_unknown_method_is_refused(tmp_path, capsys):
    path = tmp_path / "p.yaml"
    path.write_text("k: 2\nprivacy: [{notion: ldp, epsilon: 1}]\n")
    rc, _, err = run(["solve", str(path), "-o", str(tmp_path / "m.json"), "--method", "bogus"], capsys)
    assert rc == 2 and "method" in err and "bogus" in err


def test_prior_and_p0_together_are_refused():
    with pytest.raises(InputError, match="objective.p0.*not both"):
        load_problem({"k": 2, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1}],
                      "objective": {"kind": "estimation_variance", "prior": [0.5, 0.5], "p0": [0.5, 0.5]}})


@pytest.mark.parametrize("notion,field", [({"notion": "uldp", "epsilon": 1, "sensitive": []}, "sensitive"),
                                          ({"notion": "high_low", "epsilon": 1, "sensitive": []}, "sensitive"),
                                          ({"notion": "metric", "epsilon": 1, "edges": []}, "edges")])
def test_empty_parameters_are_refused_the_same_way(notion, field):
    with pytest.raises(InputError, match=rf"privacy\[0\]\.{field}: must (name|list) at least one"):
        load_problem({"k": 3, "privacy": [notion]})


def test_a_mechanism_with_no_claims_is_not_verified(tmp_path, capsys):
    cert = verify(np.eye(2), [])
    assert not cert.verified and "no privacy claim" in cert.detail
    doc = mechopt.Mechanism.from_channel(np.eye(2), [{"notion": "ldp", "epsilon": 100}]).to_dict()
    doc["privacy"] = []
    from mechopt._canonical import canonical_digest

    doc["sha256"] = canonical_digest(doc)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    rc, out, _ = run(["verify", str(path)], capsys)
    assert rc != 0 and "verified exactly" not in out


def test_a_prior_whose_decimals_make_lip_infeasible_is_refused():
    """At ε = 1e-10 a prior summing to 1 + 5e-10 leaves no channel at all (P·q <= e^ε q[x])."""
    with pytest.raises(InputError, match="prior: sums to"):
        load_problem({"k": 2, "privacy": [{"notion": "lip", "epsilon": 1e-10, "prior": [0.5, 0.5 + 5e-10]}]})
    load_problem({"k": 2, "privacy": [{"notion": "lip", "epsilon": 1e-3, "prior": [0.5, 0.5 + 5e-10]}]})
