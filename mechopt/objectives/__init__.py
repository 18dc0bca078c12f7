"""Objectives: each kind a registered type that owns its parsing, value, scale, unit and solver hooks.

An :class:`Objective` is the data of a problem's utility; its :attr:`Objective.type` (an
:class:`ObjectiveType` in :data:`REGISTRY`) answers everything else: the value of a
channel (:func:`evaluate`), the natural scale gaps are judged against
(:func:`objective_scale`), a floor (:func:`value_floor`), the unit, whether it is
minimised, and the solvers' hooks — a column utility ``mu`` for free outputs
(:func:`column_utility`, :func:`offset_sign`; Jiang, Li, Tandon, *Context-aware data
aggregation with LIP*) or a cost matrix and minimax terms for labeled outputs
(:func:`labeled_form`).

Modules: :mod:`._base` (the registry and the parser), :mod:`._builtin` (the objectives
of docs/model.md), :mod:`._losses` (loss matrices), :mod:`._risk` (the estimation risk's
Fisher information), :mod:`._measures` (the functions above), :mod:`._functions` (the
validated public evaluations the closed forms export). A new objective is one
:func:`register_objective` call (``docs/architecture.md``). May import:
:mod:`mechopt._errors`, :mod:`mechopt._validation`, :mod:`mechopt.notions`.
"""

from __future__ import annotations

from ._base import (REGISTRY, Context, LabeledForm, Objective, ObjectiveType, objective_from_spec, objective_kinds,
                    objective_type, register_objective)
from ._builtin import BUILTIN
from ._losses import LOSSES, loss_matrix_of
from ._measures import (column_utility, evaluate, evaluation_error, labeled_form, objective_scale, offset_sign,
                        value_floor)
from ._risk import (RISK_SPREAD, estimation_risk, fisher_information, information_svd, risk_covariance,
                    risk_from_svd, risk_relative_error, simplex_basis)

for _t in BUILTIN:
    register_objective(_t)

#: the built-in types, for identity tests by the solvers that hold an oracle for a kind
#: (``obj.type is MMSE``); everything else asks the type's attributes and hooks
EXPECTED_LOSS, MMSE, HISTOGRAM_MSE, MUTUAL_INFORMATION, BAYES_RISK, ESTIMATION_VARIANCE, WORST_CASE_LOSS, WEIGHTED = BUILTIN

__all__ = ["BAYES_RISK", "BUILTIN", "ESTIMATION_VARIANCE", "EXPECTED_LOSS", "HISTOGRAM_MSE", "LOSSES", "MMSE",
           "MUTUAL_INFORMATION", "REGISTRY", "RISK_SPREAD", "WEIGHTED", "WORST_CASE_LOSS", "Context", "LabeledForm",
           "Objective", "ObjectiveType", "column_utility", "estimation_risk", "evaluate", "evaluation_error",
           "fisher_information", "information_svd", "labeled_form", "loss_matrix_of", "objective_from_spec",
           "objective_kinds", "objective_scale", "objective_type", "offset_sign", "register_objective",
           "risk_covariance", "risk_from_svd", "risk_relative_error", "simplex_basis", "value_floor"]
