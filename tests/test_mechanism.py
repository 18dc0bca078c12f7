"""The mechanism file (docs/formats.md), the public names, and the leakage report.

The digest is recomputed with the standard library alone, the file is validated with
``jsonschema`` against the published schema, and every leakage measure is recomputed
here from its definition (Jiang et al. 2022, §II).
"""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
import textwrap
from dataclasses import replace
from importlib import resources

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mechopt
from mechopt import LDP, Mechanism, leakage_report, mechanism_schema

LABELS = ["home", "work", "gym", "bar"]

# Awkward decimals (shortest reprs of 17 digits), a zero, and rows that sum to 1 in floats.
_raw = np.array([[0.41, 0.27, 0.19, 0.13],
                 [0.2, 0.4, 0.3, 0.1],
                 [0.15, 0.25, 0.45, 0.15],
                 [0.3, 0.2, 0.2, 0.3]])
MATRIX = _raw / _raw.sum(axis=1, keepdims=True)

PRIVACY = [
    {"notion": "ldp", "epsilon": 2.0},
    {"notion": "eldp", "matrix": [[0, 2.0, "inf", 2.0], [2.0, 0, 2.0, 2.0], [2.0, 2.0, 0, 2.0], [2.0, 2.0, 2.0, 0]]},
    {"notion": "block", "epsilon": 2.0, "blocks": [["home", "work"], ["gym", "bar"]]},
    {"notion": "high_low", "epsilon": 1.5, "sensitive": ["bar"]},
    {"notion": "metric", "epsilon": 1.0, "edges": [["home", "work", 1.5], ["work", "gym", 2.0], ["gym", "bar", 1.0]]},
    {"notion": "lip", "epsilon": 1.0, "prior": [0.4, 0.3, 0.2, 0.1]},
    {"notion": "lip", "epsilon": 0.5, "prior": [0.25, 0.25, 0.25, 0.25], "delta": 0.05},
    {"notion": "bp_lip", "epsilon": 1.0, "lower": [0.1, 0.1, 0.1, 0.1], "upper": [0.4, 0.4, 0.4, 0.4]},
    {"notion": "bp_lip", "epsilon": 1.0, "priors": [[0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4]]},
    {"notion": "wc_lip", "epsilon": 2.0},
    {"notion": "uldp", "epsilon": 2.0, "sensitive": ["bar", "gym"]},
]


@pytest.fixture
def saved(tmp_path):
    mech = Mechanism.from_channel(MATRIX, PRIVACY, inputs=LABELS, outputs=LABELS,
                                  objective={"kind": "expected_loss", "value": 0.6, "bound": 0.55},
                                  extra={"solver": {"name": "test", "iterations": 3}})
    path = tmp_path / "mech.json"
    mech.save(path)
    return mech, path


def _refused(path, doc, error, match):
    """``doc`` written to ``path`` is refused by :meth:`Mechanism.load` with ``error`` matching ``match``."""
    path.write_text(json.dumps(doc))
    with pytest.raises(error, match=match):
        Mechanism.load(path)


def test_every_claim_is_really_met():
    # every ratio of MATRIX is below e^1 within a column, so all claims hold with slack
    ratio = max(MATRIX[:, y].max() / MATRIX[:, y].min() for y in range(4))
    assert ratio < math.e ** 1.5
    mech = Mechanism.from_channel(MATRIX, PRIVACY, inputs=LABELS, outputs=LABELS)
    assert mech.certificate["verified"] is True
    assert [c["notion"] for c in mech.certificate["checks"]] == [p["notion"] for p in PRIVACY]


def test_round_trip(saved, tmp_path):
    mech, path = saved
    back = Mechanism.load(path)
    assert back.inputs == tuple(LABELS) and back.outputs == tuple(LABELS)
    assert np.array_equal(back.matrix, MATRIX)  # floats survive JSON bit for bit
    assert back.privacy == mech.privacy
    assert back.objective == {"kind": "expected_loss", "value": 0.6, "bound": 0.55}
    assert back.certificate == mech.certificate
    assert back.extra == {"solver": {"name": "test", "iterations": 3}}
    # the notions come back as the same objects
    assert [n.to_spec(LABELS) for n in back.notions] == mech.privacy
    # the stored privacy uses the problem-file notation, labels and "inf" included
    doc = json.loads(path.read_text())
    assert doc["privacy"][1]["matrix"][0][2] == "inf"
    assert doc["privacy"][2]["blocks"] == [["home", "work"], ["gym", "bar"]]
    # saving what was loaded writes the same bytes
    again = tmp_path / "again.json"
    back.save(again)
    assert again.read_bytes() == path.read_bytes()


def test_the_file_holds_the_document_with_a_matrix_row_a_line(saved):
    mech, path = saved
    text = path.read_text()
    assert json.loads(text) == json.loads(json.dumps(mech.to_dict()))
    lines = {line.strip().rstrip(",") for line in text.splitlines()}
    rows = MATRIX.tolist() + mech.privacy[1]["matrix"]  # the channel's and the E-LDP claim's
    assert all(json.dumps(row) in lines for row in rows)


def test_saved_file_validates_against_published_schema(saved):
    _, path = saved
    doc = json.loads(path.read_text())
    text = resources.files("mechopt").joinpath("schema/mechanism.schema.json").read_text()
    schema = json.loads(text)
    assert schema == mechanism_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
    for key in ("format", "version", "inputs", "outputs", "matrix", "privacy", "objective", "certificate", "sha256"):
        assert key in doc
    # the schema is not vacuous
    validator = jsonschema.Draft202012Validator(schema)
    assert doc["version"] == 2
    for broken in ({**doc, "sha256": "abc"}, {**doc, "version": 3}, {k: v for k, v in doc.items() if k != "matrix"},
                   {**doc, "memoize": "yes"}, {**doc, "version": 1, "family": {"name": "x"}},
                   {**doc, "matrix": [[0.5, -0.5]]}, {**doc, "privacy": [{"notion": "nope"}]}):
        assert not validator.is_valid(broken)


def test_sha256_recomputed_with_rfc8785_and_hashlib_only(saved):
    """Format version 2: anyone recomputes the digest from the RFC 8785 form; no numpy needed."""
    _, path = saved
    code = textwrap.dedent(f"""
        import hashlib, json, sys
        try:
            import numpy
        except ImportError:
            pass
        else:
            sys.exit("numpy must not be importable here")
        import rfc8785
        doc = json.load(open({str(path)!r}))
        payload = {{k: doc[k] for k in ("inputs", "outputs", "matrix", "privacy")}}
        print(hashlib.sha256(rfc8785.dumps(payload)).hexdigest())
        print(doc["sha256"])
    """)
    blocker = "import sys; sys.modules['numpy'] = None\n"
    proc = subprocess.run([sys.executable, "-c", blocker + code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    recomputed, stored = proc.stdout.split()
    assert recomputed == stored and len(stored) == 64


def test_version_1_files_still_load_and_verify(saved, tmp_path):
    """A version 1 file (Python json.dumps digest) is read; its hash is checked the version 1 way."""
    _, path = saved
    doc = json.loads(path.read_text())
    payload = {k: doc[k] for k in ("inputs", "outputs", "matrix", "privacy")}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)
    old = {**doc, "version": 1, "sha256": hashlib.sha256(text.encode()).hexdigest()}
    (tmp_path / "v1.json").write_text(json.dumps(old))
    back = Mechanism.load(tmp_path / "v1.json")  # digest and exact re-verification
    assert np.array_equal(back.matrix, MATRIX)
    # the writer upgrades it: saved again, it is version 2 with the RFC 8785 digest
    back.save(tmp_path / "v2.json")
    assert json.loads((tmp_path / "v2.json").read_text())["version"] == 2
    # a version 1 file cannot carry the version 2 field memoize (its digest would not cover it)
    _refused(tmp_path / "bad.json", {**old, "memoize": True}, mechopt.InputError, "memoize: is a version 2 field")


def test_memoize_is_saved_hashed_and_loaded(saved, tmp_path):
    mech, _ = saved
    marked = replace(mech, memoize=True)
    marked.save(tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["memoize"] is True
    assert doc["sha256"] != mech.to_dict()["sha256"]  # the flag is part of the digest
    assert Mechanism.load(tmp_path / "m.json").memoize is True
    del doc["memoize"]  # switching memoization off unnoticed is impossible
    _refused(tmp_path / "off.json", doc, mechopt.VerificationError, "sha256")


def test_malformed_family_files_are_refused_clearly(saved, tmp_path):
    """Structured (family) mechanisms are read (mechopt.families); a malformed one is one line."""
    _, path = saved
    doc = json.loads(path.read_text())
    for key in ("outputs", "matrix"):
        del doc[key]
    doc["family"] = {"name": "subset_selection", "d": 2}
    _refused(tmp_path / "f.json", doc, mechopt.InputError, "family.kind: must be one of subset_selection")


def test_digest_covers_the_hashed_fields_only(saved, tmp_path):
    _, path = saved
    doc = json.loads(path.read_text())
    # objective, certificate and extras are not hashed: editing them keeps the file loadable
    doc["objective"]["value"] = 0.7
    doc["solver"] = {"name": "other"}
    (tmp_path / "a.json").write_text(json.dumps(doc))
    assert Mechanism.load(tmp_path / "a.json").objective["value"] == 0.7
    # the privacy claims are hashed: weakening one is caught
    doc["privacy"][0]["epsilon"] = 5.0
    _refused(tmp_path / "b.json", doc, mechopt.VerificationError, "sha256")


def test_every_public_name_resolves():
    assert len(mechopt.__all__) == len(set(mechopt.__all__))
    for name in mechopt.__all__:
        assert getattr(mechopt, name) is not None, name
    assert isinstance(mechopt.__version__, str)
    assert set(mechopt.__all__) <= set(dir(mechopt))
    with pytest.raises(AttributeError):
        mechopt.no_such_name  # noqa: B018


def test_public_names_in_a_fresh_interpreter():
    """Lazy loading must not depend on what an earlier test imported."""
    code = "import mechopt\nfor n in mechopt.__all__:\n    getattr(mechopt, n)\nprint(len(mechopt.__all__))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) == len(mechopt.__all__)


# -- leakage ---------------------------------------------------------------------------------------


def _positive(n):
    return st.lists(st.floats(0.02, 1.0), min_size=n, max_size=n)


@st.composite
def channel_prior(draw):
    k = draw(st.integers(2, 5))
    m = draw(st.integers(2, 5))
    W = np.array([draw(_positive(m)) for _ in range(k)])
    P = np.array(draw(_positive(k)))
    return W / W.sum(axis=1, keepdims=True), P / P.sum()


def reference(Q, P):
    """Each measure from its definition, in plain Python."""
    k, m = Q.shape
    py = [sum(P[x] * Q[x, y] for x in range(k)) for y in range(m)]
    ldp = max(math.log(Q[x, y] / Q[xp, y]) for y in range(m) for x in range(k) for xp in range(k))
    lip = max(abs(math.log(Q[x, y] / py[y])) for y in range(m) for x in range(k))
    mi = sum(P[x] * Q[x, y] * math.log(Q[x, y] / py[y]) for y in range(m) for x in range(k))
    mil = math.log(sum(max(Q[x, y] for x in range(k)) for y in range(m)))
    di = max(math.log(P[x] * Q[x, y] / (P[xp] * Q[xp, y])) for y in range(m) for x in range(k) for xp in range(k))
    return {"ldp": ldp, "lip": lip, "mi": mi, "mil": mil, "di": di}


@settings(max_examples=40, deadline=None)
@given(channel_prior())
def test_leakage_report_laws(data):
    Q, P = data
    rep = leakage_report(Q, P)
    ref = reference(Q, P)
    for name, value in ref.items():
        assert getattr(rep, name) == pytest.approx(value, rel=1e-9, abs=1e-12), name
    d = rep.to_dict()
    assert all(v >= -1e-15 for v in d.values()), d
    # mutual information never exceeds maximal leakage, which never exceeds LDP
    assert rep.mi <= rep.mil + 1e-12
    assert rep.mil <= rep.ldp + 1e-12
    # LIP sits between nothing and LDP (000 Thm 1), MI below LIP (000 Prop. 1)
    assert rep.mi <= rep.lip + 1e-12 <= rep.ldp + 2e-12
    # at the uniform prior, differential identifiability is LDP
    k = Q.shape[0]
    uni = leakage_report(Q, np.full(k, 1.0 / k))
    assert uni.di == pytest.approx(uni.ldp, rel=1e-12, abs=1e-15)
    assert uni.ldp == pytest.approx(LDP(1.0).achieved(Q), rel=1e-12, abs=1e-15)


def test_leakage_of_a_revealing_channel():
    """The identity channel: MI = MIL = ln k at the uniform prior; LDP, LIP and DI unbounded."""
    k = 3
    rep = leakage_report(np.eye(k), np.full(k, 1 / k))
    assert rep.mi == pytest.approx(math.log(k))
    assert rep.mil == pytest.approx(math.log(k))
    assert math.isinf(rep.ldp) and math.isinf(rep.lip) and math.isinf(rep.di)


def test_leakage_ignores_inputs_the_prior_never_draws():
    Q = np.array([[0.9, 0.1], [0.5, 0.5], [0.2, 0.8]])
    P = np.array([0.0, 0.5, 0.5])
    rep = leakage_report(Q, P)
    # maximal leakage takes the max over the support of P only (Def. 4)
    assert rep.mil == pytest.approx(math.log(0.5 + 0.8))
    py = P @ Q
    assert rep.lip == pytest.approx(max(abs(math.log(Q[x, y] / py[y])) for x in (1, 2) for y in (0, 1)))
    # LDP is prior-free and still sees row 0
    assert rep.ldp == pytest.approx(max(math.log(0.9 / 0.2), math.log(0.8 / 0.1)))
