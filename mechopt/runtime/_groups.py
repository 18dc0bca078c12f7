"""What a channel that cannot identify the input distribution still identifies: group masses.

With ``λ = Qᵀ p`` the distribution of one report, a linear functional ``aᵀ p`` is
identifiable from reports iff ``a`` lies in the column space of ``Q`` (``a = Q w`` gives
``aᵀ p = wᵀ λ``), i.e. iff ``a ⟂ null(Qᵀ)``. Two kinds of group have identifiable total
mass:

* **groups of identical rows** (the common case: a design that merges inputs): their
  inputs send reports with the same distribution. With one row per group the channel
  ``Q_g`` has the group masses as its inputs; when ``Q_g`` has full rank every estimator
  of :func:`mechopt.runtime.estimate_counts`, and its intervals, applies to it unchanged.
* otherwise, the **connected components of the null space**: join two groups when the
  orthogonal projector ``Π`` onto ``null(Q_gᵀ)`` has ``Π_ij ≠ 0``. ``Π`` is then block
  diagonal over the components, so every null vector splits into null vectors supported
  on one component each, and each sums to 0 (rows sum to 1): the indicator of a
  component is orthogonal to ``null(Qᵀ)``. The masses ``g = A p`` (``A`` the indicators)
  depend on ``p`` through ``Qᵀ p`` only, so ``A p̃`` is the same for every least-squares
  solution ``p̃`` of ``Qᵀ p ≈ f`` on the simplex's affine hull (``f`` the report
  frequencies; the inversion of :func:`mechopt.runtime.estimate_inversion`, minimum norm).
  It is linear in ``f``, ``g = M f + g₀``, unbiased, sums to 1, with covariance
  ``M (diag f − f fᵀ) Mᵀ / n``. Maximum likelihood takes ``A p̂`` for an EM estimate
  ``p̂`` (unique for the same reason), with that covariance at ``λ̂ = Qᵀ p̂`` (the
  least-squares estimator's: asymptotically no smaller than the ML one's).

A channel with a single component (a geo channel whose rows all differ, say) identifies
no group's mass beyond the total: :class:`~mechopt._identifiability.NotIdentifiableError`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mechopt._identifiability import (SHOWN_LABELS, Identifiability, NotIdentifiableError, group_label, identifiability,
                                      null_components)

__all__ = ["GroupPlan", "plan_groups"]

@dataclass(frozen=True)
class GroupPlan:
    """How to estimate the identifiable group masses of a channel (see :func:`plan_groups`).

    Attributes
    ----------
    members : tuple of tuple of str
        The inputs of each group, in input order.
    names : tuple of str
        Each group's name (:func:`mechopt._identifiability.group_label`).
    why : str
        The one-line warning: what is not identifiable, what is estimated instead.
    channel : numpy.ndarray or None
        One row per group when every group is a set of identical rows; ``None`` otherwise.
    indicator : numpy.ndarray, shape (G, k)
        ``A``: row ``g`` is the indicator of group ``g``.
    linear : numpy.ndarray or None, shape (G, m)
        ``M``: the group masses are ``M f + offset`` (general groups only).
    offset : numpy.ndarray or None, shape (G,)
    """

    members: tuple[tuple[str, ...], ...]
    names: tuple[str, ...]
    why: str
    channel: np.ndarray | None
    indicator: np.ndarray
    linear: np.ndarray | None
    offset: np.ndarray | None


def _refuse(ident: Identifiability, names, partly: bool) -> NotIdentifiableError:
    more = " even the merged groups' masses are not identifiable;" if partly else ""
    return NotIdentifiableError(
        f"not identifiable: {ident.describe(names)};{more} use method 'mmse' with a prior to split it by the "
        "prior, or a mechanism designed for estimation (objective estimation_variance)")


def plan_groups(Q: np.ndarray, names: tuple[str, ...], ident: Identifiability) -> GroupPlan:
    """The finest groups this method finds whose masses the reports identify (module docstring).

    Raises
    ------
    NotIdentifiableError
        When no grouping short of all inputs is identifiable.

    Examples
    --------
    >>> from mechopt._identifiability import identifiability
    >>> Q = np.array([[0.5, 0.5], [0.5, 0.5], [0.2, 0.8]])
    >>> plan_groups(Q, ("a", "b", "c"), identifiability(Q)).names
    ('a+b', 'c')
    """
    k = Q.shape[0]
    same = ident.groups()
    Qg = Q[[g[0] for g in same]]
    if len(same) < k and identifiability(Qg).identifiable:
        index_groups, kind, channel = same, "identical inputs", Qg
    else:
        label = null_components(Qg)
        if label.max() == 0:
            raise _refuse(ident, names, len(same) < k)
        index_groups = tuple(tuple(sorted(i for j, g in enumerate(same) if label[j] == c for i in g))
                             for c in range(label.max() + 1))
        index_groups = tuple(sorted(index_groups))
        kind, channel = "inputs the reports can tell apart", None
    members = tuple(tuple(names[i] for i in g) for g in index_groups)
    A = np.zeros((len(index_groups), k))
    for r, g in enumerate(index_groups):
        A[r, list(g)] = 1.0
    M = offset = None
    if channel is None:
        if np.max(np.abs(Q @ np.linalg.lstsq(Q, A.T, rcond=None)[0] - A.T)) > 1e-8:
            raise _refuse(ident, names, True)  # numerically not in the column space after all
        from mechopt.objectives import simplex_basis

        B = simplex_basis(k)
        P = np.linalg.pinv(Q.T @ B)  # the minimum-norm least-squares inversion, as estimate_inversion
        M = A @ B @ P
        last = np.zeros(k)
        last[-1] = 1.0
        offset = A @ (last - B @ P @ Q[-1])
    merged = [g for g in members if len(g) > 1]
    shown = ", ".join(group_label(g) for g in merged[:SHOWN_LABELS]) + (", …" if len(merged) > SHOWN_LABELS else "")
    why = (f"not identifiable: {ident.describe(names)}; estimated instead: the total mass of each group of {kind} "
           f"({sum(len(g) for g in merged)} inputs in {len(merged)} group{'s' if len(merged) > 1 else ''}: "
           f"{shown}); --method mmse splits it by a prior")
    return GroupPlan(members, tuple(group_label(g) for g in members), why, channel, A, M, offset)


def group_estimate(Q: np.ndarray, counts: np.ndarray, plan: GroupPlan, method: str
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """General groups: the estimate, its covariance, the fitted report distribution and the interval kind.

    Examples
    --------
    >>> from mechopt._identifiability import identifiability
    >>> Q = np.array([[0.6, 0.4, 0.0], [0.0, 0.4, 0.6], [0.3, 0.4, 0.3], [0.0, 0.0, 1.0]])
    >>> Q = np.hstack([Q, np.zeros((4, 1))]); Q[3] = [0, 0, 0.5, 0.5]
    >>> plan = plan_groups(Q, ("a", "b", "c", "d"), identifiability(Q))   # a + b = 2c: a, b, c join
    >>> plan.names, plan.channel is None
    (('a+b+c', 'd'), True)
    >>> counts = np.array([0.2, 0.3, 0.1, 0.4]) @ Q * 1000     # reports exactly as p = (0.2, 0.3, 0.1, 0.4) sends
    >>> g, cov, lam, kind = group_estimate(Q, counts, plan, "inversion")
    >>> g.round(6).tolist()                                    # (a + b + c, d)
    [0.6, 0.4]
    """
    from mechopt.runtime._estimators import estimate_em
    from mechopt.runtime._postprocess import project_simplex_rows

    n = float(counts.sum())
    freq = counts / n
    M = plan.linear
    if method == "em":
        p = estimate_em(Q, counts)
        g, lam, kind = plan.indicator @ p, p @ Q, "wald (inversion covariance at the fitted reports)"
    else:
        g, lam, kind = M @ freq + plan.offset, freq, "wald (inversion covariance)"
        if method == "projected":
            g = project_simplex_rows(g)
    cov = M @ (np.diag(lam) - np.outer(lam, lam)) @ M.T / n
    return g, cov, lam, kind
