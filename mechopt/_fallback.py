"""When a solver or its repair fails: the best exactly verified channel the run saw.

The dispatcher (:mod:`mechopt._solve`) collects candidates and exports the best one by
the objective. Every candidate passes the exact verifier before it is ranked, so the
export is private as claimed whatever went wrong upstream:

* the solver's own channel, as it is, and cleaned (entries below 1e-9 set to 0, rows
  renormalised) then mixed toward a constant channel by the smallest verified ``t`` in
  ``[0, 1)`` (the repair of :mod:`mechopt.solvers._repair` stops at ``t = 1e-2``; any
  larger ``t`` still verifies once some ``t`` does, since the notions are convex and
  ``t = 1`` is constant), also after tying the rows whose budgets are tiny (block LDP at
  ε = 1e-9: the rows of a block averaged);
* the best constant channel for the objective (every notion allows a channel whose rows
  are all equal): the argmin of the expected loss over outputs, a small LP for a
  minimax or weighted loss, one output for the free-output objectives (whose value does
  not depend on the constant row);
* randomized response ``(1 - t) J / k + t I`` at the largest ``t`` that verifies, where
  the outputs are the inputs (labeled square outputs, or free outputs); over the groups
  of inputs that a zero budget ties, when there are such.

Examples
--------
>>> import numpy as np
>>> from mechopt.objectives import Objective
>>> L = np.array([[0.0, 4.0, 2.5], [4.0, 0.0, 2.5]])
>>> o = Objective("worst_case_loss", np.array([0.5, 0.5]), loss=L)
>>> best_constant_row(o, 3).round(6).tolist()    # half and half beats every point mass (2.5)
[0.5, 0.5, 0.0]
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

#: pairs whose budget is below these are tied (rows averaged) in the fallbacks' candidates
TIE_CANDIDATES = (1e-8, 1e-5)
#: randomized response is tried up to this many inputs (its k x k matrix is verified ~50 times)
RR_MAX_K = 1000
#: seconds the candidates may spend on exact checks before the search stops with what it has
#: (an E-LDP check at k = 200 takes 0.13 s; the search makes ~150 of them)
SECONDS = 20.0


@dataclass
class Candidate:
    """A channel and where it came from; ``value`` is set once it is verified."""

    name: str
    Q: np.ndarray
    outputs: tuple
    mix_columns: np.ndarray | None = None
    value: float = math.nan


def best_constant_row(obj, m: int) -> np.ndarray:
    """The row ``u`` minimising the objective of the constant channel ``1 u^T`` over ``m`` outputs.

    Expected loss is linear in ``u``: a point mass at ``argmin_y sum_x P(x) L(x, y)``.
    Minimax and weighted losses are convex and piecewise linear: the LP
    ``min sum_i w_i s_i`` with ``s_i >= (L_i u)_x`` for each minimax term, the point
    masses kept if the LP does no better (a failed LP never costs the fallback).
    """
    from .objectives import evaluate

    def value(u: np.ndarray) -> float:
        return evaluate(obj, np.tile(u, (len(obj.prior), 1)))

    form = obj.type.labeled_form(obj)
    if form is None:
        return np.eye(m)[int(np.argmin([value(row) for row in np.eye(m)]))]
    # the point mass at y: sum_x C[x, y] + sum_i w_i max_x L_i[x, y]
    if form.loss is not None:  # an expected loss: sum_x P(x) L(x, y)
        linear = obj.prior @ form.loss
    else:
        linear = np.zeros(m) if form.cost is None else form.cost.sum(axis=0)
    at = linear + sum(w * L.max(axis=0) for w, L in form.minimax)
    best = np.eye(m)[int(np.argmin(at))]
    worst = list(form.minimax)
    if not worst:
        return best
    c = np.zeros(m + len(worst))
    c[:m] = linear
    rows, k = [], len(obj.prior)
    for i, (w, L) in enumerate(worst):
        c[m + i] = w
        block = np.zeros((k, m + len(worst)))
        block[:, :m] = L
        block[:, m + i] = -1.0
        rows.append(block)
    from .solvers.backends._adapters import get_backend

    A_ub = np.vstack(rows) if rows else None
    b_ub = np.zeros(A_ub.shape[0]) if rows else None
    A_eq = np.concatenate([np.ones(m), np.zeros(len(worst))])[None, :]
    bounds = [(0, None)] * m + [(None, None)] * len(worst)
    sol = get_backend("highs").solve(c, A_ub, b_ub, A_eq, np.ones(1), bounds)
    if sol.status != "optimal":
        return best
    u = np.clip(np.asarray(sol.x[:m], dtype=float), 0.0, None)
    if not u.sum() > 0:
        return best
    u = u / u.sum()
    return u if value(u) < value(best) else best


def constant_candidate(problem) -> Candidate:
    """The best constant channel (:func:`best_constant_row`); one output when outputs are free."""
    k = problem.k
    if problem.free_outputs:
        return Candidate("the constant channel", np.ones((k, 1)), ("y0",))
    m = len(problem.outputs)
    u = best_constant_row(problem.objective, m)
    support = int(np.count_nonzero(u))
    what = "the best constant channel" + ("" if support == 1 else f" (mixing {support} outputs)")
    return Candidate(what, np.tile(u, (k, 1)), tuple(problem.outputs))


def _largest_rr(k: int, notions, group_of: np.ndarray, deadline: float = math.inf) -> tuple[float, np.ndarray] | None:
    """``(t, Q)`` with ``Q[x] = (1 - t) 1 / g + t e_{group(x)}`` at the largest ``t`` in ``(0, 1]`` found to verify.

    ``group_of[x]`` in ``0..g-1``: randomized response over the groups of rows a zero
    budget ties (plain randomized response when every input is its own group).
    """
    from ._verify import verify

    g = int(group_of.max()) + 1

    def channel(t: float) -> np.ndarray:
        return np.full((k, g), (1.0 - t) / g) + t * np.eye(g)[group_of]

    t, lo = 1.0, 0.0
    while t > 1e-18 and not verify(channel(t), notions).verified:
        lo, t = t, t / 4  # lo: the last t that failed
        if time.monotonic() > deadline:
            return None
    if t <= 1e-18:
        return None
    if lo:
        for _ in range(20):  # bisection between t (verifies) and lo (fails); convex notions: an interval
            if time.monotonic() > deadline:
                break
            mid = 0.5 * (t + lo)
            if verify(channel(mid), notions).verified:
                t = mid
            else:
                lo = mid
    return t, channel(t)


def rr_candidates(problem, deadline: float = math.inf) -> list[Candidate]:
    """Randomized response at the largest verified mixing, where the outputs are the inputs.

    Rows that a zero (or sub-resolution) budget ties share one output: randomized
    response over the groups (with labeled outputs, the group's first input names it).
    """
    from .solvers._repair import tied_rows

    k = problem.k
    square = problem.free_outputs or tuple(problem.outputs) == tuple(problem.inputs)
    if not square or k < 2 or k > RR_MAX_K:
        return []
    notions = list(problem.notions)
    group_of = np.arange(k)
    for grp in tied_rows(notions, k):
        group_of[grp] = grp.min()
    reps, group_of = np.unique(group_of, return_inverse=True)
    if len(reps) < 2:
        return []
    found = _largest_rr(k, notions, group_of, deadline)
    if found is None:
        return []
    t, Q = found
    what = "randomized response" + ("" if len(reps) == k else f" over {len(reps)} groups of tied inputs")
    if problem.free_outputs:
        return [Candidate(f"{what} (t = {t:.6g})", Q, tuple(f"y{j}" for j in range(Q.shape[1])))]
    full = np.zeros((k, k))
    full[:, reps] = Q
    return [Candidate(f"{what} (t = {t:.6g})", full, tuple(problem.outputs))]


def solver_candidates(problem, name: str, Q: np.ndarray, outputs: tuple,
                      mix_columns: np.ndarray | None = None, deadline: float = math.inf) -> list[Candidate]:
    """The solver's channel as it is, and mixed toward constant channels by the smallest verified ``t``."""
    from .solvers._repair import _repair, clean, tie, tied_rows

    notions = list(problem.notions)
    Q = np.asarray(Q, dtype=float)
    if Q.ndim != 2 or Q.shape[0] != problem.k or Q.shape[1] == 0 or not np.all(np.isfinite(Q)):
        return []
    k, m = Q.shape
    out = [Candidate(name, Q, outputs, mix_columns)]
    base = clean(Q, 1e-9)
    targets: list[tuple[str, np.ndarray | None]] = [("the uniform", None)]
    if not problem.free_outputs and m == len(problem.outputs):
        u = best_constant_row(problem.objective, m)
        cols = np.ones(m, bool) if mix_columns is None else np.asarray(mix_columns, bool)
        if np.all(cols[u > 0]):  # ULDP: the target may only use the protected outputs
            targets.append(("the best", u))
    seen: set = set()
    for below in (None, *TIE_CANDIDATES):
        groups = tied_rows(notions, k, below=below)
        key = tuple(sorted(tuple(sorted(g.tolist())) for g in groups))
        if key in seen:
            continue  # the same rows tied as before: the same candidates
        seen.add(key)
        P = tie(base, groups)
        tied = ", cleaned" + ("" if below is None else f", with the rows of budget below {below:g} tied")
        for label, u in targets:
            if time.monotonic() > deadline:
                return out
            rep = _repair(P, notions, mix_columns=mix_columns, t_max=1.0, target=u)
            if not rep.certificate.verified or rep.t >= 1.0:
                continue  # t = 1 is the constant channel itself, a candidate of its own
            if rep.t == 0:
                out.append(Candidate(f"{name}{tied}", rep.Q, outputs, mix_columns))
                break  # no mixing: the target does not matter
            out.append(Candidate(f"{name}{tied}, mixed toward {label} constant channel (t = {rep.t:.3g})", rep.Q,
                                 outputs, mix_columns))
    return out


def best_verified(problem, candidates: list[Candidate], check=None) -> tuple[Candidate | None, list[Candidate]]:
    """The best candidate that passes the exact verifier (and ``check``), and every verified one.

    Ties keep the earlier candidate (the solver's channels come first).
    """
    from .objectives import evaluate
    from ._verify import verify

    obj = problem.objective
    notions = list(problem.notions)
    good = []
    for c in candidates:
        if not verify(c.Q, notions).verified:
            continue
        if check is not None and not check(c.Q)[0]:
            continue
        c.value = evaluate(obj, c.Q)
        if math.isfinite(c.value):
            good.append(c)
    if not good:
        return None, []
    sign = 1.0 if obj.minimize else -1.0
    best = min(good, key=lambda c: sign * c.value)  # min keeps the first of equals
    return best, good
