"""The labeled metric LP by column generation over outputs, with the structured IPM as master.

An optimal channel of a metric LP on irregular places uses few of its outputs (measured:
39 of 150 places from a map, 20–33 of 60), and the IPM's cost per iteration grows with
the outputs it carries. :func:`solve_metric_outputs` therefore solves the LP restricted
to a set ``S`` of outputs (every kept pair, every input) with
:func:`._ipm.metric_ipm`, then asks every other output whether it could improve the
restricted optimum — the pricing LP of :mod:`._decompose`,

::

    p_y(mu) = min { (C[:, y] - mu) . q  :  q in the cone, 0 <= q <= 1 },

at the IPM's row duals ``mu`` — and adds the outputs with ``p_y < 0`` (keeping only the
outputs the last channel used) until none is left. Its bound is the Lagrangian one of
:mod:`._decompose` with the multipliers at hand: ``sum(mu)`` plus, for each output of
``S``, the box minimum at the IPM's pair duals (:func:`._route.safe_bound_from_duals`)
and, for every other output, the pricing LP's safe bound. It is valid for any
multipliers, so a run stopped by its time limit still has a proven gap.

The first ``S`` is where a simple private channel sends people: the exponential
mechanism ``Q[x, z] ∝ e^{-D(x, z)}`` (``D`` the shortest paths of ``E``), each of its
reports ``z`` mapped to its Bayes output ``argmin_y sum_x P(x) Q[x, z] L(x, y)`` — the
remap of Chatzikokolakis, Elsalamouny and Palamidessi (PETS 2017, "Efficient utility
improvement for location privacy"). On 150 places from a map it holds 46 outputs, and
two rounds add the 11 it missed.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Callable

import numpy as np

from ._parts import (IPM_TOL, RC_TOL, MetricLPResult, _closure, _label_bound, _pairs, _Pairs, _Pricing, _safe_sum, _sum_lower, pair_operator,
                     in_shares, snap_to_cone)

#: at most this many rounds (each one IPM run)
MAX_ROUNDS = 8
#: the IPM's iteration limit in a round (150 places from a map: ~250 iterations)
MAX_ITER = 400
#: once the IPM's gap is below the caller's, the whole bound is checked every this many iterations
CHECK_EVERY = 5
#: a round's IPM stops once the bound is within this share of the caller's gap (the rest
#: is left to the exact repair and verification)
CLOSE_SHARE = 0.8
#: seconds a pricing LP takes per kept pair (street graphs of 400 and 1 000 places:
#: 2.3-3.4 ms over 1 406 pairs, 11 ms over 3 548, 21 ms over 7 122), in one thread
PRICE_S_PER_PAIR = 3e-6
#: the IPM stops this share of the time limit (at most MARGIN_MAX_S) before the time its
#: last pricing is expected to need
MARGIN, MARGIN_MAX_S = 0.04, 24.0
#: at the first iterate of a round with a relative gap below this, every output is priced:
#: if some enter, the round stops there (a round to the caller's gap took ~90 more
#: iterations on 150 places from a map, and its outputs were priced in again anyway)
EARLY_GAP = 1e-4


def first_outputs(E: np.ndarray, cost: np.ndarray) -> list[int]:
    """The Bayes outputs of the exponential mechanism's reports: the first restricted set.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([0.0, 0.5, 1.0, 10.0, 10.5])       # two clusters on a line
    >>> D = np.abs(x[:, None] - x[None])
    >>> C = np.full(5, 0.2)[:, None] * D**2            # uniform prior, squared loss
    >>> first_outputs(0.5 * D, C)                      # one output per cluster
    [1, 3]
    >>> first_outputs(2.0 * D, C)                      # a larger budget: every place
    [0, 1, 2, 3, 4]
    """
    with np.errstate(over="ignore"):
        G = np.exp(-_closure(np.asarray(E, dtype=float)))
    Q = G / G.sum(axis=1, keepdims=True)
    return sorted(set(np.argmin(Q.T @ cost, axis=1).tolist()))


class _Bound:
    """The Lagrangian bound over every output: the IPM's pair duals on ``S``, pricing elsewhere.

    The pricing LPs run in :func:`._band.ipm_workers` threads, each on its own HiGHS model
    (HiGHS releases the GIL: the 1 021 outputs outside ``S`` on 2 000 street intersections
    took 15 s in two threads, 21 s in one);
    output ``y`` always goes to model ``y % threads``, which keeps its warm-start basis.
    """

    def __init__(self, E: np.ndarray, cost: np.ndarray, threads: int | None = None):
        from ._band import ipm_workers

        self.E, self.cost = E, cost
        self.threads = ipm_workers() if threads is None else max(int(threads), 1)
        self.models: list[_Pricing] = []  # made when first needed
        self.seconds = 0.0
        self._op = None
        self.last_terms = np.zeros(cost.shape[1])
        self.priced = 0

    def _nearest_priced(self, pricing: _Pricing, y: int) -> int | None:
        """The output closest to ``y`` (smallest budget) that ``pricing`` has a basis for."""
        have = pricing.bases
        if y in have or not have:
            return None
        done = np.fromiter(have, dtype=np.int64)
        return int(done[np.argmin(self.E[y, done])])

    def __call__(self, S: list[int], mu: np.ndarray, Pi: np.ndarray, a: np.ndarray, b: np.ndarray,
                 deadline: float | None = None, target: float = -math.inf) -> tuple[float, list[tuple[float, int]]]:
        """``(bound, [(p_y, y) for the outputs outside S that price in])``.

        Every output's term is the pricing LP's safe bound at ``mu`` (the exact ``p_y(mu)``
        up to rounding); an output of ``S`` takes the box minimum at the IPM's pair duals
        instead where they bound it higher, and is priced only when that term is below
        ``-RC_TOL`` (relative, shared out over the outputs) and there is time. Every term
        is ``<= 0`` (``q = 0`` is in the cone), so the sum only falls as outputs are
        priced: once it is below ``target`` the bound cannot reach it, and ``(-inf, [])``
        returns without pricing the rest (the outputs whose terms were the most negative
        last time are priced first). Past ``deadline`` an output outside ``S`` has no term
        (``(-inf, [])``); one of ``S`` keeps its term at the IPM's duals.
        """
        t = time.perf_counter()
        mu = np.asarray(mu, dtype=float)
        if not (np.all(np.isfinite(mu)) and np.all(np.isfinite(Pi))):
            return -math.inf, []
        if self._op is None or self._op[0] is not a:
            self._op = (a, pair_operator(self.E, a, b))
        op = self._op[1]
        col = {y: j for j, y in enumerate(S)}
        m = len(self.last_terms)
        tol = RC_TOL * max(float(np.abs(self.cost).max()), 1e-300)
        # an output of S whose term at the IPM's pair duals is above -skip is not priced:
        # the LP could raise the bound by at most skip (all of them together, RC_TOL);
        # near the IPM's optimum that is every one (1 000 street intersections: all 403
        # terms ~ -1e-317), and it halves the pricing
        skip = tol / max(m, 1)
        terms = np.zeros(m)
        for y, j in col.items():
            terms[y] = _label_bound(self.cost[:, y], mu, np.maximum(Pi[:, j], 0.0), op)
        order = [y for y in np.argsort(self.last_terms, kind="stable").tolist() if y not in col or terms[y] < -skip]
        state = {"running": _sum_lower(mu) + float(terms.sum()), "failed": False}
        entering: list[tuple[float, int]] = []
        lock = threading.Lock()
        while len(self.models) < self.threads:
            # each model its own pairs: with a dense metric they grow lazily, per model
            self.models.append(_Pricing(_Pairs(self.E)))

        def price(share: int, y: int) -> bool:
            with lock:
                if state["failed"]:
                    return False
                late = deadline is not None and time.perf_counter() > deadline
                if state["running"] < target or (late and y not in col):
                    state["failed"] = True
                    return False
            if late:
                return True  # an output of S: its term at the IPM's duals stands
            pricing = self.models[share]
            r = self.cost[:, y] - mu
            q, lam = pricing.solve(y, r, like=self._nearest_priced(pricing, y))
            lp = _label_bound(self.cost[:, y], mu, lam, pricing.pairs.bound_operator())
            with lock:
                self.priced += 1
                if y in col:
                    lp = max(lp, terms[y])
                elif float(r @ q) < -tol:
                    entering.append((float(r @ q), y))
                state["running"] += lp - terms[y]
                terms[y] = lp
            return True

        in_shares(order, self.threads, price)
        self.seconds += time.perf_counter() - t
        if state["failed"]:
            return -math.inf, []
        self.last_terms = terms
        return _safe_sum([_sum_lower(mu)] + terms.tolist()), sorted(entering, key=lambda e: e[1])


def solve_metric_outputs(E: np.ndarray, cost: np.ndarray, *, rel_gap: float = 1e-7, time_limit: float | None = None,
                         progress: Callable | None = None) -> MetricLPResult:
    """The labeled E-LDP LP by the IPM over a growing set of outputs, with a proven bound.

    Status ``optimal`` when ``objective - bound <= rel_gap |objective|``, else ``feasible``
    with that gap (time limit, the IPM's stall, or :data:`MAX_ROUNDS`).

    Examples
    --------
    >>> import numpy as np
    >>> xy = np.random.default_rng(3).uniform(0, 4, (12, 2))    # twelve places, no grid
    >>> D = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    >>> C = np.full(12, 1 / 12)[:, None] * D**2
    >>> r = solve_metric_outputs(0.7 * D, C)
    >>> r.status, bool(r.objective - r.bound <= 1e-7 * r.objective), r.stats["outputs_final"] <= 12
    ('optimal', True, True)
    """
    from ._ipm import metric_ipm

    t0 = time.perf_counter()
    E = np.asarray(E, dtype=float)
    cost = np.asarray(cost, dtype=float)
    k, m = cost.shape
    a, b = _pairs(E)
    w = np.exp(E[a, b])
    bound_of = _Bound(E, cost)
    S = first_outputs(E, cost)
    # the IPM stops early enough to price every output once at its last duals
    # (without that pricing there is no bound)
    end = None if time_limit is None else t0 + float(time_limit)
    deadline = None if end is None else (end - min(MARGIN * float(time_limit), MARGIN_MAX_S)
                                         - (m - len(S)) * PRICE_S_PER_PAIR * len(a) / bound_of.threads)
    best_Q, best_obj, best_bound = None, math.inf, -math.inf
    rounds: list[dict] = []
    message = ""
    it_total = 0
    for _round in range(MAX_ROUNDS):
        last: dict = {}

        def closes(Qi, mu, Pi, rel, S=S, last=last) -> bool:
            # once at a gap of EARLY_GAP: do outputs enter already? Then the round ends.
            # Below the caller's gap, the whole bound at every CHECK_EVERY-th iterate; the
            # first of these prices every output, and ends the round if the outputs
            # outside S alone keep the bound from closing (their terms barely move as the
            # IPM converges on S: 1 000 street intersections ran 120 iterations past that)
            early = rel > rel_gap
            if early and last.get("early_done"):
                return False
            last["calls"] = last.get("calls", 0) + (0 if early else 1)
            if not early and (last["calls"] - 1) % CHECK_EVERY:
                return False
            Qs = snap_to_cone(np.maximum(Qi, 0.0), E)
            obj = float(np.sum(cost[:, S] * Qs))
            allowed = CLOSE_SHARE * rel_gap * max(abs(obj), 1e-300)
            full = early or last.get("calls") == 1
            lb, entering = bound_of(S, mu, Pi, a, b, deadline, target=-math.inf if full else obj - allowed)
            if math.isfinite(lb):  # a complete pricing: the round's end may reuse it
                last.update(bound=lb, entering=entering, mu=mu)
            last["early_done"] = True
            if math.isfinite(lb) and lb >= obj - allowed:
                return True
            outside = -sum(bound_of.last_terms[y] for _, y in entering)
            return bool(entering) and (early or (full and outside > allowed))

        r = metric_ipm(cost[:, S], a, b, w, tol=min(IPM_TOL, 0.01 * rel_gap), deadline=deadline,
                       progress=None if progress is None else (lambda i, p, d, s, n=it_total: progress(n + i, p, d, s)),
                       enough=closes, check_below=max(rel_gap, EARLY_GAP), max_iter=MAX_ITER)
        it_total += r.iterations
        Qs = snap_to_cone(np.maximum(r.Q, 0.0), E)
        Q = np.zeros((k, m))
        Q[:, S] = Qs
        obj = float(np.sum(cost * Q))
        if "bound" in last and np.array_equal(last["mu"], r.mu):
            lb, entering = last["bound"], last["entering"]
        else:
            lb, entering = bound_of(S, r.mu, r.Pi, a, b, end)
        if obj < best_obj:
            best_Q, best_obj = Q, obj
        best_bound = max(best_bound, lb)
        rounds.append({"outputs": len(S), "iterations": r.iterations, "ipm_status": r.status, "objective": obj,
                       "bound": lb, "entering": len(entering), "s": time.perf_counter() - t0})
        if best_obj - best_bound <= rel_gap * max(abs(best_obj), 1e-300):
            break
        if r.status == "time limit" or (deadline is not None and time.perf_counter() > deadline):
            message = "time limit"
            break
        if not entering:
            message = f"the IPM {r.status} ({r.message})" if r.message else f"the IPM {r.status}"
            break
        used = [y for y, mass in zip(S, Qs.sum(axis=0)) if mass > 1e-9 * k]
        S = sorted(set(used) | {y for _, y in entering})
    else:
        message = f"{MAX_ROUNDS} rounds"
    closed = best_obj - best_bound <= rel_gap * max(abs(best_obj), 1e-300)
    if not closed:
        gap = (best_obj - best_bound) / max(abs(best_obj), 1e-300)
        message = f"{message}; proven relative gap {gap:.2e}" if math.isfinite(best_bound) else f"{message}; no bound"
    stats = {"rounds": rounds, "iterations": it_total, "outputs_final": len(S), "pricing_s": bound_of.seconds, "outputs_priced": bound_of.priced,
             "pairs_active": len(a), "total_s": time.perf_counter() - t0,
             "time_limit_hit": message.startswith("time limit")}
    return MetricLPResult("optimal" if closed else "feasible", best_Q, best_obj, best_bound,
                          "" if closed else message, stats)
