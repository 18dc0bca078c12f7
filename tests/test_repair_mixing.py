"""The repair's mixing estimate for pairwise budgets against a brute-force scan and the exact verifier."""

import numpy as np
import pytest

from mechopt import ELDP, LDP, verify
from mechopt.solvers._repair import HINT_FROM, HINT_MARGIN, _repair, pair_mixing


def _euclidean(k: int, seed: int, eps: float = 0.7) -> np.ndarray:
    xy = np.random.default_rng(seed).uniform(0, 6, (k, 2))
    return eps * np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))


def _worst_ratio(R: np.ndarray, E: np.ndarray) -> float:
    """max over pairs and columns of R[x, y] / (e^E[x, x'] R[x', y]), by loops."""
    k, m = R.shape
    worst = 0.0
    for x in range(k):
        for xp in range(k):
            if x != xp:
                worst = max(worst, float(np.max(R[x] / (np.exp(E[x, xp]) * R[xp]))))
    return worst


@pytest.mark.parametrize("seed", range(6))
def test_mixing_estimate_is_the_least_mixing_with_the_margin(seed):
    rng = np.random.default_rng(seed)
    k, m = 12, 9
    E = _euclidean(k, seed)
    Q = rng.random((k, m)) ** 3
    Q /= Q.sum(axis=1, keepdims=True)
    u = rng.dirichlet(np.ones(m))
    t = pair_mixing(Q, [ELDP(E)], u)
    assert 0 < t < 1
    mix = lambda s: (1 - s) * Q + s * u[None, :]  # noqa: E731
    # at t every pair holds with the margin (to rounding), a little below t one does not
    assert _worst_ratio(mix(t), E) <= (1 - HINT_MARGIN) * (1 + 1e-12)
    assert _worst_ratio(mix(0.999 * t), E) > 1 - HINT_MARGIN


def test_mixing_estimate_is_zero_inside_and_none_for_other_notions():
    E = _euclidean(8, 1)
    Q = np.full((8, 5), 0.2)  # constant rows: every ratio is 1
    assert pair_mixing(Q, [ELDP(E)], np.full(5, 0.2)) == 0.0
    assert pair_mixing(Q, [LDP(1.0)], np.full(5, 0.2)) is None


def test_repair_of_a_large_channel_starts_from_the_estimate_past_t_max():
    # 320 places, a channel 5 % past its budgets on close pairs: the climb from 1e-14 to
    # t_max = 1e-2 would not repair it; the estimate does, with one more verification
    k = 320
    E = _euclidean(k, 3)
    assert k * k >= HINT_FROM
    Q = np.exp(-1.05 * E)  # column y: the exponential mechanism's shape around place y
    Q /= Q.sum(axis=1, keepdims=True)
    notions = [ELDP(E)]
    u = np.full(k, 1.0 / k)
    t = pair_mixing(Q, notions, u)
    assert t > 1e-2
    rep = _repair(Q, notions)
    assert rep.certificate.verified and rep.attempts == 2
    assert t <= rep.t <= t * (1 + 1e-5)
    assert not verify((1 - 0.99 * t) * Q + 0.99 * t * u[None, :], notions).verified


@pytest.mark.parametrize("seed", range(4))
def test_into_cone_mixes_the_least_share_of_the_exponential_mechanism(seed):
    from mechopt.solvers.metric._parts import exponential_start
    from mechopt.solvers.metric._route import into_cone

    rng = np.random.default_rng(seed)
    k = 14
    E = _euclidean(k, seed)
    Q = rng.random((k, k)) ** 4  # a channel far outside the cone
    Q /= Q.sum(axis=1, keepdims=True)
    M = into_cone(Q, E)
    assert np.allclose(M.sum(axis=1), 1.0, rtol=0, atol=1e-14)
    assert _worst_ratio(M, E) <= 1.0 and verify(M, [ELDP(E)]).verified
    # the share mixed in is the least that works: a thousandth less breaks a pair
    R = exponential_start(E)
    t = float(np.linalg.lstsq((R - Q).reshape(-1, 1), (M - Q).reshape(-1), rcond=None)[0][0])
    less = (1 - 0.999 * t) * Q + 0.999 * t * R
    assert 0 < t < 1 and _worst_ratio(less, E) > 1 - 1e-12


@pytest.mark.parametrize("seed", range(4))
def test_a_channel_lifted_at_a_share_of_the_budgets_has_rows_in_twice_that_cone(seed):
    # columns in the cone of beta E give row sums s with s[x] <= e^{beta E} s[x']: the
    # renormalised rows are in the cone of 2 beta E (into_cone's targets)
    from mechopt.solvers.metric._parts import _Lift

    rng = np.random.default_rng(seed)
    k = 13
    E = _euclidean(k, seed)
    Q = rng.random((k, 9)) ** 4
    for beta in (0.3, 0.45):
        L = _Lift(beta * E)(Q)
        R = L / L.sum(axis=1, keepdims=True)
        assert _worst_ratio(R, 2 * beta * E) <= 1 + 1e-12
        assert _worst_ratio(R, E) < 1  # slack on every pair


def test_into_cone_with_a_loss_keeps_the_cheapest_target():
    from mechopt.solvers.metric._parts import exponential_start
    from mechopt.solvers.metric._route import into_cone

    better = 0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        k = 14
        E = _euclidean(k, seed)
        # a channel slightly outside the cone: a private one with a tenth of its entries raised
        Q = exponential_start(E) * np.where(rng.random((k, k)) < 0.1, 1.5, 1.0)
        Q /= Q.sum(axis=1, keepdims=True)
        cost = rng.random((k, k))
        M, M0 = into_cone(Q, E, cost), into_cone(Q, E)
        assert np.allclose(M.sum(axis=1), 1.0, rtol=0, atol=1e-14)
        assert _worst_ratio(M, E) <= 1.0 and verify(M, [ELDP(E)]).verified
        assert np.sum(cost * M) <= np.sum(cost * M0) * (1 + 1e-12)
        better += bool(np.sum(cost * M) < np.sum(cost * M0) * (1 - 1e-6))
    assert better  # the lifted targets win on some of these channels
