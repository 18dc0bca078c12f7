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

import math
import time

import numpy as np
import scipy.sparse as sp

from ...notions import ELDP, ColumnConstraints, MetricLDP, Notion
from ...notions._base import _eldp_rows
from ...notions._eldp import _group_matrix
from ..backends._adapters import choose
from ._blocks import _column_block, _factored_block, _group_block, _invertible_caps, _merge_limits  # noqa: F401
from .._outcome import LABELED_REL_GAP, LabeledSolution
from .._repair import tied_rows
from ..backends._safe_bnb import safe_mip_bound
from ..backends._safe_bound import lp_lower_bound
from ..metric import METRIC_METHODS
from ._structure import BUDGET_CAP, column_system, components


def build_lp(notions: list[Notion], k: int, m: int, cost: np.ndarray, invertible: dict[int, list[int]], *,
             reduce: bool = True, budget_cap: float = BUDGET_CAP, linear_cost: bool = True):
    """Assemble ``(c, A_ub, b_ub, A_eq, b_eq, bounds, n_q, stats, integrality)``.

    Variables: ``Q[x, y]`` at ``x*m + y``, then auxiliaries. ``invertible`` maps an
    output column to the inputs it may carry mass from when it is used as one of ULDP's
    invertible outputs (Murakami & Kawamoto, Def. 2: any non-sensitive input). Which role
    each output takes is chosen by binaries (a MILP, see the comments below). Other
    notions hold on every column either way. Every variable of some optimal solution
    lies in [0, 1] (entries, their maxima and minima, the binaries and invertible masses)
    or below its own finite upper bound (the LIP forms ``P·q``: the prior's sum).
    ``linear_cost``: the objective is ``cost·Q`` and nothing else constrains the channel
    (no rows appended by ``solve_labeled``'s ``extend``); only then does the MILP bound
    how many invertible outputs an input uses (cut (e) below).
    """
    uldp = [n for n in notions if not getattr(n, "convex", True)]  # protected or invertible columns
    others = [n for n in notions if getattr(n, "convex", True)]
    cand = np.array(sorted(invertible), dtype=int)
    prot_cols = np.array([y for y in range(m) if y not in invertible], dtype=int)
    all_cols = np.arange(m)
    if uldp and len(cand):
        systems = [(column_system(others, k, reduce=reduce, budget_cap=budget_cap), all_cols)] if others else []
    else:
        systems = [(column_system(notions, k, reduce=reduce, budget_cap=budget_cap), all_cols)]
    n_q = k * m
    R, C, V, B = [], [], [], []
    row = 0
    aux = n_q
    stats = {"pairs_before": 0, "pairs_after": 0, "groups": 0}
    ER, EC, EV = [np.repeat(np.arange(k), m)], [np.arange(k * m)], [np.ones(k * m)]
    eq_row = k
    s_hi = []  # (variables, upper bounds) of the factored forms s = W q
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
            # s = W q with entries q in [0, 1]: s <= the sum of W's positive entries, which
            # for a prior summing to 1 + 1e-9 (accepted) is above the box [0, 1] of _safe
            w_hi = np.maximum(np.clip(W, 0.0, None).sum(axis=1) * (1 + 1e-12), 1.0)
            s_hi.append((aux + np.arange(naux), np.tile(w_hi, len(cols))))
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
        groups = [g for u in uldp for g in u.protected_part().column_constraints(k).groups if g[2] <= budget_cap]
        stats["groups"] += len(groups)
        # protected-only columns: the plain group
        (r, c, v), nrows, naux = _group_block(groups, prot_cols, m, k, row, aux)
        R.append(r), C.append(c), V.append(v)
        B.append(np.zeros(nrows))
        row += nrows
        aux += naux
        # candidate columns, split: Q[:, y] = p_y + sum_j a_j e_{x_j} over the pairs j = (y, x_j)
        # of this output with a non-sensitive owner x_j; p_y the protected part (ULDP's
        # group, unrelaxed up to the budget cap) and a_j the invertible mass; binaries r_j.
        # Each row below holds for EVERY ULDP channel (with its roles as r), but (e), which
        # holds for some optimal one only in the case stated:
        # (a) the split: a column of role "protected" is p_y (every a_j = 0), of role
        #     "invertible at x_j" is a_j e_{x_j} (p_y = 0); an all-zero column is either.
        #     Always.
        # (b) sum_j r_j <= 1: a column has one role (an invertible column has exactly one
        #     non-zero entry, so one owner; Def. 2). Always.
        # (c) p[x, y] <= 1 - sum_j r_j: entries of a channel are <= 1, and an invertible
        #     column has no protected part. Always. With the group being a cone, the
        #     relaxation of (b)-(d) is the convex hull of each column's union of roles.
        # (d) a_j <= cap_j r_j: cap_j is at least the mass any notion allows on a column
        #     a e_x (Notion.invertible_cap, widened for rounding; 1 = the entry bound when
        #     no notion caps it). Always; with the other notions' rows on the whole column
        #     the cap is implied, and it tightens ULDP alone's relaxation.
        # (e) sum over the pairs of owner x of r_j <= N_x (_merge_limits): only for a cost
        #     linear in Q with nothing else on the channel (linear_cost; no minimax epigraph,
        #     no min_truthful / max_frequency / max_loss rows, which moving mass between
        #     columns can break). Then mass moved among x's invertible columns into the
        #     cheapest ones keeps the objective and every notion, and leaves N_x of them
        #     non-zero: N_x = 1 for cones (two merge into the cheaper), more when (ε, δ)-LIP
        #     caps each invertible column's mass below 1 (N_x = 1 there was the false
        #     optimum of a fuzzed ULDP case: one input needed 2-3 invertible outputs).
        # (f) the other notions (convex) hold on the whole column Q = p + sum a e. Always.
        # Alone, ULDP lets the variables Q[x, y] of a candidate column hold p_y (the a_j
        # are added back by solve_labeled); with other notions, which must hold on the
        # whole column, p_y has its own variables and Q = p + sum a e are equality rows.
        pairs = [(int(y), int(x)) for y in cand for x in invertible[int(y)]]
        n_c = len(cand)
        n_p = len(pairs)
        col_of = {int(y): j for j, y in enumerate(cand)}
        pj_col = np.array([col_of[y] for y, _ in pairs], dtype=int)
        pj_owner = np.array([x for _, x in pairs], dtype=int)
        pj_out = np.array([y for y, _ in pairs], dtype=int)
        if others:
            p_base, p_stride, p_cols = aux, n_c, np.arange(n_c)  # p[x, j] at aux + x*n_c + j
            aux += k * n_c
        else:
            p_base, p_stride, p_cols = 0, m, cand
        (r, c, v), nrows, naux = _group_block(groups, p_cols, p_stride, k, row, aux, base=p_base)
        R.append(r), C.append(c), V.append(v)
        B.append(np.zeros(nrows))
        row += nrows
        aux += naux
        a_vars = aux + np.arange(n_p)
        binaries = aux + n_p + np.arange(n_p)
        aux += 2 * n_p
        # p[x, y] + sum_{j of y} r_j <= 1 for every x
        xs = np.tile(np.arange(k), n_c)
        js = np.repeat(np.arange(n_c), k)
        p_vars = p_base + xs * p_stride + p_cols[js]
        rows_p = row + js * k + xs  # row of (x, column j)
        R.append(rows_p), C.append(p_vars), V.append(np.ones(k * n_c))
        pr = np.repeat(np.arange(n_p), k)  # pair t, every x
        R.append(row + pj_col[pr] * k + np.tile(np.arange(k), n_p)), C.append(binaries[pr]), V.append(np.ones(n_p * k))
        B.append(np.ones(k * n_c))
        row += k * n_c
        # a_j - cap_j r_j <= 0
        rr = row + np.arange(n_p)
        R += [rr, rr]
        C += [a_vars, binaries]
        V += [np.ones(n_p), -_invertible_caps(notions, k, pj_owner)]
        B.append(np.zeros(n_p))
        row += n_p
        # (b) one role per output
        R.append(row + pj_col), C.append(binaries), V.append(np.ones(n_p))
        B.append(np.ones(n_c))
        row += n_c
        # (e) at most N_x invertible outputs per input (linear cost only); rows that cannot
        # bind (N_x >= the owner's number of pairs) are left out
        owners_u, owner_idx, n_pairs = np.unique(pj_owner, return_inverse=True, return_counts=True)
        limit = _merge_limits(notions, k, owners_u) if linear_cost else n_pairs
        stats["invertible_limit"] = dict(zip(owners_u.tolist(), np.minimum(limit, n_pairs).tolist()))
        binding = limit < n_pairs
        if binding.any():
            new_row = np.cumsum(binding) - 1  # row of each binding owner
            sel = binding[owner_idx]
            R.append(row + new_row[owner_idx[sel]]), C.append(binaries[sel]), V.append(np.ones(int(sel.sum())))
            B.append(limit[binding].astype(float))
            row += int(binding.sum())
        if others:
            # Q[x, y_j] - p[x, j] - sum_{pairs t of column j, owner x} a_t = 0; row (x, j) is eq_row + j*k + x
            er = eq_row + js * k + xs
            ER += [er, er, eq_row + pj_col * k + pj_owner]
            EC += [xs * m + cand[js], p_vars, a_vars]
            EV += [np.ones(k * n_c), -np.ones(k * n_c), -np.ones(n_p)]
            eq_row += k * n_c
        else:
            ER.append(pj_owner), EC.append(a_vars), EV.append(np.ones(n_p))
            extra_cost = (a_vars, cost[pj_owner, pj_out])
        stats["split_mass"] = (a_vars, pj_owner, pj_out, not others)
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
    for idx, hi in s_hi:
        bounds[idx, 1] = hi
    integrality = np.zeros(n, dtype=int)
    integrality[binaries] = 1
    stats.update(rows=row, variables=n, binaries=int(len(binaries)))
    return c, A_ub, b_ub, A_eq, b_eq, bounds, n_q, stats, integrality


def solve_labeled(notions: list[Notion], k: int, m: int, cost: np.ndarray,
                  invertible: dict[int, list[int]] | None = None, *, backend: str = "auto", reduce: bool = True,
                  square: bool = False, prior: np.ndarray | None = None, loss: np.ndarray | None = None,
                  budget_cap: float = BUDGET_CAP, gap_tol: float = 0.0, method: str = "auto",
                  time_limit: float | None = None, progress=None, extend=None,
                  rel_gap: float = LABELED_REL_GAP) -> LabeledSolution:
    """Solve the labeled LP (per independent component when possible), with a safe bound.

    With ``square`` (outputs = inputs) and pairwise E-LDP notions only, the LP is
    solved over the orbits of the problem's symmetry group (:mod:`mechopt.solvers.labeled._symmetry`).
    ``LabeledSolution.bound`` is a rigorous lower bound on the optimum
    (:func:`mechopt.solvers.backends._safe_bound.lp_lower_bound` on the dual of an LP that is the problem itself
    or a relaxation of it), ``-inf`` when none could be proven. A solver failure is
    retried with the other HiGHS method, then with budgets above 20 left out (a looser
    relaxation); the status says what failed if nothing works. ``gap_tol`` is the absolute
    gap at which a MILP's bound is good enough (ULDP's roles). Without symmetry, from
    k = 25 on (or with ``method="decompose"`` or ``"ipm"``), E-LDP / metric problems are solved
    by the structured interior-point method or the decomposition over the outputs
    (:mod:`mechopt.solvers.metric._route`); ``time_limit`` (seconds) then
    returns its best channel with a proven bound, and ``rel_gap`` is the relative gap at
    which they stop. ``extend``, if given, maps build_lp's
    ``(c, A_ub, b_ub, A_eq, b_eq, bounds, integrality, n_q, stats)`` to the first seven
    with rows and variables appended (every new variable in [0, 1] at some optimum;
    :mod:`mechopt._custom`); the LP is then solved whole (no components, no symmetry, no
    decomposition).
    """
    invertible = invertible or {}
    t0 = time.perf_counter()
    if reduce and square and not invertible and prior is not None and loss is not None and method not in METRIC_METHODS and extend is None:
        sol = _solve_symmetric(notions, k, cost, prior, loss, backend, budget_cap, time_limit)
        if sol is not None and sol.status == "optimal":
            sol.stats["total_s"] = time.perf_counter() - t0
            return sol
    if reduce and not invertible and extend is None and (method == "auto" or method in METRIC_METHODS) and (
            method != "auto" or k >= 25):
        from ..metric._route import metric_labeled

        left = None if time_limit is None else max(time_limit - (time.perf_counter() - t0), 0.0)
        sol = metric_labeled(notions, k, m, cost, method=method, time_limit=left, progress=progress, backend=backend,
                             rel_gap=rel_gap)
        if sol is not None and sol.Q is not None:
            sol.stats["total_s"] = time.perf_counter() - t0
            sol.bound = -math.inf if sol.bound is None else sol.bound
            return sol
    comps = components(notions, k) if (reduce and not invertible and extend is None) else [np.arange(k)]
    Q = np.zeros((k, m))
    total = 0.0
    bound = 0.0
    stats: dict = {"components": len(comps), "rows": 0, "variables": 0, "pairs_before": 0, "pairs_after": 0,
                   "groups": 0, "build_s": 0.0, "lp_s": 0.0}
    for comp in comps:
        sub = [_Restricted(n, comp, k) for n in notions] if len(comps) > 1 else notions
        part = None
        # a solver failure, or an answer whose safe bound shows it is not an optimum (HiGHS
        # can report "optimal" on rows holding e^30 next to 1), is retried: the other HiGHS
        # method, then budgets above 20 and 12 relaxed (looser relaxations, better conditioned)
        lower = [c for c in (20.0, 12.0) if c < budget_cap]
        if backend == "auto":
            tries = [(budget_cap, "auto"), (budget_cap, "other")] + [(c, "other") for c in lower]
        else:
            tries = [(budget_cap, backend)] + [(c, backend) for c in lower]
        best = None
        for cap, engine in tries:
            left = None if time_limit is None else max(time_limit - (time.perf_counter() - t0), 1e-3)
            part = _solve_component(sub, len(comp), m, cost[comp], invertible, engine, reduce, cap, stats,
                                    gap_tol / len(comps), left, extend)
            if part.status != "optimal":
                continue
            if best is None or part.objective < best.objective:
                best = LabeledSolution("optimal", part.Q, part.objective, "", stats,
                                       max(part.bound, best.bound) if best is not None else part.bound)
            else:
                best.bound = max(best.bound, part.bound)
            stopped = stats.pop("safe_bnb_stopped", False)
            if best.objective - best.bound <= max(gap_tol / len(comps), 1e-9 * abs(best.objective), 1e-12):
                break
            if stopped:
                break  # the MILP's branch and bound ran out of nodes or time: no solver failure to retry
            stats["retries"] = stats.get("retries", 0) + 1
        if best is None:
            stats["total_s"] = time.perf_counter() - t0
            return LabeledSolution("error", None, None, part.message, stats)
        part = best
        Q[comp] = part.Q
        total += part.objective
        bound += part.bound
    stats["total_s"] = time.perf_counter() - t0
    return LabeledSolution("optimal", Q, total, "", stats, bound)


def _greedy_roles(r: np.ndarray, owners: np.ndarray, outs: np.ndarray, limit: dict[int, int]) -> np.ndarray:
    """0/1 roles from fractional ones: pairs by decreasing ``r``, each output once, input ``x`` ``limit[x]`` times.

    A heuristic (any 0/1 roles meeting the MILP's rows give a feasible channel); its LP is
    kept only if it meets the relaxation's safe bound.

    Examples
    --------
    >>> _greedy_roles(np.array([0.9, 0.8, 0.7]), np.array([0, 0, 1]), np.array([0, 1, 1]), {0: 2, 1: 1}).tolist()
    [1.0, 1.0, 0.0]
    """
    roles = np.zeros(len(r))
    used_out: set[int] = set()
    used_in: dict[int, int] = {}
    for j in np.argsort(-r, kind="stable"):
        if r[j] <= 0.5:
            break
        y, x = int(outs[j]), int(owners[j])
        if y in used_out or used_in.get(x, 0) >= limit.get(x, 1):
            continue
        roles[j] = 1.0
        used_out.add(y)
        used_in[x] = used_in.get(x, 0) + 1
    return roles


#: nodes of the safe branch and bound of ULDP's MILP (k = 15 with (ε, δ)-LIP needed up to ~900)
_BNB_NODES = 2000

#: every variable of some optimal solution of build_lp's LP lies in [0, 1], or below its
#: own finite upper bound (the factored LIP forms P·q: the prior's sum, up to 1 + 1e-9)
_BOX = (0.0, 1.0)


def _safe(c, A_ub, b_ub, A_eq, b_eq, sol, bounds=None) -> float:
    """:func:`lp_lower_bound` over the box: [0, 1], or [0, hi] for a variable with a finite bound ``hi``."""
    n = len(c)
    hi = np.full(n, _BOX[1])
    if bounds is not None:
        b = np.asarray(bounds, dtype=float)
        if b.ndim == 2:
            hi = np.where(np.isfinite(b[:, 1]), np.maximum(b[:, 1], 0.0), _BOX[1])
    return lp_lower_bound(c, A_ub, b_ub, A_eq, b_eq, np.full(n, _BOX[0]), hi, sol.ub_duals, sol.eq_duals)


def _solve_component(sub, kc: int, m: int, cost: np.ndarray, invertible, backend: str, reduce: bool,
                     cap: float, stats: dict, gap_tol: float = 0.0, time_limit: float | None = None,
                     extend=None) -> LabeledSolution:
    """One component's LP (or MILP): primal channel, objective and safe bound."""
    tb = time.perf_counter()
    c, A_ub, b_ub, A_eq, b_eq, bounds, n_q, st, integrality = build_lp(sub, kc, m, cost, invertible, reduce=reduce,
                                                                       budget_cap=cap, linear_cost=extend is None)
    if extend is not None:
        c, A_ub, b_ub, A_eq, b_eq, bounds, integrality = extend(c, A_ub, b_ub, A_eq, b_eq, bounds, integrality,
                                                                n_q, st)
    milp = bool(integrality.any())
    ties = tied_rows(sub, kc) if not milp else []
    exact_ties = tied_rows(sub, kc, exact=True) if not milp else []
    data = (c, A_ub, b_ub, A_eq, b_eq, bounds)
    tie_map = None
    if ties:
        # rows forced equal (budgets below float resolution): one shared row of variables per group
        *data, tie_map = _tie_rows(c, A_ub, b_ub, A_eq, b_eq, bounds, kc, m, ties)
        stats["tied_rows"] = stats.get("tied_rows", 0) + sum(len(g) - 1 for g in ties)
    for key in ("rows", "variables", "pairs_before", "pairs_after", "groups"):
        stats[key] += st[key]
    stats["build_s"] += time.perf_counter() - tb
    adapter = choose(backend, size=st["variables"], retry=(backend == "other"))
    tl = time.perf_counter()
    stats.pop("safe_bnb_stopped", None)  # set below by this attempt's branch and bound only
    if milp:
        stats["binaries"] = st["binaries"]
        ints = integrality == 1
        # the LP relaxation first: when its roles are already 0/1 it is the MILP's optimum
        # (often so: each column's roles are written as their convex hull), and its safe
        # bound is the MILP's
        relax = adapter.solve(c, A_ub, b_ub, A_eq, b_eq, bounds)
        roles = None
        if relax.status == "optimal":
            # round the relaxation's roles (a greedy matching: largest first, one per output
            # and per input); if the LP with those roles meets the relaxation's safe bound,
            # no branching is needed
            r = relax.x[ints]
            roles = _greedy_roles(r, st["split_mass"][1], st["split_mass"][2], st["invertible_limit"])
            fixed = np.array(bounds, dtype=float)
            fixed[ints, 0] = fixed[ints, 1] = roles
            trial = adapter.solve(c, A_ub, b_ub, A_eq, b_eq, fixed)
            root = _safe(c, A_ub, b_ub, A_eq, b_eq, relax, bounds)
            if trial.status == "optimal" and root >= trial.objective - max(gap_tol, 1e-9 * abs(trial.objective)):
                sol, stats["roles_from"] = trial, "rounded lp relaxation"
            else:
                roles = None
        if roles is None:
            # "other" (a retry) names an LP method; the MILP is HiGHS either way
            sol = choose("auto" if backend == "other" else backend, milp=True).solve_milp(*data, integrality)
            roles, stats["roles_from"] = (np.round(sol.x[ints]) if sol.status == "optimal" else None), "milp"
        if roles is not None and stats["roles_from"] == "milp":
            # binaries are integral only to a feasibility tolerance (r = 1 - 1e-8 leaves 1e-8
            # of protected mass in an invertible column, which no repair can fix): fix the
            # roles and re-solve the LP
            fixed = np.array(bounds, dtype=float)
            fixed[ints, 0] = fixed[ints, 1] = roles
            lp = adapter.solve(c, A_ub, b_ub, A_eq, b_eq, fixed)
            if lp.status == "optimal":
                sol = lp
        # the safe bound: the LP relaxation's, and if it leaves a gap, branch and bound on
        # safe node bounds (HiGHS's own MIP bound is only as good as its tolerances)
        safe = -math.inf
        if sol.status == "optimal":
            tol = max(gap_tol, 1e-9 * abs(sol.objective))
            root = _safe(c, A_ub, b_ub, A_eq, b_eq, relax, bounds) if relax.status == "optimal" else -math.inf
            if root >= sol.objective - tol:
                safe = root
            else:
                # one search with room (2000 nodes, 60 s or what time_limit leaves): retrying
                # with another LP method restarts it from the root, which helps nothing
                left = 60.0 if time_limit is None else max(time_limit - (time.perf_counter() - tb), 1.0)
                safe, bb = safe_mip_bound(c, A_ub, b_ub, A_eq, b_eq, bounds, integrality, float(sol.objective), tol,
                                          node_limit=_BNB_NODES, time_limit=left,
                                          backend="highs" if backend in ("auto", "other") else backend)
                stats["safe_bnb_nodes"] = stats.get("safe_bnb_nodes", 0) + bb["nodes"]
                stats["safe_bnb_stopped"] = bb.get("open", 0) > 0  # at its node or time limit, nodes left
    else:
        sol = adapter.solve(*data, time_limit=time_limit)
        safe = -math.inf
        if sol.status == "optimal":
            if len(ties) == len(exact_ties) and all(np.array_equal(a, b) for a, b in zip(ties, exact_ties)):
                safe = _safe(*data[:5], sol, data[5])
            else:
                # some ties restrict (budgets in (0, 1e-12)): the bound comes from the LP with
                # only the exact ties (zero budgets), which is the problem itself
                d2 = (c, A_ub, b_ub, A_eq, b_eq, bounds)
                if exact_ties:
                    *d2, _ = _tie_rows(c, A_ub, b_ub, A_eq, b_eq, bounds, kc, m, exact_ties)
                other = adapter.solve(*d2)
                if other.status == "optimal":
                    safe = _safe(*d2[:5], other, d2[5])
    stats["lp_s"] += time.perf_counter() - tl
    stats["backend"] = adapter.name
    stats["lp_status"] = sol.status
    if sol.status != "optimal":
        return LabeledSolution("error", None, None, f"{adapter.name}: {sol.message} ({sol.status})", stats)
    x = sol.x if tie_map is None else tie_map @ sol.x
    Qc = x[:n_q].reshape(kc, m).copy()
    if "split_mass" in st:
        a_vars, owners, outs, alone = st["split_mass"]
        if alone:  # ULDP alone: the candidate columns' variables hold the protected part only
            np.add.at(Qc, (owners, outs), x[a_vars])
    return LabeledSolution("optimal", Qc, float(sol.objective), "", stats, safe)


def _solve_symmetric(notions, k, cost, prior, loss, backend, budget_cap=BUDGET_CAP,
                     time_limit=None) -> LabeledSolution | None:
    """The orbit LP, or None when the problem has no usable symmetry."""
    from ._structure import column_system
    from ._symmetry import automorphisms, orbit_reduce

    if not all(isinstance(n, (ELDP, MetricLDP)) for n in notions):
        return None
    if prior is None or len(np.unique(prior)) == k:
        return None  # a symmetry maps inputs to inputs of equal prior: all distinct, only the identity
    tb = time.perf_counter()
    sysm = column_system(notions, k, budget_cap=budget_cap)
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
    c, A_ub, b_ub, A_eq, b_eq, bounds, n_q, st, _ = build_lp(notions, k, k, cost, {}, budget_cap=budget_cap)
    c_r, A_r, b_r, E_r, be_r, S = orbit_reduce(A_ub, b_ub, A_eq, b_eq, c, k, perms)
    stats = {"components": 1, "rows": A_r.shape[0], "variables": A_r.shape[1], "rows_full": st["rows"],
             "variables_full": st["variables"], "symmetries": len(perms), "pairs_before": sysm.n_pairs_before,
             "pairs_after": sysm.n_pairs_after, "groups": 0, "symmetry_s": t_sym,
             "build_s": time.perf_counter() - tb}
    adapter = choose(backend, size=A_r.shape[1])
    tl = time.perf_counter()
    sol = adapter.solve(c_r, A_r, b_r, E_r, be_r, (0, None), time_limit=time_limit)
    stats["lp_s"] = time.perf_counter() - tl
    stats["backend"] = adapter.name
    if sol.status != "optimal":
        return LabeledSolution(sol.status, None, None, f"{adapter.name}: {sol.message}", stats)
    Q = (S @ sol.x).reshape(k, k)
    # orbit variables are channel entries: the box [0, 1] holds; the orbit LP's optimum is
    # the full LP's (average an optimal channel over the group), so its bound is valid
    return LabeledSolution("optimal", Q, float(sol.objective), "", stats, _safe(c_r, A_r, b_r, E_r, be_r, sol))


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
