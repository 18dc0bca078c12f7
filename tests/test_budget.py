"""Tests of privacy budget accounting: the ledger, and the printed bounds vs the definitions.

The composition bounds of 003 are claims; here they are checked against the exact
leakage of composed channels, computed by enumerating output sequences.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechopt._errors import InputError, MechoptError
from mechopt.runtime import (
    BudgetExceededError,
    PrivacyBudget,
    bp_lip_composition_bound,
    ldp_composition,
    lip_composition_bound,
    lip_sequence_composition_bound,
    utility_optimized_rr,
)


def product_channel(*channels: np.ndarray) -> np.ndarray:
    """Independent reports about the same input: rows are inputs, columns sequences."""
    out = channels[0]
    for Q in channels[1:]:
        out = (out[:, :, None] * Q[:, None, :]).reshape(out.shape[0], -1)
    return out


def lip_leakage(Q: np.ndarray, prior: np.ndarray) -> float:
    """Exact LIP leakage: max |ln(Pr(y|x)/Pr(y))| over y with Pr(y) > 0 (000 Def. 3)."""
    lam = prior @ Q
    used = lam > 0
    with np.errstate(divide="ignore"):
        return float(np.max(np.abs(np.log(Q[:, used] / lam[used]))))


def random_channel(rng, k, m):
    Q = rng.dirichlet(np.ones(m) * rng.choice([0.3, 1.0, 5.0]), size=k)
    Q = np.maximum(Q, 1e-4)
    return Q / Q.sum(axis=1, keepdims=True)


# ------------------------------------------------------------------ additive rules


def test_ldp_adds_exactly_on_decimals():
    budget = PrivacyBudget(1.0, "ldp")
    for _ in range(10):
        budget.spend(0.1)
    assert budget.spent == 1.0  # exact decimal sum, no 0.9999999999999999
    with pytest.raises(BudgetExceededError, match=r"epsilon=0.1 .* from 1.0 to 1.1, above "
                                                  r"the limit 1.0 \(basic composition"):
        budget.spend(0.1)
    assert budget.reports == 10 and budget.spent == 1.0  # refusal records nothing
    assert budget.spend(0.0) == 1.0


def test_ldp_composition_is_satisfied_by_product_of_krr():
    """Σε is attained: the product of two k-RR channels has LDP budget exactly ε1 + ε2."""
    def krr(k, eps):
        return np.where(np.eye(k, dtype=bool), math.exp(eps), 1.0) / (math.exp(eps) + k - 1)

    P = product_channel(krr(3, 0.4), krr(3, 0.7))
    achieved = max(math.log(P[a, y] / P[b, y]) for a in range(3) for b in range(3)
                   for y in range(P.shape[1]))
    assert achieved == pytest.approx(ldp_composition([0.4, 0.7]), abs=1e-12)


def test_infinite_epsilon_is_refused_under_a_finite_limit():
    budget = PrivacyBudget(5.0, "ldp")
    with pytest.raises(BudgetExceededError):
        budget.spend(math.inf)
    assert PrivacyBudget(math.inf, "ldp").spend(math.inf) == math.inf


def test_budget_exceeded_is_a_mechopt_error():
    assert issubclass(BudgetExceededError, MechoptError)
    budget = PrivacyBudget(0.5, "metric")
    with pytest.raises(MechoptError) as info:
        budget.spend(0.6)
    assert info.value.requested == 0.6 and info.value.spent == 0.0
    assert info.value.would_be == pytest.approx(0.6)


# ------------------------------------------------------------------------- ULDP


def is_uldp(Q: np.ndarray, sensitive: set[int], eps: float) -> bool:
    """001 Def. 2, roles derived from the matrix (as docs/model.md prescribes)."""
    k = Q.shape[0]
    for col in Q.T:
        nz = np.flatnonzero(col > 0)
        if nz.size == 0:
            continue
        if nz.size == 1 and nz[0] not in sensitive:
            continue  # invertible output of a non-sensitive input
        if nz.size < k or col.max() > math.exp(eps) * col.min() * (1 + 1e-12):
            return False
    return True


def test_uldp_composition_001_prop_1():
    S = {0, 1}
    Q0 = utility_optimized_rr(5, S, 0.5)
    Q1 = utility_optimized_rr(5, S, 0.8)
    assert is_uldp(Q0, S, 0.5) and is_uldp(Q1, S, 0.8)
    both = product_channel(Q0, Q1)
    assert is_uldp(both, S, 1.3)
    assert not is_uldp(both, S, 1.2)  # the sum is attained by uRR
    budget = PrivacyBudget(1.3, "uldp", sensitive=["s0", "s1"])
    budget.spend(0.5, sensitive=["s0", "s1"])
    assert budget.spend(0.8, sensitive=["s0", "s1", "extra"]) == pytest.approx(1.3)
    with pytest.raises(BudgetExceededError, match=r"001 Prop\. 1"):
        budget.spend(0.01, sensitive=["s0", "s1"])


def test_uldp_report_must_protect_the_common_sensitive_set():
    budget = PrivacyBudget(2.0, "uldp", sensitive=["home", "clinic"])
    with pytest.raises(InputError, match=r"sensitive: the report's mechanism does not "
                                         r"protect \['clinic'\]"):
        budget.spend(0.5, sensitive=["home"])
    with pytest.raises(InputError, match="sensitive: is required for a ULDP report"):
        budget.spend(0.5)


# --------------------------------------------------------------------------- LIP


def test_lip_bound_hand_values():
    # P_min = 0.25, ε = 1: ω = min(2, ln((e - 1 + .25)/.25) = 2.063...) = 2 per report
    assert lip_composition_bound([1.0, 1.0], 0.25) == pytest.approx(
        math.log(0.25 + math.exp(4.0) * 0.75))
    # P_min = 0.5, ε = 1: ω = ln(2e - 1) < 2
    assert lip_composition_bound([1.0], 0.5) == pytest.approx(
        math.log(0.5 + (2 * math.e - 1) * 0.5))
    # stable for huge ε (e^800 overflows a float): ω → ε − ln P_min, then
    # ln(P + e^W (1 − P)) → W + ln(1 − P)
    assert lip_composition_bound([800.0, 800.0], 0.25) == pytest.approx(
        2 * (800 - math.log(0.25)) + math.log(0.75), rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_lip_bound_003_thm_4_holds_on_random_channels(seed):
    """Exact leakage of n independent reports ≤ 003 Thm 4 with each report's exact ε."""
    rng = np.random.default_rng(seed)
    for _ in range(150):
        k, m, n = rng.integers(2, 5), rng.integers(2, 4), rng.integers(1, 4)
        prior = rng.dirichlet(np.ones(k) * rng.choice([0.5, 2.0]))
        prior = np.maximum(prior, 1e-3)
        prior /= prior.sum()
        channels = [random_channel(rng, k, m) for _ in range(n)]
        eps = [lip_leakage(Q, prior) for Q in channels]
        leak = lip_leakage(product_channel(*channels), prior)
        assert leak <= lip_composition_bound(eps, float(prior.min())) + 1e-9


def test_lip_ledger_uses_own_epsilon_first_then_thm_4():
    prior = [0.2, 0.3, 0.5]
    budget = PrivacyBudget(3.0, "lip", prior=prior)
    assert budget.spend(0.5) == 0.5
    second = budget.spend(0.5)
    assert second == pytest.approx(lip_composition_bound([0.5, 0.5], 0.2))
    assert second > 1.0  # LIP does not compose additively: the bound grows faster
    with pytest.raises(BudgetExceededError, match=r"003 Thm 4"):
        budget.spend(2.0)
    assert budget.history == [(0.5, 0.5), (0.5, second)]


def test_lip_needs_a_prior():
    with pytest.raises(InputError, match="prior: is required for notion 'lip'"):
        PrivacyBudget(1.0, "lip")
    with pytest.raises(InputError, match="prior: must sum to 1"):
        PrivacyBudget(1.0, "lip", prior=[0.5, 0.6])
    with pytest.raises(InputError, match=r"min\(prior\): must lie in \(0, 1\]"):
        PrivacyBudget(1.0, "lip", prior=[1.0, 0.0])


# ------------------------------------------------------------------------ BP-LIP


def test_bp_lip_bound_hand_value():
    priors = [[0.1, 0.1, 0.1, 0.7], [0.25, 0.25, 0.25, 0.25]]  # 003 Fig. 5(b) set P1^bp
    lo, hi = 0.1, 0.25
    omega = min(4.0, math.log((math.exp(2.0) - 1 + hi) / hi))
    assert bp_lip_composition_bound([2.0, 2.0, 2.0], priors) == pytest.approx(
        math.log(lo + math.exp(3 * omega) * (1 - lo)))


@pytest.mark.parametrize("seed", range(3))
def test_bp_lip_bound_003_cor_4_holds_on_random_channels(seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(150):
        k, m, n = rng.integers(2, 4), rng.integers(2, 4), rng.integers(1, 4)
        priors = [rng.dirichlet(np.ones(k) * c) for c in (0.7, 4.0)]
        priors = [np.maximum(p, 1e-3) / np.maximum(p, 1e-3).sum() for p in priors]
        channels = [random_channel(rng, k, m) for _ in range(n)]
        eps = [max(lip_leakage(Q, p) for p in priors) for Q in channels]
        joint = product_channel(*channels)
        leak = max(lip_leakage(joint, p) for p in priors)
        assert leak <= bp_lip_composition_bound(eps, priors) + 1e-9


def test_bp_lip_ledger():
    budget = PrivacyBudget(4.0, "bp_lip", priors=[[0.2, 0.8], [0.5, 0.5]])
    budget.spend(1.0)
    assert budget.spend(1.0) == pytest.approx(
        bp_lip_composition_bound([1.0, 1.0], [[0.2, 0.8], [0.5, 0.5]]))
    with pytest.raises(BudgetExceededError, match=r"003 Cor\. 4"):
        budget.spend(1.0)
    with pytest.raises(InputError, match="priors: are required"):
        PrivacyBudget(4.0, "bp_lip")


# ---------------------------------------------------- correlated sequences (Cor 5)


def sequence_leakage(joint: np.ndarray, channels: list[np.ndarray]) -> float:
    """Exact L_LIP(X_1^n; Y_1^n) for a joint pmf over X_1 … X_n (enumeration)."""
    n = joint.ndim
    # Pr(y_1^n | x_1^n) = Π_k Q_k[x_k, y_k]: an outer product of the channels
    cond = np.ones((1,) * (2 * n))
    for k, Q in enumerate(channels):
        shape = [1] * (2 * n)
        shape[k], shape[n + k] = Q.shape
        cond = cond * Q.reshape(shape)
    px = joint.reshape(joint.shape + (1,) * n)
    py = np.sum(px * cond, axis=tuple(range(n)), keepdims=True)
    return float(np.max(np.abs(np.log(cond / py))))


@pytest.mark.parametrize("seed", range(3))
def test_sequence_bound_003_cor_5_holds(seed):
    rng = np.random.default_rng(200 + seed)
    for _ in range(100):
        n = int(rng.integers(2, 4))
        k = int(rng.integers(2, 4))
        joint = rng.dirichlet(np.ones(k**n) * rng.choice([0.5, 3.0])).reshape((k,) * n)
        joint = np.maximum(joint, 1e-4)
        joint /= joint.sum()
        channels = [random_channel(rng, k, int(rng.integers(2, 4))) for _ in range(n)]
        marginals = [joint.sum(axis=tuple(j for j in range(n) if j != i)) for i in range(n)]
        eps = [lip_leakage(Q, p) for Q, p in zip(channels, marginals)]
        leak = sequence_leakage(joint, channels)
        bound = lip_sequence_composition_bound(eps, [float(p.min()) for p in marginals],
                                               float(joint.min()))
        assert leak <= bound + 1e-9


def test_sequence_ledger():
    budget = PrivacyBudget(6.0, "lip_sequence", joint_p_min=0.05)
    budget.spend(1.0, prior=[0.25, 0.75])
    total = budget.spend(1.0, prior=[0.4, 0.6])
    assert total == pytest.approx(lip_sequence_composition_bound([1.0, 1.0], [0.25, 0.4], 0.05))
    with pytest.raises(InputError, match="prior: is required for a 'lip_sequence' report"):
        budget.spend(1.0)
    with pytest.raises(InputError, match="joint_p_min: is required"):
        PrivacyBudget(6.0, "lip_sequence")


# ------------------------------------------------------------------------ errors


@pytest.mark.parametrize("args, kwargs, match", [
    ((1.0, "dp"), {}, r"notion: must be one of ldp, block"),
    ((-1.0, "ldp"), {}, r"limit: must be >= 0, got -1.0"),
    ((float("nan"), "ldp"), {}, r"limit: must be a number, got NaN"),
    (("1", "ldp"), {}, r"limit: must be a number, got '1'"),
    ((1.0, "uldp"), {}, r"sensitive: is required for notion 'uldp'"),
    ((1.0, "uldp"), {"sensitive": "home"}, r"sensitive: must be a list of labels"),
])
def test_constructor_errors(args, kwargs, match):
    with pytest.raises(InputError, match=match):
        PrivacyBudget(*args, **kwargs)


def test_spend_errors():
    budget = PrivacyBudget(1.0, "ldp")
    with pytest.raises(InputError, match=r"report_epsilon: must be >= 0, got -0.5"):
        budget.spend(-0.5)
    with pytest.raises(InputError, match=r"epsilons: must contain at least one"):
        ldp_composition([])
    assert budget.would_spend(0.25) == 0.25 and budget.spent == 0.0


# -- memoization ----------------------------------------------------------------------


def test_memoized_replays_cost_nothing_and_fresh_reports_compose():
    from mechopt.runtime import PrivacyBudget, memoization_savings

    ledger = PrivacyBudget(1.0, "ldp")
    assert ledger.spend(0.6, memo_key="sha:yes") == 0.6
    for _ in range(10):  # the same permanent response, replayed: no new leakage
        assert ledger.spend(0.6, memo_key="sha:yes") == 0.6
    assert ledger.reports == 11 and ledger.replays == 10
    with pytest.raises(BudgetExceededError):  # a fresh report still composes: 0.6 + 0.6 > 1
        ledger.spend(0.6)
    with pytest.raises(InputError, match="memo_key: 'sha:yes' was first reported with epsilon 0.6"):
        ledger.spend(0.3, memo_key="sha:yes")
    s = memoization_savings(0.25, 8)
    assert s.fresh == [0.25 * r for r in range(1, 9)]  # basic composition, exactly
    assert s.memoized == [0.25] * 8
    assert "| 8 | 2 | 0.25 | 1.75 |" in s.table()


@pytest.mark.parametrize("notion, params", [("lip", {"prior": [0.2, 0.3, 0.5]}),
                                            ("bp_lip", {"priors": [[0.2, 0.8], [0.5, 0.5]]}),
                                            ("uldp", {"sensitive": ["a"]})])
def test_memoization_saves_under_every_rule(notion, params):
    from mechopt.runtime import memoization_savings

    s = memoization_savings(0.8, 5, notion, **params)
    assert s.memoized == [0.8] * 5  # one report's leakage, whatever the rule
    assert s.fresh[0] == 0.8 and all(b > a for a, b in zip(s.fresh, s.fresh[1:]))


@pytest.mark.parametrize("rounds", [10**400, 1_000_001])
def test_memoization_savings_refuses_rounds_it_cannot_tabulate(rounds):
    from mechopt._errors import InputError
    from mechopt.runtime import memoization_savings

    with pytest.raises(InputError, match=r"rounds: must be at most 1,000,000"):
        memoization_savings(1.0, rounds)
