"""The context-aware Laplace mechanism of 003 Thm 6."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mechopt._validation import check_epsilon, check_finite, check_number, check_positive
from mechopt._errors import InputError

from ._common import RNG, _add_noise, _probability_vector

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
    eps = check_epsilon(epsilon, "epsilon", positive=True)
    pm = check_number(p_min, "p_min")
    if not 0 < pm <= 1:
        raise InputError("p_min", f"must lie in (0, 1], got {p_min!r}")
    dx = check_positive(delta_x, "delta_x")
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
    eps = check_epsilon(epsilon, "epsilon", positive=True)
    dx = check_positive(delta_x, "delta_x")
    a = check_finite(alpha, "alpha")
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
    x, rng
        As :func:`gaussian_mechanism`.
    scale : array_like
        Laplace scale(s) ``b``, broadcast with ``x``.
    clip : (float, float) or None
        Output range ``[l, u]`` of Thm 6.

    Returns
    -------
    numpy.ndarray
        Outputs with the broadcast shape, in ``[l, u]`` when clipped.

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
    return _add_noise(x, scale, "scale", rng, "laplace", clip)


