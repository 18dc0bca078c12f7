"""Column generation with exact pricing over privacy cones (SPEC §3).

The ray LP ``max sum_r w_r mu(v_r)  s.t.  sum_r w_r v_r = 1, w >= 0`` is solved over a
growing set of rays: a restricted master (HiGHS, warm-started between rounds) gives
duals ``d``, and the pricers of :mod:`mechopt.solvers.free._pricing` search each piece of the cone for rays
with a positive reduced value. Every round yields a proven bound,

    sum(d) + sum_pieces max(delta_piece, 0) * mass_piece + sum_fixed max(mu(v) - d·v, 0) * mass_v,

(``delta_piece`` is the pricer's proven upper bound, ``mass = sum(s)`` of its
normalisation; see :mod:`mechopt.solvers.free._pricing`), and the loop stops with ``proven=True`` as soon as
the best bound is within ``rel_gap`` of the master's value (relative to the objective in
its natural units). A time limit stops it with the gap proven so far. The rounds are
those of :func:`mechopt.solvers._colgen_loop.run` (master :class:`_Restricted`, pricer
:class:`_ConePricer`).

:func:`mechopt.solvers.free._cones.decompose` turns a problem's notions into priced pieces
(the cones covered are listed there); anything else returns ``None`` (the caller enumerates rays).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ...objectives import column_utility, offset_sign
from ..._problem import Objective
from ..backends._adapters import new_highs
from .._colgen_loop import FAILED, MAX_ITER, NO_COLUMN, STALLED, TIME_LIMIT, Found, Round, run
from . import _ldp_hmse as ldp_hmse
from ._cones import ConeSet
from ._pricing import price
from ._pricing_base import DEADLINE, LipSlice, Staircases
from ._pricing_lip import lip_chord_duals, near_chord_vertices
from ._seed import SEED_MIN_K, channel_columns, lip_seed_columns


#: the master keeps about this many columns per input: above twice that, the non-basic
#: columns of most negative reduced value are dropped (they come back if priced again)
MASTER_KEEP_PER_INPUT = 10


class Master:
    """``min -mu·w  s.t.  V w = 1, w >= 0``, warm-started as columns are added.

    Uses a persistent HiGHS model (:func:`~mechopt.solvers.backends._adapters.new_highs`: kept basis between rounds, primal simplex: adding columns
    keeps the basis primal feasible); falls back to :func:`scipy.optimize.linprog`
    (solved from scratch) if it cannot be imported.

    The rays are dense (a staircase has no zero), so HiGHS is given a sparse equivalent:
    each column is split as ``v = alpha 1 + r`` with ``alpha`` its most frequent value
    and ``r`` zero there, and one more variable ``t = sum_r alpha_r w_r`` (one more row)
    carries the constant parts, ``t 1 + sum_r r_r w_r = 1``. The first ``k`` row duals
    are the duals of ``V w = 1`` (the reduced cost of the free ``t`` ties the extra
    row's dual to them); any duals give a valid bound in the loop, so rounding here
    cannot make a bound false.
    """

    def __init__(self, k: int, scale: float = 1.0):
        self.k = k
        self.V = np.zeros((k, 0))
        self.mu = np.zeros(0)
        # HiGHS's tolerances are absolute (1e-10 on reduced costs): the objective is
        # multiplied by ``scale`` so that they sit far below the gap asked for
        self.scale = float(scale)
        self.keys: set[bytes] = set()
        try:
            # primal simplex: adding columns keeps the basis primal feasible
            self.h, _ = new_highs(primal_feasibility_tolerance=1e-10, dual_feasibility_tolerance=1e-10,
                                  simplex_strategy=4)
        except ImportError:  # pragma: no cover - highspy ships with cvxpy
            self.h = None
        if self.h is not None:
            # rows 0..k-1: t + sum r w = 1; row k: t - sum alpha w = 0; column 0: t
            self.h.addRows(k, np.ones(k), np.ones(k), 0, np.zeros(k, dtype=np.int32), np.zeros(0, dtype=np.int32),
                           np.zeros(0))
            self.h.addRows(1, np.zeros(1), np.zeros(1), 0, np.zeros(1, dtype=np.int32), np.zeros(0, dtype=np.int32),
                           np.zeros(0))
            self.h.addCols(1, np.zeros(1), np.zeros(1), np.full(1, np.inf), k + 1,
                           np.zeros(1, dtype=np.int32), np.arange(k + 1, dtype=np.int32), np.ones(k + 1))

    @staticmethod
    def _split(V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``alpha`` (each column's most frequent value) and ``R = V - alpha`` (zero there)."""
        n = V.shape[1]
        alpha = np.zeros(n)
        for j in range(n):
            vals, counts = np.unique(V[:, j], return_counts=True)
            alpha[j] = vals[int(np.argmax(counts))]
        R = np.where(V == alpha, 0.0, V - alpha)
        return alpha, R

    def add(self, V: np.ndarray, mu: np.ndarray) -> list[int]:
        """Add the columns not already present; returns the indices of those added."""
        V = np.asarray(V, dtype=float)
        fresh = []
        for j in range(V.shape[1]):
            key = np.round(V[:, j], 12).tobytes()
            if key not in self.keys:
                self.keys.add(key)
                fresh.append(j)
        V, mu = V[:, fresh], np.asarray(mu, dtype=float)[fresh]
        if V.shape[1] == 0:
            return fresh
        self.V = np.hstack([self.V, V])
        self.mu = np.concatenate([self.mu, mu])
        if self.h is not None:
            n = V.shape[1]
            alpha, R = self._split(V)
            A = np.vstack([R, -alpha[None, :]])  # (k + 1, n)
            nz = A != 0
            starts = np.concatenate([[0], np.cumsum(nz.sum(axis=0))[:-1]]).astype(np.int32)
            rows, cols = np.nonzero(nz.T)
            self.h.addCols(n, -self.scale * np.asarray(mu, dtype=float), np.zeros(n), np.full(n, np.inf),
                           int(nz.sum()), starts, cols.astype(np.int32), A.T[nz.T])
        return fresh

    def prune(self, w: np.ndarray, d: np.ndarray, keep: int, protect: int) -> np.ndarray | None:
        """Drop the non-basic columns of most negative reduced value until ``keep`` remain.

        The first ``protect`` columns stay (the initial and fixed rays, which pricing
        never offers again); a dropped ray can come back, as its key is forgotten.
        Returns the mask of columns kept (``None`` if nothing was dropped).
        """
        n = self.V.shape[1]
        if self.h is None or n <= keep:
            return None
        red = self.mu - d @ self.V
        cand = np.flatnonzero((w <= 0) & (np.arange(n) >= protect))
        cand = cand[np.argsort(red[cand])][: n - keep]
        if len(cand) == 0:
            return None
        mask = np.ones(n, bool)
        mask[cand] = False
        for j in cand:
            self.keys.discard(np.round(self.V[:, j], 12).tobytes())
        self.h.deleteCols(len(cand), np.sort(cand + 1).astype(np.int32))  # column 0 is t
        self.V, self.mu = self.V[:, mask], self.mu[mask]
        return mask

    def solve(self) -> tuple[str, float, np.ndarray, np.ndarray]:
        """``(status, value, w, d)`` with ``d = -row duals`` (``d·v_r >= mu_r`` on the master)."""
        if self.h is None:
            from ._raylp import solve_ray_lp

            sol = solve_ray_lp(self.V, self.mu)
            if sol.status != "optimal":
                return sol.status, math.nan, np.zeros(0), np.zeros(self.k)
            return "optimal", float(sol.value), sol.weights, np.asarray(sol.stats["duals"], dtype=float)
        self.h.run()
        status = self.h.modelStatusToString(self.h.getModelStatus())
        if status != "Optimal":
            # a warm start gone bad (HiGHS reports "unknown" on some degenerate bases):
            # start again from scratch, then from scratch with the interior point method
            self.h.clearSolver()
            self.h.run()
            status = self.h.modelStatusToString(self.h.getModelStatus())
        if status != "Optimal":
            self.h.setOptionValue("solver", "ipm")
            self.h.clearSolver()
            self.h.run()
            self.h.setOptionValue("solver", "choose")
            status = self.h.modelStatusToString(self.h.getModelStatus())
        if status != "Optimal":
            return status.lower(), math.nan, np.zeros(0), np.zeros(self.k)
        sol = self.h.getSolution()
        w = np.clip(np.asarray(sol.col_value, dtype=float)[1:], 0.0, None)  # column 0 is t
        d = -np.asarray(sol.row_dual, dtype=float)[: self.k] / self.scale
        return "optimal", float(self.mu @ w), w, d


# -- the loop ------------------------------------------------------------------------------------


@dataclass
class ColgenResult:
    status: str
    weights: np.ndarray | None
    V: np.ndarray | None
    invertible: np.ndarray | None
    value: float | None  # master optimum: max sum w mu over the rays found
    bound: float | None  # proven upper bound on sum w mu over every channel
    message: str = ""
    stats: dict = field(default_factory=dict)


def _initial_columns(cs: ConeSet, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The constant column (inside every cone), the fixed rays, for each staircase piece
    its singletons (k-RR-like columns), for a LIP slice from :data:`SEED_MIN_K` inputs its
    calibrated RR and Hadamard columns (:func:`~mechopt.solvers.free._seed.lip_seed_columns`),
    all feasible."""
    cols = [np.ones((k, 1)), cs.fixed]
    inv = [np.zeros(1, bool), cs.invertible]
    for p in cs.pieces:
        if isinstance(p, LipSlice) and k >= SEED_MIN_K:
            V = lip_seed_columns(p.prior, p.eps)
            cols.append(V)
            inv.append(np.zeros(V.shape[1], bool))
        if isinstance(p, Staircases):
            G = np.asarray(p.ground)
            V = np.zeros((k, len(G)))
            V[np.asarray(p.support)] = 1.0
            V[G, np.arange(len(G))] = math.exp(p.eps)
            cols.append(V)
            inv.append(np.zeros(len(G), bool))
    return np.hstack(cols), np.concatenate(inv)


#: A round's quick pricing stops after ``ROUND_SHARE`` of the time limit (at least
#: ``ROUND_MIN_S``): the loop then goes on with the columns found and prints progress.
ROUND_SHARE = 0.05
ROUND_MIN_S = 3.0
#: Batches of :func:`near_chord_vertices` (``NEAR_CHORD_PER_INPUT * k`` each) tried before
#: pricing; the first aims at ``NEAR_CHORD_START`` times the gap asked for.
NEAR_CHORD_BATCHES = 6
NEAR_CHORD_PER_INPUT = 6
NEAR_CHORD_START = 4.0
#: At most this many seconds (and a quarter of the time limit) go to the heuristic: where
#: the chord is far from the optimum (large epsilon: few sets fit under ``rho``) it cannot help.
NEAR_CHORD_SECONDS = 20.0


def _near_chord(master: Master, obj: Objective, cone: LipSlice, chord: float, tol: float, t0: float,
                time_limit: float | None, stats: dict) -> None:
    """Seed the master with vertices near the chord bound (LIP slices, separable objectives).

    At epsilon = 1 the chord bound is within ``1e-10`` of the optimum from k = 40 on, and
    column generation creeps up to it: near the chord duals almost every vertex prices at
    about zero. The heuristic's vertices come a batch at a time (a quarter of the time
    limit, at most ``NEAR_CHORD_SECONDS``) until the master is within ``tol`` of the
    chord. Each batch's shortfall target adapts: if the master mixed the last batch to
    within its target, the next one aims below the gap left; if it could not (too few
    distinct sets to average to the all-ones vector), the next one takes vertices 4×
    further from the chord, which are far more plentiful. The bound stays the chord's:
    nothing here is taken as proof but the master's value.
    """
    k = master.k
    rng = np.random.default_rng(0)
    share = 0.25 * time_limit if time_limit is not None else math.inf
    deadline = min(DEADLINE.get(), t0 + min(share, NEAR_CHORD_SECONDS))
    tm = time.perf_counter()
    target = NEAR_CHORD_START * tol
    for _ in range(NEAR_CHORD_BATCHES):
        V = near_chord_vertices(cone, obj, target, NEAR_CHORD_PER_INPUT * k, rng, deadline)
        if V.shape[1]:
            master.add(V, column_utility(obj, V))
            stats["near_chord_columns"] = stats.get("near_chord_columns", 0) + V.shape[1]
        status, value, _, _ = master.solve()
        gap = chord - value if status == "optimal" else math.inf
        if gap <= tol or time.perf_counter() > deadline:
            break
        target = max(tol, 0.5 * gap) if gap <= target else 4.0 * target
    stats["near_chord_s"] = time.perf_counter() - tm


def column_generation(obj: Objective, cs: ConeSet, *, rel_gap: float = 1e-9, time_limit: float | None = None,
                      quick_nodes: int = 300, top: int = 20, max_rounds: int = 100_000,
                      smoothing: float = 0.9, scale_floor: float = 0.0, progress=None,
                      seed: list | None = None) -> ColgenResult:
    """Solve the ray LP over ``cs`` by column generation; every stop carries a proven bound.

    Parameters
    ----------
    obj : Objective
        A sublinear objective (mmse, histogram_mse, mutual_information, bayes_risk).
    cs : ConeSet
        From :func:`mechopt.solvers.free._cones.decompose`.
    rel_gap : float
        Stop, proven, when ``bound - value <= rel_gap * |objective|`` (natural units).
    time_limit : float, optional
        Seconds; the result then carries the gap proven so far (``proven=False``).
    quick_nodes : int
        Soft node budget of a round's pricing (see ``_pricing_base._budget_spent``); an
        exhaustive call follows only when no improving ray was found.
    smoothing : float
        Wentges dual smoothing weight on the duals of the best bound (0 = none).
    scale_floor : float
        The gap is judged relative to ``max(|objective|, scale_floor)`` (e.g.
        :func:`mechopt.objectives.objective_scale`, as the export does).
    seed : list of ndarray, optional
        Channels (k x m) inside the cone whose columns start the master (kept: never
        pruned), so that the result is at least as good as each of them; from
        :data:`~mechopt.solvers.free._seed.SEED_MIN_K` inputs (below, the search is small),
        and only when a piece is a LIP slice (on LDP staircases they weakened the bound).

    Returns
    -------
    ColgenResult
        ``stats["proven"]`` says whether the gap is within ``rel_gap``.

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt.notions import LDP
    >>> from mechopt.objectives import Objective
    >>> from mechopt.solvers.free._cones import decompose
    >>> k = 6
    >>> obj = Objective("mutual_information", np.full(k, 1 / k))
    >>> r = column_generation(obj, decompose([LDP(1.0)], obj, k))
    >>> r.stats["proven"], bool(abs(r.bound - r.value) <= 1e-9)
    (True, True)
    """
    t0 = time.perf_counter()
    token = DEADLINE.set(t0 + time_limit if time_limit is not None else math.inf)
    try:
        return _column_generation(obj, cs, t0, rel_gap, time_limit, quick_nodes, top, max_rounds, smoothing,
                                  scale_floor, progress, seed or [])
    finally:
        DEADLINE.reset(token)


class _Restricted:
    """:class:`Master` as the loop's master: timed solves, pruning, the invertible flags."""

    def __init__(self, master: Master, obj: Objective, inv: list, keep: int, protect: int, stats: dict):
        self.m, self.obj, self.inv, self.keep, self.protect, self.stats = master, obj, inv, keep, protect, stats
        self.w = np.zeros(0)

    def solve(self) -> Round:
        tm = time.perf_counter()
        status, value, w, d = self.m.solve()
        self.stats["master_s"] += time.perf_counter() - tm
        if status != "optimal":
            return Round(status)
        if self.m.V.shape[1] > 2 * self.keep:
            kept = self.m.prune(w, d, self.keep, self.protect)
            if kept is not None:
                w = w[kept]
                self.inv = [f for f, c in zip(self.inv, kept) if c]
                self.stats["pruned"] = self.stats.get("pruned", 0) + int((~kept).sum())
        self.w = w
        return Round("optimal", value, d, int(self.m.V.shape[1]))

    def add(self, V: np.ndarray) -> int:
        added = len(self.m.add(V, column_utility(self.obj, V)))
        self.inv.extend([False] * added)
        return added


class _ConePricer:
    """Every piece of the cone priced at the master's duals, with Wentges smoothing.

    Prices first at a point between the master's duals and the duals of the best bound
    so far (any duals give a valid bound), then, if nothing found there improves the
    master, at the master's duals; with a node budget first (``quick_nodes``), and
    exhaustively only when no improving ray was found and the gap is still open.
    """

    def __init__(self, obj: Objective, cs: ConeSet, tol, *, top: int, quick_nodes: int, smoothing: float,
                 bound: float, d_best, stats: dict, round_seconds: float = math.inf, progress=None):
        k = len(obj.prior)
        self.round_seconds, self.progress = round_seconds, progress
        self.it = 0
        self.obj, self.cs, self.tol, self.k, self.stats = obj, cs, tol, k, stats
        self.top, self.quick_nodes, self.smoothing = top, quick_nodes, smoothing
        self.best_bound, self.d_best = bound, d_best
        self.fixed_V = cs.fixed
        self.fixed_mu = column_utility(obj, cs.fixed) if cs.fixed.shape[1] else np.zeros(0)
        self.fixed_mass = (cs.fixed.sum(axis=0) / np.maximum((cs.fixed**2).sum(axis=0), 1e-300)
                           if cs.fixed.shape[1] else None)

    def price_all(self, dd: np.ndarray, budget: int | None, floor: float, previous=None):
        """Price every piece at duals ``dd``; returns the results and the bound they prove."""
        out = []
        for i, piece in enumerate(self.cs.pieces):
            if previous is not None and previous[i].exact:
                out.append(previous[i])
                continue
            out.append(price(piece, self.obj, dd, floor=floor, max_nodes=budget, top=self.top))
        self.stats["pricing_nodes"] += sum(r.nodes for r in out)
        b = float(dd.sum()) + sum(max(r.upper, 0.0) * r.mass for r in out)
        if self.fixed_V.shape[1]:
            b += float(np.maximum(self.fixed_mu - dd @ self.fixed_V, 0.0) @ self.fixed_mass)
        return out, b

    def improving(self, results, dd: np.ndarray, floor: float) -> np.ndarray:
        """The columns found whose reduced value at the master's duals ``dd`` exceeds ``floor``."""
        V = np.hstack([r.columns for r in results]) if results else np.zeros((self.k, 0))
        if V.shape[1] == 0:
            return V
        red = column_utility(self.obj, V) - dd @ V  # columns are normalised: s·v = 1
        return V[:, red > floor]

    def price(self, state: Round) -> Found:
        value, d = state.value, state.duals
        tol = self.tol(value)
        floor = 0.25 * tol / max(1.0, len(self.cs.pieces))
        tp = time.perf_counter()
        tries = [d] if self.d_best is None or self.smoothing <= 0 else [
            self.smoothing * self.d_best + (1 - self.smoothing) * d, d]
        new = np.zeros((self.k, 0))
        # a round's quick pricing stops after ``round_seconds`` (a stopped search still proves its bound)
        token = DEADLINE.set(min(DEADLINE.get(), tp + self.round_seconds))
        try:
            for dd in tries:
                results, bound = self.price_all(dd, self.quick_nodes, floor)
                if bound < self.best_bound:
                    self.best_bound, self.d_best = bound, dd
                new = self.improving(results, d, floor)
                if new.shape[1]:
                    break
        finally:
            DEADLINE.reset(token)
        if new.shape[1] == 0 and not all(r.exact for r in results) and self.best_bound - value > tol:
            if self.progress is not None and math.isfinite(self.best_bound):
                # the exhaustive search may run to the time limit: report where the round stands first
                self.progress(self.it, value, self.best_bound, state.size)
            self.stats["exhaustive_pricings"] += 1
            results, bound = self.price_all(d, None, floor, previous=results if dd is d else None)
            if bound < self.best_bound:
                self.best_bound, self.d_best = bound, d
            new = self.improving(results, d, floor)
        self.stats["pricing_s"] += time.perf_counter() - tp
        self.it += 1
        return Found(new, new.shape[1], self.best_bound)


def _column_generation(obj, cs, t0, rel_gap, time_limit, quick_nodes, top, max_rounds, smoothing, scale_floor,
                       progress, seed) -> ColgenResult:
    k = len(obj.prior)
    offset, sign = offset_sign(obj)
    V0, inv0 = _initial_columns(cs, k)
    # seed channels enter the master on a LIP slice only: there they carry the search (k = 1 000,
    # Zipf prior, mutual information: optimal in 554 s, was the constant channel); on LDP
    # staircases they left the duals far from the optimum's (k = 1 000, Zipf, histogram MSE,
    # 300 s: bound 0.535 seeded, 0.890 unseeded), and the baselines are compared after the stop
    lip = any(isinstance(p, LipSlice) for p in cs.pieces)
    Vs = channel_columns(seed if (k >= SEED_MIN_K and lip) else [], obj.prior)
    V0, inv0 = np.hstack([V0, Vs]), np.concatenate([inv0, np.zeros(Vs.shape[1], bool)])
    mu0 = column_utility(obj, V0)
    # the objective's size sets the master's objective scale (see Master): every channel's
    # utility lies between the constant channel's and the identity's (no privacy)
    u_id = float(column_utility(obj, np.eye(k)).sum())
    size = max(abs(offset + sign * float(mu0[0])), abs(offset + sign * u_id), abs(u_id), 1e-300)
    master = Master(k, scale=min(1e8, max(1.0, 1e-7 / (rel_gap * size))))
    inv = list(inv0[master.add(V0, mu0)])
    protect = len(inv)
    stats: dict = {"rounds": 0, "exhaustive_pricings": 0, "pricing_nodes": 0, "pricing_s": 0.0, "master_s": 0.0}

    def tol(value: float) -> float:
        return rel_gap * max(abs(offset + sign * value), abs(value) * 1e-6, scale_floor, 1e-300)

    best_bound, d_best = math.inf, None
    # analytic dual points whose pricing is known to be <= 0: their sum is a bound
    if len(cs.pieces) == 1 and isinstance(cs.pieces[0], LipSlice) and not cs.fixed.shape[1]:
        dc = lip_chord_duals(cs.pieces[0], obj)
        if dc is not None:
            best_bound, d_best = float(dc.sum()), dc
            stats["chord_bound"] = best_bound
            _near_chord(master, obj, cs.pieces[0], best_bound, rel_gap * max(abs(offset + sign * best_bound),
                                                                          scale_floor, 1e-300), t0, time_limit, stats)
    elif ldp_hmse.applies(obj, cs):  # rank intervals, block-aggregated duals (_ldp_hmse)
        best_bound, d_best = ldp_hmse.start(master, obj, cs.pieces[0], tol, stats, Master, progress)
    inv.extend([False] * (master.V.shape[1] - len(inv)))
    restricted = _Restricted(master, obj, inv, max(MASTER_KEEP_PER_INPUT * k, 1000), protect, stats)
    round_s = max(ROUND_MIN_S, ROUND_SHARE * time_limit) if time_limit is not None else math.inf
    pricer = _ConePricer(obj, cs, tol, top=top, quick_nodes=quick_nodes, smoothing=smoothing, bound=best_bound,
                         d_best=d_best, stats=stats, round_seconds=round_s, progress=progress)
    res = run(restricted, pricer, bound=best_bound, closed=lambda value, bound: bound - value <= tol(value),
              check_first=True, deadline=None if time_limit is None else t0 + time_limit, max_iter=max_rounds,
              progress=progress)
    stats["rounds"] = res.rounds - 1 if res.reason == FAILED else res.rounds
    if res.reason == FAILED:
        return ColgenResult("error", None, None, None, None, None, f"master LP: {res.state.status}", stats)
    best_bound, value, w = res.bound, res.state.value, restricted.w
    proven = best_bound - value <= tol(value)
    message = ""
    if res.reason == NO_COLUMN and not proven:
        # nothing above the floor, every search complete: the bound is what the LP's
        # duality gap and the floor leave (both tiny)
        message = (f"time limit ({time_limit:g} s) reached" if time_limit is not None
                   and time.perf_counter() - t0 > time_limit else
                   "no improving ray above the pricing floor, yet the bound is not within the gap")
    elif res.reason == STALLED:  # every ray found is already in the master: its duals cannot move further
        message = "the master cannot improve on the rays found (numerical limit)"
    elif res.reason == TIME_LIMIT:
        message = f"time limit ({time_limit:g} s) reached"
        # the bound proven so far stands; re-solve so w matches the columns
        _, value, w, _ = master.solve()
        proven = False
    elif res.reason == MAX_ITER:
        message = f"stopped after {max_rounds} rounds"
        proven = False
    stats.update(proven=proven, columns=int(master.V.shape[1]), seconds=time.perf_counter() - t0,
                 gap=best_bound - value, pieces=len(cs.pieces), cone=cs.name)
    return ColgenResult("optimal", w, master.V, np.array(restricted.inv, bool), value, best_bound, message, stats)
