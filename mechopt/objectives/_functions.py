"""The objectives evaluated on a given channel: the public, validated entry points.

These let every closed form report its objective and be compared with the solver's
optimum. Each validates its arguments (:mod:`mechopt._validation`) and evaluates through
the objective's registered type (:meth:`~._base.ObjectiveType.spec_value`), the one
measures layer the solvers and the runtime read too. :mod:`mechopt.closed_forms`
re-exports them. May import: this package.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ._base import objective_type
from ._losses import loss_matrix

#: the public functions, re-exported by :mod:`mechopt.closed_forms`
__all__ = ["mmse", "histogram_mse", "mutual_information", "bayes_risk", "expected_loss", "estimation_variance",
           "loss_matrix", "objective_value"]


def mmse(Q: np.ndarray, prior: Sequence[float], values: Sequence[float]) -> float:
    """Minimum mean squared error of estimating ``f(X)`` from ``Y`` (000 eq. (14)).

    ``E[(f(X) - E[f(X)|Y])^2] = E f^2 - sum_y (sum_x f(x) P(x) q_y[x])^2 / (P . q_y)``.

    Parameters
    ----------
    Q : ndarray, shape (k, m)
    prior : array_like, shape (k,)
    values : array_like, shape (k,)
        ``f(x)`` for each input.

    Examples
    --------
    >>> import numpy as np
    >>> round(mmse(np.eye(2), [0.5, 0.5], [0, 1]), 12)
    0.0
    >>> round(mmse(np.full((2, 1), 1.0), [0.5, 0.5], [0, 1]), 12)
    0.25
    """
    return objective_type("mmse").spec_value(Q, {"values": values}, prior, False)


def histogram_mse(Q: np.ndarray, prior: Sequence[float]) -> float:
    """Histogram MSE per user, 000 eq. (31): sum over the ``k`` indicator queries of :func:`mmse`.

    Equals ``1 - sum_y sum_x (P(x) q_y[x])^2 / (P . q_y)``.

    Examples
    --------
    >>> import numpy as np
    >>> round(histogram_mse(np.eye(3), [0.2, 0.3, 0.5]), 12)
    0.0
    """
    return objective_type("histogram_mse").spec_value(Q, {}, prior, False)


def mutual_information(Q: np.ndarray, prior: Sequence[float]) -> float:
    """``I(X; Y)`` in nats (000 eq. (2), docs/model.md).

    Examples
    --------
    >>> import numpy as np
    >>> round(float(mutual_information(np.eye(2), [0.5, 0.5])), 6)
    0.693147
    """
    return objective_type("mutual_information").spec_value(Q, {}, prior, False)


def bayes_risk(Q: np.ndarray, prior: Sequence[float], loss: np.ndarray) -> float:
    """Bayes risk with the best decoder: ``sum_y min_xhat sum_x P(x) q_y[x] L(x, xhat)``.

    Examples
    --------
    >>> import numpy as np
    >>> bayes_risk(np.eye(2), [0.5, 0.5], 1 - np.eye(2))
    0.0
    """
    return objective_type("bayes_risk").spec_value(Q, {"loss": np.asarray(loss, dtype=float)}, prior, False)


def expected_loss(Q: np.ndarray, prior: Sequence[float], loss: np.ndarray) -> float:
    """Expected loss of a labeled channel: ``sum_x P(x) sum_y Q[x, y] L(x, y)``.

    Examples
    --------
    >>> import numpy as np
    >>> expected_loss(np.array([[0.75, 0.25], [0.25, 0.75]]), [0.5, 0.5], 1 - np.eye(2))
    0.25
    """
    return objective_type("expected_loss").checked(Q, prior, loss)


def estimation_variance(Q: np.ndarray, p0: Sequence[float]) -> float:
    """Asymptotic ``n E||p_hat - p||^2 = tr(B J^-1 B^T)`` of the efficient estimator (docs/model.md).

    ``J = sum_y (B^T q_y)(B^T q_y)^T / (p0 . q_y)`` with ``B = [I; -1^T]`` (k x (k-1)).
    Returns ``inf`` when ``J`` is singular (the channel does not identify ``p``).

    Examples
    --------
    >>> import numpy as np
    >>> round(estimation_variance(np.eye(2), [0.5, 0.5]), 12)
    0.5
    """
    return objective_type("estimation_variance").spec_value(Q, {}, p0, False)


def objective_value(
    Q: np.ndarray,
    objective: dict,
    *,
    prior: Sequence[float],
    labeled: bool,
) -> float | None:
    """Evaluate a problem-file objective (docs/formats.md) on ``Q``; ``None`` when it is not defined for ``Q``.

    Parameters
    ----------
    Q : ndarray, shape (k, m)
    objective : dict
        ``{"kind": ..., "values": ..., "loss": ...}``.
    prior : array_like
        The objective prior (already resolved: explicit, LIP prior, or uniform).
    labeled : bool
        Whether the outputs of ``Q`` are the inputs (needed by ``expected_loss``).

    Examples
    --------
    >>> import numpy as np
    >>> objective_value(np.eye(2), {"kind": "expected_loss", "loss": "hamming"},
    ...                 prior=[0.5, 0.5], labeled=True)
    0.0
    """
    kind = objective.get("kind")
    if kind is None:
        return None
    return objective_type(kind).spec_value(Q, objective, prior, labeled)
