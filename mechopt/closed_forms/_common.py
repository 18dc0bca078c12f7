"""Validation helpers shared by the closed-form modules.

Every user-facing function of :mod:`mechopt.closed_forms` validates its arguments here,
once, and raises :class:`~mechopt._errors.InputError` naming the field and the rule.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .._errors import InputError

INF = math.inf


def check_epsilon(value: Any, field: str = "epsilon", *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float budget ``>= 0`` (``inf`` only when allowed)."""
    if isinstance(value, str) and value.strip().lower() in {"inf", "infinity"}:
        value = INF
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(field, f"must be a number, got {value!r}")
    v = float(value)
    if math.isnan(v):
        raise InputError(field, "must be a number >= 0, got NaN")
    if v < 0:
        raise InputError(field, f"must be >= 0, got {v!r}")
    if math.isinf(v) and not allow_inf:
        raise InputError(field, f"must be finite, got {v!r}")
    return v


def check_probability(value: Any, field: str) -> float:
    """Return ``value`` as a float in ``[0, 1]``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(field, f"must be a number in [0, 1], got {value!r}")
    v = float(value)
    if not (0.0 <= v <= 1.0):
        raise InputError(field, f"must be in [0, 1], got {v!r}")
    return v


def check_prior(values: Any, field: str = "prior", *, k: int | None = None) -> np.ndarray:
    """Return a probability vector (entries ``>= 0``, sum 1 within ``1e-9``)."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InputError(field, f"must be a list of probabilities, got {values!r}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise InputError(field, f"must be a non-empty list of probabilities, got {values!r}")
    if not np.all(np.isfinite(arr)):
        raise InputError(field, f"entries must be finite, got {values!r}")
    if np.any(arr < 0):
        raise InputError(field, f"entries must be >= 0, got {values!r}")
    if k is not None and arr.size != k:
        raise InputError(field, f"must have one entry per input ({k}), got {arr.size}")
    total = math.fsum(arr.tolist())
    if abs(total - 1.0) > 1e-9:
        raise InputError(field, f"must sum to 1, got sum {total!r}")
    return arr


def check_k(value: Any, field: str = "k", *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an int domain size in ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(field, f"must be an integer, got {value!r}")
    v = int(value)
    if v < minimum:
        raise InputError(field, f"must be >= {minimum}, got {v!r}")
    if maximum is not None and v > maximum:
        raise InputError(field, f"must be <= {maximum}, got {v!r}")
    return v


def check_subset(items: Any, k: int, field: str, *, labels: Sequence[str] | None = None) -> list[int]:
    """Return a sorted list of distinct input indices from labels or integer indices."""
    if isinstance(items, (str, bytes)) or not isinstance(items, (list, tuple, set, frozenset, np.ndarray)):
        raise InputError(field, f"must be a list of inputs, got {items!r}")
    out: list[int] = []
    for i, item in enumerate(list(items)):
        out.append(resolve_input(item, k, f"{field}[{i}]", labels=labels))
    if len(set(out)) != len(out):
        raise InputError(field, f"must not repeat an input, got {list(items)!r}")
    return sorted(out)


def resolve_input(item: Any, k: int, field: str, *, labels: Sequence[str] | None = None) -> int:
    """Return the index of one input given as a label or an integer index."""
    if labels is not None and isinstance(item, str):
        if item not in labels:
            raise InputError(field, f"{item!r} is not an input (inputs are {list(labels)!r})")
        return list(labels).index(item)
    if isinstance(item, bool) or not isinstance(item, (int, np.integer)):
        raise InputError(field, f"must be an input label or index, got {item!r}")
    v = int(item)
    if not 0 <= v < k:
        raise InputError(field, f"index must be in [0, {k - 1}], got {v!r}")
    return v


def check_channel(Q: Any, field: str = "Q", *, atol: float = 1e-9) -> np.ndarray:
    """Return ``Q`` as a float ``k x m`` channel (entries ``>= 0``, rows sum to 1)."""
    try:
        arr = np.asarray(Q, dtype=float)
    except (TypeError, ValueError):
        raise InputError(field, f"must be a k x m matrix of numbers, got {Q!r}") from None
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise InputError(field, f"must be a non-empty k x m matrix, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError(field, "entries must be finite")
    if np.any(arr < -atol):
        raise InputError(field, f"entries must be >= 0, got minimum {arr.min()!r}")
    sums = arr.sum(axis=1)
    if np.any(np.abs(sums - 1.0) > atol):
        bad = int(np.argmax(np.abs(sums - 1.0)))
        raise InputError(field, f"rows must sum to 1, row {bad} sums to {sums[bad]!r}")
    return arr


def exp_or_inf(eps: float) -> float:
    """``e^eps`` with ``exp(inf) = inf`` and no overflow warning."""
    if math.isinf(eps) or eps > 700.0:
        return INF
    return math.exp(eps)
