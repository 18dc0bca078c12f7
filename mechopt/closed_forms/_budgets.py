"""Achieved privacy budgets of a channel, computed in plain floating point.

These are the *definitions* of docs/model.md evaluated directly on a matrix, written without
any reference to the solver or to :mod:`mechopt._verify`; the closed-form tests use them
to judge each formula of the papers. Conventions: a column that is entirely zero is
never emitted and constrains nothing; ``log(a / 0)`` with ``a > 0`` is ``inf``.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..notions import uldp_roles as _uldp_roles
from .._validation import check_channel, check_channel_prior, check_epsilon, check_subset
from ._common import exp_or_inf

__all__ = [
    "ldp_budget",
    "eldp_pair_budgets",
    "eldp_excess",
    "high_low_budget",
    "block_budget",
    "lip_budget",
    "bp_lip_budget",
    "uldp_roles",
    "uldp_budget",
    "di_budget",
    "maximal_leakage",
    "ldp_delta",
    "lip_delta",
]

_TINY = 0.0  # entries <= _TINY count as zero


def _log_ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise ``log(a/b)`` with ``0/0 -> -inf`` (no constraint) and ``a/0 -> inf``."""
    out = np.full(np.broadcast(a, b).shape, -math.inf)
    a_b, b_b = np.broadcast_arrays(a, b)
    pos_a = a_b > _TINY
    pos_b = b_b > _TINY
    both = pos_a & pos_b
    out[both] = np.log(a_b[both]) - np.log(b_b[both])
    out[pos_a & ~pos_b] = math.inf
    return out


def _max_column_log_ratio(M: np.ndarray, *, skip_empty: bool = True) -> float:
    """``max_y log(max_x M[x, y] / min_x M[x, y])``: inf when a column has a zero entry.

    With ``skip_empty`` an all-zero column (an output never emitted) is skipped.
    """
    best = 0.0
    for y in range(M.shape[1]):
        col = M[:, y]
        if skip_empty and col.max() <= _TINY:
            continue
        if col.min() <= _TINY:
            return math.inf
        best = max(best, math.log(col.max()) - math.log(col.min()))
    return best


def ldp_budget(Q: np.ndarray) -> float:
    """Smallest ``eps`` such that ``Q`` is ``eps``-LDP: ``max_y log(max_x q_y / min_x q_y)``.

    Parameters
    ----------
    Q : ndarray, shape (k, m)
        A channel (rows are inputs).

    Returns
    -------
    float
        ``0.0`` for a constant channel, ``inf`` when some column mixes zero and non-zero.

    Examples
    --------
    >>> import numpy as np
    >>> round(ldp_budget(np.array([[0.75, 0.25], [0.25, 0.75]])), 6)
    1.098612
    """
    Q = check_channel(Q)
    return _max_column_log_ratio(Q)


def eldp_pair_budgets(Q: np.ndarray) -> np.ndarray:
    """Matrix ``A[x, x'] = max_y log(Q[x, y] / Q[x', y])`` (``-inf`` if never positive).

    ``Q`` is E-LDP exactly when ``A <= E`` off the diagonal.

    Examples
    --------
    >>> import numpy as np
    >>> A = eldp_pair_budgets(np.array([[0.5, 0.5], [0.0, 1.0]]))
    >>> float(A[0, 1]), round(float(A[1, 0]), 6)
    (inf, 0.693147)
    """
    Q = check_channel(Q)
    k = Q.shape[0]
    A = np.full((k, k), -math.inf)
    for x in range(k):
        for x2 in range(k):
            if x != x2:
                A[x, x2] = float(np.max(_log_ratio(Q[x], Q[x2])))
    np.fill_diagonal(A, 0.0)
    return A


def eldp_excess(Q: np.ndarray, E: np.ndarray) -> float:
    """``max_{x != x'} (A[x, x'] - E[x, x'])`` over pairs with finite ``E``; ``<= 0`` means E-LDP.

    Examples
    --------
    >>> import numpy as np
    >>> bool(eldp_excess(np.array([[0.5, 0.5], [0.0, 1.0]]), np.array([[0, np.inf], [1.0, 0]])) <= 0)
    True
    """
    A = eldp_pair_budgets(Q)
    E = np.asarray(E, dtype=float)
    worst = -math.inf
    k = A.shape[0]
    for x in range(k):
        for x2 in range(k):
            if x == x2 or math.isinf(E[x, x2]):
                continue
            worst = max(worst, A[x, x2] - E[x, x2])
    return worst


def high_low_budget(Q: np.ndarray, sensitive: Sequence[int]) -> float:
    """Smallest ``eps`` with ``Q[a, y] <= e^eps Q[x', y]`` for sensitive ``a``, any ``x'`` (002 Def. 3).

    Examples
    --------
    >>> import numpy as np
    >>> round(high_low_budget(np.array([[0.5, 0.5], [0.0, 1.0]]), [1]), 6)
    0.693147
    """
    Q = check_channel(Q)
    A = check_subset(sensitive, Q.shape[0], "sensitive")
    best = 0.0
    for a in A:
        for x in range(Q.shape[0]):
            if x != a:
                best = max(best, float(np.max(_log_ratio(Q[a], Q[x]))))
    return best


def block_budget(Q: np.ndarray, blocks: Sequence[Sequence[int]]) -> float:
    """Smallest ``eps`` such that ``Q`` is ε-LDP inside every block (002 Def. 4).

    Examples
    --------
    >>> import numpy as np
    >>> block_budget(np.eye(2), [[0], [1]])
    0.0
    """
    Q = check_channel(Q)
    best = 0.0
    for b in blocks:
        b = list(b)
        for x in b:
            for x2 in b:
                if x != x2:
                    best = max(best, float(np.max(_log_ratio(Q[x], Q[x2]))))
    return best


def lip_budget(Q: np.ndarray, prior: Sequence[float]) -> float:
    """LIP leakage ``max_{x,y} |log(q_y[x] / (P . q_y))|`` over emitted columns (000 Def. 3, 003 eq. 8).

    Parameters
    ----------
    Q : ndarray, shape (k, m)
    prior : array_like, shape (k,)

    Examples
    --------
    >>> round(lip_budget([[0.75, 0.25], [0.25, 0.75]], [0.5, 0.5]), 6)
    0.693147
    """
    Q, P = check_channel_prior(Q, prior)
    best = 0.0
    for y in range(Q.shape[1]):
        col = Q[:, y]
        if col.max() <= _TINY:
            continue
        s = float(P @ col)
        if s <= _TINY:
            return math.inf  # mass only on zero-prior inputs: the posterior is undefined
        for x in range(Q.shape[0]):
            if col[x] <= _TINY:
                return math.inf
            best = max(best, abs(math.log(col[x]) - math.log(s)))
    return best


def bp_lip_budget(Q: np.ndarray, priors: Sequence[Sequence[float]]) -> float:
    """``max`` of :func:`lip_budget` over a finite list of priors (003 Def. 6).

    Examples
    --------
    >>> import numpy as np
    >>> Q = np.array([[0.75, 0.25], [0.25, 0.75]])
    >>> bp_lip_budget(Q, [[0.5, 0.5], [0.2, 0.8]]) >= lip_budget(Q, [0.5, 0.5])
    True
    """
    return max(lip_budget(Q, p) for p in priors)


def uldp_roles(Q: np.ndarray, sensitive: Sequence[int]) -> list[str]:
    """Role of each column under ULDP (001 Def. 2): ``"zero"``, ``"invertible"`` or ``"protected"``.

    A column is invertible when it has exactly one non-zero entry and that entry is at a
    non-sensitive input; every other non-zero column must be protected.

    Examples
    --------
    >>> import numpy as np
    >>> uldp_roles(np.array([[0.5, 0.5], [0.0, 1.0]]), [1])
    ['invertible', 'protected']
    """
    Q = check_channel(Q)
    return _uldp_roles(Q, check_subset(sensitive, Q.shape[0], "sensitive"))


def uldp_budget(Q: np.ndarray, sensitive: Sequence[int]) -> float:
    """Smallest ``eps`` such that ``Q`` is ``(X_S, Y_P, eps)``-ULDP with the roles of :func:`uldp_roles`.

    Protected columns must be ε-LDP over *all* inputs.

    Examples
    --------
    >>> round(uldp_budget([[0.5, 0.5], [0.0, 1.0]], [1]), 6)
    0.693147
    """
    Q = check_channel(Q)
    roles = uldp_roles(Q, sensitive)
    cols = [y for y, r in enumerate(roles) if r == "protected"]
    if not cols:
        return 0.0
    sub = Q[:, cols]
    return _max_column_log_ratio(sub, skip_empty=False)


def di_budget(Q: np.ndarray, prior: Sequence[float]) -> float:
    """Differential identifiability leakage ``max log(P(x|y) / P(x'|y))`` (003 Def. 3, pointwise).

    Examples
    --------
    >>> import numpy as np
    >>> round(di_budget(np.array([[0.75, 0.25], [0.25, 0.75]]), [0.5, 0.5]), 6)
    1.098612
    """
    Q, P = check_channel_prior(Q, prior)
    joint = P[:, None] * Q
    return _max_column_log_ratio(joint)


def maximal_leakage(Q: np.ndarray) -> float:
    """Maximal information leakage ``log sum_y max_x Q[x, y]`` (003 Def. 4).

    Examples
    --------
    >>> import numpy as np
    >>> round(maximal_leakage(np.eye(2)), 6)
    0.693147
    """
    Q = check_channel(Q)
    return float(math.log(Q.max(axis=0).sum()))


def ldp_delta(Q: np.ndarray, epsilon: float) -> float:
    """Smallest ``delta`` such that ``Q`` is ``(eps, delta)``-LDP (003 Def. 1, set version).

    ``max_{x,x'} max_S Q(S|x) - e^eps Q(S|x') = max_{x,x'} sum_y (Q[x,y] - e^eps Q[x',y])_+``.

    Examples
    --------
    >>> import numpy as np
    >>> ldp_delta(np.eye(2), 1.0)
    1.0
    """
    Q = check_channel(Q)
    e = exp_or_inf(check_epsilon(epsilon, allow_inf=True))
    if math.isinf(e):
        return 0.0
    best = 0.0
    for x in range(Q.shape[0]):
        for x2 in range(Q.shape[0]):
            if x != x2:
                best = max(best, float(np.clip(Q[x] - e * Q[x2], 0, None).sum()))
    return best


def lip_delta(Q: np.ndarray, prior: Sequence[float], epsilon: float, *, pointwise: bool = False) -> float:
    """Smallest ``delta`` such that ``Q`` is ``(eps, delta)``-LIP for ``prior``.

    With ``pointwise=False`` the set version, 003 eq. (3), maximised over output sets
    ``S`` (input sets reduce to singletons: a conditional on a set of inputs is a mixture
    of rows). With ``pointwise=True`` the per-output condition of 003 eq. (4).

    Examples
    --------
    >>> import numpy as np
    >>> Q = np.array([[0.9, 0.1], [0.1, 0.9]])
    >>> lip_delta(Q, [0.5, 0.5], 1.0) >= lip_delta(Q, [0.5, 0.5], 1.0, pointwise=True)
    True
    """
    Q, P = check_channel_prior(Q, prior)
    e = exp_or_inf(check_epsilon(epsilon, allow_inf=True))
    if math.isinf(e):
        return 0.0
    py = P @ Q
    best = 0.0
    for x in range(Q.shape[0]):
        up = np.clip(py - e * Q[x], 0, None)
        lo = np.clip(Q[x] / e - py, 0, None)
        if pointwise:
            best = max(best, float(up.max()), float(lo.max()))
        else:
            best = max(best, float(up.sum()), float(lo.sum()))
    return best
