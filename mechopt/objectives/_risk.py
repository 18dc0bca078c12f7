"""The estimation risk of docs/model.md: Fisher information of a channel and ``tr(B J^-1 B^T)``.

The one implementation read by the objective ``estimation_variance``, the closed forms,
the design solvers and the runtime's covariance. May import numpy only.
"""

from __future__ import annotations

import math

import numpy as np


def simplex_basis(k: int) -> np.ndarray:
    """``B = [I; -1^T]`` (k x (k-1)), a basis of the simplex's tangent space (docs/model.md)."""
    return np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])


def fisher_information(Q: np.ndarray, p0: np.ndarray) -> np.ndarray:
    """``J = sum_y (B^T q_y)(B^T q_y)^T / (p0 . q_y)`` with ``B = [I; -1^T]`` (docs/model.md).

    Outputs with ``p0 . q_y = 0`` carry nothing and are left out.

    Examples
    --------
    >>> import numpy as np
    >>> fisher_information(np.eye(2), np.array([0.5, 0.5])).tolist()
    [[4.0]]
    """
    Q = np.asarray(Q, dtype=float)
    G = Q[:-1, :] - Q[-1:, :]  # B^T q for every column, shape (k-1, m)
    py = np.asarray(p0) @ Q
    keep = py > 0
    G = G[:, keep]
    return (G / py[keep]) @ G.T


#: singular values of the information factor spread wider than this (``cond(J)`` above
#: 1e22) mean the channel does not identify the distribution: its risk is not computable to 1e-5
RISK_SPREAD = 1e-11


def information_svd(G: np.ndarray, weights: np.ndarray, noise: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(U, S)`` with ``J = sum_r weights_r G_r G_r^T = U diag(S^2) U^T``, or None if ``J`` is singular.

    The thin SVD of the factor ``A = G diag(sqrt(weights))`` (``J = A A^T``), never of ``J``
    itself: forming ``J`` squares the condition number. At eps = 1e-6 a channel mixing
    exact and nearly constant components has ``cond(J) = 1e13``; inverting ``J`` lost 13
    digits (a risk 0.06 % off, a design "bound" above a verified design's risk: fuzz seed
    14 #257), while ``A``'s singular values are accurate to ``2^-53 S_max / S_min``.
    ``noise[r]`` bounds the rounding error of column ``G_r`` (a difference of two floats):
    directions of ``J`` no larger than that noise are not information, and ``J`` is singular.
    """
    keep = weights > 0
    sw = np.sqrt(weights[keep])
    A = G[:, keep] * sw
    if A.shape[1] < G.shape[0]:
        return None
    U, S, _ = np.linalg.svd(A, full_matrices=False)
    if not (S.size and S.max() > 0 and np.all(np.isfinite(S))) or S.min() <= RISK_SPREAD * S.max():
        return None
    floor = math.sqrt(G.shape[0]) * float(np.linalg.norm(noise[keep] * sw))
    if S.min() <= 64.0 * floor:
        return None
    return U, S


def risk_from_svd(U: np.ndarray, S: np.ndarray) -> float:
    """``tr(B J^-1 B^T)`` from :func:`information_svd`: ``sum_j |B u_j|^2 / S_j^2``, ``|B u|^2 = 1 + (1·u)^2``."""
    return float(((1.0 + U.sum(axis=0) ** 2) / S**2).sum())


def _information(Q: np.ndarray, p0) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`information_svd` of the Fisher information of channel ``Q`` at ``p0``."""
    G = Q[:-1, :] - Q[-1:, :]  # B^T q for every column
    py = np.asarray(p0, dtype=float) @ Q
    w = np.zeros_like(py)
    w[py > 0] = 1.0 / py[py > 0]  # an output no input emits under p0 carries nothing
    return information_svd(G, w, 4 * 2.0**-53 * np.abs(Q).max(axis=0))


def risk_relative_error(Q: np.ndarray, p0) -> float:
    """A bound on the relative rounding error of :func:`estimation_risk` (``inf`` if ``J`` is singular).

    The risk is dominated by ``1 / S_min^2``, with ``S`` the singular values of ``J``'s
    factor ``A``. Each is accurate to ``u S_max`` (``u = 2^-53``) plus the error of ``A``
    itself, whose columns are differences of channel entries (``q_x - q_k``, each
    rounded to ``4 u max|q|``: at ε = 1e-9 they are 1e-9 apart, so ``A`` holds only 7
    digits). The risk is accurate to about ``2 (u S_max + |dA|) / S_min`` relative;
    twice that is returned.

    Examples
    --------
    >>> import numpy as np
    >>> risk_relative_error(np.eye(3), np.full(3, 1 / 3)) < 1e-14
    True
    """
    Q = np.asarray(Q, dtype=float)
    if Q.shape[0] == 1:
        return 0.0
    f = _information(Q, p0)
    if f is None:
        return math.inf
    S = f[1]
    py = np.asarray(p0, dtype=float) @ Q
    keep = py > 0
    noise = 4 * 2.0**-53 * np.abs(Q).max(axis=0)[keep] / np.sqrt(py[keep])
    dA = math.sqrt(Q.shape[0] - 1) * float(np.linalg.norm(noise))
    return float(4 * (2.0**-53 * S.max() + dA) / S.min())


def risk_covariance(Q: np.ndarray, p0: np.ndarray) -> np.ndarray:
    """Asymptotic covariance ``B J^-1 B^T`` of ``sqrt(n) (p_hat - p)`` for the efficient estimator.

    The one implementation of the estimation risk of docs/model.md: the objective
    ``estimation_variance`` (:func:`estimation_risk`), the closed forms'
    :func:`mechopt.closed_forms.estimation_variance` and the runtime's
    :func:`mechopt.runtime.estimation_covariance` all read it (they validate their
    arguments first; this does not). ``J`` is inverted through the singular values of
    its factor (:func:`information_svd`), which squares no condition number.

    Returns
    -------
    ndarray, shape (k, k)
        ``B J^-1 B^T``; every entry ``inf`` when ``J`` is singular
        (:func:`information_svd`). A single input has zero risk.

    Examples
    --------
    >>> import numpy as np
    >>> np.round(risk_covariance(np.eye(2), np.array([0.5, 0.5])), 12).tolist()   # no noise: multinomial
    [[0.25, -0.25], [-0.25, 0.25]]
    """
    Q = np.asarray(Q, dtype=float)
    k = Q.shape[0]
    if k == 1:
        return np.zeros((1, 1))
    f = _information(Q, p0)
    if f is None:
        return np.full((k, k), np.inf)
    U, S = f
    bw = simplex_basis(k) @ (U / S)  # J^-1 = (U S^-1)(U S^-1)^T
    return bw @ bw.T


def estimation_risk(Q: np.ndarray, p0: np.ndarray) -> float:
    """Asymptotic risk ``n E||p_hat - p||^2 ~ tr(B J^-1 B^T)`` of the efficient estimator.

    ``B = [I; -1^T]`` is a basis of the simplex's tangent space (docs/model.md). Returns
    ``inf`` when ``J`` is singular (the channel does not identify the distribution).
    The trace of :func:`risk_covariance`, from the SVD of ``J``'s factor (:func:`information_svd`),
    never by inverting ``J``.

    Examples
    --------
    >>> import numpy as np
    >>> e, k = np.exp(0.5), 10
    >>> krr = (np.full((k, k), 1.0) + (e - 1) * np.eye(k)) / (e + k - 1)
    >>> round(estimation_risk(krr, np.full(k, 0.1)), 1)
    242.5
    """
    Q = np.asarray(Q, dtype=float)
    if Q.shape[0] == 1:
        return 0.0  # a single input: nothing to estimate
    f = _information(Q, p0)
    return math.inf if f is None else risk_from_svd(*f)
