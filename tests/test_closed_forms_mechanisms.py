"""Each closed form against the privacy definition of its own paper.

For every mechanism: it is a channel (entries >= 0, rows sum to 1), it is transcribed as
printed, and its achieved budget (computed from the definition, see
test_closed_forms_budgets.py) meets the claim — or, where the claim fails, the failure is
pinned to the regime found by this library (docs/closed_forms.md).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechopt._errors import InputError
from mechopt.closed_forms import (
    binary_cone_optimum,
    binary_eldp_optimum,
    binary_eldp_optimum_corrected,
    binary_lip_optimum,
    binary_lip_rr,
    block_budget,
    block_hadamard_channel,
    bp_lip_budget,
    eldp_excess,
    eldp_pair_budgets,
    high_low_budget,
    high_low_hadamard_channel,
    k_rr,
    ldp_budget,
    lip_budget,
    lip_rr,
    lip_rr_achieved_budget,
    lip_rr_calibrated,
    lip_rr_holds,
    mangat_rr,
    sylvester_hadamard,
    uldp_budget,
    uldp_roles,
    uncertain_prior_lip_optimum,
    uncertain_prior_lip_rr,
    uncertain_prior_lip_rr_holds,
    urappor_channel,
    urappor_parameters,
    urr_channel,
    warner_rr,
)

EPS = [0.0, 0.1, 0.5, 1.0, 2.0, 5.0]
TOL = 1e-9


def assert_channel(Q, m=None):
    Q = np.asarray(Q)
    assert Q.ndim == 2
    if m is not None:
        assert Q.shape[1] == m
    assert np.all(Q >= 0)
    assert np.allclose(Q.sum(axis=1), 1.0, atol=1e-12)


def priors(seed, n, k_range=(2, 6)):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = int(rng.integers(*k_range))
        out.append(rng.dirichlet(np.ones(k) * rng.uniform(0.3, 4.0)))
    return out


# -- Warner, Mangat, binary E-LDP (002 §4) --------------------------------------------


@pytest.mark.parametrize("eps", EPS)
def test_warner_is_eps_ldp(eps):
    Q = warner_rr(eps)
    assert_channel(Q, 2)
    assert ldp_budget(Q) == pytest.approx(eps, abs=TOL)
    assert Q[0, 0] == pytest.approx(math.exp(eps) / (math.exp(eps) + 1))


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0, math.inf])
def test_mangat_is_uldp_high_low_and_one_sided_eldp(eps):
    Q = mangat_rr(eps)
    assert_channel(Q, 2)
    p = 0.0 if math.isinf(eps) else math.exp(-eps)
    assert np.allclose(Q, [[1 - p, p], [0, 1]])  # 002 eq. (11)
    if not math.isinf(eps):
        assert uldp_budget(Q, [1]) == pytest.approx(eps)  # 001 §3.1: (X_S, Y_P, ln 1/p)-ULDP
        assert high_low_budget(Q, [1]) == pytest.approx(eps)
        assert eldp_excess(Q, np.array([[0, math.inf], [eps, 0]])) <= TOL
        assert ldp_budget(Q) == math.inf  # "does not provide eps-LDP for any eps"


def printed_eq9(e12, e21):
    """002 eq. (9), transcribed literally."""
    a, b = math.exp(-e12), math.exp(e21)
    return np.array([[b * (1 - a), a * (b - 1)], [1 - a, b - 1]]) / (b - a)


E_PAIRS = [(0.5, 0.5), (math.log(2), math.log(4)), (1.0, 0.2), (0.1, 3.0), (2.0, 2.5)]


@pytest.mark.parametrize("e12,e21", E_PAIRS)
def test_binary_eldp_printed_matches_eq9_and_swaps_indices(e12, e21):
    Q = binary_eldp_optimum(e12, e21)
    assert_channel(Q, 2)
    assert np.allclose(Q, printed_eq9(e12, e21), atol=1e-12)
    A = eldp_pair_budgets(Q)
    # achieved ratios are the transpose of the claim: Q(y|1)/Q(y|2) reaches e^{eps21}
    assert A[0, 1] == pytest.approx(e21) and A[1, 0] == pytest.approx(e12)
    E = np.array([[0, e12], [e21, 0]])
    assert eldp_excess(Q, E) == pytest.approx(abs(e12 - e21), abs=1e-9)


@pytest.mark.parametrize("e12,e21", E_PAIRS + [(1.0, math.inf), (math.inf, 0.7), (0.0, 0.0), (0.0, 1.0)])
def test_binary_eldp_corrected_meets_e_exactly(e12, e21):
    Q = binary_eldp_optimum_corrected(e12, e21)
    assert_channel(Q, 2)
    E = np.array([[0, e12], [e21, 0]])
    assert eldp_excess(Q, E) <= TOL
    if 0 < e12 < math.inf and 0 < e21 < math.inf:
        A = eldp_pair_budgets(Q)
        assert A[0, 1] == pytest.approx(e12) and A[1, 0] == pytest.approx(e21)  # both tight
    if min(e12, e21) == 0:
        assert np.allclose(Q[0], Q[1])  # q_1 <= q_2 in every column and rows sum to 1


def test_binary_eldp_special_cases():
    # symmetric: Warner (002 eq. (10)); eps21 = inf: Mangat (002 eq. (11)), as printed
    assert np.allclose(binary_eldp_optimum(0.8, 0.8), warner_rr(0.8))
    assert np.allclose(binary_eldp_optimum(math.log(4), math.inf), mangat_rr(math.log(4)))
    # ...but Mangat protects input 2, i.e. eps_{2,1} finite: the corrected form with eps12 = inf
    assert np.allclose(binary_eldp_optimum_corrected(math.inf, math.log(4)), mangat_rr(math.log(4)))


def random_feasible(rng, k, m, feasible):
    """A random channel pushed toward the constant channel until ``feasible`` holds."""
    R = rng.dirichlet(np.ones(m) * 0.4, size=k)
    C = np.tile(R.mean(axis=0), (k, 1))
    lo, hi = 0.0, 1.0
    for _ in range(50):
        t = (lo + hi) / 2
        if feasible((1 - t) * R + t * C):
            hi = t
        else:
            lo = t
    return (1 - hi) * R + hi * C


def assert_garbling(Qstar, W):
    """W = Qstar G for a stochastic G (Qstar dominates W for every DPI utility)."""
    G = np.linalg.solve(Qstar, W)
    assert np.all(G >= -1e-9)
    assert np.allclose(G.sum(axis=1), 1.0, atol=1e-9)


@pytest.mark.parametrize("e12,e21", [(0.5, 0.5), (math.log(2), math.log(4)), (1.0, 0.2)])
def test_corrected_binary_eldp_dominates_every_feasible_channel(e12, e21):
    rng = np.random.default_rng(7)
    E = np.array([[0, e12], [e21, 0]])
    Qstar = binary_eldp_optimum_corrected(e12, e21)
    for m in (2, 3, 5):
        W = random_feasible(rng, 2, m, lambda Q: eldp_excess(Q, E) <= 0)
        assert_garbling(Qstar, W)


# -- k-RR, LIP RR (003 eq. (19), 000 Thm 2/3/5) --------------------------------------


@pytest.mark.parametrize("k", [1, 2, 3, 7])
@pytest.mark.parametrize("eps", EPS)
def test_k_rr_is_eps_ldp(k, eps):
    Q = k_rr(k, eps)
    assert_channel(Q, k)
    assert ldp_budget(Q) == pytest.approx(eps if k > 1 else 0.0, abs=TOL)


def test_lip_rr_transcribes_eq19():
    P = np.array([0.1, 0.2, 0.7])
    e = math.e
    Q = lip_rr(P, 1.0)
    for x in range(3):
        for y in range(3):
            want = 1 - (1 - P[x]) / e if x == y else P[y] / e
            assert Q[x, y] == pytest.approx(want)
    # 000 §IV-B example: q11 = 1 - 0.9/e^eps, q21 = q31 = 0.1/e^eps, ... (printed with /eps)
    assert Q[0, 0] == pytest.approx(1 - 0.9 / e) and Q[1, 0] == pytest.approx(0.1 / e)
    # output marginal equals the prior (000 §IV-B: lambda_k = P_k)
    assert np.allclose(P @ Q, P)


def test_lip_rr_spec_example_fails():
    """docs/closed_forms.md: P = [0.1, 0.2, 0.7], eps = 1 gives achieved LIP budget 1.90."""
    P = [0.1, 0.2, 0.7]
    Q = lip_rr(P, 1.0)
    assert_channel(Q, 3)
    assert lip_budget(Q, P) == pytest.approx(1.9004770978893852, abs=1e-12)
    assert lip_rr_achieved_budget(P, 1.0) == pytest.approx(lip_budget(Q, P), abs=1e-12)
    assert not lip_rr_holds(P, 1.0)


@pytest.mark.parametrize("seed", range(4))
def test_lip_rr_regime_is_min_prior_at_least_one_over_one_plus_e_eps(seed):
    seen = {True: 0, False: 0}
    for P in priors(seed, 40):
        for eps in (0.2, 0.7, 1.5, 3.0):
            Q = lip_rr(P, eps)
            assert_channel(Q, P.size)
            achieved = lip_budget(Q, P)
            holds = bool(P.min() * (1 + math.exp(eps)) >= 1)
            assert lip_rr_holds(P, eps) == holds
            assert (achieved <= eps + TOL) == holds
            assert achieved == pytest.approx(lip_rr_achieved_budget(P, eps), abs=1e-9)
            seen[holds] += 1
    assert seen[True] > 0 and seen[False] > 0


def test_lip_rr_regime_boundary_is_tight():
    eps = 1.0
    pb = 1 / (1 + math.e)
    at = [pb, (1 - pb) / 2, (1 - pb) / 2]
    assert lip_budget(lip_rr(at, eps), at) == pytest.approx(eps, abs=1e-12)
    below = [pb - 1e-3, (1 - pb + 1e-3) / 2, (1 - pb + 1e-3) / 2]
    assert lip_budget(lip_rr(below, eps), below) > eps + 1e-4


@pytest.mark.parametrize("seed", range(3))
def test_lip_rr_calibrated_is_always_lip_and_equals_eq19_in_regime(seed):
    for P in priors(seed, 30):
        for eps in (0.2, 1.0, 3.0):
            Q = lip_rr_calibrated(P, eps)
            assert_channel(Q, P.size)
            assert lip_budget(Q, P) <= eps + TOL
            if lip_rr_holds(P, eps):
                assert np.allclose(Q, lip_rr(P, eps))
            else:
                assert lip_budget(Q, P) == pytest.approx(eps, abs=1e-9)  # uses the whole budget


def test_binary_lip_rr_is_eq19_and_000_thm2():
    for p1 in (0.05, 0.3, 0.5, 0.9):
        for eps in (0.3, 1.0, 2.0):
            Q = binary_lip_rr(p1, eps)
            assert_channel(Q, 2)
            assert np.allclose(Q, lip_rr([1 - p1, p1], eps))
            # 000 Thm 2 notation: q0 = Pr(Y=1|X=0) = P1/e^eps, q1 = Pr(Y=0|X=1) = (1-P1)/e^eps
            assert Q[0, 1] == pytest.approx(p1 / math.exp(eps))
            assert Q[1, 0] == pytest.approx((1 - p1) / math.exp(eps))
            holds = 1 / (1 + math.exp(eps)) <= p1 <= math.exp(eps) / (1 + math.exp(eps))
            assert (lip_budget(Q, [1 - p1, p1]) <= eps + TOL) == holds


@pytest.mark.parametrize("p1", [0.01, 0.1, 0.27, 0.5, 0.8, 0.99])
@pytest.mark.parametrize("eps", [0.1, 1.0, 2.5])
def test_binary_lip_optimum_always_lip_and_dominates(p1, eps):
    P = [1 - p1, p1]
    Q = binary_lip_optimum(P, eps)
    assert_channel(Q, 2)
    assert lip_budget(Q, P) <= eps + TOL
    if 1 / (1 + math.exp(eps)) <= p1 <= math.exp(eps) / (1 + math.exp(eps)):
        assert np.allclose(Q, binary_lip_rr(p1, eps), atol=1e-12)
    rng = np.random.default_rng(int(p1 * 100) + int(eps * 10))
    for m in (2, 4):
        W = random_feasible(rng, 2, m, lambda R: lip_budget(R, P) <= eps)
        assert_garbling(Q, W)


# -- uncertain prior (003 §IV-B2) ---------------------------------------------------------


def test_uncertain_prior_transcription_and_special_cases():
    a, b, eps = 0.3, 0.6, 1.0
    Q = uncertain_prior_lip_rr(a, b, eps)
    d = b - a + math.e
    assert Q[0, 1] == pytest.approx(b / d) and Q[1, 0] == pytest.approx((1 - a) / d)
    # a = b: the fixed-prior solution; a = 0, b = 1: Warner (WC-LIP = LDP)
    assert np.allclose(uncertain_prior_lip_rr(0.4, 0.4, eps), binary_lip_rr(0.4, eps))
    assert np.allclose(uncertain_prior_lip_rr(0.0, 1.0, eps), warner_rr(eps))


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.0])
def test_uncertain_prior_regime(eps):
    grid = np.linspace(0.0, 1.0, 11)
    seen = {True: 0, False: 0}
    for a in grid:
        for b in grid[grid >= a]:
            Q = uncertain_prior_lip_rr(a, b, eps)
            assert_channel(Q, 2)
            inside = [[1 - p, p] for p in np.linspace(a, b, 5)]
            if 0 < a and b < 1:
                achieved = bp_lip_budget(Q, inside)
                holds = uncertain_prior_lip_rr_holds(a, b, eps)
                assert (achieved <= eps + TOL) == holds, (a, b)
                seen[holds] += 1
            C = uncertain_prior_lip_optimum(a, b, eps)
            assert_channel(C, 2)
            if 0 < a and b < 1:
                assert bp_lip_budget(C, inside) <= eps + TOL
                if uncertain_prior_lip_rr_holds(a, b, eps):
                    assert np.allclose(C, Q, atol=1e-12)
    assert seen[True] > 0 and seen[False] > 0


def test_uncertain_prior_failure_numbers():
    Q = uncertain_prior_lip_rr(0.1, 0.2, 1.0)
    assert bp_lip_budget(Q, [[0.9, 0.1], [0.8, 0.2]]) == pytest.approx(1.6407533098595497, abs=1e-9)
    assert bp_lip_budget(uncertain_prior_lip_optimum(0.1, 0.2, 1.0), [[0.9, 0.1], [0.8, 0.2]]) == pytest.approx(1.0)


# -- utility-optimized (001) ---------------------------------------------------------------


@pytest.mark.parametrize("k,S", [(2, [1]), (4, [0, 2]), (6, [1, 2, 3]), (5, []), (4, [0, 1, 2, 3])])
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_urr_is_uldp(k, S, eps):
    Q = urr_channel(k, S, eps)
    assert_channel(Q, k)
    assert uldp_budget(Q, S) == pytest.approx(eps if S else 0.0, abs=TOL)
    roles = uldp_roles(Q, S)
    assert all(roles[y] == "protected" for y in S)
    assert all(roles[y] == "invertible" for y in range(k) if y not in S)
    # 001 Def. 4 constants
    if S:
        e, s = math.exp(eps), len(S)
        c1, c2 = e / (s + e - 1), 1 / (s + e - 1)
        assert Q[S[0], S[0]] == pytest.approx(c1)
        nonsens = [x for x in range(k) if x not in S]
        if nonsens:
            assert Q[nonsens[0], S[0]] == pytest.approx(c2)
            assert Q[nonsens[0], nonsens[0]] == pytest.approx(1 - s * c2)
        if S == list(range(k)):
            assert np.allclose(Q, k_rr(k, eps))  # all sensitive: the eps-RR of 001 eq. (2)


@pytest.mark.parametrize("k,S", [(2, [0]), (4, [1, 3]), (5, [0, 1, 2]), (4, []), (3, [0, 1, 2])])
@pytest.mark.parametrize("eps", [0.2, 1.0, 4.0])
def test_urappor_full_channel_is_uldp(k, S, eps):
    outs, Q = urappor_channel(k, S, eps)
    assert_channel(Q, len(outs))
    assert len(outs) == 2 ** len(S) * (k - len(S) + 1)
    assert uldp_budget(Q, S) == pytest.approx(eps if S else 0.0, abs=TOL)
    theta, d1, d2 = urappor_parameters(eps)
    # each output probability is the product of 001 eqs. (10)-(11)
    for j, y in enumerate(outs):
        bits = [int(c) for c in y]
        for i in range(k):
            p = 1.0
            for b, bit in enumerate(bits):
                if b in S:
                    pr1 = theta if b == i else d1
                else:
                    pr1 = 1 - d2 if b == i else 0.0
                p *= pr1 if bit else 1 - pr1
            assert Q[i, j] == pytest.approx(p, abs=1e-15)
    roles = uldp_roles(Q, S)
    for y, r in zip(outs, roles):
        non_sens_bits = [b for b in range(k) if b not in S and y[b] == "1"]
        assert r == ("invertible" if non_sens_bits else "protected")


def test_urappor_parameters_and_limits():
    theta, d1, d2 = urappor_parameters(2.0)
    h = math.exp(1.0)
    assert theta == pytest.approx(h / (h + 1)) and d1 == pytest.approx(1 / (h + 1)) and d2 == pytest.approx(1 / h)
    outs, Q = urappor_channel(3, [0], 1.0, support_only=False)
    assert len(outs) == 8 and Q.shape == (3, 8)
    with pytest.raises(InputError, match="<= 10"):
        urappor_channel(11, [0], 1.0)


# -- Hadamard responses (002 §5.1, §6.1) -----------------------------------------------


def test_sylvester_properties():
    for m in (2, 4, 8, 16):
        H = sylvester_hadamard(m)
        assert np.array_equal(H @ H.T, m * np.eye(m))
        plus = [set(np.flatnonzero(H[i] > 0)) for i in range(1, m)]
        assert all(len(s) == m // 2 for s in plus)
        assert all(len(a & b) == m // 4 for i, a in enumerate(plus) for b in plus[i + 1:])
    with pytest.raises(InputError, match="power of 2"):
        sylvester_hadamard(6)


@pytest.mark.parametrize("k,A", [(2, [0]), (5, [1, 3]), (9, [0, 2, 4, 6]), (4, [0, 1, 2, 3]), (3, [])])
@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
def test_high_low_hadamard_is_high_low_ldp(k, A, eps):
    Q = high_low_hadamard_channel(k, A, eps)
    S = 1 << len(A).bit_length()
    assert_channel(Q, S + k - len(A))
    assert high_low_budget(Q, A) == pytest.approx(eps if A else 0.0, abs=TOL)
    assert uldp_budget(Q, A) <= eps + TOL  # also utility-optimized: direct reports are invertible


def test_high_low_hadamard_printed_row_index_is_not_a_channel():
    """002 eq. (13) as printed uses H_S(x, y): the first sensitive symbol gets the all-ones row."""
    eps = 1.0
    Q = high_low_hadamard_channel(5, [1, 3], eps, printed_rows=True)
    sums = Q.sum(axis=1)
    assert sums[1] == pytest.approx(2 * math.e / (math.e + 1))  # 1.462 != 1
    assert np.allclose(np.delete(sums, 1), 1.0)


@pytest.mark.parametrize("blocks", [[[0, 1], [2]], [[0, 3], [1, 2, 4], [5], [6]], [[0, 1, 2, 3, 4, 5, 6, 7]]])
@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_block_hadamard_is_block_ldp(blocks, eps):
    k = sum(len(b) for b in blocks)
    Q = block_hadamard_channel(k, blocks, eps)
    assert_channel(Q, sum(1 << len(b).bit_length() for b in blocks))
    assert block_budget(Q, blocks) == pytest.approx(eps, abs=TOL)
    # no mass outside the own block's slots: the block is revealed, as intended
    if len(blocks) > 1:
        assert ldp_budget(Q) == math.inf


# -- the binary cone optimum ---------------------------------------------------------------


def test_binary_cone_optimum_edges():
    assert np.allclose(binary_cone_optimum(1.0, 1.0), 0.5)
    assert np.allclose(binary_cone_optimum(0.0, math.inf), np.eye(2))
    with pytest.raises(InputError, match="t_min"):
        binary_cone_optimum(1.5, 2.0)


def test_mechanism_input_errors():
    with pytest.raises(InputError, match=r"epsilon: must be >= 0"):
        warner_rr(-1.0)
    with pytest.raises(InputError, match="sum to 1"):
        lip_rr([0.5, 0.6], 1.0)
    with pytest.raises(InputError, match="must be <= b"):
        uncertain_prior_lip_rr(0.6, 0.3, 1.0)
    with pytest.raises(InputError, match="must not repeat"):
        urr_channel(3, [0, 0], 1.0)
    with pytest.raises(InputError, match="overlap"):
        block_hadamard_channel(3, [[0, 1], [1, 2]], 1.0)
    with pytest.raises(InputError, match="cover every input"):
        block_hadamard_channel(3, [[0, 1]], 1.0)
    with pytest.raises(InputError, match="must be > 0"):
        high_low_hadamard_channel(3, [0], 0.0)
    with pytest.raises(InputError, match="must be an integer"):
        k_rr(2.5, 1.0)
    with pytest.raises(InputError, match=">= 1") as err:
        k_rr(0, 1.0)
    assert err.value.field == "k"
