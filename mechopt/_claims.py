"""Exact check of a mechanism file's privacy claims, with the standard library only.

The client (:mod:`mechopt.client`) runs on devices that may have no numpy, yet it must not
privatize anything with a file whose matrix breaks its own claims (a re-hashed file with
an identity matrix claiming LDP would print the true labels). So it carries this second,
deliberately separate, exact verifier of the notions of ``docs/model.md``: the same
definitions as :mod:`mechopt._verify`, decided the same way (extreme entries found by
ordering, a certified float enclosure that can only *prove* an inequality, exact rational
arithmetic for everything else), written on plain lists. ``tests/test_claims.py`` checks
that the two verifiers agree on random channels, notions and boundary cases.

Examples
--------
>>> doc = {"inputs": ["a", "b"], "outputs": ["a", "b"], "matrix": [[0.7, 0.3], [0.3, 0.7]],
...        "privacy": [{"notion": "ldp", "epsilon": 1.0}]}
>>> check_claims(doc)   # ln(0.7/0.3) = 0.85 <= 1
>>> doc["privacy"] = [{"notion": "ldp", "epsilon": 0.5}]
>>> check_claims(doc)
Traceback (most recent call last):
...
mechopt._errors.VerificationError: privacy[0] (ldp): column 0: Q[a][0] = 0.7 > e^0.5 * Q[b][0] = 0.3
"""

from __future__ import annotations

import math
from decimal import Decimal, Inexact, localcontext
from fractions import Fraction
from functools import lru_cache
from typing import Any, Sequence

from mechopt._errors import InputError, VerificationError

_U = 2.0**-53
_NORMAL = 1e-290
_REL = 8 * _U


def _frac(v: Any) -> Fraction:
    if isinstance(v, str):
        if v.strip().lower() in ("inf", "infinity"):
            return Fraction(10) ** 400  # never used as a budget: callers skip inf first
        raise InputError("privacy", f"expected a number, got {v!r}")
    return Fraction(repr(float(v)))


@lru_cache(maxsize=4096)
def _exp_lo(x: Fraction) -> Fraction:
    """A rational ``<= e^x`` (60 significant digits; e^10000 beyond 10 000)."""
    if x == 0:
        return Fraction(1)
    x = min(x, Fraction(10_000))
    with localcontext() as ctx:
        ctx.prec = 70
        d = Decimal(x.numerator) / Decimal(x.denominator)
        arg_exact = not ctx.flags[Inexact]
        ctx.prec = 60
        e = d.exp()
        ulp = Decimal(10) ** (e.adjusted() - 59)
    slack = 3 * ulp if arg_exact else 3 * ulp + abs(e) * Decimal(10) ** -60
    return Fraction(e - slack)


@lru_cache(maxsize=65536)
def _exp_lo_float(eps: float) -> float:
    x = min(float(eps), 700.0)
    return math.exp(x) * (1.0 - (abs(x) + 8) * _U)


def _normal(v: float) -> bool:
    return v == 0 or (abs(v) >= _NORMAL and math.isfinite(v))


def _leq(a: Any, b: Any, eps: Fraction, eps_f: float) -> bool:
    """Exactly ``a <= e^eps b`` for ``a, b >= 0`` (floats read as their decimals, or Fractions)."""
    if isinstance(a, float) and isinstance(b, float):
        if a == 0:
            return True
        if _normal(a) and _normal(b) and a * (1 + _REL) <= _exp_lo_float(eps_f) * b * (1 - _REL):
            return True
    fa = a if isinstance(a, Fraction) else _frac(a)
    fb = b if isinstance(b, Fraction) else _frac(b)
    if fa <= 0:
        return True
    return fa <= _exp_lo(eps) * fb


def _indices(items: Any, inputs: Sequence[str], where: str) -> list[int]:
    pos = {lab: i for i, lab in enumerate(inputs)}
    out = []
    for it in items:
        if isinstance(it, str) and it in pos:
            out.append(pos[it])
        elif isinstance(it, int) and not isinstance(it, bool) and 0 <= it < len(inputs) and str(it) not in pos:
            out.append(it)
        elif isinstance(it, int) and str(it) in pos:
            out.append(pos[str(it)])
        else:
            raise InputError(where, f"{it!r} is not an input label")
    return out


class _Fail(Exception):
    pass


def _groups(cols: list[list[float]], upper: list[int], lower: list[int], eps: Any, label) -> None:
    if not upper or not lower:
        return
    e = _frac(eps)
    ef = float(eps)
    for y, col in enumerate(cols):
        a_i = max(upper, key=lambda i: col[i])
        b_i = min(lower, key=lambda i: col[i])
        if not _leq(col[a_i], col[b_i], e, ef):
            raise _Fail(f"column {y}: Q[{label(a_i)}][{y}] = {col[a_i]!r} > e^{eps!r} * Q[{label(b_i)}][{y}] = "
                        f"{col[b_i]!r}")


def _pairs(rows: list[list[float]], pairs: list[tuple[int, int, Any, float]], label) -> None:
    """``q[x] <= e^b q[x']`` on every column, for each listed pair.

    A pair is ``(x, x', budget, lower float of the budget)``; ``budget`` is a float (read as
    its decimal) or an exact Fraction, turned into an exact number only when needed.
    """
    # the row's largest entry (inflated) and the other row's smallest (deflated), where
    # relative error bounds hold (normal numbers); None where they do not
    hi = [max(r) * (1 + _REL) if _normal(max(r)) else None for r in rows]
    lo = [min(r) * (1 - _REL) if (min(r) > 0 and _normal(min(r))) else None for r in rows]
    zero = [max(r) == 0 for r in rows]
    for x, xp, b, bf in pairs:
        if zero[x]:
            continue
        if hi[x] is not None and lo[xp] is not None and hi[x] <= _exp_lo_float(bf) * lo[xp]:
            continue  # the row's largest entry below e^b times the other's smallest
        be = b if isinstance(b, Fraction) else _frac(b)
        for y, (qa, qb) in enumerate(zip(rows[x], rows[xp])):
            if not _leq(qa, qb, be, bf):
                raise _Fail(f"column {y}: Q[{label(x)}][{y}] = {qa!r} > e^{bf!r} * Q[{label(xp)}][{y}] = {qb!r}")


def _lip(cols: list[list[float]], prior: list[Fraction], eps: Any, delta: Any, label, *, upper: bool = True,
         lower: bool = True, first: int = 0) -> None:
    e = _frac(eps)
    ef = float(eps)
    d = _frac(delta) if delta else Fraction(0)
    pf = [float(p) for p in prior]
    k = len(prior)
    for y, col in enumerate(cols, start=first):
        a_i = max(range(k), key=lambda i: col[i])
        b_i = min(range(k), key=lambda i: col[i])
        s_f = math.fsum(p * q for p, q in zip(pf, col))
        s = None
        # upper: max q <= e^eps (P.q + delta); lower: P.q - delta <= e^eps min q
        rel = (k + 8) * _U
        ok1 = not upper or col[a_i] == 0 or (all(_normal(v) for v in (col[a_i], s_f)) and s_f > 0 and
                                col[a_i] * (1 + _REL) <= _exp_lo_float(ef) * (s_f + float(d)) * (1 - rel))
        if not ok1:
            s = sum((p * _frac(q) for p, q in zip(prior, col) if p and q), Fraction(0))
            if not _leq(_frac(col[a_i]), s + d, e, ef):
                raise _Fail(f"column {y}: Q[{label(a_i)}][{y}] = {col[a_i]!r} > e^{eps!r} * (P.q + delta)")
        if not lower:
            continue
        if s is None:
            s = sum((p * _frac(q) for p, q in zip(prior, col) if p and q), Fraction(0))
        if s - d > 0 and not _leq(s - d, _frac(col[b_i]), e, ef):
            raise _Fail(f"column {y}: P.q - delta > e^{eps!r} * Q[{label(b_i)}][{y}] = {col[b_i]!r}")


def _box_extremes(col: list[float], lower: list[Fraction], upper: list[Fraction]) -> tuple[list, list]:
    rest0 = 1 - sum(lower, Fraction(0))
    out = []
    for rev in (False, True):
        P = list(lower)
        rest = rest0
        for i in sorted(range(len(col)), key=lambda i: col[i], reverse=rev):
            if rest <= 0:
                break
            add = min(upper[i] - lower[i], rest)
            P[i] += add
            rest -= add
        out.append(P)
    return out[0], out[1]


def _check_one(spec: dict, rows: list[list[float]], cols: list[list[float]], inputs: Sequence[str], i: int) -> None:
    kind = spec.get("notion")
    k = len(inputs)
    where = f"privacy[{i}]"

    def label(x: int) -> str:
        return inputs[x]

    allx = list(range(k))
    if kind in ("ldp", "wc_lip"):
        _groups(cols, allx, allx, spec["epsilon"], label)
    elif kind == "block":
        for b in spec["blocks"]:
            idx = _indices(b, inputs, f"{where}.blocks")
            _groups(cols, idx, idx, spec["epsilon"], label)
    elif kind == "high_low":
        _groups(cols, _indices(spec["sensitive"], inputs, f"{where}.sensitive"), allx, spec["epsilon"], label)
    elif kind == "uldp":
        sens = set(_indices(spec["sensitive"], inputs, f"{where}.sensitive"))
        prot = []
        for col in cols:
            nz = [x for x in allx if col[x] != 0]
            if not (len(nz) == 1 and nz[0] not in sens):
                prot.append(col)
        _groups(prot, allx, allx, spec["epsilon"], label)
    elif kind == "eldp":
        pairs = []
        for x, row in enumerate(spec["matrix"]):
            for xp, v in enumerate(row):
                if x != xp and not isinstance(v, str) and not math.isinf(v):
                    pairs.append((x, xp, v, float(v)))
        _pairs(rows, pairs, label)
    elif kind == "metric":
        eps = _frac(spec["epsilon"])
        pairs = []
        if "edges" in spec:
            for e in spec["edges"]:
                a, b = _indices(e[:2], inputs, f"{where}.edges")
                w = e[2] if len(e) > 2 else 1.0
                if a != b:
                    budget = eps * _frac(w)
                    lo = float(budget) * (1 - 4 * _U)
                    pairs += [(a, b, budget, lo), (b, a, budget, lo)]
        else:
            for x, row in enumerate(spec["distance"]):
                for xp, v in enumerate(row):
                    if x != xp and not (isinstance(v, str) or math.isinf(float(v))):
                        budget = eps * _frac(v)
                        pairs.append((x, xp, budget, float(budget) * (1 - 4 * _U)))
        _pairs(rows, pairs, label)
    elif kind == "lip":
        _lip(cols, [_frac(p) for p in spec["prior"]], spec["epsilon"], spec.get("delta", 0), label)
    elif kind == "bp_lip":
        if "priors" in spec:
            for P in spec["priors"]:
                _lip(cols, [_frac(p) for p in P], spec["epsilon"], 0, label)
        else:
            lo = [_frac(v) for v in spec["lower"]]
            hi = [_frac(v) for v in spec["upper"]]
            # q[x] <= e^eps P.q for every P of the box iff at the P minimising P.q, and
            # P.q <= e^eps q[x] iff at the P maximising it (continuous knapsacks, exact)
            for y, col in enumerate(cols):
                P_min, P_max = _box_extremes(col, lo, hi)
                _lip([col], P_min, spec["epsilon"], 0, label, lower=False, first=y)
                _lip([col], P_max, spec["epsilon"], 0, label, upper=False, first=y)
    else:
        raise InputError(f"{where}.notion", f"unknown notion {kind!r}")


def check_claims(doc: dict) -> None:
    """Raise :class:`VerificationError` unless the matrix meets every claim in ``privacy``, exactly.

    ``doc`` is a structurally checked mechanism document (:func:`mechopt.client.check_document`).
    A document with no privacy claim is refused too: there is nothing to trust.
    """
    privacy = doc.get("privacy") or []
    if not privacy:
        raise VerificationError("privacy: the file claims no privacy notion; nothing to verify")
    rows = [[float(v) for v in row] for row in doc["matrix"]]
    if any(v < 0 for row in rows for v in row):
        raise VerificationError("matrix: has negative entries")
    cols = [list(c) for c in zip(*rows)]
    inputs = list(doc["inputs"])
    for i, spec in enumerate(privacy):
        try:
            _check_one(spec, rows, cols, inputs, i)
        except _Fail as err:
            raise VerificationError(f"privacy[{i}] ({spec.get('notion')}): {err}") from None
        except (KeyError, TypeError, ValueError) as err:
            raise InputError(f"privacy[{i}]", f"is not a well-formed {spec.get('notion')!r} claim: {err}") from None
