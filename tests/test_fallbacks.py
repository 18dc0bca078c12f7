"""Fallbacks export the best verified channel the run saw; a failed LP is retried elsewhere (issue 20, item 5).

The independent facts: the best constant channel by brute force over a grid of output
distributions, the optimum of rows tied within blocks by scipy's LP written here, the
mutual information of randomized response over groups in closed form.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy.optimize import linprog

import mechopt
from mechopt import load_problem, solve

pytestmark = pytest.mark.filterwarnings("ignore::mechopt.IdentifiabilityWarning")


def _verified(r, doc) -> bool:
    return mechopt.verify(r.mechanism.matrix, list(load_problem(doc).notions)).verified


def _grid(m: int, n: int):
    """Every distribution on ``m`` outputs with entries in multiples of ``1/n``."""
    for cut in itertools.combinations(range(n + m - 1), m - 1):
        parts = np.diff(np.concatenate([[-1], cut, [n + m - 1]])) - 1
        yield parts / n


def _best_constant_by_grid(L: np.ndarray, n: int = 20) -> float:
    """min over grid rows u of max_x (L u)_x: an upper bound on the best constant channel's minimax loss."""
    return min(float(np.max(L @ u)) for u in _grid(L.shape[1], n))


def _tied_block_optimum(L: np.ndarray, blocks) -> float:
    """The minimax loss when every block's rows are equal (epsilon = 0 inside blocks): one LP per block."""
    m = L.shape[1]
    worst = 0.0
    for b in blocks:
        # min s  s.t.  L[b] u <= s, sum u = 1, u >= 0
        c = np.concatenate([np.zeros(m), [1.0]])
        A_ub = np.hstack([L[b], -np.ones((len(b), 1))])
        res = linprog(c, A_ub=A_ub, b_ub=np.zeros(len(b)), A_eq=np.concatenate([np.ones(m), [0.0]])[None, :],
                      b_eq=[1.0], bounds=[(0, None)] * m + [(None, None)], method="highs")
        assert res.status == 0
        worst = max(worst, float(res.fun))
    return worst


# -- worst_case_loss under block LDP at epsilon = 1e-9 -----------------------------------

BLOCK_LOSS = [[1.365, 3.126, 7.159, 9.011, 3.417], [2.389, 8.218, 5.85, 4.766, 2.562],
              [0.727, 0.179, 5.8, 1.911, 9.755], [1.075, 4.521, 3.947, 2.323, 7.488],
              [6.437, 7.258, 0.828, 3.527, 5.198]]
BLOCKS = [[0, 3], [1, 2, 4]]
BLOCK_DOC = {"k": 5, "outputs": "inputs",
             "privacy": [{"notion": "block", "epsilon": 1e-9, "blocks": [[str(x) for x in b] for b in BLOCKS]}],
             "objective": {"kind": "worst_case_loss", "loss": BLOCK_LOSS}}


def test_block_ldp_worst_case_loss_exports_the_best_verified_channel():
    """The LP's channel fails the repair (a 1e-9 budget, rows 4.6e-10 apart); the export
    was the point-mass constant channel at 6.437. The rows tied within blocks verify and
    are optimal: max over blocks of each block's minimax LP."""
    L = np.array(BLOCK_LOSS)
    r = solve(BLOCK_DOC, quiet=True)
    assert r.status in ("optimal", "feasible") and _verified(r, BLOCK_DOC)
    pure = min(float(L[:, y].max()) for y in range(5))  # the old export
    constant = _best_constant_by_grid(L)
    tied = _tied_block_optimum(L, BLOCKS)
    assert pure == pytest.approx(6.437) and constant < pure and tied < constant
    assert r.objective <= constant + 1e-12
    # nothing beats the tied optimum by more than the budget allows (e^1e-9 on each entry)
    assert r.objective >= tied * math.exp(-1e-9) - 1e-12
    assert r.objective <= tied * (1 + 1e-7)
    assert r.bound is not None and r.bound <= r.objective and r.bound <= tied + 1e-12
    if "fallback" in r.stats:  # HiGHS 1.x: the repair fails on this LP's channel
        assert "could not be repaired" in r.message and "best verified channel seen" in r.message
        assert r.stats["fallback"]["exported"] in r.message


def _fail_first_repair(monkeypatch):
    """Make the first repair in mechopt._solve fail (the solver's channel); later ones run."""
    import mechopt._solve as S
    from mechopt.solvers._repair import Repair

    real = S.repair
    calls = []

    def flaky(Q, notions, **kw):
        calls.append(Q)
        rep = real(Q, notions, **kw)
        if len(calls) == 1:
            cert = mechopt.verify(np.full((Q.shape[0], Q.shape[1]), 2.0), notions)  # rows do not sum to 1
            return Repair(Q, math.nan, cert, rep.attempts)
        return rep

    monkeypatch.setattr(S, "repair", flaky)
    return calls


def test_forced_repair_failure_beats_every_point_mass(monkeypatch):
    """Two inputs in one block at epsilon = 1e-9: every channel is nearly constant, and
    the best constant channel is half and half on the two outputs (minimax loss 2),
    not a point mass (2.5) as the old fallback exported."""
    L = [[0.0, 4.0, 2.5], [4.0, 0.0, 2.5]]
    doc = {"inputs": ["a", "b"], "outputs": ["u", "v", "w"],
           "privacy": [{"notion": "block", "epsilon": 1e-9, "blocks": [["a", "b"]]}],
           "objective": {"kind": "worst_case_loss", "loss": L}}
    calls = _fail_first_repair(monkeypatch)
    r = solve(doc, quiet=True)
    assert len(calls) >= 2 and r.status in ("optimal", "feasible") and _verified(r, doc)
    constant = _best_constant_by_grid(np.array(L), n=40)
    assert constant == pytest.approx(2.0)
    assert r.objective <= 2.0 + 1e-12 and r.objective >= 2.0 * math.exp(-1e-9) - 1e-12
    assert r.bound is not None and r.bound <= r.objective
    assert "could not be repaired" in r.message and "exported the best verified channel seen" in r.message
    assert r.stats["fallback"]["exported"] in r.message
    if r.status == "optimal":
        assert r.gap <= 1e-7 * max(abs(r.objective), 4.0)


def test_best_constant_row_against_a_grid():
    from mechopt._fallback import best_constant_row
    from mechopt.objectives import Objective

    rng = np.random.default_rng(20)
    for _ in range(20):
        k, m = int(rng.integers(2, 5)), int(rng.integers(2, 4))
        L = rng.uniform(0, 10, (k, m))
        prior = rng.dirichlet(np.ones(k))
        worst = Objective("worst_case_loss", prior, loss=L)
        expected = Objective("expected_loss", prior, loss=L)
        weighted = Objective("weighted", prior, terms=((0.3, worst), (0.7, expected)))
        for obj in (worst, expected, weighted):
            u = best_constant_row(obj, m)
            assert u.min() >= 0 and u.sum() == pytest.approx(1.0, abs=1e-12)
            value = mechopt.objectives.evaluate(obj, np.tile(u, (k, 1)))
            grid = min(mechopt.objectives.evaluate(obj, np.tile(g, (k, 1))) for g in _grid(m, 60))
            assert value <= grid + 1e-9


# -- mutual information under a k = 8 E-LDP matrix with budgets 8-58 and one 0 ----------

E8 = [[0.0, 19.841, 48.064, 37.108, 12.706, 29.656, 31.953, 15.987],
      [19.841, 0.0, 27.561, 33.837, 29.531, 37.34, 44.892, 55.813],
      [48.064, 27.561, 0.0, 22.636, 8.075, 56.673, 22.92, 23.699],
      [37.108, 33.837, 22.636, 0.0, 9.517, 43.348, 26.712, 12.543],
      [12.706, 29.531, 8.075, 9.517, 0.0, 45.088, 44.108, 18.936],
      [29.656, 37.34, 56.673, 43.348, 45.088, 0.0, 51.924, 13.116],
      [31.953, 44.892, 22.92, 26.712, 44.108, 51.924, 0.0, 0.0],
      [15.987, 55.813, 23.699, 12.543, 18.936, 13.116, 0.0, 0.0]]
E8_DOC = {"k": 8, "outputs": "free", "privacy": [{"notion": "eldp", "matrix": E8}],
          "objective": {"kind": "mutual_information"}}


def _mi(Q: np.ndarray, prior: np.ndarray) -> float:
    joint = prior[:, None] * Q
    py = joint.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(joint > 0, joint * np.log(joint / (prior[:, None] * py[None, :])), 0.0)
    return float(terms.sum())


def _group_rr_mi() -> float:
    """Randomized response over the 7 groups (inputs 6 and 7 share a row) at its largest ratio, in closed form.

    ``Q[x] = (1 - t) / g + t e_group(x)``: its largest ratio is ``1 + t g / (1 - t)``, so
    the smallest budget between different groups (8.075) allows ``t = (r - 1) / (r - 1 + g)``.
    """
    E = np.array(E8)
    group = np.array([0, 1, 2, 3, 4, 5, 6, 6])
    g = 7
    cross = E[group[:, None] != group[None, :]]
    r = math.exp(float(cross.min()))
    t = (r - 1) / (r - 1 + g)
    Q = np.full((8, g), (1 - t) / g) + t * np.eye(g)[group]
    return _mi(Q, np.full(8, 1 / 8))


def test_eldp_mutual_information_ray_lp_failure_is_retried():
    """HiGHS (simplex) answered "Status 15: model_status is Unknown" here and the export was
    MI = 0 with no bound; interior point solves it."""
    r = solve(E8_DOC, quiet=True)
    assert r.status == "optimal" and _verified(r, E8_DOC)
    assert r.bound is not None and r.bound >= r.objective - 1e-12
    assert r.objective >= _group_rr_mi() - 1e-9 > 1.035
    if "lp_retry" in r.stats:  # the HiGHS build of the audit fails on its first method
        assert "retried on" in r.message and "which solved it" in r.message


def test_eldp_mutual_information_every_backend_failing_gives_group_rr(monkeypatch):
    import mechopt._solve as S
    from mechopt.solvers.free._raylp import RaySolution

    tried = []

    def fail(V, mu, *, backend="highs"):
        tried.append(backend)
        return RaySolution("error", None, None, None, None, f"{backend}: HiGHS Status 15 (forced)")

    monkeypatch.setattr(S, "solve_ray_lp", fail)
    r = solve(E8_DOC, quiet=True)
    assert tried[:3] == ["highs", "highs-ipm", "highs-ds"]
    assert r.status == "feasible" and _verified(r, E8_DOC) and r.bound is None
    expect = _group_rr_mi()
    # the bisection stops within 2^-20 of the largest t: the information lost is far smaller than this
    assert expect * (1 - 1e-4) <= r.objective <= expect + 1e-9
    assert r.objective == pytest.approx(_mi(r.mechanism.matrix, np.full(8, 1 / 8)), rel=1e-12)
    assert "failed on every back-end tried" in r.message and "randomized response over 7 groups" in r.message


# -- a forced LP failure triggers the retry -----------------------------------------------


def test_forced_highs_failure_is_retried_on_interior_point(monkeypatch):
    from mechopt.solvers.backends._adapters import HighsAdapter, LPSolution

    real = HighsAdapter.solve

    def broken(self, *args, **kwargs):
        if self.method == "highs":
            return LPSolution("error", None, None, None, "HiGHS Status 15 (forced)", self.name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(HighsAdapter, "solve", broken)
    doc = {"k": 3, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
           "objective": {"kind": "mutual_information"}}
    r = solve(doc, quiet=True)
    assert r.status == "optimal" and _verified(r, doc)
    assert "the ray LP failed on highs" in r.message and "retried on highs-ipm, which solved it" in r.message
    assert "highs-ipm" in r.stats["lp_retry"]
    # 3 inputs under 1-LDP, uniform prior: randomized response is optimal for mutual
    # information (Kairouz et al., binary and randomized response extremal at small k)
    row = np.array([math.e, 1.0, 1.0]) / (2 + math.e)
    assert r.objective == pytest.approx(math.log(3) + float(row @ np.log(row)), rel=1e-9)


def test_forced_labeled_failure_is_retried_through_cvxpy(monkeypatch):
    import mechopt._solve as S
    from mechopt.solvers.labeled._lp import LabeledSolution

    real = S.solve_labeled
    engines = []

    def highs_broken(*args, backend="auto", **kwargs):
        engines.append(backend)
        if not backend.startswith("cvxpy:"):
            return LabeledSolution("error", None, None, "HiGHS Status 15 (forced)", {})
        return real(*args, backend=backend, **kwargs)

    monkeypatch.setattr(S, "solve_labeled", highs_broken)
    doc = {"k": 3, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
           "objective": {"kind": "expected_loss", "loss": "hamming"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve(doc, quiet=True)
    assert engines == ["auto", "cvxpy:CLARABEL"]
    assert r.status in ("optimal", "feasible") and _verified(r, doc)
    assert "the LP failed on highs" in r.message and "retried on cvxpy:CLARABEL" in r.message
    # k-RR's error 2 / (2 + e) is the optimum (Kairouz et al.); the bound must not exceed it
    assert r.objective == pytest.approx(2 / (2 + math.e), rel=1e-6)
    assert r.bound is None or r.bound <= 2 / (2 + math.e) + 1e-12


def test_a_costly_repair_is_compared_with_the_candidates(monkeypatch):
    """A repair that mixes far more than needed (forced: t = 1e-3) leaves a gap above the
    tolerance; the candidates (the solver's channel mixed by the smallest verified t) close it."""
    import mechopt._solve as S
    from mechopt.solvers._repair import Repair

    real = S.repair
    calls = []

    def wasteful(Q, notions, **kw):
        calls.append(1)
        if len(calls) > 1:
            return real(Q, notions, **kw)
        k, m = Q.shape
        Qt = 0.999 * Q + 0.001 / m
        return Repair(Qt, 1e-3, mechopt.verify(Qt, notions), 1)

    monkeypatch.setattr(S, "repair", wasteful)
    doc = {"k": 3, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
           "objective": {"kind": "expected_loss", "loss": "hamming"}}
    r = solve(doc, quiet=True)
    assert _verified(r, doc) and r.status == "optimal"
    assert "the repair cost" in r.message and "best verified channel seen" in r.message
    # k-RR is optimal: 2 / (2 + e); the wasteful repair's channel was 1e-3 * (2/3 - 2/(2+e)) worse
    assert r.objective == pytest.approx(2 / (2 + math.e), rel=1e-9)
