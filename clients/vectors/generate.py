"""Write the client test vectors: mechanism files with their hashes, exact-sampler outputs.

Run from the repository root: ``python clients/vectors/generate.py``. The word stream
and the hand-written files are fixed; the two ``solved_*`` files are whatever the
solver writes today (they test the Python writer). ``tests/test_vectors.py`` recomputes
every expected value in the repository's files independently.

Every client (``mechopt.client`` in Python, ``clients/js``) must pass these vectors:

* ``manifest.json`` — for each file in ``mechanisms/``: ``valid`` and, when valid, the
  RFC 8785 canonical text of the hashed payload and its sha256; when invalid, the
  ``error``: ``kind`` (``"verification"`` for a digest mismatch, ``"input"`` for a
  malformed file) and the ``field`` named (a prefix). ``portable: false`` marks a
  version 1 file, whose digest only Python can recompute; other clients must refuse
  it naming the field ``version``.
* ``sampling.json`` — a stream of 32-bit words and, per case, a sequence of inputs,
  the integer weights of each row, the outputs the exact sampler must report when fed
  the stream from its first word, and how many words it reads.
* ``numbers.json`` — RFC 8785 Appendix B: IEEE-754 bit patterns and their canonical
  text (copied from the RFC, not computed).
* ``families.json`` — family mechanism files (``families/``, docs/families.md): each
  with its verdict (valid, with the RFC 8785 text of ``{inputs, family, privacy}`` and
  its sha256, or the ``error`` ``kind`` and ``field``), the reports the family sampler
  must give for a sequence of inputs reading its own word stream from the first word,
  and ``claims``: random families and claims with the verdict of mechopt's exact family
  verifier (``ok``, ``fail``, or ``input`` for a claim it cannot check).

The expected hashes come from the ``rfc8785`` package and :mod:`hashlib`; the expected
samples from the reference sampler below, written from ``docs/formats.md`` with
:mod:`decimal` and a linear scan — deliberately not the code of ``mechopt.client``.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import sys
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path

import rfc8785

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WORD_SEED = 20241123
N_WORDS = 6000


# ------------------------------------------------------------------ reference sampler


def reference_weights(row: list) -> list[int]:
    """Smallest integers proportional to the row's exact decimals (docs/formats.md, step 1)."""
    with localcontext() as ctx:
        ctx.prec = 5000
        decs = [Decimal(repr(v)) if isinstance(v, float) else Decimal(int(v)) for v in row]
        scale = max(0, max(-d.as_tuple().exponent for d in decs))
        ints = [int(d.scaleb(scale)) for d in decs]
    g = math.gcd(*ints)
    return [i // g for i in ints]


def reference_uniform(total: int, words: list[int], pos: int) -> tuple[int, int]:
    """U(total) of docs/families.md (the matrix sampler's step 3) and the new stream position."""
    bits = (total - 1).bit_length()
    n = -(-bits // 32)
    while True:
        r = 0
        for _ in range(n):
            r = r * 2**32 + words[pos]
            pos += 1
        r %= 2**bits
        if r < total:
            return r, pos


def reference_draw(weights: list[int], words: list[int], pos: int) -> tuple[int, int]:
    """One report (output index) and the new stream position (steps 2-4)."""
    r, pos = reference_uniform(sum(weights), words, pos)
    acc = 0
    for j, w in enumerate(weights):
        acc += w
        if r < acc:
            return j, pos
    raise AssertionError("unreachable")


# ------------------------------------------------------------------------ documents


def digest(doc: dict) -> tuple[str, str]:
    payload = {k: doc[k] for k in ("inputs", "outputs", "matrix", "privacy")}
    if "memoize" in doc:
        payload["memoize"] = doc["memoize"]
    text = rfc8785.dumps(payload)
    return text.decode("utf-8"), hashlib.sha256(text).hexdigest()


def digest_v1(doc: dict) -> str:
    payload = {k: doc[k] for k in ("inputs", "outputs", "matrix", "privacy")}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def base(inputs, outputs, matrix, privacy, *, version=2, **extra) -> dict:
    doc = {"format": "mechopt-mechanism", "version": version, "inputs": inputs, "outputs": outputs,
           "matrix": matrix, "privacy": privacy, "objective": {"kind": "none", "value": None, "bound": None},
           "certificate": {"verified": True, "method": "exact", "checks": []}, **extra}
    doc["sha256"] = digest(doc)[1] if version == 2 else digest_v1(doc)
    return doc


def documents() -> dict[str, dict]:
    """name -> document (valid ones first)."""
    ln2 = math.log(2.0)
    docs: dict[str, dict] = {}
    docs["krr3_v2"] = base(["a", "b", "c"], ["a", "b", "c"],
                           [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]],
                           [{"notion": "ldp", "epsilon": ln2}])
    # numbers whose text differs between Python's json.dumps and JavaScript / RFC 8785
    docs["numbers_v2"] = base(
        ["café", "😀", "ｱ", "a\"b\\c\n\u001f", "x"], ["y0", "y1", "y2"],
        [[1e-05, 0.49999, 0.5],
         [1.0, 0, 0],
         [0.1, 0.2, 0.7],
         [5e-324, 0.5, 0.5],
         [0.30000000000000004, 0.19999999999999996, 0.5]],
        [{"notion": "ldp", "epsilon": 1e21, "\u00e9": 1, "\U0001F600": 2, "\uff61": 3, "a": [1e-07, 1.5, -0.0]},
         {"notion": "eldp", "matrix": [[0, "inf"], ["inf", 0]]}])
    docs["rejection_v2"] = base(["t5", "t625", "t1", "t2"], ["lo", "hi"],
                                [[0.2, 0.8], [0.0016, 0.9984], [1.0, 0.0], [0.5, 0.5]], [])
    docs["memoized_v2"] = base(["no", "yes"], ["n", "y"], [[0.75, 0.25], [0.25, 0.75]],
                               [{"notion": "ldp", "epsilon": math.log(3.0)}], memoize=True)
    docs["v1_krr3"] = base(["a", "b", "c"], ["a", "b", "c"],
                           [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]],
                           [{"notion": "ldp", "epsilon": ln2}], version=1)
    # written by mechopt itself (the Python writer)
    import mechopt

    for name, problem in (("solved_quickstart_v2", "problems/quickstart.yaml"),
                          ("solved_web_high_low_v2", "problems/web_high_low_002.yaml")):
        result = mechopt.solve(str(ROOT / problem), quiet=True)
        assert result.ok, result.message
        doc = result.mechanism.to_dict()
        doc.pop("solver", None)  # timings: keep the vectors deterministic
        doc["certificate"] = {k: v for k, v in doc["certificate"].items() if "time" not in k}
        docs[name] = doc
    return docs


def invalid_documents(valid: dict[str, dict]) -> dict[str, tuple[dict, dict]]:
    """name -> (document, expected error)."""
    krr = valid["krr3_v2"]
    out: dict[str, tuple[dict, dict]] = {}

    def copy(doc):
        return json.loads(json.dumps(doc))

    d = copy(krr)
    d["matrix"][0] = [0.5, 0.3, 0.2]  # still sums to 1: only the digest can tell
    out["tampered_matrix"] = (d, {"kind": "verification", "field": "sha256"})
    d = copy(krr)
    d["privacy"][0]["epsilon"] = 0.1
    out["tampered_privacy"] = (d, {"kind": "verification", "field": "sha256"})
    d = copy(valid["memoized_v2"])
    del d["memoize"]  # fresh responses instead of permanent ones: caught by the digest
    out["tampered_memoize"] = (d, {"kind": "verification", "field": "sha256"})
    d = copy(krr)
    d["version"] = 3
    out["version3"] = (d, {"kind": "input", "field": "version"})
    d = copy(krr)
    d["matrix"][0] = [0.5, 0.25, 0.250000000002]
    out["row_sum"] = (d, {"kind": "input", "field": "matrix[0]"})
    d = copy(krr)
    d["matrix"][1] = [0.75, -0.25, 0.5]
    out["negative"] = (d, {"kind": "input", "field": "matrix[1][1]"})
    d = copy(krr)
    d["inputs"] = ["a", "a", "c"]
    out["duplicate_label"] = (d, {"kind": "input", "field": "inputs[1]"})
    d = copy(valid["memoized_v2"])
    d["memoize"] = "yes"
    out["memoize_not_bool"] = (d, {"kind": "input", "field": "memoize"})
    d = copy(krr)
    for key in ("outputs", "matrix"):
        del d[key]
    d["family"] = {"name": "subset_selection", "d": 1}
    d["sha256"] = hashlib.sha256(rfc8785.dumps({k: d[k] for k in ("inputs", "family", "privacy")})).hexdigest()
    out["family_v2"] = (d, {"kind": "input", "field": "family"})
    d = copy(krr)
    del d["sha256"]
    out["missing_sha256"] = (d, {"kind": "input", "field": "sha256"})
    return out


def sampling_cases(docs: dict[str, dict], words: list[int]) -> list[dict]:
    plans = {
        "krr3_v2": ["a", "b", "c"] * 100,
        "rejection_v2": ["t5", "t625", "t1", "t2"] * 60,
        "numbers_v2": ["café", "😀", "ｱ", "a\"b\\c\n\u001f", "x"] * 6,
        "solved_web_high_low_v2": docs["solved_web_high_low_v2"]["inputs"] * 40,
        "memoized_v2": ["no", "yes"] * 20,
    }
    cases = []
    for name, inputs in plans.items():
        doc = docs[name]
        weights = [reference_weights(row) for row in doc["matrix"]]
        index = {x: i for i, x in enumerate(doc["inputs"])}
        pos, outputs = 0, []
        for x in inputs:
            j, pos = reference_draw(weights[index[x]], words, pos)
            outputs.append(doc["outputs"][j])
        case = {"mechanism": f"mechanisms/{name}.json", "inputs": inputs,
                "weights": [[str(w) for w in row] for row in weights],
                "outputs": outputs, "words_used": pos}
        if doc.get("memoize"):
            # memoized: fresh draws above; the client repeats its first response per value
            kept: dict[str, str] = {}
            pos, memo = 0, []
            for x in inputs:
                if x not in kept:
                    j, pos = reference_draw(weights[index[x]], words, pos)
                    kept[x] = doc["outputs"][j]
                memo.append(kept[x])
            case["memoized_outputs"] = memo
            case["memoized_words_used"] = pos
        cases.append(case)
    return cases


# ------------------------------------------------------------------------ families

FAMILY_WORD_SEED = 20261126
FAMILY_N_WORDS = 12000


def _decimal_fraction(v) -> Fraction:
    return Fraction(Decimal(repr(v))) if isinstance(v, float) else Fraction(int(v))


def reference_family_report(doc: dict, x: int, words: list[int], pos: int) -> tuple[str, int]:
    """One report of a family file for the input at position ``x`` (docs/families.md, "Exact
    sampling of a family"), written from that page: decimal fractions and linear scans, not
    the code of mechopt.families."""
    fam = doc["family"]
    k = len(doc["inputs"])
    ratio = _decimal_fraction(fam["ratio"])
    rn, rd = ratio.numerator, ratio.denominator
    if fam["kind"] == "subset_selection":
        comps = sorted((c["d"], c["weight"]) for c in fam["mixture"] if _decimal_fraction(c["weight"]) > 0)
        weights = reference_weights([w for _, w in comps])  # the matrix sampler's step 1
        u, pos = reference_uniform(sum(weights), words, pos)
        j, acc = 0, weights[0]
        while u >= acc:
            j += 1
            acc += weights[j]
        d = comps[j][0]
        if d == 0:
            return "{}", pos
        if d == k:
            return "{" + ",".join(map(str, range(k))) + "}", pos
        a = rn * math.comb(k - 1, d - 1)
        z = a + rd * math.comb(k - 1, d)
        t, pos = reference_uniform(z, words, pos)
        inside = t < a
        m = d - 1 if inside else d
        chosen: list[int] = []
        for j in range(k - 1 - m, k - 1):
            t, pos = reference_uniform(j + 1, words, pos)
            chosen.append(j if t in chosen else t)
        members = [i if i < x else i + 1 for i in chosen] + ([x] if inside else [])
        return "{" + ",".join(map(str, sorted(members))) + "}", pos
    labels = doc["inputs"]
    sensitive = sorted(labels.index(s) for s in fam["sensitive"])
    slots = 1
    while slots < len(sensitive) + 1:
        slots *= 2
    if x in sensitive:
        row = sensitive.index(x) + 1
        t, pos = reference_uniform(rn + rd, words, pos)
        plus = t < rn
        c, pos = reference_uniform(slots, words, pos)
        high = bin(row & c).count("1") % 2 == 0  # Sylvester: H[row][c] = (-1)^popcount(row & c)
        if high != plus:
            low_bit = row & -row
            c ^= low_bit
        return f"h{c}", pos
    t, pos = reference_uniform(rn + rd, words, pos)
    if t < rn - rd:
        return f"d{x}", pos
    c, pos = reference_uniform(slots, words, pos)
    return f"h{c}", pos


def family_payload(doc: dict) -> bytes:
    return rfc8785.dumps({"inputs": doc["inputs"], "family": doc["family"], "privacy": doc["privacy"]})


def family_doc(inputs: list[str], family: dict, privacy: list[dict]) -> dict:
    doc = {"format": "mechopt-mechanism", "version": 2, "inputs": inputs, "family": family, "privacy": privacy,
           "objective": {"kind": "none", "value": None, "bound": None},
           "certificate": {"verified": True, "method": "exact-family", "checks": []}}
    doc["sha256"] = hashlib.sha256(family_payload(doc)).hexdigest()
    return doc


def rehash(doc: dict) -> dict:
    doc["sha256"] = hashlib.sha256(family_payload(doc)).hexdigest()
    return doc


def _subset(ratio, mixture) -> dict:
    return {"kind": "subset_selection", "ratio": ratio, "mixture": [{"d": d, "weight": w} for d, w in mixture]}


def family_documents() -> dict[str, dict]:
    """name -> a valid family file (every claim holds)."""
    letters = list("abcdefgh")
    e = 2.718281828459045  # the largest double below e
    docs = {
        "subset_e_k10": family_doc([str(i) for i in range(10)], _subset(e, [(3, 1.0)]),
                                   [{"notion": "ldp", "epsilon": 1.0}]),
        # weights in no particular order, summing to 1 + 1e-13: renormalised exactly
        "subset_mixture_k8": family_doc(letters, _subset(3.5, [(3, 0.3), (0, 0.1), (2, 0.6000000000001), (8, 0.0)]), [
            {"notion": "ldp", "epsilon": 1.3},
            {"notion": "uldp", "epsilon": 1.3, "sensitive": ["a", "b"]},
            {"notion": "eldp", "matrix": [[0 if i == j else (1.3 if (i + j) % 3 else "inf") for j in range(8)]
                                          for i in range(8)]},
            {"notion": "lip", "epsilon": 1.0, "prior": [0.125] * 8},
            {"notion": "high_low", "epsilon": 1.3, "sensitive": ["c"]}]),
        "subset_claims_k6": family_doc(letters[:6], _subset(1.5, [(1, 0.25), (5, 0.25), (6, 0.5)]), [
            {"notion": "metric", "epsilon": 0.5, "edges": [["a", "b", 1.0], ["b", "c", 0.9], ["d", "e"], ["e", "f", 2]]},
            {"notion": "metric", "epsilon": 0.25, "distance": [[0 if i == j else abs(i - j) + 1 for j in range(6)]
                                                               for i in range(6)]},
            {"notion": "block", "epsilon": 0.41, "blocks": [["a", "b", "c"], ["d"], ["e", "f"]]},
            {"notion": "wc_lip", "epsilon": 0.41},
            {"notion": "bp_lip", "epsilon": 0.4, "priors": [[0.1, 0.2, 0.3, 0.2, 0.1, 0.1], [1 / 6] * 5 + [1 - 5 / 6]]},
            {"notion": "bp_lip", "epsilon": 0.4, "lower": [0.05] * 6, "upper": [0.4] * 6}]),
        "hadamard_k7": family_doc(letters[:7], {"kind": "hadamard_response", "ratio": 2.0,
                                                "sensitive": ["e", "a", "c"]}, [
            {"notion": "high_low", "epsilon": 0.7, "sensitive": ["a", "c", "e"]},
            {"notion": "uldp", "epsilon": 0.7, "sensitive": ["a", "c"]}]),
        "hadamard_all_k5": family_doc(letters[:5], {"kind": "hadamard_response", "ratio": 1.8,
                                                    "sensitive": letters[:5]}, [
            {"notion": "ldp", "epsilon": 0.6},
            {"notion": "lip", "epsilon": 0.45, "prior": [0.2] * 5},
            {"notion": "bp_lip", "epsilon": 0.52, "lower": [0.1] * 5, "upper": [0.3] * 5}]),
        "subset_k1000": family_doc([str(i) for i in range(1000)], _subset(e, [(269, 1.0)]),
                                   [{"notion": "ldp", "epsilon": 1.0}]),
        # Z needs several words: ratio 1e300 (claims at epsilon 700 > ln 1e300 = 690.8)
        "subset_huge_ratio": family_doc(["x", "y", "z"], _subset(1e300, [(1, 0.5), (2, 0.5)]),
                                        [{"notion": "ldp", "epsilon": 700}]),
        # budgets beyond float range once exponentiated (e^1e300): decided exactly, never overflowing
        "hadamard_huge_budgets": family_doc(["p", "q", "r"], {"kind": "hadamard_response", "ratio": 3.0,
                                                              "sensitive": ["r", "q", "p"]}, [
            {"notion": "high_low", "epsilon": 1e300, "sensitive": ["q"]},
            {"notion": "uldp", "epsilon": 1000, "sensitive": ["q", "r"]},
            {"notion": "lip", "epsilon": 800.5, "prior": [0.5, 0.25, 0.25]}]),
        "hadamard_ratio_1": family_doc(["p", "q", "r"], {"kind": "hadamard_response", "ratio": 1,
                                                         "sensitive": ["q"]}, [{"notion": "ldp", "epsilon": 0}]),
    }
    return docs


def invalid_family_documents(valid: dict[str, dict]) -> dict[str, tuple[dict, dict]]:
    """name -> (document, expected error): tampered, re-hashed with a broken claim, malformed."""
    out: dict[str, tuple[dict, dict]] = {}

    def copy(name):
        return json.loads(json.dumps(valid[name]))

    d = copy("subset_e_k10")
    d["family"]["ratio"] = 2.7  # not re-hashed
    out["tampered_ratio"] = (d, {"kind": "verification", "field": "sha256"})
    d = family_doc([str(i) for i in range(10)], _subset(1e300, [(1, 1.0)]), [{"notion": "ldp", "epsilon": 1.0}])
    out["rehashed_d1_ratio_1e300"] = (d, {"kind": "verification", "field": "privacy"})
    d = copy("subset_e_k10")
    d["privacy"][0]["epsilon"] = 0.9999999999999999
    out["rehashed_claim_tightened"] = (rehash(d), {"kind": "verification", "field": "privacy"})
    d = copy("subset_e_k10")
    d["family"]["ratio"] = 2.7182818284590455  # the smallest double above e
    out["rehashed_ratio_one_ulp_above_e"] = (rehash(d), {"kind": "verification", "field": "privacy"})
    d = copy("hadamard_k7")
    d["privacy"][1]["sensitive"] = ["a", "b"]  # b is not sensitive in the family: a direct output
    out["rehashed_hadamard_uldp_direct_output"] = (rehash(d), {"kind": "verification", "field": "privacy"})
    d = copy("hadamard_k7")
    d["privacy"][0] = {"notion": "ldp", "epsilon": 5.0}
    out["rehashed_hadamard_ldp_direct_output"] = (rehash(d), {"kind": "verification", "field": "privacy"})
    d = copy("subset_mixture_k8")
    d["privacy"][3]["prior"] = [0.65] + [0.05] * 7
    out["rehashed_lip_skewed_prior"] = (rehash(d), {"kind": "verification", "field": "privacy"})
    d = copy("subset_claims_k6")
    d["privacy"][5]["lower"] = [0.0] * 6  # a prior may leave an input out: P.q as low as 1/Z
    out["rehashed_box_too_wide"] = (rehash(d), {"kind": "verification", "field": "privacy"})
    d = copy("subset_claims_k6")
    d["privacy"][0]["edges"][1][2] = 0.7
    out["rehashed_metric_edge_shortened"] = (rehash(d), {"kind": "verification", "field": "privacy"})
    d = copy("subset_mixture_k8")
    d["privacy"][3]["delta"] = 0.1
    out["rehashed_lip_delta"] = (rehash(d), {"kind": "input", "field": "privacy"})
    malformed = [
        ("weights_sum", lambda d: d["family"]["mixture"].__setitem__(0, {"d": 3, "weight": 0.9}), "family.mixture"),
        ("d_beyond_k", lambda d: d["family"]["mixture"][0].__setitem__("d", 11), "family.mixture[0].d"),
        ("d_twice", lambda d: d["family"]["mixture"].append({"d": 3, "weight": 0.0}), "family.mixture[1].d"),
        ("family_unknown_key", lambda d: d["family"].__setitem__("extra", 1), "family"),
        ("ratio_below_1", lambda d: d["family"].__setitem__("ratio", 0.5), "family.ratio"),
        ("ratio_string", lambda d: d["family"].__setitem__("ratio", "2.5"), "family.ratio"),
        ("unknown_kind", lambda d: d["family"].__setitem__("kind", "unary"), "family.kind"),
        ("unknown_notion", lambda d: d["privacy"][0].__setitem__("notion", "gdp"), "privacy[0].notion"),
        ("epsilon_string", lambda d: d["privacy"][0].__setitem__("epsilon", "1"), "privacy[0].epsilon"),
        ("epsilon_negative", lambda d: d["privacy"][0].__setitem__("epsilon", -1.0), "privacy[0].epsilon"),
        ("notion_unknown_field", lambda d: d["privacy"][0].__setitem__("delta", 0), "privacy[0].delta"),
        ("inputs_repeated", lambda d: d["inputs"].__setitem__(1, "0"), "inputs"),
    ]
    for name, edit, field in malformed:
        d = copy("subset_e_k10")
        edit(d)
        out[f"malformed_{name}"] = (rehash(d), {"kind": "input", "field": field})
    d = copy("subset_e_k10")
    d["family"]["mixture"][0]["d"] = 3.0  # the same digest (RFC 8785 writes 3), but a float is no size
    out["malformed_d_written_as_decimal"] = (rehash(d), {"kind": "input", "field": "family.mixture[0].d",
                                                         "text_only": True})
    d = copy("subset_e_k10")
    d["version"] = 2.0  # not hashed; Python reads a float, which is no version
    out["malformed_version_written_as_decimal"] = (d, {"kind": "input", "field": "version", "text_only": True})
    d = copy("subset_e_k10")
    d["family"]["ratio"] = 2**60  # RFC 8785 writes no integer beyond 2^53 - 1: no digest exists
    out["malformed_ratio_unsafe_integer"] = (d, {"kind": "input", "field": "family", "text_only": True})
    d = copy("hadamard_k7")
    d["family"]["sensitive"][0] = ["a"]
    out["malformed_sensitive_not_a_label"] = (rehash(d), {"kind": "input", "field": "family.sensitive[0]"})
    d = copy("hadamard_k7")
    d["family"]["sensitive"][1] = "z"
    out["malformed_sensitive_label"] = (rehash(d), {"kind": "input", "field": "family.sensitive"})
    d = copy("subset_mixture_k8")
    d["privacy"][2]["matrix"][0][1] = "0.1"
    out["malformed_eldp_string_entry"] = (rehash(d), {"kind": "input", "field": "privacy[2].matrix"})
    d = copy("subset_mixture_k8")
    d["privacy"][1]["sensitive"] = ["a", "zz"]
    out["malformed_uldp_label"] = (rehash(d), {"kind": "input", "field": "privacy[1].sensitive"})
    d = copy("subset_claims_k6")
    d["privacy"][4]["priors"][0] = [0.5, 0.5, 0.5, 0, 0, 0]
    out["malformed_prior_sum"] = (rehash(d), {"kind": "input", "field": "privacy[4].priors[0]"})
    return out


def python_family_verdict(doc: dict) -> dict:
    """What mechopt says of a family document: valid, or the error's kind and field.

    The class is the client's (``mechopt._client_document.verdict``, the path every consumer
    takes); the field is that of ``FamilyMechanism.from_dict`` + ``verify``, which must agree.
    """
    from mechopt._client_document import verdict
    from mechopt._errors import InputError, VerificationError
    from mechopt.families import FamilyMechanism

    kind = {"accept": "valid", "refuse-input": "input", "refuse-verification": "verification"}[
        verdict(json.dumps(doc))[0]]
    try:
        mech = FamilyMechanism.from_dict(doc)
        cert = mech.verify()
    except InputError as err:
        out = {"kind": "input", "field": err.field}
    except VerificationError as err:
        out = {"kind": "verification", "field": str(err).split(":")[0]}
    else:
        out = {"valid": True} if cert.verified else {"kind": "verification", "field": "privacy"}
    assert out.get("kind", "valid") == kind, (out, kind)
    return out


def family_sampling_plan(doc: dict) -> list[str]:
    inputs = doc["inputs"]
    if len(inputs) > 100:
        return [inputs[i] for i in (0, 999, 500, 17, 0, 268, 269, 1, 998, 3)]
    return inputs * max(2, 40 // len(inputs))


def random_family_claims(n: int = 400) -> list[dict]:
    """Random families and claims, ratios near the boundary of each claim, with mechopt's verdict."""
    from mechopt._errors import InputError
    from mechopt.families import check_family, family_from_spec
    from mechopt.notions import notion_from_spec

    rng = random.Random(FAMILY_WORD_SEED + 1)
    out = []
    while len(out) < n:
        k = rng.randint(1, 7)
        inputs = [f"i{j}" for j in range(k)]
        eps = rng.choice([0.0, 0.1, 0.5, 1.0, math.log(2), 2.0, 3.7])
        # the ratio: e^eps's neighbours, 1, or something random
        near = math.exp(min(eps, 700)) * rng.choice([1.0, 1 - 1e-15, 1 + 1e-15, 1 - 1e-9, 0.5, 2.0])
        ratio = rng.choice([max(1.0, near), 1.0, round(1 + rng.random() * 5, 6)])
        if rng.random() < 0.6:
            ds = sorted(rng.sample(range(k + 1), rng.randint(1, min(3, k + 1))))
            ws = [rng.choice([0.0, 0.25, 0.5, 1.0, 0.1]) for _ in ds]
            if sum(ws) == 0:
                ws[-1] = 1.0
            total = sum(ws)
            ws = [w / total for w in ws]
            family = _subset(ratio, list(zip(ds, ws)))
        else:
            sens = rng.sample(inputs, rng.randint(1, k))
            family = {"kind": "hadamard_response", "ratio": ratio, "sensitive": sens}
        name = rng.choice(["ldp", "wc_lip", "block", "high_low", "uldp", "eldp", "metric", "metric_d", "lip",
                           "bp_lip", "bp_box"])
        some = rng.sample(inputs, rng.randint(1, k))
        if name in ("ldp", "wc_lip"):
            claim = {"notion": name, "epsilon": eps}
        elif name == "block":
            cut = rng.randint(1, k)
            claim = {"notion": "block", "epsilon": eps, "blocks": [inputs[:cut]] + ([inputs[cut:]] if cut < k else [])}
        elif name in ("high_low", "uldp"):
            claim = {"notion": name, "epsilon": eps, "sensitive": some}
        elif name == "eldp":
            claim = {"notion": "eldp", "matrix": [[0 if i == j else rng.choice([eps, eps * 2, "inf", 0.5, 3.0])
                                                   for j in range(k)] for i in range(k)]}
        elif name == "metric":
            claim = {"notion": "metric", "epsilon": eps,
                     "edges": [[inputs[rng.randrange(k)], inputs[rng.randrange(k)], rng.choice([1, 0.5, 2.0])]
                               for _ in range(rng.randint(1, 4))]}
        elif name == "metric_d":
            claim = {"notion": "metric", "epsilon": eps,
                     "distance": [[0 if i == j else rng.choice([1, 2, "inf"]) for j in range(k)] for i in range(k)]}
        elif name == "lip":
            p = [rng.randint(1, 5) for _ in range(k)]
            claim = {"notion": "lip", "epsilon": eps, "prior": [v / sum(p) for v in p]}
            if rng.random() < 0.15:
                claim["delta"] = rng.choice([0.0, 0.01])  # delta > 0: no exact family check (input)
        elif name == "bp_lip":
            ps = []
            for _ in range(2):
                p = [rng.randint(1, 5) for _ in range(k)]
                ps.append([v / sum(p) for v in p])
            claim = {"notion": "bp_lip", "epsilon": eps, "priors": ps}
        else:
            lo = round(rng.random() / k, 3)
            hi = min(1.0, round(lo + rng.random(), 3))
            claim = {"notion": "bp_lip", "epsilon": eps, "lower": [lo] * k, "upper": [hi] * k}
        try:
            fam = family_from_spec(family, inputs)
            notion = notion_from_spec(claim, inputs, "privacy[0]")
        except InputError:
            continue  # a malformed claim: the file vectors cover those
        try:
            verdict = "ok" if check_family(fam, notion).ok else "fail"
        except InputError:
            verdict = "input"
        out.append({"inputs": inputs, "family": family, "claim": claim, "verdict": verdict})
    return out


def family_files() -> dict[str, str]:
    files: dict[str, str] = {}
    valid = family_documents()
    invalid = invalid_family_documents(valid)
    rng = random.Random(FAMILY_WORD_SEED)
    words = [rng.getrandbits(32) for _ in range(FAMILY_N_WORDS)]
    manifest, cases = [], []
    for name, doc in valid.items():
        assert python_family_verdict(doc) == {"valid": True}, (name, python_family_verdict(doc))
        files[f"families/{name}.json"] = render(doc)
        manifest.append({"file": f"families/{name}.json", "valid": True, "sha256": doc["sha256"],
                         "canonical": family_payload(doc).decode("utf-8")})
        index = {x: i for i, x in enumerate(doc["inputs"])}
        inputs = family_sampling_plan(doc)
        pos, outputs = 0, []
        for x in inputs:
            report, pos = reference_family_report(doc, index[x], words, pos)
            outputs.append(report)
        cases.append({"mechanism": f"families/{name}.json", "inputs": inputs, "outputs": outputs, "words_used": pos})
    for name, (doc, error) in invalid.items():
        got = python_family_verdict(doc)
        assert got.get("kind") == error["kind"] and got["field"].startswith(error["field"]), (name, got, error)
        text_only = error.pop("text_only", False)
        files[f"families/{name}.json"] = render(doc)
        entry = {"file": f"families/{name}.json", "valid": False, "error": error}
        if text_only:  # a parsed object cannot tell 3.0 from 3: only a reader of the text can
            entry["text_only"] = True
        manifest.append(entry)
    files["families.json"] = render({
        "about": "family mechanism files (docs/families.md): verdicts, digests, sampling (each case reads 'words' "
                 "from the first), and claims decided by mechopt's exact family verifier; see generate.py",
        "vectors": manifest, "words": words, "cases": cases, "claims": random_family_claims()})
    return files


# RFC 8785, Appendix B (IEEE-754 bit pattern -> canonical text); NaN and Infinity are errors.
RFC8785_NUMBERS = [
    ("0000000000000000", "0"), ("8000000000000000", "0"), ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"), ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"), ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"), ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"), ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"), ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"), ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"), ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"), ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"), ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"), ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


def render(obj) -> str:
    return json.dumps(obj, indent=1, ensure_ascii=False) + "\n"


def build() -> dict[str, str]:
    """relative path -> file text."""
    files: dict[str, str] = {}
    valid = documents()
    manifest = []
    for name, doc in valid.items():
        files[f"mechanisms/{name}.json"] = render(doc)
        entry = {"file": f"mechanisms/{name}.json", "valid": True, "version": doc["version"],
                 "sha256": doc["sha256"]}
        if doc["version"] == 2:
            entry["canonical"] = digest(doc)[0]
        else:
            entry["portable"] = False
            entry["error_if_not_portable"] = {"kind": "input", "field": "version"}
        manifest.append(entry)
    for name, (doc, error) in invalid_documents(valid).items():
        files[f"mechanisms/{name}.json"] = render(doc)
        manifest.append({"file": f"mechanisms/{name}.json", "valid": False, "error": error})
    files["manifest.json"] = render({"about": "mechanism files and their RFC 8785 digests; see generate.py",
                                     "vectors": manifest})
    rng = random.Random(WORD_SEED)
    words = [rng.getrandbits(32) for _ in range(N_WORDS)]
    files["sampling.json"] = render({
        "about": "exact sampler (docs/formats.md, 'Exact sampling'): each case reads 'words' from the first",
        "words": words, "cases": sampling_cases(valid, words)})
    files["numbers.json"] = render({"about": "RFC 8785 Appendix B: IEEE-754 bits (hex) -> canonical text",
                                    "numbers": [{"bits": b, "text": t} for b, t in RFC8785_NUMBERS]})
    files.update(family_files())
    return files


def main(argv: list[str]) -> int:
    """Write every vector file, or with ``--families`` only the family ones (families.json, families/)."""
    files = family_files() if "--families" in argv else build()
    for rel, text in files.items():
        path = HERE / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    print(f"{len(files)} files written in {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
