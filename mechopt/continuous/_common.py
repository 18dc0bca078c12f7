"""Shared pieces of the continuous mechanisms: argument checks (through mechopt._validation),
the result of a numerical LIP check, and the E_γ-divergence (003 Def. 8, Prop. 3, Lemma 4)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import integrate
from scipy.optimize import brentq
from scipy.special import ndtr

from mechopt._errors import InputError
from mechopt._validation import (check_finite, check_interval, check_number,
                                 check_prior)

Noise = Literal["gaussian", "laplace"]
RNG = np.random.Generator | int | None

# ---------------------------------------------------------------------------
# validation: every check goes through mechopt._validation


def _positive_array(value: ArrayLike, field: str) -> NDArray[np.float64]:
    arr = np.asarray(value, dtype=float)
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise InputError(field, f"must be finite and > 0 everywhere, got {value!r}")
    return arr


def _support_prior(support: ArrayLike, prior: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    xs = np.asarray(support, dtype=float)
    p = np.asarray(prior, dtype=float)
    if xs.ndim != 1 or xs.size == 0 or not np.all(np.isfinite(xs)):
        raise InputError("support", f"must be a non-empty 1-D array of finite reals, got {support!r}")
    if p.shape != xs.shape:
        raise InputError("prior", f"must have the shape of support {xs.shape}, got {p.shape}")
    return xs, _probability_vector(p, "prior")


def _probability_vector(p: NDArray[np.float64], field: str) -> NDArray[np.float64]:
    """A probability vector (mechopt._validation.check_prior), renormalised exactly to sum 1."""
    p = check_prior(np.asarray(p, dtype=float), field)
    return p / p.sum()


def _clip(clip: tuple[float, float] | None) -> tuple[float, float] | None:
    return None if clip is None else check_interval(clip, "clip")


def _rng(rng: RNG) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _add_noise(x: ArrayLike, spread: ArrayLike, field: str, rng: RNG, draw: str,
               clip: tuple[float, float] | None = None) -> NDArray[np.float64]:
    """``x + spread · Z``, broadcast, ``Z`` drawn by ``Generator.<draw>(0, 1)`` (``normal``, ``laplace``).

    Clipped to ``clip = (l, u)`` if given; every argument is checked before the draw.
    """
    s = _positive_array(spread, field)
    bounds = _clip(clip)
    xs = np.asarray(x, dtype=float)
    y = xs + getattr(_rng(rng), draw)(0.0, 1.0, np.broadcast(xs, s).shape) * s
    return y if bounds is None else np.clip(y, *bounds)


# ---------------------------------------------------------------------------
# the result of a numerical check


@dataclass(frozen=True)
class ContinuousLIPCheck:
    """Achieved (ε, δ)-LIP of a mechanism under a prior, computed numerically.

    Attributes
    ----------
    epsilon, delta : float
        The claim being checked.
    epsilon_achieved : float
        ``sup_{x,y} |ln f_{Y|X}(y|x) / f_Y(y)|`` (003 eq. 7 / eq. 8): the smallest
        pure-LIP budget; ``inf`` when the ratio is unbounded.
    delta_achieved : float
        Smallest δ for which 003 eq. 3 holds at ``epsilon``:
        ``max_x max(e^-ε E_{e^ε}(P_{Y|x}‖P_Y), E_{e^ε}(P_Y‖P_{Y|x}))``.
    delta_e_gamma : float
        The δ of 003 Cor. 9 / Thm 5 (both ``E_{e^ε} ≤ δ``), a sufficient condition;
        always ``>= delta_achieved``.
    holds : bool
        Whether the claim holds: ``epsilon_achieved <= epsilon`` when ``delta == 0``,
        else ``delta_achieved <= delta`` (each up to ``1e-9``).
    worst_index : int
        Index (into the support) of the input with the largest eq.-3 δ.
    delta_by_input : numpy.ndarray
        The eq.-3 δ of every input, shape ``(k,)``.
    """

    epsilon: float
    delta: float
    epsilon_achieved: float
    delta_achieved: float
    delta_e_gamma: float
    holds: bool
    worst_index: int
    delta_by_input: NDArray[np.float64]


def _finish(
    prior: NDArray[np.float64],
    masses: NDArray[np.float64],
    eps_achieved: float,
    epsilon: float,
    delta: float,
) -> ContinuousLIPCheck:
    gamma = math.exp(epsilon)
    p_y = prior @ masses
    e_fwd = np.maximum(masses - gamma * p_y, 0.0).sum(axis=1)  # E_{e^ε}(P_{Y|x} ‖ P_Y)
    e_bwd = np.maximum(p_y - gamma * masses, 0.0).sum(axis=1)  # E_{e^ε}(P_Y ‖ P_{Y|x})
    live = prior > 0
    by_input = np.where(live, np.maximum(e_fwd / gamma, e_bwd), 0.0)
    sufficient = np.where(live, np.maximum(e_fwd, e_bwd), 0.0)
    worst = int(np.argmax(by_input))
    if delta == 0:
        holds = eps_achieved <= epsilon + 1e-9
    else:
        holds = float(by_input[worst]) <= delta + 1e-9
    return ContinuousLIPCheck(
        epsilon=epsilon,
        delta=delta,
        epsilon_achieved=eps_achieved,
        delta_achieved=float(by_input[worst]),
        delta_e_gamma=float(sufficient.max()),
        holds=bool(holds),
        worst_index=worst,
        delta_by_input=by_input,
    )


# ---------------------------------------------------------------------------
# E_γ-divergence (003 Def. 8, Prop. 3, Lemma 4)


def e_gamma(
    f: Callable[[NDArray[np.float64]], ArrayLike],
    g: Callable[[NDArray[np.float64]], ArrayLike],
    *,
    gamma: float,
    lo: float,
    hi: float,
    n: int = 2001,
) -> float:
    """E_γ-divergence of two densities on the line, by adaptive quadrature (003 Def. 8).

    ``E_γ(f‖g) = sup_S f(S) − γ g(S) = ∫_{f ≥ γg} (f(y) − γ g(y)) dy``. The sign changes
    of ``f − γg`` are located on a grid of ``n`` points and refined by Brent's method;
    each interval where ``f > γg`` is integrated with :func:`scipy.integrate.quad`.

    Parameters
    ----------
    f, g : callable
        Vectorised densities, ``array (n,) -> array (n,)``.
    gamma : float
        ``γ >= 0``.
    lo, hi : float
        Integration range. Mass of ``f`` outside it is ignored: choose it wide enough.
    n : int, optional
        Grid size used to bracket the sign changes.

    Returns
    -------
    float
        ``E_γ(f‖g)`` restricted to ``[lo, hi]``.

    Raises
    ------
    InputError
        If ``gamma < 0``, ``lo >= hi`` or ``n < 3``.

    Examples
    --------
    >>> from scipy.stats import norm
    >>> round(e_gamma(norm(0, 1).pdf, norm(1, 1).pdf, gamma=1.0, lo=-12, hi=13), 6)
    0.382925
    """
    gamma = check_number(gamma, "gamma")
    if not (math.isfinite(gamma) and gamma >= 0):
        raise InputError("gamma", f"must be finite and >= 0, got {gamma!r}")
    lo, hi = check_finite(lo, "lo"), check_finite(hi, "hi")
    if not lo < hi:
        raise InputError("lo", f"must be < hi, got lo={lo!r}, hi={hi!r}")
    if n < 3:
        raise InputError("n", f"must be >= 3, got {n!r}")

    def h(y: NDArray[np.float64] | float) -> NDArray[np.float64]:
        return np.asarray(f(y), dtype=float) - gamma * np.asarray(g(y), dtype=float)

    ys = np.linspace(lo, hi, n)
    hs = h(ys)
    pos = hs > 0

    def edge(i_out: int, i_in: int) -> float:
        # h(ys[i_out]) <= 0 < h(ys[i_in]): the boundary of {h > 0} lies between them
        if hs[i_out] == 0:
            return float(ys[i_out])
        a, b = sorted((ys[i_out], ys[i_in]))
        return float(brentq(lambda t: float(h(t)), a, b, xtol=1e-14))

    total = 0.0
    starts = np.flatnonzero(pos & ~np.r_[False, pos[:-1]])
    ends = np.flatnonzero(pos & ~np.r_[pos[1:], False])
    for i, j in zip(starts, ends, strict=True):
        a = lo if i == 0 else edge(i - 1, i)
        b = hi if j == n - 1 else edge(j + 1, j)
        val, _ = integrate.quad(lambda t: float(h(t)), a, b, limit=200, epsabs=1e-13, epsrel=1e-10)
        total += val
    return max(total, 0.0)


def e_gamma_gaussian(
    mu1: ArrayLike,
    sigma1: ArrayLike,
    mu2: ArrayLike,
    sigma2: ArrayLike,
    *,
    gamma: ArrayLike,
) -> NDArray[np.float64]:
    """Closed-form E_γ-divergence of two Gaussians, ``E_γ(N(μ1, σ1²) ‖ N(μ2, σ2²))``.

    With ``y_l <= y_u`` the points where ``f = γ g`` (roots of a quadratic in ``y``),
    003 Lemma 4 (eq. 23), valid for ``σ1 >= σ2``, reads::

        E_γ(f‖g) = 1 + Q((y_u−μ1)/σ1) − Q((y_l−μ1)/σ1)
                   − γ [1 + Q((y_u−μ2)/σ2) − Q((y_l−μ2)/σ2)]

    (``{f >= γg}`` is the complement of ``(y_l, y_u)``; ``1 − γ`` if there are no roots).
    For ``σ1 < σ2`` the set is the interval ``[y_l, y_u]`` and the same bookkeeping
    gives ``Φ-differences`` over it; this equals the paper's route through Prop. 3,
    ``E_γ(f‖g) = γ E_{1/γ}(g‖f) − γ + 1`` (checked in the tests). Equal variances give a
    half-line. Probabilities are taken from the tail that avoids cancellation.

    Parameters
    ----------
    mu1, sigma1, mu2, sigma2, gamma : array_like
        Broadcast together; ``σ > 0``, ``γ >= 0``.

    Returns
    -------
    numpy.ndarray
        ``E_γ`` in ``[max(0, 1−γ), 1]``, with the broadcast shape (0-d for scalars).

    Raises
    ------
    InputError
        If a ``σ`` is not positive or ``γ`` is negative.

    Examples
    --------
    >>> round(float(e_gamma_gaussian(0.0, 1.0, 1.0, 1.0, gamma=1.0)), 6)
    0.382925
    """
    m1, s1, m2, s2, gam = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (mu1, sigma1, mu2, sigma2, gamma)))
    if not (np.all(np.isfinite(s1)) and np.all(s1 > 0) and np.all(np.isfinite(s2)) and np.all(s2 > 0)):
        raise InputError("sigma", f"must be finite and > 0, got sigma1={sigma1!r}, sigma2={sigma2!r}")
    if not (np.all(np.isfinite(gam)) and np.all(gam >= 0)):
        raise InputError("gamma", f"must be finite and >= 0, got {gamma!r}")
    if not (np.all(np.isfinite(m1)) and np.all(np.isfinite(m2))):
        raise InputError("mu", f"must be finite, got mu1={mu1!r}, mu2={mu2!r}")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _e_gamma_gaussian(m1, s1, m2, s2, gam)


def _e_gamma_gaussian(
    m1: NDArray[np.float64],
    s1: NDArray[np.float64],
    m2: NDArray[np.float64],
    s2: NDArray[np.float64],
    gam: NDArray[np.float64],
) -> NDArray[np.float64]:
    # In t = y − μ2 with d = μ1 − μ2, ln(f / γg) = a t² + b t + c: a quadratic whose
    # sign pattern (a > 0: outside the roots, a < 0: between them) gives {f >= γg}.
    d = m1 - m2
    a = (s1 - s2) * (s1 + s2) / (2 * s1**2 * s2**2)
    b = d / s1**2
    c = -(d**2) / (2 * s1**2) + np.log(s2 / s1) - np.log(gam)  # γ = 0 gives C = +inf
    disc = b * b - 4 * a * c
    root = np.sqrt(np.maximum(disc, 0.0))
    q = -0.5 * (b + np.where(b >= 0, 1.0, -1.0) * root)  # stable quadratic roots
    r_a = q / a
    r_b = c / q
    t1 = np.minimum(r_a, r_b)
    t2 = np.maximum(r_a, r_b)

    def cdf(t: NDArray[np.float64], mean: NDArray[np.float64], sd: NDArray[np.float64]) -> NDArray[np.float64]:
        return ndtr((t - mean) / sd)

    def sf(t: NDArray[np.float64], mean: NDArray[np.float64], sd: NDArray[np.float64]) -> NDArray[np.float64]:
        return ndtr((mean - t) / sd)

    def between(
        lo: NDArray[np.float64],
        hi: NDArray[np.float64],
        mean: NDArray[np.float64],
        sd: NDArray[np.float64],
    ) -> NDArray[np.float64]:
        upper = (lo - mean) / sd >= 0  # both in the upper tail: subtract survivals
        return np.where(
            upper,
            sf(lo, mean, sd) - sf(hi, mean, sd),
            cdf(hi, mean, sd) - cdf(lo, mean, sd),
        )

    zero = np.zeros_like(d)
    # σ1 > σ2: {f >= γg} = (-inf, t1] ∪ [t2, inf)  — 003 eq. (23)
    outer = (cdf(t1, d, s1) + sf(t2, d, s1)) - gam * (cdf(t1, zero, s2) + sf(t2, zero, s2))
    wide = np.where(disc > 0, outer, 1.0 - gam)
    # σ1 < σ2: {f >= γg} = [t1, t2]
    inner = between(t1, t2, d, s1) - gam * between(t1, t2, zero, s2)
    narrow = np.where(disc > 0, inner, 0.0)
    # σ1 = σ2: a half-line (B ≠ 0) or everything / nothing (B = 0)
    t0 = -c / b
    right = sf(t0, d, s1) - gam * sf(t0, zero, s2)
    left = cdf(t0, d, s1) - gam * cdf(t0, zero, s2)
    flat = np.where(b > 0, right, np.where(b < 0, left, np.maximum(1.0 - gam, 0.0)))
    out = np.where(a > 0, wide, np.where(a < 0, narrow, flat))
    out = np.where(gam == 0, 1.0, out)
    return np.clip(out, np.maximum(1.0 - gam, 0.0), 1.0)


