"""Shuffle amplification (mechopt.accounting._shuffle) against papers, enumeration and the closed form."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mechopt
from mechopt._errors import InputError
from mechopt.accounting import (local_epsilon, shuffle_delta, shuffle_epsilon, shuffle_epsilon_closed_form,
                                shuffle_epsilon_generic)


def krr(k: int, eps: float) -> np.ndarray:
    e = math.exp(eps)
    Q = np.full((k, k), 1.0 / (e + k - 1))
    np.fill_diagonal(Q, e / (e + k - 1))
    return Q


# -- published numbers -----------------------------------------------------------------------------
# The code accompanying Feldman, McMillan, Talwar, "Hiding among the clones" (FOCS 2021),
# github.com/apple/ml-shuffling-amplification, README, prints for its example (n = 10^5,
# ε0 = 4, δ = 1e-6, the numerical analysis of Theorem 3.2 for any ε0-LDP randomizer):
#   "... (eps, 1e-06)-DP in the shuffle model for eps between 0.1675385583317841 and 0.172790550755978"
#   "According to our closed form analysis ... eps is at most 0.5378040242374512"
# (the second from an intermediate form of Theorem 3.1 that is looser than its statement).
FMT21_LOWER, FMT21_UPPER, FMT21_CLOSED_CODE = 0.1675385583317841, 0.172790550755978, 0.5378040242374512


def test_generic_bound_reproduces_the_published_bracket():
    eps = shuffle_epsilon_generic(4.0, 10**5, 1e-6)
    assert FMT21_LOWER <= eps <= FMT21_UPPER


def test_closed_form_is_theorem_3_1_and_below_the_reference_codes_form():
    value = shuffle_epsilon_closed_form(4.0, 10**5, 1e-6)
    assert shuffle_epsilon_generic(4.0, 10**5, 1e-6) < value < FMT21_CLOSED_CODE
    # outside the theorem's condition ε0 <= log(n / (16 log(2/δ))) the closed form is ε0 itself
    assert shuffle_epsilon_closed_form(4.0, 1000, 1e-6) == 4.0


def test_binary_rr_is_never_above_the_published_generic_bound():
    # 2-RR at ε0 = 4 is a 4-LDP randomizer: the paper's generic upper value applies to it
    assert shuffle_epsilon(krr(2, 4.0), 10**5, 1e-6) <= FMT21_UPPER


@pytest.mark.parametrize("eps0", [0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("n", [10**3, 10**4, 10**5])
@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_numerical_bound_is_never_looser_than_the_closed_form(eps0, n, delta):
    # the numerical analysis of Theorem 3.2 against the closed form of Theorem 3.1 (no min taken)
    assert shuffle_epsilon_generic(eps0, n, delta) <= shuffle_epsilon_closed_form(eps0, n, delta) + 1e-12


@pytest.mark.parametrize("k", [2, 4])
def test_channel_bound_is_never_looser_than_the_generic_one(k):
    for eps0 in (0.5, 2.0):
        generic = shuffle_epsilon_generic(eps0, 10**4, 1e-6)
        assert shuffle_epsilon(krr(k, eps0), 10**4, 1e-6) <= generic * (1 + 1e-3)


# -- exact enumeration -----------------------------------------------------------------------------
def shuffled_histograms(rows: list[np.ndarray]) -> dict[tuple, float]:
    """Exact law of the histogram of one report per row (independent users), by convolution."""
    law = {tuple([0] * len(rows[0])): 1.0}
    for row in rows:
        nxt: dict[tuple, float] = defaultdict(float)
        for h, p in law.items():
            for y, q in enumerate(row):
                if q > 0:
                    h2 = list(h)
                    h2[y] += 1
                    nxt[tuple(h2)] += p * q
        law = nxt
    return law


def exact_delta(Q: np.ndarray, n: int, eps: float) -> float:
    """Largest hockey-stick δ(ε) over every neighbouring pair of datasets of n users (others' multisets)."""
    k = Q.shape[0]
    worst = 0.0
    for others in itertools.combinations_with_replacement(range(k), n - 1):
        for a, b in itertools.permutations(range(k), 2):
            P0 = shuffled_histograms([Q[a]] + [Q[x] for x in others])
            P1 = shuffled_histograms([Q[b]] + [Q[x] for x in others])
            d = sum(max(0.0, p - math.exp(eps) * P1.get(h, 0.0)) for h, p in P0.items())
            worst = max(worst, d)
    return worst


@pytest.mark.parametrize("n", [3, 4, 5, 6])
@pytest.mark.parametrize("eps0,eps", [(1.0, 0.3), (2.0, 0.6), (3.0, 1.0)])
def test_bound_holds_against_exact_enumeration_binary_rr(n, eps0, eps):
    Q = krr(2, eps0)
    exact = exact_delta(Q, n, eps)
    bound = shuffle_delta(Q, n, eps)
    assert exact <= bound
    assert bound <= 1.2 * exact + 1e-9  # at small n the clone reduction is within 20 % of the exact δ for 2-RR


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bound_holds_against_exact_enumeration_random_channel(seed):
    rng = np.random.default_rng(seed)
    Q = rng.uniform(0.2, 1.0, size=(3, 3))
    Q /= Q.sum(axis=1, keepdims=True)
    eps0 = local_epsilon(Q)
    for n in (3, 4):
        for eps in (0.25 * eps0, 0.5 * eps0):
            assert exact_delta(Q, n, eps) <= shuffle_delta(Q, n, eps)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 3), st.integers(2, 3), st.integers(2, 4), st.floats(0.05, 0.9),
       st.lists(st.floats(0.0, 1.0), min_size=9, max_size=9))
def test_bound_holds_on_random_small_channels(k, m, n, frac, entries):
    """Law: for any channel (zeros allowed), the bound is above the exact δ of every neighbouring pair."""
    Q = np.array(entries[: k * m]).reshape(k, m) + 1e-3 * (np.arange(k * m).reshape(k, m) % 2)
    Q /= Q.sum(axis=1, keepdims=True)
    eps0 = local_epsilon(Q)
    eps = frac * (eps0 if math.isfinite(eps0) else 3.0)
    assert exact_delta(Q, n, eps) <= shuffle_delta(Q, n, eps) + 1e-15  # the enumeration's own rounding


def test_a_channel_without_pure_ldp():
    # output 0 is impossible from input 1: with every other user at 1, seeing 0 names user 1's input
    Q = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.25, 0.5, 0.25]])
    assert local_epsilon(Q) == math.inf
    for n in (3, 4):
        for eps in (0.5, 3.0):
            assert exact_delta(Q, n, eps) <= shuffle_delta(Q, n, eps)
    assert shuffle_epsilon(Q, 1000, 1e-6) == math.inf


def test_epsilon_and_delta_agree():
    Q = krr(4, 2.0)
    eps = shuffle_epsilon(Q, 2000, 1e-6)
    assert shuffle_delta(Q, 2000, eps) <= 1e-6 < shuffle_delta(Q, 2000, 0.98 * eps)


# -- laws --------------------------------------------------------------------------------------------
def test_monotone_in_n():
    Q = krr(5, 2.0)
    values = [shuffle_epsilon(Q, n, 1e-6) for n in (10, 100, 1000, 10_000)]
    assert all(a >= b for a, b in zip(values, values[1:]))
    assert values[-1] < values[0]


def test_delta_decreases_with_epsilon():
    Q = krr(3, 1.5)
    deltas = [shuffle_delta(Q, 500, e) for e in np.linspace(0.0, 1.5, 8)]
    assert all(a >= b for a, b in zip(deltas, deltas[1:]))
    assert deltas[-1] == 0.0


def test_one_user_is_the_local_guarantee():
    Q = krr(3, 1.5)
    # the channel's own (ε, δ): smallest ε with max_pairs sum (Q[a] - e^ε Q[b])+ <= δ, by bisection here
    def local_delta(e):
        return max(np.maximum(Q[a] - math.exp(e) * Q[b], 0).sum() for a in range(3) for b in range(3))
    lo, hi = 0.0, 1.5
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if local_delta(mid) <= 1e-3 else (mid, hi)
    eps1 = shuffle_epsilon(Q, 1, 1e-3)
    assert hi - 1e-9 <= eps1 <= 1.5


def test_optimal_histogram_mechanism_at_k8_amplifies_below_0_2():
    problem = mechopt.load_problem({"inputs": [str(i) for i in range(8)], "outputs": "free",
                                    "privacy": [{"notion": "ldp", "epsilon": 1.0}],
                                    "objective": {"kind": "histogram_mse"}})
    mech = mechopt.solve(problem, quiet=True).mechanism
    assert local_epsilon(mech.matrix) <= 1.0 + 1e-9
    values = [mech.shuffle_epsilon(n, 1e-6) for n in (1000, 10_000, 30_000)]
    assert values[1] <= 0.2
    assert values[0] > values[1] > values[2]
    assert mech.shuffle_delta(10_000, values[1]) <= 1e-6


def test_identical_rows_leak_nothing():
    Q = np.array([[0.3, 0.7], [0.3, 0.7]])
    assert shuffle_epsilon(Q, 100, 1e-6) == 0.0
    assert shuffle_delta(Q, 100, 0.0) == 0.0


@pytest.mark.parametrize("call,field", [
    (lambda: shuffle_epsilon(krr(2, 1.0), 0, 1e-6), "n"),
    (lambda: shuffle_epsilon(krr(2, 1.0), 10, 0.0), "delta"),
    (lambda: shuffle_delta(krr(2, 1.0), 10, -1.0), "epsilon"),
    (lambda: shuffle_epsilon([[0.5, 0.6]], 10, 1e-6), "Q[0]"),
    (lambda: shuffle_epsilon_closed_form(1.0, 10, 1.5), "delta"),
])
def test_bad_input_names_the_field(call, field):
    with pytest.raises(InputError) as err:
        call()
    assert err.value.field == field
