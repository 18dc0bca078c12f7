"""The estimation design path of ``solve`` (SPEC §3, docs/design.md).

:func:`_solve_design` routes ``estimation_variance`` problems (orbit closed form, column
generation, or the conic / Frank–Wolfe design over listed rays, the rays of the
budget-capped relaxation from :func:`mechopt.solvers.free._rays.relaxed_rays`), settles
each route's outcome (:mod:`mechopt._settle`) and keeps the better proven answer.

May import: :mod:`mechopt._settle` and :mod:`mechopt.solvers`. Not :mod:`mechopt._solve`,
which calls it.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ._problem import Problem
from ._result import SolveResult
from ._errors import InputError
from ._settle import constant_fallback, fail, finish, settle
from .solvers._outcome import Progress
from .solvers.design._convex import (DESIGN_REL_GAP, certified_design, design_cvxpy, design_frank_wolfe,
                                     design_lower_bound)
from .solvers.free._rays import DoubleDescriptionError, ray_count_estimate, relax_notions, relaxed_rays
from .solvers.labeled._structure import BUDGET_CAP

#: the conic design runs up to this many rays, Frank–Wolfe beyond
DESIGN_CVXPY_MAX_RAYS = 40_000


def _solve_design(problem: Problem, method: str, show: bool, timings: dict,
                  time_limit: float | None = None) -> SolveResult:

    from .solvers.design._route import route

    routed = route(problem, method, show, timings, time_limit)  # orbit or column generation
    if routed is None:
        return _solve_design_rays(problem, method, show, timings)
    routed = settle(problem, routed, timings)
    if routed.status == "optimal" or method != "auto":
        return routed
    estimate = ray_count_estimate(list(problem.notions), problem.k)
    if (estimate is None and problem.k > 12) or (estimate is not None and estimate > 20_000):
        return routed  # too many rays to list (unknown counts: judged by k)
    # column generation left a gap (its dual bound loses digits at tiny budgets: fuzz seed
    # 3 #207): the conic / Frank-Wolfe design over the listed rays may prove more
    other = _solve_design_rays(problem, method, show, dict(timings))
    return other if _proves_more(other, routed) else routed


def _proves_more(a: SolveResult, b: SolveResult) -> bool:
    """Whether result ``a`` is optimal, or feasible with a smaller relative gap than ``b``."""
    if a.status not in ("optimal", "feasible"):
        return False
    if a.status == "optimal" or b.status not in ("optimal", "feasible"):
        return True

    def rel(r: SolveResult) -> float:
        return math.inf if r.gap is None else r.gap / max(abs(r.objective or 0.0), 1e-300)

    return b.status == "feasible" and rel(a) < rel(b)


def _solve_design_rays(problem: Problem, method: str, show: bool, timings: dict) -> SolveResult:
    """The design over the listed rays: conic (cvxpy) or Frank-Wolfe, with a proven lower bound."""
    from .solvers._repair import tied_rows

    obj = problem.objective
    k = problem.k
    ties = tied_rows(list(problem.notions), k)
    if ties:
        names = [problem.inputs[int(x)] for x in ties[0]]
        return fail("error", f"inputs {names!r} must have identical rows in every channel (a zero budget between "
                    "them), so no channel identifies the input distribution: estimation_variance is infinite",
                    timings)
    t = time.perf_counter()
    # budgets above BUDGET_CAP are left out as for the other objectives: at eps = 300 the
    # cone's rays hold e^-300 next to 1 and no design identifies the distribution; the
    # relaxation's design is repaired into the full notions and its lower bound stays valid
    try:
        V, inv, V_bound = relaxed_rays(problem, relax_notions(list(problem.notions), k, BUDGET_CAP))
    except DoubleDescriptionError as err:  # fuzz seed 14 #8088
        return _rr_fallback(problem, timings, f"the extreme rays could not be enumerated ({err})")
    V_bound = None if V_bound is V else V_bound / V_bound.max(axis=0, keepdims=True)
    timings["rays"] = time.perf_counter() - t
    V = V / V.max(axis=0, keepdims=True)
    R = V.shape[1]
    requested = method
    if method == "auto":
        # measured (docs/benchmarks.md): the conic program is 5-30x faster than
        # Frank-Wolfe at every size we ran; LDP k = 14 (16 382 rays) takes 12.9 s and
        # k = 15 (32 766 rays) 38 s and 0.56 GB. Frank-Wolfe is the fallback beyond.
        method = "cvxpy" if R <= DESIGN_CVXPY_MAX_RAYS else "frank-wolfe"
    t = time.perf_counter()
    if method == "cvxpy":
        sol = design_cvxpy(V, obj.prior)
    elif method in ("frank-wolfe", "fw"):
        method = "frank-wolfe"
        bar = Progress("frank-wolfe", enabled=None if show else False)
        sol = design_frank_wolfe(V, obj.prior, progress=bar if show else None)
        bar.done()
    else:
        raise InputError("method", f"unknown design method {method!r}; expected 'cvxpy' or 'frank-wolfe'")
    found = certified_design(V, obj.prior, sol)
    if requested == "auto" and method == "cvxpy" and (found is None or not found.proven):
        # the conic solver failed, or its design is not certified within DESIGN_REL_GAP
        # (ill-conditioned information matrices): Frank-Wolfe, and keep the better
        fw = design_frank_wolfe(V, obj.prior, w0=found.weights if found is not None else None)
        other = certified_design(V, obj.prior, fw)
        if other is not None:
            lower = max(d.lower for d in (found, other) if d is not None)
            if found is None or other.value <= found.value:
                found, sol, method = other, fw, "frank-wolfe"
            found = found._replace(lower=lower)
    if found is not None and V_bound is not None:
        # the design uses rays inside the cone; its bound must cover a cone containing it
        lower = design_lower_bound(np.hstack([V, V_bound]), obj.prior,
                                   np.concatenate([found.weights, np.zeros(V_bound.shape[1])]))
        found = found._replace(lower=lower)
    timings["solve"] = time.perf_counter() - t
    if found is None:
        # no rows are tied (checked above), so some channel identifies the distribution:
        # the rays found do not (lost in the floating-point double description), or the
        # design solvers failed
        G = V[:-1, :] - V[-1:, :]
        why = ("the extreme rays found do not identify the input distribution, yet every budget is positive: rays "
               "were lost in the floating-point double description" if np.linalg.matrix_rank(G) < k - 1 else
               f"design failed: {sol.message}")
        return _rr_fallback(problem, timings, why)
    w = found.weights
    keep = w > 0
    Q = V[:, keep] * w[keep]
    # rows sum to 1 up to the LP's tolerance; renormalising moves them by ~1e-10
    Q = Q / Q.sum(axis=1, keepdims=True)
    inv_cols = inv[keep]
    outputs = tuple(f"y{j}" for j in range(Q.shape[1]))
    stats = {"method": method, "rays": R, **{k2: v for k2, v in sol.stats.items() if k2 != "rays"},
             "support": int(keep.sum())}
    mix = ~inv_cols if inv_cols.any() else None
    res = finish(problem, Q, outputs, found.lower, timings, stats, mix_columns=mix, proven=found.proven,
                 rel_gap=DESIGN_REL_GAP)
    if res.status == "error":
        return _rr_fallback(problem, timings, res.message, channels=(("the design's channel", Q, outputs, mix),),
                            bound=found.lower, proven=found.proven)
    return res


def _rr_fallback(problem: Problem, timings: dict, why: str, channels: tuple = (), bound: float | None = None,
                 proven: bool = False) -> SolveResult:
    """The estimation design's fallback: the best verified channel of :func:`mechopt._settle.constant_fallback`.

    The constant channel has an infinite risk, so the candidates that count are the
    design's own channel (``channels``, mixed toward a constant one until it verifies) and
    randomized response ``(1 - t) J / k + t I`` at the largest ``t`` that verifies: with no
    tied rows every notion allows it for some ``t > 0`` (a zero budget ties rows, and
    positive budgets leave the constant channel slack). Reported ``feasible`` unless a
    ``proven`` ``bound`` closes the gap; no bound when rays were lost (the design's bound
    is not valid then), the design's lower bound when only its repair failed.
    """
    return constant_fallback(problem, timings, {}, why, bound, channels=channels, proven=proven,
                             rel_gap=DESIGN_REL_GAP)
