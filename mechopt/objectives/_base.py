"""The objective registry: :class:`Objective` values, :class:`ObjectiveType` behaviour, the parser.

An :class:`Objective` is data (a kind, a prior, a loss matrix, values, terms); its
:attr:`Objective.type` is the registered :class:`ObjectiveType` that owns everything the
rest of mechopt asks of an objective: parsing and validating its problem-file fields, its
value on a channel, its natural scale, floor and unit, whether it is minimised, and the
solver hooks (a column utility for free outputs, a cost matrix and minimax terms for
labeled outputs). Callers ask the type, never compare kind names.

A new objective is a subclass of :class:`ObjectiveType` registered with
:func:`register_objective`, from any module (a test file included); see
``docs/architecture.md``. May import: :mod:`mechopt._errors`, :mod:`mechopt._validation`,
:mod:`mechopt.notions`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .._errors import InputError
from .._validation import check_prior

#: fields every objective accepts besides its own: the kind and the prior (``p0`` is its alias)
COMMON_FIELDS = frozenset({"kind", "prior", "p0"})


@dataclass(frozen=True)
class Objective:
    """A utility of docs/model.md, resolved against the inputs and outputs.

    Attributes
    ----------
    kind : str
        A registered objective name (:func:`objective_kinds`); :attr:`type` is its
        :class:`ObjectiveType`.
    prior : ndarray, shape (k,)
        The input distribution (``p0`` for ``estimation_variance``).
    loss : ndarray or None, shape (k, m)
        ``L[x, y]`` for the loss objectives: over the outputs (labeled) or over the
        estimates = inputs (``bayes_risk``).
    values : ndarray or None, shape (k,)
        ``f(x)`` (``mmse``; numeric labels of an absolute or squared loss).
    loss_name : str or list or None
        The loss as the problem file gave it (``"hamming"`` or a matrix), for ``to_spec``.
    terms : tuple of (float, Objective)
        A weighted sum's weights and terms.
    params : tuple of (str, Any)
        Further fields of a registered objective, as its type parsed them.
    """

    kind: str
    prior: np.ndarray
    loss: np.ndarray | None = None
    values: np.ndarray | None = None
    loss_name: str | list | None = None
    terms: tuple = ()
    params: tuple = ()

    def param(self, name: str, default: Any = None) -> Any:
        """A further field of a registered objective (:attr:`params`)."""
        return dict(self.params).get(name, default)

    @property
    def type(self) -> ObjectiveType:
        """The registered :class:`ObjectiveType` of :attr:`kind`."""
        return objective_type(self.kind)

    @property
    def minimize(self) -> bool:
        """Whether lower values are better (all objectives but mutual information)."""
        return self.type.minimize

    def to_spec(self) -> dict:
        """The problem-file entry (docs/formats.md) that parses back to this objective."""
        return self.type.to_spec(self)


@dataclass(frozen=True)
class LabeledForm:
    """A labeled objective as the LP reads it: ``sum C * Q + sum_i w_i max_x (L_i Q^T)[x, x]``.

    ``loss`` is set when the objective is exactly the expected loss ``sum_x P(x) sum_y
    Q[x, y] L(x, y)`` (``cost = P L``); the labeled solvers' symmetry reductions need it.
    """

    cost: np.ndarray | None
    minimax: tuple = ()
    loss: np.ndarray | None = None


@dataclass(frozen=True)
class Context:
    """What an objective's parser may read: the inputs, the outputs (``"free"`` or labels), the notions."""

    inputs: tuple
    outputs: Any
    notions: tuple

    @property
    def free(self) -> bool:
        return self.outputs == "free"


class ObjectiveType:
    """The behaviour of one objective kind; subclass it and :func:`register_objective` an instance.

    Class attributes
    ----------------
    name : str
        The ``kind`` of the problem file.
    fields : frozenset of str
        Problem-file fields besides ``kind``, ``prior`` and ``p0``.
    outputs : {"labeled", "free", "any"}
        The outputs it is defined over: labeled (a cost matrix, :meth:`labeled_form`),
        chosen by the solver (a column utility, :meth:`column_utility`), or either (a
        weighted sum, by its terms).
    minimize : bool
        Lower is better.
    column_sum : bool
        ``value = offset + sign * sum_y mu(q_y)`` with ``mu`` sublinear
        (:meth:`column_utility`, :meth:`offset_sign`).
    separable : bool
        ``mu(v) = sum_x g(P(x) v[x], P . v)``: a sum over inputs of one function of an
        entry and the column's mass (the separable pricing of the free solvers).
    floor : float or None
        A value no channel's objective goes below (a minimisation), or None.
    unit_text : str
        What the value is measured in, for people (:meth:`unit`).
    """

    name: str = ""
    fields: frozenset = frozenset()
    outputs: str = "labeled"
    minimize: bool = True
    column_sum: bool = False
    separable: bool = False
    floor: float | None = None
    unit_text: str = ""
    #: a k x k loss matrix is built from the inputs (sized before it is built)
    square_loss: bool = False
    #: may be a term of a weighted objective (labeled types by their labeled form, free ones by columns)
    weighable: bool = True
    #: the objective of a problem file that names none (the first registered for its outputs)
    default: bool = False
    #: said after the list of fields when a field is not one of them
    fields_note: str = ""

    def make(self, prior: np.ndarray, **fields: Any) -> Objective:
        """An :class:`Objective` of this type on ``prior`` (fields as :meth:`parse` returns them; not validated)."""
        return Objective(self.name, np.asarray(prior, dtype=float), **fields)

    # -- parsing ----------------------------------------------------------------------

    def parse(self, spec: dict, prior: np.ndarray, ctx: Context) -> dict:
        """The keyword arguments of :class:`Objective` besides kind and prior (validated).

        Every error is an :class:`~mechopt._errors.InputError` naming ``objective.<field>``.
        Default: the further fields, as given, in :attr:`Objective.params`.
        """
        return {"params": tuple(sorted((k, v) for k, v in spec.items() if k in self.fields))}

    def outputs_rule(self, free: bool) -> str | None:
        """Why the outputs do not suit this objective (the rule of an error on ``outputs``), or None."""
        if self.outputs == "labeled" and free:
            return f"{self.name} needs labeled outputs ('inputs' or a list)"
        if self.outputs == "free" and not free:
            return f"objective {self.name!r} chooses its own outputs: write outputs: free"
        return None

    def to_spec(self, obj: Objective) -> dict:
        """The problem-file entry of ``obj``."""
        out: dict[str, Any] = {"kind": obj.kind, "prior": [float(v) for v in obj.prior]}
        out.update({k: v for k, v in obj.params})
        return out

    # -- values -----------------------------------------------------------------------

    def evaluate(self, obj: Objective, Q: np.ndarray) -> float:
        """The objective of channel ``Q`` (shape (k, m)) in its natural units."""
        if self.column_sum:
            offset, sign = self.offset_sign(obj)
            return float(offset + sign * self.column_utility(obj, Q).sum())
        form = self.labeled_form(obj)
        if form is None:
            # register_objective refuses such a type; an unregistered one reaches here
            raise TypeError(f"objective {self.name!r} has no value: give labeled_form, column_utility or evaluate")
        value = 0.0 if form.cost is None else float(np.sum(form.cost * Q))
        return value + float(sum(w * np.max(np.sum(Q * L, axis=1)) for w, L in form.minimax))

    def scale(self, obj: Objective) -> float:
        """The size of the natural range, against which gaps are judged (0: none).

        Default for a labeled objective: the largest ``|value|`` of any channel by its
        :meth:`labeled_form`, ``sum_x max_y |C[x, y]| + sum_i w_i max |L_i|``.
        """
        form = self.labeled_form(obj) if self.outputs == "labeled" else None
        if form is None:
            return 0.0
        linear = 0.0 if form.cost is None or not form.cost.size else float(np.abs(form.cost).max(axis=1).sum())
        return linear + float(sum(abs(w) * float(np.max(np.abs(L))) for w, L in form.minimax if L.size))

    def value_floor(self, obj: Objective) -> float | None:
        """A value every channel's objective is at least, or None."""
        return self.floor

    def evaluation_error(self, obj: Objective, Q: np.ndarray) -> float:
        """A bound on the relative rounding error of :meth:`evaluate` at ``Q`` (0: negligible)."""
        return 0.0

    def unit(self, loss: Any = None) -> str:
        """The unit of the value for people (``loss``: the problem file's loss, if any)."""
        return self.unit_text

    # -- solver hooks -----------------------------------------------------------------

    def column_utility(self, obj: Objective, V: np.ndarray) -> np.ndarray:
        """``mu(v)`` for every column of ``V`` (shape (k, R)); only when :attr:`column_sum`."""
        raise ValueError(f"objective {self.name!r} is not a sum over columns")

    def offset_sign(self, obj: Objective) -> tuple[float, float]:
        """``(offset, sign)`` with ``value = offset + sign * sum mu`` (:attr:`column_sum`)."""
        raise ValueError(f"objective {self.name!r} is not a sum over columns")

    def labeled_form(self, obj: Objective) -> LabeledForm | None:
        """The LP form of a labeled objective, or None (free outputs)."""
        return None

    def is_column_sum(self, obj: Objective) -> bool:
        """Whether ``obj`` is a sum over columns (a weighted sum asks its terms)."""
        return self.column_sum

    def spec_value(self, Q: np.ndarray, spec: dict, prior, labeled: bool) -> float | None:
        """The value of a problem-file objective ``spec`` on ``Q`` (k x m) under ``prior``; None if undefined.

        ``labeled``: the outputs of ``Q`` are the inputs (a labeled objective is defined
        only then). The closed forms report their objective through this.
        """
        k, m = np.shape(Q)
        if self.outputs == "labeled" and (not labeled or m != k):
            return None
        inputs = tuple(str(i) for i in range(k))
        fields = {key: v for key, v in spec.items() if key in self.fields}
        obj = objective_from_spec({**fields, "kind": self.name, "prior": [float(p) for p in prior]}, inputs,
                                  inputs if self.outputs == "labeled" else "free")
        return float(self.evaluate(obj, np.asarray(Q, dtype=float)))


REGISTRY: dict[str, ObjectiveType] = {}


def register_objective(objective_type: Any, *, replace: bool = False) -> Any:
    """Register an :class:`ObjectiveType` (an instance, or a subclass to instantiate) under its ``name``.

    Returns its argument, so it can decorate a class. Registering another type under a
    taken name is refused unless ``replace``; the same class defined again (a re-run
    script or notebook cell: same module and qualified name) replaces the old one.

    Examples
    --------
    >>> "mmse" in REGISTRY and REGISTRY["mmse"].column_sum
    True
    """
    t = objective_type() if isinstance(objective_type, type) else objective_type
    if not isinstance(t, ObjectiveType):
        raise InputError("objective", f"register an ObjectiveType, got {objective_type!r}")
    name = t.name
    if not isinstance(name, str) or not name:
        raise InputError("objective", f"an objective type needs a non-empty 'name', got {name!r}")
    old = REGISTRY.get(name)
    same = old is not None and (type(old).__module__, type(old).__qualname__) == (type(t).__module__,
                                                                                   type(t).__qualname__)
    if old is not None and not same and not replace:
        raise InputError("objective", f"an objective named {name!r} is already registered")
    if t.outputs not in ("labeled", "free", "any"):
        raise InputError("objective", f"objective {name!r}: outputs must be 'labeled', 'free' or 'any', got "
                         f"{t.outputs!r}")
    clash = sorted(set(t.fields) & COMMON_FIELDS)
    if clash:
        raise InputError("objective", f"objective {name!r}: {clash[0]!r} is a field of every objective")
    cls = type(t)
    if not t.column_sum and cls.evaluate is ObjectiveType.evaluate and cls.labeled_form is ObjectiveType.labeled_form:
        raise InputError("objective", f"objective {name!r} has no value: give labeled_form (labeled outputs), "
                         "column_sum with column_utility (free outputs) or evaluate")
    REGISTRY[name] = t
    return objective_type


def objective_kinds() -> list[str]:
    """The registered objective kinds, in registration order (built-ins first)."""
    return list(REGISTRY)


def objective_type(kind: Any) -> ObjectiveType:
    """The registered type of ``kind``; an unknown kind is an InputError on ``objective.kind``."""
    t = REGISTRY.get(kind) if isinstance(kind, str) else None
    if t is None:
        raise InputError("objective.kind", f"unknown objective {kind!r}; expected one of {objective_kinds()}")
    return t


def default_kind(free: bool) -> str:
    """The objective of a problem file without one: the first registered for its outputs."""
    return next(n for n, t in REGISTRY.items() if t.default and t.outputs == ("free" if free else "labeled"))


def resolve_prior(spec: dict, k: int, notions: Sequence) -> tuple[np.ndarray, str]:
    """The objective's prior and the field it came from: ``prior`` or ``p0``, else a LIP notion's prior, else uniform."""
    from ..notions import LIP

    if "p0" in spec and "prior" in spec:
        raise InputError("objective.p0", "give either 'prior' or 'p0' (the same field under two names), not both")
    key = "p0" if "p0" in spec else "prior"
    if key in spec:
        return check_prior(spec[key], f"objective.{key}", k=k), key
    lips = [n for n in notions if isinstance(n, LIP)]
    return (np.asarray(lips[0].prior, dtype=float) if lips else np.full(k, 1.0 / k)), key


def objective_from_spec(spec: Any, inputs: Sequence[str], outputs: Any, notions: Sequence = ()) -> Objective:
    """Validate a problem file's ``objective`` (docs/formats.md) against the inputs, outputs and notions.

    Raises
    ------
    InputError
        Naming the field: an unknown kind, a field the kind does not have, a malformed
        value, or outputs the kind is not defined over.

    Examples
    --------
    >>> o = objective_from_spec({"kind": "mmse", "values": [0, 1]}, ["a", "b"], "free")
    >>> o.kind, o.prior.tolist(), o.type.column_sum
    ('mmse', [0.5, 0.5], True)
    """
    ctx = Context(tuple(inputs), outputs, tuple(notions))
    if spec is None:
        spec = {"kind": default_kind(ctx.free)}
    if not isinstance(spec, dict):
        raise InputError("objective", f"must be a mapping with a 'kind' key, got {spec!r}")
    t = objective_type(spec.get("kind"))
    allowed = COMMON_FIELDS | t.fields
    extra = sorted(set(spec) - allowed)
    if extra:
        note = f"; {t.fields_note}" if t.fields_note else ""
        raise InputError(f"objective.{extra[0]}", f"is not a field of objective {t.name!r} (fields: "
                         f"{sorted(allowed)}{note})")
    prior, _ = resolve_prior(spec, len(ctx.inputs), ctx.notions)
    rule = t.outputs_rule(ctx.free)
    if rule and t.outputs == "labeled":  # a labeled objective's fields are read against the outputs
        raise InputError("outputs", rule)
    kwargs = t.parse(spec, prior, ctx)
    if rule:
        raise InputError("outputs", rule)
    return Objective(t.name, prior, **kwargs)
