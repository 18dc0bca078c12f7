"""The command line (mechopt/cli.py) against its contract in docs/cli.md: outputs and exit codes.

Every command is run through :func:`mechopt.cli.main` (the console script's entry point)
on files in a temporary folder; exit codes are the documented ones (0 success, 1 a failed
check, 2 bad input with one line ``mechopt: <field>: <rule>``, 3 not identifiable).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from mechopt.cli import main

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def krr3(tmp_path, capsys):
    """A solved 3-input LDP(1) Hamming problem: k-RR, error 2 / (e + 2)."""
    problem = tmp_path / "p.json"
    problem.write_text(json.dumps({"inputs": ["a", "b", "c"], "outputs": "inputs",
                                   "privacy": [{"notion": "ldp", "epsilon": 1.0}],
                                   "objective": {"kind": "expected_loss", "loss": "hamming"}}))
    mech = tmp_path / "m.json"
    code, out, err = run(capsys, "solve", problem, "-o", mech, "--quiet")
    assert code == 0, err
    return problem, mech, out


def test_solve_prints_one_line_with_the_status_and_the_value(krr3):
    _, mech, out = krr3
    line = out.strip()
    assert "\n" not in line and line.startswith("optimal:")
    value = float(line.split("=", 1)[1].split()[0])
    assert value == pytest.approx(2 / (math.e + 2), rel=1e-6)
    doc = json.loads(mech.read_text())
    assert doc["format"] == "mechopt-mechanism" and doc["inputs"] == ["a", "b", "c"]


def test_verify_passes_an_exported_file_and_fails_an_altered_one(krr3, capsys, tmp_path):
    _, mech, _ = krr3
    assert run(capsys, "verify", mech)[0] == 0
    doc = json.loads(mech.read_text())
    doc["matrix"][0][0], doc["matrix"][0][1] = doc["matrix"][0][1], doc["matrix"][0][0]  # same rows sums
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    code, _, err = run(capsys, "verify", bad)
    assert code == 1 and err.strip()


def test_privatize_then_estimate_round_trip(krr3, capsys, tmp_path):
    _, mech, _ = krr3
    labels = tmp_path / "in.txt"
    labels.write_text("a\nb\nc\na\n" * 50)
    reports = tmp_path / "reports.txt"
    code, _, err = run(capsys, "privatize", mech, "--input", labels, "--output", reports, "--seed", "1")
    assert code == 0, err
    lines = reports.read_text().split()
    assert len(lines) == 200 and set(lines) <= {"a", "b", "c"}
    code, out, err = run(capsys, "estimate", mech, "--reports", reports)
    assert code == 0, err
    assert "a" in out and "b" in out


@pytest.mark.parametrize("doc, field", [
    ({"inputs": ["a", "b"], "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": -1}],
      "objective": {"kind": "expected_loss", "loss": "hamming"}}, "epsilon"),
    ({"inputs": ["a", "b"], "outputs": "inputs", "privacy": [{"notion": "nope", "epsilon": 1}],
      "objective": {"kind": "expected_loss", "loss": "hamming"}}, "notion"),
    ({"inputs": ["a", "a"], "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1}],
      "objective": {"kind": "expected_loss", "loss": "hamming"}}, "inputs"),
    ({"inputs": ["a", "b"], "outputs": "inputs", "privacy": [{"notion": "lip", "epsilon": 1, "prior": [0.5, 0.6]}],
      "objective": {"kind": "expected_loss", "loss": "hamming"}}, "prior"),
])
def test_bad_problems_exit_2_with_one_line_naming_the_field(doc, field, capsys, tmp_path):
    problem = tmp_path / "p.json"
    problem.write_text(json.dumps(doc))
    code, out, err = run(capsys, "solve", problem, "-o", tmp_path / "m.json", "--quiet")
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("mechopt: ") and field in err
    assert "Traceback" not in err and not (tmp_path / "m.json").exists()


def test_a_missing_file_exits_2(capsys, tmp_path):
    code, _, err = run(capsys, "solve", tmp_path / "none.yaml", "-o", tmp_path / "m.json")
    assert code == 2 and err.count("\n") == 1


def test_unknown_options_exit_2_in_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["solve", "--no-such-option"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_estimate_of_a_channel_merging_inputs_gives_the_group_mass(capsys, tmp_path):
    # two inputs tied (a zero budget): the channel cannot tell them apart -> their total mass, one warning
    problem = tmp_path / "p.json"
    problem.write_text(json.dumps({"inputs": ["a", "b", "c"], "outputs": "inputs",
                                   "privacy": [{"notion": "eldp", "matrix": [[0, 0, 1], [0, 0, 1], [1, 1, 0]]}],
                                   "objective": {"kind": "expected_loss", "loss": "hamming"}}))
    mech = tmp_path / "m.json"
    assert run(capsys, "solve", problem, "-o", mech, "--quiet")[0] == 0
    reports = tmp_path / "r.txt"
    reports.write_text("a\nc\nc\n")
    code, out, err = run(capsys, "estimate", mech, "--reports", reports, "--method", "em", "--json")
    assert code == 0 and err.count("\n") == 1 and err.startswith("mechopt: warning: not identifiable")
    assert "(2 inputs in 1 group: a+b)" in err
    est = json.loads(out)
    assert est["groups"] == {"a+b": ["a", "b"], "c": ["c"]} and set(est["estimate"]) == {"a+b", "c"}


def test_the_bundled_quickstart_solves(capsys, tmp_path):
    code, out, err = run(capsys, "solve", ROOT / "problems" / "quickstart.yaml", "-o", tmp_path / "m.json", "--quiet")
    assert code == 0, err
    assert out.split(":")[0] in ("optimal", "feasible")
    # built to report places, not to estimate frequencies: one note line, no warning
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mechopt: note: designed for expected_loss")
    assert "warning" not in err


def test_solve_help_lists_every_method(capsys):
    from mechopt._solve import METHODS

    with pytest.raises(SystemExit):
        main(["solve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert all(m in text for m in METHODS), [m for m in METHODS if m not in text]
    assert "--time-limit" in text
    doc = (ROOT / "docs" / "cli.md").read_text()
    assert "`--time-limit S`" in doc and all(f"`{m}`" in doc for m in METHODS if m != "fw")


@pytest.mark.parametrize("value", ["0", "1", "-1e-3", "x", "nan"])
def test_a_gap_outside_zero_one_exits_2_in_one_line(capsys, tmp_path, value):
    with pytest.raises(SystemExit) as exc:
        main(["solve", str(tmp_path / "p.yaml"), "-o", str(tmp_path / "m.json"), "--gap", value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--gap" in err and "Traceback" not in err


def test_a_gap_on_free_outputs_exits_2_naming_it(capsys, tmp_path):
    problem = tmp_path / "p.json"
    problem.write_text(json.dumps({"k": 3, "privacy": [{"notion": "ldp", "epsilon": 1.0}],
                                   "outputs": "free", "objective": {"kind": "mmse", "values": [0, 1, 2]}}))
    code, _, err = run(capsys, "solve", problem, "-o", tmp_path / "m.json", "--gap", "1e-3", "--quiet")
    assert code == 2 and err.count("\n") == 1 and "gap" in err and "free outputs" in err
    assert not (tmp_path / "m.json").exists()
