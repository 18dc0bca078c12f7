"""Combine the notions of a problem into per-column constraints, reduced.

Reductions (each one is exact — it never changes the feasible set):

* **Cliques with one ε** (LDP, block, high-low, WC-LIP, the protected columns of
  ULDP): ``max_{x in U} q[x] <= e^ε min_{x in L} q[x]`` becomes ``q[x] <= u``,
  ``l <= q[x']`` and ``u <= e^ε l`` with two auxiliary variables per column:
  ``|U| + |L| + 1`` rows instead of ``|U|·|L|``. For LDP at k = 60 that is 121 rows
  per column instead of 3 540.
* **Implied E-LDP pairs**: the pair ``(x, x')`` is dropped when a path through other
  inputs, made of pieces each strictly cheaper than ``E[x, x']``, costs at most
  ``E[x, x']`` (shortest paths, Floyd–Warshall). Soundness: by induction on the
  budget, every dropped pair is implied by kept ones. For a metric on a graph this
  keeps only the edges.
* **Independent components**: when only E-LDP-type notions are present and ``E`` is
  infinite in both directions between groups of inputs, the rows of each group form
  an independent LP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...notions import Notion


@dataclass(frozen=True)
class ColumnSystem:
    """All conditions on one (protected) column after reduction."""

    k: int
    A: sp.csr_matrix  # rows: A q <= b
    b: np.ndarray
    groups: tuple  # ((upper idx, lower idx, eps), ...)
    E: np.ndarray  # combined pairwise budgets (inf = none), diagonal 0
    n_pairs_before: int
    n_pairs_after: int
    # the last rows of A, factored as A_q q + A_s s <= b with s = W q (see ColumnConstraints)
    factored: tuple[sp.csr_matrix, sp.csr_matrix, np.ndarray] | None = None


def _closure(E: np.ndarray) -> np.ndarray:
    """All-pairs shortest paths (Floyd–Warshall, vectorised; Dijkstra from every input when few pairs are finite)."""
    k = E.shape[0]
    fin = np.isfinite(E) & ~np.eye(k, dtype=bool)
    if k > 64 and np.count_nonzero(fin) <= 0.05 * k * k:
        from scipy.sparse.csgraph import dijkstra

        r, c = np.nonzero(fin)  # budgets are >= 0 (zero diagonal); stored zeros stay edges
        return dijkstra(sp.csr_matrix((E[r, c], (r, c)), shape=(k, k)), directed=True)
    D = E.copy()
    for z in range(D.shape[0]):
        np.minimum(D, D[:, z : z + 1] + D[z : z + 1, :], out=D)
    return D


def prune_pairs(E_pairs: np.ndarray, E_known: np.ndarray) -> np.ndarray:
    """Return the pairs of ``E_pairs`` not implied by ``min(E_pairs, E_known)``.

    ``E_known`` are budgets enforced some other way (clique groups). A pair is
    implied when ``E_known[x, x'] <= E_pairs[x, x']``, or when some ``z`` gives
    ``D[x,z] + D[z,x'] <= E[x,x']`` with both pieces strictly below ``E[x,x']``.
    """
    k = E_pairs.shape[0]
    E_all = np.minimum(E_pairs, E_known)
    D = _closure(E_all)
    keep = np.isfinite(E_pairs) & ~np.eye(k, dtype=bool)
    keep &= ~(E_known <= E_pairs)
    for x in range(k):
        targets = np.flatnonzero(keep[x])
        if len(targets) == 0:
            continue
        w = E_pairs[x, targets]  # (t,)
        left = D[x, :][:, None]  # (k, 1): x -> z
        right = D[:, targets]  # (k, t): z -> x'
        ok = (left < w) & (right < w) & (left + right <= w)
        ok[x, :] = False
        ok[targets, np.arange(len(targets))] = False
        keep[x, targets[ok.any(axis=0)]] = False
    out = np.full((k, k), np.inf)
    out[keep] = E_pairs[keep]
    np.fill_diagonal(out, 0.0)
    return out


#: budgets above this are left out of the LPs (a relaxation: the bound stays valid) —
#: e^30 = 1.1e13 next to 1 in a row is as much as an LP solver's tolerances can carry
#: (HiGHS treats |a| >= 1e15 as infinite: e^34.5); a channel optimal without them is
#: repaired into them by mixing at a cost of about m e^-30 (see solvers/_repair.py)
BUDGET_CAP = 30.0


def column_system(notions: list[Notion], k: int, *, reduce: bool = True, include_uldp: bool = True,
                  budget_cap: float = math.inf) -> ColumnSystem:
    """Combine all notions into the conditions on a protected column.

    Conditions whose budget exceeds ``budget_cap`` are left out (a relaxation).
    """
    from ...notions._eldp import _group_matrix

    groups = []
    E_groups = np.full((k, k), np.inf)
    E_pairs = np.full((k, k), np.inf)
    np.fill_diagonal(E_groups, 0.0)
    np.fill_diagonal(E_pairs, 0.0)
    rows_A = []
    rows_b = []
    fq, fs, fw, fb = [], [], [], []
    for n in notions:
        if not getattr(n, "convex", True) and not include_uldp:
            continue
        if math.isfinite(budget_cap) and hasattr(n, "relaxed"):  # a component view is relaxed below
            n = n.relaxed(k, budget_cap)
            if n is None:
                continue
        cc = n.column_constraints(k)
        if cc.groups:
            kept = tuple(g for g in cc.groups if g[2] <= budget_cap)
            groups.extend(kept)
            E_groups = np.minimum(E_groups, _group_matrix(k, kept))
        elif cc.eldp is not None:
            # E-LDP given pairwise (eldp, metric): the pruning below keeps what is needed
            E = np.where(cc.eldp > budget_cap, np.inf, cc.eldp)
            E_pairs = np.minimum(E_pairs, E)
        elif cc.factored is not None:
            fq.append(cc.factored[0])
            fs.append(cc.factored[1])
            fw.append(cc.factored[2])
            fb.append(cc.b)
        else:
            rows_A.append(cc.A)
            rows_b.append(cc.b)
    before = int(np.sum(np.isfinite(E_pairs))) - k
    E_kept = prune_pairs(E_pairs, E_groups) if reduce else E_pairs
    if not reduce and groups:
        # no reduction: expand the groups into explicit pairs as well
        E_kept = np.minimum(E_kept, E_groups)
        groups = []
    after = int(np.sum(np.isfinite(E_kept))) - k
    xs, xps = np.nonzero(np.isfinite(E_kept) & ~np.eye(k, dtype=bool))
    n = len(xs)
    if n:
        rr = np.repeat(np.arange(n), 2)
        cc_ = np.column_stack([xs, xps]).ravel()
        vv = np.column_stack([np.ones(n), -np.exp(E_kept[xs, xps])]).ravel()
        rows_A.insert(0, sp.csr_matrix((vv, (rr, cc_)), shape=(n, k)))
        rows_b.insert(0, np.zeros(n))
    factored = None
    if fq:
        A_q = sp.vstack(fq).tocsr()
        A_s = sp.block_diag(fs, format="csr")
        W = np.vstack(fw)
        factored = (A_q, A_s, W)
        rows_A.append((A_q + A_s @ sp.csr_matrix(W)).tocsr())
        rows_b.extend(fb)
    A = sp.vstack(rows_A).tocsr() if rows_A else sp.csr_matrix((0, k))
    b = np.concatenate(rows_b) if rows_b else np.zeros(0)
    E = np.minimum(E_pairs, E_groups)
    return ColumnSystem(k, A, b, tuple(groups), E, before, after, factored)


def components(notions: list[Notion], k: int) -> list[np.ndarray]:
    """Input groups that form independent problems (E infinite both ways between them)."""
    import networkx as nx

    E = np.full((k, k), np.inf)
    for n in notions:
        M = n.eldp_matrix(k)
        if M is None:
            return [np.arange(k)]
        E = np.minimum(E, M)
    g = nx.Graph()
    g.add_nodes_from(range(k))
    xs, xps = np.nonzero(np.isfinite(E) & ~np.eye(k, dtype=bool))
    g.add_edges_from(zip(xs.tolist(), xps.tolist()))
    return [np.array(sorted(c)) for c in sorted(nx.connected_components(g), key=min)]


def unit_allowed(problem, x: int) -> bool:
    """Whether a column ``c e_x`` (``c > 0``, ULDP's invertible role) meets every other notion.

    For a cone this is decided by ``e_x`` itself, exactly. The solvers relax budgets above
    the cap (``q[x] <= e^300 q[x']`` is dropped), so they would use an invertible column
    that such a budget forbids, which no repair can fix (invertible columns are not mixed).
    (ε, δ)-LIP with δ > 0 allows ``c e_x`` for small ``c``: it is not asked.
    """
    from ..._verify import check_notion

    e = np.zeros((problem.k, 1))
    e[x, 0] = 1.0
    return all(check_notion(e, n).ok for n in problem.notions if n.convex and not getattr(n, "delta", 0))
