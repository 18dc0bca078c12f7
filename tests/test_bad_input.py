"""Bad input, end to end: every malformed file gets one line on stderr and exit code 2.

Each case of the table is a file (a YAML or JSON problem, or a JSON mechanism file)
run through ``mechopt.cli.main`` in-process; a few are also run as a real subprocess
(``python -m mechopt.cli`` and the ``mechopt`` console script). A case states the exit
code it expects (2 bad input; 1 a hash or privacy check that fails, docs/cli.md) and the
substrings the one-line message must contain: the field and the rule.
"""

from __future__ import annotations

import copy
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mechopt import (BPLIP, ELDP, LDP, LIP, InputError, Mechanism, MechoptError, MetricLDP,
                     VerificationError, load_problem, notion_from_spec, verify)
from mechopt._canonical import canonical_digest
from mechopt.cli import main

REPO = Path(__file__).resolve().parents[1]

# -- valid documents the cases below break one field at a time -------------------------

# A channel that is 1.0-LDP with room to spare: ratios 0.6/0.4 = 1.5 < e.
GOOD_MATRIX = [[0.6, 0.4], [0.4, 0.6]]


def mechanism_doc(**changes) -> dict:
    """A valid mechanism document (docs/formats.md), with ``changes`` applied, hash recomputed."""
    doc = {
        "format": "mechopt-mechanism",
        "version": 1,
        "inputs": ["a", "b"],
        "outputs": ["a", "b"],
        "matrix": copy.deepcopy(GOOD_MATRIX),
        "privacy": [{"notion": "ldp", "epsilon": 1.0}],
        "objective": {"kind": "expected_loss", "value": 0.4, "bound": 0.4},
        "certificate": {"verified": True, "method": "exact", "checks": []},
    }
    doc.update(copy.deepcopy(changes))
    doc["sha256"] = canonical_digest(doc)
    return doc


def edited_after_export() -> str:
    """A mechanism whose matrix was edited (still a valid channel) but not re-hashed."""
    doc = mechanism_doc()
    doc["matrix"][0] = [0.65, 0.35]
    return json.dumps(doc)


def rehashed(**changes) -> str:
    return json.dumps(mechanism_doc(**changes))


# -- the table ------------------------------------------------------------------------------
# (id, file name, file text, exit code, substrings of the stderr line)
# Problem files are run with ``mechopt solve FILE -o out.json``; mechanism files with
# ``mechopt verify FILE``.

YAML_HEAD = "inputs: [a, b, c]\noutputs: inputs\n"


def privacy_case(case_id: str, notions: str, needles: list[str], *, extra: str = "") -> tuple:
    """A YAML problem on three inputs whose ``privacy`` list is ``notions``: exit code 2, ``needles``."""
    return (case_id, "p.yaml", YAML_HEAD + f"privacy: [{notions}]\n" + extra, 2, needles)


PROBLEM_CASES = [
    privacy_case("unknown-notion", "{notion: gdpr, epsilon: 1.0}", ["privacy[0].notion", "unknown notion", "'gdpr'"]),
    privacy_case("missing-epsilon", "{notion: ldp}", ["privacy[0].epsilon", "required"]),
    privacy_case("negative-epsilon", "{notion: ldp, epsilon: -0.5}", ["privacy[0].epsilon", ">= 0", "-0.5"]),
    privacy_case("nan-epsilon-yaml", "{notion: ldp, epsilon: .nan}", ["privacy[0].epsilon", "NaN"]),
    ("nan-epsilon-json", "p.json", '{"k": 3, "privacy": [{"notion": "ldp", "epsilon": NaN}]}',
     2, ["privacy[0].epsilon", "NaN"]),
    privacy_case("string-epsilon", "{notion: ldp, epsilon: lots}",
                 ["privacy[0].epsilon", "must be a number", "'lots'"]),
    ("second-notion-bad", "p.yaml",
     YAML_HEAD + "privacy:\n  - {notion: ldp, epsilon: 1.0}\n  - {notion: ldp, epsilon: -2}\n",
     2, ["privacy[1].epsilon", ">= 0"]),
    ("prior-not-summing", "p.json",
     '{"k": 3, "privacy": [{"notion": "lip", "epsilon": 1, "prior": [0.2, 0.3, 0.4]}]}',
     2, ["privacy[0].prior", "sum to 1"]),
    privacy_case("prior-negative-entry", "{notion: lip, epsilon: 1, prior: [0.7, -0.2, 0.5]}",
                 ["privacy[0].prior[1]", ">= 0", "-0.2"]),
    privacy_case("prior-wrong-length", "{notion: lip, epsilon: 1, prior: [0.5, 0.5]}",
                 ["privacy[0].prior", "one entry per input"]),
    privacy_case("objective-prior-not-summing", "{notion: ldp, epsilon: 1}",
                 ["objective.prior", "sum to 1"], extra="objective: {kind: expected_loss, prior: [0.5, 0.5, 0.5]}\n"),
    privacy_case("E-not-square", "{notion: eldp, matrix: [[0, 1, 1], [1, 0], [1, 1, 0]]}",
                 ["privacy[0].matrix[1]", "square"]),
    privacy_case("E-wrong-size", "{notion: eldp, matrix: [[0, 1], [1, 0]]}", ["privacy[0].matrix", "3x3"]),
    ("E-negative", "p.json",
     '{"inputs": ["a", "b"], "privacy": [{"notion": "eldp", "matrix": [[0, -1], [1, 0]]}]}',
     2, ["privacy[0].matrix[0][1]", ">= 0", "-1"]),
    privacy_case("E-nan", "{notion: eldp, matrix: [[0, 1, .nan], [1, 0, 1], [1, 1, 0]]}",
                 ["privacy[0].matrix[0][2]", "NaN"]),
    privacy_case("E-nonzero-diagonal", "{notion: eldp, matrix: [[0, 1, 1], [1, 0.5, 1], [1, 1, 0]]}",
                 ["privacy[0].matrix[1][1]", "diagonal", "0.5"]),
    privacy_case("blocks-not-covering", "{notion: block, epsilon: 1, blocks: [[a, b]]}",
                 ["privacy[0].blocks", "cover", "'c'"]),
    privacy_case("blocks-overlapping", "{notion: block, epsilon: 1, blocks: [[a, b], [b, c]]}",
                 ["privacy[0].blocks", "overlap", "'b'"]),
    privacy_case("sensitive-not-input", "{notion: high_low, epsilon: 1, sensitive: [casino]}",
                 ["privacy[0].sensitive[0]", "not an input label", "'casino'"]),
    ("uldp-sensitive-not-input", "p.json",
     '{"k": 2, "privacy": [{"notion": "uldp", "epsilon": 1, "sensitive": ["x"]}]}',
     2, ["privacy[0].sensitive[0]", "not an input label", "'x'"]),
    privacy_case("graph-negative-edge", "{notion: metric, epsilon: 1, edges: [[a, b, 1.0], [b, c, -2.0]]}",
                 ["privacy[0].edges[1][2]", ">= 0", "-2.0"]),
    privacy_case("graph-unknown-node", "{notion: metric, epsilon: 1, edges: [[a, z, 1.0]]}",
                 ["privacy[0].edges[0][1]", "not an input label", "'z'"]),
    privacy_case("unknown-notion-field", "{notion: ldp, epsilon: 1, epsilom: 2}",
                 ["privacy[0].epsilom", "not a field"]),
    privacy_case("bp-lip-lower-above-upper",
                 "{notion: bp_lip, epsilon: 1, lower: [0.5, 0.1, 0.1], upper: [0.4, 0.8, 0.8]}",
                 ["privacy[0].lower", "lower <= upper"]),
    privacy_case("bp-lip-empty-box", "{notion: bp_lip, epsilon: 1, lower: [0.5, 0.5, 0.5], upper: [0.9, 0.9, 0.9]}",
                 ["privacy[0].lower", "no probability vector"]),
    privacy_case("lip-delta-above-one", "{notion: lip, epsilon: 1, prior: [0.2, 0.3, 0.5], delta: 1.5}",
                 ["privacy[0].delta", "[0, 1]", "1.5"]),
    ("truncated-json", "p.json", '{"k": 3, "privacy": [{"notion": "ldp", "epsilon": 1',
     2, ["p.json", "not valid JSON"]),
    ("broken-yaml", "p.yaml", "k: 3\nprivacy: [{notion: ldp, epsilon: 1}\n  - nope: [\n",
     2, ["p.yaml", "not valid YAML"]),
    ("yaml-not-mapping", "p.yaml", "- k: 3\n- privacy: []\n",
     2, ["problem", "must be a mapping", "list"]),
    ("yaml-scalar", "p.yaml", "just a sentence\n",
     2, ["problem", "must be a mapping", "str"]),
    privacy_case("unknown-objective", "{notion: ldp, epsilon: 1}",
                 ["objective.kind", "unknown objective", "'happiness'"], extra="objective: {kind: happiness}\n"),
    ("mmse-without-values", "p.yaml",
     "k: 3\noutputs: free\nprivacy: [{notion: ldp, epsilon: 1}]\nobjective: {kind: mmse}\n",
     2, ["objective.values", "mmse needs"]),
    privacy_case("unknown-loss", "{notion: ldp, epsilon: 1}",
                 ["objective.loss", "unknown loss", "'hinge'"],
                 extra="objective: {kind: expected_loss, loss: hinge}\n"),
    ("duplicate-input-labels", "p.yaml",
     "inputs: [a, b, a]\nprivacy: [{notion: ldp, epsilon: 1}]\n",
     2, ["inputs", "unique", "'a'"]),
    ("k-zero", "p.yaml", "k: 0\nprivacy: [{notion: ldp, epsilon: 1}]\n",
     2, ["k", "positive integer", "0"]),
    ("k-and-inputs", "p.yaml", "k: 2\ninputs: [a, b]\nprivacy: [{notion: ldp, epsilon: 1}]\n",
     2, ["inputs", "not both"]),
    ("privacy-missing", "p.yaml", "k: 2\n", 2, ["privacy", "required"]),
    ("unknown-top-level-field", "p.json",
     '{"k": 2, "privacy": [{"notion": "ldp", "epsilon": 1}], "privcy": []}',
     2, ["privcy", "not a problem field"]),
    ("outputs-nonsense", "p.yaml", "k: 2\noutputs: everything\nprivacy: [{notion: ldp, epsilon: 1}]\n",
     2, ["outputs", "'everything'"]),
]

MECHANISM_CASES = [
    ("hash-mismatch", "m.json", edited_after_export(), 1, ["sha256", "does not match"]),
    ("truncated-mechanism", "m.json", rehashed()[:-40], 2, ["m.json", "not valid JSON"]),
    ("negative-probability", "m.json", rehashed(matrix=[[1.25, -0.25], [0.4, 0.6]]),
     2, ["matrix[0][1]", "must be >= 0"]),
    ("matrix-rows-vs-inputs", "m.json", rehashed(matrix=[[0.6, 0.4]]),
     2, ["matrix", "2 rows (one per input)", "got 1"]),
    ("matrix-columns-vs-outputs", "m.json", rehashed(matrix=[[0.6, 0.4, 0.0], [0.4, 0.6, 0.0]]),
     2, ["matrix[0]", "2 entries (one per output)", "got 3"]),
    ("matrix-rows-not-summing", "m.json", rehashed(matrix=[[0.6, 0.5], [0.4, 0.6]]),
     2, ["matrix[0]", "row must sum to 1"]),
    ("matrix-ragged", "m.json", rehashed(matrix=[[0.6, 0.4], [1.0]]),
     2, ["matrix[1]", "2 entries"]),
    ("matrix-nan", "m.json", rehashed().replace("0.6", "NaN", 1),
     2, ["matrix", "NaN", "finite"]),
    ("mechanism-not-object", "m.json", "[[0.6, 0.4], [0.4, 0.6]]", 2, ["document", "JSON object"]),
    ("mechanism-missing-format", "m.json",
     json.dumps({k: v for k, v in mechanism_doc().items() if k != "format"}),
     2, ["format", "required field is missing"]),
    ("mechanism-wrong-version", "m.json", rehashed(version=7), 2, ["version", "must be 1 or 2"]),
    ("mechanism-unknown-notion", "m.json", rehashed(privacy=[{"notion": "vibes", "epsilon": 1.0}]),
     2, ["privacy[0].notion", "'vibes'"]),
    ("mechanism-negative-epsilon", "m.json", rehashed(privacy=[{"notion": "ldp", "epsilon": -1.0}]),
     2, ["privacy[0].epsilon", "must be >= 0"]),
    ("mechanism-sensitive-not-input", "m.json",
     rehashed(privacy=[{"notion": "uldp", "epsilon": 1.0, "sensitive": ["q"]}]),
     2, ["privacy[0].sensitive[0]", "not an input label", "'q'"]),
    ("mechanism-prior-not-summing", "m.json",
     rehashed(privacy=[{"notion": "lip", "epsilon": 1.0, "prior": [0.5, 0.6]}]),
     2, ["privacy[0].prior", "sum to 1"]),
    ("mechanism-duplicate-inputs", "m.json", rehashed(inputs=["a", "a"]),
     2, ["inputs[1]", "labels must be unique"]),
    ("mechanism-not-text", "m.json", "\udcff", 2, ["m.json", "cannot read"]),
]

CASES = PROBLEM_CASES + MECHANISM_CASES


def test_the_table_is_large_enough():
    assert len(CASES) >= 25
    assert len({c[0] for c in CASES}) == len(CASES)


def write_case(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    if text == "\udcff":  # not UTF-8 at all
        path.write_bytes(b"\xff\xfe\x00{")
    else:
        path.write_text(text)
    return path


def argv_for(path: Path, tmp_path: Path) -> list[str]:
    if path.name.startswith("m"):
        return ["verify", str(path)]
    return ["solve", str(path), "-o", str(tmp_path / "out.json")]


def assert_one_line(err: str, code: int, expected_code: int, needles: list[str]) -> str:
    assert code == expected_code, err
    assert "Traceback" not in err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, f"expected one line on stderr, got {lines!r}"
    line = lines[0]
    assert line.startswith("mechopt: ")
    for needle in needles:
        assert needle in line, f"{needle!r} not in {line!r}"
    return line


@pytest.mark.parametrize("case_id,name,text,code,needles", CASES, ids=[c[0] for c in CASES])
def test_cli_bad_input_in_process(tmp_path, capsys, case_id, name, text, code, needles):
    path = write_case(tmp_path, name, text)
    rc = main(argv_for(path, tmp_path))
    out, err = capsys.readouterr()
    assert_one_line(err, rc, code, needles)
    assert "Traceback" not in out
    # a rejected problem never produces a mechanism file
    assert not (tmp_path / "out.json").exists()


def test_missing_file(tmp_path, capsys):
    for argv in (["solve", str(tmp_path / "nope.yaml"), "-o", str(tmp_path / "o.json")],
                 ["verify", str(tmp_path / "nope.json")],
                 ["verify", str(write_case(tmp_path, "m.json", rehashed())), "--problem",
                  str(tmp_path / "nope.yaml")]):
        rc = main(argv)
        _, err = capsys.readouterr()
        assert_one_line(err, rc, 2, ["nope.", "does not exist"])


def test_directory_instead_of_file(tmp_path, capsys):
    rc = main(["solve", str(tmp_path), "-o", str(tmp_path / "o.json")])
    _, err = capsys.readouterr()
    assert_one_line(err, rc, 2, [str(tmp_path), "directory"])


def test_unknown_command_and_missing_argument(capsys):
    with pytest.raises(SystemExit) as info:
        main(["conjure"])
    _, err = capsys.readouterr()
    assert_one_line(err, info.value.code, 2, ["invalid choice", "'conjure'"])
    with pytest.raises(SystemExit) as info:
        main(["solve", "p.yaml"])  # -o is required
    _, err = capsys.readouterr()
    assert_one_line(err, info.value.code, 2, ["-o/--output", "required"])


def test_verify_problem_with_other_inputs(tmp_path, capsys):
    mech = write_case(tmp_path, "m.json", rehashed())
    prob = write_case(tmp_path, "p.yaml", "inputs: [x, y]\nprivacy: [{notion: ldp, epsilon: 1}]\n")
    rc = main(["verify", str(mech), "--problem", str(prob)])
    _, err = capsys.readouterr()
    assert_one_line(err, rc, 2, ["inputs", "differ"])


# -- exit 1 that is not bad input: the file is well formed but its claims fail -----------


@pytest.mark.parametrize("changes,needles,load_match", [
    # 0.6 / 0.4 = 1.5 > e^0.4 = 1.49...: the claim 0.4-LDP is false
    ({"privacy": [{"notion": "ldp", "epsilon": 0.4}]}, ["NOT verified", "column 0"], r"privacy\[0\] \(ldp\): column 0"),
], ids=["false-privacy-claim"])
def test_well_formed_file_failing_verification(tmp_path, capsys, changes, needles, load_match):
    """A well-formed file whose matrix fails the exact check: verify says so, exit 1."""
    assert 0.6 / 0.4 > math.exp(0.4)
    path = write_case(tmp_path, "m.json", rehashed(**changes))
    rc = main(["verify", str(path)])
    out, err = capsys.readouterr()
    assert rc == 1
    assert "Traceback" not in out + err
    assert all(n in out for n in needles)
    with pytest.raises(VerificationError, match=load_match):
        Mechanism.load(path)


# -- real processes --------------------------------------------------------------------

SUBPROCESS_CASES = ["nan-epsilon-yaml", "E-negative", "hash-mismatch", "truncated-json", "blocks-overlapping"]


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=REPO)


@pytest.mark.parametrize("case_id", SUBPROCESS_CASES)
def test_cli_bad_input_subprocess(tmp_path, case_id):
    _, name, text, code, needles = next(c for c in CASES if c[0] == case_id)
    path = write_case(tmp_path, name, text)
    proc = _run([sys.executable, "-m", "mechopt.cli", *argv_for(path, tmp_path)])
    assert_one_line(proc.stderr, proc.returncode, code, needles)
    assert "Traceback" not in proc.stdout


def test_console_script_bad_input(tmp_path):
    script = shutil.which("mechopt")
    if script is None:
        pytest.skip("the mechopt console script is not on PATH")
    path = write_case(tmp_path, "p.yaml", YAML_HEAD + "privacy: [{notion: ldp, epsilon: .nan}]\n")
    proc = _run([script, "solve", str(path), "-o", str(tmp_path / "out.json")])
    assert_one_line(proc.stderr, proc.returncode, 2, ["privacy[0].epsilon", "NaN"])
    proc = _run([script, "verify", str(tmp_path / "absent.json")])
    assert_one_line(proc.stderr, proc.returncode, 2, ["absent.json", "does not exist"])


# -- the Python API raises the same errors ---------------------------------------------------


def problem(**changes) -> dict:
    doc = {"inputs": ["a", "b", "c"], "outputs": "inputs",
           "privacy": [{"notion": "ldp", "epsilon": 1.0}],
           "objective": {"kind": "expected_loss"}}
    doc.update(changes)
    return doc


@pytest.mark.parametrize("doc,field,pattern", [
    (problem(privacy=[{"notion": "ldp", "epsilon": float("nan")}]), "privacy[0].epsilon", "NaN"),
    (problem(privacy=[{"notion": "ldp", "epsilon": float("inf")}]), "privacy[0].epsilon", "finite"),
    (problem(privacy=[{"notion": "ldp", "epsilon": True}]), "privacy[0].epsilon", "must be a number"),
    (problem(privacy=[{"notion": "lip", "epsilon": 1, "prior": [0.5, 0.5, float("nan")]}]),
     "privacy[0].prior[2]", "finite"),
    (problem(privacy=[{"notion": "eldp", "matrix": [[0, 1, 1], [1, 0, 1]]}]), "privacy[0].matrix[0]", "square"),
    (problem(privacy=[{"notion": "eldp", "matrix": [[0, 1], [1, 0]]}]), "privacy[0].matrix", "3x3"),
    (problem(privacy=[{"notion": "metric", "epsilon": 1, "distance": [[0, 1], [1, 0]]}]),
     "privacy[0].distance", "3x3"),
    (problem(privacy=[{"notion": "bp_lip", "epsilon": 1, "priors": [[0.5, 0.5, 0.0], [0.5, 0.5]]}]),
     "privacy[0].priors", "same length"),
    (problem(privacy=[{"notion": "lip", "epsilon": 0, "prior": [1 / 3, 1 / 3, 1 / 3]}]),
     "privacy[0].prior", "sum to 1"),
    (problem(privacy=["ldp"]), "privacy[0]", "mapping"),
    (problem(privacy=[]), "privacy", "non-empty"),
    (problem(objective={"kind": "expected_loss", "loss": [[0, 1], [1, 0]]}), "objective.loss", "3 rows"),
    (problem(objective={"kind": "mmse", "values": [0, 1, 2]}), "outputs", "outputs: free"),
    (problem(objective={"kind": "expected_loss", "prior": [1.5, -0.5, 0.0]}), "objective.prior[1]", ">= 0"),
    (problem(outputs=["x", "x"]), "outputs", "unique"),
    (problem(inputs=[]), "inputs", "non-empty"),
])
def test_load_problem_errors(doc, field, pattern):
    with pytest.raises(InputError, match=pattern) as info:
        load_problem(doc)
    assert info.value.field == field
    assert isinstance(info.value, ValueError) and isinstance(info.value, MechoptError)
    assert info.value.exit_code == 2
    assert str(info.value) == f"{info.value.field}: {info.value.rule}"


def test_notion_constructors_validate():
    with pytest.raises(InputError, match=r"epsilon: must be >= 0, got -1.0"):
        LDP(-1.0)
    with pytest.raises(InputError, match=r"matrix\[0\]\[1\]: must be >= 0, got -0.5"):
        ELDP([[0, -0.5], [1, 0]])
    with pytest.raises(InputError, match=r"matrix\[1\]\[1\]: diagonal entries must be 0"):
        ELDP([[0, 1], [1, 2]])
    with pytest.raises(InputError, match=r"prior: must sum to 1"):
        LIP(1.0, prior=[0.5, 0.6])
    with pytest.raises(InputError, match=r"prior: LIP needs a prior"):
        LIP(1.0)
    with pytest.raises(InputError, match=r"lower\[0\]: must satisfy 0 <= lower <= upper <= 1, got lower=0.6, upper=0.5"):
        BPLIP(1.0, lower=[0.6, 0.1], upper=[0.5, 0.9])
    with pytest.raises(InputError, match=r"priors: give either"):
        BPLIP(1.0, priors=[[0.5, 0.5]], lower=[0, 0], upper=[1, 1])
    with pytest.raises(InputError, match=r"edges\[0\]\[2\]: edge length must be >= 0"):
        MetricLDP(1.0, edges=[[0, 1, -1.0]])
    with pytest.raises(InputError, match=r"give exactly one of"):
        MetricLDP(1.0)
    with pytest.raises(InputError, match=r"privacy\[0\]\.notion: unknown notion 'dp'"):
        notion_from_spec({"notion": "dp", "epsilon": 1}, ["a"], "privacy[0]")


def test_verify_rejects_malformed_matrices():
    with pytest.raises(InputError, match=r"matrix\[0\]\[1\]: must be finite"):
        verify(np.array([[0.5, np.nan], [0.5, 0.5]]), [LDP(1.0)])
    with pytest.raises(InputError, match=r"matrix\[1\]: must have 2 entries"):
        verify([[0.5, 0.5], [1.0]], [LDP(1.0)])
    with pytest.raises(InputError, match=r"matrix\[0\]\[0\]: must be a number"):
        verify([["0.5", 0.5], [0.5, 0.5]], [LDP(1.0)])
    with pytest.raises(InputError, match=r"matrix: has 2 rows but notion 'lip' is over 3 inputs"):
        verify([[0.5, 0.5], [0.5, 0.5]], [LIP(1.0, prior=[0.2, 0.3, 0.5])])
    # a negative entry is not a crash but a failed certificate
    cert = verify([[1.25, -0.25], [0.5, 0.5]], [LDP(1.0)])
    assert not cert.verified and not cert.rows_ok and "negative" in cert.detail


def test_mechanism_api_errors(tmp_path):
    with pytest.raises(InputError, match=r"does not exist"):
        Mechanism.load(tmp_path / "absent.json")
    path = write_case(tmp_path, "m.json", edited_after_export())
    with pytest.raises(VerificationError, match=r"sha256: .* does not match"):
        Mechanism.load(path)
    with pytest.raises(InputError, match=r"shape \(2, 2\) does not match 3 inputs x 2 outputs"):
        Mechanism.from_channel(GOOD_MATRIX, [LDP(1.0)], inputs=["a", "b", "c"])
    with pytest.raises(InputError, match=r"privacy\[0\]\.sensitive\[0\]: 'z' is not an input label"):
        Mechanism.from_channel(GOOD_MATRIX, [{"notion": "high_low", "epsilon": 1.0, "sensitive": ["z"]}],
                               inputs=["a", "b"])
