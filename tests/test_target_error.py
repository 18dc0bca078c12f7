"""Choosing ε: the smallest budget whose optimal mechanism meets a target error at n users."""

from __future__ import annotations

import json
import math

import pytest

from mechopt._errors import InputError
from mechopt._target_error import smallest_epsilon
from mechopt.cli import main


def krr_problem(k: int, eps: float = 1.0) -> dict:
    # Hamming loss, uniform prior, labeled outputs, ε-LDP: the optimum is k-RR
    return {"k": k, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": eps}],
            "objective": {"kind": "expected_loss"}}


def krr_epsilon(k: int, n: int, target: float) -> float:
    """Solve (k−1)(e^ε + k − 1)² / (k n (e^ε − 1)²) = target for ε, by hand.

    The unbiased k-RR estimator at the uniform distribution: each output has probability
    1/k, so Var(p̂_x) = (1/k)(1 − 1/k) / (n (a − b)²) with a − b = (e^ε − 1)/(e^ε + k − 1);
    summed over the k inputs. With s = √(target·k·n/(k − 1)) = (e^ε + k − 1)/(e^ε − 1):
    e^ε = (s + k − 1)/(s − 1).
    """
    s = math.sqrt(target * k * n / (k - 1))
    return math.log((s + k - 1) / (s - 1))


@pytest.mark.parametrize("k,n,target", [(3, 1000, 0.01), (4, 20_000, 1e-3)])
def test_krr_answer_matches_the_closed_form(k, n, target):
    want = krr_epsilon(k, n, target)
    seen = []
    out = smallest_epsilon(krr_problem(k), target, n, epsilons="0.25:4:0.25", progress=seen.append)
    lo, hi = out["bracket"]
    assert lo < want <= hi * (1 + 1e-12) and hi - lo <= 1e-3 * hi
    assert out["answer"] == hi and out["axis"] == "epsilon" and out["notion"] == "ldp" and out["monotone"]
    assert seen == out["points"] and all(p["status"] == "optimal" for p in seen)
    for p in out["points"]:  # every point's error is k-RR's closed form at its ε
        e = math.exp(p["x"])
        assert p["error"] == pytest.approx((k - 1) * (e + k - 1) ** 2 / (k * n * (e - 1) ** 2), rel=1e-9)


def test_multiplier_axis_and_a_first_point_that_already_meets():
    want = krr_epsilon(3, 1000, 0.01)
    out = smallest_epsilon(krr_problem(3, eps=4.0), 0.01, 1000, scale="0.25,0.5")  # ε = 4t
    assert out["axis"] == "multiplier" and out["bracket"][0] < want / 4 <= out["bracket"][1] * (1 + 1e-12)
    # the grid's first point (ε = 1) already meets a loose target: bisected down from 0
    loose = krr_epsilon(3, 1000, 0.05)
    out = smallest_epsilon(krr_problem(3), 0.05, 1000, epsilons="1,2")
    assert out["points"][0]["x"] == 1.0 and out["bracket"][0] < loose <= out["bracket"][1] * (1 + 1e-12)


def test_unreachable_target_and_bad_input(tmp_path, capsys):
    out = smallest_epsilon(krr_problem(3), 1e-6, 100, epsilons="0.5,1")
    assert out["answer"] is None and "no point of the grid meets the target" in out["note"]
    with pytest.raises(InputError, match="target_error: must be a positive finite number"):
        smallest_epsilon(krr_problem(3), -1, 100)
    with pytest.raises(InputError, match="n: must be an integer >= 1"):
        smallest_epsilon(krr_problem(3), 0.1, 0)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(krr_problem(3)))
    assert main(["tradeoff", str(path), "--target-error", "0.01"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--target-error X and --n N go together" in err
    assert main(["tradeoff", str(path), "--epsilons", "0.5,1", "--target-error", "1e-6", "--n", "100"]) == 1
    assert "no answer: no point of the grid meets the target" in capsys.readouterr().out


def test_cli_prints_progress_the_curve_and_the_answer(tmp_path, capsys):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(krr_problem(3)))
    png = tmp_path / "t.png"
    assert main(["tradeoff", str(path), "--epsilons", "0.5:2:0.5", "--target-error", "0.01", "--n", "1000",
                 "--png", str(png)]) == 0
    cap = capsys.readouterr()
    progress = [line for line in cap.err.splitlines() if line.startswith("mechopt: ")]
    assert progress[0].startswith("mechopt: grid point 1: x = 0.5: error ") and "bisect point" in cap.err
    want = krr_epsilon(3, 1000, 0.01)
    answer = float(cap.out.split("at n = 1000: ")[1].split()[0])
    assert abs(answer - want) <= 2e-3 * want and png.stat().st_size > 5000
    # the plain trade-off prints a line per point too
    assert main(["tradeoff", str(path), "--epsilons", "0.5,1", "--no-baselines", "--png", str(png)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("mechopt: point 1/2: x = 0.5: ") and err[1].startswith("mechopt: point 2/2: x = 1: ")
