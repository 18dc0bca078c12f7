"""Standard mechanisms as baselines: their channels built independently, and the solver never loses."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mechopt import Objective, baselines, estimation_risk, evaluate, load_problem, solve
from mechopt.cli import main as cli_main
from mechopt.closed_forms import high_low_hadamard_channel
from mechopt.closed_forms._rr import k_rr


def unary_encoding(k, p, q):
    """The channel of unary encoding over all 2^k bit vectors (Wang et al. 2017 §4.1)."""
    B = np.array(list(itertools.product((0, 1), repeat=k)), dtype=float)
    Q = np.empty((k, len(B)))
    for x in range(k):
        own = np.where(np.arange(k) == x, p, q)
        Q[x] = np.prod(np.where(B == 1, own, 1 - own), axis=1)
    return Q


def local_hashing(k, g, eps):
    """OLH over every function h: [k] -> [g] (uniform), reports (h, y) with g-ary RR on h(x)."""
    e = math.exp(eps)
    hs = list(itertools.product(range(g), repeat=k))
    Q = np.zeros((k, len(hs) * g))
    for i, h in enumerate(hs):
        for y in range(g):
            for x in range(k):
                Q[x, i * g + y] = (e if h[x] == y else 1.0) / (e + g - 1) / len(hs)
    return Q


def _problem(k, eps, kind="estimation_variance", prior=None):
    obj = {"kind": kind}
    if prior is not None:
        obj["prior"] = list(prior)
    return {"k": k, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": eps}], "objective": obj}


def _rows(problem):
    return {r["name"].split(" (")[0]: r for r in baselines(problem)}


@pytest.mark.parametrize("prior", [None, [0.4, 0.3, 0.2, 0.1]])
@pytest.mark.parametrize("kind", ["estimation_variance", "mutual_information", "histogram_mse"])
def test_baselines_equal_their_textbook_channels(prior, kind):
    k, eps = 4, 0.7
    rows = _rows(_problem(k, eps, kind, prior))
    p0 = np.full(k, 1 / k) if prior is None else np.array(prior)
    obj = Objective(kind, p0)
    e, eh = math.exp(eps), math.exp(eps / 2)
    g = int(round(e)) + 1
    textbook = {
        "k-RR": k_rr(k, eps),
        "SUE": unary_encoding(k, eh / (eh + 1), 1 / (eh + 1)),
        "OUE": unary_encoding(k, 0.5, 1 / (e + 1)),
        "OLH": local_hashing(k, g, eps),
        "Hadamard response": high_low_hadamard_channel(k, list(range(k)), eps),
    }
    for name, Q in textbook.items():
        row = rows[name]
        assert row["privacy_ok"] and row["scored_by"] == ("orbit" if prior is None and name != "Hadamard response"
                                                          else "channel")
        want = estimation_risk(Q, p0) if kind == "estimation_variance" else evaluate(obj, Q)
        assert row["objective"] == pytest.approx(want, rel=1e-9), name


def test_large_k_uses_the_orbit_and_the_known_variances():
    k, eps = 1000, 1.0
    rows = _rows(_problem(k, eps))
    e = math.exp(eps)
    # OUE (Wang et al. 2017 eq. (5)): n Var p̂_x = 4 e^eps / (e^eps - 1)^2 to first order at small p_x;
    # the efficient risk is at most k times that
    assert rows["OUE"]["objective"] <= k * 4 * e / (e - 1) ** 2
    assert rows["OUE"]["objective"] == pytest.approx(k * 4 * e / (e - 1) ** 2, rel=2e-3)
    assert rows["k-RR"]["objective"] == pytest.approx((k - 1) * (k + e - 1) ** 2 / (k * (e - 1) ** 2), rel=1e-12)
    # a non-uniform p0 at k = 1000: the protocols' own estimator variance, said so
    p0 = np.random.default_rng(1).dirichlet(np.ones(k))
    rows2 = _rows(_problem(k, eps, prior=p0.tolist()))
    assert rows2["OUE"]["scored_by"] == "support-count estimator"
    q = 1 / (e + 1)
    pi = q + (0.5 - q) * p0
    assert rows2["OUE"]["objective"] == pytest.approx(np.sum(pi * (1 - pi)) / (0.5 - q) ** 2, rel=1e-9)


def test_baselines_are_verified_under_the_problems_own_notions():
    problem = {"k": 5, "outputs": "free",
               "privacy": [{"notion": "high_low", "epsilon": 1.0, "sensitive": ["0", "1"]},
                           {"notion": "lip", "epsilon": 0.8, "prior": [0.3, 0.3, 0.2, 0.1, 0.1]}],
               "objective": {"kind": "mutual_information"}}
    rows = baselines(problem)
    assert all(r["epsilon"] == 0.8 for r in rows)  # eps-LDP implies both at the smaller budget
    by = {r["name"]: r for r in rows}
    assert by["k-RR"]["privacy_ok"]
    # the high-low Hadamard response has direct outputs: fine for high-low, fatal for LIP
    assert not by["high-low Hadamard response"]["privacy_ok"]


PRIVACY = st.sampled_from([
    lambda k, e: [{"notion": "ldp", "epsilon": e}],
    lambda k, e: [{"notion": "block", "epsilon": e, "blocks": [[str(i) for i in range(k // 2)],
                                                                [str(i) for i in range(k // 2, k)]]}],
    lambda k, e: [{"notion": "high_low", "epsilon": e, "sensitive": ["0"]}],
    lambda k, e: [{"notion": "uldp", "epsilon": e, "sensitive": [str(i) for i in range(k - 1)]}],
    lambda k, e: [{"notion": "lip", "epsilon": e, "prior": [1 / k] * k}],
])
KINDS = st.sampled_from(["estimation_variance", "mutual_information", "histogram_mse", "bayes_risk", "mmse"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(3, 5), eps=st.floats(0.3, 2.5), privacy=PRIVACY, kind=KINDS, seed=st.integers(0, 10**6))
def test_the_optimum_is_never_worse_than_a_verified_baseline(k, eps, privacy, kind, seed):
    prior = np.random.default_rng(seed).dirichlet(np.ones(k) * 2)
    obj = {"kind": kind, "prior": prior.tolist()}
    if kind == "mmse":
        obj["values"] = list(range(k))
    problem = load_problem({"k": k, "outputs": "free", "privacy": privacy(k, eps), "objective": obj})
    r = solve(problem, quiet=True)
    assert r.ok
    for row in baselines(problem):
        if not row["privacy_ok"] or row["objective"] is None:
            continue
        tol = 1e-7 * max(1.0, abs(row["objective"]))
        if problem.objective.minimize:
            assert r.objective <= row["objective"] + tol, row["name"]
        else:
            assert r.objective >= row["objective"] - tol, row["name"]


def test_cli_baselines_json(tmp_path, capsys):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(_problem(6, 1.0)))
    assert cli_main(["baselines", str(path), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["solver_status"] == "optimal"
    assert {r["name"] for r in rep["baselines"]} >= {"k-RR", "OUE", "Hadamard response"}
    assert all(r["ratio"] >= 1 - 1e-9 for r in rep["baselines"])
    assert cli_main(["baselines", str(path)]) == 0
    assert "k-RR" in capsys.readouterr().out
