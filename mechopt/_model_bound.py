"""The bound behind :meth:`mechopt.ChannelModel.finish`: linearisations, epigraph lifts, Kelley's cuts.

See :mod:`mechopt._model` for the method: each linearisation ``f(P) + g·(Q - P)`` of a
convex objective lies below it, so minimising the maximum of the linearisations over the
privacy polytope (an LP solved by HiGHS, bounded safely from its dual by
:func:`mechopt.solvers.backends._safe_bound.lp_lower_bound`) bounds the optimum; cutting planes
are added at the LP's minimisers until the gap closes. Also the input helpers shared by
:func:`mechopt.model` and :func:`mechopt.solve_sublinear`.

Examples
--------
>>> import numpy as np
>>> _c_order(2, 3).tolist()      # cvxpy's column-major index of each row-major entry
[0, 2, 4, 1, 3, 5]
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._errors import InputError
from .notions import ULDP, Notion, notion_from_spec

#: each linearisation of your objective is lowered by this much, relative to its size, to
#: cover its floating-point evaluation
LINEARISATION_REL = 1e-12
#: your constraints must hold on the exported channel within this (relative to their size)
MODEL_CONSTRAINT_TOL = 1e-7


def _cp():
    import cvxpy as cp

    return cp


def resolve_notions(privacy: Any, inputs: Any) -> tuple[list[Notion], tuple[str, ...]]:
    """``(notions, labels)`` bound to the inputs, from a notion or a list of notions / problem-file entries.

    ``inputs`` is a list of labels or a number of inputs (labelled ``"0"``, ``"1"``, ...).
    """
    from ._validation import check_labels

    items = [privacy] if isinstance(privacy, Notion) else privacy
    if not isinstance(items, (list, tuple)) or not items:
        raise InputError("privacy", f"must be a problem, a notion or a non-empty list of notions, got {privacy!r}")
    if inputs is None:
        raise InputError("inputs", "is required with notions: a list of labels or a number of inputs")
    if isinstance(inputs, (int, np.integer)) and not isinstance(inputs, bool):
        if inputs < 1:
            raise InputError("inputs", f"must be a positive number of inputs, got {inputs!r}")
        labels = tuple(str(i) for i in range(int(inputs)))
    else:
        labels = check_labels(list(inputs) if isinstance(inputs, tuple) else inputs, "inputs")
    notions = []
    for i, n in enumerate(items):
        if isinstance(n, Notion):
            try:
                notions.append(n.bind(list(labels)))
            except InputError as err:
                raise InputError(f"privacy[{i}].{err.field}", err.rule) from None
        else:
            notions.append(notion_from_spec(n, labels, f"privacy[{i}]"))
    return notions, labels


def _short(expr: Any, n: int = 160) -> str:
    s = str(expr)
    return s if len(s) <= n else s[: n - 3] + "..."



def _value_at(expr: Any, Q: Any, point: np.ndarray) -> float:
    Q.value = point
    v = expr.value
    return float(np.asarray(v, dtype=float).sum()) if v is not None else math.nan


def _constraint_report(user: list, Q: Any, point: np.ndarray) -> tuple[list[dict], bool]:
    """cvxpy's ``violation()`` of each of your constraints at the exported channel."""
    Q.value = point
    report, ok = [], True
    for c in user:
        try:
            v = c.violation()
        except (ValueError, TypeError):
            v = None
        worst = float(np.max(v)) if v is not None and np.size(v) else 0.0
        size = 1.0
        for a in c.args:
            if a.value is not None:
                size = max(size, float(np.max(np.abs(a.value))))
        good = math.isfinite(worst) and worst <= MODEL_CONSTRAINT_TOL * size
        ok &= good
        report.append({"constraint": _short(c, 100), "max_violation": max(0.0, worst), "ok": bool(good)})
    return report, ok


def _c_order(k: int, m: int) -> np.ndarray:
    """``f[x*m + y] = y*k + x``: cvxpy's column-major index of each row-major entry."""
    return (np.arange(k * m) % m) * k + np.arange(k * m) // m


def _grad_c(expr: Any, Q: Any, k: int, m: int) -> np.ndarray | None:
    """Gradient of a scalar expression with respect to ``Q``, row-major (None if cvxpy has none)."""
    g = expr.grad
    if g is None:
        return None
    gq = g.get(Q)
    if gq is None:
        return np.zeros(k * m) if all(v is not Q for v in expr.variables()) else None
    d = np.asarray(gq.toarray() if sp.issparse(gq) else gq, dtype=float).ravel()
    return d[_c_order(k, m)]


def _affine_rows(expr: Any, Q: Any, k: int, m: int) -> tuple[sp.csr_matrix, np.ndarray] | None:
    """``(G, g0)`` with ``expr = G vec(Q) + g0`` (row-major ``vec``; entries of expr column-major)."""
    Q.value = np.zeros((k, m))
    g0 = np.asarray(expr.value, dtype=float).ravel(order="F")
    grad = expr.grad
    if grad is None:
        return None
    gq = grad.get(Q)
    size = g0.size
    if gq is None:
        G = sp.csr_matrix((size, k * m))
    else:
        G = sp.csr_matrix(gq).T.tocsr()[:, _c_order(k, m)]
    return G, g0


def _certify(mdl: Any, prob: Any, user: list, points: list, minimize: bool, value: float,
             rel_gap: float, scale: float | None):
    """``(bound, proven, method, note)`` for a solved problem over ``mdl`` (see the module doc)."""
    cp = _cp()
    Q = mdl.Q
    solver_value = float(prob.value) if prob.value is not None and np.isfinite(prob.value) else None

    def solver_bound(why: str):
        return (solver_value, False, "the solver's optimal value (not proven)",
                f"{why}; the bound reported is the solver's optimal value, not a proven bound")

    if prob.is_mixed_integer():
        return solver_bound("a mixed-integer problem has no dual bound here")
    if any(v is not Q for v in prob.objective.expr.variables()):
        return solver_bound("the objective uses variables other than Q (write it as a function of Q, "
                            "e.g. cvxpy.max(...) instead of an epigraph variable, for a proven bound)")
    k, m = mdl.k, mdl.m
    A_ub, b_ub = [mdl._lp["A_ub"]], [mdl._lp["b_ub"]]
    A_eq, b_eq = [mdl._lp["A_eq"]], [mdl._lp["b_eq"]]
    n = mdl._lp["n"]
    f = prob.objective.expr if minimize else -prob.objective.expr
    lag = []
    for c in user:
        if any(v is not Q for v in c.variables()):
            return solver_bound(f"your constraint {_short(c, 60)!r} uses variables other than Q")
        if isinstance(c, (cp.constraints.Inequality, cp.constraints.NonPos, cp.constraints.NonNeg,
                          cp.constraints.Equality, cp.constraints.Zero)):
            h = -c.expr if isinstance(c, cp.constraints.NonNeg) else c.expr
            equality = isinstance(c, (cp.constraints.Equality, cp.constraints.Zero))
            if h.is_affine():
                rows = _affine_rows(h, Q, k, m)
                if rows is None:
                    return solver_bound(f"no coefficients for {_short(c, 60)!r}")
                G, g0 = rows
                G = sp.hstack([G, sp.csr_matrix((G.shape[0], n - k * m))]).tocsr()
                (A_eq if equality else A_ub).append(G)
                (b_eq if equality else b_ub).append(-g0)
                continue
            lam = c.dual_value
            if equality or lam is None:
                return solver_bound(f"no multiplier for {_short(c, 60)!r}")
            lam = np.clip(np.asarray(lam, dtype=float), 0.0, None)
            if not np.all(np.isfinite(lam)):
                return solver_bound(f"no finite multiplier for {_short(c, 60)!r}")
            lag.append(cp.sum(cp.multiply(lam if lam.ndim else float(lam), h)))
        else:
            return solver_bound(f"constraint type {type(c).__name__} is not certified here")
    L = f + sum(lag) if lag else f
    A_ub = sp.vstack(A_ub).tocsr()
    A_eq = sp.vstack(A_eq).tocsr()
    b_ub = np.concatenate(b_ub)
    b_eq = np.concatenate(b_eq)
    lifted: list = []
    L = _lift(L, Q, k, m, lifted)
    bound, note = _kelley(L, Q, k, m, n, A_ub, b_ub, A_eq, b_eq, points, lifted,
                          target=0.5 * rel_gap * max(abs(value), 1.0 if scale is None else float(scale)),
                          value=value if minimize else -value)
    if bound is None:
        return solver_bound(note or "no linearisation of the objective could be formed")
    method = "linearisation + LP duality (Neumaier-Shcherbina), convexity by cvxpy's DCP rules"
    if any(isinstance(n, ULDP) for n in mdl.notions):
        note = ("ULDP roles are fixed in this model (invertible: " + (", ".join(
            f"{mdl.outputs[y]}<-{mdl.inputs[x]}" for y, x in sorted(mdl.invertible.items())) or "none") +
            "): the bound holds for these roles only; mechopt.solve chooses them with a MILP")
        return (bound if minimize else -bound), False, method, note
    return (bound if minimize else -bound), True, method, ""


def _lift(expr: Any, Q: Any, k: int, m: int, lifted: list):
    """Replace every ``max`` of an affine function of ``Q`` by a new variable ``t`` (epigraph).

    In a DCP-convex expression a convex sub-expression only ever counts with a
    non-decreasing effect, so ``min f(Q)`` equals ``min f'(Q, t)`` subject to
    ``t >= every piece``: the pieces become LP rows and Kelley's cuts see a smooth or
    affine remainder (a minimax objective is then certified by one cut instead of one
    per active piece). ``lifted`` receives ``(t, G, g0)`` with pieces ``G vec(Q) + g0``.
    """
    cp = _cp()
    if not expr.args:
        return expr
    if isinstance(expr, (cp.max, cp.maximum)) and expr.size == 1 and getattr(expr, "axis", None) is None \
            and all(a.is_affine() and all(v is Q for v in a.variables()) for a in expr.args):
        rows = [_affine_rows(a, Q, k, m) for a in expr.args]
        if all(r is not None for r in rows):
            t = cp.Variable(name=f"t{len(lifted)}")
            G = sp.vstack([r[0] for r in rows]).tocsr()
            g0 = np.concatenate([np.broadcast_to(r[1], (r[0].shape[0],)) for r in rows])
            lifted.append((t, G, g0))
            return t
    args = [_lift(a, Q, k, m, lifted) for a in expr.args]
    if all(a is b for a, b in zip(args, expr.args)):
        return expr
    return expr.copy(args)


def _cut(L: Any, Q: Any, P: np.ndarray, k: int, m: int, lifted: list):
    """``(g, a)`` with ``L(Q, t) >= g·(vec(Q), t) + a`` for every point (a linearisation), or None.

    The lifted variables are set to their pieces' maximum at each point.
    """
    P = np.clip(P, 0.0, None)
    for tau in (0.0, 1e-9, 1e-6, 1e-3):
        X = P if tau == 0 else (1 - tau) * P + tau / m
        x = X.ravel()
        ts = [float(np.max(G @ x + g0)) for _, G, g0 in lifted]
        Q.value = X
        for (t, _, _), v in zip(lifted, ts):
            t.value = v
        try:
            val = L.value
            g = _grad_c(L, Q, k, m)
            grads = L.grad if lifted else {}
        except (ValueError, ZeroDivisionError, FloatingPointError):
            continue
        if val is None or g is None or (lifted and grads is None):
            continue
        gt = []
        for t, _, _ in lifted:
            d = grads.get(t)
            gt.append(0.0 if d is None else float(np.asarray(d.toarray() if sp.issparse(d) else d).sum()))
        g = np.concatenate([g, gt])
        pt = np.concatenate([x, ts])
        val = float(np.asarray(val).sum())
        if not (math.isfinite(val) and np.all(np.isfinite(g))):
            continue
        margin = LINEARISATION_REL * (abs(val) + float(np.abs(g) @ (np.abs(pt) + 1.0)))
        return g, val - float(g @ pt) - margin
    return None


def _kelley(L, Q, k, m, n, A_ub, b_ub, A_eq, b_eq, points, lifted, *, target: float, value: float,
            max_iter: int = 50, time_limit: float = 20.0):
    """Cutting planes for ``min L`` over the polytope; a safe lower bound (or None, why).

    Variables: ``vec(Q)`` and the model's auxiliaries (box [0, 1]: channel entries, and
    auxiliaries that can be set to the maxima, minima and forms of the entries), the
    lifted maxima (box: their pieces' range over the entries' box), and the epigraph
    ``t`` of the cuts (box: the cuts' range).
    """
    from .solvers.backends._adapters import choose
    from .solvers.backends._safe_bound import lp_lower_bound

    t0 = time.perf_counter()
    n_q = k * m
    T = len(lifted)
    # lifted pieces: G vec(Q) + g0 - t_i <= 0, and t_i within the range of its pieces
    lo_v = np.zeros(n + T + 1)
    hi_v = np.ones(n + T + 1)
    piece_rows, piece_b = [], []
    for i, (_, G, g0) in enumerate(lifted):
        lo_v[n + i] = float(np.max(g0 + np.asarray(G.minimum(0).sum(axis=1)).ravel()))
        hi_v[n + i] = float(np.max(g0 + np.asarray(G.maximum(0).sum(axis=1)).ravel()))
        pad = 1e-9 * (1.0 + abs(lo_v[n + i]) + abs(hi_v[n + i]))
        lo_v[n + i] -= pad
        hi_v[n + i] += pad
        col = sp.csr_matrix((np.full(G.shape[0], -1.0), (np.arange(G.shape[0]), np.full(G.shape[0], n + i))),
                            shape=(G.shape[0], n + T + 1))
        piece_rows.append(sp.hstack([G, sp.csr_matrix((G.shape[0], n + T + 1 - n_q))]).tocsr() + col)
        piece_b.append(-g0)
    base_ub = sp.vstack([sp.hstack([A_ub, sp.csr_matrix((A_ub.shape[0], T + 1))])] + piece_rows).tocsr()
    base_b = np.concatenate([b_ub] + piece_b)
    Aeq = sp.hstack([A_eq, sp.csr_matrix((A_eq.shape[0], T + 1))]).tocsr()
    cut_cols = np.concatenate([np.arange(n_q), n + np.arange(T)])  # the cut's variables
    cuts = [c for c in (_cut(L, Q, P, k, m, lifted) for P in points) if c is not None]
    if not cuts:
        return None, "cvxpy gives no (sub)gradient of the objective at the solution"
    best = -math.inf
    adapter = choose()
    box_lo, box_hi = lo_v[cut_cols], hi_v[cut_cols]
    for _ in range(max_iter):
        G = np.array([g for g, _ in cuts])
        a = np.array([a for _, a in cuts])
        lo = float(np.max(a + np.minimum(G * box_lo, G * box_hi).sum(axis=1)))
        hi = float(np.max(a + np.maximum(G * box_lo, G * box_hi).sum(axis=1)))
        pad = 1e-9 * (1.0 + float(np.max(np.abs(a))) + float(np.abs(G).sum(axis=1).max()))
        lo_v[-1], hi_v[-1] = lo - pad, hi + pad
        # each cut: g·x + a <= t
        rows = np.repeat(np.arange(len(cuts)), len(cut_cols) + 1)
        cols = np.tile(np.concatenate([cut_cols, [n + T]]), len(cuts))
        vals = np.hstack([G, -np.ones((len(cuts), 1))]).ravel()
        cut_rows = sp.csr_matrix((vals, (rows, cols)), shape=(len(cuts), n + T + 1))
        Aub = sp.vstack([base_ub, cut_rows]).tocsr()
        bub = np.concatenate([base_b, -a])
        c = np.zeros(n + T + 1)
        c[-1] = 1.0
        sol = adapter.solve(c, Aub, bub, Aeq, b_eq, np.column_stack([lo_v, hi_v]))
        if sol.status != "optimal":
            return (best if math.isfinite(best) else None), f"the certificate LP failed ({sol.status})"
        lb = lp_lower_bound(c, Aub, bub, Aeq, b_eq, lo_v, hi_v, sol.ub_duals, sol.eq_duals)
        best = max(best, lb)
        if value - best <= target or time.perf_counter() - t0 > time_limit:
            break
        new = _cut(L, Q, sol.x[:n_q].reshape(k, m), k, m, lifted)
        if new is None:
            break
        cuts.append(new)
    return (best if math.isfinite(best) else None), ""
