"""Design pricing over a LIP slice ``{P·v = 1, e^-ε <= v <= e^ε}`` (:mod:`._colgen`), never listed.

The ε-LIP cone for the prior ``P`` (Jiang, Sarwate and Wright, *Local information
privacy*, Def. 1: ``e^-ε <= q(y|x) / q(y) <= e^ε`` with ``q(y) = P·q(·|y)``) is
``{v >= 0 : e^-ε P·v <= v <= e^ε P·v}``; sliced by ``P·v = 1`` it is the box
``[lo, hi] = [e^-ε, e^ε]`` cut by one hyperplane, whose vertices have every coordinate at
a bound but one (``k·2^(k-1)`` candidates: never listed).

**The reduced value.** With the master's pricing matrix ``H ⪰ 0`` and multipliers ``y``,
column generation needs ``delta = max_v (c(v) - y·v) / (P·v)`` over the cone,
``c(v) = v^T H v / (p0·v)`` (:mod:`._colgen`, weak duality normalised by ``P``: every
feasible design has ``sum_r w_r P·v_r = P·1 = 1``). When the objective's ``p0`` is the LIP
prior ``P`` (the case priced here), on the slice this is the convex quadratic
``q(v) = v^T H v - y·v``, maximised over a polytope: a convex maximisation, whose
maximum is at a vertex.

* :meth:`LipDesignPricer.heuristic` — successive linearisation: from a vertex, the
  gradient ``2 H v - y`` is maximised over the slice (a continuous knapsack,
  :func:`mechopt.solvers.free._pricing_lip._knapsack_lip`); by convexity the value never
  decreases, and a fixed point is a vertex where no linear move improves. The best of
  these are then *polished* (:func:`polish`): a best-improvement search over exchanges —
  one raised input lowered and one lowered input raised, the fractional coordinate taking
  up the mass — and over moving the fractional role to another input. The knapsack's
  vertices leave their fractional input wherever the cut falls, which costs every input
  variance (the bound of :mod:`._lip_variance` is reached only by inputs at their
  bounds); exchanges find vertices of the same subset mass with the cut near a bound. At
  k = 100 the design's risk after 150 s went from 91.8 to 90.97 (docs/design.md).
* :meth:`LipDesignPricer.exact` — a proven upper bound by spatial branch and bound: a
  node is the slice cut to a box ``lo_x <= v_x <= hi_x``, split in two at a point of one
  coordinate's interval. With ``F`` the coordinates of non-zero width and a diagonal
  ``D ⪰ H_FF`` (Jacobi-scaled: ``D = s diag(H_FF)``, ``s = λ_max`` of the scaled
  matrix), ``q(v) <= Q(v) = q(v) + sum_F D_x (v_x - lo_x)(hi_x - v_x)`` on the node (the
  added terms are ``>= 0`` in the box), and ``Q`` is concave in ``v_F`` — the αBB
  over-estimator of Androulakis, Maranas and Floudas
  (*αBB: a global optimization method for general constrained nonconvex problems*,
  J. Global Optim. 7, 1995, §2) with the diagonal shift. Any point ``v̂`` of the node
  then certifies ``max Q <= Q(v̂) + max_node ∇Q(v̂)·(v - v̂)`` (``Q`` lies below its
  tangent plane; the maximum of a linear function over the node is a continuous
  knapsack), so the bound holds however roughly ``v̂`` maximises ``Q`` (projected
  gradient ascent). Every vertex visited is scored with ``q`` itself; a node is pruned
  when its bound is at most the best vertex found (or the caller's threshold) plus a
  tolerance, and otherwise split on the coordinate with the largest slack
  ``D_x (v̂_x - lo_x)(hi_x - v̂_x)`` (at ``v̂_x``, or mid-interval near an end). The
  returned bound is the largest bound among the pruned and open nodes: proven, also for
  a search stopped by its time limit. The slack shrinks with the square of the widths,
  so the search converges; how fast depends on ``k`` and on ``H`` (small ``k``: a
  fraction of a second; the bound at ``k`` = 100 stays loose — docs/design.md).
"""

from __future__ import annotations

import heapq
import math
import time

import numpy as np

from ..free._pricing_lip import _knapsack_lip
from ._dual import rounding_margin

_U = np.finfo(float).eps


class LipDesignPricer:
    """Pricing of the estimation design over the ε-LIP cone of the prior ``P`` (module docstring).

    Columns are identified by the vertices themselves (rows ``X``, each with ``P·x = 1``).

    Examples
    --------
    >>> P = np.array([0.5, 0.3, 0.2])
    >>> pr = LipDesignPricer(P, 1.0)
    >>> X = pr.initial(P, np.random.default_rng(0))
    >>> bool(np.allclose(X @ P, 1.0)), bool(np.all(X >= np.exp(-1) - 1e-12))
    (True, True)
    """

    def __init__(self, P: np.ndarray, epsilon: float):
        self.P = np.asarray(P, dtype=float)
        self.k = len(self.P)
        self.lo, self.hi = math.exp(-epsilon), math.exp(epsilon)
        self._lo = np.full(self.k, self.lo)
        self._hi = np.full(self.k, self.hi)

    def rays(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(X, dtype=float).T.copy()

    def vertex(self, a: np.ndarray) -> np.ndarray:
        """The vertex of the slice maximising ``a·v`` (a continuous knapsack)."""
        v, _ = _knapsack_lip(np.asarray(a, dtype=float), self.P, self._lo, self._hi)
        return v

    def initial(self, p0: np.ndarray, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """The constant column (a feasible design) and the vertices of random directions."""
        k = self.k
        size = 600 if size is None else size
        rows = [np.ones(k)]
        # each input raised alone and lowered alone: the design identifies every input
        for x, a in enumerate(self._directions(rng, k)):
            e = np.zeros(k)
            e[x] = 1e3 * float(np.abs(a).max())
            rows += [self.vertex(a + e), self.vertex(a - e)]
        rows += list(self.random_starts(rng, max(0, size - 2 * k)))
        return np.unique(np.array(rows), axis=0)

    def values(self, X: np.ndarray, H, y, p0) -> np.ndarray:
        """``c(v) - y·v`` of every row (``c(v) = v^T H v / (p0·v)``)."""
        X = np.asarray(X, dtype=float)
        return np.einsum("ni,ni->n", X @ H, X) / (X @ p0) - X @ y

    def heuristic(self, starts: np.ndarray, H, y, p0, *, max_iter: int = 50,
                  polished: int = 600) -> tuple[np.ndarray, np.ndarray]:
        """Successive linearisation from each start (points of the slice), then :func:`polish` of the
        ``polished`` best; the vertices (both the linearisation's and the polished ones) and values."""
        out = {}
        for v in np.asarray(starts, dtype=float):
            if abs(float(self.P @ v) - 1.0) > 1e-9:
                continue
            key = None
            for _ in range(max_iter):
                g = 2.0 * (H @ v) / float(p0 @ v) - y
                w = self.vertex(g)
                if w is None:
                    break
                nk = w.tobytes()
                if nk == key:
                    break
                key, v = nk, w
            if key is not None:
                out[key] = v
        if not out:
            return np.zeros((0, self.k)), np.zeros(0)
        Xo = np.array(list(out.values()))
        if polished:
            vals = self.values(Xo, H, y, p0)
            for i in np.argsort(-vals)[:polished]:
                w = polish(Xo[i], H, y, self.P, self.lo, self.hi)
                out[w.tobytes()] = w
            Xo = np.array(list(out.values()))
        return Xo, self.values(Xo, H, y, p0)

    def _directions(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Random directions ``P * z``: their knapsack raises the inputs in a uniformly random order."""
        return self.P[None, :] * rng.normal(size=(n, self.k))

    def random_starts(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` vertices raising a uniformly random prefix of the inputs (each about as often)."""
        return np.array([self.vertex(a) for a in self._directions(rng, n)]).reshape(n, self.k)

    def exact(self, H, y, p0, *, threshold: float, top: int = 200, time_limit: float = math.inf,
              max_nodes: int | None = None, tol: float | None = None, shor: bool = True) -> tuple[float, np.ndarray | None, list[tuple[float, np.ndarray]], dict]:
        """A proven upper bound on ``max q(v)`` over the slice, by branch and bound (module docstring).

        Returns ``(upper bound, best vertex or None, [(value, vertex)] of up to ``top``
        vertices above ``threshold``, stats)``. Nodes whose bound is at most
        ``max(threshold, best found)`` (plus ``tol``) are pruned, so the bound is the
        maximum itself (within ``tol``) only when that exceeds ``threshold``. A search
        stopped by ``time_limit`` or ``max_nodes`` returns the smaller of its open bound
        and :func:`shor_bound` (``shor=False``: its open bound; the semidefinite program
        takes ~30 s at k = 100).
        """
        t0 = time.perf_counter()
        P, k, lo, hi = self.P, self.k, self.lo, self.hi
        if not np.allclose(p0, P, rtol=0, atol=1e-15):
            raise ValueError("LIP design pricing needs the objective's p0 to be the LIP prior")
        H = (H + H.T) / 2
        scale = float(np.abs(H).sum()) * hi * hi + float(np.abs(y).sum()) * hi
        # q uses p0·v = P·v = 1; a p0 within 1e-15 of P moves p0·v by at most eta, and
        # c(v) = v^T H v / (p0·v) by at most 2 eta |v^T H v| relative (eta <= 1e-13)
        eta = float(np.abs(np.asarray(p0, dtype=float) - P).sum()) * hi
        margin = rounding_margin(scale, k) + 2.0 * eta / (1.0 - eta) * float(np.abs(H).sum()) * hi * hi
        # a spatial search closes a node only within a tolerance (the bound stays proven:
        # the returned maximum is at most ``tol`` above the best vertex)
        tol = 1e-9 * scale / max(hi * hi, 1.0) if tol is None else tol
        cand: dict[bytes, tuple[float, np.ndarray]] = {}
        best = [-math.inf, None]

        def score(v):
            val = float(v @ H @ v - y @ v)
            if val > best[0]:
                best[0], best[1] = val, v
            if val > threshold:
                cand.setdefault(v.tobytes(), (val, v))
            return val

        heap: list = []
        counter = 0
        nodes = 0
        open_max = -math.inf

        def push(lo_v, hi_v, start):
            nonlocal counter, open_max
            res = _node_bound(H, y, P, lo_v, hi_v, start, score)
            if res is None:
                return
            ub, x, vh = res
            ub += margin
            if ub <= max(threshold, best[0]) + tol or x < 0:
                open_max = max(open_max, ub)
                return
            counter += 1
            heapq.heappush(heap, (-ub, counter, lo_v, hi_v, x, vh))

        push(np.full(k, lo), np.full(k, hi), None)
        finished = True
        while heap:
            item = heapq.heappop(heap)
            ub = -item[0]
            if ub <= max(threshold, best[0]) + tol:
                open_max = max(open_max, ub)
                continue
            if time.perf_counter() - t0 > time_limit or (max_nodes is not None and nodes >= max_nodes):
                heapq.heappush(heap, item)
                finished = False
                break
            nodes += 1
            _, _, lo_v, hi_v, x, vh = item
            # split the interval of x at the relaxation's point (or the middle, near an end)
            a, b = lo_v[x], hi_v[x]
            cut = vh[x] if a + 0.1 * (b - a) <= vh[x] <= b - 0.1 * (b - a) else (a + b) / 2
            h1, l2 = hi_v.copy(), lo_v.copy()
            h1[x] = cut
            l2[x] = cut
            push(lo_v, h1, vh)
            push(l2, hi_v, vh)
        if heap:
            open_max = max(open_max, max(-h[0] for h in heap))
        upper = max(open_max, best[0] + margin, threshold + margin)
        if not finished and k > 2 and shor:
            # a stopped search: Shor's relaxation may bound the maximum better (both are proven)
            shor, _ = shor_bound(H, y, P, lo, hi)
            upper = min(upper, max(shor, best[0] + margin, threshold + margin))
        top_c = sorted(cand.values(), key=lambda z: -z[0])[:top]
        stats = {"seconds": time.perf_counter() - t0, "nodes": nodes, "finished": finished,
                 "open": len(heap)}
        return upper, best[1], top_c, stats


def polish(v: np.ndarray, H: np.ndarray, y: np.ndarray, P: np.ndarray, lo: float, hi: float, *,
           max_steps: int = 60) -> np.ndarray:
    """A best-improvement local search for ``max q(v) = v^T H v - y·v`` from the slice vertex ``v``.

    Moves (each keeps ``P·v = 1``): exchange a raised input ``x`` (at ``hi``) and a lowered
    one ``z`` (at ``lo``), the fractional input ``j`` absorbing ``(hi - lo)(P_x - P_z)``;
    move one input to its other bound, ``j`` absorbing; or put ``j`` at a bound and let
    another input absorb its mass. With the last two, every vertex differing from ``v`` in
    two coordinates is a candidate. Every candidate's change
    of ``q`` is evaluated exactly from ``2 H v - y`` and three entries of ``H`` (all
    exchanges at once, O(k^2)); the best improving move is taken until none improves or
    after ``max_steps``. Returns a vertex of the slice whose ``q`` is at least the start's
    (up to rounding); a start that is not a vertex with one fractional input is returned
    unchanged.

    Examples
    --------
    >>> P = np.array([0.4, 0.3, 0.2, 0.1])
    >>> lo, hi = np.exp(-1.0), np.exp(1.0)
    >>> v = np.array([lo, lo, hi, lo]); v[3] = (1 - P[:3] @ v[:3]) / P[3]   # input 3 fractional
    >>> H = np.diag([0.0, 1.0, 0.0, 0.0])            # q rewards raising input 1
    >>> w = polish(v, H, np.zeros(4), P, lo, hi)
    >>> bool(abs(P @ w - 1) < 1e-12), round(float(v @ H @ v), 4), round(float(w @ H @ w), 4)
    (True, 0.1353, 6.1254)
    >>> bool(np.isclose(w[1], (1 - 0.7 * lo) / 0.3))    # v_1 at its largest on the slice
    True
    """
    v = np.asarray(v, dtype=float).copy()
    k, a = len(v), hi - lo
    Hd = np.diag(H)
    eps = 1e-12 * max(hi, 1.0)
    for _ in range(max_steps):
        frac = np.flatnonzero((v > lo + eps) & (v < hi - eps))
        if len(frac) != 1:
            break
        j = int(frac[0])
        g = 2.0 * (H @ v) - y
        up = np.flatnonzero(v >= hi - eps)
        dn = np.flatnonzero(v <= lo + eps)
        best, move = 1e-12 * (abs(float(v @ H @ v)) + abs(float(y @ v)) + 1.0), None
        if len(up) and len(dn):
            X, Z = up[:, None], dn[None, :]
            t = a * (P[X] - P[Z]) / P[j]  # the change of v_j
            dq = (a * (g[Z] - g[X]) + t * g[j] + a * a * (Hd[X] + Hd[Z] - 2.0 * H[X, Z])
                  + t * t * H[j, j] + 2.0 * a * t * (H[j, Z] - H[j, X]))
            dq = np.where((v[j] + t >= lo) & (v[j] + t <= hi), dq, -np.inf)
            i = np.unravel_index(int(np.argmax(dq)), dq.shape)
            if dq[i] > best:
                best, move = float(dq[i]), (int(up[i[0]]), lo, int(dn[i[1]]), hi)
        others = np.delete(np.arange(k), j)
        # one input to its other bound, v_j absorbing the mass
        dz = np.where(v[others] >= hi - eps, -a, a)
        t = -dz * P[others] / P[j]
        dq = dz * g[others] + t * g[j] + dz * dz * Hd[others] + t * t * H[j, j] + 2.0 * dz * t * H[j, others]
        dq = np.where((v[j] + t >= lo) & (v[j] + t <= hi), dq, -np.inf)
        i = int(np.argmax(dq))
        if dq[i] > best:
            z = int(others[i])
            best, move = float(dq[i]), (z, lo if dz[i] < 0 else hi, j, None)
        for b in (lo, hi):
            s = P[j] * (v[j] - b) / P[others]  # the change of v_z when v_j goes to b
            dj = b - v[j]
            dq = dj * g[j] + s * g[others] + dj * dj * H[j, j] + s * s * Hd[others] + 2.0 * dj * s * H[j, others]
            dq = np.where((v[others] + s >= lo) & (v[others] + s <= hi), dq, -np.inf)
            i = int(np.argmax(dq))
            if dq[i] > best:
                best, move = float(dq[i]), (j, b, int(others[i]), None)
        if move is None:
            break
        x, bx, z, bz = move  # x goes to bx; z to bz, or (bz None) z takes up the mass
        v[x] = bx
        if bz is not None:
            v[z] = bz
        else:
            v[z] = 0.5 * (lo + hi)  # recomputed below
        # the input left between the bounds takes exactly the mass the others leave
        frac = np.flatnonzero((v > lo + eps) & (v < hi - eps))
        r = int(frac[0]) if len(frac) == 1 else (j if bz is not None else z)
        vr = (1.0 - (P @ v - P[r] * v[r])) / P[r]
        v[r] = min(max(vr, lo), hi)
    return v


def _node_bound(H, y, P, lo_v, hi_v, start, score, iters: int = 200):
    """``(upper bound on q over the node, coordinate to split or -1, the relaxation's point)``.

    The node is ``{P·v = 1, lo_v <= v <= hi_v}``; None if it is empty.
    """
    k = len(P)
    if float(P @ lo_v) > 1.0 + 1e-15 or float(P @ hi_v) < 1.0 - 1e-15:
        return None
    width = hi_v - lo_v
    F = np.flatnonzero(width > 1e-12 * hi_v)
    if len(F) <= 1:
        v, _ = _knapsack_lip(np.zeros(k), P, lo_v, hi_v)
        if v is None:
            return None
        # the node is (almost) a point: the equation pins a lone wide coordinate to within
        # the others' widths, and every point of the node is within those widths of v
        if len(F) == 1:
            x = int(F[0])
            width = width.copy()
            width[x] = min(width[x], float(np.delete(P * width, x).sum()) / P[x])
        return score(v) + _box_excess(H, y, v, width), -1, v
    lF, hF = lo_v[F], hi_v[F]
    HF = H[np.ix_(F, F)]
    dh = np.maximum(np.diag(HF), 1e-300 + 1e-12 * float(np.abs(np.diag(HF)).max()))
    sq = 1.0 / np.sqrt(dh)
    s = max(float(np.linalg.eigvalsh(HF * sq[:, None] * sq[None, :])[-1]), 0.0)
    D = s * dh
    # D ⪰ H_FF up to the eigensolver's rounding: what is left over is bounded by theta and
    # charged at the largest ||v_F - v̂_F||^2 in the box
    theta = float(np.linalg.eigvalsh(HF - np.diag(D))[-1])
    theta = max(theta, 0.0) + 8 * len(F) * _U * (float(np.abs(HF).sum()) + float(D.sum()))
    box_sq = float(((hF - lF) ** 2).sum())
    # the coordinates outside F (widths <= 1e-12 hi) move Q by at most this beyond the plane
    wN = float(np.sqrt(np.sum(np.delete(width, F) ** 2)))
    h2 = float(np.linalg.norm(H))
    theta_n = 2.0 * math.sqrt(box_sq) * h2 * wN + h2 * wN * wN
    def Qgrad(v):
        g = 2.0 * (H @ v) - y
        g[F] += D * ((lF + hF) - 2.0 * v[F])
        return g

    def Qval(v):
        return float(v @ H @ v - y @ v + D @ ((v[F] - lF) * (hF - v[F])))

    bF = 1.0 - float(P @ np.where(np.isin(np.arange(k), F), 0.0, lo_v))
    v = lo_v.copy()
    v[F] = _project((lF + hF) / 2 if start is None else start[F], P[F], bF, lF, hF)
    L = 4.0 * float(D.max()) + 1e-300  # >= 2 λ_max(D - H_FF) (H_FF ⪰ 0): a safe step
    for _ in range(iters):
        v[F] = _project(v[F] + Qgrad(v)[F] / L, P[F], bF, lF, hF)
    g = Qgrad(v)
    w, _ = _knapsack_lip(g, P, lo_v, hi_v)
    if w is None:
        return None
    score(w)
    ub = Qval(v) + float(g @ (w - v)) + theta * box_sq + theta_n
    slack = D * (v[F] - lF) * (hF - v[F])
    return ub, int(F[int(np.argmax(slack))]), v


def _box_excess(H, y, v, width):
    """A bound on ``q(u) - q(v)`` for ``|u - v| <= width`` (entrywise)."""
    g = np.abs(2.0 * (H @ v) - y)
    return float(g @ width + width @ np.abs(H) @ width)


def _project(z, p, b, lo, hi):
    """Euclidean projection of ``z`` onto ``{p·v = b, lo <= v <= hi}`` (``p > 0``; a non-empty set).

    ``v(mu) = clip(z - mu p, lo, hi)`` and ``p·v(mu)`` is piecewise linear and
    non-increasing in ``mu``, with breakpoints where a coordinate meets a bound: the
    multiplier is interpolated between the two breakpoints that bracket ``b``.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.unique(np.concatenate([(z - lo) / p, (z - hi) / p]))
    bp = bp[np.isfinite(bp)]
    mass = np.clip(z[None, :] - bp[:, None] * p[None, :], lo, hi) @ p  # non-increasing
    i = int(np.searchsorted(-mass, -b, side="left"))  # first breakpoint with mass <= b
    if i == 0:
        mu = float(bp[0])
    elif i >= len(bp):
        mu = float(bp[-1])
    else:
        m0, m1 = mass[i - 1], mass[i]
        mu = float(bp[i - 1] + (bp[i] - bp[i - 1]) * ((m0 - b) / (m0 - m1) if m0 > m1 else 0.0))
    return np.clip(z - mu * p, lo, hi)


def shor_bound(H, y, P, lo: float, hi: float) -> tuple[float, dict]:
    """A proven upper bound on ``max q(v) = v^T H v - y·v`` over ``{P·v = 1, lo <= v <= hi}``.

    Shor's semidefinite relaxation in its dual form: for ``D >= 0``, ``gamma`` and ``mu``,
    ``q(v) + sum_x D_x (v_x - lo)(hi - v_x) + (P·v - 1)(gamma·v + mu)`` is at least
    ``q(v)`` on the slice, and it is at most ``tau`` everywhere when the matrix
    ``M = [[tau - c0, -b^T/2], [-b/2, -A]]`` is positive semidefinite (``A``, ``b``,
    ``c0`` its quadratic, linear and constant parts). cvxpy (Clarabel) chooses the
    multipliers; the bound is then re-proven here: with ``λ`` the smallest eigenvalue of
    ``M`` (less a rounding margin), ``q(v) <= tau - min(λ, 0) (1 + ||v||^2)`` and
    ``||v||^2 <= k hi^2`` on the box.
    Returns ``(bound, stats)``; ``inf`` when the solver fails.
    """
    import cvxpy as cp

    t0 = time.perf_counter()
    k = len(P)
    H = (H + H.T) / 2

    def parts(D, gam, mu):
        A = H - np.diag(D) + (np.outer(P, gam) + np.outer(gam, P)) / 2
        b = -y + (lo + hi) * D + mu * P - gam
        c0 = -lo * hi * float(np.sum(D)) - mu
        return A, b, c0

    D, gam, mu, tau = cp.Variable(k, nonneg=True), cp.Variable(k), cp.Variable(), cp.Variable()
    A = H - cp.diag(D) + (cp.reshape(P, (k, 1), order="C") @ cp.reshape(gam, (1, k), order="C")
                          + cp.reshape(gam, (k, 1), order="C") @ cp.reshape(P, (1, k), order="C")) / 2
    b = -y + (lo + hi) * D + mu * P - gam
    c0 = -lo * hi * cp.sum(D) - mu
    M = cp.bmat([[cp.reshape(tau - c0, (1, 1), order="C"), -cp.reshape(b, (1, k), order="C") / 2],
                 [-cp.reshape(b, (k, 1), order="C") / 2, -A]])
    prob = cp.Problem(cp.Minimize(tau), [(M + M.T) / 2 >> 0])
    try:
        prob.solve(solver="CLARABEL")
    except Exception as err:  # noqa: BLE001 - no bound from this relaxation
        return math.inf, {"error": str(err)}
    if D.value is None:
        return math.inf, {"error": prob.status}
    Dv, gv, mv, tv = np.maximum(np.asarray(D.value), 0.0), np.asarray(gam.value), float(mu.value), float(tau.value)
    An, bn, cn = parts(Dv, gv, mv)
    Mn = np.block([[np.array([[tv - cn]]), -bn[None, :] / 2], [-bn[:, None] / 2, -An]])
    lam = float(np.linalg.eigvalsh(Mn)[0]) - 8 * (k + 1) * _U * float(np.abs(Mn).sum())
    bound = tv - min(lam, 0.0) * (1.0 + k * hi * hi)
    return bound, {"seconds": time.perf_counter() - t0, "status": prob.status, "lambda_min": lam}
