"""The exact verifier on the boundary: matrices placed on it and a few ulps off, both ways.

For every notion, one inequality of a small matrix is made tight in floating point (the
float nearest to the boundary) and then moved by -2..+2 ulps. The expected verdict of
each matrix is computed here, independently of mechopt: the decimals as written
(``Fraction(repr(v))``), ``e^ε`` from :mod:`decimal` at 100 digits, every inequality of
the notion's definition (SPEC §2) checked pair by pair. Budgets run from 1e-9 to 700,
with δ > 0 for LIP.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechopt import BPLIP, ELDP, LDP, LIP, ULDP, WCLIP, BlockLDP, HighLowLDP, MetricLDP
from mechopt._verify import check_notion

from _exact_reference import eldp_holds, fr, lip_holds

BUDGETS = [1e-9, 1e-6, 1e-3, 0.5, 1.0, 5.0, 30.0, 100.0, 700.0]
OFFSETS = [-2, -1, 0, 1, 2]


def exp100(x: Fraction) -> Fraction:
    with localcontext() as ctx:
        ctx.prec = 100
        return Fraction((Decimal(x.numerator) / Decimal(x.denominator)).exp())


def nearest(x: Fraction) -> float:
    """The float nearest to an exact value (correctly rounded)."""
    return float(x)


def shifted(v: float, n: int) -> float:
    for _ in range(abs(n)):
        v = float(np.nextafter(v, math.inf if n > 0 else -math.inf))
    return v


# -- independent brute-force definitions (SPEC §2) -------------------------------------------


def holds_eldp(Q: np.ndarray, E: list[list[Fraction | None]]) -> bool:
    return eldp_holds(Q, lambda x, xp: None if E[x][xp] is None else exp100(E[x][xp]))


def holds_lip(Q: np.ndarray, P, eps: Fraction, delta: Fraction = Fraction(0)) -> bool:
    return lip_holds(Q, [Fraction(p) for p in P], exp100(eps), delta)


def ldp_E(k: int, eps: float, pairs=None) -> list[list[Fraction | None]]:
    return [[None if a == b or (pairs is not None and (a, b) not in pairs) else fr(eps) for b in range(k)]
            for a in range(k)]


# -- the clique notions: one ratio a <= e^ε b made tight ------------------------------------------


def tight_ratio(eps: float, b: float) -> float:
    return nearest(exp100(fr(eps)) * fr(b))


def ratio_matrix(eps: float, offset: int, k: int = 3) -> np.ndarray:
    """Column 0 has Q[0,0] = e^ε Q[1,0] (rounded, shifted); the other inputs sit in between."""
    b = 0.25 * math.exp(-min(eps, 700.0)) if eps > 1 else 0.25
    a = shifted(tight_ratio(eps, b), offset)
    Q = np.full((k, 2), 0.5)
    Q[0, 0], Q[1, 0] = a, b
    for x in range(2, k):
        Q[x, 0] = b  # a minimum that ties: still one tight pair per sensitive row
    return Q


@pytest.mark.parametrize("eps", BUDGETS)
@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("kind", ["ldp", "wc_lip", "high_low", "block", "uldp", "eldp"])
def test_clique_notions_on_the_boundary(kind, eps, offset):
    k = 3
    Q = ratio_matrix(eps, offset, k)
    if kind == "ldp":
        notion, E = LDP(eps), ldp_E(k, eps)
    elif kind == "wc_lip":
        notion, E = WCLIP(eps), ldp_E(k, eps)
    elif kind == "high_low":
        notion = HighLowLDP(eps, sensitive=[0])
        E = ldp_E(k, eps, {(0, b) for b in range(k)})
    elif kind == "block":
        notion = BlockLDP(eps, blocks=[[0, 1], [2]])
        E = ldp_E(k, eps, {(0, 1), (1, 0)})
    elif kind == "uldp":
        notion = ULDP(eps, sensitive=[0])  # both columns are protected (several non-zeros)
        E = ldp_E(k, eps)
    else:
        M = [[0.0, eps, math.inf], [2 * eps, 0.0, math.inf], [math.inf, eps, 0.0]]
        notion = ELDP(M)
        E = [[None if (a == b or math.isinf(M[a][b])) else fr(M[a][b]) for b in range(k)] for a in range(k)]
    expected = holds_eldp(Q, E)
    got = check_notion(Q, notion)
    assert got.ok == expected, (kind, eps, offset, Q.tolist())
    if offset >= 2:
        assert not got.ok  # two ulps above e^ε b is always a violation
    if offset <= -2:
        assert got.ok


@pytest.mark.parametrize("eps", BUDGETS)
@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("form", ["edges", "distance"])
def test_metric_on_the_boundary(form, eps, offset):
    # an edge of length 0.7: the budget is the exact product eps * 0.7
    w = 0.7
    budget = fr(eps) * fr(w)
    b = 0.25 * math.exp(-min(float(budget), 700.0)) if budget > 1 else 0.25
    a = shifted(nearest(exp100(budget) * fr(b)), offset)
    Q = np.array([[a, 0.5], [b, 0.5], [b, 0.5]])
    if form == "edges":
        notion = MetricLDP(eps, edges=[[0, 1, w], [1, 2, w]]).bind(["0", "1", "2"])
    else:
        D = [[0, w, 2 * w], [w, 0, w], [2 * w, w, 0]]
        notion = MetricLDP(eps, distance=D).bind(["0", "1", "2"])
    E = [[None] * 3 for _ in range(3)]
    for x, xp, n in ((0, 1, 1), (1, 0, 1), (1, 2, 1), (2, 1, 1)):
        E[x][xp] = fr(eps) * fr(w) * n
    if form == "distance":
        E[0][2] = E[2][0] = fr(eps) * fr(2 * w)
    assert check_notion(Q, notion).ok == holds_eldp(Q, E), (form, eps, offset)


# -- LIP: both sides of e^-ε q[x] - δ <= P·q <= e^ε q[x] + δ --------------------------------------


def lip_upper_matrix(eps: float, delta: float, offset: int) -> tuple[np.ndarray, list[float]]:
    """q1 = e^ε (P·q + δ) made tight: q1 (1 - e^ε p1) = e^ε (p0 q0 + δ)."""
    e = exp100(fr(eps))
    p1 = min(0.25, 0.5 / float(e))
    P = [1.0 - p1, p1]
    q0 = 0.25 * math.exp(-min(eps, 700.0))
    Pf = [fr(P[0]), fr(P[1])]
    q1 = e * (Pf[0] * fr(q0) + fr(delta)) / (1 - e * Pf[1])
    q1 = shifted(nearest(q1), offset)
    return np.array([[q0, 0.5], [q1, 0.5]]), P


def lip_lower_matrix(eps: float, delta: float, offset: int) -> tuple[np.ndarray, list[float]]:
    """P·q - δ = e^ε q0 made tight: q0 (e^ε - p0) = p1 q1 - δ."""
    e = exp100(fr(eps))
    P = [0.5, 0.5]
    q1 = 0.75 if not delta else 0.75
    Pf = [fr(P[0]), fr(P[1])]
    target = (Pf[1] * fr(q1) - fr(delta)) / (e - Pf[0])
    q0 = shifted(nearest(target), offset)
    return np.array([[q0, 0.5], [q1, 0.5]]), P


@pytest.mark.parametrize("eps", BUDGETS)
@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("delta", [0.0, 0.1, 1e-12])
@pytest.mark.parametrize("side", ["upper", "lower"])
def test_lip_on_the_boundary(side, delta, eps, offset):
    make = lip_upper_matrix if side == "upper" else lip_lower_matrix
    Q, P = make(eps, delta, offset)
    if np.any(Q < 0):
        pytest.skip("the boundary lies below zero for this budget and delta")
    expected = holds_lip(Q, [fr(p) for p in P], fr(eps), fr(delta))
    assert check_notion(Q, LIP(eps, prior=P, delta=delta)).ok == expected, (side, delta, eps, offset, Q.tolist())
    if delta == 0:
        # BP-LIP with a list of priors that includes P, and a box whose extreme prior is P
        other = [0.5, 0.5]
        bp = BPLIP(eps, priors=[P, other])
        assert check_notion(Q, bp).ok == (expected and holds_lip(Q, [fr(v) for v in other], fr(eps)))


def test_the_reported_lip_delta_file_is_rejected():
    """Issue 14 reproducer: 1.1e-17 above δ exactly, P·q - δ > e^ε · 0."""
    Q = np.array([[0, 1], [0.33333333333333337, 0.6666666666666666]])
    n = LIP(1.0, prior=[0.7, 0.3], delta=0.1)
    assert not holds_lip(Q, [fr(0.7), fr(0.3)], fr(1.0), fr(0.1))
    c = check_notion(Q, n)
    assert not c.ok and "column 0" in c.detail


@settings(max_examples=60, deadline=None)
@given(lo0=st.integers(1, 40), lo1=st.integers(1, 40), hi0=st.integers(50, 99), eps=st.sampled_from(BUDGETS[:6]),
       offset=st.sampled_from(OFFSETS), side=st.sampled_from(["upper", "lower"]))
def test_bp_lip_box_on_the_boundary(lo0, lo1, hi0, eps, offset, side):
    """A box of priors: the verdict equals the check at every vertex of the box (k = 2)."""
    lower, upper = [lo0 / 100, lo1 / 100], [hi0 / 100, 1.0 - lo0 / 100]
    if sum(lower) > 1 or upper[1] < lower[1]:
        return
    Q, _ = (lip_upper_matrix if side == "upper" else lip_lower_matrix)(eps, 0.0, offset)
    if np.any(Q < 0):
        return
    # vertices of {lower <= P <= upper, P0 + P1 = 1} in exact arithmetic
    lo = [fr(v) for v in lower]
    hi = [fr(v) for v in upper]
    p0_min, p0_max = max(lo[0], 1 - hi[1]), min(hi[0], 1 - lo[1])
    if p0_min > p0_max:
        return
    verts = [[p0_min, 1 - p0_min], [p0_max, 1 - p0_max]]
    expected = all(holds_lip(Q, v, fr(eps)) for v in verts)
    notion = BPLIP(eps, lower=lower, upper=upper)
    assert check_notion(Q, notion).ok == expected


@settings(max_examples=80, deadline=None)
@given(b=st.floats(1e-6, 0.5), eps=st.floats(1e-9, 700.0), offset=st.sampled_from(OFFSETS),
       k=st.integers(2, 6))
def test_random_tight_ldp_columns(b, eps, offset, k):
    """Random entries and budgets over the whole range: verdict = brute force."""
    b = b * math.exp(-min(eps, 700.0)) if eps > 1 else b
    a = shifted(tight_ratio(eps, b), offset)
    Q = np.full((k, 2), 0.3)
    Q[0, 0], Q[k - 1, 0] = a, b
    Q[1:k - 1, 0] = np.linspace(b, a, k)[1:k - 1] if k > 2 else Q[1:k - 1, 0]
    assert check_notion(Q, LDP(eps)).ok == holds_eldp(Q, ldp_E(k, eps))
