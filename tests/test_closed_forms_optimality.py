"""Objective values of the closed forms against brute force.

Two independent oracles, both written here without the solver:

* k = 2: a dense grid over all two-output channels ``[[a, 1-a], [b, 1-b]]`` (two outputs
  suffice for k = 2 by the ray theorem of docs/model.md), filtered by the privacy definition;
* k = 3, 4: the ray LP of docs/model.md with the extreme rays enumerated by hand (LIP slice
  vertices; LDP staircases ``{1, e^eps}^k``), solved with ``scipy.optimize.linprog``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import linprog

from mechopt.closed_forms import (
    binary_eldp_optimum_corrected,
    binary_ldp_mse,
    binary_lip_mse,
    binary_lip_optimum,
    binary_lip_rr,
    estimation_variance,
    histogram_mse,
    k_rr,
    lip_budget,
    lip_rr,
    lip_rr_calibrated,
    lip_rr_holds,
    mmse,
    mutual_information,
    uncertain_prior_lip_optimum,
    urr_channel,
    warner_rr,
)

# -- oracle 1: the k = 2 grid --------------------------------------------------------------

GRID = np.linspace(0.0, 1.0, 401)
A_, B_ = np.meshgrid(GRID, GRID, indexing="ij")
A_, B_ = A_.ravel(), B_.ravel()  # Q = [[a, 1-a], [b, 1-b]]


def grid_columns():
    """Columns (q_1, q_2) of every grid channel: shape (N, 2 columns, 2 inputs)."""
    return np.stack([np.stack([A_, B_], -1), np.stack([1 - A_, 1 - B_], -1)], 1)


def feasible_ratio(cols, t_lo, t_hi):
    """Every non-zero column has t_lo <= q_2/q_1 <= t_hi (with the 0 conventions)."""
    q1, q2 = cols[..., 0], cols[..., 1]
    zero = (q1 <= 0) & (q2 <= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = (q2 <= t_hi * q1 + 1e-12) & (t_lo * q1 <= q2 + 1e-12)
    ok = np.where(np.isinf(t_hi), t_lo * q1 <= q2 + 1e-12, ok)
    return np.all(ok | zero, axis=1)


def lip_feasible(cols, P, eps):
    s = cols @ np.asarray(P)
    e = math.exp(eps)
    zero = s <= 0
    ok = (cols[..., 0] / e <= s + 1e-12) & (s <= e * cols[..., 0] + 1e-12) & \
         (cols[..., 1] / e <= s + 1e-12) & (s <= e * cols[..., 1] + 1e-12)
    return np.all(ok | zero, axis=1)


def grid_mmse(cols, P, f):
    P, f = np.asarray(P), np.asarray(f, dtype=float)
    num = (cols * (f * P)).sum(-1)
    den = cols @ P
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(den > 0, num**2 / den, 0.0)
    return P @ f**2 - t.sum(1)


def grid_mi(cols, P):
    P = np.asarray(P)
    den = cols @ P
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(cols > 0, P * cols * np.log(cols / den[..., None]), 0.0)
    return t.sum((1, 2))


def grid_hist(cols, P):
    P = np.asarray(P)
    den = cols @ P
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(den > 0, ((P * cols) ** 2).sum(-1) / den, 0.0)
    return 1 - t.sum(1)


BINARY_CASES = [
    # (name, closed-form channel, feasibility mask builder, prior)
    ("ldp eps=1", lambda: warner_rr(1.0), lambda c: feasible_ratio(c, math.exp(-1), math.exp(1)), [0.3, 0.7]),
    ("eldp (ln2, ln4)", lambda: binary_eldp_optimum_corrected(math.log(2), math.log(4)),
     lambda c: feasible_ratio(c, 0.5, 4.0), [0.6, 0.4]),
    ("lip in regime", lambda: binary_lip_optimum([0.4, 0.6], 1.0), lambda c: lip_feasible(c, [0.4, 0.6], 1.0), [0.4, 0.6]),
    ("lip out of regime", lambda: binary_lip_optimum([0.9, 0.1], 1.0), lambda c: lip_feasible(c, [0.9, 0.1], 1.0),
     [0.9, 0.1]),
    ("bp-lip [0.1,0.3]", lambda: uncertain_prior_lip_optimum(0.1, 0.3, 1.0),
     lambda c: lip_feasible(c, [0.9, 0.1], 1.0) & lip_feasible(c, [0.7, 0.3], 1.0), [0.8, 0.2]),
]


@pytest.mark.parametrize("name,build,mask,P", BINARY_CASES, ids=[c[0] for c in BINARY_CASES])
def test_binary_closed_forms_beat_every_feasible_grid_channel(name, build, mask, P):
    Q = build()
    cols = grid_columns()
    ok = mask(cols)
    assert ok.sum() > 100
    c = cols[ok]
    for f in ([0.0, 1.0], [2.0, -1.0]):
        best = grid_mmse(c, P, f).min()
        mine = mmse(Q, P, f)
        assert mine <= best + 1e-9
        assert mine >= best - 5e-3 * (1 + abs(best))  # the grid gets close
    best_mi = grid_mi(c, P).max()
    assert mutual_information(Q, P) >= best_mi - 1e-9
    assert mutual_information(Q, P) <= best_mi + 5e-3
    assert histogram_mse(Q, P) <= grid_hist(c, P).min() + 1e-9


def test_printed_binary_lip_out_of_regime_beats_the_true_optimum_because_it_leaks():
    """000 Thm 2 at P_1 = 0.1, eps = 1: eq. (21) gives 0.0540 but the true optimum is 0.0791."""
    P = [0.9, 0.1]
    printed = binary_lip_rr(0.1, 1.0)
    assert lip_budget(printed, P) == pytest.approx(1.9004770978893857)
    assert mmse(printed, P, [0, 1]) == pytest.approx(binary_lip_mse(0.1, 1.0)) == pytest.approx(0.05403812391956448)
    cols = grid_columns()
    best = grid_mmse(cols[lip_feasible(cols, P, 1.0)], P, [0, 1]).min()
    true_opt = mmse(binary_lip_optimum(P, 1.0), P, [0, 1])
    assert true_opt == pytest.approx(0.07913838730369513)
    assert best >= true_opt - 1e-12
    assert binary_lip_mse(0.1, 1.0) < true_opt
    # 000 Prop. 4's comparison still holds against the true optimum
    assert binary_ldp_mse(0.1, 1.0) == pytest.approx(0.081985543061161)
    assert binary_ldp_mse(0.1, 1.0) >= true_opt


@pytest.mark.parametrize("p1", [0.02, 0.1, 0.3, 0.5, 0.77, 0.95])
@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
def test_000_mse_formulas_eq21_eq24(p1, eps):
    P = [1 - p1, p1]
    # eq. (21) is the MSE of the Thm 2 channel for every prior (in or out of its regime)
    assert mmse(binary_lip_rr(p1, eps), P, [0, 1]) == pytest.approx(binary_lip_mse(p1, eps), abs=1e-12)
    # eq. (24) is the MSE of Warner's RR (000 Prop. 4)
    assert mmse(warner_rr(eps), P, [0, 1]) == pytest.approx(binary_ldp_mse(p1, eps), abs=1e-12)
    # Prop. 4: LIP beats LDP (against the *true* LIP optimum)
    assert mmse(binary_lip_optimum(P, eps), P, [0, 1]) <= binary_ldp_mse(p1, eps) + 1e-12


def test_000_eq17_has_p1_where_eq18_has_p1_squared():
    """000 eq. (17) prints Var(X_hat) = P1 (l0 - q1)^2/(l0 l1); eq. (18) (correct) uses P1^2."""
    p1, q0, q1 = 0.3, 0.2, 0.1
    l0 = (1 - p1) * (1 - q0) + p1 * q1
    l1 = (1 - p1) * q0 + p1 * (1 - q1)
    Q = np.array([[1 - q0, q0], [q1, 1 - q1]])
    var_xhat = p1 * (1 - p1) - mmse(Q, [1 - p1, p1], [0, 1])
    assert var_xhat == pytest.approx(p1**2 * (l0 - q1) ** 2 / (l0 * l1))
    assert var_xhat != pytest.approx(p1 * (l0 - q1) ** 2 / (l0 * l1))


# -- oracle 2: the ray LP for k = 3, 4 ----------------------------------------------------


def lip_slice_vertices(P, eps):
    """Vertices of {q : P.q = 1, e^-eps <= q <= e^eps}: at most one coordinate off the bounds."""
    k = len(P)
    lo, hi = math.exp(-eps), math.exp(eps)
    out = []
    for free in range(k):
        others = [i for i in range(k) if i != free]
        for ch in itertools.product((lo, hi), repeat=k - 1):
            q = np.empty(k)
            q[others] = ch
            q[free] = (1 - np.dot(np.asarray(P)[others], ch)) / P[free]
            if lo - 1e-12 <= q[free] <= hi + 1e-12:
                out.append(np.clip(q, lo, hi))
    return np.array(out)


def ldp_rays(k, eps):
    e = math.exp(eps)
    return np.array([np.where(np.array(b) > 0, e, 1.0) for b in itertools.product((0, 1), repeat=k)])


def ray_lp(V, mu):
    """max sum_r w_r mu(v_r) s.t. sum_r w_r v_r = 1, w >= 0 (docs/model.md)."""
    vals = np.array([mu(v) for v in V])
    res = linprog(-vals, A_eq=V.T, b_eq=np.ones(V.shape[1]), bounds=[(0, None)] * len(V), method="highs")
    assert res.status == 0
    return -res.fun


def mu_mmse(P, f):
    P, f = np.asarray(P), np.asarray(f, dtype=float)
    return lambda q: float(np.dot(f * P, q)) ** 2 / float(np.dot(P, q))


def mu_hist(P):
    P = np.asarray(P)
    return lambda q: float(np.sum((P * q) ** 2)) / float(np.dot(P, q))


def opt_lip_mmse(P, eps, f):
    return float(np.dot(P, np.asarray(f, float) ** 2)) - ray_lp(lip_slice_vertices(P, eps), mu_mmse(P, f))


def opt_lip_hist(P, eps):
    return 1 - ray_lp(lip_slice_vertices(P, eps), mu_hist(P))


@pytest.mark.parametrize("seed", range(6))
def test_eq19_is_optimal_in_its_regime_000_thm3_thm5(seed):
    """000 Thm 3 (weighted sums, any values) and Thm 5 (histogram) hold when min P >= 1/(1+e^eps)."""
    rng = np.random.default_rng(100 + seed)
    checked = 0
    while checked < 4:
        k = int(rng.integers(3, 5))
        eps = float(rng.uniform(0.3, 3.0))
        P = rng.dirichlet(np.ones(k) * 4)
        if not lip_rr_holds(P, eps):
            continue
        Q = lip_rr(P, eps)
        f = rng.normal(size=k)
        assert mmse(Q, P, f) == pytest.approx(opt_lip_mmse(P, eps, f), rel=1e-8, abs=1e-10)
        assert histogram_mse(Q, P) == pytest.approx(opt_lip_hist(P, eps), rel=1e-8, abs=1e-10)
        checked += 1


def test_eq19_out_of_regime_numbers():
    """P = [0.1, 0.2, 0.7], eps = 1: eq. (19) leaks 1.90 and 'beats' the optimum; the repair loses 35%."""
    P, eps = np.array([0.1, 0.2, 0.7]), 1.0
    f = np.arange(3.0)
    opt_h, opt_m = opt_lip_hist(P, eps), opt_lip_mmse(P, eps, f)
    assert opt_h == pytest.approx(0.3287611726448154, abs=1e-9)
    assert opt_m == pytest.approx(0.2904695421347263, abs=1e-9)
    assert histogram_mse(lip_rr(P, eps), P) == pytest.approx(0.2761948555888851, abs=1e-12)
    assert histogram_mse(lip_rr(P, eps), P) < opt_h  # only possible because it violates eps-LIP
    cal = lip_rr_calibrated(P, eps)
    assert histogram_mse(cal, P) == pytest.approx(0.4432327589712868, abs=1e-9)
    assert mmse(cal, P, f) == pytest.approx(0.4239617694507962, abs=1e-9)
    assert histogram_mse(cal, P) > opt_h


@pytest.mark.parametrize("k,eps,krr,opt", [
    (3, 1.0, 0.57825, 0.56945),
    (4, 0.5, 1.22566, 1.19001),
    (4, 2.0, 0.77725, 0.66997),
])
def test_k_rr_is_not_the_mimo_ldp_optimum_000(k, eps, krr, opt):
    """000 §IV-B: 'optimal solutions for Opt-mimo-LDP' = k-RR. False for k >= 3 (f(x) = x, uniform prior)."""
    P = np.full(k, 1.0 / k)
    f = np.arange(k, dtype=float)
    best = float(P @ f**2) - ray_lp(ldp_rays(k, eps), mu_mmse(P, f))
    assert mmse(k_rr(k, eps), P, f) == pytest.approx(krr, abs=1e-5)
    assert best == pytest.approx(opt, abs=1e-5)


def test_k_rr_is_the_optimum_for_k_2():
    for eps in (0.5, 1.0, 2.0):
        P = np.array([0.3, 0.7])
        best = float(P @ np.array([0.0, 1.0])) - ray_lp(ldp_rays(2, eps), mu_mmse(P, [0.0, 1.0]))
        assert mmse(k_rr(2, eps), P, [0, 1]) == pytest.approx(best, abs=1e-10)


def test_estimation_variance_planning_numbers():
    """docs/model.md reference values: k-RR (k=10, eps=0.5) 242.5; uRR (6 of 10 sensitive) 88.8."""
    assert estimation_variance(k_rr(10, 0.5), np.full(10, 0.1)) == pytest.approx(242.5, abs=0.05)
    assert estimation_variance(urr_channel(10, list(range(6)), 0.5), np.full(10, 0.1)) == pytest.approx(88.8, abs=0.05)
