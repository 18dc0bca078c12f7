"""Hadamard responses of 002: high-low (§5.1) and block-structured (§6.1).

Each scheme has a sampler (seeded numpy, never builds the matrix), an unbiased estimator
of the input distribution from the reports, and the full channel matrix for small ``k``.
Hadamard matrices are Sylvester's, indexed from 0: ``H[r, c] = (-1)^popcount(r & c)``.
The papers index rows from 1 and use row ``i + 1`` for symbol ``i``; with 0-based rows
that is row ``i`` for the 0-based ``i``-th symbol counted from 1, i.e. row 0 (all ones)
is never used.

Output layout
-------------
high-low: outputs ``0 .. S-1`` are the Hadamard slots, ``S + j`` is the direct report of
the ``j``-th non-sensitive input (in input order). block: the slots of block ``j`` come
after those of blocks ``0 .. j-1``.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .._errors import InputError
from .._validation import check_epsilon, check_k, check_subset

__all__ = [
    "sylvester_hadamard",
    "high_low_hadamard_channel",
    "high_low_hadamard_outputs",
    "high_low_hadamard_sample",
    "high_low_hadamard_estimate",
    "block_hadamard_channel",
    "block_hadamard_outputs",
    "block_hadamard_sample",
    "block_hadamard_estimate",
]

MAX_CHANNEL_K = 4096


def _popcount(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.int64)
    count = np.zeros_like(a)
    while np.any(a):
        count += a & 1
        a = a >> 1
    return count


def _hadamard_sign(r: np.ndarray, c: np.ndarray) -> np.ndarray:
    return 1 - 2 * (_popcount(np.bitwise_and(r, c)) & 1)


def sylvester_hadamard(m: int) -> np.ndarray:
    """Sylvester's ``m x m`` Hadamard matrix (002 §2), ``m`` a power of 2.

    Examples
    --------
    >>> sylvester_hadamard(4).tolist()
    [[1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1], [1, -1, -1, 1]]
    """
    m = check_k(m, "m")
    if m & (m - 1):
        raise InputError("m", f"must be a power of 2, got {m!r}")
    idx = np.arange(m)
    return _hadamard_sign(idx[:, None], idx[None, :]).astype(int)


def _slots(n_symbols: int) -> int:
    """``2^ceil(log2(n + 1))``: the smallest power of 2 strictly larger than ``n``."""
    return 1 << int(n_symbols).bit_length()


def _hl_setup(k: int, sensitive: Sequence[int], epsilon: float):
    k = check_k(k)
    A = check_subset(sensitive, k, "sensitive")
    eps = check_epsilon(epsilon, positive=True, why=" for the Hadamard estimators (they divide by e^eps - 1)")
    B = [x for x in range(k) if x not in set(A)]
    S = _slots(len(A))
    return k, A, B, eps, S


def high_low_hadamard_outputs(k: int, sensitive: Sequence[int]) -> list[str]:
    """Output labels of the high-low Hadamard response: ``"h<c>"`` then ``"d<x>"``.

    Examples
    --------
    >>> high_low_hadamard_outputs(3, [0])
    ['h0', 'h1', 'd1', 'd2']
    """
    k, A, B, _, S = _hl_setup(k, sensitive, 1.0)
    return [f"h{c}" for c in range(S)] + [f"d{x}" for x in B]


def high_low_hadamard_channel(
    k: int, sensitive: Sequence[int], epsilon: float, *, printed_rows: bool = False
) -> np.ndarray:
    """Channel of the high-low Hadamard response, 002 §5.1 eqs. (13)–(14).

    For the ``i``-th sensitive input (1-based ``i``, in increasing input order) and
    Hadamard slot ``c``: ``2e^ε/(S(e^ε+1))`` if ``H(i+1, c) = +1`` else ``2/(S(e^ε+1))``.
    A non-sensitive input ``x`` gives ``2/(S(e^ε+1))`` to every slot and
    ``(e^ε-1)/(e^ε+1)`` to its own direct output. ``S = 2^ceil(log2(s+1))``.

    Parameters
    ----------
    k : int
    sensitive : list of int
        The sensitive set ``A`` (input indices).
    epsilon : float
        ``> 0``.
    printed_rows : bool, optional
        Use row ``H(i, .)`` as printed in eq. (13) instead of ``H(i+1, .)`` (the row the
        estimator (15) assumes). The printed version gives the first sensitive input the
        all-ones row: its row sums to ``2e^ε/(e^ε+1) != 1``, so it is not a channel.

    Returns
    -------
    ndarray, shape (k, S + k - s)

    Examples
    --------
    >>> Q = high_low_hadamard_channel(3, [0], math.log(3))
    >>> Q.round(4).tolist()
    [[0.75, 0.25, 0.0, 0.0], [0.25, 0.25, 0.5, 0.0], [0.25, 0.25, 0.0, 0.5]]
    """
    k, A, B, eps, S = _hl_setup(k, sensitive, epsilon)
    if k > MAX_CHANNEL_K:
        raise InputError("k", f"must be <= {MAX_CHANNEL_K} to build the matrix, got {k}; use the sampler")
    e = math.exp(eps)
    Q = np.zeros((k, S + len(B)))
    cols = np.arange(S)
    for i, x in enumerate(A, start=1):
        row = i - 1 if printed_rows else i
        sign = _hadamard_sign(np.full(S, row), cols)
        Q[x, :S] = np.where(sign > 0, 2 * e, 2.0) / (S * (e + 1))
    for j, x in enumerate(B):
        Q[x, :S] = 2.0 / (S * (e + 1))
        Q[x, S + j] = (e - 1) / (e + 1)
    return Q


def _sampling_start(x: Sequence[int], k: int, eps: float,
                    rng: np.random.Generator | int | None) -> tuple[np.random.Generator, np.ndarray, float]:
    """The generator, the checked input indices and ``e^ε`` of a Hadamard sampler."""
    return np.random.default_rng(rng), _check_reports(x, k, "x"), math.exp(eps)


def _plus_slot(rng: np.random.Generator, rows: np.ndarray, slots: np.ndarray, e: float) -> np.ndarray:
    """Uniform ``slots`` moved so that ``H(row, slot) = +1`` w.p. ``e/(e+1)``, else ``-1``.

    Flipping the row's lowest set bit of the slot flips the sign of ``H(row, .)``, so the
    result is uniform on the row's ``+1`` set or on its ``-1`` set.
    """
    want_plus = rng.random(rows.size) < e / (e + 1)
    flip = (_hadamard_sign(rows, slots) > 0) != want_plus
    return np.where(flip, slots ^ (rows & (-rows)), slots)


def high_low_hadamard_sample(
    x: Sequence[int], *, k: int, sensitive: Sequence[int], epsilon: float,
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    """Privatize inputs ``x`` (indices) with the high-low Hadamard response; returns output indices.

    Does not build the channel: a sensitive input picks a slot of ``S_x`` (its +1 set)
    with probability ``e^ε/(e^ε+1)``, else a slot of the complement; a non-sensitive one
    reports itself with probability ``(e^ε-1)/(e^ε+1)``, else a uniform slot.

    Examples
    --------
    >>> y = high_low_hadamard_sample([0, 1, 2], k=3, sensitive=[0], epsilon=1.0, rng=0)
    >>> y.shape
    (3,)
    """
    k, A, B, eps, S = _hl_setup(k, sensitive, epsilon)
    rng, x, e = _sampling_start(x, k, eps, rng)
    row_of = np.zeros(k, dtype=np.int64)
    row_of[A] = np.arange(1, len(A) + 1)
    direct_of = np.full(k, -1, dtype=np.int64)
    direct_of[B] = S + np.arange(len(B))
    sens = np.isin(x, A)
    n = x.size
    y = rng.integers(0, S, size=n)
    y = np.where(sens, _plus_slot(rng, row_of[x], y, e), y)
    # non-sensitive: direct report w.p. (e-1)/(e+1)
    direct = (~sens) & (rng.random(n) < (e - 1) / (e + 1))
    y = np.where(direct, direct_of[x], y)
    return y.astype(np.int64)


def high_low_hadamard_estimate(
    y: Sequence[int], *, k: int, sensitive: Sequence[int], epsilon: float
) -> np.ndarray:
    """Unbiased estimate of the input distribution, 002 eqs. (17)–(18).

    ``p_hat_i = 2(e^ε+1)/(e^ε-1) (p_hat(S_i) - 1/(e^ε+1)) - p_hat(A)`` for sensitive ``i``,
    ``p_hat(A) = (e^ε+1)/(e^ε-1)(p_hat([S]) - 2/(e^ε+1))``, and
    ``p_hat_i = (e^ε+1)/(e^ε-1) * freq(direct output of i)`` otherwise.

    Examples
    --------
    >>> y = high_low_hadamard_sample([0] * 2000, k=3, sensitive=[0], epsilon=2.0, rng=1)
    >>> p = high_low_hadamard_estimate(y, k=3, sensitive=[0], epsilon=2.0)
    >>> bool(abs(p[0] - 1) < 0.15)
    True
    """
    k, A, B, eps, S = _hl_setup(k, sensitive, epsilon)
    y = _check_reports(y, S + len(B), "y")
    n = max(y.size, 1)
    e = math.exp(eps)
    counts = np.bincount(y, minlength=S + len(B)).astype(float) / n
    p = np.zeros(k)
    p_slots = counts[:S].sum()
    p_A = (e + 1) / (e - 1) * (p_slots - 2 / (e + 1))
    slot_idx = np.arange(S)
    for i, x in enumerate(A, start=1):
        in_Si = _hadamard_sign(np.full(S, i), slot_idx) > 0
        p_Si = counts[:S][in_Si].sum()
        p[x] = 2 * (e + 1) / (e - 1) * (p_Si - 1 / (e + 1)) - p_A
    for j, x in enumerate(B):
        p[x] = (e + 1) / (e - 1) * counts[S + j]
    return p


# -- block-structured ---------------------------------------------------------------


def _block_setup(k: int, blocks: Sequence[Sequence[int]], epsilon: float):
    k = check_k(k)
    if not isinstance(blocks, (list, tuple)) or not blocks:
        raise InputError("blocks", f"must be a non-empty list of lists of inputs, got {blocks!r}")
    parts = [check_subset(b, k, f"blocks[{j}]") for j, b in enumerate(blocks)]
    seen: dict[int, int] = {}
    for j, b in enumerate(parts):
        if not b:
            raise InputError(f"blocks[{j}]", "must not be empty")
        for x in b:
            if x in seen:
                raise InputError("blocks", f"input {x} is in block {seen[x]} and block {j}: blocks must not overlap")
            seen[x] = j
    missing = [x for x in range(k) if x not in seen]
    if missing:
        raise InputError("blocks", f"must cover every input; missing {missing!r}")
    eps = check_epsilon(epsilon, positive=True, why=" for the Hadamard estimators (they divide by e^eps - 1)")
    sizes = [_slots(len(b)) for b in parts]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    return k, parts, eps, sizes, offsets


def block_hadamard_outputs(k: int, blocks: Sequence[Sequence[int]]) -> list[str]:
    """Output labels of the block Hadamard response: ``"b<j>h<c>"``.

    Examples
    --------
    >>> block_hadamard_outputs(3, [[0, 1], [2]])
    ['b0h0', 'b0h1', 'b0h2', 'b0h3', 'b1h0', 'b1h1']
    """
    _, parts, _, sizes, _ = _block_setup(k, blocks, 1.0)
    return [f"b{j}h{c}" for j, K in enumerate(sizes) for c in range(K)]


def block_hadamard_channel(k: int, blocks: Sequence[Sequence[int]], epsilon: float) -> np.ndarray:
    """Channel of the block Hadamard response, 002 §6.1.

    Input ``x``, the ``i``-th (1-based, increasing order) element of block ``j``, uses row
    ``i + 1`` (1-based; row ``i`` 0-based) of ``H_{K_j}``, ``K_j = 2^ceil(log2(k_j + 1))``:
    ``Q((j, c) | x) = 2e^ε/(K_j(1+e^ε))`` on its +1 slots, ``2/(K_j(1+e^ε))`` on its -1
    slots, ``0`` outside its block.

    Examples
    --------
    >>> Q = block_hadamard_channel(3, [[0, 1], [2]], math.log(3))
    >>> Q.round(4).tolist()[2]
    [0.0, 0.0, 0.0, 0.0, 0.75, 0.25]
    """
    k, parts, eps, sizes, offsets = _block_setup(k, blocks, epsilon)
    if k > MAX_CHANNEL_K:
        raise InputError("k", f"must be <= {MAX_CHANNEL_K} to build the matrix, got {k}; use the sampler")
    e = math.exp(eps)
    Q = np.zeros((k, int(offsets[-1])))
    for j, b in enumerate(parts):
        K = sizes[j]
        cols = np.arange(K)
        for i, x in enumerate(b, start=1):
            sign = _hadamard_sign(np.full(K, i), cols)
            Q[x, offsets[j]:offsets[j] + K] = np.where(sign > 0, 2 * e, 2.0) / (K * (1 + e))
    return Q


def block_hadamard_sample(
    x: Sequence[int], *, k: int, blocks: Sequence[Sequence[int]], epsilon: float,
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    """Privatize inputs ``x`` with the block Hadamard response; returns output indices.

    Examples
    --------
    >>> block_hadamard_sample([0, 2], k=3, blocks=[[0, 1], [2]], epsilon=1.0, rng=0).shape
    (2,)
    """
    k, parts, eps, sizes, offsets = _block_setup(k, blocks, epsilon)
    rng, x, e = _sampling_start(x, k, eps, rng)
    block_of = np.zeros(k, dtype=np.int64)
    row_of = np.zeros(k, dtype=np.int64)
    for j, b in enumerate(parts):
        block_of[b] = j
        row_of[b] = np.arange(1, len(b) + 1)
    size_arr = np.asarray(sizes, dtype=np.int64)
    n = x.size
    K = size_arr[block_of[x]]
    c = _plus_slot(rng, row_of[x], np.floor(rng.random(n) * K).astype(np.int64), e)
    return (offsets[block_of[x]] + c).astype(np.int64)


def block_hadamard_estimate(
    y: Sequence[int], *, k: int, blocks: Sequence[Sequence[int]], epsilon: float
) -> np.ndarray:
    """Unbiased estimate of the input distribution, 002 eq. (23).

    ``p_hat_x = 2(e^ε+1)/(e^ε-1) (p_hat(S_x) - p_hat(X_j)/2)``.

    Examples
    --------
    >>> y = block_hadamard_sample([2] * 1000, k=3, blocks=[[0, 1], [2]], epsilon=2.0, rng=3)
    >>> p = block_hadamard_estimate(y, k=3, blocks=[[0, 1], [2]], epsilon=2.0)
    >>> bool(abs(p[2] - 1) < 0.2)
    True
    """
    k, parts, eps, sizes, offsets = _block_setup(k, blocks, epsilon)
    y = _check_reports(y, int(offsets[-1]), "y")
    n = max(y.size, 1)
    e = math.exp(eps)
    freq = np.bincount(y, minlength=int(offsets[-1])).astype(float) / n
    p = np.zeros(k)
    for j, b in enumerate(parts):
        K = sizes[j]
        f = freq[offsets[j]:offsets[j] + K]
        p_block = f.sum()
        cols = np.arange(K)
        for i, x in enumerate(b, start=1):
            p_Sx = f[_hadamard_sign(np.full(K, i), cols) > 0].sum()
            p[x] = 2 * (e + 1) / (e - 1) * (p_Sx - p_block / 2)
    return p


def _check_reports(values: Sequence[int], m: int, field: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InputError(field, f"must be a 1-D array of indices, got shape {arr.shape}")
    if arr.size == 0:
        return arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.integer):
        raise InputError(field, f"must hold integer indices, got dtype {arr.dtype}")
    if arr.min() < 0 or arr.max() >= m:
        raise InputError(field, f"indices must be in [0, {m - 1}], got range [{arr.min()}, {arr.max()}]")
    return arr.astype(np.int64)
