"""Utilities of docs/model.md evaluated on a given channel: the public, validated entry points.

These let every closed form report its objective and be compared with the solver's
optimum. Each one validates its arguments (:mod:`mechopt._validation`) and evaluates the
objective with :func:`mechopt._objectives.evaluate` — the one measures layer the solvers
and the runtime read too — on an :class:`~mechopt._problem.Objective`.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .._errors import InputError
from .._objectives import estimation_risk, evaluate
from .._problem import Objective, _loss_matrix
from .._validation import check_channel, check_channel_prior, check_prior

__all__ = [
    "mmse",
    "histogram_mse",
    "mutual_information",
    "bayes_risk",
    "expected_loss",
    "estimation_variance",
    "loss_matrix",
    "objective_value",
]


def _value(kind: str, Q: np.ndarray, prior: Sequence[float], **fields: Any) -> float:
    """``kind`` evaluated on a validated channel and prior (:func:`mechopt._objectives.evaluate`)."""
    Q, P = check_channel_prior(Q, prior)
    return float(evaluate(Objective(kind, P, **fields), Q))


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
    Q, P = check_channel_prior(Q, prior)
    f = np.asarray(values, dtype=float)
    if f.shape != P.shape:
        raise InputError("objective.values", f"must have one value per input ({P.size}), got {f.size}")
    return float(evaluate(Objective("mmse", P, values=f), Q))


def histogram_mse(Q: np.ndarray, prior: Sequence[float]) -> float:
    """Histogram MSE per user, 000 eq. (31): sum over the ``k`` indicator queries of :func:`mmse`.

    Equals ``1 - sum_y sum_x (P(x) q_y[x])^2 / (P . q_y)``.

    Examples
    --------
    >>> import numpy as np
    >>> round(histogram_mse(np.eye(3), [0.2, 0.3, 0.5]), 12)
    0.0
    """
    return _value("histogram_mse", Q, prior)


def mutual_information(Q: np.ndarray, prior: Sequence[float]) -> float:
    """``I(X; Y)`` in nats (000 eq. (2), docs/model.md).

    Examples
    --------
    >>> import numpy as np
    >>> round(float(mutual_information(np.eye(2), [0.5, 0.5])), 6)
    0.693147
    """
    return _value("mutual_information", Q, prior)


def loss_matrix(loss: Any, k: int, m: int | None = None, *, values: Sequence[float] | None = None) -> np.ndarray:
    """A ``k x m`` loss matrix from ``"hamming"``, ``"absolute"``, ``"squared"`` or explicit.

    ``absolute``/``squared`` need numeric ``values`` (one per input; the outputs are the
    inputs).

    Examples
    --------
    >>> loss_matrix("hamming", 2).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    m = k if m is None else m
    if not isinstance(loss, str):
        L = np.asarray(loss, dtype=float)
        if L.shape != (k, m) or not np.all(np.isfinite(L)):
            raise InputError("objective.loss", f"must be a finite {k} x {m} matrix, got shape {L.shape}")
        return L
    if loss == "hamming" and m != k:
        raise InputError("objective.loss", "hamming needs outputs = inputs")
    if loss in ("absolute", "squared"):
        if values is None:
            raise InputError("objective.values", f"loss {loss!r} needs numeric values per input")
        values = np.asarray(values, dtype=float)
        if values.shape != (k,) or m != k:
            raise InputError("objective.values", f"must have one value per input ({k})")
    elif loss != "hamming":
        raise InputError("objective.loss", f"must be hamming, absolute, squared or a matrix, got {loss!r}")
    labels = [str(x) for x in range(k)]
    return _loss_matrix(loss, labels, labels, values, "objective.loss")


def bayes_risk(Q: np.ndarray, prior: Sequence[float], loss: np.ndarray) -> float:
    """Bayes risk with the best decoder: ``sum_y min_xhat sum_x P(x) q_y[x] L(x, xhat)``.

    Examples
    --------
    >>> import numpy as np
    >>> bayes_risk(np.eye(2), [0.5, 0.5], 1 - np.eye(2))
    0.0
    """
    return _value("bayes_risk", Q, prior, loss=np.asarray(loss, dtype=float))


def expected_loss(Q: np.ndarray, prior: Sequence[float], loss: np.ndarray) -> float:
    """Expected loss of a labeled channel: ``sum_x P(x) sum_y Q[x, y] L(x, y)``.

    Examples
    --------
    >>> import numpy as np
    >>> expected_loss(np.array([[0.75, 0.25], [0.25, 0.75]]), [0.5, 0.5], 1 - np.eye(2))
    0.25
    """
    Q = check_channel(Q)
    L = np.asarray(loss, dtype=float)
    if L.shape != Q.shape:
        raise InputError("objective.loss", f"must be {Q.shape[0]} x {Q.shape[1]}, got {L.shape}")
    return _value("expected_loss", Q, prior, loss=L)


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
    Q = check_channel(Q)
    return estimation_risk(Q, check_prior(p0, k=Q.shape[0]))


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
    k = Q.shape[0]
    values = objective.get("values")
    if kind is None:
        return None
    if kind == "mmse":
        if values is None:
            raise InputError("objective.values", "mmse needs values f(x) per input")
        return mmse(Q, prior, values)
    if kind == "histogram_mse":
        return histogram_mse(Q, prior)
    if kind == "mutual_information":
        return mutual_information(Q, prior)
    if kind == "estimation_variance":
        return estimation_variance(Q, prior)
    if kind == "bayes_risk":
        L = loss_matrix(objective.get("loss", "hamming"), k, values=values)
        return bayes_risk(Q, prior, L)
    if kind == "expected_loss":
        if not labeled or Q.shape[1] != k:
            return None
        L = loss_matrix(objective.get("loss", "hamming"), k, values=values)
        return expected_loss(Q, prior, L)
    raise InputError("objective.kind", f"unknown objective kind {kind!r}")
