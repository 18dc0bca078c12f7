"""The notion interface, shared helpers and the registry of notion names."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from .._composition import CompositionRule
from .._errors import InputError
from .._validation import check_epsilon

INF = math.inf


def _spec_number(v: float) -> float | str:
    return "inf" if math.isinf(v) else float(v)


@dataclass(frozen=True)
class ColumnConstraints:
    """Linear conditions on one column ``q`` (length k) of a channel.

    ``A @ q <= b`` row-wise, plus, for each group ``(upper, lower, eps)``,
    ``max(q[upper]) <= exp(eps) * min(q[lower])``. ``fixed_zero`` lists inputs whose
    entry must be 0 (used by nothing here but by ULDP invertible columns).
    """

    k: int
    A: sp.csr_matrix
    b: np.ndarray
    groups: tuple[tuple[np.ndarray, np.ndarray, float], ...] = ()
    eldp: np.ndarray | None = None  # k x k matrix of pairwise budgets (inf = none)
    # optional sparse factorisation of dense rows: A == A_q + A_s @ W, with the
    # linear forms s = W q (one per prior for LIP) as auxiliary LP variables
    factored: tuple[sp.csr_matrix, sp.csr_matrix, np.ndarray] | None = None

    @property
    def homogeneous(self) -> bool:
        return not np.any(self.b)


def _empty_constraints(k: int) -> ColumnConstraints:
    return ColumnConstraints(k, sp.csr_matrix((0, k)), np.zeros(0))


def _eldp_rows(E: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """Rows ``q[x] - e^{E[x,x']} q[x'] <= 0`` for every finite off-diagonal pair."""
    k = E.shape[0]
    xs, xps = np.nonzero(np.isfinite(E) & ~np.eye(k, dtype=bool))
    n = len(xs)
    rows = np.repeat(np.arange(n), 2)
    cols = np.column_stack([xs, xps]).ravel()
    with np.errstate(over="ignore"):  # budgets beyond 709: e^E = inf, a row that never binds
        vals = np.column_stack([np.ones(n), -np.exp(E[xs, xps])]).ravel()
    return sp.csr_matrix((vals, (rows, cols)), shape=(n, k)), np.zeros(n)


class Notion(ABC):
    """Base class of the privacy notions (docs/model.md): every fact of a notion lives on it.

    A notion class declares its registry ``name``, its problem-file ``fields`` and the
    ``required`` ones (see :mod:`mechopt.notions._registry`) and how its reports compose
    (``composition``: a :class:`~mechopt._composition.CompositionRule` — budgets that add
    up, 003 Thm 4 / Cor. 4 for the LIP notions — or ``None`` when no rule is known; the
    privacy budget, :class:`mechopt.runtime.PrivacyBudget`, reads it). Its instances give the column constraints (built
    once per ``k``), the E-matrix view, the zero-budget ties, the relaxation at a budget
    cap, a structured ray enumerator and the achieved budget. The exact check is not
    here: the checker registered with the class (``register_notion(cls, checker=...)``)
    decides it, sharing no code with constraint building.
    """

    name: str = ""
    #: problem-file fields (besides ``notion``) and those that must be given
    fields: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    #: how reports compose under this notion (the privacy budget, mechopt.runtime)
    composition: CompositionRule | None = None
    #: the notion constrains each column by a convex cone (False only for ULDP)
    convex: bool = True
    #: problem-file fields with one entry per input, checked against the number of inputs
    #: before the notion is built: ``(field, "rows")`` for a k x k matrix, ``(field,
    #: "entries")`` for a vector
    per_input: tuple[tuple[str, str], ...] = ()

    def _freeze(self, field: str, array: np.ndarray) -> None:
        """Store ``array`` read-only as ``field`` (notions are frozen dataclasses)."""
        array.setflags(write=False)
        object.__setattr__(self, field, array)

    def _check_epsilon(self) -> None:
        """Validate the budget field ``epsilon`` in place (a notion's ``__post_init__`` calls it)."""
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, "epsilon"))

    # -- binding to labels -------------------------------------------------------
    def bind(self, inputs: Sequence[str]) -> "Notion":
        """Return a copy whose label references are resolved to indices of ``inputs``."""
        return self

    def validate_bound(self, k: int) -> None:  # noqa: B027 - optional hook, nothing to check by default
        """Rules that need the inputs (called by the parser after :meth:`bind`)."""

    @property
    def k(self) -> int | None:
        return None

    # -- the cone --------------------------------------------------------------
    @abstractmethod
    def column_constraints(self, k: int) -> ColumnConstraints:
        """Linear conditions on one column of a channel (see :class:`ColumnConstraints`)."""

    def eldp_matrix(self, k: int) -> np.ndarray | None:
        """The pairwise budget matrix if the notion is an E-LDP notion, else None."""
        return None

    def tie_groups(self, k: int, *, below: float) -> list[tuple[int, int]]:
        """Pairs of inputs whose rows every channel must have equal (budgets ``<= below``; 0: exact ties).

        A budget ``q[x] <= e^0 q[x']`` on every column, with both rows summing to 1,
        forces ``Q[x] = Q[x']``. The default reads the E-matrix view.
        """
        E = self.eldp_matrix(k)
        if E is None:
            return []
        small = (E <= below) if below == 0 else (E < below)
        xs, xps = np.nonzero(small & ~np.eye(k, dtype=bool))
        return list(zip(xs.tolist(), xps.tolist()))

    def relaxed(self, k: int, cap: float) -> "Notion | None":
        """The notion with every budget above ``cap`` left out (a relaxation); None if nothing is left.

        The default drops the whole notion when its ``epsilon`` exceeds the cap.
        """
        eps = getattr(self, "epsilon", None)
        if eps is not None and eps > cap:
            return None
        return self

    def ldp_equivalent(self, k: int) -> float | None:
        """The largest ε such that every ε-LDP channel meets this notion (None when unknown).

        The standard LDP mechanisms at this budget are the baselines of a problem
        (:func:`mechopt.baselines`). The default reads the E-matrix view: ε-LDP implies
        E-LDP iff ε is at most every finite off-diagonal budget (``inf`` when none is).
        """
        E = self.eldp_matrix(k)
        if E is None:
            return None
        off = np.asarray(E, dtype=float)[~np.eye(k, dtype=bool)]
        finite = off[np.isfinite(off)]
        return float(finite.min()) if len(finite) else INF

    def structured_rays(self, k: int) -> np.ndarray | None:
        """The extreme rays of this notion's cone alone, when a structured enumerator knows them (else None)."""
        return None

    def ray_count(self, k: int) -> int | None:
        """How many rays :meth:`structured_rays` lists (None when unknown)."""
        return None

    @property
    def is_cone(self) -> bool:
        """Whether each column's condition is a cone (False for (ε, δ)-LIP with δ > 0)."""
        return True

    def protected_part(self) -> "Notion":
        """The convex condition every non-invertible column meets (the notion itself, but for ULDP)."""
        return self

    def invertible_inputs(self, k: int) -> list[int] | None:
        """Inputs at which a column may be invertible (a unit vector), or None (every column is constrained)."""
        return None

    # -- measuring -------------------------------------------------------------
    def invertible_cap(self, k: int, owners: np.ndarray) -> np.ndarray | None:
        """Largest mass of a column ``a e_x`` (0 off ``x``; ULDP's invertible role) this notion allows, per owner.

        None: no cap below 1 (cones allow any multiple of an allowed column). The labeled
        LP caps invertible masses by it; a valid cap keeps the LP a relaxation.
        """
        return None

    @abstractmethod
    def achieved(self, Q: np.ndarray) -> float:
        """Smallest budget (same units as ``epsilon``) that ``Q`` satisfies; inf if none."""

    @property
    def budget(self) -> float:
        """The budget claimed (``achieved <= budget`` means satisfied)."""
        return float(self.epsilon)  # type: ignore[attr-defined]

    @abstractmethod
    def to_spec(self, inputs: Sequence[str]) -> dict:
        """The notion as a problem-file entry (docs/formats.md), labels from ``inputs``."""

    def check(self, Q: Any, inputs: Sequence[str] | None = None):
        """Exact check of this notion on a matrix; see :func:`mechopt.verify`."""
        from .._verify import check_notion

        return check_notion(Q, self)


def _check_size(size: int, inputs: Sequence[str], field: str,
                rule: str = "must have one entry per input ({n}), got {size}") -> None:
    """Refuse a notion whose ``field`` has ``size`` entries for ``len(inputs)`` inputs."""
    if size != len(inputs):
        raise InputError(field, rule.format(n=len(inputs), size=size))


def _ratio_budget(Q: np.ndarray, upper: np.ndarray, lower: np.ndarray) -> float:
    """max over columns of log(max q[upper] / min q[lower])."""
    Q = np.asarray(Q, dtype=float)
    if len(upper) == 0 or len(lower) == 0:
        return 0.0
    hi = Q[upper].max(axis=0)
    lo = Q[lower].min(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(hi > 0, np.log(np.where(lo > 0, hi / np.where(lo > 0, lo, 1), np.inf)), -np.inf)
    return max(0.0, float(np.max(r))) if r.size else 0.0


def _eldp_scale(Q: np.ndarray, E: np.ndarray) -> float:
    """Smallest ``s`` such that ``Q`` satisfies ``s * E``-LDP (``inf`` if none).

    For a pair ``(x, x')`` the worst column ratio is at most ``max q[x] / min q[x']``;
    pairs are examined in decreasing order of that bound (scaled by ``1/E``), and the
    scan stops once no remaining pair's bound can beat the worst ratio found. A channel
    well inside its budgets (k-RR at k = 1000) is settled by the first pairs.
    """
    Q = np.asarray(Q, dtype=float)
    k, m = Q.shape
    fin = np.isfinite(E) & ~np.eye(k, dtype=bool)
    xs, xps = np.nonzero(fin)
    if not len(xs):
        return 0.0
    e = E[xs, xps]
    row_max = Q.max(axis=1)
    row_min = Q.min(axis=1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        bound_ratio = np.where(row_max[xs] > 0, row_max[xs] / row_min[xps], 0.0)
        lb = np.log(bound_ratio)
        bound = np.where(lb > 0, np.where(e > 0, lb / np.where(e > 0, e, 1.0), INF), 0.0)
    order = np.argsort(-bound, kind="stable")
    worst = 0.0
    chunk = max(1, 2_000_000 // max(m, 1))
    for start in range(0, len(order), chunk):
        sel = order[start:start + chunk]
        if bound[sel[0]] <= worst:
            break
        a = Q[xs[sel]]
        b = Q[xps[sel]]
        pos = a > 0
        if np.any(pos & (b <= 0)):
            return INF
        # the log of each pair's largest ratio (log is monotone): one log a pair, not a
        # pair and column (1 024 places and outputs, a channel near its budgets: 4.5 ->
        # 3.0 s). No column has a > 0 = b here; a <= 0 gives no positive ratio.
        ratio = np.divide(a, b, out=np.zeros_like(a), where=b > 0).max(axis=1)
        with np.errstate(divide="ignore"):
            lr = np.where(ratio > 0, np.log(ratio), -np.inf)
        bad = lr > 0
        if not bad.any():
            continue
        ee = e[sel][bad]
        if np.any(ee == 0):
            return INF
        worst = max(worst, float(np.max(lr[bad] / ee)))
    return worst


