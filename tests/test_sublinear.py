"""User-defined sublinear utilities (mechopt/_sublinear.py): optima against enumeration of
the ray LP's bases with rays written here, pricing oracles against full enumeration, and one
clear line for a mu that is not sublinear."""

import itertools
import math

import numpy as np
import pytest

import mechopt
from mechopt import LDP, LIP, ULDP, InputError, solve_sublinear

P = np.array([0.4, 0.3, 0.2, 0.1])


def chi2(q):
    py = float(P @ q)
    return sum(P[x] * (q[x] - py) ** 2 for x in range(len(P))) / py if py > 0 else 0.0


def staircases(k, eps):
    e = math.exp(eps)
    return np.array([[e if (s >> x) & 1 else 1.0 for x in range(k)] for s in range(1, 2**k - 1)]).T


def lip_vertices(prior, eps):
    """Vertices of {P·v = 1, e^-eps <= v <= e^eps}: all coordinates at a bound but one."""
    k = len(prior)
    lo, hi = math.exp(-eps), math.exp(eps)
    out = []
    for j in range(k):
        for bits in itertools.product((lo, hi), repeat=k - 1):
            v = np.empty(k)
            v[[i for i in range(k) if i != j]] = bits
            v[j] = (1 - sum(prior[i] * v[i] for i in range(k) if i != j)) / prior[j]
            if lo - 1e-12 <= v[j] <= hi + 1e-12:
                out.append(v)
    return np.array(out).T


def test_chi2_on_lip_against_enumeration(best_basis):
    r = solve_sublinear([LIP(1.0, prior=P)], chi2, inputs=4)
    V = lip_vertices(P, 1.0)
    ref = best_basis(V, np.array([chi2(v) for v in V.T]))
    assert r.status == "optimal" and r.certificate.verified
    assert abs(r.objective - ref) <= 1e-6 and r.bound >= ref - 1e-9
    assert "rests on mu being sublinear" in r.message


def test_uldp_rays_include_invertible_units(best_basis):
    r = solve_sublinear([ULDP(1.0, sensitive=["0", "1"])], chi2, inputs=4)
    V = np.hstack([staircases(4, 1.0), np.eye(4)[:, 2:]])   # LDP staircases and the non-sensitive units
    ref = best_basis(V, np.array([chi2(v) for v in V.T]))
    assert r.status == "optimal" and abs(r.objective - ref) <= 1e-6


def test_custom_mu_equals_builtin_mutual_information_and_bayes_risk():
    def mi(q):
        py = float(P @ q)
        return sum(P[x] * q[x] * math.log(q[x] / py) for x in range(4) if q[x] > 0)

    base = {"k": 4, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1.2}]}
    built = mechopt.solve({**base, "objective": {"kind": "mutual_information", "prior": P.tolist()}})
    mine = solve_sublinear(base, mi)
    assert abs(mine.objective - built.objective) <= 1e-9

    def neg_risk(q):   # minus the Bayes risk of the best guess under Hamming loss
        return -min(sum(P[x] * q[x] for x in range(4) if x != g) for g in range(4))

    built = mechopt.solve({**base, "objective": {"kind": "bayes_risk", "prior": P.tolist()}})
    mine = solve_sublinear(base, neg_risk)
    assert abs(-mine.objective - built.objective) <= 1e-9


def test_vectorized_mu():
    def chi2_v(V):
        py = P @ V
        return (P[:, None] * (V - py) ** 2).sum(0) / py

    a = solve_sublinear([LDP(1.0)], chi2_v, inputs=4, vectorized=True)
    b = solve_sublinear([LDP(1.0)], chi2, inputs=4)
    assert abs(a.objective - b.objective) <= 1e-12


def _oracle(k, eps, *, exact=True, top=2):
    S = staircases(k, eps)
    S = S / S.sum(axis=0)

    def pricing(d):
        red = np.array([chi2(v) for v in S.T]) - d @ S
        best = np.argsort(-red)[:top]
        return S[:, best], (float(red.max()) if exact else None)

    return pricing


@pytest.mark.parametrize("exact", [True, False])
def test_pricing_oracle_against_enumeration(exact, best_basis):
    r = solve_sublinear([LDP(1.0)], chi2, inputs=4, pricing=_oracle(4, 1.0, exact=exact))
    V = staircases(4, 1.0)
    ref = best_basis(V, np.array([chi2(v) for v in V.T]))
    assert r.status == "optimal" and abs(r.objective - ref) <= 1e-6 and r.bound >= ref - 1e-9
    assert r.stats["method"] == "colgen"
    assert ("final_enumeration" in r.stats) is (not exact)


def test_weak_oracle_is_completed_by_enumeration(best_basis):
    # an oracle that only ever offers one fixed column: the final round over every ray finds the rest
    S = staircases(4, 1.0)

    def weak(d):
        return S[:, :1], None

    r = solve_sublinear([LDP(1.0)], chi2, inputs=4, pricing=weak)
    ref = best_basis(S, np.array([chi2(v) for v in S.T]))
    assert r.status == "optimal" and abs(r.objective - ref) <= 1e-6


NOT_SUBLINEAR = [
    (lambda q: float(q @ q), "is not positively homogeneous"),
    (lambda q: float(np.sqrt(np.sum(q))), "is not positively homogeneous"),
    (lambda q: -float(np.max(q)), "is not convex"),
    (lambda q: float(np.min(q)), "is not convex"),
    (lambda q: 1 / 0, "raised ZeroDivisionError"),
    (lambda q: float("nan"), "must be finite"),
    (lambda q: [1.0, 2.0], "must return one number"),
]


@pytest.mark.parametrize("mu,rule", NOT_SUBLINEAR)
def test_bad_mu_is_one_line(mu, rule):
    with pytest.raises(InputError, match=rule) as info:
        solve_sublinear([LDP(1.0)], mu, inputs=4)
    assert info.value.field == "mu" and "\n" not in str(info.value)


BAD_PRICING = [
    (lambda d: (np.eye(4)[:, :1], None), "outside the privacy cone"),
    (lambda d: (np.ones((3, 1)), None), r"shape \(4, c\)"),
    (lambda d: np.ones((4, 1)), r"must return \(columns, upper\)"),
    (lambda d: (-np.ones((4, 1)), None), "non-negative"),
    (lambda d: (np.ones((4, 1)), "big"), "upper must be None or a number"),
    (lambda d: d.undefined, "raised AttributeError"),
]


@pytest.mark.parametrize("pricing,rule", BAD_PRICING)
def test_bad_pricing_is_one_line(pricing, rule):
    with pytest.raises(InputError, match=rule) as info:
        solve_sublinear([LDP(1.0)], chi2, inputs=4, pricing=pricing)
    assert info.value.field == "pricing" and "\n" not in str(info.value)


def test_export_verifies_and_records_the_assumption(tmp_path):
    r = solve_sublinear({"k": 3, "privacy": [{"notion": "ldp", "epsilon": 0.5}]}, lambda q: float(np.max(q)),
                        name="max_entry")
    path = tmp_path / "m.json"
    r.mechanism.save(path)
    from mechopt.cli import main

    assert main(["verify", str(path)]) == 0
    mech = mechopt.Mechanism.load(path)
    assert mech.objective["kind"] == "max_entry" and "sublinear" in mech.certificate["assumption"]


def test_bad_arguments():
    with pytest.raises(InputError, match="must be a callable"):
        solve_sublinear([LDP(1.0)], 3.0, inputs=2)
    with pytest.raises(InputError, match="is required with notions"):
        solve_sublinear([LDP(1.0)], chi2)


def test_too_many_rays_is_a_status():
    r = solve_sublinear([LDP(1.0)], lambda q: float(np.max(q)), inputs=30)
    assert r.status == "error" and "give a pricing oracle" in r.message
    E = np.where(np.eye(16) > 0, 0.0, 1.0)
    E[0, 1] = 2.0   # not a clique: double description, too large at k = 16
    r = solve_sublinear([mechopt.ELDP(E)], lambda q: float(np.max(q)), inputs=16)
    assert r.status == "error" and ("too large" in r.message or "limited to" in r.message)
