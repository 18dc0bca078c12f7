"""The E-LDP family (Acharya et al.): E-LDP, LDP, WC-LIP, block, high-low and metric privacy."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np

from .._composition import ADDITIVE
from .._errors import InputError
from .._validation import check_epsilon, check_number_or_inf

from ._base import ColumnConstraints, Notion, _check_size, _eldp_rows, _eldp_scale, _empty_constraints, _ratio_budget, _spec_number

INF = math.inf



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
    fields = ("matrix",)
    required = ("matrix",)
    per_input = (("matrix", "rows"),)

    def __post_init__(self):
        M = self.matrix
        if isinstance(M, np.ndarray):
            M = M.tolist()
        if not isinstance(M, (list, tuple)) or not M:
            raise InputError("matrix", f"must be a non-empty square list of lists, got {M!r}")
        k = len(M)
        E = _fast_budget_matrix(M, k)
        if E is not None:
            self._freeze("matrix", E)
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
        self._freeze("matrix", E)

    @property
    def k(self) -> int:
        return self.matrix.shape[0]

    def bind(self, inputs: Sequence[str]) -> "ELDP":
        _check_size(self.k, inputs, "matrix", "must be {n}x{n} (one row and column per input), got {size}x{size}")
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

    def relaxed(self, k: int, cap: float) -> "Notion | None":
        return _relaxed_matrix(self.eldp_matrix(k), k, cap, self)


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
    try:
        E = np.array(M, dtype=float)
    except OverflowError:  # an integer beyond float range: the entry reader names it
        return None
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
    fields = ("epsilon",)
    required = ("epsilon",)
    composition = ADDITIVE

    def __post_init__(self):
        self._check_epsilon()

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

    def structured_rays(self, k: int) -> np.ndarray:
        """The ``2^k - 2`` staircases ``{1, e^ε}^k`` (Kairouz, Oh, Viswanath)."""
        from ._rays import ldp_rays

        return ldp_rays(k, self.epsilon)

    def ray_count(self, k: int) -> int:
        return 2**k - 2

    def ldp_equivalent(self, k: int) -> float:
        """ε-LDP implies this notion at its own ε."""
        return float(self.epsilon)


@dataclass(frozen=True)
class WCLIP(LDP):
    """Worst-case LIP: ε-LIP for every prior; equivalent to ε-LDP (Jiang et al. 2022, Cor. 2)."""

    name = "wc_lip"
    composition = None

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
    fields = ("epsilon", "blocks")
    required = ("epsilon", "blocks")
    composition = ADDITIVE

    def __post_init__(self):
        self._check_epsilon()
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

    def structured_rays(self, k: int) -> np.ndarray:
        """Staircases of one block, zero elsewhere (a unit vector for a singleton block)."""
        from ._rays import ldp_rays

        return np.hstack([ldp_rays(len(b), self.epsilon, np.array(b), k) for b in self.blocks])

    def ray_count(self, k: int) -> int:
        return sum(2 ** len(b) for b in self.blocks)

    def ldp_equivalent(self, k: int) -> float:
        """ε-LDP implies this notion at its own ε."""
        return float(self.epsilon)


@dataclass(frozen=True)
class _SensitiveInputs(Notion):
    """A budget ``epsilon`` and a set of ``sensitive`` inputs (high-low LDP, ULDP)."""

    epsilon: float = 1.0
    sensitive: Any = ()
    fields = ("epsilon", "sensitive")
    required = ("epsilon", "sensitive")
    composition = ADDITIVE

    def __post_init__(self):
        self._check_epsilon()
        object.__setattr__(self, "sensitive", tuple(_resolve(self.sensitive, None, "sensitive")))

    def bind(self, inputs: Sequence[str]) -> "Notion":
        s = _resolve(list(self.sensitive), inputs, "sensitive")
        if len(set(s)) != len(s):
            raise InputError("sensitive", "must not repeat a label")
        return replace(self, sensitive=tuple(s))

    def ldp_equivalent(self, k: int) -> float:
        """ε-LDP implies this notion at its own ε."""
        return float(self.epsilon)


@dataclass(frozen=True)
class HighLowLDP(_SensitiveInputs):
    """High-low LDP (Acharya et al., Def. 3): ``Q[a,y] <= e^ε Q[x',y]`` for sensitive a, any x'.

    Examples
    --------
    >>> import numpy as np
    >>> n = HighLowLDP(1.0, sensitive=[0])
    >>> Q = np.array([[0.5, 0.5], [0.25, 0.75]])
    >>> round(n.achieved(Q), 6)
    0.693147
    """

    name = "high_low"

    def __post_init__(self):
        super().__post_init__()
        if not self.sensitive:
            raise InputError("sensitive", "must name at least one sensitive input (else the notion constrains nothing)")

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
    fields = ("epsilon", "edges", "distance")
    required = ("epsilon",)
    per_input = (("distance", "rows"),)
    composition = ADDITIVE

    def __post_init__(self):
        self._check_epsilon()
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
        return edge_distances(k, self.edges)

    def ldp_equivalent(self, k: int) -> float:
        """ε-LDP at ε times the shortest distance implies ε-metric privacy (``inf``: no finite distance)."""
        D = self.distances(k)
        off = D[~np.eye(len(D), dtype=bool)]
        finite = off[np.isfinite(off)]
        return float(self.epsilon) * float(finite.min()) if len(finite) else INF

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
            # the edges' budgets: their closure is E, and the pruning of implied pairs then
            # looks at the edges only (a street graph of 2 000 places: 7 600 pairs, not 4 million)
            return ColumnConstraints(k, A, b, eldp=Em)
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

    def validate_bound(self, k: int) -> None:
        if k > 1 and self.edges is not None and not self.edges:
            raise InputError("edges", "must list at least one edge [a, b, length] (else the notion constrains nothing)")

    def relaxed(self, k: int, cap: float) -> "Notion | None":
        return _relaxed_matrix(self.eldp_matrix(k), k, cap, self)




def _relaxed_matrix(E: np.ndarray, k: int, cap: float, notion: Notion) -> Notion | None:
    """An E-LDP view with every budget above ``cap`` made ``inf`` (``notion`` itself if none is)."""
    if not np.any(np.isfinite(E) & (E > cap)):
        return notion
    E = np.where(E > cap, np.inf, E)
    np.fill_diagonal(E, 0.0)
    if not np.isfinite(E[~np.eye(k, dtype=bool)]).any():
        return None
    return ELDP(E)


def edge_distances(k: int, edges) -> np.ndarray:
    """The ``k x k`` shortest-path distances over undirected ``(a, b, length)`` edges (Dijkstra).

    The shortest edge per unordered pair is kept; explicit zero lengths stay edges.

    Examples
    --------
    >>> edge_distances(3, [(0, 1, 1.0), (1, 2, 2.0), (0, 2, 5.0)]).tolist()
    [[0.0, 1.0, 3.0], [1.0, 0.0, 2.0], [3.0, 2.0, 0.0]]
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import dijkstra

    W: dict[tuple[int, int], float] = {}
    for a, b, w in edges:
        a, b = int(a), int(b)
        if a != b:
            key = (min(a, b), max(a, b))
            W[key] = min(float(w), W.get(key, INF))
    if not W:
        D = np.full((k, k), INF)
        np.fill_diagonal(D, 0.0)
        return D
    r, c = np.array(list(W), dtype=np.int64).T
    v = np.array(list(W.values()))
    # one entry per pair and direction (csgraph keeps stored zeros)
    G = sp.csr_matrix((np.concatenate([v, v]), (np.concatenate([r, c]), np.concatenate([c, r]))), shape=(k, k))
    return dijkstra(G, directed=True)
