"""Estimation-optimal design over extreme rays (SPEC §3, "Estimation-optimal").

Minimise the efficient estimator's risk ``tr(B J(w)^-1 B^T)`` with
``J(w) = sum_r w_r g_r g_r^T / (p0·v_r)``, ``g_r = B^T v_r``, over ray weights
``w >= 0`` with ``sum_r w_r v_r = 1``. Each term of ``J`` is matrix-sublinear in the
column, so extreme rays suffice, and the program is convex in ``w``.

Two independent methods:

* :func:`design_cvxpy` — the convex program ``matrix_frac(B^T, J(w))`` through cvxpy
  (an SDP; Clarabel or SCS).
* :func:`design_frank_wolfe` — fully corrective Frank–Wolfe over the polytope
  ``{w >= 0, V w = 1}``: an LP oracle (HiGHS) adds a vertex, and multiplicative
  weights (exponentiated gradient) re-balance the vertices found so far. Every iterate is a feasible
  design, and the Frank–Wolfe gap ``grad·(w - s)`` is a proven bound
  ``f(w) - f* <= gap``. It needs only an LP with R columns per step, so it scales to
  ray sets a generic SDP solver cannot hold.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from .._objectives import estimation_risk
from ._backends import get_backend


@dataclass
class DesignSolution:
    status: str
    weights: np.ndarray | None
    value: float | None
    bound: float | None  # proven lower bound on the optimum (inf/None if unknown)
    message: str = ""
    stats: dict = field(default_factory=dict)


def _grams(V: np.ndarray, p0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    G = V[:-1, :] - V[-1:, :]  # (k-1, R)
    den = p0 @ V
    return G, den


def _risk(w: np.ndarray, G: np.ndarray, den: np.ndarray, M: np.ndarray) -> tuple[float, np.ndarray | None]:
    J = (G * (w / den)) @ G.T
    try:
        Jinv = np.linalg.inv(J)
    except np.linalg.LinAlgError:
        return math.inf, None
    val = float(np.trace(M @ Jinv))
    return (val if val > 0 and np.isfinite(val) else math.inf), Jinv


def design_cvxpy(V: np.ndarray, p0: np.ndarray, *, solver: str | None = None) -> DesignSolution:
    """Solve the design as a convex program in cvxpy (``matrix_frac``)."""
    import cvxpy as cp

    t0 = time.perf_counter()
    k, R = V.shape
    G, den = _grams(V, p0)
    B = np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])
    # J(w) = sum_r w_r G_r G_r^T / den_r, as an affine expression
    outer = np.einsum("ir,jr->ijr", G, G) / den[None, None, :]
    w = cp.Variable(R, nonneg=True)
    J = cp.reshape(outer.reshape(-1, R) @ w, (k - 1, k - 1), order="C")
    J = (J + J.T) / 2
    obj = cp.matrix_frac(B.T, J)
    prob = cp.Problem(cp.Minimize(obj), [V @ w == 1])
    solvers = [solver] if solver else ["CLARABEL", "SCS"]
    last = ""
    for s in solvers:
        try:
            with warnings.catch_warnings():
                # "solution may be inaccurate": the status says so and is handled below
                warnings.simplefilter("ignore", UserWarning)
                prob.solve(solver=s)
        except (cp.error.SolverError, Exception) as err:  # noqa: BLE001 - try the next solver
            last = f"{s}: {err}"
            continue
        if prob.status in ("optimal", "optimal_inaccurate") and w.value is not None:
            wv = np.clip(np.asarray(w.value), 0, None)
            # an inaccurate solve gives a usable design but no trustworthy optimum
            status = "optimal" if prob.status == "optimal" else "feasible"
            return DesignSolution(status, wv, float(prob.value), None, prob.status,
                                  {"solver": s, "rays": R, "seconds": time.perf_counter() - t0})
        last = f"{s}: {prob.status}"
    return DesignSolution("error", None, None, None, last, {"rays": R})


def design_frank_wolfe(V: np.ndarray, p0: np.ndarray, *, rel_gap: float = 1e-4, max_iter: int = 3000,
                       time_limit: float = 120.0, progress=None, w0: np.ndarray | None = None) -> DesignSolution:
    """Frank–Wolfe with an LP oracle over ``{w >= 0, V w = 1}`` (see module doc).

    ``w0``, a feasible design (e.g. a conic solver's), is the starting point if its
    information matrix is invertible.
    """
    t0 = time.perf_counter()
    k, R = V.shape
    G, den = _grams(V, p0)
    B = np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])
    M = B.T @ B
    lp = get_backend("highs")
    if w0 is not None:
        val, Jinv = _risk(w0, G, den, M)
        if Jinv is not None and math.isfinite(val):
            return _fw_loop(V, G, den, M, lp, np.asarray(w0, dtype=float), val, Jinv, rel_gap, max_iter,
                            time_limit, progress, t0)
    # start: the most informative vertex for a flat gradient (LP over a random cost)
    start = lp.solve(-np.ones(R) / den, A_eq=V, b_eq=np.ones(k), bounds=(0, None))
    if start.status != "optimal":
        return DesignSolution("error", None, None, None, "no feasible design")
    # mix with a full-support interior point so that J is invertible from the start
    uniform = lp.solve(np.zeros(R), A_eq=V, b_eq=np.ones(k), bounds=(0, None)).x
    w = 0.5 * start.x + 0.5 * uniform
    val, Jinv = _risk(w, G, den, M)
    if Jinv is None or not math.isfinite(val):
        # fall back: average many vertices until J is invertible
        w = np.zeros(R)
        rng = np.random.default_rng(0)
        for _ in range(4 * k):
            s = lp.solve(rng.normal(size=R), A_eq=V, b_eq=np.ones(k), bounds=(0, None)).x
            w += s
        w /= 4 * k
        val, Jinv = _risk(w, G, den, M)
        if Jinv is None or not math.isfinite(val):
            return DesignSolution("error", None, None, None, "the rays do not identify the distribution")
    return _fw_loop(V, G, den, M, lp, w, val, Jinv, rel_gap, max_iter, time_limit, progress, t0)


def _fw_loop(V, G, den, M, lp, w, val, Jinv, rel_gap, max_iter, time_limit, progress, t0) -> DesignSolution:
    k, R = V.shape
    best_lower = -math.inf
    # fully corrective: keep the vertices found so far and re-optimise their convex
    # weights lam (a simplex) by exponentiated gradient — multiplicative weights.
    verts = [w.copy()]
    lam = np.ones(1)
    it = 0
    for it in range(max_iter):
        A = Jinv @ M @ Jinv
        grad = -np.einsum("ir,ij,jr->r", G, A, G) / den
        # the same argmin with costs of order one (HiGHS treats |c| >= 1e15 as infinite;
        # near-unidentifiable designs have risks of 1e6 and gradients far larger)
        s_sol = lp.solve(grad / max(float(np.abs(grad).max()), 1e-300), A_eq=V, b_eq=np.ones(k), bounds=(0, None))
        if s_sol.status != "optimal":
            break
        s = np.clip(s_sol.x, 0, None)
        gap = float(grad @ (w - s))
        best_lower = max(best_lower, val - gap)
        if progress is not None:
            progress(it, val, best_lower, int(np.sum(w > 1e-12)))
        if gap <= rel_gap * val or time.perf_counter() - t0 > time_limit:
            break
        # the classic Frank-Wolfe step first: exact (golden-section) line search
        dvec = s - w
        a, b = 0.0, 1.0
        phi = (math.sqrt(5) - 1) / 2
        c1, c2 = b - phi * (b - a), a + phi * (b - a)
        f1 = _risk(w + c1 * dvec, G, den, M)[0]
        f2 = _risk(w + c2 * dvec, G, den, M)[0]
        for _ in range(30):
            if f1 <= f2:
                b, c2, f2 = c2, c1, f1
                c1 = b - phi * (b - a)
                f1 = _risk(w + c1 * dvec, G, den, M)[0]
            else:
                a, c1, f1 = c1, c2, f2
                c2 = a + phi * (b - a)
                f2 = _risk(w + c2 * dvec, G, den, M)[0]
        gamma = (a + b) / 2
        v_new, J_new = _risk(w + gamma * dvec, G, den, M)
        if J_new is None or v_new > val:
            gamma, v_new, J_new = 0.0, val, Jinv
        verts.append(s)
        lam = np.append(lam * (1 - gamma), gamma)
        w = np.array(verts).T @ lam
        val, Jinv = v_new, J_new
        A = Jinv @ M @ Jinv
        grad = -np.einsum("ir,ij,jr->r", G, A, G) / den
        W = np.array(verts).T  # (R, t)
        eta = 1.0
        for _inner in range(60):
            g = W.T @ grad
            scale = max(float(np.max(np.abs(g - g.min()))), 1e-300)
            while eta > 1e-8:
                cand = lam * np.exp(-eta * (g - g.min()) / scale)
                cand /= cand.sum()
                w_c = W @ cand
                v_c, J_c = _risk(w_c, G, den, M)
                if J_c is not None and v_c < val:
                    break
                eta /= 2
            else:
                break
            lam, w, val, Jinv = cand, w_c, v_c, J_c
            eta = min(eta * 2, 64.0)
            A = Jinv @ M @ Jinv
            grad = -np.einsum("ir,ij,jr->r", G, A, G) / den
        # forget vertices whose weight vanished
        alive = lam > 1e-12
        verts = [v for v, a in zip(verts, alive) if a]
        lam = lam[alive] / lam[alive].sum()
    return DesignSolution("optimal" if val - best_lower <= rel_gap * val * 1.0001 else "feasible",
                          w, val, best_lower, "",
                          {"iterations": it + 1, "rays": R, "seconds": time.perf_counter() - t0})


def design_lower_bound(V: np.ndarray, p0: np.ndarray, w: np.ndarray) -> float:
    """A proven lower bound on the optimal risk from any feasible design ``w`` (``V w = 1``).

    The risk is convex in ``w``, so ``f* >= f(w) + min_s grad f(w)·(s - w)`` over the
    feasible polytope; the minimum is an LP (HiGHS) over its vertices. Returns
    ``-inf`` if ``J(w)`` is singular or the LP fails.
    """
    k = V.shape[0]
    G, den = _grams(V, p0)
    B = np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])
    M = B.T @ B
    val, Jinv = _risk(w, G, den, M)
    if Jinv is None or not math.isfinite(val):
        return -math.inf
    A = Jinv @ M @ Jinv
    grad = -np.einsum("ir,ij,jr->r", G, A, G) / den
    scale = max(float(np.abs(grad).max()), 1e-300)
    s_sol = get_backend("highs").solve(grad / scale, A_eq=V, b_eq=np.ones(k), bounds=(0, None))
    if s_sol.status != "optimal" or s_sol.x is None:
        return -math.inf
    s = np.clip(s_sol.x, 0, None)
    return float(val - grad @ (w - s))


def check_risk(V: np.ndarray, w: np.ndarray, p0: np.ndarray) -> float:
    """The risk of the channel built from ``w`` (independent recomputation)."""
    keep = w > 0
    return estimation_risk(V[:, keep] * w[keep], p0)
