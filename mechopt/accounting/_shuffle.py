"""Central (ε, δ) after shuffling n reports of one finite channel.

A shuffler hands the analyst the multiset of the n users' reports. Two neighbouring
datasets differ in user 1's input (``a`` against ``b``); everybody else's inputs are
arbitrary. The bound is the clone reduction of Feldman, McMillan and Talwar, "Hiding
among the clones" (FOCS 2021), Theorem 3.2, computed for the exact channel:

1. every other user's row dominates a multiple of the clone measure ``m`` of the pair:
   ``Q[x] >= r m`` for every input ``x``, so each other user independently reports a
   clone of symbol 0 (``r``), of symbol 1 (``r``) or something that does not depend on
   ``a``/``b`` (``1 - 2r``);
2. user 1's two rows split as ``Q[a] = w (α P0' + (1 - α) P1') + (1 - w) N`` and
   ``Q[b] = w ((1 - α) P0' + α P1') + (1 - w) N`` with ``P0' + P1' = m``;
3. revealing whether user 1 drew the common part ``N`` (probability ``1 - w``, the same
   under both inputs), the shuffled multiset is a post-processing of the counts of the
   two clone symbols, so (data processing) ``δ(ε) <= w · H_ε`` where ``H_ε`` is the
   hockey-stick divergence between ``(A + Δ, K - A + 1 - Δ)`` and
   ``(A + 1 - Δ, K - A + Δ)``, ``K ~ Bin(n - 1, 2r)``, ``A ~ Bin(K, 1/2)``,
   ``Δ ~ Bern(α)``.

``w = 1``, ``α = p/(p + 1)`` (``p`` the pair's largest probability ratio) and
``m = Q[a] + Q[b]`` is FMT'21 Theorem 3.2 with the exact clone rate ``2r`` in place of
``e^{-ε0}``; ``w = β`` (the pair's total variation), ``α = 1`` splits off the rows'
difference only, the extreme of the variation-ratio parametrisation (p, β, q) of Wang
et al., "Privacy amplification via shuffling: unified, simplified, and tightened"
(arXiv:2304.05007), and of FMT's "stronger clones" (SODA 2023). Every ``(w, α)`` on a grid
between them is a valid decomposition, and so is FMT'21's generic one (``2r = e^{-ε0}``
for every ε0-LDP channel): the bound is the smallest, for the worst pair of inputs.
``H_ε`` is summed exactly: for ``K = k`` the positive part is a binomial tail, so one
evaluation costs one pass over the support of ``K`` (truncated where a tail holds less than
1e-30, the cut mass added to δ).

The closed form of FMT'21 Theorem 3.1 (:func:`shuffle_epsilon_closed_form`) is never
beaten from above: :func:`shuffle_epsilon` returns the smallest of ε0, the closed form
and the numerical bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import stats

from .._errors import InputError
from .._validation import check_channel, check_delta, check_epsilon, check_k

#: exact pairs are searched up to this many distinct pairs of rows; above it the pair-uniform decompositions
MAX_PAIRS = 500
_REL = 1e-4  # bisection stops when the bracket is this small relative to ε (the upper end is returned)
_TAIL = 1e-300
_CUT = 1e-30  # the support of K is cut where each tail holds less than this; the cut mass is added to δ


@dataclass(frozen=True)
class _Split:
    """One decomposition: user 1 informative with probability ``w``, symbol bias ``alpha``, clone rate ``r``."""

    w: float
    alpha: float
    r: float


def _check_n(n: Any) -> int:
    return check_k(n, "n", minimum=1)


@lru_cache(maxsize=64)
def _clone_counts(n_others: int, rate: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The support of ``K ~ Bin(n_others, rate)`` kept, its probabilities, and the mass cut off."""
    if n_others == 0 or rate < 1e-200:  # a smaller clone rate is always valid; scipy overflows on subnormal ones
        return np.array([0]), np.array([1.0]), 0.0
    lo, hi = _support(n_others, rate)
    ks = np.arange(lo, hi + 1)
    pk = stats.binom.pmf(ks, n_others, rate)
    outside = float((stats.binom.cdf(lo - 1, n_others, rate) if lo > 0 else 0.0) + stats.binom.sf(hi, n_others, rate))
    keep = pk > _TAIL
    outside += float(pk[~keep].sum())
    return ks[keep], pk[keep], outside


def _support(n: int, rate: float) -> tuple[int, int]:
    """``(lo, hi)`` with ``P(K < lo)`` and ``P(K > hi)`` each at most ``_CUT`` (``K ~ Bin(n, rate)``), by bisection."""
    mode = int(n * rate)
    a, b = 0, mode  # P(K < a) <= _CUT (true at a = 0); move a up while it stays true
    while b - a > 1:
        mid = (a + b) // 2
        if stats.binom.cdf(mid - 1, n, rate) <= _CUT:
            a = mid
        else:
            b = mid
    lo = a
    a, b = mode, n  # P(K > b) <= _CUT (true at b = n)
    while b - a > 1:
        mid = (a + b) // 2
        if stats.binom.sf(mid, n, rate) <= _CUT:
            b = mid
        else:
            a = mid
    return lo, b


def clone_divergence(n_others: int, rate: float, alpha: float, epsilon: float) -> float:
    """``H_ε`` of FMT'21 Theorem 3.2 with clone rate ``rate``: an upper bound, summed exactly.

    ``K ~ Bin(n_others, rate)`` clones, ``A ~ Bin(K, 1/2)`` of them of symbol 0; user 1
    adds symbol 0 with probability ``alpha`` (one input) or ``1 - alpha`` (the other).
    Rounding and the cut tails of ``K`` are added, so the value is never below the
    divergence.

    Examples
    --------
    With no other user it is randomized response's: ``(α - e^ε (1 - α))+``.

    >>> round(clone_divergence(0, 0.3, 0.75, 0.0), 9)
    0.5
    >>> clone_divergence(0, 0.3, 0.75, math.log(3.0)) < 1e-9  # 0, and the rounding allowance
    True
    """
    if alpha <= 0.5:
        return 0.0
    e = math.exp(epsilon)
    ks, pk, outside = _clone_counts(n_others, min(max(rate, 0.0), 1.0))
    # the likelihood ratio of (N0 = u) given K = k increases with u; it exceeds e^ε for u > u*
    # (u* in floating point may be off by a rounding: the tail sums from u0 - 1, u0 and u0 + 1 are
    # compared, and the largest is the sum of the positive terms, since the terms change sign once)
    ustar = (ks + 1) * (e * alpha - (1 - alpha)) / ((2 * alpha - 1) * (1 + e))
    u0 = np.floor(ustar).astype(np.int64) + 1
    c1, c2 = alpha - e * (1 - alpha), (1 - alpha) - e * alpha
    tail = stats.binom.sf(u0 - 1, ks, 0.5)  # P(A >= u0)
    mass = {j: stats.binom.pmf(u0 + j, ks, 0.5) for j in (-2, -1, 0)}
    s = {0: tail, -1: tail + mass[-1], -2: tail + mass[-1] + mass[-2], 1: tail - mass[0]}  # P(A >= u0 + j)
    terms = np.max([s[j - 1] * c1 + s[j] * c2 for j in (-1, 0, 1)], axis=0)
    magnitude = float(np.dot(pk, s[-2] + e * s[-1]))
    value = float(np.dot(pk, np.maximum(terms, 0.0)))
    return float(min(1.0, value + outside + 1e-10 * magnitude + 1e-300))


def _pair_splits(P0: np.ndarray, P1: np.ndarray, g: np.ndarray) -> list[_Split]:
    """The decompositions of the grid for the pair of rows ``(P0, P1)``; ``g`` the column minima of Q."""
    D = P0 - P1
    S = P0 + P1
    # the total variation, as the larger of the two parts (their halves' mean loses a small β to rounding)
    beta = max(float(D[D > 0].sum()), float(-D[D < 0].sum()))
    if beta <= 0:
        return []
    absd = np.abs(D)
    pos = S > 0
    tmin = float(np.max(absd[pos] / S[pos]))  # (p - 1)/(p + 1); 1 when a support differs
    nz = absd > 0
    gd = float(np.min(g[nz] / absd[nz]))  # r <= s g/|D| keeps P0', P1' >= 0 under r m
    out = []
    ts = sorted({tmin + (1 - tmin) * f for f in (0.0, 0.25, 0.5, 1.0)})
    for t in ts:
        wlo = min(1.0, beta / t * (1 + 1e-12))  # s = w t >= β: the clone measure can hold the rows' difference
        for w in sorted({wlo * (1 / wlo) ** (j / 3) for j in range(4)} | {1.0}):
            if w == 1.0 and t > tmin:
                continue  # w = 1 forces m = P0 + P1: a larger α gains no clone
            s = w * t
            if s < beta:
                continue
            cap = s * gd
            with np.errstate(over="ignore"):  # a tiny w: no cap from U where it overflows
                U = S / w
            if w >= 1.0 - 1e-12:
                r = min(cap, float(np.min(g[pos] / S[pos])))
            else:
                r = _largest_rate(U, g, cap)
            out.append(_Split(w, 0.5 * (1 + t), max(0.0, r * (1 - 1e-9))))
    return out


def _largest_rate(U: np.ndarray, g: np.ndarray, cap: float) -> float:
    """Largest ``r <= cap`` with ``sum_y min(U_y, g_y / r) >= 2`` (a clone measure ``m <= U`` of mass 2)."""
    def mass(r: float) -> float:
        with np.errstate(divide="ignore", over="ignore"):
            return float(np.minimum(U, np.where(g > 0, g / r, 0.0)).sum()) if r > 0 else float(U[g > 0].sum())

    if cap <= 0 or mass(0.0) < 2 * (1 + 1e-12):
        return 0.0
    if mass(cap) >= 2:
        return cap
    lo, hi = 0.0, cap
    for _ in range(45):
        mid = 0.5 * (lo + hi)
        if mass(mid) >= 2:
            lo = mid
        else:
            hi = mid
    return lo


def _uniform_splits(Q: np.ndarray) -> list[_Split]:
    """Decompositions valid for every pair at once (FMT'21's generic one and its exact-rate version)."""
    eps0 = local_epsilon(Q)
    if not math.isfinite(eps0):
        return []
    alpha = 1.0 / (1.0 + math.exp(-eps0))
    g = Q.min(axis=0)
    top = np.sort(Q, axis=0)[-2:].sum(axis=0) if Q.shape[0] > 1 else Q[0]
    pos = top > 0
    r = float(np.min(g[pos] / top[pos])) * (1 - 1e-9)
    return [_Split(1.0, alpha, 0.5 * math.exp(-eps0)), _Split(1.0, alpha, r)]


def local_epsilon(Q: Any) -> float:
    """ε0 of the channel: the largest log-ratio of two entries of one column (``inf`` if a zero meets a positive).

    Examples
    --------
    >>> e = math.exp(1.0)
    >>> round(local_epsilon([[e / (e + 1), 1 / (e + 1)], [1 / (e + 1), e / (e + 1)]]), 12)
    1.0
    """
    Q = np.asarray(Q, dtype=float)
    hi, lo = Q.max(axis=0), Q.min(axis=0)
    if np.any((lo == 0) & (hi > 0)):
        return math.inf
    pos = hi > 0
    return float(np.max(np.log(hi[pos]) - np.log(lo[pos]))) if pos.any() else 0.0


def _groups(Q: np.ndarray) -> list[list[_Split]]:
    """One list of decompositions per distinct pair of rows (every pair needs one that holds)."""
    k = Q.shape[0]
    uniform = _uniform_splits(Q)
    rows = np.unique(Q, axis=0)
    if len(rows) < 2:
        return []
    if len(rows) * (len(rows) - 1) // 2 > MAX_PAIRS:
        if not uniform:
            raise InputError("matrix", f"has {k} rows and an infinite ε0: the exact pair search covers at most "
                                       f"{MAX_PAIRS} pairs of distinct rows")
        return [uniform]
    g = Q.min(axis=0)
    seen: dict[tuple, list[_Split]] = {}
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            splits = _pair_splits(rows[i], rows[j], g) + uniform
            key = tuple(sorted((round(s.w, 12), round(s.alpha, 12), round(s.r, 12)) for s in splits))
            seen.setdefault(key, splits)
    return list(seen.values())


def _least_delta(splits: list[_Split], n: int, epsilon: float) -> float:
    return min((s.w * clone_divergence(n - 1, 2 * s.r, s.alpha, epsilon) for s in splits), default=0.0)


def _channel(Q: Any) -> np.ndarray:
    """The channel of an array or of a mechanism (its ``matrix``), validated."""
    return check_channel(getattr(Q, "matrix", Q), "Q")


def shuffle_delta(Q: Any, n: int, epsilon: float) -> float:
    """δ of the shuffled n reports at ε: an upper bound for every pair of neighbouring datasets.

    Parameters
    ----------
    Q : array_like, shape (k, m), or Mechanism
        The channel, rows = inputs.
    n : int
        Number of users, each sending one report through the shuffler.
    epsilon : float
        The central ε.

    Examples
    --------
    Binary randomized response at ε0 = ln 3 among 1000 users:

    >>> Q = [[0.75, 0.25], [0.25, 0.75]]
    >>> shuffle_delta(Q, 1000, 0.5) < 1e-6 < shuffle_delta(Q, 1000, 0.1)
    True
    >>> shuffle_delta(Q, 1000, math.log(3))
    0.0
    """
    Q = _channel(Q)
    n = _check_n(n)
    epsilon = check_epsilon(epsilon, "epsilon")
    if epsilon >= local_epsilon(Q):
        return 0.0
    return max((min(1.0, _least_delta(g, n, epsilon)) for g in _groups(Q)), default=0.0)


def _dominated(s: _Split, others: list[_Split]) -> bool:
    """Another split is at least as good: no larger w, no larger α, no smaller clone rate (pruning only)."""
    return any(o is not s and o.w <= s.w and o.alpha <= s.alpha and o.r >= s.r and o != s for o in others)


def _root(f, delta: float, lo: float, up: float) -> float:
    """Smallest ε in ``[lo, up]`` with ``f(ε) <= delta`` for ``f`` decreasing: the upper end of a bisection bracket."""
    while up - lo > _REL * up + 1e-12:
        mid = 0.5 * (lo + up)
        if f(mid) <= delta:
            up = mid
        else:
            lo = mid
    return up


def _epsilon_for(splits: list[_Split], n: int, delta: float, hi: float) -> float:
    """Smallest ε (the upper end of a bracket) with some split's δ <= delta, capped at hi.

    Every split is a valid bound, so any of them may be bisected: the undominated ones in
    turn (``w = 1`` first, then by clone rate), each bisected only if it meets ``delta``
    just below the best ε so far.
    """
    live = sorted((s for s in splits if not _dominated(s, splits)), key=lambda s: (s.w < 1, -s.r))
    best = hi
    for i, s in enumerate(live):
        f = (lambda eps, s=s: s.w * clone_divergence(n - 1, 2 * s.r, s.alpha, eps))
        if f(best * (1 - 2 * _REL) if i else best) > delta:
            continue
        if best == hi and f(0.0) <= delta:
            return 0.0
        best = _root(f, delta, 0.0, best)
    return best


def _meets(splits: list[_Split], n: int, delta: float, epsilon: float) -> bool:
    """Some split's δ at ``epsilon`` is at most ``delta`` (stops at the first)."""
    return any(s.w * clone_divergence(n - 1, 2 * s.r, s.alpha, epsilon) <= delta
               for s in sorted(splits, key=lambda s: (s.w < 1, -s.r)))


def shuffle_epsilon(Q: Any, n: int, delta: float) -> float:
    """ε of the shuffled n reports at δ: the smallest of ε0, FMT'21 Theorem 3.1 and the numerical bound.

    The numerical bound (module docstring) is computed for every distinct pair of rows
    and the worst is kept; the bisection returns the upper end of a bracket of relative
    width 1e-4, so the value is an upper bound.

    Examples
    --------
    >>> Q = [[0.75, 0.25], [0.25, 0.75]]
    >>> eps = shuffle_epsilon(Q, 10_000, 1e-6)
    >>> 0.0 < eps < shuffle_epsilon_closed_form(math.log(3), 10_000, 1e-6) < math.log(3)
    True
    >>> shuffle_epsilon(Q, 1, 1e-6) <= math.log(3)
    True
    """
    Q = _channel(Q)
    n = _check_n(n)
    delta = check_delta(delta, "delta", low_open=True, high_open=True)
    eps0 = local_epsilon(Q)
    hi = min(eps0, shuffle_epsilon_closed_form(eps0, n, delta)) if math.isfinite(eps0) else math.inf
    groups = _groups(Q)
    if not math.isfinite(hi):
        hi = 64.0  # a channel without pure LDP: search below e^64 (δ at hi is checked below)
        if any(_least_delta(g, n, hi) > delta for g in groups):
            return math.inf
    worst = 0.0
    # the most exposed pairs first (largest bias, fewest clones), so that later pairs are settled in one evaluation
    groups.sort(key=lambda g: max((s.alpha, -s.r) for s in g if s.w == 1.0), reverse=True)
    for g in groups:
        if worst > 0 and _meets(g, n, delta, worst):
            continue  # this pair is already within the worst one's ε
        worst = max(worst, _epsilon_for(g, n, delta, hi))
    return worst


def shuffle_epsilon_generic(eps0: float, n: int, delta: float) -> float:
    """FMT'21 Theorem 3.2 for any ε0-LDP randomizer: clone rate ``e^{-ε0}``, computed numerically (capped at ε0).

    What the channel-free analysis gives; :func:`shuffle_epsilon` is never above it for
    an ε0-LDP channel (it keeps this decomposition among its candidates).

    Examples
    --------
    >>> eps = shuffle_epsilon_generic(1.0, 10_000, 1e-6)
    >>> 0.0 < eps < shuffle_epsilon_closed_form(1.0, 10_000, 1e-6)
    True
    """
    eps0 = check_epsilon(eps0, "eps0")
    n = _check_n(n)
    delta = check_delta(delta, "delta", low_open=True, high_open=True)
    if eps0 == 0:
        return 0.0
    split = _Split(1.0, 1.0 / (1.0 + math.exp(-eps0)), 0.5 * math.exp(-eps0))
    return _epsilon_for([split], n, delta, eps0)


def shuffle_epsilon_closed_form(eps0: float, n: int, delta: float) -> float:
    """FMT'21 Theorem 3.1: the central ε of n shuffled ε0-LDP reports (ε0 itself outside its condition).

    ``ε = log(1 + (e^ε0 - 1)/(e^ε0 + 1) (8 sqrt(e^ε0 log(4/δ)) / sqrt(n) + 8 e^ε0 / n))``
    when ``ε0 <= log(n / (16 log(2/δ)))``; the result is never above ε0.

    Examples
    --------
    >>> round(shuffle_epsilon_closed_form(1.0, 10_000, 1e-6), 4)
    0.214
    >>> shuffle_epsilon_closed_form(3.0, 10, 1e-6)  # outside the condition: ε0
    3.0
    """
    eps0 = check_epsilon(eps0, "eps0", allow_inf=True)
    n = _check_n(n)
    delta = check_delta(delta, "delta", low_open=True, high_open=True)
    if not math.isfinite(eps0) or eps0 > math.log(n / (16 * math.log(2 / delta))):
        return eps0
    e = math.exp(eps0)
    bound = math.log1p((e - 1) / (e + 1) * (8 * math.sqrt(e * math.log(4 / delta)) / math.sqrt(n) + 8 * e / n))
    return min(eps0, bound)
