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
from .._validation import check_epsilon, check_prior
from ._common import exp_or_inf
from ._hadamard import (
    MAX_CHANNEL_K,
    block_hadamard_channel,
    block_hadamard_outputs,
    high_low_hadamard_channel,
    high_low_hadamard_outputs,
)
from ._objectives import objective_value
from ._relations import bp_lip_vertices
from ._rr import k_rr, lip_rr, lip_rr_calibrated, lip_rr_holds
from ._spec import ClosedFormSpec, eldp_matrix
from ._utility_optimized import MAX_URAPPOR_CHANNEL_K, urappor_channel, urr_channel

__all__ = ["ClosedForm", "registry", "applicable", "closed_form_objective"]

Builder = Callable[[ClosedFormSpec], "tuple[list[str], np.ndarray]"]


@dataclass(frozen=True)
class ClosedForm:
    """One closed-form mechanism from the papers.

    Attributes
    ----------
    name : str
        Stable identifier, e.g. ``"lip_rr"``.
    source : str
        Where it is printed, e.g. ``"003 eq. (19); 000 Thm 3, Thm 5"``.
    applies : callable
        ``applies(spec) -> bool``: the problem has the shape the formula is stated for
        (k, notion kinds, outputs). Use :func:`applicable`, which never raises.
    build : callable
        ``build(spec) -> (outputs, Q)``; ``Q`` is ``k x len(outputs)``, rows sum to 1.
        Raises :class:`~mechopt._errors.InputError` on invalid parameters.
    status : str
        ``"as printed"`` or ``"corrected"`` (a correction or repair made by this library).
    regime : callable or None
        ``regime(spec) -> bool``: where the formula meets its own privacy notion, as
        found by this library (``None`` when it always does).
    objective_formula : callable or None
        ``objective_formula(spec) -> float | None``: the paper's printed value of the
        objective for this mechanism, when the paper prints one for ``spec.objective``.
    note : str
        One line for reports.

    Examples
    --------
    >>> s = ClosedFormSpec(k=2, inputs=["no", "yes"], notions=[{"notion": "ldp", "epsilon": 1.0}])
    >>> entry = registry()[0]
    >>> entry.name, entry.applies(s)
    ('warner_rr', True)
    >>> outputs, Q = entry.build(s)
    >>> outputs, Q.shape
    (['no', 'yes'], (2, 2))
    """

    name: str
    source: str
    applies: Callable[[ClosedFormSpec], bool]
    build: Builder
    status: str = "as printed"
    regime: Callable[[ClosedFormSpec], bool] | None = None
    objective_formula: Callable[[ClosedFormSpec], float | None] | None = None
    note: str = ""


# -- shape tests (never raise) --------------------------------------------------------


def _single(spec: ClosedFormSpec, *kinds: str) -> dict | None:
    return spec.only(*kinds)


def _is_ldp(spec: ClosedFormSpec) -> dict | None:
    return _single(spec, "ldp", "wc_lip")


def _lip_pure(n: dict) -> bool:
    d = n.get("delta", 0)
    return n.get("prior") is not None and (d in (0, 0.0, None))


def _uldp(spec: ClosedFormSpec) -> dict | None:
    return _single(spec, "uldp")


# -- binary cones -----------------------------------------------------------------------


def _edge_rows(E01: float, E10: float) -> list[tuple[float, float]]:
    rows = []
    if not math.isinf(E01):
        rows.append((1.0, -exp_or_inf(E01)))  # q0 <= e^E01 q1
    if not math.isinf(E10):
        rows.append((-exp_or_inf(E10), 1.0))  # q1 <= e^E10 q0
    return rows


def _bp_priors(spec: ClosedFormSpec, n: dict, i: int) -> list[np.ndarray]:
    if n.get("priors") is not None:
        raw = n["priors"]
        if not isinstance(raw, (list, tuple)) or not raw:
            raise InputError(f"privacy[{i}].priors", f"must be a non-empty list of priors, got {raw!r}")
        return [check_prior(p, f"privacy[{i}].priors[{j}]", k=spec.k) for j, p in enumerate(raw)]
    if n.get("lower") is not None and n.get("upper") is not None:
        return list(bp_lip_vertices(n["lower"], n["upper"]))
    raise InputError(f"privacy[{i}]", "bp_lip needs 'priors' or both 'lower' and 'upper'")


def _metric_distance(spec: ClosedFormSpec, n: dict, i: int) -> float:
    """Shortest-path distance between the two inputs of a binary metric notion."""
    d = math.inf
    for j, edge in enumerate(n.get("edges", [])):
        if not isinstance(edge, (list, tuple)) or len(edge) != 3:
            raise InputError(f"privacy[{i}].edges[{j}]", f"must be [a, b, length], got {edge!r}")
        a, b, length = edge
        ends = {spec.subset({"e": [a]}, "e", i)[0], spec.subset({"e": [b]}, "e", i)[0]}
        L = float(length)
        if not L >= 0:
            raise InputError(f"privacy[{i}].edges[{j}]", f"length must be >= 0, got {length!r}")
        if ends == {0, 1}:
            d = min(d, L)
    return d


def binary_cone_rows(spec: ClosedFormSpec) -> list[tuple[float, float]] | None:
    """Rows ``(a, b)`` with ``a q_1 + b q_2 <= 0`` describing every notion of a k = 2 spec.

    ``None`` when some notion is not a cone (ULDP, LIP with δ > 0) or ``k != 2``.

    Examples
    --------
    >>> s = ClosedFormSpec(k=2, inputs=["a", "b"], notions=[{"notion": "ldp", "epsilon": 0.0}])
    >>> binary_cone_rows(s)
    [(1.0, -1.0), (-1.0, 1.0)]
    """
    if spec.k != 2 or not spec.notions:
        return None
    rows: list[tuple[float, float]] = []
    for i, n in enumerate(spec.notions):
        kind = n["notion"]
        if kind in ("ldp", "wc_lip"):
            eps = spec.epsilon(n, i)
            rows += _edge_rows(eps, eps)
        elif kind == "eldp":
            E = eldp_matrix(spec, n, i)
            rows += _edge_rows(E[0, 1], E[1, 0])
        elif kind == "block":
            eps = spec.epsilon(n, i)
            blocks = n.get("blocks", [])
            same = any(set(spec.subset({"b": b}, "b", i)) == {0, 1} for b in blocks)
            if same:
                rows += _edge_rows(eps, eps)
        elif kind == "high_low":
            eps = spec.epsilon(n, i)
            A = spec.subset(n, "sensitive", i)
            rows += _edge_rows(eps if 0 in A else math.inf, eps if 1 in A else math.inf)
        elif kind == "metric":
            eps = spec.epsilon(n, i)
            d = _metric_distance(spec, n, i)
            rows += _edge_rows(eps * d, eps * d)
        elif kind == "lip":
            if not _lip_pure(n):
                return None
            P = check_prior(n["prior"], f"privacy[{i}].prior", k=2)
            rows += _lip_rows(P, exp_or_inf(spec.epsilon(n, i)))
        elif kind == "bp_lip":
            e = exp_or_inf(spec.epsilon(n, i))
            for P in _bp_priors(spec, n, i):
                rows += _lip_rows(np.asarray(P), e)
        else:
            return None
    return rows


def _binary_cone_applies(spec: ClosedFormSpec) -> bool:
    if spec.k != 2 or not spec.notions or not spec.labeled_outputs_ok():
        return False
    for n in spec.notions:
        if n["notion"] == "uldp" or (n["notion"] == "lip" and not _lip_pure(n)):
            return False
        if n["notion"] == "bp_lip" and n.get("priors") is None and (n.get("lower") is None or n.get("upper") is None):
            return False
    return True


def _guarded(found, rule: str):
    """``found``, which the entry's ``applies`` promised is not ``None``."""
    if found is None:  # pragma: no cover - guarded by applies
        raise InputError("privacy", rule)
    return found


def _binary_cone_build(spec: ClosedFormSpec) -> tuple[list[str], np.ndarray]:
    rows = _guarded(binary_cone_rows(spec), "not a cone problem with k = 2")
    t_min, t_max = binary_ratio_range([(a, b) for a, b in rows if not (a == 0 and b == 0)])
    return list(spec.inputs), binary_cone_optimum(t_min, t_max)


# -- E for binary E-LDP entries -------------------------------------------------------------


def _binary_E(spec: ClosedFormSpec) -> tuple[float, float] | None:
    """``(ε12, ε21)`` when the single notion of a k = 2 spec is an E-LDP-type notion."""
    if spec.k != 2 or len(spec.notions) != 1:
        return None
    n = spec.notions[0]
    kind = n["notion"]
    if kind in ("ldp", "wc_lip"):
        e = spec.epsilon(n)
        return e, e
    if kind == "eldp":
        E = eldp_matrix(spec, n)
        return float(E[0, 1]), float(E[1, 0])
    if kind == "high_low":
        e = spec.epsilon(n)
        A = spec.subset(n, "sensitive")
        return (e if 0 in A else math.inf), (e if 1 in A else math.inf)
    if kind == "block":
        e = spec.epsilon(n)
        same = any(set(spec.subset({"b": b}, "b")) == {0, 1} for b in n.get("blocks", []))
        return (e, e) if same else (math.inf, math.inf)
    return None


def _binary_E_applies(spec: ClosedFormSpec) -> bool:
    return (
        spec.k == 2 and spec.labeled_outputs_ok() and len(spec.notions) == 1
        and spec.notions[0]["notion"] in ("ldp", "wc_lip", "eldp", "high_low", "block")
    )


def _eldp_printed_holds(spec: ClosedFormSpec) -> bool:
    E = _binary_E(spec)
    return E is not None and E[0] == E[1]


# -- individual entries -----------------------------------------------------------------------


def _warner_applies(spec: ClosedFormSpec) -> bool:
    return spec.k == 2 and spec.labeled_outputs_ok() and _is_ldp(spec) is not None


def _warner_build(spec: ClosedFormSpec) -> tuple[list[str], np.ndarray]:
    return list(spec.inputs), warner_rr(spec.epsilon(spec.notions[0]))


def _mmse_scale(spec: ClosedFormSpec) -> float | None:
    """``(f(x_2) - f(x_1))^2`` for a binary mmse objective (000 states f(X) = X)."""
    from ..objectives import MMSE, REGISTRY

    obj = spec.objective
    if REGISTRY.get(obj.get("kind")) is not MMSE or obj.get("values") is None or spec.k != 2:
        return None
    v = [float(t) for t in obj["values"]]
    return (v[1] - v[0]) ** 2


def _warner_formula(spec: ClosedFormSpec) -> float | None:
    scale = _mmse_scale(spec)
    if scale is None:
        return None
    P = spec.objective_prior()
    return scale * binary_ldp_mse(float(P[1]), spec.epsilon(spec.notions[0]))


def _mangat_sensitive(spec: ClosedFormSpec) -> tuple[int, float] | None:
    """``(sensitive index, ε)`` when the spec is Mangat's setting (one of two inputs sensitive)."""
    if spec.k != 2 or len(spec.notions) != 1:
        return None
    n = spec.notions[0]
    if n["notion"] in ("uldp", "high_low"):
        S = spec.subset(n, "sensitive")
        if len(S) == 1:
            return S[0], spec.epsilon(n)
        return None
    if n["notion"] == "eldp":
        E = eldp_matrix(spec, n)
        if math.isinf(E[1, 0]) and not math.isinf(E[0, 1]):
            return 0, float(E[0, 1])
        if math.isinf(E[0, 1]) and not math.isinf(E[1, 0]):
            return 1, float(E[1, 0])
    return None


def _mangat_applies(spec: ClosedFormSpec) -> bool:
    if spec.k != 2 or not spec.labeled_outputs_ok() or len(spec.notions) != 1:
        return False
    n = spec.notions[0]
    if n["notion"] in ("uldp", "high_low"):
        return isinstance(n.get("sensitive"), (list, tuple)) and len(n["sensitive"]) == 1
    if n["notion"] == "eldp":
        try:
            return _mangat_sensitive(spec) is not None
        except InputError:
            return False
    return False


def _mangat_build(spec: ClosedFormSpec) -> tuple[list[str], np.ndarray]:
    s, eps = _guarded(_mangat_sensitive(spec), "Mangat's RR needs exactly one sensitive input of two")
    Q = mangat_rr(eps)  # rows/cols ordered (non-sensitive, sensitive)
    if s == 0:
        Q = Q[::-1, ::-1]
    return list(spec.inputs), Q.copy()


def _eldp_build(spec: ClosedFormSpec) -> tuple[list[str], np.ndarray]:
    a, b = _binary_E(spec)  # type: ignore[misc]
    return list(spec.inputs), binary_eldp_optimum(a, b)


def _eldp_corrected_build(spec: ClosedFormSpec) -> tuple[list[str], np.ndarray]:
    a, b = _binary_E(spec)  # type: ignore[misc]
    return list(spec.inputs), binary_eldp_optimum_corrected(a, b)


def _krr_applies(spec: ClosedFormSpec) -> bool:
    return spec.labeled_outputs_ok() and _is_ldp(spec) is not None


def _krr_build(spec: ClosedFormSpec) -> tuple[list[str], np.ndarray]:
    return list(spec.inputs), k_rr(spec.k, spec.epsilon(spec.notions[0]))


def _lip_applies(spec: ClosedFormSpec) -> bool:
    n = _single(spec, "lip")
    return n is not None and _lip_pure(n) and spec.labeled_outputs_ok()


def _lip_prior_eps(spec: ClosedFormSpec) -> tuple[np.ndarray, float]:
    n = spec.notions[0]
    return check_prior(n["prior"], "privacy[0].prior", k=spec.k), spec.epsilon(n)


def _lip_build(spec: ClosedFormSpec) -> tuple[list[str], np.ndarray]:
    P, eps = _lip_prior_eps(spec)
    return list(spec.inputs), lip_rr(P, eps)


def _lip_regime(spec: ClosedFormSpec) -> bool:
    P, eps = _lip_prior_eps(spec)
    return lip_rr_holds(P, eps)


def _lip_calibrated_build(spec: ClosedFormSpec) -> tuple[list[str], np.ndarray]:
    P, eps = _lip_prior_eps(spec)
    return list(spec.inputs), lip_rr_calibrated(P, eps)


def _binary_lip_applies(spec: ClosedFormSpec) -> bool:
    return spec.k == 2 and _lip_applies(spec)


def _binary_lip_build(spec: ClosedFormSpec) -> tuple[list[str], np.ndarray]:
    P, eps = _lip_prior_eps(spec)
    return list(spec.inputs), binary_lip_rr(float(P[1]), eps)


def _binary_lip_formula(spec: ClosedFormSpec) -> float | None:
    scale = _mmse_scale(spec)
    if scale is None:
        return None
    P, eps = _lip_prior_eps(spec)
    Pobj = spec.objective_prior()
    if not np.allclose(Pobj, P):
        return None  # eq. (21) is stated for the LIP prior
    return scale * binary_lip_mse(float(P[1]), eps)


def _interval_of(spec: ClosedFormSpec) -> tuple[float, float]:
    n = spec.notions[0]
    Ps = _bp_priors(spec, n, 0)
    p1 = [float(P[1]) for P in Ps]
    return min(p1), max(p1)


def _uncertain_applies(spec: ClosedFormSpec) -> bool:
    n = _single(spec, "bp_lip")
    if spec.k != 2 or n is None or not spec.labeled_outputs_ok():
        return False
    return n.get("priors") is not None or (n.get("lower") is not None and n.get("upper") is not None)


def _uncertain_build(spec: ClosedFormSpec) -> tuple[list[str], np.ndarray]:
    a, b = _interval_of(spec)
    return list(spec.inputs), uncertain_prior_lip_rr(a, b, spec.epsilon(spec.notions[0]))


def _uncertain_regime(spec: ClosedFormSpec) -> bool:
    a, b = _interval_of(spec)
    return uncertain_prior_lip_rr_holds(a, b, spec.epsilon(spec.notions[0]))


def _uncertain_corrected_build(spec: ClosedFormSpec) -> tuple[list[str], np.ndarray]:
    a, b = _interval_of(spec)
    return list(spec.inputs), uncertain_prior_lip_optimum(a, b, spec.epsilon(spec.notions[0]))


def _urr_applies(spec: ClosedFormSpec) -> bool:
    n = _uldp(spec)
    return n is not None and isinstance(n.get("sensitive"), (list, tuple)) and spec.labeled_outputs_ok()


def _urr_build(spec: ClosedFormSpec) -> tuple[list[str], np.ndarray]:
    n = spec.notions[0]
    return list(spec.inputs), urr_channel(spec.k, spec.subset(n, "sensitive"), spec.epsilon(n))


def _urappor_applies(spec: ClosedFormSpec) -> bool:
    n = _uldp(spec)
    return (n is not None and isinstance(n.get("sensitive"), (list, tuple))
            and spec.free_outputs() and spec.k <= MAX_URAPPOR_CHANNEL_K)


def _urappor_build(spec: ClosedFormSpec) -> tuple[list[str], np.ndarray]:
    n = spec.notions[0]
    return urappor_channel(spec.k, spec.subset(n, "sensitive"), spec.epsilon(n))


def _hadamard_applies(notion: str, field: str) -> Callable[[ClosedFormSpec], bool]:
    """``applies`` of a Hadamard construction: one ``notion`` with a listed ``field``, ε > 0."""

    def applies(spec: ClosedFormSpec) -> bool:
        n = _single(spec, notion)
        return (n is not None and spec.free_outputs() and spec.k <= MAX_CHANNEL_K
                and isinstance(n.get(field), (list, tuple)) and _positive_eps(spec))

    return applies


def _hl_build(spec: ClosedFormSpec) -> tuple[list[str], np.ndarray]:
    n = spec.notions[0]
    A = spec.subset(n, "sensitive")
    eps = spec.epsilon(n)
    outs = high_low_hadamard_outputs(spec.k, A)
    labels = outs[: len(outs) - (spec.k - len(A))] + [
        f"d:{spec.inputs[x]}" for x in range(spec.k) if x not in A
    ]
    return labels, high_low_hadamard_channel(spec.k, A, eps)


def _block_build(spec: ClosedFormSpec) -> tuple[list[str], np.ndarray]:
    n = spec.notions[0]
    blocks = [spec.subset({"b": b}, "b") for b in n["blocks"]]
    eps = spec.epsilon(n)
    return block_hadamard_outputs(spec.k, blocks), block_hadamard_channel(spec.k, blocks, eps)


def _positive_eps(spec: ClosedFormSpec) -> bool:
    return check_epsilon(spec.notions[0].get("epsilon"), "privacy[0].epsilon") > 0


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
               _hadamard_applies("high_low", "sensitive"), _hl_build,
               note="eq. (13) as printed uses row H(i, .): not a channel"),
    ClosedForm("block_hadamard", "002 §6.1", _hadamard_applies("block", "blocks"),
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


def applicable(spec: ClosedFormSpec) -> list[ClosedForm]:
    """The closed forms whose ``applies(spec)`` is true.

    ``applies`` inspects the shape of the problem (k, notion kinds, outputs); ``build``
    validates the numbers and raises :class:`~mechopt._errors.InputError` with the field.
    An ``InputError`` raised while deciding applicability makes the form inapplicable.

    Examples
    --------
    >>> s = ClosedFormSpec(k=3, inputs=["a", "b", "c"], notions=[{"notion": "ldp", "epsilon": 1.0}])
    >>> [c.name for c in applicable(s)]
    ['k_rr']
    """
    out = []
    for c in _REGISTRY:
        try:
            ok = c.applies(spec)
        except InputError:
            ok = False
        if ok:
            out.append(c)
    return out


def closed_form_objective(spec: ClosedFormSpec, outputs: list[str], Q: np.ndarray) -> float | None:
    """The spec's objective evaluated on a built closed form (``None`` if undefined for it).

    Examples
    --------
    >>> s = ClosedFormSpec(k=2, inputs=["a", "b"], notions=[{"notion": "ldp", "epsilon": 1.0}],
    ...                    objective={"kind": "expected_loss", "loss": "hamming"}, outputs="inputs")
    >>> outs, Q = registry()[0].build(s)
    >>> round(closed_form_objective(s, outs, Q), 6)
    0.268941
    """
    if not spec.objective or spec.objective.get("kind") is None:
        return None
    return objective_value(Q, spec.objective, prior=spec.objective_prior(),
                           labeled=list(outputs) == list(spec.inputs))
