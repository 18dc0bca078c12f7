"""Differential harness: every consumer of a mechanism file gets the same files, as text.

Used by ``tests/test_client_differential.py`` and reusable elsewhere (the fuzz driver
calls :func:`verdicts` on the files it exports). A *consumer* is one way a file is read:

* ``verify``    — ``mechopt verify FILE`` (the CLI's ``main``, in process; exit 0/1/2);
* ``client``    — the standard-library Python client: :func:`mechopt.client.load_document`
  then :class:`mechopt.client.Sampler` (a family file, which that loader does not read,
  goes to :func:`mechopt.families.load_family_document` and its ``FamilySampler``);
* ``privatize`` — :func:`mechopt.runtime._commands.privatize_file` on one input label;
* ``estimate``  — :func:`mechopt.runtime._commands.estimate_file` on one report;
* ``js``        — ``loadMechanism`` of ``clients/js/src/index.js``, one ``node`` process
  for the whole batch (``clients/js/tools/verdicts.mjs``).

A verdict is ``"accept"``, ``"refuse:input:<field>"`` (exit code 2 / an ``InputError`` /
a ``MechanismError`` of kind ``input``), ``"refuse:verification"`` (exit code 1) or
``"crash:<what>"`` (anything else: a traceback, an unknown exit code). A label or report
the command itself refuses (not an input of the mechanism), and a channel that cannot
identify the distribution (``estimate``, exit 3), count as ``accept``: the mechanism file
was read and trusted, only the data around it was not.

The files are the base files of :func:`base_documents` (every notion, families, channels
at the boundary of their claim) and the seeded mutations of :func:`cases`. Each mutation
is a raw JSON *text*, so the JSON layer (duplicate keys, ``NaN``, 400-digit integers,
deep nesting) is exercised, and carries, where an independent fact decides it, the
verdict it must get (``expect``): the digest of an altered file no longer matches, a
claim tightened below the exact budget (computed here with 60-digit ``decimal``
logarithms, not with mechopt) is false, a malformed file is input.

Run one case again, with every consumer's verdict and the file written out::

    python tests/_differential.py 'ldp_rr3/dup-matrix-first'
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import math
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterable

ROOT = Path(__file__).resolve().parents[1]
JS_SCRIPT = ROOT / "clients" / "js" / "tools" / "verdicts.mjs"
NODE = shutil.which("node")
CONSUMERS = ("verify", "client", "privatize", "estimate", "js")
PY_CONSUMERS = ("verify", "client", "privatize", "estimate")

# ------------------------------------------------------------------ JSON text writer


class Raw(str):
    """A literal piece of JSON text written as is (``NaN``, a 400-digit integer, ...)."""


class Pairs(list):
    """An object written as these ``(key, value)`` pairs, in order (duplicate keys allowed)."""


def emit(value: Any) -> str:
    """JSON text of ``value``; :class:`Raw` and :class:`Pairs` let a test write what ``json`` won't."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, Pairs):
        return "{" + ", ".join(f"{json.dumps(k)}: {emit(v)}" for k, v in value) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {emit(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(emit(v) for v in value) + "]"
    return json.dumps(value)


def digest_of(doc: dict) -> str | None:
    """The sha256 a writer would record for ``doc`` (version 1 or 2, matrix or family); None if it has none."""
    try:
        if isinstance(doc.get("family"), (dict, list, str, int, float)) and "family" in doc:
            from mechopt.families import family_digest

            return family_digest(doc)
        from mechopt._canonical import canonical_digest

        version = doc.get("version")
        return canonical_digest(doc, version if version in (1, 2) else 2)
    except Exception:  # noqa: BLE001 - a payload that cannot be hashed keeps the old digest
        return None


def rehash(doc: dict) -> dict:
    """``doc`` with ``sha256`` recomputed (unchanged when the payload cannot be hashed)."""
    out = dict(doc)
    d = digest_of(out)
    if d is not None:
        out["sha256"] = d
    return out


# ------------------------------------------------------------------ exact budgets (independent)


def _dec(v: Any) -> Decimal:
    return Decimal(repr(float(v))) if isinstance(v, float) else Decimal(v)


def ldp_budget(matrix: list[list[Any]]) -> Decimal | None:
    """The exact LDP budget ``max_y ln(max_x Q[x][y] / min_x Q[x][y])`` to 50 digits; None when infinite.

    Independent of mechopt: the decimals of the entries, Python's :mod:`decimal` logarithm.
    """
    with localcontext() as ctx:
        ctx.prec = 60
        best = Decimal(0)
        for col in zip(*matrix):
            vals = [_dec(v) for v in col]
            hi, lo = max(vals), min(vals)
            if hi == 0:
                continue
            if lo == 0:
                return None
            best = max(best, (hi / lo).ln())
        return best


def lip0_delta(matrix: list[list[Any]], prior: list[Any]) -> Fraction:
    """The smallest delta of (0, delta)-LIP: ``max |Q[x][y] - P.Q[:, y]|`` over x, y — exact rationals."""
    rows = [[Fraction(repr(float(v))) for v in row] for row in matrix]
    P = [Fraction(repr(float(p))) for p in prior]
    worst = Fraction(0)
    for col in zip(*rows):
        mean = sum(p * q for p, q in zip(P, col))
        worst = max(worst, max(abs(q - mean) for q in col))
    return worst


def _ln(ratio: Fraction) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 60
        return (Decimal(ratio.numerator) / Decimal(ratio.denominator)).ln()


def _max_log_ratio(pairs: Iterable[tuple[Fraction, Fraction]]) -> Decimal | None:
    """``max ln(a / b)`` over pairs with ``a > 0`` (``0`` if none); None when some ``b = 0 < a``."""
    best = Decimal(0)
    for a, b in pairs:
        if a == 0:
            continue
        if b == 0:
            return None
        if a > b:
            best = max(best, _ln(a / b))
    return best


def _box_extreme(col: list[Fraction], lower: list[Fraction], upper: list[Fraction], largest: bool) -> Fraction:
    """``min`` (or ``max``) of ``P.col`` over ``lower <= P <= upper``, ``sum P = 1``: fill the cheapest entries first."""
    P = list(lower)
    left = 1 - sum(P)
    for x in sorted(range(len(col)), key=lambda x: col[x], reverse=largest):
        add = min(left, upper[x] - lower[x])
        P[x] += add
        left -= add
    return sum(p * q for p, q in zip(P, col))


def notion_budget(matrix: list[list[Any]], spec: dict, inputs: list[str]) -> Decimal | None:
    """The smallest epsilon for which ``matrix`` meets the claim ``spec`` — 60-digit logarithms of exact ratios.

    Written from the definitions of docs/formats.md, independently of mechopt: ``ldp``,
    ``wc_lip``, ``block``, ``high_low``, ``uldp``, ``metric`` (edges or distance; the
    smallest epsilon, each pair's log-ratio over its distance), ``lip`` (delta 0) and
    ``bp_lip`` (priors or box). ``None`` when no finite epsilon is enough.
    """
    Q = [[Fraction(repr(float(v))) for v in row] for row in matrix]
    cols = [list(c) for c in zip(*Q)]
    k = len(inputs)
    pos = {x: i for i, x in enumerate(inputs)}
    kind = spec["notion"]

    def over(groups_a, groups_b, columns):
        return _max_log_ratio((c[a], c[b]) for c in columns for a in groups_a for b in groups_b)

    if kind in ("ldp", "wc_lip"):
        return over(range(k), range(k), cols)
    if kind == "high_low":
        return over([pos[x] for x in spec["sensitive"]], range(k), cols)
    if kind == "block":
        best = Decimal(0)
        for b in spec["blocks"]:
            idx = [pos[x] for x in b]
            v = over(idx, idx, cols)
            if v is None:
                return None
            best = max(best, v)
        return best
    if kind == "uldp":
        sens = {pos[x] for x in spec["sensitive"]}
        protected = [c for c in cols if not (sum(1 for v in c if v) == 1 and [i for i, v in enumerate(c) if v][0]
                                             not in sens)]
        return over(range(k), range(k), protected)
    if kind == "metric":
        pairs = []
        if "edges" in spec:
            for a, b, w in spec["edges"]:
                pairs += [(pos[a], pos[b], Fraction(repr(float(w)))), (pos[b], pos[a], Fraction(repr(float(w))))]
        else:
            pairs = [(a, b, Fraction(repr(float(d)))) for a, row in enumerate(spec["distance"])
                     for b, d in enumerate(row) if a != b]
        best = Decimal(0)
        for a, b, d in pairs:
            v = over([a], [b], cols)
            if v is None:
                return None
            with localcontext() as ctx:
                ctx.prec = 60
                best = max(best, v / (Decimal(d.numerator) / Decimal(d.denominator)))
        return best
    if kind in ("lip", "bp_lip"):
        if kind == "lip":
            priors = [[Fraction(repr(float(p))) for p in spec["prior"]]]
        elif "priors" in spec:
            priors = [[Fraction(repr(float(p))) for p in P] for P in spec["priors"]]
        else:
            priors = None
        best = Decimal(0)
        for c in cols:
            if priors is not None:
                means = [sum(p * q for p, q in zip(P, c)) for P in priors]
                lo_means, hi_means = means, means
            else:
                lo = [Fraction(repr(float(v))) for v in spec["lower"]]
                hi = [Fraction(repr(float(v))) for v in spec["upper"]]
                lo_means, hi_means = [_box_extreme(c, lo, hi, False)], [_box_extreme(c, lo, hi, True)]
            for x in range(k):
                up = _max_log_ratio((c[x], mean) for mean in lo_means)  # q[x] <= e^eps P.q
                down = _max_log_ratio((mean, c[x]) for mean in hi_means)  # P.q <= e^eps q[x]
                if up is None or down is None:
                    return None
                best = max(best, up, down)
        return best
    raise ValueError(kind)


def _short_prior(k: int, first: str | None = None) -> list[float]:
    """A prior of short decimals summing to exactly 1 (``first``: the first entry)."""
    if first is None:
        each = Decimal(1 / k).quantize(Decimal("0.0001"))
        rest = [each] * (k - 1)
        return [float(v) for v in rest + [1 - sum(rest)]]
    head = Decimal(first)
    each = ((1 - head) / (k - 1)).quantize(Decimal("0.0001"))
    rest = [each] * (k - 2)
    return [float(v) for v in [head, *rest, 1 - head - sum(rest)]]


def boundary_claims(inputs: list[str]) -> list[dict]:
    """One claim of each notion on these inputs, epsilon left to fill in (see :func:`boundary_mutations`)."""
    k = len(inputs)
    half = max(1, k // 2)
    claims = [{"notion": "ldp"}, {"notion": "wc_lip"}, {"notion": "high_low", "sensitive": inputs[:1]},
              {"notion": "uldp", "sensitive": inputs[:1]},
              {"notion": "block", "blocks": [inputs[:half], inputs[half:]] if k > 1 else [inputs]},
              {"notion": "metric", "edges": [[inputs[i], inputs[i + 1], 1 if i % 2 == 0 else 1.5]
                                             for i in range(k - 1)]},
              {"notion": "metric", "distance": [[abs(a - b) for b in range(k)] for a in range(k)]},
              {"notion": "lip", "prior": _short_prior(k)}]
    if k > 1:
        claims += [{"notion": "bp_lip", "priors": [_short_prior(k), _short_prior(k, "0.5")]},
                   {"notion": "bp_lip", "lower": [float(Decimal("0.5") / k) if k in (2, 4, 5) else 0.1] * k,
                    "upper": [min(1.0, 2.0 / k) if k in (2, 4, 5) else 0.5] * k}]
    return claims


def decimal_above(x: Decimal) -> float:
    """The double whose shortest decimal is the smallest such decimal ``>= x``."""
    f = float(x)
    while Decimal(repr(f)) < x:
        f = math.nextafter(f, math.inf)
    while Decimal(repr(math.nextafter(f, -math.inf))) >= x:
        f = math.nextafter(f, -math.inf)
    return f


def decimal_below(x: Decimal) -> float:
    """The double whose shortest decimal is the largest such decimal ``< x``."""
    f = float(x)
    while Decimal(repr(f)) >= x:
        f = math.nextafter(f, -math.inf)
    return f


def ratio_below_exp(eps: float) -> float:
    """The largest double ``r`` with ``repr(r) <= e^eps`` (independent of mechopt's ``ratio_below``)."""
    with localcontext() as ctx:
        ctx.prec = 60
        e = _dec(eps).exp()
    f = float(e)
    while Decimal(repr(f)) > e:
        f = math.nextafter(f, 0.0)
    while Decimal(repr(math.nextafter(f, math.inf))) <= e:
        f = math.nextafter(f, math.inf)
    return f


# ------------------------------------------------------------------ base files


def _doc(inputs, outputs, matrix, privacy, *, memoize=None, version=2) -> dict:
    """A file as ``Mechanism.save`` writes it, with the claims and the matrix given here.

    The certificate comes from :meth:`mechopt.Mechanism.from_channel` (the exact verifier);
    the base file must pass it, so a wrong base file fails loudly here.
    """
    from mechopt import Mechanism

    mech = Mechanism.from_channel(matrix, privacy, inputs=inputs, outputs=outputs)
    doc = mech.to_dict()
    if not doc["certificate"].get("verified"):
        raise AssertionError(f"base file does not verify: {doc['certificate']}")
    doc["matrix"] = matrix  # the decimals as written here (to_dict writes the same doubles)
    doc["privacy"] = privacy
    doc["version"] = version
    if memoize is not None:
        doc["memoize"] = memoize
    return rehash(doc)


def _family_doc(inputs, family, privacy) -> dict:
    """A family file as ``FamilyMechanism.save`` writes it (its certificate from the family verifier)."""
    from mechopt.families import FamilyMechanism

    doc = FamilyMechanism.from_family(family, privacy, inputs=inputs).to_dict()
    if not doc["certificate"].get("verified"):
        raise AssertionError(f"base family file does not verify: {doc['certificate']}")
    doc["privacy"] = privacy
    return rehash(doc)


_SOLVED = {
    "solved_ldp": {"k": 3, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
                   "objective": {"kind": "expected_loss", "loss": "hamming"}},
    "solved_lip_delta": {"inputs": ["a", "b", "c"], "outputs": "inputs",
                         "privacy": [{"notion": "lip", "epsilon": 0.5, "delta": 0.05, "prior": [0.2, 0.3, 0.5]}],
                         "objective": {"kind": "expected_loss", "loss": "hamming"}},
    "solved_uldp": {"inputs": ["a", "b", "c", "d"], "outputs": "inputs",
                    "privacy": [{"notion": "uldp", "epsilon": 1.0, "sensitive": ["a", "b"]}],
                    "objective": {"kind": "expected_loss", "loss": "hamming"}},
    "solved_metric": {"inputs": ["a", "b", "c"], "outputs": "inputs",
                      "privacy": [{"notion": "metric", "epsilon": 1.0, "edges": [["a", "b", 1], ["b", "c", 2]]}],
                      "objective": {"kind": "expected_loss", "loss": "absolute", "values": [0, 1, 3]}},
    "solved_bp_box": {"inputs": ["0", "1"], "outputs": "free",
                      "privacy": [{"notion": "bp_lip", "epsilon": 1.0, "lower": [0.4, 0.3], "upper": [0.7, 0.6]}],
                      "objective": {"kind": "mmse", "values": [0, 1], "prior": [0.55, 0.45]}},
    "solved_eldp_inf": {"inputs": ["a", "b", "c"], "outputs": "inputs",
                        "privacy": [{"notion": "eldp", "matrix": [[0, 1, "inf"], [1, 0, 0.5], ["inf", 0.5, 0]]}],
                        "objective": {"kind": "expected_loss", "loss": "hamming"}},
    "solved_web_high_low": str(ROOT / "problems" / "web_high_low_002.yaml"),
    "solved_geo_blocks": str(ROOT / "problems" / "geo_blocks_002.yaml"),
    "solved_random_eldp": str(ROOT / "problems" / "random_eldp.yaml"),
    "solved_free_mi": {"k": 3, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1.5}],
                       "objective": {"kind": "mutual_information"}},
}


def base_documents(*, solve: bool = True) -> list[tuple[str, dict]]:
    """Valid mechanism files: every notion, several at once, memoize, families, boundary channels.

    Hand-made channels have short decimals whose budgets are known exactly (a ratio of 2
    is ``ln 2``); their claims are the smallest decimal at or above the exact budget
    (:func:`decimal_above`), so each sits exactly at the boundary of its claim. With
    ``solve``, small problems solved by :func:`mechopt.solve` add files with 17-digit
    entries as the solver writes them.
    """
    rr3 = [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]]
    ln2 = decimal_above(Decimal(2).ln())
    ln3 = decimal_above(Decimal(3).ln())
    # LIP of rr3 under the prior (0.2, 0.3, 0.5): the worst column is the first, 0.5 / 0.3
    ln53 = decimal_above((Decimal(5) / 3).ln())
    inp3 = ["a", "b", "c"]
    inp4 = ["w", "x", "y", "z"]
    rr4 = [[0.4, 0.2, 0.2, 0.2], [0.2, 0.4, 0.2, 0.2], [0.2, 0.2, 0.4, 0.2], [0.2, 0.2, 0.2, 0.4]]
    blocky = [[0.6, 0.2, 0.2, 0.0], [0.2, 0.6, 0.2, 0.0], [0.0, 0.0, 0.75, 0.25], [0.0, 0.0, 0.25, 0.75]]
    out: list[tuple[str, dict]] = []
    add = out.append
    add(("ldp_rr3", _doc(inp3, inp3, rr3, [{"notion": "ldp", "epsilon": ln2}])))
    add(("ldp_rr3_eps1", _doc(inp3, ["u", "v", "t"], rr3, [{"notion": "ldp", "epsilon": 1}])))
    add(("wc_lip_rr4", _doc(inp4, inp4, rr4, [{"notion": "wc_lip", "epsilon": ln2}])))
    add(("eldp_inf", _doc(inp4, inp4, blocky, [{"notion": "eldp", "matrix": [
        [0, ln3, "inf", "inf"], [ln3, 0, "inf", "inf"], ["inf", "inf", 0, ln3], ["inf", "inf", ln3, 0]]}])))
    add(("block", _doc(inp4, inp4, [[0.6, 0.2, 0.2, 0.0], [0.2, 0.6, 0.2, 0.0], [0.0, 0.0, 0.75, 0.25],
                                    [0.0, 0.0, 0.25, 0.75]],
                       [{"notion": "block", "epsilon": ln3, "blocks": [["w", "x"], ["y", "z"]]}])))
    add(("high_low", _doc(inp3, inp3, [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.125, 0.625]],
                          [{"notion": "high_low", "epsilon": ln2, "sensitive": ["a"]}])))
    add(("metric_edges", _doc(inp3, inp3, [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]],
                              [{"notion": "metric", "epsilon": ln2, "edges": [["a", "b", 1], ["b", "c", 1.5]]}])))
    add(("metric_distance", _doc(inp3, inp3, rr3, [{"notion": "metric", "epsilon": ln2, "distance": [
        [0, 1, 2], [1, 0, 1], [2, 1, 0]]}])))
    add(("lip", _doc(inp3, inp3, rr3, [{"notion": "lip", "epsilon": ln53, "prior": [0.2, 0.3, 0.5]}])))
    # LIP at epsilon 0 is exact rational arithmetic: delta is exactly the worst deviation
    # of a column from its prior mean, 0.5 - (0.2*0.5 + 0.3*0.25 + 0.5*0.25) = 0.2
    add(("lip_delta_boundary", _doc(inp3, inp3, rr3, [{"notion": "lip", "epsilon": 0, "delta": 0.2,
                                                       "prior": [0.2, 0.3, 0.5]}])))
    add(("bp_lip_priors", _doc(inp3, inp3, rr3, [{"notion": "bp_lip", "epsilon": ln53, "priors": [
        [0.2, 0.3, 0.5], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.25, 0.25]]}])))
    add(("bp_lip_box", _doc(inp3, inp3, rr3, [{"notion": "bp_lip", "epsilon": 0.75, "lower": [0.1, 0.2, 0.3],
                                              "upper": [0.4, 0.5, 0.6]}])))
    add(("uldp", _doc(inp4, inp4, [[0.5, 0.25, 0.25, 0.0], [0.25, 0.5, 0.25, 0.0], [0.25, 0.25, 0.5, 0.0],
                                   [0.25, 0.25, 0.25, 0.25]],
                      [{"notion": "uldp", "epsilon": ln2, "sensitive": ["w", "x", "y"]}])))
    add(("several", _doc(inp3, inp3, rr3, [{"notion": "ldp", "epsilon": ln2},
                                           {"notion": "lip", "epsilon": ln53, "prior": [0.2, 0.3, 0.5]},
                                           {"notion": "high_low", "epsilon": 1, "sensitive": ["b"]},
                                           {"notion": "eldp", "matrix": [[0, ln2, ln2], [1, 0, 1], [1, 1, 0]]}])))
    add(("memoize", _doc(inp3, inp3, rr3, [{"notion": "ldp", "epsilon": ln2}], memoize=True)))
    add(("constant_eps0", _doc(inp3, ["p", "q"], [[0.3, 0.7]] * 3, [{"notion": "ldp", "epsilon": 0}])))
    add(("eldp_zero_entry", _doc(["a", "b"], ["a", "b"], [[0.4, 0.6], [0.4, 0.6]],
                                 [{"notion": "eldp", "matrix": [[0, 0], [0, 0]]}])))
    add(("identity_eldp_inf", _doc(inp3, inp3, [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
                                   [{"notion": "eldp", "matrix": [[0, "inf", "inf"], ["inf", 0, "inf"],
                                                                  ["inf", "inf", 0]]}])))
    add(("v1_ldp", _doc(inp3, inp3, rr3, [{"notion": "ldp", "epsilon": ln2}], version=1)))
    # labels a JavaScript object or a naive parser treats specially
    odd = ["__proto__", "constructor", "toString", "\u00e9\U0001f600"]
    add(("odd_labels", _doc(odd, ["hasOwnProperty\u001f\u007f", "valueOf\u2028\t", "", 'a"b\\c</script>'], rr4,
                            [{"notion": "high_low", "epsilon": ln2, "sensitive": ["__proto__", "toString"]}])))
    add(("free_outputs_k2", _doc(["no", "yes"], ["n", "y", "z"], [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25]],
                                 [{"notion": "ldp", "epsilon": ln2}])))
    # a subnormal probability: integer weights of about 10^324, 34 words per draw
    anything3 = [{"notion": "eldp", "matrix": [[0 if a == b else "inf" for b in range(3)] for a in range(3)]}]
    add(("subnormal_row", _doc(inp3, ["p", "q", "r"], [[5e-324, 0.5, 0.5], [0.25, 0.25, 0.5], [1e-300, 0.0, 1.0]],
                               anything3)))
    # more than 4096 numbers in the matrix and in E: mechopt writes their canonical text
    # with its own ECMAScript number formatter (mechopt._canonical), the rest with rfc8785;
    # numbers whose ECMAScript form differs from Python's repr (1e-06 -> 0.000001, 1e-07 ->
    # 1e-7, 1e+21, 1.2345678901234568e+20 -> 123456789012345680000); identical rows meet
    # every claim, whatever its budget
    big = [str(i) for i in range(65)]
    row = [0.015625] * 63 + [0.015623, 0.0000019, 1e-7]
    odd_numbers = [1e21, 1e-7, 1e300, 123456789012345680000.0, 0.1, 1e-6, 1e-5, 2.5e-8, "inf", 1.5e-300]
    # (mostly infinite: the standard-library client checks each finite pair in Python)
    E = [[0 if a == b else odd_numbers[(a + b) % len(odd_numbers)] if (a * 7 + b) % 61 == 0 else "inf"
          for b in range(65)] for a in range(65)]
    add(("big_jcs_numbers", _doc(big, [f"y{j}" for j in range(66)], [list(row) for _ in big], [
        {"notion": "eldp", "matrix": E}, {"notion": "ldp", "epsilon": 1e21},
        {"notion": "wc_lip", "epsilon": 123456789012345680000.0},
        {"notion": "high_low", "epsilon": 1e-7, "sensitive": big[:3]},
        {"notion": "lip", "epsilon": 0.000001, "delta": 1e-7, "prior": [0.015625] * 64 + [0.0]}])))
    # families: the ratio is the largest double whose decimal is <= e^epsilon
    r1 = ratio_below_exp(1.0)
    add(("family_subset_d1", _family_doc(["0", "1", "2", "3"], {"kind": "subset_selection", "ratio": r1,
                                                              "mixture": [{"d": 1, "weight": 1.0}]},
                                         [{"notion": "ldp", "epsilon": 1.0}])))
    add(("family_subset_mix", _family_doc([str(i) for i in range(6)], {
        "kind": "subset_selection", "ratio": r1, "mixture": [{"d": 2, "weight": 0.75}, {"d": 3, "weight": 0.25}]},
        [{"notion": "ldp", "epsilon": 1.0}])))
    for eps in (0.1, 3.0):
        add((f"family_subset_eps{eps:g}", _family_doc([str(i) for i in range(5)], {
            "kind": "subset_selection", "ratio": ratio_below_exp(eps), "mixture": [{"d": 2, "weight": 1.0}]},
            [{"notion": "ldp", "epsilon": eps}])))
    add(("family_hadamard_eps0.5", _family_doc([str(i) for i in range(7)], {
        "kind": "hadamard_response", "ratio": ratio_below_exp(0.5), "sensitive": [str(i) for i in range(7)]},
        [{"notion": "ldp", "epsilon": 0.5}])))
    add(("family_subset_uldp", _family_doc(["0", "1", "2", "3", "4"], {
        "kind": "subset_selection", "ratio": 2, "mixture": [{"d": 2, "weight": 1}]},
        [{"notion": "uldp", "epsilon": ln2, "sensitive": ["0", "1"]}])))
    add(("family_hadamard", _family_doc(["a", "b", "c", "d", "e"], {
        "kind": "hadamard_response", "ratio": 3, "sensitive": ["a", "b", "c"]},
        [{"notion": "high_low", "epsilon": ln3, "sensitive": ["a", "b", "c"]}])))
    add(("family_hadamard_all", _family_doc(["a", "b", "c"], {
        "kind": "hadamard_response", "ratio": 2, "sensitive": ["a", "b", "c"]},
        [{"notion": "ldp", "epsilon": ln2}])))
    if solve:
        import mechopt

        for name, problem in _SOLVED.items():
            result = mechopt.solve(problem, quiet=True)
            if result.mechanism is not None:
                add((name, result.mechanism.to_dict()))
    return out


# ------------------------------------------------------------------ mutations


@dataclass
class Case:
    """One file given to every consumer.

    ``expect``: ``None`` (no independent fact: the consumers must only agree), ``"accept"``,
    ``"refuse"`` (either class), ``"refuse:input"`` or ``"refuse:verification"``.
    ``portable``: False for a version 1 file, which the JavaScript client refuses by design.
    """

    name: str
    text: str
    expect: str | None = None
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    portable: bool = True


def _flip_bit(v: float, bit: int) -> float:
    (n,) = struct.unpack("<Q", struct.pack("<d", float(v)))
    (f,) = struct.unpack("<d", struct.pack("<Q", n ^ (1 << bit)))
    return f


def _identity(k: int) -> list[list[int]]:
    return [[1 if i == j else 0 for j in range(k)] for i in range(k)]


def _nested(depth: int, leaf: str = "0") -> Raw:
    return Raw("[" * depth + leaf + "]" * depth)


def _identity_fact(privacy: list[dict]) -> str | None:
    """``refuse:verification`` when an identity channel surely breaks one of these claims."""
    for p in privacy:
        kind = p.get("notion")
        if kind in ("ldp", "wc_lip"):
            return "refuse:verification"
        if kind == "high_low" and p.get("sensitive"):
            return "refuse:verification"
        if kind == "block" and any(len(b) > 1 for b in p.get("blocks", [])):
            return "refuse:verification"
        if kind == "metric" and (p.get("edges") or p.get("distance")):
            return "refuse:verification"
        if kind == "uldp" and p.get("sensitive"):
            return "refuse:verification"  # a sensitive input's column would be invertible
    return None


def _claim_keys(doc: dict) -> list[tuple[int, str]]:
    """(claim index, numeric field) of every number-valued parameter of the claims."""
    keys = []
    for i, p in enumerate(doc.get("privacy", [])):
        for key in ("epsilon", "delta"):
            if key in p:
                keys.append((i, key))
    return keys


def _with(base: dict, **changes) -> dict:
    """``base`` with some fields replaced (not re-hashed)."""
    d = dict(base)
    d.update(changes)
    return d


def _without_key(base: dict, key: str) -> dict:
    """``base`` without ``key``, re-hashed as a writer would have (the digest of what is left)."""
    d = rehash({kk: vv for kk, vv in base.items() if kk != key})
    d.pop(key, None)
    return d


def matrix_mutations(name: str, base: dict, rng: random.Random) -> list[Case]:
    """The seeded mutations of a matrix mechanism file (see the module docstring)."""
    cases: list[Case] = []
    inputs, outputs = list(base["inputs"]), list(base["outputs"])
    version = base["version"]
    portable = version == 2
    k, m = len(inputs), len(outputs)
    memo = "memoize" in base

    def add(tag: str, text: str, expect: str | None = None, *, port: bool | None = None) -> None:
        cases.append(Case(f"{name}/{tag}", text, expect, inputs, outputs, portable if port is None else port))

    doc_with = functools.partial(_with, base)
    _without = functools.partial(_without_key, base)

    add("base", json.dumps(base), "accept")
    add("base-indented", json.dumps(base, indent=1), "accept")
    add("base-compact", json.dumps(base, separators=(",", ":")), "accept")
    add("base-extra-field", json.dumps(doc_with(solver={"seconds": 0.1, "nested": [[[1]]]})), "accept")
    add("base-trailing-space", json.dumps(base) + "\n  \n", "accept")
    add("base-exponent-text", emit(doc_with(matrix=[[Raw(f"{Decimal(repr(float(v))).normalize():E}")
                                                     for v in row] for row in base["matrix"]])), "accept")
    add("trailing-garbage", json.dumps(base) + " x", "refuse:input")
    add("top-level-array", json.dumps([base]), "refuse:input")
    add("bom", "\ufeff" + json.dumps(base))
    add("empty-text", "", "refuse:input")
    # -- the JSON layer: escaped keys, __proto__, number spellings, whitespace
    body = json.dumps(base)[1:]
    add("escaped-key-alone", "{" + body.replace('"matrix":', '"\\u006datrix":', 1), "accept")
    add("escaped-key-duplicate", '{"\\u006datrix": ' + json.dumps(_identity(k) if m == k else base["matrix"][::-1])
        + ", " + body, "refuse:input")
    add("escaped-key-duplicate-sha", '{"sha\\u0032\\u0035\\u0036": "' + "0" * 64 + '", ' + body, "refuse:input")
    first = json.dumps(inputs[0])
    escaped = '"' + "".join(f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else ch for ch in inputs[0]) + '"'
    add("escaped-label", json.dumps(base).replace(first, escaped), "accept")
    # random edits of the text: mostly invalid JSON, sometimes another valid document
    text = json.dumps(base)
    alphabet = '{}[],:"\\0123456789.eE-+ tnfalsu'
    for t in range(8):
        p = rng.randrange(len(text))
        op = t % 4
        if op == 0:
            edited = text[:p] + text[p + 1:]
        elif op == 1:
            edited = text[:p] + rng.choice(alphabet) + text[p:]
        elif op == 2:
            edited = text[:p] + rng.choice(alphabet) + text[p + 1:]
        else:
            q = min(len(text), p + rng.randrange(1, 30))
            edited = text[:q] + text[p:q] + text[q:]
        add(f"textfuzz-{op}-{t}", edited, "accept" if edited == text else None)
    add("proto-extra-field", json.dumps(doc_with(__proto__={"x": 1})), "accept")
    add("proto-hides-certificate", json.dumps({**{kk: vv for kk, vv in base.items() if kk != "certificate"},
                                               "__proto__": {"certificate": base["certificate"]}}), "refuse:input")
    claim = dict(base["privacy"][0])
    if "epsilon" in claim:
        eps = claim.pop("epsilon")
        hidden = rehash(doc_with(privacy=[{**claim, "__proto__": {"epsilon": eps}}] + base["privacy"][1:]))
        add("proto-hides-epsilon", json.dumps(hidden), "refuse:input")
    add("dup-in-objective", emit(doc_with(objective=Pairs([("kind", "a"), ("kind", "b")]))), "refuse:input")
    add("dup-in-extra", emit(doc_with(solver=Pairs([("x", 1), ("x", 2)]))), "refuse:input")
    if "notion" in base["privacy"][0]:
        dup = [Pairs(q.items()) for q in base["privacy"]]
        dup[0].insert(0, ("notion", "wc_lip"))
        add("dup-notion", emit(doc_with(privacy=dup)), "refuse:input")
    for tag, lit in (("leading-zero", "01"), ("plus", "+1"), ("dot", ".5"), ("hex", "0x1"), ("trailing-dot", "1.")):
        add(f"bad-number-{tag}", emit(doc_with(objective={"value": Raw(lit)})), "refuse:input")
    add("nbsp-whitespace", json.dumps(base).replace(", ", ",\u00a0", 1), "refuse:input")
    add("tab-newline-whitespace", json.dumps(base).replace(", ", ",\t\r\n", 3), "accept")
    add("comment", "/* c */" + json.dumps(base), "refuse:input")
    add("single-quotes", json.dumps(base).replace('"format"', "'format'", 1), "refuse:input")
    add("lone-surrogate-label", json.dumps(rehash(doc_with(inputs=["\ud800"] + inputs[1:]))),
        "refuse:input" if portable else None)  # version 1 digests escape it (json.dumps)
    add("lone-surrogate-unhashed", json.dumps(doc_with(certificate=dict(base["certificate"], method="\udc00"))),
        "refuse:input")  # outside the digest, refused by both readers all the same (I-JSON)
    add("control-char-in-string", json.dumps(base).replace('"mechopt-mechanism"', '"mechopt-\x01mechanism"', 1),
        "refuse:input")
    i, j = rng.randrange(k), rng.randrange(m)
    v = float(base["matrix"][i][j])
    for tag, spelled in (("long-digits", repr(v) + ("" if "e" in repr(v) else "00000000000000000001")),
                         ("upper-exponent", f"{Decimal(repr(v)).normalize():E}".replace("E", "e+") if v else "0E0"),
                         ("negative-zero", "-0.0" if v == 0 else None)):
        if spelled is None:
            continue
        mat = [list(r) for r in base["matrix"]]
        mat[i][j] = Raw(spelled)
        add(f"spelling-{tag}-{i}-{j}", emit(doc_with(matrix=mat)))
    for tag, lit in (("1e-400", "1e-400"), ("neg-zero", "-0.0"), ("5e-324", "5e-324"), ("1E2", "1E2")):
        privacy = [Pairs(q.items()) for q in base["privacy"]]
        if "epsilon" in base["privacy"][0]:
            privacy[0] = Pairs((kk, Raw(lit) if kk == "epsilon" else vv) for kk, vv in privacy[0])
            parsed = [dict(q) for q in base["privacy"]]
            parsed[0]["epsilon"] = json.loads(lit)
            add(f"epsilon-spelled-{tag}", emit(doc_with(privacy=privacy, sha256=rehash(doc_with(privacy=parsed))["sha256"])))
    mat = [list(r) for r in base["matrix"]]
    row = [(Decimal(repr(float(x))), jj) for jj, x in enumerate(mat[0])]
    jmax = max(row)[1]
    jzero = [jj for jj, x in enumerate(mat[0]) if float(x) == 0]
    if jzero:  # a subnormal where a zero was: an infinite ratio becomes a finite, huge one
        mat[0][jzero[0]] = 5e-324
        add("subnormal-for-zero", json.dumps(rehash(doc_with(matrix=mat))))
    else:
        mat[0][jmax] = float(Decimal(repr(float(mat[0][jmax]))) - Decimal("5e-324"))
        add("subnormal-shift", json.dumps(rehash(doc_with(matrix=mat))))

    # -- matrix entries: bit flips and digit changes, re-hashed and not
    for t in range(10):
        i, j = rng.randrange(k), rng.randrange(m)
        v = base["matrix"][i][j]
        bit = rng.choice([0, 1, 20, 40, 51, 52, 55, 60, 62, 63]) if t < 9 else 63
        nv = _flip_bit(v, bit)
        if not math.isfinite(nv) or nv == v:
            continue
        mat = [list(r) for r in base["matrix"]]
        mat[i][j] = nv
        changed = doc_with(matrix=mat)
        add(f"bitflip-{i}-{j}-b{bit}", json.dumps(changed), "refuse")
        add(f"bitflip-{i}-{j}-b{bit}-rehashed", json.dumps(rehash(changed)),
            "refuse:input" if nv < 0 else None)
    for t in range(6):
        i, j = rng.randrange(k), rng.randrange(m)
        text = repr(float(base["matrix"][i][j]))
        pos = [p for p, ch in enumerate(text) if ch.isdigit()]
        p = rng.choice(pos)
        new = text[:p] + str((int(text[p]) + rng.randrange(1, 10)) % 10) + text[p + 1:]
        mat = [list(r) for r in base["matrix"]]
        mat[i][j] = Raw(new)
        same = float(new) == float(text)
        add(f"digit-{i}-{j}-{t}", emit(doc_with(matrix=mat)), "accept" if same else "refuse")
        parsed = [list(r) for r in base["matrix"]]
        parsed[i][j] = float(new)
        rehashed = rehash(doc_with(matrix=parsed))
        mat_text = emit(doc_with(matrix=mat, sha256=rehashed["sha256"]))
        add(f"digit-{i}-{j}-{t}-rehashed", mat_text, "accept" if same else None)
    # -- mass moved inside a row (row sums kept): privacy decides, re-hashed
    for amount in ("1e-15", "1e-9", "0.001", "0.05"):
        i = rng.randrange(k)
        j, j2 = rng.sample(range(m), 2) if m > 1 else (0, 0)
        a, b = _dec(base["matrix"][i][j]), _dec(base["matrix"][i][j2])
        t = min(Decimal(amount), b)
        mat = [list(r) for r in base["matrix"]]
        mat[i][j] = float(a + t)
        mat[i][j2] = float(b - t)
        # E-LDP with E = 0 between two inputs is equality of their rows: any shift breaks it
        expect = ("refuse:verification" if t > 0 and mat[i] != base["matrix"][i] and base["privacy"] == [
            {"notion": "eldp", "matrix": [[0] * k] * k}] else None)
        add(f"shift-{amount}-{i}-{j}-{j2}", json.dumps(rehash(doc_with(matrix=mat))), expect)
    # -- claims tightened past the truth (re-hashed)
    budget = ldp_budget(base["matrix"])
    for i, key in _claim_keys(base):
        claim = base["privacy"][i]
        v = claim[key]
        if isinstance(v, str) or isinstance(v, bool):
            continue
        for tag, nv in (("rel1e-15", v * (1 - 1e-15)), ("minus1e-15", v - 1e-15), ("half", v / 2),
                        ("zero", 0), ("rel1e-9", v * (1 - 1e-9)), ("double-below", math.nextafter(v, -math.inf))):
            if nv < 0 or nv == v:
                continue
            privacy = [dict(p) for p in base["privacy"]]
            privacy[i][key] = nv
            expect = None
            if (key == "epsilon" and claim["notion"] in ("ldp", "wc_lip") and budget is not None
                    and len(base["privacy"]) == 1):
                expect = "refuse:verification" if Decimal(repr(float(nv))) < budget else "accept"
            if key == "delta" and claim["epsilon"] == 0 and len(base["privacy"]) == 1:
                # at epsilon = 0 the LIP condition is rational: delta >= the worst deviation, exactly
                need = lip0_delta(base["matrix"], claim["prior"])
                expect = "refuse:verification" if Fraction(repr(float(nv))) < need else "accept"
            add(f"tighten-{i}-{key}-{tag}", json.dumps(rehash(doc_with(privacy=privacy))), expect)
        if key == "epsilon" and claim["notion"] in ("ldp", "wc_lip") and budget is not None:
            for tag, nv in (("exact-below", decimal_below(budget)), ("exact-above", decimal_above(budget))):
                if nv < 0:  # a budget of 0 has no smaller claim
                    continue
                privacy = [dict(p) for p in base["privacy"]]
                privacy[i][key] = nv
                expect = "refuse:verification" if tag == "exact-below" else None
                if len(base["privacy"]) == 1 and tag == "exact-above":
                    expect = "accept"
                add(f"tighten-{i}-{key}-{tag}", json.dumps(rehash(doc_with(privacy=privacy))), expect)
    for i, p in enumerate(base["privacy"]):
        if p.get("notion") == "eldp":
            privacy = [dict(q) for q in base["privacy"]]
            privacy[i]["matrix"] = [[v if isinstance(v, str) else v * (1 - 1e-15) for v in row] for row in p["matrix"]]
            add(f"tighten-{i}-E-rel1e-15", json.dumps(rehash(doc_with(privacy=privacy))))
            privacy = [dict(q) for q in base["privacy"]]
            privacy[i]["matrix"] = [[0 if isinstance(v, str) else v for v in row] for row in p["matrix"]]
            add(f"tighten-{i}-E-inf-to-0", json.dumps(rehash(doc_with(privacy=privacy))))
        if p.get("notion") == "metric" and "edges" in p:
            privacy = [dict(q) for q in base["privacy"]]
            privacy[i]["edges"] = [[a, b, w * (1 - 1e-15)] for a, b, w in p["edges"]]
            add(f"tighten-{i}-edges-rel1e-15", json.dumps(rehash(doc_with(privacy=privacy))))
        if p.get("notion") == "uldp":
            privacy = [dict(q) for q in base["privacy"]]
            privacy[i]["sensitive"] = list(inputs)
            add(f"uldp-{i}-all-sensitive", json.dumps(rehash(doc_with(privacy=privacy))))
    # -- a re-hashed identity matrix claiming each notion of the file, and plain ldp
    ident = {"matrix": _identity(k), "outputs": inputs}
    add("identity-rehashed", json.dumps(rehash(doc_with(**ident))), _identity_fact(base["privacy"]))
    for notion in ({"notion": "ldp", "epsilon": 10}, {"notion": "wc_lip", "epsilon": 1},
                   {"notion": "lip", "epsilon": 1, "delta": 0.01, "prior": [1 / k] * k},
                   {"notion": "uldp", "epsilon": 1, "sensitive": inputs[:1]},
                   {"notion": "high_low", "epsilon": 1, "sensitive": inputs[-1:]}):
        expect = _identity_fact([notion]) or ("refuse:verification" if notion["notion"] == "lip" and k > 1 else None)
        add(f"identity-{notion['notion']}", json.dumps(rehash(doc_with(privacy=[notion], **ident))), expect)
    # -- duplicate keys (the last key is the one the digest matches)
    items = list(base.items())

    def with_dup(key: str, first: Any, *, rehash_last: dict | None = None) -> str:
        pairs = Pairs()
        target = rehash_last or base
        for kk, vv in target.items():
            if kk == key:
                pairs.append((kk, first))
            pairs.append((kk, vv))
        return emit(pairs)

    add("dup-matrix-first", with_dup("matrix", _identity(k) if m == k else [[1] + [0] * (m - 1)] * k), "refuse:input")
    ident_doc = rehash(doc_with(**ident))
    pairs = Pairs((kk, vv) for kk, vv in ident_doc.items())
    pairs.insert(0, ("matrix", base["matrix"]))
    add("dup-matrix-last-identity", emit(pairs), "refuse:input")
    add("dup-sha256", with_dup("sha256", "0" * 64), "refuse:input")
    add("dup-inputs", with_dup("inputs", inputs), "refuse:input")
    add("dup-version", with_dup("version", 3), "refuse:input")
    for i, p in enumerate(base["privacy"][:2]):
        if "epsilon" in p:
            privacy = [Pairs(q.items()) for q in base["privacy"]]
            privacy[i].insert(0, ("epsilon", 50))
            add(f"dup-epsilon-{i}-50-first", emit(Pairs((kk, privacy if kk == "privacy" else vv) for kk, vv in items)),
                "refuse:input")
            hashed50 = [dict(q) for q in base["privacy"]]
            hashed50[i]["epsilon"] = 50
            d50 = rehash(doc_with(privacy=hashed50))
            privacy = [Pairs(q.items()) for q in d50["privacy"]]
            privacy[i].insert(0, ("epsilon", p["epsilon"]))
            add(f"dup-epsilon-{i}-50-last", emit(Pairs((kk, privacy if kk == "privacy" else vv)
                                                         for kk, vv in d50.items())), "refuse:input")
    # -- string numbers, re-hashed
    mat = [list(r) for r in base["matrix"]]
    i, j = rng.randrange(k), rng.randrange(m)
    mat[i][j] = repr(float(mat[i][j]))
    add(f"string-matrix-{i}-{j}", json.dumps(rehash(doc_with(matrix=mat))), "refuse:input")
    add("string-matrix-identity-1", json.dumps(rehash(doc_with(matrix=[[("1" if a == b else 0) for b in range(k)]
                                                                         for a in range(k)], outputs=inputs))),
        "refuse:input")
    for i, p in enumerate(base["privacy"]):
        for key in ("epsilon", "delta"):
            if key in p and not isinstance(p[key], str):
                privacy = [dict(q) for q in base["privacy"]]
                privacy[i][key] = str(p[key])
                add(f"string-{i}-{key}", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
        for key in ("prior", "lower", "upper"):
            if key in p:
                privacy = [dict(q) for q in base["privacy"]]
                privacy[i][key] = [str(v) for v in p[key]]
                add(f"string-{i}-{key}", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
        if "priors" in p:
            privacy = [dict(q) for q in base["privacy"]]
            privacy[i]["priors"] = [[str(v) for v in P] for P in p["priors"]]
            add(f"string-{i}-priors", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
        if "matrix" in p or "distance" in p:
            key = "matrix" if "matrix" in p else "distance"
            privacy = [dict(q) for q in base["privacy"]]
            privacy[i][key] = [[v if isinstance(v, str) else str(v) for v in row] for row in p[key]]
            add(f"string-{i}-{key}", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
            # the issue's case: an identity claiming it with string entries
            add(f"string-{i}-{key}-identity", json.dumps(rehash(doc_with(privacy=privacy, **ident))), "refuse:input")
        if "edges" in p:
            privacy = [dict(q) for q in base["privacy"]]
            privacy[i]["edges"] = [[a, b, str(w)] for a, b, w in p["edges"]]
            add(f"string-{i}-edges", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
            add(f"string-{i}-edges-identity", json.dumps(rehash(doc_with(privacy=privacy, **ident))), "refuse:input")
    add("string-version", json.dumps(rehash(doc_with(version=str(version)))), "refuse:input")
    if portable:
        add("string-memoize", json.dumps(rehash(doc_with(memoize="true"))), "refuse:input")
    # -- wrong shapes, re-hashed
    mat = [list(r) for r in base["matrix"]]
    mat[0] = mat[0][:-1]
    add("row-too-short", json.dumps(rehash(doc_with(matrix=mat))), "refuse:input")
    mat = [list(r) for r in base["matrix"]]
    mat[-1] = mat[-1] + [0]
    add("row-too-long", json.dumps(rehash(doc_with(matrix=mat))), "refuse:input")
    add("extra-row", json.dumps(rehash(doc_with(matrix=base["matrix"] + [base["matrix"][0]]))), "refuse:input")
    add("missing-row", json.dumps(rehash(doc_with(matrix=base["matrix"][:-1]))), "refuse:input")
    add("matrix-flat", json.dumps(rehash(doc_with(matrix=[v for r in base["matrix"] for v in r]))), "refuse:input")
    add("matrix-empty", json.dumps(rehash(doc_with(matrix=[]))), "refuse:input")
    add("outputs-one-fewer", json.dumps(rehash(doc_with(outputs=outputs[:-1]))), "refuse:input")
    add("inputs-duplicate", json.dumps(rehash(doc_with(inputs=[inputs[0]] * k))), "refuse:input")
    add("inputs-number", json.dumps(rehash(doc_with(inputs=list(range(k))))), "refuse:input")
    add("privacy-object", json.dumps(rehash(doc_with(privacy=base["privacy"][0]))), "refuse:input")
    add("privacy-empty", json.dumps(rehash(doc_with(privacy=[]))), "refuse")
    add("privacy-item-string", json.dumps(rehash(doc_with(privacy=["ldp"]))), "refuse:input")
    add("row-sum-off", json.dumps(rehash(doc_with(matrix=[[v * 0.5 for v in r] for r in base["matrix"]]))),
        "refuse:input")
    for i, p in enumerate(base["privacy"]):
        for key in ("prior", "lower", "upper"):
            if key in p:
                for tag, val in (("long", p[key] + [0.0]), ("short", p[key][:-1])):
                    privacy = [dict(q) for q in base["privacy"]]
                    privacy[i][key] = val
                    add(f"shape-{i}-{key}-{tag}", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
        if "lower" in p:  # a box longer than the inputs on both sides (the issue's IndexError)
            privacy = [dict(q) for q in base["privacy"]]
            privacy[i]["lower"] = p["lower"] + [0.0, 0.0]
            privacy[i]["upper"] = p["upper"] + [0.1, 0.1]
            add(f"shape-{i}-box-longer", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
        if "priors" in p:
            privacy = [dict(q) for q in base["privacy"]]
            privacy[i]["priors"] = p["priors"] + [[1.0]]
            add(f"shape-{i}-priors-short-prior", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
        for key in ("matrix", "distance"):
            if key in p:
                privacy = [dict(q) for q in base["privacy"]]
                privacy[i][key] = [row + [1] for row in p[key]]
                add(f"shape-{i}-{key}-wide", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
                privacy = [dict(q) for q in base["privacy"]]
                privacy[i][key] = p[key][:-1]
                add(f"shape-{i}-{key}-short", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
        if "sensitive" in p:
            privacy = [dict(q) for q in base["privacy"]]
            privacy[i]["sensitive"] = p["sensitive"] + ["no-such-input"]
            add(f"shape-{i}-sensitive-unknown", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
        if "blocks" in p:
            privacy = [dict(q) for q in base["privacy"]]
            privacy[i]["blocks"] = p["blocks"][:-1]
            add(f"shape-{i}-blocks-not-partition", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
        if "edges" in p:
            privacy = [dict(q) for q in base["privacy"]]
            privacy[i]["edges"] = p["edges"] + [["a", "nowhere", 1]]
            add(f"shape-{i}-edge-unknown", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
            privacy = [dict(q) for q in base["privacy"]]
            privacy[i]["edges"] = [[a, b, -w] for a, b, w in p["edges"]]
            add(f"shape-{i}-edge-negative", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
    # -- rows summing to 1 + 1e-12 exactly (accepted) and just beyond (refused); the claim
    #    (E-LDP with every off-diagonal entry infinite) holds for every channel
    anything = [{"notion": "eldp", "matrix": [[0 if a == b else "inf" for b in range(k)] for a in range(k)]}]
    for tag, off, expect in (("plus-1e-12", "1e-12", "accept"), ("minus-1e-12", "-1e-12", "accept"),
                             ("plus-1.0001e-12", "1.0001e-12", "refuse:input"),
                             ("minus-1.0001e-12", "-1.0001e-12", "refuse:input")):
        mat = [list(r) for r in base["matrix"]]
        jm = max(range(m), key=lambda jj: float(mat[0][jj]))
        new = _dec(mat[0][jm]) + Decimal(off)
        if Decimal(repr(float(new))) != new:
            continue  # not a short decimal: the sum would not be exactly at the tolerance
        mat[0][jm] = float(new)
        if sum(Fraction(repr(float(v))) for v in base["matrix"][0]) != 1:
            expect = None  # the row did not sum to 1 exactly to begin with
        add(f"row-sum-{tag}", json.dumps(rehash(doc_with(matrix=mat, privacy=anything))), expect)
    for i, p in enumerate(base["privacy"]):
        bad_claims = []
        if "prior" in p:
            bad_claims += [("prior-sum-0.9", {"prior": [v * 0.9 for v in p["prior"]]}),
                           ("prior-negative", {"prior": [-p["prior"][0]] + p["prior"][1:]})]
        if "lower" in p:
            bad_claims += [("box-lower-above-upper", {"lower": p["upper"], "upper": p["lower"]}),
                           ("box-empty", {"lower": [0.9] * k, "upper": [1.0] * k})]
        if "matrix" in p:
            E = [list(r) for r in p["matrix"]]
            E[0][0] = 1
            bad_claims.append(("E-diagonal-1", {"matrix": E}))
            E = [list(r) for r in p["matrix"]]
            E[0][-1] = -1
            bad_claims.append(("E-negative", {"matrix": E}))
        if "blocks" in p:
            bad_claims.append(("blocks-overlap", {"blocks": p["blocks"] + [p["blocks"][0][:1]]}))
        if "delta" in p:
            bad_claims.append(("delta-1.5", {"delta": 1.5}))
        for tag, change in bad_claims:
            privacy = [dict(q) for q in base["privacy"]]
            privacy[i].update(change)
            add(f"claim-{i}-{tag}", json.dumps(rehash(doc_with(privacy=privacy))),
                None if tag == "delta-1.5" else "refuse:input")
    # -- huge integers (400 digits) and numbers out of range
    big = Raw("1" + "0" * 400)
    for i, p in enumerate(base["privacy"]):
        for key in ("epsilon", "delta"):
            if key in p:
                privacy = [dict(q) for q in base["privacy"]]
                privacy[i][key] = big
                add(f"huge-{i}-{key}", emit(doc_with(privacy=privacy)), "refuse:input")
                privacy[i][key] = Raw("1e400")
                add(f"overflow-{i}-{key}", emit(doc_with(privacy=privacy)), "refuse:input")
                privacy[i][key] = -1
                add(f"negative-{i}-{key}", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
                if key == "epsilon":
                    privacy[i][key] = 2 ** 60
                    # not representable in RFC 8785 (version 2); a version 1 digest can hold it
                    add(f"beyond-2^53-{i}-{key}", emit(rehash(doc_with(privacy=privacy))),
                        "refuse:input" if portable else None)
                    privacy[i][key] = 1e300
                    add(f"eps-1e300-{i}", json.dumps(rehash(doc_with(privacy=privacy))))
        for key in ("prior", "lower", "upper"):
            if key in p:
                privacy = [dict(q) for q in base["privacy"]]
                privacy[i][key] = [big] + list(p[key][1:])
                add(f"huge-{i}-{key}", emit(doc_with(privacy=privacy)), "refuse:input")
        if "matrix" in p:
            privacy = [dict(q) for q in base["privacy"]]
            E = [list(r) for r in p["matrix"]]
            E[0][-1] = big
            privacy[i]["matrix"] = E
            add(f"huge-{i}-E", emit(doc_with(privacy=privacy)), "refuse:input")
    mat = [list(r) for r in base["matrix"]]
    mat[0][0] = big
    add("huge-matrix", emit(doc_with(matrix=mat)), "refuse:input")
    add("huge-version", emit(doc_with(version=big)), "refuse:input")
    add("huge-5000-digits", emit(doc_with(objective={"value": Raw("9" * 5000)})), "refuse:input")
    # -- deep nesting and non-JSON constants
    add("deep-objective-100000", emit(doc_with(objective=_nested(100_000))), "refuse:input")
    add("deep-privacy-100000", emit(doc_with(privacy=_nested(100_000))), "refuse:input")
    add("deep-extra-100000", emit(doc_with(solver=_nested(100_000))), "refuse:input")
    add("deep-extra-5000-objects", emit(doc_with(solver=Raw('{"a":' * 5000 + "0" + "}" * 5000))), "refuse:input")
    add("deep-extra-20", emit(doc_with(solver=_nested(20))), "accept")
    add("deep-extra-500", emit(doc_with(solver=_nested(500))))
    for tag, lit in (("nan", "NaN"), ("inf", "Infinity"), ("neg-inf", "-Infinity")):
        mat = [list(r) for r in base["matrix"]]
        mat[0][-1] = Raw(lit)
        add(f"literal-{tag}-matrix", emit(doc_with(matrix=mat)), "refuse:input")
        privacy = [dict(q) for q in base["privacy"]]
        privacy[0]["epsilon" if "epsilon" in privacy[0] else "notion"] = Raw(lit)
        add(f"literal-{tag}-claim", emit(doc_with(privacy=privacy)), "refuse:input")
        add(f"literal-{tag}-extra", emit(doc_with(solver={"seconds": Raw(lit)})), "refuse:input")
    # -- missing fields, unknown notions, versions, format, digest
    for key in ("format", "version", "inputs", "outputs", "matrix", "privacy", "objective", "certificate",
                "sha256"):
        add(f"missing-{key}", json.dumps(_without(key)), "refuse:input")
    for notion in ("LDP", "dp", "", "ldp "):
        privacy = [dict(q) for q in base["privacy"]]
        privacy[0]["notion"] = notion
        add(f"notion-{notion.strip() or 'empty'}{'-space' if notion.endswith(' ') else ''}",
            json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
    for i, p in enumerate(base["privacy"]):
        for key in ("epsilon", "prior", "sensitive", "blocks", "matrix"):
            if key in p:
                privacy = [dict(q) for q in base["privacy"]]
                del privacy[i][key]
                add(f"claim-{i}-missing-{key}", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
    privacy = [dict(q) for q in base["privacy"]]
    privacy[0]["unexpected"] = 1
    add("claim-unknown-key", json.dumps(rehash(doc_with(privacy=privacy))))
    if portable:
        v1 = rehash(doc_with(version=1))
        if "memoize" in base:
            add("version-1-memoize", json.dumps(v1), "refuse:input", port=False)
        else:
            add("version-1-rehashed", json.dumps(v1), "accept", port=False)
    else:
        add("version-2-rehashed", json.dumps(rehash(doc_with(version=2))), "accept", port=True)
        same = digest_of(doc_with(version=2)) == base["sha256"]  # short decimals: both digests alike
        add("version-2-not-rehashed", json.dumps(doc_with(version=2)), "accept" if same else "refuse", port=True)
    for tag, ver in (("3", 3), ("0", 0), ("true", True), ("null", None)):
        add(f"version-{tag}", json.dumps(rehash(doc_with(version=ver))), "refuse:input")
    add("version-2.0", emit(doc_with(version=Raw(f"{version}.0"))))
    add("format-other", json.dumps(doc_with(format="mechopt-mechanism2")), "refuse:input")
    add("sha256-upper", json.dumps(doc_with(sha256=base["sha256"].upper())), "refuse")
    add("sha256-one-off", json.dumps(doc_with(sha256=("0" if base["sha256"][0] != "0" else "1") + base["sha256"][1:])),
        "refuse:verification")
    add("sha256-short", json.dumps(doc_with(sha256=base["sha256"][:-1])), "refuse:input")
    add("certificate-empty", json.dumps(doc_with(certificate={})))
    add("certificate-false", json.dumps(doc_with(certificate={**base["certificate"], "verified": False})))
    add("objective-list", json.dumps(doc_with(objective=[])), "refuse:input")
    add("label-renamed-not-rehashed", json.dumps(doc_with(inputs=["Z" + x for x in inputs])), "refuse")
    add("privacy-reordered-rehashed", json.dumps(rehash(doc_with(privacy=base["privacy"][::-1]))),
        "accept" if version == 2 else None)
    # -- memoization
    if portable:
        if memo:
            add("memoize-removed", json.dumps({kk: vv for kk, vv in base.items() if kk != "memoize"}),
                "refuse:verification")
            add("memoize-false-not-rehashed", json.dumps(doc_with(memoize=False)), "refuse:verification")
        else:
            add("memoize-true-not-rehashed", json.dumps(doc_with(memoize=True)), "refuse:verification")
            add("memoize-true-rehashed", json.dumps(rehash(doc_with(memoize=True))), "accept")
    return cases


def big_mutations(name: str, base: dict) -> list[Case]:
    """A few mutations of a file with more than 4096 numbers (its digest takes mechopt's own number writer)."""
    inputs, outputs = list(base["inputs"]), list(base["outputs"])
    out: list[Case] = []

    def add(tag: str, text: str, expect: str | None, portable: bool = True) -> None:
        out.append(Case(f"{name}/{tag}", text, expect, inputs, outputs, portable))

    add("base", json.dumps(base), "accept")
    add("base-indented", json.dumps(base, indent=1), "accept")
    spelled = json.dumps(base).replace("1e-07", "0.0000001").replace("1e-06", "1E-6")
    add("numbers-spelled-otherwise", spelled, "accept")
    mat = [list(r) for r in base["matrix"]]
    mat[3][-1], mat[3][-2] = mat[3][-2], mat[3][-1]
    moved = {**base, "matrix": mat}
    add("entries-swapped", json.dumps(moved), "refuse:verification")
    add("entries-swapped-rehashed", json.dumps(rehash(moved)), None)
    privacy = [dict(p) for p in base["privacy"]]
    E = [list(r) for r in privacy[0]["matrix"]]
    E[0][61] = 1e-7 if E[0][61] != 1e-7 else 1e-6
    privacy[0]["matrix"] = E
    add("E-entry-changed", json.dumps({**base, "privacy": privacy}), "refuse:verification")
    add("E-entry-changed-rehashed", json.dumps(rehash({**base, "privacy": privacy})), "accept")
    add("version-1-rehashed", json.dumps(rehash({**base, "version": 1})), "accept", portable=False)
    return out


def boundary_mutations(name: str, base: dict) -> list[Case]:
    """The matrix of ``base`` claiming each notion exactly at its budget, and just below it (re-hashed).

    For each claim of :func:`boundary_claims`, the budget of :func:`notion_budget` (a
    logarithm of exact rationals, irrational unless it is 0) gives two files: epsilon the
    smallest short decimal above it (``accept``) and the largest below it
    (``refuse:verification``). For E-LDP, every finite entry of E is set that way, and one
    is lowered. A verifier that rounds ``e^epsilon`` the wrong way fails one of the two.
    """
    out: list[Case] = []
    inputs, outputs, k = list(base["inputs"]), list(base["outputs"]), len(base["inputs"])

    def add(tag: str, privacy: list[dict], expect: str) -> None:
        doc = rehash({**base, "privacy": privacy})
        out.append(Case(f"{name}/boundary-{tag}", json.dumps(doc), expect, inputs, outputs, base["version"] == 2))

    for claim in boundary_claims(inputs):
        budget = notion_budget(base["matrix"], claim, inputs)
        if budget is None:
            continue
        tag = claim["notion"] + ("-edges" if "edges" in claim else "-distance" if "distance" in claim else "") + (
            "-box" if "lower" in claim else "-priors" if "priors" in claim else "")
        add(f"{tag}-above", [{**claim, "epsilon": decimal_above(budget)}], "accept")
        if budget > 0:
            add(f"{tag}-below", [{**claim, "epsilon": decimal_below(budget)}], "refuse:verification")
    # E-LDP: each pair at its own exact budget
    Q = base["matrix"]
    E: list[list[Any]] = [[0] * k for _ in range(k)]
    tight = []
    for a in range(k):
        for b in range(k):
            if a != b:
                v = _max_log_ratio((Fraction(repr(float(Q[a][y]))), Fraction(repr(float(Q[b][y]))))
                                   for y in range(len(outputs)))
                E[a][b] = "inf" if v is None else decimal_above(v)
                if v is not None and v > 0:
                    tight.append((a, b, v))
    add("eldp-above", [{"notion": "eldp", "matrix": E}], "accept")
    if tight:
        a, b, v = tight[len(tight) // 2]
        lowered = [list(r) for r in E]
        lowered[a][b] = decimal_below(v)
        add("eldp-below", [{"notion": "eldp", "matrix": lowered}], "refuse:verification")
    return out


def family_mutations(name: str, base: dict, rng: random.Random) -> list[Case]:
    """The seeded mutations of a family mechanism file."""
    cases: list[Case] = []
    inputs = list(base["inputs"])
    k = len(inputs)
    fam = base["family"]

    def add(tag: str, text: str, expect: str | None = None) -> None:
        cases.append(Case(f"{name}/{tag}", text, expect, inputs, [], True))

    doc_with = functools.partial(_with, base)
    _without = functools.partial(_without_key, base)

    def fam_with(**changes) -> dict:
        f = dict(fam)
        f.update(changes)
        return f

    add("base", json.dumps(base), "accept")
    add("base-indented", json.dumps(base, indent=1), "accept")
    add("base-extra-field", json.dumps(doc_with(solver={"seconds": 0.5})), "accept")
    r = fam["ratio"]
    subset = fam["kind"] == "subset_selection"
    for tag, nr in (("1e300", 1e300), ("next-up", math.nextafter(float(r), math.inf)), ("times-1.001", r * 1.001),
                    ("one", 1), ("2", 2.0), ("e", math.e)):
        expect = None
        if tag in ("1e300", "times-1.001"):
            expect = "refuse:verification"
        if tag == "one":
            expect = "accept"
        ldp = [p["epsilon"] for p in base["privacy"] if p["notion"] == "ldp"]
        if len(base["privacy"]) == 1 and len(ldp) == 1:
            # epsilon-LDP of subset selection with some 0 < d < k, and of the Hadamard response
            # with every input sensitive, is exactly ratio <= e^epsilon (docs/families.md)
            if (any(0 < c["d"] < k for c in fam["mixture"]) if subset else len(fam["sensitive"]) == k):
                with localcontext() as ctx:
                    ctx.prec = 60
                    bound = _dec(ldp[0]).exp()
                expect = "accept" if _dec(nr) <= bound else "refuse:verification"
        add(f"ratio-{tag}-rehashed", json.dumps(rehash(doc_with(family=fam_with(ratio=nr)))), expect)
        add(f"ratio-{tag}-not-rehashed", json.dumps(doc_with(family=fam_with(ratio=nr))),
            "refuse" if nr != r else "accept")
    for tag, raw, expect in (("below-1", 0.5, "refuse:input"), ("negative", -2, "refuse:input"),
                             ("string", str(r), "refuse:input"), ("zero", 0, "refuse:input"),
                             ("bool", True, "refuse:input"), ("null", None, "refuse:input")):
        add(f"ratio-{tag}", json.dumps(rehash(doc_with(family=fam_with(ratio=raw)))), expect)
    add("ratio-huge-int", emit(doc_with(family=fam_with(ratio=Raw("1" + "0" * 400)))), "refuse:input")
    add("ratio-nan", emit(doc_with(family=fam_with(ratio=Raw("NaN")))), "refuse:input")
    add("ratio-infinity", emit(doc_with(family=fam_with(ratio=Raw("Infinity")))), "refuse:input")
    if subset:
        mix = fam["mixture"]
        for tag, nm, expect in (
                ("d0", [{"d": 0, "weight": 1}], "accept"),
                ("dk", [{"d": k, "weight": 1}], "accept"),
                ("d1", [{"d": 1, "weight": 1}], None),
                ("d-k-plus-1", [{"d": k + 1, "weight": 1}], "refuse:input"),
                ("d-negative", [{"d": -1, "weight": 1}], "refuse:input"),
                ("d-string", [{"d": "1", "weight": 1}], "refuse:input"),
                ("d-float", [{"d": 1.5, "weight": 1}], "refuse:input"),
                ("d-duplicate", [{"d": 1, "weight": 0.5}, {"d": 1, "weight": 0.5}], "refuse:input"),
                ("weights-sum-0.9", [{"d": 1, "weight": 0.9}], "refuse:input"),
                ("weights-negative", [{"d": 1, "weight": 1.5}, {"d": 2, "weight": -0.5}], "refuse:input"),
                ("weight-string", [{"d": 1, "weight": "1"}], "refuse:input"),
                ("weights-split", [{"d": 1, "weight": 0.5}, {"d": 2, "weight": 0.5}], None),
                ("weights-tiny-off", [{"d": c["d"], "weight": c["weight"] * (1 + 1e-13)} for c in mix], None),
                ("mixture-empty", [], "refuse:input"),
                ("mixture-extra-key", [{"d": 1, "weight": 1, "x": 0}], "refuse:input"),
                ("mixture-missing-weight", [{"d": 1}], "refuse:input")):
            add(f"mixture-{tag}", json.dumps(rehash(doc_with(family=fam_with(mixture=nm)))), expect)
        add("mixture-d-1.0", emit(rehash(doc_with(family=fam_with(mixture=[{"d": Raw("1.0"), "weight": 1}])))))
        add("mixture-changed-not-rehashed", json.dumps(doc_with(family=fam_with(mixture=[{"d": 0, "weight": 1}]))),
            "refuse")
        dup_pairs = Pairs([("kind", fam["kind"]), ("ratio", 1e300), ("ratio", fam["ratio"]), ("mixture", mix)])
        add("dup-ratio", emit(doc_with(family=dup_pairs)), "refuse:input")
    else:
        sens = fam["sensitive"]
        for tag, ns, expect in (("none", [], None), ("all", inputs, None), ("unknown", sens + ["nope"], "refuse:input"),
                                ("duplicate", sens + sens[:1], "refuse:input"), ("not-list", sens[0], "refuse:input"),
                                ("number", [0], "refuse:input")):
            add(f"sensitive-{tag}", json.dumps(rehash(doc_with(family=fam_with(sensitive=ns)))), expect)
        dup_pairs = Pairs([("kind", fam["kind"]), ("ratio", 1e300), ("ratio", fam["ratio"]), ("sensitive", sens)])
        add("dup-ratio", emit(doc_with(family=dup_pairs)), "refuse:input")
    for tag, kind in (("unknown", "unary_encoding"), ("empty", ""), ("number", 3)):
        add(f"kind-{tag}", json.dumps(rehash(doc_with(family=fam_with(kind=kind)))), "refuse:input")
    add("family-list", json.dumps(rehash(doc_with(family=[fam]))), "refuse:input")
    add("family-with-matrix", json.dumps(rehash(doc_with(outputs=["o"], matrix=[[1]] * k))), "refuse:input")
    # claims tightened (re-hashed), other notions claimed of the same family
    for i, p in enumerate(base["privacy"]):
        if "epsilon" in p:
            for tag, ne in (("rel1e-15", p["epsilon"] * (1 - 1e-15)), ("half", p["epsilon"] / 2), ("zero", 0)):
                privacy = [dict(q) for q in base["privacy"]]
                privacy[i]["epsilon"] = ne
                expect = "refuse:verification" if tag in ("half", "zero") and r > 1.0001 else None
                add(f"tighten-{i}-{tag}", json.dumps(rehash(doc_with(privacy=privacy))), expect)
            privacy = [dict(q) for q in base["privacy"]]
            privacy[i]["epsilon"] = str(p["epsilon"])
            add(f"string-{i}-epsilon", json.dumps(rehash(doc_with(privacy=privacy))), "refuse:input")
            privacy[i]["epsilon"] = Raw("1" + "0" * 400)
            add(f"huge-{i}-epsilon", emit(doc_with(privacy=privacy)), "refuse:input")
            dup = [Pairs(q.items()) for q in base["privacy"]]
            dup[i].insert(0, ("epsilon", 50))
            add(f"dup-epsilon-{i}", emit(doc_with(privacy=dup)), "refuse:input")
    for notion in ({"notion": "lip", "epsilon": 1.0, "prior": [1 / k] * k},
                   {"notion": "lip", "epsilon": 0.01, "prior": [1 / k] * k},
                   {"notion": "lip", "epsilon": 1.0, "delta": 0.1, "prior": [1 / k] * k},
                   {"notion": "bp_lip", "epsilon": 1.0, "lower": [0.0] * k, "upper": [1.0] * k},
                   {"notion": "bp_lip", "epsilon": 1.0, "lower": [0.0] * (k + 2), "upper": [1.0] * (k + 2)},
                   {"notion": "uldp", "epsilon": 1.0, "sensitive": inputs[:1]},
                   {"notion": "block", "epsilon": 1.0, "blocks": [inputs]},
                   {"notion": "eldp", "matrix": [[0 if a == b else "inf" for b in range(k)] for a in range(k)]},
                   {"notion": "metric", "epsilon": 0.1, "distance": [[abs(a - b) for b in range(k)] for a in range(k)]},
                   {"notion": "wc_lip", "epsilon": 1.0}, {"notion": "ldp", "epsilon": 0.5},
                   {"notion": "nope", "epsilon": 1.0}):
        tag = "-".join(str(notion.get(x, "")) for x in ("notion", "epsilon")) + ("-delta" if "delta" in notion else "")
        if notion["notion"] == "bp_lip" and len(notion["lower"]) > k:
            tag += "-box-longer"
        expect = "refuse:input" if notion["notion"] == "nope" or tag.endswith("box-longer") else None
        add(f"claim-{tag}", json.dumps(rehash(doc_with(privacy=[notion]))), expect)
    for key in ("format", "version", "inputs", "family", "privacy", "objective", "certificate", "sha256"):
        add(f"missing-{key}", json.dumps(_without(key)), "refuse:input")
    add("version-1", json.dumps(rehash(doc_with(version=1))), "refuse:input")
    add("version-3", json.dumps(rehash(doc_with(version=3))), "refuse:input")
    add("inputs-added-not-rehashed", json.dumps(doc_with(inputs=inputs + ["new"])), "refuse")
    add("inputs-added-rehashed", json.dumps(rehash(doc_with(inputs=inputs + ["new"]))))
    add("inputs-duplicate", json.dumps(rehash(doc_with(inputs=[inputs[0]] * k))), "refuse:input")
    add("deep-family-100000", emit(doc_with(family=_nested(100_000))), "refuse:input")
    add("deep-extra-100000", emit(doc_with(solver=_nested(100_000))), "refuse:input")
    add("literal-nan-extra", emit(doc_with(solver=Raw("NaN"))), "refuse:input")
    add("sha256-one-off", json.dumps(doc_with(sha256=("0" if base["sha256"][0] != "0" else "1") + base["sha256"][1:])),
        "refuse:verification")
    # the family digest covers no memoize flag: one added must not pass unseen
    add("memoize-true-rehashed", json.dumps(rehash(doc_with(memoize=True))), "refuse:input")
    return cases


def category(case: Case) -> str:
    """The kind of mutation, without the positions and values (``bitflip---b-rehashed``)."""
    return re.sub(r"\d", "", case.name.split("/", 1)[1])


def cases(seed: int = 20, *, solve: bool = True, target: int | None = None) -> list[Case]:
    """Every base file and its seeded mutations (about 4 000 texts).

    With ``target``, a seeded stratified selection of about that many: every base file
    unchanged, and from each category of mutation (:func:`category`) its share, at least
    two (or all it has).
    """
    rng = random.Random(seed)
    out: list[Case] = []
    for name, doc in base_documents(solve=solve):
        if "family" in doc:
            out += family_mutations(name, doc, rng)
        elif len(doc["inputs"]) * len(doc["outputs"]) > 4096:
            out += big_mutations(name, doc)
        else:
            out += matrix_mutations(name, doc, rng) + boundary_mutations(name, doc)
    if target is None or target >= len(out):
        return out
    groups: dict[str, list[int]] = {}
    for i, c in enumerate(out):
        groups.setdefault(category(c), []).append(i)
    keep: set[int] = {i for i, c in enumerate(out) if c.name.endswith("/base")}
    share = target / len(out)
    pick = random.Random(seed + 1)
    for members in groups.values():
        n = min(len(members), max(2, round(share * len(members))))
        keep.update(pick.sample(members, n))
    return [out[i] for i in sorted(keep)]


# ------------------------------------------------------------------ consumers


def _verdict_of(err: BaseException, strip: Iterable[str] = ()) -> str:
    from mechopt._errors import InputError, VerificationError

    if isinstance(err, InputError):
        f = err.field or ""
        for s in strip:
            if f.startswith(s + ": "):
                f = f[len(s) + 2:]
            elif f == s:
                f = "<file>"
        return f"refuse:input:{f}"
    if isinstance(err, VerificationError):
        return "refuse:verification"
    return f"crash:{type(err).__name__}: {str(err)[:120]}"


def _words(n: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.getrandbits(32) for _ in range(n)]


def _client(path: str):
    """The Python client's document, or a family's (document, family), after every check it makes."""
    from mechopt._errors import InputError
    from mechopt.client import Sampler, load_document

    try:
        doc = load_document(path)
    except InputError as err:
        field_ = err.field or ""
        if not (field_ == "family" or field_.endswith(": family")):  # a loader that does not read families
            raise
        doc = None
    if doc is None or (isinstance(doc, dict) and "family" in doc):
        from mechopt.families import FamilySampler, load_family_document

        doc, fam = load_family_document(path)
        FamilySampler(fam, seed=0)
        return ("family", doc, fam)
    Sampler(doc, seed=0)
    return ("matrix", doc, None)


def python_verdict(consumer: str, path: str, workdir: str, input_label: str = "", output_label: str = "") -> str:
    """One Python consumer's verdict on the file at ``path``."""
    strip = (path,)
    try:
        if consumer == "verify":
            from mechopt.cli import main

            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(["verify", path])
            if code == 0:
                return "accept"
            if code == 1:
                return "refuse:verification"
            if code == 2:
                msg = err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else ""
                msg = msg.removeprefix("mechopt: ").removeprefix(path + ": ")
                return f"refuse:input:{msg.split(': ')[0] if ': ' in msg else msg[:40]}"
            return f"crash:exit {code}: {err.getvalue().strip()[:120]}"
        if consumer == "client":
            _client(path)
            return "accept"
        if consumer == "privatize":
            from mechopt.runtime._commands import privatize_file

            inp = os.path.join(workdir, "in.txt")
            Path(inp).write_text(f"{input_label}\n")
            strip = (path, inp)
            privatize_file(path, inp, os.path.join(workdir, "out.txt"), seed=1)
            return "accept"
        if consumer == "estimate":
            from mechopt._identifiability import NotIdentifiableError
            from mechopt.runtime._commands import estimate_file

            rep = os.path.join(workdir, "reports.txt")
            Path(rep).write_text(f"{output_label}\n")
            strip = (path, rep)
            try:
                estimate_file(path, rep, method="inversion")
            except NotIdentifiableError:
                return "accept"  # the file was read and trusted; the question cannot be answered
            return "accept"
        raise ValueError(f"unknown consumer {consumer!r}")
    except RecursionError:
        return "crash:RecursionError"
    except Exception as err:  # noqa: BLE001 - every exception is a verdict here
        v = _verdict_of(err, strip)
        # a label the command refuses (not an input or output of the mechanism) came after the
        # mechanism file was read and trusted
        if v.startswith("refuse:input:") and consumer in ("privatize", "estimate"):
            f = getattr(err, "field", "")
            if f.startswith(os.path.join(workdir, "in.txt")) or f.startswith(os.path.join(workdir, "reports.txt")):
                return "accept"
        return v


def cli_verdict(command: str, path: str, workdir: str, input_label: str = "", output_label: str = "") -> str:
    """``mechopt privatize`` or ``mechopt estimate`` through the CLI's ``main`` (exit codes, messages).

    Exit 0 (and 3, not identifiable) is ``accept``; exit 2 naming the input or reports file
    (a label, not the mechanism) is ``accept`` too; 1 and 2 are refusals, anything else —
    or a traceback — a crash.
    """
    from mechopt.cli import main

    data = os.path.join(workdir, "cli-data.txt")
    Path(data).write_text(f"{input_label if command == 'privatize' else output_label}\n")
    argv = ([command, path, "--input", data, "--output", os.path.join(workdir, "cli-out.txt"), "--seed", "1"]
            if command == "privatize" else [command, path, "--reports", data, "--method", "inversion"])
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except BaseException as exc:  # noqa: BLE001 - a traceback out of main is the finding
        return f"crash:{type(exc).__name__}: {str(exc)[:120]}"
    msg = err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else ""
    if code in (0, 3) or (code == 2 and data in msg):
        return "accept"
    if code == 1:
        return "refuse:verification"
    if code == 2:
        msg = msg.removeprefix("mechopt: ").removeprefix(path + ": ")
        return f"refuse:input:{msg.split(': ')[0] if ': ' in msg else msg[:40]}"
    return f"crash:exit {code}: {msg[:120]}"


def _labels_of(text: str) -> tuple[list[str], list[str]]:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return [], []
    if not isinstance(doc, dict):
        return [], []
    inputs = doc.get("inputs") if isinstance(doc.get("inputs"), list) else []
    outputs = doc.get("outputs") if isinstance(doc.get("outputs"), list) else []
    return [str(x) for x in inputs], [str(y) for y in outputs]


def _report_label(case: Case) -> str:
    if case.outputs:
        return case.outputs[0]
    return "{0}"


def run_js(texts: list[str], samples: dict[int, dict] | None = None, *, timeout: float = 120) -> list[dict]:
    """Run ``clients/js/tools/verdicts.mjs`` once on every text (one ``node`` process).

    ``samples`` maps an index to ``{"inputs": [...], "words": [...]}``: when that file is
    accepted, the script also reports the outputs its sampler draws from those words.
    Returns one dict per text: ``verdict`` and, for a sample, ``reports`` and ``used``.
    """
    if NODE is None:
        raise RuntimeError("node is not installed")
    payload = json.dumps({"texts": texts, "samples": {str(i): s for i, s in (samples or {}).items()}})
    proc = subprocess.run([NODE, str(JS_SCRIPT)], input=payload, capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT / "clients" / "js")
    if proc.returncode != 0:
        raise RuntimeError(f"verdicts.mjs failed ({proc.returncode}): {proc.stderr[-2000:]}")
    out = json.loads(proc.stdout)
    if len(out) != len(texts):
        raise RuntimeError(f"verdicts.mjs returned {len(out)} verdicts for {len(texts)} files")
    return out


def verdicts(texts: list[str], consumers: Iterable[str] = CONSUMERS) -> dict[str, list[str]]:
    """Every consumer's verdict on every text: ``{consumer: [verdict per text]}``.

    The reusable entry point (the fuzz driver calls it on exported files). Labels for
    ``privatize`` and ``estimate`` are read from the text when it parses (the first input
    and the first output; ``"{0}"`` for a family).
    """
    cs = [Case(f"text[{i}]", t, None, *_labels_of(t)) for i, t in enumerate(texts)]
    return run_cases(cs, consumers)[0]


def disagreements(texts: list[str], consumers: Iterable[str] = CONSUMERS) -> list["Disagreement"]:
    """:func:`verdicts` on plain texts, compared with ``verify``'s (no independent facts): empty when all agree."""
    cs = [Case(f"text[{i}]", t, None, *_labels_of(t)) for i, t in enumerate(texts)]
    vs, samples = run_cases(cs, consumers, sample=True)
    return compare(cs, vs, samples)


def run_cases(cs: list[Case], consumers: Iterable[str] = CONSUMERS, *,
              sample: bool = False) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """Verdicts of every consumer on every case; with ``sample``, the sampler comparison too.

    Returns ``(verdicts, samples)``: ``samples`` maps a case name to
    ``{"python": ..., "js": ..., "used": (python, js)}`` for the files both clients accepted.
    """
    consumers = list(consumers)
    out: dict[str, list[str]] = {c: [] for c in consumers}
    requests: dict[int, dict] = {}
    py_reports: dict[int, Any] = {}
    with tempfile.TemporaryDirectory(prefix="mechopt-diff-") as tmp:
        path = os.path.join(tmp, "mechanism.json")
        for i, case in enumerate(cs):
            Path(path).write_text(case.text, encoding="utf-8")
            for c in consumers:
                if c == "js":
                    continue
                out[c].append(python_verdict(c, path, tmp, case.inputs[0] if case.inputs else "",
                                             _report_label(case)))
            if sample and "client" in consumers and out["client"][-1] == "accept":
                try:
                    req, py_reports[i] = python_sample(path, _words(4000, i))
                except Exception as err:  # noqa: BLE001 - e.g. the word stream ran out: JS must fail alike
                    kind, doc, _ = _client(path)
                    req = {"inputs": [doc["inputs"][j % len(doc["inputs"])] for j in range(40)],
                           "words": _words(4000, i)}
                    py_reports[i] = {"error": _verdict_of(err)}
                requests[i] = req
    samples: dict[str, Any] = {}
    if "js" in consumers:
        js = run_js([c.text for c in cs], requests if sample else None)
        out["js"] = [r["verdict"] for r in js]
        for i, py in py_reports.items():
            r = js[i]
            samples[cs[i].name] = {"python": py, "js": r.get("reports", r.get("sample_error")),
                                   "used_js": r.get("used")}
    return out, samples


def python_sample(path: str, words: list[int], n: int = 40) -> tuple[dict, dict]:
    """The Python client's reports for ``n`` inputs (cycling through the file's) drawn from ``words``.

    Returns the request (``inputs``, ``words``) for the JavaScript client and the Python
    result (``reports``, ``used``; or ``skipped`` with the reason).
    """
    import inspect

    kind, doc, fam = _client(path)
    req = {"inputs": [doc["inputs"][j % len(doc["inputs"])] for j in range(n)], "words": words}
    if kind == "matrix":
        from mechopt.client import Sampler

        s = Sampler(doc, words=words)
        return req, {"reports": s.sample_many(req["inputs"]), "used": s.words_used}
    from mechopt.families import FamilySampler

    if "words" not in inspect.signature(FamilySampler).parameters:
        return req, {"skipped": "mechopt.families.FamilySampler takes no word stream"}
    s = FamilySampler(fam, words=words)
    index = {x: i for i, x in enumerate(doc["inputs"])}
    reports = [s.sample_index(index[x]) for x in req["inputs"]]
    return req, {"reports": reports, "used": getattr(s, "words_used", None)}


# ------------------------------------------------------------------ comparison


def _kind(v: str) -> str:
    if v == "accept":
        return "accept"
    if v.startswith("refuse:input"):
        return "refuse:input"
    if v.startswith("refuse:verification"):
        return "refuse:verification"
    return "crash"


@dataclass
class Disagreement:
    case: str
    consumer: str
    kind: str  # "verdict" (accept vs refuse), "class" (input vs verification), "crash", "fact", "reports"
    detail: str

    def line(self) -> str:
        return (f"{self.kind:8s} {self.consumer:9s} {self.case}: {self.detail}  "
                f"[python tests/_differential.py '{self.case}']")


def compare(cs: list[Case], vs: dict[str, list[str]], samples: dict[str, Any] | None = None) -> list[Disagreement]:
    """Every disagreement: with ``verify`` (accept/refuse, refusal class), with the independent fact, crashes, reports."""
    found: list[Disagreement] = []
    for i, case in enumerate(cs):
        ref = vs["verify"][i] if "verify" in vs else None
        for c, col in vs.items():
            v = col[i]
            kv = _kind(v)
            if kv == "crash":
                found.append(Disagreement(case.name, c, "crash", v))
                continue
            if c == "js" and not case.portable:
                if kv != "refuse:input":  # docs/formats.md: the JS client refuses version 1, naming `version`
                    found.append(Disagreement(case.name, c, "verdict", f"{v} on a version 1 file (must refuse it)"))
                continue
            if ref is not None and c != "verify" and _kind(ref) != "crash":
                kr = _kind(ref)
                if (kv == "accept") != (kr == "accept"):
                    found.append(Disagreement(case.name, c, "verdict", f"{v} where verify says {ref}"))
                    continue
                if kv != kr:
                    found.append(Disagreement(case.name, c, "class", f"{v} where verify says {ref}"))
            if case.expect is not None and not (c == "js" and not case.portable):
                if not (kv == case.expect or (case.expect == "refuse" and kv.startswith("refuse"))):
                    found.append(Disagreement(case.name, c, "fact", f"{v}, expected {case.expect}"))
    names = {c.name: i for i, c in enumerate(cs)}
    for name, s in (samples or {}).items():
        py, js = s["python"], s["js"]
        if "skipped" in py or ("js" in vs and vs["js"][names[name]] != "accept"):
            continue  # a JS refusal is a verdict disagreement (or a version 1 file), counted above
        if "error" in py:
            if isinstance(js, list):
                found.append(Disagreement(name, "js", "reports", f"python sampler failed ({py['error']}), js "
                                                                 f"reported {str(js)[:80]}"))
            continue
        if not isinstance(js, list) or js != py["reports"]:
            found.append(Disagreement(name, "js", "reports", f"python {str(py.get('reports'))[:80]} js {str(js)[:80]}"))
        elif py.get("used") is not None and s.get("used_js") is not None and py["used"] != s["used_js"]:
            found.append(Disagreement(name, "js", "reports", f"words used: python {py['used']} js {s['used_js']}"))
    return found


def summary(found: list[Disagreement]) -> str:
    """Counts by kind and consumer, then one line per disagreement."""
    from collections import Counter

    counts = Counter((d.kind, d.consumer) for d in found)
    head = ", ".join(f"{k}/{c}: {n}" for (k, c), n in sorted(counts.items()))
    return f"{len(found)} disagreements ({head or 'none'})\n" + "\n".join(d.line() for d in found)


# ------------------------------------------------------------------ reproducer


def _main(argv: list[str]) -> int:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.path.insert(0, str(ROOT))
    wanted = argv[1:] or []
    cs = [c for c in cases() if not wanted or c.name in wanted or any(c.name.startswith(w + "/") for w in wanted)]
    if not cs:
        print(f"no case named {wanted!r}", file=sys.stderr)
        return 2
    consumers = CONSUMERS if NODE else PY_CONSUMERS
    vs, samples = run_cases(cs, consumers, sample=True)
    for i, c in enumerate(cs):
        target = Path(tempfile.gettempdir()) / ("mechopt-diff-" + c.name.replace("/", "--") + ".json")
        target.write_text(c.text, encoding="utf-8")
        print(f"{c.name} (expect {c.expect}; file {target})")
        for k in vs:
            print(f"  {k:9s} {vs[k][i]}")
    found = compare(cs, vs, samples)
    print(summary(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
