"""The estimation-optimal design under ε-LDP with a uniform p0: the subset-selection orbit.

**Orbit argument.** The problem (the LDP cone, the uniform ``p0``, the risk
``tr(B J^-1 B^T)``) is invariant under every permutation of the inputs. The risk is
convex in the ray weights, so averaging an optimal design over S_k is optimal too, and
an S_k-invariant design gives the same weight to every staircase ``1 + (e^ε - 1) 1_S``
of a given size ``|S| = d``: it is a mixture over ``d`` of d-subset selection
(Ye & Barg 2018; Wang et al. 2016), with ``u_d`` the share of every row's mass on
component ``d``.

**Risk of a mixture.** An S_k-invariant channel has ``F = sum_y q_y q_y^T / (p0·q_y) =
a I + b 11^T``, hence ``J = B^T F B = a B^T B`` and ``tr(B J^-1 B^T) = (k-1)/a``, with
``a = sum_d u_d α_d`` and (``r = e^ε``) ::

    α_d = (r - 1)^2 d (k - d) k / ((k - 1) (k + (r - 1) d)^2).

(Derivation: the d-orbit's diagonal minus off-diagonal of ``sum_S v_S v_S^T`` is
``C(k-2, d-1)(r-1)^2``; its row mass is ``C(k, d)(k + (r-1)d)/k``; ``p0·v_S =
(k + (r-1)d)/k``.) ``a`` is linear in ``u``, so the optimum puts all its mass on the
``d`` maximising ``α_d``: the best d-subset selection, with risk ::

    R_d = (k - 1)^2 (k + (r - 1) d)^2 / ((r - 1)^2 d (k - d) k).

For d = 1 this is k-RR's ``(k-1)(k + r - 1)^2 / (k (r - 1)^2)``.

**Certificate** (independent of the argument, in the duality of
:mod:`mechopt.solvers.design._colgen`): with ``N = J^-2 = I/a^2`` (orthonormal basis) and
``y = t 1``, the pricing value of a staircase depends on ``|S| = m`` only:
``c_m - y·v = α_m (k-1) (k + (r-1) m) / (k a^2) - t (k + (r-1) m)``. Taking
``t = max_m α_m (k-1)/(k a^2)`` makes every ray dual feasible and gives the lower bound
``2(k-1)/a - k t``, which equals ``(k-1)/a`` at the best ``d``: pricing over all
``2^k - 2`` rays is a scan over ``m = 1 .. k-1``.
"""

from __future__ import annotations

import math

import numpy as np


def subset_alpha(k: int, r: float, d) -> np.ndarray | float:
    """``α_d``: the information one unit of row mass on the d-subset orbit carries (module docstring).

    Examples
    --------
    >>> round(9 / subset_alpha(10, math.exp(0.5), 4), 1)     # (k-1)/α_d: the risk 127.2 of SPEC §3
    127.2
    """
    d = np.asarray(d, dtype=float)
    c = r - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        a = c * c * d * (k - d) * k / ((k - 1) * (k + c * d) ** 2)
    a = np.where((d <= 0) | (d >= k), 0.0, a)
    return float(a) if a.ndim == 0 else a


def subset_selection_risk(k: int, epsilon: float, d) -> np.ndarray | float:
    """``R_d = (k-1)/α_d``: the risk ``tr(B J^-1 B^T)`` of d-subset selection at the uniform p0.

    Examples
    --------
    >>> round(subset_selection_risk(10, 0.5, 1), 1)      # k-RR (SPEC §3 planning check)
    242.5
    >>> round(subset_selection_risk(10, 0.5, 4), 1)      # the optimum there
    127.2
    """
    a = subset_alpha(k, math.exp(epsilon), d)
    with np.errstate(divide="ignore"):
        out = (k - 1) / np.asarray(a, dtype=float)
    return float(out) if np.ndim(out) == 0 else out


def best_subset_size(k: int, epsilon: float) -> tuple[int, float]:
    """``(d*, R_d*)``: the best d-subset selection (the optimum of the orbit problem).

    Examples
    --------
    >>> best_subset_size(10, 0.5)[0]
    4
    """
    if k < 2:
        raise ValueError("k must be >= 2")
    d = np.arange(1, k)
    risk = subset_selection_risk(k, epsilon, d)
    j = int(np.argmin(risk))
    return int(d[j]), float(risk[j])


def orbit_certificate(k: int, epsilon: float, d: int) -> tuple[float, float]:
    """``(risk of d-subset selection, proven lower bound on the optimum)`` by the orbit dual.

    The lower bound is the weak-duality bound of :mod:`mechopt.solvers.design._colgen` at the
    S_k-invariant dual ``(N, y)`` of the module docstring, with pricing over every staircase
    done exactly (a scan over ``|S|``) and a rounding margin of 1e-13 relative.
    """
    r = math.exp(epsilon)
    a = subset_alpha(k, r, d)
    if a <= 0:
        return math.inf, -math.inf
    m = np.arange(1, k)
    t = float(np.max(subset_alpha(k, r, m))) * (k - 1) / (k * a * a)
    lower = 2.0 * (k - 1) / a - k * t
    return (k - 1) / a, lower - 1e-13 * abs(lower)


def is_uniform(p0: np.ndarray) -> bool:
    p0 = np.asarray(p0, dtype=float)
    return bool(np.all(p0 == p0[0]))
