"""Closed-form oracles for uniform-prior histogram estimation under ε-LDP at k = 10³–10⁵.

The oracle is written here from the papers, without mechopt's orbit code:

* **Subset selection's exact risk** (Ye & Barg 2018, "Optimal schemes for discrete
  distribution estimation under locally differential privacy", IEEE Trans. IT; Wang et
  al. 2016). d-subset selection reports a d-subset ``S`` with probability proportional to
  ``e^ε`` if ``x ∈ S`` else 1. Counting subsets, the inclusion probabilities are
  ``a = P(i ∈ S | x = i) = r d / (r d + k - d)`` and ``b = P(i ∈ S | x ≠ i) =
  d (r (d-1) + k - d) / ((k-1)(r d + k - d))`` (``r = e^ε``). The unbiased estimator
  ``p̂_i = (freq_i - b)/(a - b)`` has ``n · E‖p̂ - p‖² = Σ_i π_i (1 - π_i) / (a - b)²`` with
  ``π_i = b + (a - b) p_i``; at the uniform p this is ``k π (1 - π)/(a - b)²``.
* **Optimum over all ε-LDP protocols** (Park, Nam, Lee, "Exactly optimal and
  communication-efficient private estimation via block designs", arXiv 2305.01261;
  Gentle, "Necessity of block designs for optimal locally private distribution
  estimation", ITW 2025): the optimal risk at the uniform distribution is attained by
  block designs, whose risk is that of subset selection at their block size; the optimum
  is the best block size ``d``. Minimising ``(k + c d)² / (d (k - d))`` (``c = r - 1``)
  over real ``d``: the derivative vanishes where ``c d k - k² + 2 k d = 0``, i.e.
  ``d = k / (e^ε + 1)`` (Ye & Barg's optimal size), and the function is unimodal, so the
  integer optimum is its floor or its ceiling.

mechopt's ``estimation_variance`` at the uniform prior is the efficient estimator's risk
``tr(B J⁻¹ Bᵀ)``; at the uniform p the estimator above attains it (checked at k = 10
against SPEC §3's printed 127.2), so the two must agree.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import mechopt
from mechopt.cli import main


def oracle_risk(k: int, epsilon: float, d):
    """``n · MSE`` of d-subset selection at the uniform distribution (Ye & Barg 2018)."""
    r = math.exp(epsilon)
    d = np.asarray(d, dtype=float)
    a = r * d / (r * d + k - d)
    b = d * (r * (d - 1) + k - d) / ((k - 1) * (r * d + k - d))
    pi = b + (a - b) / k
    return k * pi * (1 - pi) / (a - b) ** 2


def oracle_optimum(k: int, epsilon: float) -> tuple[int, float]:
    """``(d*, R*)``: the best block size ``k/(e^ε + 1)`` rounded either way (Park–Nam–Lee)."""
    x = k / (math.exp(epsilon) + 1)
    cands = [d for d in {max(1, math.floor(x)), min(k - 1, math.ceil(x))}]
    risks = [float(oracle_risk(k, epsilon, d)) for d in cands]
    i = int(np.argmin(risks))
    return cands[i], risks[i]


def solve(k: int, epsilon: float):
    return mechopt.solve({"k": k, "outputs": "free",
                          "privacy": [{"notion": "ldp", "epsilon": epsilon}],
                          "objective": {"kind": "estimation_variance"}})


def test_oracle_matches_printed_values():
    # SPEC §3: k = 10, ε = 0.5 — k-RR's risk 242.5, the optimum 127.2 at d = 4
    assert round(float(oracle_risk(10, 0.5, 1)), 1) == 242.5
    assert oracle_optimum(10, 0.5)[0] == 4
    assert round(oracle_optimum(10, 0.5)[1], 1) == 127.2
    # d = 1 is k-RR: (k-1)(k + r - 1)² / (k (r - 1)²)  (Kairouz et al. 2016)
    k, r = 1000, math.e
    assert float(oracle_risk(k, 1.0, 1)) == pytest.approx((k - 1) * (k + r - 1) ** 2 / (k * (r - 1) ** 2),
                                                          rel=1e-12)


@pytest.mark.parametrize("k", [1000, 10_000])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_rounded_optimal_size_is_the_scan_minimum(k, epsilon):
    d = np.arange(1, k)
    risks = oracle_risk(k, epsilon, d)
    assert oracle_optimum(k, epsilon)[0] == int(d[np.argmin(risks)])


@pytest.mark.parametrize("k", [1000, 10_000, 100_000])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0, 4.0])
def test_symmetric_route_meets_the_block_design_optimum(k, epsilon):
    d_star, risk = oracle_optimum(k, epsilon)
    res = solve(k, epsilon)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(risk, rel=1e-9)
    assert res.bound == pytest.approx(risk, rel=1e-9)
    assert res.bound <= res.objective * (1 + 1e-12)
    assert res.stats["subset_size"] == d_star
    spec = res.mechanism.family_spec
    assert spec["kind"] == "subset_selection"
    assert [c["d"] for c in spec["mixture"]] == [d_star]


# -- LIP estimation design beyond enumeration: the message names the way out -------------

@pytest.fixture
def lip100(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"k": 100, "outputs": "free",
                                "privacy": [{"notion": "lip", "epsilon": 1, "prior": [0.01] * 100}],
                                "objective": {"kind": "estimation_variance",
                                              "p0": (np.arange(1, 101) / 5050).tolist()}}))
    return path


@pytest.mark.parametrize("extra, rc, head", [
    ((), 1, "mechopt: error: 6.3e31 LIP vertex candidates"),     # 100 · 2^99 = 6.34e31
    (("--method", "colgen"), 2, "mechopt: method: about 6.3e31 extreme rays"),
])
def test_lip_design_at_k100_names_the_alternatives(lip100, tmp_path, capsys, extra, rc, head):
    code = main(["solve", str(lip100), "-o", str(tmp_path / "m.json"), *extra])
    out, err = capsys.readouterr()
    assert code == rc
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(head)
    for way_out in ("'ldp'", "prior", "'histogram_mse'", "'mutual_information'", "time limit"):
        assert way_out in err


def test_the_named_alternatives_work():
    # the message's k bound: 15 · 2^14 = 245 760 candidates are listed, 16 · 2^15 are not
    res = mechopt.solve({"k": 15, "outputs": "free",
                         "privacy": [{"notion": "lip", "epsilon": 1, "prior": [1 / 15] * 15}],
                         "objective": {"kind": "estimation_variance"}})
    assert res.status == "optimal"
    res = mechopt.solve({"k": 100, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1}],
                         "objective": {"kind": "estimation_variance"}})
    assert res.status == "optimal"
    assert res.objective == pytest.approx(oracle_optimum(100, 1.0)[1], rel=1e-9)
