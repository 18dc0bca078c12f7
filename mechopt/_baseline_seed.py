"""Never worse than a standard mechanism: baselines seed the free-output column generation.

:func:`seed_channels` gives the column generation (:func:`mechopt.solvers.free._route.route`)
the standard mechanisms of :mod:`mechopt._baselines` at the problem's LDP-equivalent
budget (inside every notion's cone: :meth:`mechopt.notions.Notion.ldp_equivalent`) that
have an explicit channel of at most ``4k`` columns (k-RR, small subset selections, the
Hadamard response): their columns start the master, so its value — and the exported
channel's, which the dispatcher verifies exactly, up to the repair — is at least each
one's. The others (subset selection, RAPPOR, OUE, OLH: ``C(k, d)`` outputs) are too
large for the master; after an unproven solve, :func:`never_worse` scores them exactly
(:mod:`mechopt._baseline_exact`) and, when the best (verified exactly) beats the export,
exports that family instead (the solver's proven bound kept) and says so.
"""

from __future__ import annotations

import math

import numpy as np

#: a baseline's channel seeds the master when it has at most this many columns per input
SEED_MAX_COLUMNS_PER_INPUT = 4
#: and at most this many in all
SEED_MAX_COLUMNS = 8192


def seed_channels(problem) -> list[tuple[str, np.ndarray]]:
    """``[(name, Q)]``: the standard mechanisms small enough for the master (module docstring).

    Examples
    --------
    >>> from mechopt._problem import problem_from_dict
    >>> p = problem_from_dict({"k": 5, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1}],
    ...                        "objective": {"kind": "histogram_mse", "prior": [0.4, 0.3, 0.1, 0.1, 0.1]}})
    >>> [(name, Q.shape) for name, Q in seed_channels(p)]
    [('k-RR', (5, 5)), ('subset selection (d=2)', (5, 10)), ('Hadamard response', (5, 8))]
    """
    from ._baseline_catalog import standard_families
    from .families._estimate import family_channel

    return [(row["name"], np.asarray(family_channel(fam)[1], dtype=float))
            for row, fam in standard_families(problem)[0] if fam.outputs_count() <= _seed_cap(problem)]


def _seed_cap(problem) -> int:
    return min(SEED_MAX_COLUMNS, SEED_MAX_COLUMNS_PER_INPUT * problem.k)


def never_worse(problem, result, timings: dict):
    """``result``, or the best standard family when it is strictly better than an unproven export.

    The families too large to seed the master are scored exactly; one that beats the
    exported channel by more than the export's tolerance is exported in its place (as a
    family mechanism, verified exactly; the bound stays the solver's). Either way
    ``stats["best_baseline"]`` records the best of them (name, value, ``scored_by``) once
    it is verified exactly.
    """
    from ._baseline_catalog import score, standard_families
    from ._errors import InputError
    from .families import verify_family
    from .objectives import objective_scale
    from .solvers._outcome import RAYS_REL_GAP

    if result.status != "feasible" or result.objective is None:
        return result
    obj = problem.objective
    better = (lambda a, b: a < b) if obj.minimize else (lambda a, b: a > b)
    best = None
    for row, fam in standard_families(problem)[0]:
        if fam.outputs_count() <= _seed_cap(problem):
            continue  # in the master from the start: the export is at least as good
        try:
            value, how, _ = score(problem, fam)
        except InputError:
            continue
        if value is not None and math.isfinite(value) and (best is None or better(value, best[0])):
            best = (value, row, fam, how)
    try:
        if best is None or not verify_family(best[2], list(problem.notions)).verified:
            return result
    except InputError:  # a notion the family verifier has no exact check for
        return result
    value, row, fam, how = best
    result.stats["best_baseline"] = {"name": row["name"], "value": value, "scored_by": how}
    tol = RAYS_REL_GAP * max(abs(value), objective_scale(obj))
    if not better(value, result.objective) or abs(value - result.objective) <= tol:
        return result
    return _export_family(problem, result, row, value, timings)


def _export_family(problem, result, row, value: float, timings: dict):
    """The baseline family ``row`` as the answer (verified exactly; the solver's bound kept)."""
    import time
    from dataclasses import replace

    from ._settle import settle
    from .solvers._outcome import FamilyCandidate

    stats = {**result.stats, "incumbent": f"baseline: {row['name']}", "outputs": "family",
             "solver_objective": result.objective}
    bound = result.bound if result.bound is not None else value
    out = settle(problem, FamilyCandidate(row["family"], value, bound, stats, time.perf_counter()), timings)
    if out.status not in ("optimal", "feasible"):
        return result
    note = (f"the baseline {row['name']} ({value:.10g}) beats the solver's channel ({result.objective:.10g}): "
            f"exported as a family instead")
    return replace(out, message="; ".join(m for m in (note, out.message) if m))
