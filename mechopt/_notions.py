"""Privacy notions: each one is a polyhedral condition on every output column.

Every notion of docs/model.md constrains each column ``q = Q[:, y]`` of a channel separately
by homogeneous linear inequalities (one exception: (ε, δ)-LIP with δ > 0). A notion
object therefore offers

* :meth:`Notion.column_constraints` — the H-representation ``A q <= b`` of one column,
  with the clique groups ``max_{x in U} q[x] <= e^eps min_{x in L} q[x]`` kept as
  groups so the solver can use two auxiliary variables instead of ``|U||L|`` rows;
* :meth:`Notion.achieved` — the smallest budget the channel satisfies (float);
* :meth:`Notion.check` — an exact check (delegated to :mod:`mechopt._verify`, which
  shares no code with the solver);
* :meth:`Notion.to_spec` — the problem-file notation (docs/formats.md).

Notions are written over input *indices* ``0..k-1``. Labels in user-facing
constructors are resolved by :meth:`Notion.bind` against the problem's inputs.
"""

from __future__ import annotations

import itertools
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from ._errors import InputError
from ._validation import check_delta, check_epsilon, check_number_or_inf, check_prior

INF = math.inf


def _spec_number(v: float) -> float | str:
    return "inf" if math.isinf(v) else float(v)


def _exact_sum_check(P: np.ndarray, eps: float, where: str, delta: float = 0.0) -> None:
    """The prior as written must leave LIP satisfiable: ``e^-ε - δ <= sum P <= e^ε + δ`` exactly.

    A prior is accepted when it sums to 1 within 1e-9, but LIP reads its decimals exactly:
    every output column needs ``P·q <= e^ε q[x] + δ`` for all x, so (weighting by P) a sum
    above ``e^ε`` leaves no channel at all when δ = 0 — at ε = 1e-10 a prior summing to
    1 + 5e-10 is infeasible. The constant channel is feasible exactly when the bounds
    above hold, so they are checked here, exactly.
    """
    from fractions import Fraction

    from ._exact import exp_bounds

    total = sum((Fraction(repr(float(v))) for v in P), Fraction(0))
    if total == 1:
        return
    e_lo, _ = exp_bounds(Fraction(repr(float(eps))))
    d = Fraction(repr(float(delta)))
    if not (1 / e_lo - d <= total <= e_lo + d):
        raise InputError(where, f"sums to {float(total)!r} as written; with epsilon = {eps!r} LIP is satisfiable only "
                         "if the sum is within a factor e^epsilon of 1: write the prior's decimals to sum to 1")


@dataclass(frozen=True)
class ColumnConstraints:
    """Linear conditions on one column ``q`` (length k) of a channel.

    ``A @ q <= b`` row-wise, plus, for each group ``(upper, lower, eps)``,
    ``max(q[upper]) <= exp(eps) * min(q[lower])``. ``fixed_zero`` lists inputs whose
    entry must be 0 (used by nothing here but by ULDP invertible columns).
    """

    k: int
    A: sp.csr_matrix
    b: np.ndarray
    groups: tuple[tuple[np.ndarray, np.ndarray, float], ...] = ()
    eldp: np.ndarray | None = None  # k x k matrix of pairwise budgets (inf = none)
    # optional sparse factorisation of dense rows: A == A_q + A_s @ W, with the
    # linear forms s = W q (one per prior for LIP) as auxiliary LP variables
    factored: tuple[sp.csr_matrix, sp.csr_matrix, np.ndarray] | None = None

    @property
    def homogeneous(self) -> bool:
        return not np.any(self.b)


def _empty_constraints(k: int) -> ColumnConstraints:
    return ColumnConstraints(k, sp.csr_matrix((0, k)), np.zeros(0))


def _eldp_rows(E: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """Rows ``q[x] - e^{E[x,x']} q[x'] <= 0`` for every finite off-diagonal pair."""
    k = E.shape[0]
    xs, xps = np.nonzero(np.isfinite(E) & ~np.eye(k, dtype=bool))
    n = len(xs)
    rows = np.repeat(np.arange(n), 2)
    cols = np.column_stack([xs, xps]).ravel()
    with np.errstate(over="ignore"):  # budgets beyond 709: e^E = inf, a row that never binds
        vals = np.column_stack([np.ones(n), -np.exp(E[xs, xps])]).ravel()
    return sp.csr_matrix((vals, (rows, cols)), shape=(n, k)), np.zeros(n)


class Notion(ABC):
    """Base class of the privacy notions (docs/model.md)."""

    name: str = ""
    #: the notion constrains each column by a convex cone (False only for ULDP)
    convex: bool = True

    # -- binding to labels -------------------------------------------------------
    def bind(self, inputs: Sequence[str]) -> "Notion":
        """Return a copy whose label references are resolved to indices of ``inputs``."""
        return self

    @property
    def k(self) -> int | None:
        return None

    # -- the cone --------------------------------------------------------------
    @abstractmethod
    def column_constraints(self, k: int) -> ColumnConstraints:
        """Linear conditions on one column of a channel (see :class:`ColumnConstraints`)."""

    def eldp_matrix(self, k: int) -> np.ndarray | None:
        """The pairwise budget matrix if the notion is an E-LDP notion, else None."""
        return None

    # -- measuring -------------------------------------------------------------
    @abstractmethod
    def achieved(self, Q: np.ndarray) -> float:
        """Smallest budget (same units as ``epsilon``) that ``Q`` satisfies; inf if none."""

    @property
    def budget(self) -> float:
        """The budget claimed (``achieved <= budget`` means satisfied)."""
        return float(self.epsilon)  # type: ignore[attr-defined]

    @abstractmethod
    def to_spec(self, inputs: Sequence[str]) -> dict:
        """The notion as a problem-file entry (docs/formats.md), labels from ``inputs``."""

    def check(self, Q: Any, inputs: Sequence[str] | None = None):
        """Exact check of this notion on a matrix; see :func:`mechopt.verify`."""
        from ._verify import check_notion

        return check_notion(Q, self)


def _ratio_budget(Q: np.ndarray, upper: np.ndarray, lower: np.ndarray) -> float:
    """max over columns of log(max q[upper] / min q[lower])."""
    Q = np.asarray(Q, dtype=float)
    if len(upper) == 0 or len(lower) == 0:
        return 0.0
    hi = Q[upper].max(axis=0)
    lo = Q[lower].min(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(hi > 0, np.log(np.where(lo > 0, hi / np.where(lo > 0, lo, 1), np.inf)), -np.inf)
    return max(0.0, float(np.max(r))) if r.size else 0.0


def _eldp_scale(Q: np.ndarray, E: np.ndarray) -> float:
    """Smallest ``s`` such that ``Q`` satisfies ``s * E``-LDP (``inf`` if none).

    For a pair ``(x, x')`` the worst column ratio is at most ``max q[x] / min q[x']``;
    pairs are examined in decreasing order of that bound (scaled by ``1/E``), and the
    scan stops once no remaining pair's bound can beat the worst ratio found. A channel
    well inside its budgets (k-RR at k = 1000) is settled by the first pairs.
    """
    Q = np.asarray(Q, dtype=float)
    k, m = Q.shape
    fin = np.isfinite(E) & ~np.eye(k, dtype=bool)
    xs, xps = np.nonzero(fin)
    if not len(xs):
        return 0.0
    e = E[xs, xps]
    row_max = Q.max(axis=1)
    row_min = Q.min(axis=1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        bound_ratio = np.where(row_max[xs] > 0, row_max[xs] / row_min[xps], 0.0)
        lb = np.log(bound_ratio)
        bound = np.where(lb > 0, np.where(e > 0, lb / np.where(e > 0, e, 1.0), INF), 0.0)
    order = np.argsort(-bound, kind="stable")
    worst = 0.0
    chunk = max(1, 2_000_000 // max(m, 1))
    for start in range(0, len(order), chunk):
        sel = order[start:start + chunk]
        if bound[sel[0]] <= worst:
            break
        a = Q[xs[sel]]
        b = Q[xps[sel]]
        pos = a > 0
        if np.any(pos & (b <= 0)):
            return INF
        with np.errstate(divide="ignore", invalid="ignore"):
            lr = np.where(pos, np.log(np.where(pos, a, 1.0) / np.where(b > 0, b, 1.0)), -np.inf).max(axis=1)
        bad = lr > 0
        if not bad.any():
            continue
        ee = e[sel][bad]
        if np.any(ee == 0):
            return INF
        worst = max(worst, float(np.max(lr[bad] / ee)))
    return worst


# -----------------------------------------------------------------------------
# E-LDP family
# -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ELDP(Notion):
    """Context-aware LDP with a privacy matrix ``E`` (Acharya et al., Def. 2).

    ``Q[x, y] <= exp(E[x, x']) Q[x', y]`` for all ``x != x'`` and outputs ``y``.
    ``E`` is k×k, zero on the diagonal, entries ``>= 0`` or ``inf`` (no constraint);
    it need not be symmetric. :meth:`achieved` returns the smallest factor ``s`` such
    that the channel is ``s·E``-LDP, so 1.0 means "exactly on the budget".

    Examples
    --------
    >>> import numpy as np
    >>> n = ELDP([[0, 1.0], [2.0, 0]])
    >>> Q = np.array([[0.6, 0.4], [0.3, 0.7]])
    >>> bool(n.achieved(Q) <= 1)
    True
    """

    matrix: Any = None
    name = "eldp"

    def __post_init__(self):
        M = self.matrix
        if isinstance(M, np.ndarray):
            M = M.tolist()
        if not isinstance(M, (list, tuple)) or not M:
            raise InputError("matrix", f"must be a non-empty square list of lists, got {M!r}")
        k = len(M)
        E = _fast_budget_matrix(M, k)
        if E is not None:
            E.setflags(write=False)
            object.__setattr__(self, "matrix", E)
            return
        E = np.zeros((k, k))
        for i, row in enumerate(M):
            if not isinstance(row, (list, tuple)) or len(row) != k:
                raise InputError(f"matrix[{i}]", f"must have {k} entries (E must be square)")
            for j, v in enumerate(row):
                v = check_epsilon(v, f"matrix[{i}][{j}]", allow_inf=True)
                if i == j and v != 0:
                    raise InputError(f"matrix[{i}][{j}]", f"diagonal entries must be 0, got {v!r}")
                E[i, j] = v
        E.setflags(write=False)
        object.__setattr__(self, "matrix", E)

    @property
    def k(self) -> int:
        return self.matrix.shape[0]

    def bind(self, inputs: Sequence[str]) -> "ELDP":
        if self.matrix.shape[0] != len(inputs):
            raise InputError("matrix", f"must be {len(inputs)}x{len(inputs)} (one row and column per input), "
                             f"got {self.matrix.shape[0]}x{self.matrix.shape[0]}")
        return self

    @property
    def budget(self) -> float:
        return 1.0

    def eldp_matrix(self, k: int) -> np.ndarray:
        return self.matrix

    def column_constraints(self, k: int) -> ColumnConstraints:
        A, b = _eldp_rows(self.matrix)
        return ColumnConstraints(k, A, b, eldp=self.matrix)

    def achieved(self, Q: np.ndarray) -> float:
        return _eldp_scale(Q, self.matrix)

    def to_spec(self, inputs: Sequence[str]) -> dict:
        return {"notion": "eldp", "matrix": [[_spec_number(v) for v in row] for row in self.matrix]}


def _fast_budget_matrix(M: Any, k: int) -> np.ndarray | None:
    """A square matrix of plain numbers, >= 0, zero diagonal, read without a Python loop per entry.

    Returns None when anything is unusual (strings such as "inf", bools, a bad value, a
    ragged row): the entry-by-entry reader then names the offending entry.
    """
    if not all(isinstance(row, (list, tuple)) and len(row) == k for row in M):
        return None
    kinds = {type(v) for row in M for v in row}
    if str in kinds:
        if {v for row in M for v in row if isinstance(v, str)} != {"inf"}:
            return None
        M = [[INF if isinstance(v, str) else v for v in row] for row in M]
        kinds.discard(str)
    if not kinds <= {float, int}:
        return None
    E = np.array(M, dtype=float)
    if E.shape != (k, k) or np.isnan(E).any() or (E < 0).any() or np.any(np.diag(E) != 0):
        return None
    return E


def _group_matrix(k: int, groups) -> np.ndarray:
    E = np.full((k, k), INF)
    for upper, lower, eps in groups:
        for u in upper:
            E[u, lower] = np.minimum(E[u, lower], eps)
    np.fill_diagonal(E, 0.0)
    return E


@dataclass(frozen=True)
class LDP(Notion):
    """ε-local differential privacy: ``Q[x,y] <= e^ε Q[x',y]`` for all x, x', y.

    Examples
    --------
    >>> import numpy as np
    >>> e = np.exp(1.0)
    >>> krr = np.array([[e, 1, 1], [1, e, 1], [1, 1, e]]) / (e + 2)
    >>> round(LDP(1.0).achieved(krr), 12)
    1.0
    """

    epsilon: float = 1.0
    name = "ldp"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, "epsilon"))

    def groups(self, k: int):
        idx = np.arange(k)
        return ((idx, idx, self.epsilon),)

    def eldp_matrix(self, k: int) -> np.ndarray:
        return _group_matrix(k, self.groups(k))

    def column_constraints(self, k: int) -> ColumnConstraints:
        c = _empty_constraints(k)
        return replace(c, groups=self.groups(k), eldp=self.eldp_matrix(k))

    def achieved(self, Q: np.ndarray) -> float:
        k = np.asarray(Q).shape[0]
        return _ratio_budget(Q, np.arange(k), np.arange(k))

    def to_spec(self, inputs: Sequence[str]) -> dict:
        return {"notion": "ldp", "epsilon": self.epsilon}


@dataclass(frozen=True)
class WCLIP(LDP):
    """Worst-case LIP: ε-LIP for every prior; equivalent to ε-LDP (Jiang et al. 2022, Cor. 2)."""

    name = "wc_lip"

    def to_spec(self, inputs: Sequence[str]) -> dict:
        return {"notion": "wc_lip", "epsilon": self.epsilon}


def _resolve(items: Any, inputs: Sequence[str] | None, where: str) -> list[int]:
    """Resolve labels (or integer indices) to input indices."""
    if isinstance(items, (str, bytes)) or not isinstance(items, (list, tuple, set, frozenset, np.ndarray)):
        raise InputError(where, f"must be a list of input labels, got {items!r}")
    out = []
    for i, it in enumerate(list(items)):
        if inputs is not None and isinstance(it, str):
            if it not in inputs:
                raise InputError(f"{where}[{i}]", f"{it!r} is not an input label (inputs: {list(inputs)!r})")
            out.append(list(inputs).index(it))
        elif isinstance(it, (int, np.integer)) and not isinstance(it, bool):
            it = int(it)
            if inputs is None:
                out.append(it)
            elif str(it) in inputs:
                out.append(list(inputs).index(str(it)))
            elif 0 <= it < len(inputs):
                out.append(it)
            else:
                raise InputError(f"{where}[{i}]", f"{it!r} is not an input label (inputs: {list(inputs)!r})")
        elif inputs is None and isinstance(it, str):
            out.append(it)  # resolved later by bind()
        else:
            raise InputError(f"{where}[{i}]", f"must be an input label, got {it!r}")
    return out


@dataclass(frozen=True)
class BlockLDP(Notion):
    """Block-structured LDP (Acharya et al., Def. 4): ε-LDP inside each block, none across.

    ``blocks`` is a partition of the inputs (labels or indices).

    Examples
    --------
    >>> import numpy as np
    >>> n = BlockLDP(1.0, blocks=[[0, 1], [2]])
    >>> Q = np.array([[0.5, 0.5, 0], [0.5, 0.5, 0], [0, 0, 1.0]])
    >>> n.achieved(Q)
    0.0
    """

    epsilon: float = 1.0
    blocks: Any = ()
    name = "block"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, "epsilon"))
        if not isinstance(self.blocks, (list, tuple)) or not self.blocks:
            raise InputError("blocks", f"must be a non-empty list of lists of input labels, got {self.blocks!r}")
        blocks = tuple(tuple(_resolve(b, None, f"blocks[{i}]")) for i, b in enumerate(self.blocks))
        for i, b in enumerate(blocks):
            if not b:
                raise InputError(f"blocks[{i}]", "must not be empty")
        object.__setattr__(self, "blocks", blocks)

    def bind(self, inputs: Sequence[str]) -> "BlockLDP":
        blocks = [_resolve(list(b), inputs, f"blocks[{i}]") for i, b in enumerate(self.blocks)]
        seen: dict[int, int] = {}
        for i, b in enumerate(blocks):
            for x in b:
                if x in seen:
                    raise InputError("blocks", f"input {inputs[x]!r} is in block {seen[x]} and block {i}: blocks must not overlap")
                seen[x] = i
        missing = [inputs[x] for x in range(len(inputs)) if x not in seen]
        if missing:
            raise InputError("blocks", f"must cover every input; missing {missing!r}")
        return replace(self, blocks=tuple(tuple(b) for b in blocks))

    def groups(self, k: int):
        return tuple((np.array(b), np.array(b), self.epsilon) for b in self.blocks if len(b) > 1)

    def eldp_matrix(self, k: int) -> np.ndarray:
        return _group_matrix(k, self.groups(k))

    def column_constraints(self, k: int) -> ColumnConstraints:
        return replace(_empty_constraints(k), groups=self.groups(k), eldp=self.eldp_matrix(k))

    def achieved(self, Q: np.ndarray) -> float:
        return max([_ratio_budget(Q, np.array(b), np.array(b)) for b in self.blocks] + [0.0])

    def to_spec(self, inputs: Sequence[str]) -> dict:
        return {"notion": "block", "epsilon": self.epsilon, "blocks": [[inputs[x] for x in b] for b in self.blocks]}


@dataclass(frozen=True)
class HighLowLDP(Notion):
    """High-low LDP (Acharya et al., Def. 3): ``Q[a,y] <= e^ε Q[x',y]`` for sensitive a, any x'.

    Examples
    --------
    >>> import numpy as np
    >>> n = HighLowLDP(1.0, sensitive=[0])
    >>> Q = np.array([[0.5, 0.5], [0.25, 0.75]])
    >>> round(n.achieved(Q), 6)
    0.693147
    """

    epsilon: float = 1.0
    sensitive: Any = ()
    name = "high_low"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, "epsilon"))
        object.__setattr__(self, "sensitive", tuple(_resolve(self.sensitive, None, "sensitive")))
        if not self.sensitive:
            raise InputError("sensitive", "must name at least one sensitive input (else the notion constrains nothing)")

    def bind(self, inputs: Sequence[str]) -> "HighLowLDP":
        s = _resolve(list(self.sensitive), inputs, "sensitive")
        if len(set(s)) != len(s):
            raise InputError("sensitive", "must not repeat a label")
        return replace(self, sensitive=tuple(s))

    def groups(self, k: int):
        if not self.sensitive:
            return ()
        return ((np.array(self.sensitive), np.arange(k), self.epsilon),)

    def eldp_matrix(self, k: int) -> np.ndarray:
        return _group_matrix(k, self.groups(k))

    def column_constraints(self, k: int) -> ColumnConstraints:
        return replace(_empty_constraints(k), groups=self.groups(k), eldp=self.eldp_matrix(k))

    def achieved(self, Q: np.ndarray) -> float:
        k = np.asarray(Q).shape[0]
        return _ratio_budget(Q, np.array(self.sensitive, dtype=int), np.arange(k))

    def to_spec(self, inputs: Sequence[str]) -> dict:
        return {"notion": "high_low", "epsilon": self.epsilon, "sensitive": [inputs[x] for x in self.sensitive]}


@dataclass(frozen=True)
class MetricLDP(Notion):
    """Metric (geo-)privacy: E-LDP with ``E = ε · d_G`` (shortest-path distance).

    Give ``edges`` as ``[[a, b, length], ...]`` (undirected), a ``networkx`` graph
    (edge attribute ``weight``, default 1) or a full ``distance`` matrix.

    Examples
    --------
    >>> n = MetricLDP(0.5, edges=[[0, 1, 1.0], [1, 2, 1.0]]).bind(["0", "1", "2"])
    >>> float(n.eldp_matrix(3)[0, 2])
    1.0
    """

    epsilon: float = 1.0
    edges: Any = None
    graph: Any = None
    distance: Any = None
    name = "metric"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, "epsilon"))
        given = [x is not None for x in (self.edges, self.graph, self.distance)]
        if sum(given) != 1:
            raise InputError("metric", "give exactly one of 'edges', 'graph' or 'distance'")
        if self.graph is not None:
            import networkx as nx

            if not isinstance(self.graph, nx.Graph):
                raise InputError("graph", f"must be a networkx graph, got {type(self.graph).__name__}")
            edges = []
            for a, b, d in self.graph.edges(data=True):
                edges.append([a, b, d.get("weight", 1.0)])
            object.__setattr__(self, "edges", edges)
            object.__setattr__(self, "graph", None)
        if self.edges is not None:
            if not isinstance(self.edges, (list, tuple)):
                raise InputError("edges", f"must be a list of [a, b, length], got {self.edges!r}")
            clean = []
            for i, e in enumerate(self.edges):
                if not isinstance(e, (list, tuple)) or len(e) not in (2, 3):
                    raise InputError(f"edges[{i}]", f"must be [a, b] or [a, b, length], got {e!r}")
                w = 1.0 if len(e) == 2 else check_number_or_inf(e[2], f"edges[{i}][2]")
                if w < 0:
                    raise InputError(f"edges[{i}][2]", f"edge length must be >= 0, got {w!r}")
                if math.isinf(w):
                    raise InputError(f"edges[{i}][2]", "edge length must be finite")
                clean.append((e[0], e[1], w))
            object.__setattr__(self, "edges", tuple(clean))
        if self.distance is not None:
            d = ELDP(self.distance).matrix  # validates square, >= 0, zero diagonal
            object.__setattr__(self, "distance", d)

    def bind(self, inputs: Sequence[str]) -> "MetricLDP":
        if self.edges is None:
            if self.distance.shape[0] != len(inputs):
                raise InputError("distance", f"must be {len(inputs)}x{len(inputs)}, got {self.distance.shape}")
            return self
        edges = []
        for i, (a, b, w) in enumerate(self.edges):
            ia, ib = _resolve([a, b], inputs, f"edges[{i}]")
            edges.append((ia, ib, w))
        return replace(self, edges=tuple(edges))

    def distances(self, k: int) -> np.ndarray:
        if self.distance is not None:
            return np.asarray(self.distance)
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from(range(k))
        for a, b, w in self.edges:
            if g.has_edge(a, b):
                w = min(w, g[a][b]["weight"])
            g.add_edge(a, b, weight=w)
        D = np.full((k, k), INF)
        for src, lengths in nx.all_pairs_dijkstra_path_length(g, weight="weight"):
            for dst, d in lengths.items():
                D[src, dst] = d
        return D

    def eldp_matrix(self, k: int) -> np.ndarray:
        D = self.distances(k)
        with np.errstate(invalid="ignore"):
            E = self.epsilon * D
        E[np.isinf(D)] = INF
        np.fill_diagonal(E, 0.0)
        return E

    def column_constraints(self, k: int) -> ColumnConstraints:
        E = self.eldp_matrix(k)
        if self.edges is not None:
            # only the edges are needed: every other pair is implied along a path
            Em = np.full((k, k), INF)
            for a, b, w in self.edges:
                if a != b:
                    Em[a, b] = Em[b, a] = min(Em[a, b], self.epsilon * w)
            np.fill_diagonal(Em, 0.0)
            A, b = _eldp_rows(Em)
        else:
            A, b = _eldp_rows(E)
        return ColumnConstraints(k, A, b, eldp=E)

    def achieved(self, Q: np.ndarray) -> float:
        """Smallest ε with ``Q`` ε·d-private; for a graph the edges decide it (paths add up)."""
        k = np.asarray(Q).shape[0]
        if self.edges is None:
            return _eldp_scale(Q, self.distances(k))
        W = np.full((k, k), INF)
        for a, b, w in self.edges:
            if a != b:
                W[a, b] = W[b, a] = min(W[a, b], w)
        np.fill_diagonal(W, 0.0)
        return _eldp_scale(Q, W)

    @property
    def budget(self) -> float:
        return self.epsilon

    def to_spec(self, inputs: Sequence[str]) -> dict:
        out: dict[str, Any] = {"notion": "metric", "epsilon": self.epsilon}
        if self.edges is not None:
            out["edges"] = [[inputs[a], inputs[b], float(w)] for a, b, w in self.edges]
        else:
            out["distance"] = [[_spec_number(v) for v in row] for row in self.distance]
        return out


# -----------------------------------------------------------------------------
# LIP family
# -----------------------------------------------------------------------------


def _lip_budget(Q: np.ndarray, prior: np.ndarray, delta: float = 0.0) -> float:
    """Smallest ε with ``e^-ε q[x] - δ <= P·q <= e^ε q[x] + δ`` for all x and columns."""
    Q = np.asarray(Q, dtype=float)
    py = prior @ Q
    worst = 0.0
    # upper: q[x] <= e^ε (P·q + δ)  ->  ε >= log(q[x] / (P·q + δ))
    # lower: P·q <= e^ε q[x] + δ    ->  ε >= log((P·q - δ) / q[x])
    num1 = Q
    den1 = py[None, :] + delta
    with np.errstate(divide="ignore", invalid="ignore"):
        if np.any((num1 > 0) & (den1 <= 0)):
            return INF
        r1 = np.where(num1 > 0, np.log(num1 / np.where(den1 > 0, den1, 1)), -np.inf)
        num2 = np.broadcast_to(py[None, :] - delta, Q.shape)
        if np.any((num2 > 0) & (Q <= 0)):
            return INF
        r2 = np.where(num2 > 0, np.log(num2 / np.where(Q > 0, Q, 1)), -np.inf)
    if Q.size:
        worst = max(worst, float(np.max(r1)), float(np.max(r2)))
    return worst


@dataclass(frozen=True)
class LIP(Notion):
    """(ε, δ)-local information privacy for a known prior.

    ``e^-ε Q[x,y] - δ <= P·Q[:,y] <= e^ε Q[x,y] + δ`` for all x, y (Jiang et al.
    2022, eq. (4); δ = 0 is Jiang, Li, Tandon, Def. 3). With δ > 0 the condition is
    not a cone: only the labeled LP supports it.

    Examples
    --------
    >>> import numpy as np
    >>> n = LIP(1.0, prior=[0.5, 0.5])
    >>> Q = np.array([[0.6, 0.4], [0.4, 0.6]])
    >>> round(n.achieved(Q), 6)   # log(0.6 / 0.5)
    0.223144
    """

    epsilon: float = 1.0
    prior: Any = None
    delta: float = 0.0
    name = "lip"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, "epsilon"))
        if self.prior is None:
            raise InputError("prior", "LIP needs a prior (a list of probabilities, one per input)")
        p = check_prior(self.prior, "prior")
        d = check_delta(self.delta, "delta")
        _exact_sum_check(p, self.epsilon, "prior", d)
        p.setflags(write=False)
        object.__setattr__(self, "prior", p)
        object.__setattr__(self, "delta", d)

    @property
    def k(self) -> int:
        return len(self.prior)

    def bind(self, inputs: Sequence[str]) -> "LIP":
        if len(self.prior) != len(inputs):
            raise InputError("prior", f"must have one entry per input ({len(inputs)}), got {len(self.prior)}")
        return self

    @property
    def priors(self) -> np.ndarray:
        return np.asarray(self.prior)[None, :]

    def column_constraints(self, k: int) -> ColumnConstraints:
        return _lip_constraints(k, self.priors, self.epsilon, self.delta)

    def achieved(self, Q: np.ndarray) -> float:
        return _lip_budget(Q, np.asarray(self.prior), self.delta)

    def to_spec(self, inputs: Sequence[str]) -> dict:
        out = {"notion": "lip", "epsilon": self.epsilon, "prior": [float(v) for v in self.prior]}
        if self.delta:
            out["delta"] = self.delta
        return out


def _lip_constraints(k: int, priors: np.ndarray, eps: float, delta: float) -> ColumnConstraints:
    e = math.exp(eps)
    blocks = []
    for P in priors:
        eye = np.eye(k)
        # q[x] - e^ε P·q <= e^ε δ ;  P·q - e^ε q[x] <= δ
        blocks.append(eye - e * P[None, :])
        blocks.append(P[None, :] - e * eye)
    A = sp.csr_matrix(np.vstack(blocks))
    b = np.concatenate([np.full(k, e * delta), np.full(k, delta)] * len(priors))
    # the same rows with s_j = P_j·q: 2 non-zeros each instead of k + 1
    n = len(priors)
    eye = sp.identity(k, format="csr")
    A_q = sp.vstack([sp.vstack([eye, -e * eye]) for _ in range(n)]).tocsr()
    A_s = sp.csr_matrix((np.tile(np.concatenate([np.full(k, -e), np.ones(k)]), n),
                         (np.arange(2 * k * n), np.repeat(np.arange(n), 2 * k))), shape=(2 * k * n, n))
    return ColumnConstraints(k, A, b, factored=(A_q, A_s, np.asarray(priors, dtype=float)))


def box_prior_vertices(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Vertices of ``{P : lower <= P <= upper, sum P = 1}``.

    A vertex of a box cut by one hyperplane has at most one coordinate strictly
    between its bounds; we enumerate those (``k 2^(k-1)`` candidates).

    Examples
    --------
    >>> box_prior_vertices(np.array([0.2, 0.3]), np.array([0.7, 0.8]))
    array([[0.2, 0.8],
           [0.7, 0.3]])
    """
    k = len(lower)
    if k > 20:
        raise InputError("lower", f"box priors are supported up to 20 inputs, got {k}")
    verts = set()
    for j in range(k):
        others = [i for i in range(k) if i != j]
        for bits in itertools.product((0, 1), repeat=k - 1):
            P = np.empty(k)
            for i, bit in zip(others, bits):
                P[i] = upper[i] if bit else lower[i]
            P[j] = 1.0 - P[others].sum()
            if lower[j] - 1e-12 <= P[j] <= upper[j] + 1e-12:
                P[j] = min(max(P[j], lower[j]), upper[j])
                verts.add(tuple(np.round(P, 15)))
    return np.array(sorted(verts))


@dataclass(frozen=True)
class BPLIP(Notion):
    """Bounded-prior LIP (Jiang et al. 2022, Def. 6): ε-LIP for every prior in a set.

    The LIP condition is linear in the prior, so it holds on a convex set iff it holds
    at the set's vertices. Give ``priors`` (a finite list) or a box ``lower``/``upper``
    (intersected with the simplex; its vertices are enumerated).

    Examples
    --------
    >>> n = BPLIP(1.0, lower=[0.2, 0.3], upper=[0.7, 0.8])
    >>> n.priors.shape
    (2, 2)
    """

    epsilon: float = 1.0
    priors: Any = None
    lower: Any = None
    upper: Any = None
    name = "bp_lip"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, "epsilon"))
        if self.priors is not None:
            if self.lower is not None or self.upper is not None:
                raise InputError("priors", "give either 'priors' or 'lower'/'upper', not both")
            if not isinstance(self.priors, (list, tuple, np.ndarray)) or len(self.priors) == 0:
                raise InputError("priors", f"must be a non-empty list of priors, got {self.priors!r}")
            ps = [check_prior(p, f"priors[{i}]") for i, p in enumerate(self.priors)]
            if len({len(p) for p in ps}) != 1:
                raise InputError("priors", "all priors must have the same length")
            P = np.array(ps)
            for i, p in enumerate(ps):
                _exact_sum_check(p, self.epsilon, f"priors[{i}]")
        else:
            if self.lower is None or self.upper is None:
                raise InputError("priors", "BP-LIP needs 'priors' or both 'lower' and 'upper'")
            lo = np.array([check_number_or_inf(v, f"lower[{i}]") for i, v in enumerate(self.lower)])
            hi = np.array([check_number_or_inf(v, f"upper[{i}]") for i, v in enumerate(self.upper)])
            if len(lo) != len(hi):
                raise InputError("upper", f"must have as many entries as 'lower' ({len(lo)}), got {len(hi)}")
            for i in range(len(lo)):
                if not (0 <= lo[i] <= hi[i] <= 1):
                    raise InputError(f"lower[{i}]", f"must satisfy 0 <= lower <= upper <= 1, got lower={float(lo[i])!r}, "
                                     f"upper={float(hi[i])!r}")
            if lo.sum() > 1 + 1e-12 or hi.sum() < 1 - 1e-12:
                raise InputError("lower", f"the box lower <= P <= upper contains no probability vector "
                                 f"(sum(lower) = {float(lo.sum())!r}, sum(upper) = {float(hi.sum())!r})")
            object.__setattr__(self, "lower", lo)
            object.__setattr__(self, "upper", hi)
            P = box_prior_vertices(lo, hi)
        P.setflags(write=False)
        object.__setattr__(self, "priors", P)

    @property
    def k(self) -> int:
        return self.priors.shape[1]

    def bind(self, inputs: Sequence[str]) -> "BPLIP":
        if self.priors.shape[1] != len(inputs):
            raise InputError("priors", f"must have one entry per input ({len(inputs)}), got {self.priors.shape[1]}")
        return self

    def column_constraints(self, k: int) -> ColumnConstraints:
        return _lip_constraints(k, self.priors, self.epsilon, 0.0)

    def achieved(self, Q: np.ndarray) -> float:
        return max(_lip_budget(Q, P) for P in self.priors)

    def to_spec(self, inputs: Sequence[str]) -> dict:
        if self.lower is not None:
            return {"notion": "bp_lip", "epsilon": self.epsilon,
                    "lower": [float(v) for v in self.lower], "upper": [float(v) for v in self.upper]}
        return {"notion": "bp_lip", "epsilon": self.epsilon, "priors": [[float(v) for v in P] for P in self.priors]}


# -----------------------------------------------------------------------------
# ULDP
# -----------------------------------------------------------------------------


def uldp_roles(Q: np.ndarray, sensitive: Sequence[int]) -> list[str]:
    """Role of each output column under ULDP: ``"invertible"`` or ``"protected"``.

    A column is invertible when it has exactly one non-zero entry, at a non-sensitive
    input (Murakami & Kawamoto, Def. 2); every other column must be protected.
    """
    Q = np.asarray(Q, dtype=float)
    sens = set(int(s) for s in sensitive)
    roles = []
    for y in range(Q.shape[1]):
        nz = np.flatnonzero(Q[:, y] > 0)
        roles.append("invertible" if len(nz) == 1 and int(nz[0]) not in sens else "protected")
    return roles


@dataclass(frozen=True)
class ULDP(Notion):
    """Utility-optimized LDP (Murakami & Kawamoto, Def. 2).

    Each output column is either *protected* (ε-LDP over all inputs) or *invertible*
    (exactly one non-zero entry, at a non-sensitive input). The union of the two is
    not convex: with labeled outputs, an output named like a non-sensitive input may
    be either, and the solver chooses each such role with a binary variable (a MILP);
    with free outputs the ray LP uses the rays of both kinds.

    Examples
    --------
    >>> import numpy as np
    >>> n = ULDP(1.0, sensitive=[0])
    >>> Q = np.array([[0.5, 0.5, 0.0], [0.4, 0.4, 0.2]])   # column 2 is invertible
    >>> round(n.achieved(Q), 4)                           # log(0.5 / 0.4)
    0.2231
    """

    epsilon: float = 1.0
    sensitive: Any = ()
    name = "uldp"
    convex = False

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, "epsilon"))
        object.__setattr__(self, "sensitive", tuple(_resolve(self.sensitive, None, "sensitive")))

    def bind(self, inputs: Sequence[str]) -> "ULDP":
        s = _resolve(list(self.sensitive), inputs, "sensitive")
        if len(set(s)) != len(s):
            raise InputError("sensitive", "must not repeat a label")
        return replace(self, sensitive=tuple(s))

    def groups(self, k: int):
        idx = np.arange(k)
        return ((idx, idx, self.epsilon),)

    def column_constraints(self, k: int) -> ColumnConstraints:
        """Constraints of a *protected* column (ε-LDP over all inputs)."""
        return replace(_empty_constraints(k), groups=self.groups(k), eldp=_group_matrix(k, self.groups(k)))

    def achieved(self, Q: np.ndarray) -> float:
        Q = np.asarray(Q, dtype=float)
        roles = uldp_roles(Q, self.sensitive)
        prot = [y for y, r in enumerate(roles) if r == "protected"]
        if not prot:
            return 0.0
        k = Q.shape[0]
        return _ratio_budget(Q[:, prot], np.arange(k), np.arange(k))

    def to_spec(self, inputs: Sequence[str]) -> dict:
        return {"notion": "uldp", "epsilon": self.epsilon, "sensitive": [inputs[x] for x in self.sensitive]}


NOTION_TYPES: dict[str, type[Notion]] = {
    "eldp": ELDP,
    "ldp": LDP,
    "block": BlockLDP,
    "high_low": HighLowLDP,
    "metric": MetricLDP,
    "lip": LIP,
    "bp_lip": BPLIP,
    "wc_lip": WCLIP,
    "uldp": ULDP,
}

_FIELDS = {
    "eldp": {"matrix"},
    "ldp": {"epsilon"},
    "wc_lip": {"epsilon"},
    "block": {"epsilon", "blocks"},
    "high_low": {"epsilon", "sensitive"},
    "metric": {"epsilon", "edges", "distance"},
    "lip": {"epsilon", "prior", "delta"},
    "bp_lip": {"epsilon", "priors", "lower", "upper"},
    "uldp": {"epsilon", "sensitive"},
}
_REQUIRED = {
    "eldp": {"matrix"},
    "ldp": {"epsilon"},
    "wc_lip": {"epsilon"},
    "block": {"epsilon", "blocks"},
    "high_low": {"epsilon", "sensitive"},
    "metric": {"epsilon"},
    "lip": {"epsilon", "prior"},
    "bp_lip": {"epsilon"},
    "uldp": {"epsilon", "sensitive"},
}


def notion_from_spec(spec: Any, inputs: Sequence[str], where: str = "privacy") -> Notion:
    """Build and bind a notion from its problem-file entry (docs/formats.md).

    Raises
    ------
    InputError
        When the entry is not a mapping, names an unknown notion, misses a required
        field, has an unknown field, or a value breaks the notion's rules. The
        error's field is prefixed by ``where``.

    Examples
    --------
    >>> notion_from_spec({"notion": "ldp", "epsilon": 1}, ["a", "b"])
    LDP(epsilon=1.0)
    """
    if not isinstance(spec, dict):
        raise InputError(where, f"each privacy entry must be a mapping with a 'notion' key, got {spec!r}")
    kind = spec.get("notion")
    if kind not in NOTION_TYPES:
        raise InputError(f"{where}.notion", f"unknown notion {kind!r}; expected one of {sorted(NOTION_TYPES)}")
    allowed = _FIELDS[kind] | {"notion"}
    extra = sorted(set(spec) - allowed)
    if extra:
        raise InputError(f"{where}.{extra[0]}", f"is not a field of notion {kind!r} (fields: {sorted(allowed)})")
    missing = sorted(_REQUIRED[kind] - set(spec))
    if missing:
        raise InputError(f"{where}.{missing[0]}", f"is required for notion {kind!r}")
    kwargs = {k: v for k, v in spec.items() if k != "notion"}
    try:
        notion = NOTION_TYPES[kind](**kwargs)
        notion = notion.bind(list(inputs))
        _refuse_vacuous(notion, len(inputs))
        return notion
    except InputError as err:
        raise InputError(f"{where}.{err.field}", err.rule) from None


def _refuse_vacuous(notion: Notion, k: int) -> None:
    """Empty parameter lists are refused, the same way for every notion.

    An empty ``sensitive`` list (high-low, ULDP) or ``edges`` list (metric) would
    silently claim privacy while allowing the identity channel, so each is an error.
    (An explicit E matrix of ``inf`` or blocks of one input each say "no constraint" in
    so many words and are accepted; one input, k = 1, has nothing to protect.)
    """
    if k <= 1:
        return
    if isinstance(notion, (HighLowLDP, ULDP)) and not notion.sensitive:
        raise InputError("sensitive", "must name at least one sensitive input (else the notion constrains nothing)")
    if isinstance(notion, MetricLDP) and notion.edges is not None and not notion.edges:
        raise InputError("edges", "must list at least one edge [a, b, length] (else the notion constrains nothing)")
