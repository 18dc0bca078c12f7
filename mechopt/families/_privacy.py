"""Exact privacy verification of a family from its parameters (SPEC §4).

A family's outputs are never listed, so its privacy is decided from closed forms of its
worst cases, in exact arithmetic: ``ratio`` and every budget are exact decimals
(``Fraction(repr(v))``) and ``e^ε`` is bounded below by
:func:`mechopt._claims._exp_lo` (60 significant digits, standard library); a claim inside that bracket is refused, never accepted.

Worst cases (``r`` = the family's ratio, ``>= 1``):

* **E-LDP family** (ldp, wc_lip, block, high_low, eldp, metric): row ``x`` of the
  privacy matrix asks ``q[x] <= e^{E[x,x']} q[x']`` for every output. In a d-subset
  column (``1 <= d <= k-1``) the ratio ``q[x]/q[x']`` is ``r`` when ``x ∈ S ∌ x'``, and
  such a column exists for every pair, so the family holds iff ``r <= e^{b_x}`` for
  every input ``x`` with a finite budget, ``b_x = min_{x'} E[x,x']``. Hadamard response:
  the same for sensitive ``x`` (two distinct Hadamard rows differ on a slot, and a
  non-sensitive row is low on every slot); a non-sensitive ``x`` has a direct output
  no other input reaches, so it must have no finite budget at all (``r > 1``).
* **ULDP** (001 Def. 2): subset columns have no zero, so all are protected: ``r <= e^ε``.
  Hadamard: slot columns are protected (``r <= e^ε``); a direct output of ``x`` is
  invertible only if ``x`` is not sensitive under the ULDP claim.
* **LIP / BP-LIP** (δ = 0): in a d-subset column ``P·q ∝ 1 + (r-1) P(S)``; the
  conditions reduce to ``r <= e^ε (1 + (r-1) min_{|S|=d} P(S))`` and
  ``1 + (r-1) max_{|S|=d} P(S) <= e^ε`` — the ``d`` smallest and ``d`` largest prior
  entries. Hadamard: the same two inequalities per slot column with ``P(S)`` the prior
  mass of the slot's +1 sensitive inputs; a direct column always fails (``r > 1``).
  A BP-LIP box: for a fixed set ``T``, ``P(T)`` ranges over
  ``[max(lower(T), 1 - upper(not T)), min(upper(T), 1 - lower(not T))]`` exactly, which
  decides the Hadamard response exactly; for subset selection the extremes over all
  d-sets are bounded (:func:`_box_masses`), so a refusal there may be conservative.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Callable, Sequence

from .._claims import _exp_lo
from .._errors import InputError
from ._spec import HadamardFamily, SubsetMixture

if TYPE_CHECKING:  # numpy-side types; this module itself is standard library only
    from .._verify import Certificate


def exact(v: float) -> Fraction:
    """The exact decimal a JSON number is read as (``repr(float(v))``, as :func:`mechopt._exact.exact`)."""
    return Fraction(repr(float(v)))


def _exp_low(eps: Fraction) -> Fraction:
    """A rational ``<= e^eps`` within ~1e-58 relative (the client's 60-digit bound)."""
    return _exp_lo(eps)


def _float(x: Fraction) -> float:
    """``float(x)``, or ``±inf`` beyond float range (a slack e^eps - r at eps = 1e300 is only reported)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _exp_float(x: float) -> float:
    """``math.exp(x)``, or ``inf`` beyond float range."""
    return math.exp(x) if x < 709.0 else math.inf


def _leq_exp(a: Fraction, eps: Fraction) -> bool:
    """Exactly decide ``a <= e^eps`` (refuses a value inside the 1e-58 bracket)."""
    return a <= _exp_low(eps)


def row_budgets(notion, k: int) -> list[Fraction | None] | None:
    """``b_x = min_{x' != x} E[x, x']`` as exact Fractions (None: no finite budget), or None if not E-LDP-like."""
    name = notion.name
    if name in ("ldp", "wc_lip"):
        e = exact(notion.epsilon)
        return [e if k > 1 else None] * k
    if name == "block":
        e = exact(notion.epsilon)
        out: list[Fraction | None] = [None] * k
        for b in notion.blocks:
            if len(b) > 1:
                for x in b:
                    out[x] = e
        return out
    if name == "high_low":
        e = exact(notion.epsilon)
        out = [None] * k
        for a in notion.sensitive:
            out[a] = e if k > 1 else None
        return out
    if name == "eldp":
        out = []
        for x, row in enumerate(notion.matrix):
            vals = [exact(v) for xp, v in enumerate(row) if xp != x and math.isfinite(v)]
            out.append(min(vals) if vals else None)
        return out
    if name == "metric":
        e = exact(notion.epsilon)
        out = [None] * k
        if notion.edges is not None:
            for a, b, w in notion.edges:
                if a == b:
                    continue
                v = e * exact(w)
                for x in (a, b):
                    out[x] = v if out[x] is None else min(out[x], v)
        else:
            for x, row in enumerate(notion.distance):
                vals = [e * exact(v) for xp, v in enumerate(row) if xp != x and math.isfinite(v)]
                out[x] = min(vals) if vals else None
        return out
    return None


def _lip_priors(notion, k: int) -> list[list[Fraction]]:
    """The exact priors of a LIP / listed BP-LIP claim (a box is handled by :func:`_box_masses`)."""
    if notion.name == "lip":
        if notion.delta != 0:
            raise InputError("privacy", "(eps, delta)-LIP with delta > 0 has no exact check for a family mechanism")
        return [[exact(p) for p in notion.prior]]
    return [[exact(p) for p in P] for P in notion.priors]


def _box_masses(notion, d: int) -> tuple[Fraction, Fraction]:
    """Bounds on ``min P(S)`` and ``max P(S)`` over ``|S| = d`` and every prior of a BP-LIP box.

    For a fixed ``S``, ``min P(S) = max(lower(S), 1 - upper(not S))`` over the box ∩
    simplex, so ``min P(S) >= max(d smallest lowers, 1 - (k-d) largest uppers)``; and
    symmetrically for the maximum. Conservative: a family these bounds refuse may still
    meet the claim (never the other way round).
    """
    lo = sorted(exact(v) for v in notion.lower)
    hi = sorted(exact(v) for v in notion.upper)
    k = len(lo)
    pmin = max(sum(lo[:d], Fraction(0)), 1 - sum(hi[d:], Fraction(0)))
    pmax = min(sum(hi[k - d:], Fraction(0)), 1 - sum(lo[:k - d], Fraction(0)))
    return max(pmin, Fraction(0)), min(pmax, Fraction(1))


def _log(x: Fraction) -> float:
    return math.log(x.numerator) - math.log(x.denominator) if x > 0 else -math.inf


def _hadamard_lip(family: HadamardFamily, r: Fraction, k: int, eps: Fraction,
                  masses: Callable[[list[int]], tuple[Fraction, Fraction]], detail: list[str],
                  where: str) -> tuple[bool, float]:
    """LIP of a Hadamard response slot by slot: ``masses(plus)`` bounds the prior mass of a slot's ``+`` inputs.

    Returns ``(ok, achieved)``; with direct outputs (``family.others``) and ``r > 1`` the
    notion fails outright.
    """
    ok, achieved = True, 0.0
    for c in range(family.slots):
        plus = [a for a in family.sensitive if bin(family.row_of(a) & c).count("1") % 2 == 0]
        lo_mass, hi_mass = masses(plus)
        good, need = _lip_pair(r, lo_mass if plus else None, hi_mass if len(plus) < k else None, eps,
                               detail, f"slot h{c}{where}")
        ok &= good
        achieved = max(achieved, need)
    if family.others and r > 1:
        ok = False
        achieved = math.inf
        detail.append(f"direct output d{family.others[0]}: P·q > 0 = e^eps q[x] for the other inputs")
    return ok, achieved


def _lip_pair(r: Fraction, lo_mass: Fraction | None, hi_mass: Fraction | None, eps: Fraction,
              detail: list[str], where: str) -> tuple[bool, float]:
    """LIP conditions of one column type: entries r on a set of mass ``lo_mass`` (None: no r entry)…"""
    ok, need = True, 0.0
    if lo_mass is not None:  # an entry r: r <= e^eps (1 + (r-1) P(S))
        q = r / (1 + (r - 1) * lo_mass)
        need = max(need, _log(q))
        if not _leq_exp(q, eps):
            ok = False
            detail.append(f"{where}: ratio / (P·q) = {float(q)!r} > e^{float(eps)!r}")
    if hi_mass is not None:  # an entry 1: 1 + (r-1) P(S) <= e^eps
        q = 1 + (r - 1) * hi_mass
        need = max(need, _log(q))
        if not _leq_exp(q, eps):
            ok = False
            detail.append(f"{where}: (P·q) / q[x] = {float(q)!r} > e^{float(eps)!r}")
    return ok, need


def check_family(family, notion):
    """Exactly check one bound notion on a family; see the module docstring.

    Returns a :class:`mechopt._verify.Check` (the verdict of :func:`family_claim`).
    """
    from .._verify import Check

    ok, achieved, slack, detail = family_claim(family, notion)
    return Check(notion.name, float(notion.budget), achieved, slack, ok, detail)


def family_claim(family, notion) -> tuple[bool, float, float, str]:
    """Exactly decide one claim on a family: ``(ok, achieved, worst slack, detail)``.

    Standard library only: ``notion`` is a bound notion (:mod:`mechopt.notions`) or a
    claim parsed by the client (:class:`mechopt._claims.Claim`), which carry the same
    attributes; ``mechopt verify`` and the client decide with this one function.

    Examples
    --------
    >>> from mechopt._claims import parse_claim
    >>> fam = SubsetMixture.from_spec({"kind": "subset_selection", "ratio": 1e300,
    ...                               "mixture": [{"d": 1, "weight": 1.0}]}, 3)
    >>> family_claim(fam, parse_claim({"notion": "ldp", "epsilon": 1.0}, ["a", "b", "c"], "privacy[0]"))
    (False, 690.7755278982137, -1e+300, 'input 0: ratio 1e+300 > e^1.0')
    """
    k = family.k
    if notion.k is not None and notion.k != k:
        raise InputError("family", f"has {k} inputs but notion {notion.name!r} is over {notion.k} inputs")
    r = family.ratio
    lr = _log(r)
    detail: list[str] = []
    ok = True
    achieved = 0.0
    slack = math.inf
    scale = float(getattr(notion, "epsilon", 1.0)) if notion.name != "eldp" else 1.0
    is_subset = isinstance(family, SubsetMixture)
    informative = bool(family.informative) if is_subset else True
    if notion.name == "uldp":
        eps = exact(notion.epsilon)
        if (informative or not is_subset) and r > 1:
            slack = _float(_exp_low(eps) - r)
        if is_subset:
            if informative and r > 1:
                achieved = lr
                ok = _leq_exp(r, eps)
        else:
            achieved = lr if r > 1 else 0.0
            ok = r == 1 or _leq_exp(r, eps)
            bad = sorted(set(family.others) & set(notion.sensitive))
            if bad and r > 1:
                ok = False
                achieved = math.inf
                detail.append(f"the direct output of sensitive input {bad[0]} is not invertible-safe (ULDP)")
        if not ok and not detail:
            detail.append(f"ratio {float(r)!r} > e^{notion.epsilon!r}")
    elif notion.name == "bp_lip" and notion.lower is not None and is_subset:
        eps = exact(notion.epsilon)
        for d in family.informative:
            lo_mass, hi_mass = _box_masses(notion, d)
            good, need = _lip_pair(r, lo_mass, hi_mass, eps, detail, f"component d={d} (prior box)")
            ok &= good
            achieved = max(achieved, need)
    elif notion.name == "bp_lip" and notion.lower is not None:  # Hadamard response, a prior box: exact per slot
        eps = exact(notion.epsilon)
        lo = [exact(v) for v in notion.lower]
        hi = [exact(v) for v in notion.upper]
        L, U = sum(lo, Fraction(0)), sum(hi, Fraction(0))

        def box_masses(plus: list[int]) -> tuple[Fraction, Fraction]:
            lt, ut = sum((lo[a] for a in plus), Fraction(0)), sum((hi[a] for a in plus), Fraction(0))
            return max(lt, 1 - (U - ut)), min(ut, 1 - (L - lt))

        ok, achieved = _hadamard_lip(family, r, k, eps, box_masses, detail, " (prior box)")
    elif notion.name in ("lip", "bp_lip"):
        eps = exact(notion.epsilon)
        for P in _lip_priors(notion, k):
            if is_subset:
                srt = sorted(P)
                for d in family.informative:
                    lo_mass = sum(srt[:d], Fraction(0))
                    hi_mass = sum(srt[k - d:], Fraction(0))
                    good, need = _lip_pair(r, lo_mass, hi_mass, eps, detail, f"component d={d}")
                    ok &= good
                    achieved = max(achieved, need)
            else:
                def prior_masses(plus: list[int], P=P) -> tuple[Fraction, Fraction]:
                    mass = sum((P[a] for a in plus), Fraction(0))
                    return mass, mass

                good, need = _hadamard_lip(family, r, k, eps, prior_masses, detail, "")
                ok &= good
                achieved = max(achieved, need)
    else:
        budgets = row_budgets(notion, k)
        if budgets is None:  # pragma: no cover - every notion is handled above
            raise InputError("notion", f"no exact family check for notion {notion.name!r}")
        constrained: Sequence[int]
        if is_subset:
            constrained = range(k) if informative else []
        else:
            constrained = family.sensitive
            if r > 1:
                for x in family.others:
                    if budgets[x] is not None:
                        ok = False
                        achieved = math.inf
                        detail.append(f"input {x} has a finite budget but its direct output d{x} is reached by no "
                                      "other input (infinite ratio)")
                        break
        if r > 1:
            for x in constrained:
                b = budgets[x]
                if b is None:
                    continue
                need = math.inf if b == 0 else lr * scale / float(b)
                achieved = max(achieved, need)
                slack = min(slack, _float(_exp_low(b) - r))
                if not _leq_exp(r, b):
                    ok = False
                    if len(detail) < 1:
                        detail.append(f"input {x}: ratio {float(r)!r} > e^{float(b)!r}")
    if notion.name in ("lip", "bp_lip") and math.isfinite(achieved):
        slack = _exp_float(float(notion.epsilon)) - _exp_float(achieved)
    return bool(ok), float(achieved), (slack if math.isfinite(slack) else 0.0), "; ".join(detail[:2])


def verify_family(family, notions) -> Certificate:
    """Exactly verify a family against every notion (rows sum to 1 by construction).

    Examples
    --------
    >>> import math
    >>> from mechopt import LDP
    >>> from mechopt.families import SubsetMixture
    >>> fam = SubsetMixture.from_spec({"kind": "subset_selection", "ratio": 2.718281828459045,
    ...                               "mixture": [{"d": 3, "weight": 1.0}]}, 10)
    >>> verify_family(fam, [LDP(1.0)]).verified     # 2.718281828459045 < e
    True
    >>> verify_family(fam, [LDP(0.99)]).verified
    False
    """
    from .._verify import Certificate

    checks = tuple(check_family(family, n) for n in notions)
    ok = all(c.ok for c in checks)
    detail = ""
    bad = [c for c in checks if not c.ok]
    if bad:
        detail = f"{bad[0].notion}: {bad[0].detail}"
    return Certificate(ok, True, checks, "exact-family", detail)
