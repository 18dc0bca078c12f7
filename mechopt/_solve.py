"""``solve``: from a problem to an exactly verified, exported mechanism.

The dispatcher: it routes a problem to the solvers (:mod:`mechopt.solvers`, which return
candidates and never call back up) and alone turns what they return into the answer —
repaired, verified exactly, fallen back to the best verified standard channel, its status
set (:mod:`mechopt._settle`; the estimation design's path in :mod:`mechopt._solve_design`).
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import replace
from typing import Callable

import numpy as np

from ._errors import InputError, MechoptError
from .notions import LDP, LIP
from .objectives import column_utility, objective_scale, offset_sign
from ._problem import Problem, load_problem
from ._result import SolveResult
from ._threads import blas_threads, solver_threads
from ._settle import constant_fallback, fail, finish, noted, settle
from .solvers._outcome import LABELED_REL_GAP, LabeledSolution, Progress, memory_mb, progress_reports
from .solvers.labeled._lp import solve_labeled
from .solvers.metric import METRIC_METHODS
from .solvers.free._raylp import channel_from_rays, column_generation, column_generation_separable, solve_ray_lp
from .solvers.free._rays import (MAX_ENUMERATED, DoubleDescriptionError, ray_count_estimate, relax_notions,
                                 relaxed_rays)
from .solvers.backends._safe_bound import ray_upper_bound
from .solvers.labeled._structure import BUDGET_CAP, unit_allowed
from .solvers.backends._adapters import retry_note, retry_order, solve_with_retry


#: the values of ``solve(method=...)``
METHODS = ("auto", "rays", "colgen", "cvxpy", "frank-wolfe", "fw", *METRIC_METHODS, "lp", "orbit")

#: a labeled LP that failed on every HiGHS method is retried through cvxpy up to this many variables
LABELED_RETRY_MAX_VARIABLES = 40_000

def solve(problem: Problem | dict | str, *, backend: str = "auto", method: str = "auto",
          reduce: bool = True, quiet: bool = False, progress: "bool | None | Callable" = None,
          time_limit: float | None = None, gap: float | None = None) -> SolveResult:
    """Find the optimal channel for a problem, repair it to exact feasibility, verify it.

    Parameters
    ----------
    problem : Problem, dict or path
        See :func:`mechopt.load_problem` and SPEC §5.
    backend : str
        LP back-end: ``"auto"``, ``"highs"``, ``"highs-ipm"``, ``"highs-ds"`` or
        ``"cvxpy:SOLVER"``.
    method : str
        ``"auto"``; for free outputs ``"rays"`` (enumerate extreme rays) or
        ``"colgen"`` (column generation with exact pricing: MMSE, histogram MSE, mutual
        information, Bayes risk on LDP, block, high-low, ULDP, LIP; see
        :mod:`mechopt.solvers.free._route`) or ``"orbit"`` (LDP, uniform prior); for
        ``estimation_variance`` ``"cvxpy"`` or ``"frank-wolfe"``; for labeled E-LDP /
        metric privacy ``"ipm"`` (structured interior-point method, any prior; the
        default from 25 places where it was measured to win: pairs with a band order,
        as a grid's neighbours, or at most 150 places), ``"lazy"`` (the IPM with its own,
        growing set of pairs per output; the default for places without a grid's
        structure from 100 to 200 places), ``"outputs"`` (the IPM over a growing set of
        outputs, each other output priced exactly), ``"relax"`` (the IPM on the pairs
        of small budget, a relaxation, its channel lifted into the full cone: ``feasible``
        with a proven gap; the default for metrics with too many pairs for the IPM from
        150 places), ``"decompose"`` (decomposition over outputs) or ``"lp"`` (one LP).
    reduce : bool
        Use the constraint reductions (clique groups, implied pairs, components).
    quiet : bool
        No progress display.
    progress : bool or callable, optional
        ``True``/``False``: draw progress whatever ``quiet`` says. A callable receives
        every progress report of a long solve as a
        :class:`~mechopt.solvers._outcome.ProgressRecord` (the method running, its
        iteration, value, bound and gap in the problem's units, elapsed seconds, memory);
        the display then follows ``quiet``. On a terminal the line is redrawn in place;
        otherwise a line is written every 10 s (``MECHOPT_PROGRESS_INTERVAL``).
    time_limit : float, optional
        Seconds for the labeled LP, or for the column generation of free outputs (which
        then returns its channel with status ``"feasible"`` and the proven gap). The decomposition then returns its best mechanism
        with status ``"feasible"`` and the proven gap; a single LP that runs out of time
        is an ``"error"`` saying so.
    gap : float, optional
        Labeled outputs: the relative gap (to the exported channel's value) at which the
        answer counts as ``"optimal"``, default ``1e-7``. The metric routes (``ipm``,
        ``lazy``, ``outputs``, ``relax``, ``decompose``) stop as soon as they prove it, so a
        looser gap ends a large solve sooner (20×20 Euclidean places: docs/geo.md). Free
        outputs are solved to their own tolerance: a ``gap`` there is bad input.

    Returns
    -------
    SolveResult
        ``status`` is ``"optimal"`` for a proven, verified optimum. A solver failure
        is a status with a message, never an exception. ``stats["peak_memory_mb"]`` is the
        process's peak resident memory at the end of the solve (``getrusage`` ``ru_maxrss``).

    Raises
    ------
    InputError
        For a malformed problem (raised before any solving).

    Examples
    --------
    >>> from mechopt import solve
    >>> r = solve({"k": 3, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
    ...            "objective": {"kind": "expected_loss", "loss": "hamming"}})
    >>> r.status, r.certificate.verified
    ('optimal', True)
    >>> abs(r.bound - 2 / (2 + 2.718281828459045)) < 1e-9      # k-RR error
    True
    """
    if not isinstance(problem, Problem):
        problem = load_problem(problem)
    if method not in METHODS:
        raise InputError("method", f"unknown method {method!r}; expected one of {list(METHODS)}")
    rel_gap = LABELED_REL_GAP if gap is None else _checked_gap(gap, problem)
    if backend != "auto":
        from .solvers.backends._adapters import get_backend

        get_backend(backend)  # an unknown back-end is bad input, raised before any solving
    callback = progress if callable(progress) else None
    show = True if callback is not None else ((not quiet) if progress is None else bool(progress))
    display = (not quiet) if callback is not None else show
    threads = blas_threads()  # a bad MECHOPT_BLAS_THREADS is bad input, raised before any solving
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    try:
        with solver_threads(threads), progress_reports(callback, display):
            if problem.free_outputs:
                result = _solve_free(problem, backend, method, show, timings, time_limit)
            else:
                result = _solve_labeled(problem, backend, reduce, timings, method=method, time_limit=time_limit,
                                        show=show, rel_gap=rel_gap)
        if isinstance(result.stats, dict):
            result.stats.setdefault("blas_threads", threads)
            peak = memory_mb()[1]
            if peak is not None:
                result.stats["peak_memory_mb"] = round(peak, 1)
            if result.gap is not None and result.objective is not None:
                # the relative gap the status was judged by (mechopt._settle.finish)
                result.stats["relative_gap"] = result.gap / max(abs(result.objective),
                                                                objective_scale(problem.objective), 1e-300)
        return result
    except InputError:
        raise
    except MechoptError as err:
        return fail("error", str(err), timings)
    except (np.linalg.LinAlgError, FloatingPointError, ValueError, ArithmeticError) as err:
        return fail("error", f"numerical trouble: {err}", timings)
    finally:
        timings.setdefault("total", time.perf_counter() - t0)


def _checked_gap(gap, problem: Problem) -> float:
    """The caller's relative gap: a number in ``(0, 1)``, for labeled outputs only.

    >>> _checked_gap(1e-6, load_problem({"k": 2, "privacy": [{"notion": "ldp", "epsilon": 1}],
    ...                                  "objective": {"kind": "expected_loss", "loss": "hamming"}}))
    1e-06
    """
    if isinstance(gap, bool) or not isinstance(gap, (int, float)) or not 0 < float(gap) < 1:
        raise InputError("gap", f"must be a relative gap between 0 and 1 (e.g. 1e-6), got {gap!r}")
    if problem.free_outputs:
        raise InputError("gap", "applies to labeled outputs (the LP and metric routes); free outputs are "
                                "solved to their own tolerance")
    return float(gap)


def _solve_labeled(problem: Problem, backend: str, reduce: bool, timings: dict, *, method: str = "auto",
                   time_limit: float | None = None, show: bool = False,
                   rel_gap: float = LABELED_REL_GAP) -> SolveResult:
    obj = problem.objective
    k, m = problem.k, len(problem.outputs)
    invertible: dict[int, list[int]] = {}
    mixed = [n for n in problem.notions if not n.convex]  # ULDP: protected or invertible columns
    sens: set[int] = set()
    if mixed:
        # any output may be invertible at any input every such notion allows (ULDP: any
        # non-sensitive input, Murakami & Kawamoto, Def. 2) where a unit column meets the
        # other notions (their full budgets: the solvers relax budgets above the cap)
        allowed = set.intersection(*[set(n.invertible_inputs(k)) for n in mixed])
        owners = [x for x in sorted(allowed) if unit_allowed(problem, x)]
        sens = set(range(k)) - set(owners)
        if owners:
            invertible = {y: owners for y in range(m)}
    ext = None
    form = obj.type.labeled_form(obj)
    if problem.constraints or form.loss is None:
        # not a plain expected loss (minimax, weighted) or extra constraints: rows appended to the same LP
        from ._custom import labeled_extension

        ext = labeled_extension(problem)
        cost = ext.cost
    else:
        cost = form.cost
    t = time.perf_counter()
    square = tuple(problem.outputs) == tuple(problem.inputs)
    if method in ("rays", "colgen", "cvxpy", "frank-wolfe", "fw"):
        method = "auto"  # free-output methods (e.g. one method for a whole batch): ignored here
    if method not in ("auto", *METRIC_METHODS, "lp"):
        raise InputError("method", f"unknown method {method!r} for labeled outputs; expected 'auto', "
                         + ", ".join(repr(name) for name in METRIC_METHODS) + " or 'lp'")
    bar = Progress("labeled LP", enabled=None if show else False, offset=ext.offset if ext is not None else 0.0,
                   scale=objective_scale(obj))
    sol = solve_labeled(list(problem.notions), k, m, cost, invertible, backend=backend, reduce=reduce,
                        square=square, prior=obj.prior, loss=obj.loss,
                        gap_tol=0.5 * rel_gap * objective_scale(obj), extend=ext and ext.extend, method=method, time_limit=time_limit,
                        progress=bar if show else None, rel_gap=rel_gap)
    bar.done()
    retried = ""
    if (sol.status == "error" and k * m <= LABELED_RETRY_MAX_VARIABLES
            and not (time_limit is not None and time.perf_counter() - t >= time_limit)):
        # every HiGHS method failed (solve_labeled retries them): once more on another back-end
        first = sol
        for other in [b for b in retry_order(backend, size=k * m) if b.startswith("cvxpy:")][:1]:
            again = solve_labeled(list(problem.notions), k, m, cost, invertible, backend=other, reduce=reduce,
                                  square=square, prior=obj.prior, loss=obj.loss,
                                  gap_tol=0.5 * rel_gap * objective_scale(obj), extend=ext and ext.extend,
                                  method=method, time_limit=time_limit, rel_gap=rel_gap)
            failed = [(backend if backend != "auto" else "highs", first.message)]
            if again.status == "optimal":
                retried = retry_note("the LP", failed, other, True)
                sol = again
            else:
                failed.append((other, again.message))
                retried = retry_note("the LP", failed, other, False)
                sol = LabeledSolution(first.status, None, None, retried, dict(first.stats))
    timings["solve"] = time.perf_counter() - t
    if sol.status == "feasible" and sol.Q is not None:
        # stopped by the time limit with a proven bound: the gap decides the status. The
        # solver's own gap is the one before the repair: the answer states its final gap
        note = _without_gap(sol.message)
        res = finish(problem, sol.Q, tuple(problem.outputs), sol.bound, timings, sol.stats,
                     rel_gap=rel_gap, message=note)
        return replace(res, message="") if res.status == "optimal" and res.message == note else res
    if sol.status != "optimal":
        if ext is not None and ext.constraints:
            # the extra constraints may exclude every channel: the constant one may not be a way out
            status = "infeasible" if sol.stats.get("lp_status") == "infeasible" else "error"
            why = ("no channel meets the privacy notions and the constraints together" if status == "infeasible"
                   else "the LP solver failed")
            if status == "error":
                res = constant_fallback(problem, timings, sol.stats, f"{why} ({sol.message})", check=ext.check,
                                        rel_gap=rel_gap)
                if res.status != "error":
                    return res
            return fail(status, f"{why} ({sol.message})", timings, sol.stats)
        # the constant channel meets every notion: a labeled problem is never infeasible
        return constant_fallback(problem, timings, sol.stats, f"the LP solver failed ({sol.message})",
                                 rel_gap=rel_gap)
    if ext is not None and math.isfinite(sol.bound):
        # the constant part of the objective (minimax epigraphs), added with its rounding
        total = sol.bound + ext.offset
        sol.bound = total - 4 * np.finfo(float).eps * (abs(sol.bound) + abs(ext.offset))
    mix = None
    Q = sol.Q
    if invertible:
        # the MILP chose each column's role: mix only into the protected columns
        from .solvers._repair import clean

        Q = clean(sol.Q, 1e-12)
        mix = np.array([not (np.count_nonzero(Q[:, y]) == 1 and int(np.flatnonzero(Q[:, y])[0]) not in sens)
                        for y in range(m)])
    if retried:
        sol.stats = dict(sol.stats, lp_retry=retried)
    check = ext.check if ext is not None else None
    res = finish(problem, Q, tuple(problem.outputs), sol.bound, timings, sol.stats, mix_columns=mix,
                 rel_gap=rel_gap, check=check)
    if res.status == "error":
        fb = constant_fallback(problem, timings, sol.stats, res.message, bound=sol.bound, rel_gap=rel_gap,
                               channels=(("the LP's channel", Q, tuple(problem.outputs), mix),), check=check)
        if fb.status == "error" and ext is not None and ext.constraints:
            return res
        return noted(fb, retried)
    return noted(res, retried)


def _without_gap(message: str) -> str:
    """A solver's message without its own gaps (before the repair, relative to its own scale).

    The answer states one gap, its exported channel's (:func:`mechopt._settle.finish`).

    >>> _without_gap("time limit: 1 of 2 relaxations; 2 relaxations: proven relative gap 1.89e-02")
    'time limit: 1 of 2 relaxations; 2 relaxations'
    >>> _without_gap("iteration limit at relative gap 1.7e-07; proven relative gap 1.68e-07")
    'iteration limit'
    """
    out = re.sub(r"(:\s*|;\s*|^)proven relative gap [-+0-9.e]+", "", message)
    out = re.sub(r"\s+at relative gap [-+0-9.e]+", "", out)
    return out.strip("; ")


def _colgen_kind(problem: Problem) -> tuple[str, float, np.ndarray] | None:
    """(cone kind, eps, prior) when column generation applies.

    ``"lip"``/``"ldp"``: MMSE with exact pricing; ``"lip-separable"``: histogram MSE or
    mutual information on a LIP cone (Lagrangian bound). The LIP pricing works on the
    slice ``P·v = 1``, where the column's utility has the simple form used, only when
    the objective's prior is the LIP prior.
    """
    from .objectives import MMSE

    if len(problem.notions) != 1:
        return None
    n = problem.notions[0]
    kind = problem.objective.type
    same_prior = isinstance(n, LIP) and n.delta == 0 and n.has_prior(problem.objective.prior)
    if kind is MMSE:
        if same_prior:
            return LIP.name, n.epsilon, np.asarray(n.prior)
        if isinstance(n, LDP):
            return LDP.name, n.epsilon, problem.objective.prior
    if kind.separable and same_prior:
        return "lip-separable", n.epsilon, np.asarray(n.prior)
    return None


def _solve_free(problem: Problem, backend: str, method: str, show: bool, timings: dict,
                time_limit: float | None = None) -> SolveResult:
    from ._solve_design import _solve_design

    obj = problem.objective
    k = problem.k
    lp_backend = "highs" if backend == "auto" else backend
    cg = _colgen_kind(problem)
    estimate = ray_count_estimate(list(problem.notions), k)
    # exact pricing (MMSE) pays off early; the separable pricing is a heuristic that
    # ends with one or more exact rounds over every slice vertex (k <= 21, proven) or
    # with a Lagrangian bound beyond, so enumeration is preferred while it is possible
    threshold = MAX_ENUMERATED if (cg is not None and cg[0] == "lip-separable") else 20_000
    use_cg = method == "colgen" or (method == "auto" and cg is not None and (estimate is None or estimate > threshold))
    from .objectives import ESTIMATION_VARIANCE

    if obj.type is ESTIMATION_VARIANCE:
        return _solve_design(problem, method, show, timings, time_limit)
    from .solvers.free._route import route

    from ._baseline_seed import never_worse, seed_channels

    # orbit or exact-pricing colgen (started from the standard mechanisms' channels)
    routed = route(problem, method, show, timings, time_limit, seed=lambda: seed_channels(problem))
    if routed is not None:
        return never_worse(problem, settle(problem, routed, timings), timings)
    if use_cg and cg is not None and cg[1] > BUDGET_CAP:
        # the one notion's budget is above the cap: the relaxation drops it and the rays of
        # no notion are the unit vectors, while column generation would put e^eps in an LP
        # (eps = 240.7: "HiGHS Status 2: Model error", fuzz seed 14 #351)
        use_cg = False
    if use_cg:
        if cg is None:
            raise InputError("method", "column generation is available for mmse on a single LDP notion, and for "
                             "mmse, histogram_mse or mutual_information on a single LIP notion whose prior is "
                             "the objective's")
        kind, eps, P = cg
        t = time.perf_counter()
        offset, sign = offset_sign(obj)
        bar = Progress("colgen", enabled=None if show else False, offset=offset, sign=sign, scale=objective_scale(obj))

        def run(engine: str):
            if kind == "lip-separable":
                return column_generation_separable(obj, eps, P, backend=engine, progress=bar if show else None)
            return column_generation(obj, kind, eps, P, backend=engine, progress=bar if show else None)

        sol, used, failed = solve_with_retry(run, retry_order(lp_backend))
        bar.done()
        timings["solve"] = time.perf_counter() - t
        retried = retry_note("column generation", failed, used, sol.status == "optimal")
        if sol.status != "optimal":
            return constant_fallback(problem, timings, {}, retried)
        w, V = sol.weights, sol.V
        inv = np.zeros(V.shape[1], bool)
        stats = {"method": "colgen", "iterations": sol.stats.get("iterations"), "rays": int(V.shape[1])}
        upper = sol.bound
        proven = sol.stats.get("proven", True)
    else:
        t = time.perf_counter()
        # budgets above BUDGET_CAP are left out (a relaxation: its rays give a valid bound,
        # and the channel is repaired into the full notions at a cost of about m e^-30)
        relaxed = relax_notions(list(problem.notions), k, BUDGET_CAP)
        # the channel comes from rays V inside the cone, the bound from rays V_bound of a
        # cone containing it (the same rays for the structured enumerators)
        try:
            V, inv, V_bound = relaxed_rays(problem, relaxed)
        except DoubleDescriptionError as err:
            return constant_fallback(problem, timings, {}, f"the extreme rays could not be enumerated ({err})")
        exact_bound_rays = V_bound is V
        timings["rays"] = time.perf_counter() - t
        # every notion's cone contains the constant column, so with free outputs the
        # constant channel is always feasible: an empty or infeasible ray set means
        # rays were lost, not an infeasible problem
        lost = ("the extreme rays found cannot make rows sum to 1, yet the constant channel satisfies every "
                "notion: rays were lost (please report the problem)")
        if V.shape[1] == 0:
            return constant_fallback(problem, timings, {}, lost)
        V = V / V.max(axis=0, keepdims=True)  # rays of any scale: largest entry 1
        mu = column_utility(obj, V)
        t = time.perf_counter()
        # a failed ray LP (HiGHS "Status 15" at budgets up to 58) is retried on the other back-ends
        sol, used, failed = solve_with_retry(lambda engine: solve_ray_lp(V, mu, backend=engine),
                                             retry_order(lp_backend))
        timings["solve"] = time.perf_counter() - t
        retried = retry_note("the ray LP", failed, used, sol.status == "optimal")
        if sol.status != "optimal":
            infeasible = any("infeasible" in why.lower() for _, why in failed)
            return constant_fallback(problem, timings, {"method": "rays", "rays": int(V.shape[1])},
                                     f"{lost} ({retried})" if infeasible else retried)
        w = sol.weights
        stats = {"method": "rays", "rays": int(V.shape[1])}
        d = sol.stats.get("duals")
        if d is None:
            upper = math.inf
        elif exact_bound_rays:
            upper = ray_upper_bound(V, mu, d)
        else:
            V_bound = V_bound / V_bound.max(axis=0, keepdims=True)
            upper = ray_upper_bound(V_bound, column_utility(obj, V_bound), d)
        stats["bound_rays"] = int(V_bound.shape[1])
        proven = True
    Q, inv_cols = channel_from_rays(V, w, inv)
    offset, sign = offset_sign(obj)
    bound = offset + sign * upper
    outputs = tuple(f"y{j}" for j in range(Q.shape[1]))
    mix = ~inv_cols if inv_cols.any() else None
    if retried:
        stats["lp_retry"] = retried
    if Q.shape[1] == 0:
        return noted(constant_fallback(problem, timings, stats, "the ray LP's weights are all zero", bound=bound,
                                         proven=proven), retried)
    res = finish(problem, Q, outputs, bound, timings, stats, mix_columns=mix, proven=proven)
    if res.status == "error":
        res = constant_fallback(problem, timings, stats, res.message, bound=bound, proven=proven,
                                channels=((f"the {stats['method']} channel", Q, outputs, mix),))
    return noted(res, retried)
