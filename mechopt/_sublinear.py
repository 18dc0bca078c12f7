"""User-defined sublinear utilities for free outputs: ``maximise sum_y mu(q_y)``.

For any ``mu`` that is **convex and positively homogeneous of degree 1** (sublinear), an
optimal channel uses only multiples of the privacy cone's extreme rays, and the optimum
is the ray LP of SPEC §3 (Kairouz, Oh, Viswanath, *Extremal mechanisms for local
differential privacy*; the argument holds for any cone) ::

    maximise  sum_r w_r mu(v_r)   subject to   sum_r w_r v_r = 1,  w >= 0.

This module solves it for a Python callable ``mu``:

* the rays come from :func:`mechopt.solvers.free._rays.enumerate_rays` (the same enumerators
  as the built-in utilities), or — with a *pricing oracle* — column generation starts
  from the constant column and asks the oracle for columns of positive reduced value;
* before use, ``mu`` is checked numerically on points of the cone (the rays, conic
  combinations of them, the constant column): finite values, ``mu(a q) = a mu(q)`` for
  ``a > 0``, and ``mu(l a + (1 - l) b) <= l mu(a) + (1 - l) mu(b)``. A failure is one
  clear line (:class:`~mechopt.InputError`, field ``mu``);
* the LP's bound is safe given the values ``mu(v_r)`` (:func:`ray_upper_bound`);
* the channel is repaired, verified exactly and exported like any other.

**What is proven and what is assumed.** The bound is an upper bound on the ray LP. That
the ray LP's optimum is the optimum over *all* channels rests on ``mu`` being sublinear;
mechopt checks this at finitely many points, which cannot prove it. Every result says so
(``message`` and the certificate's ``assumption``). To minimise a loss ``l``, pass
``mu = -l`` (then ``l`` must be concave and homogeneous, e.g. a Bayes risk).

Examples
--------
>>> import numpy as np, mechopt
>>> P = np.array([0.5, 0.3, 0.2])
>>> def chi2(q):                       # chi-square information of one output (a perspective)
...     py = P @ q
...     return float(P @ (q - py) ** 2 / py) if py > 0 else 0.0
>>> r = mechopt.solve_sublinear([mechopt.LDP(1.0)], chi2, inputs=["a", "b", "c"])
>>> r.status, r.certificate.verified
('optimal', True)
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from ._errors import InputError, SolverError
from ._mechanism import Mechanism
from .notions import ULDP, Notion
from ._result import SolveResult

#: relative tolerance of the numerical sublinearity checks
SUBLINEAR_TOL = 1e-8
#: the ray LP's answer is "optimal" within this relative gap (as for the built-in utilities)
SUBLINEAR_REL_GAP = 1e-9
#: relative error allowed in each value mu(v_r) by the safe bound (floating-point evaluation)
MU_REL = 1e-12
ASSUMPTION = ("global optimality over all channels rests on mu being sublinear (convex and positively homogeneous); "
              "mechopt checked it numerically at {n} points of the privacy cone, which does not prove it")


def _resolve(privacy: Any, inputs: Any) -> tuple[list[Notion], tuple[str, ...]]:
    from ._model_bound import resolve_notions
    from ._problem import Problem, load_problem

    if isinstance(privacy, (Problem, dict, str)) or hasattr(privacy, "__fspath__"):
        p = privacy if isinstance(privacy, Problem) else load_problem(privacy)
        if inputs is not None:
            raise InputError("inputs", "a problem names its own inputs: give inputs only with notions")
        return list(p.notions), tuple(p.inputs)
    return resolve_notions(privacy, inputs)


def _fmt(q: np.ndarray) -> str:
    return np.array2string(np.asarray(q, dtype=float), precision=4, separator=", ", max_line_width=200)


class Utility:
    """``mu`` made safe to call on columns: one clear line for an exception or a bad value."""

    def __init__(self, mu: Callable, k: int, vectorized: bool = False):
        if not callable(mu):
            raise InputError("mu", f"must be a callable mu(q) -> float, got {mu!r}")
        self.mu = mu
        self.k = k
        self.vectorized = vectorized
        self.calls = 0

    def __call__(self, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=float)
        if self.vectorized:
            try:
                out = np.asarray(self.mu(V), dtype=float)
            except Exception as err:  # the user's code: report it on one line
                raise InputError("mu", f"raised {type(err).__name__}: {err} on a ({V.shape[0]}, {V.shape[1]}) "
                                 "array of columns") from None
            if out.shape != (V.shape[1],):
                raise InputError("mu", f"vectorized mu must return one value per column (shape ({V.shape[1]},)), "
                                 f"got shape {out.shape}")
        else:
            out = np.empty(V.shape[1])
            for j in range(V.shape[1]):
                q = V[:, j].copy()
                try:
                    val = self.mu(q)
                except Exception as err:
                    raise InputError("mu", f"raised {type(err).__name__}: {err} at q = {_fmt(q)}") from None
                try:
                    out[j] = float(np.asarray(val, dtype=float).reshape(()))
                except (TypeError, ValueError):
                    raise InputError("mu", f"must return one number, got {val!r} at q = {_fmt(q)}") from None
        self.calls += V.shape[1]
        bad = np.flatnonzero(~np.isfinite(out))
        if len(bad):
            j = int(bad[0])
            raise InputError("mu", f"must be finite on the privacy cone, got {float(out[j])!r} at q = {_fmt(V[:, j])}")
        return out


def check_sublinear(mu: Utility, V: np.ndarray, *, n: int = 64, seed: int = 0, tol: float = SUBLINEAR_TOL) -> int:
    """Check ``mu`` numerically on points of the cone spanned by the columns of ``V``.

    Tests positive homogeneity (``mu(a q) = a mu(q)``, ``a`` in {0.37, 2.9}) and
    convexity along segments (``mu(l a + (1 - l) b) <= l mu(a) + (1 - l) mu(b)``,
    ``l`` in {0.3, 0.5}) at the columns of ``V`` (up to ``n``), random conic
    combinations of them and the constant column. Returns the number of points used.

    Raises
    ------
    InputError
        (field ``mu``) at the first failure, with the values and the point.

    Examples
    --------
    >>> import numpy as np
    >>> V = np.array([[1.0, 0.4], [0.4, 1.0]])
    >>> check_sublinear(Utility(lambda q: float(np.max(q)), 2), V) > 0
    True
    >>> try:
    ...     check_sublinear(Utility(lambda q: float(q @ q), 2), V)      # degree 2, not 1
    ... except InputError as err:
    ...     print(str(err)[:36])
    mu: is not positively homogeneous: m
    """
    rng = np.random.default_rng(seed)
    k, R = V.shape
    base = V[:, rng.choice(R, size=min(R, n), replace=False)] if R else np.zeros((k, 0))
    combos = []
    for _ in range(n):
        if R == 0:
            break
        idx = rng.choice(R, size=min(R, int(rng.integers(2, 4))), replace=False)
        combos.append(V[:, idx] @ rng.exponential(size=len(idx)))
    pts = np.hstack([base, np.array(combos).T if combos else np.zeros((k, 0)), np.ones((k, 1))])
    pts = pts / pts.max(axis=0, keepdims=True)
    f = mu(pts)
    scale_f = float(np.max(np.abs(f))) if f.size else 0.0
    floor = 1e-12 * max(1.0, scale_f)
    for a in (0.37, 2.9):
        fa = mu(a * pts)
        err = np.abs(fa - a * f)
        lim = tol * (np.abs(a * f) + np.abs(fa)) + floor
        bad = np.flatnonzero(err > lim)
        if len(bad):
            j = int(bad[0])
            raise InputError("mu", f"is not positively homogeneous: mu({a:g} q) = {fa[j]:.4g} but {a:g} mu(q) = "
                             f"{a * f[j]:.4g} at q = {_fmt(pts[:, j])}; the ray LP needs mu sublinear "
                             "(convex and positively homogeneous)")
    P = pts.shape[1]
    ia = rng.integers(0, P, size=2 * n)
    ib = rng.integers(0, P, size=2 * n)
    A, B = pts[:, ia], pts[:, ib]
    for lam in (0.3, 0.5):
        mid = mu(lam * A + (1 - lam) * B)
        chord = lam * f[ia] + (1 - lam) * f[ib]
        lim = tol * (np.abs(lam * f[ia]) + np.abs((1 - lam) * f[ib]) + np.abs(mid)) + floor
        bad = np.flatnonzero(mid - chord > lim)
        if len(bad):
            j = int(bad[0])
            raise InputError("mu", f"is not convex: mu({lam:g} a + {1 - lam:g} b) = {mid[j]:.6g} > {lam:g} mu(a) + "
                             f"{1 - lam:g} mu(b) = {chord[j]:.6g} at a = {_fmt(A[:, j])}, b = {_fmt(B[:, j])}; the ray "
                             "LP needs mu sublinear (convex and positively homogeneous)")
    return int(P)


def _in_cone(v: np.ndarray, notions: list[Notion]) -> bool:
    """Is ``v`` a column some channel may have (ULDP: protected, or invertible at a non-sensitive input)?"""
    from .notions import LDP
    from .solvers.free._rays import _satisfies

    if not v.sum() > 0:
        return False
    convex = [n for n in notions if not isinstance(n, ULDP)]
    uldp = [n for n in notions if isinstance(n, ULDP)]
    if _satisfies(v, convex + [LDP(u.epsilon) for u in uldp]):
        return True
    nz = np.flatnonzero(v > 0)
    sens = set().union(*[set(u.sensitive) for u in uldp]) if uldp else set()
    return bool(uldp) and len(nz) == 1 and int(nz[0]) not in sens and (not convex or _satisfies(v, convex))


def solve_sublinear(privacy: Any, mu: Callable, inputs: Any = None, *, name: str = "custom",
                    pricing: Callable | None = None, vectorized: bool = False, checks: int = 64, seed: int = 0,
                    backend: str = "highs", scale: float | None = None, max_iter: int = 500) -> SolveResult:
    """The channel with free outputs that maximises ``sum_y mu(q_y)`` for your sublinear ``mu``.

    Parameters
    ----------
    privacy : Problem, dict, path, Notion or list of them
        The notions (a problem contributes its notions and inputs; its objective is not
        used).
    mu : callable
        ``mu(q) -> float`` for a column ``q`` (length k, non-negative), convex and
        positively homogeneous; with ``vectorized=True``, ``mu(V)`` for an array of columns
        ``V`` (k, R) returns R values.
    inputs : list of str or int
        With notions: the input labels (or their number).
    name : str
        The objective's name in the mechanism file.
    pricing : callable, optional
        A pricing oracle for column generation: ``pricing(d) -> (columns, upper)`` for the
        LP's dual ``d`` (length k), where ``columns`` (k, c) are columns of the privacy cone
        (any scale) and ``upper`` is ``None`` or a proven upper bound on
        ``max mu(v) - d·v`` over the cone's columns with ``sum(v) = 1``. Then
        ``1·d + k·max(upper, 0)`` bounds the optimum. Without a proven ``upper`` and with
        few enough rays, a last round over every ray proves the bound.
    checks : int
        Points for the numerical sublinearity check.
    scale : float, optional
        Gaps are judged relative to ``max(|value|, scale)``.

    Returns
    -------
    SolveResult
        ``optimal`` when the ray LP's safe bound closes the gap (optimality over all
        channels assumes ``mu`` sublinear: see ``message``), ``feasible`` with the gap
        otherwise, ``error`` when no channel could be produced.

    Raises
    ------
    InputError
        When ``mu`` raises, returns a non-finite value or fails the sublinearity check;
        when ``pricing`` returns something that is not columns of the cone.
    """
    from .solvers.free._rays import MAX_ENUMERATED, enumerate_rays, ray_count_estimate, relax_notions
    from .solvers.labeled._structure import BUDGET_CAP

    t_start = time.perf_counter()
    notions, labels = _resolve(privacy, inputs)
    k = len(labels)
    f = Utility(mu, k, vectorized)
    timings: dict[str, float] = {}
    stats: dict[str, Any] = {}

    def fail(status: str, msg: str) -> SolveResult:
        timings["total"] = time.perf_counter() - t_start
        return SolveResult(status, None, None, None, None, None, timings, msg, stats)

    estimate = ray_count_estimate(notions, k)
    relaxed = relax_notions(notions, k, BUDGET_CAP)

    def all_rays():
        t = time.perf_counter()
        try:
            V, inv, V_bound = enumerate_rays(relaxed, k)
        except SolverError as err:   # e.g. a double description too large: a status, not a crash
            raise _Failed(str(err)) from None
        timings["rays"] = timings.get("rays", 0.0) + time.perf_counter() - t
        # the channel from rays inside the cone, the bound from rays of a cone containing it
        # (the same rays for the structured enumerators; inner/outer for the exact ones)
        Vn = V / V.max(axis=0, keepdims=True)
        Vb = Vn if V_bound is V else V_bound / V_bound.max(axis=0, keepdims=True)
        return Vn, inv, Vb

    enumerable = estimate is None or estimate <= MAX_ENUMERATED
    try:
        return _solve(f, notions, labels, pricing, enumerable, estimate, all_rays, backend, max_iter, checks, seed,
                      scale, name, timings, stats, t_start)
    except _Failed as err:
        return fail("error", str(err))


class _Failed(Exception):
    """A solver-side failure, reported as status 'error'."""


def _solve(f, notions, labels, pricing, enumerable, estimate, all_rays, backend, max_iter, checks, seed, scale,
           name, timings, stats, t_start) -> SolveResult:
    from .solvers.free._raylp import channel_from_rays, solve_ray_lp
    from .solvers._repair import repair
    from .solvers.backends._safe_bound import ray_upper_bound

    k = len(labels)

    def fail(status: str, msg: str) -> SolveResult:
        timings["total"] = time.perf_counter() - t_start
        return SolveResult(status, None, None, None, None, None, timings, msg, stats)

    upper = math.inf
    n_checked = 0
    if pricing is None:
        if not enumerable:
            return fail("error", f"about {estimate} extreme rays: too many to enumerate; give a pricing oracle "
                        "(column generation) or use fewer inputs")
        V, inv, Vb = all_rays()
        if V.shape[1] == 0:
            return fail("error", "no extreme rays were found (please report the problem)")
        n_checked = check_sublinear(f, V, n=checks, seed=seed)
        mu_v = f(V)
        t = time.perf_counter()
        sol = solve_ray_lp(V, mu_v, backend=backend)
        timings["solve"] = time.perf_counter() - t
        if sol.status != "optimal":
            return fail("error", f"the ray LP failed: {sol.message}")
        d = sol.stats.get("duals")
        if d is not None:
            upper = ray_upper_bound(Vb, mu_v if Vb is V else f(Vb), d, mu_rel=MU_REL)
        w = sol.weights
        stats.update(method="rays", rays=int(V.shape[1]))
    else:
        res = _column_generation(f, pricing, notions, k, backend, max_iter, checks, seed, timings)
        if isinstance(res, str):
            return fail("error", res)
        V, w, d, upper, n_checked, it = res
        inv = _invertible_flags(V, notions)
        stats.update(method="colgen", iterations=it, rays=int(V.shape[1]))
        if not math.isfinite(upper) and enumerable:
            # the oracle proved nothing: price every ray once (the proof), then re-solve if it found any
            Vall, inv_all, Vball = all_rays()
            mu_all = f(Vall)
            mu_ball = mu_all if Vball is Vall else f(Vball)
            upper = ray_upper_bound(Vball, mu_ball, d, mu_rel=MU_REL)
            stats["final_enumeration"] = int(Vall.shape[1])
            if upper - float(f(V) @ w) > SUBLINEAR_REL_GAP * max(1.0, abs(upper)):
                sol = solve_ray_lp(Vall, mu_all, backend=backend)
                if sol.status == "optimal" and sol.stats.get("duals") is not None:
                    V, inv, w = Vall, inv_all, sol.weights
                    upper = ray_upper_bound(Vball, mu_ball, sol.stats["duals"], mu_rel=MU_REL)
    Q, inv_cols = channel_from_rays(V, w, inv)
    if Q.shape[1] == 0:
        return fail("error", "the ray LP's weights are all zero")
    t = time.perf_counter()
    before = float(f(Q).sum())
    rep = repair(Q, notions, mix_columns=~inv_cols if inv_cols.any() else None)
    timings["repair_verify"] = time.perf_counter() - t
    if not rep.certificate.verified:
        return fail("error", f"the channel could not be repaired to pass the exact check: {rep.certificate.detail}")
    Qr = rep.Q
    value = float(f(Qr).sum())
    bound = upper if math.isfinite(upper) else None
    conflict = False
    size = max(abs(value), 1e-300 if scale is None else float(scale), abs(bound) if bound is not None else 0.0)
    if bound is not None and value > bound:
        if value - bound <= 1e-12 * size:
            bound = value
        else:
            conflict = True
    gap = (bound - value) if bound is not None else None
    closed = gap is not None and gap <= SUBLINEAR_REL_GAP * size and not conflict
    assumption = ASSUMPTION.format(n=n_checked)
    if conflict:
        status = "feasible"
        message = (f"the exported channel's value {value!r} exceeds the bound {bound!r}: mu is likely not sublinear "
                   f"(or not evaluated consistently); {assumption}")
    elif closed:
        status = "optimal"
        message = f"optimal for the ray LP (proven); {assumption}"
    else:
        status = "feasible"
        why = "no bound could be proven (the pricing oracle gave none and the rays are too many to list)" \
            if bound is None else f"the proven gap {gap:.3g} is above the tolerance {SUBLINEAR_REL_GAP:g} (relative)"
        message = f"{why}; {assumption}"
    outputs = tuple(f"y{j}" for j in range(Qr.shape[1]))
    objective = {"kind": name, "sense": "maximize", "utility": "sum_y mu(q_y), mu user-defined", "value": value,
                 "bound": bound, "gap": gap}
    cert = rep.certificate.to_dict()
    cert.update(repair_t=rep.t, repair_cost=abs(value - before), assumption=assumption,
                bound_method="ray LP dual, safe given the values mu(v_r) (relative error 1e-12 allowed)")
    mech = Mechanism(labels, outputs, Qr, [n.to_spec(labels) for n in notions], objective, cert,
                     {"solver": dict(stats, sublinearity_points=n_checked)})
    timings["total"] = time.perf_counter() - t_start
    return SolveResult(status, mech, value, bound, gap, rep.certificate, timings, message, stats)


def _invertible_flags(V: np.ndarray, notions: list[Notion]) -> np.ndarray:
    uldp = [n for n in notions if isinstance(n, ULDP)]
    if not uldp:
        return np.zeros(V.shape[1], bool)
    sens = set().union(*[set(u.sensitive) for u in uldp])
    nz = V > 0
    single = nz.sum(axis=0) == 1
    owner = np.argmax(nz, axis=0)
    return single & np.array([int(x) not in sens for x in owner])


class _OraclePricer:
    """The user's ``pricing(d) -> (columns, upper)`` as a column-generation pricer.

    ``d + upper * 1`` is dual feasible on the slice ``sum(v) = 1``, hence on the cone, so
    ``1·d + k max(upper, 0)`` (rounded up) bounds the optimum. The columns offered are
    checked for sublinearity with the master's rays until ``checks`` points were used.
    """

    def __init__(self, f: Utility, pricing: Callable, notions, k: int, master, checks: int, seed: int):
        self.f, self.pricing, self.notions, self.k = f, pricing, notions, k
        self.master, self.checks, self.seed = master, checks, seed
        self.n_checked = 0
        self.calls = 0

    def price(self, state):
        from .solvers._colgen_loop import Found

        self.calls += 1
        d = state.duals
        cols, up = _call_pricing(self.pricing, d, self.k, self.notions)
        bound = None
        if up is not None:
            cand = float(math.fsum(d.tolist())) + self.k * max(up, 0.0)
            bound = cand + 4 * np.finfo(float).eps * (abs(cand) + float(np.abs(d).sum()))
        if cols.shape[1]:
            cols = cols / cols.sum(axis=0, keepdims=True)
            red = self.f(cols) - d @ cols
            scale = max(1.0, abs(state.value))
            new = cols[:, red > 1e-12 * scale]
        else:
            new = cols
        if self.n_checked < self.checks and new.shape[1]:
            pool = np.hstack([self.master.V, new])
            self.n_checked = check_sublinear(self.f, pool / pool.max(axis=0, keepdims=True), n=self.checks,
                                             seed=self.seed + self.calls)
        return Found(new, new.shape[1], bound)


def _column_generation(f: Utility, pricing: Callable, notions, k, backend, max_iter, checks, seed, timings):
    """Column generation with the user's oracle: ``(V, w, d, upper, points checked, iterations)`` or a message."""
    from .solvers._colgen_loop import FAILED, run
    from .solvers.free._raylp import RayMaster

    if not callable(pricing):
        raise InputError("pricing", f"must be a callable pricing(d) -> (columns, upper), got {pricing!r}")
    t = time.perf_counter()
    master = RayMaster(np.ones((k, 1)), f, backend)
    pricer = _OraclePricer(f, pricing, notions, k, master, checks, seed)
    res = run(master, pricer, max_iter=max_iter)
    if res.reason == FAILED:
        return f"the restricted ray LP failed: {res.state.message}"
    V, sol, n_checked = master.solved, master.sol, pricer.n_checked  # the rays the last solve weighs
    if n_checked == 0:
        n_checked = check_sublinear(f, V / V.max(axis=0, keepdims=True), n=checks, seed=seed)
    timings["solve"] = time.perf_counter() - t
    return V, sol.weights, sol.stats["duals"], res.bound, n_checked, res.rounds


def _call_pricing(pricing: Callable, d: np.ndarray, k: int, notions) -> tuple[np.ndarray, float | None]:
    try:
        out = pricing(d.copy())
    except Exception as err:  # the user's code: report it on one line
        raise InputError("pricing", f"raised {type(err).__name__}: {err}") from None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise InputError("pricing", f"must return (columns, upper), got {type(out).__name__}")
    cols, up = out
    try:
        C = np.asarray(cols, dtype=float)
    except (TypeError, ValueError):
        raise InputError("pricing", f"columns must be an array of numbers, got {cols!r}") from None
    if C.ndim == 1:
        C = C[:, None]
    if C.ndim != 2 or C.shape[0] != k:
        raise InputError("pricing", f"columns must have shape ({k}, c), got {C.shape}")
    if not np.all(np.isfinite(C)) or np.any(C < 0):
        raise InputError("pricing", "columns must be finite and non-negative")
    for j in range(C.shape[1]):
        if not _in_cone(C[:, j], notions):
            raise InputError("pricing", f"returned a column outside the privacy cone: {_fmt(C[:, j])}")
    if up is not None:
        if isinstance(up, bool) or not isinstance(up, (int, float, np.integer, np.floating)) or math.isnan(up):
            raise InputError("pricing", f"upper must be None or a number, got {up!r}")
        up = float(up)
    return C, up
