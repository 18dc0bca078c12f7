"""Estimation-optimal design by column generation with a proven bound (SPEC §3).

The design problem is ::

    f* = min_w  tr(J(w)^-1)   s.t.  sum_r w_r v_r = 1,  w >= 0,
    J(w) = sum_r w_r g_r g_r^T / (p0·v_r),   g_r = U^T v_r,

over the extreme rays ``v_r`` of the privacy cone, where ``U`` is an orthonormal basis
(k x (k-1)) of the simplex's tangent space ``{x : 1·x = 0}``. The risk
``tr(B J_B^-1 B^T)`` of SPEC §3 does not depend on the basis ``B``, so this is the
same number as :func:`mechopt.estimation_risk`.

**Lower bound (weak duality).** For a symmetric ``N ⪰ 0`` and any ``J ≻ 0``,
``tr(J^-1) >= 2 tr(N^(1/2)) - tr(N J)`` (the difference is
``||J^(-1/2) - J^(1/2) N^(1/2)||_F^2``). With ``c_r = g_r^T N g_r / (p0·v_r)`` and any
``y`` in R^k, every feasible ``w`` has ``tr(N J(w)) = sum_r w_r c_r
<= 1·y + delta``, where ``delta = max_r k (c_r - y·v_r)^+ / (1·v_r)`` (because
``sum_r w_r (1·v_r) = k``). Hence ::

    f* >= 2 tr(N^(1/2)) - 1·y - delta.

Scaling the dual ``(N, y)`` by ``a²`` scales ``delta`` by ``a²``; the best ``a`` gives
``f* >= tr(N^(1/2))² / (1·y + delta)`` (:func:`._dual.scaled_bound`), never worse and
much better while ``delta`` is large.

``delta`` is a maximum over *every* ray — the pricing problem. The restricted master
(an interior-point method on a working set of rays, :func:`restricted_design`) gives
``N = J(w)^-2`` and ``y`` (the multipliers of ``V w = 1``); pricing finds rays with
``c_r > y·v_r``, which enter the working set, until the exact pricing proves
``delta`` small. The bound is valid whatever the master's accuracy: only its tightness
depends on it. The rounds are those of :func:`mechopt.solvers._colgen_loop.run` (master
:class:`_DesignMaster`, pricer :class:`_DesignPricer`).

Pricing oracles:

* :class:`._pricing.ExplicitPricer` — a listed set of rays (any cone mechopt enumerates): a scan.
* :class:`._pricing_lip.LipDesignPricer` — the vertices of the ε-LIP slice
  ``{P·v = 1, e^-ε <= v <= e^ε}`` when ``p0 = P``, never listed: successive
  linearisation, and a spatial branch and bound whose αBB bounds are certified by a
  tangent plane (its module docstring). Its reduced values are normalised by ``P·v``
  (``sum_r w_r P·v_r = 1``), which changes nothing above: ``delta`` is then
  ``max_r (c_r - y·v_r)^+ / (P·v_r)``.
* :class:`._pricing.StaircasePricer` — the ``2^k - 2`` LDP staircases ``1 + (e^ε - 1) 1_S``,
  never listed. A fast heuristic (best-improvement local search over one-element flips
  and swaps) drives the iterations; the exact oracle is a two-level branch-and-bound:
  branch on the first half of the bits (all ``2^⌈k/2⌉`` assignments) and on the
  number ``b`` of ones in the second half, bound every (assignment, ``b``) pair —
  exactly in the first half, by separate maxima in the second — and enumerate the
  surviving pairs with one matrix product each (meet in the middle). ``c_r`` is a
  convex function of ``v_r`` (quadratic over linear), so its maximum over staircases
  is a convex maximisation: no sorting argument applies, hence the enumeration.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.linalg as sla

from .._colgen_loop import FAILED, Found, Round, run
from ._dual import dual_value, pricing_matrix, reduced_values, scaled_bound
from ._pricing import ExplicitPricer
from ._pricing_lip import LipDesignPricer

#: target relative gap of the column generation (the design is "optimal" at <= 1e-6)
CG_REL_GAP = 1e-8
#: a proven relative gap at or below this makes a design "optimal"
PROVEN_REL_GAP = 1e-6


def tangent_basis(k: int) -> np.ndarray:
    """An orthonormal basis ``U`` (k x (k-1)) of ``{x in R^k : sum x = 0}``.

    Examples
    --------
    >>> U = tangent_basis(4)
    >>> bool(np.allclose(U.T @ U, np.eye(3))), bool(np.allclose(U.sum(axis=0), 0))
    (True, True)
    """
    # Helmert-like: orthonormalise [I_{k-1}; -1] by QR (exact up to rounding)
    B = np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])
    Q, _ = np.linalg.qr(B)
    return Q


# -- restricted master: a primal-dual interior-point method -------------------------------


@dataclass
class MasterSolution:
    """The restricted optimum: weights, value, the dual ``(N, y)`` and the IPM's record."""

    w: np.ndarray
    value: float
    y: np.ndarray
    Jinv: np.ndarray  # J(w)^-1 in the basis U; N = Jinv @ Jinv
    iterations: int
    converged: bool


def restricted_design(V: np.ndarray, p0: np.ndarray, *, w0: np.ndarray | None = None, tol: float = 1e-12,
                      max_iter: int = 120, U: np.ndarray | None = None) -> MasterSolution:
    """``min tr(J(w)^-1)  s.t.  V w = 1, w >= 0`` over the columns of ``V`` (Mehrotra IPM).

    A primal-dual interior-point method with the exact Hessian
    ``∇²f = 2 (G^T J^-2 G) ∘ (G^T J^-1 G)`` (``G`` the scaled tangent coordinates of
    the columns) and an infeasible start, so ``w0`` (e.g. the previous working set's
    weights) warm-starts it. ``V`` must contain a feasible design whose information
    matrix is invertible (else ``np.linalg.LinAlgError``). The stopping test is the
    complementarity gap ``w·s <= tol f``; the caller proves its own bound.

    Examples
    --------
    >>> from mechopt.solvers.free._rays import ldp_rays
    >>> m = restricted_design(ldp_rays(3, 1.0), np.full(3, 1 / 3))
    >>> m.converged, round(m.value, 6)      # 3-RR is optimal at k = 3, eps = 1: 2 (2+e)^2 / (3 (e-1)^2)
    (True, 5.026755)
    """
    k, n = V.shape
    U = tangent_basis(k) if U is None else U
    den = p0 @ V
    if np.any(den <= 0):
        raise ValueError("every column needs p0·v > 0")
    G = (U.T @ V) / np.sqrt(den)
    # rows of V w = 1 that are combinations of others (rays that tie inputs, e.g. a prior
    # entry near 0 in LIP) make the Newton system singular: keep independent rows only
    # (the dropped ones hold with them, since the working set holds a feasible design)
    _, R, piv = sla.qr(V.T, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    rows = np.sort(piv[:int(np.sum(diag > 1e-12 * diag[0]))]) if len(diag) else np.arange(k)
    V = V[rows]
    b = np.ones(len(rows))

    def state(w):
        J = (G * w) @ G.T
        L = np.linalg.cholesky(J)
        Ji = sla.cho_solve((L, True), np.eye(k - 1))
        Ji = (Ji + Ji.T) / 2
        Y = Ji @ G
        return float(np.trace(Ji)), -np.einsum("ir,ir->r", Y, Y), Ji, Y

    if w0 is None or len(w0) != n:
        w = np.full(n, 1.0 / max(float(V.sum(axis=1).max()), 1e-300))
    else:
        w0 = np.asarray(w0, dtype=float)
        w = np.maximum(w0, 1e-6 * max(float(w0.max()), 1e-300))
    f, g, Ji, Y = state(w)
    lam = np.linalg.lstsq(V.T, -g, rcond=None)[0]
    s = np.maximum(g + V.T @ lam, 1e-2 * float(np.abs(g).mean()))
    converged = False
    iterations = 0
    while iterations < max_iter:
        iterations += 1
        rd = g + V.T @ lam - s
        rp = b - V @ w
        gap = float(w @ s)
        mu = gap / n
        if gap <= tol * f and np.abs(rp).max() <= 1e-13 and np.abs(rd).max() <= tol * max(float(np.abs(g).max()), 1.0):
            converged = True
            break
        Hm = 2.0 * (Y.T @ Y) * (G.T @ Y) + np.diag(s / w)
        try:
            cf = sla.cho_factor(Hm, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            Hm[np.diag_indices(n)] += 1e-12 * float(np.abs(Hm).max())
            cf = sla.cho_factor(Hm, lower=True, check_finite=False)
        HiVt = sla.cho_solve(cf, V.T, check_finite=False)
        with warnings.catch_warnings():
            warnings.simplefilter("error", sla.LinAlgWarning)  # singular: raise, the caller falls back
            try:
                S_lu = sla.lu_factor(V @ HiVt, check_finite=False)
            except sla.LinAlgWarning as err:
                raise np.linalg.LinAlgError(str(err)) from None
        kkt = (cf, HiVt, S_lu, V, rd, rp, w, s)
        dw, dlam, ds = _newton(kkt, -w * s)  # affine (predictor) direction
        ap, ad = _to_boundary(w, dw), _to_boundary(s, ds)
        mu_aff = float((w + ap * dw) @ (s + ad * ds)) / n
        sigma = min(1.0, (mu_aff / mu) ** 3) if mu > 0 else 0.0
        dw, dlam, ds = _newton(kkt, sigma * mu - w * s - dw * ds)
        if not (np.all(np.isfinite(dw)) and np.all(np.isfinite(dlam))):
            raise np.linalg.LinAlgError("singular Newton system (the working set's rays do not span the inputs)")
        ap, ad = 0.99 * _to_boundary(w, dw), 0.99 * _to_boundary(s, ds)
        for _ in range(60):  # keep J positive definite along the primal step
            try:
                f_n, g_n, Ji_n, Y_n = state(w + ap * dw)
                break
            except np.linalg.LinAlgError:
                ap *= 0.5
        else:
            break
        w = w + ap * dw
        f, g, Ji, Y = f_n, g_n, Ji_n, Y_n
        lam = lam + ad * dlam
        s = s + ad * ds
    y = np.zeros(k)
    y[rows] = lam  # a dropped row's multiplier is 0: any y gives a valid bound
    return MasterSolution(w, f, y, Ji, iterations, converged)


def _newton(kkt, rc):
    """One Newton direction of the primal-dual system for the complementarity target ``rc``."""
    cf, HiVt, S_lu, V, rd, rp, w, s = kkt
    Hir = sla.cho_solve(cf, -rd + rc / w, check_finite=False)
    dlam = sla.lu_solve(S_lu, V @ Hir - rp, check_finite=False)
    dw = Hir - HiVt @ dlam
    return dw, dlam, (rc - s * dw) / w


def _to_boundary(x: np.ndarray, dx: np.ndarray) -> float:
    neg = dx < 0
    return min(1.0, float((-x[neg] / dx[neg]).min())) if neg.any() else 1.0


# -- the column generation loop (pricers: mechopt/solvers/design/_pricing.py) -------------------


@dataclass
class CGDesign:
    """A design found by column generation, with a proven lower bound on the optimum."""

    status: str  # "optimal" (proven within PROVEN_REL_GAP), "feasible", "error"
    V: np.ndarray | None  # working-set rays (k, n)
    w: np.ndarray | None
    value: float | None  # risk of (V, w) as computed by the master
    lower: float  # proven lower bound on f*
    message: str = ""
    stats: dict = field(default_factory=dict)


def column_generation_design(pricer, p0: np.ndarray, *, rel_gap: float = CG_REL_GAP, time_limit: float = 600.0,
                             max_columns: int = 900, add_per_round: int = 200, seed: int = 0,
                             bound: float | None = None, progress: Callable | None = None) -> CGDesign:
    """Minimise the estimation risk over all rays the pricer knows (see the module docstring).

    Stops when the proven relative gap is at most ``rel_gap`` or at ``time_limit``
    (then with the best proven bound so far). The working set is capped at
    ``max_columns`` (the weighted columns are always kept). ``bound`` is a lower bound
    proven beforehand (e.g. :func:`._lip_variance.diagonal_bound`): the pricing's bounds
    only replace it when larger.

    Examples
    --------
    >>> from mechopt.solvers.design._pricing import StaircasePricer
    >>> res = column_generation_design(StaircasePricer(5, 1.0), np.full(5, 0.2))
    >>> res.status, round(res.value, 6)     # 5-RR: (k-1)(k+e-1)^2 / (k (e-1)^2) = 12.229751
    ('optimal', 12.229751)
    >>> bool(res.lower <= res.value <= res.lower * (1 + 1e-8))
    True
    """
    t0 = time.perf_counter()
    p0 = np.asarray(p0, dtype=float)
    stats: dict = {"rounds": 0, "exact_pricing": 0, "exact_seconds": 0.0, "master_seconds": 0.0}
    rng = np.random.default_rng(seed)
    master = _DesignMaster(pricer, p0, rng, max_columns, stats)
    oracle = _DesignPricer(pricer, master, rel_gap, time_limit, t0, add_per_round, rng, bound is not None)

    def closed(value: float, lower: float) -> bool:
        return math.isfinite(lower) and (value - lower) / value <= rel_gap

    res = run(master, oracle, sense="min", closed=closed, bound=bound,
              progress=None if progress is None else lambda it, *rest: progress(it + 1, *rest))
    stats["rounds"] = res.rounds
    lower = res.bound
    if res.reason == FAILED:
        return CGDesign("error", None, None, None, lower, res.state.message, stats)
    value, V, wv = master.best
    gap = (value - lower) / value if math.isfinite(lower) else math.inf
    message = ""
    if oracle.out_of_time and gap > rel_gap:
        message = f"time limit ({time_limit:.0f} s) reached with a proven relative gap of {gap:.3g}"
    elif gap > rel_gap:
        message = f"no ray prices in, but the pricing bound leaves a proven relative gap of {gap:.3g}"
    status = "optimal" if gap <= PROVEN_REL_GAP else "feasible"
    stats.update({"seconds": time.perf_counter() - t0, "working_set": int(V.shape[1]), "proven_rel_gap": gap})
    return CGDesign(status, V, wv, value, lower, message, stats)


class _DesignMaster:
    """The restricted design (:func:`restricted_design`) over a working set, warm-started.

    Keeps the best design seen (``best``: value, rays, weights), the round's pricing
    matrix ``H``, dual value ``D0`` and support; columns are indices into the listed rays
    (:class:`ExplicitPricer`) or 0/1 indicator rows ``X`` (staircases). Adding beyond
    ``max_columns`` first drops the unweighted columns farthest from pricing in.
    """

    def __init__(self, pricer, p0: np.ndarray, rng: np.random.Generator, max_columns: int, stats: dict):
        self.pricer, self.p0, self.max_columns, self.stats = pricer, p0, max_columns, stats
        self.U = tangent_basis(len(p0))
        self.explicit = isinstance(pricer, ExplicitPricer)
        if self.explicit:
            self.keys = pricer.initial(p0, rng)
            self.cols = pricer.columns(self.keys)
        else:
            self.X = pricer.initial(p0, rng)
            self.cols = pricer.rays(self.X)
        self.w = None
        self.best = None  # (value, V, w)

    def solve(self) -> Round:
        t = time.perf_counter()
        try:
            self.m = m = restricted_design(self.cols, self.p0, w0=self.w, U=self.U)
        except (np.linalg.LinAlgError, ValueError) as err:
            return Round("error", message=f"restricted design failed: {err}")
        self.stats["master_seconds"] += time.perf_counter() - t
        self.w = m.w
        if self.best is None or m.value < self.best[0]:
            self.best = (m.value, self.cols.copy(), self.w.copy())
        self.H = pricing_matrix(m.Jinv, self.U)
        self.D0 = dual_value(m.Jinv, m.y)
        self.supp = self.w > 1e-9 * self.w.max()
        return Round("optimal", self.best[0], m.y, int(self.supp.sum()))

    def add(self, new) -> int:
        new_cols = self.pricer.columns(new) if self.explicit else new
        # the explicit block is (k, n): its len is k, the count the weights and the cap use
        n_new = len(new_cols)
        cols, w = self.cols, self.w
        if cols.shape[1] + n_new > self.max_columns:
            score = np.where(self.supp, np.inf, reduced_values(cols, self.H, self.m.y, self.p0))
            keep = np.sort(np.argsort(-score)[:max(self.max_columns - n_new, int(self.supp.sum()))])
            cols, w = cols[:, keep], w[keep]
            if self.explicit:
                self.keys = self.keys[keep]
            else:
                self.X = self.X[keep]
        if self.explicit:
            self.keys = np.concatenate([self.keys, new])
            cols = np.hstack([cols, new_cols])
        else:
            self.X = np.vstack([self.X, new_cols])
            cols = np.hstack([cols, self.pricer.rays(new_cols)])
        self.cols = cols
        self.w = np.concatenate([w, np.full(n_new, 1e-3 * float(w.max()))])
        return len(new)


class _DesignPricer:
    """The pricing round: an exact scan of listed rays, or for staircases a local search
    whose columns enter while it finds some, then the exact branch and bound (which
    proves the bound) when it finds none, when the gap looks closed, or when time is up."""

    def __init__(self, pricer, master: _DesignMaster, rel_gap: float, time_limit: float, t0: float,
                 add_per_round: int, rng: np.random.Generator, prior_bound: bool = False):
        self.pricer, self.master, self.rel_gap, self.time_limit, self.t0 = pricer, master, rel_gap, time_limit, t0
        self.add_per_round, self.rng = add_per_round, rng
        # with a bound proven beforehand, a search stopped by the time limit skips the costly
        # semidefinite fallback (at k = 100 it bounds far below the prior bound, after ~30 s)
        self.prior_bound = prior_bound
        self.out_of_time = False
        self.previous = 0.0  # seconds from t0 at the previous pricing

    def price(self, state: Round) -> Found:
        mm, pricer, stats = self.master, self.pricer, self.master.stats
        m, H, D0, p0 = mm.m, mm.H, mm.D0, mm.p0
        elapsed = time.perf_counter() - self.t0
        # stop before a round that would end past the limit (rounds take about as long as the last)
        last_round, self.previous = elapsed - self.previous, elapsed
        self.out_of_time = out_of_time = elapsed + last_round > self.time_limit
        if mm.explicit:
            _, delta, new_idx = pricer.price(H, m.y, p0, have=set(mm.keys.tolist()), limit=self.add_per_round)
            stats["exact_pricing"] += 1
            return Found(new_idx, len(new_idx), scaled_bound(m.Jinv, m.y, delta), last=out_of_time)
        X, rel_gap = mm.X, self.rel_gap
        lower = None
        red = pricer.values(X, H, m.y, p0)
        starts = np.vstack([X[mm.supp | (red > -1e-3 * m.value)], pricer.random_starts(self.rng, 100)])
        hx, hv = pricer.heuristic(starts, H, m.y, p0)
        known = {row.tobytes() for row in X}
        order = np.argsort(-hv)
        thr = 0.1 * rel_gap * m.value
        fresh = [hx[i] for i in order if hv[i] > thr and hx[i].tobytes() not in known][:self.add_per_round]
        # the heuristic's best value is no bound, but when it says the gap is already below
        # half the target, the exact pricing is worth its cost (it proves or refutes that)
        close = len(hv) and (m.value - D0 + max(float(hv.max()), 0.0)) <= 0.5 * rel_gap * m.value
        if not fresh or close or out_of_time:
            te = time.perf_counter()
            extra = {"shor": False} if self.prior_bound and out_of_time and isinstance(pricer, LipDesignPricer) else {}
            ub, arg, cand, est = pricer.exact(H, m.y, p0, threshold=thr, top=self.add_per_round,
                                              time_limit=max(5.0, self.time_limit - elapsed), **extra)
            stats["exact_pricing"] += 1
            stats["exact_seconds"] += time.perf_counter() - te
            stats["exact_last"] = est
            lower = scaled_bound(m.Jinv, m.y, ub)
            fresh = [x for _, x in cand if x.tobytes() not in known]
        return Found(np.array(fresh) if fresh else None, len(fresh), lower, last=out_of_time)
