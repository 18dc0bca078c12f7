"""Acceptance tests of exact verification (docs/model.md) and of ``mechopt verify`` (docs/cli.md).

Every expected verdict is computed here, in exact arithmetic (``fractions.Fraction`` of
the decimals as written in the file, ``e^ε`` from :mod:`decimal` at 80 digits), or from
an independent linear program (scipy) — never read back from mechopt.
"""

from __future__ import annotations

import json
import math
import time
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import linprog

from mechopt import BPLIP, LDP, LIP, Mechanism, verify
from mechopt._notions import box_prior_vertices
from mechopt.cli import main

# -- exact helpers -----------------------------------------------------------------------


def fr(v: float) -> Fraction:
    """The exact decimal a float is written as in a JSON file."""
    return Fraction(repr(float(v)))


def exp80(x) -> Fraction:
    with localcontext() as ctx:
        ctx.prec = 80
        return Fraction(Decimal(repr(float(x)) if isinstance(x, float) else str(x)).exp())


def ln50(x: Fraction) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 50
        return (Decimal(x.numerator) / Decimal(x.denominator)).ln()


def krr(k: int, eps: float) -> np.ndarray:
    """k-ary randomized response: e^ε / (e^ε + k − 1) on the diagonal, 1 / (e^ε + k − 1) off it."""
    e = math.exp(eps)
    Q = np.full((k, k), 1.0 / (e + k - 1))
    np.fill_diagonal(Q, e / (e + k - 1))
    return Q


def exact_ldp_budget(Q: np.ndarray) -> Decimal:
    """ln of the largest ratio within a column, from the written decimals (50 digits)."""
    worst = Fraction(1)
    for y in range(Q.shape[1]):
        col = [fr(v) for v in Q[:, y]]
        worst = max(worst, max(col) / min(col))
    return ln50(worst)


def claim_above(value: Decimal) -> float:
    """A 12-decimal budget >= value whose float prints as exactly those decimals."""
    up = value.quantize(Decimal("1e-12"), rounding=ROUND_CEILING)
    claim = float(str(up))
    assert fr(claim) == Fraction(up) and fr(claim) >= Fraction(value)
    return claim


def run(argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


# -- k-RR through the CLI ------------------------------------------------------------------------


@pytest.mark.parametrize("k,eps", [(2, 0.5), (4, 1.0), (10, 2.0), (30, 3.0)])
def test_krr_passes_and_is_rejected_just_below(tmp_path, capsys, k, eps):
    Q = krr(k, eps)
    budget = exact_ldp_budget(Q)
    # the written ratio is e^ε to within a few ulps
    assert abs(float(budget) - eps) < 1e-14
    claim = claim_above(budget)
    labels = [f"x{i}" for i in range(k)]
    mech = Mechanism.from_channel(Q, [{"notion": "ldp", "epsilon": claim}], inputs=labels, outputs=labels)
    assert mech.certificate["verified"] is True
    path = tmp_path / "krr.json"
    mech.save(path)
    rc, out, _ = run(["verify", str(path)], capsys)
    assert rc == 0 and "verified exactly" in out

    rc, out, _ = run(["verify", str(path), "--json"], capsys)
    cert = json.loads(out)
    assert rc == 0 and cert["verified"] is True and cert["sha256_ok"] is True
    (check,) = cert["checks"]
    assert check["ok"] is True and check["epsilon"] == claim
    assert check["achieved"] == pytest.approx(float(budget), abs=1e-13)

    # the same matrix judged against a problem at ε − 0.01: exit 1
    prob = tmp_path / "tight.yaml"
    prob.write_text(f"inputs: {labels}\nprivacy: [{{notion: ldp, epsilon: {claim - 0.01!r}}}]\n".replace("'", ""))
    rc, out, _ = run(["verify", str(path), "--problem", str(prob)], capsys)
    assert rc == 1 and "NOT verified" in out
    # and a file that claims ε − 0.01 itself: exit 1
    false_claim = Mechanism.from_channel(Q, [LDP(claim - 0.01)], inputs=labels, outputs=labels)
    assert false_claim.certificate["verified"] is False
    false_claim.save(tmp_path / "false.json")
    rc, out, _ = run(["verify", str(tmp_path / "false.json")], capsys)
    assert rc == 1 and "FAIL ldp" in out


def test_krr_at_the_rounded_budget_is_decided_exactly():
    """The float k-RR may sit an ulp above e^ε: the verdict follows the exact decimals."""
    for k in range(2, 12):
        for eps in (0.1, 0.5, 1.0, 1.5, 2.0, 3.0):
            Q = krr(k, eps)
            expected = all(fr(Q[x, y]) <= exp80(eps) * fr(Q[xp, y])
                           for y in range(k) for x in (y, (y + 1) % k) for xp in (y, (y + 1) % k))
            assert verify(Q, [LDP(eps)]).verified == expected


def test_edited_matrix_without_new_hash_fails(tmp_path, capsys):
    Q = krr(3, 1.0)
    claim = claim_above(exact_ldp_budget(Q))
    path = tmp_path / "m.json"
    Mechanism.from_channel(Q, [LDP(claim)]).save(path)
    doc = json.loads(path.read_text())
    # a "harmless" edit: still a channel, still private, but not what was exported
    doc["matrix"][0] = [0.5, 0.25, 0.25]
    path.write_text(json.dumps(doc))
    rc, out, err = run(["verify", str(path)], capsys)
    assert rc == 1
    assert err.count("\n") == 1 and "sha256" in err and "does not match" in err
    assert "verified exactly" not in out


def test_k500_channel_is_verified(tmp_path, capsys):
    k, eps = 500, 2.0
    Q = krr(k, eps)
    claim = claim_above(exact_ldp_budget(Q))
    t0 = time.perf_counter()
    cert = verify(Q, [LDP(claim)])
    t_api = time.perf_counter() - t0
    assert cert.verified
    path = tmp_path / "k500.json"
    Mechanism.from_channel(Q, [LDP(claim)]).save(path)
    t0 = time.perf_counter()
    rc, out, _ = run(["verify", str(path)], capsys)
    t_cli = time.perf_counter() - t0
    assert rc == 0 and "verified exactly" in out
    print(f"k=500 k-RR: verify() {t_api:.2f} s, mechopt verify {t_cli:.2f} s")


# -- a violation no float tolerance can see ----------------------------------------------------------


def test_catches_a_violation_of_1e_15_relative(tmp_path, capsys):
    eps = 1.0
    e = exp80(eps)
    b = 0.2
    a = float(e * fr(b) * (1 + Fraction(1, 10**15)))
    Q = np.array([[a, 1.0 - a], [b, 1.0 - b]])
    # exactly: the written decimals violate q[0] <= e^ε q[1] by about 1e-15 relative
    excess = fr(a) / (e * fr(b)) - 1
    assert Fraction(5, 10**16) < excess < Fraction(2, 10**15)
    # so do the binary values themselves
    assert Fraction(a) > e * Fraction(b)
    # the other column is far inside the budget
    assert fr(1.0 - b) < e * fr(1.0 - a)
    # a float check with tolerance 1e-9 would pass it
    assert a <= math.exp(eps) * b * (1 + 1e-9)

    cert = verify(Q, [LDP(eps)])
    assert not cert.verified and cert.rows_ok
    assert not cert.checks[0].ok and "column 0" in cert.detail
    assert cert.checks[0].achieved > eps - 1e-15
    # one part in 1e12 of budget is plenty
    assert verify(Q, [LDP(eps + 1e-12)]).verified

    mech = Mechanism.from_channel(Q, [LDP(eps)])
    assert mech.certificate["verified"] is False
    mech.save(tmp_path / "m.json")
    rc, out, _ = run(["verify", str(tmp_path / "m.json")], capsys)
    assert rc == 1 and "NOT verified" in out


def test_rows_are_checked_exactly_at_1e_12():
    ok = np.array([[0.5, 0.5 + 9e-13], [0.25, 0.75]])
    bad = np.array([[0.5, 0.5 + 2e-12], [0.25, 0.75]])
    for Q, expected in ((ok, True), (bad, False)):
        total = sum((fr(v) for v in Q[0]), Fraction(0))
        assert (abs(total - 1) <= Fraction(1, 10**12)) == expected
        cert = verify(Q, [LDP(5.0)])
        assert cert.rows_ok == expected and cert.verified == expected


# -- (ε, δ)-LIP ----------------------------------------------------------------------------------------


def exact_delta(Q: np.ndarray, P, eps: float) -> Fraction:
    """Smallest δ with e^-ε q[x] − δ <= P·q <= e^ε q[x] + δ for every x and column (docs/model.md)."""
    e = exp80(eps)
    worst = Fraction(0)
    for y in range(Q.shape[1]):
        s = sum((fr(P[i]) * fr(Q[i, y]) for i in range(Q.shape[0])), Fraction(0))
        for x in range(Q.shape[0]):
            q = fr(Q[x, y])
            worst = max(worst, q / e - s, s - e * q)
    return worst


def decimal_near(x: Fraction, *, up: bool) -> float:
    """A float whose written decimal is within 1e-15 relative of x, above it (up) or below."""
    with localcontext() as ctx:
        ctx.prec = 15
        ctx.rounding = ROUND_CEILING if up else ROUND_FLOOR
        d = Decimal(x.numerator) / Decimal(x.denominator)
    v = float(str(d))
    assert (fr(v) >= x) if up else (fr(v) <= x)
    return v


@pytest.mark.parametrize("eps", [0.2, 0.5, 1.0])
def test_lip_delta_is_decided_exactly(tmp_path, capsys, eps):
    Q = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.05, 0.15, 0.8]])
    P = [0.5, 0.3, 0.2]
    d_star = exact_delta(Q, P, eps)
    assert d_star > 0  # the channel is not ε-LIP without δ
    assert not verify(Q, [LIP(eps, prior=P)]).verified
    d_up, d_down = decimal_near(d_star, up=True), decimal_near(d_star, up=False)
    assert verify(Q, [LIP(eps, prior=P, delta=d_up)]).verified
    assert not verify(Q, [LIP(eps, prior=P, delta=d_down)]).verified
    # δ = 1 allows everything; the achieved ε at δ = d_up is within the claim
    assert verify(Q, [LIP(0.0, prior=P, delta=1.0)]).verified
    assert LIP(eps, prior=P, delta=d_up).achieved(Q) <= eps + 1e-12
    # the claim survives the file format and the CLI
    for delta, code in ((d_up, 0), (d_down, 1)):
        mech = Mechanism.from_channel(Q, [{"notion": "lip", "epsilon": eps, "prior": P, "delta": delta}])
        mech.save(tmp_path / "m.json")
        assert json.loads((tmp_path / "m.json").read_text())["privacy"][0]["delta"] == delta
        rc, _, _ = run(["verify", str(tmp_path / "m.json")], capsys)
        assert rc == code


# -- BP-LIP on a box of priors ---------------------------------------------------------------------------

BOXES = [
    ([0.2, 0.3], [0.7, 0.8]),
    ([0.1, 0.2, 0.3], [0.5, 0.6, 0.7]),
    ([0.05, 0.1, 0.1, 0.2], [0.4, 0.5, 0.3, 0.6]),
    ([0.0, 0.1, 0.15, 0.05, 0.1], [0.3, 0.35, 0.4, 0.5, 0.2]),
]


def _box_lp(lower, upper, c, sense):
    """min (sense=1) or max (sense=-1) of c·P over {lower <= P <= upper, sum P = 1}."""
    k = len(lower)
    res = linprog(sense * np.asarray(c), A_eq=np.ones((1, k)), b_eq=[1.0], bounds=list(zip(lower, upper)),
                  method="highs")
    assert res.status == 0
    return sense * res.fun


@pytest.mark.parametrize("lower,upper", BOXES)
def test_box_vertices_are_the_polytope_vertices(lower, upper):
    V = box_prior_vertices(np.array(lower), np.array(upper))
    k = len(lower)
    lo, hi = np.array(lower), np.array(upper)
    assert len({tuple(v) for v in V}) == len(V)
    for v in V:
        assert abs(v.sum() - 1) < 1e-12 and np.all(v >= lo - 1e-12) and np.all(v <= hi + 1e-12)
        tight = np.isclose(v, lo, atol=1e-12) | np.isclose(v, hi, atol=1e-12)
        assert tight.sum() >= k - 1  # a vertex: k − 1 bounds active besides the simplex
    # complete: every linear function is maximised at one of them
    rng = np.random.default_rng(7)
    for _ in range(50):
        c = rng.normal(size=k)
        assert np.max(V @ c) == pytest.approx(_box_lp(lower, upper, c, -1), abs=1e-9)


def box_lip_budget(Q, lower, upper) -> float:
    """sup over the box of the LIP budget, by linear programs over the box (no vertices)."""
    worst = 0.0
    for y in range(Q.shape[1]):
        q = Q[:, y]
        s_min = _box_lp(lower, upper, q, 1)
        s_max = _box_lp(lower, upper, q, -1)
        worst = max(worst, math.log(q.max() / s_min), math.log(s_max / q.min()))
    return worst


@pytest.mark.parametrize("lower,upper", BOXES)
def test_bp_lip_box_is_checked_at_its_vertices(lower, upper):
    k = len(lower)
    rng = np.random.default_rng(k)
    Q = rng.uniform(0.1, 1.0, size=(k, k + 1))
    Q /= Q.sum(axis=1, keepdims=True)
    budget = box_lip_budget(Q, lower, upper)
    n = BPLIP(1.0, lower=lower, upper=upper)
    assert n.achieved(Q) == pytest.approx(budget, rel=1e-9)
    # any prior inside the box does no worse than the box's budget
    for _ in range(200):
        P = rng.dirichlet(np.ones(k))
        if np.all(P >= lower) and np.all(P <= upper):
            assert LIP(1.0, prior=P / P.sum()).achieved(Q) <= budget + 1e-12
    assert verify(Q, [BPLIP(budget * (1 + 1e-7), lower=lower, upper=upper)]).verified
    assert not verify(Q, [BPLIP(budget * (1 - 1e-7), lower=lower, upper=upper)]).verified
    # the centre of the box alone is a weaker requirement than the box
    centre = np.array(lower) + (np.array(upper) - np.array(lower)) * (1 - sum(lower)) / (sum(upper) - sum(lower))
    assert abs(centre.sum() - 1) < 1e-12
    assert LIP(1.0, prior=centre / centre.sum()).achieved(Q) <= budget + 1e-12


def test_bp_lip_box_fails_on_a_vertex_only():
    """A channel that is ε-LIP at the box's centre but not at one vertex fails the box claim."""
    lower, upper = [0.1, 0.1, 0.1], [0.6, 0.6, 0.6]
    Q = np.array([[0.8, 0.2], [0.3, 0.7], [0.3, 0.7]])
    centre = [1 / 3, 1 / 3, 1 / 3]
    eps_centre = LIP(1.0, prior=centre).achieved(Q)
    budget = box_lip_budget(Q, lower, upper)
    assert budget > eps_centre * 1.01
    eps = (eps_centre + budget) / 2
    assert verify(Q, [LIP(eps, prior=centre)]).verified
    cert = verify(Q, [BPLIP(eps, lower=lower, upper=upper)])
    assert not cert.verified and "prior" in cert.detail
    # the certificate written into a mechanism file says so too
    mech = Mechanism.from_channel(Q, [{"notion": "bp_lip", "epsilon": eps, "lower": lower, "upper": upper}])
    assert mech.certificate["verified"] is False
