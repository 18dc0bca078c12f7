"""The registry of closed forms: which formula of which paper applies to a problem, and what it builds.

Each :class:`ClosedForm` says where it comes from (``source``), whether it is the formula
*as printed* or a *corrected* one, when it applies, and builds ``(outputs, Q)``. The
``regime`` predicate is this library's finding of where the printed claim actually meets
its privacy notion (tested against an independent numerical check);
``objective_formula`` returns the paper's printed objective value when it prints one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .._errors import InputError
from .._problem import Problem
from ..notions import BPLIP, ELDP, LDP, LIP, ULDP, BlockLDP, HighLowLDP, Notion
from ._binary import (
    binary_cone_optimum,
    binary_eldp_optimum,
    binary_eldp_optimum_corrected,
    binary_ldp_mse,
    binary_lip_mse,
    binary_lip_rr,
    _lip_rows,
    binary_ratio_range,
    mangat_rr,
    uncertain_prior_lip_optimum,
    uncertain_prior_lip_rr,
    uncertain_prior_lip_rr_holds,
    warner_rr,
)
from ._common import exp_or_inf
from ._hadamard import (
    MAX_CHANNEL_K,
    block_hadamard_channel,
    block_hadamard_outputs,
    high_low_hadamard_channel,
    high_low_hadamard_outputs,
)
from ..objectives._functions import objective_value
from ._rr import k_rr, lip_rr, lip_rr_calibrated, lip_rr_holds
from ._utility_optimized import MAX_URAPPOR_CHANNEL_K, urappor_channel, urr_channel

__all__ = ["ClosedForm", "registry", "applicable", "closed_form_objective"]

Builder = Callable[[Problem], "tuple[list[str], np.ndarray]"]


@dataclass(frozen=True)
class ClosedForm:
    """One closed-form mechanism from the papers.

    Every predicate and builder reads a validated :class:`~mechopt.Problem` (from
    :func:`mechopt.load_problem`): its notions are typed and bound to input indices.

    Attributes
    ----------
    name : str
        Stable identifier, e.g. ``"lip_rr"``.
    source : str
        Where it is printed, e.g. ``"003 eq. (19); 000 Thm 3, Thm 5"``.
    applies : callable
        ``applies(problem) -> bool``: the problem has the shape the formula is stated for
        (k, notion classes, outputs). Use :func:`applicable`, which never raises.
    build : callable
        ``build(problem) -> (outputs, Q)``; ``Q`` is ``k x len(outputs)``, rows sum to 1.
    status : str
        ``"as printed"`` or ``"corrected"`` (a correction or repair made by this library).
    regime : callable or None
        ``regime(problem) -> bool``: where the formula meets its own privacy notion, as
        found by this library (``None`` when it always does).
    objective_formula : callable or None
        ``objective_formula(problem) -> float | None``: the paper's printed value of the
        objective for this mechanism, when the paper prints one for the problem's objective.
    note : str
        One line for reports.

    Examples
    --------
    >>> from mechopt import load_problem
    >>> p = load_problem({"inputs": ["no", "yes"], "privacy": [{"notion": "ldp", "epsilon": 1.0}]})
    >>> entry = registry()[0]
    >>> entry.name, entry.applies(p)
    ('warner_rr', True)
    >>> outputs, Q = entry.build(p)
    >>> outputs, Q.shape
    (['no', 'yes'], (2, 2))
    """

    name: str
    source: str
    applies: Callable[[Problem], bool]
    build: Builder
    status: str = "as printed"
    regime: Callable[[Problem], bool] | None = None
    objective_formula: Callable[[Problem], float | None] | None = None
    note: str = ""


# -- shape tests (never raise) --------------------------------------------------------


def _single(problem: Problem, *classes: type) -> Notion | None:
    """The problem's one notion when there is exactly one and it is an instance of ``classes``."""
    if len(problem.notions) == 1 and isinstance(problem.notions[0], classes):
        return problem.notions[0]
    return None


def _labeled_ok(problem: Problem) -> bool:
    """A mechanism whose outputs are the inputs fits the problem's outputs."""
    return problem.free_outputs or tuple(problem.outputs) == tuple(problem.inputs)


def _pure_lip(problem: Problem) -> LIP | None:
    """The problem's one notion when it is ε-LIP with δ = 0."""
    n = _single(problem, LIP)
    return n if n is not None and n.delta == 0 else None


def _inputs(problem: Problem) -> list[str]:
    return list(problem.inputs)


# -- binary cones -----------------------------------------------------------------------


def _edge_rows(E01: float, E10: float) -> list[tuple[float, float]]:
    rows = []
    if not math.isinf(E01):
        rows.append((1.0, -exp_or_inf(E01)))  # q0 <= e^E01 q1
    if not math.isinf(E10):
        rows.append((-exp_or_inf(E10), 1.0))  # q1 <= e^E10 q0
    return rows


def binary_cone_rows(problem: Problem) -> list[tuple[float, float]] | None:
    """Rows ``(a, b)`` with ``a q_1 + b q_2 <= 0`` describing every notion of a k = 2 problem.

    An E-LDP notion (its :meth:`~mechopt.notions.Notion.eldp_matrix`) gives its two pair
    budgets, an ε-LIP or BP-LIP notion its prior(s). ``None`` when ``k != 2`` or some
    notion is none of these cones (ULDP, LIP with δ > 0).

    Examples
    --------
    >>> from mechopt import load_problem
    >>> binary_cone_rows(load_problem({"k": 2, "privacy": [{"notion": "ldp", "epsilon": 0.0}]}))
    [(1.0, -1.0), (-1.0, 1.0)]
    """
    if problem.k != 2:
        return None
    rows: list[tuple[float, float]] = []
    for n in problem.notions:
        if not n.convex or not n.is_cone:
            return None
        E = n.eldp_matrix(2)
        if E is not None:
            rows += _edge_rows(float(E[0, 1]), float(E[1, 0]))
        elif isinstance(n, (LIP, BPLIP)):
            e = exp_or_inf(n.epsilon)
            for P in n.priors:
                rows += _lip_rows(np.asarray(P, dtype=float), e)
        else:
            return None
    return rows


def _binary_cone_applies(problem: Problem) -> bool:
    return _labeled_ok(problem) and binary_cone_rows(problem) is not None


def _binary_cone_build(problem: Problem) -> tuple[list[str], np.ndarray]:
    rows = binary_cone_rows(problem)
    if rows is None:  # pragma: no cover - guarded by applies
        raise InputError("privacy", "not a cone problem with k = 2")
    t_min, t_max = binary_ratio_range([(a, b) for a, b in rows if not (a == 0 and b == 0)])
    return _inputs(problem), binary_cone_optimum(t_min, t_max)


# -- E for binary E-LDP entries -------------------------------------------------------------

#: the notions 002 Thm 2 is stated for (E-LDP and its special cases)
_E_LDP = (LDP, ELDP, HighLowLDP, BlockLDP)


def _binary_E(problem: Problem) -> tuple[float, float] | None:
    """``(ε12, ε21)`` when the single notion of a k = 2 problem is an E-LDP-type notion."""
    n = _single(problem, *_E_LDP)
    if problem.k != 2 or n is None:
        return None
    E = n.eldp_matrix(2)
    return float(E[0, 1]), float(E[1, 0])


def _binary_E_applies(problem: Problem) -> bool:
    return _labeled_ok(problem) and _binary_E(problem) is not None


def _eldp_printed_holds(problem: Problem) -> bool:
    E = _binary_E(problem)
    return E is not None and E[0] == E[1]


# -- individual entries -----------------------------------------------------------------------


def _warner_applies(problem: Problem) -> bool:
    return problem.k == 2 and _labeled_ok(problem) and _single(problem, LDP) is not None


def _warner_build(problem: Problem) -> tuple[list[str], np.ndarray]:
    return _inputs(problem), warner_rr(problem.notions[0].epsilon)


def _mmse_scale(problem: Problem) -> float | None:
    """``(f(x_2) - f(x_1))^2`` for a binary mmse objective (000 states f(X) = X)."""
    from ..objectives import MMSE

    obj = problem.objective
    if obj.type is not MMSE or obj.values is None or problem.k != 2:
        return None
    v = [float(t) for t in obj.values]
    return (v[1] - v[0]) ** 2


def _warner_formula(problem: Problem) -> float | None:
    scale = _mmse_scale(problem)
    if scale is None:
        return None
    P = problem.objective.prior
    return scale * binary_ldp_mse(float(P[1]), problem.notions[0].epsilon)


def _mangat_sensitive(problem: Problem) -> tuple[int, float] | None:
    """``(sensitive index, ε)`` when the problem is Mangat's setting (one of two inputs sensitive)."""
    if problem.k != 2:
        return None
    n = _single(problem, ULDP, HighLowLDP, ELDP)
    if isinstance(n, (ULDP, HighLowLDP)):
        return (n.sensitive[0], n.epsilon) if len(n.sensitive) == 1 else None
    if isinstance(n, ELDP):
        E = n.matrix
        if math.isinf(E[1, 0]) and not math.isinf(E[0, 1]):
            return 0, float(E[0, 1])
        if math.isinf(E[0, 1]) and not math.isinf(E[1, 0]):
            return 1, float(E[1, 0])
    return None


def _mangat_applies(problem: Problem) -> bool:
    return _labeled_ok(problem) and _mangat_sensitive(problem) is not None


def _mangat_build(problem: Problem) -> tuple[list[str], np.ndarray]:
    s, eps = _mangat_sensitive(problem)  # type: ignore[misc]
    Q = mangat_rr(eps)  # rows/cols ordered (non-sensitive, sensitive)
    if s == 0:
        Q = Q[::-1, ::-1]
    return _inputs(problem), Q.copy()


def _eldp_build(problem: Problem) -> tuple[list[str], np.ndarray]:
    a, b = _binary_E(problem)  # type: ignore[misc]
    return _inputs(problem), binary_eldp_optimum(a, b)


def _eldp_corrected_build(problem: Problem) -> tuple[list[str], np.ndarray]:
    a, b = _binary_E(problem)  # type: ignore[misc]
    return _inputs(problem), binary_eldp_optimum_corrected(a, b)


def _krr_applies(problem: Problem) -> bool:
    return _labeled_ok(problem) and _single(problem, LDP) is not None


def _krr_build(problem: Problem) -> tuple[list[str], np.ndarray]:
    return _inputs(problem), k_rr(problem.k, problem.notions[0].epsilon)


def _lip_applies(problem: Problem) -> bool:
    return _pure_lip(problem) is not None and _labeled_ok(problem)


def _lip_prior_eps(problem: Problem) -> tuple[np.ndarray, float]:
    n = problem.notions[0]
    return np.asarray(n.prior, dtype=float), n.epsilon


def _lip_build(problem: Problem) -> tuple[list[str], np.ndarray]:
    P, eps = _lip_prior_eps(problem)
    return _inputs(problem), lip_rr(P, eps)


def _lip_regime(problem: Problem) -> bool:
    P, eps = _lip_prior_eps(problem)
    return lip_rr_holds(P, eps)


def _lip_calibrated_build(problem: Problem) -> tuple[list[str], np.ndarray]:
    P, eps = _lip_prior_eps(problem)
    return _inputs(problem), lip_rr_calibrated(P, eps)


def _binary_lip_applies(problem: Problem) -> bool:
    return problem.k == 2 and _lip_applies(problem)


def _binary_lip_build(problem: Problem) -> tuple[list[str], np.ndarray]:
    P, eps = _lip_prior_eps(problem)
    return _inputs(problem), binary_lip_rr(float(P[1]), eps)


def _binary_lip_formula(problem: Problem) -> float | None:
    scale = _mmse_scale(problem)
    if scale is None or not problem.notions[0].has_prior(problem.objective.prior):
        return None  # eq. (21) is stated for the LIP prior
    P, eps = _lip_prior_eps(problem)
    return scale * binary_lip_mse(float(P[1]), eps)


def _interval_of(problem: Problem) -> tuple[float, float]:
    p1 = [float(P[1]) for P in problem.notions[0].priors]
    return min(p1), max(p1)


def _uncertain_applies(problem: Problem) -> bool:
    return problem.k == 2 and _single(problem, BPLIP) is not None and _labeled_ok(problem)


def _uncertain_build(problem: Problem) -> tuple[list[str], np.ndarray]:
    a, b = _interval_of(problem)
    return _inputs(problem), uncertain_prior_lip_rr(a, b, problem.notions[0].epsilon)


def _uncertain_regime(problem: Problem) -> bool:
    a, b = _interval_of(problem)
    return uncertain_prior_lip_rr_holds(a, b, problem.notions[0].epsilon)


def _uncertain_corrected_build(problem: Problem) -> tuple[list[str], np.ndarray]:
    a, b = _interval_of(problem)
    return _inputs(problem), uncertain_prior_lip_optimum(a, b, problem.notions[0].epsilon)


def _urr_applies(problem: Problem) -> bool:
    return _single(problem, ULDP) is not None and _labeled_ok(problem)


def _urr_build(problem: Problem) -> tuple[list[str], np.ndarray]:
    n = problem.notions[0]
    return _inputs(problem), urr_channel(problem.k, list(n.sensitive), n.epsilon)


def _urappor_applies(problem: Problem) -> bool:
    return (_single(problem, ULDP) is not None and problem.free_outputs
            and problem.k <= MAX_URAPPOR_CHANNEL_K)


def _urappor_build(problem: Problem) -> tuple[list[str], np.ndarray]:
    n = problem.notions[0]
    return urappor_channel(problem.k, list(n.sensitive), n.epsilon)


def _hadamard_applies(cls: type) -> Callable[[Problem], bool]:
    """``applies`` of a Hadamard construction: one notion of class ``cls``, ε > 0, free outputs."""

    def applies(problem: Problem) -> bool:
        n = _single(problem, cls)
        return n is not None and problem.free_outputs and problem.k <= MAX_CHANNEL_K and n.epsilon > 0

    return applies


def _hl_build(problem: Problem) -> tuple[list[str], np.ndarray]:
    n = problem.notions[0]
    A = list(n.sensitive)
    k = problem.k
    outs = high_low_hadamard_outputs(k, A)
    labels = outs[: len(outs) - (k - len(A))] + [f"d:{problem.inputs[x]}" for x in range(k) if x not in A]
    return labels, high_low_hadamard_channel(k, A, n.epsilon)


def _block_build(problem: Problem) -> tuple[list[str], np.ndarray]:
    n = problem.notions[0]
    blocks = [list(b) for b in n.blocks]
    return block_hadamard_outputs(problem.k, blocks), block_hadamard_channel(problem.k, blocks, n.epsilon)


_REGISTRY: tuple[ClosedForm, ...] = (
    ClosedForm("warner_rr", "002 eq. (10); 000 Example 1 (Warner [8]); MSE 000 Prop. 4 eq. (24)",
               _warner_applies, _warner_build, objective_formula=_warner_formula,
               note="binary LDP optimum for every DPI utility (002 Thm 2, ε12 = ε21)"),
    ClosedForm("mangat_rr", "002 eq. (11); 001 §3.1 Example (Mangat [33])",
               _mangat_applies, _mangat_build,
               note="one of two inputs sensitive; ULDP / high-low / one-sided E-LDP"),
    ClosedForm("binary_eldp_optimum", "002 Thm 2 eq. (9)", _binary_E_applies, _eldp_build,
               regime=_eldp_printed_holds,
               note="as printed the indices ε12, ε21 are exchanged: E-LDP only when ε12 = ε21"),
    ClosedForm("binary_eldp_optimum_corrected", "002 Thm 2 eq. (9) with ε12 and ε21 exchanged",
               _binary_E_applies, _eldp_corrected_build, status="corrected",
               note="universally optimal binary E-LDP channel"),
    ClosedForm("binary_cone_optimum", "002 Thm 2 argument on the 2-D cone of any k = 2 problem",
               _binary_cone_applies, _binary_cone_build, status="corrected",
               note="universally optimal for k = 2 (LDP, E-LDP, LIP, BP-LIP, ...); corrects 000 Thm 2 / 003 eq. (19)"),
    ClosedForm("k_rr", "003 §V-A (d); 001 eq. (2); 000 §IV-B Opt-mimo-LDP",
               _krr_applies, _krr_build,
               note="000 claims it minimises the MIMO MSE under LDP; false for k >= 3"),
    ClosedForm("lip_rr", "003 eq. (19); 000 Thm 3 and Thm 5", _lip_applies, _lip_build,
               regime=_lip_regime, note="ε-LIP only when min P >= 1/(1 + e^ε)"),
    ClosedForm("lip_rr_calibrated", "003 eq. (19) at the largest ε' <= ε that meets ε-LIP (mechopt repair)",
               _lip_applies, _lip_calibrated_build, status="corrected",
               note="always ε-LIP; optimal only where eq. (19) already holds"),
    ClosedForm("binary_lip_rr", "000 Thm 2, MSE eq. (21)", _binary_lip_applies, _binary_lip_build,
               regime=_lip_regime, objective_formula=_binary_lip_formula,
               note="ε-LIP only when 1/(1+e^ε) <= P_1 <= e^ε/(1+e^ε)"),
    ClosedForm("uncertain_prior_lip_rr", "003 §IV-B2", _uncertain_applies, _uncertain_build,
               regime=_uncertain_regime, note="ε-BP-LIP only when a e^ε + b >= 1 >= (a + b e^ε) e^-ε"),
    ClosedForm("uncertain_prior_lip_optimum", "003 §IV-B2 corrected: extreme rays of the BP-LIP cone",
               _uncertain_applies, _uncertain_corrected_build, status="corrected"),
    ClosedForm("urr", "001 Def. 4 (uRR)", _urr_applies, _urr_build),
    ClosedForm("urappor", "001 Def. 5 (uRAPPOR, θ = e^{ε/2}/(e^{ε/2}+1))", _urappor_applies, _urappor_build,
               note="outputs are bit strings; k <= 10"),
    ClosedForm("high_low_hadamard", "002 §5.1 eqs. (13)-(14), row H(i+1, .) as in eq. (15)",
               _hadamard_applies(HighLowLDP), _hl_build,
               note="eq. (13) as printed uses row H(i, .): not a channel"),
    ClosedForm("block_hadamard", "002 §6.1", _hadamard_applies(BlockLDP),
               _block_build),
)


def registry() -> list[ClosedForm]:
    """All closed forms, in a stable order.

    Examples
    --------
    >>> names = [c.name for c in registry()]
    >>> "lip_rr" in names and "urappor" in names
    True
    """
    return list(_REGISTRY)


def applicable(problem: Problem) -> list[ClosedForm]:
    """The closed forms whose ``applies(problem)`` is true (an ``InputError`` counts as false).

    A problem no closed form is stated for (a notion registered outside mechopt, say)
    gets an empty list.

    Examples
    --------
    >>> from mechopt import load_problem
    >>> p = load_problem({"k": 3, "privacy": [{"notion": "ldp", "epsilon": 1.0}]})
    >>> [c.name for c in applicable(p)]
    ['k_rr']
    """
    out = []
    for c in _REGISTRY:
        try:
            ok = c.applies(problem)
        except InputError:
            ok = False
        if ok:
            out.append(c)
    return out


def closed_form_objective(problem: Problem, outputs: list[str], Q: np.ndarray) -> float | None:
    """The problem's objective evaluated on a built closed form (``None`` if undefined for it).

    Examples
    --------
    >>> from mechopt import load_problem
    >>> p = load_problem({"k": 2, "privacy": [{"notion": "ldp", "epsilon": 1.0}],
    ...                   "objective": {"kind": "expected_loss", "loss": "hamming"}})
    >>> outs, Q = registry()[0].build(p)
    >>> round(closed_form_objective(p, outs, Q), 6)
    0.268941
    """
    return objective_value(Q, problem.objective.to_spec(), prior=problem.objective.prior,
                           labeled=list(outputs) == list(problem.inputs))
