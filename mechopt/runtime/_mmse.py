"""Bayes (MMSE) decoding for a known prior (paper 000, Jiang, Li, Tandon).

:func:`mmse_decoder` gives the posterior means ``E[f(X) | Y = y]`` (000 eq. 10),
:func:`mmse_aggregate` (000 §III eq. 10) and :func:`mmse_histogram` (000 eq. 30) the Bayes
aggregates over report counts, and :func:`mmse_risk` / :func:`mmse_histogram_risk` their
risks (the solver's ``mmse`` and ``histogram_mse`` objectives, one implementation).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from mechopt._errors import InputError
from mechopt.objectives import HISTOGRAM_MSE, MMSE, evaluate
from mechopt.runtime._estimators import _as_counts, _as_distribution
from mechopt.runtime._sampling import as_channel

__all__ = ["mmse_aggregate", "mmse_decoder", "mmse_histogram", "mmse_histogram_risk", "mmse_risk"]


def _mmse_setup(Q: ArrayLike, prior: ArrayLike) -> tuple[np.ndarray, np.ndarray,
                                                          np.ndarray]:
    Q = as_channel(Q)
    prior = _as_distribution(prior, Q.shape[0], "prior")
    joint = prior[:, None] * Q            # Pr(X = x, Y = y)
    return Q, prior, joint


def _counts_setup(Q: ArrayLike, prior: ArrayLike, counts: ArrayLike):
    """``(Q, prior, joint, counts, λ)`` with ``λ`` the output distribution; every reported output must be possible."""
    Q, prior, joint = _mmse_setup(Q, prior)
    c = _as_counts(counts, Q.shape[1])
    lam = joint.sum(axis=0)
    bad = np.flatnonzero((c > 0) & (lam <= 0))
    if bad.size:
        y = int(bad[0])
        raise InputError(f"counts[{y}]", f"is {float(c[y])!r} but output {y} has probability 0 "
                                         "under the prior; the prior contradicts the reports")
    return Q, prior, joint, c, lam


def _values(values: ArrayLike, k: int) -> np.ndarray:
    f = np.asarray(values, dtype=float)
    if f.shape != (k,) or not np.all(np.isfinite(f)):
        raise InputError("values", f"must be {k} finite numbers (one per input), got {values!r}")
    return f


def mmse_decoder(Q: ArrayLike, prior: ArrayLike, values: ArrayLike) -> np.ndarray:
    """Posterior means ``E[f(X) | Y = y]`` under the prior, one per output (000 eq. 10).

    ``E[f(X) | Y = y] = Σ_x f(x) P(x) Q[x, y] / Σ_x P(x) Q[x, y]``. For an output of
    probability zero under the prior the value is ``E[f(X)]`` (any value is a version of
    the conditional expectation there; this one is harmless).

    Parameters
    ----------
    Q : array_like, shape (k, m)
        The channel.
    prior : array_like, shape (k,)
        The prior ``P`` of the inputs.
    values : array_like, shape (k,)
        ``f(x)`` for each input.

    Returns
    -------
    numpy.ndarray, shape (m,)

    Raises
    ------
    InputError
        When an argument is malformed.

    Examples
    --------
    >>> mmse_decoder([[0.75, 0.25], [0.25, 0.75]], [0.5, 0.5], [0.0, 1.0]).tolist()
    [0.25, 0.75]
    """
    Q, prior, joint = _mmse_setup(Q, prior)
    f = _values(values, Q.shape[0])
    lam = joint.sum(axis=0)
    num = f @ joint
    out = np.full(Q.shape[1], float(prior @ f))
    np.divide(num, lam, out=out, where=lam > 0)
    return out


def mmse_aggregate(Q: ArrayLike, prior: ArrayLike, values: ArrayLike, counts: ArrayLike,
                   *, average: bool = False) -> float:
    """MMSE estimate of ``S = Σ_i f(X_i)`` from report counts (000 §III, eq. 10).

    For independent users sharing the prior ``P`` and the channel, the MMSE estimator of
    a sum decomposes (000 eq. 10): ``Ŝ = E[S | Y] = Σ_i E[f(X_i) | Y_i]``, i.e. each
    report ``y`` is replaced by ``E[f(X) | Y = y]`` (:func:`mmse_decoder`) and summed:
    ``Ŝ = Σ_y counts_y · E[f(X) | Y = y]``. With ``values`` an indicator this is the survey
    of 000 §II; with ``values = x`` the summation; with ``average=True`` it is divided by
    ``n`` (the average query). Its error is :func:`mmse_risk` per user (000 eq. 11–14).

    Parameters
    ----------
    Q : array_like, shape (k, m)
        The channel.
    prior : array_like, shape (k,)
        The prior of each user's input.
    values : array_like, shape (k,)
        ``f(x)`` per input.
    counts : array_like, shape (m,)
        Number of reports of each output.
    average : bool, keyword-only
        Return ``Ŝ / n`` instead of ``Ŝ``.

    Returns
    -------
    float
        ``Ŝ`` (or ``Ŝ / n``).

    Raises
    ------
    InputError
        When an argument is malformed, or an output reported has probability 0 under the
        prior (the prior contradicts the data).

    Examples
    --------
    >>> mmse_aggregate([[0.75, 0.25], [0.25, 0.75]], [0.5, 0.5], [0, 1], [30, 10])
    15.0
    """
    Q, prior, joint, c, lam = _counts_setup(Q, prior, counts)
    total = float(c @ mmse_decoder(Q, prior, values))
    return total / float(c.sum()) if average else total


def mmse_histogram(Q: ArrayLike, prior: ArrayLike, counts: ArrayLike, *,
                   normalize: bool = False) -> np.ndarray:
    """MMSE estimate of the histogram ``S_a = #{i : X_i = a}`` (000 §IV-C, eq. 30).

    ``Ŝ_a = Σ_i Pr(X_i = a | Y_i) = Σ_y counts_y · P(a) Q[a, y] / (P · q_y)``: each
    report contributes its posterior distribution. The expected squared error is
    :func:`mmse_histogram_risk` per user (000 eq. 31).

    Parameters
    ----------
    Q, prior, counts : array_like
        As :func:`mmse_aggregate`.
    normalize : bool, keyword-only
        Divide by ``n`` (a distribution estimate) instead of returning counts.

    Returns
    -------
    numpy.ndarray, shape (k,)
        Expected number of users with each input (sums to ``n``), or the fractions.

    Raises
    ------
    InputError
        As :func:`mmse_aggregate`.

    Examples
    --------
    >>> mmse_histogram([[0.75, 0.25], [0.25, 0.75]], [0.5, 0.5], [30, 10]).tolist()
    [25.0, 15.0]
    """
    Q, prior, joint, c, lam = _counts_setup(Q, prior, counts)
    used = lam > 0
    hist = joint[:, used] @ (c[used] / lam[used])
    return hist / c.sum() if normalize else hist


def mmse_risk(Q: ArrayLike, prior: ArrayLike, values: ArrayLike) -> float:
    """Per-user MSE of the MMSE aggregate: ``Var f(X) − Var E[f(X) | Y]`` (000 eq. 14).

    ``E[(Ŝ − S)²] = n · mmse_risk`` for ``n`` independent users (000 eq. 11–13).

    Parameters
    ----------
    Q : array_like, shape (k, m)
        The channel.
    prior : array_like, shape (k,)
        The prior.
    values : array_like, shape (k,)
        ``f(x)`` per input.

    Returns
    -------
    float

    Examples
    --------
    >>> mmse_risk([[0.75, 0.25], [0.25, 0.75]], [0.5, 0.5], [0, 1])
    0.1875
    """
    Q, prior, _ = _mmse_setup(Q, prior)
    f = _values(values, Q.shape[0])
    # the objective ``mmse`` of docs/model.md (the one measures layer); it is the same
    # for f and f - E f, and the centred values keep the difference of two large terms
    # out of the result when f has a large mean
    return float(evaluate(MMSE.make(prior, values=f - prior @ f), Q))


def mmse_histogram_risk(Q: ArrayLike, prior: ArrayLike) -> float:
    """Per-user squared error of :func:`mmse_histogram` (000 eq. 31).

    ``Σ_a [Var 1{X = a} − Var Pr(X = a | Y)] = 1 − Σ_y Σ_a (P(a) Q[a, y])² / (P · q_y)``;
    ``E‖Ŝ − S‖² = n`` times this.

    Parameters
    ----------
    Q, prior : array_like, shapes (k, m) and (k,)
        As :func:`mmse_risk`.

    Returns
    -------
    float

    Examples
    --------
    >>> mmse_histogram_risk([[0.75, 0.25], [0.25, 0.75]], [0.5, 0.5])
    0.375
    """
    Q, prior, _ = _mmse_setup(Q, prior)
    return float(evaluate(HISTOGRAM_MSE.make(prior), Q))
