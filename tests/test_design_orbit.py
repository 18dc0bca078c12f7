"""The uniform-p0 LDP design: the best d-subset selection, checked against independent computations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechopt import estimation_risk, solve
from mechopt.families import FamilyMechanism, SubsetMixture, simulate_subset_counts, subset_inversion
from mechopt.solvers.design._convex import design_cvxpy
from mechopt.solvers.design._orbit import best_subset_size, orbit_certificate, subset_selection_risk
from mechopt.solvers.free._rays import ldp_rays


def ye_barg_risk(k, eps, d):
    """n E||p̂ - p||^2 of the unbiased subset-selection estimator at the uniform p (Wang et al. 2016 §IV).

    Written from the papers' inclusion probabilities, not from the orbit formula:
    ``p = d e^ε / (d e^ε + k - d)`` (an input is in its own report) and
    ``q = d((d-1) e^ε + k - d) / ((k-1)(d e^ε + k - d))`` (in another's), Ye & Barg 2018
    eq. (8); the count of reports holding ``x`` is binomial with ``π = d/k``, so
    ``n Var p̂_x = π(1-π)/(p-q)^2``.
    """
    e = math.exp(eps)
    p = d * e / (d * e + k - d)
    q = d * ((d - 1) * e + k - d) / ((k - 1) * (d * e + k - d))
    pi = d / k
    return k * pi * (1 - pi) / (p - q) ** 2


@pytest.mark.parametrize("k", [3, 10, 100, 1000])
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
def test_orbit_risk_equals_the_literature_formula(k, eps):
    for d in sorted({1, max(1, k // 3), k - 1}):
        assert subset_selection_risk(k, eps, d) == pytest.approx(ye_barg_risk(k, eps, d), rel=1e-12)


@pytest.mark.parametrize("k", [4, 17, 1000])
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
def test_best_size_is_the_rounded_continuous_optimum(k, eps):
    d, risk = best_subset_size(k, eps)
    x = k / (math.exp(eps) + 1)  # d (k - d) / (k + (e - 1) d)^2 is maximal at k / (e + 1)
    assert d in {max(1, math.floor(x)), min(k - 1, math.ceil(x))}
    assert risk == min(ye_barg_risk(k, eps, j) for j in range(1, k)) or risk == pytest.approx(
        min(ye_barg_risk(k, eps, j) for j in range(1, k)), rel=1e-12)
    value, lower = orbit_certificate(k, eps, d)
    assert lower <= value <= lower * (1 + 1e-12)


@pytest.mark.parametrize("k,eps", [(4, 0.5), (5, 1.0), (6, 2.0), (7, 4.0), (8, 1.0), (9, 0.5)])
def test_orbit_optimum_equals_the_full_ray_design(k, eps):
    # column generation over every staircase (an interior-point master and exact pricing):
    # no symmetry is assumed there
    r = solve({"k": k, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": eps}],
               "objective": {"kind": "estimation_variance"}}, method="colgen", quiet=True)
    assert r.status == "optimal"
    assert r.objective == pytest.approx(best_subset_size(k, eps)[1], rel=1e-8)
    if k <= 6:  # and the conic program over the listed rays
        V = ldp_rays(k, eps)
        assert design_cvxpy(V / V.max(axis=0), np.full(k, 1 / k)).value == pytest.approx(r.objective, rel=1e-5)


def test_small_orbit_is_exported_as_a_matrix_with_the_orbit_risk():
    k, eps = 12, 1.0
    r = solve({"k": k, "outputs": "free", "privacy": [{"notion": "wc_lip", "epsilon": eps}],
               "objective": {"kind": "estimation_variance"}}, quiet=True)
    assert r.status == "optimal" and r.stats["method"] == "orbit"
    assert estimation_risk(r.mechanism.matrix, np.full(k, 1 / k)) == pytest.approx(ye_barg_risk(k, eps, 3), rel=1e-9)
    assert r.mechanism.matrix.shape[1] <= k * (k - 1) // 2 + k


def test_uniform_k1000_is_a_verified_subset_selection_family():
    r = solve({"k": 1000, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
               "objective": {"kind": "estimation_variance"}}, quiet=True)
    assert r.status == "optimal" and isinstance(r.mechanism, FamilyMechanism)
    assert r.mechanism.family_spec["mixture"] == [{"d": 269, "weight": 1.0}]
    assert r.certificate.verified and r.mechanism.verify().verified
    assert r.bound <= r.objective <= r.bound * (1 + 1e-9)
    assert r.objective == pytest.approx(ye_barg_risk(1000, 1.0, 269), rel=1e-9)
    assert "subset_selection family" in r.summary()


def test_simulated_users_land_within_the_predicted_risk():
    # 8 runs of 100 000 users at k = 40 (the k = 1000 run is in benchmarks/bench_design.py)
    k, eps, n = 40, 1.0, 100_000
    d, risk = best_subset_size(k, eps)
    from mechopt.solvers.design._route import ratio_below

    fam = SubsetMixture.from_spec(SubsetMixture.spec(ratio_below(eps), [(d, 1.0)]), k)
    rng = np.random.default_rng(2024)
    p = np.full(k, 1 / k)
    errs = []
    for _ in range(8):
        x = rng.choice(k, size=n, p=p)
        counts = simulate_subset_counts(fam, x, rng)
        est, var = subset_inversion(fam, counts)
        errs.append(float(np.sum((est - p) ** 2)))
        assert var.sum() == pytest.approx(risk / n, rel=0.05)  # plug-in variance
    # each run's ||p̂ - p||^2 has relative s.d. about sqrt(2/k) = 22 %: the mean of 8, 8 %
    assert np.mean(errs) == pytest.approx(risk / n, rel=0.3)
