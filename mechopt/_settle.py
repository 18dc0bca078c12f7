"""The dispatcher's last steps: a route's outcome becomes an exactly verified answer with a status.

:func:`settle` takes what a solver route returned (:mod:`mechopt.solvers._outcome`: a
candidate channel with its proven bound, a structured family, or a failure) and alone
repairs the channel to exact feasibility, verifies it, falls back to the best verified
standard channel (:mod:`mechopt._fallback`) and decides ``optimal`` / ``feasible`` /
``error``. Used by :mod:`mechopt._solve` and :mod:`mechopt._solve_design` only.

May import: the problem, measures, verifier, exporter and fallback layers, and
:mod:`mechopt.solvers` (the repair, the outcome types). Never the dispatcher.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

import numpy as np

from ._export import finalize_export
from ._mechanism import Mechanism
from .objectives import evaluate, evaluation_error, objective_scale, value_floor
from ._problem import Problem
from ._result import SolveResult
from .solvers._outcome import RAYS_REL_GAP, Candidate, FamilyCandidate, Failure
from .solvers._repair import repair

#: a channel whose repair left a gap is compared with the fallback's candidates up to this many entries
#: (randomized response alone costs ~50 exact checks: 0.5 s at k = 100 under a full E-LDP matrix)
IMPROVE_MAX_ENTRIES = 10_000


def fail(status: str, message: str, timings: dict, stats: dict | None = None) -> SolveResult:
    """An answer with no mechanism: ``status`` (``error``, ``infeasible``) and why."""
    return SolveResult(status, None, None, None, None, None, timings, message, stats or {})


def finish(problem: Problem, Q: np.ndarray, outputs: tuple[str, ...], bound: float | None, timings: dict,
           stats: dict, *, mix_columns: np.ndarray | None = None, proven: bool = True, message: str = "",
           rel_gap: float = RAYS_REL_GAP, check=None, improve: bool = True) -> SolveResult:
    """Repair, verify exactly, measure, and wrap in a Mechanism.

    ``bound`` is a proven bound on the optimum (lower for a minimisation, upper for mutual
    information); the status is ``optimal`` only when ``proven`` and the gap between the
    exported channel's objective and that bound is at most ``rel_gap`` times
    ``max(|objective|, objective_scale)`` (see :func:`mechopt.objectives.objective_scale`),
    else ``feasible`` with the gap. ``check(Q) -> (ok, report)`` measures extra constraints
    on the exported channel (:mod:`mechopt._custom`); the report goes into the certificate.

    When the repair's own cost leaves the gap above ``rel_gap`` (a tiny budget the
    mixing can only meet far from the solver's channel), the fallback's candidates
    (:func:`constant_fallback`: the channel with rows of tiny budgets tied, the best
    constant channel, randomized response) are verified too, on at most
    :data:`IMPROVE_MAX_ENTRIES` entries, and a better one is exported (``improve``).
    """
    obj = problem.objective
    t = time.perf_counter()
    before = evaluate(obj, Q)
    rep = repair(Q, list(problem.notions), mix_columns=mix_columns)
    timings["repair_verify"] = time.perf_counter() - t
    if not rep.certificate.verified:
        return fail("error", f"the solver's channel could not be repaired to pass the exact check: "
                    f"{rep.certificate.detail}", timings, stats)
    Qr = rep.Q
    after = evaluate(obj, Qr)
    if not math.isfinite(after):
        # e.g. estimation_variance when the notions force two inputs to have equal rows
        # (E[x][x'] = 0 one way): no channel identifies the distribution
        return fail("error", f"the solver's channel has {obj.kind} = {after!r}: no channel makes this objective "
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
            return fail("error", f"the exported channel breaks constraint {bad['kind']} at {bad['worst']!r} by "
                        f"{bad['max_violation']:.3g} (relative) after the repair (t = {rep.t:.3g})", timings, stats)
    mech = Mechanism(problem.inputs, outputs, Qr, problem.privacy_spec(), objective, cert,
                     {"solver": {k: v for k, v in stats.items() if _jsonable(v)}})
    # a zero objective scale (mutual information under a point-mass prior: every channel
    # has value 0) leaves only the bound's subnormal rounding as a gap
    closed = gap is not None and gap <= max(rel_gap * max(abs(after), objective_scale(obj)), 1e-300) and not conflict
    status = "optimal" if (proven and closed) else "feasible"
    if status == "optimal" and message and not floor_note:
        # the solver judged its gap against its own tolerance (e.g. "the IPM stalled;
        # proven relative gap 1.9e-07"); the exported channel's gap is within this one
        message = ""
    if conflict:
        message = (f"the exported channel's {obj.kind} {after!r} is better than the computed bound {false_bound!r}, "
                   "so no bound is reported (a solver's inaccuracy; please report the problem)")
    if floor_note:
        # the solver's own words (e.g. "the bound is not within the gap") described the bound replaced here
        message = f"{floor_note}; {message}" if (message and not closed) else floor_note
    if proven and not closed and "proven gap" not in message:
        # one gap, the exported channel's: the same as the summary line's (and the progress lines')
        final = "no bound could be proven" if gap is None else _gap_words(gap, after, objective_scale(obj), rel_gap)
        message = f"{message}; {final}" if message else final
    res = finalize_export(problem, SolveResult(status, mech, after, bound, gap, rep.certificate, timings, message,
                                               stats))
    scale = max(abs(after), objective_scale(obj))
    if (improve and status == "feasible" and not conflict and bound is not None and Q.size <= IMPROVE_MAX_ENTRIES
            and abs(after - before) > rel_gap * scale):
        why = f"the repair cost {abs(after - before):.3g} (t = {rep.t:.3g}) left the gap {gap:.3g}"
        alt = constant_fallback(problem, timings, stats, why, bound, channels=(("the solver's channel", Q, outputs,
                                mix_columns),), proven=proven, check=check, rel_gap=rel_gap, improve=False)
        if (alt.status in ("optimal", "feasible") and alt.objective is not None
                and (res.objective - alt.objective) * (1 if obj.minimize else -1) > 1e-12 * scale):
            return alt
    return res


def _gap_words(gap: float, value: float, scale: float, rel_gap: float) -> str:
    """The note on an unproven export: the gap, its share of the value, and what the tolerance is judged on.

    The tolerance is judged against ``max(|value|, scale)`` (the objective's natural
    range, :func:`mechopt.objectives.objective_scale`); where that range is above the
    value (a squared loss on a large grid), the share of the value is what a user reads.

    Examples
    --------
    >>> _gap_words(0.0132, 13.66, 1.0, 1e-7)
    'the proven gap 0.0132 (9.66e-04 of the value) is above the optimality tolerance 1e-07 (relative)'
    >>> _gap_words(6.37, 7.568, 200.95, 1e-7)
    'the proven gap 6.37 (84.2 % of the value; 3.17e-02 of the objective scale 201, against which the optimality tolerance 1e-07 is judged)'
    """
    share = gap / max(abs(value), 1e-300)
    if scale <= abs(value):
        return f"the proven gap {gap:.3g} ({share:.2e} of the value) is above the optimality tolerance {rel_gap:g} (relative)"
    words = f"{100 * share:.3g} % of the value" if share >= 0.01 else f"{share:.2e} of the value"
    return (f"the proven gap {gap:.3g} ({words}; {gap / scale:.2e} of the objective scale {scale:.3g}, against which "
            f"the optimality tolerance {rel_gap:g} is judged)")


def _jsonable(v: Any) -> bool:
    import json

    try:
        json.dumps(v, allow_nan=False)
        return True
    except (TypeError, ValueError):
        return False


def noted(res: SolveResult, note: str) -> SolveResult:
    """``res`` with ``note`` (e.g. which back-end a retried LP ran on) first in its message."""
    if not note:
        return res
    return replace(res, message=f"{note}; {res.message}" if res.message else note)


def constant_fallback(problem: Problem, timings: dict, stats: dict, why: str, bound: float | None = None, *,
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
        return fail("error", f"{why}; no candidate channel (the solver's, the best constant one, randomized "
                    "response) passed the exact check", timings, stats)
    stats = dict(stats, fallback={"why": why, "exported": best.name,
                                  "candidates": [[c.name, c.value] for c in good]})
    said = (f"{why}; exported the best verified channel seen: {best.name}, {obj.kind} {best.value:.10g}, "
            + (f"bound {bound:.10g}" if bound is not None else "no proven bound"))
    res = finish(problem, best.Q, best.outputs, bound, timings, stats,
                 mix_columns=best.mix_columns, proven=proven, message=said,
                 rel_gap=rel_gap, check=check, improve=False)
    if res.status in ("optimal", "feasible") and not res.message.startswith(said):
        res = replace(res, message=f"{said}; {res.message}" if res.message else said)
    return res


def settle(problem: Problem, outcome: Candidate | FamilyCandidate | Failure, timings: dict) -> SolveResult:
    """The answer for a route's outcome: repaired, verified, fallen back to, its status set."""
    if isinstance(outcome, Failure):
        if outcome.fallback:
            return constant_fallback(problem, timings, outcome.stats, outcome.message, rel_gap=outcome.rel_gap)
        return fail(outcome.status, outcome.message, timings, outcome.stats)
    if isinstance(outcome, FamilyCandidate):
        return finish_family(problem, outcome, timings)
    c = outcome
    res = finish(problem, c.Q, c.outputs, c.bound, timings, c.stats, mix_columns=c.mix_columns, proven=c.proven,
                 message=c.message, rel_gap=c.rel_gap, check=c.check)
    if res.status == "error" and c.fallback is not None:
        # the repair failed: the best verified channel seen (this one mixed, randomized response)
        return constant_fallback(problem, timings, c.stats, res.message, c.bound, proven=c.proven,
                                 channels=((c.fallback, c.Q, c.outputs, c.mix_columns),), check=c.check,
                                 rel_gap=c.rel_gap)
    if (c.recheck_rel_gap is not None and res.status == "optimal"
            and not (res.gap <= c.recheck_rel_gap * abs(res.objective))):
        # the export (vertex, exact row sums, repair) moved the objective: judge the exported channel
        res = replace(res, status="feasible", message=c.recheck_message)
    return res


def finish_family(problem: Problem, fam: FamilyCandidate, timings: dict) -> SolveResult:
    """Export a structured family (too many outputs to list) after its exact check; the status by its gap.

    ``fam.value`` and ``fam.bound`` are the family's objective and the proven bound; the
    status is ``optimal`` when the gap is within ``fam.rel_gap`` of ``max(|value|,
    objective scale)``.
    """
    from .families import FamilyMechanism

    obj = problem.objective
    value, bound, stats = fam.value, fam.bound, fam.stats
    gap = abs(value - bound)
    objective = {"kind": obj.kind, "value": value, "bound": bound, "gap": gap,
                 **{key: v for key, v in obj.to_spec().items() if key != "kind"}}
    mech = FamilyMechanism.from_family(fam.spec, problem.privacy_spec(), inputs=problem.inputs, objective=objective,
                                       extra={"solver": stats})
    cert = mech.verify()
    timings["repair_verify"] = time.perf_counter() - fam.started
    if not cert.verified:  # pragma: no cover - the families' ratios meet every LDP claim exactly
        return SolveResult("error", None, None, None, None, None, timings,
                           f"the subset-selection family failed its exact check: {cert.detail}", stats)
    closed = gap <= fam.rel_gap * max(abs(value), objective_scale(obj))
    return SolveResult("optimal" if closed else "feasible", mech, value, bound, gap, cert, timings,
                       "" if closed else f"the proven gap {gap:.3g} is above {fam.rel_gap:g}", stats)
