"""Standard mechanisms scored exactly under any prior, and never beaten by a solver's export.

Independent facts: the subset mixtures' channels listed in full (every d-subset a
column, built here) and scored by the objective's own definition; a baseline's value from
:func:`mechopt.evaluate` on its listed channel.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mechopt
from mechopt._baseline_exact import subset_utility
from mechopt._problem import problem_from_dict
from mechopt.solvers.free._seed import lip_seed_columns


def _listed(P, r, comps):
    """The subset mixture's channel: component d (every d-subset a column, ratio r) with rows summing to w_d."""
    k = len(P)
    blocks = []
    for d, w in comps:
        C = np.array([[r if x in S else 1.0 for x in range(k)] for S in itertools.combinations(range(k), d)]).T
        blocks.append(w * C / C.sum(axis=1, keepdims=True))
    return np.hstack(blocks)


def _hmse_utility(P, Q):
    q = P @ Q
    return float((((P[:, None] * Q) ** 2).sum(axis=0) / q).sum())


def _mi(P, Q):
    q = P @ Q
    return float((P[:, None] * Q * np.log(Q / q[None, :])).sum())


@pytest.mark.parametrize("k", [2, 5, 8, 10])
@pytest.mark.parametrize("r", [1.3, math.e, math.exp(4)])
def test_subset_scores_equal_the_listed_channel(k, r):
    rng = np.random.default_rng(k)
    P = rng.dirichlet(np.full(k, 0.4))
    w = rng.random(k + 1)
    comps = [(d, float(w[d] / w.sum())) for d in range(k + 1)]
    Q = _listed(P, r, comps)
    assert np.allclose(Q.sum(axis=1), 1.0)
    assert subset_utility(P, r, comps, mi=False) == pytest.approx(_hmse_utility(P, Q), abs=1e-12)
    assert subset_utility(P, r, comps, mi=True) == pytest.approx(_mi(P, Q), abs=1e-12)


def test_one_subset_size_at_a_zipf_prior():
    k = 10
    P = np.arange(1, k + 1) ** -1.1
    P /= P.sum()
    Q = _listed(P, math.exp(2), [(3, 1.0)])
    assert subset_utility(P, math.exp(2), [(3, 1.0)], mi=False) == pytest.approx(_hmse_utility(P, Q), abs=1e-12)
    assert subset_utility(P, math.exp(2), [(3, 1.0)], mi=True) == pytest.approx(_mi(P, Q), abs=1e-12)


@pytest.mark.parametrize("kind", ["histogram_mse", "mutual_information"])
def test_every_subset_baseline_is_scored_under_a_skewed_prior(kind, monkeypatch):
    """With too many outputs to list, the symmetric sums give the listed channel's value."""
    k = 7
    P = (np.arange(1, k + 1) ** -1.1)
    P /= P.sum()
    doc = {"k": k, "outputs": "free", "privacy": [{"notion": "lip", "epsilon": 1.5, "prior": P.tolist()}],
           "objective": {"kind": kind, "prior": P.tolist()}}
    listed = {r["name"]: r["objective"] for r in mechopt.baselines(doc)}
    assert all(v is not None for v in listed.values())
    import mechopt.families._estimate as est

    monkeypatch.setattr(est, "MAX_CHANNEL_OUTPUTS", 16)  # too small for the subset mixtures' channels
    rows = mechopt.baselines(doc)
    summed = [r for r in rows if r["scored_by"] == "symmetric sums"]
    assert len(summed) >= 4
    for r in summed:
        assert r["objective"] == pytest.approx(listed[r["name"]], abs=1e-12)


def test_lip_seed_columns_lie_in_the_slice_with_the_largest_two_level_ratio():
    P = np.arange(1, 13) ** -1.1
    P /= P.sum()
    eps = 2.0
    V = lip_seed_columns(P, eps)
    lo, hi = math.exp(-eps), math.exp(eps)
    assert np.allclose(P @ V, 1.0, atol=1e-14)
    assert V.min() >= lo * (1 - 1e-14) and V.max() <= hi * (1 + 1e-14)
    # two levels each, one of them at an edge of the slice
    for v in V.T:
        levels = np.unique(np.round(v, 12))
        assert len(levels) == 2
        assert np.isclose(levels[0], lo) or np.isclose(levels[1], hi)


def _problem(k, notion, eps, kind, P):
    priv = {"notion": notion, "epsilon": eps}
    if notion == "lip":
        priv["prior"] = P
    return {"k": k, "outputs": "free", "privacy": [priv], "objective": {"kind": kind, "prior": P}}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(2, 6), notion=st.sampled_from(["ldp", "lip"]), eps=st.sampled_from([0.5, 1.0, 2.0, 3.0]),
       kind=st.sampled_from(["histogram_mse", "mutual_information"]), seed=st.integers(0, 10**6))
def test_law_the_export_is_never_worse_than_a_verified_baseline(k, notion, eps, kind, seed):
    P = np.random.default_rng(seed).dirichlet(np.ones(k))
    P = np.maximum(P, 1e-3)
    P = (P / P.sum()).tolist()
    doc = _problem(k, notion, eps, kind, P)
    res = mechopt.solve(problem_from_dict(doc), method="colgen", quiet=True, time_limit=20)
    assert res.ok
    assert res.certificate.verified
    for row in mechopt.baselines(doc):
        if not row["privacy_ok"] or row["objective"] is None:
            continue
        tol = 1e-9 * max(1.0, abs(row["objective"]))
        if kind == "mutual_information":
            assert res.objective >= row["objective"] - tol, row["name"]
        else:
            assert res.objective <= row["objective"] + tol, row["name"]


def test_an_export_equal_to_a_baseline_says_so():
    """Two inputs under LDP: binary randomized response is optimal, and the export names it."""
    doc = _problem(2, "ldp", 1.0, "mutual_information", [0.7, 0.3])
    res = mechopt.solve(problem_from_dict(doc), method="colgen", quiet=True)
    assert res.status == "optimal"
    assert res.stats["incumbent"].startswith("baseline: ")
    assert res.stats["incumbent"] in res.summary()


def test_a_better_baseline_family_replaces_a_worse_unproven_export():
    """The constant channel (a stand-in for a solver stopped early) is replaced by the best baseline family."""
    from mechopt._baseline_seed import never_worse
    from mechopt._settle import finish

    k = 9
    P = np.arange(1, k + 1) ** -1.1
    P /= P.sum()
    p = problem_from_dict(_problem(k, "ldp", 2.0, "histogram_mse", P.tolist()))
    poor = finish(p, np.ones((k, 1)), ("y0",), 0.0, {}, {}, proven=True)
    assert poor.status == "feasible"
    better = never_worse(p, poor, {})
    assert better.stats["incumbent"].startswith("baseline: ")
    assert better.certificate.verified
    assert better.objective < poor.objective
    assert better.objective == pytest.approx(better.stats["best_baseline"]["value"], abs=1e-12)
    assert "beats the solver's channel" in better.message


def test_tradeoff_gives_each_solve_its_time_limit():
    """A time limit reaches every point; a small problem solves well within it, to the same optima."""
    doc = _problem(4, "lip", 1.0, "histogram_mse", [0.4, 0.3, 0.2, 0.1])
    limited = mechopt.tradeoff(doc, "1,2", time_limit=30, baselines=False)
    free = mechopt.tradeoff(doc, "1,2", baselines=False)
    for label, ys in free["curves"].items():
        assert limited["curves"][label] == pytest.approx(ys, abs=1e-9)


def test_tradeoff_time_limit_must_be_positive(capsys):
    from mechopt.cli import main

    with pytest.raises(SystemExit) as err:
        main(["tradeoff", "problem.yaml", "--epsilons", "1,2", "--time-limit", "-1", "--png", "x.png"])
    assert err.value.code == 2
    assert "time-limit" in capsys.readouterr().err


def test_a_seeded_run_stopped_early_still_beats_every_baseline():
    """k = 24 under LIP with a Zipf prior, stopped after 3 s: the seeded master beats every verified baseline."""
    k = 24
    P = np.arange(1, k + 1) ** -1.1
    P /= P.sum()
    doc = _problem(k, "lip", 2.0, "histogram_mse", P.tolist())
    res = mechopt.solve(problem_from_dict(doc), quiet=True, time_limit=3)
    assert res.ok and res.certificate.verified
    rows = [r for r in mechopt.baselines(doc) if r["privacy_ok"] and r["objective"] is not None]
    assert len(rows) == 6  # every standard mechanism scored, the large subset mixtures by symmetric sums
    assert all(res.objective <= r["objective"] + 1e-9 for r in rows)
