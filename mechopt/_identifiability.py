"""Can a channel's reports identify the input distribution?

With ``λ = Qᵀ p`` the distribution of one report, the input distribution ``p`` is
identifiable from (infinitely many) reports iff ``p ↦ Qᵀ p`` is injective on the
simplex, i.e. iff ``rank Q = k``: if ``Qᵀ v = 0`` then ``Σ v = (Q 1)ᵀ v = 1ᵀ (Qᵀ v) = 0``
because rows sum to 1, so every null direction lies in the simplex's tangent space, and
``p`` and ``p + t v`` give the same reports. A design for ``histogram_mse``
or ``mutual_information`` often has rank < k — the Bayes-optimal channel may merge
inputs — and then no estimator can tell how the merged mass splits; only a prior can
(:func:`mechopt.runtime.estimate` with ``method="mmse"``).

The rank is numerical: singular values below ``rtol · σ_max`` count as zero (a channel
that close to singular makes every unbiased estimate useless anyway: its variance grows
like ``1 / σ_min²``).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ._errors import MechoptError

__all__ = ["Identifiability", "IdentifiabilityWarning", "NotIdentifiableError", "group_label", "identifiability",
           "summarize_labels"]

#: singular values below this fraction of the largest count as zero
RANK_RTOL = 1e-9
#: rows closer than this (max abs difference) are reported as merged inputs
MERGE_ATOL = 1e-12


#: a message lists at most this many labels; longer lists are summarised (:func:`summarize_labels`)
SHOWN_LABELS = 3
#: merged groups described one by one up to this many labels in all; beyond, one summary
LISTED_LABELS = 8


def summarize_labels(labels: Sequence[str], shown: int = SHOWN_LABELS) -> str:
    """Quoted labels, the first ``shown`` and a count when there are more.

    Examples
    --------
    >>> summarize_labels(["a", "b"])
    "'a', 'b'"
    >>> summarize_labels([f"p{i}" for i in range(915)])
    "'p0', 'p1', 'p2', … (915 in all)"
    """
    labels = list(labels)
    if len(labels) <= shown + 1:
        return ", ".join(repr(x) for x in labels)
    return ", ".join(repr(x) for x in labels[:shown]) + f", … ({len(labels)} in all)"


def group_label(labels: Sequence[str]) -> str:
    """The name of a group of merged inputs in an estimate: ``a+b+c``, or ``a+b+…+z (80 inputs)``.

    Examples
    --------
    >>> group_label(["home"]), group_label(["a", "b"]), group_label([f"p{i}" for i in range(80)])
    ('home', 'a+b', 'p0+p1+…+p79 (80 inputs)')
    """
    labels = list(labels)
    if len(labels) <= SHOWN_LABELS:
        return "+".join(labels)
    return f"{labels[0]}+{labels[1]}+…+{labels[-1]} ({len(labels)} inputs)"


class IdentifiabilityWarning(UserWarning):
    """A channel cannot identify the input distribution from its reports (``solve``)."""


class NotIdentifiableError(MechoptError):
    """An estimate was asked that the reports cannot determine (CLI exit code 3)."""

    exit_code = 3


@dataclass(frozen=True)
class Identifiability:
    """Whether ``Q``'s reports identify the input distribution, and if not, why.

    Returned by :func:`identifiability`.

    Attributes
    ----------
    k : int
        Number of inputs.
    rank : int
        Numerical rank of ``Q``.
    merged : tuple of tuple of int
        Groups of inputs (indices) whose rows are identical: their mass can never be
        split from reports.
    null_direction : numpy.ndarray or None, shape (k,)
        A unit vector ``v`` with ``Σ v = 0`` and ``Qᵀ v ≈ 0`` (``p`` and ``p + t v`` give
        the same reports); ``None`` when identifiable.
    group_masses : bool
        Whether the reports identify the total masses of some grouping of the inputs
        short of all of them (groups of identical rows whose channel has full rank, or the
        components of :func:`null_components`): what ``mechopt estimate`` then estimates.
        True when identifiable.
    """

    k: int
    rank: int
    merged: tuple[tuple[int, ...], ...]
    null_direction: np.ndarray | None
    group_masses: bool = True

    def next_step(self) -> str:
        """What ``mechopt estimate`` does with this channel (empty when identifiable)."""
        if self.identifiable:
            return ""
        if self.group_masses:
            return "'mechopt estimate' gives each merged group's total mass; --method mmse (a prior) splits it"
        return "'mechopt estimate' needs --method mmse (a prior)"

    @property
    def identifiable(self) -> bool:
        return self.rank == self.k

    def groups(self) -> tuple[tuple[int, ...], ...]:
        """Every input's group, in input order: the merged groups and the other inputs alone.

        Examples
        --------
        >>> identifiability([[0.5, 0.5], [0.2, 0.8], [0.5, 0.5]]).groups()
        ((0, 2), (1,))
        """
        of = {i: g for g in self.merged for i in g}
        out, seen = [], set()
        for i in range(self.k):
            g = of.get(i, (i,))
            if g not in seen:
                seen.add(g)
                out.append(g)
        return tuple(out)

    def describe(self, inputs: Sequence[str] | None = None) -> str:
        """One sentence: why the distribution is not identifiable (empty when it is)."""
        if self.identifiable:
            return ""
        names = list(inputs) if inputs is not None else [str(i) for i in range(self.k)]
        parts = []
        total = sum(len(g) for g in self.merged)
        if total > LISTED_LABELS:  # one summary, never a line of hundreds of labels
            first = [names[i] for i in self.merged[0]]
            parts.append(f"{total} inputs in {len(self.merged)} group{'s' if len(self.merged) > 1 else ''} have "
                         f"identical rows (first group: {summarize_labels(first)})")
        for group in self.merged if total <= LISTED_LABELS else ():
            labels = [names[i] for i in group]
            parts.append(f"inputs {', '.join(repr(x) for x in labels)} have identical rows")
        if not parts:
            v = self.null_direction
            top = np.argsort(-np.abs(v))[: min(4, self.k)] if v is not None else []
            parts.append("the reports cannot tell apart shifts of mass between "
                         + ", ".join(repr(names[int(i)]) for i in top))
        return (f"{'; '.join(parts)} (rank {self.rank} < {self.k} inputs): no estimator can split "
                "that mass from the reports")

    def to_dict(self, inputs: Sequence[str] | None = None) -> dict:
        """The certificate entry: ``identifiable``, ``rank``, ``merged_inputs``."""
        names = list(inputs) if inputs is not None else [str(i) for i in range(self.k)]
        return {"identifiable": self.identifiable, "rank": self.rank,
                "merged_inputs": [[names[i] for i in g] for g in self.merged]}


def identifiability(Q: np.ndarray, *, rtol: float = RANK_RTOL) -> Identifiability:
    """Decide whether a channel's reports identify the input distribution.

    Parameters
    ----------
    Q : array_like, shape (k, m)
        The channel (rows sum to 1).
    rtol : float, keyword-only
        Singular values below ``rtol · σ_max`` count as zero.

    Returns
    -------
    Identifiability

    Examples
    --------
    >>> identifiability([[0.75, 0.25], [0.25, 0.75]]).identifiable
    True
    >>> r = identifiability([[0.5, 0.5], [0.5, 0.5], [0.2, 0.8]])
    >>> r.identifiable, r.rank, r.merged
    (False, 2, ((0, 1),))
    >>> r.describe(["a", "b", "c"])
    "inputs 'a', 'b' have identical rows (rank 2 < 3 inputs): no estimator can split that mass from the reports"
    """
    Q = np.ascontiguousarray(Q, dtype=float)
    # the last answer is kept: a solve decides it, then the command line says it (a
    # 2 000 x 979 channel: 3.4 s of singular values each time)
    key = (Q.shape, rtol, hashlib.sha256(Q.tobytes()).hexdigest())
    if key not in _LAST:
        _LAST.clear()
        _LAST[key] = _identifiability(Q, rtol)
    return _LAST[key]


#: the last channel :func:`identifiability` decided, and its answer
_LAST: dict = {}


def _identifiability(Q: np.ndarray, rtol: float) -> Identifiability:
    k = Q.shape[0]
    groups = merged_rows(Q)
    # identical rows add no rank: one row per group, and one singular value decomposition
    # of those rows answers the rest (the rank, a null direction, the components; three
    # decompositions took 58 s of the 62 s after the solve of a 64×64 grid)
    keep = np.ones(k, dtype=bool)
    for g in groups:
        keep[list(g[1:])] = False
    s, vt = _right_svd(Q[keep].T)
    rank = _rank(s, rtol)
    if rank >= k:
        return Identifiability(k, k, (), None)
    if groups:  # two identical rows: their difference is a null direction
        v = np.zeros(k)
        v[list(groups[0][:2])] = (math.sqrt(0.5), -math.sqrt(0.5))
    else:  # Qᵀ = U S Vᵀ: the null space of Qᵀ is spanned by the last rows of Vᵀ
        v = vt[-1] / np.linalg.norm(vt[-1])
    # the groups' masses are identifiable when the kept rows have full rank, or when the
    # null space splits them into more than one component
    masses = bool(groups) and rank == int(keep.sum())
    masses = masses or int(_components(vt[rank:].T).max()) > 0
    return Identifiability(k, rank, tuple(groups), v, masses)


def _right_svd(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The singular values and the square right factor ``Vᵀ`` of ``X`` (``m × r``), without
    the ``m × m`` left factor when ``m > 2 r`` (a QR factor ``R`` first: same values, same ``Vᵀ``).

    >>> s, vt = _right_svd(np.array([[3.0, 0.0], [0.0, 4.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]))
    >>> s.tolist(), np.abs(vt).tolist()
    ([4.0, 3.0], [[0.0, 1.0], [1.0, 0.0]])
    """
    X = np.asarray(X, dtype=float)
    if X.shape[0] > 2 * X.shape[1]:
        X = np.linalg.qr(X, mode="r")
    _, s, vt = np.linalg.svd(X, full_matrices=True)
    return s, vt


def _rank(s: np.ndarray, rtol: float) -> int:
    """Singular values above ``rtol`` times the largest."""
    return int(np.sum(s > rtol * s[0])) if s.size else 0


def _components(N: np.ndarray) -> np.ndarray:
    """Rows joined when the projector ``N Nᵀ`` onto the null space (orthonormal basis ``N``) joins them."""
    from scipy.sparse.csgraph import connected_components

    return connected_components(np.abs(N @ N.T) > JOIN_ATOL, directed=False)[1]


def merged_rows(Q: np.ndarray, atol: float = MERGE_ATOL) -> list[tuple[int, ...]]:
    """Groups of rows within ``atol`` (max abs difference) of their group's first row, in input order.

    Rows are sorted by a random projection ``h = Q r``: rows within ``atol`` of each
    other have ``|h_i - h_j| <= atol ||r||_1``, so only those neighbours are compared
    (``O(k m + k log k)`` and the candidates, instead of ``O(k² m)``: a constant channel
    on 4 096 places took about a minute the old way).

    Examples
    --------
    >>> merged_rows(np.array([[0.5, 0.5], [0.2, 0.8], [0.5, 0.5], [0.2, 0.8 + 1e-13], [0.1, 0.9]]))
    [(0, 2), (1, 3)]
    """
    Q = np.asarray(Q, dtype=float)
    k = Q.shape[0]
    r = np.random.default_rng(0).uniform(0.5, 1.0, Q.shape[1])
    h = Q @ r
    order = np.argsort(h, kind="stable")
    hs = h[order]
    reach = atol * float(r.sum()) * (1 + 1e-9) + 2 * Q.shape[1] * np.finfo(float).eps * (np.abs(h) + 1.0)
    lo = np.searchsorted(hs, h - reach, side="left")
    hi = np.searchsorted(hs, h + reach, side="right")
    groups: list[tuple[int, ...]] = []
    seen = np.zeros(k, dtype=bool)
    for i in range(k):
        if seen[i] or hi[i] - lo[i] < 2:
            continue
        cand = order[lo[i]:hi[i]]
        cand = np.sort(cand[(cand >= i) & ~seen[cand]])
        same = cand[np.max(np.abs(Q[cand] - Q[i]), axis=1) <= atol]
        seen[same] = True
        if len(same) > 1:
            groups.append(tuple(int(j) for j in same))
    return groups


#: projector entries above this join two rows into one component
JOIN_ATOL = 1e-9


def null_components(Q: np.ndarray, *, rtol: float = RANK_RTOL) -> np.ndarray:
    """The component of each row: rows joined when the projector ``Π`` onto ``null(Qᵀ)`` has ``Π_ij ≠ 0``.

    ``Π`` is block diagonal over the components, so every null vector splits into null
    vectors supported on one component each; each sums to 0 (rows sum to 1), so the
    total mass of each component is identifiable (:mod:`mechopt.runtime._groups`).

    Examples
    --------
    >>> null_components(np.array([[0.6, 0.4, 0.0], [0.0, 0.4, 0.6], [0.3, 0.4, 0.3], [0.0, 0.0, 1.0]])).tolist()
    [0, 0, 0, 1]
    """
    s, vt = _right_svd(np.asarray(Q, dtype=float).T)
    return _components(vt[_rank(s, rtol):].T)
