"""The closed-form extreme rays of the LDP and LIP cones, which the notions offer as their structured rays.

* LDP (and each block of block LDP): the ``2^k - 2`` staircases ``1 + (e^ε - 1) 1_S``
  (Kairouz, Oh and Viswanath, "Extremal mechanisms for local differential privacy").
* LIP: the vertices of the slice ``{P·q = 1, e^-ε <= q[x] <= e^ε}``: all coordinates at
  a bound but at most one (docs/model.md).

May import: numpy and :mod:`mechopt._errors`. The solvers' enumeration
(:mod:`mechopt.solvers.free._rays`) reads these; nothing here reads the solvers.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .._errors import SolverError

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


def count_words(n: int) -> str:
    """A count as people read it: digits below a million, else two significant figures.

    >>> count_words(100 * 2 ** 99), count_words(4096)
    ('6.3e31', '4096')
    """
    if n < 10**6:
        return str(n)
    shift = max(n.bit_length() - 64, 0)  # no float(n) or str(n): both fail on huge counts
    lg = math.log10(n >> shift) + shift * math.log10(2)
    exp = math.floor(lg)
    mant = round(10 ** (lg - exp), 1)
    if mant >= 10:
        mant, exp = 1.0, exp + 1
    return f"{mant}e{exp}"


def lip_slice_vertices(prior: np.ndarray, eps: float) -> np.ndarray:
    """Vertices of ``{q : P·q = 1, e^-eps <= q <= e^eps}`` (LIP cone slice)."""
    P = np.asarray(prior, dtype=float)
    k = len(P)
    lo, hi = math.exp(-eps), math.exp(eps)
    count = k * 2 ** (k - 1)
    if count > MAX_ENUMERATED:
        top = max(m for m in range(1, 64) if m * 2 ** (m - 1) <= MAX_ENUMERATED)
        raise SolverError(f"{count_words(count)} LIP vertex candidates (k·2^(k-1)) are too many to enumerate "
                          f"(k <= {top} is listed); instead use notion 'ldp' (implicit pricing), the LIP prior "
                          "as the objective's prior (implicit LIP pricing; give it a time limit), or objective "
                          "kind 'histogram_mse' or 'mutual_information' (LIP pricing on free outputs; give "
                          "them a time limit)")
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
