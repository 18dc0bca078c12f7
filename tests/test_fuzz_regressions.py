"""Defects found by the fuzzer (benchmarks/fuzz.py), each as its minimal reproducer.

Every expected value is an independent fact (a closed form, a channel built and verified
here), never a number read from mechopt's own output.
"""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from mechopt import load_problem, solve, verify

ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:  # plain `pytest` does not put the repository root on sys.path
    sys.path.insert(0, ROOT)

from benchmarks.fuzz_reference import _exact_estimation_risk  # noqa: E402  (rational arithmetic)


def _solve(doc):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # identifiability notes
        return solve(doc, quiet=True)


def _binary_rr_histogram_mse(eps: float) -> float:
    """Histogram MSE of binary randomized response at eps, uniform prior: 1 - sum_x Pr(x | y)^2."""
    e = math.exp(eps)
    return 1.0 - (e * e + 1.0) / (e + 1.0) ** 2


def test_free_uldp_drops_unit_rays_that_a_relaxed_notion_forbids():
    # fuzz seed 1 #36: ULDP with WC-LIP at eps = 300. The budget above 30 is relaxed away
    # for the ray enumeration, and the unit (invertible) ray of the non-sensitive input was
    # kept although WC-LIP forbids any zero entry: the channel could not be repaired and the
    # constant channel (0.5) was exported as "feasible". No column may be a unit vector
    # here, so the problem is binary LDP(1): randomized response is optimal.
    doc = {"k": 2, "outputs": "free", "objective": {"kind": "histogram_mse"},
           "privacy": [{"notion": "uldp", "epsilon": 1.0, "sensitive": ["0"]}, {"notion": "wc_lip", "epsilon": 300.0}]}
    r = _solve(doc)
    assert r.status == "optimal", r.message
    assert r.objective == pytest.approx(_binary_rr_histogram_mse(1.0), rel=1e-9)
    assert verify(r.mechanism.matrix, list(load_problem(doc).notions)).verified


def test_free_uldp_with_a_large_metric_budget_is_not_the_constant_channel():
    # fuzz seed 2 #140 (shrunk): metric at eps = 20 on an edge of length 2.9 (budget 58,
    # relaxed) next to ULDP; the unit ray at x1 broke the metric and the export fell back to
    # the constant channel. k-RR at the ULDP budget is feasible and much better.
    doc = {"inputs": ["x0", "x1", "x2"], "outputs": "free", "objective": {"kind": "histogram_mse"},
           "privacy": [{"notion": "metric", "epsilon": 20.0, "edges": [["x0", "x1", 2.9], ["x1", "x2", 1.7]]},
                       {"notion": "uldp", "epsilon": 1.0, "sensitive": ["x2"]}]}
    r = _solve(doc)
    assert r.status == "optimal", r.message
    e = math.exp(1.0)
    krr = (np.eye(3) * (e - 1) + 1) / (e + 2)
    assert verify(krr, list(load_problem(doc).notions)).verified
    krr_value = 1 - sum(((krr[:, y] / 3) ** 2).sum() / (krr[:, y].sum() / 3) for y in range(3))
    assert r.objective <= krr_value + 1e-12


def test_estimation_variance_at_budget_300_is_the_identity_channels_risk():
    # fuzz seed 2 #62: LIP at eps = 678.52 with BP-LIP at 300. The design enumerated the rays
    # of the unrelaxed cone (entries e^-300 next to 1): one ray survived and the answer was
    # "error: no channel identifies the input distribution". At such budgets the identity
    # channel, slightly mixed, is feasible; its risk n E|p_hat - p|^2 = sum_x p0(1 - p0) is a
    # lower bound for every channel (no channel beats observing X), so it is the optimum.
    p0 = [0.14, 0.45, 0.2, 0.14, 0.07]
    doc = {"inputs": ["x0", "x1", "x2", "x3", "x4"], "outputs": "free",
           "privacy": [{"notion": "lip", "epsilon": 678.52, "prior": [0.222, 0.003, 0.0, 0.019, 0.756]},
                       {"notion": "bp_lip", "epsilon": 300.0,
                        "priors": [[0.22907168137933673, 0.03186821682880034, 0.0352153197215512,
                                    0.0069999038362040045, 0.6968448782341078]]}],
           "objective": {"kind": "estimation_variance", "prior": p0}}
    r = _solve(doc)
    assert r.status == "optimal", r.message
    assert r.objective == pytest.approx(1 - sum(p * p for p in p0), rel=1e-9)


def test_estimation_variance_bp_lip_at_budget_300_is_solved():
    # the same at k = 2 failed with "double description failed: numerical inconsistency"
    doc = {"k": 2, "outputs": "free", "privacy": [{"notion": "bp_lip", "epsilon": 300, "priors": [[0.5, 0.5]]}],
           "objective": {"kind": "estimation_variance"}}
    r = _solve(doc)
    assert r.status == "optimal", r.message
    assert r.objective == pytest.approx(0.5, rel=1e-9)


def test_double_description_failure_is_a_feasible_fallback_not_a_crash():
    # fuzz seed 2 #57: cdd's "numerical inconsistency" (a RuntimeError) escaped solve()
    doc = {"inputs": ["x0", "x1", "x2", "x3", "x4", "x5"], "outputs": "free",
           "privacy": [{"notion": "block", "epsilon": 1e-09, "blocks": [["x2"], ["x0"], ["x4", "x5"], ["x1"], ["x3"]]},
                       {"notion": "wc_lip", "epsilon": 2.05e-05}],
           "objective": {"kind": "mutual_information"}}
    r = _solve(doc)
    assert r.status in ("optimal", "feasible"), r.message
    assert verify(r.mechanism.matrix, list(load_problem(doc).notions)).verified


def test_estimation_variance_metric_at_tiny_budget_is_binary_rr():
    # fuzz seed 3 #207: a metric at eps = 1.04e-8 (budget 1.4e-8 on the only edge) lost the
    # non-constant rays in the log-space double description (budgets below cdd's zero
    # tolerance) and the design said "no channel identifies the input distribution".
    # For two inputs, binary randomized response is optimal; its risk at p0 = (1/2, 1/2) is
    # n E|p_hat - p|^2 = 2 * (1/4) ((s + 1) / (s - 1))^2 with s = e^eps.
    eps = 1.04e-8 * 1.362
    doc = {"inputs": ["x0", "x1"], "outputs": "free", "objective": {"kind": "estimation_variance"},
           "privacy": [{"notion": "metric", "epsilon": 1.04e-08, "edges": [["x0", "x1", 1.362]]},
                       {"notion": "block", "epsilon": 0.914, "blocks": [["x1", "x0"]]}]}
    r = _solve(doc)
    assert r.status == "optimal", r.message
    s = math.expm1(eps)
    rr = 0.5 * ((s + 2.0) / s) ** 2
    assert r.objective == pytest.approx(rr, rel=1e-4)


@pytest.mark.parametrize("other, k, expected", [
    # fuzz seed 3 #49 (shrunk): WC-LIP at 42.65 forbids every zero entry, so no output can be
    # invertible and the problem is binary LDP(1): randomized response, error 1 / (1 + e)
    ({"notion": "wc_lip", "epsilon": 42.65}, 2, 1 / (1 + math.e)),
    # fuzz seed 3 #484 (shrunk): a block of budget 74.86 forbids unit columns inside it; the
    # problem is 3-ary LDP(1): k-RR, error 2 / (2 + e)
    ({"notion": "block", "epsilon": 74.86, "blocks": [["0"], ["1", "2"]]}, 3, 2 / (2 + math.e)),
])
def test_labeled_uldp_roles_respect_relaxed_budgets(other, k, expected):
    # the labeled MILP relaxed the budget above 30 and let an output be invertible although
    # the relaxed notion forbids it; the repair failed and the constant channel was exported
    doc = {"k": k, "outputs": "inputs", "objective": {"kind": "expected_loss", "loss": "hamming"},
           "privacy": [{"notion": "uldp", "epsilon": 1.0, "sensitive": ["0"]}, other]}
    r = _solve(doc)
    assert r.status == "optimal", r.message
    assert r.objective == pytest.approx(expected, rel=1e-9)


def test_estimation_risk_is_accurate_when_the_information_matrix_is_ill_conditioned():
    # fuzz seed 14 #257: a metric at eps = 1e-6 on two edges, one input alone: cond(J) ~ 1e13.
    # Inverting J in floating point put the reported risk 6.4e-4 (relative) below the exact
    # risk of the exported matrix, and the design's "bound" above it. The risk is now
    # computed from the SVD of J's square root: the report must match the exact value.
    doc = {"inputs": ["x0", "x1", "x2", "x3", "x4"], "outputs": "free",
           "privacy": [{"notion": "metric", "epsilon": 1e-06, "edges": [["x1", "x3", 0.436], ["x2", "x4", 2.597]]}],
           "objective": {"kind": "estimation_variance", "prior": [0.25, 0.21, 0.29, 0.12, 0.13]}}
    r = _solve(doc)
    assert r.mechanism is not None and r.certificate.verified
    exact = _exact_estimation_risk(np.asarray(r.mechanism.matrix), np.array([0.25, 0.21, 0.29, 0.12, 0.13]))
    assert r.objective == pytest.approx(exact, rel=1e-8)
    assert r.bound <= exact


def test_estimation_variance_block_at_tiny_budget_is_solved():
    # fuzz seed 14 #873: block LDP at eps = 1.16e-7 with two singleton blocks: the conic
    # solver said "singular", Frank-Wolfe's risk (an inverse of J) was infinite, and the
    # answer was "error: design failed". A feasible channel built here — singletons
    # reported exactly, k-RR inside the block — bounds the optimum from above.
    eps = 1.16e-07
    doc = {"inputs": ["x0", "x1", "x2", "x3", "x4"], "outputs": "free", "objective": {"kind": "estimation_variance"},
           "privacy": [{"notion": "block", "epsilon": eps, "blocks": [["x2"], ["x0"], ["x3", "x4", "x1"]]}]}
    r = _solve(doc)
    assert r.status == "optimal", r.message
    p0 = np.full(5, 0.2)
    s = math.exp(eps * (1 - 1e-6))
    W = np.zeros((5, 5))
    W[0, 0] = W[2, 2] = 1.0
    block = [1, 3, 4]
    for x in block:
        for y in block:
            W[x, y] = (s if x == y else 1.0) / (s + 2)
    assert verify(W, list(load_problem(doc).notions)).verified
    assert r.objective <= _exact_estimation_risk(W, p0) * (1 + 1e-6)
    assert r.objective == pytest.approx(_exact_estimation_risk(np.asarray(r.mechanism.matrix), p0), rel=1e-8)


def test_design_whose_rays_cannot_sum_rows_to_one_is_not_certified():
    # fuzz seed 21 #129: the conic solver put all its weight on one ray (rows summing to
    # 1.0014 and 1.0015); the row-sum repair could not fix that support, the "design" had
    # equal rows after renormalising and the answer was "error: no channel makes this
    # objective finite". Binary randomized response at the ULDP budget is optimal for two
    # inputs (the unit column of x1 breaks the metric); its risk at p0 = (1/2, 1/2) is
    # 2 * (1/4) ((s + 1) / (s - 1))^2 with s = e^eps.
    doc = {"inputs": ["x0", "x1"], "outputs": "free", "objective": {"kind": "estimation_variance"},
           "privacy": [{"notion": "metric", "epsilon": 5.178, "edges": [["x0", "x1", 1.872]]},
                       {"notion": "uldp", "epsilon": 4.2e-05, "sensitive": ["x0"]}]}
    r = _solve(doc)
    assert r.status == "optimal", r.message
    s = math.expm1(4.2e-05)
    assert r.objective == pytest.approx(0.5 * ((s + 2.0) / s) ** 2, rel=1e-6)


@pytest.mark.parametrize("doc", [
    # fuzz seed 4 #951: BP-LIP box at eps = 2.51e-8 on two inputs: cdd kept one ray, and the
    # answer was "error: design failed: SCS: infeasible_inaccurate"
    {"inputs": ["x0", "x1"], "outputs": "free", "objective": {"kind": "estimation_variance", "prior": [0.169, 0.831]},
     "privacy": [{"notion": "bp_lip", "epsilon": 2.51e-08, "lower": [0.029, 0.49], "upper": [0.477, 1.0]}]},
    # fuzz seed 14 #8088: E-LDP with budgets from 9.81e-9 to 709.5 and ULDP: cdd's
    # "numerical inconsistency" was an error status
    {"inputs": ["x0", "x1", "x2", "x3", "x4", "x5"], "outputs": "free",
     "objective": {"kind": "estimation_variance",
                   "prior": [9.085813178492056e-05, 0.018194340063044136, 0.043111343969832856, 0.03376140702137548,
                             0.9047798139504617, 6.223686350094717e-05]},
     "privacy": [{"notion": "eldp", "matrix": [[0.0, 0.895, "inf", 709.5, "inf", 0.489],
                                               [9.81e-09, 0.0, 1.403, 0.778, 1.741, 2.287],
                                               ["inf", 0.296, 0.0, 5.31e-07, 1.605, 0.599],
                                               [2.744, 1.372, 0.428, 0.0, 22.54, 20.0],
                                               ["inf", "inf", 1.834, "inf", 0.0, "inf"],
                                               [351.15, 1.272, "inf", 2.04, "inf", 0.0]]},
                 {"notion": "uldp", "epsilon": 0.41, "sensitive": ["x0"]}]},
    # fuzz seed 22 #796: a metric with a high-low notion at 2.55e-8: two of the rays were
    # lost in the log-space double description, "error: design failed: optimal_inaccurate"
    {"inputs": ["x0", "x1", "x2"], "outputs": "free",
     "objective": {"kind": "estimation_variance", "prior": [0.33120307169217306, 0.3660786206413452, 0.3027183076664817]},
     "privacy": [{"notion": "metric", "epsilon": 3.434, "edges": [["x0", "x1", 0.649], ["x0", "x2", 2.416], ["x1", "x2", 0.209]]},
                 {"notion": "high_low", "epsilon": 2.55e-08, "sensitive": ["x0", "x2"]}]},
])
def test_estimation_variance_never_errors_when_a_channel_identifies(doc):
    # every budget is positive and no rows are tied, so randomized response mixed enough
    # identifies the distribution: a failed design exports it ("feasible"), never "error"
    r = _solve(doc)
    assert r.status in ("optimal", "feasible"), r.message
    assert verify(r.mechanism.matrix, list(load_problem(doc).notions)).verified
    p0 = np.array(doc["objective"]["prior"])
    exact = _exact_estimation_risk(np.asarray(r.mechanism.matrix), p0)
    assert math.isfinite(exact) and r.objective == pytest.approx(exact, rel=1e-8)


@pytest.mark.parametrize("method", ["colgen", "auto"])
def test_column_generation_above_the_budget_cap_uses_the_relaxation(method):
    # fuzz seed 14 #351: LIP at eps = 240.71 with method="colgen" put e^240 in an LP:
    # "error: column generation failed: HiGHS Status 2: Model error". At such a budget the
    # notion is relaxed away and the identity channel (histogram MSE 0), mixed by ~e^-30, is
    # optimal; no channel has a negative histogram MSE.
    doc = {"inputs": ["x0", "x1", "x2", "x3", "x4"], "outputs": "free", "objective": {"kind": "histogram_mse"},
           "privacy": [{"notion": "lip", "epsilon": 240.71, "prior": [1e-12, 0.510973673549, 0.377303401041, 0.0,
                                                                     0.111722925409]}]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve(doc, quiet=True, method=method)
    assert r.status == "optimal", r.message
    assert 0 <= r.objective < 1e-9


def test_bp_lip_over_the_whole_simplex_is_ldp_for_the_rays():
    # fuzz seed 14 #5448: BP-LIP with the box [0, 1]^4 (priors: the point masses) at
    # eps = 23.17 next to ULDP at 1e4: the floating-point double description kept 5 of the
    # 14 rays and the design was "optimal" at 3.75 with a bound of 3.75, while randomized
    # response verifies at 0.75. No channel beats observing X: its risk sum p(1 - p) = 0.75
    # is a lower bound; the optimum is within e^-23 of it.
    doc = {"inputs": ["x0", "x1", "x2", "x3"], "outputs": "free", "objective": {"kind": "estimation_variance"},
           "privacy": [{"notion": "bp_lip", "epsilon": 23.17, "lower": [0.0] * 4, "upper": [1.0] * 4},
                       {"notion": "uldp", "epsilon": 10000.0, "sensitive": ["x0", "x1", "x2", "x3"]}]}
    r = _solve(doc)
    assert r.status == "optimal", r.message
    assert 0.75 <= r.objective <= 0.75 * (1 + 1e-6)
    assert r.bound <= 0.75 * (1 + 1e-6)


# -- found by the fuzz (see docs/fuzz.md); a finding not fixed yet is a strict xfail, so
# -- that its fix shows up as XPASS and the marker is removed with it

def test_labeled_uldp_with_a_relaxed_delta_lip():
    # the invertible role is worth at most 0.4 here (delta caps its mass at 0.2), so the
    # optimum keeps both outputs protected: binary randomized response, error 1 / (1 + e)
    doc = {"k": 2, "outputs": "inputs", "objective": {"kind": "expected_loss", "loss": "hamming"},
           "privacy": [{"notion": "uldp", "epsilon": 1.0, "sensitive": ["0"]},
                       {"notion": "lip", "epsilon": 40, "prior": [0.5, 0.5], "delta": 0.1}]}
    r = _solve(doc)
    assert r.status == "optimal" and r.objective == pytest.approx(1 / (1 + math.e), rel=1e-9)


def test_mutual_information_with_a_point_mass_prior_is_optimal():
    # every channel has I(X; Y) = 0 when X is constant
    doc = {"k": 2, "outputs": "free", "privacy": [{"notion": "eldp", "matrix": [[0, "inf"], [1.148, 0]]}],
           "objective": {"kind": "mutual_information", "prior": [1.0, 0.0]}}
    r = _solve(doc)
    assert r.objective == 0.0 and r.status == "optimal", r.message


def test_ill_conditioned_design_is_not_a_spurious_bound_conflict():
    doc = {"inputs": ["x0", "x1", "x2", "x3", "x4"], "outputs": "free",
           "privacy": [{"notion": "metric", "epsilon": 1e-06, "edges": [["x1", "x3", 0.436], ["x2", "x4", 2.597]]}],
           "objective": {"kind": "estimation_variance", "prior": [0.25, 0.21, 0.29, 0.12, 0.13]}}
    r = _solve(doc)
    assert "a bug" not in r.message and r.status == "optimal", r.message


def test_eldp_cone_with_budgets_from_1e9_to_1_keeps_its_rays():
    doc = {"k": 3, "outputs": "free", "objective": {"kind": "mmse", "values": [0, 1, 2]},
           "privacy": [{"notion": "eldp", "matrix": [[0, 1e-9, "inf"], [2e-9, 0, 3e-9], [1, "inf", 0]]}]}
    r = _solve(doc)
    assert r.status == "optimal", r.message


@pytest.mark.parametrize("eps", [40.0, 745.0])
def test_estimation_variance_above_the_float_range_of_e_eps(eps):
    # fuzz seed 14 #544: WC-LIP at 745 with a uniform p0 overflowed math.exp in the orbit
    # design. No channel beats the identity's risk 1 - 1/k (Fisher information only
    # decreases under post-processing), and e^30-randomized response comes within 1e-11.
    doc = {"inputs": ["x0", "x1", "x2"], "privacy": [{"notion": "wc_lip", "epsilon": eps}], "outputs": "free",
           "objective": {"kind": "estimation_variance"}}
    r = _solve(doc)
    assert r.status == "optimal", r.message
    assert r.bound <= 2 / 3 <= r.objective <= 2 / 3 + 1e-9


@pytest.mark.parametrize("privacy, prior", [
    ([{"notion": "uldp", "epsilon": 745.0, "sensitive": ["x0", "x1", "x2"]}], None),  # fuzz seed 14 #2759
    ([{"notion": "ldp", "epsilon": 745.0}], [0.2, 0.3, 0.5]),
])
def test_estimation_variance_design_above_the_budget_cap(privacy, prior):
    # the noiseless risk 1 - sum p^2 is the infimum (Fisher information only decreases
    # under post-processing) and e^30-randomized response reaches it within 1e-12
    p = np.full(3, 1 / 3) if prior is None else np.array(prior)
    doc = {"inputs": ["x0", "x1", "x2"], "privacy": privacy, "outputs": "free",
           "objective": {"kind": "estimation_variance", **({"prior": prior} if prior else {})}}
    r = _solve(doc)
    assert r.status == "optimal", r.message
    assert r.bound <= 1 - p @ p <= r.objective <= 1 - p @ p + 1e-9


def test_an_ill_conditioned_risk_lowers_the_bound_by_its_error_instead_of_a_conflict():
    # fuzz seed 14 #984: at a 1e-9 budget the channel's rows differ by 1e-9, so its risk
    # (2e18) is known to ~1e-7 relative; a design bound 1.1e-7 above it is that error, not
    # a bug. The bound is lowered by the error estimate and the gap says how far it goes.
    doc = {"inputs": ["x0", "x1"], "outputs": "free", "objective": {"kind": "estimation_variance"},
           "privacy": [{"notion": "high_low", "epsilon": 1e-09, "sensitive": ["x0", "x1"]},
                       {"notion": "uldp", "epsilon": 304.52, "sensitive": ["x0", "x1"]}]}
    r = _solve(doc)
    assert "a bug" not in r.message
    assert r.bound <= r.objective
    # binary randomized response at e^1e-9 is optimal: risk 2 (1/4) ((s + 2) / s)^2, s = e^eps - 1
    s = math.expm1(1e-9)
    assert r.objective == pytest.approx(0.5 * ((s + 2) / s) ** 2, rel=1e-6)


def test_a_bound_the_exported_channel_beats_is_never_exported():
    # fuzz seed 16 #1644: a budget of 3.14e-6 makes the risk (1.7e5) sensitive to the
    # design's row sums (off by ~1e-10); the Frank-Wolfe bound at those weights came out
    # 4.6e-6 above the exported channel's risk. A false bound is dropped, never exported.
    doc = {"inputs": ["x0", "x1", "x2", "x3"], "outputs": "free", "objective": {"kind": "estimation_variance"},
           "privacy": [{"notion": "eldp", "matrix": [[0.0, 1.938, 1.518, 1.288], ["inf", 0.0, 2.785, 5.505],
                                                     [2.388, 2.195, 0.0, 3.14e-06], ["inf", 2.499, "inf", 0.0]]}]}
    r = _solve(doc)
    assert r.status in ("optimal", "feasible") and r.certificate.verified
    assert r.bound is None or r.bound <= r.objective * (1 + 1e-12)
    assert r.mechanism.objective.get("bound") is None or r.mechanism.objective["bound"] <= r.objective * (1 + 1e-12)


def test_a_histogram_mse_bound_below_zero_is_raised_to_zero():
    # fuzz seed 22 #6593: LIP at eps = 30, column generation proved only -1.8e13 for a channel
    # of histogram MSE 4.8e-14; no channel has a negative squared error, so 0 is a proven
    # lower bound and the answer is optimal
    prior = [0.07242106853806546, 0.8990300268388394, 0.028548904623095245]
    p = load_problem({"inputs": ["x0", "x1", "x2"], "outputs": "free",
                      "privacy": [{"notion": "lip", "epsilon": 30.0, "prior": prior}],
                      "objective": {"kind": "histogram_mse"}})
    r = solve(p, method="colgen")
    assert verify(r.mechanism.matrix, p.notions).verified
    # at eps = 30 a channel within about e^-30 of the identity is allowed: the optimum is ~0
    assert 0.0 <= r.objective < 1e-12
    assert r.bound == 0.0 and r.status == "optimal"
    assert "raised to 0" in r.message


def test_design_fallback_skips_unbounded_random_vertices():
    # fuzz seed 23 #3872: Frank-Wolfe's start averaged random LP vertices and added the None of
    # an unbounded one (a TypeError escaping solve); the unbounded draws are now skipped
    prior = [0.09199803386531848, 0.006500530848131607, 0.07134707457415175, 0.45969880941772107,
             0.3649091613071625, 0.005546389987514649]
    p = load_problem({"inputs": [f"x{i}" for i in range(6)], "outputs": "free",
                      "privacy": [{"notion": "high_low", "epsilon": 1.01e-09,
                                   "sensitive": ["x0", "x1", "x2", "x3", "x5"]}],
                      "objective": {"kind": "estimation_variance", "prior": prior}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve(p)
    assert r.status in ("optimal", "feasible")
    assert verify(r.mechanism.matrix, p.notions).verified
    assert r.bound is None or r.bound <= r.objective * (1 + 1e-6)
