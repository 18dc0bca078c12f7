"""Issue 20 (items 1 and 6): one load-and-verify path for mechanism files.

Every Python consumer of a mechanism file — ``mechopt verify``, ``privatize``,
``estimate``, :mod:`mechopt.client`, the families — must refuse what ``mechopt verify``
refuses, with the same exit code class (2 malformed, 1 a claim or the digest fails), on
one line and without a traceback.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from mechopt._canonical import canonical_digest
from mechopt._errors import InputError, VerificationError
from mechopt.cli import main
from mechopt.client import Sampler, load_document, verdict
from mechopt.families import family_digest, load_family_document


def matrix_doc(matrix, privacy, inputs=("a", "b"), outputs=None):
    doc = {"format": "mechopt-mechanism", "version": 2, "inputs": list(inputs),
           "outputs": list(outputs or inputs), "matrix": matrix, "privacy": privacy,
           "objective": {"kind": "none", "value": None, "bound": None},
           "certificate": {"verified": True, "method": "exact", "checks": []}}
    doc["sha256"] = canonical_digest(doc)
    return doc


def family_doc(family, privacy, k=3):
    doc = {"format": "mechopt-mechanism", "version": 2, "inputs": [str(i) for i in range(k)],
           "family": family, "privacy": privacy, "objective": {"kind": "none"},
           "certificate": {"verified": True, "method": "exact-family", "checks": []}}
    doc["sha256"] = family_digest(doc)
    return doc


IDENTITY = [[1.0, 0.0], [0.0, 1.0]]


def run(argv, capsys) -> tuple[int, str]:
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    return rc, err


def all_commands(tmp_path: Path, text: str, capsys, labels=("a", "b")) -> dict[str, tuple[int, str]]:
    """Exit code and stderr of verify, privatize and estimate on one mechanism file text."""
    path = tmp_path / "m.json"
    path.write_text(text)
    (tmp_path / "in.txt").write_text("".join(f"{x}\n" for x in labels))
    out = tmp_path / "out.txt"
    if out.exists():
        out.unlink()
    res = {"verify": run(["verify", path], capsys),
           "privatize": run(["privatize", path, "--input", tmp_path / "in.txt", "--output", out], capsys)}
    res["privatize_wrote"] = (int(out.exists()), "")
    res["estimate"] = run(["estimate", path, "--reports", tmp_path / "in.txt"], capsys)
    return res


def assert_refused(res: dict, code: int, field: str = "") -> None:
    for cmd in ("verify", "privatize", "estimate"):
        rc, err = res[cmd]
        assert rc == code, (cmd, rc, err)
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1 and "Traceback" not in err, (cmd, err)
        assert field in err, (cmd, field, err)
    assert res["privatize_wrote"][0] == 0


# -- 1. a re-hashed family file that breaks its claim -----------------------------------


def test_rehashed_subset_family_breaking_ldp_is_refused_everywhere(tmp_path, capsys):
    doc = family_doc({"kind": "subset_selection", "ratio": 1e300, "mixture": [{"d": 1, "weight": 1.0}]},
                     [{"notion": "ldp", "epsilon": 1.0}])
    res = all_commands(tmp_path, json.dumps(doc), capsys, labels=("0", "1", "2"))
    assert_refused(res, 1, "ldp")
    path = tmp_path / "m.json"
    with pytest.raises(VerificationError, match="ldp"):
        load_document(path)
    with pytest.raises(VerificationError, match="ldp"):
        load_family_document(path)
    assert verdict(json.dumps(doc))[0] == "refuse-verification"


def test_a_family_file_that_meets_its_claim_is_sampled(tmp_path, capsys):
    doc = family_doc({"kind": "subset_selection", "ratio": 2.5, "mixture": [{"d": 1, "weight": 1.0}]},
                     [{"notion": "ldp", "epsilon": 1.0}])
    res = all_commands(tmp_path, json.dumps(doc), capsys, labels=("0", "1", "2"))
    assert res["verify"][0] == 0 and res["privatize"][0] == 0, res
    assert verdict(json.dumps(doc)) == ("accept", "")


# -- 2. claim fields that are not JSON numbers ------------------------------------------


@pytest.mark.parametrize("privacy, field", [
    ([{"notion": "eldp", "matrix": [[0, "0.1"], ["0.1", 0]]}], "privacy[0].matrix[0][1]"),
    ([{"notion": "eldp", "matrix": [[0, "inf"], ["0.1", 0]]}], "privacy[0].matrix[1][0]"),
    ([{"notion": "eldp", "matrix": [[0, "inf"], ["Infinity", 0]]}], "privacy[0].matrix[1][0]"),
    ([{"notion": "metric", "epsilon": 1.0, "distance": [[0, "1"], ["1", 0]]}], "privacy[0].distance[0][1]"),
    ([{"notion": "metric", "epsilon": 1.0, "edges": [["a", "b", "1"]]}], "privacy[0].edges[0][2]"),
    ([{"notion": "ldp", "epsilon": "1"}], "privacy[0].epsilon"),
    ([{"notion": "lip", "epsilon": 1.0, "prior": ["0.5", 0.5]}], "privacy[0].prior[0]"),
    ([{"notion": "lip", "epsilon": 1.0, "prior": [0.5, 0.5], "delta": "0.1"}], "privacy[0].delta"),
    ([{"notion": "eldp", "matrix": [[0, True], [1, 0]]}], "privacy[0].matrix[0][1]"),
])
def test_claim_fields_must_be_json_numbers(tmp_path, capsys, privacy, field):
    doc = matrix_doc(IDENTITY, privacy)
    assert_refused(all_commands(tmp_path, json.dumps(doc), capsys), 2, field)
    with pytest.raises(InputError, match=field.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        Sampler(doc)
    assert verdict(json.dumps(doc))[0] == "refuse-input"


def test_the_identity_with_inf_budgets_is_still_sampled(tmp_path, capsys):
    doc = matrix_doc(IDENTITY, [{"notion": "eldp", "matrix": [[0, "inf"], ["inf", 0]]}])
    res = all_commands(tmp_path, json.dumps(doc), capsys)
    assert res["verify"][0] == 0 and res["privatize"][0] == 0 and res["estimate"][0] == 0, res


# -- 3. a BP-LIP box longer than the inputs ---------------------------------------------


@pytest.mark.parametrize("claim, field", [
    ({"notion": "bp_lip", "epsilon": 1.0, "lower": [0.1, 0.1, 0.1], "upper": [0.9, 0.9, 0.9]}, "privacy[0]"),
    ({"notion": "bp_lip", "epsilon": 1.0, "priors": [[0.2, 0.3, 0.5]]}, "privacy[0]"),
    ({"notion": "lip", "epsilon": 1.0, "prior": [0.2, 0.3, 0.5]}, "privacy[0].prior"),
    ({"notion": "eldp", "matrix": [[0, 1, 1], [1, 0, 1], [1, 1, 0]]}, "privacy[0].matrix"),
])
def test_claims_sized_for_other_inputs_are_refused(tmp_path, capsys, claim, field):
    doc = matrix_doc([[0.5, 0.5], [0.5, 0.5]], [claim])
    assert_refused(all_commands(tmp_path, json.dumps(doc), capsys), 2, field)


# -- 4. nesting depth -------------------------------------------------------------------


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a":' * 50_000, '{"matrix": ' + "[" * 70 + "]" * 70 + "}"])
def test_deep_nesting_is_refused_before_parsing(tmp_path, capsys, text):
    assert_refused(all_commands(tmp_path, text, capsys), 2, "nest")
    assert verdict(text)[0] == "refuse-input"


def test_nesting_inside_strings_does_not_count(tmp_path):
    doc = matrix_doc([[0.5, 0.5], [0.5, 0.5]], [{"notion": "ldp", "epsilon": 1.0}])
    doc["objective"]["note"] = "[" * 500 + '\\"{' * 100
    assert verdict(json.dumps(doc)) == ("accept", "")


# -- 5. duplicate keys ------------------------------------------------------------------


def test_duplicate_keys_are_refused(tmp_path, capsys):
    good = matrix_doc([[0.5, 0.5], [0.5, 0.5]], [{"notion": "ldp", "epsilon": 1.0}])
    text = json.dumps(good)
    # a second "matrix" key after the hashed one: the last one would win
    dup = text[:-1] + ', "matrix": [[1.0, 0.0], [0.0, 1.0]]}'
    assert_refused(all_commands(tmp_path, dup, capsys), 2, "matrix")
    with pytest.raises(InputError, match="matrix"):
        load_document(tmp_path / "m.json")
    nested = text.replace('"epsilon": 1.0', '"epsilon": 1.0, "epsilon": 50')
    assert verdict(nested)[0] == "refuse-input" and "epsilon" in verdict(nested)[1]


def test_a_lone_surrogate_outside_the_digest_is_refused_as_the_js_client_does(tmp_path, capsys):
    # not I-JSON (RFC 7493): the JavaScript reader refuses it anywhere, so Python does too
    doc = matrix_doc([[0.5, 0.5], [0.5, 0.5]], [{"notion": "ldp", "epsilon": 1.0}])
    doc["certificate"]["method"] = "\udc00"
    assert_refused(all_commands(tmp_path, json.dumps(doc), capsys), 2, "certificate.method")
    paired = json.dumps(dict(doc, certificate=dict(doc["certificate"], method="\U0001F600")))
    assert verdict(paired) == ("accept", "")


# -- 6. integers beyond float range ------------------------------------------------------


@pytest.mark.parametrize("where", ["epsilon", "matrix", "prior", "eldp"])
def test_integers_beyond_float_range_are_refused(tmp_path, capsys, where):
    big = "1" + "0" * 400
    if where == "epsilon":
        doc = matrix_doc([[0.5, 0.5], [0.5, 0.5]], [{"notion": "ldp", "epsilon": 7}])
        text = json.dumps(doc).replace('"epsilon": 7', f'"epsilon": {big}')
        field = "privacy[0].epsilon"
    elif where == "matrix":
        doc = matrix_doc([[7, 0], [0.5, 0.5]], [{"notion": "eldp", "matrix": [[0, "inf"], ["inf", 0]]}])
        text = json.dumps(doc).replace("[[7, 0]", f"[[{big}, 0]")
        field = "matrix[0][0]"
    elif where == "prior":
        doc = matrix_doc([[0.5, 0.5], [0.5, 0.5]], [{"notion": "lip", "epsilon": 1.0, "prior": [7, 0.5]}])
        text = json.dumps(doc).replace("[7, 0.5]", f"[{big}, 0.5]")
        field = "privacy[0].prior[0]"
    else:
        doc = matrix_doc([[0.5, 0.5], [0.5, 0.5]], [{"notion": "eldp", "matrix": [[0, 7], [1, 0]]}])
        text = json.dumps(doc).replace("[0, 7]", f"[0, {big}]")
        field = "privacy[0].matrix[0][1]"
    assert_refused(all_commands(tmp_path, text, capsys), 2, field)
    kind, message = verdict(text)
    assert kind == "refuse-input" and field in message


# -- 7. one verdict: verify and the client agree on mutated files --------------------------


def _mutations(rng: random.Random, base: dict) -> list[str]:
    """Hostile variants of one good file: each re-hashed, so only the checks can refuse it."""
    out = []
    for _ in range(60):
        doc = json.loads(json.dumps(base))
        choice = rng.randrange(9)
        if choice == 0:
            i, j = rng.randrange(len(doc["matrix"])), rng.randrange(len(doc["matrix"][0]))
            doc["matrix"][i][j] = rng.choice([0.0, 1.0, "0.5", -0.1, None, 2, doc["matrix"][i][j] * 1.5])
        elif choice == 1:
            doc["privacy"][0]["epsilon"] = rng.choice([0.0, 0.1, -1, "1", "inf", None, True, 1e-300, 100])
        elif choice == 2:
            doc["privacy"].append(rng.choice([
                {"notion": "uldp", "epsilon": 0.5, "sensitive": ["a"]},
                {"notion": "uldp", "epsilon": 0.5, "sensitive": []},
                {"notion": "high_low", "epsilon": 0.5, "sensitive": ["c"]},
                {"notion": "block", "epsilon": 0.5, "blocks": [["a"], ["b", "c"]]},
                {"notion": "block", "epsilon": 0.5, "blocks": [["a"], ["b"]]},
                {"notion": "lip", "epsilon": 0.5, "prior": [0.2, 0.3, 0.5], "delta": 0.01},
                {"notion": "lip", "epsilon": 0.5, "prior": [0.2, 0.3, 0.5], "delta": 1.5},
                {"notion": "bp_lip", "epsilon": 1.0, "lower": [0.1, 0.1, 0.1], "upper": [0.8, 0.8, 0.8]},
                {"notion": "bp_lip", "epsilon": 1.0, "lower": [0.1, 0.1], "upper": [0.8, 0.8]},
                {"notion": "metric", "epsilon": 1.0, "edges": [["a", "b"], ["b", "c", 2]]},
                {"notion": "metric", "epsilon": 1.0, "edges": [["a", "z"]]},
                {"notion": "metric", "epsilon": 1.0, "edges": []},
                {"notion": "eldp", "matrix": [[0, 1, "inf"], [1, 0, 1], ["inf", 1, 0]]},
                {"notion": "eldp", "matrix": [[0, 1, "inf"], [1, 1, 1], ["inf", 1, 0]]},
                {"notion": "wc_lip", "epsilon": 2.0, "extra": 1},
                {"notion": "nope", "epsilon": 2.0},
            ]))
        elif choice == 3:
            doc["inputs"][rng.randrange(3)] = rng.choice(["a", 1, "", "zz"])
        elif choice == 4:
            doc["version"] = rng.choice([1, 2.0, "2", 3, True])
        elif choice == 5:
            doc["objective"] = rng.choice([{}, {"kind": 1}, {"kind": "x", "value": "1"}, [], {"kind": "x"}])
        elif choice == 6:
            doc["certificate"] = rng.choice([{}, {"verified": 1, "method": "x", "checks": []},
                                             {"verified": True, "method": "x", "checks": [{}]},
                                             {"verified": True, "method": "x", "checks": []}])
        elif choice == 7:
            doc["outputs"] = rng.choice([["x", "y", "z"], ["x", "x", "z"], ["x", "y"], []])
        else:
            doc["memoize"] = rng.choice([True, 1, "yes", False])
        if doc.get("version") in (1, 2) and not isinstance(doc["version"], bool):
            try:
                doc["sha256"] = canonical_digest(doc)
            except (KeyError, TypeError, ValueError):
                pass
        out.append(json.dumps(doc))
    return out


def test_verify_and_the_client_give_the_same_verdict_on_mutated_files(tmp_path, capsys):
    base = matrix_doc([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]],
                      [{"notion": "ldp", "epsilon": 0.75}], inputs=("a", "b", "c"), outputs=("x", "y", "z"))
    rng = random.Random(20)
    seen = set()
    path = tmp_path / "m.json"
    for text in _mutations(rng, base):
        kind, message = verdict(text)
        path.write_text(text)
        rc, err = run(["verify", path], capsys)
        expected = {"accept": 0, "refuse-verification": 1, "refuse-input": 2}[kind]
        assert rc == expected, (text, kind, message, err)
        assert "Traceback" not in err
        seen.add(kind)
    assert seen == {"accept", "refuse-verification", "refuse-input"}


# -- the standard-library client reads and verifies family files without numpy ------------

_NO_NUMPY = '''
import json, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"numpy", "scipy", "cvxpy", "jsonschema"}:
            raise ImportError(f"blocked import of {name}")
        return None
sys.meta_path.insert(0, Block())
from mechopt.client import load_document, verdict
from mechopt.families import FamilySampler, load_family_document
good, bad = sys.argv[1], sys.argv[2]
doc, fam = load_family_document(good)
assert load_document(good)["family"]["kind"] == "subset_selection"
sampler = FamilySampler(fam, seed=1)
reports = [sampler.sample_index(i % 3) for i in range(30)]
print(verdict(open(good).read())[0], verdict(open(bad).read())[0], len(reports))
try:
    load_family_document(bad)
except Exception as err:
    print(type(err).__name__)
bad_mods = [m for m in ("numpy", "scipy", "cvxpy", "jsonschema") if m in sys.modules]
assert not bad_mods, bad_mods
'''


def test_family_files_are_verified_by_the_client_without_numpy(tmp_path):
    import os
    import subprocess
    import sys

    good = family_doc({"kind": "subset_selection", "ratio": 2.5, "mixture": [{"d": 1, "weight": 1.0}]},
                      [{"notion": "ldp", "epsilon": 1.0}, {"notion": "lip", "epsilon": 1.0, "prior": [0.2, 0.3, 0.5]}])
    bad = family_doc({"kind": "subset_selection", "ratio": 1e300, "mixture": [{"d": 1, "weight": 1.0}]},
                     [{"notion": "ldp", "epsilon": 1.0}])
    (tmp_path / "good.json").write_text(json.dumps(good))
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    repo = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-c", _NO_NUMPY, str(tmp_path / "good.json"), str(tmp_path / "bad.json")],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(repo)), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["accept", "refuse-verification", "30", "VerificationError"]


def test_the_api_refuses_what_the_client_refuses():
    """``Mechanism.from_dict`` on a parsed document runs the client's checks first."""
    from mechopt import Mechanism

    doc = matrix_doc(IDENTITY, [{"notion": "eldp", "matrix": [[0, "inf"], ["Infinity", 0]]}])
    with pytest.raises(InputError, match=r"privacy\[0\]\.matrix\[1\]\[0\]"):
        Mechanism.from_dict(doc)
    fam = family_doc({"kind": "subset_selection", "ratio": 2.0, "mixture": [{"d": 1, "weight": 1.0}]},
                     [{"notion": "ldp", "epsilon": "1"}])
    with pytest.raises(InputError, match=r"privacy\[0\]\.epsilon"):
        Mechanism.from_dict(fam)


def test_family_privatize_to_standard_output(tmp_path, capsys):
    doc = family_doc({"kind": "subset_selection", "ratio": 2.0, "mixture": [{"d": 1, "weight": 1.0}]},
                     [{"notion": "ldp", "epsilon": 1.0}])
    (tmp_path / "m.json").write_text(json.dumps(doc))
    (tmp_path / "in.txt").write_text("0\n1\n2\n")
    rc = main(["privatize", str(tmp_path / "m.json"), "--input", str(tmp_path / "in.txt"), "--output", "-",
               "--seed", "1"])
    out = capsys.readouterr().out.split()
    assert rc == 0 and len(out) == 3 and all(y in ("{0}", "{1}", "{2}") for y in out)
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("store", ["[" * 100_000, '{"k": "a", "k": "b"}'])
def test_a_hostile_memo_store_is_one_line(tmp_path, capsys, store):
    doc = matrix_doc([[0.5, 0.5], [0.5, 0.5]], [{"notion": "ldp", "epsilon": 1.0}])
    doc["memoize"] = True
    doc["sha256"] = canonical_digest(doc)
    (tmp_path / "m.json").write_text(json.dumps(doc))
    (tmp_path / "in.txt").write_text("a\n")
    (tmp_path / "store.json").write_text(store)
    rc, err = run(["privatize", tmp_path / "m.json", "--input", tmp_path / "in.txt", "--output", tmp_path / "o.txt",
                   "--memo", tmp_path / "store.json"], capsys)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "store.json" in err, err
