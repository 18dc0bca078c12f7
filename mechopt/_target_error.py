"""Choosing ε: the smallest budget whose optimal mechanism meets a target error at n users.

``mechopt tradeoff PROBLEM --target-error X --n N`` walks the trade-off's privacy axis
(:func:`mechopt.tradeoff`: one notion's ε, or a multiplier ``t`` of every budget) and,
at each point, solves the problem and measures the **expected squared error of the
estimated input distribution from n users**,

    ``error(x) = E‖p̂ − p‖² ≈ tr(B J⁻¹ Bᵀ) / n``

(:func:`mechopt.runtime.estimation_risk` of the optimal channel at ``p0``: the
objective's ``p0``/prior when it is strictly positive, the uniform distribution
otherwise; docs/model.md). For a square invertible channel this is the exact mean squared
error of the unbiased inversion estimator; for the others, that of maximum likelihood to
first order in ``1/n``. A channel that does not identify the distribution has an
infinite error.

The error falls as the budget grows. The grid is scanned in increasing order; between
the last point that misses the target and the first that meets it (or between 0 and the
first point, when it already meets it) the answer is bisected until the bracket is
within ``rtol`` of its upper end. The answer is the smallest *solved* point that meets
the target: its mechanism meets it, verified like every solve.
"""

from __future__ import annotations

import math
import time
import warnings
from typing import Callable

import numpy as np

from ._errors import InputError
from ._problem import Problem, load_problem

__all__ = ["smallest_epsilon"]

#: relative width of the final bracket
RTOL = 1e-3
#: the most bisection steps (each is a solve)
MAX_STEPS = 40


def _positive(value, field: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(field, f"must be a positive number, got {value!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise InputError(field, f"must be a positive finite number, got {value!r}")
    return v


def _users(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError("n", f"must be an integer >= 1 (the number of users), got {n!r}")
    return int(n)


def smallest_epsilon(problem: Problem | str | dict, target_error: float, n: int, *, epsilons=None, scale=None,
                     notion: str | int | None = None, rtol: float = RTOL,
                     progress: Callable[[dict], None] | None = None) -> dict:
    """The smallest ε (or budget multiplier) whose optimal mechanism's error at ``n`` users is at most the target.

    Parameters
    ----------
    problem : Problem, dict or path
    target_error : float
        The largest acceptable ``E‖p̂ − p‖²`` (sum over inputs of the squared error of
        the estimated distribution).
    n : int
        Number of users (one report each).
    epsilons, scale, notion
        The axis, as :func:`mechopt.tradeoff` (default: the multiplier grid
        :data:`mechopt._plots.DEFAULT_SCALE`).
    rtol : float, keyword-only
        Bisection stops when the bracket is narrower than ``rtol`` times its upper end.
    progress : callable, optional, keyword-only
        Called with each point (a dict as in ``points``) as soon as it is solved.

    Returns
    -------
    dict
        ``axis`` (``"epsilon"`` or ``"multiplier"``), ``notion``, ``target_error``, ``n``,
        ``p0``, ``answer`` (the smallest point found that meets the target, or ``None``),
        ``bracket`` (``[lo, hi]``: the target is missed at ``lo`` and met at ``hi``),
        ``points`` (every solved point in the order solved: ``x``, ``error``,
        ``objective``, ``status``, ``seconds``, ``phase`` ``"grid"`` or ``"bisect"``),
        ``monotone`` (whether the grid's errors never rise) and ``note``.

    Raises
    ------
    InputError
        For a non-positive target or ``n``, or an axis :func:`mechopt.tradeoff` refuses.

    Examples
    --------
    Warner's randomized response (k = 2, uniform prior) has ``n·E‖p̂ − p‖² =
    (e^ε + 1)² / (2 (e^ε − 1)²)``; at ``n = 1000`` the target ``0.005`` asks for
    ``(e^ε + 1)/(e^ε − 1) = √10``, ``ε = log((√10 + 1)/(√10 − 1)) = 0.6549``:

    >>> p = {"k": 2, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
    ...      "objective": {"kind": "expected_loss"}}
    >>> r = smallest_epsilon(p, 0.005, 1000, epsilons="0.5,1,2")
    >>> round(r["answer"], 3), r["bracket"][0] < 0.6549 <= r["bracket"][1]
    (0.655, True)
    """
    from ._identifiability import IdentifiabilityWarning
    from ._plots import DEFAULT_SCALE, _pick_notion, _variant, parse_epsilons
    from ._solve import solve
    from .runtime import estimation_risk

    target = _positive(target_error, "target_error")
    users = _users(n)
    rtol = _positive(rtol, "rtol")
    p = problem if isinstance(problem, Problem) else load_problem(problem)
    if epsilons is not None and scale is not None:
        raise InputError("epsilons", "give either epsilons (one notion's budget) or scale (every budget), not both")
    if epsilons is not None:
        xs = np.sort(parse_epsilons(epsilons))
        index = _pick_notion(p, notion)
        name, axis = p.notions[index].name, "epsilon"

        def variant(x: float) -> Problem:
            return _variant(p, index=index, epsilon=x)
    else:
        if notion is not None:
            raise InputError("notion", "a notion is chosen only with epsilons; scale multiplies every budget")
        xs = np.sort(parse_epsilons(DEFAULT_SCALE if scale is None else scale, field="scale"))
        name, axis = None, "multiplier"

        def variant(x: float) -> Problem:
            return _variant(p, factor=x)
    prior = np.asarray(p.objective.prior, dtype=float)
    p0 = prior if prior.size == p.k and np.all(prior > 0) else np.full(p.k, 1.0 / p.k)
    points: list[dict] = []

    def error_at(x: float, phase: str) -> float:
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IdentifiabilityWarning)  # an unidentifying channel: error inf
            r = solve(variant(x), quiet=True)
        err = math.nan
        if r.ok and getattr(r.mechanism, "matrix", None) is not None:
            err = estimation_risk(r.mechanism.matrix, p0) / users
        point = {"x": float(x), "error": err, "objective": r.objective, "status": r.status,
                 "seconds": time.perf_counter() - started, "phase": phase}
        points.append(point)
        if progress is not None:
            progress(point)
        return err

    errors = []
    lo, hi = 0.0, None
    for x in xs:
        e = error_at(float(x), "grid")
        errors.append(e)
        if e <= target:
            hi = float(x)
            break
        lo = float(x)
    finite = [e for e in errors if not math.isnan(e)]
    monotone = all(b <= a * (1 + 1e-9) for a, b in zip(finite, finite[1:]))
    base = {"axis": axis, "notion": name, "target_error": target, "n": users, "p0": p0.tolist()}
    if hi is None:
        best = min(finite) if finite else math.nan
        return {**base, "answer": None, "bracket": [lo, None], "points": points, "monotone": monotone,
                "note": f"no point of the grid meets the target: the smallest error is {best:.6g} at "
                        f"{xs[-1]:g}; extend the grid to larger values"}
    steps = 0
    while hi - lo > rtol * hi and steps < MAX_STEPS:
        mid = (lo + hi) / 2.0
        e = error_at(mid, "bisect")
        if e <= target:
            hi = mid
        else:
            lo = mid
        steps += 1
    note = f"bisected to a bracket of {hi - lo:.3g} in {steps} solves"
    if not monotone:
        note += "; the grid's errors are not monotone: bisection assumed the error falls as the budget grows"
    return {**base, "answer": hi, "bracket": [lo, hi], "points": points, "monotone": monotone, "note": note}
