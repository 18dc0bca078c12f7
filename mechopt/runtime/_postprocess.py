"""Consistent estimates: post-processing onto the simplex, with parametric-bootstrap intervals.

An unbiased estimate (channel inversion) may have negative entries. Two consistent
post-processings map it into the probability simplex:

* ``simplex`` — the Euclidean projection ``argmin_{p ≥ 0, Σp = 1} ‖p − v‖₂``
  (Held, Wolfe and Crowder 1974; Duchi, Shalev-Shwartz, Singer and Chandra, ICML 2008,
  Fig. 1), the "Projection" of Wang et al. (below);
* ``norm-sub`` — Norm-Sub of Wang, Lopuhaä-Zwakenberg, Li, Škorić and Li, "Locally
  differentially private frequency estimation with consistency" (NDSS 2020; arXiv
  1905.08320, "Consistent and accurate frequency oracles under LDP", §IV): negative
  estimates become 0 and one ``δ`` is subtracted from the positive ones, truncating at 0,
  so that the result sums to 1. On the positive entries this is the projection of those
  entries onto their simplex, so for an estimate that already sums to 1 (every estimator
  of :mod:`mechopt.runtime` does) Norm-Sub *equals* the projection; they differ on a
  vector whose sum is not 1 (a frequency oracle estimating each value apart).

Post-processing adds bias, so the inversion covariance no longer describes the result.
The intervals are a parametric percentile bootstrap: ``resamples`` count vectors are
drawn from the multinomial fitted to the post-processed estimate (``n`` reports with
output distribution ``Qᵀ p̃``), each is estimated and post-processed as the data were, and
the interval of an input is the ``(1 ∓ level)/2`` quantiles of its bootstrap values; the
standard error is their standard deviation. The draws come from
``numpy.random.default_rng(seed)``: the same data give the same intervals.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from mechopt._errors import InputError

__all__ = ["POSTPROCESS", "BOOTSTRAP_RESAMPLES", "BOOTSTRAP_SEED", "norm_sub", "postprocess",
           "project_simplex_rows"]

#: values accepted by ``postprocess``
POSTPROCESS = ("none", "simplex", "norm-sub")
#: default number of bootstrap resamples behind post-processed intervals
BOOTSTRAP_RESAMPLES = 1000
#: default seed of the bootstrap draws
BOOTSTRAP_SEED = 0


def project_simplex_rows(V: ArrayLike) -> np.ndarray:
    """The Euclidean projection of every row of ``V`` onto the probability simplex.

    Row-wise ``max(v − τ, 0)`` with ``τ`` making the row sum to 1, found by sorting
    (Duchi et al. 2008, Fig. 1); one vectorised pass over all rows.

    Parameters
    ----------
    V : array_like, shape (r, k) or (k,)

    Returns
    -------
    numpy.ndarray, the shape of ``V``

    Examples
    --------
    >>> project_simplex_rows([[0.8, 0.5, -0.3], [0.2, 0.3, 0.5]]).round(6).tolist()
    [[0.65, 0.35, 0.0], [0.2, 0.3, 0.5]]
    """
    V = np.asarray(V, dtype=float)
    one = V.ndim == 1
    W = np.atleast_2d(V)
    if W.ndim != 2 or W.shape[1] == 0 or not np.all(np.isfinite(W)):
        raise InputError("v", f"must be finite vectors with at least one entry, got shape {V.shape!r}")
    U = -np.sort(-W, axis=1)
    css = np.cumsum(U, axis=1) - 1.0
    ranks = np.arange(1, W.shape[1] + 1)
    positive = U - css / ranks > 0  # true on a prefix of each row, at least its first entry
    rho = W.shape[1] - 1 - np.argmax(positive[:, ::-1], axis=1)
    tau = css[np.arange(W.shape[0]), rho] / (rho + 1)
    out = np.maximum(W - tau[:, None], 0.0)
    return out[0] if one else out


def as_vector(v: ArrayLike) -> np.ndarray:
    """``v`` as a non-empty finite 1-D float array; one line naming ``v`` otherwise."""
    v = np.asarray(v, dtype=float)
    if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)):
        raise InputError("v", f"must be a non-empty finite 1-D vector, got {v!r}")
    return v


def norm_sub(v: ArrayLike) -> np.ndarray:
    """Norm-Sub (Wang et al., NDSS 2020, §IV): zero the negatives, subtract one δ from the rest.

    Finds ``δ`` with ``Σ_{v_i > 0} max(v_i − δ, 0) = 1`` and returns ``max(v_i − δ, 0)``
    on the positive entries, 0 elsewhere (``δ < 0`` adds to the positive entries when
    they sum to less than 1). A vector with no positive entry carries no information on
    where the mass is: the uniform distribution is returned.

    Parameters
    ----------
    v : array_like, shape (k,)
        An estimate of a distribution (any finite entries, any sum).

    Returns
    -------
    numpy.ndarray, shape (k,)
        Non-negative, sums to 1.

    Examples
    --------
    >>> norm_sub([0.8, 0.5, -0.3]).round(6).tolist()       # sums to 1: the projection
    [0.65, 0.35, 0.0]
    >>> norm_sub([0.3, 0.1, -0.2]).round(6).tolist()       # positives sum to 0.4: δ = -0.3
    [0.6, 0.4, 0.0]
    """
    v = as_vector(v)
    support = v > 0
    if not support.any():
        return np.full(v.size, 1.0 / v.size)
    out = np.zeros(v.size)
    out[support] = project_simplex_rows(v[support])
    return out


def postprocess(v: ArrayLike, how: str) -> np.ndarray:
    """Apply ``how`` (``none``, ``simplex`` or ``norm-sub``) to one estimate or to rows of estimates.

    Examples
    --------
    >>> postprocess([1.3, -0.3], "simplex").tolist()
    [1.0, 0.0]
    >>> postprocess([1.3, -0.3], "none").tolist()
    [1.3, -0.3]
    """
    check_postprocess(how)
    V = np.asarray(v, dtype=float)
    if how == "none":
        return V.copy()
    if how == "simplex":
        return project_simplex_rows(V)
    if V.ndim == 1:
        return norm_sub(V)
    return np.array([norm_sub(row) for row in V]).reshape(V.shape)


def check_postprocess(how: object) -> str:
    """``how`` if it is one of :data:`POSTPROCESS`; one line naming the field otherwise."""
    if how not in POSTPROCESS:
        raise InputError("postprocess", f"must be one of {', '.join(POSTPROCESS)}, got {how!r}")
    return str(how)


def check_resamples(resamples: object) -> int:
    """A bootstrap size: an integer from 100 to 1 000 000."""
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or not \
            100 <= int(resamples) <= 1_000_000:
        raise InputError("resamples", f"must be an integer from 100 to 1000000, got {resamples!r}")
    return int(resamples)


def inversion_rows(Q: np.ndarray, freqs: np.ndarray) -> np.ndarray:
    """Channel inversion (:func:`mechopt.runtime.estimate_inversion`) of every row of output frequencies."""
    from mechopt.objectives import simplex_basis

    k = Q.shape[0]
    if k == 1:
        return np.ones((freqs.shape[0], 1))
    P = np.linalg.pinv(Q.T @ simplex_basis(k))  # (k-1) × m: the least-squares solution on the affine hull
    theta = (freqs - Q[-1]) @ P.T
    return np.column_stack([theta, 1.0 - theta.sum(axis=1)])


def bootstrap(lam: np.ndarray, n: int, invert, how: str, level: float, *,
              resamples: int = BOOTSTRAP_RESAMPLES, seed: int | None = BOOTSTRAP_SEED
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parametric percentile bootstrap of ``invert`` followed by ``how`` (module docstring).

    ``lam`` is the fitted distribution of one report; ``invert`` maps rows of output
    frequencies to rows of estimates. Returns the standard errors and the lower and upper
    interval bounds, one per estimated quantity.

    Examples
    --------
    >>> Q = np.array([[0.75, 0.25], [0.25, 0.75]])
    >>> se, lo, hi = bootstrap(np.array([0.7, 0.3]) @ Q, 1000, lambda F: inversion_rows(Q, F), "simplex", 0.95)
    >>> bool(lo[0] < 0.7 < hi[0]), bool(abs(se[0] - 0.031) < 0.003)    # inversion's se is 0.031
    (True, True)
    """
    resamples = check_resamples(resamples)
    lam = np.clip(np.asarray(lam, dtype=float), 0.0, None)
    lam /= lam.sum()
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(int(n), lam, size=resamples) / float(n)
    boot = postprocess(invert(draws), how)
    alpha = (1.0 - float(level)) / 2.0
    lo, hi = np.quantile(boot, [alpha, 1.0 - alpha], axis=0)
    return boot.std(axis=0, ddof=1), lo, hi
