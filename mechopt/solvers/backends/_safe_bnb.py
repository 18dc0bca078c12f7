"""A proven lower bound for a 0/1 mixed-integer LP: branch and bound on safe LP bounds.

HiGHS's MIP solver finds the labeled ULDP roles (an incumbent) quickly, but its dual
bound is as good as its tolerances. The bound mechopt reports must be safe
(:mod:`mechopt.solvers.backends._safe_bound`), so when the LP relaxation's safe bound does not already close the
gap, this module branches on the binaries itself: every node's LP is solved by HiGHS and
bounded by :func:`._safe_bound.lp_lower_bound` over the node's box; a node is pruned when
its safe bound reaches the incumbent less the tolerance. The global bound is the least
safe bound of the open nodes — valid whenever the search stops (node or time limit).
"""

from __future__ import annotations

import heapq
import math
import time

import numpy as np

from ._adapters import get_backend
from ._safe_bound import lp_lower_bound


def safe_mip_bound(c, A_ub, b_ub, A_eq, b_eq, bounds, integrality, incumbent: float, tol: float, *,
                   box_hi: float = 1.0, node_limit: int = 400, time_limit: float = 60.0,
                   backend: str = "highs") -> tuple[float, dict]:
    """A rigorous lower bound on ``min c·x`` over the MILP, at least ``incumbent - tol`` if it can.

    Parameters
    ----------
    c, A_ub, b_ub, A_eq, b_eq : the MILP's data
    bounds : ndarray (n, 2)
        The variables' bounds; integer variables must be binaries (bounds [0, 1]).
    integrality : ndarray (n,)
        1 for the binaries.
    incumbent : float
        The objective of a known feasible solution.
    tol : float
        Absolute gap at which a node is pruned.
    box_hi : float
        An upper bound that holds for every variable of some optimal solution (for the
        safe bound of continuous variables whose own upper bound is infinite).

    Returns
    -------
    (bound, stats)
        ``bound`` is ``-inf`` if no node's LP could be bounded.

    Examples
    --------
    >>> import numpy as np
    >>> # min -x0 - x1 s.t. x0 + x1 <= 1.5, binaries: optimum -1 (the LP relaxation says -1.5)
    >>> c = np.array([-1.0, -1.0]); A = np.array([[1.0, 1.0]]); b = np.array([1.5])
    >>> bnd, st = safe_mip_bound(c, A, b, None, None, np.array([[0, 1], [0, 1.0]]), np.array([1, 1]), -1.0, 1e-9)
    >>> -1.0 - 1e-9 <= bnd <= -1.0
    True
    """
    t0 = time.perf_counter()
    lp = get_backend(backend)
    bounds = np.array(bounds, dtype=float)
    ints = np.flatnonzero(np.asarray(integrality) == 1)

    def node_bound(bd: np.ndarray):
        sol = lp.solve(c, A_ub, b_ub, A_eq, b_eq, bd)
        if sol.status == "infeasible":
            # pruned only if infeasibility is proven (a positive safe phase-1 bound)
            return None, (math.inf if _proven_infeasible(A_ub, b_ub, A_eq, b_eq, bd, box_hi, lp) else -math.inf)
        if sol.status != "optimal":
            return None, -math.inf
        lo = bd[:, 0].copy()
        hi = np.where(np.isfinite(bd[:, 1]), bd[:, 1], box_hi)
        return sol, lp_lower_bound(c, A_ub, b_ub, A_eq, b_eq, lo, hi, sol.ub_duals, sol.eq_duals)

    root_sol, root_lb = node_bound(bounds)
    stats = {"nodes": 1, "root_bound": root_lb}
    if root_sol is None or root_lb >= incumbent - tol:
        return root_lb, stats
    counter = 0
    heap = [(root_lb, counter, bounds, root_sol)]
    unresolved = []  # nodes whose LP failed: their bound stays -inf
    pruned_min = math.inf
    nodes = 1
    while heap:
        lb, _, bd, sol = heap[0]
        if lb >= incumbent - tol:
            break
        if nodes >= node_limit or time.perf_counter() - t0 > time_limit:
            break
        heapq.heappop(heap)
        x = sol.x
        frac = np.abs(x[ints] - np.round(x[ints]))
        free = bd[ints, 0] < bd[ints, 1]
        frac = np.where(free, frac, -1.0)
        j = int(np.argmax(frac))
        if frac[j] <= 1e-9:
            # integral at the LP's tolerance: branch on the free binary closest to 1/2 anyway,
            # unless none is free (then the node is a leaf: its safe bound is final)
            cand = np.flatnonzero(free)
            if not len(cand):
                unresolved.append(lb)
                continue
            j = int(cand[np.argmin(np.abs(x[ints][cand] - 0.5))])
        var = ints[j]
        for value in (1.0, 0.0):
            child = bd.copy()
            child[var] = value
            nodes += 1
            csol, clb = node_bound(child)
            if csol is None:
                if clb == -math.inf:
                    unresolved.append(-math.inf)
                continue  # proven infeasible: pruned
            if clb < incumbent - tol:
                counter += 1
                heapq.heappush(heap, (clb, counter, child, csol))
            else:
                pruned_min = min(pruned_min, clb)
    # the optimum lies in an open, unresolved or pruned node: the least of their safe bounds
    bound = min([h[0] for h in heap] + unresolved + [pruned_min])
    if not math.isfinite(bound) and bound > 0:
        bound = incumbent  # every node pruned as infeasible but the incumbent's: it is optimal
    stats.update(nodes=nodes, open=len(heap), seconds=time.perf_counter() - t0)
    return float(bound), stats


def _proven_infeasible(A_ub, b_ub, A_eq, b_eq, bd: np.ndarray, box_hi: float, lp) -> bool:
    """True when a safe bound proves ``{A_ub x <= b_ub, A_eq x = b_eq, bd}`` empty.

    Phase 1: ``min sum(t) + sum(s+ + s-)`` with ``A_ub x - t <= b_ub`` and
    ``A_eq x + s+ - s- = b_eq``; a safe lower bound above 0 proves there is no ``x``.
    """
    import scipy.sparse as sp

    n = bd.shape[0]
    mu = 0 if A_ub is None else A_ub.shape[0]
    me = 0 if A_eq is None else A_eq.shape[0]
    c = np.concatenate([np.zeros(n), np.ones(mu + 2 * me)])
    Aub = None
    if mu:
        Aub = sp.hstack([sp.csr_matrix(A_ub), -sp.identity(mu), sp.csr_matrix((mu, 2 * me))]).tocsr()
    Aeq = None
    if me:
        Aeq = sp.hstack([sp.csr_matrix(A_eq), sp.csr_matrix((me, mu)), sp.identity(me), -sp.identity(me)]).tocsr()
    bounds = np.vstack([bd, np.column_stack([np.zeros(mu + 2 * me), np.full(mu + 2 * me, np.inf)])])
    sol = lp.solve(c, Aub, b_ub if mu else None, Aeq, b_eq if me else None, bounds)
    if sol.status != "optimal":
        return False
    lo = bounds[:, 0].copy()
    hi = np.where(np.isfinite(bounds[:, 1]), bounds[:, 1], np.inf)
    hi[:n] = np.where(np.isfinite(bd[:, 1]), bd[:, 1], box_hi)
    # the slacks' reduced costs are 1 - |y| >= 0, often exactly 0: shrinking the duals a
    # little makes them positive, so the slacks' infinite upper bounds do not void the bound
    shrink = 1.0 - 1e-6
    y_ub = None if sol.ub_duals is None else sol.ub_duals * shrink
    y_eq = None if sol.eq_duals is None else sol.eq_duals * shrink
    return lp_lower_bound(c, Aub, b_ub if mu else None, Aeq, b_eq if me else None, lo, hi, y_ub, y_eq) > 0
