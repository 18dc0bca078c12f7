"""Server side of a family: estimators from per-item counts, their variance, simulation, small channels.

Subset selection (a mixture over ``d``). In component ``d`` an input is in the report
with probability ``p_d`` (its own) or ``q_d`` (another's) — :meth:`SubsetMixture.inclusion`
and :meth:`SubsetMixture.cross_inclusion`. With ``n_d`` reports of component ``d`` and
``c_{d,x}`` of them containing ``x``, ::

    p̂^(d)_x = (c_{d,x} / n_d - q_d) / (p_d - q_d)

is unbiased (Wang et al. 2016, §IV; Ye & Barg 2018, eq. (9)), and so is any fixed
combination ``p̂ = sum_d λ_d p̂^(d)`` with ``sum λ_d = 1``. mechopt takes
``λ_d ∝ n_d (p_d - q_d)^2 / (π_d (1 - π_d))``, ``π_d = d/k`` — inverse-variance weights at
the uniform distribution, where the combination's total variance is
``(k - 1) / sum_d n_d α_d``, the Cramér–Rao risk ``tr(B J^-1 B^T) / n`` of the design
(``α_d`` in :mod:`mechopt.solvers.design._orbit`). Its variance at ``p`` is ::

    Var p̂_x = sum_d λ_d^2 π_{d,x} (1 - π_{d,x}) / (n_d (p_d - q_d)^2),
    π_{d,x} = q_d + (p_d - q_d) p_x.

Hadamard response: outputs are at most ``2k``, so the channel is built and the generic
estimators of :mod:`mechopt.runtime` apply.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._errors import InputError
from ._spec import HadamardFamily, SubsetMixture, parse_subset_label

#: largest number of outputs :func:`family_channel` materialises
MAX_CHANNEL_OUTPUTS = 200_000


@dataclass(frozen=True)
class SubsetCounts:
    """Per-component report counts ``n[d]`` and per-item counts ``c[d]`` (length k)."""

    k: int
    n: dict
    c: dict

    @property
    def total(self) -> int:
        return int(sum(self.n.values()))


@dataclass(frozen=True)
class Reports:
    """Subset reports packed for EM: ``flat`` member positions, report ``sizes`` (same order)."""

    flat: np.ndarray
    sizes: np.ndarray


def count_reports(family: SubsetMixture, labels, where: str = "reports") -> tuple[SubsetCounts, Reports]:
    """Parse subset labels into per-component and per-item counts (and the packed reports, for EM).

    Raises
    ------
    InputError
        A label that is not a subset of a size the family uses (message ``where:line``).
    """
    k = family.k
    sizes_ok = {d for d, _ in family.components}
    parts, sizes = [], []
    for lineno, label in enumerate(labels, start=1):
        try:
            idx = parse_subset_label(label, k)
        except ValueError:
            raise InputError(f"{where}:{lineno}", f"{label[:40]!r} is not an output of the mechanism: expected a "
                             "subset label such as '{0,4,17}' (sorted input positions)") from None
        if len(idx) not in sizes_ok:
            raise InputError(f"{where}:{lineno}", f"a report of {len(idx)} inputs, but the family has subset sizes "
                             f"{sorted(sizes_ok)!r}")
        parts.append(np.asarray(idx, dtype=np.int32))
        sizes.append(len(idx))
    flat = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
    sizes_a = np.asarray(sizes, dtype=np.int64)
    owner_d = np.repeat(sizes_a, sizes_a)
    n = {d: int(np.sum(sizes_a == d)) for d in sizes_ok}
    c = {d: np.bincount(flat[owner_d == d], minlength=k).astype(float) if d > 0 else np.zeros(k) for d in sizes_ok}
    return SubsetCounts(k, n, c), Reports(flat, sizes_a)


def _component_terms(family: SubsetMixture, counts: SubsetCounts):
    k = family.k
    out = []
    for d in family.informative:
        nd = counts.n.get(d, 0)
        if nd == 0:
            continue
        p, q = float(family.inclusion(d)), float(family.cross_inclusion(d))
        if p <= q:
            continue  # ratio 1: no information
        pi = d / k
        out.append((d, nd, p, q, nd * (p - q) ** 2 / (pi * (1 - pi))))
    if not out:
        from .._identifiability import NotIdentifiableError

        raise NotIdentifiableError("reports: no report comes from an informative component (1 <= d <= k-1 "
                                   "with ratio > 1): the reports cannot identify the distribution")
    return out


def subset_inversion(family: SubsetMixture, counts: SubsetCounts) -> tuple[np.ndarray, np.ndarray]:
    """The unbiased estimate and its plug-in per-item variances (module docstring)."""
    terms = _component_terms(family, counts)
    lam = np.array([t[4] for t in terms])
    lam = lam / lam.sum()
    est = np.zeros(family.k)
    for (d, nd, p, q, _), lm in zip(terms, lam):
        est += lm * (counts.c[d] / nd - q) / (p - q)
    return est, subset_variance(family, counts, np.clip(est, 0.0, 1.0), lam=lam)


def subset_variance(family: SubsetMixture, counts: SubsetCounts, p: np.ndarray, *, lam=None) -> np.ndarray:
    """``Var p̂_x`` of :func:`subset_inversion` when the true distribution is ``p``."""
    terms = _component_terms(family, counts)
    if lam is None:
        lam = np.array([t[4] for t in terms])
        lam = lam / lam.sum()
    var = np.zeros(family.k)
    for (_d, nd, pd, qd, _), lm in zip(terms, lam):
        pi = qd + (pd - qd) * np.asarray(p, dtype=float)
        var += lm**2 * pi * (1 - pi) / (nd * (pd - qd) ** 2)
    return var


def subset_em(family: SubsetMixture, reports: Reports, start: np.ndarray, *, max_iter: int = 300,
              tol: float = 1e-9, time_limit: float = 30.0) -> tuple[np.ndarray, float]:
    """Maximum likelihood by EM: ``Pr(S | x) ∝ ratio^[x ∈ S]`` within each component.

    E-step: report ``S`` splits over ``x`` in proportion to ``p_x ratio^[x∈S]``, whose sum
    is ``1 + (ratio - 1) p(S)``; so the expected count of ``x`` is
    ``p_x (T + (ratio - 1) sum_{S ∋ x} 1/(1 + (ratio - 1) p(S)))`` with ``T`` the sum of
    ``1/(1 + (ratio - 1) p(S))`` over reports. Constant components carry no information
    and are left out.
    """
    k, r = family.k, float(family.ratio)
    sizes = reports.sizes
    owner = np.repeat(np.arange(len(sizes)), sizes)
    informative = (sizes > 0) & (sizes < k)
    if not informative.any():
        raise InputError("reports", "no informative report: the distribution cannot be estimated")
    keep = informative[owner]
    flat, owner = reports.flat[keep].astype(np.int64), owner[keep]
    _, owner = np.unique(owner, return_inverse=True)
    m = int(owner.max()) + 1

    def step(p):
        ps = np.bincount(owner, weights=p[flat], minlength=m)
        inv = 1.0 / (1.0 + (r - 1.0) * ps)
        g = (inv.sum() + (r - 1.0) * np.bincount(flat, weights=inv[owner], minlength=k)) / m
        new = p * g
        return new / new.sum(), -float(np.log(inv).sum()), float(g.max() - 1.0)

    p = np.clip(np.asarray(start, dtype=float), 1e-12, None)
    p /= p.sum()
    # SQUAREM (Varadhan & Roland, Scand. J. Statist. 2008, scheme S3) as in
    # mechopt.runtime.estimate_em; the log-likelihood is concave and sum_x p_x g_x = 1, so
    # l(p_ML) - l(p) <= max_x g_x - 1 (per report): stop when that certified gap is <= tol
    import time

    t0 = time.perf_counter()
    steps = 0
    gap = np.inf
    while steps < max_iter and time.perf_counter() - t0 <= time_limit:
        p1, ll0, gap = step(p)
        if gap <= tol:
            return p, gap
        p2, _, _ = step(p1)
        d1, d2 = p1 - p, p2 - 2 * p1 + p
        nv = float(np.linalg.norm(d2))
        alpha = min(-float(np.linalg.norm(d1)) / nv if nv > 0 else -1.0, -1.0)
        cand = np.clip(p - 2 * alpha * d1 + alpha * alpha * d2, 1e-300, None)
        cand, ll_c, _ = step(cand / cand.sum())
        p = cand if ll_c >= ll0 and np.all(np.isfinite(cand)) else p2
        steps += 3
    return p, float(gap)


def simulate_subset_counts(family: SubsetMixture, x: np.ndarray, rng: np.random.Generator,
                           chunk: int = 4096) -> SubsetCounts:
    """Reports of inputs ``x`` (positions), seeded numpy — for simulation, not deployment.

    Same law as :class:`mechopt.families.FamilySampler` (component, then ``x ∈ S`` with
    probability ``p_d``, then a uniform completion from the other inputs), drawn in
    floating point; only the counts are kept.
    """
    k = family.k
    x = np.asarray(x, dtype=np.int64)
    ds = np.array([d for d, _ in family.components])
    w = np.array([float(wt) for _, wt in family.components])
    comp = rng.choice(len(ds), size=len(x), p=w / w.sum())
    n = {int(d): 0 for d in ds}
    c = {int(d): np.zeros(k) for d in ds}
    for j, d in enumerate(ds):
        xs = x[comp == j]
        n[int(d)] = len(xs)
        if d == 0 or not len(xs):
            continue
        if d == k:
            c[int(d)] += len(xs)
            continue
        inc = rng.random(len(xs)) < float(family.inclusion(int(d)))
        for st in range(0, len(xs), chunk):
            xb, ib = xs[st:st + chunk], inc[st:st + chunk]
            keys = rng.random((len(xb), k))
            keys[np.arange(len(xb)), xb] = 2.0  # never among the uniform picks
            m = np.where(ib, d - 1, d)
            # the m smallest keys of the other inputs: rank by key, keep ranks < m
            order = np.argsort(keys, axis=1)
            ranks = np.empty_like(order)
            np.put_along_axis(ranks, order, np.arange(k)[None, :], axis=1)
            chosen = ranks < m[:, None]
            chosen[np.arange(len(xb))[ib], xb[ib]] = True
            c[int(d)] += chosen.sum(axis=0)
    return SubsetCounts(k, n, c)


def family_channel(family) -> tuple[list[str], np.ndarray]:
    """The family's channel as a float matrix (outputs, Q) — only for small output sets."""
    import itertools

    k = family.k
    if family.outputs_count() > MAX_CHANNEL_OUTPUTS:
        raise InputError("family", f"has {family.outputs_count()} outputs: too many to build the matrix "
                         f"(limit {MAX_CHANNEL_OUTPUTS})")
    if isinstance(family, SubsetMixture):
        r = float(family.ratio)
        labels, cols = [], []
        for d, wt in family.components:
            z = float(family.normaliser(d)) if 0 < d else 1.0
            for S in itertools.combinations(range(k), d):
                col = np.full(k, float(wt) / z)
                if d > 0:  # d = k: every entry is ratio / Z_k = 1
                    col[list(S)] *= r
                labels.append("{" + ",".join(map(str, S)) + "}")
                cols.append(col)
        return labels, np.array(cols).T
    fam: HadamardFamily = family
    from ..closed_forms._hadamard import _hadamard_sign

    r, S = float(fam.ratio), fam.slots
    Q = np.zeros((k, S + len(fam.others)))
    cols = np.arange(S)
    for a in fam.sensitive:
        sign = _hadamard_sign(np.full(S, fam.row_of(a)), cols)
        Q[a, :S] = np.where(sign > 0, 2 * r, 2.0) / (S * (r + 1))
    for j, b in enumerate(fam.others):
        Q[b, :S] = 2.0 / (S * (r + 1))
        Q[b, S + j] = (r - 1) / (r + 1)
    return fam.output_labels(), Q


def subset_risk_uniform(family: SubsetMixture) -> float:
    """Cramér–Rao risk ``tr(B J^-1 B^T)`` of a subset mixture at the uniform distribution.

    Every S_k-invariant channel has ``J = a B^T B``, so the risk is ``(k-1)/a`` with
    ``a = sum_d weight_d α_d(ratio)``; ``α_d`` is in :mod:`mechopt.solvers.design._orbit`.
    """
    from ..solvers.design._orbit import subset_alpha

    k = family.k
    a = sum(float(w) * subset_alpha(k, float(family.ratio), d) for d, w in family.components)
    return math.inf if a <= 0 else (k - 1) / a
