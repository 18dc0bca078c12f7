"""Sparse row blocks of the labeled LP (:mod:`mechopt.solvers.labeled._lp`) and ULDP's per-input limits.

Each block builder returns ``(rows, cols, vals)`` triplets, the number of rows and of
auxiliary variables it adds; ``build_lp`` stacks them. ``_invertible_caps`` and
``_merge_limits`` give, per owner of an invertible column, the mass the notions allow
on it and how many such columns some optimal channel needs.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...notions import Notion


def _column_block(A: sp.csr_matrix, cols: np.ndarray, m: int, row0: int):
    """Rows ``A q_y <= b`` for every column y in ``cols`` (variables x*m + y)."""
    coo = A.tocoo()
    r = A.shape[0]
    nc = len(cols)
    if r == 0 or nc == 0:
        return (np.zeros(0, int), np.zeros(0, int), np.zeros(0)), 0
    j = np.repeat(np.arange(nc), len(coo.data))
    i = np.tile(coo.row, nc)
    x = np.tile(coo.col, nc)
    v = np.tile(coo.data, nc)
    rows = row0 + j * r + i
    vars_ = x * m + cols[j]
    return (rows, vars_, v), nc * r


def _group_block(groups, cols: np.ndarray, m: int, k: int, row0: int, aux0: int, base: int = 0):
    """Two auxiliary variables (u, l) per group and column: q[U] <= u, l <= q[L], u <= e^eps l.

    Entry ``(x, y)`` of the column is variable ``base + x*m + y``.
    """
    R, C, V = [], [], []
    row = row0
    aux = aux0
    nc = len(cols)
    for upper, lower, eps in groups:
        upper = np.asarray(upper, dtype=int)
        lower = np.asarray(lower, dtype=int)
        u = aux + np.arange(nc)
        l_ = aux + nc + np.arange(nc)
        aux += 2 * nc
        # q[a, y] - u_y <= 0
        nu = len(upper)
        rr = row + np.arange(nc * nu)
        yy = np.repeat(cols, nu)
        aa = np.tile(upper, nc)
        R += [rr, rr]
        C += [base + aa * m + yy, np.repeat(u, nu)]
        V += [np.ones(nc * nu), -np.ones(nc * nu)]
        row += nc * nu
        # l_y - q[b, y] <= 0
        nl = len(lower)
        rr = row + np.arange(nc * nl)
        yy = np.repeat(cols, nl)
        bb = np.tile(lower, nc)
        R += [rr, rr]
        C += [np.repeat(l_, nl), base + bb * m + yy]
        V += [np.ones(nc * nl), -np.ones(nc * nl)]
        row += nc * nl
        # u_y - e^eps l_y <= 0
        rr = row + np.arange(nc)
        R += [rr, rr]
        C += [u, l_]
        V += [np.ones(nc), np.full(nc, -np.exp(eps))]
        row += nc
    if not R:
        return (np.zeros(0, int), np.zeros(0, int), np.zeros(0)), 0, 0
    return (np.concatenate(R), np.concatenate(C), np.concatenate(V)), row - row0, aux - aux0


def _factored_block(A_q: sp.csr_matrix, A_s: sp.csr_matrix, W: np.ndarray, cols: np.ndarray, m: int,
                    row0: int, aux0: int, eq0: int):
    """Rows ``A_q q_y + A_s s_y <= b`` and equalities ``s_y = W q_y`` for every column y.

    ``s_y`` (``W.shape[0]`` auxiliaries per column, e.g. ``P·q_y`` for each LIP prior)
    turns LIP's dense rows ``q[x] <= e^ε P·q`` into rows with 2 non-zeros: O(k²)
    non-zeros in all instead of O(k³).
    """
    nc = len(cols)
    nf, nw = A_s.shape
    (r1, c1, v1), _ = _column_block(A_q, cols, m, row0)
    coo = A_s.tocoo()
    j = np.repeat(np.arange(nc), len(coo.data))
    r2 = row0 + j * nf + np.tile(coo.row, nc)
    c2 = aux0 + j * nw + np.tile(coo.col, nc)
    v2 = np.tile(coo.data, nc)
    ineq = (np.concatenate([r1, r2]), np.concatenate([c1, c2]), np.concatenate([v1, v2]))
    wi, wx = np.nonzero(W)
    j = np.repeat(np.arange(nc), len(wi))
    er = eq0 + j * nw + np.tile(wi, nc)
    ec = np.tile(wx, nc) * m + cols[j]
    ev = np.tile(W[wi, wx], nc)
    s_rows = eq0 + np.arange(nc * nw)
    eq = (np.concatenate([er, s_rows]), np.concatenate([ec, aux0 + np.arange(nc * nw)]),
          np.concatenate([ev, -np.ones(nc * nw)]))
    return ineq, nc * nf, nc * nw, eq, nc * nw


def _invertible_caps(notions: list[Notion], k: int, owners: np.ndarray) -> np.ndarray:
    """The largest mass an invertible column ``a e_x`` may carry (each notion's :meth:`invertible_cap`)."""
    cap = np.ones(len(owners))
    for n in notions:
        c = n.invertible_cap(k, owners)
        if c is not None:
            cap = np.minimum(cap, c)
    return cap


def _merge_limits(notions: list[Notion], k: int, owners: np.ndarray) -> np.ndarray:
    """Per owner ``x``: how many invertible outputs at ``x`` some optimal channel needs at most.

    Valid for a cost linear in ``Q`` and nothing else on the channel (see build_lp's cut
    (e)). The columns ``a e_x`` the notions allow are ``0 <= a <= c`` for some ``c``
    (cones: ``c = inf`` or 0; (ε, δ)-LIP: its cap). Moving mass among the invertible
    columns of ``x`` into the cheapest ones, each filled to ``c``, leaves at most
    ``ceil(A / c) <= ceil(1 / c)`` of them non-zero (``A <= 1`` is the row's invertible
    mass); the emptied columns are 0, which every notion allows. So: 1 when no notion
    caps ``a e_x`` below 1, else ``floor((1 + 1e-9) / c') + 1`` with ``c'`` the (widened)
    cap the LP uses: at least ``ceil(1 / c)`` for every true cap ``c >= c' / (1 + 1e-9)``.

    Examples
    --------
    >>> from mechopt.notions import LIP
    >>> _merge_limits([LIP(1.0, [0.5, 0.5], delta=0.1)], 2, np.array([0, 1])).tolist()   # cap 0.2
    [6, 6]
    >>> _merge_limits([LIP(1.0, [0.5, 0.5])], 2, np.array([0, 1])).tolist()              # a cone
    [1, 1]
    """
    cap = np.full(len(owners), np.inf)
    for n in notions:
        c = n.invertible_cap(k, owners)
        if c is not None:
            cap = np.minimum(cap, c)
    with np.errstate(divide="ignore"):
        many = np.floor((1 + 1e-9) / cap) + 1
    return np.where(cap >= 1 + 1e-9, 1, np.minimum(many, np.iinfo(np.int32).max)).astype(int)
