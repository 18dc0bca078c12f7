"""Utility-optimized LDP (Murakami & Kawamoto)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from .._composition import CompositionRule
from .._errors import InputError

from ._base import ColumnConstraints, Notion, _empty_constraints, _ratio_budget
from ._eldp import _SensitiveInputs, _group_matrix

INF = math.inf



# -----------------------------------------------------------------------------
# ULDP
# -----------------------------------------------------------------------------


def uldp_roles(Q: np.ndarray, sensitive: Sequence[int]) -> list[str]:
    """Role of each output column under ULDP: ``"zero"``, ``"invertible"`` or ``"protected"``.

    A column is invertible when it has exactly one non-zero entry, at a non-sensitive
    input (Murakami & Kawamoto, Def. 2); every other non-zero column must be protected;
    an all-zero column is never emitted and constrains nothing. The one home of this
    rule (:func:`mechopt.closed_forms.uldp_roles` validates and calls it); the exact
    verifier keeps its own copy on purpose (``mechopt._verify._uldp_protected``).

    Examples
    --------
    >>> uldp_roles(np.array([[0.5, 0.5, 0.0], [0.0, 1.0, 0.0]]), [1])
    ['invertible', 'protected', 'zero']
    """
    Q = np.asarray(Q, dtype=float)
    sens = set(int(s) for s in sensitive)
    nz_count = (Q > 0).sum(axis=0)
    first = np.argmax(Q > 0, axis=0)
    return ["zero" if n == 0 else "invertible" if n == 1 and int(x) not in sens else "protected"
            for n, x in zip(nz_count.tolist(), first.tolist())]


@dataclass(frozen=True)
class ULDP(_SensitiveInputs):
    """Utility-optimized LDP (Murakami & Kawamoto, Def. 2).

    Each output column is either *protected* (ε-LDP over all inputs) or *invertible*
    (exactly one non-zero entry, at a non-sensitive input). The union of the two is
    not convex: with labeled outputs, an output named like a non-sensitive input may
    be either, and the solver chooses each such role with a binary variable (a MILP);
    with free outputs the ray LP uses the rays of both kinds.

    Examples
    --------
    >>> import numpy as np
    >>> n = ULDP(1.0, sensitive=[0])
    >>> Q = np.array([[0.5, 0.5, 0.0], [0.4, 0.4, 0.2]])   # column 2 is invertible
    >>> round(n.achieved(Q), 4)                           # log(0.5 / 0.4)
    0.2231
    """

    name = "uldp"
    convex = False
    composition = CompositionRule("additive", "001 Prop. 1, sum of epsilons", "sensitive",
                                  "001 Prop. 1 composes reports with a common X_S")

    def groups(self, k: int):
        idx = np.arange(k)
        return ((idx, idx, self.epsilon),)

    def column_constraints(self, k: int) -> ColumnConstraints:
        """Constraints of a *protected* column (ε-LDP over all inputs)."""
        return replace(_empty_constraints(k), groups=self.groups(k), eldp=_group_matrix(k, self.groups(k)))

    def achieved(self, Q: np.ndarray) -> float:
        Q = np.asarray(Q, dtype=float)
        roles = uldp_roles(Q, self.sensitive)
        prot = [y for y, r in enumerate(roles) if r == "protected"]
        if not prot:
            return 0.0
        k = Q.shape[0]
        return _ratio_budget(Q[:, prot], np.arange(k), np.arange(k))

    def to_spec(self, inputs: Sequence[str]) -> dict:
        return {"notion": "uldp", "epsilon": self.epsilon, "sensitive": [inputs[x] for x in self.sensitive]}

    def protected_part(self) -> Notion:
        """A protected column meets ε-LDP over all inputs."""
        from ._eldp import LDP

        return LDP(self.epsilon)

    def invertible_inputs(self, k: int) -> list[int]:
        """An invertible column has one non-zero entry, at a non-sensitive input."""
        return [x for x in range(k) if x not in set(self.sensitive)]

    def validate_bound(self, k: int) -> None:
        if k > 1 and not self.sensitive:
            raise InputError("sensitive", "must name at least one sensitive input (else the notion constrains nothing)")

    def tie_groups(self, k: int, *, below: float) -> list[tuple[int, int]]:
        """At ε = 0 a sensitive input's row is one constant protected column c with sum 1; every
        other row matches c on the protected outputs and has no mass left for invertible ones."""
        tied = (self.epsilon <= 0.0) if below == 0 else (self.epsilon < below)
        return [(0, x) for x in range(1, k)] if tied and self.sensitive and k > 1 else []


