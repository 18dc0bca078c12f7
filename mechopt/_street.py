"""Street networks: places at the nodes of a graph, distances along its streets.

* :func:`read_street_graph` — a GraphML file (``places: {graphml: city.graphml, weight:
  length}``) checked and turned into a :class:`StreetGraph`: node labels, optional
  ``x``/``y`` coordinates and one undirected edge per street segment (the shortest of
  parallel or one-way segments). One clear line names what is wrong with a bad file: a
  missing or non-numeric length, a negative one, a graph in several pieces.
* :func:`network_distances` — the shortest-path metric of the edges (Dijkstra).
* :func:`synthetic_city` — a reproducible street pattern (a perturbed grid of blocks, a
  few diagonal avenues, streets removed at random while the graph stays connected,
  lengths = straight-line lengths of the segments) as a networkx graph ready for
  :func:`networkx.write_graphml`.

Metric privacy on a graph needs only its edges: ``ε·d_G``-privacy on every edge implies it
on every pair, the budgets adding up along a shortest path (Chatzikokolakis, Andrés,
Bordenabe, Palamidessi, PETS 2013, "Broadening the scope of differential privacy using
metrics", §3: d_X-privacy on a graph metric), exactly as a grid's 4-neighbour edges do
for the Manhattan distance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._errors import InputError


@dataclass(frozen=True)
class StreetGraph:
    """A connected street graph: labels, coordinates (or None) and undirected edges ``(a, b, length)``."""

    labels: tuple[str, ...]
    coords: np.ndarray | None
    edges: tuple[tuple[int, int, float], ...]


def street_graph(G: Any, weight: str = "length", *, where: str = "places.graphml") -> StreetGraph:
    """Check a networkx graph and keep what a problem needs.

    Every edge needs a finite number ``>= 0`` under ``weight``; the graph must be
    connected (places in another piece would have no constraint between them). Directed
    and multi-graphs are read as undirected: the shortest segment between two nodes
    counts. Nodes keep ``x``/``y`` as coordinates when every node has both as numbers.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph()
    >>> G.add_edge("a", "b", length=2.0); G.add_edge("b", "c", length=1.5)
    >>> street_graph(G).edges
    ((0, 1, 2.0), (1, 2, 1.5))
    >>> G.add_edge("c", "d")
    >>> street_graph(G)
    Traceback (most recent call last):
    ...
    mechopt._errors.InputError: places.weight: edge ('c', 'd') has no 'length' attribute
    """
    import networkx as nx

    if G.number_of_nodes() == 0:
        raise InputError(where, "the graph has no nodes")
    from ._validation import MAX_INPUTS

    if G.number_of_nodes() > MAX_INPUTS:
        raise InputError(where, f"the graph has {G.number_of_nodes()} nodes; at most {MAX_INPUTS} places are supported")
    nodes = list(G.nodes)
    labels = tuple(str(v) for v in nodes)
    if len(set(labels)) != len(labels):
        raise InputError(where, "two nodes have the same name once written as text")
    index = {v: i for i, v in enumerate(nodes)}
    best: dict[tuple[int, int], float] = {}
    for u, v, data in G.edges(data=True):
        if weight not in data:
            raise InputError("places.weight", f"edge ({u!r}, {v!r}) has no {weight!r} attribute")
        raw = data[weight]
        try:
            w = float(raw) if not isinstance(raw, bool) else math.nan
        except (TypeError, ValueError):
            raise InputError("places.weight", f"edge ({u!r}, {v!r}) has {weight} {raw!r}, not a number") from None
        if not (math.isfinite(w) and w >= 0):
            raise InputError("places.weight", f"edge ({u!r}, {v!r}) has {weight} {raw!r}; lengths must be finite "
                                              "numbers >= 0")
        a, b = index[u], index[v]
        if a == b:
            continue  # a loop constrains nothing
        key = (min(a, b), max(a, b))
        best[key] = min(w, best.get(key, math.inf))
    if len(nodes) > 1:
        pieces = list(nx.connected_components(G.to_undirected(as_view=True)))
        if len(pieces) > 1:
            small = min(pieces, key=len)
            raise InputError(where, f"the graph is not connected: {len(pieces)} pieces (one of {len(small)} node(s), "
                                    f"e.g. {str(next(iter(small)))!r}); places in different pieces would have no "
                                    "distance between them")
    coords = None
    try:
        xy = [(float(G.nodes[v]["x"]), float(G.nodes[v]["y"])) for v in nodes]
        P = np.array(xy, dtype=float)
        if np.all(np.isfinite(P)):
            coords = P
    except (KeyError, TypeError, ValueError):
        coords = None
    edges = tuple((a, b, w) for (a, b), w in sorted(best.items()))
    return StreetGraph(labels, coords, edges)


def read_street_graph(path: str | Path, weight: str = "length") -> StreetGraph:
    """Read and check a GraphML street graph (see :func:`street_graph`)."""
    import networkx as nx

    path = Path(path)
    if not path.exists():
        raise InputError("places.graphml", f"file {str(path)!r} does not exist")
    try:
        G = nx.read_graphml(path)
    except Exception as err:  # noqa: BLE001 -- any parser failure is a bad file, said on one line
        why = " ".join(str(err).split())[:200] or type(err).__name__
        raise InputError("places.graphml", f"{str(path)!r} is not a readable GraphML file ({why})") from None
    return street_graph(G, weight)


def network_distances(k: int, edges: Any) -> np.ndarray:
    """The ``k x k`` shortest-path distances over undirected ``(a, b, length)`` edges.

    The same metric as a metric-privacy notion given by edges
    (:func:`mechopt.notions._eldp.edge_distances`).

    Examples
    --------
    >>> network_distances(3, [(0, 1, 1.0), (1, 2, 2.0), (0, 2, 5.0)]).tolist()
    [[0.0, 1.0, 3.0], [1.0, 0.0, 2.0], [3.0, 2.0, 0.0]]
    """
    from .notions._eldp import edge_distances

    return edge_distances(k, edges)


def synthetic_city(n_nodes: int, seed: int = 0, *, block: float = 0.1) -> Any:
    """A reproducible street graph of ``n_nodes`` intersections (networkx ``Graph``).

    A grid of blocks (``block`` wide on average, km; widths vary by ±30 %), every
    intersection moved by up to 20 % of a block, two diagonal avenues and one
    anti-diagonal, about 12 % of the side streets removed at random (never one whose
    removal would disconnect the graph). Nodes ``n0, n1, ...`` carry ``x``, ``y``;
    edges carry ``length``, the straight-line length of the segment.

    Examples
    --------
    >>> G = synthetic_city(60, seed=1)
    >>> G.number_of_nodes(), nx_connected(G)
    (60, True)
    >>> sorted(G.edges(data="length"))[0][:2]
    ('n0', 'n1')
    """
    import networkx as nx

    if isinstance(n_nodes, bool) or not isinstance(n_nodes, (int, np.integer)) or n_nodes < 2:
        raise InputError("n_nodes", f"must be an integer >= 2, got {n_nodes!r}")
    rng = np.random.default_rng(seed)
    cols = max(2, int(math.ceil(math.sqrt(n_nodes))))
    rows = int(math.ceil(n_nodes / cols))
    xs = np.concatenate([[0.0], np.cumsum(block * rng.uniform(0.7, 1.3, cols - 1))])
    ys = np.concatenate([[0.0], np.cumsum(block * rng.uniform(0.7, 1.3, rows - 1))])
    G = nx.Graph()
    pos = {}
    for i in range(rows):
        for j in range(cols):
            v = i * cols + j
            if v >= n_nodes:
                break
            x = xs[j] + block * rng.uniform(-0.2, 0.2)
            y = ys[i] + block * rng.uniform(-0.2, 0.2)
            pos[v] = (float(x), float(y))
            G.add_node(f"n{v}", x=round(float(x), 6), y=round(float(y), 6))

    def add(u: int, v: int, avenue: bool) -> None:
        if u in pos and v in pos:
            G.add_edge(f"n{u}", f"n{v}", avenue=avenue)

    for i in range(rows):
        for j in range(cols):
            v = i * cols + j
            if j + 1 < cols:
                add(v, v + 1, False)
            if i + 1 < rows:
                add(v, v + cols, False)
    # avenues: two diagonals and one anti-diagonal, at random offsets
    span = min(rows, cols)
    for off in rng.integers(-span // 3, span // 3 + 1, size=2):
        for i in range(rows - 1):
            j = i + int(off)
            if 0 <= j < cols - 1:
                add(i * cols + j, (i + 1) * cols + j + 1, True)
    off = int(rng.integers(cols // 3, cols - cols // 3 + 1))
    for i in range(rows - 1):
        j = off + (rows // 2) - i
        if 1 <= j < cols:
            add(i * cols + j, (i + 1) * cols + j - 1, True)
    # side streets removed at random, never disconnecting the graph
    side = sorted((u, v) for u, v, a in G.edges(data="avenue") if not a)
    order = rng.permutation(len(side))
    target = int(0.12 * len(side))
    removed = 0
    for t in order:
        if removed >= target:
            break
        u, v = side[t]
        G.remove_edge(u, v)
        if nx.has_path(G, u, v):
            removed += 1
        else:
            G.add_edge(u, v, avenue=False)
    for u, v in G.edges:
        (x1, y1), (x2, y2) = (float(G.nodes[u]["x"]), float(G.nodes[u]["y"])), (float(G.nodes[v]["x"]),
                                                                              float(G.nodes[v]["y"]))
        G.edges[u, v]["length"] = round(math.hypot(x2 - x1, y2 - y1), 6)
        del G.edges[u, v]["avenue"]
    return G


def nx_connected(G: Any) -> bool:
    """Whether a networkx graph is connected (as undirected)."""
    import networkx as nx

    return nx.is_connected(G.to_undirected(as_view=True))


def clustered_counts(coords: np.ndarray, seed: int = 0, total: int = 10_000) -> np.ndarray:
    """Check-in counts with three hotspots over ``coords`` and a 3 % uniform floor (integers, each >= 1).

    Examples
    --------
    >>> c = clustered_counts(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), seed=3, total=300)
    >>> len(c), bool(c.min() >= 1)
    (3, True)
    """
    rng = np.random.default_rng(seed)
    lo, hi = coords.min(0), coords.max(0)
    span = float((hi - lo).max()) or 1.0
    centres = lo + rng.random((3, 2)) * (hi - lo)
    sig = span * (0.06 + 0.08 * rng.random(3))
    w = rng.dirichlet(np.ones(3) * 2)
    dens = sum(w[h] * np.exp(-((coords - centres[h]) ** 2).sum(1) / (2 * sig[h] ** 2)) for h in range(3))
    p = 0.97 * dens / dens.sum() + 0.03 / len(coords)
    return np.maximum(1, np.round(total * p)).astype(int)


def write_city(directory: str | Path, n_nodes: int, seed: int = 0, *, name: str | None = None,
               epsilon: float = 2.0) -> Path:
    """Write ``NAME.graphml``, ``NAME_checkins.csv`` and ``NAME.yaml`` (a problem) into ``directory``.

    The problem: metric privacy on the streets (``distance: network``, ε per km),
    expected shortest-path distance as the loss, the check-ins as the prior. Returns the
    problem file's path.
    """
    import networkx as nx

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    name = name or f"streets_{n_nodes}"
    G = synthetic_city(n_nodes, seed)
    nx.write_graphml(G, directory / f"{name}.graphml")
    coords = np.array([(G.nodes[v]["x"], G.nodes[v]["y"]) for v in G.nodes])
    counts = clustered_counts(coords, seed)
    with open(directory / f"{name}_checkins.csv", "w") as fh:
        fh.write("label,count\n")
        for v, c in zip(G.nodes, counts):
            fh.write(f"{v},{int(c)}\n")
    problem = directory / f"{name}.yaml"
    problem.write_text(
        f"# A synthetic street network: {n_nodes} intersections (mechopt.geo.synthetic_city({n_nodes}, seed={seed})),\n"
        f"# check-ins around three hotspots, metric privacy along the streets (eps = {epsilon:g} per km),\n"
        "# expected shortest-path distance (km) as the loss.\n"
        f"places: {{graphml: {name}.graphml, weight: length}}\n"
        "privacy:\n"
        f"  - {{notion: metric, epsilon: {epsilon:g}, distance: network}}\n"
        "objective:\n"
        "  kind: expected_loss\n"
        "  loss: network\n"
        f"  prior: {{counts: {name}_checkins.csv}}\n")
    return problem
