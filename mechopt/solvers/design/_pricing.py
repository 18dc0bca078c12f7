"""Pricing oracles of the estimation design's column generation (docs/design.md).

A pricer returns the rays of largest reduced value ``v' H v / (p0 . v)`` for the
master's ``H`` (:func:`._dual.pricing_matrix`) and a proven upper bound on it:
:class:`ExplicitPricer` over listed rays, :class:`StaircasePricer` over the
``2^k - 2`` LDP staircases without listing them (exact, branch and bound on the subset).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ._dual import reduced_values, rounding_margin


class ExplicitPricer:
    """Pricing over a listed set of rays (the columns of ``V``): an exact scan."""

    exact_is_cheap = True

    def __init__(self, V: np.ndarray):
        V = np.asarray(V, dtype=float)
        self.V = V / V.max(axis=0, keepdims=True)
        self.k = V.shape[0]

    def initial(self, p0: np.ndarray, rng: np.random.Generator, size: int = 400) -> np.ndarray:
        """Column indices of a starting working set that holds a feasible, identifying design."""
        from ..backends._adapters import choose

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

    def random_starts(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` random indicator rows (about a quarter of the inputs raised), constants dropped."""
        X = (rng.random((n, self.k)) < 0.27).astype(float)
        return X[(X.sum(axis=1) > 0) & (X.sum(axis=1) < self.k)]

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
