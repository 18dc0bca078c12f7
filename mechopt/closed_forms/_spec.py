"""The small problem description the closed-form registry reads.

:class:`ClosedFormSpec` is deliberately plain: the problem-file notation of docs/formats.md for
the privacy notions and the objective, plus the resolved input labels. The lead adapts
the real ``Problem`` object to it for ``mechopt closed-form``;
:func:`spec_from_problem` builds one from a parsed problem document (a dict).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._errors import InputError
from ..notions import notion_names
from .._validation import check_epsilon, check_k, check_prior, check_subset

#: The notion names the closed forms know about (docs/model.md, docs/formats.md).
KNOWN_NOTIONS = frozenset(notion_names(builtin_only=True))


@dataclass(frozen=True)
class ClosedFormSpec:
    """A problem as the closed forms see it.

    Built from a problem document by :func:`spec_from_problem`, or directly.

    Parameters
    ----------
    k : int
        Number of inputs.
    inputs : list of str
        Input labels, ``len(inputs) == k``.
    notions : list of dict
        Privacy notions in problem-file notation (docs/formats.md), e.g.
        ``{"notion": "lip", "epsilon": 1.0, "prior": [0.3, 0.7]}``. All must hold.
    objective : dict
        ``{"kind": ..., "prior": [...], "values": [...], "loss": ...}``; may be empty.
    outputs : str or list of str
        ``"inputs"`` (labeled, ``Y = X``), ``"free"``, or an explicit label list.

    Examples
    --------
    >>> s = ClosedFormSpec(k=2, inputs=["no", "yes"], notions=[{"notion": "ldp", "epsilon": 1.0}])
    >>> s.notion_kinds()
    ['ldp']
    """

    k: int
    inputs: list[str]
    notions: list[dict]
    objective: dict = field(default_factory=dict)
    outputs: Any = "free"

    def __post_init__(self) -> None:
        check_k(self.k, "k")
        if len(self.inputs) != self.k:
            raise InputError("inputs", f"must have k={self.k} labels, got {len(self.inputs)}")
        if len(set(self.inputs)) != self.k:
            raise InputError("inputs", f"labels must be distinct, got {list(self.inputs)!r}")
        if not isinstance(self.notions, (list, tuple)):
            raise InputError("privacy", f"must be a list of notions, got {self.notions!r}")
        for i, n in enumerate(self.notions):
            if not isinstance(n, dict) or "notion" not in n:
                raise InputError(f"privacy[{i}]", f"must be a mapping with a 'notion' key, got {n!r}")
            if n["notion"] not in KNOWN_NOTIONS:
                raise InputError(
                    f"privacy[{i}].notion",
                    f"unknown notion {n['notion']!r}; known: {sorted(KNOWN_NOTIONS)}",
                )

    # -- small accessors used by the registry ------------------------------------------

    def notion_kinds(self) -> list[str]:
        """The ``notion`` names, in order."""
        return [n["notion"] for n in self.notions]

    def only(self, *kinds: str) -> dict | None:
        """The single notion if there is exactly one and its kind is in ``kinds``."""
        if len(self.notions) == 1 and self.notions[0]["notion"] in kinds:
            return self.notions[0]
        return None

    def epsilon(self, notion: dict, index: int = 0) -> float:
        """The validated ``epsilon`` of a notion."""
        return check_epsilon(notion.get("epsilon"), f"privacy[{index}].epsilon")

    def subset(self, notion: dict, key: str, index: int = 0) -> list[int]:
        """A validated list of input indices (labels or indices) under ``notion[key]``."""
        return check_subset(notion.get(key, []), self.k, f"privacy[{index}].{key}", labels=self.inputs)

    def objective_prior(self) -> np.ndarray:
        """The objective prior: explicit, else the LIP prior, else uniform (docs/formats.md)."""
        if self.objective.get("prior") is not None:
            return check_prior(self.objective["prior"], "objective.prior", k=self.k)
        for i, n in enumerate(self.notions):
            if n["notion"] == "lip" and n.get("prior") is not None:
                return check_prior(n["prior"], f"privacy[{i}].prior", k=self.k)
        return np.full(self.k, 1.0 / self.k)

    def labeled_outputs_ok(self) -> bool:
        """True when a mechanism with outputs = inputs fits the requested outputs."""
        return self.outputs in ("inputs", "free") or list(self.outputs) == list(self.inputs)

    def free_outputs(self) -> bool:
        """True when the outputs are free (any alphabet)."""
        return self.outputs == "free"


def eldp_matrix(spec: ClosedFormSpec, notion: dict, index: int = 0) -> np.ndarray:
    """The ``k x k`` privacy matrix ``E`` of an ``eldp`` notion, validated."""
    raw = notion.get("matrix")
    where = f"privacy[{index}].matrix"
    if not isinstance(raw, (list, tuple, np.ndarray)) or len(raw) != spec.k:
        raise InputError(where, f"must be a {spec.k} x {spec.k} matrix, got {raw!r}")
    E = np.zeros((spec.k, spec.k))
    for i, row in enumerate(raw):
        if not isinstance(row, (list, tuple, np.ndarray)) or len(row) != spec.k:
            raise InputError(f"{where}[{i}]", f"must have {spec.k} entries, got {row!r}")
        for j, v in enumerate(row):
            E[i, j] = check_epsilon(v, f"{where}[{i}][{j}]", allow_inf=True)
    if np.any(np.diag(E) != 0):
        raise InputError(where, "diagonal entries must be 0")
    return E


def spec_from_problem(doc: dict) -> ClosedFormSpec:
    """Build a :class:`ClosedFormSpec` from a parsed problem document (docs/formats.md).

    Parameters
    ----------
    doc : dict
        The problem file as parsed from YAML/JSON: ``inputs`` or ``k``, ``outputs``,
        ``privacy`` (list of notions), ``objective``.

    Raises
    ------
    InputError
        When ``inputs``/``k`` is missing or malformed, or ``privacy`` is not a list of
        known notions.

    Examples
    --------
    >>> s = spec_from_problem({"k": 3, "privacy": [{"notion": "ldp", "epsilon": 1}]})
    >>> s.inputs
    ['0', '1', '2']
    """
    if not isinstance(doc, dict):
        raise InputError("problem", f"must be a mapping, got {type(doc).__name__}")
    if "inputs" in doc:
        inputs = doc["inputs"]
        if not isinstance(inputs, (list, tuple)) or not inputs:
            raise InputError("inputs", f"must be a non-empty list of labels, got {inputs!r}")
        inputs = [str(x) for x in inputs]
        k = len(inputs)
    elif "k" in doc:
        k = check_k(doc["k"], "k")
        inputs = [str(i) for i in range(k)]
    else:
        raise InputError("inputs", "the problem must give 'inputs' (labels) or 'k' (a size)")
    outputs = doc.get("outputs", "inputs")
    if not (outputs in ("inputs", "free") or isinstance(outputs, (list, tuple))):
        raise InputError("outputs", f"must be 'inputs', 'free' or a list of labels, got {outputs!r}")
    privacy = doc.get("privacy", [])
    if not isinstance(privacy, (list, tuple)):
        raise InputError("privacy", f"must be a list of notions, got {privacy!r}")
    objective = doc.get("objective") or {}
    if not isinstance(objective, dict):
        raise InputError("objective", f"must be a mapping, got {objective!r}")
    return ClosedFormSpec(k=k, inputs=inputs, notions=list(privacy), objective=dict(objective),
                          outputs=outputs if isinstance(outputs, str) else [str(o) for o in outputs])
