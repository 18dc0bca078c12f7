"""Tests of the runtime estimators and the vectorised sampler against independent facts."""

from __future__ import annotations

import time

import numpy as np
import pytest
from scipy import optimize, stats

from mechopt._errors import InputError
from mechopt.runtime import (
    estimate_em,
    estimate_inversion,
    estimate_projected,
    estimation_covariance,
    estimation_risk,
    mmse_aggregate,
    mmse_decoder,
    mmse_histogram,
    mmse_histogram_risk,
    mmse_risk,
    project_simplex,
    simulate_reports,
    variance_report,
)

P_TRUE = np.array([0.30, 0.25, 0.20, 0.12, 0.08, 0.05])
N_USERS = 100_000


def krr(k: int, eps: float) -> np.ndarray:
    """k-ary randomized response from its textbook formula (Kairouz et al. 2016)."""
    keep = np.exp(eps) / (np.exp(eps) + k - 1)
    other = 1.0 / (np.exp(eps) + k - 1)
    return np.where(np.eye(k, dtype=bool), keep, other)


def krr_reports(x: np.ndarray, k: int, eps: float, rng: np.random.Generator) -> np.ndarray:
    """Randomized response drawn directly (not through the code under test)."""
    keep = rng.random(x.size) < np.exp(eps) / (np.exp(eps) + k - 1)
    shifted = (x + rng.integers(1, k, size=x.size)) % k  # uniform over the other k-1
    return np.where(keep, x, shifted)


def log_likelihood(Q, p, counts):
    lam = np.asarray(p) @ np.asarray(Q)
    used = counts > 0
    return float(counts[used] @ np.log(lam[used]))


# ------------------------------------------------------------------ risk formula


@pytest.mark.parametrize("k, eps", [(10, 0.5), (6, 1.0), (3, 2.0)])
def test_risk_of_krr_matches_multinomial_variance(k, eps):
    """For k-RR, inversion is linear: Var p̂_x = λ_x(1-λ_x) / (n (p-q)²) exactly."""
    Q = krr(k, eps)
    keep, other = Q[0, 0], Q[0, 1]
    for p0 in (np.full(k, 1 / k), np.random.default_rng(k).dirichlet(np.ones(k))):
        lam = p0 @ Q
        exact = float(np.sum(lam * (1 - lam)) / (keep - other) ** 2)
        assert estimation_risk(Q, p0) == pytest.approx(exact, rel=1e-10)
        # Wang et al. (2017) drop the p_x(1 - p_x) term; the difference is 1 - Σ p².
        wang = k * other * (1 - other) / (keep - other) ** 2 + (1 - keep - other) / (keep - other)
        assert estimation_risk(Q, p0) - wang == pytest.approx(1 - np.sum(p0**2), rel=1e-9)


def test_risk_planning_value_of_spec():
    # docs/model.md: k-RR, LDP k=10, eps=0.5, uniform p0: 242.5.
    assert estimation_risk(krr(10, 0.5), np.full(10, 0.1)) == pytest.approx(242.5, abs=0.05)


def test_risk_of_identity_is_multinomial():
    p0 = np.array([0.5, 0.3, 0.2])
    np.testing.assert_allclose(estimation_covariance(np.eye(3), p0),
                               np.diag(p0) - np.outer(p0, p0), atol=1e-12)


def test_risk_is_invariant_to_splitting_a_column():
    """Splitting an output into two identical halves carries the same information."""
    Q = krr(4, 1.0)
    split = np.hstack([Q, Q[:, :1] / 2])
    split[:, 0] /= 2
    p0 = np.array([0.1, 0.2, 0.3, 0.4])
    assert estimation_risk(split, p0) == pytest.approx(estimation_risk(Q, p0), rel=1e-10)


def test_risk_is_infinite_when_not_identifiable():
    Q = np.array([[0.5, 0.5], [0.5, 0.5], [0.2, 0.8]])
    assert estimation_risk(Q, np.full(3, 1 / 3)) == np.inf


def test_risk_errors():
    with pytest.raises(InputError, match=r"p0\[1\]: must be > 0"):
        estimation_risk(krr(3, 1.0), [0.5, 0.0, 0.5])
    with pytest.raises(InputError, match="p0: must sum to 1"):
        estimation_risk(krr(3, 1.0), [0.5, 0.2, 0.2])
    with pytest.raises(InputError, match=r"Q\[0\]: row must sum to 1"):
        estimation_risk([[0.5, 0.4], [0.5, 0.5]], [0.5, 0.5])


# -------------------------------------------------------------- end to end, k-RR


@pytest.fixture(scope="module")
def krr_run():
    k, eps = P_TRUE.size, 1.0
    rng = np.random.default_rng(7)
    x = rng.choice(k, size=N_USERS, p=P_TRUE)
    y = krr_reports(x, k, eps, rng)
    return krr(k, eps), x, np.bincount(y, minlength=k)


@pytest.mark.parametrize("estimator", [estimate_inversion, estimate_projected, estimate_em])
def test_one_deployment_error_within_prediction(krr_run, estimator):
    """100 000 users; squared error below 5× the predicted tr(BJ⁻¹Bᵀ)/n.

    The error is close to a weighted chi-square with ~k-1 degrees of freedom; exceeding
    5× its mean has probability < 1e-3. The empirical p (not P_TRUE) is the target.
    """
    Q, x, counts = krr_run
    p_emp = np.bincount(x, minlength=Q.shape[0]) / x.size
    predicted = estimation_risk(Q, P_TRUE) / N_USERS
    err = float(np.sum((estimator(Q, counts) - P_TRUE) ** 2))
    print(f"{estimator.__name__}: squared error {err:.3e}, predicted {predicted:.3e}")
    assert err < 5 * predicted
    assert float(np.sum((estimator(Q, counts) - p_emp) ** 2)) < 5 * predicted


@pytest.fixture(scope="module")
def solved_run():
    """A mechanism solved for estimation (LDP, ε = 1, p0 = P_TRUE), saved and loaded back."""
    import mechopt

    k = P_TRUE.size
    r = mechopt.solve({"k": k, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
                       "objective": {"kind": "estimation_variance", "p0": P_TRUE.tolist()}}, quiet=True)
    assert r.ok
    Q = r.mechanism.matrix
    assert Q.shape[1] != k  # a non-square channel: inversion is a pseudo-inverse
    rng = np.random.default_rng(17)
    x = rng.choice(k, size=N_USERS, p=P_TRUE)
    y = simulate_reports(Q, x, seed=rng)
    return Q, x, np.bincount(y, minlength=Q.shape[1])


@pytest.mark.parametrize("estimator", [estimate_inversion, estimate_projected, estimate_em])
def test_solved_mechanism_end_to_end_error_within_prediction(solved_run, estimator):
    """100 000 users privatized with a *solved* channel: error below 5× tr(BJ⁻¹Bᵀ)/n."""
    Q, x, counts = solved_run
    predicted = estimation_risk(Q, P_TRUE) / N_USERS
    # the solved channel beats k-RR's prediction at the same ε (it was optimised for it)
    assert predicted < estimation_risk(krr(P_TRUE.size, 1.0), P_TRUE) / N_USERS
    err = float(np.sum((estimator(Q, counts) - P_TRUE) ** 2))
    print(f"{estimator.__name__}: squared error {err:.3e}, predicted {predicted:.3e}")
    assert err < 5 * predicted


def test_solved_mechanism_mean_error_matches_prediction(solved_run):
    """300 deployments of the solved channel: mean error of inversion within ±15%."""
    Q = solved_run[0]
    rng = np.random.default_rng(23)
    all_counts = rng.multinomial(N_USERS, P_TRUE @ Q, size=300)
    predicted = estimation_risk(Q, P_TRUE) / N_USERS
    errs = [np.sum((estimate_inversion(Q, c) - P_TRUE) ** 2) for c in all_counts]
    assert 0.85 < float(np.mean(errs)) / predicted < 1.15


def test_mean_squared_error_matches_prediction():
    """400 deployments (multinomial report counts): mean error within ±15% of the formula.

    The relative standard deviation of the mean is about sqrt(2/(k-1)/400) ≈ 3.2%.
    """
    k, eps, trials = P_TRUE.size, 1.0, 400
    Q = krr(k, eps)
    rng = np.random.default_rng(11)
    all_counts = rng.multinomial(N_USERS, P_TRUE @ Q, size=trials)
    predicted = estimation_risk(Q, P_TRUE) / N_USERS
    for estimator in (estimate_inversion, estimate_projected, estimate_em):
        errs = [np.sum((estimator(Q, c) - P_TRUE) ** 2) for c in all_counts]
        ratio = float(np.mean(errs)) / predicted
        print(f"{estimator.__name__}: mean error / predicted = {ratio:.3f}")
        assert 0.85 < ratio < 1.15


def test_em_equals_inversion_in_the_interior(krr_run):
    Q, _, counts = krr_run
    inv = estimate_inversion(Q, counts)
    assert inv.min() > 0
    np.testing.assert_allclose(estimate_em(Q, counts), inv, atol=1e-6)


def test_variance_report_intervals_cover():
    """Plug-in 95% Wald intervals around the EM estimate cover p about 95% of the time."""
    k, eps, trials, n = P_TRUE.size, 1.0, 300, 20_000
    Q = krr(k, eps)
    rng = np.random.default_rng(3)
    covered = 0
    for counts in rng.multinomial(n, P_TRUE @ Q, size=trials):
        rep = variance_report(Q, estimate_em(Q, counts), n)
        covered += int(np.sum((rep.lower <= P_TRUE) & (P_TRUE <= rep.upper)))
    rate = covered / (trials * k)
    print(f"coverage {rate:.3f}")
    assert 0.93 < rate < 0.97


def test_variance_report_fields():
    Q, p0, n = krr(4, 1.0), np.array([0.1, 0.2, 0.3, 0.4]), 1000
    rep = variance_report(Q, p0, n, level=0.9)
    assert rep.risk == pytest.approx(estimation_risk(Q, p0))
    assert rep.expected_squared_error == pytest.approx(rep.risk / n)
    assert np.sum(rep.standard_errors**2) == pytest.approx(rep.risk / n)
    z = stats.norm.ppf(0.95)
    np.testing.assert_allclose(rep.upper - p0, z * rep.standard_errors)
    with pytest.raises(InputError, match="n: must be an integer >= 1"):
        variance_report(Q, p0, 0)
    with pytest.raises(InputError, match="level: must lie strictly between 0 and 1"):
        variance_report(Q, p0, 10, level=1.0)


# ------------------------------------------------------ EM = maximum likelihood


@pytest.mark.parametrize("counts", [[5, 3, 0, 2], [9, 0, 0, 1], [0, 4, 4, 0]])
def test_em_equals_brute_force_maximum_likelihood(counts):
    """k = 3, a 3×4 channel: EM's likelihood equals the best of a fine simplex grid."""
    Q = np.array([[0.5, 0.2, 0.2, 0.1], [0.1, 0.6, 0.1, 0.2], [0.2, 0.1, 0.3, 0.4]])
    counts = np.array(counts, dtype=float)
    step = 1 / 800
    a, b = np.meshgrid(np.arange(0, 1 + step / 2, step), np.arange(0, 1 + step / 2, step))
    keep = a + b <= 1 + 1e-12
    grid = np.stack([a[keep], b[keep], np.clip(1 - a[keep] - b[keep], 0, 1)], axis=1)
    lam = grid @ Q
    with np.errstate(divide="ignore"):
        ll = np.where(counts > 0, np.log(lam), 0.0) @ counts
    best = grid[np.argmax(ll)]
    p_em = estimate_em(Q, counts, tol=1e-12)
    # EM stops with a certified gap of at most tol per report
    assert log_likelihood(Q, p_em, counts) >= ll.max() - 1e-12 * counts.sum()
    assert np.abs(p_em - best).max() <= 2 * step
    # and a local optimiser started at the grid optimum agrees to 1e-5
    res = optimize.minimize(lambda t: -log_likelihood(Q, [t[0], t[1], 1 - t[0] - t[1]],
                                                      counts),
                            best[:2], method="SLSQP", bounds=[(1e-12, 1)] * 2,
                            constraints=[{"type": "ineq", "fun": lambda t: 1 - t[0] - t[1]}])
    assert log_likelihood(Q, p_em, counts) >= -res.fun - 1e-9


def test_em_certifies_optimality_on_a_large_sparse_case():
    """k = 200, ε = 0.2: most coordinates of the ML estimate are 0 (slow for plain EM).

    KKT of max Σ w_y log λ_y on the simplex: g(x) = Σ_y w_y Q[x,y]/λ_y ≤ 1 + gap, with
    equality on the support; by concavity ℓ* − ℓ(p) ≤ max g − 1.
    """
    k = 200
    Q = krr(k, 0.2)
    rng = np.random.default_rng(0)
    counts = rng.multinomial(100_000, rng.dirichlet(np.ones(k)) @ Q)
    t0 = time.perf_counter()
    p = estimate_em(Q, counts)
    assert time.perf_counter() - t0 < 5.0
    g = Q @ (counts / counts.sum() / (p @ Q))
    assert g.max() - 1 <= 1e-12
    assert np.sum(p == 0) > k // 2
    assert p.min() >= 0 and p.sum() == pytest.approx(1.0, abs=1e-12)


def test_em_warns_when_stopped_early():
    with pytest.warns(RuntimeWarning, match=r"estimate_em: stopped after max_iter=1 EM steps"):
        estimate_em(krr(5, 0.1), [10, 20, 30, 40, 50], max_iter=1)


def test_em_boundary_case():
    Q = [[0.75, 0.25], [0.25, 0.75]]
    np.testing.assert_allclose(estimate_em(Q, [90, 10]), [1.0, 0.0], atol=1e-9)


def test_em_refuses_impossible_output():
    Q = [[0.5, 0.5, 0.0], [0.5, 0.5, 0.0]]
    with pytest.raises(InputError, match=r"counts\[2\]: is 3.0 but the channel never"):
        estimate_em(Q, [1, 1, 3])


# ------------------------------------------------------------- inversion, projection


def test_inversion_square_equals_solve():
    Q = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.25, 0.25, 0.5]])
    counts = np.array([40, 35, 25])
    np.testing.assert_allclose(estimate_inversion(Q, counts),
                               np.linalg.solve(Q.T, counts / counts.sum()), atol=1e-12)


def test_inversion_non_square_is_constrained_least_squares():
    """KKT system of min ‖Qᵀp − f‖² s.t. 1ᵀp = 1, solved independently."""
    rng = np.random.default_rng(2)
    Q = rng.dirichlet(np.ones(7), size=4)
    f = rng.dirichlet(np.ones(7))
    kkt = np.block([[2 * Q @ Q.T, np.ones((4, 1))], [np.ones((1, 4)), np.zeros((1, 1))]])
    p = np.linalg.solve(kkt, np.r_[2 * Q @ f, 1.0])[:4]
    np.testing.assert_allclose(estimate_inversion(Q, f * 1000), p, atol=1e-10)


def test_inversion_refuses_rank_deficient_channel():
    Q = [[0.5, 0.5], [0.5, 0.5], [0.2, 0.8]]
    with pytest.raises(InputError, match=r"Q: has rank 2 < k = 3.*use the 'em' method"):
        estimate_inversion(Q, [3, 4])
    with pytest.raises(InputError, match="counts: must contain at least one report"):
        estimate_inversion(krr(2, 1.0), [0, 0])
    with pytest.raises(InputError, match=r"counts: must be a 1-D array with one count per "
                                         r"output \(2\)"):
        estimate_inversion(krr(2, 1.0), [1, 2, 3])


@pytest.mark.parametrize("seed", range(5))
def test_projection_is_the_nearest_point_of_the_simplex(seed):
    rng = np.random.default_rng(seed)
    v = rng.normal(scale=0.6, size=6) + 1 / 6
    p = project_simplex(v)
    assert p.min() >= 0 and p.sum() == pytest.approx(1.0)
    res = optimize.minimize(lambda q: np.sum((q - v) ** 2), np.full(6, 1 / 6),
                            method="SLSQP", bounds=[(0, 1)] * 6,
                            constraints=[{"type": "eq", "fun": lambda q: q.sum() - 1}],
                            options={"ftol": 1e-14, "maxiter": 500})
    np.testing.assert_allclose(p, res.x, atol=1e-6)


# ------------------------------------------------------ cross-check, other libraries


def test_inversion_equals_pure_ldp_direct_encoding(krr_run):
    # pure_ldp.frequency_oracles/__init__ imports its RAPPOR server, which needs
    # scikit-learn; load the direct-encoding server module by itself instead.
    import importlib.util

    spec = importlib.util.find_spec("pure_ldp")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("pure-ldp not installed (pip install pure-ldp); cross-check skipped")
    path = f"{spec.submodule_search_locations[0]}/frequency_oracles/direct_encoding/de_server.py"
    module_spec = importlib.util.spec_from_file_location("_pure_ldp_de_server", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    DEServer = module.DEServer

    Q, _, counts = krr_run
    k = Q.shape[0]
    server = DEServer(epsilon=1.0, d=k, index_mapper=lambda v: v)
    for label, c in enumerate(counts):
        for _ in range(int(c)):
            server.aggregate(label)
    theirs = np.array([server.estimate(j, suppress_warnings=True) for j in range(k)])
    np.testing.assert_allclose(estimate_inversion(Q, counts), theirs / counts.sum(),
                               atol=1e-9, rtol=0)


def test_inversion_equals_multi_freq_ldpy_grr(krr_run):
    pytest.importorskip("multi_freq_ldpy", reason="multi-freq-ldpy not installed; "
                                                  "cross-check skipped")
    from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Aggregator_MI

    Q, _, counts = krr_run
    reports = np.repeat(np.arange(Q.shape[0]), counts)
    theirs = GRR_Aggregator_MI(reports, Q.shape[0], 1.0)  # clips at 0 and renormalises
    ours = estimate_inversion(Q, counts)
    assert ours.min() > 0  # so their clipping is inactive and the two must agree
    np.testing.assert_allclose(ours, theirs, atol=1e-9, rtol=0)


# --------------------------------------------------------------------- sampling


def test_simulate_reports_matches_rows():
    Q = np.array([[0.5, 0.0, 0.3, 0.2], [0.1, 0.1, 0.1, 0.7], [0.0, 0.0, 0.0, 1.0]])
    x = np.repeat([0, 1, 2], [200_000, 100_000, 1000])
    y = simulate_reports(Q, x, seed=4)
    for row in range(3):
        counts = np.bincount(y[x == row], minlength=4)
        assert np.all(counts[Q[row] == 0] == 0)
        pos = Q[row] > 0
        if pos.sum() > 1:
            result = stats.chisquare(counts[pos], counts.sum() * Q[row][pos])
            assert result.pvalue > 1e-3
    # reports stay aligned with their users (shuffled order)
    perm = np.random.default_rng(0).permutation(x.size)
    y2 = simulate_reports(Q, x[perm], seed=4)
    assert np.all(y2[x[perm] == 2] == 3)


def test_simulate_reports_is_fast_and_seeded():
    k = 1000
    rng = np.random.default_rng(0)
    Q = rng.dirichlet(np.ones(k), size=k)
    x = rng.integers(0, k, size=10**6)
    t0 = time.perf_counter()
    y = simulate_reports(Q, x, seed=1)
    elapsed = time.perf_counter() - t0
    print(f"10^6 reports at k=1000: {elapsed:.3f} s")
    assert elapsed < 2.0
    assert np.array_equal(y, simulate_reports(Q, x, seed=1))
    assert y.min() >= 0 and y.max() < k


def test_simulate_reports_errors():
    with pytest.raises(InputError, match=r"x_indices: must lie in 0..1 \(rows of Q\), got 2"):
        simulate_reports(np.eye(2), [0, 2], seed=0)
    with pytest.raises(InputError, match=r"Q\[0\]\[1\]: must be >= 0"):
        simulate_reports([[1.5, -0.5], [0, 1]], [0], seed=0)
    with pytest.raises(InputError, match="x_indices: must hold integers"):
        simulate_reports(np.eye(2), [0.5], seed=0)


# ----------------------------------------------------------- MMSE (paper 000)


@pytest.mark.parametrize("p1, q0, q1", [(0.3, 0.2, 0.1), (0.8, 0.4, 0.05), (0.5, 0.3, 0.3)])
def test_mmse_binary_matches_paper_000_eq_16_to_18(p1, q0, q1):
    """000 §IV-A: q0 = Pr(Y=1|X=0), q1 = Pr(Y=0|X=1)."""
    Q = [[1 - q0, q0], [q1, 1 - q1]]
    prior = [1 - p1, p1]
    lam0 = (1 - p1) * (1 - q0) + p1 * q1
    lam1 = (1 - p1) * q0 + p1 * (1 - q1)
    eq16 = [p1 * q1 / lam0, p1 * (1 - q1) / lam1]  # X̂ for Y = 0 and Y = 1
    eq18 = p1 * (1 - p1) - (p1 * (lam0 - q1)) ** 2 / (lam0 * lam1)
    np.testing.assert_allclose(mmse_decoder(Q, prior, [0, 1]), eq16, rtol=1e-12)
    assert mmse_risk(Q, prior, [0, 1]) == pytest.approx(eq18, rel=1e-12)


def test_mmse_aggregate_error_matches_prediction():
    """Sum query: E[(Ŝ − S)²] = N · (Var f − Var E[f|Y]) (000 eq. 11–14), 400 runs."""
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    values = np.array([1.0, 2.0, 5.0, 10.0])
    Q = np.array([[0.6, 0.2, 0.2], [0.3, 0.4, 0.3], [0.2, 0.3, 0.5], [0.1, 0.2, 0.7]])
    N, trials = 2000, 400
    joint = (prior[:, None] * Q).ravel()
    rng = np.random.default_rng(5)
    # direct definition of the per-user MSE: E[(f(X) − E[f(X)|Y])²]
    post = (values @ (prior[:, None] * Q)) / (prior @ Q)
    per_user = float(np.sum(prior[:, None] * Q * (values[:, None] - post[None, :]) ** 2))
    assert mmse_risk(Q, prior, values) == pytest.approx(per_user, rel=1e-12)
    errs, hist_errs = [], []
    for cells in rng.multinomial(N, joint, size=trials):
        cells = cells.reshape(4, 3)
        S = float(values @ cells.sum(axis=1))
        S_hat = mmse_aggregate(Q, prior, values, cells.sum(axis=0))
        errs.append((S_hat - S) ** 2)
        H_hat = mmse_histogram(Q, prior, cells.sum(axis=0))
        assert H_hat.sum() == pytest.approx(N)
        hist_errs.append(float(np.sum((H_hat - cells.sum(axis=1)) ** 2)))
    ratio = np.mean(errs) / (N * per_user)
    hist_ratio = np.mean(hist_errs) / (N * mmse_histogram_risk(Q, prior))
    print(f"MMSE sum: mean error / predicted = {ratio:.3f}; histogram: {hist_ratio:.3f}")
    assert 0.85 < ratio < 1.15
    assert 0.85 < hist_ratio < 1.15
    avg = mmse_aggregate(Q, prior, values, cells.sum(axis=0), average=True)
    assert avg == pytest.approx(S_hat / N)


def test_mmse_histogram_risk_is_eq_31():
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    Q = np.array([[0.6, 0.2, 0.2], [0.3, 0.4, 0.3], [0.2, 0.3, 0.5], [0.1, 0.2, 0.7]])
    total = 0.0
    for a in range(4):  # Σ_a Var 1{X=a} − Var Pr(X=a|Y), term by term
        post = prior[a] * Q[a] / (prior @ Q)
        total += prior[a] * (1 - prior[a]) - (np.sum((prior @ Q) * post**2) - prior[a] ** 2)
    assert mmse_histogram_risk(Q, prior) == pytest.approx(total, rel=1e-12)


def test_mmse_refuses_reports_impossible_under_prior():
    Q = [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(InputError, match=r"counts\[1\]: .*probability 0 under the prior"):
        mmse_aggregate(Q, [1.0, 0.0], [0, 1], [3, 2])


def test_all_exports_resolve():
    import mechopt.runtime as runtime

    for name in runtime.__all__:
        assert getattr(runtime, name) is not None, name
    assert len(set(runtime.__all__)) == len(runtime.__all__)
