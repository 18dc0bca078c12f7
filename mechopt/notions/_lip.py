"""The LIP family (Jiang et al.): LIP, (ε, δ)-LIP and bounded-prior LIP."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from .._composition import CompositionRule
from .._errors import InputError
from .._validation import check_delta, check_number_or_inf, check_prior

from ._base import ColumnConstraints, Notion, _check_size

INF = math.inf



def _exact_sum_check(P: np.ndarray, eps: float, where: str, delta: float = 0.0) -> None:
    """The prior as written must leave LIP satisfiable: ``e^-ε - δ <= sum P <= e^ε + δ`` exactly.

    A prior is accepted when it sums to 1 within 1e-9, but LIP reads its decimals exactly:
    every output column needs ``P·q <= e^ε q[x] + δ`` for all x, so (weighting by P) a sum
    above ``e^ε`` leaves no channel at all when δ = 0 — at ε = 1e-10 a prior summing to
    1 + 5e-10 is infeasible. The constant channel is feasible exactly when the bounds
    above hold, so they are checked here, exactly.
    """
    from fractions import Fraction

    from .._exact import exp_bounds

    total = sum((Fraction(repr(float(v))) for v in P), Fraction(0))
    if total == 1:
        return
    e_lo, _ = exp_bounds(Fraction(repr(float(eps))))
    d = Fraction(repr(float(delta)))
    if not (1 / e_lo - d <= total <= e_lo + d):
        raise InputError(where, f"sums to {float(total)!r} as written; with epsilon = {eps!r} LIP is satisfiable only "
                         "if the sum is within a factor e^epsilon of 1: write the prior's decimals to sum to 1")


# -----------------------------------------------------------------------------
# LIP family
# -----------------------------------------------------------------------------


def _lip_budget(Q: np.ndarray, prior: np.ndarray, delta: float = 0.0) -> float:
    """Smallest ε with ``e^-ε q[x] - δ <= P·q <= e^ε q[x] + δ`` for all x and columns."""
    Q = np.asarray(Q, dtype=float)
    py = prior @ Q
    worst = 0.0
    # upper: q[x] <= e^ε (P·q + δ)  ->  ε >= log(q[x] / (P·q + δ))
    # lower: P·q <= e^ε q[x] + δ    ->  ε >= log((P·q - δ) / q[x])
    num1 = Q
    den1 = py[None, :] + delta
    with np.errstate(divide="ignore", invalid="ignore"):
        if np.any((num1 > 0) & (den1 <= 0)):
            return INF
        r1 = np.where(num1 > 0, np.log(num1 / np.where(den1 > 0, den1, 1)), -np.inf)
        num2 = np.broadcast_to(py[None, :] - delta, Q.shape)
        if np.any((num2 > 0) & (Q <= 0)):
            return INF
        r2 = np.where(num2 > 0, np.log(num2 / np.where(Q > 0, Q, 1)), -np.inf)
    if Q.size:
        worst = max(worst, float(np.max(r1)), float(np.max(r2)))
    return worst


#: two priors are the same prior when every entry agrees within this absolute tolerance:
#: the same numbers written twice (a LIP prior and the objective's prior copied from it or
#: from the same file), not two nearby priors. The LIP pricing and the closed forms stated
#: "for the LIP prior" need the objective's prior to be the notion's.
SAME_PRIOR_ATOL = 1e-15


def same_prior(p: Any, q: Any) -> bool:
    """Whether ``p`` and ``q`` are the same prior (entrywise within :data:`SAME_PRIOR_ATOL`).

    Examples
    --------
    >>> same_prior([0.25, 0.75], [0.25, 0.75]), same_prior([0.25, 0.75], [0.25 + 1e-9, 0.75 - 1e-9])
    (True, False)
    """
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    return p.shape == q.shape and bool(np.allclose(p, q, rtol=0, atol=SAME_PRIOR_ATOL))


@dataclass(frozen=True)
class LIP(Notion):
    """(ε, δ)-local information privacy for a known prior.

    ``e^-ε Q[x,y] - δ <= P·Q[:,y] <= e^ε Q[x,y] + δ`` for all x, y (Jiang et al.
    2022, eq. (4); δ = 0 is Jiang, Li, Tandon, Def. 3). With δ > 0 the condition is
    not a cone: only the labeled LP supports it.

    Examples
    --------
    >>> import numpy as np
    >>> n = LIP(1.0, prior=[0.5, 0.5])
    >>> Q = np.array([[0.6, 0.4], [0.4, 0.6]])
    >>> round(n.achieved(Q), 6)   # log(0.6 / 0.5)
    0.223144
    """

    epsilon: float = 1.0
    prior: Any = None
    delta: float = 0.0
    name = "lip"
    fields = ("epsilon", "prior", "delta")
    required = ("epsilon", "prior")
    per_input = (("prior", "entries"),)
    composition = CompositionRule("lip_prior", "003 Thm 4", "prior",
                                  "003 Thm 4 depends on the smallest prior probability")

    def __post_init__(self):
        self._check_epsilon()
        if self.prior is None:
            raise InputError("prior", "LIP needs a prior (a list of probabilities, one per input)")
        p = check_prior(self.prior, "prior")
        d = check_delta(self.delta, "delta")
        _exact_sum_check(p, self.epsilon, "prior", d)
        self._freeze("prior", p)
        object.__setattr__(self, "delta", d)

    @property
    def k(self) -> int:
        return len(self.prior)

    def bind(self, inputs: Sequence[str]) -> "LIP":
        _check_size(len(self.prior), inputs, "prior")
        return self

    @property
    def priors(self) -> np.ndarray:
        return np.asarray(self.prior)[None, :]

    def column_constraints(self, k: int) -> ColumnConstraints:
        return _lip_constraints(k, self.priors, self.epsilon, self.delta)

    def achieved(self, Q: np.ndarray) -> float:
        return _lip_budget(Q, np.asarray(self.prior), self.delta)

    def to_spec(self, inputs: Sequence[str]) -> dict:
        out = {"notion": "lip", "epsilon": self.epsilon, "prior": [float(v) for v in self.prior]}
        if self.delta:
            out["delta"] = self.delta
        return out

    def tie_groups(self, k: int, *, below: float) -> list[tuple[int, int]]:
        return _lip_ties(self.epsilon, self.delta, k, below)

    def ldp_equivalent(self, k: int) -> float:
        """ε-LDP implies this notion at its own ε."""
        return float(self.epsilon)

    def has_prior(self, prior: Any) -> bool:
        """Whether ``prior`` is this notion's prior (see :func:`same_prior`)."""
        return same_prior(self.prior, prior)

    def structured_rays(self, k: int) -> np.ndarray | None:
        """Vertices of the slice ``{P·q = 1, e^-ε <= q <= e^ε}``: all coordinates at a bound but one."""
        if self.delta > 0:
            return None
        from ._rays import lip_slice_vertices

        return lip_slice_vertices(self.prior, self.epsilon)

    def ray_count(self, k: int) -> int:
        return k * 2 ** (k - 1)

    def invertible_cap(self, k: int, owners: np.ndarray) -> np.ndarray | None:
        """Mass caps of columns ``a e_x`` under (ε, δ)-LIP (None when δ = 0: then only ``P[x] = 0`` allows them).

        Off ``x`` the column is 0, so ``P·q - δ <= e^ε q[x']`` reads ``P[x] a <= δ``, and
        ``q[x] <= e^ε (P·q + δ)`` reads ``a (1 - e^ε P[x]) <= e^ε δ``. Widened by 1e-12 for
        rounding (found by the fuzz: without the cap the labeled LP made an output
        invertible with more mass than δ allows, which no repair fixes).

        Examples
        --------
        >>> LIP(1.0, [0.5, 0.5], delta=0.1).invertible_cap(2, np.array([0, 1])).round(9).tolist()
        [0.2, 0.2]
        """
        if self.delta <= 0 or k < 2:
            return None
        P = np.asarray(self.prior, dtype=float)[owners]
        e = math.exp(min(float(self.epsilon), 700.0))
        with np.errstate(divide="ignore"):
            off = np.where(P > 0, self.delta / P, np.inf)
            at = np.where(e * P < 1, e * self.delta / (1 - e * P), np.inf)
        return np.minimum(off, at) * (1 + 1e-12)

    @property
    def is_cone(self) -> bool:
        return self.delta == 0


def lip_cone_rows(prior: np.ndarray, e: float) -> np.ndarray:
    """The ``2k`` rows of LIP on one column: ``A q <= 0`` iff ``e^-ε q[x] <= P·q <= e^ε q[x]`` for all x.

    Rows ``q[x] - e^ε P·q`` (x = 0..k-1), then ``P·q - e^ε q[x]``, with ``e = e^ε``
    (Jiang, Li, Tandon, Def. 3; δ = 0). The one home of these rows: the solver's column
    constraints, the closed forms' binary cones and the notion relations of 003 read it.

    Examples
    --------
    >>> lip_cone_rows(np.array([0.5, 0.5]), 2.0).tolist()
    [[0.0, -1.0], [-1.0, 0.0], [-1.5, 0.5], [0.5, -1.5]]
    """
    P = np.asarray(prior, dtype=float)
    eye = np.eye(P.size)
    return np.vstack([eye - e * P[None, :], P[None, :] - e * eye])


def _lip_constraints(k: int, priors: np.ndarray, eps: float, delta: float) -> ColumnConstraints:
    e = math.exp(eps)
    # q[x] - e^ε P·q <= e^ε δ ;  P·q - e^ε q[x] <= δ
    A = sp.csr_matrix(np.vstack([lip_cone_rows(P, e) for P in priors]))
    b = np.concatenate([np.full(k, e * delta), np.full(k, delta)] * len(priors))
    # the same rows with s_j = P_j·q: 2 non-zeros each instead of k + 1
    n = len(priors)
    eye = sp.identity(k, format="csr")
    A_q = sp.vstack([sp.vstack([eye, -e * eye]) for _ in range(n)]).tocsr()
    A_s = sp.csr_matrix((np.tile(np.concatenate([np.full(k, -e), np.ones(k)]), n),
                         (np.arange(2 * k * n), np.repeat(np.arange(n), 2 * k))), shape=(2 * k * n, n))
    return ColumnConstraints(k, A, b, factored=(A_q, A_s, np.asarray(priors, dtype=float)))


def box_prior_vertices(lower: np.ndarray, upper: np.ndarray, *, tol: float = 1e-12) -> np.ndarray:
    """Vertices of ``{P : lower <= P <= upper, sum P = 1}`` (sorted; empty when the set is).

    A vertex of a box cut by one hyperplane has at most one coordinate strictly
    between its bounds; we enumerate those (``k 2^(k-1)`` candidates).

    Examples
    --------
    >>> box_prior_vertices(np.array([0.2, 0.3]), np.array([0.7, 0.8]))
    array([[0.2, 0.8],
           [0.7, 0.3]])
    """
    k = len(lower)
    if k > 20:
        raise InputError("lower", f"box priors are supported up to 20 inputs, got {k}")
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    # every choice of bounds for the k - 1 other coordinates at once (a k = 20 box: 20 x 2^19
    # candidates in vectorised blocks; a Python loop over them took 54 s)
    bits = (np.arange(2 ** (k - 1))[:, None] >> np.arange(k - 1)) & 1
    verts = set()
    for j in range(k):
        others = np.array([i for i in range(k) if i != j], dtype=int)
        P = np.empty((len(bits), k))
        P[:, others] = np.where(bits == 1, upper[others], lower[others])
        P[:, j] = 1.0 - P[:, others].sum(axis=1)
        keep = (lower[j] - tol <= P[:, j]) & (P[:, j] <= upper[j] + tol)
        P = P[keep]
        P[:, j] = np.clip(P[:, j], lower[j], upper[j])
        verts.update(map(tuple, np.round(P, 15)))
    return np.array(sorted(verts))


@dataclass(frozen=True)
class BPLIP(Notion):
    """Bounded-prior LIP (Jiang et al. 2022, Def. 6): ε-LIP for every prior in a set.

    The LIP condition is linear in the prior, so it holds on a convex set iff it holds
    at the set's vertices. Give ``priors`` (a finite list) or a box ``lower``/``upper``
    (intersected with the simplex; its vertices are enumerated).

    Examples
    --------
    >>> n = BPLIP(1.0, lower=[0.2, 0.3], upper=[0.7, 0.8])
    >>> n.priors.shape
    (2, 2)
    """

    epsilon: float = 1.0
    priors: Any = None
    lower: Any = None
    upper: Any = None
    name = "bp_lip"
    fields = ("epsilon", "priors", "lower", "upper")
    required = ("epsilon",)
    per_input = (("lower", "entries"), ("upper", "entries"))
    composition = CompositionRule("lip_prior_set", "003 Cor. 4", "priors", "003 Cor. 4")

    def __post_init__(self):
        self._check_epsilon()
        if self.priors is not None:
            if self.lower is not None or self.upper is not None:
                raise InputError("priors", "give either 'priors' or 'lower'/'upper', not both")
            if not isinstance(self.priors, (list, tuple, np.ndarray)) or len(self.priors) == 0:
                raise InputError("priors", f"must be a non-empty list of priors, got {self.priors!r}")
            ps = [check_prior(p, f"priors[{i}]") for i, p in enumerate(self.priors)]
            if len({len(p) for p in ps}) != 1:
                raise InputError("priors", "all priors must have the same length")
            P = np.array(ps)
            for i, p in enumerate(ps):
                _exact_sum_check(p, self.epsilon, f"priors[{i}]")
        else:
            if self.lower is None or self.upper is None:
                raise InputError("priors", "BP-LIP needs 'priors' or both 'lower' and 'upper'")
            for name, bound in (("lower", self.lower), ("upper", self.upper)):
                if isinstance(bound, (str, bytes, dict)) or not isinstance(bound, (list, tuple, np.ndarray)):
                    raise InputError(name, f"must be a list of numbers, one per input, got {bound!r}")
            lo = np.array([check_number_or_inf(v, f"lower[{i}]") for i, v in enumerate(self.lower)])
            hi = np.array([check_number_or_inf(v, f"upper[{i}]") for i, v in enumerate(self.upper)])
            if len(lo) != len(hi):
                raise InputError("upper", f"must have as many entries as 'lower' ({len(lo)}), got {len(hi)}")
            for i in range(len(lo)):
                if not (0 <= lo[i] <= hi[i] <= 1):
                    raise InputError(f"lower[{i}]", f"must satisfy 0 <= lower <= upper <= 1, got lower={float(lo[i])!r}, "
                                     f"upper={float(hi[i])!r}")
            if lo.sum() > 1 + 1e-12 or hi.sum() < 1 - 1e-12:
                raise InputError("lower", f"the box lower <= P <= upper contains no probability vector "
                                 f"(sum(lower) = {float(lo.sum())!r}, sum(upper) = {float(hi.sum())!r})")
            object.__setattr__(self, "lower", lo)
            object.__setattr__(self, "upper", hi)
            P = box_prior_vertices(lo, hi)
        self._freeze("priors", P)

    @property
    def k(self) -> int:
        return self.priors.shape[1]

    def bind(self, inputs: Sequence[str]) -> "BPLIP":
        _check_size(self.k, inputs, "priors")
        return self

    def column_constraints(self, k: int) -> ColumnConstraints:
        return _lip_constraints(k, self.priors, self.epsilon, 0.0)

    def achieved(self, Q: np.ndarray) -> float:
        return max(_lip_budget(Q, P) for P in self.priors)

    def to_spec(self, inputs: Sequence[str]) -> dict:
        if self.lower is not None:
            return {"notion": "bp_lip", "epsilon": self.epsilon,
                    "lower": [float(v) for v in self.lower], "upper": [float(v) for v in self.upper]}
        return {"notion": "bp_lip", "epsilon": self.epsilon, "priors": [[float(v) for v in P] for P in self.priors]}

    def tie_groups(self, k: int, *, below: float) -> list[tuple[int, int]]:
        return _lip_ties(self.epsilon, 0.0, k, below)

    def ldp_equivalent(self, k: int) -> float:
        """ε-LDP implies this notion at its own ε."""
        return float(self.epsilon)

    def ray_count(self, k: int) -> int | None:
        # a box's rays come from chains of 3 input sets (solvers/free/_exact_dd.py, measured
        # 0.2-0.45 of 3^k); a list of priors goes through the double description
        return 3**k // 2 if self.lower is not None else None




def _lip_ties(eps: float, delta: float, k: int, below: float) -> list[tuple[int, int]]:
    """At ε = 0 (δ = 0), ``q[x] <= P·q <= q[x]`` for every x: every row equals ``P·Q``."""
    tied = (eps <= 0.0) if below == 0 else (eps < below)
    return [(0, x) for x in range(1, k)] if tied and delta == 0 else []
