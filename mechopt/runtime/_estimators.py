"""Server-side estimators over report counts, and their predicted accuracy.

A deployment collects reports ``y_1 … y_n``; ``counts[y]`` is how many users reported
output ``y``. With ``λ = Qᵀ p`` the output distribution for an input distribution ``p``,
the estimators of ``p`` are

* :func:`estimate_inversion` — solve ``Qᵀ p ≈ counts / n`` with ``Σ p = 1`` (exact
  inversion for a square invertible channel, least squares otherwise; the *empirical
  estimation method* of 001 §2.5, eq. 3). Unbiased, may be negative.
* :func:`estimate_projected` — the same, then the Euclidean projection onto the simplex.
* :func:`estimate_em` — maximum likelihood over the simplex by EM, a.k.a. the iterative
  Bayesian update (001 §2.5, "EM reconstruction method").

and, for a known prior, the Bayes (MMSE) aggregates of :mod:`mechopt.runtime._mmse`.

:func:`estimation_risk` is the asymptotic risk ``tr(B J⁻¹ Bᵀ)`` of docs/model.md (computed by
:func:`mechopt.objectives.risk_covariance`, the one implementation the solver's
``estimation_variance`` objective and the closed forms read too), and
:func:`variance_report` turns it into standard errors and confidence intervals.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from mechopt._errors import InputError
from mechopt.objectives import risk_covariance, simplex_basis
from mechopt._validation import check_prior
from mechopt.runtime._postprocess import as_vector, project_simplex_rows
from mechopt.runtime._sampling import as_channel

__all__ = [
    "VarianceReport",
    "estimate_em",
    "estimate_inversion",
    "estimate_projected",
    "estimation_covariance",
    "estimation_risk",
    "project_simplex",
    "variance_report",
]

_PRIOR_ATOL = 1e-9


def _as_counts(counts: ArrayLike, m: int) -> np.ndarray:
    arr = np.asarray(counts)
    if arr.ndim != 1 or arr.shape[0] != m:
        raise InputError("counts", f"must be a 1-D array with one count per output ({m}), "
                                   f"got shape {arr.shape!r}")
    try:
        arr = arr.astype(float)
    except (TypeError, ValueError) as err:
        raise InputError("counts", f"must be numeric: {err}") from None
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        bad = arr[~np.isfinite(arr) | (arr < 0)][0]
        raise InputError("counts", f"must be finite and >= 0, got {float(bad)!r}")
    if arr.sum() <= 0:
        raise InputError("counts", "must contain at least one report, got a total of 0")
    return arr


def _as_distribution(p: ArrayLike, k: int, field: str, *, positive: bool = False
                     ) -> np.ndarray:
    return check_prior(np.asarray(p, dtype=float) if not isinstance(p, (list, tuple)) else p, field, k=k,
                       positive=positive, why=" (the asymptotic risk is taken at an interior point; smooth the "
                                              "estimate)")


def _design(Q: np.ndarray) -> np.ndarray:
    """``Qᵀ B`` (m × (k-1)) and check that the rows of ``Q`` are independent."""
    k = Q.shape[0]
    if np.linalg.matrix_rank(Q) < k:
        raise InputError("Q", f"has rank {np.linalg.matrix_rank(Q)} < k = {k}: the input "
                              "distribution is not identifiable from the reports by "
                              "inversion; use the 'em' method (maximum likelihood)")
    return Q.T @ simplex_basis(k)


# --------------------------------------------------------------------------- risk


def estimation_covariance(Q: ArrayLike, p0: ArrayLike) -> np.ndarray:
    """Asymptotic covariance ``B J⁻¹ Bᵀ`` of ``√n (p̂ − p)`` for the efficient estimator.

    With ``B = [I; −1ᵀ]`` and the Fisher information of one report about the first
    ``k − 1`` coordinates of ``p``,

        ``J = Σ_y (Bᵀ q_y)(Bᵀ q_y)ᵀ / (p0 · q_y)``     (docs/model.md),

    the maximum-likelihood estimate (:func:`estimate_em`) from ``n`` reports has
    ``Cov(p̂) ≈ B J⁻¹ Bᵀ / n`` near ``p0``.

    Parameters
    ----------
    Q, p0 : array_like
        As :func:`estimation_risk` (``p0`` is where the risk is taken).

    Returns
    -------
    numpy.ndarray, shape (k, k)
        ``B J⁻¹ Bᵀ``; every entry is ``inf`` when ``J`` is singular (the channel does not
        identify ``p``). Errors: as :func:`estimation_risk`.

    Examples
    --------
    >>> import numpy as np
    >>> C = estimation_covariance(np.eye(2), [0.5, 0.5])   # no noise: multinomial
    >>> np.allclose(C, [[0.25, -0.25], [-0.25, 0.25]])
    True
    """
    Q = as_channel(Q)
    p0 = _as_distribution(p0, Q.shape[0], "p0", positive=True)
    return risk_covariance(Q, p0)


def estimation_risk(Q: ArrayLike, p0: ArrayLike) -> float:
    """Asymptotic estimation risk ``n · E‖p̂ − p‖² ≈ tr(B J⁻¹ Bᵀ)`` (docs/model.md).

    ``J = Σ_y (Bᵀ q_y)(Bᵀ q_y)ᵀ / (p0 · q_y)`` is the Fisher information of one report
    about the free coordinates of the input distribution, ``B = [I; −1ᵀ]`` (k × (k−1)).
    ``tr(B J⁻¹ Bᵀ) / n`` is the mean squared ℓ2 error of the maximum-likelihood estimate
    from ``n`` reports (and of inversion for a square invertible channel), to first order
    in ``1/n``. This is the objective ``estimation_variance`` that the solver minimises.

    Parameters
    ----------
    Q : array_like, shape (k, m)
        The channel.
    p0 : array_like, shape (k,)
        Input distribution near which the risk is evaluated; strictly positive.

    Returns
    -------
    float
        ``tr(B J⁻¹ Bᵀ)``; ``inf`` when the channel does not identify ``p``.

    Raises
    ------
    InputError
        When ``Q`` is not a channel or ``p0`` is not a strictly positive distribution.

    Examples
    --------
    k-RR with ``k = 10``, ``ε = 0.5`` at the uniform distribution (docs/model.md quotes 242.5):

    >>> import numpy as np
    >>> k, e = 10, np.exp(0.5)
    >>> Q = (np.ones((k, k)) + (e - 1) * np.eye(k)) / (e + k - 1)
    >>> round(estimation_risk(Q, np.full(k, 1 / k)), 1)
    242.5
    """
    C = estimation_covariance(Q, p0)
    return float(np.trace(C))


@dataclass(frozen=True)
class VarianceReport:
    """Predicted accuracy of an estimate from ``n`` reports (see :func:`variance_report`).

    Attributes
    ----------
    n : int
        Number of reports.
    level : float
        Confidence level of the intervals.
    risk : float
        ``tr(B J⁻¹ Bᵀ)``, the predicted ``n · E‖p̂ − p‖²``.
    expected_squared_error : float
        ``risk / n``, the predicted ``E‖p̂ − p‖²``.
    covariance : numpy.ndarray, shape (k, k)
        ``B J⁻¹ Bᵀ / n``.
    standard_errors : numpy.ndarray, shape (k,)
        Square roots of the diagonal of ``covariance``.
    lower, upper : numpy.ndarray, shape (k,)
        ``p0 ∓ z · standard_errors``, ``z`` the normal quantile of ``(1 + level) / 2``
        (Wald intervals around ``p0``; clip to [0, 1] yourself if you want).
    """

    n: int
    level: float
    risk: float
    expected_squared_error: float
    covariance: np.ndarray
    standard_errors: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


def variance_report(Q: ArrayLike, p0: ArrayLike, n: int, *, level: float = 0.95
                    ) -> VarianceReport:
    """Predict the error of an estimate from ``n`` reports: risk, standard errors, intervals.

    Uses the asymptotic covariance ``B J⁻¹ Bᵀ / n`` of :func:`estimation_covariance`
    (docs/model.md). Pass the estimate itself as ``p0`` (plug-in) to get Wald confidence
    intervals ``p̂ ± z·se`` for each coordinate.

    Parameters
    ----------
    Q : array_like, shape (k, m)
        The channel.
    p0 : array_like, shape (k,)
        The (estimated) input distribution; strictly positive.
    n : int
        Number of reports, ``>= 1``.
    level : float, keyword-only
        Confidence level in ``(0, 1)``.

    Returns
    -------
    VarianceReport

    Raises
    ------
    InputError
        When ``n < 1``, ``level`` is outside ``(0, 1)``, or ``Q`` / ``p0`` are invalid.

    Examples
    --------
    >>> import numpy as np
    >>> rep = variance_report(np.eye(2), [0.5, 0.5], 100)
    >>> round(float(rep.standard_errors[0]), 3)     # sqrt(0.25 / 100)
    0.05
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError("n", f"must be an integer >= 1, got {n!r}")
    if not (0.0 < level < 1.0):
        raise InputError("level", f"must lie strictly between 0 and 1, got {level!r}")
    p = _as_distribution(p0, as_channel(Q).shape[0], "p0", positive=True)
    cov = estimation_covariance(Q, p) / int(n)
    risk = float(np.trace(cov)) * int(n)
    se = np.sqrt(np.diag(cov))
    z = NormalDist().inv_cdf((1.0 + level) / 2.0)
    return VarianceReport(n=int(n), level=float(level), risk=risk,
                          expected_squared_error=risk / int(n), covariance=cov,
                          standard_errors=se, lower=p - z * se, upper=p + z * se)


# ---------------------------------------------------------------------- estimators


def estimate_inversion(Q: ArrayLike, counts: ArrayLike) -> np.ndarray:
    """Estimate the input distribution by inverting the channel (001 §2.5, eq. 3).

    Solves ``min ‖Qᵀ p − counts/n‖₂  s.t.  Σ p = 1`` by writing ``p = B θ + e_k``
    (``B = [I; −1ᵀ]``). For a square invertible channel this is the exact solution of
    ``Qᵀ p = counts/n`` (its entries sum to 1 automatically); for ``m > k`` it is the
    least-squares (pseudo-inverse) solution on the affine hull of the simplex. The
    estimate is unbiased and may have negative entries.

    Parameters
    ----------
    Q : array_like, shape (k, m)
        The channel.
    counts : array_like, shape (m,)
        Number of reports of each output.

    Returns
    -------
    numpy.ndarray, shape (k,)
        The estimate; sums to 1.

    Raises
    ------
    InputError
        When ``Q`` has rank below ``k`` (``p`` is not identifiable: use
        :func:`estimate_em`) or ``counts`` is malformed or all zero.

    Examples
    --------
    >>> Q = [[0.75, 0.25], [0.25, 0.75]]
    >>> estimate_inversion(Q, [60, 40]).round(6).tolist()
    [0.7, 0.3]
    """
    Q = as_channel(Q)
    k, m = Q.shape
    c = _as_counts(counts, m)
    freq = c / c.sum()
    if k == 1:
        return np.ones(1)
    D = _design(Q)
    theta, *_ = np.linalg.lstsq(D, freq - Q[-1], rcond=None)
    p = np.empty(k)
    p[:-1] = theta
    p[-1] = 1.0 - theta.sum()
    return p


def project_simplex(v: ArrayLike) -> np.ndarray:
    """Euclidean projection onto the probability simplex.

    Returns ``argmin_p ‖p − v‖₂`` over ``{p ≥ 0, Σ p = 1}``, which is ``max(v − τ, 0)``
    for the unique ``τ`` making the result sum to 1, found by sorting (Held, Wolfe and
    Crowder 1974; Duchi et al. 2008).

    Parameters
    ----------
    v : array_like, shape (k,)

    Returns
    -------
    numpy.ndarray, shape (k,)

    Examples
    --------
    >>> project_simplex([0.8, 0.5, -0.3]).round(6).tolist()
    [0.65, 0.35, 0.0]
    """
    return project_simplex_rows(as_vector(v))


def estimate_projected(Q: ArrayLike, counts: ArrayLike) -> np.ndarray:
    """Inversion (:func:`estimate_inversion`) followed by projection onto the simplex.

    Parameters
    ----------
    Q, counts : array_like
        As :func:`estimate_inversion`.

    Returns
    -------
    numpy.ndarray, shape (k,)
        A probability vector: the point of the simplex nearest to the inversion estimate.

    Raises
    ------
    InputError
        As :func:`estimate_inversion`: ``Q`` of rank below ``k``, or ``counts`` malformed
        or all zero.

    Examples
    --------
    >>> Q = [[0.75, 0.25], [0.25, 0.75]]
    >>> estimate_projected(Q, [90, 10]).round(6).tolist()   # inversion gives [1.3, -0.3]
    [1.0, 0.0]
    """
    return project_simplex(estimate_inversion(Q, counts))


def estimate_em(Q: ArrayLike, counts: ArrayLike, *, max_iter: int = 100_000,
                tol: float = 1e-12, init: ArrayLike | None = None) -> np.ndarray:
    """Maximum-likelihood estimate over the simplex by EM (iterative Bayesian update).

    Maximises ``ℓ(p) = Σ_y (counts_y / n) log (Qᵀ p)_y`` over the simplex (001 §2.5, "EM
    reconstruction"; Agrawal & Aggarwal 2001). One step is the Bayesian update

        ``p⁺(x) = p(x) · g(x)``,  ``g(x) = Σ_y (counts_y / n) Q[x, y] / (Qᵀ p)_y``,

    which never decreases ``ℓ`` and keeps ``p`` in the simplex; the steps are accelerated
    with SQUAREM (Varadhan & Roland 2008), with backtracking so that the likelihood still
    never decreases. Because ``ℓ`` is concave and ``Σ_x p(x) g(x) = 1``,
    ``ℓ(p̂_ML) − ℓ(p) ≤ max_x g(x) − 1``: iteration stops when this certified gap is at
    most ``tol``, or after ``max_iter`` EM steps with a ``RuntimeWarning``.

    Parameters
    ----------
    Q, counts : array_like
        The channel, shape (k, m), and the number of reports of each output, shape (m,).
    max_iter : int, keyword-only
        Maximum number of EM steps (each SQUAREM cycle counts three).
    tol : float, keyword-only
        Target gap in average log-likelihood per report.
    init : array_like, shape (k,), optional, keyword-only
        Strictly positive starting distribution (default: uniform).

    Returns
    -------
    numpy.ndarray, shape (k,)
        The estimate (a probability vector).

    Raises
    ------
    InputError
        When ``counts`` reports an output the channel never produces (its column is all
        zero), or an argument is malformed.

    Examples
    --------
    >>> Q = [[0.75, 0.25], [0.25, 0.75]]
    >>> estimate_em(Q, [60, 40]).round(6).tolist()     # interior: equals inversion
    [0.7, 0.3]
    >>> estimate_em(Q, [90, 10]).round(6).tolist()     # boundary: ML is [1, 0]
    [1.0, 0.0]
    """
    Q = as_channel(Q)
    k, m = Q.shape
    c = _as_counts(counts, m)
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise InputError("max_iter", f"must be an integer >= 1, got {max_iter!r}")
    if not (tol > 0):
        raise InputError("tol", f"must be > 0, got {tol!r}")
    impossible = np.flatnonzero((c > 0) & (Q.sum(axis=0) == 0))
    if impossible.size:
        y = int(impossible[0])
        raise InputError(f"counts[{y}]", f"is {float(c[y])!r} but the channel never produces output "
                                         f"{y} (its column is all zero)")
    used = c > 0
    Qc, w = Q[:, used], c[used] / c.sum()
    if init is None:
        p = np.full(k, 1.0 / k)
    else:
        p = _as_distribution(init, k, "init", positive=True)
    def gradient(q: np.ndarray) -> np.ndarray:
        return Qc @ (w / (q @ Qc))

    def loglik(q: np.ndarray) -> float:
        return float(w @ np.log(q @ Qc))

    # EM steps accelerated by SQUAREM (Varadhan & Roland 2008, scheme S3): extrapolate
    # along two EM steps, backtracking towards the plain double step whenever the
    # extrapolation leaves the simplex or lowers the likelihood, then take one EM step.
    # Every accepted point has a likelihood at least that of two plain EM steps.
    steps = 0
    g = gradient(p)
    while g.max() - 1.0 > tol and steps < max_iter:
        p1 = p * g
        p1 /= p1.sum()
        p2 = p1 * gradient(p1)
        p2 /= p2.sum()
        steps += 2
        r, v = p1 - p, (p2 - p1) - (p1 - p)
        nv = float(np.linalg.norm(v))
        candidate = p2
        if nv > 0:
            alpha = -max(float(np.linalg.norm(r)) / nv, 1.0)
            target = loglik(p2)
            support = p > 0  # zeros stay zero: r and v vanish there
            for _ in range(8):  # a few halvings; beyond them the double EM step is kept
                if alpha >= -1.0 - 1e-9:
                    break
                trial = p - 2 * alpha * r + alpha**2 * v
                if trial.min() >= 0 and np.all(trial[support] > 0):
                    trial /= trial.sum()
                    if loglik(trial) >= target:
                        candidate = trial
                        break
                alpha = (alpha - 1.0) / 2.0
        p = candidate * gradient(candidate)  # stabilising EM step
        p /= p.sum()
        steps += 1
        g = gradient(p)
        # EM shrinks a coordinate that is zero at the optimum only geometrically (slowly
        # when its g is near 1), which stalls the gap; set such vanishing coordinates to 0
        # and revive any zero coordinate whose g(x) > 1 + tol says it belongs back. The
        # gap bound stays valid for every p, so this cannot stop at a wrong point.
        vanishing = (p > 0) & (p < 1e-10) & (g < 1.0)
        revive = (p == 0) & (g > 1.0 + tol)
        if vanishing.any() or revive.any():
            p[vanishing] = 0.0
            p[revive] = 1e-6
            p /= p.sum()
            g = gradient(p)
    if g.max() - 1.0 > tol:
        warnings.warn(f"estimate_em: stopped after max_iter={max_iter} EM steps with a "
                      f"log-likelihood gap of up to {float(g.max() - 1.0):.3g} per report "
                      f"(tol={tol!r}); raise max_iter or tol", RuntimeWarning, stacklevel=2)
    return p
