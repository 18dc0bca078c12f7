"""``solve``: from a problem to an exactly verified, exported mechanism."""

from __future__ import annotations

import math
import sys
import time
from typing import Any

import numpy as np

from ._errors import InputError, MechoptError
from ._export import finalize_export
from ._mechanism import Mechanism
from .notions import LDP, LIP
from ._objectives import column_utility, evaluate, objective_scale, offset_sign, evaluation_error, value_floor
from ._problem import Problem, load_problem
from ._result import SolveResult
from .solvers.labeled._lp import LabeledSolution, solve_labeled
from .solvers.free._raylp import channel_from_rays, column_generation, column_generation_separable, solve_ray_lp
from .solvers.free._rays import MAX_ENUMERATED, DoubleDescriptionError, ray_count_estimate, relax_notions
from .solvers.backends._safe_bound import ray_upper_bound
from .solvers.labeled._structure import BUDGET_CAP
from .solvers.backends._adapters import retry_note, retry_order, solve_with_retry
from .solvers._repair import repair


class Progress:
    """A one-line progress display on stderr; silent when quiet or not a TTY."""

    def __init__(self, label: str, *, enabled: bool | None = None, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = (hasattr(self.stream, "isatty") and self.stream.isatty()) if enabled is None else enabled
        self.label = label
        self.t0 = time.perf_counter()
        self.last = 0.0

    def __call__(self, it: int, value: float, bound: float, size: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.last < 0.2 and it > 0:
            return
        self.last = now
        self.stream.write(f"\r{self.label}: iteration {it}, value {value:.8g}, bound {bound:.8g}, "
                          f"{size} columns, {now - self.t0:.1f} s   ")
        self.stream.flush()

    def done(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def _fail(status: str, message: str, timings: dict, stats: dict | None = None) -> SolveResult:
    return SolveResult(status, None, None, None, None, None, timings, message, stats or {})


DESIGN_CVXPY_MAX_RAYS = 40_000
#: the values of ``solve(method=...)``
METHODS = ("auto", "rays", "colgen", "cvxpy", "frank-wolfe", "fw", "decompose", "ipm", "relax", "lp", "orbit")

#: a labeled LP's answer is "optimal" when the proven gap is at most this (relative, see _finish)
LABELED_REL_GAP = 1e-7
#: the same for the ray LP and column generation (SPEC §3)
RAYS_REL_GAP = 1e-9
#: a labeled LP that failed on every HiGHS method is retried through cvxpy up to this many variables
LABELED_RETRY_MAX_VARIABLES = 40_000
#: a channel whose repair left a gap is compared with the fallback's candidates up to this many entries
#: (randomized response alone costs ~50 exact checks: 0.5 s at k = 100 under a full E-LDP matrix)
IMPROVE_MAX_ENTRIES = 10_000


def solve(problem: Problem | dict | str, *, backend: str = "auto", method: str = "auto",
          reduce: bool = True, quiet: bool = False, progress: bool | None = None,
          time_limit: float | None = None) -> SolveResult:
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
        as a grid's neighbours, or at most 150 places), ``"relax"`` (the IPM on the pairs
        of small budget, a relaxation, its channel lifted into the full cone: ``feasible``
        with a proven gap; the default for metrics with too many pairs for the IPM from
        150 places), ``"decompose"`` (decomposition over outputs) or ``"lp"`` (one LP).
    reduce : bool
        Use the constraint reductions (clique groups, implied pairs, components).
    quiet : bool
        No progress display.
    time_limit : float, optional
        Seconds for the labeled LP, or for the column generation of free outputs (which
        then returns its channel with status ``"feasible"`` and the proven gap). The decomposition then returns its best mechanism
        with status ``"feasible"`` and the proven gap; a single LP that runs out of time
        is an ``"error"`` saying so.

    Returns
    -------
    SolveResult
        ``status`` is ``"optimal"`` for a proven, verified optimum. A solver failure
        is a status with a message, never an exception.

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
    if backend != "auto":
        from .solvers.backends._adapters import get_backend

        get_backend(backend)  # an unknown back-end is bad input, raised before any solving
    show = (not quiet) if progress is None else progress
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    try:
        if problem.free_outputs:
            return _solve_free(problem, backend, method, show, timings, time_limit)
        return _solve_labeled(problem, backend, reduce, timings, method=method, time_limit=time_limit, show=show)
    except InputError:
        raise
    except MechoptError as err:
        return _fail("error", str(err), timings)
    except (np.linalg.LinAlgError, FloatingPointError, ValueError, ArithmeticError) as err:
        return _fail("error", f"numerical trouble: {err}", timings)
    finally:
        timings.setdefault("total", time.perf_counter() - t0)


def _finish(problem: Problem, Q: np.ndarray, outputs: tuple[str, ...], bound: float | None, timings: dict,
            stats: dict, *, mix_columns: np.ndarray | None = None, proven: bool = True, message: str = "",
            rel_gap: float = RAYS_REL_GAP, check=None, improve: bool = True) -> SolveResult:
    """Repair, verify exactly, measure, and wrap in a Mechanism.

    ``bound`` is a proven bound on the optimum (lower for a minimisation, upper for mutual
    information); the status is ``optimal`` only when ``proven`` and the gap between the
    exported channel's objective and that bound is at most ``rel_gap`` times
    ``max(|objective|, objective_scale)`` (see :func:`mechopt._objectives.objective_scale`),
    else ``feasible`` with the gap. ``check(Q) -> (ok, report)`` measures extra constraints
    on the exported channel (:mod:`mechopt._custom`); the report goes into the certificate.

    When the repair's own cost leaves the gap above ``rel_gap`` (a tiny budget the
    mixing can only meet far from the solver's channel), the fallback's candidates
    (:func:`_constant_fallback`: the channel with rows of tiny budgets tied, the best
    constant channel, randomized response) are verified too, on at most
    :data:`IMPROVE_MAX_ENTRIES` entries, and a better one is exported (``improve``).
    """
    obj = problem.objective
    t = time.perf_counter()
    before = evaluate(obj, Q)
    rep = repair(Q, list(problem.notions), mix_columns=mix_columns)
    timings["repair_verify"] = time.perf_counter() - t
    if not rep.certificate.verified:
        return _fail("error", f"the solver's channel could not be repaired to pass the exact check: "
                     f"{rep.certificate.detail}", timings, stats)
    Qr = rep.Q
    after = evaluate(obj, Qr)
    if not math.isfinite(after):
        # e.g. estimation_variance when the notions force two inputs to have equal rows
        # (E[x][x'] = 0 one way): no channel identifies the distribution
        return _fail("error", f"the solver's channel has {obj.kind} = {after!r}: no channel makes this objective "
                     "finite under these notions (are two inputs forced to be indistinguishable?)", timings, stats)
    stats = dict(stats, repair={"t": rep.t, "objective_before": before, "objective_after": after,
                                "cost": abs(after - before), "attempts": rep.attempts})
    if bound is not None and not math.isfinite(bound):
        bound = None  # no proven bound (JSON has no infinities)
    floor = value_floor(obj)
    if bound is not None and floor is not None and obj.minimize and bound < floor:
        floor_note = f"the computed bound {bound:.6g} was raised to {floor:g}, below which no {obj.kind} lies"
        bound = floor  # the objective's own lower end is a proven bound too
    else:
        floor_note = ""
    conflict = False
    if bound is not None:
        # a proven bound cannot be beaten by a verified channel: the objective is evaluated
        # in floating point, so a hair's breadth either way is rounding; more is a bug
        beyond = (bound - after) if obj.minimize else (after - bound)
        if beyond > 0:
            # the estimation risk of an ill-conditioned channel is only known to its
            # evaluation error (relative 8u * cond(J)^(1/2)): within it, the bound is
            # lowered by that error instead of calling a conflict (fuzz seed 14 #984)
            slack = evaluation_error(obj, Qr)
            scale = max(abs(after), objective_scale(obj), 1e-300)
            if beyond <= 1e-12 * scale:
                bound = after
            elif beyond <= slack * scale:
                bound = after - slack * scale if obj.minimize else after + slack * scale
            else:
                conflict = True
    false_bound = bound if conflict else None
    if conflict:
        bound = None  # a bound the exported channel beats is false: never exported
    gap = abs(after - bound) if bound is not None else None
    objective = {"kind": obj.kind, "value": after, "bound": bound, "gap": gap, **{
        k: v for k, v in obj.to_spec().items() if k != "kind"}}
    cert = rep.certificate.to_dict()
    cert["repair_t"] = rep.t
    cert["repair_cost"] = abs(after - before)
    if check is not None:
        held, cert["constraints"] = check(Qr)
        if not held:
            bad = next(c for c in cert["constraints"] if not c["ok"])
            return _fail("error", f"the exported channel breaks constraint {bad['kind']} at {bad['worst']!r} by "
                         f"{bad['max_violation']:.3g} (relative) after the repair (t = {rep.t:.3g})", timings, stats)
    mech = Mechanism(problem.inputs, outputs, Qr, problem.privacy_spec(), objective, cert,
                     {"solver": {k: v for k, v in stats.items() if _jsonable(v)}})
    # a zero objective scale (mutual information under a point-mass prior: every channel
    # has value 0) leaves only the bound's subnormal rounding as a gap
    closed = gap is not None and gap <= max(rel_gap * max(abs(after), objective_scale(obj)), 1e-300) and not conflict
    status = "optimal" if (proven and closed) else "feasible"
    if conflict:
        message = (f"the exported channel's {obj.kind} {after!r} is better than the computed bound {false_bound!r}, "
                   "so no bound is reported (a solver's inaccuracy; please report the problem)")
    if floor_note:
        # the solver's own words (e.g. "the bound is not within the gap") described the bound replaced here
        message = f"{floor_note}; {message}" if (message and not closed) else floor_note
    if proven and not closed and not message:
        message = ("no bound could be proven" if gap is None else
                   f"the proven gap {gap:.3g} is above the optimality tolerance {rel_gap:g} (relative)")
    res = finalize_export(problem, SolveResult(status, mech, after, bound, gap, rep.certificate, timings, message,
                                               stats))
    scale = max(abs(after), objective_scale(obj))
    if (improve and status == "feasible" and not conflict and bound is not None and Q.size <= IMPROVE_MAX_ENTRIES
            and abs(after - before) > rel_gap * scale):
        why = f"the repair cost {abs(after - before):.3g} (t = {rep.t:.3g}) left the gap {gap:.3g}"
        alt = _constant_fallback(problem, timings, stats, why, bound, channels=(("the solver's channel", Q, outputs,
                                 mix_columns),), proven=proven, check=check, rel_gap=rel_gap, improve=False)
        if (alt.status in ("optimal", "feasible") and alt.objective is not None
                and (res.objective - alt.objective) * (1 if obj.minimize else -1) > 1e-12 * scale):
            return alt
    return res


def _jsonable(v: Any) -> bool:
    import json

    try:
        json.dumps(v, allow_nan=False)
        return True
    except (TypeError, ValueError):
        return False


def _solve_labeled(problem: Problem, backend: str, reduce: bool, timings: dict, *, method: str = "auto",
                   time_limit: float | None = None, show: bool = False) -> SolveResult:
    from ._solve_design import _unit_allowed

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
        owners = [x for x in sorted(allowed) if _unit_allowed(problem, x)]
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
    if method not in ("auto", "decompose", "ipm", "relax", "lp"):
        raise InputError("method", f"unknown method {method!r} for labeled outputs; expected 'auto', 'decompose', 'ipm', "
                         "'relax' or 'lp'")
    bar = Progress("decomposition", enabled=None if show else False)
    sol = solve_labeled(list(problem.notions), k, m, cost, invertible, backend=backend, reduce=reduce,
                        square=square, prior=obj.prior, loss=obj.loss,
                        gap_tol=0.5 * LABELED_REL_GAP * objective_scale(obj), extend=ext and ext.extend, method=method, time_limit=time_limit,
                        progress=bar if show else None)
    bar.done()
    retried = ""
    if (sol.status == "error" and k * m <= LABELED_RETRY_MAX_VARIABLES
            and not (time_limit is not None and time.perf_counter() - t >= time_limit)):
        # every HiGHS method failed (solve_labeled retries them): once more on another back-end
        first = sol
        for other in [b for b in retry_order(backend, size=k * m) if b.startswith("cvxpy:")][:1]:
            again = solve_labeled(list(problem.notions), k, m, cost, invertible, backend=other, reduce=reduce,
                                  square=square, prior=obj.prior, loss=obj.loss,
                                  gap_tol=0.5 * LABELED_REL_GAP * objective_scale(obj), extend=ext and ext.extend,
                                  method=method, time_limit=time_limit)
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
        # stopped by the time limit with a proven bound: the gap decides the status
        return _finish(problem, sol.Q, tuple(problem.outputs), sol.bound, timings, sol.stats,
                       rel_gap=LABELED_REL_GAP, message=sol.message)
    if sol.status != "optimal":
        if ext is not None and ext.constraints:
            # the extra constraints may exclude every channel: the constant one may not be a way out
            status = "infeasible" if sol.stats.get("lp_status") == "infeasible" else "error"
            why = ("no channel meets the privacy notions and the constraints together" if status == "infeasible"
                   else "the LP solver failed")
            if status == "error":
                res = _constant_fallback(problem, timings, sol.stats, f"{why} ({sol.message})", check=ext.check,
                                         rel_gap=LABELED_REL_GAP)
                if res.status != "error":
                    return res
            return _fail(status, f"{why} ({sol.message})", timings, sol.stats)
        # the constant channel meets every notion: a labeled problem is never infeasible
        return _constant_fallback(problem, timings, sol.stats, f"the LP solver failed ({sol.message})",
                                  rel_gap=LABELED_REL_GAP)
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
    res = _finish(problem, Q, tuple(problem.outputs), sol.bound, timings, sol.stats, mix_columns=mix,
                  rel_gap=LABELED_REL_GAP, check=check)
    if res.status == "error":
        fb = _constant_fallback(problem, timings, sol.stats, res.message, bound=sol.bound, rel_gap=LABELED_REL_GAP,
                                channels=(("the LP's channel", Q, tuple(problem.outputs), mix),), check=check)
        if fb.status == "error" and ext is not None and ext.constraints:
            return res
        return _noted(fb, retried)
    return _noted(res, retried)


def _noted(res: SolveResult, note: str) -> SolveResult:
    """``res`` with ``note`` (e.g. which back-end a retried LP ran on) first in its message."""
    if not note:
        return res
    from dataclasses import replace

    return replace(res, message=f"{note}; {res.message}" if res.message else note)


def _constant_fallback(problem: Problem, timings: dict, stats: dict, why: str, bound: float | None = None, *,
                       channels: tuple = (), proven: bool = True, check=None,
                       rel_gap: float = RAYS_REL_GAP, improve: bool = True) -> SolveResult:
    """When the solver or its repair fails: export the best exactly verified channel the run saw.

    ``channels`` are ``(name, Q, outputs, mix_columns)`` the run produced (the solver's
    channel before the repair failed, ...); with them the candidates of
    :mod:`mechopt._fallback` (the best constant channel, randomized response) are
    verified exactly and the best by the objective is exported. ``bound`` (a valid bound
    the run obtained, or None) is kept; the status is ``optimal`` only if ``proven`` and
    the exported channel closes the gap, else ``feasible``; ``why`` and the choice are in
    the message and in ``stats["fallback"]``.
    """
    from dataclasses import replace

    from ._fallback import SECONDS, best_verified, constant_candidate, rr_candidates, solver_candidates

    obj = problem.objective
    deadline = time.monotonic() + SECONDS
    cands = []
    for name, Q, outputs, mix in channels:
        if Q is not None:
            cands += solver_candidates(problem, name, Q, tuple(outputs), mix, deadline=deadline)
    cands.append(constant_candidate(problem))
    cands += rr_candidates(problem, deadline=deadline)
    best, good = best_verified(problem, cands, check)
    if bound is not None and not math.isfinite(bound):
        bound = None
    if best is None:
        return _fail("error", f"{why}; no candidate channel (the solver's, the best constant one, randomized "
                     "response) passed the exact check", timings, stats)
    stats = dict(stats, fallback={"why": why, "exported": best.name,
                                  "candidates": [[c.name, c.value] for c in good]})
    said = (f"{why}; exported the best verified channel seen: {best.name}, {obj.kind} {best.value:.10g}, "
            + (f"bound {bound:.10g}" if bound is not None else "no proven bound"))
    res = _finish(problem, best.Q, best.outputs, bound, timings, stats,
                  mix_columns=best.mix_columns, proven=proven, message=said,
                  rel_gap=rel_gap, check=check, improve=False)
    if res.status in ("optimal", "feasible") and not res.message.startswith(said):
        res = replace(res, message=f"{said}; {res.message}" if res.message else said)
    return res


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
    from ._solve_design import _relaxed_rays, _solve_design

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
        return _solve_design(problem, method, show, timings)
    from .solvers.free._route import route

    routed = route(problem, method, show, timings, time_limit)  # orbit or exact-pricing colgen (issue 10)
    if routed is not None:
        return routed
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
        bar = Progress("column generation", enabled=None if show else False)

        def run(engine: str):
            if kind == "lip-separable":
                return column_generation_separable(obj, eps, P, backend=engine, progress=bar if show else None)
            return column_generation(obj, kind, eps, P, backend=engine, progress=bar if show else None)

        sol, used, failed = solve_with_retry(run, retry_order(lp_backend))
        bar.done()
        timings["solve"] = time.perf_counter() - t
        retried = retry_note("column generation", failed, used, sol.status == "optimal")
        if sol.status != "optimal":
            return _constant_fallback(problem, timings, {}, retried)
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
            V, inv, V_bound = _relaxed_rays(problem, relaxed)
        except DoubleDescriptionError as err:
            return _constant_fallback(problem, timings, {}, f"the extreme rays could not be enumerated ({err})")
        exact_bound_rays = V_bound is V
        timings["rays"] = time.perf_counter() - t
        # every notion's cone contains the constant column, so with free outputs the
        # constant channel is always feasible: an empty or infeasible ray set means
        # rays were lost, not an infeasible problem
        lost = ("the extreme rays found cannot make rows sum to 1, yet the constant channel satisfies every "
                "notion: rays were lost (please report the problem)")
        if V.shape[1] == 0:
            return _constant_fallback(problem, timings, {}, lost)
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
            return _constant_fallback(problem, timings, {"method": "rays", "rays": int(V.shape[1])},
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
        return _noted(_constant_fallback(problem, timings, stats, "the ray LP's weights are all zero", bound=bound,
                                         proven=proven), retried)
    res = _finish(problem, Q, outputs, bound, timings, stats, mix_columns=mix, proven=proven)
    if res.status == "error":
        res = _constant_fallback(problem, timings, stats, res.message, bound=bound, proven=proven,
                                 channels=((f"the {stats['method']} channel", Q, outputs, mix),))
    return _noted(res, retried)
