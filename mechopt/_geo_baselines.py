"""Location-privacy baselines, exactly verified: exponential mechanism, planar Laplace, remap.

* :func:`exponential_mechanism` (McSherry & Talwar, FOCS 2007; score ``-d`` at ε/2) from
  any distance matrix (Euclidean, shortest-path, haversine km).
* :func:`planar_laplace` (Andrés, Bordenabe, Chatzikokolakis, Palamidessi, CCS 2013)
  discretised to the places' Voronoi cells in the plane; latitude/longitude places are
  projected first (:meth:`mechopt.geo.Places.plane`) and the budget is rescaled so that
  the promise holds under the great-circle distance.
* :func:`bayesian_remap` (Chatzikokolakis, ElSalamouny, Palamidessi, PETS 2017).
* :func:`exact_baseline`: the smallest mixing that makes a float channel pass the exact
  verifier; nothing here is exported unverified.
* :func:`geo_baselines`: the rows ``mechopt baselines`` prints for a problem with metric
  privacy on places (objective under the problem's prior and loss, privacy under every
  notion of the problem).

Imports the verifier, the notions, the objectives and the repair; places are used
through their methods only (``plane``, ``distances``, ``kind``), so :mod:`mechopt.geo`
can re-export this module.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._errors import InputError

#: lattice points times places that the default planar-Laplace resolution allows
#: (about 1 s for 150 places on one core)
LATTICE_BUDGET = 2.5e7


def exponential_mechanism(D: np.ndarray, epsilon: float) -> np.ndarray:
    """``Q[x, y] ∝ exp(-ε d(x, y) / 2)``: ε·d-private (McSherry & Talwar, Thm 6).

    The score ``-d(x, y)`` changes by at most ``d(x, x')`` between inputs, and the
    normalisers by at most ``e^{ε d / 2}``, so each ratio is at most ``e^{ε d(x, x')}``.
    Any metric works (haversine km from :meth:`mechopt.geo.Places.distances`, shortest
    paths); infinite distances give zero entries.

    Examples
    --------
    >>> Q = exponential_mechanism(np.array([[0.0, 1.0], [1.0, 0.0]]), 2.0)
    >>> round(float(Q[0, 0] / Q[0, 1]), 6) == round(math.e, 6)   # randomized response, e^{ε d / 2}
    True
    """
    S = -0.5 * epsilon * np.asarray(D, dtype=float)
    S -= S.max(axis=1, keepdims=True)
    Q = np.exp(S)
    return Q / Q.sum(axis=1, keepdims=True)


def default_resolution(P: np.ndarray, epsilon: float, radius: float) -> float:
    """The lattice step of :func:`planar_laplace`: a fifth of the smallest distance
    between places, coarsened so that lattice points × places stay within
    :data:`LATTICE_BUDGET` (150 places in a 10 km box at ε = 2/km: about 0.08 km)."""
    k = len(P)
    diff = P[:, None, :] - P[None, :, :]
    D = np.hypot(diff[..., 0], diff[..., 1])
    off = D[~np.eye(k, dtype=bool)]
    off = off[off > 0]
    dmin = float(off.min()) if len(off) else 1.0 / epsilon
    span = P.max(axis=0) - P.min(axis=0) + 2 * radius
    coarse = math.sqrt(float(span[0] * span[1]) * k / LATTICE_BUDGET)
    return max(dmin / 5, coarse)


def _plane_scale(P: np.ndarray, D: np.ndarray) -> float:
    """``min d(x, x') / |P_x - P_x'|`` over pairs: ε·|·| at this factor is ε·d-private."""
    diff = P[:, None, :] - P[None, :, :]
    Dp = np.hypot(diff[..., 0], diff[..., 1])
    mask = Dp > 0
    if not np.any(mask):
        return 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.asarray(D, dtype=float)[mask] / Dp[mask]
    return float(np.min(ratio))


def planar_laplace(places: Any, epsilon: float, *, resolution: float | None = None,
                   radius: float | None = None, distance: np.ndarray | None = None) -> np.ndarray:
    """The planar Laplace mechanism, discretised to the places' Voronoi cells.

    The continuous mechanism reports ``z`` with density ``ε²/(2π) e^{-ε |z - x|}``
    (Andrés et al., CCS 2013, eq. 5); reporting the place nearest to ``z`` is
    post-processing. The integral over each cell is computed on a square lattice of
    step ``resolution`` (default :func:`default_resolution`) within ``radius`` of the
    places (default: where the remaining mass is below 1e-9), rows renormalised.

    The promise is ``ε·d`` with ``d`` = ``distance`` (default: haversine km for
    latitude/longitude places, else the Euclidean distance). Places are taken in the
    plane (:meth:`mechopt.geo.Places.plane`, km for latitude/longitude) and the budget is
    multiplied by ``min d / |·|`` over pairs, so the continuous mechanism keeps the promise
    however the projection distorts. The float channel is still not exactly private
    (quadrature and truncation errors): :func:`exact_baseline` repairs it by the smallest
    mixing, and only a verified channel is ever exported.

    Measured: 150 places spread over a 10 km box (latitude/longitude), ε = 2 per km,
    default resolution: about 1 s on one core (``docs/geo.md``, Baselines).
    """
    P = places.plane()
    if distance is None:
        distance = places.distances("haversine" if places.kind == "latlon" else "euclidean")
    eps = epsilon * _plane_scale(P, distance)
    if not (eps > 0 and math.isfinite(eps)):
        raise InputError("places", "the planar Laplace needs distinct places at positive distances")
    # mass beyond radius r: (1 + ε r) e^{-ε r}
    r = radius or next(rr for rr in np.linspace(1, 200, 800) / eps if (1 + eps * rr) * math.exp(-eps * rr) < 1e-9)
    h = resolution or default_resolution(P, eps, r)
    lo = P.min(axis=0) - r
    hi = P.max(axis=0) + r
    xs = np.arange(lo[0], hi[0] + h, h)
    ys = np.arange(lo[1], hi[1] + h, h)
    from scipy.spatial import cKDTree

    tree = cKDTree(P)
    k = len(P)
    Q = np.zeros((k, k))
    for yv in ys:
        Z = np.column_stack([xs, np.full(len(xs), yv)])
        _, cell = tree.query(Z)
        dist = np.sqrt(((Z[None, :, :] - P[:, None, :]) ** 2).sum(-1))  # (k, len(xs))
        W = np.exp(-eps * dist)
        np.add.at(Q.T, cell, W.T)
    return Q / Q.sum(axis=1, keepdims=True)


def bayesian_remap(Q: np.ndarray, prior: np.ndarray, loss: np.ndarray) -> np.ndarray:
    """Post-process reports optimally for a prior and a loss; returns the composed channel ``Q·R``.

    ``R`` is the deterministic remap (an ``m x m'`` 0/1 matrix, one 1 per row) sending
    each report ``y`` of ``Q`` to ``argmin_y' sum_x P(x) Q[x, y] L(x, y')``, the output of
    smallest posterior expected loss (Chatzikokolakis, ElSalamouny, Palamidessi, PETS 2017,
    §3). The result is the ``k x m'`` channel ``Q @ R`` (not ``R``): its columns are sums of
    ``Q``'s, so every column-wise privacy guarantee of ``Q`` holds, and its expected loss
    is never larger than ``Q``'s.

    Examples
    --------
    >>> Q = np.array([[0.6, 0.4], [0.4, 0.6]])
    >>> bayesian_remap(Q, np.array([0.9, 0.1]), 1 - np.eye(2)).tolist()   # always answer the likely input
    [[1.0, 0.0], [1.0, 0.0]]
    """
    post = np.asarray(prior)[:, None] * Q  # (k, m)
    risk = post.T @ loss  # (m, m'): risk of answering y' after y
    best = np.argmin(risk, axis=1)
    R = np.zeros((Q.shape[1], loss.shape[1]))
    R[np.arange(Q.shape[1]), best] = 1.0
    return Q @ R


def exact_baseline(Q: np.ndarray, notions) -> tuple[np.ndarray, float]:
    """Make a float baseline channel pass the exact verifier by the smallest mixing.

    Returns ``(Q_exact, t)``; raises :class:`~mechopt.VerificationError` if mixing up to
    1 % cannot.
    """
    from ._errors import VerificationError
    from .solvers._repair import repair

    rep = repair(np.asarray(Q, dtype=float), list(notions))
    if not rep.certificate.verified:
        raise VerificationError(f"baseline not private even after mixing: {rep.certificate.detail}")
    return rep.Q, rep.t


# -- the rows of ``mechopt baselines`` ------------------------------------------------------


def _budget(notions, k: int) -> np.ndarray | None:
    """``min`` over the metric notions of ``ε d`` (k x k), or None without one."""
    from .notions import MetricLDP

    mats = [n.eldp_matrix(k) for n in notions if isinstance(n, MetricLDP)]
    return np.minimum.reduce(mats) if mats else None


def geo_baselines(problem, places: Any = None, *, optimum: float | None = None) -> list[dict[str, Any]]:
    """The location baselines of a problem with metric privacy, verified and scored exactly.

    Rows (same keys as :func:`mechopt.baselines`): the exponential mechanism on the
    problem's budget ``E = min ε·d`` over its metric notions, and — when the ``places``
    are known — the planar Laplace (promise ``E``, see :func:`planar_laplace`); each also
    after :func:`bayesian_remap` under the problem's prior and loss. Each channel is
    mixed by :func:`exact_baseline` until it passes the exact verifier under every notion
    of the problem; the objective is :func:`mechopt.objectives.evaluate` of that channel.
    """
    from ._errors import VerificationError
    from ._verify import verify
    from .notions import MetricLDP
    from .objectives import evaluate

    notions = list(problem.notions)
    k = problem.k
    E = _budget(notions, k)
    if E is None or tuple(problem.outputs) != tuple(problem.inputs):
        return []
    obj = problem.objective
    eps = min(float(n.epsilon) for n in notions if isinstance(n, MetricLDP))
    channels = [("exponential mechanism", "McSherry & Talwar 2007", lambda: exponential_mechanism(E, 1.0))]
    if places is not None and places.k == k:
        channels.append(("planar Laplace", "Andrés et al., CCS 2013 (Voronoi cells of the places)",
                         lambda: planar_laplace(places, 1.0, distance=E)))
    remap = obj.loss is not None and obj.minimize and np.shape(obj.loss) == (k, k)
    rows = []
    for name, source, build in channels:
        try:
            Q, t = exact_baseline(build(), notions)
        except VerificationError as err:
            rows.append(_row(name, source, eps, None, False, math.inf, f"{err}", optimum, obj))
            continue
        variants = [(name, Q, f"mixed t={t:.2g}")]
        if remap:
            variants.append((f"{name} + Bayesian remap", bayesian_remap(Q, obj.prior, np.asarray(obj.loss)),
                             f"Q·R, R from the prior and loss (Chatzikokolakis et al., PETS 2017); mixed t={t:.2g}"))
        for label, C, note in variants:
            cert = verify(C, notions)
            value = float(evaluate(obj, C))
            achieved = max((c.achieved for c in cert.checks), default=0.0)
            rows.append(_row(label, source, eps, value, bool(cert.verified), achieved, note, optimum, obj))
    return rows


def _row(name, source, eps, value, ok, achieved, note, optimum, obj) -> dict[str, Any]:
    rec = {"name": name, "source": source, "epsilon": eps, "family": None, "outputs": len(obj.prior),
           "privacy_ok": ok, "achieved": achieved if math.isfinite(achieved) else "inf",
           "objective": value, "scored_by": "channel" if value is not None else None, "note": note}
    if optimum is not None and value is not None and math.isfinite(value) and value != 0:
        rec["ratio"] = (value / optimum) if obj.minimize else (optimum / value)
    return rec
