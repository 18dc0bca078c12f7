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

``delta`` is a maximum over *every* ray — the pricing problem. The restricted master
(an interior-point method on a working set of rays, :func:`restricted_design`) gives
``N = J(w)^-2`` and ``y`` (the multipliers of ``V w = 1``); pricing finds rays with
``c_r > y·v_r``, which enter the working set, until the exact pricing proves
``delta`` small. The bound is valid whatever the master's accuracy: only its tightness
depends on it.

Pricing oracles:

* :class:`ExplicitPricer` — a listed set of rays (any cone mechopt enumerates): a scan.
* :class:`StaircasePricer` — the ``2^k - 2`` LDP staircases ``1 + (e^ε - 1) 1_S``,
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

#: target relative gap of the column generation (the design is "optimal" at <= 1e-6)
CG_REL_GAP = 1e-8
#: a proven relative gap at or below this makes a design "optimal" (issue 10)
PROVEN_REL_GAP = 1e-6
_U = np.finfo(float).eps


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
    >>> from mechopt.solvers._rays import ldp_rays
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


# -- the bound -------------------------------------------------------------------------------


def dual_value(Jinv: np.ndarray, y: np.ndarray) -> float:
    """``2 tr(N^(1/2)) - 1·y`` for ``N = Jinv²`` (``Jinv`` symmetric; its |eigenvalues|)."""
    ev = np.linalg.eigvalsh((Jinv + Jinv.T) / 2)
    return float(2.0 * np.abs(ev).sum() - y.sum())


def pricing_matrix(Jinv: np.ndarray, U: np.ndarray) -> np.ndarray:
    """``H = U N U^T`` with ``N = Jinv²``: then ``c(v) = v^T H v / (p0·v)``."""
    H = U @ (Jinv @ Jinv) @ U.T
    return (H + H.T) / 2


def reduced_values(V: np.ndarray, H: np.ndarray, y: np.ndarray, p0: np.ndarray) -> np.ndarray:
    """``k (c(v) - y·v) / (1·v)`` for every column: positive means the ray prices in."""
    k = V.shape[0]
    HV = H @ V
    c = np.einsum("ir,ir->r", V, HV) / (p0 @ V)
    return k * (c - y @ V) / V.sum(axis=0)


def rounding_margin(scale: float, k: int) -> float:
    """A bound on the floating-point error of an evaluated ``c(v) - y·v``.

    ``scale`` bounds ``|v|^T |H| |v| / (p0·v) + |y|·v`` over the rays evaluated. Each
    term is a sum of at most ``k^2`` products, off by at most ``(k^2 + 8) u`` relative
    (Higham, *Accuracy and Stability of Numerical Algorithms*, eq. (3.5)); a factor 4
    covers the division, the matrix products' blocking and the final subtraction.
    """
    return 4.0 * (k * k + 8) * _U * scale


# -- pricing oracles -------------------------------------------------------------------------


class ExplicitPricer:
    """Pricing over a listed set of rays (the columns of ``V``): an exact scan."""

    exact_is_cheap = True

    def __init__(self, V: np.ndarray):
        V = np.asarray(V, dtype=float)
        self.V = V / V.max(axis=0, keepdims=True)
        self.k = V.shape[0]

    def initial(self, p0: np.ndarray, rng: np.random.Generator, size: int = 400) -> np.ndarray:
        """Column indices of a starting working set that holds a feasible, identifying design."""
        from ._backends import choose

        k, R = self.V.shape
        if R <= size:
            return np.arange(R)
        pick = set(rng.choice(R, size=size, replace=False).tolist())
        # a vertex of {V w = 1} (feasible) and, for each input, its most specific ray
        sol = choose().solve(np.zeros(R), A_eq=self.V, b_eq=np.ones(k), bounds=(0, None))
        if sol.status == "optimal" and sol.x is not None:
            pick |= set(np.flatnonzero(sol.x > 0).tolist())
        share = self.V / self.V.sum(axis=0, keepdims=True)
        pick |= set(np.argmax(share, axis=1).tolist())
        return np.array(sorted(pick))

    def columns(self, idx: np.ndarray) -> np.ndarray:
        return self.V[:, idx]

    def price(self, H, y, p0, *, have: set, limit: int):
        """``(best value, proven upper bound on delta, new column indices)``."""
        red = reduced_values(self.V, H, y, p0)
        scale = np.einsum("ir,ir->r", self.V, np.abs(H) @ self.V) / (p0 @ self.V) + np.abs(y) @ self.V
        margin = rounding_margin(float(scale.max()), self.k)
        best = float(red.max())
        order = np.argsort(-red)
        new = [int(j) for j in order[:limit + len(have)] if red[j] > 0 and j not in have][:limit]
        return best, max(best, 0.0) + margin, np.array(new, dtype=int)


class StaircasePricer:
    """Pricing over the LDP staircases ``1 + (e^ε - 1) 1_S``, ``S`` a non-empty proper subset.

    Columns are identified by their 0/1 indicator rows ``x`` (``v = 1 + c x``,
    ``c = e^ε - 1``). :meth:`heuristic` is a local search; :meth:`exact` proves the
    maximum (see the module docstring).
    """

    exact_is_cheap = False

    def __init__(self, k: int, epsilon: float):
        self.k = k
        self.c = math.expm1(epsilon)
        self.vmax = 1.0 + self.c

    def rays(self, X: np.ndarray) -> np.ndarray:
        return (1.0 + self.c * np.asarray(X, dtype=float)).T

    def initial(self, p0: np.ndarray, rng: np.random.Generator, size: int = 600) -> np.ndarray:
        """k-RR's columns (a feasible, identifying design) and random d-subsets near ``k/(e^ε+1)``."""
        k = self.k
        d = int(min(k - 1, max(1, round(k / (self.c + 2)))))
        rows = [np.eye(k)]
        for dd, n in ((d, size), (d - 1, size // 6), (d + 1, size // 6)):
            if 1 <= dd <= k - 1:
                X = np.zeros((n, k))
                for i in range(n):
                    X[i, rng.choice(k, dd, replace=False)] = 1.0
                rows.append(X)
        return np.unique(np.vstack(rows), axis=0)

    def values(self, X: np.ndarray, H, y, p0) -> np.ndarray:
        Vb = 1.0 + self.c * X
        return np.einsum("ni,ni->n", Vb @ H, Vb) / (Vb @ p0) - Vb @ y

    def heuristic(self, starts: np.ndarray, H, y, p0, *, max_iter: int = 200) -> tuple[np.ndarray, np.ndarray]:
        """Best-improvement ascent over flips and swaps; returns the local maxima and values."""
        starts = np.unique(np.asarray(starts, dtype=float), axis=0)
        batch = max(1, 4_000_000 // (self.k * self.k))  # the swap values are batch x k x k
        if len(starts) > batch:
            parts = [self.heuristic(starts[i:i + batch], H, y, p0, max_iter=max_iter)
                     for i in range(0, len(starts), batch)]
            Xo = np.vstack([p[0] for p in parts])
            vo = np.concatenate([p[1] for p in parts])
            Xo, first = np.unique(Xo, axis=0, return_index=True)
            return Xo, vo[first]
        k, c = self.k, self.c
        X = starts
        dH = np.diag(H)
        pair = dH[:, None] + dH[None, :] - 2 * H
        out_x, out_v = [], []
        for _ in range(max_iter):
            if not len(X):
                break
            Vb = 1.0 + c * X
            HV = Vb @ H
            q, t, lin = np.einsum("ni,ni->n", HV, Vb), Vb @ p0, Vb @ y
            cur = q / t - lin
            D = np.where(X > 0, -c, c)
            vf = (q[:, None] + 2 * D * HV + D * D * dH) / (t[:, None] + D * p0) - (lin[:, None] + D * y)
            m = X.sum(axis=1)
            vf[((m == 1)[:, None] & (X > 0)) | ((m == k - 1)[:, None] & (X == 0))] = -np.inf
            # swap: i leaves (x_i = 1), j enters (x_j = 0)
            qs = q[:, None, None] + 2 * c * (HV[:, None, :] - HV[:, :, None]) + c * c * pair[None]
            ts = t[:, None, None] + c * (p0[None, None, :] - p0[None, :, None])
            ls = lin[:, None, None] + c * (y[None, None, :] - y[None, :, None])
            vs = np.where((X[:, :, None] > 0) & (X[:, None, :] == 0), qs / ts - ls, -np.inf).reshape(len(X), -1)
            bf, bs = vf.argmax(axis=1), vs.argmax(axis=1)
            rows = np.arange(len(X))
            bfv, bsv = vf[rows, bf], vs[rows, bs]
            tol = 1e-12 * max(float(np.abs(cur).max()), 1.0)
            done = np.maximum(bfv, bsv) <= cur + tol
            out_x.append(X[done])
            out_v.append(cur[done])
            if done.all():
                break
            X2 = X[~done].copy()
            flip = (bfv >= bsv)[~done]
            r2 = np.arange(len(X2))
            fr, fc = r2[flip], bf[~done][flip]
            X2[fr, fc] = 1.0 - X2[fr, fc]
            i_out, j_in = np.divmod(bs[~done][~flip], k)
            X2[r2[~flip], i_out] = 0.0
            X2[r2[~flip], j_in] = 1.0
            X = np.unique(X2, axis=0)[:batch]
        Xo = np.vstack(out_x) if out_x else np.zeros((0, k))
        vo = np.concatenate(out_v) if out_v else np.zeros(0)
        if len(Xo):
            Xo, first = np.unique(Xo, axis=0, return_index=True)
            vo = vo[first]
        return Xo, vo

    def exact(self, H, y, p0, *, threshold: float, top: int = 200, block: int = 256,
              time_limit: float = math.inf) -> tuple[float, np.ndarray | None, list[tuple[float, np.ndarray]], dict]:
        """Max of ``c(v) - y·v`` over every staircase, by a two-level branch-and-bound.

        Returns ``(upper bound, argmax or None, [(value, x)] of up to ``top`` staircases
        above ``threshold``, stats)``. The upper bound is the exact maximum when the
        search finished (plus :func:`rounding_margin`); with a time limit, pairs left
        unexplored contribute their bound instead. Pairs whose bound is at most
        ``threshold`` are skipped, so the returned maximum is exact only when it exceeds
        ``threshold``; otherwise it is an upper bound ``<= threshold + margin``.
        """
        t0 = time.perf_counter()
        k, c = self.k, self.c
        if k > self.ENUMERATE_MAX_K:
            return self._bound_only(H, y, p0, threshold=threshold, t0=t0)
        k1 = (k + 1) // 2
        k2 = k - k1
        X1 = _bits(k1)
        X2 = _bits(k2)
        V1, V2 = 1.0 + c * X1, 1.0 + c * X2
        i1, i2 = slice(0, k1), slice(k1, k)
        H11, H12, H22 = H[i1, i1], H[i1, i2], H[i2, i2]
        a1 = np.einsum("ni,ni->n", V1 @ H11, V1)
        a2 = np.einsum("ni,ni->n", V2 @ H22, V2)
        l1, l2 = V1 @ y[i1], V2 @ y[i2]
        t1, t2 = V1 @ p0[i1], V2 @ p0[i2]
        R = 2.0 * (V1 @ H12)  # (2^k1, k2): cross term = R[row]·v2
        # exact per-row maximum of the cross term over second halves with b ones:
        # R·v2 = sum(R) + c * (sum of the b entries of R picked by x2) <= sum(R) + c * top_b(R)
        Rs = -np.sort(-R, axis=1)
        top_b = np.concatenate([np.zeros((len(R), 1)), np.cumsum(Rs, axis=1)], axis=1)  # (2^k1, k2+1)
        cross_max = R.sum(axis=1)[:, None] + c * top_b
        pop2 = X2.sum(axis=1).astype(int)
        # staircases: 1 <= v <= e^eps, so p0·v >= 1
        margin = rounding_margin(float(np.abs(H).sum()) * self.vmax**2 + float(np.abs(y).sum()) * self.vmax, k)
        best, arg = -math.inf, None
        cand: list[tuple[float, np.ndarray]] = []
        unexplored = -math.inf
        pairs = evaluated = 0
        for b in range(k2 + 1):
            cols = np.flatnonzero(pop2 == b)
            a2max, t2min, l2min = a2[cols].max(), t2[cols].min(), l2[cols].min()
            num = a1 + a2max + cross_max[:, b]
            ub = np.where(num >= 0, num / (t1 + t2min), num / (t1 + t2[cols].max())) - l1 - l2min
            rows = np.flatnonzero(ub > threshold)
            pairs += len(X1)
            if not len(rows):
                continue
            evaluated += len(rows) * len(cols)
            for st in range(0, len(rows), block):
                rr = rows[st:st + block]
                if time.perf_counter() - t0 > time_limit:
                    unexplored = max(unexplored, float(ub[rows[st:]].max()))
                    break
                C = (R[rr] @ V2[cols].T)
                C += a1[rr, None]
                C += a2[None, cols]
                C /= t1[rr, None] + t2[None, cols]
                C -= l1[rr, None]
                C -= l2[None, cols]
                # the constant columns (S empty or S everything) are not rays
                C[(pop2[cols][None, :] + X1[rr].sum(axis=1)[:, None] == 0)] = -np.inf
                C[(pop2[cols][None, :] + X1[rr].sum(axis=1)[:, None] == k)] = -np.inf
                j = int(np.argmax(C))
                v = float(C.flat[j])
                if v > best:
                    r, cc = divmod(j, C.shape[1])
                    best, arg = v, np.concatenate([X1[rr[r]], X2[cols[cc]]])
                if v > threshold:
                    ri, ci = np.nonzero(C > threshold)
                    vals = C[ri, ci]
                    if len(vals) > top:
                        o = np.argpartition(-vals, top)[:top]
                        ri, ci, vals = ri[o], ci[o], vals[o]
                    cand += [(float(val), np.concatenate([X1[rr[a]], X2[cols[bb]]]))
                             for a, bb, val in zip(ri, ci, vals)]
                    if len(cand) > 4 * top:
                        cand = sorted(cand, key=lambda z: -z[0])[:top]
        upper = max(best, threshold, unexplored) + margin
        stats = {"seconds": time.perf_counter() - t0, "leaves_total": 2**k - 2, "leaves_evaluated": evaluated,
                 "finished": unexplored == -math.inf}
        return upper, arg, sorted(cand, key=lambda z: -z[0])[:top], stats

    #: above this many inputs the second half is bounded, not enumerated (memory and time)
    ENUMERATE_MAX_K = 34

    def _bound_only(self, H, y, p0, *, threshold: float, t0: float, k1: int | None = None):
        """A proven upper bound without enumeration: every first half (``k1`` bits), the second bounded.

        Used beyond :attr:`ENUMERATE_MAX_K`: per first half and count ``b`` of ones in
        the second, the quadratic part of the second half is bounded by
        ``λ_max(H22)·||v2||^2``, the cross term exactly by its ``b`` largest entries, the
        denominator and the linear term by the ``b`` smallest entries. Valid, loose: the
        design then stays ``feasible`` with this gap.
        """
        k, c = self.k, self.c
        if k1 is None:
            k1 = min(16, max(1, math.floor(math.log2(max(2.0, 2e8 / (8 * k))))), k - 1)
        X1 = _bits(k1)
        V1 = 1.0 + c * X1
        i1, i2 = slice(0, k1), slice(k1, k)
        a1 = np.einsum("ni,ni->n", V1 @ H[i1, i1], V1)
        l1, t1 = V1 @ y[i1], V1 @ p0[i1]
        quad, t2, l2 = _second_half_bounds(H[i2, i2], y[i2], p0[i2], c, self.vmax)
        upper = -math.inf
        for st in range(0, len(X1), 4096):
            sl = slice(st, st + 4096)
            R = 2.0 * (V1[sl] @ H[i1, i2])
            top = np.concatenate([np.zeros((len(R), 1)), np.cumsum(-np.sort(-R, axis=1), axis=1)], axis=1)
            num = a1[sl, None] + quad[None, :] + R.sum(axis=1)[:, None] + c * top
            ub = num / (t1[sl, None] + t2[None, :]) - l1[sl, None] - l2[None, :]
            upper = max(upper, float(ub.max()))
        scale = float(np.abs(H).sum()) * self.vmax**2 + float(np.abs(y).sum()) * self.vmax
        stats = {"seconds": time.perf_counter() - t0, "leaves_total": 2**k - 2, "leaves_evaluated": 0,
                 "finished": False, "bound_only": True}
        return max(upper, threshold) + rounding_margin(scale, k), None, [], stats


def _second_half_bounds(H22, y2, p2, c, vmax):
    """Per ``b`` (ones in the second half): bounds on ``v2^T H22 v2`` (above), ``p·v2`` and ``y·v2`` (below)."""
    k2 = len(y2)
    b = np.arange(k2 + 1)
    lam = max(float(np.linalg.eigvalsh(H22)[-1]), 0.0) if k2 else 0.0
    quad = lam * ((k2 - b) + vmax * vmax * b)  # ||v2||^2 = (k2 - b) + vmax^2 b; H22 is PSD
    t2 = p2.sum() + c * np.concatenate([[0.0], np.cumsum(np.sort(p2))])
    l2 = y2.sum() + c * np.concatenate([[0.0], np.cumsum(np.sort(y2))])
    return quad, t2, l2


def _bits(n: int) -> np.ndarray:
    codes = np.arange(2**n)
    return ((codes[:, None] >> np.arange(n)[None, :]) & 1).astype(float)


# -- the column generation loop ------------------------------------------------------------------


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
                             progress: Callable | None = None) -> CGDesign:
    """Minimise the estimation risk over all rays the pricer knows (see the module docstring).

    Stops when the proven relative gap is at most ``rel_gap`` or at ``time_limit``
    (then with the best proven bound so far). The working set is capped at
    ``max_columns`` (the weighted columns are always kept).

    Examples
    --------
    >>> res = column_generation_design(StaircasePricer(5, 1.0), np.full(5, 0.2))
    >>> res.status, round(res.value, 6)     # 5-RR: (k-1)(k+e-1)^2 / (k (e-1)^2) = 12.229751
    ('optimal', 12.229751)
    >>> bool(res.lower <= res.value <= res.lower * (1 + 1e-8))
    True
    """
    t0 = time.perf_counter()
    p0 = np.asarray(p0, dtype=float)
    k = len(p0)
    U = tangent_basis(k)
    rng = np.random.default_rng(seed)
    explicit = isinstance(pricer, ExplicitPricer)
    if explicit:
        idx = pricer.initial(p0, rng)
        cols = pricer.columns(idx)
        keys = idx
    else:
        X = pricer.initial(p0, rng)
        cols = pricer.rays(X)
    w = None
    lower = -math.inf
    best = None  # (value, V, w)
    stats: dict = {"rounds": 0, "exact_pricing": 0, "exact_seconds": 0.0, "master_seconds": 0.0}
    message = ""
    while True:
        stats["rounds"] += 1
        t = time.perf_counter()
        try:
            m = restricted_design(cols, p0, w0=w, U=U)
        except (np.linalg.LinAlgError, ValueError) as err:
            return CGDesign("error", None, None, None, lower, f"restricted design failed: {err}", stats)
        stats["master_seconds"] += time.perf_counter() - t
        w = m.w
        if best is None or m.value < best[0]:
            best = (m.value, cols.copy(), w.copy())
        H = pricing_matrix(m.Jinv, U)
        D0 = dual_value(m.Jinv, m.y)
        elapsed = time.perf_counter() - t0
        out_of_time = elapsed > time_limit
        supp = w > 1e-9 * w.max()
        if explicit:
            have = set(keys.tolist())
            top, delta, new_idx = pricer.price(H, m.y, p0, have=have, limit=add_per_round)
            stats["exact_pricing"] += 1
            lower = max(lower, D0 - delta)
            new_cols = pricer.columns(new_idx) if len(new_idx) else None
        else:
            red = pricer.values(X, H, m.y, p0)
            starts = np.vstack([X[supp | (red > -1e-3 * m.value)], (rng.random((100, k)) < 0.27).astype(float)])
            starts = starts[(starts.sum(axis=1) > 0) & (starts.sum(axis=1) < k)]
            hx, hv = pricer.heuristic(starts, H, m.y, p0)
            known = {row.tobytes() for row in X}
            order = np.argsort(-hv)
            thr = 0.1 * rel_gap * m.value
            fresh = [hx[i] for i in order if hv[i] > thr and hx[i].tobytes() not in known][:add_per_round]
            # the heuristic's best value is no bound, but when it says the gap is already below
            # half the target, the exact pricing is worth its cost (it proves or refutes that)
            close = len(hv) and (m.value - D0 + max(float(hv.max()), 0.0)) <= 0.5 * rel_gap * m.value
            if not fresh or close or out_of_time:
                te = time.perf_counter()
                ub, arg, cand, est = pricer.exact(H, m.y, p0, threshold=thr, top=add_per_round,
                                                  time_limit=max(5.0, time_limit - elapsed))
                stats["exact_pricing"] += 1
                stats["exact_seconds"] += time.perf_counter() - te
                stats["exact_last"] = est
                lower = max(lower, D0 - max(ub, 0.0))
                fresh = [x for _, x in cand if x.tobytes() not in known]
            new_cols = np.array(fresh) if fresh else None
        gap = (best[0] - lower) / best[0] if math.isfinite(lower) else math.inf
        if progress is not None:
            progress(stats["rounds"], best[0], lower, int(supp.sum()))
        if gap <= rel_gap or new_cols is None or out_of_time:
            if out_of_time and gap > rel_gap:
                message = f"time limit ({time_limit:.0f} s) reached with a proven relative gap of {gap:.3g}"
            elif gap > rel_gap:
                message = f"no ray prices in, but the pricing bound leaves a proven relative gap of {gap:.3g}"
            break
        # prune: keep the weighted columns and those closest to pricing in
        n_new = len(new_cols) if explicit else len(new_cols)
        if cols.shape[1] + n_new > max_columns:
            score = np.where(supp, np.inf, reduced_values(cols, H, m.y, p0))
            keep = np.sort(np.argsort(-score)[:max(max_columns - n_new, int(supp.sum()))])
            cols, w = cols[:, keep], w[keep]
            if explicit:
                keys = keys[keep]
            else:
                X = X[keep]
        if explicit:
            keys = np.concatenate([keys, new_idx])
            cols = np.hstack([cols, new_cols])
        else:
            X = np.vstack([X, new_cols])
            cols = np.hstack([cols, pricer.rays(new_cols)])
        w = np.concatenate([w, np.full(n_new, 1e-3 * float(w.max()))])
    value, V, wv = best
    gap = (value - lower) / value if math.isfinite(lower) else math.inf
    status = "optimal" if gap <= PROVEN_REL_GAP else "feasible"
    stats.update({"seconds": time.perf_counter() - t0, "working_set": int(V.shape[1]), "proven_rel_gap": gap})
    return CGDesign(status, V, wv, value, lower, message, stats)
