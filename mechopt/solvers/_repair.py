"""Repair a solver's channel to strict feasibility, then verify it exactly (docs/model.md).

Solvers stop at a tolerance, so an optimal channel sits on the boundary of the privacy
cone and fails an exact check by ~1e-16. We mix it with a channel whose columns are
constant across inputs — ``Q_t = (1 - t) Q + t 1 u^T`` — which satisfies every notion
with slack, and take the smallest ``t`` (on a logarithmic grid, then bisection) that
the exact verifier accepts. ``u`` is spread over the outputs that may receive mass:
for ULDP only the protected outputs, so invertible columns keep their zeros.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._verify import Certificate, verify


@dataclass(frozen=True)
class Repair:
    Q: np.ndarray
    t: float
    certificate: Certificate
    attempts: int


def clean(Q: np.ndarray, zero_tol: float = 1e-15) -> np.ndarray:
    """Clip solver noise (entries below ``zero_tol`` become 0) and renormalise rows."""
    Q = np.where(np.abs(Q) < zero_tol, 0.0, np.asarray(Q, dtype=float))
    Q = np.clip(Q, 0.0, None)
    s = Q.sum(axis=1, keepdims=True)
    s[s == 0] = 1.0
    return Q / s


#: pairwise budgets below this tie the two rows (see :func:`tied_rows`)
TIE_BELOW = 1e-12


def tied_rows(notions, k: int, *, exact: bool = False, below: float | None = None) -> list[np.ndarray]:
    """Groups of inputs whose rows every feasible channel has identical.

    A zero budget ``q[x] <= e^0 q[x']`` on every column, with both rows summing to 1,
    forces ``Q[x] = Q[x']``. Zero entries of an E-LDP-type matrix, and ε = 0 for
    LDP, block, high-low and LIP-type notions, tie rows this way. Mixing cannot repair
    a tie that a solver left 1e-12 apart, but averaging the tied rows makes them equal
    as floats, which every later step (mixing without renormalising) keeps.

    With ``exact``, only the ties a zero budget forces are returned (budgets in
    ``(0, TIE_BELOW)`` tie rows as a restriction otherwise); ``below`` ties every pair
    whose budget is under it (the fallbacks' restriction, :mod:`mechopt._fallback`).
    """
    # budgets below TIE_BELOW are under float resolution: e^1e-15 - 1 is a few ulps, so no
    # float matrix can be repaired onto them; such rows are tied (a restriction that costs
    # at most about that budget in utility). Each notion says which rows it ties.
    from ..notions import Notion

    if below is None:
        below = 0.0 if exact else TIE_BELOW
    parent = list(range(k))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for n in notions:
        # a component view of a notion (solvers/labeled/_lp.py) has only the E-matrix view
        pairs = n.tie_groups(k, below=below) if hasattr(n, "tie_groups") else Notion.tie_groups(n, k, below=below)
        for a, b in pairs:
            parent[find(a)] = find(b)
    groups: dict[int, list[int]] = {}
    for x in range(k):
        groups.setdefault(find(x), []).append(x)
    return [np.array(g) for g in groups.values() if len(g) > 1]


#: the repair's mixing ``t`` is refined by bisection only above this (a smaller ``t`` moves
#: the objective by less than ``t`` times its scale: 1e-9, a hundredth of the optimality
#: tolerance)
REFINE_ABOVE = 1e-9


#: from this many channel entries the repair starts from :func:`pair_mixing` (below, a
#: verification costs milliseconds)
HINT_FROM = 100_000
#: the relative margin :func:`pair_mixing` leaves on every pair (the verifier's float
#: enclosures prove such a pair without the exact path)
HINT_MARGIN = 1e-12


def pair_mixing(Q: np.ndarray, notions, u: np.ndarray, margin: float = HINT_MARGIN) -> float | None:
    """The smallest ``t`` (in float arithmetic) with ``(1 - t) Q + t u`` inside pairwise budgets, or None.

    None unless every notion is pairwise (E-LDP, metric): then :func:`mixing_into_cone`
    with their budgets (the smallest over the notions). An estimate for the repair to start from: the verifier decides.

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt import ELDP
    >>> Q = np.array([[0.9, 0.1], [0.1, 0.9]])            # ln 9 > 2: broken
    >>> t = pair_mixing(Q, [ELDP([[0, 2.0], [2.0, 0]])], np.array([0.5, 0.5]))
    >>> R = (1 - t) * Q + t * 0.5
    >>> round(float(R[0, 0] / R[1, 0]), 9) == round(float(np.exp(2.0) * (1 - 1e-12)), 9)
    True
    """
    E = _pair_budgets(notions, Q.shape[0])
    return None if E is None else mixing_into_cone(Q, E, u, margin)


def _pair_budgets(notions, k: int) -> np.ndarray | None:
    """The budget of every pair the notions constrain (a graph's edges alone), or None if one is not pairwise."""
    from ..notions import ELDP, MetricLDP

    if not notions or not all(isinstance(n, (ELDP, MetricLDP)) for n in notions):
        return None
    E = None
    for n in notions:
        # a metric on a graph: its edges (paths imply the rest; 2 000 street places: 7 600 pairs, not 4 million)
        En = n.column_constraints(k).eldp if getattr(n, "edges", None) is not None else n.eldp_matrix(k)
        E = En if E is None else np.minimum(E, En)
    return E


def mixing_into_cone(Q: np.ndarray, E: np.ndarray, target: np.ndarray, margin: float = HINT_MARGIN) -> float:
    """The smallest ``t`` (in float arithmetic) with ``(1 - t) Q + t R`` inside the budgets ``E`` with a margin.

    ``target``: the rows ``R`` mixed in, one row ``(m,)`` for every input or a channel
    ``(k, m)``. A pair ``(x, x')`` with budget ``e`` holds on column ``y`` with margin
    when ``v = Q[x, y] - w Q[x', y] <= 0``, ``w = e^e (1 - margin)``, or else from
    ``t >= v / (v + w R[x', y] - R[x, y])`` on; the largest such ``t`` is returned (1
    where ``R`` has no slack on a broken pair: mixing cannot repair it).

    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[0, 1.0], [1.0, 0]])
    >>> Q = np.array([[0.9, 0.1], [0.1, 0.9]])
    >>> R = np.array([[0.6, 0.4], [0.4, 0.6]])           # 3/2 < e: slack on every pair
    >>> t = mixing_into_cone(Q, E, R)
    >>> M = (1 - t) * Q + t * R                            # the worst pair at e (1 - margin)
    >>> round(float(t), 6), bool(abs(M[0, 0] / M[1, 0] - np.e * (1 - 1e-12)) < 1e-9)
    (0.563138, True)
    """
    k, m = Q.shape
    xs, xps = np.nonzero(np.isfinite(E) & ~np.eye(k, dtype=bool))
    w = np.exp(E[xs, xps]) * (1.0 - margin)
    R = np.asarray(target, dtype=float)
    row_max, row_min = Q.max(axis=1), Q.min(axis=1)
    # pairs whose rows hold on every column at once need no look
    look = np.flatnonzero(row_max[xs] > w * row_min[xps])
    t = 0.0
    chunk = max(1, 2_000_000 // max(m, 1))
    for start in range(0, len(look), chunk):
        sel = look[start:start + chunk]
        wc = w[sel][:, None]
        v = Q[xs[sel]] - wc * Q[xps[sel]]
        bad = v > 0
        if not bad.any():
            continue
        slack = R[None, :] * (wc - 1.0) if R.ndim == 1 else wc * R[xps[sel]] - R[xs[sel]]
        den = v + slack
        with np.errstate(divide="ignore", invalid="ignore"):
            t = max(t, float(np.max(np.where(bad, np.where(slack > 0, v / den, 1.0), 0.0))))
    return min(t, 1.0)


def tie(Q: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """Replace the rows of each tied group by their average (rows still sum to 1)."""
    Q = Q.copy()
    for g in groups:
        Q[g] = Q[g].mean(axis=0)
    return Q


def repair(Q: np.ndarray, notions, *, mix_columns: np.ndarray | None = None, t_max: float = 1e-2) -> Repair:
    """Repair by tying forced-equal rows and mixing; if that fails, snap noise to zero first.

    Mixing cannot repair a budget of 0 (``q[x] <= q[x']`` with ``q[x'] = 0`` and
    ``q[x] = 1e-12`` stays violated), so entries below 1e-12, then 1e-10, then 1e-9
    are set to zero before trying again.
    """
    best = None
    groups = tied_rows(notions, np.asarray(Q).shape[0])
    for tol in (1e-15, 1e-12, 1e-10, 1e-9):
        rep = _repair(tie(clean(Q, tol), groups), notions, mix_columns=mix_columns, t_max=t_max)
        if rep.certificate.verified:
            return rep
        best = best or rep
    return best


def _repair(Q: np.ndarray, notions, *, mix_columns: np.ndarray | None = None, t_max: float = 1e-2,
            target: np.ndarray | None = None) -> Repair:
    """Smallest mixing ``t`` that makes ``Q`` pass the exact verifier.

    Parameters
    ----------
    Q : ndarray (k, m)
    notions : list of Notion
    mix_columns : bool ndarray (m,), optional
        Outputs the constant channel may use (default: all).
    t_max : float
        The largest mixing tried; at ``t_max = 1`` the channel is the constant one, which
        every notion allows, so a repair always exists (the fallbacks use that). For
        pairwise notions on channels of :data:`HINT_FROM` entries or more, the mixing
        starts at :func:`pair_mixing`'s estimate, even above ``t_max``.
    target : ndarray (m,), optional
        The constant channel's row (a distribution; default: uniform over ``mix_columns``).

    Returns
    -------
    Repair
        ``certificate.verified`` is False if even ``t_max`` does not repair.
    """
    k, m = Q.shape
    cols = np.ones(m, bool) if mix_columns is None else np.asarray(mix_columns, bool)
    if not cols.any():
        cols = np.ones(m, bool)
    u = np.where(cols, 1.0 / cols.sum(), 0.0) if target is None else np.asarray(target, dtype=float)

    def mixed(t: float) -> np.ndarray:
        if t == 0:
            return Q
        # no renormalisation: rows keep summing to 1 within 1e-15, and tied rows stay
        # bit-for-bit equal (the same float operations on the same numbers)
        return (1 - t) * Q + t * u[None, :]

    attempts = 1
    cert = verify(Q, notions)
    if cert.verified:
        return Repair(Q, 0.0, cert, attempts)
    if not cert.rows_ok:
        return Repair(Q, math.nan, cert, attempts)
    lo, hi = 0.0, None
    t = min(1e-14, t_max)
    need = pair_mixing(Q, notions, u) if Q.size >= HINT_FROM else None
    if need is not None and 1e-14 < need < 1.0:
        # every pair holds with a margin at this t: one verification (of few close
        # calls) instead of a climb from 1e-14 and a bisection, a dozen verifications
        # of seconds each at 1 000 places. Past t_max too: a channel verified at a cost
        # (the gap says how much) is better than none (32×32 Euclidean places, a
        # relaxation's channel lifted for 25 rounds: t = 0.028)
        t = need * (1 + 1e-6)
        t_max = max(t_max, t)
    while True:
        attempts += 1
        c = verify(mixed(t), notions)
        if c.verified:
            hi, cert_hi = t, c
            break
        lo = t
        if t >= t_max:
            break
        t = min(100 * t, t_max)  # each verification of a large channel costs seconds (1 000 dense places: 9 s)
    if hi is None:
        return Repair(Q, math.nan, cert, attempts)
    # bisection in log space, a few steps: the cost of repair is linear in t, at most
    # t times the objective's scale; below REFINE_ABOVE that is far inside the tolerance
    for _ in range(5):
        if lo == 0 or hi <= REFINE_ABOVE:
            break
        mid = math.sqrt(lo * hi)
        attempts += 1
        c = verify(mixed(mid), notions)
        if c.verified:
            hi, cert_hi = mid, c
        else:
            lo = mid
    return Repair(mixed(hi), hi, cert_hi, attempts)
