"""Extreme rays of the privacy cone (the V-representation, SPEC §3).

Structured enumerators cover the common notions; anything else goes through the double
description method (pycddlib). Each function returns a ``(k, R)`` array whose columns
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
    codes = np.arange(2 ** (k - 1))
    for j in range(k):
        if P[j] <= 0:
            continue
        others = np.array([i for i in range(k) if i != j])
        bits = ((codes[None, :] >> np.arange(k - 1)[:, None]) & 1).astype(float)
        Qo = lo + (hi - lo) * bits  # (k-1, n)
        qj = (1.0 - P[others] @ Qo) / P[j]
        ok = (qj > lo + 1e-12) & (qj < hi - 1e-12)
        V = np.zeros((k, int(ok.sum())))
        V[others] = Qo[:, ok]
        V[j] = qj[ok]
        out.extend(V.T)
    if not out:
        return np.zeros((k, 0))
    return np.unique(np.round(np.array(out).T, 14), axis=1)


def cdd_rays(A: np.ndarray, k: int) -> np.ndarray:
    """Extreme rays of ``{q >= 0 : A q <= 0}`` by double description (pycddlib)."""
    import cdd

    rows = [[0.0] + list(-row) for row in A] + [[0.0] + list(e) for e in np.eye(k)]
    mat = cdd.matrix_from_array(rows, rep_type=cdd.RepType.INEQUALITY)
    poly = cdd.polyhedron_from_matrix(mat)
    gen = np.array(cdd.copy_generators(poly).array, dtype=float)
    if gen.size == 0:
        return np.zeros((k, 0))
    rays = gen[gen[:, 0] == 0, 1:]
    rays = rays[np.linalg.norm(rays, axis=1) > 1e-12]
    rays = np.where(np.abs(rays) < 1e-13, 0.0, rays)
    return rays.T / rays.max(axis=1)[None, :]


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
