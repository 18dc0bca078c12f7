"""Which method solves a free-output sublinear problem, and its candidate answer.

Called by :func:`mechopt._solve._solve_free` for MMSE, histogram MSE, mutual information
and Bayes risk. Returns ``None`` to leave the problem to the ray enumeration of the
dispatcher, else a :class:`~mechopt.solvers._outcome.Candidate` (or family, or failure)
that the dispatcher repairs, verifies and judges.

* ``orbit`` — (beyond :data:`COLGEN_ABOVE` rays, or when asked) ε-LDP (or WC-LIP) with a uniform prior and an objective every input
  permutation preserves (histogram MSE, mutual information, Bayes risk with a loss
  ``a`` on the diagonal and ``b`` off it): the best d-subset orbit, proven by LP
  duality (:mod:`mechopt.solvers.free._orbit`), at any k.
* ``colgen`` — column generation with exact pricing over the cone's pieces
  (:func:`mechopt.solvers.free._cones.decompose`: LDP / WC-LIP, block, high-low, ULDP, LIP
  with the objective's prior): used when the notions report more than
  :data:`COLGEN_ABOVE` rays (or an unknown count beyond ``k = 14``), or when asked
  (``method="colgen"``). Every stop carries a proven bound; the status is ``optimal``
  only when the exported channel is within ``RAYS_REL_GAP`` of it.
"""

from __future__ import annotations

import math
import time

from ..._errors import InputError
from .._outcome import RAYS_REL_GAP, Candidate, Failure, Progress, search_budget

#: enumerate the rays while the notions report at most this many (LDP k = 14: 16 382)
COLGEN_ABOVE = 20_000
#: with no count reported (several notions), enumerate up to this many inputs
ENUMERATE_MAX_K = 14
#: default time limit of the column generation (seconds); ``time_limit`` overrides it
FREE_TIME_LIMIT = 600.0

COVERED = ("column generation is available (exact pricing) for mmse, histogram_mse, mutual_information and "
           "bayes_risk under one of: LDP / WC-LIP (with any E-LDP notions it implies), block LDP, high-low LDP, ULDP, or "
           "LIP (delta = 0) whose prior is the objective's")


def plan(problem, method: str):
    """``(kind, payload)``: ``("orbit", eps)``, ``("colgen", ConeSet)``, or ``None`` (enumerate)."""
    from ...objectives import ESTIMATION_VARIANCE
    from ._cones import decompose
    from ._pricing import priced
    from ._rays import ray_count_estimate

    obj = problem.objective
    if not priced(obj) or method not in ("auto", "colgen", "orbit"):
        if method in ("colgen", "orbit") and not priced(obj) and obj.type is not ESTIMATION_VARIANCE:
            raise InputError("method", f"{method!r} is not available for {obj.kind}")
        return None
    k = problem.k
    notions = list(problem.notions)
    from ..labeled._structure import BUDGET_CAP

    if any(getattr(n, "epsilon", 0.0) > BUDGET_CAP for n in notions):
        # the dispatcher relaxes budgets above the cap (their rays become unit vectors); e^eps in an
        # LP or a closed form would overflow it (fuzz seed 14 #351)
        return None
    estimate = ray_count_estimate(notions, k)
    # while the rays can be listed, "auto" keeps the dispatcher's enumeration
    large = estimate > COLGEN_ABOVE if estimate is not None else k > ENUMERATE_MAX_K
    if method == "orbit" or (method == "auto" and large):
        from ._orbit import orbit_epsilon

        eps = orbit_epsilon(notions, obj)
        if eps is not None:
            return "orbit", eps
        if method == "orbit":
            raise InputError("method", "'orbit' needs eps-LDP (or WC-LIP) notions, a uniform prior and histogram_mse, "
                             "mutual_information or a permutation-invariant bayes_risk loss")
    if method == "auto" and not large:
        return None
    cs = decompose(notions, obj, k)
    if cs is None:
        if method == "colgen":
            raise InputError("method", COVERED)
        return None
    return "colgen", cs


def route(problem, method: str, show: bool, timings: dict, time_limit: float | None = None, seed=None):
    """The outcome of the orbit or the column generation, or None (enumerate the rays).

    ``seed()``, if given, returns ``[(name, Q)]``: verified channels of the problem whose
    columns start the column generation (the standard mechanisms: the export is then never
    worse than any of them, and ``stats["incumbent"]`` names the one it equals, if any).
    """
    planned = plan(problem, method)
    if planned is None:
        return None
    how, arg = planned
    if how == "orbit":
        from ._orbit import solve_orbit

        return solve_orbit(problem, arg, timings)
    t = time.perf_counter()
    seeds = seed() if seed is not None else []
    return solve_colgen(problem, arg, show, timings, time_limit, seeds, spent=time.perf_counter() - t)


def _incumbent(obj, seeds, value: float, tol: float) -> str | None:
    """The seed channel the master's ``value`` equals (within ``tol``; the best such), if any."""
    from ...objectives import column_utility

    best = None
    for name, Q in seeds:  # the first of equal values (k-RR before subset selection of size 1)
        u = float(column_utility(obj, Q).sum())
        if best is None or u > best[0] + tol:
            best = (u, name)
    return best[1] if best is not None and value <= best[0] + tol else None


def solve_colgen(problem, cs, show: bool, timings: dict, time_limit: float | None, seeds=(), spent: float = 0.0):
    """Column generation: its channel and proven bound, or a failure that asks for the fallback.

    A ``time_limit`` is the solve's: the ``spent`` seconds (the seeds) come out of it, and
    :data:`mechopt.solvers._outcome.EXPORT_SHARE` of it is kept for the export.
    """
    from ...objectives import objective_scale, offset_sign
    from ._colgen import column_generation
    from ._raylp import channel_from_rays

    obj = problem.objective
    t = time.perf_counter()
    offset, sign = offset_sign(obj)  # the progress lines in the objective's units
    bar = Progress("colgen", enabled=None if show else False, offset=offset, sign=sign, scale=objective_scale(obj))
    limit = search_budget(time_limit, spent, FREE_TIME_LIMIT)
    # the loop's own target sits below the export's so that the repair's cost fits in it
    res = column_generation(obj, cs, rel_gap=0.5 * RAYS_REL_GAP, scale_floor=objective_scale(obj), time_limit=limit,
                            progress=bar if show else None, seed=[Q for _, Q in seeds])
    bar.done()
    timings["solve"] = time.perf_counter() - t
    stats = {"method": "colgen", "cone": cs.name, "pieces": len(cs.pieces),
             **{key: v for key, v in res.stats.items() if key not in ("cone", "pieces")}}
    if res.status != "optimal" or res.weights is None:
        # no channel from the run: the best verified standard channel (constant, randomized response)
        return Failure("error", f"column generation failed: {res.message}", stats, fallback=True)
    w, V, inv = res.weights, res.V, res.invertible
    Q, inv_cols = channel_from_rays(V, w, inv)
    offset, sign = offset_sign(obj)
    bound = offset + sign * res.bound if res.bound is not None and math.isfinite(res.bound) else None
    stats["rays"] = int(V.shape[1])
    outputs = tuple(f"y{j}" for j in range(Q.shape[1]))
    message = res.message.replace(f"time limit ({limit:g} s)", f"time limit ({time_limit:g} s)") if (
        time_limit is not None) else res.message
    if message and bound is not None:
        message = f"{message}; proven gap {abs(res.bound - res.value):.3g} before the repair"
    same = _incumbent(obj, seeds, res.value, RAYS_REL_GAP * max(abs(offset + sign * res.value), objective_scale(obj)))
    if same is not None:
        stats["incumbent"] = f"baseline: {same}"
        message = "; ".join(m for m in (message, f"the channel equals the baseline {same} in value") if m)
    # the bound is proven at every stop: the answer is optimal iff the exported channel closes the gap
    return Candidate(Q, outputs, bound, stats, proven=True, mix_columns=~inv_cols if inv_cols.any() else None,
                     message=message, fallback="the column generation's channel")
