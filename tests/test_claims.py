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


# -- the claims' parameters: the client's parser (mechopt._claims.parse_claim) and the notions ----

_CLAIMS = [
    {"notion": "ldp", "epsilon": 1.0}, {"notion": "wc_lip", "epsilon": 0.0},
    {"notion": "block", "epsilon": 0.5, "blocks": [["a"], ["b", "c"]]},
    {"notion": "high_low", "epsilon": 0.5, "sensitive": ["a"]},
    {"notion": "uldp", "epsilon": 0.5, "sensitive": ["b", "c"]},
    {"notion": "eldp", "matrix": [[0, 1, "inf"], [1, 0, 2.5], ["inf", 2, 0]]},
    {"notion": "metric", "epsilon": 1.0, "edges": [["a", "b"], ["b", "c", 2]]},
    {"notion": "metric", "epsilon": 1.0, "distance": [[0, 1, 2], [1, 0, 1], [2, 1, 0]]},
    {"notion": "lip", "epsilon": 1.0, "prior": [0.2, 0.3, 0.5], "delta": 0.01},
    {"notion": "bp_lip", "epsilon": 1.0, "priors": [[0.2, 0.3, 0.5], [0.5, 0.25, 0.25]]},
    {"notion": "bp_lip", "epsilon": 1.0, "lower": [0.1, 0.1, 0.1], "upper": [0.8, 0.8, 0.8]},
]
#: values a hostile file may put anywhere (numbers as strings, booleans, nulls, wrong shapes)
_ODD = [None, True, "1", "0.1", "inf", "Infinity", -1, -0.5, 0, 1, 2, 1e-300, 1e300, 0.5, [], [1], ["a"], {},
        "a", "z", [0.5, 0.5], [[0, 1], [1, 0]], [["a", "b"]], [["a", "b", "1"]], [["a"]], 3.5]


def _mutate(rng, spec):
    import copy

    spec = copy.deepcopy(spec)
    keys = [k for k in spec if k != "notion"]
    choice = rng.randrange(4)
    if choice == 0 or not keys:  # replace a field, or add one
        spec[rng.choice(keys + ["epsilon", "delta", "prior", "extra"])] = rng.choice(_ODD)
    elif choice == 1:  # replace one entry of a list (or of a list of lists)
        key = rng.choice(keys)
        v = spec[key]
        if isinstance(v, list) and v:
            i = rng.randrange(len(v))
            if isinstance(v[i], list) and v[i]:
                v[i][rng.randrange(len(v[i]))] = rng.choice(_ODD)
            else:
                v[i] = rng.choice(_ODD)
        else:
            spec[key] = rng.choice(_ODD)
    elif choice == 2:  # drop a field
        del spec[rng.choice(keys)]
    else:  # shorten or lengthen a list
        key = rng.choice(keys)
        if isinstance(spec[key], list) and spec[key]:
            if rng.random() < 0.5:
                spec[key].pop()
            else:
                spec[key].append(spec[key][-1])
    return spec


def test_claim_parameters_are_refused_by_the_client_whenever_the_notions_refuse_them():
    """``mechopt._claims.parse_claim`` is a deliberate standard-library copy of the notions' rules.

    On 3 000 mutated claims: whatever :func:`mechopt.notions.notion_from_spec` refuses
    (``mechopt verify`` then exits 2) the client refuses too, and the client accepts
    everything the notions accept except where the mechanism file's JSON Schema is
    stricter (integer labels, ``"Infinity"``, ``"inf"`` outside an E or distance matrix):
    those are listed, so any other difference fails the test.
    """
    import random

    from mechopt._claims import parse_claim
    from mechopt._errors import InputError
    from mechopt.notions import notion_from_spec

    rng = random.Random(7)
    inputs = ["a", "b", "c"]
    counts = {"both": 0, "neither": 0, "client only refuses": 0}
    for _ in range(3000):
        spec = _mutate(rng, rng.choice(_CLAIMS))
        try:
            notion_from_spec(spec, inputs, "privacy[0]")
            notions_ok = True
        except (InputError, TypeError):  # TypeError: bp_lip 'lower' not a list (the schema refuses it first)
            notions_ok = False
        message = ""
        try:
            parse_claim(spec, inputs, "privacy[0]")
            client_ok = True
        except InputError as err:
            client_ok, message = False, str(err)
            assert err.field.startswith("privacy[0]"), err
        if notions_ok and client_ok:
            counts["both"] += 1
        elif not notions_ok and not client_ok:
            counts["neither"] += 1
        else:
            assert notions_ok and not client_ok, ("the client accepts what verify refuses", spec)
            # stricter only where the mechanism file's JSON Schema is (mechopt verify checks
            # it too): labels are strings, infinity is the string "inf"
            assert ("must be an input label (a string)" in message
                    or 'or the string "inf", got \'Infinity\'' in message), (message, spec)
            counts["client only refuses"] += 1
    assert counts["both"] > 300 and counts["neither"] > 1000, counts
