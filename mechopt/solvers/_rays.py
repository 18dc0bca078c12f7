"""Extreme rays of the privacy cone (the V-representation, docs/model.md).

Structured enumerators cover the common notions; the E-LDP family (E-LDP, metric,
block, high-low and their combinations) is enumerated in log space, where the double
description runs on a 0/±1 system (:func:`eldp_rays`); anything else goes through the
double description of the cone itself (pycddlib). Each function returns a ``(k, R)`` array whose columns
are rays (any positive scale).

* LDP / WC-LIP: the ``2^k - 2`` staircases ``1 + (e^ε - 1) 1_S``.
* Block LDP: staircases of one block, zero elsewhere (a unit vector for a singleton).
* LIP: vertices of the slice ``{P·q = 1, e^-ε <= q[x] <= e^ε}``: all coordinates at a
  bound but at most one.
* ULDP: the LDP staircases plus the unit vectors of non-sensitive inputs.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .._errors import InputError, SolverError
from .._notions import LDP, LIP, ULDP, BlockLDP, Notion
from ._structure import column_system

#: above this many rays, enumeration gives way to column generation
MAX_ENUMERATED = 300_000


class DoubleDescriptionError(SolverError):
    """pycddlib's floating-point double description gave up ("numerical inconsistency")."""


def staircase_count(k: int) -> int:
    return 2**k - 2


def ldp_rays(k: int, eps: float, idx: np.ndarray | None = None, k_full: int | None = None) -> np.ndarray:
    """Staircase rays ``{1, e^eps}^k`` minus the constant ones (on ``idx`` of ``k_full``)."""
    idx = np.arange(k) if idx is None else np.asarray(idx)
    k_full = k if k_full is None else k_full
    n = len(idx)
    if n == 1:
        V = np.zeros((k_full, 1))
        V[idx[0], 0] = 1.0
        return V
    if staircase_count(n) > MAX_ENUMERATED:
        raise SolverError(f"{staircase_count(n)} LDP rays are too many to enumerate")
    codes = np.arange(1, 2**n - 1)
    bits = ((codes[None, :] >> np.arange(n)[:, None]) & 1).astype(float)
    V = np.zeros((k_full, len(codes)))
    V[idx] = 1.0 + (math.exp(eps) - 1.0) * bits
    return V


def slice_candidates(P: np.ndarray, eps: float, chunk: int | None = None):
    """Candidate vertices of the LIP slice ``{P·q = 1, e^-eps <= q <= e^eps}``, in chunks.

    Every vertex has all coordinates at a bound but at most one, ``j``, which the
    hyperplane fixes. Yields ``(j, others, Qo, qj)``: the other coordinates' bounds
    ``Qo`` (k-1, n) for ``n`` bound patterns and the value ``qj`` the hyperplane gives
    (the caller keeps those within ``[e^-eps, e^eps]``).
    """
    P = np.asarray(P, dtype=float)
    k = len(P)
    lo, hi = math.exp(-eps), math.exp(eps)
    n = 2 ** (k - 1)
    step = n if chunk is None else chunk
    shifts = np.arange(k - 1)[:, None]
    for j in range(k):
        if P[j] <= 0:
            continue
        others = np.array([i for i in range(k) if i != j], dtype=int)
        for start in range(0, n, step):
            codes = np.arange(start, min(n, start + step))
            Qo = lo + (hi - lo) * ((codes[None, :] >> shifts) & 1).astype(float)
            yield j, others, Qo, (1.0 - P[others] @ Qo) / P[j]


def lip_slice_vertices(prior: np.ndarray, eps: float) -> np.ndarray:
    """Vertices of ``{q : P·q = 1, e^-eps <= q <= e^eps}`` (LIP cone slice)."""
    P = np.asarray(prior, dtype=float)
    k = len(P)
    lo, hi = math.exp(-eps), math.exp(eps)
    count = k * 2 ** (k - 1)
    if count > MAX_ENUMERATED:
        raise SolverError(f"{count} LIP vertex candidates are too many to enumerate")
    out = []
    # all coordinates at bounds (no free one), then one free coordinate j
    for bits in itertools.product((0.0, 1.0), repeat=k):
        q = lo + (hi - lo) * np.array(bits)
        if abs(P @ q - 1.0) < 1e-12:
            out.append(q)
    for j, others, Qo, qj in slice_candidates(P, eps):
        ok = (qj > lo + 1e-12) & (qj < hi - 1e-12)
        V = np.zeros((k, int(ok.sum())))
        V[others] = Qo[:, ok]
        V[j] = qj[ok]
        out.extend(V.T)
    if not out:
        return np.zeros((k, 0))
    return np.unique(np.round(np.array(out).T, 14), axis=1)


def cdd_rays(A: np.ndarray, k: int) -> np.ndarray:
    """Extreme rays of ``{q >= 0 : A q <= 0}`` by double description (pycddlib).

    pycddlib runs in floating point here (with an internal zero tolerance near 1e-7),
    and what it returns depends on how the rows are scaled and ordered. Found by
    ``benchmarks/fuzz.py``: on a BP-LIP box x metric cone it kept 28 of 88 rays and the
    ray LP answered "infeasible"; on a BP-LIP box at eps = 4.65 it stopped with
    "numerical inconsistency"; on a 6-input metric cone at eps = 4.87 it returns 10 to
    48 rays depending on the row order. So cdd runs on the rows as given and scaled to
    max / min |entry| = 1, with its default (lexicographic) and max-index row orders,
    and for k <= 8 also on column scalings ``q = D r`` (geometric mean, and 8 seeded
    random ones for k <= 6, 3 above), and the union of the returned vectors that satisfy every row (relative error
    <= 1e-9) is kept. Every returned vector lies in the cone and extra non-extreme ones
    do not change the ray LP's optimum, but completeness is not proven: exact
    arithmetic (pycddlib built with GMP) would be. If every run fails, SolverError.
    """
    import cdd

    A = np.asarray(A, dtype=float)
    if len(A):
        A = A[np.abs(A).max(axis=1) > 0]  # an all-zero row (LIP at eps = 0, P = e_x) says nothing
    variants = [A]
    if len(A):
        absA = np.abs(A)
        small = np.where(absA > 0, absA, np.inf).min(axis=1, keepdims=True)
        variants += [A / absA.max(axis=1, keepdims=True), A / small]
    runs = [(M, order, None) for M in variants for order in (None, cdd.RowOrderType.MAX_INDEX)][:5]
    if len(A) and k <= 8:
        # column scalings q = D r (the cone {A D r <= 0} has rays D^-1 q): found by
        # benchmarks/fuzz.py, a BP-LIP prior entry of 5e-9 next to an E-LDP made every row
        # scaling lose rays (8 of them, the ray LP infeasible); a random D found 20
        absA = np.abs(A)
        big = absA.max(axis=0)
        small = np.where(absA > 0, absA, np.inf).min(axis=0)
        small = np.where(np.isfinite(small), small, big)
        geo = np.ones(k)
        geo[big > 0] = 1.0 / np.sqrt(big[big > 0] * small[big > 0])  # geometric-mean column scaling
        rng = np.random.default_rng(20240601)
        n_random = 8 if k <= 6 else 3
        for d in [geo] + [np.exp(rng.uniform(-2.0, 2.0, k)) for _ in range(n_random)]:
            Ad = A * d[None, :]
            Ad = Ad / np.abs(Ad).max(axis=1, keepdims=True)
            runs += [(Ad, None, d), (Ad, cdd.RowOrderType.MAX_INDEX, d)]
    found, errors = [], []
    for M, order, d in runs:
        rows = [[0.0] + list(-row) for row in M] + [[0.0] + list(e) for e in np.eye(k)]
        try:
            mat = cdd.matrix_from_array(rows, rep_type=cdd.RepType.INEQUALITY)
            gen = np.array(cdd.copy_generators(cdd.polyhedron_from_matrix(mat, row_order=order)).array, dtype=float)
        except RuntimeError as err:  # cdd's "numerical inconsistency"
            errors.append(str(err).strip())
            continue
        if gen.size == 0:
            continue
        rays = gen[gen[:, 0] == 0, 1:]
        rays = rays[rays.max(axis=1) > 0] if len(rays) else rays
        if not len(rays):
            continue
        if d is not None:
            rays = rays * d[None, :]
        rays = rays / rays.max(axis=1, keepdims=True)
        rays = np.where(rays < 0, np.where(rays > -1e-13, 0.0, rays), rays)
        ok = rays.min(axis=1) >= 0
        if len(A):
            lhs = rays @ A.T
            size = rays @ np.abs(A).T
            ok &= np.all(lhs <= 1e-9 * size, axis=1)
        found.append(rays[ok])
    found = [f for f in found if len(f)]
    if not found:
        if errors:
            raise DoubleDescriptionError(f"double description failed: {errors[0]}")
        return np.zeros((k, 0))
    rays = np.vstack(found)
    _, first = np.unique(np.round(rays, 12), axis=0, return_index=True)
    return rays[np.sort(first)].T


def eldp_rays(E: np.ndarray) -> np.ndarray:
    """Extreme rays of the E-LDP cone ``{q >= 0 : q[x] <= e^E[x,x'] q[x']}``, in log space.

    A ray with support S needs S closed under finite budgets (``q[x'] = 0`` forces
    ``q[x] = 0`` whenever ``E[x, x']`` is finite), and it is extreme iff its tight
    ratio rows have rank |S| - 1. In ``u = log q`` those rows are the difference
    constraints ``u[x] - u[x'] <= E[x, x']``, with the same tight sets and ranks (a tight
    cycle has budgets summing to zero, so its ratios multiply to one). So the rays of
    support S are ``exp`` of the vertices of the polyhedron
    ``{u in R^S : u[x] - u[x'] <= E[x, x'], u[s0] = 0}`` — a system whose entries are
    0 and ±1 with the budgets on the right-hand side. The double description runs on
    that well-conditioned system instead of on rows holding ``e^E`` (which spans 1e-13
    to 1 for budgets near 30 and loses rays in floating point).
    """
    import cdd

    E = np.asarray(E, dtype=float)
    k = E.shape[0]
    fin = np.isfinite(E) & ~np.eye(k, dtype=bool)
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
        # variables u[S[1:]] (u[S[0]] = 0); rows b - A u >= 0 for u[x] - u[x'] <= E
        pos = {x: i - 1 for i, x in enumerate(S)}
        rows = []
        for x in S:
            for xp in S:
                if x != xp and fin[x, xp]:
                    a = np.zeros(len(S) - 1)
                    if pos[x] >= 0:
                        a[pos[x]] += 1.0
                    if pos[xp] >= 0:
                        a[pos[xp]] -= 1.0
                    rows.append([E[x, xp]] + list(-a))
        if not rows:
            continue
        # the vertices scale with the budgets: solve for budgets / c, multiply by c, so that
        # budgets of 1e-8 (a metric at tiny eps) are not below cdd's zero tolerance (~1e-7)
        c = max(r[0] for r in rows)
        c = c if c > 0 else 1.0
        rows = [[r[0] / c] + r[1:] for r in rows]
        mat = cdd.matrix_from_array(rows, rep_type=cdd.RepType.INEQUALITY)
        try:
            gens = cdd.copy_generators(cdd.polyhedron_from_matrix(mat))
        except RuntimeError as err:  # cdd's "numerical inconsistency" (budgets 1e-9 next to 1e-5)
            raise DoubleDescriptionError(f"double description failed: {str(err).strip()}") from None
        gen = np.array(gens.array, dtype=float)
        if gen.size == 0 or gens.lin_set:
            continue  # a line in the polyhedron: no vertex, no ray of this support
        verts = gen[gen[:, 0] == 1, 1:]
        if not len(verts) and all(r[0] == 0 for r in rows):
            verts = np.zeros((1, len(S) - 1))  # cdd leaves out a pointed cone's apex
        for g in verts:
            u = np.concatenate([[0.0], g * c])
            v = np.zeros(k)
            v[S] = np.exp(u - u.max())
            rays.append(v)
    if not rays:
        return np.zeros((k, 0))
    V = np.array(rays)
    _, first = np.unique(np.round(V, 12), axis=0, return_index=True)
    return V[np.sort(first)].T


def _explicit_rows(notions: list[Notion], k: int) -> np.ndarray:
    """Dense H-representation ``A q <= 0`` (groups expanded to pairs)."""
    sysm = column_system(notions, k, reduce=True)
    rows = [sysm.A.toarray()] if sysm.A.shape[0] else []
    for upper, lower, eps in sysm.groups:
        e = math.exp(eps)
        for a in upper:
            for b in lower:
                if a != b:
                    r = np.zeros(k)
                    r[a] += 1.0
                    r[b] -= e
                    rows.append(r[None, :])
    if any(np.any(s.b) for s in [sysm]):
        raise InputError("privacy", "(eps, delta)-LIP with delta > 0 is not a cone: use labeled outputs")
    return np.vstack(rows) if rows else np.zeros((0, k))


def _satisfies(v: np.ndarray, notions: list[Notion]) -> bool:
    Q = v[:, None] / v.sum()
    return all(n.achieved(Q) <= n.budget * (1 + 1e-12) + 1e-12 for n in notions)


def relax_notions(notions: list[Notion], k: int, cap: float) -> list[Notion]:
    """The notions with every budget above ``cap`` left out (a relaxation of the cone).

    E-LDP-type budgets above the cap become ``inf`` (pairwise), clique notions, LIP and
    BP-LIP with ε above it are dropped, and so is ULDP (its protected columns become
    unconstrained, which covers its invertible ones).
    """
    from .._notions import BPLIP, ELDP, HighLowLDP, MetricLDP

    out: list[Notion] = []
    for n in notions:
        eps = getattr(n, "epsilon", None)
        if isinstance(n, (ELDP, MetricLDP)):
            E = n.eldp_matrix(k)
            if np.any(np.isfinite(E) & (E > cap)):
                E = np.where(E > cap, np.inf, E)
                if np.isfinite(E[~np.eye(k, dtype=bool)]).any():
                    out.append(ELDP(E))
                continue
            out.append(n)
        elif isinstance(n, (LDP, BlockLDP, HighLowLDP, ULDP, LIP, BPLIP)) and eps is not None and eps > cap:
            continue
        else:
            out.append(n)
    return out


def enumerate_rays(notions: list[Notion], k: int) -> tuple[np.ndarray, np.ndarray]:
    """Extreme rays of the problem's (possibly non-convex ULDP) set of columns.

    Returns
    -------
    V : ndarray (k, R)
        Rays as columns.
    invertible : bool ndarray (R,)
        True for ULDP's invertible unit rays.
    """
    uldp = [n for n in notions if isinstance(n, ULDP)]
    convex = [n for n in notions if not isinstance(n, ULDP)]
    if any(isinstance(n, LIP) and n.delta > 0 for n in notions):
        raise InputError("privacy", "(eps, delta)-LIP with delta > 0 is not a cone: use labeled outputs")
    protected = convex + [LDP(u.epsilon) for u in uldp]
    V = _convex_rays(protected, k)
    inv = np.zeros(V.shape[1], bool)
    if uldp:
        sens = set().union(*[set(u.sensitive) for u in uldp])
        units = []
        for x in range(k):
            if x in sens:
                continue
            e = np.zeros(k)
            e[x] = 1.0
            if not convex or _satisfies(e, convex):
                units.append(e)
        if units:
            V = np.hstack([V, np.array(units).T])
            inv = np.concatenate([inv, np.ones(len(units), bool)])
    return V, inv


def _convex_rays(notions: list[Notion], k: int) -> np.ndarray:
    if not notions:
        return np.eye(k)
    if len(notions) == 1:
        n = notions[0]
        if isinstance(n, LDP):  # includes WC-LIP
            return ldp_rays(k, n.epsilon)
        if isinstance(n, BlockLDP):
            parts = [ldp_rays(len(b), n.epsilon, np.array(b), k) for b in n.blocks]
            return np.hstack(parts)
        if isinstance(n, LIP):
            return lip_slice_vertices(n.prior, n.epsilon)
    # same-ε LDP families are nested: the smallest-ε LDP subsumes larger ones
    ldps = [n for n in notions if type(n) is LDP or n.name == "wc_lip"]
    if len(ldps) == len(notions):
        return ldp_rays(k, min(n.epsilon for n in ldps))
    Es = [n.eldp_matrix(k) for n in notions]
    if all(M is not None for M in Es) and k <= 12:
        # the E-LDP family (E-LDP, metric, block, high-low, LDP): log-space enumeration
        return eldp_rays(np.minimum.reduce(Es))
    A = _explicit_rows(notions, k)
    if k > 14:
        raise SolverError(f"double description for a {k}-input cone with {A.shape[0]} inequalities is too large")
    return cdd_rays(A, k)


def ray_count_estimate(notions: list[Notion], k: int) -> int | None:
    """How many rays the structured enumerators would produce (None if unknown)."""
    convex = [n for n in notions if not isinstance(n, ULDP)]
    uldp = [n for n in notions if isinstance(n, ULDP)]
    if len(convex) == 1 and isinstance(convex[0], LIP):
        return k * 2 ** (k - 1)
    if (not convex and uldp) or (len(convex) == 1 and isinstance(convex[0], LDP)):
        return 2**k
    if len(convex) == 1 and isinstance(convex[0], BlockLDP):
        return sum(2 ** len(b) for b in convex[0].blocks)
    return None
