"""A cvxpy modelling frontend: any convex utility or extra constraint over a labeled channel.

:func:`model` returns a :class:`ChannelModel`: a cvxpy ``Variable`` ``Q`` (k × m,
non-negative) and the constraints that make it a private channel — rows summing to 1
and every privacy notion in the *reduced* form of the labeled LP
(:func:`mechopt.solvers.labeled._lp.build_lp`: clique groups with two auxiliary variables
per column, implied E-LDP pairs dropped, one auxiliary ``s = P·q`` per LIP prior). You
write any convex objective and extra constraints in plain cvxpy, solve with any
installed cvxpy solver, and hand the problem back (:meth:`ChannelModel.finish`, or
:meth:`ChannelModel.solve` which does both). mechopt then

1. repairs the channel to exact feasibility (:mod:`mechopt.solvers._repair`) and verifies
   it exactly (:mod:`mechopt._verify`);
2. measures your constraints on the exported channel (cvxpy's ``violation()``);
3. proves a bound when it can (see below), and exports a :class:`~mechopt.Mechanism`
   with a certificate that says how the bound was obtained.

**The bound.** When the objective and every one of your constraints depend on ``Q``
alone, the bound is proven: your objective is convex (cvxpy's DCP rules check it), so
each linearisation ``f(P) + g·(Q - P)`` at a point ``P`` with a (sub)gradient ``g`` lies
below it; your non-linear convex constraints ``h(Q) <= 0`` enter a Lagrangian with
cvxpy's multipliers ``λ >= 0`` (weak duality); your affine constraints stay as LP rows.
Minimising the maximum of the linearisations over the privacy polytope is an LP, solved
by HiGHS and bounded safely from its dual (Neumaier–Shcherbina,
:func:`mechopt.solvers.backends._safe_bound.lp_lower_bound`); more linearisation points are added
at the LP's minimisers (Kelley's cutting planes) until the gap closes. Every ``max`` of
affine functions of ``Q`` in the objective is first replaced by an epigraph variable with
one row per piece (:func:`_lift`), so a minimax objective is certified by one
linearisation instead of one per active piece. Your objective and gradient are
evaluated in floating point: each linearisation is lowered by ``1e-12`` times its size.
With other variables in the objective or constraints (an epigraph variable of your own,
say), the bound reported is the solver's optimal value, not a proven one, and the status
is ``feasible``.

Examples
--------
>>> import cvxpy as cp, numpy as np, mechopt
>>> m = mechopt.model([mechopt.LDP(1.0)], inputs=["a", "b", "c"])
>>> L = 1 - np.eye(3)
>>> r = m.solve(cp.Minimize(cp.max(cp.sum(cp.multiply(L, m.Q), axis=1))))   # minimax error
>>> r.status, round(r.objective, 6), r.certificate.verified       # k-RR's error 2 / (2 + e)
('optimal', 0.423883, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from ._errors import InputError
from ._mechanism import Mechanism
from .notions import ULDP
from ._result import SolveResult
from ._model_bound import (  # noqa: F401  (re-exported: the certificate's constants live there)
    LINEARISATION_REL, MODEL_CONSTRAINT_TOL, _certify, _constraint_report, _cp, _short, _value_at,
    resolve_notions)

#: a proven bound makes the status "optimal" within this relative gap (conic solvers stop
#: near 1e-8; the scale is max(|value|, scale=...))
MODEL_REL_GAP = 1e-6


def _resolve(privacy: Any, inputs: Any, outputs: Any):
    """(problem or None, notions, inputs, outputs) from what :func:`model` was given."""
    from ._problem import Problem, load_problem
    from ._validation import check_labels as _labels

    if isinstance(privacy, (Problem, dict, str)) or hasattr(privacy, "__fspath__"):
        problem = privacy if isinstance(privacy, Problem) else load_problem(privacy)
        if inputs is not None or outputs is not None:
            raise InputError("inputs", "a problem names its own inputs and outputs: give them only with notions")
        if problem.free_outputs:
            raise InputError("outputs", "a cvxpy channel model needs labeled outputs ('inputs' or a list); with "
                             "free outputs and a sublinear utility use mechopt.solve_sublinear")
        return problem, list(problem.notions), tuple(problem.inputs), tuple(problem.outputs)
    notions, labels = resolve_notions(privacy, inputs)
    if outputs is None or outputs == "inputs":
        outs = labels
    elif outputs == "free":
        raise InputError("outputs", "a cvxpy channel model needs labeled outputs; with free outputs and a "
                         "sublinear utility use mechopt.solve_sublinear")
    elif isinstance(outputs, (int, np.integer)) and not isinstance(outputs, bool):
        if outputs < 1:
            raise InputError("outputs", f"must be a positive number of outputs, got {outputs!r}")
        outs = tuple(f"y{j}" for j in range(int(outputs)))
    else:
        outs = _labels(list(outputs) if isinstance(outputs, tuple) else outputs, "outputs")
    return None, notions, labels, outs


def _embed(A: sp.spmatrix, k: int, m: int, cols: np.ndarray, n_q_sub: int, aux0: int, n: int) -> sp.csr_matrix:
    """Columns of a sub-LP over ``Q[:, cols]`` (and its own auxiliaries) placed in the whole LP."""
    coo = sp.coo_matrix(A)
    j = coo.col
    m_s = len(cols)
    is_q = j < n_q_sub
    new = np.empty_like(j)
    new[is_q] = (j[is_q] // m_s) * m + cols[j[is_q] % m_s]
    new[~is_q] = aux0 + (j[~is_q] - n_q_sub)
    return sp.csr_matrix((coo.data, (coo.row, new)), shape=(A.shape[0], n))


@dataclass
class ChannelModel:
    """A private channel as a cvxpy model (see :func:`model`).

    Attributes
    ----------
    Q : cvxpy.Variable, shape (k, m)
        The channel, ``Q[x, y] = Pr(output y | input x)``; non-negative.
    constraints : list of cvxpy constraints
        Rows summing to 1 and every privacy notion, reduced. Include them all in your
        problem.
    aux : cvxpy.Variable or None
        The reductions' auxiliary variables (clique maxima and minima, LIP forms).
    notions, inputs, outputs
        The privacy notions (bound to the inputs) and the labels.
    problem : Problem or None
        The problem the model was built from, if any (its objective and constraints are
        :meth:`objective` and :meth:`problem_constraints`).
    invertible : dict
        ULDP outputs fixed as invertible: output index -> input index.
    stats : dict
        Sizes: privacy rows, auxiliaries, pairs before and after pruning, clique groups.
    """

    Q: Any
    constraints: list
    aux: Any
    notions: list
    inputs: tuple
    outputs: tuple
    problem: Any = None
    invertible: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)
    _lp: dict = field(default_factory=dict, repr=False)

    @property
    def k(self) -> int:
        return len(self.inputs)

    @property
    def m(self) -> int:
        return len(self.outputs)

    # -- building blocks for objectives -------------------------------------------------
    def vec(self):
        """``Q`` flattened row-major: entry ``Q[x, y]`` at ``x*m + y`` (a cvxpy expression)."""
        return _cp().vec(self.Q, order="C")

    def row_losses(self, loss: Any):
        """``(sum_y Q[x, y] L[x, y])_x``: each input's expected loss (a length-k expression)."""
        L = self._matrix(loss, "loss")
        return _cp().sum(_cp().multiply(L, self.Q), axis=1)

    def expected_loss(self, loss: Any, prior: Any = None):
        """``sum_x P(x) sum_y Q[x, y] L[x, y]`` (uniform ``P`` by default)."""
        P = self._weights(prior)
        return P @ self.row_losses(loss)

    def worst_case_loss(self, loss: Any):
        """``max_x sum_y Q[x, y] L[x, y]``: the minimax loss over inputs (convex)."""
        return _cp().max(self.row_losses(loss))

    def frequencies(self, prior: Any = None):
        """``(sum_x P(x) Q[x, y])_y``: how often each output is reported (a length-m expression)."""
        return self._weights(prior) @ self.Q

    def objective(self):
        """The model's problem objective in cvxpy (labeled kinds: expected, minimax, weighted)."""
        from ._custom import linear_cost, worst_case_terms

        cp = _cp()
        if self.problem is None:
            raise InputError("objective", "this model was built from notions, not a problem: write your own "
                             "cvxpy objective")
        obj = self.problem.objective
        C = linear_cost(obj)
        parts = [] if C is None else [cp.sum(cp.multiply(C, self.Q))]
        parts += [w * self.worst_case_loss(L) for w, L in worst_case_terms(obj)]
        if not parts:
            raise InputError("objective", f"objective {obj.kind!r} has no cvxpy form here")
        return cp.Minimize(sum(parts[1:], parts[0]))

    def problem_constraints(self) -> list:
        """The problem file's ``constraints`` as cvxpy constraints (the same rows the LP uses)."""
        if self.problem is None:
            return []
        v = self.vec()
        return [c.rows @ v <= c.rhs for c in self.problem.constraints]

    def _matrix(self, value: Any, where: str) -> np.ndarray:
        from .objectives import loss_matrix_of as _loss_matrix

        if isinstance(value, str):
            return _loss_matrix(value, self.inputs, self.outputs, None, where)
        L = np.asarray(value, dtype=float)
        if L.shape != (self.k, self.m) or not np.all(np.isfinite(L)):
            raise InputError(where, f"must be a finite {self.k} x {self.m} matrix, got shape {L.shape}")
        return L

    def _weights(self, prior: Any) -> np.ndarray:
        """The prior to weight rows by: uniform by default, else checked (mechopt._validation)."""
        from ._validation import check_prior

        if prior is None:
            return np.full(self.k, 1.0 / self.k)
        return check_prior(prior, "prior", k=self.k)

    # -- solving --------------------------------------------------------------------------
    def solve(self, objective: Any = None, constraints: Sequence = (), *, solver: str | None = None,
              scale: float | None = None, name: str | None = None, **solver_options) -> SolveResult:
        """Solve ``objective`` over the private channels and your ``constraints``, then :meth:`finish`.

        Parameters
        ----------
        objective : cvxpy.Minimize or cvxpy.Maximize, optional
            Convex (Minimize) or concave (Maximize) in the DCP sense; a bare expression is
            minimised. Default: the problem's own objective (:meth:`objective`).
        constraints : sequence of cvxpy constraints
            Yours, in addition to :attr:`constraints` (and the problem's, when built from
            a problem).
        solver : str, optional
            Any installed cvxpy solver (``cvxpy.installed_solvers()``).
        scale, name
            See :meth:`finish`.

        Raises
        ------
        InputError
            When the objective or a constraint is not DCP (one line naming it), or the
            solver is not installed.
        """
        cp = _cp()
        if objective is None:
            objective = self.objective()
            name = name or self.problem.objective.kind
        if isinstance(objective, cp.Expression):
            objective = cp.Minimize(objective)
        if not isinstance(objective, (cp.Minimize, cp.Maximize)):
            raise InputError("objective", f"must be cvxpy.Minimize(...) or cvxpy.Maximize(...), got {objective!r}")
        cons = list(self.constraints) + self.problem_constraints() + list(constraints)
        check_dcp(objective, list(constraints))
        if solver is not None and solver.upper() not in cp.installed_solvers():
            raise InputError("solver", f"cvxpy has no installed solver {solver!r}; installed: "
                             f"{sorted(cp.installed_solvers())}")
        prob = cp.Problem(objective, cons)
        t0 = time.perf_counter()
        try:
            prob.solve(solver=solver, **solver_options)
        except cp.error.SolverError as err:
            return SolveResult("error", None, None, None, None, None, {"solve": time.perf_counter() - t0},
                               f"cvxpy: {err}", {})
        return self.finish(prob, scale=scale, name=name, _solve_s=time.perf_counter() - t0)

    def finish(self, prob: Any, *, scale: float | None = None, name: str | None = None,
               rel_gap: float = MODEL_REL_GAP, _solve_s: float | None = None) -> SolveResult:
        """Repair, verify exactly, certify and export a solved cvxpy problem over this model.

        Parameters
        ----------
        prob : cvxpy.Problem
            Solved; it must contain every constraint of :attr:`constraints`.
        scale : float, optional
            The size of your objective's range; a proven gap at most
            ``rel_gap * max(|value|, scale)`` makes the status ``optimal``. Default 1.
        name : str, optional
            The objective's name in the mechanism file (default ``"custom"``).

        Returns
        -------
        SolveResult
            ``optimal`` (verified, bound proven, gap closed), ``feasible`` (verified; the
            message says why the optimum is not proven), ``infeasible`` (your constraints
            exclude every private channel, as the solver reports), ``error``.

        Raises
        ------
        InputError
            When ``prob`` is not a cvxpy problem or lacks the model's constraints.
        """
        cp = _cp()
        from .solvers._repair import clean, repair

        if not isinstance(prob, cp.Problem):
            raise InputError("problem", f"must be a cvxpy.Problem, got {type(prob).__name__}")
        have = {id(c) for c in prob.constraints}
        if any(id(c) not in have for c in self.constraints):
            raise InputError("problem", "must include the model's constraints: cvxpy.Problem(objective, "
                             "m.constraints + your_constraints)")
        timings = {"solve": _solve_s} if _solve_s is not None else {}
        t0 = time.perf_counter()
        solver = prob.solver_stats.solver_name if prob.solver_stats is not None else None
        stats = dict(self.stats, cvxpy_status=prob.status, solver=solver)

        def fail(status, msg):
            timings["total"] = time.perf_counter() - t0 + (_solve_s or 0.0)
            return SolveResult(status, None, None, None, None, None, timings, msg, stats)

        if prob.status in ("infeasible", "infeasible_inaccurate"):
            return fail("infeasible", f"cvxpy ({solver}) reports the problem infeasible: your constraints exclude "
                        "every channel that meets the privacy notions")
        if prob.status not in ("optimal", "optimal_inaccurate") or self.Q.value is None:
            return fail("error", f"cvxpy ({solver}) status {prob.status!r}: no channel to export")
        minimize = isinstance(prob.objective, cp.Minimize)
        Q0 = clean(np.asarray(self.Q.value, dtype=float), 1e-12)
        mix = None
        if self.invertible:
            mix = np.array([y not in self.invertible for y in range(self.m)])
            for y, x in self.invertible.items():  # an invertible column keeps exactly one non-zero entry
                keep = Q0[x, y]
                Q0[:, y] = 0.0
                Q0[x, y] = keep
            Q0 = Q0 / Q0.sum(axis=1, keepdims=True)
        saved = {id(v): v.value for v in prob.variables()}
        try:
            before = _value_at(prob.objective.expr, self.Q, Q0)
            rep = repair(Q0, self.notions, mix_columns=mix)
            timings["repair_verify"] = time.perf_counter() - t0
            if not rep.certificate.verified:
                return fail("error", f"the solver's channel could not be repaired to pass the exact check: "
                            f"{rep.certificate.detail}")
            Qr = rep.Q
            after = _value_at(prob.objective.expr, self.Q, Qr)
            ours = {id(c) for c in self.constraints}
            user = [c for c in prob.constraints if id(c) not in ours]
            report, held = _constraint_report(user, self.Q, Qr)
            if not held:
                bad = next(c for c in report if not c["ok"])
                return fail("error", f"the exported channel breaks your constraint {bad['constraint']!r} by "
                            f"{bad['max_violation']:.3g} after the repair (t = {rep.t:.3g})")
            tb = time.perf_counter()
            cert_b = _certify(self, prob, user, [Q0, Qr], minimize, after, rel_gap, scale)
            timings["bound"] = time.perf_counter() - tb
        finally:
            for v in prob.variables():
                v.value = saved[id(v)]
        bound, proven, method, note = cert_b
        conflict = False
        if bound is not None:
            beyond = (bound - after) if minimize else (after - bound)
            size = max(abs(after), 1.0 if scale is None else scale)
            if beyond > 0:
                # the exported channel meets your constraints to MODEL_CONSTRAINT_TOL, not exactly
                if beyond <= MODEL_CONSTRAINT_TOL * size:
                    bound = after
                else:
                    conflict = True
        gap = abs(after - bound) if bound is not None else None
        size = max(abs(after), 1.0 if scale is None else float(scale))
        closed = gap is not None and gap <= rel_gap * size and not conflict
        status = "optimal" if (proven and closed) else "feasible"
        message = note
        if conflict:
            message = (f"the exported channel's objective {after!r} beats the bound {bound!r}: the bound is wrong "
                       "(please report the problem)")
            status = "feasible"
        elif proven and not closed and not message:
            message = f"the proven gap {gap:.3g} is above the optimality tolerance {rel_gap:g} (relative)"
        kind = name or "custom"
        objective = {"kind": kind, "sense": "minimize" if minimize else "maximize", "value": after,
                     "bound": bound, "gap": gap, "expression": _short(prob.objective.expr)}
        if self.problem is not None and kind == self.problem.objective.kind:
            objective.update({k: v for k, v in self.problem.objective.to_spec().items() if k != "kind"})
        cert = rep.certificate.to_dict()
        cert.update(repair_t=rep.t, repair_cost=abs(after - before), bound_method=method,
                    bound_proven=bool(proven and bound is not None), constraints=report)
        if note:
            cert["note"] = note
        privacy = [n.to_spec(self.inputs) for n in self.notions]
        stats["repair"] = {"t": rep.t, "objective_before": before, "objective_after": after}
        from ._settle import _jsonable

        extra = {"solver": {k: v for k, v in stats.items() if _jsonable(v)}}
        mech = Mechanism(self.inputs, self.outputs, Qr, privacy, objective, cert, extra)
        timings["total"] = time.perf_counter() - t0 + (_solve_s or 0.0)
        return SolveResult(status, mech, after, bound, gap, rep.certificate, timings, message, stats)


def check_dcp(objective: Any, constraints: Sequence) -> None:
    """One clear line for a non-convex objective or constraint (cvxpy's DCP rules)."""
    cp = _cp()
    if not objective.is_dcp():
        sense = "Minimize needs a convex" if isinstance(objective, cp.Minimize) else "Maximize needs a concave"
        raise InputError("objective", f"is not DCP ({sense} expression; cvxpy's curvature of "
                         f"{_short(objective.expr, 80)!r} is {objective.expr.curvature}): write it with cvxpy atoms "
                         "that prove convexity, or, for a convex utility to maximise over free outputs, use "
                         "mechopt.solve_sublinear")
    for i, c in enumerate(constraints):
        if not hasattr(c, "is_dcp"):
            raise InputError(f"constraints[{i}]", f"must be a cvxpy constraint, got {c!r}")
        if not c.is_dcp():
            raise InputError(f"constraints[{i}]", f"is not DCP: {_short(c, 80)!r} (cvxpy needs convex <= concave, "
                             "affine == affine)")


def model(privacy: Any, inputs: Any = None, outputs: Any = None, *, invertible: dict | None = None) -> ChannelModel:
    """A private labeled channel as a cvxpy model, with the reduced privacy constraints.

    Parameters
    ----------
    privacy : Problem, dict, path, Notion or list of Notion / problem-file entries
        A problem (its inputs, outputs, objective and constraints come with it), or the
        notions alone.
    inputs : list of str or int
        With notions: the input labels (or their number).
    outputs : list of str, int or "inputs"
        With notions: the output labels, their number, or ``"inputs"`` (default).
    invertible : dict, optional
        ULDP only: ``{output label: input label}`` for outputs fixed as invertible
        (one non-zero entry, at that non-sensitive input); every other output is
        protected. ULDP's roles are a discrete choice (the labeled solver picks them with
        a MILP); here they are fixed, so a bound holds for these roles only.

    Returns
    -------
    ChannelModel
        ``m.Q`` (cvxpy Variable, k × m, ``nonneg``) and ``m.constraints``.

    Raises
    ------
    InputError
        For free outputs, missing inputs, bad notions or roles.

    Examples
    --------
    >>> import mechopt
    >>> m = mechopt.model([mechopt.LDP(1.0)], inputs=4)
    >>> m.Q.shape, m.stats["privacy_rows"]       # 4 columns x (4 + 4 + 1) clique rows
    ((4, 4), 36)
    """
    from .solvers.labeled._lp import build_lp

    cp = _cp()
    problem, notions, labels, outs = _resolve(privacy, inputs, outputs)
    k, m = len(labels), len(outs)
    inv: dict[int, int] = {}
    uldp = [n for n in notions if isinstance(n, ULDP)]
    if invertible:
        if not uldp:
            raise InputError("invertible", "fixes ULDP roles: the notions have no ULDP")
        if not isinstance(invertible, dict):
            raise InputError("invertible", f"must map output labels to input labels, got {invertible!r}")
        sens = set().union(*[set(u.sensitive) for u in uldp])
        opos = {lab: j for j, lab in enumerate(outs)}
        ipos = {lab: i for i, lab in enumerate(labels)}
        for y, x in invertible.items():
            if str(y) not in opos:
                raise InputError(f"invertible[{y!r}]", f"is not an output; outputs: {list(outs)!r}")
            if str(x) not in ipos:
                raise InputError(f"invertible[{y!r}]", f"{x!r} is not an input; inputs: {list(labels)!r}")
            if ipos[str(x)] in sens:
                raise InputError(f"invertible[{y!r}]", f"{x!r} is sensitive: an invertible output must reveal a "
                                 "non-sensitive input only (Murakami & Kawamoto, Def. 2)")
            inv[opos[str(y)]] = ipos[str(x)]
    prot = np.array([y for y in range(m) if y not in inv], dtype=int)
    inv_cols = np.array(sorted(inv), dtype=int)
    others = [n for n in notions if not isinstance(n, ULDP)]
    parts = [(notions, prot)] + ([(others, inv_cols)] if len(inv_cols) and others else [])
    n_q = k * m
    subs = []
    aux0 = n_q
    stats = {"privacy_rows": 0, "auxiliaries": 0, "pairs_before": 0, "pairs_after": 0, "groups": 0}
    for ns, cols in parts:
        if not len(cols):
            continue
        c, A_ub, b_ub, A_eq, b_eq, bounds, nq_s, st, integ = build_lp(ns, k, len(cols), np.zeros((k, len(cols))), {})
        n_aux = len(c) - nq_s
        subs.append((A_ub, b_ub, A_eq[k:], b_eq[k:], cols, nq_s, aux0))
        aux0 += n_aux
        for key in ("pairs_before", "pairs_after", "groups"):
            stats[key] += st[key]
    n = aux0
    ub = [(_embed(A, k, m, cols, nq, a0, n), b) for A, b, _, _, cols, nq, a0 in subs if A.shape[0]]
    eq = [(_embed(E, k, m, cols, nq, a0, n), b) for _, _, E, b, cols, nq, a0 in subs if E.shape[0]]
    for y, x in inv.items():  # an invertible column: zero except at its owner
        rows = [r for r in range(k) if r != x]
        eq.append((sp.csr_matrix((np.ones(len(rows)), (np.arange(len(rows)), np.array(rows) * m + y)),
                                 shape=(len(rows), n)), np.zeros(len(rows))))
    A_ub = sp.vstack([a for a, _ in ub]).tocsr() if ub else sp.csr_matrix((0, n))
    b_ub = np.concatenate([b for _, b in ub]) if ub else np.zeros(0)
    A_eq = sp.vstack([a for a, _ in eq]).tocsr() if eq else sp.csr_matrix((0, n))
    b_eq = np.concatenate([b for _, b in eq]) if eq else np.zeros(0)
    Q = cp.Variable((k, m), nonneg=True, name="Q")
    aux = cp.Variable(n - n_q, nonneg=True, name="aux") if n > n_q else None
    xq = cp.vec(Q, order="C")

    def lin(A):
        e = A[:, :n_q] @ xq
        return e + A[:, n_q:] @ aux if aux is not None else e

    cons = [cp.sum(Q, axis=1) == 1]
    if A_ub.shape[0]:
        cons.append(lin(A_ub) <= b_ub)
    if A_eq.shape[0]:
        cons.append(lin(A_eq) == b_eq)
    stats.update(privacy_rows=int(A_ub.shape[0] + A_eq.shape[0]), auxiliaries=int(n - n_q))
    rowsum = sp.csr_matrix((np.ones(n_q), (np.repeat(np.arange(k), m), np.arange(n_q))), shape=(k, n))
    lp = {"A_ub": A_ub, "b_ub": b_ub, "A_eq": sp.vstack([rowsum, A_eq]).tocsr(),
          "b_eq": np.concatenate([np.ones(k), b_eq]), "n_q": n_q, "n": n}
    return ChannelModel(Q, cons, aux, notions, labels, outs, problem, inv, stats, lp)
