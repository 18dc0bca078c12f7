"""Exact verification of a channel against privacy notions (SPEC §4).

This module shares no code with the solvers. It reads every matrix entry as the exact
decimal its float prints as (``Fraction(repr(v))``), evaluates ``e^ε`` with
:mod:`decimal` at 60 significant digits and keeps a rigorous interval around it, and
decides every inequality exactly. A constraint violated by 1e-15 fails here even
though any solver tolerance would accept it.

For speed, a float filter first passes the inequalities that hold with a relative
margin of 1e-9 — far larger than every rounding involved (float conversion of a
decimal: 1.1e-16 relative; a dot product of k terms: k·1.1e-16) — and only the rest
are decided in rational arithmetic. The filter can only *pass* a constraint that
holds exactly; it never fails one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, Inexact, localcontext
from fractions import Fraction
from functools import lru_cache
from typing import Any, Iterable, Sequence

import numpy as np

from ._errors import InputError

_PREC = 60
_MARGIN = 1e-9
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
        Minimum over the notion's inequalities of ``rhs - lhs`` (negative = violated).
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


# -- exact numbers -------------------------------------------------------------


def exact(v: float) -> Fraction:
    """The exact decimal value of a float as it is written in a JSON file."""
    return Fraction(repr(float(v)))


@lru_cache(maxsize=4096)
def exp_bounds(x: Fraction) -> tuple[Fraction, Fraction]:
    """Rigorous bounds ``lo <= e^x <= hi`` (exact when e^x is rational, i.e. x = 0)."""
    if x == 0:
        return Fraction(1), Fraction(1)
    with localcontext() as ctx:
        ctx.prec = _PREC + 10
        # the argument as a Decimal interval
        d = Decimal(x.numerator) / Decimal(x.denominator)
        arg_exact = not ctx.flags[Inexact]
        ctx.clear_flags()
        ctx.prec = _PREC
        e = d.exp()
        ulp = Decimal(10) ** (e.adjusted() - _PREC + 1)
    slack = 3 * ulp if arg_exact else 3 * ulp + abs(e) * Decimal(10) ** (-_PREC)
    return Fraction(e - slack), Fraction(e + slack)


def _exact_matrix_entry_cache(Q: np.ndarray):
    cache: dict[tuple[int, int], Fraction] = {}

    def get(x: int, y: int) -> Fraction:
        key = (x, y)
        v = cache.get(key)
        if v is None:
            v = cache[key] = exact(Q[x, y])
        return v

    return get


def as_matrix(matrix: Any) -> np.ndarray:
    """Convert a list-of-lists (from JSON) to a float array, checking shape and values."""
    if isinstance(matrix, np.ndarray):
        Q = np.asarray(matrix, dtype=float)
    else:
        if not isinstance(matrix, (list, tuple)) or not matrix:
            raise InputError("matrix", "must be a non-empty list of rows")
        m = None
        for i, row in enumerate(matrix):
            if not isinstance(row, (list, tuple)):
                raise InputError(f"matrix[{i}]", f"must be a list of numbers, got {row!r}")
            if m is None:
                m = len(row)
            if len(row) != m or m == 0:
                raise InputError(f"matrix[{i}]", f"must have {m} entries like row 0 (got {len(row)})")
            for j, v in enumerate(row):
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise InputError(f"matrix[{i}][{j}]", f"must be a number, got {v!r}")
        Q = np.array(matrix, dtype=float)
    if Q.ndim != 2 or Q.size == 0:
        raise InputError("matrix", f"must be a 2-d matrix, got shape {Q.shape}")
    bad = np.argwhere(~np.isfinite(Q))
    if len(bad):
        i, j = bad[0]
        raise InputError(f"matrix[{i}][{j}]", f"must be finite, got {float(Q[i, j])!r}")
    return Q


def check_rows(Q: np.ndarray) -> tuple[bool, str]:
    """Entries >= 0 and every row sums to 1 within 1e-12, decided exactly."""
    neg = np.argwhere(Q < 0)
    if len(neg):
        i, j = neg[0]
        return False, f"matrix[{i}][{j}] = {float(Q[i, j])!r} is negative"
    for i, row in enumerate(Q):
        s = math.fsum(row)
        # fsum is exact for the binary floats; the decimals differ by <= 1.1e-16 each
        if abs(s - 1.0) <= 1e-12 - len(row) * 2.3e-16:
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


@lru_cache(maxsize=4096)
def _exp_bounds_dec(x: Fraction) -> tuple[Decimal, Decimal]:
    lo, hi = exp_bounds(x)
    with localcontext() as ctx:
        ctx.prec = 2 * _PREC
        # lo/hi have at most ~70 significant digits: exact at this precision
        return (Decimal(lo.numerator) / Decimal(lo.denominator), Decimal(hi.numerator) / Decimal(hi.denominator))


def _dec(v: float) -> Decimal:
    return Decimal(repr(float(v)))


def _leq_scaled(a, b, eps: Fraction) -> bool:
    """Exactly decide ``a <= e^eps * b`` for ``b >= 0``.

    ``a`` and ``b`` are floats (read as the decimals they print as) or Fractions.
    Floats go through :mod:`decimal` at 160 digits, where the product of a 70-digit
    bound and a 17-digit entry is exact; Fractions through rational arithmetic.
    A value inside the ~1e-58 interval around ``e^eps`` is not provable: refused.
    """
    if isinstance(a, Fraction) or isinstance(b, Fraction):
        lo, hi = exp_bounds(eps)
        a, b = Fraction(a) if not isinstance(a, Fraction) else a, Fraction(b) if not isinstance(b, Fraction) else b
        if a <= lo * b:
            return True
        return False
    lo_d, _hi_d = _exp_bounds_dec(eps)
    with localcontext() as ctx:
        ctx.prec = 160
        return _dec(a) <= lo_d * _dec(b)


def _check_groups(Q: np.ndarray, groups: Iterable[tuple[Sequence[int], Sequence[int], float]],
                  cols: Sequence[int], tally: _Tally) -> None:
    """``max_{x in U} q[x] <= e^eps min_{x in L} q[x]`` for every listed column."""
    for upper, lower, eps in groups:
        upper = np.asarray(upper, dtype=int)
        lower = np.asarray(lower, dtype=int)
        if len(upper) == 0 or len(lower) == 0:
            continue
        eps_x = exact(eps)
        e_f = math.exp(eps)
        sub_u = Q[np.ix_(upper, cols)]
        sub_l = Q[np.ix_(lower, cols)]
        hi_idx = np.argmax(sub_u, axis=0)
        lo_idx = np.argmin(sub_l, axis=0)
        for j, y in enumerate(cols):
            a = sub_u[hi_idx[j], j]
            b = sub_l[lo_idx[j], j]
            tally.slack(e_f * b - a)
            if a == 0:
                continue
            if a <= e_f * b * (1 - _MARGIN):
                continue
            if not _leq_scaled(float(a), float(b), eps_x):
                tally.fail(f"column {y}: Q[{upper[hi_idx[j]]}][{y}] = {float(a)!r} > e^{eps!r} * "
                           f"Q[{lower[lo_idx[j]]}][{y}] = {float(b)!r}")


def _check_pairs(Q: np.ndarray, E: np.ndarray, tally: _Tally) -> None:
    """``q[x] <= e^{E[x,x']} q[x']`` for every finite off-diagonal pair and column."""
    k, m = Q.shape
    finite = np.isfinite(E) & ~np.eye(k, dtype=bool)
    if not finite.any():
        return
    with np.errstate(over="ignore"):
        expE = np.where(finite, np.exp(np.where(finite, E, 0.0)), np.inf)
    xs, xps = np.nonzero(finite)
    ex = expE[xs, xps]
    for y in range(m):
        q = Q[:, y]
        a = q[xs]
        b = q[xps]
        rhs = ex * b
        sl = rhs - a
        if sl.size:
            tally.slack(float(np.min(sl)))
        doubt = (a > 0) & ~(a <= rhs * (1 - _MARGIN))
        for t in np.flatnonzero(doubt):
            x, xp = int(xs[t]), int(xps[t])
            if not _leq_scaled(float(a[t]), float(b[t]), exact(E[x, xp])):
                tally.fail(f"column {y}: Q[{x}][{y}] = {float(a[t])!r} > e^{E[x, xp]!r} * Q[{xp}][{y}] = {float(b[t])!r}")
                return


def _check_lip(Q: np.ndarray, prior: np.ndarray, eps: float, delta: float, tally: _Tally) -> None:
    """``e^-eps q[x] - delta <= P.q <= e^eps q[x] + delta`` for all x and columns."""
    k, m = Q.shape
    e_f = math.exp(eps)
    eps_x = exact(eps)
    delta_x = exact(delta)
    P = np.asarray(prior, dtype=float)
    s = P @ Q
    for y in range(m):
        q = Q[:, y]
        # upper: q[x] <= e^eps (s + delta)
        rhs1 = e_f * (s[y] + delta)
        lhs2 = s[y] - delta
        rhs2 = e_f * q
        tally.slack(float(np.min(rhs1 - q)))
        tally.slack(float(np.min(rhs2 - lhs2)))
        d1 = (q > 0) & ~(q <= rhs1 * (1 - _MARGIN))
        d2 = ~((lhs2 <= 0) | (lhs2 * (1 + _MARGIN) <= rhs2 * (1 - _MARGIN)))
        if not (d1.any() or d2.any()):
            continue
        s_x = sum((exact(P[i]) * exact(q[i]) for i in range(k) if P[i] != 0 and q[i] != 0), Fraction(0))
        for x in np.flatnonzero(d1):
            if not _leq_scaled(exact(q[x]), s_x + delta_x, eps_x):
                tally.fail(f"column {y}: Q[{x}][{y}] = {float(q[x])!r} > e^{eps!r} * (P.q + delta) = {float(rhs1)!r}")
                return
        for x in np.flatnonzero(d2):
            # s - delta <= e^eps q[x] + ... (the delta is already on the left)
            if not _leq_scaled(s_x - delta_x, exact(q[x]), eps_x):
                tally.fail(f"column {y}: P.q - delta = {float(lhs2)!r} > e^{eps!r} * Q[{x}][{y}] = {float(q[x])!r}")
                return


def _box_vertices_exact(lower: Sequence[float], upper: Sequence[float]) -> list[list[Fraction]]:
    import itertools

    lo = [exact(v) for v in lower]
    hi = [exact(v) for v in upper]
    k = len(lo)
    out = set()
    for j in range(k):
        others = [i for i in range(k) if i != j]
        for bits in itertools.product((0, 1), repeat=k - 1):
            P = [Fraction(0)] * k
            for i, bit in zip(others, bits):
                P[i] = hi[i] if bit else lo[i]
            P[j] = 1 - sum(P[i] for i in others)
            if lo[j] <= P[j] <= hi[j]:
                out.add(tuple(P))
    return [list(p) for p in sorted(out)]


def _check_lip_exact_prior(Q: np.ndarray, P: list[Fraction], eps: float, tally: _Tally) -> None:
    """LIP check for a prior given as exact fractions (vertices of a box)."""
    Pf = np.array([float(p) for p in P])
    k, m = Q.shape
    e_f = math.exp(eps)
    eps_x = exact(eps)
    s = Pf @ Q
    for y in range(m):
        q = Q[:, y]
        tally.slack(float(np.min(e_f * s[y] - q)))
        tally.slack(float(np.min(e_f * q - s[y])))
        d1 = (q > 0) & ~(q <= e_f * s[y] * (1 - _MARGIN))
        d2 = ~((s[y] <= 0) | (s[y] * (1 + _MARGIN) <= e_f * q * (1 - _MARGIN)))
        if not (d1.any() or d2.any()):
            continue
        s_x = sum((P[i] * exact(q[i]) for i in range(k) if P[i] != 0 and q[i] != 0), Fraction(0))
        for x in np.flatnonzero(d1):
            if not _leq_scaled(exact(q[x]), s_x, eps_x):
                tally.fail(f"column {y}: Q[{x}][{y}] > e^{eps!r} * P.q for prior {Pf.tolist()!r}")
                return
        for x in np.flatnonzero(d2):
            if not _leq_scaled(s_x, exact(q[x]), eps_x):
                tally.fail(f"column {y}: P.q > e^{eps!r} * Q[{x}][{y}] for prior {Pf.tolist()!r}")
                return


# -- per notion --------------------------------------------------------------------


def check_notion(matrix: Any, notion) -> Check:
    """Exactly check one bound notion on a matrix; see :func:`verify`."""
    Q = as_matrix(matrix)
    k, m = Q.shape
    name = notion.name
    tally = _Tally()
    all_cols = list(range(m))
    idx = list(range(k))
    if notion.k is not None and notion.k != k:
        raise InputError("matrix", f"has {k} rows but notion {name!r} is over {notion.k} inputs")
    if name in ("ldp", "wc_lip"):
        _check_groups(Q, [(idx, idx, notion.epsilon)], all_cols, tally)
    elif name == "block":
        _check_groups(Q, [(list(b), list(b), notion.epsilon) for b in notion.blocks if len(b) > 1], all_cols, tally)
    elif name == "high_low":
        _check_groups(Q, [(list(notion.sensitive), idx, notion.epsilon)], all_cols, tally)
    elif name == "uldp":
        sens = set(notion.sensitive)
        protected = []
        for y in range(m):
            nz = np.flatnonzero(Q[:, y] > 0)
            if not (len(nz) == 1 and int(nz[0]) not in sens):
                protected.append(y)
        _check_groups(Q, [(idx, idx, notion.epsilon)], protected, tally)
    elif name == "eldp":
        _check_pairs(Q, np.asarray(notion.matrix, dtype=float), tally)
    elif name == "metric":
        if notion.edges is not None:
            _check_metric_edges(Q, notion, tally)
        else:
            D = np.asarray(notion.distance, dtype=float)
            _check_pairs_scaled(Q, D, notion.epsilon, tally)
    elif name == "lip":
        _check_lip(Q, np.asarray(notion.prior), notion.epsilon, notion.delta, tally)
    elif name == "bp_lip":
        if notion.lower is not None and k <= 16:
            for P in _box_vertices_exact(notion.lower, notion.upper):
                _check_lip_exact_prior(Q, P, notion.epsilon, tally)
        else:
            for P in notion.priors:
                _check_lip(Q, np.asarray(P), notion.epsilon, 0.0, tally)
    else:  # pragma: no cover - every notion is handled above
        raise InputError("notion", f"no exact check for notion {name!r}")
    achieved = notion.achieved(Q)
    return Check(name, float(notion.budget), float(achieved), float(tally.worst) if math.isfinite(tally.worst) else 0.0,
                 tally.ok, tally.detail)


def _check_metric_edges(Q: np.ndarray, notion, tally: _Tally) -> None:
    """Metric privacy needs only the edges: a path of edge constraints implies the pair."""
    k, m = Q.shape
    for a, b, w in notion.edges:
        if a == b:
            continue
        arg = exact(notion.epsilon) * exact(w)
        e_f = math.exp(float(arg))
        for x, xp in ((a, b), (b, a)):
            qa, qb = Q[x], Q[xp]
            sl = e_f * qb - qa
            tally.slack(float(np.min(sl)))
            doubt = (qa > 0) & ~(qa <= e_f * qb * (1 - _MARGIN))
            for y in np.flatnonzero(doubt):
                if not _leq_scaled(float(qa[y]), float(qb[y]), arg):
                    tally.fail(f"column {y}: Q[{x}][{y}] = {float(qa[y])!r} > e^(eps*{w!r}) * Q[{xp}][{y}]")
                    return


def _check_pairs_scaled(Q: np.ndarray, D: np.ndarray, eps: float, tally: _Tally) -> None:
    k, m = Q.shape
    for x in range(k):
        for xp in range(k):
            if x == xp or not math.isfinite(D[x, xp]):
                continue
            arg = exact(eps) * exact(D[x, xp])
            e_f = math.exp(float(arg))
            qa, qb = Q[x], Q[xp]
            tally.slack(float(np.min(e_f * qb - qa)))
            doubt = (qa > 0) & ~(qa <= e_f * qb * (1 - _MARGIN))
            for y in np.flatnonzero(doubt):
                if not _leq_scaled(float(qa[y]), float(qb[y]), arg):
                    tally.fail(f"column {y}: Q[{x}][{y}] > e^(eps*d) * Q[{xp}][{y}]")
                    return


def verify(matrix: Any, notions: Sequence[Any]) -> Certificate:
    """Exactly verify a channel against every notion (SPEC §4).

    Parameters
    ----------
    matrix : array_like, shape (k, m)
        The channel, rows = inputs. Entries are read as the exact decimals their
        floats print as.
    notions : sequence of Notion
        Bound notions (see :func:`mechopt.load_problem` or ``Notion.bind``).

    Returns
    -------
    Certificate
        ``verified`` is True iff every entry is >= 0, every row sums to 1 within
        1e-12 (exactly computed), and every notion holds exactly.

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
    ok = rows_ok and all(c.ok for c in checks)
    if not detail:
        bad = [c for c in checks if not c.ok]
        if bad:
            detail = f"{bad[0].notion}: {bad[0].detail}"
    return Certificate(ok, rows_ok, checks, "exact", detail)
