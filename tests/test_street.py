"""Street networks: places from GraphML, the shortest-path metric, the synthetic city, bad files."""

from __future__ import annotations

import math
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import mechopt
from mechopt import InputError
from mechopt.cli import main
from mechopt.geo import Places, expand_places, places_from_spec, synthetic_city

PROBLEMS = Path(__file__).resolve().parent.parent / "problems"


def _nx_distances(G: nx.Graph, weight: str = "length") -> np.ndarray:
    nodes = list(G.nodes)
    D = np.zeros((len(nodes), len(nodes)))
    for i, u in enumerate(nodes):
        d = nx.single_source_dijkstra_path_length(G, u, weight=weight)
        for j, v in enumerate(nodes):
            D[i, j] = d[v]
    return D


@st.composite
def connected_graphs(draw):
    n = draw(st.integers(2, 9))
    G = nx.Graph()
    G.add_nodes_from(f"v{i}" for i in range(n))
    for i in range(1, n):  # a random spanning tree, then random extra edges
        j = draw(st.integers(0, i - 1))
        G.add_edge(f"v{i}", f"v{j}", length=draw(st.floats(0.0, 10.0)))
    for _ in range(draw(st.integers(0, 2 * n))):
        a, b = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        if a != b:
            G.add_edge(f"v{a}", f"v{b}", length=draw(st.floats(0.0, 10.0)))
    return G


@settings(max_examples=40, deadline=None)
@given(connected_graphs())
def test_network_distance_is_networkx_shortest_path(G):
    D = Places.from_graph(G).distances("network")
    assert np.allclose(D, _nx_distances(G), rtol=1e-12, atol=0)


def test_directed_and_parallel_segments_count_once_at_their_shortest():
    G = nx.MultiDiGraph()
    G.add_edge("a", "b", length=3.0)
    G.add_edge("b", "a", length=2.0)
    G.add_edge("b", "c", length=1.0)
    G.add_edge("b", "c", length=4.0)
    p = Places.from_graph(G)
    assert p.network == ((0, 1, 2.0), (1, 2, 1.0))
    assert p.distances("network")[0, 2] == 3.0
    assert p.kind == "graph"  # no coordinates: only the network distance
    with pytest.raises(InputError, match="coordinates"):
        p.distances("euclidean")


def _all_pairs_lp(D: np.ndarray, eps: float, cost: np.ndarray) -> float:
    """The labeled metric LP with a row for every ordered pair and output (scipy/HiGHS, no mechopt)."""
    k, m = cost.shape
    rows, cols, vals = [], [], []
    r = 0
    for a in range(k):
        for b in range(k):
            if a == b:
                continue
            for y in range(m):
                rows += [r, r]
                cols += [a * m + y, b * m + y]
                vals += [1.0, -math.exp(eps * D[a, b])]
                r += 1
    A_ub = sp.csr_matrix((vals, (rows, cols)), shape=(r, k * m))
    A_eq = sp.csr_matrix((np.ones(k * m), (np.repeat(np.arange(k), m), np.arange(k * m))), shape=(k, k * m))
    res = linprog(cost.ravel(), A_ub=A_ub, b_ub=np.zeros(r), A_eq=A_eq, b_eq=np.ones(k), method="highs")
    assert res.status == 0
    return float(res.fun)


@pytest.mark.parametrize("seed", [3, 11])
def test_edges_only_gives_the_all_pairs_optimum(tmp_path, seed):
    G = synthetic_city(12, seed=seed)
    nx.write_graphml(G, tmp_path / "c.graphml")
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 50, size=12)
    eps = 3.0
    doc = {"places": {"graphml": str(tmp_path / "c.graphml")},
           "privacy": [{"notion": "metric", "epsilon": eps, "distance": "network"}],
           "objective": {"kind": "expected_loss", "loss": "network",
                         "prior": {lab: int(c) for lab, c in zip(G.nodes, counts)}}}
    plain = expand_places(doc)
    assert "edges" in plain["privacy"][0] and "distance" not in plain["privacy"][0]
    assert len(plain["privacy"][0]["edges"]) == G.number_of_edges() < 12 * 11 / 2
    r = mechopt.solve(doc, quiet=True)
    assert r.status == "optimal" and r.certificate.verified
    D = _nx_distances(G)
    prior = counts / counts.sum()
    ref = _all_pairs_lp(D, eps, prior[:, None] * D)
    assert abs(r.objective - ref) <= 1e-7 * ref
    # the exported channel is eps*d-private on every pair of places, not only on the edges
    Q = r.mechanism.matrix
    with np.errstate(divide="ignore"):
        ratio = np.log(Q[:, None, :]) - np.log(Q[None, :, :])
    off = ~np.eye(12, dtype=bool)
    assert np.all(np.nan_to_num(ratio, nan=0.0, neginf=0.0)[off] <= eps * D[off][:, None] + 1e-9)


def test_graphml_round_trip(tmp_path):
    G = synthetic_city(80, seed=5)
    nx.write_graphml(G, tmp_path / "c.graphml")
    a, b = Places.from_graph(G), Places.from_graph(tmp_path / "c.graphml")
    assert a.labels == b.labels and a.network == b.network
    assert np.array_equal(a.coords, b.coords)
    assert np.array_equal(a.distances("network"), b.distances("network"))
    assert places_from_spec({"graphml": "c.graphml", "weight": "length"}, tmp_path).network == a.network


def test_synthetic_city_is_reproducible_connected_and_measured():
    G = synthetic_city(1200, seed=4)
    assert G.number_of_nodes() == 1200 and nx.is_connected(G)
    assert nx.utils.graphs_equal(G, synthetic_city(1200, seed=4))
    assert not nx.utils.graphs_equal(G, synthetic_city(1200, seed=5))
    for u, v, w in G.edges(data="length"):
        x = np.array([G.nodes[u]["x"], G.nodes[u]["y"]]) - np.array([G.nodes[v]["x"], G.nodes[v]["y"]])
        assert abs(w - math.hypot(*x)) <= 1e-6
    # streets, not a full grid: a 35-column grid of 1 200 nodes has 2 330 streets; about 12 % of them are
    # removed, and diagonal avenues (index steps of 34 or 36) are added
    idx = {v: int(v[1:]) for v in G.nodes}
    steps = [abs(idx[u] - idx[v]) for u, v in G.edges]
    assert sum(s in (34, 36) for s in steps) >= 20
    assert 0.8 * 2330 < G.number_of_edges() < 2330
    assert min(d for _, d in G.degree) >= 1


def test_network_loss_and_its_square():
    p = Places.from_graph(synthetic_city(20, seed=1))
    D = p.distances("network")
    assert np.array_equal(p.loss("network"), D)
    assert np.array_equal(p.loss("squared_network"), D**2)
    assert np.all(D >= p.distances("euclidean") - 1e-5)  # streets are never shorter than the straight line


def test_bundled_street_example_solves_optimally():
    r = mechopt.solve(str(PROBLEMS / "geo_streets.yaml"), quiet=True)
    assert r.status == "optimal" and r.certificate.verified
    assert r.mechanism.notions[0].edges is not None


def _write(tmp_path, body: str) -> Path:
    g = tmp_path / "bad.graphml"
    g.write_text('<?xml version="1.0"?><graphml xmlns="http://graphml.graphdrawing.org/xmlns">'
                 '<key id="w" for="edge" attr.name="length" attr.type="string"/>'
                 f'<graph edgedefault="undirected">{body}</graph></graphml>')
    prob = tmp_path / "p.yaml"
    prob.write_text("places: {graphml: bad.graphml, weight: length}\n"
                    "privacy: [{notion: metric, epsilon: 1.0, distance: network}]\n"
                    "objective: {kind: expected_loss, loss: network}\n")
    return prob


@pytest.mark.parametrize("body, words", [
    ('<node id="a"/><node id="b"/><edge source="a" target="b"/>', "places.weight: edge ('a', 'b') has no 'length'"),
    ('<node id="a"/><node id="b"/><edge source="a" target="b"><data key="w">far</data></edge>',
     "places.weight: edge ('a', 'b') has length 'far', not a number"),
    ('<node id="a"/><node id="b"/><edge source="a" target="b"><data key="w">-1</data></edge>',
     "places.weight: edge ('a', 'b') has length '-1'"),
    ('<node id="a"/><node id="b"/><node id="c"/><edge source="a" target="b"><data key="w">1</data></edge>',
     "places.graphml: the graph is not connected: 2 pieces"),
    ('<node id="a"', "places.graphml: "),
])
def test_bad_street_files_are_one_line_exit_2(tmp_path, capsys, body, words):
    prob = _write(tmp_path, body)
    assert main(["solve", str(prob), "-o", str(tmp_path / "m.json"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err


def test_missing_file_and_misplaced_weight(tmp_path):
    with pytest.raises(InputError, match="places.graphml: file .* does not exist"):
        places_from_spec({"graphml": "nowhere.graphml"}, tmp_path)
    with pytest.raises(InputError, match="places.weight"):
        places_from_spec({"grid": [2, 2], "weight": "length"})
    with pytest.raises(InputError, match="network distances need places given as a street graph"):
        Places.grid(2, 2).distances("network")


@settings(max_examples=25, deadline=None)
@given(connected_graphs(), st.floats(0.1, 5.0))
def test_edges_keep_the_pairs_the_full_metric_keeps(G, eps):
    # the pruning of implied pairs from the edges alone gives what it gives from the full eps*d matrix
    from mechopt.notions import MetricLDP
    from mechopt.solvers.labeled._structure import prune_pairs
    from mechopt.solvers.metric._decompose import kept_budgets

    p = Places.from_graph(G)
    n = MetricLDP(eps, edges=[[p.labels[a], p.labels[b], w] for a, b, w in p.network]).bind(p.labels)
    none = np.full((p.k, p.k), np.inf)
    np.fill_diagonal(none, 0.0)
    kept, full = kept_budgets([n], p.k), prune_pairs(n.eldp_matrix(p.k), none)
    # the kept pairs imply every pair: their shortest paths are eps * d (networkx, not mechopt)
    H = nx.DiGraph()
    H.add_nodes_from(range(p.k))
    H.add_weighted_edges_from((a, b, kept[a, b]) for a, b in zip(*np.nonzero(np.isfinite(kept))) if a != b)
    closure = np.array([[nx.shortest_path_length(H, a, b, weight="weight") for b in range(p.k)] for a in range(p.k)])
    assert np.allclose(closure, eps * _nx_distances(G), rtol=1e-12, atol=1e-12)
    # and they are among those the full matrix keeps (fewer at times: there a pair whose pieces
    # eps*a + eps*b round one ulp above eps*(a + b), or a street of length 0, has no strictly
    # shorter pieces and stays, while the streets imply it)
    assert np.all(np.isfinite(full)[np.isfinite(kept)])


@pytest.mark.parametrize("nodes", [70, 150])
def test_edges_keep_the_pairs_the_full_metric_keeps_on_a_city(nodes):
    # above 64 places with few pairs the closure is Dijkstra's, not Floyd-Warshall's
    from mechopt.notions import MetricLDP
    from mechopt.solvers.labeled._structure import prune_pairs
    from mechopt.solvers.metric._decompose import kept_budgets

    p = Places.from_graph(synthetic_city(nodes, seed=nodes))
    n = MetricLDP(4.0, edges=[[p.labels[a], p.labels[b], w] for a, b, w in p.network]).bind(p.labels)
    none = np.full((p.k, p.k), np.inf)
    np.fill_diagonal(none, 0.0)
    kept = kept_budgets([n], p.k)
    assert np.all(np.isfinite(prune_pairs(n.eldp_matrix(p.k), none))[np.isfinite(kept)])
    assert np.count_nonzero(np.isfinite(kept)) - p.k <= 2 * len(p.network)
    H = nx.DiGraph()
    H.add_weighted_edges_from((a, b, kept[a, b]) for a, b in zip(*np.nonzero(np.isfinite(kept))) if a != b)
    closure = nx.floyd_warshall_numpy(H, nodelist=range(p.k))
    assert np.allclose(closure, n.eldp_matrix(p.k), rtol=1e-12, atol=0)


def test_points_file_labels_and_coordinates(tmp_path):
    (tmp_path / "a.csv").write_text("id,lat,lon\nhome,48.85,2.35\nwork,48.86,2.36\n")
    (tmp_path / "b.csv").write_text("x,y\n0,0\n3,4\n")
    a = places_from_spec({"file": "a.csv"}, tmp_path)
    b = places_from_spec({"file": "b.csv"}, tmp_path)
    assert a.labels == ("home", "work") and a.kind == "latlon"
    assert b.labels == ("p0", "p1") and b.distances("euclidean")[0, 1] == 5.0


def test_points_file_without_coordinates_is_one_line_exit_2(tmp_path, capsys):
    (tmp_path / "pts.csv").write_text("label,east,north\na,0,0\nb,1,1\n")
    (tmp_path / "p.yaml").write_text("places: {file: pts.csv}\nprivacy: [{notion: metric, epsilon: 1.0, "
                                     "distance: euclidean}]\nobjective: {kind: expected_loss, loss: squared}\n")
    assert main(["solve", str(tmp_path / "p.yaml"), "-o", str(tmp_path / "m.json"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mechopt: places.file: needs a header with x,y")
