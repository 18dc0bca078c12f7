"""Structured mechanisms: exact family verification, digest, sampler, estimators, files, CLI."""

from __future__ import annotations

import copy
import hashlib
import json
import math
from fractions import Fraction

import numpy as np
import pytest
import rfc8785

from mechopt import BPLIP, ELDP, LDP, LIP, ULDP, BlockLDP, HighLowLDP, InputError, MetricLDP, VerificationError, verify
from mechopt.cli import main as cli_main
from mechopt.families import (
    FamilyMechanism,
    FamilySampler,
    HadamardFamily,
    SubsetMixture,
    count_reports,
    family_channel,
    subset_em,
    subset_inversion,
)
from mechopt.runtime import estimate_em
from mechopt.solvers.design._route import ratio_below

K = 6
INPUTS = [str(i) for i in range(K)]


def _subset(ratio, mixture, k=K):
    return SubsetMixture.from_spec(SubsetMixture.spec(ratio, mixture), k)


def _notions():
    rng = np.random.default_rng(4)
    E = rng.uniform(0.5, 2.0, (K, K))
    E[rng.random((K, K)) < 0.3] = np.inf
    np.fill_diagonal(E, 0)
    P = rng.dirichlet(np.ones(K))
    return [
        LDP(1.0), LDP(0.6), BlockLDP(1.0, blocks=[[0, 1, 2], [3, 4], [5]]), HighLowLDP(0.8, sensitive=[0, 1]),
        ELDP(E), MetricLDP(0.7, edges=[[0, 1, 1.0], [1, 2, 1.5], [2, 3, 0.5], [3, 4, 2.0], [4, 5, 1.0]]),
        LIP(1.0, prior=P), LIP(2.0, prior=P), BPLIP(1.5, priors=[P, np.full(K, 1 / K)]),
        ULDP(1.0, sensitive=[0, 1, 2]), ULDP(0.7, sensitive=[3]),
    ]


FAMILIES = [
    ("kRR", lambda: _subset(math.exp(0.5), [(1, 1.0)])),
    ("mix", lambda: _subset(math.exp(0.9), [(0, 0.1), (2, 0.5), (3, 0.3), (6, 0.1)])),
    ("ss-e1.2", lambda: _subset(math.exp(1.2), [(2, 1.0)])),
    ("constant", lambda: _subset(5.0, [(0, 0.5), (6, 0.5)])),
    ("hr-all", lambda: HadamardFamily.from_spec(HadamardFamily.spec(math.exp(0.7), INPUTS), K, INPUTS)),
    ("hr-high-low", lambda: HadamardFamily.from_spec(HadamardFamily.spec(math.exp(0.7), ["0", "1"]), K, INPUTS)),
    ("hr-strong", lambda: HadamardFamily.from_spec(HadamardFamily.spec(math.exp(1.9), ["0", "2", "4"]), K, INPUTS)),
]


@pytest.mark.parametrize("name,make", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_family_verdicts_agree_with_the_matrix_verifier(name, make):
    fam = make()
    _, Q = family_channel(fam)
    assert np.allclose(Q.sum(axis=1), 1)
    for n in _notions():
        n = n.bind(INPUTS)
        got = fam_check = None
        from mechopt.families import check_family

        fam_check = check_family(fam, n)
        got = verify(Q, [n]).checks[0]
        assert fam_check.ok == got.ok, (n.name, fam_check, got)
        if math.isfinite(got.achieved):
            assert fam_check.achieved == pytest.approx(got.achieved, rel=1e-9, abs=1e-12), n.name
        else:
            assert fam_check.achieved == math.inf


def test_verification_is_exact_at_the_boundary():
    for eps in (0.3, 1.0, 2.5):
        r = ratio_below(eps)
        fam = _subset(r, [(2, 1.0)])
        from mechopt.families import verify_family

        assert verify_family(fam, [LDP(eps)]).verified
        assert not verify_family(_subset(math.nextafter(r, math.inf), [(2, 1.0)]), [LDP(eps)]).verified
        assert Fraction(repr(r)) < Fraction(math.exp(eps)) * (1 + Fraction(1, 10**15))


def test_inclusion_probabilities_match_the_channel():
    fam = _subset(3.5, [(1, 0.2), (2, 0.3), (4, 0.5)])
    labels, Q = family_channel(fam)
    members = [json.loads(lab.replace("{", "[").replace("}", "]")) for lab in labels]
    for d, w in fam.components:
        cols = [j for j, m in enumerate(members) if len(m) == d]
        own = sum(Q[0, j] for j in cols if 0 in members[j]) / float(w)
        other = sum(Q[1, j] for j in cols if 0 in members[j]) / float(w)
        assert own == pytest.approx(float(fam.inclusion(d)), rel=1e-12)
        assert other == pytest.approx(float(fam.cross_inclusion(d)), rel=1e-12)


@pytest.mark.parametrize("name,make", [FAMILIES[1], FAMILIES[5]], ids=["mix", "hr"])
def test_the_seeded_sampler_draws_the_channel(name, make):
    fam = make()
    labels, Q = family_channel(fam)
    col = {lab: j for j, lab in enumerate(labels)}
    s = FamilySampler(fam, seed=11)
    n = 6000
    for x in (0, K - 1):
        counts = np.zeros(len(labels))
        for _ in range(n):
            counts[col[s.sample_index(x)]] += 1
        expected = n * Q[x]
        keep = expected > 5
        chi2 = float(np.sum((counts[keep] - expected[keep]) ** 2 / expected[keep]))
        dof = int(keep.sum()) - 1
        assert chi2 < dof + 5 * math.sqrt(2 * dof)  # far beyond the 1e-5 quantile
        assert counts[~keep].sum() <= 3 * max(1.0, expected[~keep].sum())


def test_the_sampler_thresholds_are_the_exact_probabilities_and_the_default_is_secure(monkeypatch):
    import os
    import random

    fam = _subset(2.5, [(1, 0.25), (3, 0.75)], k=7)
    s = FamilySampler(fam)
    assert not s.seeded and s.words_used is None
    assert [Fraction(a, z) for a, z in s._incl] == [fam.inclusion(1), fam.inclusion(3)]
    assert [Fraction(c, s._total) for c in s._cum] == [Fraction(1, 4), Fraction(1)]
    with pytest.raises(InputError, match="seed"):
        FamilySampler(fam, seed=1.5)
    # the default reads os.urandom as big-endian 32-bit words: the reports of words=
    stream = random.Random(4).randbytes(4 * 16384)
    monkeypatch.setattr(os, "urandom", lambda n: stream[:n])
    words = [int.from_bytes(stream[i:i + 4], "big") for i in range(0, len(stream), 4)]
    secure, explicit = FamilySampler(fam), FamilySampler(fam, words=words)
    assert [secure.sample_index(x % 7) for x in range(300)] == [explicit.sample_index(x % 7) for x in range(300)]


def test_the_estimator_is_unbiased_and_em_agrees_with_matrix_em():
    fam = _subset(math.exp(1.0), [(0, 0.1), (2, 0.6), (3, 0.3)])
    labels, Q = family_channel(fam)
    p = np.random.default_rng(2).dirichlet(np.ones(K))
    # expected counts (a large multiple): the linear estimator returns p exactly
    n = 10**6
    expected = n * (p @ Q)
    from mechopt.families._estimate import SubsetCounts

    members = [json.loads(lab.replace("{", "[").replace("}", "]")) for lab in labels]
    counts = SubsetCounts(K, {d: 0.0 for d, _ in fam.components}, {d: np.zeros(K) for d, _ in fam.components})
    for j, m in enumerate(members):
        counts.n[len(m)] += expected[j]
        counts.c[len(m)][m] += expected[j]
    est, var = subset_inversion(fam, counts)
    assert np.allclose(est, p, atol=1e-12)
    # EM on individual reports = EM on the materialised channel
    rng = np.random.default_rng(5)
    ys = rng.choice(len(labels), size=3000, p=(p @ Q) / (p @ Q).sum())
    rep = [labels[j] for j in ys]
    c2, mem = count_reports(fam, rep)
    mine, gap = subset_em(fam, mem, np.full(K, 1 / K), tol=1e-13, max_iter=20000)
    assert gap <= 1e-13
    ref = estimate_em(Q, np.bincount(ys, minlength=len(labels)), tol=1e-13, max_iter=20000)
    assert np.allclose(mine, ref, atol=1e-6)


def _family_doc(tmp_path, k=20, eps=1.0):
    from mechopt import solve

    r = solve({"k": k, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": eps}],
               "objective": {"kind": "estimation_variance"}}, quiet=True)
    assert isinstance(r.mechanism, FamilyMechanism)
    path = tmp_path / "fam.json"
    r.mechanism.save(path)
    return path, json.loads(path.read_text())


def test_the_digest_is_the_rfc8785_hash_and_edits_are_refused(tmp_path):
    path, doc = _family_doc(tmp_path)
    assert doc["version"] == 2 and "matrix" not in doc and "outputs" not in doc
    payload = {"inputs": doc["inputs"], "family": doc["family"], "privacy": doc["privacy"]}
    assert doc["sha256"] == hashlib.sha256(rfc8785.dumps(payload)).hexdigest()
    FamilyMechanism.load(path)
    for edit in (lambda d: d["family"].__setitem__("ratio", 3.0),
                 lambda d: d["privacy"][0].__setitem__("epsilon", 2.0),
                 lambda d: d["inputs"].reverse()):
        bad = copy.deepcopy(doc)
        edit(bad)
        with pytest.raises(VerificationError, match="sha256"):
            FamilyMechanism.from_dict(bad)
    # a file whose digest is right but whose claim is false fails the exact check
    bad = copy.deepcopy(doc)
    bad["privacy"][0]["epsilon"] = 0.5
    bad["sha256"] = hashlib.sha256(rfc8785.dumps({k: bad[k] for k in ("inputs", "family", "privacy")})).hexdigest()
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(VerificationError, match="privacy"):
        FamilyMechanism.load(tmp_path / "bad.json")


@pytest.mark.parametrize("family,match", [
    ({"kind": "subset_selection", "ratio": 2.0, "mixture": [{"d": 2, "weight": 0.5}]}, "sum to 1"),
    ({"kind": "subset_selection", "ratio": 2.0, "mixture": [{"d": 9, "weight": 1.0}]}, r"\[0, 6\]"),
    ({"kind": "subset_selection", "ratio": 0.5, "mixture": [{"d": 2, "weight": 1.0}]}, ">= 1"),
    ({"kind": "subset_selection", "ratio": 2.0, "mixture": [{"d": 2, "weight": 0.5}, {"d": 2, "weight": 0.5}]},
     "twice"),
    ({"kind": "hadamard_response", "ratio": 2.0, "sensitive": ["zz"]}, "not an input"),
    ({"kind": "cubes", "ratio": 2.0}, "kind"),
])
def test_bad_families_get_one_clear_line(family, match):
    from mechopt.families import family_from_spec

    with pytest.raises(InputError, match=match):
        family_from_spec(family, INPUTS)


def test_cli_verify_privatize_estimate_on_a_family_file(tmp_path, capsys):
    path, doc = _family_doc(tmp_path, k=20)
    assert cli_main(["verify", str(path)]) == 0
    assert cli_main(["verify", str(path), "--json"]) == 0
    out = capsys.readouterr().out
    assert '"verified": true' in out and '"method": "exact-family"' in out
    rng = np.random.default_rng(0)
    truth = rng.dirichlet(np.ones(20) * 3)
    users = rng.choice(20, size=3000, p=truth)
    (tmp_path / "in.txt").write_text("".join(f"{doc['inputs'][x]}\n" for x in users))
    assert cli_main(["privatize", str(path), "--input", str(tmp_path / "in.txt"), "--output",
                     str(tmp_path / "out.txt"), "--seed", "7"]) == 0
    reports = (tmp_path / "out.txt").read_text().splitlines()
    assert len(reports) == 3000 and all(r.count(",") == 4 for r in reports)  # d = 5
    for method in ("inversion", "em"):
        capsys.readouterr()
        assert cli_main(["estimate", str(path), "--reports", str(tmp_path / "out.txt"), "--method", method,
                         "--json"]) == 0
        res = json.loads(capsys.readouterr().out)
        est = np.array([res["estimate"][x] for x in doc["inputs"]])
        assert res["n"] == 3000 and np.sum((est - truth) ** 2) < 10 * sum(v**2 for v in res["standard_error"].values())
    # bad input: one line, exit 2; a tampered file: exit 1
    (tmp_path / "bad_in.txt").write_text("nope\n")
    assert cli_main(["privatize", str(path), "--input", str(tmp_path / "bad_in.txt"), "--output",
                     str(tmp_path / "o.txt")]) == 2
    (tmp_path / "bad_rep.txt").write_text("{1,2}\n")
    assert cli_main(["estimate", str(path), "--reports", str(tmp_path / "bad_rep.txt")]) == 2
    doc["family"]["ratio"] = 2.0
    (tmp_path / "tampered.json").write_text(json.dumps(doc))
    capsys.readouterr()
    assert cli_main(["verify", str(tmp_path / "tampered.json")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sha256" in err


def test_hadamard_family_file_round_trip(tmp_path, capsys):
    m = FamilyMechanism.from_family(HadamardFamily.spec(ratio_below(1.0), ["0", "1", "2"]),
                                    [{"notion": "high_low", "epsilon": 1.0, "sensitive": ["0", "1"]}],
                                    inputs=INPUTS)
    assert m.certificate["verified"]
    path = tmp_path / "hr.json"
    m.save(path)
    assert cli_main(["verify", str(path)]) == 0
    # the same family under plain LDP: the direct outputs give an infinite ratio
    ldp_problem = tmp_path / "p.json"
    ldp_problem.write_text(json.dumps({"k": K, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1.0}]}))
    assert cli_main(["verify", str(path), "--problem", str(ldp_problem)]) == 1
    (tmp_path / "in.txt").write_text("0\n3\n5\n" * 200)
    assert cli_main(["privatize", str(path), "--input", str(tmp_path / "in.txt"), "--output",
                     str(tmp_path / "out.txt"), "--seed", "1"]) == 0
    capsys.readouterr()
    assert cli_main(["estimate", str(path), "--reports", str(tmp_path / "out.txt"), "--json"]) == 0
    est = json.loads(capsys.readouterr().out)["estimate"]
    assert abs(sum(est.values()) - 1) < 1e-9 and est["1"] < 0.2


def test_version_1_matrix_files_still_load(tmp_path):
    from mechopt import Mechanism

    m = Mechanism.from_channel(np.array([[0.7, 0.3], [0.3, 0.7]]), [{"notion": "ldp", "epsilon": 1.0}])
    from mechopt._canonical import canonical_digest

    doc = m.to_dict()
    doc["version"] = 1  # as an earlier mechopt wrote it: the json.dumps digest
    doc["sha256"] = canonical_digest(doc, 1)
    (tmp_path / "m.json").write_text(json.dumps(doc))
    assert Mechanism.load(tmp_path / "m.json").matrix.shape == (2, 2)


def test_commands_that_need_a_matrix_refuse_a_family_in_one_line(tmp_path, capsys):
    path, _ = _family_doc(tmp_path, k=20)
    assert cli_main(["plot", str(path), "--png", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "family" in err


@pytest.mark.parametrize("name,make", [FAMILIES[1], FAMILIES[2], FAMILIES[4], FAMILIES[6]],
                         ids=["mix", "ss", "hr-all", "hr-strong"])
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 3.0])
def test_bp_lip_boxes_are_never_accepted_wrongly(name, make, eps):
    from mechopt.families import check_family

    fam = make()
    _, Q = family_channel(fam)
    box = BPLIP(eps, lower=[0.05] * K, upper=[0.4] * K).bind(INPUTS)
    mine, ref = check_family(fam, box), verify(Q, [box]).checks[0]
    assert not (mine.ok and not ref.ok)  # sound
    if isinstance(fam, HadamardFamily):
        assert mine.ok == ref.ok  # and exact for the Hadamard response


def test_a_device_loads_and_samples_a_family_with_the_standard_library_only(tmp_path):
    import subprocess
    import sys

    path, doc = _family_doc(tmp_path, k=20)
    code = ("import sys; from mechopt.families import load_family_document, FamilySampler; "
            f"doc, fam = load_family_document({str(path)!r}); s = FamilySampler(fam); print(s.sample_index(3)); "
            "assert 'numpy' not in sys.modules, sorted(m for m in sys.modules if 'numpy' in m)[:3]")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().count(",") == 4
    doc["family"]["mixture"][0]["d"] = 4
    (tmp_path / "t.json").write_text(json.dumps(doc))
    from mechopt.families import load_family_document

    with pytest.raises(VerificationError, match="sha256"):
        load_family_document(tmp_path / "t.json")
