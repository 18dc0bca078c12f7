"""Numerical check of (ε, δ)-LIP for continuous channels (003 eq. 3)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import log_ndtr, logsumexp, ndtr

from mechopt._validation import check_channel, check_delta, check_epsilon, check_finite
from mechopt._errors import InputError

from ._common import ContinuousLIPCheck, Noise, _clip, _finish, _positive_array, _probability_vector, _support_prior

# ---------------------------------------------------------------------------
# numerical check of (ε, δ)-LIP


def discretize_prior(
    cdf: Callable[[NDArray[np.float64]], ArrayLike], *, lo: float, hi: float, n: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Discretise a continuous prior on ``[lo, hi]`` into ``n`` equal cells.

    Returns the cell midpoints and the prior mass of each cell (from the CDF),
    renormalised — the prior truncated to ``[lo, hi]``.

    Parameters
    ----------
    cdf : callable
        Vectorised CDF of the prior, e.g. ``scipy.stats.norm(0, 5).cdf``.
    lo, hi : float
        Truncation interval.
    n : int
        Number of cells, ``>= 1``.

    Returns
    -------
    support : numpy.ndarray
        Midpoints, shape ``(n,)``.
    prior : numpy.ndarray
        Probabilities, shape ``(n,)``, summing to 1.

    Raises
    ------
    InputError
        If ``lo >= hi``, ``n < 1`` or the prior has no mass on ``[lo, hi]``.

    Examples
    --------
    >>> xs, p = discretize_prior(lambda t: t, lo=0.0, hi=1.0, n=4)
    >>> xs.tolist(), p.tolist()
    ([0.125, 0.375, 0.625, 0.875], [0.25, 0.25, 0.25, 0.25])
    """
    lo, hi = check_finite(lo, "lo"), check_finite(hi, "hi")
    if not lo < hi:
        raise InputError("lo", f"must be < hi, got lo={lo!r}, hi={hi!r}")
    if int(n) != n or n < 1:
        raise InputError("n", f"must be an integer >= 1, got {n!r}")
    edges = np.linspace(lo, hi, int(n) + 1)
    mass = np.diff(np.asarray(cdf(edges), dtype=float))
    if not np.all(np.isfinite(mass)) or np.any(mass < -1e-15) or mass.sum() <= 0:
        raise InputError("cdf", f"must be non-decreasing with mass on [{lo}, {hi}]")
    mass = np.maximum(mass, 0.0)
    return 0.5 * (edges[:-1] + edges[1:]), mass / mass.sum()


def check_channel_lip(
    prior: ArrayLike, channel: ArrayLike, *, epsilon: float, delta: float = 0.0
) -> ContinuousLIPCheck:
    """Achieved (ε, δ)-LIP of a discrete channel (003 eq. 3, eq. 6), in floating point.

    For a discretised continuous mechanism the columns are output cells; coarsening
    outputs is post-processing, so a violation found here is a violation of the
    continuous mechanism (given the same prior).

    Parameters
    ----------
    prior : array_like
        ``(k,)`` probabilities.
    channel : array_like
        ``(k, m)`` row-stochastic matrix ``Q[x, y] = Pr(Y=y | X=x)``.
    epsilon : float
        Claimed ``ε >= 0``.
    delta : float, optional
        Claimed ``δ ∈ [0, 1]``.

    Returns
    -------
    ContinuousLIPCheck
        The achieved ε and δ against the claim, and the worst input.

    Raises
    ------
    InputError
        On a bad prior, a non-stochastic matrix or bad parameters.

    Examples
    --------
    >>> e = math.e
    >>> q = [[e / (1 + e), 1 / (1 + e)], [1 / (1 + e), e / (1 + e)]]
    >>> r = check_channel_lip([0.5, 0.5], q, epsilon=1.0)
    >>> round(r.epsilon_achieved, 4), r.holds
    (0.6201, True)
    """
    eps = check_epsilon(epsilon, "epsilon")
    d = check_delta(delta, "delta")
    p = _probability_vector(np.atleast_1d(np.asarray(prior, dtype=float)), "prior")
    q = check_channel(channel, "channel", shape=(p.size, None))
    p_y = p @ q
    live = p > 0
    with np.errstate(divide="ignore"):
        log_ratio = np.log(q[live][:, p_y > 0]) - np.log(p_y[p_y > 0])
    eps_ach = float(np.abs(log_ratio).max()) if log_ratio.size else 0.0
    return _finish(p, q, eps_ach, eps, d)


def _std(noise: str, z: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """log-density, log-cdf, log-sf, cdf and sf of the standard noise at ``z``."""
    if noise == "gaussian":
        return {
            "logpdf": -0.5 * z**2 - 0.5 * math.log(2 * math.pi),
            "logcdf": log_ndtr(z),
            "logsf": log_ndtr(-z),
            "cdf": ndtr(z),
            "sf": ndtr(-z),
        }
    # Laplace(0, 1)
    neg = np.minimum(z, 0.0)
    pos = np.maximum(z, 0.0)
    return {
        "logpdf": -np.abs(z) - math.log(2.0),
        "logcdf": np.where(z < 0, neg - math.log(2.0), np.log1p(-0.5 * np.exp(-pos))),
        "logsf": np.where(z > 0, -pos - math.log(2.0), np.log1p(-0.5 * np.exp(neg))),
        "cdf": np.where(z < 0, 0.5 * np.exp(neg), 1.0 - 0.5 * np.exp(-pos)),
        "sf": np.where(z > 0, 0.5 * np.exp(-pos), 1.0 - 0.5 * np.exp(neg)),
    }


def check_additive_lip(
    support: ArrayLike,
    prior: ArrayLike,
    *,
    noise: Noise,
    scale: ArrayLike,
    epsilon: float,
    delta: float = 0.0,
    clip: tuple[float, float] | None = None,
    n_grid: int = 4001,
) -> ContinuousLIPCheck:
    """Achieved (ε, δ)-LIP of ``Y = X + noise`` for a discrete or discretised prior.

    The output line is cut into ``n_grid − 1`` equal cells over
    ``[min x − 12 s_max, max x + 12 s_max]`` (or ``[l, u]`` with ``clip``), plus the two
    tails (or the two clipping atoms). Cell masses come from the noise CDF, so every row
    sums to 1. Then:

    * δ (eq. 3 and Cor. 9) from the cell masses, as in :func:`check_channel_lip` — a
      lower bound on the continuous value that converges as the grid is refined;
    * ε (eq. 7) from ``ln f_{Y|X}(y|x) − ln f_Y(y)`` at the grid points, the support
      points and the atoms; ``inf`` where the ratio is unbounded (no ``clip`` and
      components that differ in their tails: any two Gaussians, or Laplace noises of
      unequal scale).

    For a continuous prior use :func:`discretize_prior` first; ``f_Y`` is then the
    quadrature ``Σ_i p_i f(y | x_i)``.

    Parameters
    ----------
    support : array_like
        Inputs ``x_i``, shape ``(k,)``.
    prior : array_like
        Probabilities ``p_i``, shape ``(k,)``.
    noise : {"gaussian", "laplace"}
        Noise family.
    scale : array_like
        Standard deviation (Gaussian) or scale ``b`` (Laplace); a scalar or one per input.
    epsilon, delta : float
        The claim, as :func:`check_channel_lip`.
    clip : (float, float) or None, optional
        Output clipped to ``[l, u]``, as :func:`laplace_mechanism` does.
    n_grid : int, optional
        Number of grid points, ``>= 3``.

    Returns
    -------
    ContinuousLIPCheck

    Raises
    ------
    InputError
        On a bad prior, scale, noise name or parameter.

    Examples
    --------
    Thm 6, eq. 25 on the three-point prior of 003 Fig. 10 (``s = 0.2``):

    >>> p = [0.4333333333, 0.3333333334, 0.2333333333]
    >>> from mechopt.continuous import laplace_scale
    >>> b = laplace_scale(epsilon=1.0, p_min=min(p), delta_x=2.0)
    >>> r = check_additive_lip([0.0, 1.0, 2.0], p, noise="laplace", scale=b, epsilon=1.0)
    >>> round(r.epsilon_achieved, 3), r.holds
    (0.806, True)
    """
    xs, p = _support_prior(support, prior)
    if noise not in ("gaussian", "laplace"):
        raise InputError("noise", f"must be 'gaussian' or 'laplace', got {noise!r}")
    s = _positive_array(scale, "scale")
    if s.ndim > 1 or s.size not in (1, xs.size):
        raise InputError("scale", f"must be a scalar or have shape {xs.shape}, got {s.shape}")
    s = np.broadcast_to(s.reshape(-1), xs.shape).astype(float)
    eps = check_epsilon(epsilon, "epsilon")
    d = check_delta(delta, "delta")
    bounds = _clip(clip)
    if int(n_grid) != n_grid or n_grid < 3:
        raise InputError("n_grid", f"must be an integer >= 3, got {n_grid!r}")

    live = p > 0
    if bounds is None:
        lo = float(xs.min() - 12 * s.max())
        hi = float(xs.max() + 12 * s.max())
    else:
        lo, hi = bounds
    edges = np.linspace(lo, hi, int(n_grid))

    # cell masses: interior cells, then the two tails (or clipping atoms)
    z = (edges[None, :] - xs[:, None]) / s[:, None]
    f = _std(noise, z)
    upper = z[:, :-1] >= 0
    inner = np.where(upper, f["sf"][:, :-1] - f["sf"][:, 1:], f["cdf"][:, 1:] - f["cdf"][:, :-1])
    masses = np.column_stack([f["cdf"][:, 0], np.maximum(inner, 0.0), f["sf"][:, -1]])
    masses /= masses.sum(axis=1, keepdims=True)

    # density ratio (eq. 7) on the grid, the support points and the atoms
    pts = np.union1d(edges, xs[(xs >= lo) & (xs <= hi)])
    zp = (pts[None, :] - xs[:, None]) / s[:, None]
    log_cond = _std(noise, zp)["logpdf"] - np.log(s)[:, None]
    with np.errstate(divide="ignore"):
        log_p = np.log(p)[:, None]
    log_marg = logsumexp(log_cond + log_p, axis=0)
    ratios = [np.abs(log_cond[live] - log_marg)]
    if bounds is not None:
        for key, col in (("logcdf", 0), ("logsf", -1)):
            log_atom = f[key][:, col]
            ratios.append(np.abs(log_atom[live] - logsumexp(log_atom + log_p[:, 0])))
    eps_ach = float(max(r.max() for r in ratios))
    if bounds is None:
        kinds = {(float(a), float(b)) for a, b in zip(xs[live], s[live], strict=True)}
        scales = {b for _, b in kinds}
        unbounded = len(kinds) > 1 if noise == "gaussian" else len(scales) > 1
        if unbounded:
            eps_ach = math.inf
    return _finish(p, masses, eps_ach, eps, d)

