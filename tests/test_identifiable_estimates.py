"""What a channel that merges inputs can still estimate: the mass of each group of identical rows."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechopt import Mechanism
from mechopt._identifiability import IdentifiabilityWarning, identifiability, summarize_labels
from mechopt.runtime import estimate_counts

# rows 0 and 1 identical; rows 0, 2, 3 independent: rank 3 < 4 inputs
Q = np.array([[0.5, 0.3, 0.2],
              [0.5, 0.3, 0.2],
              [0.2, 0.6, 0.2],
              [0.2, 0.2, 0.6]])
TRUTH = np.array([0.2, 0.3, 0.35, 0.15])


def test_group_mass_is_estimated_without_bias():
    rng = np.random.default_rng(11)
    n, reps = 300, 2000
    got, covered = [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentifiabilityWarning)
        for _ in range(reps):
            e = estimate_counts(Q, rng.multinomial(n, TRUTH @ Q), method="inversion", labels="abcd")
            got.append(e.estimate)
            covered += e.lower[0] <= 0.5 <= e.upper[0]
    got = np.array(got)
    assert e.labels == ("a+b", "c", "d") and e.groups == (("a", "b"), ("c",), ("d",))
    truth = np.array([0.5, 0.35, 0.15])
    # inversion is linear in the frequencies: exactly unbiased; 5 Monte-Carlo standard errors
    sem = got.std(axis=0, ddof=1) / np.sqrt(reps)
    assert np.all(np.abs(got.mean(axis=0) - truth) <= 5 * sem), (got.mean(axis=0), sem)
    assert covered / reps >= 0.93  # nominal 95 %; sd of the share 0.5 %


def test_warning_names_the_group_and_every_method_answers():
    counts = [120, 110, 70]
    for method in ("em", "inversion", "projected"):
        with pytest.warns(IdentifiabilityWarning) as caught:
            e = estimate_counts(Q, counts, method=method, labels=["home", "work", "gym", "bar"])
        (w,) = caught
        assert "inputs 'home', 'work' have identical rows (rank 3 < 4 inputs)" in str(w.message)
        assert "(2 inputs in 1 group: home+work)" in str(w.message)
        assert e.labels == ("home+work", "gym", "bar") and e.estimate.sum() == pytest.approx(1.0)
        assert any("home+work" in note for note in e.notes)
        if method == "inversion":  # the group channel is square and invertible: solve it by hand
            direct = np.linalg.solve(Q[[0, 2, 3]].T, np.array(counts) / 300)
            assert e.estimate == pytest.approx(direct, abs=1e-12)


def _many_groups(k_groups=12, per=76, extra=3):
    """k_groups groups of `per` identical rows (912 labels) plus `extra` inputs alone; rank 15 < 915."""
    m = k_groups + extra
    rng = np.random.default_rng(3)
    base = rng.dirichlet(np.ones(m), size=m) * 0.5 + np.eye(m) * 0.5
    rows = [base[g] for g in range(k_groups) for _ in range(per)] + [base[k_groups + j] for j in range(extra)]
    labels = [f"p{i}" for i in range(len(rows))]
    return np.array(rows), labels


def test_long_label_lists_are_summarised(tmp_path, capsys):
    Qm, labels = _many_groups()
    ident = identifiability(Qm)
    text = ident.describe(labels)
    assert text.startswith("912 inputs in 12 groups have identical rows (first group: 'p0', 'p1', 'p2', … (76 in all))")
    assert len(re.findall(r"'p\d+'", text)) == 3
    assert summarize_labels(["a", "b", "c", "d"]) == "'a', 'b', 'c', 'd'"
    # the CLI: exit 0, one warning line of a few labels, the groups' mass
    path = tmp_path / "m.json"
    eps = float(np.max(np.log(Qm.max(axis=0) / Qm.min(axis=0)))) + 1e-6
    Mechanism.from_channel(Qm, [{"notion": "ldp", "epsilon": eps}], inputs=labels, outputs=[f"y{j}" for j in range(Qm.shape[1])]).save(path)
    counts = tmp_path / "c.csv"
    counts.write_text("".join(f"y{j},{100 + j}\n" for j in range(Qm.shape[1])))
    from mechopt.cli import main

    assert main(["estimate", str(path), "--counts", str(counts), "--json"]) == 0
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and len(re.findall(r"'p\d+'", err[0])) <= 3 and len(err[0]) < 500, err
    assert "912 inputs in 12 groups" in err[0]
    out = json.loads(captured.out)
    assert len(out["estimate"]) == 15 and "p0+p1+…+p75 (76 inputs)" in out["groups"]
    assert sum(out["estimate"].values()) == pytest.approx(1.0)


def test_what_solve_says_estimate_will_do():
    merged = identifiability(Q)
    assert merged.group_masses and "each merged group's total mass" in merged.next_step()
    # rows 0 + 1 = 2 × row 2, none identical: no group's mass is identifiable, only a prior helps
    dependent = identifiability([[0.6, 0.4, 0.0], [0.0, 0.4, 0.6], [0.3, 0.4, 0.3]])
    assert not dependent.group_masses and dependent.next_step() == "'mechopt estimate' needs --method mmse (a prior)"
    assert identifiability(np.eye(2)).next_step() == ""


# a + b = 2c (no two rows identical): a, b, c join one component; d alone is identifiable
BLOCK = np.array([[0.6, 0.4, 0.0, 0.0],
                  [0.0, 0.4, 0.6, 0.0],
                  [0.3, 0.4, 0.3, 0.0],
                  [0.0, 0.0, 0.5, 0.5]])
BLOCK_TRUTH = np.array([0.2, 0.3, 0.1, 0.4])


def test_components_of_the_null_space_give_identifiable_masses():
    rng = np.random.default_rng(5)
    n, reps = 400, 2000
    got, covered = [], np.zeros(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentifiabilityWarning)
        for _ in range(reps):
            e = estimate_counts(BLOCK, rng.multinomial(n, BLOCK_TRUTH @ BLOCK), method="inversion", labels="abcd")
            got.append(e.estimate)
            covered += (e.lower <= [0.6, 0.4]) & ([0.6, 0.4] <= e.upper)
    got = np.array(got)
    assert e.labels == ("a+b+c", "d") and e.groups == (("a", "b", "c"), ("d",))
    assert np.allclose(got.sum(axis=1), 1.0, atol=1e-12)
    sem = got.std(axis=0, ddof=1) / np.sqrt(reps)
    assert np.all(np.abs(got.mean(axis=0) - [0.6, 0.4]) <= 5 * sem)  # unbiased (linear in the frequencies)
    assert np.all(covered / reps >= 0.93)  # Wald at 95 %; sd of each share 0.5 %
    with pytest.warns(IdentifiabilityWarning, match="each group of inputs the reports can tell apart"):
        for method in ("em", "projected"):
            e = estimate_counts(BLOCK, [60, 96, 164, 80], method=method, labels="abcd")
            assert e.estimate == pytest.approx([0.6, 0.4], abs=1e-6)  # the counts are exactly the truth's
    boot = estimate_counts(BLOCK, [60, 96, 164, 80], method="inversion", postprocess="simplex", labels="abcd")
    assert boot.interval.startswith("percentile bootstrap") and np.all(boot.lower <= boot.estimate)
    assert identifiability(BLOCK).group_masses and not identifiability(BLOCK).merged


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 12), st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_merged_rows_match_comparing_every_pair(k, m, seed):
    from mechopt._identifiability import MERGE_ATOL, merged_rows

    rng = np.random.default_rng(seed)
    base = rng.dirichlet(np.ones(m), size=max(1, k // 2))
    Q = base[rng.integers(0, len(base), k)]  # repeated rows
    nudge = rng.random(k) < 0.3  # some moved by less, some by more than the tolerance
    Q[nudge] += rng.choice([0.3, 3.0], size=(int(nudge.sum()), 1)) * MERGE_ATOL * rng.choice([-1, 1], size=(int(nudge.sum()), m))
    want, seen = [], set()
    for i in range(k):  # the definition: every later row within the tolerance of row i
        if i in seen:
            continue
        same = [j for j in range(i, k) if j not in seen and np.max(np.abs(Q[j] - Q[i])) <= MERGE_ATOL]
        seen.update(same)
        if len(same) > 1:
            want.append(tuple(same))
    assert merged_rows(Q) == want


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.sampled_from([0.5, 1.0, 3.0]), st.integers(0, 2**31 - 1))
def test_rank_null_direction_and_components_of_block_channels(blocks, rank_each, outputs_per_input, seed):
    """A channel whose inputs split into independent blocks, each of known rank: the rank, a
    null direction and the components follow from the construction (few, as many and more
    outputs than inputs: the QR path above twice as many)."""
    from mechopt._identifiability import null_components

    rng = np.random.default_rng(seed)
    rows, comp, want_rank = [], [], 0
    k_each = rank_each + 2  # every block has two more inputs than its rank
    m_each = max(rank_each, int(round(outputs_per_input * k_each)))
    for j in range(blocks):
        basis = rng.dirichlet(np.ones(m_each), size=rank_each)  # rank_each independent rows
        mix = rng.dirichlet(np.ones(rank_each), size=k_each)     # every row a mixture of them
        block = np.zeros((k_each, blocks * m_each))
        block[:, j * m_each:(j + 1) * m_each] = mix @ basis
        rows.append(block)
        comp += [j] * k_each
        want_rank += np.linalg.matrix_rank(mix @ basis)
    Q = np.vstack(rows)
    found = identifiability(Q)
    assert found.rank == want_rank < Q.shape[0] and not found.identifiable
    v = found.null_direction
    assert np.abs(Q.T @ v).max() <= 1e-9 and abs(v.sum()) <= 1e-9 and np.linalg.norm(v) == pytest.approx(1.0)
    labels = null_components(Q)
    # rows of different blocks are never joined; within a block the mixtures join every row
    assert all((labels[i] == labels[j]) == (comp[i] == comp[j]) for i in range(len(comp)) for j in range(len(comp)))
    # one block of rank one: all its rows are the same row, whose mass (1) is known
    assert found.group_masses == (blocks > 1 or rank_each == 1)
