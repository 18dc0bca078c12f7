"""The labeled metric LP by the structured interior-point method, with a proven bound.

:func:`solve_metric_ipm` runs :func:`._ipm.metric_ipm` on every kept pair of
``E`` (no lazy pairs: the IPM's cost grows with the pairs only through sparse products),
lifts the final iterate into the cone (:func:`._parts.snap_to_cone`) and bounds the
optimum from the iterate's duals ``(mu, pi)`` with the safe bound of
:mod:`mechopt.solvers.backends._safe_bound` — per output, ``min (c_y - mu + A'pi_y) . q`` over the box
``0 <= q <= 1`` with the pair coefficients rounded outward, plus ``sum(mu)``: weak
duality for the Lagrangian relaxation of the row sums and the pair rows, valid for any
multipliers, so an iterate stopped early (time limit, stall) still has a proven bound.

:func:`metric_labeled` is what :func:`mechopt.solvers.labeled._lp.solve_labeled` calls: ``method="ipm"``
runs the IPM, ``"decompose"`` the decomposition over outputs (:mod:`mechopt.solvers.metric._decompose`), and
``"auto"`` the IPM where it was measured to win (:func:`ipm_preferred`) — over a growing
set of outputs (:mod:`._outputs`) where few outputs are needed (:func:`outputs_preferred`:
street graphs), else over every output, then the decomposition with the time left if
the IPM's proven gap is above the tolerance (the better channel and the larger bound
are kept). Measured in docs/geo.md.

When there are too many pairs for the IPM (a Euclidean metric on 400 places: ~100 000
pairs per output not implied by others) and from 150 places, ``"auto"`` (and ``"relax"``) runs
:func:`solve_metric_relaxed`: the IPM on the pairs of small budget only (places from a
map: each place's nearest pairs, :func:`neighbour_pairs`) — fewer rows, so
a *relaxation*, whose safe dual bound is a proven lower bound on the full problem —
then lifts its channel into the full cone (:func:`._parts.snap_to_cone`, exact
privacy for every pair), for a ``feasible`` answer with a proven gap (measured: 20×20
Euclidean, 0.66 % in 444 s; the decomposition reached no bound in 20 minutes).
"""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ._decompose import kept_budgets
from ._parts import (IPM_TOL, MetricLPResult, _is_sparse, _Lift, _pairs, exponential_start, safe_bound_from_duals,
                     snap_to_cone)

#: ``auto`` considers the IPM over a growing set of outputs from this many places
OUTPUTS_MIN_K = 300
#: ... when its first set holds at most this share of the outputs
OUTPUTS_MAX_SHARE = 0.55
#: the IPM holds about ten (pairs x outputs) float arrays: above this many entries per
#: array (~1.6 GB in total) ``auto`` takes the decomposition instead
IPM_MAX_ENTRIES = 20_000_000
#: ... unless the pairs have a band order whose factor stays below this many entries
#: (``k m bs``, 8 bytes each: 48×48 grid, 2.5e8, a proven 1.0e-6 in 600 s, 7.0 GB; 64×64,
#: 1.07e9, a peak of ~16 GB; the decomposition there proved a gap of 0.36 in 30 minutes)
IPM_BAND_MAX_ENTRIES = 1_100_000_000
#: ``auto`` takes the IPM with dense blocks (no band order) up to this many places
IPM_DENSE_MAX_K = 150
#: ``auto`` takes the lazy pairs per output (:mod:`._lazy`) on irregular places from this
#: many on, and up to LAZY_MAX_K (dense blocks, ``O(m k^3)`` an iteration: 0.14 s on 150
#: places from a map; a 20×20 Euclidean grid, 400 places: optimal in 222 s, where the
#: relaxations below reach 0.66 % in 444 s; 24×24, 576 places, with a limit of 600 s:
#: 3.4e-5, the relaxations 2.3 % in 232 s)
LAZY_MIN_K = 100
LAZY_MAX_K = 600
#: ... and past it up to this many with band blocks but for each output's heads (docs/geo.md)
LAZY_HEADS_MAX_K = 1000


#: what a time limit keeps back for what follows the solve, per channel entry (the
#: identifiability check, the export) and per pair and output (one exact verification;
#: the repair takes about five): measured on a 48×48 grid (5.3·10⁶ entries, 2.1·10⁷
#: pair-outputs) and on 1 000 places from a map (10⁹ pair-outputs: 9 s a verification on
#: a quiet core, and 80 s past a 600 s limit with 5e-8 kept back beside another job)
FINISH_S_PER_ENTRY = 2e-6
VERIFY_S_PER_PAIR_OUTPUT = 2e-8


def finish_reserve(k: int, m: int, pairs: int, time_limit: float) -> float:
    """The seconds of ``time_limit`` kept back for finishing a ``k × m`` channel (at most a quarter).

    >>> round(finish_reserve(4096, 4096, 16_128, 1800.0)), round(finish_reserve(1000, 1000, 999_000, 600.0))
    (40, 102)
    >>> finish_reserve(10, 10, 90, 60.0) < 0.01
    True
    """
    return min(FINISH_S_PER_ENTRY * k * m + 5 * VERIFY_S_PER_PAIR_OUTPUT * pairs * m, 0.25 * time_limit)


#: a relaxation's IPM stops once its gap is below this share of what the lift into the
#: full cone adds to its iterate's loss (32×32 Euclidean: the lift adds ~2.5 %; the IPM
#: went on from a gap of 1e-3 at iteration ~60 to 3e-8 at 126, 466 s, and left the lift
#: 25 rounds), looked at every LIFT_EVERY iterates from a relative gap of LIFT_CHECK_FROM
LIFT_SHARE, LIFT_EVERY, LIFT_CHECK_FROM = 0.05, 3, 1e-3


def ipm_preferred(E: np.ndarray, m: int) -> bool:
    """Whether ``auto`` takes the IPM: where the benchmark shows it wins (docs/geo.md).

    Either k <= :data:`IPM_DENSE_MAX_K` with (pairs x outputs) arrays below
    :data:`IPM_MAX_ENTRIES` (dense blocks: 10×10 Euclidean, 6 464 pairs), or the pairs
    have a band order with block size ``<= k / 4`` (grids' neighbours, sparse spanners:
    20×20 to 48×48 grids) and either those arrays or the band factor (``k m bs`` entries,
    below :data:`IPM_BAND_MAX_ENTRIES`) are small enough.
    """
    from ._band import band_order

    k = E.shape[0]
    a, b = _pairs(E)
    if k <= IPM_DENSE_MAX_K and len(a) * m <= IPM_MAX_ENTRIES:
        return True
    bs = band_order(k, a, b)[1]
    return 4 * bs <= k and (len(a) * m <= IPM_MAX_ENTRIES or k * m * bs <= IPM_BAND_MAX_ENTRIES)


def outputs_preferred(E: np.ndarray, cost: np.ndarray) -> bool:
    """Whether ``auto`` runs the IPM over a growing set of outputs (:mod:`._outputs`) instead of every output.

    From :data:`OUTPUTS_MIN_K` places, when the first set (the Bayes outputs of the
    exponential mechanism's reports) holds at most :data:`OUTPUTS_MAX_SHARE` of the
    outputs. Measured (docs/geo.md): street graphs of 400, 1 000 and 2 000
    intersections start with 28 %, 40 % and 49 % of their outputs, and the route proves a
    gap of 1e-3 on 1 000 in 139 s where the IPM over every output was at 15 % after 318
    s; Manhattan grids with the clustered prior start with 58 % (20×20) to 75 % (32×32),
    and on 24×24 the IPM over every output is faster (42 s against 68 s).
    """
    from ._outputs import first_outputs

    k, m = cost.shape
    return k >= OUTPUTS_MIN_K and len(first_outputs(E, cost)) <= OUTPUTS_MAX_SHARE * m


def lazy_preferred(E: np.ndarray, m: int) -> bool:
    """Whether ``auto`` takes the IPM over lazy pairs per output (:mod:`._lazy`).

    For places without a grid's structure (no band order with block size ``<= k / 4``)
    from :data:`LAZY_MIN_K` to :data:`LAZY_MAX_K` places (measured on 150 places from a
    map, docs/geo.md: the IPM over every pair stalls, over a growing set of outputs it
    took ~300 iterations), and up to :data:`LAZY_HEADS_MAX_K` where the relaxations have no
    threshold level (places from a map, :mod:`._heads`).
    """
    from ._band import band_order

    k = E.shape[0]
    if not LAZY_MIN_K <= k <= LAZY_HEADS_MAX_K or m != k:
        return False
    a, b = _pairs(E)
    if 4 * band_order(k, a, b)[1] <= k:
        return False
    from ._heads import banded_base

    # past dense blocks: heads where the relaxations have no threshold level (docs/geo.md)
    return k <= LAZY_MAX_K or (banded_base(E) and not relaxation_levels(E, m, RELAX_LEVELS))


def solve_metric_ipm(E: np.ndarray, cost: np.ndarray, *, rel_gap: float = 1e-7, time_limit: float | None = None,
                     progress: Callable | None = None, lift: np.ndarray | None = None) -> MetricLPResult:
    """The labeled E-LDP LP by the structured IPM: a channel in the cone and a proven bound.

    Status ``optimal`` when ``objective - bound <= rel_gap |objective|``, else
    ``feasible`` (time limit, stall) with that gap. ``lift``: the full budgets when ``E``
    is a relaxation of them; the IPM then also stops once its own gap is below
    :data:`LIFT_SHARE` of what lifting its iterate into the full cone adds (looked at
    every :data:`LIFT_EVERY` iterates from a relative gap of :data:`LIFT_CHECK_FROM`):
    past that, iterations move the bound by less than the lift costs the channel.

    Examples
    --------
    >>> import numpy as np
    >>> r = solve_metric_ipm(np.array([[0, 1.0], [1.0, 0]]), 0.5 * (1 - np.eye(2)), rel_gap=1e-10)  # 1-LDP, two inputs
    >>> r.status == "optimal" and abs(r.objective - 1 / (1 + np.e)) < 1e-9 and r.objective - r.bound < 1e-9
    True
    """
    from ._ipm import metric_ipm

    t0 = time.perf_counter()
    E = np.asarray(E, dtype=float)
    cost = np.asarray(cost, dtype=float)
    a, b = _pairs(E)
    # keep a little of the limit for what follows the last iteration (snap, bound, repair, verification,
    # identifiability: ~45 s on a 64×64 grid, whose 1 800 s run ended 22 s late with 30 s kept)
    deadline = None if time_limit is None else t0 + float(time_limit) - min(0.05 * float(time_limit), 60.0)
    last: dict = {}

    def closes(Qi, mu, Pi, rel) -> bool:
        dominated = False
        if lift is not None and rel > rel_gap:
            n = last["lift_checks"] = last.get("lift_checks", 0) + 1
            if (n - 1) % LIFT_EVERY:
                return False
            if "lifter" not in last:
                last["lifter"] = _Lift(lift)  # its shortest paths once, not at every look
            relax = float(np.sum(cost * Qi))
            lifted = float(np.sum(cost * snap_to_cone(np.maximum(Qi, 0.0), last["lifter"])))
            if lifted - relax <= rel * abs(relax) / LIFT_SHARE:
                return False
            dominated = True
        # the exported channel pays a little more in the repair: ask for half the gap
        Qs = snap_to_cone(np.maximum(Qi, 0.0), E)
        obj = float(np.sum(cost * Qs))
        lb = safe_bound_from_duals(E, cost, a, b, mu, Pi)
        last.update(Q=Qs, objective=obj, bound=lb, checks=last.get("checks", 0) + 1)
        if dominated:
            last["lift_stop"] = rel
            return math.isfinite(lb)
        return math.isfinite(lb) and obj - lb <= 0.5 * rel_gap * max(abs(obj), 1e-300)

    r = metric_ipm(cost, a, b, np.exp(E[a, b]), tol=min(IPM_TOL, 0.01 * rel_gap), deadline=deadline,
                   progress=progress, enough=closes,
                   check_below=rel_gap if lift is None else max(rel_gap, LIFT_CHECK_FROM),
                   q0=(lambda: exponential_start(E)) if cost.shape[1] == E.shape[0] else None)
    t = time.perf_counter()
    if "Q" in last and r.message.startswith("the caller's test"):
        Q, objective, bound = last["Q"], last["objective"], last["bound"]
    else:
        Q = snap_to_cone(np.maximum(r.Q, 0.0), E)
        objective = float(np.sum(cost * Q))
        bound = safe_bound_from_duals(E, cost, a, b, r.mu, r.Pi)
    stats = dict(r.stats, ipm_status=r.status, snap_bound_s=time.perf_counter() - t, pairs_active=len(a),
                 bound_checks=last.get("checks", 0), lift_stop=last.get("lift_stop"),
                 total_s=time.perf_counter() - t0, time_limit_hit=r.status == "time limit")
    closed = math.isfinite(bound) and objective - bound <= rel_gap * max(abs(objective), 1e-300)
    message = "" if closed else (f"{r.message}; " if r.message else "") + (
        f"proven relative gap {(objective - bound) / max(abs(objective), 1e-300):.2e}"
        if math.isfinite(bound) else "no bound")
    return MetricLPResult("optimal" if closed else "feasible", Q, objective, bound, message, stats)


#: the back-ends the decomposition's HiGHS masters stand for ("auto" and the registered HiGHS methods)
HIGHS_BACKENDS = ("auto", "highs", "highs-ipm", "highs-ds")
#: ``auto`` relaxes a metric whose pairs do not fit the IPM from this many places on
RELAX_MIN_K = 150
#: relaxation levels tried by ``auto`` and ``relax`` (while time is left)
RELAX_LEVELS = 2
#: at most this many lift-and-renormalise rounds for a relaxation's channel, and at
#: least this many whatever the time limit (up to 20×20 the deviation shrinks ~4× a
#: round, from 1e-2 to 1e-13 in 25; on 32×32 Euclidean ~7 %, and :func:`into_cone`
#: mixes away what is left)
SNAP_ROUNDS, SNAP_LEAST = 200, 25
#: neighbours per place tried by :func:`neighbour_pairs`, most first
NEIGHBOURS = (8, 6, 4)
#: :func:`widened` adds at most this share of a threshold's pairs from inside its band
WIDEN_SHARE = 0.25
#: seconds a product of the dense lift takes (1 024 places and outputs: 0.55 s a round)
SNAP_S_PER_PRODUCT = 6e-10
#: ... and :func:`into_cone` (its targets and a scan over every pair for each: 1 024 places
#: and outputs, 3.5 s a target)
MIX_S_PER_PRODUCT = 1.5e-8
#: :func:`into_cone` also tries the channel lifted into the cone of these shares of the budgets
#: (32×32 Euclidean, mixed losses 8.8084, 8.7907 and 8.7884 at 0.25, 0.4 and 0.45)
INTO_SHARES = (0.3, 0.45)


def relaxation_levels(E: np.ndarray, m: int, levels: int = 3) -> list[float]:
    """Budget thresholds ``theta`` for :func:`solve_metric_relaxed`, loosest relaxation first.

    Level ``j`` keeps the pairs with ``E <= theta_j``: the largest threshold whose pairs
    have a band order with block size at most ``(j + 1)`` times that of the smallest
    connected threshold (a grid's neighbours), within ``k / 4`` and the IPM's memory rule.
    Empty when even the smallest connected threshold does not fit.

    Examples
    --------
    >>> import numpy as np
    >>> xy = np.array([(i, j) for i in range(12) for j in range(12)], float)
    >>> E = 0.7 * np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))   # Euclidean, 12×12
    >>> [round(t / 0.7, 3) for t in relaxation_levels(E, 144)]        # radii (pairs 2, 3 rows apart)
    [2.236, 3.0]
    """
    from scipy.sparse.csgraph import connected_components

    from ._band import band_order

    k = E.shape[0]
    off = ~np.eye(k, dtype=bool) & np.isfinite(E)
    vals = np.unique(E[off])

    def fit(theta):
        a, b = np.nonzero(off & (E <= theta))
        if len(a) * m > IPM_MAX_ENTRIES:
            return None
        return band_order(k, a, b)[1]

    def connected(theta):
        G = sp.csr_matrix(off & (E <= theta))
        return connected_components(G, directed=False)[0] == 1

    a_, b_ = 0, len(vals) - 1  # the first connected threshold, by bisection
    while a_ < b_:
        mid = (a_ + b_) // 2
        if connected(vals[mid]):
            b_ = mid
        else:
            a_ = mid + 1
    lo = a_
    base = fit(vals[lo])
    if base is None or 4 * base > k:
        return []
    out: list[float] = []
    i = lo
    for j in range(1, levels + 1):
        cap = min((j + 1) * base + j, k // 4)
        while i + 1 < len(vals) and (bs := fit(vals[i + 1])) is not None and bs <= cap:
            i += 1
        if not out or vals[i] > out[-1]:
            out.append(float(vals[i]))
    return out


def widened(E: np.ndarray, theta: float, m: int) -> np.ndarray:
    """``(k, k)`` booleans: the pairs ``E <= theta`` and, cheapest first, other pairs inside their band.

    A pair is inside the band when its places are at most the block size apart in the
    band order of the pairs ``E <= theta``: the IPM's band blocks keep their size, and the
    relaxation is tighter. At most :data:`WIDEN_SHARE` more pairs (whole budget values at
    a time, so that both directions of a pair enter together) and within the IPM's memory
    rule; the threshold's pairs alone if the band order of the union is wider. On a 32×32
    Euclidean grid the pairs ``(±1, ±3)`` apart join those up to ``√5`` (15 252 -> 18 848
    pairs, block size 65): with a 540 s limit the relaxation's proven gap went from 2.5 %
    to 1.9 % (bound 8.397 -> 8.440, channel 8.609 -> 8.600).

    Examples
    --------
    >>> import numpy as np
    >>> xy = np.array([(i, j) for i in range(8) for j in range(8)], float)
    >>> E = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    >>> base = (E > 0) & (E <= 1.5)          # neighbours and diagonals: block size 9
    >>> keep = widened(E, 1.5, 64)           # and the pairs two apart in a row or column
    >>> int(base.sum()), int(keep.sum()), bool(np.all(keep >= base)), sorted(set(E[keep & ~base].tolist()))
    (420, 516, True, [2.0])
    """
    from ._band import band_order

    k = E.shape[0]
    off = np.isfinite(E) & ~np.eye(k, dtype=bool)
    keep = off & (E <= theta)
    a, b = np.nonzero(keep)
    perm, bs = band_order(k, a, b)
    pos = np.empty(k, np.int64)
    pos[perm] = np.arange(k)
    ca, cb = np.nonzero(off & ~keep & (np.abs(pos[:, None] - pos[None, :]) <= bs))
    room = min(int(WIDEN_SHARE * len(a)), IPM_MAX_ENTRIES // max(m, 1) - len(a))
    if room <= 0 or not len(ca):
        return keep
    vals = E[ca, cb]
    order = np.argsort(vals, kind="stable")
    n = min(room, len(order))
    while 0 < n < len(order) and vals[order[n - 1]] == vals[order[n]]:
        n -= 1  # a budget value enters whole or not at all
    if n == 0:
        return keep
    out = keep.copy()
    out[ca[order[:n]], cb[order[:n]]] = True
    return out if band_order(k, *np.nonzero(out))[1] <= bs else keep


def neighbour_pairs(E: np.ndarray, m: int) -> np.ndarray | None:
    """A relaxation for places with no threshold level: each place's nearest pairs, or None.

    ``(k, k)`` booleans: the pairs to each place's ``K`` cheapest others (either
    direction) and a minimum spanning tree of the budgets (so that the pairs join every
    place), for the largest ``K`` of :data:`NEIGHBOURS` whose pairs have a band order with
    block size ``<= k / 4`` and fit the IPM's memory rule. Places from a map cluster
    around hot spots: every threshold that joins the clusters keeps all pairs inside the
    densest one (no band order), where their nearest neighbours have one (1 000 places
    from a map, 8 neighbours: 9 490 pairs, block size 93).

    Examples
    --------
    >>> import numpy as np
    >>> xy = np.random.default_rng(0).uniform(0, 10, (60, 2))
    >>> E = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    >>> keep = neighbour_pairs(E, 60)
    >>> bool(np.array_equal(keep, keep.T)), int(keep.sum(1).min()) >= 4, bool(keep.sum() < 60 * 59 / 4)
    (True, True, True)
    """
    from scipy.sparse.csgraph import minimum_spanning_tree

    from ._band import band_order

    k = E.shape[0]
    off = np.isfinite(E) & ~np.eye(k, dtype=bool)
    if k < 3 or not off.any():
        return None
    tree = minimum_spanning_tree(sp.csr_matrix(np.where(off, np.maximum(E, 1e-300), 0.0))).toarray() > 0
    tree |= tree.T
    order = np.argsort(np.where(off, E, np.inf), axis=1, kind="stable")
    for K in NEIGHBOURS:
        keep = tree.copy()
        rows = np.repeat(np.arange(k), min(K, k - 1))
        cols = order[:, :min(K, k - 1)].ravel()
        ok = off[rows, cols]
        keep[rows[ok], cols[ok]] = True
        keep |= keep.T
        a, b = np.nonzero(keep)
        if len(a) * m <= IPM_MAX_ENTRIES and 4 * band_order(k, a, b)[1] <= k:
            return keep
    return None


def into_cone(Q: np.ndarray, E: np.ndarray, cost: np.ndarray | None = None) -> np.ndarray:
    """``Q`` mixed with the least share of a target channel that puts every pair inside ``E``.

    Lift and renormalise (:func:`._parts.snap_to_cone`) may leave a relaxation's rows off by
    1e-4 (32×32 Euclidean places: ~7 % less a round, not 4×). The repair's uniform rows
    would pay for that with a large mixing (``t`` = 0.028: each broken entry is ~60
    times the uniform one). A target with slack on every pair on the scale of ``Q``'s own
    entries needs a small share (:func:`..._repair.mixing_into_cone`; within a margin of
    1e-12, which the exact verifier proves without its exact path):

    * :func:`._parts.exponential_start`, the exponential mechanism at half the budgets:
      ``e^{d/2}`` of ``e^d``;
    * with ``cost``, also ``Q`` itself with each column lifted into the cone of
      ``beta E`` (:data:`INTO_SHARES`) and its rows renormalised: the row sums ``s`` of a
      matrix whose columns are in that cone have ``s[x] <= e^{beta E[x, x']} s[x']``, so
      the rows are in the cone of ``2 beta E``, with slack ``e^E - e^{2 beta E}`` where
      ``Q`` has its mass (32×32 Euclidean, a relaxation's channel of loss 8.7825: 8.9200
      with the exponential mechanism, 8.7884 with ``beta`` = 0.45).

    The target whose mixture has the least ``cost`` is kept; ``Q`` unchanged if it holds already.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(4.0)
    >>> E = np.abs(x[:, None] - x[None])
    >>> Q = into_cone(np.eye(4), E)                 # the identity breaks every pair
    >>> bool(np.all(Q[:, None, :] <= np.exp(E)[:, :, None] * Q[None, :, :])), np.allclose(Q.sum(1), 1)
    (True, True)
    """
    from .._repair import mixing_into_cone

    targets = [exponential_start(E)]
    t = mixing_into_cone(Q, E, targets[0])
    if t <= 0.0:
        return Q
    if cost is not None:
        for beta in INTO_SHARES:
            L = _Lift(beta * E)(Q)
            targets.append(L / L.sum(axis=1, keepdims=True))
    best, best_loss = None, math.inf
    for i, R in enumerate(targets):
        ti = t if i == 0 else mixing_into_cone(Q, E, R)
        ti = min(ti * (1 + 1e-6), 1.0)
        M = (1 - ti) * Q + ti * R
        loss = 0.0 if cost is None else float(np.sum(cost * M))
        if best is None or loss < best_loss:
            best, best_loss = M, loss
    return best


def solve_metric_relaxed(E: np.ndarray, cost: np.ndarray, *, rel_gap: float = 1e-7, time_limit: float | None = None,
                         progress: Callable | None = None, levels: int = RELAX_LEVELS,
                         thetas: list | None = None) -> MetricLPResult:
    """The labeled E-LDP LP through relaxations: the IPM on the pairs ``E <= theta``.

    For each threshold of :func:`relaxation_levels` (tighter each time, while time is
    left): the IPM solves the LP with only those pairs — a relaxation, so its safe bound
    bounds the full optimum from below — and its channel, lifted into the full cone by
    :func:`._parts.snap_to_cone`, is a channel of the full problem (the caller
    repairs and verifies it exactly). The best channel and the largest bound are kept.
    Status ``optimal`` only if they meet within ``rel_gap``. ``thetas``: the thresholds,
    if the caller already has them (else ``relaxation_levels(E, m, levels)``); an entry
    may instead be the ``(k, k)`` booleans of the pairs kept (:func:`neighbour_pairs`).

    Examples
    --------
    >>> import numpy as np
    >>> xy = np.array([(i, j) for i in range(5) for j in range(5)], float)
    >>> D = np.sqrt(((xy[:, None] - xy[None]) ** 2).sum(-1))
    >>> C = np.full(25, 1 / 25)[:, None] * D**2
    >>> r = solve_metric_relaxed(0.7 * D, C)
    >>> r.status, bool(r.bound <= r.objective), len(r.stats["levels"])
    ('feasible', True, 1)
    """
    t0 = time.perf_counter()
    E = np.asarray(E, dtype=float)
    k, m = cost.shape
    if thetas is None:
        thetas = relaxation_levels(E, m, levels)
    best_Q, best_obj, best_bound = None, math.inf, -math.inf
    runs = []
    message = ""
    for theta in thetas:
        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        if left is not None and runs and left < 2.5 * runs[-1]["s"]:
            message = f"time limit: {len(runs)} of {len(thetas)} relaxations"
            break
        t = time.perf_counter()
        Er = np.where(widened(E, theta, m) if np.isscalar(theta) else theta, E, np.inf)
        np.fill_diagonal(Er, 0.0)
        # the lift's rounds and the mixing after the IPM are kept out of its time (dense
        # E, 1 024 places and outputs: 0.55 s a round, ~11 s the mixing's three targets)
        snap_s = (SNAP_LEAST * SNAP_S_PER_PRODUCT + MIX_S_PER_PRODUCT) * k * k * m if not _is_sparse(E) else 0.0
        r = solve_metric_ipm(Er, cost, rel_gap=min(rel_gap, 1e-8), progress=progress, lift=E,
                             time_limit=None if left is None else max(left - snap_s, 0.0))
        if r.Q is None:
            message = r.message
            break
        # lift every column into the full cone and renormalise the rows, repeatedly: the
        # lift moves row sums by up to 1e-2 here, and a single renormalisation would leave
        # ratios off by as much (the repair would pay for it by mixing in the uniform channel)
        Q = snap_to_cone(r.Q, E, rounds=SNAP_ROUNDS, tol=1e-13, least=SNAP_LEAST,
                         deadline=None if time_limit is None else t0 + float(time_limit))
        if m == k:
            Q = into_cone(Q, E, cost)
        obj = float(np.sum(cost * Q))
        runs.append({"theta": float(theta) if np.isscalar(theta) else "neighbours", "pairs": r.stats.get("pairs_active"),
                     "block_size": r.stats.get("block_size"), "objective": obj, "bound": r.bound, "s": time.perf_counter() - t})
        if obj < best_obj:
            best_Q, best_obj = Q, obj
        best_bound = max(best_bound, r.bound)
        if best_obj - best_bound <= rel_gap * abs(best_obj):
            break
    if best_Q is None:
        return MetricLPResult("error", None, None, -math.inf, message or "no relaxation fits the IPM",
                              {"levels": runs})
    closed = best_obj - best_bound <= rel_gap * max(abs(best_obj), 1e-300)
    if not closed:
        message = (f"{message}; " if message else "") + (
            f"{len(runs)} relaxation{'s' if len(runs) > 1 else ''}: proven relative gap "
            f"{(best_obj - best_bound) / max(abs(best_obj), 1e-300):.2e}")
    return MetricLPResult("optimal" if closed else "feasible", best_Q, best_obj, best_bound, "" if closed else message,
                          {"levels": runs, "pairs_active": runs[-1]["pairs"], "block_size": runs[-1]["block_size"],
                           "total_s": time.perf_counter() - t0})


def metric_labeled(notions, k: int, m: int, cost: np.ndarray, *, method: str = "auto", rel_gap: float = 1e-7,
                   time_limit: float | None = None, progress: Callable | None = None, backend: str = "auto"):
    """The labeled metric LP as a :class:`~mechopt.solvers._outcome.LabeledSolution`, or None if it does not apply.

    ``method``: ``"ipm"``, ``"decompose"`` or ``"auto"`` (see the module docstring). The
    IPM and the relaxation solve no LP; the decomposition's masters are HiGHS models, so
    it runs only when ``backend`` is ``"auto"`` or a HiGHS back-end: with another one
    (and no IPM or relaxation answer) this returns None and the caller's LP runs on it.
    """
    from .._outcome import LabeledSolution
    from .._progress import named
    from ._decompose import solve_metric_lp
    from ._lazy import solve_metric_lazy
    from ._outputs import solve_metric_outputs

    t0 = time.perf_counter()
    E = kept_budgets(notions, k)
    if E is None:
        return None
    t_build = time.perf_counter() - t0
    use_lazy = method == "lazy" or (method == "auto" and lazy_preferred(E, m))
    use_ipm = method == "ipm" or (method == "auto" and not use_lazy and ipm_preferred(E, m))
    use_outputs = method == "outputs" or (method == "auto" and use_ipm and outputs_preferred(E, cost))
    runs: list[tuple[str, MetricLPResult]] = []
    if time_limit is not None:
        pairs = int(np.isfinite(E).sum()) - k
        time_limit = max(time_limit - finish_reserve(k, m, pairs, time_limit), 0.0)
    tl = None if time_limit is None else max(time_limit - t_build, 0.0)
    if use_lazy:
        # with the implied pairs too: redundant rows, but among each place's cheapest
        # pairs the lazy route starts from (20×20 Euclidean, 36 % of the pairs implied: to
        # a proven 1e-6 in 192 IPM iterations, 110 s, against 220, 120 s without them)
        runs.append(("lazy", solve_metric_lazy(kept_budgets(notions, k, implied=True), cost, rel_gap=rel_gap,
                                               time_limit=tl, progress=named(progress, "lazy"))))
    elif use_outputs:
        runs.append(("outputs", solve_metric_outputs(E, cost, rel_gap=rel_gap, time_limit=tl,
                                                     progress=named(progress, "outputs"))))
    elif use_ipm:
        runs.append(("ipm", solve_metric_ipm(E, cost, rel_gap=rel_gap, time_limit=tl, progress=named(progress, "ipm"))))
    elif method == "relax" or (method == "auto" and k >= RELAX_MIN_K):
        thetas = relaxation_levels(E, m, RELAX_LEVELS)
        if not thetas and (near := neighbour_pairs(E, m)) is not None:
            thetas = [near]
        if thetas or method == "relax":
            runs.append(("relax", solve_metric_relaxed(E, cost, rel_gap=rel_gap, time_limit=tl, progress=named(progress, "relax"),
                                                       thetas=thetas)))
    left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
    # after a relaxation or the output route the decomposition is not tried: on such
    # metrics it reached no bound in 20 minutes (docs/geo.md), and on 150 places from a
    # map its block master took 20 s a round with no bound after 2 minutes. Nor after an
    # IPM stopped by the caller's limit: what is left is kept for the checks after the
    # solve (on a 64×64 grid the decomposition took it and 145 s more, and its bound was weak)
    stopped = left is not None and bool(runs and runs[0][1].stats.get("time_limit_hit"))
    decompose = not runs or (method == "auto" and runs[0][0] == "ipm" and runs[0][1].status != "optimal"
                             and not stopped and (left is None or left > 1.0))
    if decompose and backend not in HIGHS_BACKENDS:
        if not runs:
            return None  # the requested back-end solves the whole LP
    elif decompose:
        runs.append(("decompose", solve_metric_lp(E, cost, rel_gap=rel_gap, time_limit=left,
                                                  progress=named(progress, "decompose"))))
    good = [(name, r) for name, r in runs if r.Q is not None]
    if not good:
        name, r = runs[-1]
        return LabeledSolution("error", None, None, r.message, dict(r.stats, method=name, build_s=t_build))
    name, best = min(good, key=lambda nr: nr[1].objective)
    bound = max(r.bound for _, r in runs)
    stats = dict(best.stats, method=name, build_s=t_build, bound=bound)
    if len(runs) > 1:
        stats["tried"] = {n: {"status": r.status, "objective": r.objective, "bound": r.bound,
                              "total_s": r.stats.get("total_s")} for n, r in runs}
    closed = math.isfinite(bound) and best.objective - bound <= rel_gap * max(abs(best.objective), 1e-300)
    status = "optimal" if closed else "feasible"
    return LabeledSolution(status, best.Q, best.objective, "" if closed else best.message, stats,
                           bound=bound if math.isfinite(bound) else -math.inf)
