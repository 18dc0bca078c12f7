"""Location privacy without hand-written matrices: places, distances, priors, baselines, maps.

* :class:`Places` — places given as a grid, planar ``x, y``, latitude/longitude or the
  nodes of a street graph (GraphML, :mod:`mechopt._street`); they give distances
  (``euclidean``, ``manhattan``, ``haversine`` in km, ``network`` = shortest path along
  the streets), the edges of a grid or a street graph (the distance is the shortest path
  over them, so metric privacy needs only those edges) and losses (the distances,
  ``squared`` = squared Euclidean, ``squared_network``, ``hamming``).
* :func:`synthetic_city` — a reproducible street graph (perturbed blocks, avenues).
* :func:`prior_from_counts` — a prior from check-in counts (a CSV ``label,count`` or a
  mapping).
* :func:`expand_places` — the ``places:`` section of a problem file (SPEC §5
  extension), turned into ordinary ``inputs``, ``distance``/``edges`` and loss matrices,
  so old problem files load unchanged.
* Baselines (defined in :mod:`mechopt._geo_baselines`, also on latitude/longitude places
  through :meth:`Places.plane`; ``mechopt baselines`` scores them), each exported only
  after the exact verifier (:func:`mechopt.verify`) passes:
  :func:`exponential_mechanism` (McSherry & Talwar; score ``-d`` at ε/2),
  :func:`planar_laplace` (Andrés, Bordenabe, Chatzikokolakis, Palamidessi, CCS 2013,
  discretised to the places' Voronoi cells) and :func:`bayesian_remap`
  (Chatzikokolakis, ElSalamouny, Palamidessi, PETS 2017: each report is replaced by the
  place minimising the posterior expected loss — post-processing, so privacy is kept).
* Spanner mode: :func:`spanner` (Bordenabe, Chatzikokolakis, Palamidessi, CCS 2014,
  §4): a graph whose shortest paths are at most δ times the distances; metric privacy
  with budget ε/δ on its edges is exactly ε·d-private.
* Maps (matplotlib, Agg): :func:`plot_reporting` and :func:`plot_expected_error`.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ._errors import InputError
from .notions import MetricLDP
from ._validation import check_epsilon, check_finite
from ._street import network_distances, read_street_graph, synthetic_city  # noqa: F401
from ._geo_baselines import (bayesian_remap, exact_baseline, exponential_mechanism, geo_baselines,  # noqa: F401
                             planar_laplace)

EARTH_RADIUS_KM = 6371.0088
DISTANCES = ("euclidean", "manhattan", "haversine", "network")
LOSSES = ("euclidean", "squared", "squared_euclidean", "manhattan", "haversine", "hamming", "network",
          "squared_network")


@dataclass(frozen=True)
class Places:
    """Named points: planar ``(x, y)`` or ``(lat, lon)`` in degrees; ``network``: street edges ``(a, b, length)``.

    Places from a street graph without node coordinates have ``kind="graph"`` (only the
    ``network`` distance).

    Examples
    --------
    >>> g = Places.grid(2, 3)
    >>> g.labels
    ('r0c0', 'r0c1', 'r0c2', 'r1c0', 'r1c1', 'r1c2')
    >>> float(g.distances("manhattan")[0, 5])
    3.0
    >>> len(g.grid_edges())
    7
    """

    labels: tuple[str, ...]
    coords: np.ndarray  # (k, 2)
    kind: str = "xy"  # "xy" | "latlon"
    shape: tuple[int, int] | None = None  # (rows, cols) for a grid
    spacing: float = 1.0
    network: tuple | None = None  # undirected street edges (a, b, length) of a connected graph

    @classmethod
    def grid(cls, rows: int, cols: int, spacing: float = 1.0) -> "Places":
        """A ``rows x cols`` grid; place ``r{i}c{j}`` sits at ``(j * spacing, i * spacing)``."""
        for name, v in (("rows", rows), ("cols", cols)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InputError(f"places.grid.{name}", f"must be a positive integer, got {v!r}")
        if not (isinstance(spacing, (int, float)) and not isinstance(spacing, bool) and math.isfinite(spacing)
                and spacing > 0):
            raise InputError("places.spacing", f"must be a positive number, got {spacing!r}")
        from ._validation import MAX_INPUTS  # checked before the labels are built (a 10**30-row grid hung)

        if rows * cols > MAX_INPUTS:
            raise InputError("places.grid", f"a {rows} x {cols} grid has {rows * cols} places; at most {MAX_INPUTS} "
                                            "inputs are supported")
        labels = tuple(f"r{i}c{j}" for i in range(rows) for j in range(cols))
        xy = np.array([(j * spacing, i * spacing) for i in range(rows) for j in range(cols)], dtype=float)
        return cls(labels, xy, "xy", (int(rows), int(cols)), float(spacing))

    @classmethod
    def from_xy(cls, xy: Any, labels: Sequence[str] | None = None, *, kind: str = "xy") -> "Places":
        field = "places.latlon" if kind == "latlon" else "places.xy"
        try:
            P = np.asarray(xy, dtype=float)
        except (TypeError, ValueError):
            raise InputError(field, "must be a list of [x, y] pairs of numbers") from None
        if P.ndim != 2 or P.shape[1] != 2 or len(P) == 0:
            raise InputError(field, f"must be a non-empty list of [x, y] pairs, got shape {P.shape}")
        if not np.all(np.isfinite(P)):
            raise InputError(field, "coordinates must be finite")
        if kind == "latlon" and (np.any(np.abs(P[:, 0]) > 90) or np.any(np.abs(P[:, 1]) > 180)):
            raise InputError(field, "latitude must be in [-90, 90] and longitude in [-180, 180] (degrees)")
        if labels is None:
            labels = tuple(f"p{i}" for i in range(len(P)))
        if isinstance(labels, (str, bytes, dict)) or not isinstance(labels, (list, tuple)):
            raise InputError("places.labels", f"must be a list of labels, one per place, got {labels!r}")
        labels = tuple(str(v) for v in labels)
        if len(labels) != len(P):
            raise InputError("places.labels", f"must have one label per place ({len(P)}), got {len(labels)}")
        if len(set(labels)) != len(labels):
            raise InputError("places.labels", "labels must be unique")
        return cls(labels, P, kind)

    @classmethod
    def from_graph(cls, graph: Any, weight: str = "length") -> "Places":
        """The nodes of a street graph: a GraphML file name or a networkx graph (:mod:`mechopt._street`).

        Examples
        --------
        >>> p = Places.from_graph(synthetic_city(30, seed=2))
        >>> p.k, p.kind, float(p.distances("network")[0, 1]) == p.network[0][2]
        (30, 'xy', True)
        """
        from ._street import street_graph

        g = read_street_graph(graph, weight) if isinstance(graph, (str, Path)) else street_graph(graph, weight)
        if g.coords is None:
            return cls(g.labels, np.zeros((len(g.labels), 2)), "graph", network=g.edges)
        return cls(g.labels, g.coords, "xy", network=g.edges)

    @property
    def k(self) -> int:
        return len(self.labels)

    def distances(self, kind: str = "euclidean") -> np.ndarray:
        """The k x k distance matrix (``haversine``: great-circle km; needs latitude/longitude)."""
        if kind not in DISTANCES:
            raise InputError("distance", f"unknown distance {kind!r}; expected one of {list(DISTANCES)}")
        if kind == "network":
            if self.network is None:
                raise InputError("distance", "network distances need places given as a street graph (graphml)")
            return network_distances(self.k, self.network)
        if self.kind == "graph":
            raise InputError("distance", f"{kind!r} needs node coordinates (x, y); this graph has none: use network")
        if kind == "haversine":
            if self.kind != "latlon":
                raise InputError("distance", "haversine needs places given as latlon")
            lat, lon = np.radians(self.coords[:, 0]), np.radians(self.coords[:, 1])
            dlat = lat[:, None] - lat[None, :]
            dlon = lon[:, None] - lon[None, :]
            h = np.sin(dlat / 2) ** 2 + np.cos(lat)[:, None] * np.cos(lat)[None, :] * np.sin(dlon / 2) ** 2
            D = 2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))
        else:
            if self.kind == "latlon":
                raise InputError("distance", f"{kind!r} needs planar places (xy or grid); use haversine for latlon")
            with np.errstate(over="ignore"):
                diff = self.coords[:, None, :] - self.coords[None, :, :]
                D = np.abs(diff).sum(axis=-1) if kind == "manhattan" else np.hypot(diff[..., 0], diff[..., 1])
            if not np.all(np.isfinite(D)):  # refused rather than read as "infinitely far: no constraint"
                raise InputError("places", "two places are so far apart that their distance overflows a float "
                                           "(about 1.8e308); rescale the coordinates")
        np.fill_diagonal(D, 0.0)
        return D

    def plane(self) -> np.ndarray:
        """Planar coordinates: ``(x, y)`` as given, or latitude/longitude projected in km.

        The projection is equirectangular around the places' centroid ``(φ0, λ0)``:
        ``x = R cos φ0 (λ - λ0)``, ``y = R (φ - φ0)`` (``R`` = :data:`EARTH_RADIUS_KM`;
        longitudes unwrapped around λ0). Over a city (10 km across, |φ0| <= 60°) planar and
        great-circle distances differ by less than about 0.2 %; callers that promise privacy
        under haversine distances rescale by the worst ratio (:func:`planar_laplace`).

        Examples
        --------
        >>> p = Places.from_xy([[0.0, 0.0], [0.0, 1.0]], kind="latlon").plane()
        >>> round(float(p[1, 0] - p[0, 0]), 3)   # one degree of longitude on the equator, km
        111.195
        """
        if self.kind != "latlon":
            return np.asarray(self.coords, dtype=float)
        lat = np.radians(self.coords[:, 0])
        lon = np.radians(self.coords[:, 1])
        lon0 = math.atan2(float(np.mean(np.sin(lon))), float(np.mean(np.cos(lon))))
        dlon = (lon - lon0 + math.pi) % (2 * math.pi) - math.pi
        lat0 = float(np.mean(lat))
        return np.column_stack([EARTH_RADIUS_KM * math.cos(lat0) * dlon, EARTH_RADIUS_KM * (lat - lat0)])

    def grid_edges(self) -> list[tuple[int, int, float]]:
        """The 4-neighbour edges of a grid, length ``spacing`` (shortest paths = Manhattan)."""
        if self.shape is None:
            raise InputError("edges", "grid edges need places given as a grid")
        rows, cols = self.shape
        out = []
        for i in range(rows):
            for j in range(cols):
                x = i * cols + j
                if j + 1 < cols:
                    out.append((x, x + 1, self.spacing))
                if i + 1 < rows:
                    out.append((x, x + cols, self.spacing))
        return out

    def loss_unit(self, kind: str = "squared") -> str:
        """The unit of :meth:`loss` for people: km or km² between latitude/longitude places.

        Examples
        --------
        >>> Places.from_xy([[48.85, 2.35], [48.86, 2.36]], kind="latlon").loss_unit("squared")
        'km²'
        >>> Places.grid(2, 2).loss_unit("manhattan")
        'units of the coordinates'
        """
        if kind == "hamming":
            return "probability of a wrong report"
        squared = kind in ("squared", "squared_euclidean")
        if self.kind == "latlon":
            return "km²" if squared else "km"
        return "squared units of the coordinates" if squared else "units of the coordinates"

    def loss(self, kind: str = "squared") -> np.ndarray:
        """A k x k loss between true and reported place."""
        if kind not in LOSSES:
            raise InputError("objective.loss", f"unknown loss {kind!r} for places; expected one of {list(LOSSES)} "
                             "or a matrix")
        if kind == "hamming":
            return 1.0 - np.eye(self.k)
        if kind == "squared_network":
            return self.distances("network") ** 2
        if kind in ("squared", "squared_euclidean"):
            with np.errstate(over="ignore"):
                L = self.distances("haversine" if self.kind == "latlon" else "euclidean") ** 2
            if not np.all(np.isfinite(L)):
                raise InputError("objective.loss", "the squared distance between two places overflows a float "
                                                   "(about 1.8e308); rescale the coordinates")
            return L
        return self.distances(kind)


def prior_from_counts(counts: Any, places: Places, *, where: str = "objective.prior.counts") -> np.ndarray:
    """A prior proportional to check-in counts: a CSV file ``label,count`` or a mapping.

    Places missing from the counts get 0; a label that is not a place is an error.

    Examples
    --------
    >>> prior_from_counts({"r0c0": 3, "r0c1": 1}, Places.grid(1, 2)).tolist()
    [0.75, 0.25]
    """
    if isinstance(counts, (str, Path)):
        path = Path(counts)
        if not path.exists():
            raise InputError(where, f"file {str(path)!r} does not exist")
        rows: dict[str, float] = {}
        with open(path, newline="") as fh:
            for i, row in enumerate(csv.reader(fh)):
                if not row or row[0].strip().startswith("#"):
                    continue
                if len(row) < 2:
                    raise InputError(f"{where}:{i + 1}", f"must be 'label,count', got {row!r}")
                try:
                    v = float(row[1])
                except ValueError:
                    if i == 0:
                        continue  # a header line
                    raise InputError(f"{where}:{i + 1}", f"count must be a number, got {row[1]!r}") from None
                rows[row[0].strip()] = rows.get(row[0].strip(), 0.0) + v
        counts = rows
    if not isinstance(counts, dict):
        raise InputError(where, f"must be a CSV file name or a mapping label -> count, got {counts!r}")
    idx = {lab: i for i, lab in enumerate(places.labels)}
    out = np.zeros(places.k)
    for lab, v in counts.items():
        if str(lab) not in idx:
            raise InputError(where, f"{lab!r} is not a place label")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise InputError(where, f"count of {lab!r} must be a number >= 0, got {v!r}")
        out[idx[str(lab)]] += v
    total = out.sum()
    if total <= 0:
        raise InputError(where, "counts must not all be zero")
    return out / total


# -- the problem-file section -----------------------------------------------------


def places_from_spec(spec: Any, base: Path | None = None) -> Places:
    """``places: {grid: [rows, cols], spacing: s}`` | ``{xy: [[x, y], ...]}`` | ``{latlon: ...}``
    (optional ``labels``) | ``{file: places.csv}`` (columns ``x,y`` or ``lat,lon`` with a header
    naming them, and a ``label``, ``name`` or ``id`` column, else labels ``p0, p1, ...``) | ``{graphml: streets.graphml, weight: length}`` (a street
    graph; ``weight`` names the edge length attribute, default ``length``)."""
    if not isinstance(spec, dict):
        raise InputError("places", f"must be a mapping (grid, xy, latlon or file), got {spec!r}")
    allowed = {"grid", "spacing", "xy", "latlon", "labels", "file", "graphml", "weight"}
    extra = sorted(set(spec) - allowed)
    if extra:
        raise InputError(f"places.{extra[0]}", f"is not a places field (fields: {sorted(allowed)})")
    given = [key for key in ("grid", "xy", "latlon", "file", "graphml") if key in spec]
    if len(given) != 1:
        raise InputError("places", "give exactly one of 'grid', 'xy', 'latlon', 'file' or 'graphml'")
    if "weight" in spec and "graphml" not in spec:
        raise InputError("places.weight", "is the edge length attribute of a 'graphml' street graph")
    if "graphml" in spec:
        weight = spec.get("weight", "length")
        if not isinstance(weight, str) or not weight:
            raise InputError("places.weight", f"must be the name of an edge attribute, got {weight!r}")
        if not isinstance(spec["graphml"], str):
            raise InputError("places.graphml", f"must be a file name, got {spec['graphml']!r}")
        path = Path(spec["graphml"])
        return Places.from_graph(base / path if base is not None and not path.is_absolute() else path, weight)
    if "grid" in spec:
        g = spec["grid"]
        if not isinstance(g, (list, tuple)) or len(g) != 2:
            raise InputError("places.grid", f"must be [rows, cols], got {g!r}")
        return Places.grid(g[0], g[1], spec.get("spacing", 1.0))
    if "file" in spec:
        path = Path(spec["file"])
        if base is not None and not path.is_absolute():
            path = base / path
        if not path.exists():
            raise InputError("places.file", f"file {str(path)!r} does not exist")
        with open(path, newline="") as fh:
            rows = [r for r in csv.reader(fh) if r and not r[0].strip().startswith("#")]
        if not rows:
            raise InputError("places.file", "is empty")
        head = [h.strip().lower() for h in rows[0]]
        kind = "latlon" if "lat" in head else "xy"
        cols = ("lat", "lon") if kind == "latlon" else ("x", "y")
        name = next((h for h in ("label", "name", "id") if h in head), None)
        if any(c not in head for c in cols):
            raise InputError("places.file", f"needs a header with {cols[0]},{cols[1]} (and a label, name or id "
                                            f"column), got {rows[0]!r}")
        i0, i1 = head.index(cols[0]), head.index(cols[1])
        try:
            pts = [(float(r[i0]), float(r[i1])) for r in rows[1:]]
        except (ValueError, IndexError):
            raise InputError("places.file", "every row needs numeric coordinates") from None
        labels = None if name is None else [r[head.index(name)].strip() if head.index(name) < len(r) else ""
                                            for r in rows[1:]]
        return Places.from_xy(pts, labels, kind=kind)  # no label column: p0, p1, ... in file order
    kind = "latlon" if "latlon" in spec else "xy"
    return Places.from_xy(spec[kind], spec.get("labels"), kind=kind)


def expand_places(doc: dict, base: Path | None = None) -> dict:
    """Rewrite a problem document with a ``places:`` section into the plain form.

    ``inputs`` become the place labels; a ``metric`` notion may say
    ``distance: euclidean | manhattan | haversine | network`` (or ``edges: grid``; on a
    grid ``manhattan`` becomes the grid's edges, on a street graph ``network`` becomes the
    graph's edges), or ``spanner: delta`` (with a distance
    name) for spanner mode; ``objective.loss`` may name a distance or ``squared``, and
    ``objective.prior`` may be ``{counts: FILE.csv}`` or a mapping label -> count.
    """
    places = places_from_spec(doc["places"], base)
    out = {key: v for key, v in doc.items() if key != "places"}
    if "inputs" in doc or "k" in doc:
        raise InputError("inputs", "give either 'places' or 'inputs'/'k', not both")
    out["inputs"] = list(places.labels)
    privacy = doc.get("privacy")
    if isinstance(privacy, dict):
        privacy = [privacy]
    if isinstance(privacy, list):
        new = []
        for i, p in enumerate(privacy):
            if isinstance(p, dict) and p.get("notion") == MetricLDP.name:
                p = _metric_entry(p, places, f"privacy[{i}]")
            new.append(p)
        out["privacy"] = new
    obj = doc.get("objective")
    if isinstance(obj, dict):
        obj = dict(obj)
        if isinstance(obj.get("loss"), str) and obj["loss"] in LOSSES and obj["loss"] != "hamming":
            obj.setdefault("unit", places.loss_unit(obj["loss"]))
            obj["loss"] = places.loss(obj["loss"]).tolist()
        pr = obj.get("prior")
        if isinstance(pr, dict):
            if set(pr) == {"counts"}:
                src = pr["counts"]
                if isinstance(src, str) and base is not None and not Path(src).is_absolute():
                    src = str(base / src)
                obj["prior"] = prior_from_counts(src, places).tolist()
            else:
                obj["prior"] = prior_from_counts(pr, places, where="objective.prior").tolist()
        out["objective"] = obj
    return out


def _metric_entry(p: dict, places: Places, where: str) -> dict:
    p = dict(p)
    dist = p.get("distance")
    spanner_delta = p.pop("spanner", None)
    if isinstance(p.get("edges"), str):
        if p["edges"] != "grid":
            raise InputError(f"{where}.edges", f"must be a list of [a, b, length] or 'grid', got {p['edges']!r}")
        p["edges"] = [[places.labels[a], places.labels[b], w] for a, b, w in places.grid_edges()]
        return p
    if isinstance(dist, str):
        if spanner_delta is not None:
            D = places.distances(dist)
            delta = _stretch(spanner_delta, f"{where}.spanner")
            edges = spanner(D, delta)
            p.pop("distance")
            p["epsilon"] = _eps_over_delta(p.get("epsilon"), delta, where)
            p["edges"] = [[places.labels[a], places.labels[b], w] for a, b, w in edges]
            return p
        if dist == "network" and places.network is not None:
            p.pop("distance")
            p["edges"] = [[places.labels[a], places.labels[b], w] for a, b, w in places.network]
            return p
        if dist == "manhattan" and places.shape is not None:
            p.pop("distance")
            p["edges"] = [[places.labels[a], places.labels[b], w] for a, b, w in places.grid_edges()]
            return p
        p["distance"] = places.distances(dist).tolist()
    elif spanner_delta is not None:
        raise InputError(f"{where}.spanner", "needs 'distance' named (euclidean, manhattan, haversine or network)")
    return p


def _stretch(v: Any, where: str) -> float:
    d = check_finite(v, where)
    if d < 1:
        raise InputError(where, f"the spanner's stretch delta must be a number >= 1, got {v!r}")
    return d


def _eps_over_delta(eps: Any, delta: float, where: str) -> float:
    return check_epsilon(eps, f"{where}.epsilon") / delta


# -- spanner -------------------------------------------------------------------------


def spanner(D: np.ndarray, delta: float) -> list[tuple[int, int, float]]:
    """A greedy δ-spanner of the metric ``D`` (Althöfer et al.; Bordenabe et al. CCS 2014, §4.1).

    Pairs in increasing distance; a pair becomes an edge unless the graph already
    joins it by a path of length <= δ·d. Every pair then has
    ``d_G <= δ d``, and ``d <= d_G`` (triangle inequality), so the edges with budget
    ``ε/δ`` give ``(ε/δ) d_G <= ε d``: exactly ε·d-private.

    Examples
    --------
    >>> D = Places.grid(1, 4).distances("euclidean")
    >>> spanner(D, 1.0)        # collinear points: the path is enough
    [(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0)]
    """
    import heapq

    k = D.shape[0]
    iu, ju = np.triu_indices(k, 1)
    order = np.argsort(D[iu, ju], kind="stable")
    adj: list[list[tuple[int, float]]] = [[] for _ in range(k)]
    edges = []
    for t in order:
        a, b = int(iu[t]), int(ju[t])
        d = float(D[a, b])
        limit = delta * d
        # bounded Dijkstra from a
        dist = {a: 0.0}
        heap = [(0.0, a)]
        found = False
        while heap:
            du, u = heapq.heappop(heap)
            if du > dist.get(u, math.inf):
                continue
            if u == b:
                found = du <= limit * (1 + 1e-12)
                break
            for v, w in adj[u]:
                nd = du + w
                if nd <= limit * (1 + 1e-12) and nd < dist.get(v, math.inf):
                    dist[v] = nd
                    heapq.heappush(heap, (nd, v))
        if not found:
            adj[a].append((b, d))
            adj[b].append((a, d))
            edges.append((a, b, d))
    return edges


# -- maps ------------------------------------------------------------------------------


def _coords_plane(places: Places) -> tuple[np.ndarray, str, str]:
    if places.kind == "latlon":
        return places.coords[:, ::-1], "longitude", "latitude"
    return places.coords, "x", "y"


def plot_reporting(Q: np.ndarray, places: Places, place: str | int, png: str | Path, *, title: str = "") -> Path:
    """Map of the reporting distribution ``Q[place, :]`` of one place (Agg back-end)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = places.labels.index(place) if isinstance(place, str) else int(place)
    if not 0 <= x < places.k:
        raise InputError("place", f"{place!r} is not a place")
    XY, xl, yl = _coords_plane(places)
    fig, ax = plt.subplots(figsize=(5.2, 4.4))
    sc = ax.scatter(XY[:, 0], XY[:, 1], c=Q[x], cmap="viridis", s=_marker(places), marker="s")
    ax.scatter([XY[x, 0]], [XY[x, 1]], marker="*", s=160, c="red", label=f"true place {places.labels[x]}")
    fig.colorbar(sc, ax=ax, label="P(report | true place)")
    ax.set_xlabel(xl)
    ax.set_ylabel(yl)
    ax.set_aspect("equal")
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title(title or f"reporting distribution of {places.labels[x]}")
    fig.tight_layout()
    png = Path(png)
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


def plot_expected_error(Q: np.ndarray, places: Places, png: str | Path, *, loss: str | np.ndarray = "euclidean",
                        prior: np.ndarray | None = None, title: str = "") -> Path:
    """Map of the expected error ``sum_y Q[x, y] L(x, y)`` of every place (and the prior)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    L = places.loss(loss) if isinstance(loss, str) else np.asarray(loss)
    err = (Q * L).sum(axis=1)
    XY, xl, yl = _coords_plane(places)
    n = 2 if prior is not None else 1
    fig, axes = plt.subplots(1, n, figsize=(5.2 * n, 4.4))
    axes = np.atleast_1d(axes)
    sc = axes[0].scatter(XY[:, 0], XY[:, 1], c=err, cmap="magma", s=_marker(places), marker="s")
    fig.colorbar(sc, ax=axes[0], label=f"expected {loss if isinstance(loss, str) else 'loss'}")
    axes[0].set_title(title or "expected error per place")
    if prior is not None:
        sc2 = axes[1].scatter(XY[:, 0], XY[:, 1], c=prior, cmap="Blues", s=_marker(places), marker="s")
        fig.colorbar(sc2, ax=axes[1], label="prior")
        axes[1].set_title("prior")
    for ax in axes:
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.set_aspect("equal")
    fig.tight_layout()
    png = Path(png)
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


def _marker(places: Places) -> float:
    return float(max(8.0, 9000.0 / max(places.k, 1)))
