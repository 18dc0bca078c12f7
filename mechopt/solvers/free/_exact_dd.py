"""Exact double description: a verified channel and a certified bound from one set of rays.

Every condition a notion puts on a column ``q`` has the form ``lhs·q <= e^b rhs·q`` with
``lhs, rhs >= 0`` (E-LDP: ``q[x] <= e^E[x,x'] q[x']``; LIP for a prior P:
``q[x] <= e^ε P·q`` and ``P·q <= e^ε q[x]``). Replacing ``e^b`` by a rational
``r_lo <= e^b`` gives a smaller cone, ``r_hi >= e^b`` a larger one, both with rational
data, whose extreme rays are found here in exact arithmetic (the Parma Polyhedra
Library through ``pplpy``, or a structured enumerator in integers):

* the **inner** rays satisfy the notion as defined (exactly), so a channel built from
  them passes the exact verifier up to the rounding of its entries to floats;
* the **outer** cone contains the true one, so the ray LP over its rays bounds the
  optimum (made rigorous with :func:`mechopt.solvers.backends._safe_bound.ray_upper_bound`).

No ray is lost to a tolerance and nothing is retried. The factors come from a rigorous
enclosure of ``e^b - 1`` (:func:`expm1_bounds`), so at ``b = 1e-9`` the two cones differ
by a relative ``~1e-14`` of ``e^b - 1``, not of ``e^b``.

**What the budgets mean.** The exact verifier reads every budget, prior entry and box
bound as the decimal its float prints as. Prior entries and box bounds enter here as
those exact decimals. A budget may be a float computed by the library (``ε·d`` for a
metric, a shortest path), so it is taken as exact only up to a relative
:data:`BUDGET_REL` (``2^-48``, i.e. 32 units of the last place: a path of up to 16
floating-point additions): the inner factor is below ``e^(b (1 - 2^-48))`` and the outer
one above ``e^(b (1 + 2^-48))``.

**Box BP-LIP** (Jiang et al. 2022, Def. 6, with ``lower <= P <= upper``) has up to
``k 2^(k-1)`` prior vertices, and the double description over all their rows takes 7 s
at k = 7 (pplpy). Its cone has a structure that gives the rays directly
(:func:`box_lip_rays`): every extreme ray takes at most three distinct values.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Sequence

import numpy as np

from ..._errors import SolverError

#: relative allowance on every budget (see the module docstring)
BUDGET_REL = Fraction(1, 2**48)
#: significant bits kept in ``r_lo - 1`` and ``r_hi - 1`` (rounded outward)
FACTOR_BITS = 50


# -- rational enclosures of e^b --------------------------------------------------------


def _round(f: Fraction, bits: int, up: bool) -> Fraction:
    """``f >= 0`` rounded to a dyadic rational with ``bits`` significant bits (down or up)."""
    if f == 0:
        return f
    e = f.numerator.bit_length() - f.denominator.bit_length()
    shift = bits - e
    scaled = f * (Fraction(2) ** shift)
    n = math.floor(scaled) if not up else math.ceil(scaled)
    return Fraction(n) / (Fraction(2) ** shift)


@lru_cache(maxsize=4096)
def expm1_bounds(x: Fraction, bits: int = 120) -> tuple[Fraction, Fraction]:
    """Rigorous rational bounds ``lo <= e^x - 1 <= hi`` for a rational ``x >= 0``.

    ``x`` is halved ``s`` times to ``y <= 2^-10``; ``e^y - 1`` is enclosed by its Taylor
    polynomial and the remainder bound ``2 y^(N+1) / (N+1)!`` (valid for ``y <= 1``);
    then ``e^(2y) - 1 = (e^y - 1)(e^y + 1)`` undoes the halvings, with every
    intermediate rounded outward to ``bits`` significant bits. The relative width of the
    result is about ``s 2^(1 - bits)``.

    Examples
    --------
    >>> from fractions import Fraction
    >>> lo, hi = expm1_bounds(Fraction(1))
    >>> Fraction(1718281828459045235, 10**18) < lo < hi < Fraction(1718281828459045236, 10**18)
    True
    >>> hi - lo < Fraction(1, 10**30)
    True
    """
    if x < 0:
        raise ValueError(f"expm1_bounds needs x >= 0, got {x!r}")
    if x == 0:
        return Fraction(0), Fraction(0)
    s = max(0, x.numerator.bit_length() - x.denominator.bit_length() + 11)
    y = x / (Fraction(2) ** s)
    n_terms = bits // 10 + 3
    term = Fraction(1)
    total = Fraction(0)
    for n in range(1, n_terms + 1):
        term = term * y / n
        total += term
    rem = 2 * term * y / (n_terms + 1)
    lo, hi = _round(total, bits, False), _round(total + rem, bits, True)
    for _ in range(s):
        lo = _round(lo * (lo + 2), bits, False)
        hi = _round(hi * (hi + 2), bits, True)
    return lo, hi


@lru_cache(maxsize=4096)
def budget_factors(b: Fraction | float) -> tuple[Fraction, Fraction]:
    """Rationals ``r_lo <= e^β <= r_hi`` for every ``β`` within ``BUDGET_REL`` of ``b``.

    ``b = 0`` gives ``(1, 1)`` exactly (a zero budget ties two entries and is kept
    exact). ``r - 1`` keeps :data:`FACTOR_BITS` significant bits. A float ``b`` is read
    as the decimal it prints as.

    Examples
    --------
    >>> from fractions import Fraction
    >>> lo, hi = budget_factors(1e-9)          # e^1e-9 = 1 + 1e-9 + 5e-19 + 1.7e-28 ...
    >>> lo < 1 + Fraction(1, 10**9) + Fraction(1, 2 * 10**18) < hi
    True
    >>> float((hi - lo) / (hi - 1)) < 1e-14
    True
    """
    x = b if isinstance(b, Fraction) else exact_decimal(b)
    if x < 0:
        raise ValueError(f"a budget must be >= 0, got {b!r}")
    lo, _ = expm1_bounds(x * (1 - BUDGET_REL))
    _, hi = expm1_bounds(x * (1 + BUDGET_REL))
    return 1 + _round(lo, FACTOR_BITS, False), 1 + _round(hi, FACTOR_BITS, True)


# -- the cone as ratio rows ------------------------------------------------------------


def exact_decimal(v: float) -> Fraction:
    """A float as the decimal it prints as (how the exact verifier reads data)."""
    return Fraction(repr(float(v)))


@dataclass(frozen=True)
class RatioRow:
    """The condition ``lhs·q <= e^budget · rhs·q`` on a column ``q`` (``lhs, rhs >= 0``)."""

    lhs: tuple[Fraction, ...]
    rhs: tuple[Fraction, ...]
    budget: Fraction


def eldp_budgets(notions: Sequence, k: int) -> dict[tuple[int, int], Fraction] | None:
    """The pairwise budgets ``q[x] <= e^B q[x']`` of E-LDP-type notions, exact and pruned.

    Each notion contributes the pairs that define it, read as the exact verifier reads
    them: a metric its edges (``ε·w``, both decimals multiplied exactly) or its distance
    matrix, every other E-LDP-type notion its budget matrix. Pairs implied by others are
    then dropped, exactly: ``(x, x')`` goes when some ``z`` has
    ``D[x,z] + D[z,x'] <= B[x,x']`` with both pieces strictly below ``B[x,x']`` (``D`` the
    shortest paths, in rationals; sound by induction on the budget, as in
    :func:`mechopt.solvers.labeled._structure.prune_pairs`). Working from the defining pairs
    matters: a metric's float shortest paths are additive only up to an ulp, and the
    exact polyhedron of such data splits each vertex into near-copies (94 rays for 32 on
    a 6-input metric, 10 702 for 2 928 at 10 inputs).

    Returns None when a notion is not E-LDP-type; ``{}`` when nothing constrains.
    """
    from ...notions import MetricLDP

    B: dict[tuple[int, int], Fraction] = {}

    def put(x: int, xp: int, b: Fraction) -> None:
        if x != xp and (b < B.get((x, xp), b + 1)):
            B[x, xp] = b

    for n in notions:
        if isinstance(n, MetricLDP):
            eps = exact_decimal(n.epsilon)
            if n.edges is not None:
                for a, b, w in n.edges:
                    put(int(a), int(b), eps * exact_decimal(w))
                    put(int(b), int(a), eps * exact_decimal(w))
            else:
                D = np.asarray(n.distance, dtype=float)
                for x, xp in zip(*np.nonzero(np.isfinite(D))):
                    put(int(x), int(xp), eps * exact_decimal(D[x, xp]))
            continue
        E = n.eldp_matrix(k)
        if E is None:
            return None
        E = np.asarray(E, dtype=float)
        for x, xp in zip(*np.nonzero(np.isfinite(E))):
            put(int(x), int(xp), exact_decimal(E[x, xp]))
    return prune_budgets(B, k)


def prune_budgets(B: dict[tuple[int, int], Fraction], k: int) -> dict[tuple[int, int], Fraction]:
    """The pairs of ``B`` that no cheaper pieces imply (see :func:`eldp_budgets`), exactly.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> sorted(prune_budgets({(0, 1): F(1), (1, 2): F(1), (0, 2): F(2)}, 3))
    [(0, 1), (1, 2)]
    """
    D = [[Fraction(0) if x == xp else B.get((x, xp)) for xp in range(k)] for x in range(k)]
    for z in range(k):
        for x in range(k):
            dxz = D[x][z]
            if dxz is None:
                continue
            for xp in range(k):
                dzx = D[z][xp]
                if dzx is not None and (D[x][xp] is None or dxz + dzx < D[x][xp]):
                    D[x][xp] = dxz + dzx
    kept = {}
    for (x, xp), b in B.items():
        implied = any(z != x and z != xp and D[x][z] is not None and D[z][xp] is not None
                      and D[x][z] < b and D[z][xp] < b and D[x][z] + D[z][xp] <= b for z in range(k))
        if not implied:
            kept[x, xp] = b
    return kept


def matrix_budgets(E: np.ndarray) -> dict[tuple[int, int], Fraction]:
    """The finite off-diagonal entries of a budget matrix, read as decimals, pruned."""
    E = np.asarray(E, dtype=float)
    k = E.shape[0]
    B = {(int(x), int(xp)): exact_decimal(E[x, xp])
         for x, xp in zip(*np.nonzero(np.isfinite(E) & ~np.eye(k, dtype=bool)))}
    return prune_budgets(B, k)


def box_vertices(lower: Sequence[Fraction], upper: Sequence[Fraction]) -> list[tuple[Fraction, ...]]:
    """Vertices of ``{lower <= P <= upper, sum P = 1}`` in exact rationals.

    At a vertex at most one coordinate lies strictly between its bounds.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> box_vertices([F(1, 5), F(3, 10)], [F(7, 10), F(4, 5)])
    [(Fraction(1, 5), Fraction(4, 5)), (Fraction(7, 10), Fraction(3, 10))]
    """
    k = len(lower)
    out = set()
    for j in range(k):
        others = [i for i in range(k) if i != j]
        for bits in itertools.product((0, 1), repeat=k - 1):
            P = [Fraction(0)] * k
            for i, bit in zip(others, bits):
                P[i] = upper[i] if bit else lower[i]
            P[j] = 1 - sum((P[i] for i in others), Fraction(0))
            if lower[j] <= P[j] <= upper[j]:
                out.add(tuple(P))
    return sorted(out)


def _lip_rows(P: Sequence[Fraction], eps: Fraction, k: int) -> list[RatioRow]:
    rows = []
    P = tuple(P)
    for x in range(k):
        unit = tuple(Fraction(int(i == x)) for i in range(k))
        rows.append(RatioRow(unit, P, eps))
        rows.append(RatioRow(P, unit, eps))
    return rows


def box_rows(lower: Sequence[Fraction], upper: Sequence[Fraction], eps: Fraction) -> list[RatioRow]:
    """The LIP rows of a prior box that can be tight: ``(x, P)`` with ``P[x] = lower[x]``
    or every other ``P[i] = upper[i]`` (about half of all ``k · #vertices`` pairs).

    Exact: for ``q`` sorted as ``q[s1] <= ... <= q[sk]``, ``min_P P·q`` is attained at the
    vertex that fills the smallest entries first, where ``sk`` (the largest, filled last)
    is at its lower bound unless every other input is at its upper bound; so the kept row
    ``q[sk] <= e^ε P·q`` gives ``max q <= e^ε min_P P·q``, which implies every other upper
    row. The lower rows (``P·q <= e^ε q[s1]``, ``max_P P·q`` filling the largest first) are
    the mirror image.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> len(box_rows([F(1, 5), F(3, 10)], [F(7, 10), F(4, 5)], F(1)))   # 2 vertices x 2 inputs x 2 sides: 8
    4
    """
    k = len(lower)
    rows = []
    for P in box_vertices(lower, upper):
        for x in range(k):
            if P[x] == lower[x] or all(P[i] == upper[i] for i in range(k) if i != x):
                unit = tuple(Fraction(int(i == x)) for i in range(k))
                rows += [RatioRow(unit, P, eps), RatioRow(P, unit, eps)]
    return rows


def cone_rows(notions: Sequence, k: int) -> list[RatioRow]:
    """Every condition of the notions on one column, as :class:`RatioRow` in exact data.

    E-LDP-type notions (E-LDP, metric, LDP, block, high-low, WC-LIP) give one row per
    pair of :func:`eldp_budgets`; LIP (δ = 0) and BP-LIP give two rows per input and
    prior (a box's exact vertices).

    Raises
    ------
    SolverError
        For a notion with no such form ((ε, δ)-LIP with δ > 0, ULDP: the caller
        replaces ULDP by LDP for the protected columns).
    """
    from ...notions import BPLIP, LIP

    rows: list[RatioRow] = []
    eldp_like = []
    for n in notions:
        if n.eldp_matrix(k) is not None:
            eldp_like.append(n)
        elif isinstance(n, LIP) and n.delta == 0:
            rows += _lip_rows([exact_decimal(p) for p in n.prior], exact_decimal(n.epsilon), k)
        elif isinstance(n, BPLIP) and n.lower is not None:
            rows += box_rows([exact_decimal(v) for v in n.lower], [exact_decimal(v) for v in n.upper],
                             exact_decimal(n.epsilon))
        elif isinstance(n, BPLIP):
            for P in sorted({tuple(exact_decimal(p) for p in P) for P in n.priors}):
                rows += _lip_rows(P, exact_decimal(n.epsilon), k)
        else:
            raise SolverError(f"notion {n.name!r} has no exact double description")
    pairs = []
    for (x, xp), b in sorted((eldp_budgets(eldp_like, k) or {}).items()):
        lhs = tuple(Fraction(int(i == x)) for i in range(k))
        rhs = tuple(Fraction(int(i == xp)) for i in range(k))
        pairs.append(RatioRow(lhs, rhs, b))
    return pairs + rows


def _integer_row(lhs: Sequence[Fraction], rhs: Sequence[Fraction], r: Fraction) -> list[int]:
    """``lhs - r rhs`` scaled to coprime integers."""
    coef = [a - r * b for a, b in zip(lhs, rhs)]
    den = math.lcm(*(c.denominator for c in coef))
    ints = [int(c * den) for c in coef]
    g = math.gcd(*ints)
    return [v // g for v in ints] if g > 1 else ints


def ppl_cone_rays(A: Sequence[Sequence[int]], k: int) -> list[tuple[int, ...]]:
    """Extreme rays of ``{q >= 0 : A q <= 0}`` for an integer matrix, exactly (pplpy).

    Returns the rays as tuples of coprime integers (the cone is pointed: ``q >= 0``).

    Examples
    --------
    >>> sorted(ppl_cone_rays([[1, -2], [-3, 1]], 2))     # q0 <= 2 q1, q1 <= 3 q0
    [(1, 3), (2, 1)]
    """
    import ppl

    cs = ppl.Constraint_System()
    for i in range(k):
        cs.insert(ppl.Variable(i) >= 0)
    for row in A:
        if any(row):
            cs.insert(ppl.Linear_Expression(list(row), 0) <= 0)
    gens = ppl.C_Polyhedron(cs).minimized_generators()
    return [tuple(int(c) for c in g.coefficients()) for g in gens if g.is_ray()]


def rays_to_float(rays: Sequence[Sequence[int]], k: int) -> np.ndarray:
    """Integer rays as float columns with largest entry 1 (each entry correctly rounded)."""
    V = np.zeros((k, len(rays)))
    for j, v in enumerate(rays):
        top = max(v)
        V[:, j] = [c / top for c in v]  # int / int is correctly rounded
    return V


# -- box BP-LIP: rays from the cone's structure ------------------------------------------


def box_lip_rays(lower: Sequence[Fraction], upper: Sequence[Fraction], r: Fraction) -> list[tuple[int, ...]]:
    """Extreme rays of the box BP-LIP cone with factor ``r >= 1``, exactly.

    The cone is ``K = {q >= 0 : max q <= r m(q), M(q) <= r min q}`` with
    ``m(q) = min P·q`` and ``M(q) = max P·q`` over ``B = {lower <= P <= upper, sum P = 1}``
    (the LIP condition for every prior of B). On the chamber where ``q`` is sorted as
    ``q[s1] <= ... <= q[sk]``, both are linear — continuous knapsacks: ``m`` fills the
    smallest entries first, ``M`` the largest — and with ``q = sum_j t_j 1_{S_j}``
    (``S_j`` the top ``k - j + 1`` inputs, ``t >= 0``) the chamber's part of ``K`` is the
    orthant ``t >= 0`` cut by two half-spaces, ``a·t <= 0`` and ``b·t <= 0``, where
    ``a_j = 1 - r m(1_{S_j})`` and ``b_j = M(1_{S_j})`` (``b_1 = 1 - r``). An extreme ray of
    ``K`` is extreme in its chamber, so at most three ``t_j`` are non-zero: the ray takes at
    most three values. ``t_1 > 0`` always (``min q = 0`` forces ``M(q) = 0``, then
    ``m(q) = 0`` and ``q = 0``). So the rays are, over every chain
    ``[k] ⊋ S ⊋ T ⊋ ∅`` of input sets: the constant column; for ``[k] ⊋ S``, the points
    of the open quadrant on ``a·t = 0`` or ``b·t = 0`` that satisfy the other; for
    ``[k] ⊋ S ⊋ T``, ``±(a × b)`` when it is strictly positive. Every vector returned
    lies in ``K`` and every extreme ray is among them (some may be non-extreme).
    ``m(1_S) = max(lower(S), 1 - upper(S^c))``, ``M(1_S) = min(upper(S), 1 - lower(S^c))``.

    All arithmetic is on integers (data scaled by a common denominator). The work is
    ``3^k`` chains: 0.1 s at k = 8.

    Parameters
    ----------
    lower, upper : sequences of Fraction, length k
    r : Fraction, >= 1

    Returns
    -------
    list of tuple of int
        Each ray as integers, sorted by input.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> rays = box_lip_rays([F(1, 2), F(1, 2)], [F(1, 2), F(1, 2)], F(2))   # LIP, P = (1/2, 1/2)
    >>> sorted(rays)                         # q0 <= 2 (q0 + q1) / 2 etc.: ratios 1 to 3
    [(1, 1), (1, 3), (3, 1)]
    """
    k = len(lower)
    D = math.lcm(*(v.denominator for v in list(lower) + list(upper)))
    lo = [int(v * D) for v in lower]
    hi = [int(v * D) for v in upper]
    full = (1 << k) - 1
    lo_sum = [0] * (1 << k)
    hi_sum = [0] * (1 << k)
    for mask in range(1, 1 << k):
        low = (mask & -mask).bit_length() - 1
        rest = mask & (mask - 1)
        lo_sum[mask] = lo_sum[rest] + lo[low]
        hi_sum[mask] = hi_sum[rest] + hi[low]
    # in units of 1/D: m(1_S) and M(1_S) for every S
    m = [max(lo_sum[s], D - hi_sum[full ^ s]) for s in range(1 << k)]
    M = [min(hi_sum[s], D - lo_sum[full ^ s]) for s in range(1 << k)]
    rn, rd = r.numerator, r.denominator
    # scaled by D rd: a_j = D rd - rn m(S_j), b_1 = D (rd - rn), b_j = rd M(S_j)
    a = [D * rd - rn * m[s] for s in range(1 << k)]
    b = [rd * M[s] for s in range(1 << k)]
    a1 = b1 = D * (rd - rn)
    bits = [1 << i for i in range(k)]

    def ray(levels: list[tuple[int, int]]) -> tuple[int, ...]:
        # levels: (set, increment) from the bottom: q = sum increment * 1_set
        q = [0] * k
        for s, t in levels:
            for i in range(k):
                if s & bits[i]:
                    q[i] += t
        g = math.gcd(*q)
        return tuple(v // g for v in q)

    out = [tuple([1] * k)]
    for S in range(1, full):
        aS, bS = a[S], b[S]
        for c1, c2 in ((a1, aS), (b1, bS)):
            if (c1 < 0 < c2) or (c2 < 0 < c1):
                t1, t2 = abs(c2), abs(c1)
                if a1 * t1 + aS * t2 <= 0 and b1 * t1 + bS * t2 <= 0:
                    out.append(ray([(full, t1), (S, t2)]))
        # T a non-empty proper subset of S: both cuts tight, t = ±(a × b) > 0
        T = (S - 1) & S
        while T:
            aT, bT = a[T], b[T]
            x1 = aS * bT - aT * bS
            x2 = aT * b1 - a1 * bT
            x3 = a1 * bS - aS * b1
            if (x1 > 0 and x2 > 0 and x3 > 0) or (x1 < 0 and x2 < 0 and x3 < 0):
                out.append(ray([(full, abs(x1)), (S, abs(x2)), (T, abs(x3))]))
            T = (T - 1) & S
    return list(dict.fromkeys(out))


# -- inner and outer rays of a problem's cone ---------------------------------------------


#: the double description over rows is attempted up to this many inputs
MAX_DD_INPUTS = 14


def exact_inner_outer(notions: Sequence, k: int) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    """Integer rays of the inner and the outer rational cone (see :func:`inner_outer_rays`).

    The same list object twice when every budget is zero (then both cones are the true one).

    Raises
    ------
    SolverError
        Above :data:`MAX_DD_INPUTS` inputs, or for a notion with no ratio-row form.
    """
    from ...notions import BPLIP

    if k > MAX_DD_INPUTS:
        raise SolverError(f"the exact double description is limited to {MAX_DD_INPUTS} inputs, got {k}")
    if len(notions) == 1 and isinstance(notions[0], BPLIP) and notions[0].lower is not None:
        n = notions[0]
        lower = [exact_decimal(v) for v in n.lower]
        upper = [exact_decimal(v) for v in n.upper]
        r_lo, r_hi = budget_factors(exact_decimal(n.epsilon))
        inner = box_lip_rays(lower, upper, r_lo)
        return inner, (inner if r_hi == r_lo else box_lip_rays(lower, upper, r_hi))
    rows = cone_rows(notions, k)
    factors = [budget_factors(row.budget) for row in rows]
    A_in = [_integer_row(row.lhs, row.rhs, f[0]) for row, f in zip(rows, factors)]
    inner = ppl_cone_rays(A_in, k)
    if all(lo == hi for lo, hi in factors):
        return inner, inner
    A_out = [_integer_row(row.lhs, row.rhs, f[1]) for row, f in zip(rows, factors)]
    return inner, ppl_cone_rays(A_out, k)


def inner_outer_rays(notions: Sequence, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Rays of a cone inside the notions' cone and of one containing it (float columns).

    Both are computed exactly from rational data (see the module docstring); each entry
    is then rounded to the nearest float, with the largest entry of each ray 1. When
    every budget is zero the two cones are the true one and the arrays are the same.

    Examples
    --------
    >>> from mechopt import BPLIP
    >>> n = BPLIP(1.0, priors=[[0.5, 0.5], [0.3, 0.7]])
    >>> V_in, V_out = inner_outer_rays([n], 2)
    >>> V_in.shape[1], V_out.shape[1]
    (2, 2)
    >>> bool(np.abs(V_in - V_out).max() < 1e-13)        # e^1 enclosed within ~1e-15
    True
    """
    inner, outer = exact_inner_outer(notions, k)
    V_in = rays_to_float(inner, k)
    return V_in, (V_in if outer is inner else rays_to_float(outer, k))


def ppl_vertices(A: Sequence[Sequence[int]], b: Sequence[Fraction], n: int) -> list[tuple[Fraction, ...]] | None:
    """Vertices of ``{u in Q^n : A u <= b}`` exactly (pplpy); None if it contains a line.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> ppl_vertices([[1], [-1]], [F(1, 3), F(0)], 1)        # 0 <= u <= 1/3
    [(Fraction(0, 1),), (Fraction(1, 3),)]
    """
    import ppl

    if n == 0:
        return [()]
    if not len(A):
        return None  # all of Q^n
    cs = ppl.Constraint_System()
    for row, rhs in zip(A, b):
        rhs = Fraction(rhs)
        # row·u <= rhs  <=>  den rhs - den row·u >= 0
        den = rhs.denominator
        cs.insert(ppl.Linear_Expression([-den * int(c) for c in row], rhs.numerator) >= 0)
    poly = ppl.C_Polyhedron(n, "universe")
    poly.add_constraints(cs)
    gens = poly.minimized_generators()
    if any(g.is_line() for g in gens):
        return None
    out = []
    for g in gens:
        if g.is_point():
            d = int(g.divisor())
            out.append(tuple(Fraction(int(c), d) for c in g.coefficients()))
    return sorted(out)
