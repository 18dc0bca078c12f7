"""Which estimation-design method runs, and its candidate answer.

Called first by :func:`mechopt._solve_design._solve_design`; returns ``None`` to leave the
problem to the conic / Frank–Wolfe path (``method="cvxpy"`` or ``"frank-wolfe"``, or
a column-generation failure), else a :class:`~mechopt.solvers._outcome.Candidate` (or
family, or failure) that the dispatcher repairs, verifies and judges.

* ``orbit`` — ε-LDP (and WC-LIP) with a uniform ``p0``: the best d-subset selection,
  proven optimal by the orbit argument and certified by the orbit dual
  (:mod:`mechopt.solvers.design._orbit`). Exported as a matrix when the orbit has at most
  :data:`ORBIT_MATRIX_MAX` outputs (then reduced to a vertex with at most
  ``k(k-1)/2 + k`` outputs), otherwise as a ``subset_selection`` family.
* ``colgen`` — column generation with a proven bound
  (:mod:`mechopt.solvers.design._colgen`): over the LDP staircases, never listed, for
  LDP-only problems; over the vertices of the LIP slice, never listed
  (:mod:`mechopt.solvers.design._pricing_lip`), for one ε-LIP notion whose prior is the
  objective's ``p0`` with too many vertices to list; over the enumerated rays otherwise.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from ..._errors import InputError
from ...notions import LDP, LIP, WCLIP
from .._outcome import Candidate, Failure, FamilyCandidate, Progress, search_budget
from ._colgen import PROVEN_REL_GAP

#: the orbit is exported as a matrix when it has at most this many outputs
ORBIT_MATRIX_MAX = 3000
#: time limit of the column generation (seconds)
DESIGN_TIME_LIMIT = 600.0
#: largest k for column generation over LDP staircases (exact pricing enumerates up to k = 34)
STAIRCASE_MAX_K = 60


def ldp_epsilon(notions) -> float | None:
    """The ε if every notion is ε-LDP or WC-LIP (the smallest one), else None."""
    if not notions or not all(type(n) in (LDP, WCLIP) for n in notions):
        return None
    return min(n.epsilon for n in notions)


def lip_prior_epsilon(notions, p0) -> float | None:
    """The ε of a single ε-LIP notion (δ = 0) whose prior is ``p0``, else None."""
    if len(notions) == 1 and isinstance(notions[0], LIP) and notions[0].delta == 0 and notions[0].has_prior(p0):
        return float(notions[0].epsilon)
    return None


def ratio_below(epsilon: float) -> float:
    """The largest double ``r <= e^epsilon`` (exactly, with ``epsilon`` read as its decimal)."""
    from ..._exact import exact, exp_bounds

    lo, _ = exp_bounds(exact(epsilon))
    r = float(math.exp(epsilon))
    while Fraction(repr(r)) > lo:
        r = math.nextafter(r, 0.0)
    return r


def route(problem, method: str, show: bool, timings: dict, time_limit: float | None = None):
    """The design's outcome, or None (use the conic / Frank–Wolfe path)."""
    from ._orbit import is_uniform

    obj = problem.objective
    notions = list(problem.notions)
    eps = ldp_epsilon(notions)
    orbit_ok = eps is not None and eps > 0 and is_uniform(obj.prior) and problem.k >= 2
    if method == "orbit":
        if not orbit_ok:
            raise InputError("method", "'orbit' needs eps-LDP (or WC-LIP) notions with eps > 0 and a uniform p0")
        return solve_orbit(problem, eps, timings)
    if method == "auto" and orbit_ok:
        return solve_orbit(problem, eps, timings)
    if method in ("auto", "colgen"):
        return solve_colgen(problem, eps, show, timings, strict=(method == "colgen"), time_limit=time_limit)
    return None


def solve_orbit(problem, eps: float, timings: dict):
    from ._orbit import best_subset_size, orbit_certificate

    from ..labeled._structure import BUDGET_CAP

    t = time.perf_counter()
    k = problem.k
    # above the budget cap the channel is designed at the cap (it meets every larger
    # budget, and e^eps may not even be a float); the bound is then the noiseless risk
    # 1 - 1/k: no channel carries more Fisher information than the identity
    eps, capped = min(eps, BUDGET_CAP), eps > BUDGET_CAP
    d, _ = best_subset_size(k, eps)
    value, lower = orbit_certificate(k, eps, d)
    if capped:
        lower = min(lower, (1.0 - 1.0 / k) * (1.0 - 1e-15))
    timings["solve"] = time.perf_counter() - t
    from ...families._spec import approx_count

    stats = {"method": "orbit", "subset_size": d, "orbit_outputs": approx_count(math.comb(k, d))}
    if math.comb(k, d) <= ORBIT_MATRIX_MAX:
        import itertools

        from ._convex import sparse_design

        r = math.exp(eps)
        X = np.zeros((k, math.comb(k, d)))
        for j, S in enumerate(itertools.combinations(range(k), d)):
            X[list(S), j] = 1.0
        V = 1.0 + (r - 1.0) * X
        w = np.full(V.shape[1], 1.0 / float(V[0].sum()))
        w = sparse_design(V, problem.objective.prior, w)
        keep = w > 0
        Q = V[:, keep] * w[keep]
        Q = Q / Q.sum(axis=1, keepdims=True)
        return Candidate(Q, tuple(f"y{j}" for j in range(Q.shape[1])), lower, stats, proven=True,
                         rel_gap=PROVEN_REL_GAP)
    # too many outputs to list: export the family
    from ...families import SubsetMixture
    from ...families._estimate import subset_risk_uniform

    t = time.perf_counter()
    r = ratio_below(eps)
    spec = SubsetMixture.spec(r, [(d, 1.0)])
    fam = SubsetMixture.from_spec(spec, k)
    value = subset_risk_uniform(fam)
    return FamilyCandidate(spec, value, lower, stats, t, rel_gap=math.inf)


def solve_colgen(problem, eps: float | None, show: bool, timings: dict, *, strict: bool,
                 time_limit: float | None = None):
    from ._convex import exact_row_sums, sparse_design
    from ._colgen import column_generation_design
    from ._pricing import ExplicitPricer, StaircasePricer
    from ._pricing_lip import LipDesignPricer
    from ..free._rays import MAX_ENUMERATED, ray_count_estimate

    obj = problem.objective
    k = problem.k
    notions = list(problem.notions)
    from ..free._rays import relax_notions, relaxed_rays
    from ..labeled._structure import BUDGET_CAP

    t = time.perf_counter()
    inv, pricer = None, None
    # budgets above the cap are left out (a relaxation: its rays bound the risk from
    # below, and the design is repaired into the full notions; e^745 is not a float)
    notions = relax_notions(notions, k, BUDGET_CAP)
    if eps is not None and eps > BUDGET_CAP:
        eps = None
    if eps is not None:
        if eps <= 0:
            return None
        if k > STAIRCASE_MAX_K:
            return Failure("error", f"a non-uniform p0 under eps-LDP is designed for k <= {STAIRCASE_MAX_K} inputs "
                           f"(got {k}); with a uniform p0 the optimum is known at any k (subset selection)")
        pricer = StaircasePricer(k, eps)
    else:
        from .._repair import tied_rows

        if tied_rows(notions, k):
            return None  # no design identifies p0: the conic path says so in one line
        estimate = ray_count_estimate(notions, k)
        lip_eps = lip_prior_epsilon(notions, obj.prior)
        if lip_eps is not None and lip_eps > 0 and (estimate is None or estimate > MAX_ENUMERATED):
            pricer = LipDesignPricer(np.asarray(notions[0].prior, dtype=float), lip_eps)
        elif estimate is not None and estimate > MAX_ENUMERATED:
            from ...notions._rays import count_words

            what = (f"about {count_words(estimate)} extreme rays: the design over listed rays needs them "
                    f"enumerated (at most {MAX_ENUMERATED}); ")
            way_out = ("implicit pricing exists for notion 'ldp' (k <= 60, any k with a uniform p0) and for one "
                       "notion 'lip' whose prior is the objective's p0 (use one of them with a time limit, or a "
                       "smaller k, or objective kind 'histogram_mse' or 'mutual_information', which price these "
                       "cones on free outputs)")
            if strict:
                raise InputError("method", what + way_out)
            return None  # the listing path decides (a double description may find fewer rays)
    if eps is None and pricer is None:
        V, inv, V_bound = relaxed_rays(problem, notions)
        if V.shape[1] == 0:
            return None
        if V_bound is not V:
            # exact double description: inner rays (in the cone) and outer ones (of a cone
            # containing it); pricing over both keeps the lower bound valid, and a channel
            # on an outer ray is repaired into the cone at a cost of ~1e-14
            V = np.hstack([V, V_bound])
            inv = np.concatenate([inv, np.zeros(V_bound.shape[1], bool)]) if inv is not None else None
        pricer = ExplicitPricer(V)
    timings["rays"] = time.perf_counter() - t
    t = time.perf_counter()
    bar = Progress("design column generation", enabled=None if show else False)
    # a time limit is the solve's: 5 % of it is kept for the export (sparse design, repair, exact check)
    limit = search_budget(time_limit, timings.get("rays", 0.0), DESIGN_TIME_LIMIT)
    first_bound, add = None, 200
    if isinstance(pricer, LipDesignPricer):
        from ._lip_variance import diagonal_bound

        # the bound comes first; the rounds only improve the design, whose support grows to
        # thousands of vertices at k = 100: more columns a round (k = 100: risk 91.38
        # instead of 91.44 after 300 s; docs/design.md)
        first_bound, _ = diagonal_bound(pricer.P, lip_eps, obj.prior)
        add = 600
    res = column_generation_design(pricer, obj.prior, time_limit=limit, bound=first_bound, add_per_round=add,
                                   progress=bar if show else None)
    bar.done()
    timings["solve"] = time.perf_counter() - t
    if res.status == "error":
        if strict:
            return Failure("error", f"column generation failed: {res.message}", res.stats)
        return None
    Vw, w = res.V, res.w
    w = sparse_design(Vw, obj.prior, w)
    w = exact_row_sums(Vw, w, w > 1e-9 * w.max())
    keep = w > 0
    Q = Vw[:, keep] * w[keep]
    Q = Q / Q.sum(axis=1, keepdims=True)
    mix = None
    if inv is not None and inv.any():
        # which kept columns are ULDP's invertible unit rays: exactly one non-zero entry
        inv_cols = np.array([np.count_nonzero(Q[:, j]) == 1 for j in range(Q.shape[1])])
        mix = ~inv_cols if inv_cols.any() else None
    kinds = {StaircasePricer: "staircases", ExplicitPricer: "listed rays"}
    stats = {"method": "colgen", "pricing": kinds.get(type(pricer), "LIP slice"),
             **{key: v for key, v in res.stats.items()}, "support": int(keep.sum())}
    if first_bound is not None:
        stats["variance_bound"] = first_bound
    outputs = tuple(f"y{j}" for j in range(Q.shape[1]))
    # the export (vertex, exact row sums, repair) may move the risk: the exported channel is judged
    message = res.message if time_limit is None else res.message.replace(
        f"time limit ({limit:.0f} s)", f"time limit ({float(time_limit):.0f} s)")
    return Candidate(Q, outputs, res.lower, stats, mix_columns=mix, proven=res.status == "optimal", message=message,
                     rel_gap=PROVEN_REL_GAP, fallback="the design's channel", recheck_rel_gap=PROVEN_REL_GAP,
                     recheck_message="the exported channel is not within 1e-6 of the bound")
