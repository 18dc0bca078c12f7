"""The objectives of docs/model.md, each a registered :class:`~._base.ObjectiveType`.

Every sublinear objective is written ``value(Q) = offset + sign * sum_y mu(q_y)``, where
``mu`` is convex and positively homogeneous of degree 1; the solver maximises
``sum_y mu(q_y)`` (Jiang, Li, Tandon, *Context-aware data aggregation with LIP*). The
labeled objectives are linear in the channel (expected loss) or a maximum of linear forms
(the minimax loss), so the labeled LP takes them as a cost matrix and epigraph rows.

May import: :mod:`mechopt._errors`, :mod:`mechopt._validation`, this package.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import InputError
from .._validation import check_channel, check_channel_prior, check_finite, check_prior
from ._base import REGISTRY, Context, LabeledForm, Objective, ObjectiveType, objective_from_spec
from ._losses import loss_matrix, loss_matrix_of, loss_unit
from ._risk import estimation_risk, risk_relative_error


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros_like(num, dtype=float)
    mask = den > 0
    out[mask] = num[mask] / den[mask]
    return out


class BuiltinObjective(ObjectiveType):
    """The common fields of the built-in objectives: ``values`` (numbers per input) and ``loss``."""

    fields = frozenset({"loss", "values"})
    uses_loss = False

    def parse(self, spec: dict, prior: np.ndarray, ctx: Context) -> dict:
        k = len(ctx.inputs)
        values = None
        if "values" in spec:
            v = spec["values"]
            if not isinstance(v, (list, tuple)) or len(v) != k:
                raise InputError("objective.values", f"must list one number per input ({k}), got {v!r}")
            try:
                values = np.array([float(t) for t in v])
            except (TypeError, ValueError):
                raise InputError("objective.values", f"must be numbers, got {v!r}") from None
            if not np.all(np.isfinite(values)):
                raise InputError("objective.values", "must be finite")
        if "loss" in spec and not self.uses_loss:
            users = ", ".join(n for n, t in REGISTRY.items() if getattr(t, "uses_loss", False))
            raise InputError("objective.loss", f"is only used by {users}, not {self.name!r}")
        out: dict[str, Any] = {"values": values, "loss_name": spec.get("loss")}
        out.update(self.parse_more(spec, prior, values, ctx))
        return out

    def parse_more(self, spec: dict, prior: np.ndarray, values, ctx: Context) -> dict:
        return {}

    def to_spec(self, obj: Objective) -> dict:
        out: dict[str, Any] = {"kind": obj.kind, "prior": [float(v) for v in obj.prior]}
        if obj.loss_name is not None:
            out["loss"] = obj.loss_name
        if obj.values is not None:
            out["values"] = [float(v) for v in obj.values]
        return out

    def spec_value(self, Q: np.ndarray, spec: dict, prior, labeled: bool) -> float | None:
        """The closed forms' evaluation (:func:`mechopt.closed_forms.objective_value`): validated, on arrays."""
        Q, P = check_channel_prior(Q, prior)
        return float(self.evaluate(Objective(self.name, P), Q))


def prior_range(P: np.ndarray, L: np.ndarray) -> float:
    """The range of a prior-weighted loss over all channels: the best value with no information
    (one report for every input, ``min_y sum_x P(x) L(x, y)``) minus the best with every input
    told apart (``sum_x P(x) min_y L(x, y)``).

    Every optimum lies in this range, under any privacy notion: the second term is below
    every channel's loss, the first is a constant channel's, and every notion admits a
    constant channel. A gap judged against it means the same for a loss in metres or in
    kilometres, and a loss whose largest entry dwarfs the prior's typical loss (squared
    distances on a large grid) does not make a 2 % gap look like 1e-4.

    Examples
    --------
    >>> import numpy as np
    >>> L = (np.arange(4)[:, None] - np.arange(4)[None]) ** 2.0    # squared loss on a line
    >>> prior_range(np.full(4, 0.25), L)    # report 1 or 2 for all
    1.5
    """
    return float((P @ L).min() - P @ L.min(axis=1))


class LossObjective(BuiltinObjective):
    """An objective on a loss matrix ``L`` (default ``hamming``), scaled by the span of its
    optima (:meth:`span`), or ``max |L|`` where that span is 0.

    ``unit`` (optional, a short text such as ``"km²"``) names the loss's unit for people;
    the places of :mod:`mechopt.geo` set it for the losses they build.
    """

    uses_loss = True
    fields = BuiltinObjective.fields | {"unit"}

    def parse_more(self, spec: dict, prior: np.ndarray, values, ctx: Context) -> dict:
        outputs = ctx.inputs if self.outputs == "free" else ctx.outputs
        loss = loss_matrix_of(spec.get("loss", "hamming"), ctx.inputs, outputs, values, "objective.loss")
        out: dict[str, Any] = {"loss": loss, "loss_name": spec.get("loss", "hamming")}
        if "unit" in spec:
            unit = spec["unit"]
            if not isinstance(unit, str) or not unit.strip() or len(unit) > 60:
                raise InputError("objective.unit", f"must be a short text naming the loss's unit (at most 60 "
                                                   f"characters), got {unit!r}")
            out["params"] = (("unit", unit.strip()),)
        return out

    def to_spec(self, obj: Objective) -> dict:
        out = super().to_spec(obj)
        if obj.param("unit") is not None:
            out["unit"] = obj.param("unit")
        return out

    def scale(self, obj: Objective) -> float:
        L = obj.loss
        if L is None or not L.size:
            return 1.0
        span = self.span(obj, L)
        return span if span > 0 else float(np.max(np.abs(L)))

    def span(self, obj: Objective, L: np.ndarray) -> float:
        """The width of a range holding every optimum (0: none known)."""
        return 0.0

    def spec_loss(self, Q: np.ndarray, spec: dict) -> np.ndarray:
        return loss_matrix(spec.get("loss", "hamming"), Q.shape[0], values=spec.get("values"))


class LabeledLoss(LossObjective):
    outputs = "labeled"

    def outputs_rule(self, free: bool) -> str | None:
        rule = super().outputs_rule(free)
        return rule and f"{rule}; with free outputs use bayes_risk"


class ExpectedLoss(LabeledLoss):
    """``sum_x P(x) sum_y Q[x, y] L(x, y)`` over labeled outputs."""

    name = "expected_loss"
    default = True

    def evaluate(self, obj: Objective, Q: np.ndarray) -> float:
        return float(np.sum(obj.prior[:, None] * np.asarray(Q, dtype=float) * obj.loss))

    def labeled_form(self, obj: Objective) -> LabeledForm:
        return LabeledForm(obj.prior[:, None] * obj.loss, (), obj.loss)

    def span(self, obj: Objective, L: np.ndarray) -> float:
        return prior_range(obj.prior, L)

    def unit(self, loss: Any = None) -> str:
        return loss_unit(loss)

    def spec_value(self, Q: np.ndarray, spec: dict, prior, labeled: bool) -> float | None:
        if not labeled or Q.shape[1] != Q.shape[0]:
            return None
        return self.checked(Q, prior, self.spec_loss(Q, spec))

    def checked(self, Q: np.ndarray, prior, loss: np.ndarray) -> float:
        """The expected loss of a validated channel ``Q`` (k x m) and loss (k x m)."""
        Q = check_channel(Q)
        L = np.asarray(loss, dtype=float)
        if L.shape != Q.shape:
            raise InputError("objective.loss", f"must be {Q.shape[0]} x {Q.shape[1]}, got {L.shape}")
        Q, P = check_channel_prior(Q, prior)
        return float(self.evaluate(Objective(self.name, P, loss=L), Q))


class WorstCaseLoss(LabeledLoss):
    """``max_x sum_y Q[x, y] L(x, y)``: the minimax loss over inputs (one epigraph variable in the LP)."""

    name = "worst_case_loss"

    def evaluate(self, obj: Objective, Q: np.ndarray) -> float:
        return float(np.max(np.sum(np.asarray(Q, dtype=float) * obj.loss, axis=1)))

    def labeled_form(self, obj: Objective) -> LabeledForm:
        return LabeledForm(None, ((1.0, obj.loss),))

    def span(self, obj: Objective, L: np.ndarray) -> float:
        # the worst loss of the best channel with one report, min_y max_x L(x, y) (feasible
        # under every notion), down to max_x min_y L(x, y), below every channel's
        return float(L.max(axis=0).min() - L.min(axis=1).max())

    def spec_value(self, Q: np.ndarray, spec: dict, prior, labeled: bool) -> float | None:
        raise InputError("objective.kind", f"objective {self.name!r} has no closed-form evaluation")


class FreeObjective(BuiltinObjective):
    """A sum over columns of a sublinear ``mu`` (free outputs)."""

    outputs = "free"
    column_sum = True


class MMSE(FreeObjective):
    """``E[(f(X) - E[f(X)|Y])^2]``: ``mu(v) = (sum_x f(x) P(x) v[x])^2 / (P . v)``."""

    name = "mmse"
    floor = 0.0
    unit_text = "squared units of f"

    def parse_more(self, spec: dict, prior: np.ndarray, values, ctx: Context) -> dict:
        if values is None:
            raise InputError("objective.values", "mmse needs 'values': f(x) for every input")
        return {}

    def column_utility(self, obj: Objective, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=float)
        P = obj.prior
        c = obj.values * P
        return _safe_div((c @ V) ** 2, P @ V)

    def offset_sign(self, obj: Objective) -> tuple[float, float]:
        return float(obj.prior @ obj.values**2), -1.0

    def scale(self, obj: Objective) -> float:
        # the range over all channels: 0 (every input told apart) to the prior's variance of
        # f (one report for all; MMSE does not change when f is shifted), else E[f^2]
        mean = float(obj.prior @ obj.values)
        var = float(obj.prior @ (obj.values - mean) ** 2)
        return var if var > 0 else float(obj.prior @ obj.values**2)

    def spec_value(self, Q: np.ndarray, spec: dict, prior, labeled: bool) -> float | None:
        values = spec.get("values")
        if values is None:
            raise InputError("objective.values", "mmse needs values f(x) per input")
        Q, P = check_channel_prior(Q, prior)
        f = np.asarray(values, dtype=float)
        if f.shape != P.shape:
            raise InputError("objective.values", f"must have one value per input ({P.size}), got {f.size}")
        return float(self.evaluate(Objective(self.name, P, values=f), Q))


class HistogramMSE(FreeObjective):
    """Histogram MSE per user: the sum of the ``k`` indicator queries' MMSE."""

    name = "histogram_mse"
    separable = True
    floor = 0.0
    unit_text = "E‖Ŝ − S‖² / n: squared count errors per user"

    def column_utility(self, obj: Objective, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=float)
        P = obj.prior
        return _safe_div(((P[:, None] * V) ** 2).sum(axis=0), P @ V)

    def offset_sign(self, obj: Objective) -> tuple[float, float]:
        return float(obj.prior.sum()), -1.0

    def scale(self, obj: Objective) -> float:
        return 1.0


class MutualInformation(FreeObjective):
    """``I(X; Y)`` in nats, maximised: ``mu(v) = sum_x P(x) v[x] log(v[x] / (P . v))``."""

    name = "mutual_information"
    separable = True
    minimize = False
    default = True
    unit_text = "nats"

    def column_utility(self, obj: Objective, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=float)
        P = obj.prior
        py = P @ V
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(V > 0, V / np.where(py > 0, py, 1)[None, :], 1.0)
            terms = np.where(V > 0, P[:, None] * V * np.log(ratio), 0.0)
        return terms.sum(axis=0)

    def offset_sign(self, obj: Objective) -> tuple[float, float]:
        return 0.0, 1.0

    def scale(self, obj: Objective) -> float:
        pos = obj.prior[obj.prior > 0]
        return float(-(pos * np.log(pos)).sum())


class BayesRisk(FreeObjective, LossObjective):
    """The risk of the best decoder: ``mu(v) = -min_xhat sum_x P(x) v[x] L(x, xhat)``."""

    name = "bayes_risk"
    square_loss = True

    def outputs_rule(self, free: bool) -> str | None:
        return None if free else ("bayes_risk chooses its own outputs: write outputs: free "
                                  "(or use expected_loss with labeled outputs)")

    def column_utility(self, obj: Objective, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=float)
        # risk of decision xhat for this column: sum_x P(x) v[x] L(x, xhat)
        risks = (obj.prior[:, None] * V).T @ obj.loss  # (R, k)
        return -risks.min(axis=1)

    def offset_sign(self, obj: Objective) -> tuple[float, float]:
        return 0.0, -1.0

    def span(self, obj: Objective, L: np.ndarray) -> float:
        return prior_range(obj.prior, L)

    def unit(self, loss: Any = None) -> str:
        return "probability of a wrong guess" if (loss or "hamming") == "hamming" else loss_unit(loss)

    def spec_value(self, Q: np.ndarray, spec: dict, prior, labeled: bool) -> float | None:
        L = np.asarray(self.spec_loss(Q, spec), dtype=float)
        Q, P = check_channel_prior(Q, prior)
        return float(self.evaluate(Objective(self.name, P, loss=L), Q))


class EstimationVariance(BuiltinObjective):
    """``n E||p_hat - p||^2 ~ tr(B J^-1 B^T)`` at ``p0`` (docs/model.md): not a sum over columns."""

    name = "estimation_variance"
    outputs = "free"
    floor = 0.0
    weighable = False
    unit_text = "n·E‖p̂ − p‖²: divide by n reports"

    def parse_more(self, spec: dict, prior: np.ndarray, values, ctx: Context) -> dict:
        if np.any(prior <= 0):
            key = "p0" if "p0" in spec else "prior"
            bad = int(np.flatnonzero(prior <= 0)[0])
            raise InputError(f"objective.{key}[{bad}]", "estimation_variance needs p0 > 0 everywhere (the risk is taken "
                             f"at an interior distribution), got {float(prior[bad])!r}")
        return {}

    def evaluate(self, obj: Objective, Q: np.ndarray) -> float:
        return estimation_risk(np.asarray(Q, dtype=float), obj.prior)

    def evaluation_error(self, obj: Objective, Q: np.ndarray) -> float:
        return risk_relative_error(Q, obj.prior)

    def spec_value(self, Q: np.ndarray, spec: dict, prior, labeled: bool) -> float | None:
        Q = check_channel(Q)
        return estimation_risk(Q, check_prior(prior, k=Q.shape[0]))


class Weighted(ObjectiveType):
    """``sum_i w_i loss_i`` (``w_i >= 0``); a maximised term (mutual information) enters negated.

    The terms are all labeled (linear or minimax in the channel: the LP adds their cost
    matrices and epigraph rows) or all sums over columns (their utilities add; linear in
    the ray weights, SPEC §3).
    """

    name = "weighted"
    fields = frozenset({"terms"})
    fields_note = "each term has its own loss or values"
    outputs = "any"
    weighable = False

    @staticmethod
    def term_kinds(free: bool) -> list[str]:
        """The kinds a term may have with free (column sums) or labeled outputs."""
        return [n for n, t in REGISTRY.items()
                if t.weighable and (t.column_sum if free else t.outputs == "labeled")]

    def parse(self, spec: dict, prior: np.ndarray, ctx: Context) -> dict:
        terms = spec.get("terms")
        if not isinstance(terms, list) or not terms:
            raise InputError("objective.terms", "must be a non-empty list of {weight, kind, ...} mappings, "
                             f"got {terms!r}")
        base = {key: spec[key] for key in ("prior", "p0") if key in spec}
        allowed = self.term_kinds(ctx.free)
        parsed = []
        for i, t in enumerate(terms):
            where = f"objective.terms[{i}]"
            if not isinstance(t, dict):
                raise InputError(where, f"must be a mapping with 'weight' and 'kind', got {t!r}")
            if "weight" not in t:
                raise InputError(f"{where}.weight", "is required (a number >= 0)")
            w = check_finite(t["weight"], f"{where}.weight")
            if not w >= 0.0:
                raise InputError(f"{where}.weight", f"must be in [0, inf], got {w!r}")
            if "prior" in t or "p0" in t:
                raise InputError(f"{where}.prior", "set the prior once, on the weighted objective")
            kind = t.get("kind")
            if kind not in allowed:
                side = "free" if ctx.free else "labeled"
                raise InputError(f"{where}.kind", f"with {side} outputs a weighted term is one of {allowed}, "
                                 f"got {kind!r}")
            sub = {key: v for key, v in t.items() if key != "weight"}
            try:
                obj = objective_from_spec({**sub, **base}, ctx.inputs, ctx.outputs, ctx.notions)
            except InputError as err:
                fld = err.field.replace("objective.", f"{where}.", 1) if err.field.startswith("objective.") else err.field
                raise InputError(fld, err.rule) from None
            parsed.append((w, obj))
        return {"terms": tuple(parsed)}

    def to_spec(self, obj: Objective) -> dict:
        return {"kind": obj.kind, "prior": [float(v) for v in obj.prior],
                "terms": [{"weight": w, **{key: v for key, v in t.to_spec().items() if key != "prior"}}
                          for w, t in obj.terms]}

    def is_column_sum(self, obj: Objective) -> bool:
        return all(t.type.is_column_sum(t) for _, t in obj.terms)

    def evaluate(self, obj: Objective, Q: np.ndarray) -> float:
        return float(sum(w * (t.type.evaluate(t, Q) if t.minimize else -t.type.evaluate(t, Q)) for w, t in obj.terms))

    def column_utility(self, obj: Objective, V: np.ndarray) -> np.ndarray:
        # sum_i w_i mu_i: each term's loss is -sign_i offset_i - sum mu_i (see offset_sign)
        return sum(w * t.type.column_utility(t, V) for w, t in obj.terms)

    def offset_sign(self, obj: Objective) -> tuple[float, float]:
        # a term's loss is its value (minimised, sign -1) or minus its value (maximised,
        # sign +1): -sign * (offset + sign * sum mu) = -sign * offset - sum mu
        parts = [(w, t.type.offset_sign(t)) for w, t in obj.terms]
        return float(sum(-w * s * o for w, (o, s) in parts)), -1.0

    def scale(self, obj: Objective) -> float:
        return float(sum(w * t.type.scale(t) for w, t in obj.terms))

    def labeled_form(self, obj: Objective) -> LabeledForm | None:
        forms = [(w, t.type.labeled_form(t)) for w, t in obj.terms]
        if any(f is None for _, f in forms):
            return None
        costs = [w * f.cost for w, f in forms if f.cost is not None]
        minimax = tuple((w * v, L) for w, f in forms for v, L in f.minimax)
        return LabeledForm(sum(costs) if costs else None, minimax)

    def spec_value(self, Q: np.ndarray, spec: dict, prior, labeled: bool) -> float | None:
        raise InputError("objective.kind", f"objective {self.name!r} has no closed-form evaluation")


#: the built-in objectives, in the order of docs/formats.md (the default for labeled
#: outputs first, then for free outputs)
BUILTIN = (ExpectedLoss(), MMSE(), HistogramMSE(), MutualInformation(), BayesRisk(), EstimationVariance(),
           WorstCaseLoss(), Weighted())
