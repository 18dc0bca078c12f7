"""Built-in additions to the labeled LP: minimax rows, weighted sums, constraints on the channel.

Everything here is *linear in the channel* (or a maximum of linear forms), so it is
added to the labeled LP of :mod:`mechopt.solvers.labeled._lp` as extra rows — the same
reduced privacy rows, the same safe bound — and to the cvxpy model of
:mod:`mechopt._model` as the same linear forms. The objectives themselves (the minimax
loss ``max_x sum_y Q[x, y] L(x, y)``, weighted sums ``sum_i w_i loss_i``) are registered
types of :mod:`mechopt.objectives`; their :meth:`~mechopt.objectives.ObjectiveType.labeled_form`
gives a cost matrix and minimax terms, and here each minimax term becomes one epigraph
variable ``t`` with ``k`` rows ``sum_y Q[x, y] L(x, y) <= t``. Problem-file
``constraints`` are rows ``R vec(Q) <= r`` with ``vec`` row-major (``Q[x, y]`` at ``x*m + y``):

  - ``min_truthful`` — ``Q[x, x] >= v_x`` (the output named like the input);
  - ``max_loss`` — ``sum_y Q[x, y] L(x, y) <= c_x`` (a per-input expected-loss cap);
  - ``max_frequency`` — ``sum_x P(x) Q[x, y] <= c_y`` (how often an output is reported).

Extra constraints are utility requirements, not privacy: they are checked on the
exported channel in floating point to ``CONSTRAINT_TOL`` (privacy stays exact), and they
can make a problem infeasible — a status, never an exception.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import scipy.sparse as sp

from ._errors import InputError
from ._validation import check_finite

#: the kinds of problem-file constraints
CONSTRAINT_KINDS = ("min_truthful", "max_loss", "max_frequency")
#: extra constraints hold on the exported channel to this (relative to the row's scale)
CONSTRAINT_TOL = 1e-9


@dataclass(frozen=True)
class ChannelConstraint:
    """Linear rows on a labeled channel: ``rows @ Q.ravel() <= rhs``.

    Attributes
    ----------
    kind : str
        ``min_truthful``, ``max_loss`` or ``max_frequency``.
    rows : scipy.sparse.csr_matrix, shape (r, k*m)
        Coefficients on ``Q[x, y]`` at column ``x*m + y``.
    rhs : ndarray, shape (r,)
    names : tuple of str
        What each row bounds (an input or output label), for reports.
    spec : dict
        The problem-file entry, as validated.
    """

    kind: str
    rows: sp.csr_matrix
    rhs: np.ndarray
    names: tuple[str, ...]
    spec: dict = field(default_factory=dict)

    def violation(self, Q: np.ndarray) -> np.ndarray:
        """``rows @ vec(Q) - rhs`` (positive where the channel breaks a row)."""
        return self.rows @ np.asarray(Q, dtype=float).ravel() - self.rhs

    def scale(self) -> np.ndarray:
        """Each row's size (for the tolerance): ``max(1, |rhs|, sum |coefficients|)``."""
        absrow = np.asarray(abs(self.rows).sum(axis=1)).ravel()
        return np.maximum(1.0, np.maximum(np.abs(self.rhs), absrow))


# -- validation ----------------------------------------------------------------------


def _number(v: Any, where: str, lo: float = -math.inf, hi: float = math.inf) -> float:
    f = check_finite(v, where)
    if not lo <= f <= hi:
        raise InputError(where, f"must be in [{lo:g}, {hi:g}], got {f!r}")
    return f


def _per_label(value: Any, labels: Sequence[str], where: str, lo: float, hi: float) -> np.ndarray:
    """A number for every label, or a mapping {label: number}; NaN where none is given."""
    out = np.full(len(labels), np.nan)
    if isinstance(value, dict):
        if not value:
            raise InputError(where, "must name at least one label")
        pos = {lab: i for i, lab in enumerate(labels)}
        for lab, v in value.items():
            if str(lab) not in pos:
                raise InputError(f"{where}[{lab!r}]", f"is not one of {list(labels)!r}")
            out[pos[str(lab)]] = _number(v, f"{where}[{lab!r}]", lo, hi)
        return out
    out[:] = _number(value, where, lo, hi)
    return out


def parse_constraints(spec: Any, inputs: Sequence[str], outputs: Any, objective) -> tuple[ChannelConstraint, ...]:
    """Validate the problem file's ``constraints`` list (see the module doc).

    Raises
    ------
    InputError
        For free outputs, a malformed entry, an unknown kind or field, a value out of
        range, a label that is not an input or output, or (``min_truthful``) an input with
        no output of the same name.

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt.objectives import Objective
    >>> obj = Objective("expected_loss", np.full(2, 0.5), loss=1 - np.eye(2))
    >>> (c,) = parse_constraints([{"kind": "min_truthful", "value": 0.6}], ["a", "b"], ("a", "b"), obj)
    >>> c.rows.toarray().tolist(), c.rhs.tolist()
    ([[-1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, -1.0]], [-0.6, -0.6])
    """
    if spec is None:
        return ()
    if outputs == "free":
        raise InputError("constraints", "need labeled outputs ('inputs' or a list of labels): with free outputs "
                         "the outputs are not known in advance")
    if not isinstance(spec, list):
        raise InputError("constraints", f"must be a list of mappings with a 'kind' key, got {spec!r}")
    return tuple(_constraint(c, inputs, tuple(outputs), objective, f"constraints[{i}]") for i, c in enumerate(spec))


_FIELDS = {"min_truthful": {"value"}, "max_loss": {"value", "loss", "values"},
           "max_frequency": {"value", "prior"}}


def _constraint(c: Any, inputs, outputs, objective, where: str) -> ChannelConstraint:
    from ._validation import check_prior
    from .objectives import loss_matrix_of as _loss_matrix

    if not isinstance(c, dict):
        raise InputError(where, f"must be a mapping with a 'kind' key, got {c!r}")
    kind = c.get("kind")
    if kind not in CONSTRAINT_KINDS:
        raise InputError(f"{where}.kind", f"unknown constraint {kind!r}; expected one of {list(CONSTRAINT_KINDS)}")
    allowed = _FIELDS[kind] | {"kind"}
    extra = sorted(set(c) - allowed)
    if extra:
        raise InputError(f"{where}.{extra[0]}", f"is not a field of constraint {kind!r} (fields: {sorted(allowed)})")
    if "value" not in c:
        raise InputError(f"{where}.value", f"is required for constraint {kind!r}")
    k, m = len(inputs), len(outputs)
    R, C, V, rhs, names = [], [], [], [], []
    if kind == "min_truthful":
        v = _per_label(c["value"], inputs, f"{where}.value", 0.0, 1.0)
        pos = {lab: j for j, lab in enumerate(outputs)}
        for x in np.flatnonzero(~np.isnan(v)):
            y = pos.get(inputs[x])
            if y is None:
                raise InputError(f"{where}.value", f"input {inputs[x]!r} has no output of the same name "
                                 "(min_truthful bounds Q[x, x]: name the outputs like the inputs)")
            R.append(len(rhs)), C.append(int(x) * m + y), V.append(-1.0)
            rhs.append(-v[x]), names.append(inputs[x])
    elif kind == "max_loss":
        values = None
        if "values" in c:
            vs = c["values"]
            if not isinstance(vs, (list, tuple)) or len(vs) != k:
                raise InputError(f"{where}.values", f"must list one number per input ({k}), got {vs!r}")
            values = np.array([_number(t, f"{where}.values") for t in vs])
        elif objective is not None and objective.values is not None:
            values = objective.values
        if "loss" in c:
            L = _loss_matrix(c["loss"], inputs, outputs, values, f"{where}.loss")
        elif objective is not None and objective.loss is not None and objective.loss.shape == (k, m):
            L = objective.loss
        else:
            L = _loss_matrix("hamming", inputs, outputs, None, f"{where}.loss")
        cap = _per_label(c["value"], inputs, f"{where}.value", -math.inf, math.inf)
        for x in np.flatnonzero(~np.isnan(cap)):
            ys = np.flatnonzero(L[x])
            r = len(rhs)
            R += [r] * len(ys)
            C += (int(x) * m + ys).tolist()
            V += L[x, ys].tolist()
            rhs.append(cap[x]), names.append(inputs[x])
    else:  # max_frequency
        if "prior" in c:
            P = check_prior(c["prior"], f"{where}.prior", k=k)
        else:
            P = objective.prior if objective is not None else np.full(k, 1.0 / k)
        cap = _per_label(c["value"], outputs, f"{where}.value", 0.0, 1.0)
        xs = np.flatnonzero(P)
        for y in np.flatnonzero(~np.isnan(cap)):
            r = len(rhs)
            R += [r] * len(xs)
            C += (xs * m + int(y)).tolist()
            V += P[xs].tolist()
            rhs.append(cap[y]), names.append(outputs[y])
    rows = sp.csr_matrix((V, (R, C)), shape=(len(rhs), k * m))
    return ChannelConstraint(kind, rows, np.array(rhs, dtype=float), tuple(names), dict(c))


# -- the labeled LP with extra rows -----------------------------------------------------


def worst_case_terms(obj) -> list[tuple[float, np.ndarray]]:
    """``(weight, L)`` of every minimax term of an objective (its type's :meth:`labeled_form`)."""
    form = obj.type.labeled_form(obj)
    return [] if form is None else list(form.minimax)


def linear_cost(obj) -> np.ndarray | None:
    """The expected-loss part ``C`` of a labeled objective (``sum C * Q``), None if none."""
    form = obj.type.labeled_form(obj)
    return None if form is None else form.cost


def row_loss_matrix(L: np.ndarray) -> sp.csr_matrix:
    """``W`` (k, k*m) with ``W @ vec(Q) = (sum_y Q[x, y] L[x, y])_x``, ``vec`` row-major."""
    k, m = L.shape
    xs, ys = np.nonzero(L)
    return sp.csr_matrix((L[xs, ys], (xs, xs * m + ys)), shape=(k, k * m))


def channel_map(n: int, n_q: int, m: int, st: dict) -> sp.csr_matrix:
    """``T`` (n_q, n): the channel's entries as a linear map of build_lp's variables.

    The channel is ``x[:n_q]``, except for ULDP alone, where a candidate column's
    variables hold the protected part only and the invertible masses are added
    (see :func:`mechopt.solvers.labeled._lp.build_lp`).
    """
    T = sp.eye(n_q, n, format="csr")
    split = st.get("split_mass")
    if split is not None and split[3]:
        a_vars, owners, outs, _ = split
        T = T + sp.csr_matrix((np.ones(len(a_vars)), (np.asarray(owners) * m + np.asarray(outs),
                                                     np.asarray(a_vars))), shape=(n_q, n))
    return T.tocsr()


@dataclass(frozen=True)
class LabeledExtension:
    """What the labeled LP needs for a new objective or constraints.

    ``cost`` is the linear part (on ``Q``), ``offset`` a constant added to the LP's
    objective and bound, ``extend`` appends rows and epigraph variables to build_lp's
    matrices, ``check`` measures the constraints on an exported channel.
    """

    cost: np.ndarray
    offset: float
    extend: Callable
    constraints: tuple[ChannelConstraint, ...]

    def check(self, Q: np.ndarray) -> tuple[bool, list[dict]]:
        return check_constraints(self.constraints, Q)


def check_constraints(constraints: Sequence[ChannelConstraint], Q: np.ndarray) -> tuple[bool, list[dict]]:
    """Measure every constraint on a channel: ``(all hold within CONSTRAINT_TOL, report)``."""
    report = []
    ok = True
    for c in constraints:
        viol = c.violation(Q) / c.scale()
        worst = float(viol.max()) if viol.size else 0.0
        good = worst <= CONSTRAINT_TOL
        ok &= good
        entry = {"kind": c.kind, "rows": len(c.rhs), "max_violation": max(0.0, worst), "ok": bool(good)}
        if not good:
            entry["worst"] = c.names[int(np.argmax(viol))]
        report.append(entry)
    return ok, report


def labeled_extension(problem) -> LabeledExtension:
    """The LP additions of a labeled problem's objective and constraints.

    Each minimax term ``w max_x l_x(Q)`` gets a variable ``t' in [0, 1]`` with
    ``t = Lmin + (Lmax - Lmin) t'``: every row loss is a convex combination of the entries
    of ``L``, so some optimal solution has ``t'`` in the box [0, 1] the safe bound needs
    (:func:`mechopt.solvers.backends._safe_bound.lp_lower_bound`); the constant ``w Lmin`` is the
    offset.
    """
    obj = problem.objective
    k, m = problem.k, len(problem.outputs)
    cost = linear_cost(obj)
    cost = np.zeros((k, m)) if cost is None else cost
    worst = worst_case_terms(obj)
    offset = 0.0
    epi = []
    for w, L in worst:
        lo, hi = float(L.min()), float(L.max())
        offset += w * lo
        if hi > lo and w > 0:
            epi.append((w, L, lo, hi))
    cons = tuple(problem.constraints)
    R = sp.vstack([c.rows for c in cons]).tocsr() if cons else None
    r = np.concatenate([c.rhs for c in cons]) if cons else None

    def extend(c, A_ub, b_ub, A_eq, b_eq, bounds, integrality, n_q, st):
        n = len(c)
        T = channel_map(n, n_q, m, st)
        blocks, rhs = [], []
        n_new = len(epi)
        for j, (_w, L, lo, hi) in enumerate(epi):
            W = row_loss_matrix(L) @ T
            col = sp.csr_matrix((np.full(k, -(hi - lo)), (np.arange(k), np.full(k, n + j))), shape=(k, n + n_new))
            blocks.append(sp.hstack([W, sp.csr_matrix((k, n_new))]).tocsr() + col)
            rhs.append(np.full(k, lo))
        if R is not None:
            blocks.append(sp.hstack([R @ T, sp.csr_matrix((R.shape[0], n_new))]).tocsr())
            rhs.append(r)
        A_old = sp.hstack([A_ub, sp.csr_matrix((A_ub.shape[0], n_new))]).tocsr()
        A_ub2 = sp.vstack([A_old] + blocks).tocsr()
        b_ub2 = np.concatenate([b_ub] + rhs)
        A_eq2 = sp.hstack([A_eq, sp.csr_matrix((A_eq.shape[0], n_new))]).tocsr()
        c2 = np.concatenate([c, [w * (hi - lo) for w, _, lo, hi in epi]])
        b2 = np.vstack([np.asarray(bounds, dtype=float), np.tile([0.0, 1.0], (n_new, 1))])
        int2 = np.concatenate([integrality, np.zeros(n_new, dtype=int)])
        st["extra_rows"] = int(A_ub2.shape[0] - A_ub.shape[0])
        st["rows"] = int(st.get("rows", 0)) + st["extra_rows"]
        st["variables"] = int(st.get("variables", 0)) + n_new
        return c2, A_ub2, b_ub2, A_eq2, b_eq, b2, int2

    return LabeledExtension(cost, offset, extend, cons)
