"""Samplers and estimators of the Hadamard responses (002 §5.1, §6.1), uRR and uRAPPOR (001).

Unbiasedness is checked twice:

* exactly: every estimator is affine in the empirical output frequencies (which sum to
  1), so ``p_hat = sum_y freq_y * est(y)`` with ``est(y)`` the estimate from a single
  report ``y``; its expectation is ``(p Q) @ G`` and must equal ``p`` to 1e-12;
* by simulation with a fixed seed: the sampler's output frequencies match ``p Q`` and the
  estimate is within **5 standard deviations** (computed from ``G`` and ``p Q``) of ``p``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechopt._errors import InputError
from mechopt.closed_forms import (
    block_hadamard_channel,
    block_hadamard_estimate,
    block_hadamard_sample,
    high_low_hadamard_channel,
    high_low_hadamard_estimate,
    high_low_hadamard_sample,
    urappor_channel,
    urappor_estimate,
    urappor_l1_loss,
    urappor_parameters,
    urappor_sample,
    urr_channel,
    urr_estimate,
    urr_l1_loss,
)

N = 200_000
SIGMAS = 5.0


def draw_inputs(p, n, rng):
    return rng.choice(len(p), size=n, p=p)


def check_unbiased(p, Q, G):
    """Exact expectation of the affine estimator: (p Q) @ G == p."""
    m = p @ Q
    assert np.allclose(m @ G, p, atol=1e-12)
    var = (m @ G**2 - (m @ G) ** 2) / N
    return np.sqrt(np.maximum(var, 0.0))


def check_sampler(y, p, Q):
    m = p @ Q
    freq = np.bincount(y, minlength=Q.shape[1]) / y.size
    sd = np.sqrt(m * (1 - m) / y.size)
    assert np.all(np.abs(freq - m) <= SIGMAS * sd + 1e-12)


HL_CASES = [(3, [0], 1.0), (6, [1, 4], 0.5), (9, [0, 2, 3, 7], 2.0), (4, [0, 1, 2, 3], 1.0)]


BLOCK_CASES = [(3, [[0, 1], [2]], 1.0), (7, [[0, 3], [1, 2, 4], [5], [6]], 0.7), (8, [list(range(8))], 2.0)]
#: (channel, estimate, sample, the name of the structure argument, seed of a case)
HADAMARD = {
    "high_low": (high_low_hadamard_channel, high_low_hadamard_estimate, high_low_hadamard_sample, "sensitive",
                 lambda k, A: k * 31 + len(A)),
    "block": (block_hadamard_channel, block_hadamard_estimate, block_hadamard_sample, "blocks",
              lambda k, blocks: k * 17),
}


@pytest.mark.parametrize("kind,k,S,eps", [("high_low", *c) for c in HL_CASES] + [("block", *c) for c in BLOCK_CASES])
def test_hadamard_sampler_and_estimator(kind, k, S, eps):
    channel, estimate, sample, arg, seed = HADAMARD[kind]
    rng = np.random.default_rng(seed(k, S))
    p = rng.dirichlet(np.ones(k))
    Q = channel(k, S, eps)
    G = np.array([estimate([y], k=k, epsilon=eps, **{arg: S}) for y in range(Q.shape[1])])
    sd = check_unbiased(p, Q, G)
    x = draw_inputs(p, N, rng)
    y = sample(x, k=k, epsilon=eps, rng=rng, **{arg: S})
    check_sampler(y, p, Q)
    p_hat = estimate(y, k=k, epsilon=eps, **{arg: S})
    assert np.all(np.abs(p_hat - p) <= SIGMAS * sd)


def test_002_eq16_final_form():
    """002 eq. (16): p([S]) = 2/(e^eps+1) + (e^eps-1)/(e^eps+1) p(A) (its middle step has 2e^eps for 2)."""
    k, A, eps = 6, [1, 4], 0.9
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(k))
    Q = high_low_hadamard_channel(k, A, eps)
    S = 4
    e = math.exp(eps)
    pA = p[A].sum()
    assert (p @ Q)[:S].sum() == pytest.approx(2 / (e + 1) + (e - 1) / (e + 1) * pA)
    assert (p @ Q)[:S].sum() != pytest.approx(pA + 2 * e / (e + 1) * (1 - pA))


def bits_of(label):
    return np.array([[int(c) for c in label]], dtype=np.uint8)


URAP_CASES = [(3, [0], 1.0), (5, [1, 3], 2.0), (4, [0, 1, 2, 3], 0.8), (4, [], 1.0)]


@pytest.mark.parametrize("k,S,eps", URAP_CASES)
def test_urappor_sampler_and_estimator(k, S, eps):
    rng = np.random.default_rng(k * 7 + len(S))
    p = rng.dirichlet(np.ones(k))
    outs, Q = urappor_channel(k, S, eps)
    G = np.array([urappor_estimate(bits_of(o), sensitive=S, epsilon=eps) for o in outs])
    sd = check_unbiased(p, Q, G)
    x = draw_inputs(p, N, rng)
    bits = urappor_sample(x, k=k, sensitive=S, epsilon=eps, rng=rng)
    # sampler: map each report to its column of the full channel
    index = {o: j for j, o in enumerate(outs)}
    weights = 1 << np.arange(k - 1, -1, -1)
    codes = bits.astype(np.int64) @ weights
    code_to_col = {int(o, 2): j for o, j in index.items()}
    assert set(np.unique(codes)) <= set(code_to_col)  # never an impossible bit vector
    y = np.array([code_to_col[c] for c in codes])
    check_sampler(y, p, Q)
    p_hat = urappor_estimate(bits, sensitive=S, epsilon=eps)
    assert np.all(np.abs(p_hat - p) <= SIGMAS * sd)


def test_urappor_custom_theta_is_still_unbiased():
    k, S, eps, theta = 4, [0, 2], 1.5, 0.6
    p = np.array([0.1, 0.2, 0.3, 0.4])
    outs, Q = urappor_channel(k, S, eps, theta=theta)
    G = np.array([urappor_estimate(bits_of(o), sensitive=S, epsilon=eps, theta=theta) for o in outs])
    check_unbiased(p, Q, G)
    assert urappor_parameters(eps, theta)[0] == theta


@pytest.mark.parametrize("k,S,eps", [(3, [0], 1.0), (6, [1, 2, 3], 0.5), (5, [], 2.0)])
def test_urr_estimator(k, S, eps):
    rng = np.random.default_rng(k)
    p = rng.dirichlet(np.ones(k))
    Q = urr_channel(k, S, eps)
    G = np.array([urr_estimate([y], k=k, sensitive=S, epsilon=eps) for y in range(k)])
    sd = check_unbiased(p, Q, G)
    x = draw_inputs(p, N, rng)
    u = rng.random(N)
    y = (Q[x].cumsum(axis=1) < u[:, None]).sum(axis=1)
    p_hat = urr_estimate(y, k=k, sensitive=S, epsilon=eps)
    assert np.all(np.abs(p_hat - p) <= SIGMAS * sd)
    # uRR is square and invertible: the estimator is the empirical inversion of 001 eq. (3)
    assert np.allclose(G, np.linalg.inv(Q), atol=1e-12)


def test_001_l1_loss_formulas_against_monte_carlo():
    """001 Prop. 6 (uRR) and Prop. 9 (uRAPPOR): asymptotic E l1; Monte Carlo within 4%."""
    rng = np.random.default_rng(11)
    k, S, eps, n, reps = 6, [0, 1], 1.0, 20_000, 400
    p = np.array([0.05, 0.15, 0.3, 0.2, 0.2, 0.1])
    # uRR: counts are multinomial(n, pQ)
    Q = urr_channel(k, S, eps)
    G = np.linalg.inv(Q)
    counts = rng.multinomial(n, p @ Q, size=reps) / n
    mc = np.abs(counts @ G - p).sum(axis=1).mean()
    assert mc == pytest.approx(urr_l1_loss(p, sensitive=S, epsilon=eps, n=n), rel=0.04)
    # uRAPPOR: each bit count is Binomial(n, m_j); E l1 only needs the marginals
    theta, d1, d2 = urappor_parameters(eps)
    m = np.array([theta * p[j] + d1 * (1 - p[j]) if j in S else (1 - d2) * p[j] for j in range(k)])
    mhat = rng.binomial(n, m, size=(reps, k)) / n
    est = np.where(np.isin(np.arange(k), S), (mhat - d1) / (theta - d1), mhat / (1 - d2))
    mc = np.abs(est - p).sum(axis=1).mean()
    assert mc == pytest.approx(urappor_l1_loss(p, sensitive=S, epsilon=eps, n=n), rel=0.04)


def test_sampler_input_errors():
    with pytest.raises(InputError, match=r"x: indices must be in \[0, 2\]"):
        high_low_hadamard_sample([0, 3], k=3, sensitive=[0], epsilon=1.0, rng=0)
    with pytest.raises(InputError, match="integer indices"):
        block_hadamard_estimate(np.array([0.5]), k=2, blocks=[[0, 1]], epsilon=1.0)
    with pytest.raises(InputError, match="input indices"):
        urappor_sample([5], k=3, sensitive=[0], epsilon=1.0)
    with pytest.raises(InputError, match=r"must be > 0"):
        urr_estimate([0], k=2, sensitive=[0], epsilon=0.0)
    with pytest.raises(InputError, match=r"\(n, k\)"):
        urappor_estimate(np.zeros(3), sensitive=[0], epsilon=1.0)
