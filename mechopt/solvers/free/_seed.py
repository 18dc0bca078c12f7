"""Columns that start a column generation: calibrated standard mechanisms and given channels.

A master that starts from the constant column alone leaves the first pricing round to
find everything, and on a LIP slice with a skewed prior that round is a branch and bound
over ``2^k`` sets with no incumbent to prune by (k = 100, Zipf(1.1), ε = 2: no improving
ray in a minute). Two kinds of columns start it instead; both lie in the cone, so the
master's value is at once at least theirs:

* :func:`lip_seed_columns` — on a LIP slice ``{P·v = 1, e^-ε <= v <= e^ε}``, the
  two-level columns ``α 1 + β 1_S`` pushed to the slice's edge (``v = e^-ε`` off ``S``
  when ``π(S) >= ρ``, else ``v = e^ε`` on ``S``; ``ρ = (1 - e^-ε)/(e^ε - e^-ε)``) for every
  singleton ``S = {x}`` (randomized response calibrated to LIP: the master mixes them
  into the best generalised RR) and for the sets of the rows of a Sylvester–Hadamard
  matrix and their complements (Hadamard response calibrated to LIP; Acharya, Sun,
  Zhang, AISTATS 2019). Under LIP a column's ratio may reach ``e^{2ε}`` where LDP's
  stops at ``e^ε``.
* :func:`channel_columns` — the columns of explicit channels (the verified standard
  mechanisms of :mod:`mechopt._baselines`, which the dispatcher hands in), each scaled
  to ``s·v = 1``; with them in the master the exported channel is never worse than any.
"""

from __future__ import annotations

import math

import numpy as np

#: Hadamard sets seed a LIP slice up to this many inputs (2 K columns, K < 2 k)
HADAMARD_SEED_MAX_K = 1024
#: seeds start the master from this many inputs on (below, pricing finds the optimum quickly, and
#: the master stays smaller than the list of rays)
SEED_MIN_K = 15


def two_level(P: np.ndarray, S: np.ndarray, eps: float) -> np.ndarray:
    """The column ``α 1 + β 1_S`` of the ε-LIP slice of ``P`` with the largest ratio (module docstring).

    Examples
    --------
    >>> P = np.array([0.5, 0.3, 0.2])
    >>> v = two_level(P, np.array([0]), math.log(2))
    >>> v.tolist(), float(P @ v)
    ([1.5, 0.5, 0.5], 1.0)
    """
    lo, hi = math.exp(-eps), math.exp(eps)
    pi = float(P[S].sum())
    rho = (1.0 - lo) / (hi - lo)
    if pi >= rho:
        v = np.full(len(P), lo)
        v[S] += (1.0 - lo) / pi
    else:
        v = np.full(len(P), (1.0 - hi * pi) / (1.0 - pi))
        v[S] = hi
    return v


def hadamard_sets(k: int) -> list[np.ndarray]:
    """The inputs ``x < k`` where row ``i >= 1`` of the Sylvester–Hadamard matrix of order ``K > k`` is +1, and where it is -1."""
    K = 1 << max(1, k.bit_length())
    x = np.arange(k)
    v = np.arange(1, K)[:, None] & x[None, :]  # Sylvester: H[i, x] = (-1)^popcount(i & x)
    for shift in (16, 8, 4, 2, 1):
        v ^= v >> shift
    plus = (v & 1) == 0
    return [S for row in plus for S in (x[row], x[~row]) if 0 < len(S) < k]


def lip_seed_columns(P: np.ndarray, eps: float) -> np.ndarray:
    """Two-level slice columns: the singletons and, up to :data:`HADAMARD_SEED_MAX_K`, the Hadamard sets.

    Examples
    --------
    >>> P = np.random.default_rng(0).dirichlet(np.ones(6))
    >>> V = lip_seed_columns(P, 1.0)
    >>> V.shape[0], bool(np.allclose(P @ V, 1)), bool(V.min() >= math.exp(-1) - 1e-15), bool(V.max() <= math.e + 1e-15)
    (6, True, True, True)
    """
    P = np.asarray(P, dtype=float)
    k = len(P)
    if eps <= 0 or k < 2:
        return np.zeros((k, 0))
    sets = [np.array([x]) for x in range(k) if 0 < P[x] < 1]
    if k <= HADAMARD_SEED_MAX_K:
        sets += [S for S in hadamard_sets(k) if 0 < P[S].sum() < 1]
    return np.column_stack([two_level(P, S, eps) for S in sets]) if sets else np.zeros((k, 0))


def channel_columns(channels, s: np.ndarray) -> np.ndarray:
    """The columns of channels ``Q`` (k x m each), each scaled to ``s·v = 1`` (columns with ``s·v = 0`` dropped).

    Examples
    --------
    >>> channel_columns([np.array([[0.75, 0.25], [0.25, 0.75]])], np.array([0.5, 0.5])).tolist()
    [[1.5, 0.5], [0.5, 1.5]]
    """
    cols = [np.asarray(Q, dtype=float) for Q in channels if np.asarray(Q).size]
    if not cols:
        return np.zeros((len(s), 0))
    V = np.hstack(cols)
    m = s @ V
    keep = m > 1e-300
    return V[:, keep] / m[keep]
