"""Tests of mechopt.client: loading, hash check, exact sampling, no-numpy client path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest
from scipy import stats

from mechopt._canonical import canonical_digest
from mechopt._errors import InputError, VerificationError
from mechopt.client import Sampler, check_document, load_document

REPO = Path(__file__).resolve().parents[1]

# A row with awkward decimals and a zero: exactness and the zero are both visible.
ROW = [0.4375, 0.1234567891, 0.2, 0.0, 0.1390432109, 0.1]


def make_doc(inputs, outputs, matrix, privacy=None, version=2):
    doc = {
        "format": "mechopt-mechanism",
        "version": version,
        "inputs": list(inputs),
        "outputs": list(outputs),
        "matrix": [list(r) for r in matrix],
        # by default a claim every channel meets (an E matrix of inf: "no pair constrained"),
        # so the sampling tests can use awkward rows; the claims are checked on load
        "privacy": privacy if privacy is not None else [
            {"notion": "eldp", "matrix": [[0.0 if a == b else "inf" for b in inputs] for a in inputs]}],
        "objective": {"kind": "expected_loss", "value": 0.5, "bound": 0.5},
        "certificate": {"verified": True, "method": "exact", "checks": []},
    }
    doc["sha256"] = canonical_digest(doc)
    return doc


def write(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture
def doc():
    other = [1 / 6] * 6
    other[5] = 1 - 5 * (1 / 6)
    return make_doc(["home", "work"], ["a", "b", "c", "d", "e", "f"], [ROW, other])


def test_row_fixture_sums_to_one_exactly():
    assert sum(Fraction(str(v)) for v in ROW) == 1


def test_load_document_returns_parsed_fields(tmp_path, doc):
    loaded = load_document(write(tmp_path / "m.json", doc))
    assert loaded["inputs"] == ["home", "work"]
    assert loaded["matrix"] == doc["matrix"]
    assert loaded["sha256"] == doc["sha256"]


def test_chi_square_of_exact_sampler_matches_row():
    """10^6 seeded draws from one row: counts agree with the row (chi-square)."""
    sampler = Sampler(make_doc(["x"], list("abcdef"), [ROW]), seed=20240601)
    n = 10**6
    draws = sampler.sample_many(["x"] * n)
    counts = [draws.count(label) for label in "abcdef"]
    assert sum(counts) == n
    assert counts[3] == 0  # probability 0 is never drawn
    observed = [c for c, p in zip(counts, ROW) if p > 0]
    expected = [n * p for p in ROW if p > 0]
    result = stats.chisquare(observed, expected)
    print(f"chi-square statistic {result.statistic:.3f}, p-value {result.pvalue:.4f}")
    assert result.pvalue > 1e-3


def test_probabilities_are_the_exact_decimals(doc):
    sampler = Sampler(doc)
    assert sampler.probabilities("home") == tuple(Fraction(str(v)) for v in ROW)
    assert sum(sampler.probabilities("work")) == 1


def test_row_within_tolerance_is_renormalised_exactly():
    row = [0.3, 0.7000000000004]  # sums to 1 + 4e-13: allowed by docs/model.md
    sampler = Sampler(make_doc(["x"], ["u", "v"], [row]))
    total = Fraction("0.3") + Fraction("0.7000000000004")
    assert sampler.probabilities("x") == (Fraction("0.3") / total,
                                          Fraction("0.7000000000004") / total)
    assert sum(sampler.probabilities("x")) == 1


def test_row_outside_tolerance_is_refused():
    bad = make_doc(["x"], ["u", "v"], [[0.3, 0.700000000002]])  # 1 + 2e-12
    with pytest.raises(InputError, match=r"matrix\[0\]: row must sum to 1 within 1e-12"):
        check_document(bad)


def test_seed_is_reproducible_and_default_is_secure(doc, monkeypatch):
    a = Sampler(doc, seed=5).sample_many(["home", "work"] * 200)
    b = Sampler(doc, seed=5).sample_many(["home", "work"] * 200)
    c = Sampler(doc, seed=6).sample_many(["home", "work"] * 200)
    assert a == b
    assert a != c
    calls = []

    def fake_urandom(size):
        calls.append(size)
        # words 0x00000002, 0x540BE3FF joined big-endian: U = 9_999_999_999 = T - 1 for
        # the row's weights (T = 10^10, 34 bits, two words per draw)
        return bytes.fromhex("00000002540be3ff") * (size // 8)

    monkeypatch.setattr("mechopt._words.os.urandom", fake_urandom)
    sampler = Sampler(doc)
    assert sampler.sample("home") == "f"  # the last unit falls in the last output of positive mass
    assert calls == [65536]  # secure words, read from the operating system in blocks


def test_unknown_label(doc):
    sampler = Sampler(doc, seed=1)
    with pytest.raises(InputError, match=r"label: 'gym' is not an input of the mechanism"):
        sampler.sample("gym")
    with pytest.raises(InputError, match="'gym'"):
        sampler.sample_many(["home", "gym"])


def test_tampered_matrix_is_refused(tmp_path, doc):
    doc["matrix"][0] = [0.5, 0.1234567891, 0.1, 0.1, 0.0765432109, 0.1]  # still sums to 1
    path = write(tmp_path / "m.json", doc)
    with pytest.raises(VerificationError, match=r"m\.json: sha256: recorded digest"):
        load_document(path)


def test_tampered_privacy_claim_is_refused(tmp_path, doc):
    doc["privacy"][0]["matrix"][0][1] = 0.1  # a tighter claim than the one hashed
    with pytest.raises(VerificationError, match="modified after export"):
        load_document(write(tmp_path / "m.json", doc))
    with pytest.raises(VerificationError):
        Sampler(doc)


def test_unhashed_fields_may_change(tmp_path, doc):
    doc["objective"]["value"] = 123.0
    doc["solver_stats"] = {"time": 1.0}  # extra fields are allowed (docs/formats.md)
    assert load_document(write(tmp_path / "m.json", doc))["objective"]["value"] == 123.0


@pytest.mark.parametrize("mutate, match", [
    (lambda d: d.pop("certificate"), r"certificate: required field is missing"),
    (lambda d: d.update(format="other"), r"format: must be 'mechopt-mechanism'"),
    (lambda d: d.update(version=3), r"version: must be 1 or 2"),
    (lambda d: d.update(version=True), r"version: must be 1 or 2"),
    (lambda d: d.update(memoize=1), r"memoize: must be true or false"),
    (lambda d: d.update(family={"name": "hadamard"}), r"outputs: a family file lists no outputs"),
    (lambda d: d.update(inputs=["home", "home"]), r"inputs\[1\]: labels must be unique"),
    (lambda d: d.update(outputs=[1, 2, 3, 4, 5, 6]), r"outputs\[0\]: must be a string"),
    (lambda d: d.update(inputs=[]), r"inputs: must be a non-empty list"),
    (lambda d: d["matrix"].pop(), r"matrix: must be a list of 2 rows"),
    (lambda d: d["matrix"][1].pop(), r"matrix\[1\]: must be a list of 6 entries"),
    (lambda d: d["matrix"][0].__setitem__(3, -0.0001), r"matrix\[0\]\[3\]: must be >= 0"),
    (lambda d: d["matrix"][0].__setitem__(3, True), r"matrix\[0\]\[3\]: must be a number"),
    (lambda d: d["matrix"][0].__setitem__(3, "0"), r"matrix\[0\]\[3\]: must be a number"),
    (lambda d: d["matrix"][0].__setitem__(3, float("inf")), r"matrix\[0\]\[3\]: must be finite"),
    (lambda d: d.update(privacy={"notion": "ldp"}), r"privacy: must be a list"),
    (lambda d: d.update(privacy=[{"epsilon": 1}]), r"privacy\[0\]: must be an object with a string 'notion'"),
    (lambda d: d.update(objective={"value": 1}), r"objective\.kind: is required"),
    (lambda d: d["certificate"].pop("checks"), r"certificate\.checks: is required"),
    (lambda d: d.update(sha256="abc"), r"sha256: must be 64 lowercase hex digits"),
])
def test_malformed_documents(doc, mutate, match):
    mutate(doc)
    with pytest.raises(InputError, match=match):
        check_document(doc)


def test_file_level_errors(tmp_path, doc):
    with pytest.raises(InputError, match=r"missing\.json: file does not exist"):
        load_document(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match=r"bad\.json: is not valid JSON"):
        load_document(bad)
    nan = tmp_path / "nan.json"
    nan.write_text(json.dumps(doc).replace("0.2,", "NaN,", 1))
    with pytest.raises(InputError, match=r"nan\.json: matrix\[0\]\[2\]: NaN is not a JSON number"):
        load_document(nan)
    doc["matrix"][0][0] = 2.0
    with pytest.raises(InputError, match=r"shape\.json: matrix\[0\]: row must sum to 1"):
        load_document(write(tmp_path / "shape.json", doc))
    with pytest.raises(InputError, match="seed: must be an integer"):
        Sampler(make_doc(["x"], ["y"], [[1.0]]), seed=1.5)


BLOCKER = textwrap.dedent("""
    import sys
    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {"numpy", "scipy", "cvxpy"}:
                raise ImportError(f"blocked import of {name}")
            return None
    sys.meta_path.insert(0, Block())
    try:
        import numpy
    except ImportError:
        pass
    else:
        raise SystemExit("the blocker does not work")
    from mechopt.client import Sampler, load_document
    doc = load_document(sys.argv[1])
    sampler = Sampler(doc)
    out = sampler.sample_many(doc["inputs"] * 50)
    assert set(out) <= set(doc["outputs"]), out
    bad = [m for m in ("numpy", "scipy", "cvxpy") if m in sys.modules]
    assert not bad, bad
    print("ok", len(out))
""")


def test_client_path_runs_without_numpy_scipy_cvxpy(tmp_path, doc):
    path = write(tmp_path / "m.json", doc)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", BLOCKER, str(path)], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok 100"


def test_version_1_document_still_verifies_and_hashes_differ_from_version_2(doc):
    old = make_doc(["home", "work"], list("abcdef"), doc["matrix"], version=1)
    assert check_document(old) is old
    assert old["sha256"] != doc["sha256"]  # same content, the version 2 digest is RFC 8785's
    text = '{"inputs":["home","work"],"matrix":[[0.4375,0.1234567891,0.2,0,0.1390432109,0.1]'
    from mechopt._canonical import canonical_bytes

    assert canonical_bytes(doc).decode().startswith(text)  # 0.0 is written 0, as in JavaScript


def test_memoized_sampler_repeats_one_response_per_value(doc):
    memo = make_doc(["home", "work"], list("abcdef"), doc["matrix"])
    memo["memoize"] = True
    memo["sha256"] = canonical_digest(memo)
    store = {}
    sampler = Sampler(memo, store=store)
    first = sampler.sample("home")
    assert sampler.sample_many(["home"] * 100) == [first] * 100
    assert store == {f"{memo['sha256']}:home": first}
    assert Sampler(memo, store=store).sample("home") == first  # a new session, same store
    store[f"{memo['sha256']}:work"] = "zz"
    with pytest.raises(InputError, match="store: holds 'zz'"):
        sampler.sample("work")
    with pytest.raises(InputError, match="words: give either a seed or a word stream"):
        Sampler(memo, seed=1, words=[1])
    with pytest.raises(InputError, match=r"words\[0\]: must be an integer in \[0, 2\*\*32\)"):
        Sampler(memo, words=[2**32]).sample("home")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_processes_do_not_replay_buffered_random_words(doc):
    """A child forked after a draw must not reuse the parent's buffered os.urandom bytes."""
    sampler = Sampler(doc)
    sampler.sample("home")  # fills the 64 KiB block
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report its next draws' words
        os.close(read)
        words = [sampler._take(1) for _ in range(8)]
        os.write(write, json.dumps(words).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    child = json.loads(os.read(read, 65536))
    os.close(read)
    parent = [sampler._take(1) for _ in range(8)]
    assert child != parent


def test_a_rehashed_file_that_breaks_its_claims_is_refused(tmp_path):
    """Issue 14: an identity matrix claiming LDP, re-hashed, printed the true labels."""
    bad = make_doc(["a", "b"], ["a", "b"], [[1.0, 0.0], [0.0, 1.0]], privacy=[{"notion": "ldp", "epsilon": 1.0}])
    path = write(tmp_path / "m.json", bad)
    with pytest.raises(VerificationError, match="privacy"):
        load_document(path)
    with pytest.raises(VerificationError, match="privacy"):
        Sampler(bad)
    assert load_document(path, verify=False)["inputs"] == ["a", "b"]  # only when asked


def test_privatize_and_estimate_refuse_a_file_that_breaks_its_claims(tmp_path, capsys):
    from mechopt.cli import main

    bad = make_doc(["a", "b"], ["a", "b"], [[1.0, 0.0], [0.0, 1.0]], privacy=[{"notion": "ldp", "epsilon": 1.0}])
    path = write(tmp_path / "m.json", bad)
    (tmp_path / "in.txt").write_text("a\nb\n")
    rc = main(["privatize", str(path), "--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "out.txt")])
    err = capsys.readouterr().err
    assert rc == 1 and "privacy" in err and not (tmp_path / "out.txt").exists()
    (tmp_path / "rep.txt").write_text("a\nb\n")
    rc = main(["estimate", str(path), "--reports", str(tmp_path / "rep.txt")])
    assert rc == 1 and "privacy" in capsys.readouterr().err
