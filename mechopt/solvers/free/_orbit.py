"""Symmetric free-output problems: the best d-subset orbit, at any k (issue 10 A, item 2).

Under ε-LDP the rays are the staircases ``v_S = 1 + (E - 1) 1_S`` (``E = e^ε``). With a
uniform prior, histogram MSE, mutual information and a Bayes risk whose loss is ``a`` on
the diagonal and ``b`` off it are preserved by every permutation of the inputs, so
``mu(v_S) = m_|S|`` depends on ``|S|`` only. Then:

* **Bound (LP duality).** With ``c = max_{0 <= d <= k} m_d / (d E + k - d)``, the dual
  point ``y = c 1`` satisfies ``y·v_S = c (|S| E + k - |S|) >= m_|S|`` for every ray, so
  ``sum_y mu(q_y) <= sum(y) = k c`` for every channel (the ray LP of SPEC §3).
* **Attained with k outputs.** For the maximiser ``d``, the ``k`` cyclic windows
  ``S_i = {i, ..., i + d - 1 mod k}`` cover every input exactly ``d`` times, so
  ``Q = [v_{S_0} ... v_{S_{k-1}}] / (d E + k - d)`` is row-stochastic, ε-LDP, and
  scores ``k m_d / (d E + k - d) = k c``.

The channel is exported as that ``k x k`` matrix (through main's repair and exact
verification) up to :data:`MATRIX_MAX_K` inputs, and beyond as a ``subset_selection``
family (every d-subset equally likely: the same objective, verified exactly from its
parameters).
"""

from __future__ import annotations

import math
import time

import numpy as np

#: export a k x k matrix up to this many inputs, a subset-selection family beyond
MATRIX_MAX_K = 400


def orbit_epsilon(notions, obj) -> float | None:
    """The ε when the orbit argument applies (ε-LDP / WC-LIP, uniform prior, symmetric objective)."""
    from ...objectives import BAYES_RISK
    from ..design._orbit import is_uniform
    from ..design._route import ldp_epsilon

    eps = ldp_epsilon(list(notions))
    if eps is None or eps <= 0 or len(obj.prior) < 2 or not is_uniform(obj.prior):
        return None
    if obj.type.separable:
        return eps
    if obj.type is BAYES_RISK and obj.loss is not None and obj.loss.shape == (len(obj.prior),) * 2:
        L = obj.loss
        off = L[~np.eye(len(L), dtype=bool)]
        if np.all(np.diag(L) == L[0, 0]) and np.all(off == off[0]):
            return eps
    return None


def orbit_utilities(obj, k: int, E: float) -> np.ndarray:
    """``m_d = mu(v_S)`` for ``|S| = d = 0..k`` in closed form (uniform prior ``1/k``).

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt.objectives import Objective
    >>> from mechopt.objectives import column_utility
    >>> k, E = 5, 2.0
    >>> o = Objective("mutual_information", np.full(k, 1 / k))
    >>> V = np.array([[E if x < d else 1.0 for d in range(k + 1)] for x in range(k)])
    >>> bool(np.allclose(orbit_utilities(o, k, E), column_utility(o, V)))
    True
    """
    from ...objectives import HISTOGRAM_MSE, MUTUAL_INFORMATION

    d = np.arange(k + 1, dtype=float)
    total = d * E + (k - d)  # sum of the ray's entries
    if obj.type is HISTOGRAM_MSE:
        return (d * E * E + (k - d)) / (k * total)
    if obj.type is MUTUAL_INFORMATION:
        m = total / k  # P·v
        return (d * E * math.log(E) - total * np.log(m)) / k
    a, b = float(obj.loss[0, 0]), float(obj.loss[0, 1]) if k > 1 else 0.0
    # -(1/k) min_xh (a v_xh + b (sum v - v_xh)): the extreme entry of v picks xh
    if a <= b:
        ext = np.where(d >= 1, E, 1.0)
    else:
        ext = np.where(d <= k - 1, 1.0, E)
    return -(b * total + (a - b) * ext) / k


def best_orbit(obj, k: int, E: float) -> tuple[int, float]:
    """``(d, k c)``: the best subset size and ``max sum mu`` (the dual bound, attained)."""
    d = np.arange(k + 1, dtype=float)
    ratio = orbit_utilities(obj, k, E) / (d * E + (k - d))
    i = int(np.argmax(ratio))
    return i, float(k * ratio[i])


def cyclic_design(k: int, d: int, E: float) -> np.ndarray:
    """The k cyclic d-windows as a row-stochastic ``k x k`` channel (module docstring)."""
    x = np.arange(k)[:, None]
    i = np.arange(k)[None, :]
    inside = (x - i) % k < d
    return np.where(inside, E, 1.0) / (d * E + (k - d))


def solve_orbit(problem, eps: float, timings: dict):
    """The best orbit, exported as a matrix (k <= MATRIX_MAX_K) or a family, verified exactly."""
    from ..._objectives import offset_sign
    from ..._solve import _finish

    t = time.perf_counter()
    obj = problem.objective
    k = problem.k
    E = math.exp(eps)
    d, upper = best_orbit(obj, k, E)
    offset, sign = offset_sign(obj)
    bound = offset + sign * upper
    timings["solve"] = time.perf_counter() - t
    stats = {"method": "orbit", "subset_size": d, "proof": "LP duality: y = c 1 over the d-subset orbits"}
    if d in (0, k):  # the constant channel is optimal
        return _finish(problem, np.ones((k, 1)), ("y0",), bound, timings, stats)
    if k <= MATRIX_MAX_K:
        Q = cyclic_design(k, d, E)
        return _finish(problem, Q, tuple(f"y{j}" for j in range(k)), bound, timings, stats)
    from ...families import SubsetMixture
    from ..design._route import finish_family, ratio_below

    t = time.perf_counter()
    r = ratio_below(eps)  # the largest double <= e^eps: the family meets eps exactly
    spec = SubsetMixture.spec(r, [(d, 1.0)])
    m_r = orbit_utilities(obj, k, r)[d] / (d * r + (k - d))
    value = offset + sign * float(k * m_r)
    stats["outputs"] = "family"
    from ..._solve import RAYS_REL_GAP

    return finish_family(problem, spec, value, bound, stats, timings, t, rel_gap=RAYS_REL_GAP)
