"""The meet-in-the-middle pricing of LIP slices against full enumeration of the slice's vertices.

For histogram MSE and mutual information on a LIP slice ``{P·v = 1, e^-eps <= v <= e^eps}``
the pricer claims ``upper >= max_v (mu(v) - d·v)`` over every vertex (the maximum itself
when its search finished, or at most the floor). The vertices are listed here by main's
enumerator (``lip_slice_vertices``, k <= 10) or by a brute force over every subset
written in this file (k = 16), and the utilities computed from their textbook formulas.
Duals: the chord duals (dual feasible: every vertex prices at most 0) moved by noise of
1e-9 to 1e-3 — the regime where every vertex prices near zero — and random duals.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mechopt.objectives import Objective
from mechopt.solvers.free import _lip_mitm
from mechopt.solvers.free._lip_mitm import price_lip_mitm
from mechopt.solvers.free._pricing_base import DEADLINE, LipSlice
from mechopt.solvers.free._pricing_lip import lip_chord_duals, price_lip_separable
from mechopt.solvers.free._rays import lip_slice_vertices

KINDS = ("histogram_mse", "mutual_information")


def mu(kind, P, V):
    """Per-column utility from docs/model.md: sum_x P_x^2 v_x^2 / P·v, or sum_x P_x v_x log(v_x / P·v)."""
    py = P @ V
    if kind == "histogram_mse":
        return ((P[:, None] * V) ** 2).sum(axis=0) / py
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(P[:, None] > 0, P[:, None] * V * np.log(V / py), 0.0)
    return t.sum(axis=0)


def all_vertices(P, eps):
    """Every vertex of the slice by brute force: a set S at e^eps, one j between, the rest at e^-eps."""
    k = len(P)
    lo, hi = math.exp(-eps), math.exp(eps)
    bits = (np.arange(2 ** k)[:, None] >> np.arange(k)[None, :]) & 1
    sums = bits @ P
    cols = []
    for j in range(k):
        if P[j] <= 0:
            continue
        S = bits[bits[:, j] == 0].astype(bool)
        s = sums[bits[:, j] == 0]
        vj = (1 - lo * (1 - P[j]) - (hi - lo) * s) / P[j]
        ok = (vj >= lo - 1e-12) & (vj <= hi + 1e-12)
        V = np.where(S[ok], hi, lo)
        V[:, j] = vj[ok]
        V[:, P <= 0] = lo
        cols.append(V)
    return np.vstack(cols).T


def dual(obj, P, eps, rng, style, noise):
    if style == "chord":
        d = lip_chord_duals(LipSlice(P, eps), obj)
        return d + noise * np.abs(d).max() * rng.normal(size=len(P))
    return rng.normal(size=len(P)) * float(np.abs(mu(obj.kind, P, np.eye(len(P)) + 0.1)).max())


def check(P, eps, kind, d, V, floor, pricer=price_lip_mitm):
    obj = Objective(kind, P)
    red = mu(kind, P, V) - d @ V
    best = float(red.max())
    tol = 1e-10 * max(1.0, float(np.abs(d).sum()) * math.exp(eps))
    r = pricer(LipSlice(P, eps), obj, d, floor=floor, top=5)
    assert r.exact
    assert r.upper >= best - tol
    if best > floor + tol:
        # the maximum and its vertex: the best column is a vertex of the slice scoring it
        assert r.values[0] == pytest.approx(best, abs=tol)
        v = r.columns[:, 0]
        assert abs(P @ v - 1) < 1e-12
        assert np.all((v >= math.exp(-eps) - 1e-12) & (v <= math.exp(eps) + 1e-12))
        inner = (v > math.exp(-eps) + 1e-12) & (v < math.exp(eps) - 1e-12)
        assert inner.sum() <= 1
        assert float(mu(kind, P, v[:, None])[0] - d @ v) == pytest.approx(best, abs=tol)
        assert r.upper <= best + tol
    else:
        assert r.upper <= max(floor, best) + tol
    return r


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(2, 10), eps=st.sampled_from([0.3, 1.0, 2.0, 3.0]), kind=st.sampled_from(KINDS),
       style=st.sampled_from(["chord", "chord", "random"]), noise=st.sampled_from([1e-9, 1e-7, 1e-5, 1e-3]),
       floor=st.sampled_from([0.0, -1e-6, 1e-9]), zeros=st.integers(0, 2), seed=st.integers(0, 10 ** 6))
def test_mitm_equals_enumeration(k, eps, kind, style, noise, floor, zeros, seed):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(k))
    P[: min(zeros, k - 1)] = 0.0
    P /= P.sum()
    obj = Objective(kind, P)
    d = dual(obj, P, eps, rng, style, noise)
    check(P, eps, kind, d, lip_slice_vertices(P, eps), floor)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("eps,noise", [(1.0, 1e-8), (1.0, 1e-4), (2.0, 1e-7), (3.0, 1e-6)])
def test_mitm_at_k16_near_the_chord(kind, eps, noise):
    """k = 16: 2^15 sets per fractional input, most within a hair of the chord."""
    rng = np.random.default_rng(int(eps * 10) + (kind == "histogram_mse"))
    P = rng.dirichlet(np.ones(16))
    obj = Objective(kind, P)
    d = dual(obj, P, eps, rng, "chord", noise)
    V = all_vertices(P, eps)
    for floor in (0.0, -1e-7):
        check(P, eps, kind, d, V, floor)
    # the dispatcher (branch and bound, then the meet in the middle) agrees
    check(P, eps, kind, d, V, 0.0, price_lip_separable)


def test_bands_and_runs_both_searched(monkeypatch):
    """Near the chord the bands carry the search; with random duals the runs do; both exact."""
    calls = {"bands": 0, "runs": 0}
    for name in calls:
        orig = getattr(_lip_mitm._Search, name)

        def spy(self, *a, _orig=orig, _name=name):
            calls[_name] += 1
            return _orig(self, *a)

        monkeypatch.setattr(_lip_mitm._Search, name, spy)
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(12))
    V = lip_slice_vertices(P, 1.0)
    for style, noise in (("chord", 1e-8), ("random", 0.0)):
        before = dict(calls)
        check(P, 1.0, "mutual_information", dual(Objective("mutual_information", P), P, 1.0, rng, style, noise),
              V, 0.0)
        assert calls["bands" if style == "chord" else "runs"] > before["bands" if style == "chord" else "runs"]


@pytest.mark.parametrize("kind", KINDS)
def test_stopped_search_still_bounds(kind):
    """Past the deadline the pricer stops at once; its bound still covers every vertex."""
    rng = np.random.default_rng(9)
    P = rng.dirichlet(np.ones(10))
    obj = Objective(kind, P)
    V = lip_slice_vertices(P, 1.0)
    for style in ("chord", "random"):
        d = dual(obj, P, 1.0, rng, style, 1e-6)
        best = float((mu(kind, P, V) - d @ V).max())
        token = DEADLINE.set(0.0)
        try:
            r = price_lip_mitm(LipSlice(P, 1.0), obj, d, top=3)
        finally:
            DEADLINE.reset(token)
        assert not r.exact
        assert r.upper >= best - 1e-12


def test_too_many_sets_falls_back():
    """Lists past the limit: the meet in the middle declines (None) and the branch and bound prices."""
    P = np.full(40, 1 / 40)
    obj = Objective("histogram_mse", P)
    old = _lip_mitm.MITM_MAX_SETS
    try:
        _lip_mitm.MITM_MAX_SETS = 100
        assert price_lip_mitm(LipSlice(P, 1.0), obj, np.zeros(40)) is None
    finally:
        _lip_mitm.MITM_MAX_SETS = old


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("k,eps", [(24, 1.0), (40, 2.0)])
def test_near_chord_lists_are_vertices_within_target(kind, k, eps, monkeypatch):
    """The list-based near-chord columns: slice vertices, each at most ``target`` under the chords."""
    from mechopt.solvers.free import _pricing_lip

    used = []
    orig = _pricing_lip.near_chord_lists
    monkeypatch.setattr(_pricing_lip, "near_chord_lists", lambda *a: used.append(orig(*a)) or used[-1])
    rng = np.random.default_rng(k)
    P = rng.dirichlet(np.ones(k))
    lo, hi = math.exp(-eps), math.exp(eps)
    target = 1e-7
    V = _pricing_lip.near_chord_vertices(LipSlice(P, eps), Objective(kind, P), target, 60, np.random.default_rng(1))
    assert used and used[0] is not None  # the lists fit: they found the columns
    assert 0 < V.shape[1] <= 60
    assert np.all(np.abs(P @ V - 1.0) <= 1e-12)
    assert np.all((V >= lo - 1e-15) & (V <= hi + 1e-15))
    assert np.all(((V > lo + 1e-12) & (V < hi - 1e-12)).sum(axis=0) <= 1)
    phi = (lambda t: (P[:, None] * t) ** 2) if kind == "histogram_mse" else (lambda t: P[:, None] * t * np.log(t))
    flo, fhi = phi(np.full((k, 1), lo)), phi(np.full((k, 1), hi))
    shortfall = (flo + (fhi - flo) * (V - lo) / (hi - lo) - phi(V)).sum(axis=0)
    assert np.all((shortfall >= -1e-15) & (shortfall <= target + 1e-15))
