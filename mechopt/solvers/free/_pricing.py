"""Exact pricing for column generation over privacy cones (SPEC §3).

Column generation solves the ray LP ``max sum_r w_r mu(v_r)  s.t.  sum_r w_r v_r = 1``
over a growing set of rays. With duals ``d`` (``d·v_r >= mu(v_r)`` on the rays in the
master), *pricing* asks for the largest reduced value on a slice of the cone,

    delta = max { (mu(v) - d·v) / (s·v) : v a ray of the cone },

where ``s >= 0`` is a normalisation positive on the cone (here the objective's prior
restricted to the cone's support). Then ``d + delta s`` is dual feasible: for every
ray, ``(d + delta s)·v >= mu(v)``, so ``sum(d) + max(delta, 0) sum(s)`` bounds the
optimum. A cone that is a union of pieces (blocks, ULDP's protected and invertible
columns) gets one delta per piece and the bound adds them, weighted by each piece's
``sum(s)``. Every pricer here returns such a *proven* upper bound on its delta, with
the best columns it found; a pricer that finishes its search returns the maximum
itself (``exact=True``).

Two cone families:

* :class:`Staircases` — rays ``1_U + (e^eps - 1) 1_S`` for ``S ⊆ G ⊆ U``. With
  ``U = G = all`` these are the LDP (and WC-LIP, ULDP protected) rays; a block of
  block-LDP is ``U = G = block``; high-low LDP is ``U = all``, ``G = sensitive``.
* :class:`LipSlice` — the LIP cone sliced by its own prior,
  ``{P·v = 1, e^-eps <= v <= e^eps}``; its vertices have every coordinate at a bound
  but one.

Four objectives, three kinds of pricing:

* **MMSE**, ``mu(v) = (c·v)^2 / (P·v)``: on the slice ``(c·v)^2 = max_l (2 l c·v - l^2)``,
  so ``delta = max_l (E(l) - l^2)`` with ``E(l) = max_v (2 l c·v - d·v)`` the upper
  envelope of one line per vertex. For fixed ``l`` the inner problem is linear: a
  threshold set in the order of ``(2 l c_x - d_x) / P_x`` (staircases: a
  linear-fractional 0/1 problem, Dinkelbach) or a continuous knapsack (LIP). The
  envelope's pieces are found by Eisner-Severance bisection (intersect the lines found
  at two values of ``l``, evaluate there), with the convexity of ``E`` giving a chord
  bound that prunes intervals: exact, ``O(pieces · k log k)``.
* **Bayes risk**, ``mu(v) = max_xh -sum_x P(x) L(x, xh) v_x``: a maximum of linear
  functions, so ``delta`` is the maximum over ``xh`` of one linear-fractional (or
  knapsack) problem each: exact, ``O(k^2 log k)``.
* **Histogram MSE and mutual information**: on the slice both are separable convex,
  ``sum_x phi_x(v_x)`` with ``phi_x(t) = P_x^2 t^2`` or ``P_x t log t``. Maximising a
  separable convex function under one linear equation contains subset sum, so the
  pricing is an exact branch-and-bound: for staircases over the items of ``S`` and the
  normalisation ``t = 1 / (P·v)``, relaxing to a continuous knapsack at the two ends
  of each node's ``t`` range (every term is convex in ``t``); for LIP over the
  coordinates' intervals with the chord (secant) of ``phi_x`` as a concave
  over-estimator (spatial branch-and-bound). A search stopped early still returns a
  proven bound: the largest bound among the nodes left open.

This module holds the staircase pricers of MMSE and Bayes risk and the dispatch
(:func:`price`); :mod:`mechopt.solvers.free._pricing_base` the cones, the result type and
the search machinery they share; :mod:`mechopt.solvers.free._pricing_sep` the staircase
branch-and-bound of histogram MSE and mutual information; :mod:`mechopt.solvers.free._pricing_lip` the LIP
slices. ``tests/test_pricing.py`` checks every pricer against full enumeration.

Every pricer has the signature ``pricer(cone, obj, d, *, floor=0.0, max_nodes=None,
top=10) -> Priced``: ``floor`` is the reduced value below which columns are of no
interest (the search prunes there), ``max_nodes`` caps the search.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ...objectives import BAYES_RISK, HISTOGRAM_MSE, MMSE, MUTUAL_INFORMATION, Objective
from ._pricing_base import LipSlice, Staircases  # noqa: F401 (the cones, with the dispatch)
from ._pricing_base import (Priced, Collector, envelope_search, rescore, prefix_fractions, ratio_order, safety_margin,
                            staircase_setup, zero_prior_staircases)
from ._pricing_lip import price_lip_bayes, price_lip_mmse, price_lip_separable
from ._pricing_sep import price_staircase_separable


def price_staircase_bayes(cone: Staircases, obj: Objective, d: np.ndarray, *, floor: float = 0.0,
                          max_nodes: int | None = None, top: int = 10) -> Priced:
    """Exact pricing of the Bayes risk over staircases: one sort per decision.

    ``mu(v) = max_xh -sum_x P(x) L(x, xh) v_x``, so the reduced value of ``S`` is the
    maximum over ``xh`` of ``(n_xh + a w_xh(S)) / (P(U) + a P(S))`` with
    ``w_xh[x] = -(P(x) L(x, xh) + d_x)``: a linear-fractional 0/1 problem whose optimum
    is a prefix in the order of ``w_xh[x] / P(x)`` (Dinkelbach).

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt.objectives import Objective
    >>> k = 4
    >>> o = Objective("bayes_risk", np.full(k, 0.25), loss=1 - np.eye(k))
    >>> cone = Staircases(np.arange(k), np.arange(k), 1.0)
    >>> r = price_staircase_bayes(cone, o, np.zeros(k))
    >>> r.exact, round(r.upper, 6), round(-3 / (np.e + 3), 6)   # max_x P(x) v_x / (P·v) - 1 at S = {x}
    (True, -0.524633, -0.524633)
    """
    P, U, G, E, a, s, PU = staircase_setup(cone, obj)
    k = len(P)
    if PU <= 0:
        return zero_prior_staircases(cone, obj, d, top)
    L = obj.loss
    ell = P[:, None] * L  # ell[x, xh]
    n0 = -(ell[U].sum(axis=0) + d[U].sum())  # (k,)
    W = -(ell[G] + d[G][:, None])  # (|G|, k)
    pG = P[G]
    col = Collector(top)
    best = -math.inf
    for xh in range(k):
        order = ratio_order(W[:, xh], pG)
        vals, _ = prefix_fractions(float(n0[xh]), PU, W[:, xh], pG, a, order)
        j = int(np.argmax(vals))
        best = max(best, float(vals[j]))
        S = np.sort(G[order[:j]])
        col.offer(float(vals[j]), S.tobytes(), lambda S=S: cone.ray(k, S))
    return rescore(obj, col, d, s, best + safety_margin(best, PU, *n0), PU, True, k, k)


def price_staircase_mmse(cone: Staircases, obj: Objective, d: np.ndarray, *, floor: float = 0.0,
                         max_nodes: int | None = None, top: int = 10) -> Priced:
    """Exact pricing of the MMSE over staircases (upper envelope in ``l``; module doc).

    For fixed ``l`` the best ``S`` for ``(2 l c·v - d·v) / (P·v)`` is a prefix in the
    order of ``2 l f_x - d_x / P_x`` (``c = f P``); every prefix of every order
    evaluated is scored with the true ``y^2 - z`` (``y = c·v/P·v``, ``z = d·v/P·v``).

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt.objectives import Objective
    >>> o = Objective("mmse", np.full(3, 1 / 3), values=np.array([0.0, 1.0, 2.0]))
    >>> r = price_staircase_mmse(Staircases(np.arange(3), np.arange(3), 1.0), o, np.zeros(3))
    >>> r.exact, r.columns.shape[0]
    (True, 3)
    """
    P, U, G, E, a, s, PU = staircase_setup(cone, obj)
    k = len(P)
    if PU <= 0:
        return zero_prior_staircases(cone, obj, d, top)
    c = obj.values * P
    pG, cG, dG = P[G], c[G], d[G]
    cU, dU = float(c[U].sum()), float(d[U].sum())
    col = Collector(top)

    def oracle(lam: float):
        w = 2.0 * lam * cG - dG
        order = ratio_order(w, pG)
        cw = np.concatenate([[0.0], np.cumsum(w[order])])
        cp = np.concatenate([[0.0], np.cumsum(pG[order])])
        cc = np.concatenate([[0.0], np.cumsum(cG[order])])
        cd = np.concatenate([[0.0], np.cumsum(dG[order])])
        den = PU + a * cp
        lin = (2.0 * lam * cU - dU + a * cw) / den
        y = (cU + a * cc) / den
        z = (dU + a * cd) / den
        r = y * y - z
        j = int(np.argmax(lin))
        for i in np.argsort(-r)[: col.top]:
            if r[i] > col.threshold:
                S = np.sort(G[order[:i]])
                col.offer(float(r[i]), S.tobytes(), lambda S=S: cone.ray(k, S))
        return float(lin[j]), float(y[j]), float(z[j])

    pos = P[G] > 0
    fv = obj.values[G][pos] if pos.any() else np.zeros(1)
    fU = obj.values[U][P[U] > 0]
    lo = float(min(fv.min(), fU.min()))
    hi = float(max(fv.max(), fU.max()))
    if hi <= lo:
        hi = lo + 1.0
    upper, nodes, exact = envelope_search(oracle, lo, hi, floor, max_nodes, lambda: col.best)
    upper = max(upper, col.best)
    return rescore(obj, col, d, s, upper, PU, exact, nodes, k)


# -- registry ---------------------------------------------------------------------------------


def _pricers() -> dict[tuple[str, object], Callable[..., Priced]]:
    """``(cone family, objective type) -> pricer``."""
    return {
        ("staircases", MMSE): price_staircase_mmse,
        ("staircases", BAYES_RISK): price_staircase_bayes,
        ("staircases", HISTOGRAM_MSE): price_staircase_separable,
        ("staircases", MUTUAL_INFORMATION): price_staircase_separable,
        ("lip", MMSE): price_lip_mmse,
        ("lip", BAYES_RISK): price_lip_bayes,
        ("lip", HISTOGRAM_MSE): price_lip_separable,
        ("lip", MUTUAL_INFORMATION): price_lip_separable,
    }


def cone_family(cone) -> str:
    return "staircases" if isinstance(cone, Staircases) else "lip"


def price(cone, obj: Objective, d: np.ndarray, **options) -> Priced:
    """Dispatch to the pricer of ``(cone family, objective kind)``.

    Examples
    --------
    >>> import numpy as np
    >>> o = Objective("mutual_information", np.full(3, 1 / 3))
    >>> r = price(Staircases(np.arange(3), np.arange(3), 1.0), o, np.zeros(3))
    >>> r.exact, r.columns.shape[0]
    (True, 3)
    """
    return _pricers()[(cone_family(cone), obj.type)](cone, obj, d, **options)


def priced(obj: Objective) -> bool:
    """Whether every cone family has an exact pricer for ``obj``'s type (column generation applies)."""
    table = _pricers()
    return all((f, obj.type) in table for f, _ in table)
