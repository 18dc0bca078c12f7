"""Privacy-loss distributions of a finite channel, as ``dp_accounting`` objects.

The privacy loss of an output ``y`` between inputs ``a`` and ``b`` is
``log(Q[a, y] / Q[b, y])``; its distribution under ``y ~ Q[a]`` (and, for the other
direction, with ``a`` and ``b`` exchanged) is all an accountant needs: Google's
``dp_accounting`` (``dp_accounting.pld.privacy_loss_distribution
.from_two_probability_mass_functions``, Meiser and Mohammadi, "Tight on budget?", CCS
2018; Koskela, Jälkö and Honkela, AISTATS 2020, for the FFT composition) composes it and
turns it into (ε, δ) with pessimistic rounding, so the ε it reports is an upper bound.

T collections from the same user compose: the T-fold product's loss is the sum of T
independent losses. A memoized client (RAPPOR's permanent randomized response) sends the
same report every time, so T collections cost one.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._errors import InputError
from .._validation import check_channel, check_delta, check_k

#: above this many distinct pairs of rows, compositions use the ε0-DP dominating pair instead
MAX_PAIRS = 300
_COARSE = 1e-2  # the grid of the first, cheap pass over the pairs


def _channel(Q: Any) -> tuple[np.ndarray, tuple[str, ...] | None]:
    labels = getattr(Q, "inputs", None)
    matrix = getattr(Q, "matrix", Q)
    return check_channel(matrix, "Q"), (tuple(labels) if labels is not None else None)


def _pair_epsilon(P: np.ndarray, R: np.ndarray) -> float:
    """max over outputs of |log P/R| (inf when a support differs)."""
    both = (P > 0) | (R > 0)
    if np.any((P[both] == 0) | (R[both] == 0)):
        return math.inf
    return float(np.max(np.abs(np.log(P[both]) - np.log(R[both]))))


def worst_pair(Q: Any) -> tuple[int, int]:
    """The pair of inputs ``(a, b)``, ``a < b``, with the largest privacy loss (ties: the largest total variation).

    Examples
    --------
    >>> worst_pair([[0.5, 0.5], [0.6, 0.4], [0.9, 0.1]])
    (0, 2)
    """
    Q, _ = _channel(Q)
    k = Q.shape[0]
    if k < 2:
        raise InputError("Q", "needs at least 2 inputs to have a pair")
    best, key = (0, 1), (-1.0, -1.0)
    for a in range(k):
        for b in range(a + 1, k):
            cand = (_pair_epsilon(Q[a], Q[b]), 0.5 * float(np.abs(Q[a] - Q[b]).sum()))
            if cand > key:
                best, key = (a, b), cand
    return best


def _resolve(item: Any, k: int, labels: tuple[str, ...] | None) -> int:
    if isinstance(item, str) and labels is not None:
        if item not in labels:
            raise InputError("pair", f"{item!r} is not one of the inputs")
        return labels.index(item)
    if isinstance(item, bool) or not isinstance(item, (int, np.integer)) or not 0 <= int(item) < k:
        raise InputError("pair", f"must name two inputs (indices 0..{k - 1} or labels), got {item!r}")
    return int(item)


def _from_rows(P: np.ndarray, R: np.ndarray, interval: float):
    from dp_accounting.pld import privacy_loss_distribution as pld

    with np.errstate(divide="ignore"):
        upper = {y: float(v) for y, v in enumerate(np.log(P)) if P[y] > 0}
        lower = {y: float(v) for y, v in enumerate(np.log(R)) if R[y] > 0}
    return pld.from_two_probability_mass_functions(lower, upper, pessimistic_estimate=True,
                                                   value_discretization_interval=interval, symmetric=False)


def _interval(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 < float(value) <= 1):
        raise InputError("value_discretization_interval", f"must be a number in (0, 1], got {value!r}")
    return float(value)


def privacy_loss_distribution(Q: Any, pair: Any = None, value_discretization_interval: float = 1e-4):
    """The ``dp_accounting`` privacy-loss distribution of one pair of inputs, both directions.

    Parameters
    ----------
    Q : array_like (k, m) or Mechanism
        The channel (rows = inputs).
    pair : (a, b), optional
        Two inputs (indices, or labels for a Mechanism); default :func:`worst_pair`.
    value_discretization_interval : float
        The loss grid of ``dp_accounting`` (rounded pessimistically: ε is over-reported by
        at most one interval per composed report).

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        Removing ``a`` for ``b`` and back; compose it with the accountant's other events.

    Examples
    --------
    >>> import math
    >>> e = math.exp(1.0)
    >>> Q = [[e / (e + 1), 1 / (e + 1)], [1 / (e + 1), e / (e + 1)]]
    >>> pld = privacy_loss_distribution(Q)
    >>> abs(pld.get_epsilon_for_delta(0.0) - 1.0) <= 1e-4
    True
    """
    Q, labels = _channel(Q)
    interval = _interval(value_discretization_interval)
    if pair is None:
        a, b = worst_pair(Q)
    else:
        try:
            first, second = pair
        except (TypeError, ValueError):
            raise InputError("pair", f"must be two inputs, got {pair!r}") from None
        a, b = _resolve(first, Q.shape[0], labels), _resolve(second, Q.shape[0], labels)
        if a == b:
            raise InputError("pair", f"must name two different inputs, got {pair!r}")
    return _from_rows(Q[a], Q[b], interval)


def _distinct_pairs(Q: np.ndarray) -> list[tuple[int, int]]:
    """One pair of rows per distinct multiset of column pairs (pairs with the same losses share a PLD)."""
    seen: dict[tuple, tuple[int, int]] = {}
    k = Q.shape[0]
    for a in range(k):
        for b in range(a + 1, k):
            there = sorted(zip(Q[a].tolist(), Q[b].tolist()))
            back = sorted(zip(Q[b].tolist(), Q[a].tolist()))
            seen.setdefault(tuple(min(there, back)), (a, b))
    return list(seen.values())


def compose_epsilon(Q: Any, T: int, delta: float = 0.0, memoized: bool = False,
                    value_discretization_interval: float = 1e-4) -> float:
    """ε of T collections of the channel from one user at δ, worst pair of inputs.

    Each distinct pair's privacy-loss distribution is composed T times (``dp_accounting``,
    pessimistic rounding) and the largest ε is kept. ``memoized``: the client repeats
    one permanent report, so the T collections cost one report's ε. Above
    ``MAX_PAIRS`` distinct pairs the ε0-DP dominating pair of ``dp_accounting``
    (``from_privacy_parameters``: every ε0-DP pair is a post-processing of it, Kairouz,
    Oh and Viswanath, ICML 2015, Theorem 3.5) stands in for the pairs.

    Examples
    --------
    >>> import math
    >>> e = math.exp(0.5)
    >>> Q = [[e / (e + 2), 1 / (e + 2), 1 / (e + 2)], [1 / (e + 2), e / (e + 2), 1 / (e + 2)],
    ...      [1 / (e + 2), 1 / (e + 2), e / (e + 2)]]
    >>> abs(compose_epsilon(Q, 10) - 5.0) < 0.01
    True
    >>> abs(compose_epsilon(Q, 10, memoized=True) - 0.5) < 1e-3
    True
    >>> compose_epsilon(Q, 10, delta=1e-6) < 5.0
    True
    """
    Q, _ = _channel(Q)
    T = check_k(T, "T", minimum=1)
    delta = check_delta(delta, "delta", high_open=True)
    interval = _interval(value_discretization_interval)
    if memoized:
        T = 1
    if Q.shape[0] < 2:
        return 0.0
    pairs = _distinct_pairs(Q) if Q.shape[0] * (Q.shape[0] - 1) // 2 <= 50 * MAX_PAIRS else None
    if pairs is None or len(pairs) > MAX_PAIRS:
        from dp_accounting.pld import common, privacy_loss_distribution as pld

        from ._shuffle import local_epsilon

        eps0 = local_epsilon(Q)
        if not math.isfinite(eps0):
            return math.inf
        p = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eps0, 0.0),
                                        value_discretization_interval=interval)
        return _composed_epsilon(p, T, delta)
    # a pair's T-fold ε is at most T (its largest loss + one grid step): the pairs in decreasing
    # order of their loss, stopping where that cap cannot beat the worst so far; a pair whose
    # composition on a coarse grid (pessimistic too, so also an upper bound) does not beat it is skipped
    ranked = sorted(((_pair_epsilon(Q[a], Q[b]), a, b) for a, b in pairs), reverse=True)
    coarse = max(interval, _COARSE)
    worst = 0.0
    for eps_pair, a, b in ranked:
        if T * (eps_pair + interval) <= worst:
            break
        if worst > 0 and coarse > interval and _composed_epsilon(_from_rows(Q[a], Q[b], coarse), T, delta) <= worst:
            continue
        worst = max(worst, _composed_epsilon(_from_rows(Q[a], Q[b], interval), T, delta))
    return worst


def _composed_epsilon(p, T: int, delta: float) -> float:
    # δ = 0: no tail may be cut (a cut tail counts as infinite loss)
    composed = p.self_compose(T, tail_mass_truncation=0.0 if delta == 0 else 1e-15) if T > 1 else p
    return float(composed.get_epsilon_for_delta(delta))
