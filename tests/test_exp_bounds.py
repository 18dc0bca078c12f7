"""The e^x enclosures both exact verifiers rest on, checked against 100-digit values.

``mechopt._exact.exp_bounds`` (the numpy verifier) and ``mechopt._claims._exp_lo`` (the
standard-library client) computed ``e - slack`` in Decimal outside their own context, so
in a caller's default 28-digit context the "lower bound" of e^0.5 came out 1.1e-28 above
e^0.5: a channel violating ε = 0.5 LDP by 4e-30 (relative) passed both verifiers.
"""

from __future__ import annotations

import json
import random
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest

import mechopt
from mechopt._canonical import signed_document
from mechopt._claims import _exp_lo
from mechopt._exact import exp_bounds
from mechopt.client import verdict


def _exp_reference(x: Fraction) -> tuple[Fraction, Fraction]:
    """e^x to 100 digits, widened by 1e-95 relative each way (a bracket of the true value)."""
    with localcontext() as ctx:
        ctx.prec = 110
        e = (Decimal(x.numerator) / Decimal(x.denominator)).exp()
    e = Fraction(e)
    return e * (1 - Fraction(1, 10**95)), e * (1 + Fraction(1, 10**95))


@pytest.mark.parametrize("precision", [28, 10, 60])
def test_the_bounds_enclose_e_to_the_x_in_any_caller_context(precision):
    rng = random.Random(precision)
    xs = [Fraction(s) for s in ("0.5", "1", "2.5", "0.1", "1e-9", "700", "0.6931471805599453")]
    xs += [Fraction(repr(rng.uniform(0, 50))) for _ in range(40)] + [Fraction(rng.randint(1, 10**6), 10**4)
                                                                     for _ in range(20)]
    with localcontext() as ctx:
        ctx.prec = precision  # the caller's context must not matter
        for x in xs:
            lo_ref, hi_ref = _exp_reference(x)
            lo, hi = exp_bounds(x)
            assert lo < lo_ref and hi_ref < hi, x
            assert (hi - lo) / lo < Fraction(1, 10**57), x
            assert _exp_lo(x) < lo_ref, x


def test_a_channel_over_its_budget_by_4e_30_is_refused_everywhere():
    # 445827626089761 / 270408124170340 is a convergent of e^0.5, 4.15e-30 (relative) above it
    p, q = 0.0445827626089761, 0.027040812417034
    assert Fraction(repr(p)) / Fraction(repr(q)) > _exp_reference(Fraction(1, 2))[1]
    matrix = [[p, 1 - p], [q, 1 - q]]
    assert not mechopt.verify(matrix, [mechopt.LDP(0.5)]).verified
    doc = signed_document(["a", "b"], ["a", "b"], matrix, [{"notion": "ldp", "epsilon": 0.5}])
    assert verdict(json.dumps(doc))[0] == "refuse-verification"
    # and at a budget just above the ratio, both accept
    assert mechopt.verify(matrix, [mechopt.LDP(0.50000000000001)]).verified


def test_equal_entries_pass_under_a_budget_below_the_60th_digit():
    # e^x >= 1 + x floors the bound: 60 digits of e^1.5e-300 round to 1 - 3 ulp
    doc = signed_document(["a", "b"], ["a", "b"], [[0.5, 0.5], [0.5, 0.5]], [{"notion": "ldp", "epsilon": 1.5e-300}])
    assert mechopt.verify(doc["matrix"], [mechopt.LDP(1.5e-300)]).verified
    assert verdict(json.dumps(doc)) == ("accept", "")
    assert exp_bounds(Fraction(1, 10**70))[0] >= 1 and _exp_lo(Fraction(1, 10**70)) >= 1
