"""The sampling mechanism of 003 eq. 20, Prop. 2."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mechopt._validation import check_delta, check_epsilon, check_number
from mechopt._errors import InputError

from ._common import RNG, _rng

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
    eps = check_epsilon(epsilon, "epsilon")
    d = check_delta(delta, "delta")
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
    eps = check_epsilon(epsilon, "epsilon")
    lam_ = check_number(lam, "lam")
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
    lam_ = check_number(lam, "lam")
    if not 0 <= lam_ <= 1:
        raise InputError("lam", f"must lie in [0, 1], got {lam!r}")
    gen = _rng(rng)
    xs = np.asarray(x, dtype=float)
    keep = gen.random(xs.shape) < lam_
    fresh = np.asarray(draw_prior(gen, xs.size), dtype=float)
    if fresh.size != xs.size:
        raise InputError("draw_prior", f"must return {xs.size} draws, returned {fresh.size}")
    return np.where(keep, xs, fresh.reshape(xs.shape))


