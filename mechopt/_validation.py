"""The one place where user input is validated: budgets, δ, priors, channels, labels, k.

Every module of mechopt — notions and problems, closed forms, the runtime, continuous
mechanisms — checks its arguments through these functions, which return cleaned values
and raise :class:`~mechopt._errors.InputError` (a ``ValueError``; for a value of the wrong
type :class:`~mechopt._errors.InputTypeError`, also a ``TypeError``) naming the field and
the rule, with the offending value. (The standard-library client, :mod:`mechopt.client`,
keeps its own few checks because it must import nothing else; ``tests/test_validation.py``
checks that both accept and refuse the same values.)

Examples
--------
>>> check_epsilon(0.5)
0.5
>>> check_epsilon("inf", allow_inf=True)
inf
>>> check_epsilon(-1)
Traceback (most recent call last):
...
mechopt._errors.InputError: epsilon: must be >= 0, got -1.0
>>> check_prior([0.25, 0.75]).tolist()
[0.25, 0.75]
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ._errors import InputError, InputTypeError
from ._jsonsafe import BEYOND_FLOAT, FLOAT_MAX_INT, MAX_DEPTH, check_number_range  # MAX_DEPTH: the file parsers' too

INF = math.inf
#: a prior (or any probability vector) must sum to 1 within this
PRIOR_SUM_TOL = 1e-9
#: documented input limits, checked before anything large is allocated
#: (docs/limits in the README): the number of inputs of any problem; the size k x m of a
#: labeled channel; k for objectives and notions that carry a k x k matrix
MAX_INPUTS = 100_000
MAX_LABELED_ENTRIES = 25_000_000  # 5 000 x 5 000, the largest square channel MAX_MATRIX_INPUTS allows (64 x 64 grids: 1.7e7)
MAX_MATRIX_INPUTS = 5_000
_NUMBER = (int, float, np.integer, np.floating)


def _is_inf_word(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() in {"inf", "infinity"}




def _to_float(value: Any, field: str) -> float:
    """``float(value)`` for a number already type-checked; an integer beyond float range is an InputError.

    An integer up to the largest float, about 1.8e308 (``10**300``, say), is accepted and
    rounded to the nearest float, as every number of a problem is; a larger one is
    refused rather than read as infinity (or as the largest float).
    """
    return float(check_number_range(value, field))


def check_tree(doc: Any, field: str = "", *, max_depth: int = MAX_DEPTH) -> None:
    """Refuse, anywhere in a parsed document, nesting deeper than ``max_depth`` and integers beyond float range.

    Run once on a whole problem before any field is read, so that no later conversion
    (``float(10**400)``) or recursion (``repr`` of a 10 000-deep list) can raise
    anything but an :class:`InputError` naming the place. Iterative: the document's own
    depth does not use the Python stack.

    Examples
    --------
    >>> check_tree({"privacy": [{"epsilon": 10**300}]})
    >>> check_tree({"privacy": [{"epsilon": 10**400}]})
    Traceback (most recent call last):
    ...
    mechopt._errors.InputError: privacy[0].epsilon: the integer ~1e400 is beyond the range of a float (about 1.8e308)
    """
    stack = [(doc, field, 0)]
    while stack:
        node, where, depth = stack.pop()
        if isinstance(node, dict):
            items = [(f"{where}.{k}" if where else str(k), v) for k, v in node.items()]
        elif isinstance(node, (list, tuple)):
            types = set(map(type, node))
            if types <= {float, int, bool}:  # a row of numbers: compared in C, read one by one only if refused
                if int in types and not -FLOAT_MAX_INT <= min(node) <= max(node) <= FLOAT_MAX_INT:
                    for i, v in enumerate(node):
                        if type(v) is int:
                            _to_float(v, f"{where}[{i}]")
                continue
            items = [(f"{where}[{i}]", v) for i, v in enumerate(node)]
        else:
            if isinstance(node, int) and not isinstance(node, bool):
                _to_float(node, where or "value")
            continue
        if depth >= max_depth:
            raise InputError(where or "problem", f"nests deeper than {max_depth} levels (lists and mappings); "
                                                 "a problem never needs that")
        for sub, v in reversed(items):
            if isinstance(v, (dict, list, tuple)) or (isinstance(v, int) and not isinstance(v, bool)):
                stack.append((v, sub, depth + 1))


def _as_number(value: Any, field: str, what: str, wrong_type: type[InputError]) -> float:
    if isinstance(value, bool) or not isinstance(value, _NUMBER):
        raise wrong_type(field, f"must be {what}, got {value!r}")
    v = _to_float(value, field)
    if math.isnan(v):
        raise InputError(field, f"must be {what}, got NaN")
    return v


def check_number(value: Any, field: str) -> float:
    """Return ``value`` as a float: a real number (not a bool, not NaN; ±inf allowed)."""
    return _as_number(value, field, "a number", InputTypeError)


def check_number_or_inf(value: Any, field: str) -> float:
    """A number, or the string ``"inf"`` (JSON cannot write infinity) read as ``inf``."""
    if _is_inf_word(value):
        return INF
    return _as_number(value, field, "a number or 'inf'", InputError)


def check_finite(value: Any, field: str) -> float:
    """A finite real number."""
    v = check_number(value, field)
    if not math.isfinite(v):
        raise InputError(field, f"must be finite, got {v!r}")
    return v


def check_positive(value: Any, field: str) -> float:
    """A finite number ``> 0``."""
    v = check_number(value, field)
    if not (math.isfinite(v) and v > 0):
        raise InputError(field, f"must be finite and > 0, got {v!r}")
    return v


def check_epsilon(value: Any, field: str = "epsilon", *, allow_inf: bool = False, positive: bool = False,
                  why: str = "") -> float:
    """A privacy budget: a number ``>= 0`` (``> 0`` if ``positive``; ``inf``/"inf" if ``allow_inf``).

    ``why`` explains the "> 0" rule where a function needs it (an estimator dividing by
    ``e^ε - 1``).
    """
    if _is_inf_word(value):
        value = INF
    v = check_number(value, field)
    if v < 0:
        raise InputError(field, f"must be >= 0, got {v!r}")
    if positive and v == 0:
        raise InputError(field, f"must be > 0{why}, got {v!r}")
    if math.isinf(v) and not allow_inf:
        raise InputError(field, "must be finite (write no notion for 'no constraint')")
    return v


def check_epsilons(values: Any, field: str = "epsilons") -> list[float]:
    """A non-empty sequence of budgets (each ``>= 0``, finite)."""
    try:
        items = list(values)
    except TypeError:
        raise InputError(field, f"must be a list of budgets, got {values!r}") from None
    out = [check_epsilon(v, f"{field}[{i}]") for i, v in enumerate(items)]
    if not out:
        raise InputError(field, "must contain at least one epsilon, got none")
    return out


def check_probability(value: Any, field: str, *, low_open: bool = False, high_open: bool = False) -> float:
    """A number in ``[0, 1]`` (either end open on request)."""
    v = check_number(value, field)
    lo_ok = v > 0 if low_open else v >= 0
    hi_ok = v < 1 if high_open else v <= 1
    if not (lo_ok and hi_ok):
        interval = ("(" if low_open else "[") + "0, 1" + (")" if high_open else "]")
        raise InputError(field, f"must lie in {interval}, got {v!r}")
    return v


def check_delta(value: Any, field: str = "delta", **kw) -> float:
    """The δ of (ε, δ) notions: a probability (see :func:`check_probability`)."""
    return check_probability(value, field, **kw)


def check_prior(values: Any, field: str = "prior", *, k: int | None = None, positive: bool = False,
                why: str = "") -> np.ndarray:
    """A probability vector: finite entries ``>= 0`` (``> 0`` if ``positive``), summing to 1 within 1e-9.

    The offending entry is named (``prior[2]``); ``why`` is added to the "> 0" rule. Returns
    a float array (not renormalised: the decimals as written are what LIP's exact check
    reads).
    """
    if isinstance(values, np.ndarray):
        values = values.tolist()
    if isinstance(values, (str, bytes, dict)) or not isinstance(values, (list, tuple)):
        raise InputError(field, f"must be a list of probabilities, got {values!r}")
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, _NUMBER):
            raise InputError(f"{field}[{i}]", f"must be a number, got {v!r}")
        v = _to_float(v, f"{field}[{i}]")
        if not math.isfinite(v):
            raise InputError(f"{field}[{i}]", f"must be finite, got {v!r}")
        if v < 0 or (positive and v == 0):
            raise InputError(f"{field}[{i}]", f"must be {'> 0' if positive else '>= 0'}{why}, got {v!r}")
        out.append(v)
    if not out:
        raise InputError(field, "must be a non-empty list of probabilities")
    if k is not None and len(out) != k:
        raise InputError(field, f"must have one entry per input ({k}), got {len(out)}")
    total = math.fsum(out)
    if abs(total - 1.0) > PRIOR_SUM_TOL:
        raise InputError(field, f"must sum to 1, got sum {total!r}")
    return np.asarray(out, dtype=float)


def check_k(value: Any, field: str = "k", *, minimum: int = 1, maximum: int | None = None) -> int:
    """An integer domain size in ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(field, f"must be an integer, got {value!r}")
    v = int(value)
    if v < minimum:
        raise InputError(field, f"must be >= {minimum}, got {v!r}")
    if maximum is not None and v > maximum:
        raise InputError(field, f"must be <= {maximum}, got {v!r}")
    return v


def check_labels(value: Any, field: str) -> tuple[str, ...]:
    """A non-empty list of unique labels (strings; numbers are written as strings)."""
    if not isinstance(value, (list, tuple)) or not value:
        raise InputError(field, f"must be a non-empty list of labels, got {value!r}")
    out = []
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise InputError(f"{field}[{i}]", f"must be a string label, got {v!r}")
        out.append(str(v))
    if len(set(out)) != len(out):
        seen: set[str] = set()
        dup = sorted({v for v in out if v in seen or seen.add(v)})  # linear: 10^5 equal labels took minutes
        shown = dup[:10] + (["…"] if len(dup) > 10 else [])
        raise InputError(field, f"labels must be unique; repeated {shown!r}")
    return tuple(out)


def resolve_input(item: Any, k: int, field: str, *, labels: Sequence[str] | None = None) -> int:
    """The index of one input given as a label or an integer index."""
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


def check_subset(items: Any, k: int, field: str, *, labels: Sequence[str] | None = None) -> list[int]:
    """A sorted list of distinct input indices, from labels or integer indices."""
    if isinstance(items, (str, bytes)) or not isinstance(items, (list, tuple, set, frozenset, np.ndarray)):
        raise InputError(field, f"must be a list of inputs, got {items!r}")
    out = [resolve_input(item, k, f"{field}[{i}]", labels=labels) for i, item in enumerate(list(items))]
    if len(set(out)) != len(out):
        raise InputError(field, f"must not repeat an input, got {list(items)!r}")
    return sorted(out)


def check_matrix(values: Any, field: str = "matrix") -> np.ndarray:
    """A non-empty 2-d matrix of finite numbers (a channel before its rows are judged).

    Lists of lists are read entry by entry only when something is wrong, to name the
    offending entry (``matrix[1][0]``).
    """
    if isinstance(values, np.ndarray):
        arr = np.asarray(values, dtype=float)
    else:
        if not isinstance(values, (list, tuple)) or not values:
            raise InputError(field, "must be a non-empty list of rows")
        m = None
        for i, row in enumerate(values):
            if not isinstance(row, (list, tuple)):
                raise InputError(f"{field}[{i}]", f"must be a list of numbers, got {row!r}")
            if m is None:
                m = len(row)
            if len(row) != m or m == 0:
                raise InputError(f"{field}[{i}]", f"must have {m} entries like row 0 (got {len(row)})")
            types = set(map(type, row))
            if not types <= {float, int}:
                for j, v in enumerate(row):
                    if isinstance(v, bool) or not isinstance(v, _NUMBER):
                        raise InputTypeError(f"{field}[{i}][{j}]", f"must be a number, got {v!r}")
            if int in types:
                for j, v in enumerate(row):
                    if type(v) is int:
                        _to_float(v, f"{field}[{i}][{j}]")
        arr = np.array(values, dtype=float)
    if arr.ndim != 2 or arr.size == 0:
        raise InputError(field, f"must be a 2-d matrix, got shape {arr.shape}")
    bad = np.argwhere(~np.isfinite(arr))
    if len(bad):
        i, j = bad[0]
        raise InputError(f"{field}[{i}][{j}]", f"must be finite, got {float(arr[i, j])!r}")
    return arr


def check_channel(Q: Any, field: str = "Q", *, atol: float = 1e-9, shape: tuple[int | None, int | None] = (None, None)
                  ) -> np.ndarray:
    """A float ``k x m`` channel: finite entries ``>= 0``, rows summing to 1 within ``atol``.

    The offending entry or row is named (``Q[1][0]``, ``Q[2]``). ``shape`` fixes k and/or
    m. (The exact check of a channel that is to be exported is :func:`mechopt.verify`;
    this validates a channel handed to an analysis function.)
    """
    try:
        arr = np.ascontiguousarray(Q, dtype=float)
    except OverflowError:
        check_tree(Q, field)
        raise InputError(field, f"holds an integer that {BEYOND_FLOAT}") from None
    except (TypeError, ValueError) as err:
        raise InputTypeError(field, f"must be a numeric k x m matrix: {err}") from None
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise InputError(field, f"must be a non-empty 2-D k x m matrix, got shape {arr.shape!r}")
    for axis, want in enumerate(shape):
        if want is not None and arr.shape[axis] != want:
            raise InputError(field, f"must have {want} {'rows' if axis == 0 else 'columns'}, got shape {arr.shape!r}")
    if not np.all(np.isfinite(arr)):
        i, j = np.argwhere(~np.isfinite(arr))[0]
        raise InputError(f"{field}[{i}][{j}]", f"must be finite, got {arr[i, j]!r}")
    if np.any(arr < 0):
        i, j = np.argwhere(arr < 0)[0]
        raise InputError(f"{field}[{i}][{j}]", f"must be >= 0, got {float(arr[i, j])!r}")
    sums = arr.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > atol)
    if bad.size:
        i = int(bad[0])
        raise InputError(f"{field}[{i}]", f"row must sum to 1 within {atol:g}, sums to "
                                          f"{float(sums[i])!r}")
    return arr


def check_channel_prior(Q: Any, prior: Any, prior_field: str = "prior") -> tuple[np.ndarray, np.ndarray]:
    """A channel (:func:`check_channel`) and a prior with one entry per row (:func:`check_prior`)."""
    Q = check_channel(Q)
    return Q, check_prior(prior, prior_field, k=Q.shape[0])


def check_interval(value: Any, field: str) -> tuple[float, float]:
    """A pair ``(lo, hi)`` of finite numbers with ``lo < hi``."""
    try:
        lo, hi = value
    except (TypeError, ValueError):
        raise InputError(field, f"must be a pair (lo, hi), got {value!r}") from None
    lo, hi = check_finite(lo, f"{field}[0]"), check_finite(hi, f"{field}[1]")
    if not lo < hi:
        raise InputError(field, f"needs lo < hi, got {value!r}")
    return lo, hi
