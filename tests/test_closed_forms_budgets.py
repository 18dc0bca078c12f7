"""The achieved-budget functions used to judge the closed forms, against naive loops.

The closed-form tests judge every formula with :mod:`mechopt.closed_forms._budgets`;
here those functions are checked against straightforward triple loops written from the
definitions (docs/model.md) and against hand-computed values.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from mechopt._errors import InputError
from mechopt.closed_forms import (
    block_budget,
    bp_lip_budget,
    di_budget,
    eldp_excess,
    eldp_pair_budgets,
    high_low_budget,
    ldp_budget,
    ldp_delta,
    lip_budget,
    lip_delta,
    maximal_leakage,
    uldp_budget,
    uldp_roles,
)


def naive_ldp(Q):
    best = 0.0
    k, m = Q.shape
    for y in range(m):
        if not Q[:, y].any():
            continue
        for x, x2 in itertools.permutations(range(k), 2):
            if Q[x, y] > 0 and Q[x2, y] == 0:
                return math.inf
            if Q[x, y] > 0:
                best = max(best, math.log(Q[x, y] / Q[x2, y]))
    return best


def naive_lip(Q, P):
    best = 0.0
    for y in range(Q.shape[1]):
        if not Q[:, y].any():
            continue
        py = sum(P[x] * Q[x, y] for x in range(Q.shape[0]))
        for x in range(Q.shape[0]):
            if Q[x, y] == 0:
                return math.inf
            best = max(best, abs(math.log(Q[x, y] / py)))
    return best


def random_channel(rng, k, m, zeros=False):
    Q = rng.dirichlet(np.ones(m), size=k)
    if zeros:
        Q[rng.random(Q.shape) < 0.2] = 0.0
        Q[:, 0] += 1e-3
        Q /= Q.sum(axis=1, keepdims=True)
    return Q


@pytest.mark.parametrize("seed", range(5))
def test_ldp_and_lip_match_naive_loops(seed):
    rng = np.random.default_rng(seed)
    for zeros in (False, True):
        Q = random_channel(rng, 4, 3, zeros)
        P = rng.dirichlet(np.ones(4))
        assert ldp_budget(Q) == pytest.approx(naive_ldp(Q), abs=1e-12)
        assert lip_budget(Q, P) == pytest.approx(naive_lip(Q, P), abs=1e-12)
        assert bp_lip_budget(Q, [P, np.full(4, 0.25)]) == pytest.approx(
            max(naive_lip(Q, P), naive_lip(Q, np.full(4, 0.25))), abs=1e-12)


def test_hand_computed_values():
    W = np.array([[0.75, 0.25], [0.25, 0.75]])  # Warner, eps = ln 3
    assert ldp_budget(W) == pytest.approx(math.log(3))
    assert lip_budget(W, [0.5, 0.5]) == pytest.approx(math.log(2))
    assert di_budget(W, [0.5, 0.5]) == pytest.approx(math.log(3))
    assert maximal_leakage(W) == pytest.approx(math.log(1.5))
    assert ldp_budget(np.full((3, 2), 0.5)) == 0.0
    # a zero column is never emitted and constrains nothing
    assert ldp_budget(np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0]])) == 0.0
    # zero next to non-zero: infinite budget
    assert ldp_budget(np.array([[1.0, 0.0], [0.5, 0.5]])) == math.inf
    assert lip_budget(np.array([[1.0, 0.0], [0.5, 0.5]]), [0.5, 0.5]) == math.inf


def test_eldp_pair_budgets_and_excess():
    M = np.array([[0.5, 0.5], [0.0, 1.0]])  # Mangat, p = 1/2, input 1 sensitive
    A = eldp_pair_budgets(M)
    assert A[0, 1] == math.inf and A[1, 0] == pytest.approx(math.log(2))
    E_ok = np.array([[0.0, math.inf], [math.log(2), 0.0]])
    E_bad = np.array([[0.0, math.inf], [0.5, 0.0]])
    assert eldp_excess(M, E_ok) == pytest.approx(0.0, abs=1e-12)
    assert eldp_excess(M, E_bad) == pytest.approx(math.log(2) - 0.5)


def test_high_low_block_uldp():
    M = np.array([[0.5, 0.5], [0.0, 1.0]])
    assert high_low_budget(M, [1]) == pytest.approx(math.log(2))
    assert high_low_budget(M, [0]) == math.inf  # input 0 has mass where input 1 has none
    assert uldp_roles(M, [1]) == ["invertible", "protected"]
    assert uldp_budget(M, [1]) == pytest.approx(math.log(2))
    # a single non-zero at a *sensitive* input is not invertible: it is protected and leaks inf
    assert uldp_budget(np.array([[0.5, 0.5], [0.0, 1.0]]), [0]) == math.inf
    assert uldp_budget(np.array([[1.0, 0.0], [0.5, 0.5]]), [0]) == pytest.approx(math.log(2))
    assert block_budget(np.eye(4), [[0], [1], [2], [3]]) == 0.0
    assert block_budget(np.eye(2), [[0, 1]]) == math.inf


def test_delta_functions():
    Q = np.array([[0.9, 0.1], [0.1, 0.9]])
    # (eps, delta)-LDP: sum_y (Q[x,y] - e^eps Q[x',y])_+
    assert ldp_delta(Q, 0.0) == pytest.approx(0.8)
    assert ldp_delta(Q, math.log(9)) == pytest.approx(0.0, abs=1e-12)
    # set version dominates the pointwise version of 003 eq. (4)
    P = [0.5, 0.5]
    assert lip_delta(Q, P, 0.1) >= lip_delta(Q, P, 0.1, pointwise=True)
    assert lip_delta(Q, P, math.log(5)) == pytest.approx(0.0, abs=1e-12)
    assert lip_delta(Q, P, math.log(4)) > 0


def test_budget_input_errors():
    with pytest.raises(InputError, match=r"Q\[0\]: row must sum to 1"):
        ldp_budget(np.array([[0.5, 0.6], [0.5, 0.5]]))
    with pytest.raises(InputError, match="sum to 1"):
        lip_budget(np.eye(2), [0.5, 0.6])
    with pytest.raises(InputError, match=r"Q\[0\]\[1\]: must be >= 0"):
        ldp_budget(np.array([[1.5, -0.5], [0.5, 0.5]]))
    with pytest.raises(InputError, match="not an input|index must be"):
        high_low_budget(np.eye(2), [5])
