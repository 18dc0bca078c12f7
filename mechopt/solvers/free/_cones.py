"""The cones of the free-output column generation as priced pieces (:func:`decompose`).

Covered: LDP and WC-LIP (with any other E-LDP-type notions whose cone contains it), block
LDP (one piece per block, singletons as fixed unit rays), high-low LDP (staircases on the
sensitive inputs plus the unit rays of the others), ULDP (the LDP staircases plus the
invertible unit rays), and LIP with ``delta = 0`` when the objective's prior is the LIP
prior. Anything else returns ``None`` (the caller enumerates rays).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...notions import LDP, LIP, ULDP, BlockLDP, HighLowLDP, Notion
from ..._problem import Objective
from ..labeled._structure import _closure
from ._pricing import priced
from ._pricing_base import LipSlice, Staircases


@dataclass
class ConeSet:
    """A cone as priced pieces plus explicit rays.

    Attributes
    ----------
    pieces : list of Staircases or LipSlice
    fixed : ndarray (k, f)
        Rays always in the master (unit vectors of ULDP, high-low, singleton blocks).
    invertible : ndarray of bool (f,)
        Which fixed rays are ULDP invertible columns.
    name : str
        A short description (for stats and messages).
    """

    pieces: list
    fixed: np.ndarray
    invertible: np.ndarray
    name: str


def _units(k: int, xs) -> np.ndarray:
    xs = list(xs)
    V = np.zeros((k, len(xs)))
    V[xs, np.arange(len(xs))] = 1.0
    return V


def _collapse(cs: ConeSet | None, k: int) -> ConeSet | None:
    """At ε = 0 a piece has one ray, ``1_U`` (a LIP slice: the constant): it joins the fixed rays."""
    if cs is None:
        return None
    flat = [p for p in cs.pieces if p.eps == 0]
    if not flat:
        return cs
    V = np.zeros((k, len(flat)))
    for j, p in enumerate(flat):
        V[np.asarray(p.support) if isinstance(p, Staircases) else np.arange(k), j] = 1.0
    return ConeSet([p for p in cs.pieces if p.eps != 0],
                   np.hstack([cs.fixed, V]), np.concatenate([cs.invertible, np.zeros(len(flat), bool)]), cs.name)


def decompose(notions: list[Notion], obj: Objective, k: int) -> ConeSet | None:
    """The problem's cone as pieces with exact pricers, or ``None`` if not covered.

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt.objectives import Objective
    >>> cs = decompose([BlockLDP(1.0, blocks=((0, 1), (2,)))], Objective("mutual_information", np.full(3, 1 / 3)), 3)
    >>> cs.name, len(cs.pieces), cs.fixed.shape
    ('block', 1, (3, 1))
    """
    return _collapse(_decompose(notions, obj, k), k)


def _decompose(notions: list[Notion], obj: Objective, k: int) -> ConeSet | None:
    """See :func:`decompose`."""
    if not priced(obj):
        return None
    none = np.zeros((k, 0)), np.zeros(0, bool)
    everyone = np.arange(k)
    if len(notions) == 1 and isinstance(notions[0], ULDP):
        u = notions[0]
        others = [x for x in range(k) if x not in set(u.sensitive)]
        return ConeSet([Staircases(everyone, everyone, u.epsilon)], _units(k, others), np.ones(len(others), bool),
                       u.name)
    if len(notions) == 1 and isinstance(notions[0], LIP):
        n = notions[0]
        if n.delta != 0 or not n.has_prior(obj.prior):
            return None
        return ConeSet([LipSlice(np.asarray(n.prior, dtype=float), n.epsilon)], *none, n.name)
    if any(isinstance(n, ULDP) for n in notions):
        return None
    Es = [n.eldp_matrix(k) for n in notions]
    if any(E is None for E in Es):
        return None
    # one notion whose cone lies inside all the others' decides the cone
    for n, E in zip(notions, Es):
        D = _closure(E)
        if not all(np.all(D <= E2 + 1e-15) for E2 in Es):
            continue
        if isinstance(n, LDP):  # also WC-LIP
            return ConeSet([Staircases(everyone, everyone, n.epsilon)], *none, LDP.name)
        if isinstance(n, BlockLDP):
            pieces = [Staircases(np.array(b), np.array(b), n.epsilon) for b in n.blocks if len(b) > 1]
            singles = [b[0] for b in n.blocks if len(b) == 1]
            return ConeSet(pieces, _units(k, singles), np.zeros(len(singles), bool), n.name)
        if isinstance(n, HighLowLDP):
            A = np.array(sorted(set(n.sensitive)))
            rest = [x for x in range(k) if x not in set(A.tolist())]
            if not rest:
                return ConeSet([Staircases(everyone, everyone, n.epsilon)], *none, LDP.name)
            return ConeSet([Staircases(everyone, A, n.epsilon)], _units(k, rest), np.zeros(len(rest), bool),
                           n.name)
    return None




# -- the restricted master ---------------------------------------------------------------------
