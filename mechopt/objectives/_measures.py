"""An objective's value, utility and scales as functions of an :class:`~._base.Objective`.

Each asks the objective's registered type (:attr:`Objective.type`); the solvers, the
dispatcher, the runtime and the closed forms read these. May import: this package.
"""

from __future__ import annotations

import numpy as np

from ._base import LabeledForm, Objective


def column_utility(obj: Objective, V: np.ndarray) -> np.ndarray:
    """``mu(v)`` for every column of ``V`` (shape (k, R)); the solver maximises their sum.

    Examples
    --------
    >>> import numpy as np
    >>> o = Objective("mmse", np.array([0.5, 0.5]), values=np.array([1.0, 0.0]))
    >>> column_utility(o, np.eye(2)).tolist()     # a noiseless channel reveals f
    [0.5, 0.0]
    """
    return obj.type.column_utility(obj, np.asarray(V, dtype=float))


def offset_sign(obj: Objective) -> tuple[float, float]:
    """``(offset, sign)`` with ``value = offset + sign * sum mu``."""
    return obj.type.offset_sign(obj)


def labeled_form(obj: Objective) -> LabeledForm | None:
    """The labeled LP's form of ``obj`` (cost matrix, minimax terms), or None for a free-output objective."""
    return obj.type.labeled_form(obj)


def evaluation_error(obj: Objective, Q: np.ndarray) -> float:
    """A bound on the relative rounding error of :func:`evaluate` at ``Q`` (0 where it is negligible).

    Only the estimation risk can be ill-conditioned enough to matter
    (:func:`~._risk.risk_relative_error`).
    """
    return obj.type.evaluation_error(obj, Q)


def value_floor(obj: Objective) -> float | None:
    """A value every channel's objective is at least (a minimisation), or None.

    A computed lower bound below it can be raised to it and stays proven: e.g. column
    generation at ε = 30 may prove only -1.8e13 for a histogram MSE whose channel has
    4.8e-14, while 0 is a lower bound by definition (fuzz seed 22 #6593). Squared errors
    and the estimation risk (a trace of a positive semi-definite matrix) have floor 0.

    Examples
    --------
    >>> from mechopt._problem import load_problem
    >>> value_floor(load_problem({"k": 2, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1}],
    ...                           "objective": {"kind": "histogram_mse"}}).objective)
    0.0
    """
    return obj.type.value_floor(obj)


def objective_scale(obj: Objective) -> float:
    """The size of the objective's natural range, against which gaps are judged.

    The range of a prior-weighted loss (expected loss, Bayes risk: :func:`._builtin.prior_range`),
    for the worst-case loss ``min_y max_x L(x, y) - max_x min_y L(x, y)``, the prior's variance of ``f`` (MMSE),
    1 (histogram MSE: a sum of probabilities), the prior's entropy (mutual information,
    nats). A relative gap ``gap / max(|value|, scale)`` then means the same for a loss in
    metres or in kilometres, and an objective near 0 is not judged against itself.
    """
    return obj.type.scale(obj)


def evaluate(obj: Objective, Q: np.ndarray) -> float:
    """The objective of a channel, in its natural units (lower is better except MI).

    ``worst_case_loss`` is ``max_x sum_y Q[x, y] L(x, y)``; ``weighted`` is
    ``sum_i w_i loss_i`` with a maximised term (mutual information) entering negated.

    Examples
    --------
    >>> import numpy as np
    >>> o = Objective("expected_loss", np.array([0.5, 0.5]), loss=1 - np.eye(2))
    >>> evaluate(o, np.array([[0.75, 0.25], [0.25, 0.75]]))
    0.25
    """
    return obj.type.evaluate(obj, np.asarray(Q, dtype=float))
