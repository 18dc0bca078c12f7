"""A proven lower bound on the LIP estimation risk from each input's variance alone (no pricing).

Under ε-LIP for the prior ``P`` (Jiang, Sarwate and Wright, *Local information privacy*,
Def. 1) with the objective's ``p0 = P``, write a channel's outputs as ``w_y = q(y)`` and
``v_y = Q[:, y] / q(y)``. Then ``sum_y w_y = 1``, ``sum_y w_y v_y = 1`` (the vector of
ones), every ``v_y`` lies in ``[e^-ε, e^ε]^k`` with ``P·v_y = 1``, and the information
matrix of :mod:`._colgen` is ``J = U^T C U`` with ``C = sum_y w_y (v_y - 1)(v_y - 1)^T``:
the covariance of ``v`` when ``y`` is drawn with probabilities ``w``. Two facts bound it:

* ``C P = 0`` (``P·(v_y - 1) = 0``), so with ``A = I - 1 P^T`` (``A U U^T = A``) and any
  ``D = diag(d) ⪰ 0`` the dual matrix ``N = U^T A^T D A U`` has
  ``tr(N J) = tr(D A C A^T) = sum_x d_x C_xx``;
* ``C_xx`` is the variance of a variable in ``[e^-ε, e^ε]`` with mean 1, at most
  ``c = (e^ε - 1)(1 - e^-ε)`` (Bhatia and Davis, *A better bound on the variance*, Amer.
  Math. Monthly 107, 2000: ``Var <= (M - μ)(μ - m)``).

So ``tr(N J) <= c·sum d`` for *every* feasible design, and the weak duality of
:mod:`._colgen` (``tr(J^-1) >= 2 tr(N^(1/2)) - tr(N J)``, at the best multiple of ``N``)
gives ::

    f* >= T(d)^2 / (c·sum d),      T(d) = tr(N^(1/2)) = ||D^(1/2) A||_*   (the nuclear norm)

for every ``d >= 0``; ``2 T(d) - c·sum d`` is concave in ``d``, maximised here by L-BFGS
over ``s = d^(1/2)`` (any ``s`` gives a valid bound: the optimiser's accuracy only
changes how tight it is). This is the relaxation of the design to covariances with
``C ⪰ 0``, ``C P = 0`` and ``C_xx <= c``; it is attained when binary columns
(``v_x`` at ``e^-ε`` or ``e^ε``) realise its optimum, e.g. at a uniform prior with
``k/(1 + e^ε)`` an integer, where subset selection attains ``(k - 1)^2 / (c k)``. On
Dirichlet(1) priors its gap to the best design found is 2 % at k = 10 and 6e-4 at k = 30
(docs/design.md), where the pricing bound of :mod:`._pricing_lip` is far looser at k >= 20.

In floating point the nuclear norm is taken from computed singular values, each within
``||E||_2`` of the exact one (Weyl) for the backward error ``E`` of the SVD and of forming
``D^(1/2) A``; the bound charges ``k`` times a generous multiple of ``u ||X||_F``, rounds
``c`` up, and allows an objective ``p0`` within ``η`` of ``P`` (``p0·v >= 1 - η`` makes
``tr(N J)`` at most ``1/(1 - η)`` larger).

May import: numpy, scipy.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize

_U = np.finfo(float).eps


def variance_cap(epsilon: float) -> float:
    """``(e^ε - 1)(1 - e^-ε) = 4 sinh(ε/2)^2``, rounded up: the largest variance of a column entry.

    Examples
    --------
    >>> bool(abs(variance_cap(1.0) - (math.e - 1) * (1 - 1 / math.e)) < 1e-13)
    True
    """
    return 4.0 * math.sinh(epsilon / 2.0) ** 2 * (1.0 + 16.0 * _U)


def diagonal_bound(P: np.ndarray, epsilon: float, p0: np.ndarray | None = None, *,
                   max_iter: int = 500) -> tuple[float, np.ndarray]:
    """A proven lower bound on the ε-LIP estimation risk with ``p0 = P`` (module docstring), and its ``d``.

    Returns ``(bound, d)``; ``bound`` is ``-inf`` when ``p0`` is not within ``1e-12``
    of ``P`` (the argument needs ``p0·v`` close to 1).

    Examples
    --------
    A uniform prior with ``k/(1 + e^ε)`` an integer: the bound is subset selection's risk.

    >>> k, d = 12, 3
    >>> eps = math.log(k / d - 1)
    >>> b, _ = diagonal_bound(np.full(k, 1 / k), eps)
    >>> c = (math.exp(eps) - 1) * (1 - math.exp(-eps))
    >>> bool(abs(b - (k - 1) ** 2 / (c * k)) < 1e-9 * b)
    True
    """
    P = np.asarray(P, dtype=float)
    k = len(P)
    hi = math.exp(epsilon)
    eta = 0.0 if p0 is None else float(np.abs(np.asarray(p0, dtype=float) - P).sum()) * hi * (1 + 1e-12)
    if eta > 1e-12 or k < 2:
        return -math.inf, np.zeros(k)
    c = variance_cap(epsilon)
    A = np.eye(k) - np.outer(np.ones(k), P)

    def negative(s: np.ndarray):
        Us, sv, Vt = np.linalg.svd(s[:, None] * A, full_matrices=False)
        grad = 2.0 * np.einsum("ij,ij->i", A, Us @ Vt) - 2.0 * c * s
        return -(2.0 * sv.sum() - c * float(s @ s)), -grad

    res = minimize(negative, np.ones(k), jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * k,
                   options={"maxiter": max_iter, "ftol": 1e-15, "gtol": 1e-12})
    s = np.maximum(np.asarray(res.x, dtype=float), 0.0)
    X = s[:, None] * A
    sv = np.linalg.svd(X, compute_uv=False)
    fro = float(np.sqrt((X * X).sum()))
    # each singular value is within (forming X: 2u|X|_F) + (the SVD's backward error) of the
    # exact one; 8k u |X|_F is generous for LAPACK's bidiagonal SVD
    T = float(sv.sum()) * (1.0 - 4.0 * k * _U) - k * (2.0 + 8.0 * k) * _U * fro * 1.01
    S = c * float(s @ s) * (1.0 + 4.0 * k * _U) / (1.0 - eta)
    if T <= 0.0 or S <= 0.0:
        return -math.inf, s * s
    return (T * T / S) * (1.0 - 8.0 * _U), s * s
