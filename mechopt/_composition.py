"""003's LIP bounds in one place: Prop. 1 / Thm 1 (LIP ↔ LDP) and Thm 4 / Cor. 4 / Cor. 5 (composition).

Jiang, Seif, Tandon, Li (003) bound the leakage of LIP mechanisms with two terms that
recur in every statement:

* ``ω(ε, P) = min{2ε, ln((e^ε − 1 + P)/P)}`` — Prop. 1: ε-LIP under a prior with smallest
  probability ``P`` implies ``ω``-LDP; it is also each report's term in Thm 4;
* ``outer(W, P) = ln(P + e^W (1 − P))`` — Thm 1: ``W``-LDP implies ``outer``-LIP; it is
  also the outer function of Thm 4.

Thm 4 (independent reports about one input), Cor. 4 (a set of priors) and Cor. 5, eq. (11)
(a correlated sequence) are ``outer(Σ_k ω(ε_k, P_k), P_out)`` with different ``P_k`` and
``P_out`` (:func:`lip_composition`, unchecked). The checked bounds —
:func:`ldp_composition`, :func:`lip_composition_bound`, :func:`bp_lip_composition_bound`,
:func:`lip_sequence_composition_bound` — are the ones the privacy budget
(:mod:`mechopt.runtime`) and the notion relations (:mod:`mechopt.closed_forms`) export.

:class:`CompositionRule` is how a notion says which of these rules its reports follow
(the class attribute ``Notion.composition``). Imports only :mod:`mechopt._errors` and
:mod:`mechopt._validation`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._errors import InputError
from ._validation import check_epsilon, check_prior

__all__ = ["CompositionRule", "bp_lip_composition_bound", "ldp_composition", "lip_composition",
           "lip_composition_bound", "lip_omega", "lip_outer", "lip_sequence_composition_bound"]


@dataclass(frozen=True)
class CompositionRule:
    """How the budgets of repeated reports under one notion compose (a notion's ``composition``).

    Attributes
    ----------
    kind : str
        ``"additive"`` (:func:`ldp_composition`), ``"lip_prior"`` (003 Thm 4,
        :func:`lip_composition_bound`), ``"lip_prior_set"`` (003 Cor. 4,
        :func:`bp_lip_composition_bound`) or ``"lip_sequence"`` (003 Cor. 5,
        :func:`lip_sequence_composition_bound`).
    source : str
        The rule, cited in messages (``"basic composition, sum of epsilons"``).
    parameter : str or None
        The keyword a :class:`~mechopt.runtime.PrivacyBudget` under this rule needs
        (``"prior"``, ``"priors"``, ``"sensitive"``, ``"joint_p_min"``), and why.
    """

    kind: str
    source: str
    parameter: str | None = None
    why: str = ""


#: basic sequential composition: the budgets add up
ADDITIVE = CompositionRule("additive", "basic composition, sum of epsilons")


def lip_omega(eps: float, p_min: float) -> float:
    """``min{2ε, ln((e^ε − 1 + P)/P)}`` (003 Prop. 1, Thm 4), without overflow; ``2ε`` at ``P = 0``.

    Examples
    --------
    >>> round(lip_omega(1.0, 0.5), 6)      # ln(2e - 1) < 2
    1.48988
    >>> lip_omega(1.0, 0.0)
    2.0
    """
    if math.isinf(eps):
        return math.inf
    if p_min <= 0.0:
        return 2.0 * eps
    second = math.log((math.expm1(eps) + p_min) / p_min) if eps < 700 else (
        eps + math.log1p((p_min - 1.0) * math.exp(-eps)) - math.log(p_min))
    return min(2.0 * eps, second)


def lip_outer(total: float, p_min: float) -> float:
    """``ln(P + e^W (1 − P))`` (003 Thm 1, Thm 4), stable for large ``W``; 0 at ``P = 1``.

    Examples
    --------
    >>> round(lip_outer(math.log(3), 0.5), 6)
    0.693147
    """
    if math.isinf(total):
        return math.inf
    if p_min >= 1.0:
        return 0.0
    # = W + ln(1 − P) + ln(1 + P e^{−W}/(1 − P))
    return total + math.log1p(-p_min) + math.log1p(p_min * math.exp(-total) / (1.0 - p_min))


def lip_composition(epsilons: Iterable[float], inner_p_mins: Iterable[float], outer_p_min: float) -> float:
    """``outer(Σ_k ω(ε_k, P_k), P_out)``: 003 Thm 4 (``P_k = P_out = P_min``), Cor. 4, Cor. 5 eq. (11).

    Examples
    --------
    >>> round(lip_composition([1.0, 1.0], [0.25, 0.25], 0.25), 4)
    3.7184
    """
    return lip_outer(math.fsum(lip_omega(e, p) for e, p in zip(epsilons, inner_p_mins, strict=True)), outer_p_min)


# -- the checked bounds ------------------------------------------------------------------


def check_epsilons(values: Iterable[float], field: str = "epsilons") -> list[float]:
    """The reports' budgets: at least one, each ``>= 0`` (``inf`` allowed)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InputError(field, f"must be a list of budgets, got {values!r}")
    out = [check_epsilon(v, f"{field}[{i}]", allow_inf=True) for i, v in enumerate(values)]
    if not out:
        raise InputError(field, "must contain at least one report's epsilon, got none")
    return out


def check_p_min(value: object, field: str) -> float:
    """A smallest prior probability, in ``(0, 1]``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not (
            0.0 < float(value) <= 1.0):
        raise InputError(field, f"must lie in (0, 1], got {value!r} (a prior with a zero "
                                "entry makes the LIP composition bound infinite)")
    return float(value)


def prior_min(prior: Sequence[float], field: str) -> float:
    """The smallest probability of a prior of at least two entries, in ``(0, 1]``."""
    values = check_prior(prior, field)
    if len(values) < 2:
        raise InputError(field, f"must have at least 2 entries, got {prior!r}")
    return check_p_min(float(values.min()), f"min({field})")


def ldp_composition(epsilons: Iterable[float]) -> float:
    """Basic sequential composition of ε-LDP reports: ``Σ ε_k``.

    Also the rule of ULDP with a common sensitive set (001 Prop. 1: ``(X_S, Y_0P, ε_0)``
    then ``(X_S, Y_1P, ε_1)`` gives ``(X_S, (Y_0 × Y_1)_P, ε_0 + ε_1)``-ULDP) and of the
    E-LDP notions with a fixed pattern. Summed exactly on the decimal values.

    Examples
    --------
    >>> ldp_composition([0.1] * 10)
    1.0
    """
    eps = check_epsilons(epsilons)
    if any(math.isinf(e) for e in eps):
        return math.inf
    return float(sum((Fraction(str(e)) for e in eps), Fraction(0)))


def lip_composition_bound(epsilons: Iterable[float], prior: Sequence[float] | float) -> float:
    """Leakage bound of ``n`` independent ε_k-LIP reports about one input (003 Thm 4).

    As printed in 003 (Jiang, Seif, Tandon, Li), Theorem 4::

        L_LIP(X; Y_1^n) ≤ ln( P_min + exp(Σ_k min{2ε_k, ln((e^{ε_k} − 1 + P_min)/P_min)})
                                     · (1 − P_min) ),     P_min = min_x P_X(x),

    for mechanisms that each satisfy ε_k-LIP under the same prior ``P_X`` and whose
    outputs are independent given ``X``.

    Parameters
    ----------
    epsilons : iterable of float
        ``ε_1 … ε_n``.
    prior : sequence of float, or float
        The prior ``P_X``, or its smallest probability ``P_min`` in ``(0, 1]``.

    Examples
    --------
    >>> round(lip_composition_bound([1.0, 1.0], 0.25), 4)
    3.7184
    >>> lip_composition_bound([1.0, 1.0], [0.25, 0.75]) == lip_composition_bound([1.0, 1.0], 0.25)
    True
    """
    eps = check_epsilons(epsilons)
    p = check_p_min(prior, "prior") if np.ndim(prior) == 0 else prior_min(prior, "prior")
    return lip_composition(eps, [p] * len(eps), p)


def bp_lip_composition_bound(epsilons: Iterable[float], priors: Sequence[Sequence[float]]) -> float:
    """Leakage bound of ``n`` ε_k-BP-LIP reports for a bounded prior set (003 Cor. 4).

    As printed in 003, Corollary 4::

        L_BP-LIP(X; Y_1^n) ≤ ln( min P^bp_min + exp(Σ_k ω_k) (1 − min P^bp_min) ),
        ω_k = min{2ε_k, ln((e^{ε_k} − 1 + max P^bp_min) / max P^bp_min)},

    ``min P^bp_min = min_{x, P} P(x)`` and ``max P^bp_min = max_P min_x P(x)`` over the
    prior set. The set is given by the listed priors; ``max P^bp_min`` is taken over the
    list, which is at most its value over their convex hull and so gives a larger (more
    conservative) ``ω_k``.

    Examples
    --------
    >>> round(bp_lip_composition_bound([1.0, 1.0], [[0.25, 0.75], [0.5, 0.5]]), 4)
    2.7089
    >>> bp_lip_composition_bound([1.0], [[0.5, 0.5]]) == lip_composition_bound([1.0], [0.5, 0.5])
    True
    """
    eps = check_epsilons(epsilons)
    if priors is None or len(priors) == 0:
        raise InputError("priors", "must list at least one prior, got none")
    mins = [prior_min(p, f"priors[{i}]") for i, p in enumerate(priors)]
    return lip_composition(eps, [max(mins)] * len(eps), min(mins))


def lip_sequence_composition_bound(epsilons: Iterable[float], marginal_p_mins: Iterable[float],
                                   joint_p_min: float) -> float:
    """Leakage bound for a correlated data sequence ``X_1 … X_n`` (003 Cor. 5, eq. 11).

    Report ``k`` is an ε_k-LIP release of ``X_k`` alone (under ``X_k``'s marginal prior).
    As printed in 003, eq. (11)::

        L_LIP(X_1^n; Y_1^n) ≤ ln( P^min_{X_1^n}
                + exp(Σ_k min{2ε_k, ln((e^{ε_k} − 1 + P^k_min)/P^k_min)}) (1 − P^min_{X_1^n}) ),

    ``P^min_{X_1^n}`` the smallest probability of the joint distribution of the sequence,
    ``P^k_min`` the smallest probability of ``X_k``'s marginal (one per report).

    Examples
    --------
    >>> round(lip_sequence_composition_bound([1.0], [0.25], 0.25), 4)
    1.7564
    """
    eps = check_epsilons(epsilons)
    mins = [check_p_min(p, f"marginal_p_mins[{i}]") for i, p in enumerate(marginal_p_mins)]
    if len(mins) != len(eps):
        raise InputError("marginal_p_mins", f"must give one value per report ({len(eps)}), got {len(mins)}")
    return lip_composition(eps, mins, check_p_min(joint_p_min, "joint_p_min"))
