"""Loss matrices of the loss objectives: named losses (hamming, absolute, squared) or explicit.

May import: :mod:`mechopt._errors`.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .._errors import InputError

#: the named losses of docs/formats.md, with the unit of an expected loss under each
LOSS_UNITS = {"hamming": "probability of a wrong report", "absolute": "units of the labels",
              "squared": "squared units of the labels"}
LOSSES = tuple(LOSS_UNITS)


def numeric_labels(labels: Sequence[str], where: str) -> np.ndarray:
    """Labels read as finite numbers (an absolute or squared loss without ``values``)."""
    try:
        vals = np.array([float(v) for v in labels])
    except ValueError:
        raise InputError(where, f"absolute/squared loss needs numeric labels or 'values', got {list(labels)!r}") from None
    if not np.all(np.isfinite(vals)):
        raise InputError(where, "numeric labels must be finite")
    return vals


def loss_matrix_of(loss: Any, inputs, outputs, values, where: str) -> np.ndarray:
    """``L[x, y]`` (k x m) from a named loss over the labels (or ``values``) or an explicit matrix.

    Examples
    --------
    >>> loss_matrix_of("absolute", ["0", "1", "3"], ["0", "1", "3"], None, "objective.loss")[0].tolist()
    [0.0, 1.0, 3.0]
    """
    k, m = len(inputs), len(outputs)
    if isinstance(loss, str):
        if loss not in LOSSES:
            raise InputError(where, f"unknown loss {loss!r}; expected one of {list(LOSSES)} or a matrix")
        if loss == "hamming":
            return np.array([[0.0 if x == y else 1.0 for y in outputs] for x in inputs])
        xv = values if values is not None else numeric_labels(inputs, where)
        if values is not None and tuple(outputs) == tuple(inputs):
            yv = values
        else:
            yv = numeric_labels(outputs, where)
        d = np.abs(xv[:, None] - yv[None, :])
        return d if loss == "absolute" else d**2
    if not isinstance(loss, (list, tuple)) or len(loss) != k:
        raise InputError(where, f"a loss matrix must have {k} rows (one per input), got {loss!r}")
    L = np.zeros((k, m))
    for i, row in enumerate(loss):
        if not isinstance(row, (list, tuple)) or len(row) != m:
            raise InputError(f"{where}[{i}]", f"must have {m} entries (one per output)")
        if set(map(type, row)) <= {int, float}:  # a row of plain numbers at once (bool is neither)
            try:
                L[i] = row
            except OverflowError:
                pass
            else:
                if np.all(np.isfinite(L[i])):
                    continue
        for j, v in enumerate(row):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise InputError(f"{where}[{i}][{j}]", f"must be a finite number, got {v!r}")
            L[i, j] = v
    return L


def loss_matrix(loss: Any, k: int, m: int | None = None, *, values=None) -> np.ndarray:
    """A ``k x m`` loss matrix from ``"hamming"``, ``"absolute"``, ``"squared"`` or explicit.

    ``absolute``/``squared`` need numeric ``values`` (one per input; the outputs are the
    inputs).

    Examples
    --------
    >>> loss_matrix("hamming", 2).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    m = k if m is None else m
    if not isinstance(loss, str):
        L = np.asarray(loss, dtype=float)
        if L.shape != (k, m) or not np.all(np.isfinite(L)):
            raise InputError("objective.loss", f"must be a finite {k} x {m} matrix, got shape {L.shape}")
        return L
    if loss == "hamming" and m != k:
        raise InputError("objective.loss", "hamming needs outputs = inputs")
    if loss in ("absolute", "squared"):
        if values is None:
            raise InputError("objective.values", f"loss {loss!r} needs numeric values per input")
        values = np.asarray(values, dtype=float)
        if values.shape != (k,) or m != k:
            raise InputError("objective.values", f"must have one value per input ({k})")
    elif loss != "hamming":
        raise InputError("objective.loss", f"must be hamming, absolute, squared or a matrix, got {loss!r}")
    labels = [str(x) for x in range(k)]
    return loss_matrix_of(loss, labels, labels, values, "objective.loss")


def loss_unit(loss: Any) -> str:
    """The unit of an expected loss under the problem file's ``loss`` (a name or a matrix)."""
    if isinstance(loss, str) or loss is None:
        return LOSS_UNITS.get(loss or "hamming", "loss units")
    return "units of the loss matrix"
