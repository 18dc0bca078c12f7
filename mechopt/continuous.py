"""Continuous-valued LIP mechanisms of 003 §IV-C, and a numerical check of their claims.

Paper 003 is Jiang, Seif, Tandon, Li, *Context-Aware Local Information Privacy*. Its
§IV-C gives three mechanisms for a real-valued input ``X`` with a known prior:

* the **sampling mechanism** (eq. 20, Prop. 2): release ``X`` with probability ``λ``,
  else a fresh draw from the prior;
* the **context-aware Gaussian mechanism** (Def. 8, Lemma 4, Prop. 3, Thm 5, Cor. 10):
  ``Y = X + N(0, σ²)`` with ``σ`` calibrated through the ``E_γ``-divergence;
* the **context-aware Laplace mechanism** (Thm 6, eqs. 25–26): ``Y = X + Lap(0, b)``
  with ``b`` from the smallest prior probability, or ``b(x)`` per input.

Each formula is implemented as printed. The paper's claims are then judged against its
own definition of (ε, δ)-LIP (eq. 3): for every input set ``S_x`` and output set ``S_y``,
``Pr(Y∈S_y) ≥ e^-ε Pr(Y∈S_y | X∈S_x) − δ`` and ``Pr(Y∈S_y) ≤ e^ε Pr(Y∈S_y | X∈S_x) + δ``.
By convexity of ``E_γ`` the worst ``S_x`` is a single input, so the smallest δ that
eq. 3 allows at a given ε is exactly::

    δ(ε) = sup_x max( e^-ε · E_{e^ε}(P_{Y|x} ‖ P_Y),  E_{e^ε}(P_Y ‖ P_{Y|x}) )

The paper's Cor. 9 (eq. 22) drops the factor ``e^-ε`` — a sufficient, slightly stronger
condition; both are reported. Pure ε-LIP (δ = 0) is the density ratio of eq. 7 / eq. 8.
:func:`check_additive_lip` and :func:`check_channel_lip` compute these by quadrature on a
fine grid. What they found is written up in ``docs/continuous.md``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import integrate
from scipy.optimize import brentq
from scipy.special import log_ndtr, logsumexp, ndtr

from mechopt._errors import InputError, SolverError

__all__ = [
    "ContinuousLIPCheck",
    "check_additive_lip",
    "check_channel_lip",
    "discretize_prior",
    "e_gamma",
    "e_gamma_gaussian",
    "gaussian_delta",
    "gaussian_delta_at",
    "gaussian_mechanism",
    "gaussian_sigma",
    "gaussian_sigma_at",
    "laplace_mechanism",
    "laplace_scale",
    "laplace_scale_dependent",
    "sampling_delta",
    "sampling_lambda",
    "sampling_mechanism",
]

Noise = Literal["gaussian", "laplace"]
RNG = np.random.Generator | int | None

# ---------------------------------------------------------------------------
# validation — once, here, returning cleaned values


def _real(value: object, field: str) -> float:
    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise TypeError(f"{field}: must be a real number, got {value!r}") from None
    if math.isnan(out):
        raise InputError(field, f"must be a number, got {value!r}")
    return out


def _epsilon(value: object, *, positive: bool = False) -> float:
    eps = _real(value, "epsilon")
    if not math.isfinite(eps) or eps < 0 or (positive and eps == 0):
        need = "> 0" if positive else ">= 0"
        raise InputError("epsilon", f"must be finite and {need}, got {value!r}")
    return eps


def _delta(value: object, *, low_open: bool = False, high_open: bool = False) -> float:
    d = _real(value, "delta")
    lo_ok = d > 0 if low_open else d >= 0
    hi_ok = d < 1 if high_open else d <= 1
    if not (lo_ok and hi_ok):
        interval = ("(" if low_open else "[") + "0, 1" + (")" if high_open else "]")
        raise InputError("delta", f"must lie in {interval}, got {value!r}")
    return d


def _positive(value: object, field: str) -> float:
    v = _real(value, field)
    if not (math.isfinite(v) and v > 0):
        raise InputError(field, f"must be finite and > 0, got {value!r}")
    return v


def _finite(value: object, field: str) -> float:
    v = _real(value, field)
    if not math.isfinite(v):
        raise InputError(field, f"must be finite, got {value!r}")
    return v


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
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise InputError(field, f"entries must be finite and >= 0, got {p!r}")
    total = float(p.sum())
    if abs(total - 1.0) > 1e-9:
        raise InputError(field, f"must sum to 1 (within 1e-9), sums to {total!r}")
    return p / total


def _interval(value: object, field: str) -> tuple[float, float]:
    try:
        lo, hi = value  # type: ignore[misc]
    except (TypeError, ValueError):
        raise InputError(field, f"must be a pair (lo, hi), got {value!r}") from None
    lo, hi = _finite(lo, f"{field}[0]"), _finite(hi, f"{field}[1]")
    if not lo < hi:
        raise InputError(field, f"needs lo < hi, got {value!r}")
    return lo, hi


def _clip(clip: tuple[float, float] | None) -> tuple[float, float] | None:
    return None if clip is None else _interval(clip, "clip")


def _rng(rng: RNG) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


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
    gamma = _real(gamma, "gamma")
    if not (math.isfinite(gamma) and gamma >= 0):
        raise InputError("gamma", f"must be finite and >= 0, got {gamma!r}")
    lo, hi = _finite(lo, "lo"), _finite(hi, "hi")
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


# ---------------------------------------------------------------------------
# sampling mechanism (003 eq. 20, Prop. 2)


def sampling_lambda(*, epsilon: float, delta: float) -> float:
    """Keep-probability ``λ`` of the sampling mechanism, 003 Prop. 2, as printed.

    ``λ = min{δ e^ε, 1 − e^-ε + δ e^-ε}``. The mechanism (eq. 20) releases ``Y = X``
    with probability ``λ`` and a fresh draw ``X̃ ~ f_X`` otherwise.

    Parameters
    ----------
    epsilon : float
        ``ε >= 0``.
    delta : float
        ``δ ∈ [0, 1]``.

    Returns
    -------
    float
        ``λ ∈ [0, 1]``. Under eq. 3 with an atomless prior this ``λ`` is exactly tight:
        ``sampling_delta(λ, epsilon=ε) == δ`` (see :func:`sampling_delta`).

    Raises
    ------
    InputError
        If ``ε`` is negative or not finite, or ``δ`` is outside ``[0, 1]``.

    Examples
    --------
    >>> round(sampling_lambda(epsilon=1.0, delta=0.1), 6)
    0.271828
    """
    eps = _epsilon(epsilon)
    d = _delta(delta)
    return min(d * math.exp(eps), 1.0 - math.exp(-eps) + d * math.exp(-eps))


def sampling_delta(lam: float, *, epsilon: float) -> float:
    """Smallest δ for which the sampling mechanism meets (ε, δ)-LIP (003 eq. 3).

    For a prior without atoms, ``Y = X`` w.p. ``λ`` else ``X̃ ~ f_X``, so
    ``Pr(Y∈S | X∈S_x) = λ a + (1−λ) p`` with ``p = Pr(X∈S)``,
    ``a = Pr(X∈S | X∈S_x)``. The two inequalities of eq. 3 are worst at
    ``a = 1, p → 0`` and ``a = 0, p → 1``::

        δ(λ, ε) = max(0, λ e^-ε, 1 − e^ε (1 − λ))

    (With atoms in the prior the achieved δ is smaller.) Cor. 9's sufficient condition
    would instead give ``max(λ, 1 − e^ε(1−λ))``.

    Parameters
    ----------
    lam : float
        ``λ ∈ [0, 1]``.
    epsilon : float
        ``ε >= 0``.

    Returns
    -------
    float
        δ in ``[0, 1]``.

    Raises
    ------
    InputError
        If ``λ`` is outside ``[0, 1]`` or ``ε`` is negative or not finite.

    Examples
    --------
    >>> round(sampling_delta(sampling_lambda(epsilon=1.0, delta=0.1), epsilon=1.0), 12)
    0.1
    """
    eps = _epsilon(epsilon)
    lam_ = _real(lam, "lam")
    if not 0 <= lam_ <= 1:
        raise InputError("lam", f"must lie in [0, 1], got {lam!r}")
    return max(0.0, lam_ * math.exp(-eps), 1.0 - math.exp(eps) * (1.0 - lam_))


def sampling_mechanism(
    x: ArrayLike,
    *,
    lam: float,
    draw_prior: Callable[[np.random.Generator, int], ArrayLike],
    rng: RNG = None,
) -> NDArray[np.float64]:
    """Release each input through the sampling mechanism, 003 eq. 20.

    ``Y = X`` with probability ``λ``, else ``Y = X̃`` drawn independently from the prior.

    Parameters
    ----------
    x : array_like
        Inputs, any shape.
    lam : float
        Keep-probability ``λ ∈ [0, 1]``, e.g. from :func:`sampling_lambda`.
    draw_prior : callable
        ``draw_prior(rng, n)`` returns ``n`` independent draws from ``f_X``.
    rng : numpy.random.Generator or int or None
        Generator or seed; ``None`` draws a seed from the OS.

    Returns
    -------
    numpy.ndarray
        Outputs, shape of ``x``.

    Raises
    ------
    InputError
        If ``λ`` is outside ``[0, 1]`` or ``draw_prior`` returns the wrong number of draws.

    Examples
    --------
    >>> y = sampling_mechanism([0.1, 0.2, 0.3], lam=1.0,
    ...                        draw_prior=lambda g, n: g.normal(size=n), rng=0)
    >>> y.tolist()
    [0.1, 0.2, 0.3]
    """
    lam_ = _real(lam, "lam")
    if not 0 <= lam_ <= 1:
        raise InputError("lam", f"must lie in [0, 1], got {lam!r}")
    gen = _rng(rng)
    xs = np.asarray(x, dtype=float)
    keep = gen.random(xs.shape) < lam_
    fresh = np.asarray(draw_prior(gen, xs.size), dtype=float)
    if fresh.size != xs.size:
        raise InputError("draw_prior", f"must return {xs.size} draws, returned {fresh.size}")
    return np.where(keep, xs, fresh.reshape(xs.shape))


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
    eps = _epsilon(epsilon)
    mu = _finite(mu_x, "mu_x")
    sx = _positive(sigma_x, "sigma_x")
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
    lo, hi = _interval(support, "support")
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
        δ in ``[0, 1]``.

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
    sn = _positive(sigma_n, "sigma_n")
    mu = _finite(mu_x, "mu_x")
    if support is None:
        _epsilon(epsilon)
        _positive(sigma_x, "sigma_x")
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
    eps = _epsilon(epsilon)
    d = _delta(delta, low_open=True, high_open=True)
    mu = _finite(mu_x, "mu_x")
    sx = _positive(sigma_x, "sigma_x")
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
    epsilon : float
        ``ε >= 0``.
    delta : float
        ``δ ∈ (0, 1)``.
    mu_x, sigma_x : float
        Gaussian prior.
    support : (float, float)
        Input interval.

    Returns
    -------
    float
        ``σ_N``.

    Raises
    ------
    InputError
        On bad parameters.

    Examples
    --------
    >>> round(gaussian_sigma(epsilon=1.0, delta=1e-4, mu_x=0.0, sigma_x=5.0,
    ...                      support=(-10.0, 10.0)), 3)
    35.276
    """
    eps = _epsilon(epsilon)
    d = _delta(delta, low_open=True, high_open=True)
    mu = _finite(mu_x, "mu_x")
    sx = _positive(sigma_x, "sigma_x")
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
    sd = _positive_array(sigma, "sigma")
    xs = np.asarray(x, dtype=float)
    return xs + _rng(rng).normal(0.0, 1.0, np.broadcast(xs, sd).shape) * sd


# ---------------------------------------------------------------------------
# context-aware Laplace mechanism (003 Thm 6)


def laplace_scale(*, epsilon: float, p_min: float, delta_x: float) -> float:
    """Instance-independent Laplace scale ``b_LIP^indep`` of 003 Thm 6, eq. 25, as printed.

    ``b = ΔX / ln((e^ε − P_min) / (1 − P_min))`` if ``ε < ln(1/P_min)``, else
    ``b = ΔX / ε`` (the ε-LDP scale). ``P_min`` is the smallest prior probability of a
    discrete (discretised) input. The first branch is valid for every ``ε > 0`` and
    always needs less noise than the second (``docs/continuous.md``).

    Parameters
    ----------
    epsilon : float
        ``ε > 0``.
    p_min : float
        ``P_min ∈ (0, 1]``.
    delta_x : float
        ``ΔX = x_max − x_min > 0``.

    Returns
    -------
    float
        The scale ``b``.

    Raises
    ------
    InputError
        If ``ε <= 0``, ``P_min`` is outside ``(0, 1]`` or ``ΔX <= 0``.

    Examples
    --------
    >>> round(laplace_scale(epsilon=1.0, p_min=0.2333333, delta_x=2.0), 4)
    1.7007
    """
    eps = _epsilon(epsilon, positive=True)
    pm = _real(p_min, "p_min")
    if not 0 < pm <= 1:
        raise InputError("p_min", f"must lie in (0, 1], got {p_min!r}")
    dx = _positive(delta_x, "delta_x")
    if eps < math.log(1.0 / pm):
        return dx / math.log((math.exp(eps) - pm) / (1.0 - pm))
    return dx / eps


def laplace_scale_dependent(prior: ArrayLike, *, epsilon: float, delta_x: float, alpha: float) -> NDArray[np.float64]:
    """Instance-dependent Laplace scale of 003 Thm 6, eq. 26, as printed.

    ``b(x) = ΔX / (α_ε P_X(x) + ε)``. The paper never defines ``α_ε``; it is a required
    argument here. Whether ε-LIP holds depends on ``α`` and on the output range: with
    unequal ``b(x)`` and an unbounded output the leakage is infinite, so release
    through :func:`laplace_mechanism` with ``clip=(l, u)``, and check the pair
    ``(α, clip)`` with :func:`check_additive_lip` (measurements in
    ``docs/continuous.md``).

    Parameters
    ----------
    prior : array_like
        ``P_X(x)`` per input, shape ``(k,)``.
    epsilon : float
        ``ε > 0``.
    delta_x : float
        ``ΔX > 0``.
    alpha : float
        ``α_ε >= 0``; ``0`` gives the ε-LDP scale ``ΔX/ε``.

    Returns
    -------
    numpy.ndarray
        ``b(x)``, shape ``(k,)``.

    Raises
    ------
    InputError
        On a bad prior or parameter.

    Examples
    --------
    >>> laplace_scale_dependent([0.5, 0.5], epsilon=1.0, delta_x=1.0, alpha=2.0).tolist()
    [0.5, 0.5]
    """
    eps = _epsilon(epsilon, positive=True)
    dx = _positive(delta_x, "delta_x")
    a = _finite(alpha, "alpha")
    if a < 0:
        raise InputError("alpha", f"must be >= 0, got {alpha!r}")
    p = _probability_vector(np.atleast_1d(np.asarray(prior, dtype=float)), "prior")
    return dx / (a * p + eps)


def laplace_mechanism(
    x: ArrayLike,
    *,
    scale: ArrayLike,
    rng: RNG = None,
    clip: tuple[float, float] | None = None,
) -> NDArray[np.float64]:
    """Release ``Y = X + Lap(0, b)`` (003 §IV-C2b), optionally clipped to ``[l, u]``.

    Clipping is post-processing, so it never weakens a guarantee; it is what makes
    eq. 26's unequal scales leak a finite amount.

    Parameters
    ----------
    x : array_like
        Inputs.
    scale : array_like
        Laplace scale(s) ``b``, broadcast with ``x``.
    rng : numpy.random.Generator or int or None
        Generator or seed.
    clip : (float, float) or None
        Output range ``[l, u]`` of Thm 6.

    Returns
    -------
    numpy.ndarray
        Outputs with the broadcast shape.

    Raises
    ------
    InputError
        If a scale is not positive or ``clip`` is not an interval.

    Examples
    --------
    >>> y = laplace_mechanism([0.0, 2.0], scale=100.0, rng=1, clip=(0.0, 2.0))
    >>> bool(((y >= 0) & (y <= 2)).all())
    True
    """
    b = _positive_array(scale, "scale")
    bounds = _clip(clip)
    xs = np.asarray(x, dtype=float)
    y = xs + _rng(rng).laplace(0.0, 1.0, np.broadcast(xs, b).shape) * b
    return y if bounds is None else np.clip(y, *bounds)


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
    lo, hi = _finite(lo, "lo"), _finite(hi, "hi")
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
    eps = _epsilon(epsilon)
    d = _delta(delta)
    p = _probability_vector(np.atleast_1d(np.asarray(prior, dtype=float)), "prior")
    q = np.asarray(channel, dtype=float)
    if q.ndim != 2 or q.shape[0] != p.size:
        raise InputError("channel", f"must be a ({p.size}, m) matrix, got shape {q.shape}")
    if not np.all(np.isfinite(q)) or np.any(q < 0) or np.any(np.abs(q.sum(axis=1) - 1) > 1e-9):
        raise InputError("channel", "entries must be >= 0 and every row must sum to 1 (within 1e-9)")
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
    epsilon : float
        Claimed ``ε >= 0``.
    delta : float, optional
        Claimed ``δ ∈ [0, 1]``.
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
    eps = _epsilon(epsilon)
    d = _delta(delta)
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
