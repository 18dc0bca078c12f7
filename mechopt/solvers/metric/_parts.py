"""Parts of the decomposed metric LP (:mod:`mechopt.solvers.metric._decompose`): pair sets, pricing LPs, bounds, snapping.

The constants, the warm-started HiGHS pricing problems and the helpers shared by the
masters of :mod:`mechopt.solvers.metric._decompose` (and the interior-point route).
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ..backends._adapters import new_highs
from ..backends._safe_bound import _U, Transposed, safe_lower_bound
from ..labeled._structure import _closure
from ._band import ipm_workers, worker_pool


#: the IPM stops at this relative complementarity gap (the proven gap must reach the
#: caller's tolerance, 1e-7 for labeled problems, after the snap and the repair)
IPM_TOL = 1e-9
#: a pricing value below -RC_TOL (relative to the cost scale) makes an output or column enter
RC_TOL = 1e-11
#: pairs kept from the start when E has more than DENSE_PAIRS * k finite pairs
START_DEGREE = 8
DENSE_PAIRS = 12


@dataclass
class MetricLPResult:
    status: str  # "optimal" | "feasible" | "error"
    Q: np.ndarray | None
    objective: float | None  # of Q, float
    bound: float  # proven lower bound (safe), -inf if none
    message: str = ""
    stats: dict = field(default_factory=dict)


def _highs():
    """A silent persistent HiGHS model without presolve, and the ``highspy`` module."""
    return new_highs(presolve="off")


def base_pairs(E: np.ndarray) -> np.ndarray:
    """``(k, k)`` booleans: each place's :data:`START_DEGREE` cheapest pairs, both directions.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(12.0)
    >>> base = base_pairs(np.abs(x[:, None] - x[None]))
    >>> bool(base[0, 1] and base[1, 0]), bool(base[0, 11])
    (True, False)
    """
    k = E.shape[0]
    fin = np.isfinite(E) & ~np.eye(k, dtype=bool)
    near = np.argsort(np.where(fin, E, np.inf), axis=1)[:, :START_DEGREE]
    base = np.zeros((k, k), bool)
    base[np.repeat(np.arange(k), near.shape[1]), near.ravel()] = True
    base |= base.T
    return base & fin


class _Pairs:
    """The kept pairs ``(a, b, E)``: rows ``q[a] - e^E q[b] <= 0``, all or a lazy subset."""

    def __init__(self, E: np.ndarray):
        k = E.shape[0]
        self.k = k
        fin = np.isfinite(E) & ~np.eye(k, dtype=bool)
        self.E = E
        self.W = np.where(fin, np.exp(np.where(fin, E, 0.0)), np.inf)
        n_all = int(fin.sum())
        self.lazy = n_all > DENSE_PAIRS * k
        if self.lazy:
            a, b = np.nonzero(base_pairs(E))
        else:
            a, b = np.nonzero(fin)
        self.a = a.astype(np.int64)
        self.b = b.astype(np.int64)
        self.active = np.zeros((k, k), bool)
        self.active[self.a, self.b] = True

    @property
    def n(self) -> int:
        return len(self.a)

    def w(self, a, b):
        return self.W[a, b]

    def w_hi(self, a, b):
        """Outward-rounded ``e^E``: the LP with these coefficients is a relaxation."""
        E = self.E[a, b]
        return self.W[a, b] * (1.0 + (8.0 + 2.0 * np.abs(E)) * _U)

    def violated(self, V: np.ndarray, rel: float = 1e-9, exclude: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Pairs outside ``exclude`` (default: the active ones) that a column of ``V`` (k, n)
        breaks by more than ``rel``."""
        if not self.lazy:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        bad = np.zeros((self.k, self.k), bool)
        for j in range(V.shape[1]):
            v = V[:, j]
            with np.errstate(invalid="ignore"):
                bad |= v[:, None] > self.W * v[None, :] * (1 + rel) + 1e-300
        bad &= ~(self.active if exclude is None else exclude)
        a, b = np.nonzero(bad)
        return a, b

    def add(self, a: np.ndarray, b: np.ndarray) -> None:
        new = ~self.active[a, b]
        a, b = a[new], b[new]
        self.active[a, b] = True
        self.a = np.concatenate([self.a, a])
        self.b = np.concatenate([self.b, b])

    def index(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Positions of active pairs in the list."""
        if getattr(self, "_pos_n", -1) != self.n:
            self._pos = np.full((self.k, self.k), -1, dtype=np.int64)
            self._pos[self.a, self.b] = np.arange(self.n)
            self._pos_n = self.n
        return self._pos[a, b]

    def bound_operator(self) -> Transposed:
        """The outward-rounded rows of the active pairs, prepared for safe bounds (cached)."""
        if getattr(self, "_op_n", -1) != self.n:
            self._op = Transposed(self.matrix(hi=True))
            self._op_n = self.n
        return self._op

    def matrix(self, sl: slice | None = None, *, hi: bool = False) -> sp.csr_matrix:
        a, b = (self.a, self.b) if sl is None else (self.a[sl], self.b[sl])
        n = len(a)
        w = self.w_hi(a, b) if hi else self.w(a, b)
        return sp.csr_matrix((np.concatenate([np.ones(n), -w]), (np.tile(np.arange(n), 2), np.concatenate([a, b]))),
                             shape=(n, self.k))


def in_shares(order: list[int], shares: int, work: Callable[[int, int], bool]) -> None:
    """``work(share, y)`` for every ``y`` of ``order``, output ``y`` on share ``y % shares``.

    The shares run in threads (HiGHS releases Python's lock, so pricing LPs on one model
    per share run at once); a share stops at the first ``work`` that returns False.

    Examples
    --------
    >>> seen = []
    >>> in_shares([0, 1, 2, 3], 1, lambda share, y: seen.append(y) or y < 2)
    >>> seen
    [0, 1, 2]
    """

    def run(share: int) -> None:
        for y in order:
            if y % shares == share and not work(share, y):
                return

    if shares == 1 or len(order) < 2:
        for share in range(shares):
            run(share)
    else:
        with ThreadPoolExecutor(shares) as pool:
            list(pool.map(run, range(shares)))


class _Pricing:
    """One HiGHS model ``min r.q, A q <= 0, 0 <= q <= 1``; one warm-start basis per output."""

    def __init__(self, pairs: _Pairs):
        self.pairs = pairs
        self.k = pairs.k
        self.h, self.hs = _highs()
        h = self.h
        h.setOptionValue("solver", "simplex")
        h.setOptionValue("simplex_strategy", 4)  # primal: a new cost keeps the basis primal feasible
        h.setOptionValue("primal_feasibility_tolerance", 1e-10)
        h.setOptionValue("dual_feasibility_tolerance", 1e-10)
        h.addVars(self.k, np.zeros(self.k), np.ones(self.k))
        self.n_rows = 0
        self.bases: dict[int, object] = {}
        # the rows each stored basis has (``len(basis.row_status)`` converts every row's
        # status to Python: 16 ms a call at 70 000 rows, half the time of a warm pricing LP)
        self.basis_rows: dict[int, int] = {}
        self._add_rows(0, pairs.n)
        self.idx = np.arange(self.k, dtype=np.int32)
        self.iterations = 0

    def _add_rows(self, start: int, stop: int) -> None:
        n = stop - start
        if n <= 0:
            return
        a, b = self.pairs.a[start:stop], self.pairs.b[start:stop]
        idx = np.column_stack([a, b]).ravel().astype(np.int32)
        # each row divided by e^E: coefficients in [e^-E, 1], so that a dual off by the
        # LP's tolerance (a wrong sign, clipped to 0) moves no reduced cost by more than
        # that tolerance (unscaled, a 1e-10 dual times e^20 moved the bound by 1e-5)
        scale = 1.0 / self.pairs.w(a, b)
        self.row_scale = np.concatenate([getattr(self, "row_scale", np.zeros(0))[:start], scale])
        val = np.column_stack([scale, -np.ones(n)]).ravel()
        self.h.addRows(n, np.full(n, -np.inf), np.zeros(n), 2 * n, (2 * np.arange(n)).astype(np.int32), idx, val)
        self.n_rows = stop

    def basis(self, y: int | None):
        """Output ``y``'s stored basis, extended to the current rows (the new rows' slacks basic), or None."""
        basis = self.bases.get(y) if y is not None else None
        if basis is not None and self.basis_rows[y] < self.n_rows:
            # extended when used, not when rows arrive: with every output's basis stored,
            # extending them all at each lazy row took half the pricing time (150 places)
            basis.row_status = list(basis.row_status) + (
                [self.hs.HighsBasisStatus.kBasic] * (self.n_rows - self.basis_rows[y]))
            self.basis_rows[y] = self.n_rows
        return basis

    def sync(self) -> None:
        self._add_rows(self.n_rows, self.pairs.n)

    def solve(self, y: int, r: np.ndarray, like: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(q, lam)``: a minimiser and the pair duals (``lam >= 0``) for cost ``r``.

        An output priced for the first time starts from the basis of output ``like`` when
        that one has a basis (a nearby output's optimal vertex is a nearby tent).
        """
        h = self.h
        while True:
            h.changeColsCost(self.k, self.idx, r)
            basis = self.basis(y if y in self.bases else like)
            if basis is not None:
                h.setBasis(basis)
            h.run()
            if h.getModelStatus() != self.hs.HighsModelStatus.kOptimal:
                # a stale basis can leave HiGHS stuck; one cold retry
                h.clearSolver()
                h.run()
                if h.getModelStatus() != self.hs.HighsModelStatus.kOptimal:
                    raise ArithmeticError(f"pricing LP: {h.modelStatusToString(h.getModelStatus())}")
            self.iterations += h.getInfo().simplex_iteration_count
            sol = h.getSolution()
            q = np.clip(np.asarray(sol.col_value), 0.0, 1.0)
            a, b = self.pairs.violated(q[:, None])
            if len(a):
                self.pairs.add(a, b)
                self.sync()
                continue
            self.bases[y] = h.getBasis()
            self.basis_rows[y] = self.n_rows
            lam = np.maximum(-np.asarray(sol.row_dual), 0.0) * self.row_scale  # the unscaled rows' duals
            return q, lam


_EYE: dict[int, Transposed] = {}


def _label_bound(c_y: np.ndarray, mu: np.ndarray, lam: np.ndarray, op: Transposed) -> float:
    """Safe lower bound on ``min_q (c_y - mu).q`` over the cone's (relaxed) rows and the box."""
    k = len(c_y)
    n = op.T.shape[1]
    lam_full = np.zeros(n)
    lam_full[: len(lam)] = lam
    eye = _EYE.get(k)
    if eye is None:
        eye = _EYE[k] = Transposed(sp.identity(k, format="csr"))
    return safe_lower_bound(c_y, lo=np.zeros(k), hi=np.ones(k), A_ub=op, y_ub=lam_full, A_eq=eye, y_eq=mu)


def _sum_lower(mu: np.ndarray) -> float:
    s = math.fsum(mu.tolist())
    return s - _U * abs(s) - 2.0**-1060


def _safe_sum(terms: list[float]) -> float:
    """A lower bound on the exact sum of lower bounds ``terms`` (``fsum`` with its rounding charged)."""
    return math.fsum(terms) - 2 * _U * sum(abs(t) for t in terms) - 2.0**-1060


def snap_to_cone(Q: np.ndarray, E: np.ndarray, rounds: int = 1, tol: float = 0.0,
                 deadline: float | None = None, least: int = 1) -> np.ndarray:
    """Lift each column to the smallest point of the cone above it, then renormalise rows.

    ``q'[x] = max_z q[z] e^{-D[z, x]}`` (D: shortest paths of E) satisfies every pair
    in exact arithmetic and equals ``q`` where ``q`` already did; it only raises entries
    that an LP tolerance left too small — tiny entries far from a column's peak, where
    an absolute tolerance of 1e-10 is a large relative error that mixing alone would
    pay for with a large ``t``. Rows then sum to ``1 + O(tolerance)``; dividing by the
    sums perturbs ratios by as little, which the exact repair absorbs.

    A channel far outside the cone (a relaxation's, which ignored some pairs) moves its
    row sums by more: then lift and renormalise again, up to ``rounds`` times, until
    the sums stay within ``tol`` of 1 (measured on a 12×12 Euclidean relaxation: the
    deviation shrinks ~4× every round, from 1e-2 to 2e-11 in 60 rounds). Past the first
    ``least`` rounds, none starts after ``deadline`` (a ``time.perf_counter()`` value): a
    round costs ``k^2 m`` products for a dense ``E`` (0.55 s on 1 024 places and
    outputs), and what the rounds leave the exact repair pays for by mixing (a deviation
    of 1e-2 left on 32×32 Euclidean places: more than the repair's largest mixing).
    ``E`` may be a :class:`_Lift` already built for it (its shortest paths: ``k^3`` for a
    dense ``E``), for a caller that snaps many times.

    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[0, 1.0, np.inf], [1.0, 0, 1.0], [np.inf, 1.0, 0]])   # a path of three places
    >>> Q = snap_to_cone(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), E)
    >>> bool(np.all(Q[:, 0] <= np.exp(2.0) * Q[::-1, 0] * (1 + 1e-15)))   # ends within e^2 (two hops)
    True
    """
    lift = E if isinstance(E, _Lift) else _Lift(np.asarray(E, dtype=float))
    Q = np.maximum(np.asarray(Q, dtype=float), 0.0)
    for i in range(max(rounds, 1)):
        if i >= least and deadline is not None and time.perf_counter() > deadline:
            break
        out = lift(Q)
        s = out.sum(axis=1, keepdims=True)
        Q = out / s
        if float(np.abs(s - 1.0).max()) <= tol:
            break
    return Q


#: a budget matrix with at most this share of finite entries off the diagonal (a grid's
#: or a street network's edges) is lifted along its pairs (its shortest paths come from
#: Dijkstra in :func:`mechopt.solvers.labeled._structure._closure`)
SPARSE_SHARE = 0.1


#: the sparse lift stops raising a column when no entry would rise by more than this share
LIFT_RTOL = 1e-14


def _is_sparse(E: np.ndarray) -> bool:
    k = E.shape[0]
    return k > 32 and int(np.isfinite(E).sum()) - k <= SPARSE_SHARE * k * k


class _Lift:
    """``q -> max_z q[z] e^{-D[z, .]}`` for the columns of a matrix, ``D`` the shortest paths of ``E``.

    Dense ``E``: one pass over the places with ``e^{-D}`` (``O(k^2)`` per column). Sparse
    ``E`` (edges): the same maximum by propagation along the pairs, ``q[b] >= q[a] e^{-E[a, b]}``,
    repeated until nothing rises (``O(pairs)`` per column and pass, a few passes for a
    nearly feasible channel) — on a 48×48 grid the dense pass held ``k^3 = 1.2·10^10``
    products.
    """

    def __init__(self, E: np.ndarray):
        self.k = E.shape[0]
        if _is_sparse(E):
            a, b = _pairs(E)
            order = np.argsort(b, kind="stable")
            self.a, self.b = a[order], b[order]
            self.g = np.exp(-E[self.a, self.b])[:, None]
            self.targets, self.starts = np.unique(self.b, return_index=True)
            self.G = None
        else:
            with np.errstate(over="ignore"):
                self.G = np.exp(-_closure(E))  # G[z, x] = e^{-D[z, x]}

    def __call__(self, Q: np.ndarray) -> np.ndarray:
        if self.G is not None:
            out = Q.copy()

            def places(xs):  # numpy's products and maxima release Python's lock: in threads
                for x in xs:
                    np.maximum(out[x], (Q * self.G[:, x: x + 1]).max(axis=0), out=out[x])

            n = min(ipm_workers(), Q.shape[0])
            if n > 1 and Q.size >= 100_000:
                list(worker_pool(n).map(places, [range(i, Q.shape[0], n) for i in range(n)]))
            else:
                places(range(Q.shape[0]))
            return out
        out = Q.copy()
        # columns are lifted independently: a zero column stays zero, and a column that
        # no pair raised in a pass is final (on a 48×48 grid most settle in a few passes)
        live = np.flatnonzero(out.max(axis=0) > 0)
        for _ in range(self.k):  # a lift travels at most k - 1 pairs
            if len(live) == 0:
                break
            sub = out[:, live]
            cand = np.maximum.reduceat(sub[self.a] * self.g, self.starts, axis=0)
            # a rise below 1e-14 relative is rounding (it would travel one ulp a pass
            # across the whole grid); what is left of it is the exact repair's
            rise = cand > sub[self.targets] * (1.0 + LIFT_RTOL)
            np.maximum(sub[self.targets], cand, out=cand)
            sub[self.targets] = cand
            out[:, live] = sub
            live = live[rise.any(axis=0)]
        return out


def _pairs(E: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k = E.shape[0]
    fin = np.isfinite(E) & ~np.eye(k, dtype=bool)
    a, b = np.nonzero(fin)
    return a.astype(np.int64), b.astype(np.int64)


def pair_operator(E: np.ndarray, a: np.ndarray, b: np.ndarray) -> Transposed:
    """The rows ``Q[a_p, y] - e^{E[a_p, b_p]} Q[b_p, y]`` with ``e^E`` rounded outward, for safe bounds."""
    k = E.shape[0]
    n = len(a)
    Ev = E[a, b]
    w_hi = np.exp(Ev) * (1.0 + (8.0 + 2.0 * np.abs(Ev)) * _U)  # outward: the float LP is a relaxation
    return Transposed(sp.csr_matrix((np.concatenate([np.ones(n), -w_hi]),
                                     (np.tile(np.arange(n), 2), np.concatenate([a, b]))), shape=(n, k)))


def safe_bound_from_duals(E: np.ndarray, cost: np.ndarray, a: np.ndarray, b: np.ndarray, mu: np.ndarray,
                          Pi: np.ndarray) -> float:
    """A proven lower bound on the labeled LP's optimum from any ``mu`` and ``Pi >= 0``.

    ``Pi[p, y]`` multiplies the row ``Q[a_p, y] - e^{E[a_p, b_p]} Q[b_p, y] <= 0``.

    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[0, 1.0], [1.0, 0]])           # 1-LDP on two inputs, Hamming loss
    >>> a, b = np.array([0, 1]), np.array([1, 0])
    >>> C = 0.5 * (1 - np.eye(2))                      # optimum 1 / (1 + e)
    >>> from mechopt.solvers.metric._ipm import metric_ipm
    >>> r = metric_ipm(C, a, b, np.exp(E[a, b]))
    >>> L = safe_bound_from_duals(E, C, a, b, r.mu, r.Pi)
    >>> bool(1 / (1 + np.e) - 1e-9 < L <= 1 / (1 + np.e))
    True
    >>> safe_bound_from_duals(E, C, a, b, r.mu, 0 * r.Pi) <= 1 / (1 + np.e)   # any duals: still a bound
    True
    """
    k, m = cost.shape
    op = pair_operator(E, a, b)
    mu = np.asarray(mu, dtype=float)
    if not (np.all(np.isfinite(mu)) and np.all(np.isfinite(Pi))):
        return -math.inf
    total = [_sum_lower(mu)]
    for y in range(m):
        total.append(_label_bound(cost[:, y], mu, np.maximum(Pi[:, y], 0.0), op))
    return _safe_sum(total)


#: the share of the exponential mechanism in the IPM's start (the rest uniform)
START_SHARE = 0.5


def exponential_start(E: np.ndarray, share: float = START_SHARE) -> np.ndarray:
    """A start for the IPM: the exponential mechanism at half the budgets, mixed with the uniform channel.

    ``q[x, y] ∝ exp(-d[y, x] / 2)``, each row normalised, with ``d`` the budgets the kept
    pairs imply (their shortest chains, ``_closure``: a grid keeps its neighbours alone), the outputs
    being the places. It is private when ``d`` is symmetric (a metric's budgets):
    ``q[a, y] / q[b, y] <= e^(d[a, b] / 2) · e^(d[a, b] / 2)``; mixed with ``1 / k`` (a
    share ``1 - share``) every kept pair row holds strictly. The start is much nearer the
    optimum than ``1 / k``: Manhattan grids with the clustered prior of
    ``benchmarks/bench_geo`` need 26 IPM iterations instead of 31 to a relative gap of 1e-3
    on 32×32 (36 instead of 42 to 1e-6), 26 instead of 30 on 24×24. (Not used by the lazy
    pairs' rounds nor the growing outputs: 20×20 Euclidean took 216 iterations from it
    against 200, 400 street intersections 64 against 62.)
    :func:`._ipm.metric_ipm` checks the pair rows and starts from ``1 / k`` if one fails.

    >>> q = exponential_start(np.array([[0.0, 1.0], [1.0, 0.0]]))
    >>> q.sum(1).tolist(), bool(q[0, 0] / q[1, 0] <= np.e)
    ([1.0, 1.0], True)
    """
    em = _closure(E).T  # q[x, y] needs d[y, x]
    em *= -0.5
    np.exp(em, out=em)
    em /= em.sum(1, keepdims=True)
    em *= share
    em += (1.0 - share) / E.shape[0]
    return em
