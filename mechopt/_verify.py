"""Exact verification of a channel against privacy notions (SPEC §4).

This module shares no code with the solvers. It reads every matrix entry as the exact
decimal its float prints as (``repr(v)``), bounds ``e^ε`` rigorously (:mod:`decimal` at
60 significant digits, with an error interval), and decides every inequality exactly.
A constraint violated by 1e-15 fails here even though any solver tolerance would accept
it.

How the work is organised (every verdict is a proof):

1. **Order, exactly.** Many inequalities of a notion share a right-hand side, and only
   the extreme entry matters: ``max_x q[x] <= e^ε min_x q[x]`` for a clique of LDP, or
   ``max_x q[x] <= e^ε (P·q + δ)`` for LIP. Floats are ordered exactly like the decimals
   they print as (the shortest round-trip decimal is monotone in the float), so the
   extreme entry found in floats *is* the extreme decimal: one inequality per column
   remains, the others follow from it exactly.
2. **Certified enclosures.** For each remaining inequality ``A <= B`` both sides are
   computed in floating point together with a rigorous bound on their error (the
   decimal of a normal float is within ``2^-53`` relative of it; a sum of ``n``
   non-negative products is within ``(n + 2) 2^-53`` relative; ``e^ε`` is bounded below
   by a float proven to be below it). The inequality is settled by the enclosure only when
   ``A``'s upper end is at most ``B``'s lower end — a proof that it holds. Subnormal
   numbers, negative entries and differences that cancel never take this path.
3. **Exact arithmetic** for everything else: the decimals in :mod:`decimal` with the
   ``Inexact`` signal trapped (so every operation is exact), ``e^ε`` as a 60-digit
   interval. A value inside that ~1e-58 interval is not provable and is refused.

No inequality is ever *failed* in floating point, and none is passed on a float
comparison that could be wrong.

The per-notion checkers (``check_ldp``, ``check_lip_notion``, …) are registered with their
notion classes by :mod:`mechopt.notions` (``register_notion(cls, checker=...)``, the way a
notion defined elsewhere brings its own); :func:`check_notion` finds every checker through
the registry. This module imports no notion class, and nothing that builds LP rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import localcontext
from fractions import Fraction
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ._errors import InputError
from ._exact import (_EXP_CAP, _NORMAL, _REL, _U, _dec, _exact_context, _exact_dot, _exp_lower, _is_normal, _leq_scaled, exact)
from ._validation import check_matrix

ROW_TOL = Fraction(1, 10**12)


@dataclass(frozen=True)
class Check:
    """The exact verdict on one notion.

    Attributes
    ----------
    notion : str
        Notion name (``"ldp"``, ``"lip"``...).
    budget : float
        The budget claimed (``epsilon``; for ``eldp`` the scale 1.0).
    achieved : float
        Smallest budget the matrix satisfies (float estimate; ``inf`` if none).
    worst_slack : float
        ``rhs - lhs`` of the tightest inequality examined, in floating point (negative =
        violated); a lower bound where whole groups were settled by an enclosure.
    ok : bool
        Decided exactly.
    """

    notion: str
    budget: float
    achieved: float
    worst_slack: float
    ok: bool
    detail: str = ""

    def to_dict(self) -> dict:
        def num(v: float) -> float | str:
            return "inf" if math.isinf(v) else float(v)

        out = {"notion": self.notion, "epsilon": num(self.budget), "achieved": num(self.achieved),
               "worst_slack": num(self.worst_slack), "ok": bool(self.ok)}
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True)
class Certificate:
    """Exact verification result for a channel: rows, entries and every notion."""

    verified: bool
    rows_ok: bool
    checks: tuple[Check, ...]
    method: str = "exact"
    detail: str = ""

    def to_dict(self) -> dict:
        out = {"verified": bool(self.verified), "method": self.method, "rows_ok": bool(self.rows_ok),
               "checks": [c.to_dict() for c in self.checks]}
        if self.detail:
            out["detail"] = self.detail
        return out


def as_matrix(matrix: Any) -> np.ndarray:
    """Convert a list-of-lists (from JSON) to a float array, checking shape and values."""
    return check_matrix(matrix, "matrix")


def check_rows(Q: np.ndarray) -> tuple[bool, str]:
    """Entries >= 0 and every row sums to 1 within 1e-12, decided exactly."""
    neg = np.argwhere(Q < 0)
    if len(neg):
        i, j = neg[0]
        return False, f"matrix[{i}][{j}] = {float(Q[i, j])!r} is negative"
    for i, row in enumerate(Q):
        s = math.fsum(row)
        # fsum is the correctly rounded sum of the binary floats; the decimals differ from
        # them by at most 2^-53 relative each, i.e. by <= 1.2e-16 * s in all
        if abs(s - 1.0) <= 1e-12 - 4.5e-16 * max(s, 1.0):
            continue
        total = sum((exact(v) for v in row), Fraction(0))
        if abs(total - 1) > ROW_TOL:
            return False, f"row {i} sums to {float(total)!r}, not 1 (tolerance 1e-12)"
    return True, ""


# -- the inequality kernels ------------------------------------------------------------


class _Tally:
    """Collects the worst slack and the first exact violation."""

    def __init__(self) -> None:
        self.worst = math.inf
        self.ok = True
        self.detail = ""

    def slack(self, value: float) -> None:
        if value < self.worst:
            self.worst = value

    def fail(self, msg: str) -> None:
        if self.ok:
            self.detail = msg
        self.ok = False


def _doubtful(A_hi: np.ndarray, B_lo: np.ndarray, *parts: np.ndarray) -> np.ndarray:
    """Where the enclosure ``A <= A_hi <= B_lo <= B`` does not prove ``A <= B``.

    ``parts`` are the float inputs the two sides were computed from; where any of them is
    subnormal-ish the relative error bounds do not hold, so the exact path decides.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        proven = A_hi <= B_lo
    for p in parts:
        proven &= _is_normal(p)
    return ~proven


def _check_groups(Q: np.ndarray, groups: Iterable[tuple[Sequence[int], Sequence[int], float]],
                  cols: Sequence[int], tally: _Tally) -> None:
    """``max_{x in U} q[x] <= e^eps min_{x in L} q[x]`` for every listed column.

    The float argmax/argmin are the exact ones (floats order like their decimals), so one
    inequality per column decides the whole group.
    """
    cols = np.asarray(cols, dtype=int)
    if not len(cols):
        return
    for upper, lower, eps in groups:
        upper = np.asarray(upper, dtype=int)
        lower = np.asarray(lower, dtype=int)
        if len(upper) == 0 or len(lower) == 0 or math.isinf(eps):
            continue
        eps_x = exact(eps)
        sub_u = Q[np.ix_(upper, cols)]
        sub_l = Q[np.ix_(lower, cols)]
        hi_idx = np.argmax(sub_u, axis=0)
        lo_idx = np.argmin(sub_l, axis=0)
        a = sub_u[hi_idx, np.arange(len(cols))]
        b = sub_l[lo_idx, np.arange(len(cols))]
        with np.errstate(over="ignore"):
            tally.slack(float(np.min(math.exp(min(eps, _EXP_CAP)) * b - a)))
            doubt = (a != 0) & _doubtful(a * (1 + _REL), _exp_lower(eps) * b * (1 - _REL), a, b)
        for j in np.flatnonzero(doubt):
            if not _leq_scaled(float(a[j]), float(b[j]), eps_x):
                y = int(cols[j])
                tally.fail(f"column {y}: Q[{upper[hi_idx[j]]}][{y}] = {float(a[j])!r} > e^{eps!r} * "
                           f"Q[{lower[lo_idx[j]]}][{y}] = {float(b[j])!r}")
                return


def _check_pair_list(Q: np.ndarray, xs: np.ndarray, xps: np.ndarray, budgets: np.ndarray,
                     exact_budget: Callable[[int], Fraction], tally: _Tally, label: Callable[[int], str]) -> None:
    """``q[x] <= e^{b} q[x']`` for listed pairs ``(xs[t], xps[t])`` with budgets ``budgets[t]``, every column.

    A pair whose row maximum is below ``e^b`` times the other row's minimum holds on
    every column at once (one enclosure); the other pairs are examined column by column
    in chunks, and what the enclosures cannot prove is decided exactly.
    """
    if not len(xs):
        return
    k, m = Q.shape
    row_max = Q.max(axis=1)
    pos = np.where(Q > 0, Q, np.inf)
    row_min_pos = pos.min(axis=1)
    has_zero = (Q == 0).any(axis=1)
    elo = np.array([_exp_lower(b) for b in budgets.tolist()])
    with np.errstate(over="ignore", invalid="ignore"):
        # no zero in row x' (else a column may need q[x] = 0): max q[x] <= e^b min q[x']
        quick = ~has_zero[xps] & ~_doubtful(row_max[xs] * (1 + _REL), elo * row_min_pos[xps] * (1 - _REL),
                                            row_max[xs], row_min_pos[xps])
        quick |= row_max[xs] == 0
        # a lower bound on the slack of the quickly settled pairs
        if quick.any():
            tally.slack(float(np.min(elo[quick] * np.where(has_zero[xps[quick]], 0.0, row_min_pos[xps[quick]])
                                     - row_max[xs[quick]])))
    rest = np.flatnonzero(~quick)
    if not len(rest):
        return
    chunk = max(1, 4_000_000 // max(m, 1))
    for start in range(0, len(rest), chunk):
        sel = rest[start:start + chunk]
        A = Q[xs[sel]]  # (n, m)
        B = Q[xps[sel]]
        e_lo = elo[sel][:, None]
        with np.errstate(over="ignore", invalid="ignore"):
            rhs = e_lo * B
            tally.slack(float(np.min(rhs - A)))
            doubt = (A != 0) & _doubtful(A * (1 + _REL), rhs * (1 - _REL), A, B)
        for t, y in zip(*np.nonzero(doubt)):
            p = int(sel[t])
            x, xp = int(xs[p]), int(xps[p])
            if not _leq_scaled(float(A[t, y]), float(B[t, y]), exact_budget(p)):
                tally.fail(f"column {y}: Q[{x}][{y}] = {float(A[t, y])!r} > e^{label(p)} * Q[{xp}][{y}] = "
                           f"{float(B[t, y])!r}")
                return


def _check_pairs(Q: np.ndarray, E: np.ndarray, tally: _Tally) -> None:
    """``q[x] <= e^{E[x,x']} q[x']`` for every finite off-diagonal pair and column."""
    k = Q.shape[0]
    finite = np.isfinite(E) & ~np.eye(k, dtype=bool)
    xs, xps = np.nonzero(finite)
    budgets = E[xs, xps]
    _check_pair_list(Q, xs, xps, budgets, lambda p: exact(budgets[p]), tally, lambda p: f"{budgets[p]!r}")


def _check_metric_edges(Q: np.ndarray, notion, tally: _Tally) -> None:
    """Metric privacy needs only the edges: a path of edge constraints implies the pair."""
    xs, xps, ws = [], [], []
    for a, b, w in notion.edges:
        if a == b:
            continue
        xs += [a, b]
        xps += [b, a]
        ws += [w, w]
    if not xs:
        return
    xs, xps, ws = np.array(xs, dtype=int), np.array(xps, dtype=int), np.array(ws, dtype=float)
    eps = notion.epsilon
    eps_x = exact(eps)
    # the float product eps * w is within 3 * 2^-53 relative of the exact one: lower it by
    # more than that, so e^(budget) stays a lower bound of e^(exact product)
    _check_pair_list(Q, xs, xps, eps * ws * (1 - 4 * _U), lambda p: eps_x * exact(ws[p]), tally,
                     lambda p: f"(eps*{ws[p]!r})")


def _check_pairs_scaled(Q: np.ndarray, D: np.ndarray, eps: float, tally: _Tally) -> None:
    """Metric privacy from a distance matrix: ``q[x] <= e^{eps D[x,x']} q[x']``."""
    k = Q.shape[0]
    finite = np.isfinite(D) & ~np.eye(k, dtype=bool)
    xs, xps = np.nonzero(finite)
    ds = D[xs, xps]
    eps_x = exact(eps)
    _check_pair_list(Q, xs, xps, eps * ds * (1 - 4 * _U), lambda p: eps_x * exact(ds[p]), tally, lambda p: f"(eps*{ds[p]!r})")


def _column_sums(P: np.ndarray, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``P·q`` per column, and where its enclosure is valid (no subnormal entry or product)."""
    s = P @ Q
    pos_P = P[P > 0]
    p_min = float(pos_P.min()) if len(pos_P) else 1.0
    q_pos = np.where(Q > 0, Q, np.inf).min(axis=0)
    # a product of two normal numbers may be subnormal: then relative bounds fail
    ok = (q_pos * p_min >= _NORMAL) | ~np.isfinite(q_pos)
    ok &= np.all(_is_normal(Q), axis=0) & np.all(Q >= 0, axis=0)
    ok &= bool(np.all(_is_normal(P))) and bool(np.all(P >= 0))
    return s, ok


def _check_lip(Q: np.ndarray, prior: Sequence[Any], eps: float, delta: float, tally: _Tally,
               prior_label: str = "") -> None:
    """``e^-eps q[x] - delta <= P.q <= e^eps q[x] + delta`` for all x and columns.

    The right-hand sides do not depend on x, so per column only ``max_x q[x]`` (upper
    inequality) and ``min_x q[x]`` (lower inequality) matter — found exactly in floats.
    ``prior`` may hold Fractions (vertices of a prior box): then the float prior is
    within 2^-53 relative of it, which the enclosure allows for.
    """
    k, m = Q.shape
    eps_x = exact(eps)
    delta_x = exact(delta) if delta else Fraction(0)
    Pf = np.array([float(p) for p in prior])
    s, s_ok = _column_sums(Pf, Q)
    rel_s = (k + 8) * _U
    e_lo = _exp_lower(eps)
    cols = np.arange(m)
    hi_idx = np.argmax(Q, axis=0)
    lo_idx = np.argmin(Q, axis=0)
    qmax = Q[hi_idx, cols]
    qmin = Q[lo_idx, cols]
    d = float(delta)
    with np.errstate(over="ignore", invalid="ignore"):
        e_f = math.exp(min(eps, _EXP_CAP))
        tally.slack(float(np.min(e_f * (s + d) - qmax)))
        tally.slack(float(np.min(e_f * qmin + d - s)))
        # upper: qmax <= e^eps (s + delta); s + delta has relative error <= rel_s
        doubt1 = (qmax != 0) & (_doubtful(qmax * (1 + _REL), e_lo * (s + d) * (1 - rel_s), qmax) | ~s_ok)
        # lower: s - delta <= e^eps qmin. The difference may cancel: bound it from above by
        # (s (1 + rel) - delta (1 - rel)) plus the rounding of that subtraction
        s_hi = s * (1 + rel_s)
        d_lo = d * (1 - 4 * _U)
        A_hi = (s_hi - d_lo) + 4 * _U * (s_hi + d_lo)
        doubt2 = _doubtful(A_hi, e_lo * qmin * (1 - 4 * _U), qmin) | ~s_ok
        if d and not _is_normal(np.array([d]))[0]:
            doubt1 |= qmax != 0
            doubt2[:] = True
    need = np.flatnonzero(doubt1 | doubt2)
    for y in need:
        y = int(y)
        s_x = _exact_dot(prior, Q[:, y])
        with localcontext() as ctx:
            _exact_context(ctx)
            upper_rhs = s_x + _dec(delta_x) if delta else s_x
            lower_lhs = s_x - _dec(delta_x) if delta else s_x
        if doubt1[y] and not _leq_scaled(float(qmax[y]), upper_rhs, eps_x):
            x = int(hi_idx[y])
            tally.fail(f"column {y}: Q[{x}][{y}] = {float(qmax[y])!r} > e^{eps!r} * (P.q + delta) = "
                       f"{float(e_f * (s[y] + d))!r}{prior_label}")
            return
        if doubt2[y] and lower_lhs > 0 and not _leq_scaled(lower_lhs, float(qmin[y]), eps_x):
            x = int(lo_idx[y])
            tally.fail(f"column {y}: P.q - delta = {float(lower_lhs)!r} > e^{eps!r} * Q[{x}][{y}] = "
                       f"{float(qmin[y])!r}{prior_label}")
            return


def _box_extreme_priors(q: np.ndarray, lower: Sequence[float], upper: Sequence[float]) -> tuple[list, list]:
    """Priors in ``{lower <= P <= upper, sum P = 1}`` minimising and maximising ``P·q``, exactly.

    A continuous knapsack: start from ``lower`` and give the remaining mass to the inputs
    with the smallest (largest) ``q`` first. Floats order like their decimals, so the
    order is exact; the masses are computed in exact rational arithmetic.
    """
    lo = [exact(v) for v in lower]
    hi = [exact(v) for v in upper]
    rest0 = 1 - sum(lo, Fraction(0))
    out = []
    for order in (np.argsort(q, kind="stable"), np.argsort(-q, kind="stable")):
        P = list(lo)
        rest = rest0
        for i in order:
            if rest <= 0:
                break
            add = min(hi[i] - lo[i], rest)
            P[i] += add
            rest -= add
        out.append(P)
    return out[0], out[1]


def _check_bp_lip_box(Q: np.ndarray, notion, tally: _Tally) -> None:
    """ε-LIP for every prior of a box ``lower <= P <= upper`` (intersected with the simplex).

    ``q[x] <= e^ε P·q`` for every P iff it holds at the P minimising ``P·q``, and
    ``P·q <= e^ε q[x]`` iff it holds at the P maximising it: two exact knapsacks per
    column instead of every vertex of the box.
    """
    k, m = Q.shape
    # the extreme priors depend on the column's order only; group columns by it is not
    # worth it here: one knapsack per column, then the LIP check on that column
    for y in range(m):
        q = Q[:, y]
        P_min, P_max = _box_extreme_priors(q, notion.lower, notion.upper)
        sub = _Tally()
        qcol = Q[:, [y]]
        # upper inequality with P_min, lower with P_max (each a valid LIP check for its prior)
        _check_lip_one_side(qcol, P_min, notion.epsilon, sub, upper=True)
        _check_lip_one_side(qcol, P_max, notion.epsilon, sub, upper=False)
        tally.slack(sub.worst)
        if not sub.ok:
            tally.fail(sub.detail.replace("column 0", f"column {y}") + " (for a prior of the box)")
            return


def _check_lip_one_side(qcol: np.ndarray, P: Sequence[Fraction], eps: float, tally: _Tally, *, upper: bool) -> None:
    """One side of the ε-LIP condition (δ = 0) on a single column, exactly."""
    sub = _Tally()
    _check_lip(qcol, P, eps, 0.0, sub)
    if sub.ok:
        tally.slack(sub.worst)
        return
    # _check_lip tested both sides; decide the wanted side alone, exactly
    eps_x = exact(eps)
    q = qcol[:, 0]
    s_x = _exact_dot(P, q)
    if upper:
        x = int(np.argmax(q))
        if q[x] != 0 and not _leq_scaled(float(q[x]), s_x, eps_x):
            tally.fail(f"column 0: Q[{x}][0] = {float(q[x])!r} > e^{eps!r} * P.q")
    else:
        x = int(np.argmin(q))
        if s_x > 0 and not _leq_scaled(s_x, float(q[x]), eps_x):
            tally.fail(f"column 0: P.q = {float(s_x)!r} > e^{eps!r} * Q[{x}][0] = {float(q[x])!r}")


# -- per notion --------------------------------------------------------------------


def _uldp_protected(Q: np.ndarray, sensitive: Sequence[int]) -> list[int]:
    """Columns that must be protected: all but those with one non-zero entry, at a non-sensitive input.

    A deliberate second copy of the ULDP role rule (its home is
    :func:`mechopt.notions.uldp_roles`): the verifier shares no code with the notions'
    constraint building. ``tests/test_notions.py`` checks the two agree.
    """
    sens = set(int(s) for s in sensitive)
    nz_count = (Q != 0).sum(axis=0)
    first = np.argmax(Q != 0, axis=0)
    return [y for y in range(Q.shape[1]) if not (nz_count[y] == 1 and int(first[y]) not in sens)]


def _check_ldp(Q, notion, tally):
    idx = list(range(Q.shape[0]))
    _check_groups(Q, [(idx, idx, notion.epsilon)], range(Q.shape[1]), tally)


def _check_block(Q, notion, tally):
    _check_groups(Q, [(list(b), list(b), notion.epsilon) for b in notion.blocks if len(b) > 1], range(Q.shape[1]),
                  tally)


def _check_high_low(Q, notion, tally):
    idx = list(range(Q.shape[0]))
    _check_groups(Q, [(list(notion.sensitive), idx, notion.epsilon)], range(Q.shape[1]), tally)


def _check_uldp(Q, notion, tally):
    idx = list(range(Q.shape[0]))
    _check_groups(Q, [(idx, idx, notion.epsilon)], _uldp_protected(Q, notion.sensitive), tally)


def _check_eldp(Q, notion, tally):
    _check_pairs(Q, np.asarray(notion.matrix, dtype=float), tally)


def _check_metric(Q, notion, tally):
    if notion.edges is not None:
        _check_metric_edges(Q, notion, tally)
    else:
        _check_pairs_scaled(Q, np.asarray(notion.distance, dtype=float), notion.epsilon, tally)


def _check_lip_notion(Q, notion, tally):
    _check_lip(Q, np.asarray(notion.prior, dtype=float), notion.epsilon, notion.delta, tally)


def _check_bp_lip(Q, notion, tally):
    if notion.lower is not None:
        _check_bp_lip_box(Q, notion, tally)
    else:
        for i, P in enumerate(notion.priors):
            _check_lip(Q, np.asarray(P, dtype=float), notion.epsilon, 0.0, tally, f" (prior {i})")
            if not tally.ok:
                return


def _exact_checker(kernel: Callable[[np.ndarray, Any, _Tally], None]):
    """A registry checker ``(Q, notion) -> (ok, detail, worst_slack)`` from a tally kernel."""

    def checker(Q: np.ndarray, notion: Any) -> tuple[bool, str, float]:
        tally = _Tally()
        kernel(Q, notion, tally)
        return tally.ok, tally.detail, tally.worst

    checker.__name__ = checker.__qualname__ = kernel.__name__.lstrip("_")
    checker.__doc__ = f"The exact check of one notion (:func:`{kernel.__name__}` on a fresh tally)."
    return checker


# the exact checkers of the built-in notions; :mod:`mechopt.notions` registers each with its
# class (``register_notion(cls, checker=...)``), like any notion defined elsewhere
check_ldp = _exact_checker(_check_ldp)
check_block = _exact_checker(_check_block)
check_high_low = _exact_checker(_check_high_low)
check_uldp = _exact_checker(_check_uldp)
check_eldp = _exact_checker(_check_eldp)
check_metric = _exact_checker(_check_metric)
check_lip_notion = _exact_checker(_check_lip_notion)
check_bp_lip = _exact_checker(_check_bp_lip)


def check_notion(matrix: Any, notion) -> Check:
    """Exactly check one bound notion on a matrix; see :func:`verify`."""
    Q = as_matrix(matrix)
    k, m = Q.shape
    name = notion.name
    tally = _Tally()
    if notion.k is not None and notion.k != k:
        raise InputError("matrix", f"has {k} rows but notion {name!r} is over {notion.k} inputs")
    # every notion, built-in or not, brings its exact checker through the registry
    from .notions._registry import REGISTRY

    entry = REGISTRY.get(name)
    if entry is None or entry.checker is None or not isinstance(notion, entry.cls):
        raise InputError("notion", f"no exact check for notion {name!r}")
    if np.any(Q < 0):
        # the notions are stated for channels; negative entries fail the row check anyway
        # and would void the enclosures' sign assumptions: decide on the clipped matrix
        # nothing (the certificate already fails on rows)
        tally.fail("the matrix has negative entries")
    else:
        # a checker returns (ok, detail) or (ok, detail, worst_slack)
        ok, detail, *slack = entry.checker(Q, notion)
        if not ok:
            tally.fail(detail or "the notion's exact check failed")
        for value in slack:
            tally.slack(float(value))
    achieved = notion.achieved(Q)
    return Check(name, float(notion.budget), float(achieved), float(tally.worst) if math.isfinite(tally.worst) else 0.0,
                 tally.ok, tally.detail)


def verify(matrix: Any, notions: Sequence[Any]) -> Certificate:
    """Exactly verify a channel against every notion (SPEC §4).

    Parameters
    ----------
    matrix : array_like, shape (k, m)
        The channel, rows = inputs. Entries are read as the exact decimals their
        floats print as.
    notions : sequence of Notion
        Bound notions (see :func:`mechopt.load_problem` or ``Notion.bind``). At least
        one: a channel with no privacy claim is not "verified".

    Returns
    -------
    Certificate
        ``verified`` is True iff there is at least one notion, every entry is >= 0, every
        row sums to 1 within 1e-12 (exactly computed), and every notion holds exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from mechopt import LDP
    >>> e = np.exp(1.0)
    >>> Q = np.array([[e, 1.0], [1.0, e]]) / (1 + e)
    >>> verify(Q, [LDP(1.0)]).verified     # the float ratio sits 4e-16 above e
    False
    >>> verify(Q, [LDP(1.0 + 1e-12)]).verified
    True
    """
    Q = as_matrix(matrix)
    rows_ok, detail = check_rows(Q)
    checks = tuple(check_notion(Q, n) for n in notions)
    ok = rows_ok and all(c.ok for c in checks) and len(checks) > 0
    if not detail:
        bad = [c for c in checks if not c.ok]
        if bad:
            detail = f"{bad[0].notion}: {bad[0].detail}"
        elif not checks:
            detail = "no privacy claim to verify (a mechanism must claim at least one notion)"
    return Certificate(ok, rows_ok, checks, "exact", detail)
