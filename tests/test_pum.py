"""Tests of the personalized ULDP mechanism (001 §5) and the utility-optimized RR."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechopt._errors import InputError
from mechopt.runtime import (
    BOT_PREFIX,
    PersonalizedULDP,
    estimate_em,
    estimate_projected,
    utility_optimized_rr,
)

INPUTS = ["clinic", "a", "b", "c", "d", "e", "f", "g"]
SENSITIVE = ["clinic"]
TAGS = ["home", "work"]
EPS = 1.0


def uldp_roles(Q: np.ndarray, sensitive: set[int], eps: float) -> list[str] | None:
    """Column roles under 001 Def. 2, or None if Q is not (X_S, Y_P, ε)-ULDP."""
    k = Q.shape[0]
    roles = []
    for col in Q.T:
        nz = np.flatnonzero(col > 0)
        if nz.size == 0:
            roles.append("unused")
        elif nz.size == 1 and nz[0] not in sensitive:
            roles.append("invertible")
        elif nz.size == k and col.max() <= math.exp(eps) * col.min() * (1 + 1e-12):
            roles.append("protected")
        else:
            return None
    return roles


@pytest.fixture
def pum():
    return PersonalizedULDP.with_urr(INPUTS, sensitive=SENSITIVE, tags=TAGS, epsilon=EPS)


def test_urr_entries_follow_001_def_4():
    k, S, eps = 6, [1, 4], 0.7
    Q = utility_optimized_rr(k, S, eps)
    e = math.exp(eps)
    c1, c2 = e / (len(S) + e - 1), 1 / (len(S) + e - 1)
    c3 = 1 - len(S) * c2
    assert Q[1, 1] == pytest.approx(c1) and Q[1, 4] == pytest.approx(c2)
    assert Q[1, 0] == 0 and Q[4, 2] == 0  # sensitive never reports non-sensitive
    assert Q[0, 0] == pytest.approx(c3) and Q[0, 4] == pytest.approx(c2) and Q[0, 2] == 0
    np.testing.assert_allclose(Q.sum(axis=1), 1.0)
    roles = uldp_roles(Q, set(S), eps)  # 001 Prop. 4
    assert roles == ["invertible", "protected", "invertible", "invertible", "protected",
                     "invertible"]
    assert uldp_roles(Q, set(S), eps * 0.99) is None  # ε is attained


def test_urr_errors():
    with pytest.raises(InputError, match="epsilon: must be (finite and )?> 0"):
        utility_optimized_rr(3, [0], 0.0)
    with pytest.raises(InputError, match=r"sensitive: indices must lie in 0..2"):
        utility_optimized_rr(3, [3], 1.0)
    with pytest.raises(InputError, match="sensitive: must contain at least one"):
        utility_optimized_rr(3, [], 1.0)


def test_preprocessor_is_001_eq_20(pum):
    f = pum.preprocessor({"b": "home", "e": "work", "f": "home"})
    assert f == {"clinic": "clinic", "a": "a", "b": BOT_PREFIX + "home", "c": "c",
                 "d": "d", "e": BOT_PREFIX + "work", "f": BOT_PREFIX + "home", "g": "g"}


def test_user_channel_is_uldp_for_her_own_sensitive_set_001_prop_11(pum):
    user = {"b": "home", "e": "work"}
    Q = pum.user_channel(user)
    own = {INPUTS.index(x) for x in (*SENSITIVE, *user)}
    roles = uldp_roles(Q, own, EPS)
    assert roles is not None
    # her home and workplace never produce an invertible (revealing) report
    for x in own:
        assert all(Q[x, j] == 0 for j, r in enumerate(roles) if r == "invertible")
    # and the common mechanism alone is ULDP for Z_S = X_S ∪ bots
    z_s = {0, len(INPUTS), len(INPUTS) + 1}
    assert uldp_roles(pum.common, z_s, EPS) is not None


def test_common_mechanism_does_not_depend_on_the_user(pum):
    """001 §5.2: the server sees only Q_cmn, identical whatever X_S^(i) is."""
    other = PersonalizedULDP.with_urr(INPUTS, sensitive=SENSITIVE, tags=TAGS, epsilon=EPS)
    assert np.array_equal(pum.common, other.common)
    # two users with different homes have different channels, built from the same rows
    q1, q2 = pum.user_channel({"a": "home"}), pum.user_channel({"g": "home"})
    assert not np.array_equal(q1, q2)
    assert np.array_equal(q1[1], q2[7]) and np.array_equal(q1[1], pum.common[len(INPUTS)])


def test_preprocessor_errors(pum):
    with pytest.raises(InputError, match=r"user_sensitive: 'clinic' is already sensitive"):
        pum.preprocessor({"clinic": "home"})
    with pytest.raises(InputError, match=r"user_sensitive\['a'\]: tag 'gym' is not one of"):
        pum.preprocessor({"a": "gym"})
    with pytest.raises(InputError, match=r"user_sensitive: 'zzz' is not an input"):
        pum.preprocessor({"zzz": "home"})
    with pytest.raises(InputError, match=r"tags: bot label 'bot:x' is already an input"):
        PersonalizedULDP.with_urr(["bot:x", "y"], sensitive=[], tags=["x"], epsilon=1.0)


def population(rng, n):
    """Users with a home (tag 'home') and a workplace (tag 'work') in X_N.

    Each user is at home w.p. 0.4, at work w.p. 0.3, else somewhere drawn from nu.
    Returns true inputs and intermediate indices, computed here without the module.
    """
    k = len(INPUTS)
    home_dist = np.array([0, 0.3, 0.3, 0.2, 0.1, 0.1, 0, 0])
    work_dist = np.array([0, 0, 0, 0.1, 0.2, 0.2, 0.3, 0.2])
    nu = np.array([0.05, 0.2, 0.1, 0.1, 0.15, 0.1, 0.2, 0.1])
    homes = rng.choice(k, size=n, p=home_dist)
    works = rng.choice(k, size=n, p=work_dist)
    u = rng.random(n)
    x = np.where(u < 0.4, homes, np.where(u < 0.7, works, rng.choice(k, size=n, p=nu)))
    # eq. 20: her own sensitive inputs go to their bot (home first if home == work)
    z = np.where(x == homes, k, np.where(x == works, k + 1, x))
    return x, z


def test_eq_22_with_exact_r_and_pi_recovers_p(pum):
    """001 eq. 53: p(x) = r(x) + Σ_k r(⊥_k) π_k(x), with empirical r and π."""
    rng = np.random.default_rng(1)
    x, z = population(rng, 20_000)
    k = len(INPUTS)
    p = np.bincount(x, minlength=k) / x.size
    r = np.bincount(z, minlength=k + 2) / z.size
    pis = {t: np.bincount(x[z == k + j], minlength=k) / np.sum(z == k + j)
           for j, t in enumerate(TAGS)}
    np.testing.assert_allclose(pum.distribution_from_intermediate(r, tag_distributions=pis),
                               p, atol=1e-12)


def test_estimate_from_reports_obeys_001_thm_1(pum):
    """p̂ is eq. 22 of r̂, and l1(p̂, p) ≤ l1(r̂, r) + Σ_k r̂(⊥_k) l1(π̂_k, π_k) (001 eq. 23)."""
    rng = np.random.default_rng(2)
    n = 50_000
    x, z = population(rng, n)
    k = len(INPUTS)
    # reports through the common mechanism, inverse CDF per intermediate value, drawn
    # here without the module's sampler
    cum = np.cumsum(pum.common, axis=1)
    u = rng.random(n)
    y = np.empty(n, dtype=int)
    for zi in range(k + 2):
        y[z == zi] = np.searchsorted(cum[zi], u[z == zi], side="right")
    counts = np.bincount(y, minlength=pum.common.shape[1])
    p = np.bincount(x, minlength=k) / n
    r = np.bincount(z, minlength=k + 2) / n
    pis = {t: np.bincount(x[z == k + j], minlength=k) / np.sum(z == k + j)
           for j, t in enumerate(TAGS)}
    wrong = {t: np.r_[0.0, np.full(k - 1, 1 / (k - 1))] for t in TAGS}
    for method, estimator in (("em", estimate_em), ("projected", estimate_projected)):
        r_hat = estimator(pum.common, counts)
        for pi_hat in (pis, wrong):
            p_hat = pum.estimate(counts, method=method, tag_distributions=pi_hat)
            eq22 = r_hat[:k] + sum(r_hat[k + j] * pi_hat[t] for j, t in enumerate(TAGS))
            np.testing.assert_allclose(p_hat, eq22, atol=1e-12)
            assert p_hat.min() >= -1e-12 and p_hat.sum() == pytest.approx(1.0)
            bound = np.abs(r_hat - r).sum() + sum(
                r_hat[k + j] * np.abs(pi_hat[t] - pis[t]).sum() for j, t in enumerate(TAGS))
            assert np.abs(p_hat - p).sum() <= bound + 1e-9
        l1 = np.abs(pum.estimate(counts, method=method, tag_distributions=pis) - p).sum()
        print(f"PUM {method}: l1(p_hat, p) with exact pi = {l1:.4f}")
        assert l1 < 0.05


def test_no_background_knowledge_spreads_bots_over_x_n(pum):
    k = len(INPUTS)
    r = np.array([0.05, 0.1, 0.1, 0.1, 0.1, 0.05, 0.1, 0.1, 0.2, 0.1])
    p = pum.distribution_from_intermediate(r)
    nonsens = r[1:k] / r[1:k].sum()
    np.testing.assert_allclose(p[1:], r[1:k] + 0.3 * nonsens)
    assert p[0] == r[0]  # X_S receives none of the bots' mass
    assert p.sum() == pytest.approx(1.0)


def test_tag_distribution_errors(pum):
    k = len(INPUTS)
    r = np.full(k + 2, 1 / (k + 2))
    with pytest.raises(InputError, match=r"tag_distributions: tag 'gym' is not one of"):
        pum.distribution_from_intermediate(r, tag_distributions={"gym": np.ones(k) / k})
    with pytest.raises(InputError, match=r"tag_distributions\['home'\]: puts mass on an "
                                         r"input of X_S"):
        pum.distribution_from_intermediate(r, tag_distributions={"home": np.ones(k) / k})
    with pytest.raises(InputError, match=r"tag_distributions\['home'\]: must sum to 1"):
        pum.distribution_from_intermediate(r, tag_distributions={"home": np.r_[0, np.ones(k - 1)]})
    with pytest.raises(InputError, match="method: must be one of em, inversion, projected"):
        pum.estimate(np.ones(k + 2), method="mle")
