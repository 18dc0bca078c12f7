"""Exact scores of S_k-invariant subset mixtures under any prior (histogram MSE, mutual information).

A :class:`mechopt.families.SubsetMixture` with ratio ``r`` and components ``(d, w_d)``
has one column per d-subset ``S``, proportional to ``v_S = 1 + a 1_S`` (``a = r - 1``),
with weight ``w_d k / (r d + k - d)`` on the mean over d-subsets (the row sum of
component ``d`` is ``r C(k-1, d-1) + C(k-1, d)``, and ``C(k, d)`` divided by it is
``k / (r d + k - d)``). The columns' utilities depend on ``S`` only through two prior
sums, ``π(S) = Σ_{x∈S} P_x`` and ``π₂(S) = Σ_{x∈S} P_x²``:

* histogram MSE: ``μ(v_S) = Σ_x P_x² v_x² / (P·v) = (π₂ + (r² - 1) π₂(S)) / (1 + a π(S))``;
* mutual information: ``μ(v_S) = r log r · π(S) - y log y`` with ``y = 1 + a π(S)``.

The non-linear parts are written as integrals of exponentials of ``π(S)``,

    1/y = ∫_0^∞ e^{-u y} du,        log y = ∫_0^∞ (e^{-u} - e^{-u y}) / u du   (Frullani),

and the mean over d-subsets of ``e^{-u a π(S)}`` (times 1, ``π(S)`` or ``π₂(S)``) is an
elementary symmetric polynomial of ``z_x = e^{-u a P_x}``, computed for every ``d`` at
once by a dynamic programme over the inputs that keeps means (convex combinations of
positive terms: no cancellation). The one-dimensional integral in ``u`` is adaptive
Gauss–Kronrod (:func:`scipy.integrate.quad_vec`) to a relative ``1e-13``: deterministic
and exact to rounding, with no sampling. ``tests/test_baseline_exact.py`` checks it
against the channel listed in full at small k.
"""

from __future__ import annotations

import math

import numpy as np

#: relative accuracy asked of the quadrature
QUAD_REL = 1e-13


def subset_means(z: np.ndarray, marks: tuple[np.ndarray, ...] = (), top: int | None = None) -> tuple[np.ndarray, ...]:
    """Means over the d-subsets ``S`` (d = 0..top) of ``Π_{x∈S} z_x`` and of ``m(S) Π_{x∈S} z_x``.

    ``m(S) = Σ_{x∈S} m_x`` for each array ``m`` of ``marks``. Returns ``(E, *M)``,
    arrays of length ``top + 1`` (``top`` defaults to ``k``; the means for ``d <= top``
    need no larger ``d``, so a smaller ``top`` changes nothing but the time; ``z >= 0``:
    every term is non-negative).

    Examples
    --------
    >>> P = np.array([0.5, 0.3, 0.2])
    >>> E, M = subset_means(0.5 ** P, (P,))
    >>> bool(np.isclose(E[2], (0.5**0.8 + 0.5**0.7 + 0.5**0.5) / 3)), bool(np.isclose(M[3], 0.5))
    (True, True)
    >>> bool(np.allclose(subset_means(0.5 ** P, (P,), top=1)[1], M[:2]))
    True
    """
    k = len(z)
    top = k if top is None else min(int(top), k)
    A = np.zeros(top + 1)
    A[0] = 1.0
    Ms = [np.zeros(top + 1) for _ in marks]
    j = np.arange(top + 1, dtype=float)
    for n in range(1, k + 1):
        keep = (n - j) / n  # C(n-1, j) / C(n, j) (entries j > n multiply zeros)
        take = j[1:] * (z[n - 1] / n)  # C(n-1, j-1) / C(n, j), times z_n
        for M, m in zip(Ms, marks):
            new = take * (M[:-1] + m[n - 1] * A[:-1])
            M *= keep
            M[1:] += new
        new = take * A[:-1]
        A *= keep
        A[1:] += new
    return (A, *Ms)


def _weights(k: int, r: float, components) -> np.ndarray:
    """``w_d k / (r d + k - d)`` for d = 0..k (module docstring)."""
    f = np.zeros(k + 1)
    for d, w in components:
        f[int(d)] += float(w) * k / (r * int(d) + k - int(d))
    return f


def _integrate(fun, k: int) -> np.ndarray:
    from scipy.integrate import quad_vec

    val, _ = quad_vec(fun, 0.0, math.inf, epsabs=0.0, epsrel=QUAD_REL, limit=2000)
    return np.asarray(val, dtype=float)


def subset_utility(P: np.ndarray, r: float, components, *, mi: bool) -> float:
    """``Σ`` over the family's columns of the objective's column utility (see the module docstring).

    With ``mi`` the utility is the mutual information in nats, else the histogram MSE's
    ``Σ_y Σ_x P_x² Q(y|x)² / Q(y)`` (the objective is ``Σ P`` minus it).

    Examples
    --------
    k-RR (1-subsets) at ratio 3 on a prior ``(1/2, 1/4, 1/4)``: the channel's own MI.

    >>> P = np.array([0.5, 0.25, 0.25])
    >>> Q = (np.ones((3, 3)) + 2 * np.eye(3)) / 5
    >>> q = P @ Q
    >>> mi = float((P[:, None] * Q * np.log(Q / q)).sum())
    >>> bool(abs(subset_utility(P, 3.0, [(1, 1.0)], mi=True) - mi) < 1e-13)
    True
    """
    P = np.asarray(P, dtype=float)
    k = len(P)
    a = r - 1.0
    f = _weights(k, r, components)
    live = f > 0
    top = int(np.flatnonzero(live).max()) if live.any() else 0  # the largest subset size used
    if a == 0:
        return 0.0 if mi else float((P**2).sum() * f.sum())
    P2 = P**2
    if not mi:
        tot2 = float(P2.sum())
        b = r * r - 1.0

        def fun(u):
            E, M2 = subset_means(np.exp(-u * a * P), (P2,), top)
            return math.exp(-u) * (tot2 * E + b * M2)[live[:top + 1]]

        return float(f[live] @ _integrate(fun, k))
    mean_pi = np.arange(k + 1) / k * float(P.sum())  # the mean of π(S) over the d-subsets
    mean_y = 1.0 + a * mean_pi

    def fun(u):
        if u <= 0.0:  # a point of measure zero (the integrand's limit there is finite)
            return np.zeros(int(live.sum()))
        E, M1 = subset_means(np.exp(-u * a * P), (P,), top)
        sub = live[:top + 1]
        return (math.exp(-u) * (mean_y[:top + 1] - E - a * M1) / u)[sub]  # (E y - E y e^{-u y}) / u

    ylogy = _integrate(fun, k)
    return float(f[live] @ (r * math.log(r) * mean_pi[live] - ylogy))
