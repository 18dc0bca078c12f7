"""Independent references for the fuzzer (benchmarks/fuzz.py): they share no code with mechopt's solvers.

Everything here is built from the *problem dict* (docs/formats.md), read again by this
module, never from mechopt's parsed notions, constraint builders, reductions, ray
enumerators or repair. The only mechopt function used is the exact verifier
(:func:`mechopt.verify`), to decide whether a channel found here is a genuine, feasible
channel before it may accuse the solver.

* :func:`read` — the problem as plain arrays: the pairwise budget matrix of the E-LDP family
  (E-LDP, LDP, WC-LIP, block, high-low, metric through this module's own Floyd–Warshall),
  the LIP priors (BP-LIP boxes by this module's own exact vertex enumeration), ULDP's
  budget and sensitive set, the objective.
* :func:`objective_value` — every objective of docs/model.md written out from its
  definition.
* :func:`labeled_reference` — the labeled LP with **every pairwise constraint written out**
  (LIP rows dense, no clique groups, no pruned pairs, no components, no symmetry),
  solved by ``scipy.optimize.linprog`` (HiGHS); for ULDP, a brute force over every role
  assignment (each output protected, or invertible at any one non-sensitive input), or a
  big-M MILP when there are too many assignments.
* :func:`free_witnesses` — channels for free outputs: the constant channel, k-RR and
  utility-optimised RR (Murakami & Kawamoto, eq. (9)) at the largest parameter that
  verifies, and local optima of the objective over the dense polytope of ``k``-output
  channels (Frank–Wolfe steps with a line search, from random vertices).
* :func:`verified` — a candidate channel made exactly feasible by this module's own
  repair (rows averaged over forced ties, then mixed with a constant channel on a
  ladder of weights) and checked by :func:`mechopt.verify`; ``None`` if it cannot be.

A float LP is a float LP: at large budgets its rows are scaled (``e^-ε q[x] <= q[x']``)
and HiGHS may drop coefficients below 1e-9, i.e. solve a relaxation. Its *value* is
therefore only informative; what accuses the solver is a **witness**: a channel that
passed the exact verifier, evaluated here.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

#: rows with budgets above this are written divided by e^ε (HiGHS solved rows holding e^20 next to 1 badly)
SCALE_ABOVE = 5.0
#: at most this many ULDP role assignments are brute-forced; beyond, a big-M MILP
MAX_ASSIGNMENTS = 256
#: weights of the constant channel tried, in order, to make a candidate exactly feasible
MIX_LADDER = (0.0, 1e-14, 1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 0.1, 0.5)


# -----------------------------------------------------------------------------
# the problem, read again
# -----------------------------------------------------------------------------


@dataclass
class Ref:
    """A problem as plain arrays (built from the dict by :func:`read`)."""

    k: int
    inputs: list[str]
    outputs: list[str] | None  # None: free outputs
    E: np.ndarray  # (k, k) smallest pairwise budget of the E-LDP family; inf = none; diagonal 0
    lips: list[tuple[np.ndarray, float, float]]  # (prior, eps, delta), one per LIP prior (BP-LIP: per vertex)
    uldp_eps: float | None  # the smallest ULDP budget, None without ULDP
    sensitive: frozenset[int]  # the union of ULDP's sensitive inputs
    kind: str
    prior: np.ndarray
    loss: np.ndarray | None = None  # (k, m) expected_loss, (k, k) bayes_risk
    values: np.ndarray | None = None
    ties: list[list[int]] = field(default_factory=list)  # inputs every feasible channel gives equal rows

    @property
    def free(self) -> bool:
        return self.outputs is None

    @property
    def minimize(self) -> bool:
        return self.kind != "mutual_information"

    @property
    def scale(self) -> float:
        """The objective's natural size (the same definitions as docs: max loss, E f², 1, H(P))."""
        if self.kind in ("expected_loss", "bayes_risk"):
            return float(np.max(np.abs(self.loss))) if self.loss.size else 1.0
        if self.kind == "mmse":
            return float(self.prior @ self.values**2)
        if self.kind == "histogram_mse":
            return 1.0
        if self.kind == "mutual_information":
            p = self.prior[self.prior > 0]
            return float(-(p * np.log(p)).sum())
        return 0.0


def _num(v: Any) -> float:
    return math.inf if isinstance(v, str) and v.strip().lower() in ("inf", "infinity") else float(v)


def _floyd(k: int, edges: list[tuple[int, int, float]]) -> np.ndarray:
    D = np.full((k, k), math.inf)
    np.fill_diagonal(D, 0.0)
    for a, b, w in edges:
        if a != b:
            D[a, b] = D[b, a] = min(D[a, b], w)
    for z in range(k):
        D = np.minimum(D, D[:, [z]] + D[[z], :])
    return D


def box_vertices(lower: list[float], upper: list[float]) -> list[list[Fraction]]:
    """Vertices of ``{P : lower <= P <= upper, sum P = 1}``, exactly (as the decimals are written).

    A vertex has every coordinate at a bound except at most one, which the hyperplane fixes.
    """
    lo = [Fraction(repr(float(v))) for v in lower]
    hi = [Fraction(repr(float(v))) for v in upper]
    out = set()
    # each coordinate at its lower bound (0), its upper bound (1), or free (2, at most one)
    for choice in itertools.product((0, 1, 2), repeat=len(lo)):
        if choice.count(2) > 1:
            continue
        P = [lo[i] if c == 0 else hi[i] if c == 1 else None for i, c in enumerate(choice)]
        rest = 1 - sum(p for p in P if p is not None)
        if 2 in choice:
            j = choice.index(2)
            if not lo[j] <= rest <= hi[j]:
                continue
            P[j] = rest
        elif rest != 0:
            continue
        out.add(tuple(P))
    return [list(p) for p in sorted(out)]


def read(doc: dict) -> Ref:
    """Read a problem dict (as the fuzzer writes them) into plain arrays, without mechopt."""
    inputs = [str(v) for v in doc["inputs"]] if "inputs" in doc else [str(i) for i in range(int(doc["k"]))]
    k = len(inputs)
    pos = {lab: i for i, lab in enumerate(inputs)}
    outs = doc.get("outputs", "inputs")
    outputs = None if outs == "free" else (list(inputs) if outs == "inputs" else [str(v) for v in outs])
    E = np.full((k, k), math.inf)
    np.fill_diagonal(E, 0.0)
    lips: list[tuple[np.ndarray, float, float]] = []
    uldp_eps = None
    sensitive: set[int] = set()
    all_ties = False
    for spec in doc["privacy"]:
        kind = spec["notion"]
        eps = _num(spec["epsilon"]) if "epsilon" in spec else None
        M = np.full((k, k), math.inf)
        if kind == "eldp":
            M = np.array([[_num(v) for v in row] for row in spec["matrix"]], dtype=float)
        elif kind in ("ldp", "wc_lip"):
            M[:] = eps
        elif kind == "block":
            for b in spec["blocks"]:
                idx = [pos[v] for v in b]
                M[np.ix_(idx, idx)] = eps
        elif kind == "high_low":
            M[[pos[v] for v in spec["sensitive"]], :] = eps
        elif kind == "metric":
            if "distance" in spec:  # used as given (a budget matrix eps * D)
                D = np.array([[_num(v) for v in row] for row in spec["distance"]], dtype=float)
            else:
                D = _floyd(k, [(pos[a], pos[b], float(w)) for a, b, w in spec["edges"]])
            with np.errstate(invalid="ignore"):
                M = np.where(np.isinf(D), math.inf, eps * D)
        elif kind == "lip":
            P = np.array(spec["prior"], dtype=float)
            d = float(spec.get("delta", 0.0))
            lips.append((P, eps, d))
            all_ties |= eps == 0 and d == 0
        elif kind == "bp_lip":
            if "priors" in spec:
                ps = [np.array(p, dtype=float) for p in spec["priors"]]
            else:
                ps = [np.array([float(v) for v in P]) for P in box_vertices(spec["lower"], spec["upper"])]
            lips += [(P, eps, 0.0) for P in ps]
            all_ties |= eps == 0
        elif kind == "uldp":
            uldp_eps = eps if uldp_eps is None else min(uldp_eps, eps)
            sensitive |= {pos[v] for v in spec["sensitive"]}
            all_ties |= eps == 0  # protected columns constant, sensitive rows have no other mass
        else:
            raise ValueError(f"unknown notion {kind!r}")
        np.fill_diagonal(M, 0.0)
        E = np.minimum(E, M)
    ties = _tie_classes(E, all_ties)
    obj = doc.get("objective") or {}
    kind = obj.get("kind", "expected_loss" if outputs is not None else "mutual_information")
    key = "p0" if "p0" in obj else "prior"
    if key in obj:
        prior = np.array(obj[key], dtype=float)
    else:
        first = [s for s in doc["privacy"] if s["notion"] == "lip"]
        prior = np.array(first[0]["prior"], dtype=float) if first else np.full(k, 1.0 / k)
    values = np.array(obj["values"], dtype=float) if "values" in obj else None
    loss = None
    if kind in ("expected_loss", "bayes_risk"):
        outl = outputs if kind == "expected_loss" else inputs
        L = obj.get("loss", "hamming")
        if isinstance(L, str):
            if L == "hamming":
                loss = np.array([[0.0 if x == y else 1.0 for y in outl] for x in inputs])
            else:
                xv = values if values is not None else np.array([float(v) for v in inputs])
                yv = values if (values is not None and outl == inputs) else np.array([float(v) for v in outl])
                d = np.abs(xv[:, None] - yv[None, :])
                loss = d if L == "absolute" else d**2
        else:
            loss = np.array(L, dtype=float)
    return Ref(k, inputs, outputs, E, lips, uldp_eps, frozenset(sensitive), kind, prior, loss, values, ties)


def _tie_classes(E: np.ndarray, all_tied: bool) -> list[list[int]]:
    """Inputs whose rows are equal in every feasible channel.

    ``E[x][x'] = 0`` means ``q[x] <= q[x']`` on every column; both rows sum to 1, so they
    are equal. ε = 0 for LIP-type notions (q[x] = P·q for every x) or ULDP ties every row.
    """
    k = E.shape[0]
    if all_tied:
        return [list(range(k))] if k > 1 else []
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    # rows x, x' with E[x][x'] = 0 are equal: the classes are the connected components
    _, label = connected_components(csr_matrix((E <= 0).astype(int)), directed=True, connection="weak")
    groups: dict[int, list[int]] = {}
    for x in range(k):
        groups.setdefault(int(label[x]), []).append(x)
    return [g for g in groups.values() if len(g) > 1]


# -----------------------------------------------------------------------------
# objectives, from their definitions
# -----------------------------------------------------------------------------


def objective_value(ref: Ref, Q: np.ndarray, *, exact: bool = False) -> float:
    """The objective of channel ``Q`` (rows = inputs), written out from docs/model.md.

    With ``exact``, ``estimation_variance`` is computed in rational arithmetic on the
    float entries (its information matrix has condition numbers of 1e13 at eps = 1e-6,
    where a float inverse loses every digit that matters).
    """
    Q = np.asarray(Q, dtype=float)
    P = ref.prior
    joint = P[:, None] * Q  # Pr(X = x, Y = y)
    py = joint.sum(axis=0)
    pos = py > 0
    if ref.kind == "expected_loss":
        return float((joint * ref.loss).sum())
    if ref.kind == "mmse":  # E f(X)^2 - sum_y E[f(X) | y]^2 Pr(y)
        num = (ref.values[:, None] * joint).sum(axis=0)
        return float(P @ ref.values**2 - (num[pos] ** 2 / py[pos]).sum())
    if ref.kind == "histogram_mse":  # sum_x E (1{X = x} - Pr(x | Y))^2
        return float(P.sum() - ((joint[:, pos] ** 2).sum(axis=0) / py[pos]).sum())
    if ref.kind == "mutual_information":
        m = joint > 0
        ratio = np.where(m, Q / np.where(py > 0, py, 1.0)[None, :], 1.0)
        return float(np.where(m, joint * np.log(np.where(m, ratio, 1.0)), 0.0).sum())
    if ref.kind == "bayes_risk":  # the best decision per output
        return float((joint.T @ ref.loss).min(axis=1).sum())
    if ref.kind == "estimation_variance":
        return _exact_estimation_risk(Q, P) if exact else _estimation_risk(Q, P)
    raise ValueError(ref.kind)


def _estimation_risk(Q: np.ndarray, p0: np.ndarray) -> float:
    """``tr(B J^-1 B^T) = |B A^+T|_F^2`` with ``J = A A^T`` in floating point (fast, for searches)."""
    k = Q.shape[0]
    s = p0 @ Q
    keep = s > 0
    A = (Q[:-1, keep] - Q[-1:, keep]) / np.sqrt(s[keep])
    if A.shape[1] < k - 1:
        return math.inf
    sv = np.linalg.svd(A, compute_uv=False)
    if not sv.size or sv.min() <= 1e-13 * max(float(sv.max()), 1e-300):
        return math.inf
    B = np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])
    return float(np.linalg.norm(B @ np.linalg.pinv(A).T, "fro") ** 2)


def _exact_estimation_risk(Q: np.ndarray, p0: np.ndarray) -> float:
    """``tr(B J^-1 B^T)`` exactly (Fractions), ``inf`` if ``J`` is singular."""
    k, m = Q.shape
    q = [[Fraction(float(v)) for v in row] for row in Q]
    p = [Fraction(float(v)) for v in p0]
    n = k - 1
    J = [[Fraction(0)] * n for _ in range(n)]
    for y in range(m):
        s = sum(p[x] * q[x][y] for x in range(k))
        if s == 0:
            continue
        g = [q[i][y] - q[k - 1][y] for i in range(n)]
        for i in range(n):
            if g[i]:
                gi = g[i] / s
                for j in range(n):
                    J[i][j] += gi * g[j]
    # tr(B J^-1 B^T) = tr(J^-1) + 1^T J^-1 1: solve J X = [I, 1] by Gauss-Jordan
    A = [J[i][:] + [Fraction(int(i == j)) for j in range(n)] + [Fraction(1)] for i in range(n)]
    for c in range(n):
        piv = next((r for r in range(c, n) if A[r][c] != 0), None)
        if piv is None:
            return math.inf
        A[c], A[piv] = A[piv], A[c]
        inv = 1 / A[c][c]
        A[c] = [v * inv for v in A[c]]
        for r in range(n):
            if r != c and A[r][c]:
                f = A[r][c]
                A[r] = [a - f * b for a, b in zip(A[r], A[c])]
    tr = sum(A[i][n + i] for i in range(n))
    ones = sum(A[i][2 * n] for i in range(n))
    return float(tr + ones)


def _gradient(ref: Ref, Q: np.ndarray) -> np.ndarray:
    """d objective / d Q (to be minimised: mutual information is negated)."""
    with np.errstate(all="ignore"):
        return _gradient_raw(ref, Q)


def _gradient_raw(ref: Ref, Q: np.ndarray) -> np.ndarray:
    P = ref.prior
    Qf = np.maximum(Q, 1e-300)
    py = np.maximum(P @ Qf, 1e-300)
    if ref.kind == "mmse":
        c = P * ref.values
        cv = c @ Qf
        return -(2 * np.outer(c, cv / py) - np.outer(P, (cv / py) ** 2))
    if ref.kind == "histogram_mse":
        t = ((P[:, None] * Qf) ** 2).sum(axis=0)
        return -(2 * (P**2)[:, None] * Qf / py - np.outer(P, t / py**2))
    if ref.kind == "mutual_information":
        g = P[:, None] * np.log(Qf / py[None, :])
        return -np.clip(g, -60 * P[:, None], 60 * P[:, None])
    if ref.kind == "bayes_risk":
        best = ((P[:, None] * Qf).T @ ref.loss).argmin(axis=1)
        return P[:, None] * ref.loss[:, best]
    if ref.kind == "estimation_variance":
        k = Q.shape[0]
        B = np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])
        G = B.T @ Qf
        J = (G / py) @ G.T
        Ji = np.linalg.pinv(J)
        M = Ji @ B.T @ B @ Ji
        MG = M @ G
        quad = (G * MG).sum(axis=0)
        return -(2 * (B @ MG) / py - np.outer(P, quad / py**2))
    raise ValueError(ref.kind)


# -----------------------------------------------------------------------------
# dense rows of one column
# -----------------------------------------------------------------------------


def column_rows(ref: Ref, *, protected: bool) -> tuple[np.ndarray, np.ndarray]:
    """``A q <= b`` for one column: every pair of the E-LDP family, every LIP row; dense.

    With ``protected``, ULDP's ε-LDP over all pairs is added. Rows whose budget is above
    :data:`SCALE_ABOVE` are divided by ``e^ε`` (computed as ``exp(-ε)``, which underflows to
    0 rather than overflowing).
    """
    k = ref.k
    E = ref.E.copy()
    if protected and ref.uldp_eps is not None:
        E = np.minimum(E, np.where(np.eye(k, dtype=bool), 0.0, ref.uldp_eps))
    rows, rhs = [], []
    for x in range(k):
        for xp in range(k):
            e = E[x, xp]
            if x == xp or not math.isfinite(e):
                continue
            r = np.zeros(k)
            if e <= SCALE_ABOVE:  # q[x] - e^e q[x'] <= 0
                r[x], r[xp] = 1.0, -math.exp(e)
            else:  # e^-e q[x] - q[x'] <= 0
                r[x], r[xp] = math.exp(-e), -1.0
            rows.append(r)
            rhs.append(0.0)
    for P, eps, d in ref.lips:
        for x in range(k):
            up = -P.copy()  # q[x] - e^eps P.q <= e^eps d   (scaled: e^-eps q[x] - P.q <= d)
            lo = P.copy()  # P.q - e^eps q[x] <= d         (scaled: e^-eps P.q - q[x] <= e^-eps d)
            if eps <= SCALE_ABOVE:
                ee = math.exp(eps)
                up = up * ee
                up[x] += 1.0
                lo[x] -= ee
                rows += [up, lo]
                rhs += [ee * d, d]
            else:
                ie = math.exp(-eps)
                up[x] += ie
                lo = lo * ie
                lo[x] -= 1.0
                rows += [up, lo]
                rhs += [d, ie * d]
    if not rows:
        return np.zeros((0, k)), np.zeros(0)
    return np.array(rows), np.array(rhs)


def _channel_lp(ref: Ref, m: int, roles: list[int | None], cost: np.ndarray):
    """min cost·Q over k x m channels whose column y is protected (role None) or invertible at roles[y].

    Returns ``(status, value, Q)``; ``status`` is scipy's (0 = optimal).
    """
    A_ub, b_ub, A_eq, bounds = _polytope(ref, roles)
    res = linprog(cost.ravel(), A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=np.ones(ref.k), bounds=bounds,
                  method="highs")
    if res.status != 0:
        return res.status, None, None
    return 0, float(res.fun), res.x.reshape(ref.k, m)


# -----------------------------------------------------------------------------
# exactly feasible candidates
# -----------------------------------------------------------------------------


def verified(ref: Ref, notions, Q: np.ndarray, invertible: np.ndarray | None = None) -> tuple[np.ndarray, float] | None:
    """``(Q', t)``: ``Q`` made to pass :func:`mechopt.verify` by this module's repair, or None.

    Negative entries are clipped, rows renormalised, forced ties averaged; then
    ``Q' = (1 - t) Q + t U`` for the first ``t`` of :data:`MIX_LADDER` that verifies, ``U``
    constant over the columns not marked ``invertible``.
    """
    from mechopt import verify

    Q = np.clip(np.asarray(Q, dtype=float), 0.0, None)
    if not np.all(np.isfinite(Q)):
        return None
    s = Q.sum(axis=1, keepdims=True)
    if np.any(s <= 0):
        return None
    Q = Q / s
    m = Q.shape[1]
    inv = np.zeros(m, bool) if invertible is None else np.asarray(invertible, bool)
    if inv.all():
        return None
    U = np.where(inv, 0.0, 1.0 / (~inv).sum())[None, :]
    tied = Q.copy()
    for g in ref.ties:
        tied[g] = tied[g].mean(axis=0)
    for base in ((Q, tied) if ref.ties else (Q,)):
        for t in MIX_LADDER:
            cand = base if t == 0 else (1 - t) * base + t * U
            if verify(cand, notions).verified:
                return cand, t
    return None


# -----------------------------------------------------------------------------
# labeled problems: the all-pairs LP (brute force over ULDP's roles)
# -----------------------------------------------------------------------------


@dataclass
class Reference:
    """The reference's answer for one problem.

    ``lp_value``: the reference LP's optimum (labeled; informative, a float LP);
    ``witness``: the best exactly verified channel found here and ``witness_value`` its
    objective (from :func:`objective_value`); ``how``: which method produced it;
    ``skipped``: why no LP reference was run.
    """

    lp_value: float | None = None
    lp_status: str = ""
    witness: np.ndarray | None = None
    witness_value: float | None = None
    how: str = ""
    mix_t: float | None = None
    skipped: str = ""
    candidates: int = 0
    verified_candidates: int = 0
    method: str = ""


def _better(ref: Ref, a: float, b: float | None) -> bool:
    if b is None:
        return True
    return a < b if ref.minimize else a > b


def _offer(out: Reference, ref: Ref, notions, Q, how: str, invertible=None) -> None:
    out.candidates += 1
    got = verified(ref, notions, Q, invertible)
    if got is None:
        return
    out.verified_candidates += 1
    Qv, t = got
    v = objective_value(ref, Qv, exact=True)
    if math.isfinite(v) and _better(ref, v, out.witness_value):
        out.witness, out.witness_value, out.how, out.mix_t = Qv, v, how, t


def owners(ref: Ref) -> list[int]:
    """Inputs at which a column ``c e_x`` (ULDP's invertible role, c > 0) can meet the other notions.

    Non-sensitive, and: no finite pairwise budget ``q[x] <= e^E q[x']`` (it forces
    ``q[x'] > 0``), no LIP prior with δ = 0 (``P·q <= e^ε q[x'] = 0`` for x' != x forces
    ``P(x) = 0``, and then ``q[x] <= e^ε P·q = 0``). The float LP cannot see the first at
    large budgets (``e^-ε`` below HiGHS's 1e-9 is dropped), so the roles are left out here.
    """
    if ref.uldp_eps is None:
        return []
    out = []
    for x in range(ref.k):
        if x in ref.sensitive:
            continue
        if np.any(np.isfinite(np.delete(ref.E[x], x))):
            continue
        if ref.k > 1 and any(d == 0 for _, _, d in ref.lips):
            continue
        out.append(x)
    return out


def labeled_reference(ref: Ref, notions, *, max_assignments: int | None = None) -> Reference:
    """The all-pairs LP for a labeled problem; ULDP by brute force over roles (or a big-M MILP).

    ``max_assignments``: brute-force up to this many role assignments (default
    :data:`MAX_ASSIGNMENTS`), beyond them the big-M MILP.
    """
    out = Reference()
    k, m = ref.k, len(ref.outputs)
    cost = ref.prior[:, None] * ref.loss
    # the best constant channel (every row the same point mass) is always a candidate
    C = np.zeros((k, m))
    C[:, int(np.argmin(cost.sum(axis=0)))] = 1.0
    _offer(out, ref, notions, C, "constant")
    inv_at = owners(ref)
    if not inv_at:
        out.method = "lp"
        st, val, Q = _channel_lp(ref, m, [None] * m, cost)
        out.lp_status = "optimal" if st == 0 else f"scipy status {st}"
        if st == 0:
            out.lp_value = val
            _offer(out, ref, notions, Q, "all-pairs lp")
        return out
    choices = [None] + inv_at
    n_assign = len(choices) ** m
    if n_assign <= (max_assignments or MAX_ASSIGNMENTS):
        out.method = f"brute force over {n_assign} role assignments"
        best = None
        for roles in itertools.product(choices, repeat=m):
            if all(r is not None for r in roles) and ref.sensitive:
                continue  # sensitive rows need a protected output
            st, val, Q = _channel_lp(ref, m, list(roles), cost)
            if st == 0 and (best is None or val < best[0]):
                best = (val, Q, roles)
        if best is None:
            out.lp_status = "no assignment solved"
            return out
        out.lp_status = "optimal"
        out.lp_value = best[0]
        _offer(out, ref, notions, best[1], "brute-force roles", np.array([r is not None for r in best[2]]))
        return out
    out.method = "big-M milp"
    roles = _bigm_milp(ref, m, inv_at, cost)
    if roles is None:
        out.lp_status = "milp failed"
        return out
    st, val, Q = _channel_lp(ref, m, roles, cost)
    out.lp_status = "optimal (milp roles)" if st == 0 else f"scipy status {st}"
    if st == 0:
        out.lp_value = val  # the MILP's roles: as good as HiGHS's MIP tolerances
        _offer(out, ref, notions, Q, "milp roles", np.array([r is not None for r in roles]))
    return out


def _bigm_milp(ref: Ref, m: int, owners: list[int], cost: np.ndarray) -> list[int | None] | None:
    """Roles from a big-M MILP (``M = 1``: entries lie in [0, 1]); None if HiGHS fails.

    Variables: Q (k m), z_y (protected), w_{y,x} (invertible at owner x). Protected rows
    hold when z_y = 1 (``a·q <= 1 - z_y`` with rows scaled to |a| <= 1 on [0, 1]^k);
    invertible: ``Q[x', y] <= 1 - w_{y,x}`` for x' != x; ``z_y + sum_x w_{y,x} = 1``.
    """
    k = ref.k
    no = len(owners)
    nq = k * m
    n = nq + m + m * no
    Ap, bp = column_rows(ref, protected=True)
    Ai, bi = column_rows(ref, protected=False)
    # ULDP's own rows (those of Ap not in Ai) get the big-M; the others hold on every column
    extra = [i for i in range(len(Ap)) if not any(np.array_equal(Ap[i], r) for r in Ai)]
    rows, rhs = [], []
    for y in range(m):
        for r, b in zip(Ai, bi):
            v = np.zeros(n)
            v[np.arange(k) * m + y] = r
            rows.append(v)
            rhs.append(b)
        for i in extra:
            r = Ap[i] / max(1.0, float(np.abs(Ap[i]).max()))
            v = np.zeros(n)
            v[np.arange(k) * m + y] = r
            v[nq + y] = 1.0  # a.q + z_y <= 1 + 0
            rows.append(v)
            rhs.append(1.0 + bp[i])
        for j, x in enumerate(owners):
            w = nq + m + y * no + j
            for xp in range(k):
                if xp != x:
                    v = np.zeros(n)
                    v[xp * m + y] = 1.0
                    v[w] = 1.0
                    rows.append(v)
                    rhs.append(1.0)
    eq = []
    for x in range(k):
        v = np.zeros(n)
        v[x * m:(x + 1) * m] = 1.0
        eq.append(v)
    for y in range(m):
        v = np.zeros(n)
        v[nq + y] = 1.0
        v[nq + m + y * no: nq + m + (y + 1) * no] = 1.0
        eq.append(v)
    c = np.concatenate([cost.ravel(), np.zeros(n - nq)])
    integrality = np.concatenate([np.zeros(nq), np.ones(n - nq)])
    cons = [LinearConstraint(np.array(rows), -np.inf, np.array(rhs)), LinearConstraint(np.array(eq), 1.0, 1.0)]
    res = milp(c, constraints=cons, integrality=integrality, bounds=Bounds(np.zeros(n), np.ones(n)),
               options={"time_limit": 30.0})
    if res.x is None:
        return None
    roles: list[int | None] = []
    for y in range(m):
        w = res.x[nq + m + y * no: nq + m + (y + 1) * no]
        j = int(np.argmax(w))
        roles.append(owners[j] if w[j] > 0.5 else None)
    return roles


# -----------------------------------------------------------------------------
# free outputs: verified channels built here
# -----------------------------------------------------------------------------


def _krr(k: int, s: float) -> np.ndarray:
    return ((s - 1.0) * np.eye(k) + 1.0) / (s + k - 1.0)


def _urr(k: int, sens: list[int], s: float) -> tuple[np.ndarray, np.ndarray]:
    """Utility-optimised RR (Murakami & Kawamoto, eq. (9)) with e^ε replaced by ``s``."""
    ns = len(sens)
    Q = np.zeros((k, k))
    d = ns + s - 1.0
    for x in range(k):
        for y in sens:
            Q[x, y] = (s if x == y else 1.0) / d
        if x not in sens:
            Q[x, x] = (s - 1.0) / d
    return Q, np.array([y not in sens for y in range(k)])


def _largest(ref: Ref, notions, make, hi: float = 60.0, steps: int = 24):
    """The largest parameter ``s`` (searched on log s in (0, hi]) whose channel verifies as is.

    ``log s`` is halved from ``hi`` until the channel verifies (down to 1e-15, so budgets of
    1e-9 are found too), then bisected between that value and twice it.
    """
    from mechopt import verify

    def ok(ls: float):
        Q, inv = make(math.exp(ls))
        return verify(Q, notions).verified

    ls = hi
    while ls > 1e-15 and not ok(ls):
        ls /= 2
    if ls <= 1e-15:
        return make(1.0) if ok(0.0) else None
    lo, h = ls, min(2 * ls, hi)
    if h > lo:
        for _ in range(steps):
            mid = 0.5 * (lo + h)
            if ok(mid):
                lo = mid
            else:
                h = mid
    return make(math.exp(lo))


def _polytope(ref: Ref, roles: list[int | None]):
    """The dense LP data of k x m channels with the given column roles (for Frank–Wolfe steps)."""
    k, m = ref.k, len(roles)
    Ap, bp = column_rows(ref, protected=True)
    Ai, bi = column_rows(ref, protected=False)
    blocks, rhs = [], []
    ub = np.ones(k * m)
    for y, role in enumerate(roles):
        A, b = (Ap, bp) if role is None else (Ai, bi)
        if role is not None:
            ub[[x * m + y for x in range(k) if x != role]] = 0.0
        if role is not None and k > 1:
            # the column is c e_x: every LIP row P.q - e^eps q[x'] <= delta (x' != x) says
            # P(x) c <= delta. Written out (well scaled): above SCALE_ABOVE the scaled row
            # e^-eps P.q - q[x'] <= e^-eps delta is below HiGHS's feasibility tolerance
            # (eps = 18.66, delta = 3.3e-4: a mass 100 times the cap passed as feasible)
            caps = [(P[role], d) for P, _, d in ref.lips if P[role] > 0]
            if caps:
                A = np.vstack([A] + [np.eye(k)[role] * p for p, _ in caps]) if len(A) else \
                    np.array([np.eye(k)[role] * p for p, _ in caps])
                b = np.concatenate([b, [d for _, d in caps]]) if len(b) else np.array([d for _, d in caps])
        if len(A):
            sel = sp.csr_matrix(([1.0], ([0], [y])), shape=(1, m))
            blocks.append(sp.kron(sp.csr_matrix(A), sel, format="csr"))
            rhs.append(b)
    A_ub = sp.vstack(blocks).tocsr() if blocks else None
    b_ub = np.concatenate(rhs) if rhs else None
    A_eq = sp.kron(sp.identity(k), np.ones((1, m)), format="csr")
    return A_ub, b_ub, A_eq, np.column_stack([np.zeros(k * m), ub])


def _vertex(data, g: np.ndarray) -> np.ndarray | None:
    A_ub, b_ub, A_eq, bounds = data
    res = linprog(g.ravel(), A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=np.ones(A_eq.shape[0]), bounds=bounds,
                  method="highs")
    return res.x if res.status == 0 else None


def _local_search(ref: Ref, roles: list[int | None], rng: np.random.Generator, iters: int = 12,
                  start: np.ndarray | None = None) -> np.ndarray | None:
    """Frank–Wolfe with a line search over the dense polytope, from a random vertex (or ``start``)."""
    k, m = ref.k, len(roles)
    data = _polytope(ref, roles)
    sign = 1.0 if ref.minimize else -1.0
    if start is None:
        x = _vertex(data, rng.normal(size=(k, m)))
        if x is None:
            return None
        Q = x.reshape(k, m)
    else:
        Q = start
    f = sign * objective_value(ref, Q)
    for _ in range(iters):
        g = _gradient(ref, Q)
        if not np.all(np.isfinite(g)):
            break
        x = _vertex(data, g)
        if x is None:
            break
        S = x.reshape(k, m)
        best = None
        for gamma in (1.0, 0.5, 0.25, 0.1, 0.03, 0.01):
            cand = Q + gamma * (S - Q)
            v = sign * objective_value(ref, cand)
            if math.isfinite(v) and (best is None or v < best[0]):
                best = (v, cand)
        if best is None or not (best[0] < f - 1e-12 * max(1.0, abs(f))):
            break
        f, Q = best
    return Q


def free_witnesses(ref: Ref, notions, rng: np.random.Generator, *, restarts: int = 2) -> Reference:
    """The best exactly verified channel among those built here (free outputs)."""
    out = Reference(method="witnesses")
    k = ref.k
    _offer(out, ref, notions, np.ones((k, 1)), "constant")
    got = _largest(ref, notions, lambda s: (_krr(k, s), None))
    if got is not None:
        _offer(out, ref, notions, got[0], "k-rr")
    inv_at = owners(ref)
    if inv_at:
        sens = sorted(ref.sensitive)
        got = _largest(ref, notions, lambda s: _urr(k, sens, s))
        if got is not None:
            _offer(out, ref, notions, got[0], "urr", got[1])
    role_sets: list[list[int | None]] = [[None] * k]
    if inv_at:
        role_sets.append([None] * k + list(inv_at))
    for r in range(restarts):
        for roles in role_sets:
            Q = _local_search(ref, roles, rng)
            if Q is not None:
                _offer(out, ref, notions, Q, f"local search {r}", np.array([x is not None for x in roles]))
    # one more from the best so far (a local search started at k-RR or uRR)
    if out.witness is not None and out.witness.shape[1] == k and out.how in ("k-rr", "urr"):
        roles = [None] * k if out.how == "k-rr" else [None if y in ref.sensitive else y for y in range(k)]
        Q = _local_search(ref, roles, rng, start=out.witness)
        if Q is not None:
            _offer(out, ref, notions, Q, "local search from " + out.how, np.array([x is not None for x in roles]))
    return out
