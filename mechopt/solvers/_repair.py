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
        every notion allows, so a repair always exists (the fallbacks use that).
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
