"""Standard LDP mechanisms as baselines on any problem: one verified, scored row each.

The mechanisms, their budget ``ε_b``, their exact check and how each objective is scored
are those of :mod:`mechopt._baseline_catalog` (k-RR, SUE, OUE, OLH, subset selection,
Hadamard response; ``scored_by``: ``orbit``, ``channel``, ``symmetric sums``,
``support-count estimator``); the location baselines those of :mod:`mechopt.geo`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ._baseline_catalog import baseline_epsilon, baseline_families, score, verified_families
from ._errors import InputError
from ._problem import Problem, load_problem

__all__ = ["baseline_epsilon", "baseline_families", "baselines", "baselines_report", "score"]


def baselines(problem: Problem | str | Path | dict, *, optimum: float | None = None) -> list[dict[str, Any]]:
    """Standard mechanisms on the problem's inputs, verified exactly and scored (one row each).

    Parameters
    ----------
    problem : Problem, dict or path
    optimum : float, optional
        The solver's optimum; each row then also carries ``ratio`` = baseline / optimum
        (optimum / baseline for mutual information, so a ratio ``>= 1`` always means
        "the optimum is at least as good").

    Returns
    -------
    list of dict
        ``{"name", "source", "epsilon", "family", "outputs", "privacy_ok", "achieved",
        "objective", "scored_by", "note"}`` (and ``"ratio"``).

    Examples
    --------
    >>> rows = baselines({"k": 10, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 0.5}],
    ...                   "objective": {"kind": "estimation_variance"}})
    >>> [(r["name"], round(r["objective"], 1)) for r in rows if r["name"].startswith(("k-RR", "subset"))]
    [('k-RR', 242.5), ('subset selection (d=4)', 127.2)]
    """
    p = problem if isinstance(problem, Problem) else load_problem(problem)
    return _baseline_rows(p, optimum, _places_of(problem))[0]


def _places_of(source: Problem | str | Path | dict):
    """The places of a problem file or document with a ``places:`` section (else None)."""
    from .geo import places_from_spec

    if isinstance(source, Problem):
        return None
    if isinstance(source, dict):
        doc, base = source, None
    else:
        from ._problem import read_document

        doc, base = read_document(source), Path(source).parent
    return places_from_spec(doc["places"], base) if isinstance(doc, dict) and "places" in doc else None


def _baseline_rows(p: Problem, optimum: float | None, places=None) -> tuple[list[dict[str, Any]], str]:
    """The rows of :func:`baselines` (then the location baselines, :func:`mechopt.geo.geo_baselines`),
    and why there are none ("" when there are)."""
    from ._geo_baselines import geo_baselines

    rows, why = _standard_rows(p, optimum)
    geo = geo_baselines(p, places, optimum=optimum)
    return rows + geo, ("" if geo else why)


def _standard_rows(p: Problem, optimum: float | None) -> tuple[list[dict[str, Any]], str]:
    from .families._spec import approx_count

    checked, why = verified_families(p)
    out = []
    for row, fam, cert in checked:
        achieved = max((c.achieved for c in cert.checks), default=0.0)
        try:
            value, how, note = score(p, fam)
        except InputError as err:
            value, how, note = None, None, str(err)
        rec = {"name": row["name"], "source": row["source"], "epsilon": row["epsilon"], "family": row["family"],
               "outputs": approx_count(fam.outputs_count()), "privacy_ok": bool(cert.verified),
               "achieved": achieved if math.isfinite(achieved) else "inf",
               "objective": value, "scored_by": how, "note": note or cert.detail}
        if optimum is not None and value is not None and math.isfinite(value) and value != 0:
            rec["ratio"] = (value / optimum) if p.objective.minimize else (optimum / value)
        out.append(rec)
    return out, why


def baselines_report(problem: Problem | str | Path | dict, *, solve_kwargs: dict | None = None) -> dict:
    """``mechopt baselines --json``: the solver's optimum and every baseline row (``note``: why there is none)."""
    from ._solve import solve

    p = problem if isinstance(problem, Problem) else load_problem(problem)
    result = solve(p, quiet=True, **(solve_kwargs or {}))
    optimum = result.objective if result.ok else None
    rows, why = _baseline_rows(p, optimum, _places_of(problem))
    report = {"problem": p.name, "objective": p.objective.kind, "optimum": optimum, "bound": result.bound,
              "solver_status": result.status, "baselines": rows}
    if why:
        report["note"] = f"no baseline applies: {why}"
    return report
