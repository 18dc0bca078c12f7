"""Relations between notions in 003: exact values (LPs) never exceed the printed bounds.

Thm 1 / Prop. 1 (LIP <-> LDP), Thm 2 (BP-LIP <-> LDP), Cor. 3 (approximate: fails as
printed), Thm 3 (DI, MIP, MIL), Thm 4 / Cor. 4 / Cor. 5 (composition), Lemma 3, eq. (12),
Cor. 6 (printed Φ is wrong), Cor. 7 (empirical prior, by simulation).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechopt._errors import InputError
from mechopt.closed_forms import (
    approx_ldp_to_lip,
    approx_lip_to_ldp,
    approx_lip_to_ldp_corrected,
    binary_lip_optimum,
    bp_lip_budget,
    bp_lip_composition_bound,
    bp_lip_to_ldp_bound,
    bp_lip_to_ldp_exact,
    bp_lip_vertices,
    compose_parallel,
    compose_sequential,
    di_budget,
    di_to_lip_bound,
    di_to_lip_exact,
    empirical_prior_gap_bound,
    k_rr,
    ldp_budget,
    ldp_delta,
    ldp_to_bp_lip_bound,
    ldp_to_bp_lip_exact,
    ldp_to_lip_bound,
    ldp_to_lip_exact,
    lip_budget,
    lip_composition_bound,
    lip_delta,
    lip_rr,
    lip_to_di_bound,
    lip_to_di_exact,
    lip_to_ldp_bound,
    lip_to_ldp_exact,
    maximal_leakage,
    mutual_information,
    sequential_composition_bound,
    total_variation,
    transfer_condition,
    transfer_gap_bound,
    transfer_leakage_bound,
)

TOL = 1e-8


def cases(seed, n, k_lo=2, k_hi=6):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        k = int(rng.integers(k_lo, k_hi))
        yield rng.dirichlet(np.ones(k) * rng.uniform(0.3, 3.0)), float(rng.uniform(0.05, 3.0))


def shrink_until(R, C, leakage, eps):
    """Mix R with the constant channel C until ``leakage`` is at most eps (bisection, 50 steps)."""
    lo, hi = 0.0, 1.0
    for _ in range(50):
        t = (lo + hi) / 2
        if leakage((1 - t) * R + t * C) <= eps:
            hi = t
        else:
            lo = t
    return (1 - hi) * R + hi * C


def shrink_to_lip(R, P, eps):
    """Mix R with its constant channel until it is eps-LIP (a random feasible mechanism)."""
    return shrink_until(R, np.tile(P @ R, (R.shape[0], 1)), lambda Q: lip_budget(Q, P), eps)


# -- Thm 1 / Prop 1 -------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_thm1_exact_never_exceeds_prop1_and_is_tight_for_k_at_least_3(seed):
    for P, eps in cases(seed, 25):
        exact, bound = lip_to_ldp_exact(P, eps), lip_to_ldp_bound(P, eps)
        assert exact <= bound + TOL
        assert exact <= 2 * eps + TOL  # 000 Thm 1: eps-LIP implies 2 eps-LDP
        if P.size >= 3:
            assert exact == pytest.approx(bound, abs=1e-7)


def test_prop1_is_loose_for_k_2():
    P, eps = [0.0362, 0.9638], 0.716
    assert lip_to_ldp_exact(P, eps) < lip_to_ldp_bound(P, eps) - 0.5
    # the exact value is the binary LIP cone's widest ratio
    assert lip_to_ldp_exact(P, eps) == pytest.approx(ldp_budget(binary_lip_optimum(P, eps)), abs=1e-7)


def test_thm1_003_fig2a_values():
    """003 Fig. 2(a) priors: exact = bound (k = 4)."""
    for P in ([0.01, 0.33, 0.33, 0.33], [0.25] * 4):
        for eps in (0.5, 1.0, 2.0):
            assert lip_to_ldp_exact(P, eps) == pytest.approx(lip_to_ldp_bound(P, eps), abs=1e-7)
    assert lip_to_ldp_exact([0.25] * 4, 2.0) == pytest.approx(math.log((math.exp(2) - 0.75) / 0.25), abs=1e-7)


@pytest.mark.parametrize("seed", range(2))
def test_thm1_converse_ldp_to_lip_exact_equals_bound(seed):
    for P, eps in cases(10 + seed, 25):
        assert ldp_to_lip_exact(P, eps) == pytest.approx(ldp_to_lip_bound(P, eps), abs=1e-7)
        # and a concrete eps-LDP mechanism stays under it
        assert lip_budget(k_rr(P.size, eps), P) <= ldp_to_lip_bound(P, eps) + TOL


def test_random_lip_mechanisms_respect_thm1():
    rng = np.random.default_rng(3)
    for P, eps in cases(4, 30):
        Q = shrink_to_lip(rng.dirichlet(np.ones(3) * 0.3, size=P.size), P, eps)
        assert ldp_budget(Q) <= lip_to_ldp_exact(P, eps) + 1e-7


# -- Thm 2: BP-LIP ----------------------------------------------------------------------


def test_bp_lip_vertices_box():
    V = bp_lip_vertices([0.1, 0.2, 0.3], [0.5, 0.5, 0.5])
    assert np.allclose(V.sum(axis=1), 1.0)
    assert np.all(V >= [0.1, 0.2, 0.3]) and np.all(V <= 0.5 + 1e-12)
    assert len(V) == 5  # a pentagon: (.1,.4,.5) (.1,.5,.4) (.2,.5,.3) (.3,.2,.5) (.5,.2,.3)
    with pytest.raises(InputError, match="contains no probability"):
        bp_lip_vertices([0.6, 0.6], [0.9, 0.9])


@pytest.mark.parametrize("seed", range(3))
def test_thm2_bp_lip_exact_within_bounds(seed):
    rng = np.random.default_rng(20 + seed)
    for _ in range(6):
        k = int(rng.integers(2, 5))
        Ps = [rng.dirichlet(np.ones(k) * 2) for _ in range(int(rng.integers(1, 4)))]
        eps = float(rng.uniform(0.1, 2.5))
        assert bp_lip_to_ldp_exact(Ps, eps) <= bp_lip_to_ldp_bound(Ps, eps) + TOL
        assert ldp_to_bp_lip_exact(Ps, eps) <= ldp_to_bp_lip_bound(Ps, eps) + TOL
        # Cor. 2 direction: more priors -> closer to LDP; BP-LIP exact <= LIP exact for any member
        assert bp_lip_to_ldp_exact(Ps, eps) <= min(lip_to_ldp_exact(P, eps) for P in Ps) + TOL


def test_cor2_all_vertices_of_simplex_give_ldp():
    """WC-LIP (every prior) is eps-LDP: BP-LIP over the simplex vertices (and any interior point) is exactly eps."""
    eps, k = 0.8, 3
    Ps = [np.eye(k)[i] * 0.999 + 0.001 / k for i in range(k)]
    assert bp_lip_to_ldp_exact(Ps, eps) == pytest.approx(eps, abs=0.01)


# -- Cor 3: approximate LIP/LDP --------------------------------------------------------------


def test_cor3_first_half_holds():
    rng = np.random.default_rng(5)
    for _ in range(50):
        Q = rng.dirichlet(np.ones(3), size=3)
        P = rng.dirichlet(np.ones(3))
        eps = float(rng.uniform(0, 2))
        e2, d2 = approx_ldp_to_lip(eps, ldp_delta(Q, eps))
        assert lip_delta(Q, P, e2) <= d2 + 1e-12


def test_cor3_second_half_fails_as_printed_and_2e_eps_is_tight():
    """(eps, delta)-LIP does NOT imply (2 eps, (e^eps + 1) delta)-LDP; the right factor is 2 e^eps."""
    eps, delta = 1.0, 0.1
    e = math.e
    P = [1 / (2 * e), 1 - 1 / (2 * e)]
    Q = np.array([[1 - 2 * e * delta, 2 * e * delta], [1.0, 0.0]])
    assert lip_delta(Q, P, eps) == pytest.approx(delta, abs=1e-12)
    achieved = ldp_delta(Q, 2 * eps)
    printed = approx_lip_to_ldp(eps, delta)[1]
    corrected = approx_lip_to_ldp_corrected(eps, delta)[1]
    assert achieved == pytest.approx(0.5436563656918091)
    assert achieved > printed == pytest.approx(0.3718281828459045)
    assert achieved == pytest.approx(corrected)
    # and the corrected factor is never beaten on random channels
    rng = np.random.default_rng(8)
    for _ in range(200):
        k, m = int(rng.integers(2, 4)), int(rng.integers(2, 4))
        R = rng.dirichlet(np.ones(m) * 0.5, size=k)
        Pr = rng.dirichlet(np.ones(k))
        ep = float(rng.choice([0.1, 0.5, 1.0, 2.0]))
        d = lip_delta(R, Pr, ep)
        assert ldp_delta(R, 2 * ep) <= approx_lip_to_ldp_corrected(ep, min(d, 1.0))[1] + 1e-12


def test_003_eq4_pointwise_is_not_equivalent_to_eq3_set_version():
    Q = np.array([[0.4, 0.4, 0.1, 0.1], [0.1, 0.1, 0.4, 0.4]])
    P = [0.5, 0.5]
    # per output the worst excess is P_Y(y) - e^0.1 Q(y|x) = 0.25 - 0.1 e^0.1; two outputs double it
    assert lip_delta(Q, P, 0.1, pointwise=True) == pytest.approx(0.25 - 0.1 * math.exp(0.1))
    assert lip_delta(Q, P, 0.1) == pytest.approx(2 * (0.25 - 0.1 * math.exp(0.1)))


# -- Thm 3: DI, MIP, MIL ------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(2))
def test_thm3_di_bounds(seed):
    for P, eps in cases(30 + seed, 12):
        assert lip_to_di_exact(P, eps) <= lip_to_di_bound(P, eps) + TOL
        assert di_to_lip_exact(P, eps) <= di_to_lip_bound(P, eps) + TOL


def test_thm3_on_mechanisms():
    rng = np.random.default_rng(9)
    for P, eps in cases(40, 20):
        Q = shrink_to_lip(rng.dirichlet(np.ones(3) * 0.3, size=P.size), P, eps)
        assert di_budget(Q, P) <= lip_to_di_exact(P, eps) + 1e-7
        assert mutual_information(Q, P) <= eps + TOL  # Thm 3.2: eps-LIP implies eps-MIP
        assert maximal_leakage(Q) <= eps + TOL  # Thm 3.3: eps-LIP implies eps-MIL


def test_thm3_mip_does_not_imply_lip():
    """003 Example 1 at q = 0: finite MI, infinite LIP leakage."""
    Q = np.eye(2)
    assert mutual_information(Q, [0.8, 0.2]) < 1
    assert lip_budget(Q, [0.8, 0.2]) == math.inf


# -- Thm 4, Cor 4, Cor 5: composition -----------------------------------------------------


def test_thm4_composition_bound():
    rng = np.random.default_rng(50)
    for P, _ in cases(51, 40, 2, 5):
        eps = list(rng.uniform(0.1, 1.5, size=int(rng.integers(2, 4))))
        Qs = [shrink_to_lip(rng.dirichlet(np.ones(2) * 0.3, size=P.size), P, e) for e in eps]
        assert lip_budget(compose_parallel(*Qs), P) <= lip_composition_bound(eps, P) + 1e-7
    # eq. (19) in its regime, composed with itself
    P = np.array([0.3, 0.3, 0.4])
    Q = lip_rr(P, 1.0)
    assert lip_budget(compose_parallel(Q, Q, Q), P) <= lip_composition_bound([1.0] * 3, P)


def test_cor4_bp_composition_bound():
    rng = np.random.default_rng(60)
    Ps = [np.array([0.25, 0.25, 0.25, 0.25]), np.array([0.1, 0.1, 0.1, 0.7])]  # 003 Fig. 5(b)
    for eps in (0.5, 2.0):
        Qs = []
        for _ in range(3):
            R = rng.dirichlet(np.ones(3) * 0.3, size=4)
            Qs.append(shrink_until(R, np.tile(R.mean(axis=0), (4, 1)), lambda Q: bp_lip_budget(Q, Ps), eps))
        leak = bp_lip_budget(compose_parallel(*Qs), Ps)
        assert leak <= bp_lip_composition_bound([eps] * 3, Ps) + 1e-7


def test_cor5_sequential_composition_bound():
    rng = np.random.default_rng(70)
    for _ in range(10):
        J = rng.dirichlet(np.ones(6)).reshape(2, 3)  # correlated (X1, X2)
        m1, m2 = J.sum(axis=1), J.sum(axis=0)
        eps = [float(rng.uniform(0.2, 1.5)), float(rng.uniform(0.2, 1.5))]
        Q1 = shrink_to_lip(rng.dirichlet(np.ones(2) * 0.3, size=2), m1, eps[0])
        Q2 = shrink_to_lip(rng.dirichlet(np.ones(2) * 0.3, size=3), m2, eps[1])
        joint_leak = lip_budget(compose_sequential(Q1, Q2), J.ravel())
        assert joint_leak <= sequential_composition_bound(J, eps) + 1e-7


# -- Lemma 3, eq. (12), Cor 6, Cor 7: transferability --------------------------------------


def test_lemma3_and_eq12():
    rng = np.random.default_rng(80)
    for _ in range(60):
        k = int(rng.integers(2, 5))
        P1, P2 = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        eps = float(rng.uniform(0.1, 2.0))
        Q = shrink_to_lip(rng.dirichlet(np.ones(3) * 0.3, size=k), P1, eps)
        gap = abs(lip_budget(Q, P1) - lip_budget(Q, P2))
        assert gap <= transfer_gap_bound(P1, P2) + 1e-9
        assert lip_budget(Q, P2) <= transfer_leakage_bound(P1, P2, eps) + 1e-7


def test_cor6_printed_phi_is_wrong():
    """Φ must be log((e^ε-1+P1min)/P1min) - ε; the printed Φ (without log) misclassifies this case."""
    P1, P2, eps = [0.5, 0.5], [0.2, 0.8], 1.0
    eta = transfer_gap_bound(P1, P2)
    terms = {"eta+eps": eta + eps, "2eps": 2 * eps, "log": lip_to_ldp_bound(P1, eps)}
    smallest = min(terms, key=terms.get)
    assert smallest == "log"  # 1.490 < 1.916 < 2
    assert transfer_condition(P1, P2, eps, printed=True) is True  # claims eta + eps is smallest
    assert transfer_condition(P1, P2, eps) is False
    # the corrected condition agrees with the direct comparison on random cases
    rng = np.random.default_rng(81)
    for _ in range(200):
        k = int(rng.integers(2, 5))
        a, b = rng.dirichlet(np.ones(k) * 3), rng.dirichlet(np.ones(k) * 3)
        e = float(rng.uniform(0.1, 3))
        direct = transfer_gap_bound(a, b) + e <= min(2 * e, lip_to_ldp_bound(a, e)) + 1e-12
        assert transfer_condition(a, b, e) == direct


def test_cor7_empirical_prior_by_simulation():
    """003 Fig. 6(c) setting: |X| = 2, P(0) = 0.3, beta = 0.01: the gap exceeds eta in < beta of runs."""
    rng = np.random.default_rng(90)
    P, eps, beta = np.array([0.3, 0.7]), 1.0, 0.01
    for n in (50, 200, 1000):
        fails = 0
        runs = 300
        for _ in range(runs):
            Ph = np.bincount(rng.choice(2, size=n, p=P), minlength=2) / n
            if Ph.min() == 0:
                continue  # c = 0: eta = inf, trivially true
            M = binary_lip_optimum(Ph, eps)
            gap = abs(lip_budget(M, Ph) - lip_budget(M, P))
            eta = empirical_prior_gap_bound(n, 2, beta, min(Ph.min(), P.min()))
            fails += gap > eta
        assert fails / runs <= beta


def test_relations_input_errors():
    assert total_variation([0.5, 0.5], [0.2, 0.8]) == pytest.approx(0.3)
    with pytest.raises(InputError, match="one budget per variable"):
        sequential_composition_bound(np.full((2, 2), 0.25), [1.0])
    with pytest.raises(InputError, match="non-empty list of priors"):
        bp_lip_to_ldp_bound([], 1.0)
    with pytest.raises(InputError, match="same number of inputs"):
        compose_parallel(np.eye(2), np.eye(3))
    with pytest.raises(InputError, match="epsilon: must be >= 0"):
        lip_to_ldp_exact([0.5, 0.5], -0.1)
