"""Utilities of docs/model.md as functions of a channel.

Every sublinear objective is written ``value(Q) = offset + sign * sum_y mu(q_y)``,
where ``mu`` is convex and positively homogeneous of degree 1; the solver maximises
``sum_y mu(q_y)``. :func:`evaluate` returns the objective in its natural units
(an MSE, a loss, a mutual information in nats, a variance).
"""

from __future__ import annotations

import math

import numpy as np

from ._problem import Objective


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros_like(num, dtype=float)
    mask = den > 0
    out[mask] = num[mask] / den[mask]
    return out


def column_utility(obj: Objective, V: np.ndarray) -> np.ndarray:
    """``mu(v)`` for every column of ``V`` (shape (k, R)); the solver maximises their sum.

    Examples
    --------
    >>> from mechopt._problem import Objective
    >>> import numpy as np
    >>> o = Objective("mmse", np.array([0.5, 0.5]), values=np.array([1.0, 0.0]))
    >>> column_utility(o, np.eye(2)).tolist()     # a noiseless channel reveals f
    [0.5, 0.0]
    """
    V = np.asarray(V, dtype=float)
    if obj.kind == "weighted":
        # sum_i w_i mu_i: each term's loss is -sign_i offset_i - sum mu_i (see offset_sign)
        return sum(w * column_utility(t, V) for w, t in obj.terms)
    P = obj.prior
    py = P @ V
    if obj.kind == "mmse":
        c = obj.values * P
        return _safe_div((c @ V) ** 2, py)
    if obj.kind == "histogram_mse":
        return _safe_div(((P[:, None] * V) ** 2).sum(axis=0), py)
    if obj.kind == "mutual_information":
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(V > 0, V / np.where(py > 0, py, 1)[None, :], 1.0)
            terms = np.where(V > 0, P[:, None] * V * np.log(ratio), 0.0)
        return terms.sum(axis=0)
    if obj.kind == "bayes_risk":
        # risk of decision xhat for this column: sum_x P(x) v[x] L(x, xhat)
        risks = (P[:, None] * V).T @ obj.loss  # (R, k)
        return -risks.min(axis=1)
    raise ValueError(f"objective {obj.kind!r} is not a sum over columns")


def offset_sign(obj: Objective) -> tuple[float, float]:
    """``(offset, sign)`` with ``value = offset + sign * sum mu``."""
    P = obj.prior
    if obj.kind == "weighted":
        # a term's loss is its value (minimised, sign -1) or minus its value (maximised,
        # sign +1): -sign * (offset + sign * sum mu) = -sign * offset - sum mu
        return float(sum(-w * offset_sign(t)[1] * offset_sign(t)[0] for w, t in obj.terms)), -1.0
    if obj.kind == "mmse":
        return float(P @ obj.values**2), -1.0
    if obj.kind == "histogram_mse":
        return float(P.sum()), -1.0
    if obj.kind == "mutual_information":
        return 0.0, 1.0
    if obj.kind == "bayes_risk":
        return 0.0, -1.0
    raise ValueError(obj.kind)


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


def evaluation_error(obj: Objective, Q: np.ndarray) -> float:
    """A bound on the relative rounding error of :func:`evaluate` at ``Q`` (0 where it is negligible).

    Only the estimation risk can be ill-conditioned enough to matter (:func:`risk_relative_error`).
    """
    return risk_relative_error(Q, obj.prior) if obj.kind == "estimation_variance" else 0.0


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


#: objectives no channel can take below 0: an expected squared error (MMSE, histogram MSE)
#: and the estimation risk (a trace of a positive semi-definite matrix)
_NON_NEGATIVE = frozenset({"mmse", "histogram_mse", "estimation_variance"})


def value_floor(obj: Objective) -> float | None:
    """A value every channel's objective is at least (a minimisation), or None.

    A computed lower bound below it can be raised to it and stays proven: e.g. column
    generation at ε = 30 may prove only -1.8e13 for a histogram MSE whose channel has
    4.8e-14, while 0 is a lower bound by definition (fuzz seed 22 #6593).

    Examples
    --------
    >>> from mechopt._problem import load_problem
    >>> value_floor(load_problem({"k": 2, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1}],
    ...                           "objective": {"kind": "histogram_mse"}}).objective)
    0.0
    """
    return 0.0 if obj.kind in _NON_NEGATIVE else None


def objective_scale(obj: Objective) -> float:
    """The size of the objective's natural range, against which gaps are judged.

    The largest loss (expected loss, Bayes risk), the second moment of ``f`` (MMSE),
    1 (histogram MSE: a sum of probabilities), the prior's entropy (mutual information,
    nats). A relative gap ``gap / max(|value|, scale)`` then means the same for a loss in
    metres or in kilometres, and an objective near 0 is not judged against itself.
    """
    P = obj.prior
    if obj.kind == "weighted":
        return float(sum(w * objective_scale(t) for w, t in obj.terms))
    if obj.kind in ("expected_loss", "bayes_risk", "worst_case_loss"):
        return float(np.max(np.abs(obj.loss))) if obj.loss is not None and obj.loss.size else 1.0
    if obj.kind == "mmse":
        return float(P @ obj.values**2)
    if obj.kind == "histogram_mse":
        return 1.0
    if obj.kind == "mutual_information":
        pos = P[P > 0]
        return float(-(pos * np.log(pos)).sum())
    return 0.0


def evaluate(obj: Objective, Q: np.ndarray) -> float:
    """The objective of a channel, in its natural units (lower is better except MI).

    ``worst_case_loss`` is ``max_x sum_y Q[x, y] L(x, y)``; ``weighted`` is
    ``sum_i w_i loss_i`` with a maximised term (mutual information) entering negated.

    Examples
    --------
    >>> from mechopt._problem import Objective
    >>> import numpy as np
    >>> o = Objective("expected_loss", np.array([0.5, 0.5]), loss=1 - np.eye(2))
    >>> evaluate(o, np.array([[0.75, 0.25], [0.25, 0.75]]))
    0.25
    """
    Q = np.asarray(Q, dtype=float)
    if obj.kind == "expected_loss":
        return float(np.sum(obj.prior[:, None] * Q * obj.loss))
    if obj.kind == "worst_case_loss":
        return float(np.max(np.sum(Q * obj.loss, axis=1)))
    if obj.kind == "weighted":
        return float(sum(w * (evaluate(t, Q) if t.minimize else -evaluate(t, Q)) for w, t in obj.terms))
    if obj.kind == "estimation_variance":
        return estimation_risk(Q, obj.prior)
    offset, sign = offset_sign(obj)
    return float(offset + sign * column_utility(obj, Q).sum())
