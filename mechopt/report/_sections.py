"""The sections of ``mechopt report``: what each one computes, as data and one figure.

Each function returns a :class:`Section` (paragraphs, a table, figures); :mod:`._html`
turns the list into the page. Every number comes from mechopt's own functions:
the exact verifier, :func:`mechopt.runtime.variance_report`, the MMSE risk of
:mod:`mechopt.runtime._mmse`, :func:`mechopt.baselines`, and the shuffle and
privacy-loss accounting of :mod:`mechopt.accounting` when it is installed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from . import _figures

#: the interval level of the expected-error section
LEVEL = 0.95


@dataclass
class Figure:
    """One embedded figure: ``id`` (``fig-…``), a ``data:`` URI, alternative text, caption."""

    id: str
    uri: str
    alt: str
    caption: str


@dataclass
class Section:
    """One part of the page: ``id`` (its anchor), a title, paragraphs (plain text), a table, figures."""

    id: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


def _g(v: Any, digits: int = 6) -> str:
    if v is None:
        return "—"
    if isinstance(v, str):
        return v
    v = float(v)
    return "∞" if math.isinf(v) else f"{v:.{digits}g}"


def _claims(mech) -> str:
    out = []
    for p in mech.privacy:
        budget = f" ε = {p['epsilon']}" if "epsilon" in p else ""
        delta = f", δ = {p['delta']}" if p.get("delta") else ""
        out.append(f"{p['notion']}{budget}{delta}")
    return "; ".join(out)


# --------------------------------------------------------------------------- channel


def channel(mech, source: str) -> Section:
    """The heat map of ``Q[x, y]`` and what the file claims."""
    k, m = mech.matrix.shape
    s = Section("channel", "The channel")
    s.paragraphs.append(f"{source}: {k} inputs × {m} outputs; privacy claims: {_claims(mech)}"
                        + ("; memoized (one permanent response per true value)" if mech.memoize else "") + ".")
    s.figures.append(Figure("fig-heatmap", _figures.heat_map(mech), "heat map of the channel Q[x, y]",
                            "Q[x, y] = Pr(report y | true value x); each row sums to 1."))
    s.data = {"k": k, "m": m, "source": source}
    return s


# ----------------------------------------------------------------------- certificate


def certificate(mech, sha256: str, from_file: bool = True) -> Section:
    """The exact verification (re-run now), the solver's record of value, bound and gap, the digest."""
    from .._identifiability import identifiability

    cert = mech.verify()
    s = Section("certificate", "The certificate")
    s.paragraphs.append("Exact verification, re-run for this page (rational arithmetic, e^ε enclosed): "
                        + ("verified exactly." if cert.verified else f"NOT verified: {cert.detail}"))
    s.header = ["notion", "budget", "achieved", "worst slack", "result"]
    s.rows = [[c.notion, _g(c.budget), _g(c.achieved, 10), _g(c.worst_slack, 3), "ok" if c.ok else "FAIL"]
              for c in cert.checks]
    obj = mech.objective
    value, bound, gap = obj.get("value"), obj.get("bound"), obj.get("gap")
    if obj.get("kind", "none") == "none" or value is None:
        status = "no objective recorded in the file (a channel wrapped with its claims only)"
    elif bound is None:
        status = f"{obj['kind']} = {_g(value, 10)}; no proven bound recorded: feasible, optimality not proven"
    else:
        rel = gap / max(abs(value), 1e-300) if gap is not None else None
        status = (f"{obj['kind']} = {_g(value, 10)}; proven bound {_g(bound, 10)}, gap {_g(gap, 3)}"
                  + (f" (relative {_g(rel, 3)})" if rel is not None else "") + ", as recorded by the solver")
    s.paragraphs.append(f"Status: {status}.")
    s.paragraphs.append(f"sha256 {sha256} — " + ("recomputed over the RFC 8785 canonical form when the file was "
                                                  "read, and it matches." if from_file else
                                                  "of the RFC 8785 canonical form of this mechanism."))
    ident = identifiability(mech.matrix)
    s.paragraphs.append("The reports identify the input distribution (rank of Q = k)." if ident.identifiable
                        else f"The reports do not identify the input distribution: {ident.describe(mech.inputs)}.")
    s.data = {"verified": bool(cert.verified), "value": value, "bound": bound, "gap": gap, "sha256": sha256,
              "identifiable": ident.identifiable}
    return s


# -------------------------------------------------------------------- expected error


def design_prior(mech) -> tuple[np.ndarray, str]:
    """The distribution the error is predicted at: the design prior when strictly positive, else uniform."""
    k = mech.matrix.shape[0]
    prior = mech.objective.get("prior")
    if isinstance(prior, list) and len(prior) == k:
        p = np.asarray(prior, dtype=float)
        if np.all(p > 0) and abs(p.sum() - 1.0) < 1e-9:
            return p / p.sum(), "the design prior of the file"
    return np.full(k, 1.0 / k), "the uniform distribution"


def mmse_per_input(Q: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Per-user squared error of the posterior-mean frequency of each input.

    ``r_a = P(a) − Σ_y (P(a) Q[a, y])² / (P · q_y)`` (Var 1{X = a} − Var Pr(X = a | Y));
    ``Σ_a r_a`` is :func:`mechopt.runtime.mmse_histogram_risk` (Jiang, Li, Tandon eq. 31),
    and the frequency of ``a`` estimated from ``n`` reports has squared error ``r_a / n``.

    Examples
    --------
    >>> import numpy as np
    >>> mmse_per_input(np.array([[0.75, 0.25], [0.25, 0.75]]), np.array([0.5, 0.5])).tolist()
    [0.1875, 0.1875]
    """
    mass = prior @ Q
    joint = prior[:, None] * Q
    with np.errstate(divide="ignore", invalid="ignore"):
        explained = np.where(mass > 0, joint ** 2 / mass, 0.0).sum(axis=1)
    return np.maximum(prior - explained, 0.0)


def expected_error(mech, n: int) -> Section:
    """The error of the estimated distribution from ``n`` reports, with the intervals to expect."""
    from .._identifiability import identifiability
    from ..runtime import variance_report

    Q = mech.matrix
    p0, where = design_prior(mech)
    z = NormalDist().inv_cdf((1 + LEVEL) / 2)
    s = Section("error", f"Expected error at n = {n:,} reports")
    ident = identifiability(Q)
    if ident.identifiable:
        rep = variance_report(Q, p0, n, level=LEVEL)
        se, lower, upper = rep.standard_errors, rep.lower, rep.upper
        s.paragraphs.append(
            f"Maximum likelihood ('mechopt estimate', method em) at {where}: E‖p̂ − p‖² ≈ {_g(rep.risk)} / n = "
            f"{_g(rep.expected_squared_error, 4)} (root {_g(math.sqrt(rep.expected_squared_error), 4)}), "
            "from the Fisher information of one report, B J⁻¹ Bᵀ / n (first order in 1/n). "
            f"{int(LEVEL * 100)}% Wald intervals p ± {z:.2f}·se.")
        kind, total = "em", rep.expected_squared_error
    else:
        r = mmse_per_input(Q, p0)
        se = np.sqrt(r / n)
        lower, upper = p0 - z * se, p0 + z * se
        s.paragraphs.append(
            f"The channel does not identify the distribution ({ident.describe(mech.inputs)}); "
            f"{ident.next_step()}. Shown here: the Bayesian estimate under {where} ('mechopt estimate --method mmse'), "
            "which splits every input's mass by the prior: "
            f"E‖Ŝ/n − S/n‖² = {_g(float(r.sum()))} / n = {_g(float(r.sum()) / n, 4)} (Jiang, Li, Tandon eq. 31), "
            f"valid only as far as the prior is. {int(LEVEL * 100)}% intervals p ± {z:.2f}·se.")
        kind, total = "mmse", float(r.sum()) / n
    s.header = ["input", "p", "std. error", f"{int(LEVEL * 100)}% interval"]
    s.rows = [[x, _g(p, 4), _g(e, 3), f"[{lower[i]:.4f}, {upper[i]:.4f}]"]
              for i, (x, p, e) in enumerate(zip(mech.inputs, p0, se))]
    s.figures.append(Figure("fig-error", _figures.error_bars(list(mech.inputs), p0, lower, upper,
                                                             f"{int(LEVEL * 100)}% intervals at n = {n:,} ({kind})"),
                            "each input's frequency with its expected interval",
                            f"Expected {int(LEVEL * 100)}% intervals of the estimated frequencies at n = {n:,}."))
    s.data = {"method": kind, "expected_squared_error": total, "standard_errors": se.tolist(), "n": n}
    return s


# ------------------------------------------------------------------------- baselines


def problem_of(mech):
    """The problem a mechanism file records: its inputs, claims and objective (None without an objective)."""
    from .._problem import load_problem
    from ..objectives import REGISTRY

    obj = {k: v for k, v in mech.objective.items() if k not in ("value", "bound", "gap")}
    t = REGISTRY.get(obj.get("kind"))
    if t is None:
        return None
    outputs = "free" if t.outputs == "free" else list(mech.outputs)
    return load_problem({"inputs": list(mech.inputs), "outputs": outputs, "privacy": mech.privacy,
                         "objective": obj})


def baselines(mech, problem, places=None) -> Section:
    """The standard mechanisms at the largest ε-LDP budget that implies the claims, on the same axis."""
    from .._baselines import _baseline_rows
    from .._units import objective_unit
    from ..objectives import evaluate

    s = Section("baselines", "Baselines")
    if problem is None:
        s.paragraphs.append("No objective is recorded in the file and no problem was given (--problem): "
                            "the baselines have nothing to be scored on.")
        return s
    value = mech.objective.get("value")
    if value is None or tuple(problem.inputs) != tuple(mech.inputs):
        value = None
    if value is None and (problem.free_outputs or tuple(problem.outputs) == tuple(mech.outputs)):
        value = float(evaluate(problem.objective, mech.matrix))
    rows, why = _baseline_rows(problem, value, places)
    unit = objective_unit(problem.objective)
    kind = problem.objective.kind
    if why:
        s.paragraphs.append(f"No baseline applies: {why}.")
    s.paragraphs.append(f"Each standard mechanism is built at the largest ε for which ε-LDP implies every claim, "
                        f"verified exactly under the claims and scored on {kind} ({unit}); "
                        + ("lower is better." if problem.objective.minimize else "higher is better."))
    s.header = ["mechanism", "ε", f"{kind}", "ratio to this mechanism", "privacy", "scored by"]
    names, values = ["this mechanism"], [value]
    s.rows.append(["this mechanism", "—", _g(value, 8), "1", "verified", "the file"])
    unscored = []
    for r in rows:
        if r["objective"] is None:
            unscored.append(f"{r['name']} ({r['note']})")
            continue
        s.rows.append([r["name"], _g(r["epsilon"]), _g(r["objective"], 8), _g(r.get("ratio"), 4),
                       "ok" if r["privacy_ok"] else "FAIL", r["scored_by"] or r["note"]])
        if r["privacy_ok"] and math.isfinite(r["objective"]):
            names.append(r["name"])
            values.append(r["objective"])
    if unscored:
        s.paragraphs.append("Not scored: " + "; ".join(unscored) + ".")
    drawn = [(a, b) for a, b in zip(names, values) if b is not None]
    if drawn:
        s.figures.append(Figure("fig-baselines", _figures.bars([a for a, _ in drawn], [b for _, b in drawn], 0,
                                                               f"{kind} ({unit})", "this mechanism (red) and the "
                                                               "standard mechanisms, on one axis"),
                                "bar chart of the objective of this mechanism and of each baseline",
                                f"{kind} of this mechanism and of the baselines that meet its claims."))
    s.data = {"value": value, "rows": rows}
    return s
