"""Tests of privatize_file / estimate_file, the library side of the CLI (docs/cli.md)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from mechopt._canonical import canonical_digest
from mechopt._errors import InputError, VerificationError
from mechopt.runtime import estimate_file, privatize_file

LABELS = ["home", "work", "gym", "bar"]
EPS = 1.5


def krr_doc(labels=LABELS, eps=EPS):
    k = len(labels)
    e = math.exp(eps)
    matrix = [[e / (e + k - 1) if i == j else 1 / (e + k - 1) for j in range(k)]
              for i in range(k)]
    doc = {"format": "mechopt-mechanism", "version": 1, "inputs": list(labels),
           "outputs": list(labels), "matrix": matrix,
           "privacy": [{"notion": "ldp", "epsilon": eps + 1e-9}],  # the float k-RR sits on e^eps
           "objective": {"kind": "estimation_variance", "value": 0.0, "bound": 0.0},
           "certificate": {"verified": True, "method": "exact", "checks": []}}
    doc["sha256"] = canonical_digest(doc)
    return doc


@pytest.fixture
def mech(tmp_path) -> Path:
    path = tmp_path / "mech.json"
    path.write_text(json.dumps(krr_doc()))
    return path


def write_lines(path: Path, lines) -> Path:
    path.write_text("".join(f"{v}\n" for v in lines))
    return path


def test_privatize_then_estimate_recovers_distribution(tmp_path, mech):
    p = np.array([0.4, 0.3, 0.2, 0.1])
    n = 20_000
    rng = np.random.default_rng(0)
    truth = [LABELS[i] for i in rng.choice(4, size=n, p=p)]
    inp = write_lines(tmp_path / "in.txt", truth)
    out = tmp_path / "out.txt"
    assert privatize_file(mech, inp, out, seed=3) == n
    reports = out.read_text().splitlines()
    assert len(reports) == n and set(reports) <= set(LABELS)
    keep = sum(a == b for a, b in zip(truth, reports)) / n
    e = math.exp(EPS)
    assert keep == pytest.approx(e / (e + 3), abs=0.015)  # k-RR keeps with e^ε/(e^ε+k-1)
    for method in ("em", "inversion", "projected"):
        result = estimate_file(mech, out, method=method)
        assert set(result) == {"n", "method", "estimate", "standard_error", "interval", "level",
                               "interval_kind", "reliable", "postprocess", "notes"}
        assert result["n"] == n and result["method"] == method
        assert list(result["estimate"]) == LABELS
        est = np.array(list(result["estimate"].values()))
        assert np.abs(est - p).max() < 0.03
        se = np.array(list(result["standard_error"].values()))
        assert np.all(np.abs(est - p) < 4 * se)  # the truth lies within 4 standard errors
        assert all(result["reliable"].values())
        json.dumps(result, allow_nan=False)  # the --json document is plain JSON


def test_privatize_is_reproducible_with_seed_and_secure_without(tmp_path, mech):
    inp = write_lines(tmp_path / "in.txt", LABELS * 50)
    a, b, c = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "c.txt"
    privatize_file(mech, inp, a, seed=9)
    privatize_file(mech, inp, b, seed=9)
    assert a.read_text() == b.read_text()
    assert privatize_file(mech, inp, c) == 200
    assert set(c.read_text().splitlines()) <= set(LABELS)


def test_privatize_unknown_label_names_line_and_writes_nothing(tmp_path, mech):
    inp = write_lines(tmp_path / "in.txt", ["home", "work", "office"])
    out = tmp_path / "out.txt"
    with pytest.raises(InputError, match=r"in\.txt:3: 'office' is not an input label"):
        privatize_file(mech, inp, out, seed=1)
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out")] == []


def test_privatize_empty_line_and_empty_file(tmp_path, mech):
    inp = tmp_path / "in.txt"
    inp.write_text("home\n\nwork\n")
    with pytest.raises(InputError, match=r"in\.txt:2: line is empty"):
        privatize_file(mech, inp, tmp_path / "out.txt")
    inp.write_text("")
    assert privatize_file(mech, inp, tmp_path / "out.txt") == 0
    assert (tmp_path / "out.txt").read_text() == ""


def test_crlf_lines_are_accepted(tmp_path, mech):
    inp = tmp_path / "in.txt"
    inp.write_bytes(b"home\r\nbar\r\n")
    assert privatize_file(mech, inp, tmp_path / "out.txt", seed=0) == 2


def test_estimate_errors(tmp_path, mech):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(InputError, match=r"empty\.txt: contains no reports"):
        estimate_file(mech, empty)
    bad = write_lines(tmp_path / "bad.txt", ["home", "pub"])
    with pytest.raises(InputError, match=r"bad\.txt:2: 'pub' is not an output label"):
        estimate_file(mech, bad)
    ok = write_lines(tmp_path / "ok.txt", ["home"])
    with pytest.raises(InputError, match=r"method: must be one of em, inversion, projected, "
                                         r"mmse, got 'mle'"):
        estimate_file(mech, ok, method="mle")
    with pytest.raises(InputError, match=r"nope\.txt: cannot read the reports file"):
        estimate_file(mech, tmp_path / "nope.txt")


def test_tampered_mechanism_is_refused(tmp_path):
    doc = krr_doc()
    doc["privacy"][0]["epsilon"] = 0.5  # claim a stronger guarantee than exported
    path = tmp_path / "mech.json"
    path.write_text(json.dumps(doc))
    inp = write_lines(tmp_path / "in.txt", ["home"])
    with pytest.raises(VerificationError, match=r"mech\.json: sha256"):
        privatize_file(path, inp, tmp_path / "out.txt")
    with pytest.raises(VerificationError, match=r"mech\.json: sha256"):
        estimate_file(path, inp)


def test_inversion_of_a_non_identifying_mechanism_is_refused(tmp_path):
    doc = {"format": "mechopt-mechanism", "version": 1, "inputs": ["a", "b", "c"],
           "outputs": ["u", "v"], "matrix": [[0.5, 0.5], [0.5, 0.5], [0.25, 0.75]],
           "privacy": [{"notion": "ldp", "epsilon": 1.1}], "objective": {"kind": "none"},
           "certificate": {"verified": True, "method": "exact", "checks": []}}
    doc["sha256"] = canonical_digest(doc)
    path = tmp_path / "mech.json"
    path.write_text(json.dumps(doc))
    rep = write_lines(tmp_path / "r.txt", ["u", "v", "v"])
    # no method may split the merged mass silently: the group's total mass is estimated, with a warning
    from mechopt._identifiability import IdentifiabilityWarning

    for method in ("inversion", "projected", "em"):
        with pytest.warns(IdentifiabilityWarning, match=r"inputs 'a', 'b' have identical rows \(rank 2 < 3"):
            got = estimate_file(path, rep, method=method)
        assert got["groups"] == {"a+b": ["a", "b"], "c": ["c"]}
        # reports: 1/3 'u' = 0.5·m + 0.25·(1 − m) for the group mass m
        assert got["estimate"]["a+b"] == pytest.approx(1 / 3, abs=1e-9)
    # under a prior the split is the prior's: P(a) / P(b) = 3 exactly, and the note says so
    result = estimate_file(path, rep, method="mmse", prior=[0.45, 0.15, 0.4])
    assert result["estimate"]["a"] == pytest.approx(3 * result["estimate"]["b"], rel=1e-12)
    assert sum(result["estimate"].values()) == pytest.approx(1.0)
    assert any("split as the prior splits it" in note for note in result["notes"])


def memoized(tmp_path: Path) -> tuple[dict, Path]:
    """The k-RR document marked memoize, and its file."""
    doc = krr_doc()
    doc.update(version=2, memoize=True)
    doc["sha256"] = canonical_digest(doc)
    mech = tmp_path / "memo.json"
    mech.write_text(json.dumps(doc))
    return doc, mech


def test_memoized_mechanism_one_device_keeps_its_permanent_responses(tmp_path):
    doc, mech = memoized(tmp_path)
    store = tmp_path / "store.json"
    rounds = {}
    for value in ("home", "bar"):  # one device, one report a round, 20 rounds per value
        inp = write_lines(tmp_path / "in.txt", [value])
        rounds[value] = set()
        for _ in range(20):
            privatize_file(mech, inp, tmp_path / "a.txt", memo=store)
            rounds[value].add((tmp_path / "a.txt").read_text().strip())
    assert all(len(r) == 1 for r in rounds.values())  # one permanent response per value
    kept = json.loads(store.read_text())
    assert kept == {f"{doc['sha256']}:{v}": r.pop() for v, r in rounds.items()}
    # without a store every line is another user: fresh draws
    inp = write_lines(tmp_path / "in.txt", ["home"] * 50 + ["bar"] * 50)
    privatize_file(mech, inp, tmp_path / "c.txt", seed=1)
    assert len(set((tmp_path / "c.txt").read_text().splitlines()[:50])) > 1
    with pytest.raises(InputError, match="memo: .* is not a memoized mechanism"):
        privatize_file(_plain(tmp_path), inp, tmp_path / "d.txt",
                       memo=store)


def test_memo_over_many_lines_needs_user_ids(tmp_path, capsys):
    doc, mech = memoized(tmp_path)
    inp = write_lines(tmp_path / "in.txt", ["home", "bar"])
    with pytest.raises(InputError, match="memo: keeps one device's .* 2 lines .*--user-column"):
        privatize_file(mech, inp, tmp_path / "o.txt", memo=tmp_path / "s.json")
    assert not (tmp_path / "o.txt").exists() and not (tmp_path / "s.json").exists()
    from mechopt.cli import main

    rc = main(["privatize", str(mech), "--input", str(inp), "--output", str(tmp_path / "o.txt"),
               "--memo", str(tmp_path / "s.json")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "--user-column" in err


def test_memo_keyed_by_user(tmp_path):
    doc, mech = memoized(tmp_path)
    n = 400  # 400 users with the same value: as many independent devices
    inp = write_lines(tmp_path / "in.csv", [f"u{i},home" for i in range(n)] + ['"u,0",bar'])
    store = tmp_path / "devices.json"
    assert privatize_file(mech, inp, tmp_path / "day1.txt", memo=store, user_column=True, seed=5) == n + 1
    day1 = (tmp_path / "day1.txt").read_text().splitlines()
    kept = json.loads(store.read_text())
    assert set(kept) == {f"u{i}" for i in range(n)} | {"u,0"}
    assert all(kept[f"u{i}"] == {f"{doc['sha256']}:home": day1[i]} for i in range(n))
    assert kept["u,0"] == {f"{doc['sha256']}:bar": day1[n]}
    # independent devices: the reports of 'home' follow its row, not one repeated response
    row = dict(zip(doc["outputs"], doc["matrix"][doc["inputs"].index("home")]))
    for y, q in row.items():
        share = day1[:n].count(y) / n
        assert abs(share - q) <= 5 * (q * (1 - q) / n) ** 0.5 + 1e-12, (y, share, q)
    # without a store the user column is read and every line drawn afresh
    assert privatize_file(mech, inp, tmp_path / "fresh.txt", user_column=True, seed=5) == n + 1
    # day 2, fresh seed: every user repeats their own permanent response
    privatize_file(mech, inp, tmp_path / "day2.txt", memo=store, user_column=True, seed=6)
    assert (tmp_path / "day2.txt").read_text().splitlines() == day1
    bad = write_lines(tmp_path / "bad.csv", ["u1"])
    with pytest.raises(InputError, match="bad.csv:1: with --user-column every line must be"):
        privatize_file(mech, bad, tmp_path / "o.txt", memo=store, user_column=True)
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"k": "v"}))
    with pytest.raises(InputError, match="with --user-column the memo store must be"):
        privatize_file(mech, inp, tmp_path / "o.txt", memo=flat, user_column=True)


def _plain(tmp_path: Path) -> Path:
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(krr_doc()))
    return path
