"""Tests of mechopt.continuous: the continuous-valued mechanisms of 003 §IV-mc.

Every closed form is checked against something computed another way: adaptive
quadrature, a formula printed elsewhere (Balle–Wang eq. 24, Lemma 4 eq. 23 literally),
a discretised channel, or a seeded Monte Carlo run with a stated tolerance. The
findings of docs/continuous.md are pinned here (search for "FINDING").
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

import mechopt.continuous as mc
from mechopt._errors import InputError

FAST = settings(max_examples=40, deadline=None, database=None)

# 003 Fig. 10: P = {1/3 + s/2, 1/3, 1/3 − s/2}, s = 0.2, on the points 0, 1, 2 (ΔX = 2)
FIG10_X = np.array([0.0, 1.0, 2.0])
FIG10_P = np.array([1 / 3 + 0.1, 1 / 3, 1 / 3 - 0.1])
FIG10_P = FIG10_P / FIG10_P.sum()

eps_st = st.floats(0.05, 6.0)


def test_all_names_resolve():
    for name in mc.__all__:
        assert getattr(mc, name) is not None, name


# ---------------------------------------------------------------------------
# E_γ-divergence: closed form vs quadrature, vs eq. 23 as printed, vs eq. 24


@pytest.mark.parametrize(
    "mu1, s1, mu2, s2, gamma",
    [
        (0.0, 1.0, 0.0, 2.0, 0.5),  # σ1 < σ2: interval
        (0.0, 2.0, 1.0, 1.0, math.e),  # σ1 > σ2: complement of an interval (eq. 23)
        (3.0, 1.0, 0.0, 5.0, math.e),
        (0.0, 5.0, 3.0, 1.0, math.exp(-1)),
        (1.0, 1.0, 0.0, 1.0, 2.0),  # equal variances: half-line
        (0.0, 1.0, 0.0, 1.0, 0.3),  # identical: 1 − γ
        (0.0, 1.0, 0.0, 1.0, 3.0),  # identical: 0
        (0.0, 10.0, 4.0, 1.0, 20.0),
    ],
)
def test_e_gamma_gaussian_matches_quadrature(mu1, s1, mu2, s2, gamma):
    closed = float(mc.e_gamma_gaussian(mu1, s1, mu2, s2, gamma=gamma))
    quad = mc.e_gamma(norm(mu1, s1).pdf, norm(mu2, s2).pdf, gamma=gamma, lo=-80.0, hi=80.0)
    assert closed == pytest.approx(quad, abs=1e-9)


def _eq23_as_printed(mu1, s1, mu2, s2, gamma):
    """003 Lemma 4, eq. (23), literally: Q-function, roots y_l <= y_u of f = γ g."""
    q = norm.sf
    a = 1 / (2 * s2**2) - 1 / (2 * s1**2)
    b = mu1 / s1**2 - mu2 / s2**2
    c = mu2**2 / (2 * s2**2) - mu1**2 / (2 * s1**2) + math.log(s2 / s1) - math.log(gamma)
    y_l, y_u = sorted(np.roots([a, b, c]).real)
    return 1 + q((y_u - mu1) / s1) - q((y_l - mu1) / s1) - gamma * (1 + q((y_u - mu2) / s2) - q((y_l - mu2) / s2))


@pytest.mark.parametrize(
    "mu1, s1, mu2, s2, gamma",
    [
        (0.0, 2.0, 1.0, 1.0, math.e),
        (0.0, 11.18, 3.0, 10.0, math.exp(-1)),
        (2.0, 3.0, -1.0, 0.5, 1.5),
    ],
)
def test_e_gamma_gaussian_is_eq23_when_sigma1_ge_sigma2(mu1, s1, mu2, s2, gamma):
    assert float(mc.e_gamma_gaussian(mu1, s1, mu2, s2, gamma=gamma)) == pytest.approx(
        _eq23_as_printed(mu1, s1, mu2, s2, gamma), abs=1e-12
    )


@pytest.mark.parametrize("dx, sigma, eps", [(1.0, 1.0, 1.0), (20.0, 10.0, 0.5), (2.0, 0.7, 3.0)])
def test_e_gamma_gaussian_reproduces_balle_wang_eq24(dx, sigma, eps):
    # 003 eq. (24), from [40]: E_{e^ε}(N(x, σ²) ‖ N(x', σ²)) with |x − x'| = ΔX
    printed = norm.cdf(dx / (2 * sigma) - eps * sigma / dx) - math.exp(eps) * norm.cdf(
        -dx / (2 * sigma) - eps * sigma / dx
    )
    got = float(mc.e_gamma_gaussian(0.0, sigma, dx, sigma, gamma=math.exp(eps)))
    assert got == pytest.approx(printed, abs=1e-13)


gauss_st = st.tuples(st.floats(-5, 5), st.floats(0.2, 8), st.floats(-5, 5), st.floats(0.2, 8))


@FAST
@given(gauss_st, st.floats(0.05, 20.0))
def test_prop3_identity(params, gamma):
    # 003 Prop. 3: E_γ(f‖g) = γ E_{1/γ}(g‖f) − γ + 1
    m1, s1, m2, s2 = params
    lhs = float(mc.e_gamma_gaussian(m1, s1, m2, s2, gamma=gamma))
    rhs = gamma * float(mc.e_gamma_gaussian(m2, s2, m1, s1, gamma=1 / gamma)) - gamma + 1
    assert lhs == pytest.approx(rhs, abs=1e-9 * max(1.0, gamma))


@FAST
@given(gauss_st, st.floats(0.0, 10.0), st.floats(0.0, 10.0))
def test_e_gamma_bounded_and_decreasing_in_gamma(params, g1, g2):
    lo_g, hi_g = sorted((g1, g2))
    e_lo = float(mc.e_gamma_gaussian(*params, gamma=lo_g))
    e_hi = float(mc.e_gamma_gaussian(*params, gamma=hi_g))
    assert max(0.0, 1 - lo_g) - 1e-12 <= e_lo <= 1.0
    assert e_hi <= e_lo + 1e-12


def test_e_gamma_quadrature_handles_a_root_on_the_grid():
    # the root y = 0.5 falls exactly on a grid point of linspace(-12, 13, 2001)
    got = mc.e_gamma(norm(0, 1).pdf, norm(1, 1).pdf, gamma=1.0, lo=-12.0, hi=13.0)
    assert got == pytest.approx(2 * norm.cdf(0.5) - 1, abs=1e-10)


# ---------------------------------------------------------------------------
# sampling mechanism (eq. 20, Prop. 2)


@FAST
@given(st.floats(0.0, 8.0), st.floats(0.0, 0.99))
def test_prop2_lambda_is_feasible_and_tight(eps, delta):
    lam = mc.sampling_lambda(epsilon=eps, delta=delta)
    assert 0.0 <= lam <= 1.0
    assert mc.sampling_delta(lam, epsilon=eps) == pytest.approx(delta, abs=1e-12)
    if lam < 1:  # no larger λ is feasible: Prop. 2 gives the optimum of eq. 21
        h = min(1e-6, 1 - lam)  # δ(λ) grows at rate >= e^-ε in λ
        assert mc.sampling_delta(lam + h, epsilon=eps) >= delta + 0.5 * math.exp(-eps) * h


def test_prop2_branches_as_stated_in_the_text():
    eps = 1.0
    threshold = (1 - math.exp(-eps)) / (math.exp(eps) - math.exp(-eps))
    assert mc.sampling_lambda(epsilon=eps, delta=threshold / 2) == pytest.approx(math.e * threshold / 2)
    d = (1 + threshold) / 2
    assert mc.sampling_lambda(epsilon=eps, delta=d) == pytest.approx(1 - math.exp(-1) + math.exp(-1) * d)
    assert mc.sampling_lambda(epsilon=eps, delta=0.0) == 0.0  # no pure ε-LIP sampling mechanism


@pytest.mark.parametrize("eps, delta", [(1.0, 0.01), (2.0, 0.01), (0.5, 0.1), (2.0, 0.5)])
def test_sampling_delta_matches_discretised_channel(eps, delta):
    # Independent route: the sampling mechanism on a discretised N(0,1) prior is the
    # discrete channel λI + (1−λ)1pᵀ; its eq.-3 δ approaches the closed form from below.
    lam = mc.sampling_lambda(epsilon=eps, delta=delta)
    xs, p = mc.discretize_prior(norm(0, 1).cdf, lo=-4.0, hi=4.0, n=400)
    channel = lam * np.eye(xs.size) + (1 - lam) * p[None, :]
    r = mc.check_channel_lip(p, channel, epsilon=eps, delta=delta)
    assert r.holds
    assert delta - 5e-3 * max(delta, 0.05) <= r.delta_achieved <= delta + 1e-12
    # FINDING: Prop. 2's λ does not pass the paper's own Cor. 9 (eq. 22) condition,
    # which would need δ >= max(λ, 1 − e^ε(1−λ)) = λ here.
    assert r.delta_e_gamma == pytest.approx(max(lam, 1 - math.exp(eps) * (1 - lam)), rel=1e-2)
    assert r.delta_e_gamma > delta * 1.5


def test_sampling_mechanism_monte_carlo():
    lam, n = 0.3, 40_000
    rng = np.random.default_rng(12345)
    x = rng.normal(2.0, 1.0, n)
    y = mc.sampling_mechanism(x, lam=lam, draw_prior=lambda g, m: g.normal(2.0, 1.0, m), rng=7)
    kept = np.mean(y == x)
    assert abs(kept - lam) < 5 * math.sqrt(lam * (1 - lam) / n)
    # Y has the prior as its marginal (eq. 21's argument): mean 2, sd 1, within 5 SE
    assert abs(y.mean() - 2.0) < 5 / math.sqrt(n)
    assert abs(y.std() - 1.0) < 5 * math.sqrt(0.5 / n)


def test_samplers_are_reproducible_from_a_seed():
    x = np.linspace(0, 1, 5)

    def draw(g, m):
        return g.uniform(size=m)

    a = mc.sampling_mechanism(x, lam=0.5, draw_prior=draw, rng=3)
    b = mc.sampling_mechanism(x, lam=0.5, draw_prior=draw, rng=np.random.default_rng(3))
    assert np.array_equal(a, b)
    assert np.array_equal(
        mc.gaussian_mechanism(x, sigma=1.0, rng=4),
        mc.gaussian_mechanism(x, sigma=1.0, rng=4),
    )
    assert np.array_equal(
        mc.laplace_mechanism(x, scale=1.0, rng=5),
        mc.laplace_mechanism(x, scale=1.0, rng=5),
    )
    assert not np.array_equal(
        mc.gaussian_mechanism(x, sigma=1.0, rng=4),
        mc.gaussian_mechanism(x, sigma=1.0, rng=6),
    )


# ---------------------------------------------------------------------------
# Gaussian mechanism (Thm 5, Cor. 10)


def test_thm5_supremum_over_the_line_is_one():
    # FINDING: Thm 5's sup over all real x is 1 for every σ_N (vacuous).
    assert mc.gaussian_delta(50.0, epsilon=1.0, mu_x=0.0, sigma_x=5.0, support=None) == 1.0
    far = float(mc.gaussian_delta_at(1e3, 50.0, epsilon=1.0, mu_x=0.0, sigma_x=5.0))
    assert far > 1 - 1e-9
    with pytest.raises(InputError, match="support"):
        mc.gaussian_sigma(epsilon=1.0, delta=1e-4, mu_x=0.0, sigma_x=5.0, support=None)


@FAST
@given(st.floats(-20, 20), st.floats(0.5, 40), st.floats(0.0, 1.0), eps_st)
def test_gaussian_delta_decreases_with_noise_and_epsilon(x, sigma, more, eps):
    kw = {"mu_x": 0.0, "sigma_x": 5.0}
    d = float(mc.gaussian_delta_at(x, sigma, epsilon=eps, **kw))
    assert float(mc.gaussian_delta_at(x, sigma * (1 + more), epsilon=eps, **kw)) <= d + 1e-12
    assert float(mc.gaussian_delta_at(x, sigma, epsilon=eps + more, **kw)) <= d + 1e-12


@pytest.mark.parametrize("eps, delta", [(1.0, 1e-4), (2.0, 1e-2), (4.0, 1e-4)])
def test_cor10_sigma_is_the_smallest_feasible(eps, delta):
    xs = np.array([0.0, 5.0, -10.0])
    kw = {"epsilon": eps, "mu_x": 0.0, "sigma_x": 5.0}
    sig = mc.gaussian_sigma_at(xs, delta=delta, **kw)
    assert np.all(mc.gaussian_delta_at(xs, sig, **kw) <= delta)
    assert np.all(mc.gaussian_delta_at(xs, sig * (1 - 1e-6), **kw) > delta)
    assert sig[0] < sig[1] < sig[2]  # Fig. 9: lower prior density needs more noise


def test_cor10_values_and_thm5_over_an_interval_agree_at_the_end_point():
    kw = {"epsilon": 1.0, "delta": 1e-4, "mu_x": 0.0, "sigma_x": 5.0}
    s0, s10 = mc.gaussian_sigma_at([0.0, 10.0], **kw)
    assert (s0, s10) == (
        pytest.approx(11.542, abs=1e-3),
        pytest.approx(35.276, abs=1e-3),
    )
    # the sup over [−10, 10] sits at the end point, so Thm 5's σ equals σ_LIP(10)
    assert mc.gaussian_sigma(support=(-10.0, 10.0), **kw) == pytest.approx(s10, rel=1e-9)


def test_gaussian_closed_form_delta_matches_quadrature_of_the_mechanism():
    # Untruncated N(0, 5²) prior, discretised over ±8σ; f_Y by quadrature, not by formula.
    eps, sn = 1.0, 8.0
    xs, p = mc.discretize_prior(norm(0, 5).cdf, lo=-40.0, hi=40.0, n=321)
    r = mc.check_additive_lip(xs, p, noise="gaussian", scale=sn, epsilon=eps, delta=0.01)
    g, s_y = math.e, math.hypot(5.0, sn)
    for i in np.searchsorted(xs, [0.0, 5.0, 10.0]):
        fwd = float(mc.e_gamma_gaussian(xs[i], sn, 0.0, s_y, gamma=g))
        bwd = float(mc.e_gamma_gaussian(0.0, s_y, xs[i], sn, gamma=g))
        assert r.delta_by_input[i] == pytest.approx(max(fwd / g, bwd), abs=2e-5)
    assert math.isinf(r.epsilon_achieved)  # no pure ε-LIP for additive Gaussian noise


def test_gaussian_e_gamma_monte_carlo():
    # E_{e^ε}(f_Y ‖ f_{Y|x}) = P_Y(S) − γ P_{Y|x}(S), S = {f_Y >= γ f_{Y|x}}, estimated
    # from mechanism outputs; seeded, tolerance 5 standard errors.
    mu, sx, sn, x, eps, n = 0.0, 5.0, 6.0, 4.0, 0.5, 200_000
    gamma, s_y = math.exp(eps), math.hypot(sx, sn)
    rng = np.random.default_rng(2024)
    y_all = mc.gaussian_mechanism(rng.normal(mu, sx, n), sigma=sn, rng=rng)
    y_x = mc.gaussian_mechanism(np.full(n, x), sigma=sn, rng=rng)

    def in_s(y):
        return norm.pdf(y, mu, s_y) >= gamma * norm.pdf(y, x, sn)

    p1, p2 = in_s(y_all).mean(), in_s(y_x).mean()
    se = math.sqrt(p1 * (1 - p1) / n + gamma**2 * p2 * (1 - p2) / n)
    expected = float(mc.e_gamma_gaussian(mu, s_y, x, sn, gamma=gamma))
    assert expected > 0.05
    assert abs((p1 - gamma * p2) - expected) < 5 * se


@pytest.mark.parametrize("eps, delta", [(1.0, 1e-4), (4.0, 1e-2)])
def test_thm5_calibration_holds_for_prior_truncated_to_the_support(eps, delta):
    sigma = mc.gaussian_sigma(epsilon=eps, delta=delta, mu_x=0.0, sigma_x=5.0, support=(-10.0, 10.0))
    xs, p = mc.discretize_prior(norm(0, 5).cdf, lo=-10.0, hi=10.0, n=161)
    r = mc.check_additive_lip(xs, p, noise="gaussian", scale=sigma, epsilon=eps, delta=delta)
    assert r.holds
    assert 0.3 * delta < r.delta_achieved <= delta  # close to tight, not vacuous
    assert r.delta_achieved <= r.delta_e_gamma + 1e-15


def test_cor10_instance_dependent_noise_fails_lip():
    # FINDING: with σ_LIP(x) per user, f_Y is a Gaussian mixture, not N(μ, σ_X²+σ_N(x)²);
    # at ε = 1, δ = 1e-4 the user at x ≈ 0 gets δ ≈ 0.12 (grid value is a lower bound).
    eps, delta = 1.0, 1e-4
    xs, p = mc.discretize_prior(norm(0, 5).cdf, lo=-30.0, hi=30.0, n=161)
    sig = mc.gaussian_sigma_at(xs, epsilon=eps, delta=delta, mu_x=0.0, sigma_x=5.0)
    r = mc.check_additive_lip(xs, p, noise="gaussian", scale=sig, epsilon=eps, delta=delta)
    centre = int(np.argmin(np.abs(xs)))
    assert not r.holds
    assert r.delta_by_input[centre] > 0.1  # 1000× the claim
    # the paper's own per-user accounting is met, so the gap is the marginal alone
    assert float(mc.gaussian_delta_at(xs[centre], sig[centre], epsilon=eps, mu_x=0.0, sigma_x=5.0)) <= delta


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_clipping_is_post_processing(eps):
    # Clipping Y to [l, u] can only lower the eq.-3 δ, and makes Gaussian ε finite.
    # Both grids have spacing 0.002; the grid values are lower bounds accurate to ~1e-6.
    xs, p = mc.discretize_prior(norm(0, 2).cdf, lo=-4.0, hi=4.0, n=41)
    kw = {"noise": "gaussian", "scale": 3.0, "epsilon": eps, "delta": 0.01}
    free = mc.check_additive_lip(xs, p, n_grid=40_001, **kw)
    clipped = mc.check_additive_lip(xs, p, clip=(-4.0, 4.0), **kw)
    assert math.isinf(free.epsilon_achieved) and math.isfinite(clipped.epsilon_achieved)
    assert clipped.delta_achieved <= free.delta_achieved + 1e-6


def test_gaussian_mechanism_per_input_sigma_monte_carlo():
    n = 50_000
    y = mc.gaussian_mechanism(np.zeros((2, n)), sigma=np.array([[1.0], [3.0]]), rng=11)
    sd = y.std(axis=1)
    assert abs(sd[0] - 1.0) < 5 * 1.0 / math.sqrt(2 * n)
    assert abs(sd[1] - 3.0) < 5 * 3.0 / math.sqrt(2 * n)


# ---------------------------------------------------------------------------
# Laplace mechanism (Thm 6)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 1.4, 2.0, 4.0, 6.0])
def test_eq25_holds_on_fig10_prior(eps):
    b = mc.laplace_scale(epsilon=eps, p_min=FIG10_P.min(), delta_x=2.0)
    r = mc.check_additive_lip(FIG10_X, FIG10_P, noise="laplace", scale=b, epsilon=eps)
    assert r.holds and r.epsilon_achieved <= eps
    assert r.epsilon_achieved > 0.7 * eps  # not vacuous


@pytest.mark.parametrize("eps", [1.5, 2.0, 4.0])
def test_eq25_first_branch_also_holds_where_the_paper_switches_to_ldp(eps):
    # FINDING: ln((e^ε − P_min)/(1 − P_min)) >= ε always, and the first branch is valid
    # beyond ε = ln(1/P_min) too: the switch to ΔX/ε only adds noise.
    pm = FIG10_P.min()
    assert eps >= math.log(1 / pm)
    b_first = 2.0 / math.log((math.exp(eps) - pm) / (1 - pm))
    assert b_first < mc.laplace_scale(epsilon=eps, p_min=pm, delta_x=2.0) == pytest.approx(2.0 / eps)
    r = mc.check_additive_lip(FIG10_X, FIG10_P, noise="laplace", scale=b_first, epsilon=eps)
    assert r.holds


@FAST
@given(st.floats(0.01, 0.99), eps_st)
def test_eq25_is_tight_for_a_two_point_prior(p_low, eps):
    # P_min at one end, the rest at the other: ratio P_min + (1−P_min)e^{ΔX/b} = e^ε exactly
    prior = np.array([p_low, 1 - p_low])
    pm = prior.min()
    b = 3.0 / math.log((math.exp(eps) - pm) / (1 - pm))
    r = mc.check_additive_lip([0.0, 3.0], prior, noise="laplace", scale=b, epsilon=eps, n_grid=401)
    assert r.epsilon_achieved == pytest.approx(eps, rel=1e-9)
    assert r.holds


prior_st = st.integers(2, 5).flatmap(
    lambda k: st.tuples(
        st.lists(st.floats(-5, 5), min_size=k, max_size=k, unique=True).filter(lambda v: max(v) - min(v) > 0.1),
        st.lists(st.floats(0.01, 1.0), min_size=k, max_size=k),
    )
)


@FAST
@given(prior_st, eps_st)
def test_eq25_holds_for_every_prior(points_weights, eps):
    points, weights = points_weights
    prior = np.array(weights) / sum(weights)
    b = mc.laplace_scale(epsilon=eps, p_min=prior.min(), delta_x=max(points) - min(points))
    r = mc.check_additive_lip(points, prior, noise="laplace", scale=b, epsilon=eps, n_grid=801)
    assert r.holds


@FAST
@given(prior_st, st.floats(0.1, 5.0), st.floats(0.0, 2.0))
def test_more_laplace_noise_means_smaller_achieved_epsilon(points_weights, b, more):
    points, weights = points_weights
    prior = np.array(weights) / sum(weights)
    kw = {"noise": "laplace", "epsilon": 1.0, "n_grid": 801}
    e1 = mc.check_additive_lip(points, prior, scale=b, **kw).epsilon_achieved
    e2 = mc.check_additive_lip(points, prior, scale=b * (1 + more), **kw).epsilon_achieved
    assert e2 <= e1 + 1e-9


def test_eq26_alpha_zero_is_ldp_scale_and_holds_unclipped():
    b = mc.laplace_scale_dependent(FIG10_P, epsilon=1.0, delta_x=2.0, alpha=0.0)
    assert np.allclose(b, 2.0)
    assert mc.check_additive_lip(FIG10_X, FIG10_P, noise="laplace", scale=b, epsilon=1.0).holds


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
def test_eq26_regimes(eps):
    # FINDING: eq. 26 holds or fails depending on the undefined α_ε and the output range.
    kw = {"noise": "laplace", "epsilon": eps}
    b = mc.laplace_scale_dependent(FIG10_P, epsilon=eps, delta_x=2.0, alpha=1 - math.exp(-eps))
    unclipped = mc.check_additive_lip(FIG10_X, FIG10_P, scale=b, **kw)
    assert math.isinf(unclipped.epsilon_achieved) and not unclipped.holds
    # holds with Y clipped to [x_min, x_max] and α_ε = 1 − e^-ε ...
    assert mc.check_additive_lip(FIG10_X, FIG10_P, scale=b, clip=(0.0, 2.0), **kw).holds
    # ... and fails with a wide output range [−10, 12]
    wide = mc.check_additive_lip(FIG10_X, FIG10_P, scale=b, clip=(-10.0, 12.0), **kw)
    assert not wide.holds and wide.epsilon_achieved > eps * 1.01


def test_eq26_fails_with_alpha_one_at_epsilon_one_on_a_wide_range():
    b = mc.laplace_scale_dependent(FIG10_P, epsilon=1.0, delta_x=2.0, alpha=1.0)
    r = mc.check_additive_lip(FIG10_X, FIG10_P, noise="laplace", scale=b, epsilon=1.0, clip=(-10.0, 12.0))
    assert r.epsilon_achieved == pytest.approx(1.453, abs=2e-3)


def test_laplace_mechanism_monte_carlo():
    n, b = 100_000, 1.5
    y = mc.laplace_mechanism(np.zeros(n), scale=b, rng=99)
    assert abs(np.abs(y).mean() - b) < 5 * b / math.sqrt(n)  # E|Lap(0,b)| = b, sd b
    yc = mc.laplace_mechanism(np.zeros(n), scale=b, rng=100, clip=(-1.0, 2.0))
    assert yc.min() >= -1.0 and yc.max() <= 2.0
    atom = 0.5 * math.exp(-2.0 / b)  # Pr(Y = u) = Pr(N >= 2)
    assert abs(np.mean(yc == 2.0) - atom) < 5 * math.sqrt(atom * (1 - atom) / n)


# ---------------------------------------------------------------------------
# the generic channel check


@FAST
@given(st.lists(st.floats(0.01, 1.0), min_size=2, max_size=6), eps_st)
def test_ldp_randomized_response_is_eps_lip_for_every_prior(weights, eps):
    k = len(weights)
    prior = np.array(weights) / sum(weights)
    q = np.full((k, k), 1.0 / (math.exp(eps) + k - 1))
    np.fill_diagonal(q, math.exp(eps) / (math.exp(eps) + k - 1))
    r = mc.check_channel_lip(prior, q, epsilon=eps)
    assert r.holds and r.delta_achieved <= 1e-12


def test_channel_check_binary_rr_closed_form():
    e = math.exp(1.0)
    q = [[e / (1 + e), 1 / (1 + e)], [1 / (1 + e), e / (1 + e)]]
    r = mc.check_channel_lip([0.5, 0.5], q, epsilon=0.5)
    assert r.epsilon_achieved == pytest.approx(math.log((1 + e) / 2))
    assert not r.holds


# ---------------------------------------------------------------------------
# errors


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: mc.sampling_lambda(epsilon=-1.0, delta=0.1), "epsilon"),
        (
            lambda: mc.sampling_lambda(epsilon=1.0, delta=1.5),
            r"delta: must lie in \[0, 1\]",
        ),
        (lambda: mc.sampling_delta(1.2, epsilon=1.0), "lam"),
        (
            lambda: mc.sampling_mechanism([1.0], lam=0.5, draw_prior=lambda g, n: [0.0, 1.0]),
            "draw_prior",
        ),
        (
            lambda: mc.gaussian_sigma_at(0.0, epsilon=1.0, delta=0.0, mu_x=0.0, sigma_x=1.0),
            r"delta: must lie in \(0, 1\)",
        ),
        (
            lambda: mc.gaussian_delta_at(0.0, -1.0, epsilon=1.0, mu_x=0.0, sigma_x=1.0),
            "sigma_n",
        ),
        (
            lambda: mc.gaussian_delta_at(0.0, 1.0, epsilon=1.0, mu_x=0.0, sigma_x=0.0),
            "sigma_x",
        ),
        (
            lambda: mc.gaussian_sigma(epsilon=1.0, delta=0.1, mu_x=0.0, sigma_x=1.0, support=(1.0, 1.0)),
            "support",
        ),
        (lambda: mc.e_gamma_gaussian(0.0, 0.0, 0.0, 1.0, gamma=1.0), "sigma"),
        (lambda: mc.e_gamma_gaussian(0.0, 1.0, 0.0, 1.0, gamma=-1.0), "gamma"),
        (lambda: mc.e_gamma(norm.pdf, norm.pdf, gamma=1.0, lo=1.0, hi=0.0), "lo"),
        (lambda: mc.laplace_scale(epsilon=0.0, p_min=0.2, delta_x=1.0), "epsilon"),
        (lambda: mc.laplace_scale(epsilon=1.0, p_min=0.0, delta_x=1.0), "p_min"),
        (lambda: mc.laplace_scale(epsilon=1.0, p_min=0.2, delta_x=-1.0), "delta_x"),
        (
            lambda: mc.laplace_scale_dependent([0.5, 0.6], epsilon=1.0, delta_x=1.0, alpha=1.0),
            "prior: must sum to 1",
        ),
        (
            lambda: mc.laplace_scale_dependent([0.5, 0.5], epsilon=1.0, delta_x=1.0, alpha=-1.0),
            "alpha",
        ),
        (lambda: mc.laplace_mechanism([0.0], scale=1.0, clip=(2.0, 1.0)), "clip"),
        (lambda: mc.laplace_mechanism([0.0], scale=0.0), "scale"),
        (
            lambda: mc.check_additive_lip([0.0, 1.0], [0.5, 0.5], noise="cauchy", scale=1.0, epsilon=1.0),
            "noise",
        ),
        (
            lambda: mc.check_additive_lip(
                [0.0, 1.0],
                [0.5, 0.5],
                noise="laplace",
                scale=[1.0, 2.0, 3.0],
                epsilon=1.0,
            ),
            "scale",
        ),
        (
            lambda: mc.check_additive_lip([0.0, 1.0], [0.5], noise="laplace", scale=1.0, epsilon=1.0),
            "prior",
        ),
        (
            lambda: mc.check_channel_lip([0.5, 0.5], [[0.5, 0.6], [0.5, 0.5]], epsilon=1.0),
            "channel",
        ),
        (lambda: mc.discretize_prior(norm.cdf, lo=0.0, hi=1.0, n=0), "n"),
    ],
)
def test_bad_input_raises_input_error(call, match):
    with pytest.raises(InputError, match=match):
        call()


def test_input_error_is_a_value_error_and_wrong_type_is_type_error():
    with pytest.raises(ValueError):
        mc.sampling_lambda(epsilon=float("nan"), delta=0.1)
    with pytest.raises(TypeError, match="epsilon"):
        mc.sampling_lambda(epsilon="one", delta=0.1)  # type: ignore[arg-type]
