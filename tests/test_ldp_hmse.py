"""LDP histogram MSE at large k: coarse-cell pricing bounds, neighbour columns, the aggregated start.

Every pricer result is checked against full enumeration of the staircases
``1 + (e^eps - 1) 1_S`` with the utility written from docs/model.md
(``sum_x (P_x v_x)^2 / (P·v)``), and the column generation started by
:mod:`mechopt.solvers.free._ldp_hmse` against main's ray enumeration.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechopt import solve
from mechopt.objectives import Objective
from mechopt.solvers.free import _ldp_hmse, _pricing_sep
from mechopt.solvers.free._ldp_neighbours import neighbour_masks
from mechopt.solvers.free._pricing import Staircases, price


def all_sets(k):
    return np.array(list(itertools.product([False, True], repeat=k)))


def hist_reduced(P, d, eps, masks):
    """``(mu(v) - d·v) / (P·v)`` for the staircase of every mask, from the formula."""
    V = np.where(masks, math.exp(eps), 1.0).T
    py = P @ V
    return (((P[:, None] * V) ** 2).sum(axis=0) / py - d @ V) / py


@settings(max_examples=25, deadline=None, derandomize=True)
@given(k=st.integers(6, 11), seed=st.integers(0, 10**6), eps=st.sampled_from([0.5, 1.0, 2.0]),
       style=st.sampled_from(["zero", "scaled", "mixed"]), fine=st.sampled_from([0, 2]))
def test_coarse_cells_keep_the_pricing_exact(k, seed, eps, style, fine):
    """With every node bounded on coarse cells first, the pricing still finds the enumerated maximum."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(k, 0.7))
    scale = float((P ** 2).sum())
    d = {"zero": np.zeros(k), "scaled": scale * rng.uniform(0.2, 1.5, k), "mixed": scale * rng.normal(size=k)}[style]
    best = float(hist_reduced(P, d, eps, all_sets(k)).max())
    tol = 1e-9 * max(1.0, abs(best))
    obj = Objective("histogram_mse", P)
    idx = np.arange(k)
    names = ("FINE_CELLS", "COARSE_CELLS", "ENUMERATE_FREE", "CELL_ELEMENTS")
    old = [getattr(_pricing_sep, n) for n in names]
    try:  # coarse cells at every node with more than `fine` cells; exact cells one chunk of 2 at a time
        for n, v in zip(names, (fine, 3, 2, 2 * k)):
            setattr(_pricing_sep, n, v)
        for floor in (-math.inf, 0.0, best - 10 * tol):
            r = price(Staircases(idx, idx, eps), obj, d, floor=floor)
            assert r.upper >= best - tol
            if r.exact and best > floor:
                assert r.upper == pytest.approx(best, rel=1e-9, abs=tol)
            # the columns are real staircases, scored truthfully
            V = r.columns
            got = (((P[:, None] * V) ** 2).sum(axis=0) / (P @ V) - d @ V) / (P @ V)
            assert np.allclose(got, r.values, rtol=1e-9, atol=tol) and (r.values <= r.upper + tol).all()
    finally:
        for n, v in zip(names, old):
            setattr(_pricing_sep, n, v)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(k=st.integers(4, 10), seed=st.integers(0, 10**6))
def test_neighbours_are_the_best_one_flip_and_swap_sets(k, seed):
    rng = np.random.default_rng(seed)
    P, d, eps = rng.dirichlet(np.ones(k)), rng.normal(size=k) * 0.01, 1.0
    E = math.exp(eps)
    seed_mask = rng.random(k) < 0.5
    H = float((P ** 2).sum())

    def value(pi, sq, dl):  # the reduced value from the three sums (U = G = all inputs)
        u = 1.0 + (E - 1) * pi
        return (H + (E * E - 1) * sq) / u ** 2 - (d.sum() + (E - 1) * dl) / u

    got = neighbour_masks(value, P, d, [seed_mask], top=5, threshold=-math.inf)
    sets = all_sets(k)
    dist = (sets != seed_mask).sum(axis=1)
    near = sets[(dist == 1) | ((dist == 2) & (sets.sum(axis=1) == seed_mask.sum()))]
    truth = np.sort(hist_reduced(P, d, eps, near))[::-1][:5]
    vals = np.array([v for v, _ in got])
    assert vals == pytest.approx(truth, rel=1e-9, abs=1e-13)
    for v, m in got:
        assert v == pytest.approx(float(hist_reduced(P, d, eps, m[None, :])[0]), rel=1e-9, abs=1e-13)


def zipf_doc(k, eps=1.0, s=1.1):
    P = np.arange(1, k + 1) ** -s
    return {"k": k, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": eps}],
            "objective": {"kind": "histogram_mse", "prior": (P / P.sum()).tolist()}}


@pytest.mark.parametrize("k,eps,prior", [(10, 1.0, "zipf"), (11, 0.7, "dirichlet"), (12, 2.0, "dirichlet")])
def test_aggregated_start_equals_enumeration(monkeypatch, k, eps, prior):
    """The interval columns and the block-aggregated duals (made to apply at small k) reach the enumerated optimum."""
    monkeypatch.setattr(_ldp_hmse, "MIN_K", 5)
    monkeypatch.setattr(_ldp_hmse, "HEAVY", 2)
    doc = zipf_doc(k, eps)
    if prior == "dirichlet":
        doc["objective"]["prior"] = np.random.default_rng(k).dirichlet(np.ones(k)).tolist()
    enum = solve(doc, method="rays", quiet=True)
    cg = solve(doc, method="colgen", quiet=True)
    assert cg.stats["method"] == "colgen" and cg.stats["interval_columns"] > 0
    assert enum.status == cg.status == "optimal"
    assert cg.objective == pytest.approx(enum.objective, rel=1e-9)
    assert cg.bound <= enum.objective + 1e-12 and enum.bound <= cg.objective + 1e-12


def test_runs_split_where_a_column_raises_part_of_them():
    P = np.array([0.35, 0.25, 0.2, 0.12, 0.08])
    V = np.where(np.array([[0, 1], [0, 1], [1, 1], [1, 0], [1, 0]]) > 0, math.e, 1.0)
    runs = _ldp_hmse.runs_of(P, V[:, :1], heavy=0)  # ranks {0, 1} and {2, 3, 4}
    assert [r.tolist() for r in runs] == [[0, 1], [2, 3, 4]]
    assert [r.tolist() for r in _ldp_hmse.split_runs(runs, V)] == [[0, 1], [2], [3, 4]]
    Phi = _ldp_hmse.basis(P, runs)
    assert Phi.shape == (5, 5) and np.allclose(Phi.sum(axis=0), 1.0)


def test_a_search_past_its_deadline_still_bounds_the_maximum(monkeypatch):
    """Past the deadline, children keep their parent's bound: the bound returned still covers every set."""
    from mechopt.solvers.free._pricing_base import DEADLINE

    monkeypatch.setattr(_pricing_sep, "ENUMERATE_FREE", 2)
    k, eps = 10, 1.0
    sets = all_sets(k)
    for seed in range(30):
        rng = np.random.default_rng(seed)
        P = rng.dirichlet(np.full(k, 0.7))
        for scale in (1.0, 0.3):
            d = scale * float((P ** 2).sum()) * rng.normal(size=k)
            best = float(hist_reduced(P, d, eps, sets).max())
            token = DEADLINE.set(0.0)  # long past
            try:
                r = price(Staircases(np.arange(k), np.arange(k), eps), Objective("histogram_mse", P), d,
                          floor=-math.inf)
            finally:
                DEADLINE.reset(token)
            assert r.upper >= best - 1e-12 * max(1.0, abs(best))
