"""Symmetry reduction of the labeled LP (orbit LP).

If a permutation ``g`` of the inputs maps the problem onto itself — the prior, every
notion's pairwise budgets and the loss (outputs = inputs, acted on by the same ``g``)
— then averaging an optimal channel over the group ``G`` gives an optimal channel that
is invariant: ``Q[g x, g y] = Q[x, y]``. So the LP can be solved over one variable per
*orbit* of input/output pairs, and one constraint per orbit of constraints: about
``|G|`` times smaller. A 20×20 grid with a uniform prior has the 8 symmetries of the
square.

Automorphisms are found with networkx's VF2++ on the graph of the non-implied E-LDP
pairs (coloured by budget and prior), then checked on the full data; enumeration stops
at ``max_group`` elements, and any subgroup found is still a valid reduction.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def automorphisms(E: np.ndarray, prior: np.ndarray, loss: np.ndarray, *, max_group: int = 64,
                  time_budget: int = 200) -> list[np.ndarray]:
    """Input permutations preserving ``E`` (pruned pairs), ``prior`` and ``loss``.

    Returns a list of permutation arrays ``g`` (``g[x]`` is the image of ``x``),
    always containing the identity.
    """
    import networkx as nx

    k = len(prior)
    ident = np.arange(k)
    fin = np.isfinite(E) & ~np.eye(k, dtype=bool)
    if fin.sum() == 0 or fin.sum() > 40 * k:
        return [ident]  # dense or empty: not the sparse structures this is for
    g = nx.DiGraph()
    for x in range(k):
        g.add_node(x, c=f"{prior[x]:.15g}|{loss[x, x]:.15g}")
    xs, xps = np.nonzero(fin)
    for a, b in zip(xs.tolist(), xps.tolist()):
        g.add_edge(a, b, c=f"{E[a, b]:.15g}")
    out = []
    try:
        it = nx.vf2pp_all_isomorphisms(g, g, node_label="c")
        for count, mapping in enumerate(it):
            if count >= time_budget or len(out) >= max_group:
                break
            perm = np.array([mapping[x] for x in range(k)])
            if _preserves(perm, E, prior, loss):
                out.append(perm)
    except (nx.NetworkXException, KeyError):
        return [ident]
    if not any(np.array_equal(p, ident) for p in out):
        out.insert(0, ident)
    return out


def _preserves(perm: np.ndarray, E: np.ndarray, prior: np.ndarray, loss: np.ndarray) -> bool:
    if not np.allclose(prior[perm], prior, rtol=0, atol=0):
        return False
    if not np.array_equal(E[np.ix_(perm, perm)], E):
        return False
    return bool(np.array_equal(loss[np.ix_(perm, perm)], loss))


def orbit_reduce(A_ub: sp.csr_matrix, b_ub: np.ndarray, A_eq: sp.csr_matrix, b_eq: np.ndarray, c: np.ndarray,
                 k: int, perms: list[np.ndarray]):
    """Reduce the labeled LP (variables ``x*k + y``, no auxiliaries) to orbit variables.

    Returns ``(c_r, A_ub_r, b_ub_r, A_eq_r, b_eq_r, S)`` with ``Q.ravel() = S @ z``.
    Constraint rows are mapped through ``S`` and de-duplicated (rows in one orbit
    become identical).
    """
    n = k * k
    idx = np.arange(n)
    xs, ys = idx // k, idx % k
    images = np.stack([p[xs] * k + p[ys] for p in perms])  # (|G|, n)
    rep = images.min(axis=0)
    # orbits are closed under the group, so min over the group's images is a canonical id
    uniq, orbit = np.unique(rep, return_inverse=True)
    S = sp.csr_matrix((np.ones(n), (idx, orbit)), shape=(n, len(uniq)))
    c_r = S.T @ c
    A_r = (A_ub @ S).tocsr()
    A_r, b_r = _dedup(A_r, b_ub)
    E_r = (A_eq @ S).tocsr()
    E_r, be_r = _dedup(E_r, b_eq)
    return c_r, A_r, b_r, E_r, be_r, S


def _dedup(A: sp.csr_matrix, b: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """Drop repeated rows (same pattern, values and right-hand side)."""
    A.sort_indices()
    seen = {}
    keep = []
    for r in range(A.shape[0]):
        lo, hi = A.indptr[r], A.indptr[r + 1]
        key = (A.indices[lo:hi].tobytes(), np.round(A.data[lo:hi], 12).tobytes(), round(float(b[r]), 12))
        if key not in seen:
            seen[key] = r
            keep.append(r)
    keep = np.array(keep, dtype=int)
    return A[keep], b[keep]
