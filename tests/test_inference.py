"""Estimates with intervals, counts input, identifiability at solve and at estimate time."""

from __future__ import annotations

import io
import json
import math
import warnings

import numpy as np
import pytest

import mechopt
from mechopt._errors import InputError
from mechopt._export import finalize_export
from mechopt._identifiability import IdentifiabilityWarning, NotIdentifiableError, identifiability
from mechopt._result import SolveResult
from mechopt.cli import main
from mechopt.runtime import estimate_counts, estimation_risk, parse_counts_csv


def krr(k: int, eps: float) -> np.ndarray:
    e = math.exp(eps)
    return (np.ones((k, k)) + (e - 1) * np.eye(k)) / (e + k - 1)


# ------------------------------------------------------------------ standard errors


def test_square_channel_covariance_matches_the_textbook_formula():
    """Inversion p̂ = Q^-T f: Cov = Q^-T (diag λ − λλᵀ) Q^-1 / n (independent: np.linalg.inv)."""
    Q = krr(4, 1.0)
    counts = np.round(10_000 * np.array([0.4, 0.3, 0.2, 0.1]) @ Q) + np.array([7, -3, 2, -6])
    n = counts.sum()
    lam = counts / n
    Qi = np.linalg.inv(Q)
    cov = Qi.T @ (np.diag(lam) - np.outer(lam, lam)) @ Qi / n
    for method in ("inversion", "em"):  # interior and square: the ML estimate is the inversion
        e = estimate_counts(Q, counts, method=method)
        assert np.allclose(e.estimate, lam @ Qi, atol=1e-9)
        assert np.allclose(e.standard_errors, np.sqrt(np.diag(cov)), rtol=1e-6)
        z = 1.959963984540054
        assert np.allclose(e.upper - e.lower, 2 * z * e.standard_errors, rtol=1e-9)
        assert e.reliable.all() and not e.notes


def test_binary_standard_error_by_hand():
    # Warner RR with keep probability 3/4: p̂ = (f − 1/4) / (1/2), Var = f(1 − f) / n / (1/2)²
    e = estimate_counts([[0.75, 0.25], [0.25, 0.75]], [600, 400])
    assert e.standard_errors[0] == pytest.approx(math.sqrt(0.6 * 0.4 / 1000) / 0.5, rel=1e-9)


def test_intervals_cover_the_truth_about_95_percent():
    rng = np.random.default_rng(12)
    Q = krr(4, 1.0)
    p = np.array([0.4, 0.3, 0.2, 0.1])
    hits = np.zeros(4)
    trials = 300
    for _ in range(trials):
        counts = rng.multinomial(4000, p @ Q)
        e = estimate_counts(Q, counts)
        hits += (e.lower <= p) & (p <= e.upper)
    coverage = hits / trials
    assert np.all(coverage > 0.90) and np.all(coverage < 0.99), coverage


def test_boundary_is_flagged_unreliable():
    Q = krr(3, 1.0)
    counts = np.round(2000 * np.array([0.5, 0.5, 0.0]) @ Q).astype(int)  # a true share of 0
    counts[2] -= 60  # fewer reports of the third output than even p = 0 explains
    e = estimate_counts(Q, counts, method="em")
    assert e.estimate[2] == 0.0 and not e.reliable[2]
    assert any("near the simplex boundary" in n and "'2'" in n for n in e.notes)
    assert e.lower.min() >= 0.0 and e.upper.max() <= 1.0  # clipped
    assert "*" in e.table()


def test_mmse_posterior_interval_covers_the_realised_histogram():
    """Bayesian: draw X from the prior, Y from a channel that merges two inputs."""
    rng = np.random.default_rng(3)
    Q = np.array([[0.7, 0.3], [0.7, 0.3], [0.2, 0.8]])  # inputs 0 and 1 merged
    prior = np.array([0.3, 0.2, 0.5])
    hits, trials, n = np.zeros(3), 200, 3000
    for _ in range(trials):
        x = rng.choice(3, size=n, p=prior)
        y = (rng.random(n) >= Q[x, 0]).astype(int)
        e = estimate_counts(Q, np.bincount(y, minlength=2), method="mmse", prior=prior)
        truth = np.bincount(x, minlength=3) / n
        hits += (e.lower <= truth) & (truth <= e.upper)
    assert np.all(hits / trials > 0.9), hits / trials
    assert e.estimate[0] == pytest.approx(1.5 * e.estimate[1], rel=1e-12)  # the prior's split


# ----------------------------------------------------------------- identifiability


def test_identifiability_of_known_channels():
    assert identifiability(krr(5, 0.5)).identifiable
    r = identifiability([[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]])
    assert (r.rank, r.merged) == (1, ((0, 1, 2),))
    # rank-deficient without identical rows: rows 0 + 1 = 2 × row 2
    r = identifiability([[0.6, 0.4, 0.0], [0.0, 0.4, 0.6], [0.3, 0.4, 0.3]])
    assert not r.identifiable and r.merged == ()
    with pytest.raises(NotIdentifiableError, match="shifts of mass between") as info:
        estimate_counts([[0.6, 0.4, 0.0], [0.0, 0.4, 0.6], [0.3, 0.4, 0.3]], [10, 10, 10])
    assert info.value.exit_code == 3
    v = r.null_direction
    assert abs(v.sum()) < 1e-12 and np.allclose(v @ np.array([[0.6, 0.4, 0.0], [0.0, 0.4, 0.6],
                                                                [0.3, 0.4, 0.3]]), 0, atol=1e-12)


def test_histogram_mse_design_merging_inputs_is_flagged_then_estimated_by_group(tmp_path, capsys):
    """An MMSE design merges inputs; EM must not split them silently: it estimates each group's mass."""
    problem = {"k": 4, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 0.5}],
               "objective": {"kind": "histogram_mse"}}
    with pytest.warns(IdentifiabilityWarning, match="cannot identify the input distribution"):
        result = mechopt.solve(problem, quiet=True)
    ident = result.mechanism.certificate["identifiability"]
    assert ident["identifiable"] is False and ident["rank"] < 4
    path = tmp_path / "hist.json"
    (tmp_path / "p.json").write_text(json.dumps(problem))
    assert main(["solve", str(tmp_path / "p.json"), "-o", str(path), "--quiet"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mechopt: warning: this channel cannot identify")
    doc = json.loads(path.read_text())
    counts = tmp_path / "c.csv"
    counts.write_text("".join(f"{y},{100 + 10 * j}\n" for j, y in enumerate(doc["outputs"])))
    code = main(["estimate", str(path), "--counts", str(counts), "--json"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 0 and len(err) == 1  # the merged groups' mass, said in one line
    assert err[0].startswith("mechopt: warning: not identifiable: inputs") and "mmse" in err[0]
    # asked for it, the Bayesian estimate answers (the design prior is in the file)
    assert main(["estimate", str(path), "--counts", str(counts), "--method", "mmse", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "mmse" and sum(out["estimate"].values()) == pytest.approx(1.0)
    assert any("split as the prior splits it" in n for n in out["notes"])


def test_identifiable_design_is_recorded_and_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdentifiabilityWarning)
        r = mechopt.solve("problems/web_high_low_002.yaml", quiet=True)
    assert r.mechanism.certificate["identifiability"] == {"identifiable": True, "rank": 6, "merged_inputs": []}


# ------------------------------------------------------------------------- export


def test_outputs_below_1e_12_are_dropped_and_verification_holds():
    problem = mechopt.load_problem({"k": 3, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
                                    "objective": {"kind": "mutual_information"}})
    Q = np.hstack([krr(3, 1.0) * (1 - 3e-14), np.full((3, 1), 3e-14)])  # last column: mass 9e-14
    mech = mechopt.Mechanism.from_channel(Q, problem.privacy_spec(), inputs=problem.inputs,
                                          outputs=["y0", "y1", "y2", "y3"],
                                          objective={"kind": "mutual_information", "value": 0.1, "bound": 0.1})
    value = mechopt.evaluate(problem.objective, Q)
    before = SolveResult("optimal", mech, value, value, 0.0, mechopt.verify(Q, problem.notions))
    after = finalize_export(problem, before)
    m = after.mechanism
    assert m.outputs == ("y0", "y1", "y2") and m.matrix.shape == (3, 3)
    drop = m.certificate["dropped_outputs"]
    assert drop["count"] == 1 and drop["labels"] == ["y3"] and drop["mass"] == pytest.approx(9e-14)
    assert m.certificate["verified"] is True and after.certificate.verified
    assert mechopt.verify(m.matrix, problem.notions).verified  # independently, on the pruned matrix
    assert after.objective == pytest.approx(mechopt.evaluate(problem.objective, m.matrix), rel=0, abs=0)


def test_labeled_outputs_are_never_dropped():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentifiabilityWarning)
        r = mechopt.solve("problems/quickstart.yaml", quiet=True)
    assert r.mechanism.outputs == ("home", "work", "gym", "bar")
    assert "dropped_outputs" not in r.mechanism.certificate


def test_designs_carry_no_interior_point_residue():
    """The issue: 6 of 12 outputs of one design had mass <= 8e-9 (now pruned, risk re-checked)."""
    r = mechopt.solve("problems/geo_blocks_002.yaml", quiet=True)
    Q = r.mechanism.matrix
    assert Q.sum(axis=0).min() >= 1e-5
    p0 = mechopt.load_problem("problems/geo_blocks_002.yaml").objective.prior
    assert estimation_risk(Q, p0) == pytest.approx(r.objective, rel=1e-9)
    assert r.status == "optimal" and r.gap <= 1e-4 * r.objective


# ------------------------------------------------------------------- counts, stdin


def test_counts_csv_parsing():
    outs = ["a", "b,c", "d"]
    text = 'label,count\na,5\n"b,c",7\n\n'
    assert parse_counts_csv(text, outs).tolist() == [5.0, 7.0, 0.0]
    for bad, match in [("a,5\na,6\n", r"counts:2: 'a' is listed twice"),
                       ("z,1\n", r"counts:1: 'z' is not an output label"),
                       ("a,-1\n", r"counts:1: count must be a non-negative integer"),
                       ("a,1.5\n", r"counts:1: count must be a non-negative integer"),
                       ("a,1,2\n", r"counts:1: must be 'output label,count'"),
                       ("a,0\n", r"counts: holds no reports")]:
        with pytest.raises(InputError, match=match):
            parse_counts_csv(bad, outs)


def test_cli_reads_counts_and_reports_from_standard_input(tmp_path, monkeypatch, capsys):
    mech = mechopt.Mechanism.from_channel(krr(3, 1.0), [{"notion": "ldp", "epsilon": 1.0}],
                                          inputs=["a", "b", "c"], outputs=["a", "b", "c"])
    path = tmp_path / "m.json"
    mech.save(path)
    monkeypatch.setattr("sys.stdin", io.StringIO("a,500\nb,300\nc,200\n"))
    assert main(["estimate", str(path), "--counts", "-", "--json"]) == 0
    from_counts = json.loads(capsys.readouterr().out)
    monkeypatch.setattr("sys.stdin", io.StringIO("a\n" * 500 + "b\n" * 300 + "c\n" * 200))
    assert main(["estimate", str(path), "--reports", "-", "--json"]) == 0
    from_reports = json.loads(capsys.readouterr().out)
    assert from_counts == from_reports and from_counts["n"] == 1000
    assert main(["estimate", str(path), "--reports", "-", "--counts", "x.csv"]) == 2
    assert "not both or neither" in capsys.readouterr().err
    assert main(["estimate", str(path)]) == 2
    monkeypatch.setattr("sys.stdin", io.StringIO("a,500\nb,300\nc,200\n"))
    assert main(["estimate", str(path), "--counts", "-"]) == 0
    table = capsys.readouterr().out
    assert "95% intervals: wald (information matrix)" in table and "std.err" in table


def test_version_flag(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"mechopt {mechopt.__version__}"
