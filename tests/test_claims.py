"""The client's standard-library verifier (mechopt._claims) agrees with mechopt._verify.

The two are deliberately separate implementations of the same exact definitions; here
they judge the same random channels and notions — budgets placed right at the channel's
achieved budget (rounded to a few digits, so on both sides of it) and ulps off the
boundary — and must agree on every verdict.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mechopt import VerificationError, load_problem, verify
from mechopt._claims import check_claims

from _exact_reference import decimal_channels

def claims_ok(Q, inputs, privacy) -> bool:
    doc = {"inputs": inputs, "outputs": [f"y{j}" for j in range(Q.shape[1])], "matrix": Q.tolist(),
           "privacy": privacy}
    try:
        check_claims(doc)
        return True
    except VerificationError:
        return False


def near(draw, achieved: float) -> float:
    if not math.isfinite(achieved) or achieved <= 0:
        return draw(st.floats(0.05, 3.0))
    return max(round(achieved, draw(st.integers(1, 15))), 1e-3)


KINDS = ["ldp", "block", "high_low", "uldp", "eldp", "metric", "lip", "lip_delta", "bp_lip", "bp_lip_box"]


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(Q=decimal_channels(), data=st.data())
def test_client_verifier_agrees_with_the_verifier(kind, Q, data):
    k = Q.shape[0]
    inputs = [f"x{i}" for i in range(k)]
    P = data.draw(st.lists(st.integers(1, 20), min_size=k, max_size=k))
    P = (np.array(P) / sum(P)).round(6)
    P[-1] = round(1 - P[:-1].sum(), 6)
    if P[-1] <= 0:
        P = np.full(k, 1 / k)
        P[-1] = 1 - P[:-1].sum()
    P = P.tolist()
    from mechopt import LDP, LIP, BlockLDP, HighLowLDP

    if kind == "ldp":
        spec = {"notion": "ldp", "epsilon": near(data.draw, LDP(1).achieved(Q))}
    elif kind == "block":
        cut = data.draw(st.integers(1, k - 1))
        blocks = [inputs[:cut], inputs[cut:]]
        spec = {"notion": "block", "epsilon": near(data.draw, BlockLDP(1, blocks=[list(range(cut)),
                                                                               list(range(cut, k))]).achieved(Q)),
                "blocks": blocks}
    elif kind == "high_low":
        sens = data.draw(st.lists(st.sampled_from(range(k)), unique=True, min_size=1, max_size=k))
        spec = {"notion": "high_low", "epsilon": near(data.draw, HighLowLDP(1, sensitive=sens).achieved(Q)),
                "sensitive": [inputs[s] for s in sens]}
    elif kind == "uldp":
        sens = data.draw(st.lists(st.sampled_from(range(k)), unique=True, min_size=1, max_size=k))
        spec = {"notion": "uldp", "epsilon": data.draw(st.floats(0.05, 4)), "sensitive": [inputs[s] for s in sens]}
    elif kind == "eldp":
        E = [[0 if a == b else data.draw(st.sampled_from(["inf", 0.3, 1.0, 2.5, 7.0])) for b in range(k)]
             for a in range(k)]
        spec = {"notion": "eldp", "matrix": E}
    elif kind == "metric":
        w = data.draw(st.floats(0.1, 3))
        spec = {"notion": "metric", "epsilon": data.draw(st.floats(0.05, 4)),
                "edges": [[inputs[i], inputs[i + 1], w] for i in range(k - 1)]}
    elif kind in ("lip", "lip_delta"):
        spec = {"notion": "lip", "epsilon": near(data.draw, LIP(1, prior=P).achieved(Q)), "prior": P}
        if kind == "lip_delta":
            spec["delta"] = data.draw(st.sampled_from([1e-3, 0.05, 0.2]))
    elif kind == "bp_lip":
        other = np.full(k, 1 / k)
        other[-1] = 1 - other[:-1].sum()
        spec = {"notion": "bp_lip", "epsilon": data.draw(st.floats(0.05, 3)), "priors": [P, other.tolist()]}
    else:
        lo = [max(0.0, round(p - 0.1, 3)) for p in P]
        hi = [min(1.0, round(p + 0.1, 3)) for p in P]
        spec = {"notion": "bp_lip", "epsilon": data.draw(st.floats(0.05, 3)), "lower": lo, "upper": hi}
    try:
        notions = load_problem({"inputs": inputs, "privacy": [spec]}).notions
    except Exception:  # e.g. a prior whose decimals leave LIP infeasible at a tiny budget
        return
    expected = verify(Q, notions).checks[0].ok
    assert claims_ok(Q, inputs, [spec]) == expected, (kind, spec, Q.tolist())


@pytest.mark.parametrize("eps", [1e-9, 0.5, 30.0, 700.0])
@pytest.mark.parametrize("offset", [-2, -1, 0, 1, 2])
def test_agreement_on_the_boundary(eps, offset):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_verify_boundary import lip_lower_matrix, lip_upper_matrix, ratio_matrix

    from mechopt import LDP, LIP

    Q = ratio_matrix(eps, offset)
    inputs = ["a", "b", "c"]
    assert claims_ok(Q, inputs, [{"notion": "ldp", "epsilon": eps}]) == verify(Q, [LDP(eps)]).checks[0].ok
    for make in (lip_upper_matrix, lip_lower_matrix):
        Q, P = make(eps, 0.1, offset)
        if np.any(Q < 0):
            continue
        got = claims_ok(Q, ["a", "b"], [{"notion": "lip", "epsilon": eps, "prior": P, "delta": 0.1}])
        assert got == verify(Q, [LIP(eps, prior=P, delta=0.1)]).checks[0].ok
