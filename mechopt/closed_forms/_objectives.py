"""Utilities of docs/model.md evaluated on a given channel (plain numpy, no solver).

These let every closed form report its objective, and let the lead compare it with the
solver's optimum. All are written from the definitions in docs/model.md / 000 §III–IV.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .._errors import InputError
from .._validation import check_channel, check_prior

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


def _cols(Q: np.ndarray) -> np.ndarray:
    """Drop all-zero columns (outputs never emitted)."""
    return Q[:, Q.max(axis=0) > 0]


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
    Q = _cols(check_channel(Q))
    P = check_prior(prior, k=Q.shape[0])
    f = np.asarray(values, dtype=float)
    if f.shape != P.shape:
        raise InputError("objective.values", f"must have one value per input ({P.size}), got {f.size}")
    num = (f * P) @ Q
    den = P @ Q
    keep = den > 0
    return float(P @ f**2 - np.sum(num[keep] ** 2 / den[keep]))


def histogram_mse(Q: np.ndarray, prior: Sequence[float]) -> float:
    """Histogram MSE per user, 000 eq. (31): sum over the ``k`` indicator queries of :func:`mmse`.

    Equals ``1 - sum_y sum_x (P(x) q_y[x])^2 / (P . q_y)``.

    Examples
    --------
    >>> import numpy as np
    >>> round(histogram_mse(np.eye(3), [0.2, 0.3, 0.5]), 12)
    0.0
    """
    Q = _cols(check_channel(Q))
    P = check_prior(prior, k=Q.shape[0])
    joint = P[:, None] * Q
    den = joint.sum(axis=0)
    keep = den > 0
    return float(1.0 - np.sum((joint[:, keep] ** 2).sum(axis=0) / den[keep]))


def mutual_information(Q: np.ndarray, prior: Sequence[float]) -> float:
    """``I(X; Y)`` in nats (000 eq. (2), docs/model.md).

    Examples
    --------
    >>> import numpy as np
    >>> round(float(mutual_information(np.eye(2), [0.5, 0.5])), 6)
    0.693147
    """
    Q = check_channel(Q)
    P = check_prior(prior, k=Q.shape[0])
    py = P @ Q
    total = 0.0
    for x in range(Q.shape[0]):
        for y in range(Q.shape[1]):
            if P[x] > 0 and Q[x, y] > 0:
                total += P[x] * Q[x, y] * math.log(Q[x, y] / py[y])
    return total


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
    if isinstance(loss, str):
        if loss == "hamming":
            if m != k:
                raise InputError("objective.loss", "hamming needs outputs = inputs")
            return 1.0 - np.eye(k)
        if loss in ("absolute", "squared"):
            if values is None:
                raise InputError("objective.values", f"loss {loss!r} needs numeric values per input")
            v = np.asarray(values, dtype=float)
            if v.shape != (k,) or m != k:
                raise InputError("objective.values", f"must have one value per input ({k})")
            d = np.abs(v[:, None] - v[None, :])
            return d if loss == "absolute" else d**2
        raise InputError("objective.loss", f"must be hamming, absolute, squared or a matrix, got {loss!r}")
    L = np.asarray(loss, dtype=float)
    if L.shape != (k, m) or not np.all(np.isfinite(L)):
        raise InputError("objective.loss", f"must be a finite {k} x {m} matrix, got shape {L.shape}")
    return L


def bayes_risk(Q: np.ndarray, prior: Sequence[float], loss: np.ndarray) -> float:
    """Bayes risk with the best decoder: ``sum_y min_xhat sum_x P(x) q_y[x] L(x, xhat)``.

    Examples
    --------
    >>> import numpy as np
    >>> bayes_risk(np.eye(2), [0.5, 0.5], 1 - np.eye(2))
    0.0
    """
    Q = check_channel(Q)
    P = check_prior(prior, k=Q.shape[0])
    L = np.asarray(loss, dtype=float)
    joint = P[:, None] * Q  # k x m
    risk_per_guess = L.T @ joint  # (guesses) x m
    return float(risk_per_guess.min(axis=0).sum())


def expected_loss(Q: np.ndarray, prior: Sequence[float], loss: np.ndarray) -> float:
    """Expected loss of a labeled channel: ``sum_x P(x) sum_y Q[x, y] L(x, y)``.

    Examples
    --------
    >>> import numpy as np
    >>> expected_loss(np.array([[0.75, 0.25], [0.25, 0.75]]), [0.5, 0.5], 1 - np.eye(2))
    0.25
    """
    Q = check_channel(Q)
    P = check_prior(prior, k=Q.shape[0])
    L = np.asarray(loss, dtype=float)
    if L.shape != Q.shape:
        raise InputError("objective.loss", f"must be {Q.shape[0]} x {Q.shape[1]}, got {L.shape}")
    return float(P @ (Q * L).sum(axis=1))


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
    Q = _cols(check_channel(Q))
    p = check_prior(p0, k=Q.shape[0])
    k = Q.shape[0]
    if k == 1:
        return 0.0
    B = np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])
    G = B.T @ Q  # (k-1) x m
    den = p @ Q
    keep = den > 0
    J = (G[:, keep] / den[keep]) @ G[:, keep].T
    try:
        Jinv = np.linalg.inv(J)
    except np.linalg.LinAlgError:
        return math.inf
    if not np.all(np.isfinite(Jinv)) or np.linalg.cond(J) > 1e14:
        return math.inf
    return float(np.trace(B @ Jinv @ B.T))


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
