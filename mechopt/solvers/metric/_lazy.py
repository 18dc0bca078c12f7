"""The labeled metric LP with lazy pairs per output: the structured IPM on a growing relaxation.

Places given by coordinates (Euclidean, haversine) have no implied pairs: every pair of
places is a row for every output (150 places from a map: 22 350 pairs per output), and
the IPM over all of them converges slowly (~300 iterations there). An optimal column is
tight on few pairs — a tree from its peak, at most 146 of the 22 350 per output on those
150 places — and on different pairs for different outputs: the pairs a column needs run
from each place towards that column's peak. :func:`solve_metric_lazy` therefore gives
each output its own set of pairs and solves the relaxation the sets define with
:func:`._ipm.metric_ipm` (``output=``: per-output rows, dense blocks):

1. *Start.* For every output, each place's :data:`~._parts.START_DEGREE` cheapest pairs
   (both directions, :func:`._parts.base_pairs`) and the output's *star*: the pairs between the
   output's own place and every other place, on which a tent centred at the output is
   tight. From :data:`SHARED_FROM` places, when the base pairs have a band order (grids),
   the first round keeps them alone, shared by every output, and the IPM factors band
   blocks; the stars join after it.
2. *Round.* The IPM on the relaxation; then every column is checked against every pair
   of ``E``, and for each place the most violated pair into it and the most violated pair
   out of it join that output's set (a kept pair is never dropped). Early rounds stop at
   a relative gap of :data:`EARLY_GAP` (where the pairs to add are already clear); once a
   round adds fewer than :data:`FINAL_SHARE` of the rows, the next ones run to the
   caller's tolerance.
3. *Bound and channel.* The relaxation's duals ``(mu, pi_y)`` bound the full LP from below
   (:func:`safe_bound_per_output`: the Lagrangian bound, valid for any multipliers), and
   its channel lifted into the full cone (:func:`._parts.snap_to_cone`) is feasible. In a
   final round the IPM asks every :data:`CHECK_EVERY` iterations, once its own gap is
   below the caller's, whether the two meet; the search stops when they do, when no pair
   is violated, at the time limit or after :data:`MAX_ROUNDS` rounds.
4. *Outputs.* After a final round the IPM keeps only the outputs whose column carries more
   than :data:`USED_MASS` (89 of 150 on the map; an interior iterate at a gap of 1e-3
   cannot tell them yet). Each output left out adds its pricing LP's term to the bound
   (``min (c_y - mu).q`` over the cone and the box, :class:`._parts._Pricing`; every term is
   ``<= 0``, so the LPs run only when the rest of the bound could close) and comes back
   if that LP finds an improving column.
5. *Warm rounds.* A final round keeps its iterate at a gap of :data:`WARM_AT`; the next
   final round starts from it (:func:`warm_start`) when few of its new pairs are broken
   there, and from the centre otherwise or if the warm start stalls.

6. *Heads.* From :data:`HEADS_FROM` places (past dense blocks' reach), when the base
   pairs have a band order, the rounds after the first factor each output's block as a
   band but for the few places its far pairs start from (:mod:`._heads`), and add far
   pairs only out of those sources (:func:`._heads.pairs_to_add`).
7. *The last round.* A round stops for a next one only while the time limit leaves room
   for it (:data:`NEXT_ROUND`); else it runs on to the limit, and its relaxation's bound
   and lifted channel are the answer.

Measured in docs/geo.md (150 places from a map: 22 350 pairs per output in the full LP,
about 1 800 per output kept).
"""

from __future__ import annotations

import math
import threading
import time
from typing import Callable

import numpy as np

from ._heads import heads_band, pairs_to_add
from ._parts import (IPM_TOL, RC_TOL, MetricLPResult, base_pairs, _label_bound, _Pairs, _Pricing, _safe_sum, _sum_lower,
                     in_shares, pair_operator, snap_to_cone)

#: from this many places the rounds after the first factor band blocks but for each
#: output's head places (:mod:`._heads`: on 1 024 places ~3-4 s a factorisation against
#: 16 s for dense blocks; on 400, with more rounds, 291 s against ~110 s to ``1e-6``)
HEADS_FROM = 601
#: an output may have at most this share of the places as heads, else dense blocks
HEADS_SHARE = 0.15
#: a far pair out of a source joins its output when its ratio to its budget is above this
STAR = 0.5
#: share of a round's time that must be left for the next one to start
ROUND_ROOM = 0.2
#: a round stops for the next one (its gap reached, or pairs to add) only if this many times
#: its own time is left before the limit (a next round has more pairs and, if final, more
#: iterations); else it runs on to the limit. 1 000 places from a map, limit 600 s: a third
#: round begun at 380 s was cut after 9 iterations with no bound (3.8 %); the second round
#: run on instead: 1.7 %
NEXT_ROUND = 1.5
#: at most this many rounds (each one IPM run)
MAX_ROUNDS = 12
#: rounds before the final ones stop at this relative gap
EARLY_GAP = 1e-2
#: ... and at this one with heads (1 000 places from a map, 498 s: 3.7 % and a channel of
#: 0.834563, against 4.7 % and 0.839792 at 1e-2, where the second round was cut short)
EARLY_GAP_HEADS = 3e-2
#: a round that adds fewer than this share of the rows makes the next rounds final
FINAL_SHARE = 0.05
#: in a final round, the bound is checked at every this many iterates below the caller's gap
CHECK_EVERY = 5
#: a pair is violated when its ratio exceeds ``e^E`` by more than this (relative)
VIOLATION = 1e-9
#: after a final round the IPM keeps only the outputs whose column holds more than this
#: mass (the others are priced at every bound: they enter again if they could improve)
USED_MASS = 1e-6
#: at most this many lift-and-renormalise rounds for the channel returned
SNAP_ROUNDS = 50
#: pairs added per place and direction for an output with a broken pair, and the ratio
#: (to ``e^E``) above which a pair that holds is added beside the broken ones
TOP, NEAR = 4, 0.9
#: after an early round the IPM keeps the outputs whose column holds more than this share
#: of the largest column's mass
PRUNE_EARLY = 1e-2
#: ... and after a final round, more than this share of it
USED_SHARE = 1e-4
#: Gondzio's centrality correctors per IPM iteration (14×14 Euclidean: 181 iterations in
#: all against 209 with 3; a factorisation costs ~30 solves)
GONDZIO = 8
#: a final round stops once the lifted channel's loss exceeds the relaxation's by this
#: many times the IPM's own gap (the pairs, not the iterate, keep the bound from closing;
#: 20×20 Euclidean to 1e-6: 129 s with 3 or 1.5, 134 s with 10; 150 places from a map
#: 9.3–9.7 s against 9.1–9.3 s)
LIFT_DOMINATES = 3.0
#: ... looked at from this relative gap of the IPM on (20×20 Euclidean: the first final
#: round's channel is 8e-5 above its bound, which the IPM's gap passes ~20 iterations
#: before the caller's 1e-7)
LIFT_FROM = 1e-4
#: a final round keeps its iterate at this relative gap, and the next round starts from it
#: when at most :data:`WARM_BROKEN` of its new pairs are broken there (else from the centre:
#: after an early round a quarter of the new pairs are broken there, and the IPM
#: stalls; between the final rounds of 20×20 Euclidean 3 %: 88 iterations against 111)
WARM_AT, WARM_BROKEN = 1e-3, 0.05
#: a final round stops once its lifted channel is within this share of the caller's gap
#: of the bound (the channel is in the cone to rounding: the exact repair costs ~1e-13 of
#: the value, not the rest of the gap)
CLOSE_SHARE = 0.9
#: from this many places, the first round keeps the base pairs alone, shared by every
#: output, when they have a band order (band blocks); the stars join after it (20×20
#: Euclidean: first round 13 s against 34 s; 150 places from a map, where dense blocks
#: are cheap: 10.0–10.7 s in all against 9.5 s)
SHARED_FROM = 200


def add_stars(keep: np.ndarray, E: np.ndarray, at: np.ndarray | None = None) -> None:
    """Add to ``keep`` (``(m, k, k)``) each output's *star*: the pairs from its place to every other.

    ``at[j]``: the place of output ``j`` (default ``j``; no star for outputs past the places).
    """
    k = E.shape[0]
    fin = np.isfinite(E) & ~np.eye(k, dtype=bool)
    js = np.arange(min(keep.shape[0], k))
    ys = js if at is None else np.asarray(at, np.int64)
    keep[js, ys, :] |= fin[ys, :]


def start_pairs(E: np.ndarray, m: int, at: np.ndarray | None = None) -> np.ndarray:
    """``(m, k, k)`` booleans: the pairs each output starts with (:func:`base_pairs` and the star).

    ``at[j]``: the place of output ``j`` (default ``j``; no star for outputs past the places).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(12.0)
    >>> keep = start_pairs(np.abs(x[:, None] - x[None]), 12)
    >>> bool(keep[3, 3, 0] and keep[3, 3, 11]), bool(keep[3, 0, 11])   # the star of output 3; a far pair
    (True, False)
    """
    keep = np.repeat(base_pairs(E)[None], m, axis=0)
    add_stars(keep, E, at)
    return keep


def violated_pairs(Q: np.ndarray, G: np.ndarray, keep: np.ndarray, rel: float = VIOLATION,
                   top: int = 1, near: float = 1.0) -> np.ndarray:
    """``(m, k, k)`` booleans: per output, the worst pairs broken into and out of each place.

    ``G = e^{-E}`` (0 where no pair); a pair ``(a, b)`` of output ``y`` is broken when
    ``Q[a, y] e^{-E[a, b]} > Q[b, y] (1 + rel)``; pairs in ``keep`` are not reported. For
    an output with a broken pair, up to ``top`` pairs into and out of each place are
    reported, the most nearly tight first, if their ratio is above ``near`` (the pairs an
    output's next column is likely to need).

    Examples
    --------
    >>> import numpy as np
    >>> G = np.exp(-np.array([[0, 1.0], [1.0, 0]]))
    >>> keep = np.zeros((1, 2, 2), bool)
    >>> violated_pairs(np.array([[0.9], [0.1]]), G, keep)[0]     # 0.9 > e * 0.1
    array([[False,  True],
           [False, False]])
    """
    k, m = Q.shape
    new = np.zeros((m, k, k), bool)
    idx = np.arange(k)
    top = min(top, k)
    for y in range(m):
        q = np.maximum(Q[:, y], 1e-300)
        R = (q[:, None] * G) / q[None, :]
        R[keep[y]] = 0.0
        if not (R > 1.0 + rel).any():
            continue
        if top == 1:
            into = np.argmax(R, axis=0)[None]  # for each b, the worst a
            out = np.argmax(R, axis=1)[None]  # for each a, the worst b
        else:
            into = np.argpartition(-R, top - 1, axis=0)[:top]
            out = np.argpartition(-R, top - 1, axis=1)[:, :top].T
        lim = 1.0 + rel if top == 1 else min(near, 1.0 + rel)
        for j in range(into.shape[0]):
            ok = R[into[j], idx] > lim
            new[y, into[j, ok], idx[ok]] = True
            ok = R[idx, out[j]] > lim
            new[y, idx[ok], out[j, ok]] = True
    return new


def safe_bound_per_output(E: np.ndarray, cost: np.ndarray, a: np.ndarray, b: np.ndarray, y: np.ndarray,
                          mu: np.ndarray, pi: np.ndarray) -> float:
    """A proven lower bound on the labeled LP from ``mu`` and per-output pair duals ``pi >= 0``.

    Row ``p`` is ``Q[a_p, y_p] - e^{E[a_p, b_p]} Q[b_p, y_p] <= 0`` with dual ``pi_p``; the
    bound is ``sum(mu) + sum_y min_{0 <= q <= 1} (c_y - mu + A_y' pi_y) . q`` in safe
    arithmetic (:func:`._parts._label_bound`), valid for any multipliers and any subset of
    the pairs (fewer rows relax the LP).

    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[0, 1.0], [1.0, 0]])           # 1-LDP on two inputs, Hamming loss
    >>> C = 0.5 * (1 - np.eye(2))                      # optimum 1 / (1 + e)
    >>> from mechopt.solvers.metric._ipm import metric_ipm
    >>> a, b, y = np.array([0, 1, 0, 1]), np.array([1, 0, 1, 0]), np.array([0, 0, 1, 1])
    >>> r = metric_ipm(C, a, b, np.exp(E[a, b]), output=y)
    >>> L = safe_bound_per_output(E, C, a, b, y, r.mu, r.Pi)
    >>> bool(1 / (1 + np.e) - 1e-9 < L <= 1 / (1 + np.e))
    True
    """
    k, m = cost.shape
    mu = np.asarray(mu, dtype=float)
    if not (np.all(np.isfinite(mu)) and np.all(np.isfinite(pi))):
        return -math.inf
    order = np.argsort(y, kind="stable")
    starts = np.searchsorted(y[order], np.arange(m + 1))
    total = [_sum_lower(mu)]
    for j in range(m):
        sel = order[starts[j]:starts[j + 1]]
        op = pair_operator(E, a[sel], b[sel])
        total.append(_label_bound(cost[:, j], mu, np.maximum(pi[sel], 0.0), op))
    return _safe_sum(total)


def warm_start(saved: tuple, S: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray, w: np.ndarray,
               broken: float = WARM_BROKEN) -> tuple | None:
    """A round's start from an earlier round's iterate, or ``None`` if too many new pairs break there.

    ``saved = (S0, y0, a0, b0, (q, s, mu, pi, z))``: that round's outputs, rows (``y0``
    indexes ``S0``) and :func:`._ipm.metric_ipm` iterate (``stats["saved"]``). Rows kept keep
    their slack and dual; a new row gets the slack ``max(-A q, median s)`` (positive: a
    broken row starts primal infeasible) and the dual that puts it at the iterate's mean
    complementarity; an output new to the IPM starts at the smallest entry of ``q``.

    Examples
    --------
    >>> import numpy as np
    >>> q, s = np.full((2, 1), 0.5), np.array([0.1])
    >>> saved = (np.array([0]), np.array([0]), np.array([0]), np.array([1]), (q, s, np.zeros(2), np.array([1.0]), q))
    >>> start = warm_start(saved, np.array([0]), np.array([0, 0]), np.array([0, 1]), np.array([1, 0]), np.full(2, 2.0))
    >>> start[1], start[3]          # the kept row's slack and dual; the new one: max(0.5, 0.1), 0.2 / 0.5
    (array([0.1, 0.5]), array([1. , 0.4]))
    """
    S0, y0, a0, b0, iterate = saved
    q, s, mu, pi, z = iterate[:5]
    s, pi = np.ravel(s), np.ravel(pi)
    k = q.shape[0]
    col = np.full(int(max(S0.max(), S.max())) + 1, -1)
    col[S0] = np.arange(len(S0))
    j0 = col[S]
    qn = np.where(j0 >= 0, q[:, np.maximum(j0, 0)], q.min())
    zn = np.where(j0 >= 0, z[:, np.maximum(j0, 0)], np.median(z))
    key0 = (S0[y0] * k + a0) * k + b0
    if not len(key0) or not len(y):
        return None
    key = (S[y] * k + a) * k + b
    order = np.argsort(key0)
    src = order[np.minimum(np.searchsorted(key0[order], key), len(key0) - 1)]
    found = key0[src] == key
    Aq = qn[a, y] - w * qn[b, y]
    if np.count_nonzero(Aq[~found] > 0) > broken * max(np.count_nonzero(~found), 1):
        return None
    mean = (float(np.sum(q * z)) + float(np.sum(s * pi))) / (q.size + s.size)
    sn = np.where(found, s[src], np.maximum(-Aq, np.median(s)))
    return qn, sn, mu, np.where(found, pi[src], mean / sn), zn


class _Outside:
    """The Lagrangian terms of the outputs left out of the IPM: their pricing LPs at ``mu``.

    The LPs run in :func:`._band.ipm_workers` threads, each on its own HiGHS model (HiGHS
    releases Python's lock; output ``y`` always goes to model ``y % threads``, which keeps
    its basis), the outputs whose terms were the most negative last time first. Every
    term is ``<= 0``, so once their running sum is below ``floor`` the bound cannot close
    and the pricing stops (``None``).
    """

    def __init__(self, E: np.ndarray, cost: np.ndarray):
        from ._band import ipm_workers

        self.E, self.cost = E, cost
        self.models: list[_Pricing] = []
        self.threads = ipm_workers()
        self.last = np.zeros(cost.shape[1])

    def __call__(self, ys: np.ndarray, mu: np.ndarray,
                 floor: float = -math.inf) -> tuple[list[float] | None, list[int]]:
        while len(self.models) < self.threads:
            pricing = _Pricing(_Pairs(self.E))
            # the dual simplex: an output priced for the first time (one the last final
            # round left out) starts far from its vertex, which the primal simplex leaves
            # slowly (20×20 Euclidean, 207 outputs from other outputs' bases: 35 s in
            # primal, 13 s in dual; from their own bases both take 4 s)
            pricing.h.setOptionValue("simplex_strategy", 1)
            self.models.append(pricing)
        tol = RC_TOL * max(float(np.abs(self.cost).max()), 1e-300)
        order = ys[np.argsort(self.last[ys], kind="stable")].tolist()
        terms: dict[int, float] = {}
        entering: list[int] = []
        state = {"sum": 0.0, "failed": False}
        lock = threading.Lock()

        def price(share: int, y: int) -> bool:
            with lock:
                if state["failed"] or state["sum"] < floor:
                    state["failed"] = True
                    return False
            pricing = self.models[share]
            r = self.cost[:, y] - mu
            if y not in pricing.bases:
                # priced for the first time: from the slack basis, not the last output's vertex
                # (the 54 outputs a final round of 20×20 Euclidean left out: 6.2 s against 8.9)
                pricing.h.clearSolver()
            q, lam = pricing.solve(y, r)
            term = _label_bound(self.cost[:, y], mu, lam, pricing.pairs.bound_operator())
            with lock:
                terms[y] = term
                state["sum"] += term
                if float(r @ q) < -tol:
                    entering.append(y)
            return True

        in_shares(order, self.threads, price)
        for y, term in terms.items():
            self.last[y] = term
        if state["failed"] or state["sum"] < floor:
            return None, []
        return [terms[y] for y in ys.tolist()], sorted(entering)


def solve_metric_lazy(E: np.ndarray, cost: np.ndarray, *, rel_gap: float = 1e-7, time_limit: float | None = None,
                      progress: Callable | None = None) -> MetricLPResult:
    """The labeled E-LDP LP by the IPM over lazy pairs per output, with a proven bound.

    Status ``optimal`` when ``objective - bound <= rel_gap |objective|``, else ``feasible``
    with that gap (time limit, stall, or :data:`MAX_ROUNDS`).

    Examples
    --------
    >>> import numpy as np
    >>> xy = np.random.default_rng(3).uniform(0, 4, (20, 2))    # twenty places, no grid
    >>> D = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    >>> C = np.full(20, 1 / 20)[:, None] * D**2
    >>> r = solve_metric_lazy(0.7 * D, C)
    >>> r.status, bool(r.objective - r.bound <= 1e-7 * r.objective)
    ('optimal', True)
    """
    from ._band import band_order
    from ._ipm import metric_ipm

    t0 = time.perf_counter()
    E = np.asarray(E, dtype=float)
    cost = np.asarray(cost, dtype=float)
    k, m = cost.shape
    deadline = None if time_limit is None else t0 + float(time_limit) - min(0.05 * float(time_limit), 30.0)
    with np.errstate(over="ignore"):
        G = np.where(np.isfinite(E), np.exp(-np.where(np.isfinite(E), E, 0.0)), 0.0)
    np.fill_diagonal(G, 0.0)
    base = base_pairs(E)
    a0, b0 = np.nonzero(base)
    # the first round over the pairs every output shares (SHARED_FROM): band blocks cost
    # O(k^2 bs) an output against k^3
    order = band_order(k, a0, b0) if len(a0) else None
    shared = k >= SHARED_FROM and len(a0) > 0 and 2 * order[1] <= k
    heads = None
    if shared and k >= HEADS_FROM:
        # later rounds: band blocks but for each output's head places (:mod:`._heads`)
        perm, bs, wide = heads_band(k, a0, b0, order)
        base[wide] = False  # (left to the rounds)
        a0, b0 = np.nonzero(base)
        heads = (perm, bs, int(HEADS_SHARE * k))
        place_at = np.empty(k, np.int64)  # each place's position in the band order
        place_at[perm] = np.arange(k)
    early_gap = EARLY_GAP if heads is None else EARLY_GAP_HEADS
    keep = np.repeat(base[None], m, axis=0)
    if not shared:
        add_stars(keep, E)
    # the outputs in the IPM, the others priced at every bound (starting from the Bayes
    # outputs of the exponential mechanism's reports took more rounds: docs/geo.md)
    S = np.arange(m)
    outside = _Outside(E, cost)
    best_Q, best_obj, best_bound = None, math.inf, -math.inf
    rounds: list[dict] = []
    message, final, it_total = "", False, 0
    saved: tuple | None = None  # the last final round's rows and kept iterate
    for _round in range(MAX_ROUNDS):
        t_round = time.perf_counter()
        y, a, b = np.nonzero(keep[S])
        w = np.exp(E[a, b])
        cS = cost[:, S]
        out = np.setdiff1d(np.arange(m), S)
        last: dict = {}

        def bound(mu, pi, need=-math.inf, cS=cS, a=a, b=b, y=y, out=out):
            inside = safe_bound_per_output(E, cS, a, b, y, mu, pi)
            if not len(out) or not math.isfinite(inside):
                return inside, []
            if inside < need:
                return None, []  # cannot close: the outputs left out are not priced (no bound)
            # every term <= 0: priced only while the rest could still close
            terms, entering = outside(out, mu, floor=need - inside - abs(need) * 1e-12)
            if terms is None:
                return None, []
            return _safe_sum([inside, *terms]), entering

        def lifted(QS, S=S, rounds=1):
            # one lift and renormalisation: close to the cone, and an estimate of the
            # channel's loss; SNAP_ROUNDS of them: the channel (in the cone to rounding)
            Q = np.zeros((k, m))
            Q[:, S] = snap_to_cone(np.maximum(QS, 0.0), E, rounds=rounds, tol=1e-13)
            return Q

        def room(t_round=t_round) -> bool:
            # a next round takes about as long as this one: without the time for it, this
            # round is the last and runs on to the limit (its bound the relaxation's)
            now = time.perf_counter()
            return deadline is None or deadline - now >= NEXT_ROUND * (now - t_round)

        def closes(Qi, mu, pi, rel, final=final, bound=bound, last=last, cS=cS, S=S) -> bool:
            if not final:
                return rel <= early_gap and room()
            last["calls"] = last.get("calls", 0) + 1
            if (last["calls"] - 1) % CHECK_EVERY:
                return False
            Q = lifted(Qi)
            obj = float(np.sum(cost * Q))
            need = obj - CLOSE_SHARE * rel_gap * max(abs(obj), 1e-300)
            # above the caller's gap only the missing pairs are looked at (no bound closes)
            lb, entering = bound(mu, pi, need) if rel <= rel_gap else (None, [])
            if lb is not None and math.isfinite(lb) and lb >= need:
                # the estimate closes: the channel itself must
                Q = lifted(Qi, rounds=SNAP_ROUNDS)
                obj = float(np.sum(cost * Q))
                last.update(Q=Q, objective=obj, bound=lb, entering=entering, mu=mu)
                if lb >= obj - CLOSE_SHARE * rel_gap * max(abs(obj), 1e-300):
                    return True
            relax = float(np.sum(cS * Qi))
            if obj - relax <= LIFT_DOMINATES * rel * abs(relax):
                return False
            # the missing pairs keep the bound from closing only if the iterate breaks one
            # (else the lift's extra loss is the iterate's own: a warm round's fifth
            # iterate on 30 places stopped there, and the search ended 2e-7 short)
            return room() and bool(violated_pairs(np.maximum(Qi, 0.0), G, keep[S]).any())

        start = None if saved is None else warm_start(saved, S, y, a, b, w)
        stalled = False
        first_shared = shared and _round == 0
        for warm in ([start, None] if start is not None else [None]):
            kw = dict(tol=min(IPM_TOL, 0.01 * rel_gap), deadline=deadline, gondzio=GONDZIO,
                      progress=None if progress is None else (lambda i, p, d, s, n=it_total: progress(n + i, p, d, s)),
                      enough=closes, check_below=max(rel_gap, LIFT_FROM) if final else early_gap)
            if first_shared:
                # every output's rows are the base pairs: (P0, m) duals, listed output by output
                # as np.nonzero(keep[S]) lists the rows
                r = metric_ipm(cS, a0, b0, np.exp(E[a0, b0]), linalg="auto" if heads is None else heads[:2], **kw)
                r.Pi = r.Pi.T.ravel()
            else:
                r = metric_ipm(cS, a, b, w, output=y, warm=warm, save_at=WARM_AT if final else None, heads=heads, **kw)
            it_total += r.iterations
            if r.status != "stalled":
                break
            stalled = warm is not None  # a warm start that stalls: the round again from the centre
        saved = (S, y, a, b, r.stats["saved"]) if "saved" in r.stats else None
        if "bound" in last and np.array_equal(last["mu"], r.mu):
            Q, obj, lb, entering = last["Q"], last["objective"], last["bound"], last["entering"]
        else:
            Q = lifted(r.Q, rounds=SNAP_ROUNDS)
            obj = float(np.sum(cost * Q))
            # a round cut by the limit: its outputs left out are priced only if the bound
            # could rise (1 000 places: ~0.6 s each, after the limit)
            lb, entering = bound(r.mu, r.Pi, best_bound if r.status == "time limit" else -math.inf)
            lb = -math.inf if lb is None else lb
        if obj < best_obj:
            best_Q, best_obj = Q, obj
        best_bound = max(best_bound, lb)
        closed = best_obj - best_bound <= rel_gap * max(abs(best_obj), 1e-300)
        late = r.status == "time limit" or (deadline is not None and time.perf_counter() > deadline)
        new = None
        if closed or late:
            pass  # (no pairs to look for: on 1 024 places that pass takes ~15 s)
        elif heads is not None:
            new = pairs_to_add(r.Q, G, keep[S], place_at, heads[1], rel=VIOLATION, top=TOP, near=NEAR, star=STAR)
        else:
            new = violated_pairs(r.Q, G, keep[S], top=TOP, near=NEAR)
        n_new = 0 if new is None else int(new.sum())
        # a next round needs its set-up and some iterations: none starts in the last
        # ROUND_ROOM of the time this one took (1 000 places from a map, 498 s: a third
        # round begun 18 s before the limit ended 100 s past it, with no iteration)
        now = time.perf_counter()
        late = late or (deadline is not None and now > deadline - ROUND_ROOM * (now - t_round))
        rounds.append({"outputs": len(S), "pairs": len(a), "iterations": r.iterations, "ipm_status": r.status,
                       "linalg": r.stats["linalg"],
                       "final": final, "warm": warm is not None, "warm_stalled": stalled, "objective": obj, "bound": lb, "added": n_new, "entering": len(entering),
                       "s": time.perf_counter() - t0})
        if closed:
            break
        if late:
            message = "time limit"
            break
        if n_new == 0 and final and not entering:
            message = f"the IPM {r.status} ({r.message})" if r.message else f"the IPM {r.status}"
            break
        keep[S] |= new
        if first_shared:
            add_stars(keep, E)
        if final and r.status == "optimal":
            # a final round's channel shows which outputs carry mass; the rest are priced
            mass = r.Q.sum(axis=0)
            S = np.union1d(S[mass > max(USED_MASS, USED_SHARE * mass.max())], np.asarray(entering, np.int64))
        elif not final:
            mass = r.Q.sum(axis=0)
            S = np.union1d(S[mass > PRUNE_EARLY * mass.max()], np.asarray(entering, np.int64))
        elif len(entering):
            S = np.union1d(S, np.asarray(entering, np.int64))
        final = final or n_new < FINAL_SHARE * TOP * len(a)
    else:
        message = f"{MAX_ROUNDS} rounds"
    if best_Q is not None:
        # a relaxation's channel, lifted once, breaks pairs by its rows' renormalisation
        # (1e-7 on 20 places): lift and renormalise until the rows stay put
        best_Q = snap_to_cone(best_Q, E, rounds=SNAP_ROUNDS, tol=1e-13)
        best_obj = float(np.sum(cost * best_Q))
    closed = best_obj - best_bound <= rel_gap * max(abs(best_obj), 1e-300)
    if not closed:
        gap = (best_obj - best_bound) / max(abs(best_obj), 1e-300)
        message = f"{message}; proven relative gap {gap:.2e}" if math.isfinite(best_bound) else f"{message}; no bound"
    stats = {"rounds": rounds, "iterations": it_total, "pairs_active": int(keep.sum()), "outputs_final": len(S),
             "pairs_per_output": float(keep.sum()) / max(m, 1),
             "linalg": rounds[-1]["linalg"] if rounds else "OutputDenseBlocks",
             "total_s": time.perf_counter() - t0, "time_limit_hit": message.startswith("time limit")}
    return MetricLPResult("optimal" if closed else "feasible", best_Q, best_obj, best_bound,
                          "" if closed else message, stats)
