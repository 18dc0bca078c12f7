"""Extreme rays of the privacy cone (the V-representation, docs/model.md).

Structured enumerators cover the common notions; the E-LDP family (E-LDP, metric,
block, high-low and their combinations) is enumerated in log space, where the double
description runs exactly on a 0/±1 system (:func:`eldp_rays`); anything else goes
through the exact double description of an inner and an outer rational cone
(:mod:`mechopt.solvers.free._exact_dd`; a prior box by its own structure). Each function
returns a ``(k, R)`` array whose columns are rays (any positive scale).

* LDP / WC-LIP: the ``2^k - 2`` staircases ``1 + (e^ε - 1) 1_S``.
* Block LDP: staircases of one block, zero elsewhere (a unit vector for a singleton).
* LIP: vertices of the slice ``{P·q = 1, e^-ε <= q[x] <= e^ε}``: all coordinates at a
  bound but at most one.
* ULDP: the LDP staircases plus the unit vectors of non-sensitive inputs.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..._errors import InputError, SolverError
from ...notions import LDP, WCLIP, Notion
from ..labeled._structure import unit_allowed
from ...notions._rays import MAX_ENUMERATED, ldp_rays, lip_slice_vertices, slice_candidates, staircase_count  # noqa: F401
from ._exact_dd import eldp_budgets, inner_outer_rays

class DoubleDescriptionError(SolverError):
    """pycddlib's floating-point double description gave up ("numerical inconsistency")."""


def eldp_rays(E: np.ndarray | dict, k: int | None = None) -> np.ndarray:
    """Extreme rays of the E-LDP cone ``{q >= 0 : q[x] <= e^E[x,x'] q[x']}``, in log space.

    ``E`` is a k×k budget matrix (``inf`` = no condition; entries read as the decimals
    they print as) or a dict ``{(x, x'): Fraction}`` of exact budgets
    (:func:`mechopt.solvers.free._exact_dd.eldp_budgets`) with ``k`` given.

    A ray with support S needs S closed under finite budgets (``q[x'] = 0`` forces
    ``q[x] = 0`` whenever ``E[x, x']`` is finite), and it is extreme iff its tight
    ratio rows have rank |S| - 1. In ``u = log q`` those rows are the difference
    constraints ``u[x] - u[x'] <= E[x, x']``, with the same tight sets and ranks (a tight
    cycle has budgets summing to zero, so its ratios multiply to one). So the rays of
    support S are ``exp`` of the vertices of the polyhedron
    ``{u in R^S : u[x] - u[x'] <= E[x, x'], u[s0] = 0}`` — a system whose entries are
    0 and ±1 with the budgets on the right-hand side, instead of rows holding ``e^E``
    (which spans 1e-13 to 1 for budgets near 30).

    The vertices are found exactly (pplpy, rational budgets); only ``exp`` is rounded.
    Well conditioned is not enough for floating point: pycddlib's zero tolerance (~1e-7
    here) saw budgets of 1e-8 as 0 and, on the k = 4 LDP pattern, returned 1 of the 14
    rays.
    """
    from ._exact_dd import matrix_budgets, ppl_vertices

    if isinstance(E, dict):
        budget = E
        if k is None:
            raise ValueError("eldp_rays needs k with a dict of budgets")
    else:
        k = np.asarray(E).shape[0]
        budget = matrix_budgets(E)
    fin = np.zeros((k, k), bool)
    for x, xp in budget:
        fin[x, xp] = True
    # S is closed iff no finite budget leads out of it
    out_mask = [int(sum(1 << j for j in np.flatnonzero(fin[x]))) for x in range(k)]
    rays = []
    for code in range(1, 2**k):
        if any((code >> x) & 1 and out_mask[x] & ~code for x in range(k)):
            continue
        S = [x for x in range(k) if (code >> x) & 1]
        if len(S) == 1:
            v = np.zeros(k)
            v[S[0]] = 1.0
            rays.append(v)
            continue
        # variables u[S[1:]] (u[S[0]] = 0); rows a·u <= E[x, x'] for u[x] - u[x'] <= E[x, x']
        pos = {x: i - 1 for i, x in enumerate(S)}
        A, b = [], []
        for x in S:
            for xp in S:
                if x != xp and fin[x, xp]:
                    a = [0] * (len(S) - 1)
                    if pos[x] >= 0:
                        a[pos[x]] += 1
                    if pos[xp] >= 0:
                        a[pos[xp]] -= 1
                    A.append(a)
                    b.append(budget[x, xp])
        verts = ppl_vertices(A, b, len(S) - 1)
        if verts is None:
            continue  # a line in the polyhedron: no vertex, no ray of this support
        for g in verts:
            u = np.array([0.0] + [float(c) for c in g])
            v = np.zeros(k)
            v[S] = np.exp(u - u.max())
            rays.append(v)
    # distinct supports or distinct exact vertices: no duplicates to remove
    return np.array(rays).T if rays else np.zeros((k, 0))


def _satisfies(v: np.ndarray, notions: list[Notion]) -> bool:
    Q = v[:, None] / v.sum()
    return all(n.achieved(Q) <= n.budget * (1 + 1e-12) + 1e-12 for n in notions)


def relax_notions(notions: list[Notion], k: int, cap: float) -> list[Notion]:
    """The notions with every budget above ``cap`` left out (a relaxation of the cone).

    Each notion relaxes itself (:meth:`~mechopt.notions.Notion.relaxed`): E-LDP-type
    budgets above the cap become ``inf`` pairwise; clique notions, LIP and BP-LIP with ε
    above it are dropped, and so is ULDP (its protected columns become unconstrained,
    which covers its invertible ones).
    """
    return [r for n in notions if (r := n.relaxed(k, cap)) is not None]


class Rays(NamedTuple):
    """Rays for the channel and rays for the bound (SPEC §3).

    ``V`` lies in the notions' cone (exactly, up to rounding each entry to a float);
    ``V_bound`` generates a cone that contains it, so the ray LP over ``V_bound`` bounds
    the optimum. The structured enumerators list the true rays (``V_bound is V``); the
    exact double description gives an inner and an outer cone
    (:mod:`mechopt.solvers.free._exact_dd`).
    """

    V: np.ndarray  # (k, R)
    invertible: np.ndarray  # (R,) bool: ULDP's invertible unit rays
    V_bound: np.ndarray  # (k, R')


def enumerate_rays(notions: list[Notion], k: int) -> Rays:
    """Extreme rays of the problem's (possibly non-convex ULDP) set of columns.

    Returns
    -------
    Rays
        ``V`` (k, R) with rays as columns, ``invertible`` (R,) True for ULDP's
        invertible unit rays, and ``V_bound`` (k, R'), rays of a cone containing the
        convex part (for the bound), followed by the same unit rays.
    """
    mixed = [n for n in notions if not n.convex]  # ULDP: protected or invertible columns
    convex = [n for n in notions if n.convex]
    if not all(n.is_cone for n in notions):
        raise InputError("privacy", "(eps, delta)-LIP with delta > 0 is not a cone: use labeled outputs")
    protected = convex + [n.protected_part() for n in mixed]
    V, V_bound = _convex_rays(protected, k)
    inv = np.zeros(V.shape[1], bool)
    if mixed:
        allowed = set.intersection(*[set(n.invertible_inputs(k)) for n in mixed])
        units = []
        for x in sorted(allowed):
            e = np.zeros(k)
            e[x] = 1.0
            if not convex or _satisfies(e, convex):
                units.append(e)
        if units:
            same = V_bound is V
            V = np.hstack([V, np.array(units).T])
            V_bound = V if same else np.hstack([V_bound, np.array(units).T])
            inv = np.concatenate([inv, np.ones(len(units), bool)])
    return Rays(V, inv, V_bound)


def _convex_rays(notions: list[Notion], k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(V, V_bound)``: one array twice for the structured enumerators."""
    if not notions:
        return (V := np.eye(k)), V
    if len(notions) == 1 and (V := notions[0].structured_rays(k)) is not None:
        return V, V
    # same-ε LDP families are nested: the smallest-ε LDP subsumes larger ones
    ldps = [n for n in notions if type(n) in (LDP, WCLIP)]
    if len(ldps) == len(notions):
        return (V := ldp_rays(k, min(n.epsilon for n in ldps))), V
    if k <= 12 and (budgets := eldp_budgets(notions, k)) is not None:
        # the E-LDP family (E-LDP, metric, block, high-low, LDP): log-space enumeration
        return (V := eldp_rays(budgets, k)), V
    # anything else (LIP or BP-LIP with other notions, several priors, a prior box, the
    # E-LDP family above 12 inputs): exact double description, inner and outer cones
    return inner_outer_rays(notions, k)


def ray_count_estimate(notions: list[Notion], k: int) -> int | None:
    """How many rays the structured enumerators would produce (None if unknown)."""
    convex = [n for n in notions if n.convex]
    mixed = [n for n in notions if not n.convex]
    if not convex and mixed:
        return 2**k  # the protected LDP staircases and the unit rays
    if len(convex) == 1:
        return convex[0].ray_count(k)
    return None


def as_ldp(notion, k: int):
    """BP-LIP whose priors include every point mass (a box with all lower bounds 0) is ε-LDP.

    LIP at ``P = e_j`` reads ``q[j] <= e^ε q[x]`` for every x, and LDP implies LIP at every
    prior (``P·q`` lies between the column's extremes). The structured LDP rays replace a
    floating-point double description that kept 5 of the 14 rays at ε = 23.17 and made the
    design "optimal" at 3.75 where randomized response verifies at 0.75 (fuzz seed 14 #5448).
    """
    from ...notions import BPLIP

    if isinstance(notion, BPLIP):
        P = np.asarray(notion.priors)
        units = {tuple(row) for row in np.eye(k)}
        if units <= {tuple(row) for row in P}:
            return LDP(notion.epsilon)
    return notion


def relaxed_rays(problem, relaxed: list):
    """Rays of the relaxed notions; ULDP's invertible unit rays only where the full notions allow them.

    The unit rays kept are exactly the invertible columns the problem allows
    (:func:`mechopt.solvers.labeled._structure.unit_allowed`), so the ray set still spans
    every feasible column and the ray LP's bound stays valid.
    """
    relaxed = [as_ldp(n, problem.k) for n in relaxed]
    V, inv, V_bound = enumerate_rays(relaxed, problem.k)
    if inv.any():
        ok = np.array([not inv[j] or unit_allowed(problem, int(np.argmax(V[:, j]))) for j in range(V.shape[1])])
        units = int(inv.sum())  # the same unit rays end V_bound
        if V_bound is V:
            V_bound = V = V[:, ok]
        else:
            V = V[:, ok]
            V_bound = V_bound[:, np.concatenate([np.ones(V_bound.shape[1] - units, bool), ok[-units:]])]
        inv = inv[ok]
    return V, inv, V_bound
