"""Consistent estimates: the simplex projection, Norm-Sub, and their bootstrap intervals."""

from __future__ import annotations

import json
import math

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mechopt.runtime import estimate_counts, project_simplex
from mechopt.runtime._postprocess import norm_sub, postprocess, project_simplex_rows

VECTORS = st.integers(1, 8).flatmap(
    lambda k: arrays(float, k, elements=st.floats(-3, 3, allow_nan=False, allow_subnormal=False)))


def _in_simplex(p, atol=1e-12):
    return bool(np.all(p >= 0) and abs(p.sum() - 1.0) <= atol)


@settings(max_examples=30, deadline=None)
@given(VECTORS)
@example(np.array([0.90625, 1.75, 1.0625]))  # CLARABEL answers 4.6e-5 away from the vertex face
def test_projection_is_the_euclidean_projection_cvxpy(v):
    x = cp.Variable(v.size)
    cp.Problem(cp.Minimize(cp.sum_squares(x - v)), [x >= 0, cp.sum(x) == 1]).solve(solver=cp.CLARABEL)
    p = project_simplex_rows(v)
    assert _in_simplex(p)
    # the interior-point answer is accurate to ~1e-4 only (CLARABEL's tolerances): made feasible,
    # it is a point of the simplex, which the projection can never be farther from v than
    xf = np.maximum(x.value, 0.0)
    xf /= xf.sum()
    assert np.sum((p - v) ** 2) <= np.sum((xf - v) ** 2) + 1e-12
    assert np.allclose(p, x.value, atol=1e-3)


@settings(max_examples=200, deadline=None)
@given(VECTORS)
def test_projection_meets_the_variational_inequality(v):
    # p is the projection of v onto a convex set C iff (v − p)·(q − p) <= 0 for all q in C; over the
    # simplex it suffices to check its vertices e_j: (v − p)_j <= (v − p)·p
    p = project_simplex_rows(v)
    r = v - p
    assert _in_simplex(p) and np.all(r <= r @ p + 1e-12)


@settings(max_examples=200, deadline=None)
@given(VECTORS, st.integers(0, 2**32 - 1))
def test_laws(v, seed):
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet(np.ones(v.size))
    for how in ("simplex", "norm-sub"):
        p = postprocess(v, how)
        assert _in_simplex(p)
        assert np.allclose(postprocess(p, how), p, atol=1e-14)  # idempotent
        assert np.allclose(postprocess(truth, how), truth, atol=1e-14)  # a distribution is unchanged
    # projecting onto a convex set that holds the truth never moves away from it
    assert np.linalg.norm(postprocess(v, "simplex") - truth) <= np.linalg.norm(v - truth) + 1e-12


@settings(max_examples=200, deadline=None)
@given(VECTORS)
def test_norm_sub(v):
    p = norm_sub(v)
    assert _in_simplex(p, atol=1e-12)
    assert np.all(p[v <= 0] == 0) or not np.any(v > 0)
    pos = v > 0
    if pos.any():  # one δ: every kept entry is v − δ
        kept = p > 0
        delta = v[kept] - p[kept]
        assert np.allclose(delta, delta[0], atol=1e-12)
        assert np.all(v[pos & ~kept] <= delta[0] + 1e-12)  # truncated entries lie below δ
    w = v - (v.sum() - 1.0) / v.size  # shifted to sum to 1: Norm-Sub equals the projection
    assert np.allclose(norm_sub(w), project_simplex_rows(w), atol=1e-12)


def test_norm_sub_hand_cases():
    assert norm_sub([0.3, 0.1, -0.2]).tolist() == pytest.approx([0.6, 0.4, 0.0])  # δ = −0.3
    assert norm_sub([-1.0, 0.0]).tolist() == [0.5, 0.5]  # no positive entry: uniform


def _krr(k, eps):
    e = math.exp(eps)
    return (np.ones((k, k)) + (e - 1) * np.eye(k)) / (e + k - 1)


def test_bootstrap_intervals_cover_the_truth():
    # k-RR, one input absent: the inversion estimate often goes negative there
    Q, truth, n, reps = _krr(4, 1.0), np.array([0.5, 0.3, 0.2, 0.0]), 500, 200
    rng = np.random.default_rng(7)
    covered = np.zeros(4)
    sq = {"none": 0.0, "simplex": 0.0}
    for r in range(reps):
        counts = rng.multinomial(n, truth @ Q)
        est = estimate_counts(Q, counts, method="inversion", postprocess="simplex", resamples=200, seed=r)
        raw = estimate_counts(Q, counts, method="inversion")
        assert _in_simplex(est.estimate, atol=1e-12)
        covered += (est.lower <= truth) & (truth <= est.upper)
        sq["simplex"] += float(np.sum((est.estimate - truth) ** 2))
        sq["none"] += float(np.sum((raw.estimate - truth) ** 2))
    # nominal 95%; 200 repetitions have a standard deviation of 1.5%: 85% is > 6 sd below
    assert np.all(covered / reps >= 0.85), covered / reps
    assert sq["simplex"] < sq["none"]


def test_post_processing_of_em_is_a_note_and_bad_values_are_one_line():
    Q = _krr(3, 1.0)
    e = estimate_counts(Q, [50, 30, 20], postprocess="norm-sub")
    assert e.interval == "wald (information matrix)" and any("leaves it unchanged" in x for x in e.notes)
    from mechopt._errors import InputError

    with pytest.raises(InputError, match="postprocess: must be one of none, simplex, norm-sub"):
        estimate_counts(Q, [50, 30, 20], postprocess="clip")
    with pytest.raises(InputError, match="resamples: must be an integer from 100"):
        estimate_counts(Q, [50, 30, 20], method="inversion", postprocess="simplex", resamples=5)


def test_cli_offers_and_applies_post_processing(tmp_path, capsys):
    from mechopt import Mechanism
    from mechopt.cli import main

    with pytest.raises(SystemExit):
        main(["estimate", "--help"])
    out = capsys.readouterr().out
    assert "--postprocess {none,simplex,norm-sub}" in out and "--resamples" in out
    path = tmp_path / "m.json"
    Mechanism.from_channel(_krr(3, 1.0), [{"notion": "ldp", "epsilon": 1.0 + 1e-9}], inputs=["a", "b", "c"],
                           outputs=["x", "y", "z"]).save(path)
    counts = tmp_path / "c.csv"
    counts.write_text("x,60\ny,25\nz,15\n")  # inversion: c = (0.15·(e+2) − 1) / (e − 1) < 0
    assert main(["estimate", str(path), "--counts", str(counts), "--method", "inversion", "--json"]) == 0
    raw = json.loads(capsys.readouterr().out)
    assert raw["estimate"]["c"] < 0 and raw["postprocess"] == "none"
    assert main(["estimate", str(path), "--counts", str(counts), "--method", "inversion", "--postprocess",
                 "simplex", "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["estimate"]["c"] == 0.0 and sum(done["estimate"].values()) == pytest.approx(1.0, abs=1e-12)
    assert done["postprocess"] == "simplex" and done["interval_kind"].startswith("percentile bootstrap")
    v = np.array([raw["estimate"][x] for x in "abc"])
    assert [done["estimate"][x] for x in "abc"] == pytest.approx(project_simplex(v).tolist(), abs=1e-12)


def test_a_family_mechanism_refuses_post_processing_and_memo(tmp_path):
    from mechopt import FamilyMechanism, solve
    from mechopt._errors import InputError
    from mechopt.runtime import estimate_file, privatize_file

    r = solve({"k": 20, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
               "objective": {"kind": "estimation_variance"}}, quiet=True)
    assert isinstance(r.mechanism, FamilyMechanism)
    path = tmp_path / "fam.json"
    r.mechanism.save(path)
    inp = tmp_path / "in.txt"
    inp.write_text("0\n1\n")
    out = tmp_path / "out.txt"
    assert privatize_file(path, inp, out, seed=1) == 2
    with pytest.raises(InputError, match="postprocess: applies to matrix mechanisms"):
        estimate_file(path, out, postprocess="simplex")
    with pytest.raises(InputError, match="memo: a family mechanism draws fresh reports"):
        privatize_file(path, inp, out, memo=tmp_path / "s.json")
