"""Privacy-loss distributions, composition and the ``mechopt account`` command (mechopt.accounting)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from mechopt import Mechanism
from mechopt._errors import InputError
from mechopt.accounting import compose_epsilon, privacy_loss_distribution, shuffle_epsilon, worst_pair
from mechopt.cli import main


def random_channel(seed: int, k: int = 4, m: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    Q = rng.uniform(0.05, 1.0, size=(k, m))
    return Q / Q.sum(axis=1, keepdims=True)


def brute_eps(P: np.ndarray, R: np.ndarray) -> float:
    return max(abs(math.log(p / r)) for p, r in zip(P, R))


@pytest.mark.parametrize("seed", range(5))
def test_worst_pair_matches_brute_force(seed):
    Q = random_channel(seed)
    best = max(brute_eps(Q[a], Q[b]) for a, b in itertools.combinations(range(len(Q)), 2))
    a, b = worst_pair(Q)
    assert math.isclose(brute_eps(Q[a], Q[b]), best, rel_tol=1e-12)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("T", [1, 4, 12])
def test_pure_composition_is_T_times_the_largest_log_ratio(seed, T):
    Q = random_channel(seed)
    eps0 = max(brute_eps(Q[a], Q[b]) for a, b in itertools.combinations(range(len(Q)), 2))
    got = compose_epsilon(Q, T, 0.0)
    assert T * eps0 <= got <= 1.01 * T * eps0


def test_memoized_collections_cost_one_report():
    Q = random_channel(7)
    for delta in (0.0, 1e-6):
        assert compose_epsilon(Q, 12, delta, memoized=True) == compose_epsilon(Q, 1, delta)
    assert compose_epsilon(Q, 12, 1e-6) > 2 * compose_epsilon(Q, 1, 1e-6)


def test_pld_hockey_stick_is_the_exact_one_from_above():
    Q = random_channel(3, k=3, m=6)
    pld = privacy_loss_distribution(Q, pair=(0, 2))
    for eps in (0.0, 0.2, 0.5):
        exact = max(np.maximum(Q[0] - math.exp(eps) * Q[2], 0).sum(), np.maximum(Q[2] - math.exp(eps) * Q[0], 0).sum())
        got = pld.get_delta_for_epsilon(eps)
        assert exact - 1e-12 <= got <= exact + 1e-3


def test_composition_at_positive_delta_matches_two_fold_enumeration():
    # two reports of binary RR: the exact δ(ε) of the product, by enumeration of the 4 outcomes
    e = math.exp(1.0)
    Q = np.array([[e, 1], [1, e]]) / (1 + e)
    P0 = np.outer(Q[0], Q[0]).ravel()
    P1 = np.outer(Q[1], Q[1]).ravel()
    delta = float(np.maximum(P0 - math.exp(1.0) * P1, 0).sum())  # at ε = 1: only the (0, 0) outcome counts
    got = compose_epsilon(Q, 2, delta)
    assert 1.0 - 1e-3 <= got <= 1.0 + 2e-3


def test_mechanism_pld_takes_labels():
    m = Mechanism.from_channel(random_channel(1, k=3, m=3), [{"notion": "ldp", "epsilon": 5.0}],
                               inputs=["a", "b", "c"])
    by_label = m.pld(("a", "c")).get_epsilon_for_delta(0.0)
    by_index = privacy_loss_distribution(m.matrix, (0, 2)).get_epsilon_for_delta(0.0)
    assert by_label == by_index
    with pytest.raises(InputError, match="pair"):
        m.pld(("a", "zz"))
    with pytest.raises(InputError, match="pair"):
        m.pld(("a", "a"))


def test_many_pairs_use_the_dominating_pair():
    k = 30  # 435 distinct pairs: above MAX_PAIRS
    rng = np.random.default_rng(0)
    Q = rng.uniform(0.5, 1.0, size=(k, 4))
    Q /= Q.sum(axis=1, keepdims=True)
    eps0 = max(brute_eps(Q[a], Q[b]) for a, b in itertools.combinations(range(k), 2))
    assert eps0 * 3 <= compose_epsilon(Q, 3, 0.0) <= 1.01 * eps0 * 3


# -- the command ---------------------------------------------------------------------------------------
@pytest.fixture()
def rr_file(tmp_path):
    e = math.exp(1.0)
    m = Mechanism.from_channel([[e / (e + 2), 1 / (e + 2), 1 / (e + 2)], [1 / (e + 2), e / (e + 2), 1 / (e + 2)],
                                [1 / (e + 2), 1 / (e + 2), e / (e + 2)]], [{"notion": "ldp", "epsilon": 1.0}],
                               inputs=["x", "y", "z"])
    path = tmp_path / "rr.json"
    m.save(path)
    return path


def test_account_json(rr_file, capsys):
    assert main(["account", str(rr_file), "--n", "5000", "--delta", "1e-7", "--compose", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert math.isclose(out["epsilon0"], 1.0, rel_tol=1e-9)
    assert out["shuffle"]["epsilon"] <= out["shuffle"]["closed_form"] <= 1.0
    Q = Mechanism.load(rr_file).matrix
    assert out["shuffle"]["epsilon"] == shuffle_epsilon(Q, 5000, 1e-7)
    assert 3.0 <= out["compose"]["epsilon_pure"] <= 3.03
    assert out["worst_pair"] in (["x", "y"], ["x", "z"], ["y", "z"])


def test_account_text(rr_file, capsys):
    assert main(["account", str(rr_file), "--n", "1000"]) == 0
    text = capsys.readouterr().out
    assert "epsilon0 = 1" in text and "shuffled among n = 1000" in text and "Thm 3.1" in text


@pytest.mark.parametrize("argv,field", [
    (["--n", "0"], "--n"),
    (["--n", "10", "--delta", "0"], "--delta"),
    (["--n", "10", "--compose", "0"], "--compose"),
])
def test_account_bad_input_is_one_line_exit_2(rr_file, capsys, argv, field):
    assert main(["account", str(rr_file), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and field in err and "Traceback" not in err


def test_account_refuses_a_family_and_a_tampered_file(tmp_path, rr_file, capsys):
    from mechopt.families import FamilyMechanism

    fam = FamilyMechanism.from_family(
        {"kind": "subset_selection", "ratio": math.e, "mixture": [{"d": 3, "weight": 1.0}]},
        [{"notion": "ldp", "epsilon": 1.0}], inputs=[str(i) for i in range(10)])
    path = tmp_path / "family.json"
    fam.save(path)
    assert main(["account", str(path), "--n", "100"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "family" in err
    doc = json.loads(rr_file.read_text())
    doc["matrix"][0] = [0.5, 0.25, 0.25]  # still a channel, no longer the hashed one
    rr_file.write_text(json.dumps(doc))
    assert main(["account", str(rr_file), "--n", "100"]) == 1
    assert capsys.readouterr().err.count("\n") == 1
