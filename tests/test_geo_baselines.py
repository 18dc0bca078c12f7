"""Location baselines on latitude/longitude places and from the CLI (mechopt.geo, ``mechopt baselines``)."""

import json
import math
import time
from pathlib import Path

import numpy as np
import pytest

from mechopt import MetricLDP, verify
from mechopt.cli import main
from mechopt.geo import Places, bayesian_remap, exact_baseline, exponential_mechanism, planar_laplace

PROBLEMS = Path(__file__).resolve().parent.parent / "problems"
R_KM = 6371.0088


def _haversine(a, b) -> float:
    """Great-circle km between two (lat, lon) in degrees, written out pair by pair."""
    (p1, l1), (p2, l2) = (map(math.radians, a), map(math.radians, b))
    h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin((l2 - l1) / 2) ** 2
    return 2 * R_KM * math.asin(math.sqrt(h))


def _city(n=30, box_km=5.0, lat0=48.8566, lon0=2.3522, seed=7) -> Places:
    rng = np.random.default_rng(seed)
    dlat = box_km / 2 / 111.195
    dlon = dlat / math.cos(math.radians(lat0))
    ll = np.column_stack([lat0 + rng.uniform(-dlat, dlat, n), lon0 + rng.uniform(-dlon, dlon, n)])
    return Places.from_xy(ll, kind="latlon")


def _haversine_matrix(pl: Places) -> np.ndarray:
    k = pl.k
    return np.array([[_haversine(pl.coords[i], pl.coords[j]) for j in range(k)] for i in range(k)])


def test_projection_distorts_city_distances_little():
    pl = _city(40, box_km=10.0, lat0=60.0)
    P = pl.plane()
    Dp = np.hypot(*(P[:, None, :] - P[None, :, :]).transpose(2, 0, 1))
    Dh = _haversine_matrix(pl)
    off = ~np.eye(pl.k, dtype=bool)
    assert np.max(np.abs(Dp[off] / Dh[off] - 1)) < 2e-3


def test_latlon_baselines_verify_under_haversine():
    pl = _city()
    eps = 2.0
    D = _haversine_matrix(pl)
    notion = MetricLDP(eps, distance=D.tolist()).bind(list(pl.labels))
    lap = planar_laplace(pl, eps)
    assert np.allclose(lap.sum(axis=1), 1.0)
    Ql, _ = exact_baseline(lap, [notion])
    Qe, _ = exact_baseline(exponential_mechanism(D, eps), [notion])
    prior = np.random.default_rng(3).dirichlet(np.ones(pl.k))
    for Q in (Ql, Qe, bayesian_remap(Ql, prior, D), bayesian_remap(Qe, prior, D)):
        assert verify(Q, [notion]).verified
    # the planar Laplace concentrates on the true place's cell far more than on a distant one
    far = np.argmax(D, axis=1)
    assert np.all(np.diag(lap) > lap[np.arange(pl.k), far])


def test_exponential_mechanism_two_places_is_randomized_response():
    a, b = (48.85, 2.35), (48.86, 2.37)
    d = _haversine(a, b)
    pl = Places.from_xy([a, b], kind="latlon")
    eps = 1.5
    Q = exponential_mechanism(pl.distances("haversine"), eps)
    p = math.exp(eps * d / 2) / (1 + math.exp(eps * d / 2))   # randomized response at budget ε d / 2
    assert np.allclose(Q, [[p, 1 - p], [1 - p, p]], rtol=1e-12)


def test_planar_laplace_two_places_matches_half_plane_integral():
    """Two places d apart: the report stays home with probability P(X <= d/2) of the
    Laplace's marginal, density ``(ε²/π) |x| K1(ε|x|)`` (integrated by quadrature)."""
    from scipy.integrate import quad
    from scipy.special import k1

    eps, d = 1.0, 1.0
    tail, _ = quad(lambda x: eps ** 2 / math.pi * x * k1(eps * x), d / 2, np.inf)
    h = 0.02  # a lattice point within h/2 of the border lands in one cell: error <= h * density(d/2)
    Q = planar_laplace(Places.from_xy([[0.0, 0.0], [d, 0.0]]), eps, resolution=h)
    border = eps ** 2 / math.pi * (d / 2) * k1(eps * d / 2)
    assert Q[0, 1] == pytest.approx(tail, abs=h * border)
    assert Q[1, 0] == pytest.approx(tail, abs=h * border)


def test_default_resolution_150_places_in_seconds():
    pl = _city(150, box_km=10.0, seed=11)
    notion = MetricLDP(2.0, distance=pl.distances("haversine").tolist()).bind(list(pl.labels))
    t0 = time.perf_counter()
    Q = planar_laplace(pl, 2.0)
    elapsed = time.perf_counter() - t0
    Qx, t = exact_baseline(Q, [notion])
    assert verify(Qx, [notion]).verified and t <= 1e-6
    assert elapsed < 30  # about 1–2 s on one quiet core


def _cli_json(path, capsys) -> dict:
    assert main(["baselines", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _brute_objective(Q, prior, L) -> float:
    return sum(prior[x] * Q[x, y] * L[x, y] for x in range(len(prior)) for y in range(Q.shape[1]))


@pytest.mark.parametrize("name", ["geo_city.yaml", "geo_latlon.yaml"])
def test_cli_prints_geo_baselines(name, capsys):
    report = _cli_json(PROBLEMS / name, capsys)
    rows = {r["name"]: r for r in report["baselines"]}
    geo = ["exponential mechanism", "exponential mechanism + Bayesian remap", "planar Laplace",
           "planar Laplace + Bayesian remap"]
    for key in geo:
        assert rows[key]["privacy_ok"] is True
        # every verified channel is feasible for the problem: never better than the optimum
        assert rows[key]["objective"] >= report["optimum"] * (1 - 1e-7)
        assert rows[key]["ratio"] >= 1 - 1e-7
    # the remap never loses
    for key in ("exponential mechanism", "planar Laplace"):
        assert rows[key + " + Bayesian remap"]["objective"] <= rows[key]["objective"] + 1e-12
    assert main(["baselines", str(PROBLEMS / name)]) == 0
    text = capsys.readouterr().out
    assert all(f"ok   {key} (eps 2)" in text for key in geo)


def test_latlon_problem_objective_brute_force(capsys):
    """The exponential mechanism's row against a channel and objective built from the files."""
    import csv

    with open(PROBLEMS / "geo_latlon_places.csv") as fh:
        rows = [r for r in csv.reader(fh) if r and not r[0].startswith("#")][1:]
    coords = [(float(r[1]), float(r[2])) for r in rows]
    with open(PROBLEMS / "geo_latlon_checkins.csv") as fh:
        counts = {r[0]: float(r[1]) for r in list(csv.reader(fh))[1:]}
    prior = np.array([counts[r[0]] for r in rows])
    prior /= prior.sum()
    k = len(coords)
    D = np.array([[_haversine(coords[i], coords[j]) for j in range(k)] for i in range(k)])
    W = np.array([[math.exp(-2.0 * D[i, j] / 2) for j in range(k)] for i in range(k)])
    Q = W / W.sum(axis=1, keepdims=True)
    report = _cli_json(PROBLEMS / "geo_latlon.yaml", capsys)
    row = next(r for r in report["baselines"] if r["name"] == "exponential mechanism")
    assert row["note"] == "mixed t=0"
    assert row["objective"] == pytest.approx(_brute_objective(Q, prior, D), rel=1e-9)


def test_latlon_problem_planar_laplace_row_brute_force(capsys):
    """The planar Laplace row is the objective of ``planar_laplace(places, ε)``, summed out by hand."""
    from mechopt.geo import places_from_spec

    pl = places_from_spec({"file": "geo_latlon_places.csv"}, PROBLEMS)
    prior = np.array([float(v) for v in np.loadtxt(PROBLEMS / "geo_latlon_checkins.csv", delimiter=",",
                                                    skiprows=1, usecols=1)])
    prior /= prior.sum()
    Q = planar_laplace(pl, 2.0)
    report = _cli_json(PROBLEMS / "geo_latlon.yaml", capsys)
    row = next(r for r in report["baselines"] if r["name"] == "planar Laplace")
    assert row["note"] == "mixed t=0"
    assert row["objective"] == pytest.approx(_brute_objective(Q, prior, _haversine_matrix(pl)), rel=1e-9)
