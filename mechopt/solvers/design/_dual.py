"""The design's dual side (:mod:`mechopt.solvers.design._colgen`): the weak-duality bound and reduced values.

For the master's ``Jinv = J(w)^-1`` and multipliers ``y``, ``2 tr(N^(1/2)) - 1·y`` with
``N = Jinv²`` is the dual value, ``H = U N U^T`` the pricing matrix and
``k (c(v) - y·v) / (1·v)`` a ray's reduced value, with a rounding margin that keeps the
bound proven in floating point.

May import: numpy.
"""

from __future__ import annotations

import numpy as np

_U = np.finfo(float).eps


def dual_value(Jinv: np.ndarray, y: np.ndarray) -> float:
    """``2 tr(N^(1/2)) - 1·y`` for ``N = Jinv²`` (``Jinv`` symmetric; its |eigenvalues|)."""
    ev = np.linalg.eigvalsh((Jinv + Jinv.T) / 2)
    return float(2.0 * np.abs(ev).sum() - y.sum())


def scaled_bound(Jinv: np.ndarray, y: np.ndarray, delta: float) -> float:
    """The weak-duality bound at the best multiple of the dual: ``max(2T - S, T^2 / S)``.

    For ``N = Jinv²``, ``T = tr(N^(1/2))`` and ``S = 1·y + max(delta, 0)`` (a proven
    bound on ``tr(N J)`` for every feasible design), the dual ``(a² N, a² y)`` gives
    ``f* >= 2 a T - a² S`` for every ``a > 0`` (``delta`` scales with ``a²``); the best
    ``a = T / S`` gives ``T² / S``, never below the unscaled ``2T - S``.

    Examples
    --------
    >>> round(scaled_bound(np.eye(2), np.ones(2), 1.0), 6), round(scaled_bound(np.eye(2), np.ones(2), 0.0), 6)
    (1.333333, 2.0)
    """
    T = float(np.abs(np.linalg.eigvalsh((Jinv + Jinv.T) / 2)).sum())
    S = float(y.sum()) + max(float(delta), 0.0)
    plain = 2.0 * T - S
    return max(plain, T * T / S) if S > 0 else plain


def pricing_matrix(Jinv: np.ndarray, U: np.ndarray) -> np.ndarray:
    """``H = U N U^T`` with ``N = Jinv²``: then ``c(v) = v^T H v / (p0·v)``."""
    H = U @ (Jinv @ Jinv) @ U.T
    return (H + H.T) / 2


def reduced_values(V: np.ndarray, H: np.ndarray, y: np.ndarray, p0: np.ndarray) -> np.ndarray:
    """``k (c(v) - y·v) / (1·v)`` for every column: positive means the ray prices in."""
    k = V.shape[0]
    HV = H @ V
    c = np.einsum("ir,ir->r", V, HV) / (p0 @ V)
    return k * (c - y @ V) / V.sum(axis=0)


def rounding_margin(scale: float, k: int) -> float:
    """A bound on the floating-point error of an evaluated ``c(v) - y·v``.

    ``scale`` bounds ``|v|^T |H| |v| / (p0·v) + |y|·v`` over the rays evaluated. Each
    term is a sum of at most ``k^2`` products, off by at most ``(k^2 + 8) u`` relative
    (Higham, *Accuracy and Stability of Numerical Algorithms*, eq. (3.5)); a factor 4
    covers the division, the matrix products' blocking and the final subtraction.
    """
    return 4.0 * (k * k + 8) * _U * scale
