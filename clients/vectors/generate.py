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


def reference_draw(weights: list[int], words: list[int], pos: int) -> tuple[int, int]:
    """One report (output index) and the new stream position (steps 2-4)."""
    total = sum(weights)
    bits = (total - 1).bit_length()
    n = -(-bits // 32)
    while True:
        r = 0
        for _ in range(n):
            r = r * 2**32 + words[pos]
            pos += 1
        r %= 2**bits
        if r < total:
            break
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
    return files


def main(argv: list[str]) -> int:
    files = build()
    for rel, text in files.items():
        path = HERE / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    print(f"{len(files)} files written in {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
