"""The labeled LP: minimise the expected loss over channels with fixed outputs.

::

    minimise    sum_x P(x) sum_y Q[x, y] L(x, y)
    subject to  sum_y Q[x, y] = 1                  for every input x
                Q[:, y] in the privacy cone         for every output y
                Q >= 0

Assembled directly as sparse matrices from :func:`column_system` (clique groups with
two auxiliary variables per column, implied pairs dropped) and split into independent
components when the notions allow it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._notions import ULDP, ColumnConstraints, Notion, _eldp_rows, _group_matrix
from ._backends import get_backend
from ._repair import tied_rows
from ._structure import column_system, components


@dataclass
class LabeledSolution:
    status: str
    Q: np.ndarray | None
    objective: float | None
    message: str
    stats: dict
    bound: float | None = None  # a proven bound when it is not the LP value (decomposition)


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


def build_lp(notions: list[Notion], k: int, m: int, cost: np.ndarray, invertible: dict[int, int], *,
             reduce: bool = True):
    """Assemble ``(c, A_ub, b_ub, A_eq, b_eq, bounds, n_q, stats, integrality)``.

    Variables: ``Q[x, y]`` at ``x*m + y``, then auxiliaries. ``invertible`` maps an
    output column to the one input it may carry mass from when it is used as ULDP's
    invertible output. Whether it is, is a binary ``r_y`` (a MILP): ``r_y = 1``
    relaxes ULDP's LDP group on that column (``u - e^ε l <= r_y``; entries are <= 1)
    and forces every other entry to zero (``Q[x, y] <= 1 - r_y``); ``r_y = 0`` makes
    it protected. Other notions hold on every column either way.
    """
    uldp = [n for n in notions if isinstance(n, ULDP)]
    others = [n for n in notions if not isinstance(n, ULDP)]
    cand = np.array(sorted(invertible), dtype=int)
    prot_cols = np.array([y for y in range(m) if y not in invertible], dtype=int)
    all_cols = np.arange(m)
    if uldp and len(cand):
        systems = [(column_system(others, k, reduce=reduce), all_cols)] if others else []
    else:
        systems = [(column_system(notions, k, reduce=reduce), all_cols)]
    n_q = k * m
    R, C, V, B = [], [], [], []
    row = 0
    aux = n_q
    stats = {"pairs_before": 0, "pairs_after": 0, "groups": 0}
    ER, EC, EV = [np.repeat(np.arange(k), m)], [np.arange(k * m)], [np.ones(k * m)]
    eq_row = k
    for sysm, cols in systems:
        stats["pairs_before"] += sysm.n_pairs_before
        stats["pairs_after"] += sysm.n_pairs_after
        stats["groups"] += len(sysm.groups)
        A_plain, b_plain = sysm.A, sysm.b
        if reduce and sysm.factored is not None:
            A_q, A_s, W = sysm.factored
            nf = A_q.shape[0]
            A_plain, b_plain = sysm.A[: sysm.A.shape[0] - nf], sysm.b[: len(sysm.b) - nf]
            (r, c, v), nrows, naux, (er, ec, ev), neq = _factored_block(A_q, A_s, W, cols, m, row, aux, eq_row)
            R.append(r), C.append(c), V.append(v)
            B.append(np.tile(sysm.b[len(sysm.b) - nf:], len(cols)))
            ER.append(er), EC.append(ec), EV.append(ev)
            row += nrows
            aux += naux
            eq_row += neq
            stats["factored_aux"] = stats.get("factored_aux", 0) + naux
        (r, c, v), nrows = _column_block(A_plain, cols, m, row)
        R.append(r), C.append(c), V.append(v)
        B.append(np.tile(b_plain, len(cols)))
        row += nrows
        (r, c, v), nrows, naux = _group_block(sysm.groups, cols, m, k, row, aux)
        R.append(r), C.append(c), V.append(v)
        B.append(np.zeros(nrows))
        row += nrows
        aux += naux
    binaries = np.zeros(0, dtype=int)
    extra_cost = None
    if uldp and len(cand):
        groups = [g for u in uldp for g in u.groups(k)]
        stats["groups"] += len(groups)
        # protected-only columns: the plain group
        (r, c, v), nrows, naux = _group_block(groups, prot_cols, m, k, row, aux)
        R.append(r), C.append(c), V.append(v)
        B.append(np.zeros(nrows))
        row += nrows
        aux += naux
    if uldp and len(cand) and (reduce or not others):
        # candidate columns, split: Q[:, y] = p_y + a_y e_owner with p_y protected (the
        # group, unrelaxed) and a_y the invertible mass; r_y = 1 empties p_y, r_y = 0
        # empties a_y. Its LP relaxation is much tighter than relaxing the ratio rows by
        # r_y (the big-M form below), so branch and bound needs far fewer nodes. Alone,
        # ULDP lets the variables Q[x, y] of a candidate column hold p_y (a_y is added
        # back by solve_labeled); with other notions, which must hold on the whole
        # column, p_y has its own variables and Q = p + a e_owner are equality rows.
        n_bin = len(cand)
        owners = np.array([invertible[int(y)] for y in cand], dtype=int)
        if others:
            p_base, p_stride, p_cols = aux, n_bin, np.arange(n_bin)  # p[x, j] at aux + x*n_bin + j
            aux += k * n_bin
        else:
            p_base, p_stride, p_cols = 0, m, cand
        (r, c, v), nrows, naux = _group_block(groups, p_cols, p_stride, k, row, aux, base=p_base)
        R.append(r), C.append(c), V.append(v)
        B.append(np.zeros(nrows))
        row += nrows
        aux += naux
        a_vars = aux + np.arange(n_bin)
        binaries = aux + n_bin + np.arange(n_bin)
        aux += 2 * n_bin
        xs = np.tile(np.arange(k), n_bin)
        js = np.repeat(np.arange(n_bin), k)
        p_vars = p_base + xs * p_stride + p_cols[js]
        # p[x, y] + r_y <= 1 for every x;  a_y - r_y <= 0
        rr = row + np.arange(k * n_bin)
        R += [rr, rr]
        C += [p_vars, binaries[js]]
        V += [np.ones(k * n_bin), np.ones(k * n_bin)]
        B.append(np.ones(k * n_bin))
        row += k * n_bin
        rr = row + np.arange(n_bin)
        R += [rr, rr]
        C += [a_vars, binaries]
        V += [np.ones(n_bin), -np.ones(n_bin)]
        B.append(np.zeros(n_bin))
        row += n_bin
        if others:
            # Q[x, y_j] - p[x, j] - [x = owner_j] a_j = 0; row (x, j) is eq_row + j*k + x
            er = eq_row + np.arange(k * n_bin)
            ER += [er, er, eq_row + np.arange(n_bin) * k + owners]
            EC += [xs * m + cand[js], p_vars, a_vars]
            EV += [np.ones(k * n_bin), -np.ones(k * n_bin), -np.ones(n_bin)]
            eq_row += k * n_bin
        else:
            ER.append(owners), EC.append(a_vars), EV.append(np.ones(n_bin))
            extra_cost = (a_vars, cost[owners, cand])
            stats["split_mass"] = (a_vars, owners, cand)
    elif uldp and len(cand):
        # candidate columns: the group, its last rows relaxed by r_y
        n_bin = len(cand)
        (r, c, v), nrows, naux = _group_block(groups, cand, m, k, row, aux)
        bin0 = aux + naux
        binaries = bin0 + np.arange(n_bin)
        R.append(r), C.append(c), V.append(v)
        B.append(np.zeros(nrows))
        # rows u - e^eps l <= 0 are the last n_bin rows of each group's block
        per_group = nrows // len(groups)
        for gi in range(len(groups)):
            last = row + (gi + 1) * per_group - n_bin + np.arange(n_bin)
            R.append(last), C.append(binaries), V.append(-np.ones(n_bin))
        row += nrows
        aux += naux + n_bin
        # Q[x, y] + r_y <= 1 for x other than the owner
        rr, cc, vv = [], [], []
        for j, y in enumerate(cand):
            owner = invertible[int(y)]
            xs = np.array([x for x in range(k) if x != owner], dtype=int)
            rows_here = row + np.arange(len(xs))
            rr += [rows_here, rows_here]
            cc += [xs * m + y, np.full(len(xs), binaries[j])]
            vv += [np.ones(len(xs)), np.ones(len(xs))]
            row += len(xs)
            B.append(np.ones(len(xs)))
        if rr:
            R.append(np.concatenate(rr)), C.append(np.concatenate(cc)), V.append(np.concatenate(vv))
    n = aux
    A_ub = sp.csr_matrix((np.concatenate(V), (np.concatenate(R), np.concatenate(C))), shape=(row, n))
    b_ub = np.concatenate(B) if B else np.zeros(0)
    A_eq = sp.csr_matrix((np.concatenate(EV), (np.concatenate(ER), np.concatenate(EC))), shape=(eq_row, n))
    b_eq = np.concatenate([np.ones(k), np.zeros(eq_row - k)])
    c = np.zeros(n)
    c[:n_q] = cost.ravel()
    if extra_cost is not None:
        c[extra_cost[0]] = extra_cost[1]
    bounds = np.zeros((n, 2))
    bounds[:, 1] = np.inf
    bounds[binaries, 1] = 1.0
    integrality = np.zeros(n, dtype=int)
    integrality[binaries] = 1
    stats.update(rows=row, variables=n, binaries=int(len(binaries)))
    return c, A_ub, b_ub, A_eq, b_eq, bounds, n_q, stats, integrality


def solve_labeled(notions: list[Notion], k: int, m: int, cost: np.ndarray, invertible: dict[int, int] | None = None,
                  *, backend: str = "auto", reduce: bool = True, square: bool = False,
                  prior: np.ndarray | None = None, loss: np.ndarray | None = None, method: str = "auto",
                  time_limit: float | None = None, progress=None) -> LabeledSolution:
    """Solve the labeled LP (per independent component when possible).

    With ``square`` (outputs = inputs) and pairwise E-LDP notions only, the LP is
    solved over the orbits of the problem's symmetry group (:mod:`._symmetry`); without
    symmetry, from k = 25 on (or with ``method="decompose"``), by decomposition over
    the outputs (:mod:`._metric_lp`).
    """
    invertible = invertible or {}
    t0 = time.perf_counter()
    if reduce and square and not invertible and prior is not None and loss is not None and method != "decompose":
        sol = _solve_symmetric(notions, k, cost, prior, loss, backend, time_limit)
        if sol is not None:
            sol.stats["total_s"] = time.perf_counter() - t0
            return sol
    if reduce and not invertible and method in ("auto", "decompose") and (method == "decompose" or k >= 25):
        from ._metric_lp import decomposed

        sol = decomposed(notions, k, m, cost, time_limit=time_limit, progress=progress)
        if sol is not None:
            sol.stats["total_s"] = time.perf_counter() - t0
            return sol
    comps = components(notions, k) if (reduce and not invertible) else [np.arange(k)]
    Q = np.zeros((k, m))
    total = 0.0
    stats: dict = {"components": len(comps), "rows": 0, "variables": 0, "pairs_before": 0, "pairs_after": 0,
                   "groups": 0, "build_s": 0.0, "lp_s": 0.0}
    for comp in comps:
        tb = time.perf_counter()
        sub = [_Restricted(n, comp, k) for n in notions] if len(comps) > 1 else notions
        kc = len(comp)
        c, A_ub, b_ub, A_eq, b_eq, bounds, n_q, st, integrality = build_lp(sub, kc, m, cost[comp], invertible,
                                                                           reduce=reduce)
        ties = tied_rows(sub, kc) if not integrality.any() else []
        tie_map = None
        if ties:
            # rows forced equal (zero budgets): one shared row of variables per group
            c, A_ub, b_ub, A_eq, b_eq, bounds, tie_map = _tie_rows(c, A_ub, b_ub, A_eq, b_eq, bounds, kc, m, ties)
            stats["tied_rows"] = stats.get("tied_rows", 0) + sum(len(g) - 1 for g in ties)
        for key in ("rows", "variables", "pairs_before", "pairs_after", "groups"):
            stats[key] += st[key]
        stats["build_s"] += time.perf_counter() - tb
        name = backend
        if backend == "auto":
            name = "highs-ipm" if st["variables"] > 1000 else "highs"
        adapter = get_backend(name)
        tl = time.perf_counter()
        if integrality.any():
            stats["binaries"] = st["binaries"]
            adapter = get_backend("highs")
            sol = adapter.solve_milp(c, A_ub, b_ub, A_eq, b_eq, bounds, integrality)
            if sol.status == "optimal":
                # the MILP's binaries are integral only to its feasibility tolerance
                # (r = 1 - 1e-8 leaves 1e-8 of protected mass in an invertible column,
                # which no repair can fix): fix the roles and re-solve the LP
                ints = integrality == 1
                fixed = np.array(bounds, dtype=float)
                fixed[ints, 0] = fixed[ints, 1] = np.round(sol.x[ints])
                lp = adapter.solve(c, A_ub, b_ub, A_eq, b_eq, fixed)
                if lp.status == "optimal":
                    sol = lp
        else:
            left = None if time_limit is None else max(time_limit - (time.perf_counter() - t0), 1e-3)
            sol = adapter.solve(c, A_ub, b_ub, A_eq, b_eq, bounds, time_limit=left)
        stats["lp_s"] += time.perf_counter() - tl
        stats["backend"] = adapter.name
        if sol.status != "optimal":
            return LabeledSolution(sol.status, None, None, f"{adapter.name}: {sol.message}", stats)
        x = sol.x if tie_map is None else tie_map @ sol.x
        Qc = x[:n_q].reshape(kc, m).copy()
        if "split_mass" in st:  # ULDP candidate columns: p_y + a_y e_owner
            a_vars, owners, cand = st["split_mass"]
            Qc[owners, cand] += x[a_vars]
        Q[comp] = Qc
        total += sol.objective
    stats["total_s"] = time.perf_counter() - t0
    return LabeledSolution("optimal", Q, total, "", stats)


def _solve_symmetric(notions, k, cost, prior, loss, backend, time_limit=None) -> LabeledSolution | None:
    """The orbit LP, or None when the problem has no usable symmetry."""
    from ._structure import column_system
    from ._symmetry import automorphisms, orbit_reduce

    if any(n.name not in ("eldp", "metric") for n in notions):
        return None
    tb = time.perf_counter()
    sysm = column_system(notions, k)
    if sysm.groups:
        return None
    E_pruned = np.full((k, k), np.inf)
    coo = sysm.A.tocoo()
    # recover the kept pairs' budgets from the rows q[x] - e^E q[x'] <= 0
    pos = coo.data > 0
    neg = ~pos
    rows_x = dict(zip(coo.row[pos].tolist(), coo.col[pos].tolist()))
    for r, xp in zip(coo.row[neg].tolist(), coo.col[neg].tolist()):
        E_pruned[rows_x[r], xp] = sysm.E[rows_x[r], xp]
    np.fill_diagonal(E_pruned, 0.0)
    perms = automorphisms(E_pruned, prior, loss)
    t_sym = time.perf_counter() - tb
    if len(perms) <= 1:
        return None
    c, A_ub, b_ub, A_eq, b_eq, bounds, n_q, st, _ = build_lp(notions, k, k, cost, {})
    c_r, A_r, b_r, E_r, be_r, S = orbit_reduce(A_ub, b_ub, A_eq, b_eq, c, k, perms)
    stats = {"components": 1, "rows": A_r.shape[0], "variables": A_r.shape[1], "rows_full": st["rows"],
             "variables_full": st["variables"], "symmetries": len(perms), "pairs_before": sysm.n_pairs_before,
             "pairs_after": sysm.n_pairs_after, "groups": 0, "symmetry_s": t_sym,
             "build_s": time.perf_counter() - tb}
    name = "highs-ipm" if backend == "auto" else backend
    adapter = get_backend(name)
    tl = time.perf_counter()
    sol = adapter.solve(c_r, A_r, b_r, E_r, be_r, (0, None), time_limit=time_limit)
    stats["lp_s"] = time.perf_counter() - tl
    stats["backend"] = adapter.name
    if sol.status != "optimal":
        return LabeledSolution(sol.status, None, None, f"{adapter.name}: {sol.message}", stats)
    Q = (S @ sol.x).reshape(k, k)
    return LabeledSolution("optimal", Q, float(sol.objective), "", stats)


def _tie_rows(c, A_ub, b_ub, A_eq, b_eq, bounds, k, m, ties):
    """Substitute one shared row of variables for each group of tied inputs."""
    from ._symmetry import _dedup

    n = len(c)
    rep = np.arange(k)
    for g in ties:
        rep[g] = g.min()
    target = np.arange(n)
    xs = np.arange(k * m) // m
    ys = np.arange(k * m) % m
    target[: k * m] = rep[xs] * m + ys
    uniq, new = np.unique(target, return_inverse=True)
    S = sp.csr_matrix((np.ones(n), (np.arange(n), new)), shape=(n, len(uniq)))
    A_r, b_r = _dedup((A_ub @ S).tocsr(), b_ub)
    # a tied group's row sums are one equation; keep one
    E_r, be_r = _dedup((A_eq @ S).tocsr(), b_eq)
    c_r = S.T @ c
    bnd = np.asarray(bounds, dtype=float)
    lo = np.full(len(uniq), -np.inf)
    hi = np.full(len(uniq), np.inf)
    np.maximum.at(lo, new, bnd[:, 0])
    np.minimum.at(hi, new, bnd[:, 1])
    return c_r, A_r, b_r, E_r, be_r, np.column_stack([lo, hi]), S


class _Restricted:
    """An E-LDP-type notion seen on a subset ``idx`` of the inputs (component splitting).

    Only its per-column constraints are used (the LP of one component), so it is not a
    full :class:`~mechopt._notions.Notion`.
    """

    def __init__(self, base: Notion, idx: np.ndarray, k_full: int):
        self.base = base
        self.idx = np.asarray(idx)
        self.k_full = k_full
        self.name = base.name

    def column_constraints(self, k: int) -> ColumnConstraints:
        if hasattr(self.base, "groups"):
            pos = {int(x): i for i, x in enumerate(self.idx)}
            gs = []
            for upper, lower, eps in self.base.groups(self.k_full):
                u = np.array([pos[int(a)] for a in upper if int(a) in pos], dtype=int)
                l_ = np.array([pos[int(b)] for b in lower if int(b) in pos], dtype=int)
                if len(u) and len(l_):
                    gs.append((u, l_, eps))
            return ColumnConstraints(k, sp.csr_matrix((0, k)), np.zeros(0), tuple(gs), _group_matrix(k, gs))
        E = self.base.eldp_matrix(self.k_full)[np.ix_(self.idx, self.idx)]
        A, b = _eldp_rows(E)
        return ColumnConstraints(k, A, b, eldp=E)

    def eldp_matrix(self, k: int) -> np.ndarray:
        return self.column_constraints(k).eldp
