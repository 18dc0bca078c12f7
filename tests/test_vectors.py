"""The shared client vectors (clients/vectors): every expected value checked independently.

The digests are recomputed here with the ``rfc8785`` package and :mod:`hashlib` (not
through mechopt); the sampling vectors against the reference sampler of
``clients/vectors/generate.py`` (decimal arithmetic, linear scan) and against
:class:`mechopt.client.Sampler`; a few cases by hand.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import struct
from pathlib import Path

import numpy as np
import pytest
import rfc8785

from mechopt import Mechanism
from mechopt._canonical import canonical_bytes
from mechopt._errors import InputError, VerificationError
from mechopt.client import Sampler, check_document, row_weights, uniform_below

VECTORS = Path(__file__).resolve().parents[1] / "clients" / "vectors"
MANIFEST = json.loads((VECTORS / "manifest.json").read_text(encoding="utf-8"))["vectors"]
SAMPLING = json.loads((VECTORS / "sampling.json").read_text(encoding="utf-8"))
NUMBERS = json.loads((VECTORS / "numbers.json").read_text(encoding="utf-8"))["numbers"]


def load(rel: str) -> dict:
    return json.loads((VECTORS / rel).read_text(encoding="utf-8"))


def generator():
    spec = importlib.util.spec_from_file_location("vectors_generate", VECTORS / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_mechanism_file_is_in_the_manifest():
    listed = {v["file"] for v in MANIFEST}
    on_disk = {f"mechanisms/{p.name}" for p in (VECTORS / "mechanisms").glob("*.json")}
    assert listed == on_disk
    assert sum(v["valid"] for v in MANIFEST) >= 6 and sum(not v["valid"] for v in MANIFEST) >= 8


@pytest.mark.parametrize("bits,text", [(n["bits"], n["text"]) for n in NUMBERS])
def test_rfc8785_appendix_b_numbers(bits, text):
    x = struct.unpack(">d", bytes.fromhex(bits))[0]
    assert rfc8785.dumps(x).decode() == text
    doc = {"version": 2, "inputs": [], "outputs": [], "matrix": [[x]], "privacy": []}
    assert f'"matrix":[[{text}]]' in canonical_bytes(doc).decode()


@pytest.mark.parametrize("vector", [v for v in MANIFEST if v["valid"]], ids=lambda v: v["file"])
def test_valid_vectors_digest_and_check(vector):
    doc = load(vector["file"])
    payload = {k: doc[k] for k in ("inputs", "outputs", "matrix", "privacy")}
    if doc["version"] == 2:
        if "memoize" in doc:
            payload["memoize"] = doc["memoize"]
        text = rfc8785.dumps(payload)
        assert text.decode("utf-8") == vector["canonical"]
    else:
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()
    assert hashlib.sha256(text).hexdigest() == vector["sha256"] == doc["sha256"]
    assert check_document(doc) is doc


def test_canonical_text_by_hand():
    """The numbers that differ between Python's json.dumps and RFC 8785 (the reason for v2)."""
    vector = next(v for v in MANIFEST if v["file"] == "mechanisms/numbers_v2.json")
    text = vector["canonical"]
    assert '"matrix":[[0.00001,0.49999,0.5],[1,0,0],[0.1,0.2,0.7],[5e-324,0.5,0.5],' in text
    assert '"epsilon":1e+21' in text and '"a":[1e-7,1.5,0]' in text
    # members sorted by UTF-16 code units: U+1F600 (D83D DE00) before U+FF61
    assert text.index('"\U0001F600":2') < text.index('"\uff61":3')


@pytest.mark.parametrize("vector", [v for v in MANIFEST if not v["valid"]], ids=lambda v: v["file"])
def test_invalid_vectors_are_refused_naming_the_field(vector):
    doc = load(vector["file"])
    error = vector["error"]
    cls = VerificationError if error["kind"] == "verification" else InputError
    with pytest.raises(cls) as info:
        check_document(doc)
    if cls is InputError:
        assert info.value.field.startswith(error["field"])
    else:
        assert str(info.value).startswith(error["field"])


@pytest.mark.parametrize("case", SAMPLING["cases"], ids=lambda c: c["mechanism"])
def test_sampling_vectors(case):
    doc = load(case["mechanism"])
    ref = generator()
    weights = [ref.reference_weights(row) for row in doc["matrix"]]
    assert [[str(w) for w in row] for row in weights] == case["weights"]
    assert [row_weights(row) for row in doc["matrix"]] == weights
    # the vector file says what the reference sampler says
    index = {x: i for i, x in enumerate(doc["inputs"])}
    pos, expected = 0, []
    for x in case["inputs"]:
        j, pos = ref.reference_draw(weights[index[x]], SAMPLING["words"], pos)
        expected.append(doc["outputs"][j])
    assert expected == case["outputs"] and pos == case["words_used"]
    # and mechopt.client reports the same outputs from the same words
    sampler = Sampler(doc, words=SAMPLING["words"], verify=False)
    if doc.get("memoize"):
        assert sampler.sample_many(case["inputs"]) == case["memoized_outputs"]
        assert sampler.words_used == case["memoized_words_used"]
    else:
        assert sampler.sample_many(case["inputs"]) == case["outputs"]
        assert sampler.words_used == case["words_used"]


def test_sampler_by_hand():
    """Row [0.2, 0.8]: weights [1, 4], T = 5, 3 bits: words 7, 6, 5 are rejected, 4 is U."""
    doc = load("mechanisms/rejection_v2.json")
    sampler = Sampler(doc, words=[7, 6, 5, 4, 0xFFFFFFF8], verify=False)
    assert sampler.sample("t5") == "hi" and sampler.words_used == 4  # U = 4 >= C[0] = 1
    assert sampler.sample("t5") == "lo" and sampler.words_used == 5  # 0xFFFFFFF8 & 7 = 0 < 1
    assert Sampler(doc, words=[], verify=False).sample("t1") == "lo"  # T = 1: no word is read
    words = iter([0xFFFFFFFF, 0x0000000C, 0x00000005])
    assert uniform_below(10, lambda n: next(words)) == 5


def test_python_written_vectors_pass_the_exact_verifier():
    for v in MANIFEST:
        if v["valid"] and v["file"].startswith("mechanisms/solved_"):
            mech = Mechanism.load(VECTORS / v["file"])  # schema, digest, exact privacy
            assert mech.certificate["verified"] is True


# -- the fast writer of large matrices agrees with rfc8785 -----------------------------------------

from hypothesis import given as _given  # noqa: E402
from hypothesis import settings as _settings  # noqa: E402
from hypothesis import strategies as _st  # noqa: E402


@_settings(max_examples=3000, deadline=None)
@_given(_st.floats(allow_nan=False, allow_infinity=False) | _st.integers(-(2**53) + 1, 2**53 - 1))
def test_es_number_is_rfc8785s_number(v):
    import rfc8785

    from mechopt._canonical import _es_number

    assert _es_number(v) == rfc8785.dumps(v).decode()


@_settings(max_examples=500, deadline=None)
@_given(_st.lists(_st.floats(allow_nan=False, allow_infinity=False)
                  | _st.sampled_from([1e-5, -1e-6, 2.5e-7, 1e16, -9.5e20, 1e21, 0.0, 3.0]), min_size=1, max_size=30))
def test_a_row_of_numbers_is_written_as_rfc8785_writes_it(row):
    import rfc8785

    from mechopt._canonical import _row_text

    assert _row_text(row) == rfc8785.dumps(row).decode()


def test_large_matrices_hash_as_rfc8785_writes_them():
    import rfc8785

    from mechopt._canonical import canonical_bytes, hashed_payload

    rng = np.random.default_rng(5)
    M = rng.dirichlet(np.ones(70), size=70) * 10.0 ** rng.integers(-9, 3, size=(70, 1))
    doc = {"version": 2, "inputs": [f"x{i}" for i in range(70)], "outputs": [f"y{j}" for j in range(70)],
           "matrix": M.tolist(), "privacy": [{"notion": "ldp", "epsilon": 1e-7}]}
    assert canonical_bytes(doc) == rfc8785.dumps(hashed_payload(doc))


# -- family mechanism files (clients/vectors/families.json) ------------------------------------------

FAMILIES = json.loads((VECTORS / "families.json").read_text(encoding="utf-8"))


def test_every_family_file_is_in_the_family_manifest():
    listed = {v["file"] for v in FAMILIES["vectors"]}
    assert listed == {f"families/{p.name}" for p in (VECTORS / "families").glob("*.json")}
    valid = [v for v in FAMILIES["vectors"] if v["valid"]]
    refused = [v for v in FAMILIES["vectors"] if not v["valid"]]
    assert len(valid) >= 6 and len(refused) >= 20
    assert {v["error"]["kind"] for v in refused} == {"input", "verification"}


@pytest.mark.parametrize("vector", FAMILIES["vectors"], ids=lambda v: v["file"])
def test_family_vectors_digest_and_verdict(vector):
    """Digests recomputed with rfc8785 + hashlib; the verdict is mechopt verify's."""
    from mechopt.families import FamilyMechanism

    doc = load(vector["file"])
    if vector["valid"]:
        text = rfc8785.dumps({k: doc[k] for k in ("inputs", "family", "privacy")})
        assert text.decode("utf-8") == vector["canonical"]
        assert hashlib.sha256(text).hexdigest() == vector["sha256"] == doc["sha256"]
        assert FamilyMechanism.from_dict(doc).verify().verified
        return
    error = vector["error"]
    try:
        cert = FamilyMechanism.from_dict(doc).verify()
    except InputError as err:
        assert error["kind"] == "input" and err.field.startswith(error["field"]), err
    except VerificationError as err:
        assert error["kind"] == "verification" and str(err).startswith(error["field"]), err
    else:
        assert error == {"kind": "verification", "field": "privacy"} and not cert.verified


@pytest.mark.parametrize("case", FAMILIES["cases"], ids=lambda c: c["mechanism"])
def test_family_sampling_vectors(case):
    """The reference sampler (written from docs/families.md) and FamilySampler read the same words alike."""
    from mechopt.families import FamilySampler, family_from_spec

    doc = load(case["mechanism"])
    ref = generator()
    words = FAMILIES["words"]
    index = {x: i for i, x in enumerate(doc["inputs"])}
    pos, expected = 0, []
    for x in case["inputs"]:
        report, pos = ref.reference_family_report(doc, index[x], words, pos)
        expected.append(report)
    assert expected == case["outputs"] and pos == case["words_used"]
    sampler = FamilySampler(family_from_spec(doc["family"], doc["inputs"]), words=words)
    assert [sampler.sample_index(index[x]) for x in case["inputs"]] == case["outputs"]
    assert sampler.words_used == case["words_used"]


def test_family_claim_verdicts_are_mechopts():
    from mechopt.families import check_family, family_from_spec
    from mechopt.notions import notion_from_spec

    seen = set()
    for c in FAMILIES["claims"]:
        fam = family_from_spec(c["family"], c["inputs"])
        try:
            verdict = "ok" if check_family(fam, notion_from_spec(c["claim"], c["inputs"])).ok else "fail"
        except InputError:
            verdict = "input"
        assert verdict == c["verdict"], c
        seen.add((c["claim"]["notion"], verdict))
    # every notion is seen both holding and failing
    names = {n for n, _ in seen}
    assert len(names) == 9 and all((n, v) in seen for n in names for v in ("ok", "fail"))


def test_family_sampler_by_hand():
    """docs/families.md's example: k = 4, d = 2, ratio 2, words 5, 1 -> "{0,2}"; U(1) reads nothing."""
    from mechopt.families import FamilySampler, SubsetMixture

    fam = SubsetMixture.from_spec({"kind": "subset_selection", "ratio": 2, "mixture": [{"d": 2, "weight": 1}]}, 4)
    s = FamilySampler(fam, words=[5, 1, 0xFFFFFFF9, 12, 6, 1, 1])
    assert s.sample_index(0) == "{0,2}" and s.words_used == 2
    assert s.sample_index(0) == "{2,3}" and s.words_used == 7  # 9 and 12 rejected; 6 >= 6: 0 not in S
    with pytest.raises(InputError, match="words"):
        FamilySampler(fam, seed=1, words=[1])
    with pytest.raises(InputError, match="ran out"):
        FamilySampler(fam, words=[5]).sample_index(0)
