"""The context-aware Gaussian mechanism of 003 Thm 5, Cor. 10."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mechopt._validation import check_delta, check_epsilon, check_finite, check_interval, check_positive
from mechopt._errors import InputError, SolverError

from ._common import RNG, _add_noise, _positive_array, e_gamma_gaussian

# ---------------------------------------------------------------------------
# context-aware Gaussian mechanism (003 Thm 5, Cor. 10)


def gaussian_delta_at(
    x: ArrayLike, sigma_n: ArrayLike, *, epsilon: float, mu_x: float, sigma_x: float
) -> NDArray[np.float64]:
    """Outage δ of the Gaussian mechanism at input ``x``, the term inside 003 Thm 5.

    With ``X ~ N(μ_X, σ_X²)`` and ``Y = X + N(0, σ_N²)``, ``f_{Y|X=x} = N(x, σ_N²)`` and
    ``f_Y = N(μ_X, σ_X² + σ_N²)``, and::

        δ(x) = max{ E_{e^ε}(N(x, σ_N²) ‖ f_Y),  E_{e^ε}(f_Y ‖ N(x, σ_N²)) }

    (Cor. 9 / eq. 22; closed form by :func:`e_gamma_gaussian`). Valid only when every
    user adds the same ``σ_N``: with per-input ``σ_N(x)`` the marginal ``f_Y`` is a
    mixture, not this Gaussian (see ``docs/continuous.md``).

    Parameters
    ----------
    x, sigma_n : array_like
        Inputs and noise standard deviations, broadcast together.
    epsilon : float
        ``ε >= 0``.
    mu_x, sigma_x : float
        Prior mean and standard deviation (``σ_X > 0``).

    Returns
    -------
    numpy.ndarray
        δ with the broadcast shape.

    Raises
    ------
    InputError
        On a negative ε or a non-positive standard deviation.

    Examples
    --------
    >>> round(float(gaussian_delta_at(0.0, 10.0, epsilon=1.0, mu_x=0.0, sigma_x=5.0)), 6)
    0.000537
    """
    eps = check_epsilon(epsilon, "epsilon")
    mu = check_finite(mu_x, "mu_x")
    sx = check_positive(sigma_x, "sigma_x")
    sn = _positive_array(sigma_n, "sigma_n")
    xs = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(xs)):
        raise InputError("x", f"must be finite, got {x!r}")
    s_y = np.hypot(sx, sn)
    gamma = math.exp(eps)
    fwd = e_gamma_gaussian(xs, sn, mu, s_y, gamma=gamma)
    bwd = e_gamma_gaussian(mu, s_y, xs, sn, gamma=gamma)
    return np.maximum(fwd, bwd)


def _x_grid(support: tuple[float, float] | None, mu: float) -> NDArray[np.float64]:
    if support is None:
        raise InputError(
            "support",
            "is required: the supremum of 003 Thm 5 over all real x is 1 for every sigma_n; "
            "give the input interval (lo, hi)",
        )
    lo, hi = check_interval(support, "support")
    grid = np.linspace(lo, hi, 129)
    return np.union1d(grid, [min(max(mu, lo), hi)])


def gaussian_delta(
    sigma_n: float,
    *,
    epsilon: float,
    mu_x: float,
    sigma_x: float,
    support: tuple[float, float] | None,
) -> float:
    """δ of 003 Thm 5: ``sup_x`` of :func:`gaussian_delta_at` over the inputs.

    Thm 5 takes the supremum over every real ``x``. There it is always 1 — as
    ``|x| → ∞`` the conditional ``N(x, σ_N²)`` escapes into the tail of ``f_Y`` — so
    ``support=None`` returns ``1.0``. A bounded ``support=(lo, hi)`` (the paper's
    ``ΔX = hi − lo``, e.g. Fig. 8) gives the useful value; the supremum is taken over a
    129-point grid of the interval plus ``μ_X`` (it sits at an end point in every case
    tried).

    Parameters
    ----------
    sigma_n : float
        Noise standard deviation ``σ_N > 0``.
    epsilon : float
        ``ε >= 0``.
    mu_x, sigma_x : float
        Gaussian prior.
    support : (float, float) or None
        Inputs over which the supremum is taken.

    Returns
    -------
    float
        δ in ``[0, 1]``; ``1.0`` when ``support`` is None.

    Raises
    ------
    InputError
        On bad parameters or an empty support interval.

    Examples
    --------
    >>> gaussian_delta(10.0, epsilon=1.0, mu_x=0.0, sigma_x=5.0, support=None)
    1.0
    >>> round(gaussian_delta(10.0, epsilon=1.0, mu_x=0.0, sigma_x=5.0, support=(-10, 10)), 4)
    0.1469
    """
    sn = check_positive(sigma_n, "sigma_n")
    mu = check_finite(mu_x, "mu_x")
    if support is None:
        check_epsilon(epsilon, "epsilon")
        check_positive(sigma_x, "sigma_x")
        return 1.0
    xs = _x_grid(support, mu)
    return float(gaussian_delta_at(xs, sn, epsilon=epsilon, mu_x=mu, sigma_x=sigma_x).max())


def _smallest_sigma(
    violation: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    delta: float,
    scale: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Smallest σ with ``violation(σ) <= δ``, element-wise, by bisection on ``ln σ``.

    ``violation`` decreases in σ (checked numerically on grids; the search keeps its
    upper end feasible, so the answer always meets the constraint).
    """
    hi = scale.copy()
    for _ in range(200):
        bad = violation(hi) > delta
        if not bad.any():
            break
        hi = np.where(bad, hi * 2.0, hi)
    else:
        raise SolverError("no noise level up to 2^200 times the prior scale meets delta; increase delta or epsilon")
    lo = scale * 1e-9
    lo_ok = violation(lo) <= delta
    for _ in range(80):
        mid = np.sqrt(lo * hi)
        ok = violation(mid) <= delta
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    return np.where(lo_ok, lo, hi)


def _calibration_args(epsilon: float, delta: float, mu_x: float, sigma_x: float) -> tuple[float, float, float, float]:
    """Validated ``(ε, δ, μ_X, σ_X)`` of a noise calibration, ``δ`` in the open ``(0, 1)``."""
    return (check_epsilon(epsilon, "epsilon"), check_delta(delta, "delta", low_open=True, high_open=True),
            check_finite(mu_x, "mu_x"), check_positive(sigma_x, "sigma_x"))


def gaussian_sigma_at(
    x: ArrayLike, *, epsilon: float, delta: float, mu_x: float, sigma_x: float
) -> NDArray[np.float64]:
    """Instance-dependent noise ``σ_LIP(x)`` of 003 Cor. 10, as printed.

    Solves, for each ``x``::

        min σ_N   s.t.  E_{e^ε}(N(x, σ_N²) ‖ N(μ_X, σ_X²+σ_N²)) <= δ,
                        E_{e^ε}(N(μ_X, σ_X²+σ_N²) ‖ N(x, σ_N²)) <= δ.

    Warning: each constraint assumes that *every* user adds ``σ_N(x)``. Used
    instance-dependently (each user its own ``σ_N(x)``), the output is a Gaussian
    mixture and the achieved δ is far larger — at ``ε = 1, δ = 1e-4`` about ``0.12``
    (``docs/continuous.md``; check with :func:`check_additive_lip`). The value is sound
    as one common ``σ_N`` for all users whose input is no farther from ``μ_X`` than
    ``x`` — which is :func:`gaussian_sigma`.

    Parameters
    ----------
    x : array_like
        Inputs.
    epsilon : float
        ``ε >= 0``.
    delta : float
        ``δ ∈ (0, 1)``; no finite σ reaches ``δ = 0``.
    mu_x, sigma_x : float
        Gaussian prior.

    Returns
    -------
    numpy.ndarray
        ``σ_LIP(x)``, shape of ``x`` (0-d for a scalar).

    Raises
    ------
    InputError
        On bad parameters.

    Examples
    --------
    >>> s = gaussian_sigma_at([0.0, 10.0], epsilon=1.0, delta=1e-4, mu_x=0.0, sigma_x=5.0)
    >>> [round(v, 3) for v in s.tolist()]
    [11.542, 35.276]
    """
    eps, d, mu, sx = _calibration_args(epsilon, delta, mu_x, sigma_x)
    xs = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(xs)):
        raise InputError("x", f"must be finite, got {x!r}")
    scale = np.broadcast_to(sx + np.abs(xs - mu), xs.shape).astype(float)
    return _smallest_sigma(lambda s: gaussian_delta_at(xs, s, epsilon=eps, mu_x=mu, sigma_x=sx), d, scale)


def gaussian_sigma(
    *,
    epsilon: float,
    delta: float,
    mu_x: float,
    sigma_x: float,
    support: tuple[float, float],
) -> float:
    """Instance-independent noise of 003 Thm 5: smallest ``σ_N`` with δ of Thm 5 ``<= δ``.

    The supremum in Thm 5 is over the inputs in ``support = (lo, hi)``; over the whole
    line it is 1 for every ``σ_N`` (see :func:`gaussian_delta`), hence ``support`` is
    required. It is exact for a Gaussian prior and users restricted to ``support``; for
    a prior truncated to ``support`` it is a calibration whose achieved δ was below the
    target at every point measured (``docs/continuous.md``).

    Parameters
    ----------
    epsilon, delta, mu_x, sigma_x
        As :func:`gaussian_sigma_at`.
    support : (float, float)
        Input interval.

    Returns
    -------
    float
        ``σ_N``.

    Raises
    ------
    InputError
        On bad parameters (as :func:`gaussian_sigma_at`), or when ``support`` is not a
        pair of finite numbers ``lo < hi``.

    Examples
    --------
    >>> round(gaussian_sigma(epsilon=1.0, delta=1e-4, mu_x=0.0, sigma_x=5.0,
    ...                      support=(-10.0, 10.0)), 3)
    35.276
    """
    eps, d, mu, sx = _calibration_args(epsilon, delta, mu_x, sigma_x)
    xs = _x_grid(support, mu)
    scale = np.array([sx + float(np.abs(xs - mu).max())])

    def worst(s: NDArray[np.float64]) -> NDArray[np.float64]:
        return gaussian_delta_at(xs[:, None], s[None, :], epsilon=eps, mu_x=mu, sigma_x=sx).max(axis=0)

    return float(_smallest_sigma(worst, d, scale)[0])


def gaussian_mechanism(x: ArrayLike, *, sigma: ArrayLike, rng: RNG = None) -> NDArray[np.float64]:
    """Release ``Y = X + N(0, σ²)`` (003 §IV-C2a); ``σ`` may differ per input.

    Parameters
    ----------
    x : array_like
        Inputs.
    sigma : array_like
        Noise standard deviation(s), broadcast with ``x``; e.g. :func:`gaussian_sigma`.
    rng : numpy.random.Generator or int or None
        Generator or seed.

    Returns
    -------
    numpy.ndarray
        Outputs with the broadcast shape.

    Raises
    ------
    InputError
        If a ``σ`` is not positive.

    Examples
    --------
    >>> gaussian_mechanism([0.0, 0.0], sigma=1.0, rng=0).shape
    (2,)
    """
    return _add_noise(x, sigma, "sigma", rng, "normal")


