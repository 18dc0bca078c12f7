"""The standard LDP mechanisms as families, their budget, their exact check and their scores.

The catalogue behind :func:`mechopt.baselines` (:mod:`mechopt._baselines`) and the
solver's baseline seeds (:mod:`mechopt._baseline_seed`); it imports no dispatcher.

Every baseline is built on the problem's inputs at the budget ``ε_b`` — the largest ε
for which ε-LDP implies every notion of the problem, which each notion states
(:meth:`mechopt.notions.Notion.ldp_equivalent`: the notion's ε for LDP, WC-LIP, block,
high-low, ULDP, LIP and BP-LIP; the smallest finite budget of an E-LDP matrix; ε times the
smallest distance for metric privacy) — then verified **exactly** under the problem's own
notions (:func:`mechopt.families.verify_family`) and scored on its objective. No baseline
applies when a notion states no such budget or the family verifier has no exact check for
it (a notion registered outside mechopt): :func:`baselines` is then empty and
:func:`baselines_report` says why.

All of them are families of :mod:`mechopt.families`, because every one is an
S_k-invariant mixture of d-subset selection or a Hadamard response:

* **k-RR** (Warner 1965; Kairouz, Oh, Viswanath 2016): 1-subset selection.
* **SUE** (basic one-time RAPPOR, Erlingsson, Pihur, Korolova, CCS 2014; Wang et al.,
  USENIX Security 2017 §4.2) and **OUE** (Wang et al. 2017 §4.3): unary encoding with bit
  probabilities ``p`` (own bit) and ``q`` (others). A report ``b`` has probability
  ``C(b)·(p/q)^[x∈b]·((1-p)/(1-q))^[x∉b]``, ``C`` depending on ``|b|`` only, so given
  ``|b| = d`` it is d-subset selection with ratio ``p(1-q)/(q(1-p)) = e^ε``, and
  ``Pr(|b| = d) = p·Bin(k-1, q)(d-1) + (1-p)·Bin(k-1, q)(d)`` for every input.
* **OLH** (Wang et al. 2017 §4.4, ``g = round(e^ε) + 1``) with a fully random hash
  ``h: [k] → [g]`` (the idealisation its analysis uses): merging the proportional
  columns of the reports ``(h, y)`` with the same preimage ``S = h^-1(y)`` leaves
  d-subset selection with ratio ``e^ε`` and ``Pr(|S| = d) = p'·Bin(k-1, 1/g)(d-1) +
  (1-p')·Bin(k-1, 1/g)(d)``, ``p' = e^ε/(e^ε+g-1)`` (merging proportional columns
  changes no sublinear objective and no Fisher information).
* **Subset selection** (Ye & Barg 2018; Wang et al. 2016) with the papers' size
  ``d = ⌈k/(e^ε+1)⌉``.
* **Hadamard response** (Acharya, Sun, Zhang, AISTATS 2019): every input "sensitive" in
  :class:`mechopt.families.HadamardFamily`; with a high-low notion, also the high-low
  Hadamard response of 002 §5.1 on its sensitive set.

Scoring (the ``scored_by`` field says which):

* ``"orbit"`` — ``estimation_variance`` with a uniform ``p0``: the exact risk
  ``(k-1)/sum_d u_d α_d`` of an S_k-invariant mixture
  (:mod:`mechopt.solvers.design._orbit`); ``mutual_information`` and
  ``histogram_mse`` with a uniform prior: one representative column per ``d``.
* ``"channel"`` — the family's channel when it has at most
  :data:`mechopt.families._estimate.MAX_CHANNEL_OUTPUTS` outputs (Hadamard response
  always, up to ``k = 4096``), through :func:`mechopt.evaluate`.
* ``"symmetric sums"`` — ``mutual_information`` and ``histogram_mse`` of a subset
  mixture too large to list, at any prior: the columns' utilities depend on a d-subset
  only through ``π(S)`` and ``Σ_{x∈S} P_x²``, and their sum over every d-subset is an
  integral of elementary symmetric polynomials (:mod:`mechopt._baseline_exact`), exact
  to rounding.
* ``"support-count estimator"`` — ``estimation_variance`` at a non-uniform ``p0`` when
  the channel is too large: the variance ``n·sum_x Var p̂_x`` of the protocols' own
  estimator ``p̂_x = (c_x/n - q*)/(p* - q*)`` (``c_x`` = reports whose set holds ``x``;
  ``p*, q*`` the marginal inclusion probabilities), ``sum_x π_x(1-π_x)/(p*-q*)^2`` with
  ``π_x = q* + (p*-q*) p0_x`` (Wang et al. 2017, eq. (2)). It is an unbiased estimator, so
  this is an upper bound on the efficient risk the objective measures.
"""

from __future__ import annotations

import math

import numpy as np

from ._errors import InputError
from ._problem import Problem
from .notions import HighLowLDP


def baseline_epsilon(notions, k: int) -> float | None:
    """The largest ε with ε-LDP ⇒ every notion (each notion's ``ldp_equivalent``); None if one has none."""
    out = math.inf
    for n in notions:
        budget = n.ldp_equivalent(k)
        if budget is None:
            return None
        out = min(out, budget)
    return 0.0 if not math.isfinite(out) else out


def _binom_pmf(n: int, p: float) -> np.ndarray:
    from scipy.stats import binom

    return binom.pmf(np.arange(n + 1), n, p)


def _mixture_from_bits(k: int, p: float, q: float) -> list[tuple[int, float]]:
    """``Pr(|S| = d) = p·Bin(k-1,q)(d-1) + (1-p)·Bin(k-1,q)(d)``, d = 0..k."""
    b = _binom_pmf(k - 1, q)
    u = np.zeros(k + 1)
    u[1:] += p * b
    u[:-1] += (1 - p) * b
    u /= u.sum()
    return [(d, float(u[d])) for d in range(k + 1) if u[d] > 0]


def baseline_families(k: int, epsilon: float, inputs, *, high_low_sensitive=None) -> list[dict]:
    """``[{"name", "source", "family" (spec)}]`` of the standard mechanisms at ``epsilon``."""
    from .families import HadamardFamily, SubsetMixture
    from .solvers.design._route import ratio_below

    r = ratio_below(epsilon)
    e = math.exp(epsilon)
    rows = [{"name": "k-RR", "source": "Warner 1965; Kairouz, Oh, Viswanath 2016",
             "family": SubsetMixture.spec(r, [(1, 1.0)])}]
    if k >= 2:
        eh = math.exp(epsilon / 2)
        rows.append({"name": "SUE (basic RAPPOR)", "source": "Erlingsson et al. 2014; Wang et al. 2017 §4.2",
                     "family": SubsetMixture.spec(r, _mixture_from_bits(k, eh / (eh + 1), 1 / (eh + 1)))})
        rows.append({"name": "OUE", "source": "Wang et al. 2017 §4.3",
                     "family": SubsetMixture.spec(r, _mixture_from_bits(k, 0.5, 1 / (e + 1)))})
        g = max(2, int(round(e)) + 1)
        rows.append({"name": f"OLH (g={g})", "source": "Wang et al. 2017 §4.4 (fully random hash)",
                     "family": SubsetMixture.spec(r, _mixture_from_bits(k, e / (e + g - 1), 1 / g))})
        d = min(k - 1, max(1, math.ceil(k / (e + 1))))
        rows.append({"name": f"subset selection (d={d})", "source": "Ye & Barg 2018; Wang et al. 2016",
                     "family": SubsetMixture.spec(r, [(d, 1.0)])})
    if k <= 4096:
        rows.append({"name": "Hadamard response", "source": "Acharya, Sun, Zhang 2019",
                     "family": HadamardFamily.spec(r, list(inputs))})
        if high_low_sensitive:
            rows.append({"name": "high-low Hadamard response", "source": "002 §5.1",
                         "family": HadamardFamily.spec(r, list(high_low_sensitive))})
    return rows


def _support_count_risk(fam, p0: np.ndarray) -> float:
    """``sum_x π_x(1-π_x)/(p*-q*)^2`` of the support-count estimator (module docstring)."""
    ps = sum(float(w) * float(fam.inclusion(d)) for d, w in fam.components)
    qs = sum(float(w) * float(fam.cross_inclusion(d)) for d, w in fam.components)
    if ps <= qs:
        return math.inf
    pi = qs + (ps - qs) * p0
    return float(np.sum(pi * (1 - pi)) / (ps - qs) ** 2)


def _orbit_utility(problem: Problem, fam) -> float | None:
    """MI / histogram MSE of an S_k-invariant mixture at a uniform prior (one column per d)."""
    from .objectives import column_utility, offset_sign

    obj = problem.objective
    k = fam.k
    r = float(fam.ratio)
    total = 0.0
    for d, w in fam.components:
        v = np.ones((k, 1))
        v[:d, 0] = r
        z = float(fam.normaliser(d)) if d > 0 else 1.0
        total += float(w) * math.comb(k, d) / z * float(column_utility(obj, v)[0])
    offset, sign = offset_sign(obj)
    return offset + sign * total


def _symmetric_sums(obj, fam) -> float:
    """MI / histogram MSE of a subset mixture at any prior (:mod:`mechopt._baseline_exact`)."""
    from ._baseline_exact import subset_utility
    from .objectives import MUTUAL_INFORMATION, offset_sign

    offset, sign = offset_sign(obj)
    return offset + sign * subset_utility(np.asarray(obj.prior, dtype=float), float(fam.ratio), fam.components,
                                          mi=obj.type is MUTUAL_INFORMATION)


def score(problem: Problem, fam) -> tuple[float | None, str | None, str]:
    """``(objective value, scored_by, note)`` of a family on the problem's objective."""
    from .families import SubsetMixture
    from .objectives import ESTIMATION_VARIANCE, EXPECTED_LOSS, HISTOGRAM_MSE, MUTUAL_INFORMATION, evaluate
    from .families._estimate import MAX_CHANNEL_OUTPUTS, family_channel, subset_risk_uniform
    from .families._spec import approx_count
    from .solvers.design._orbit import is_uniform

    obj = problem.objective
    kind, t = obj.kind, obj.type
    subset = isinstance(fam, SubsetMixture)
    uniform = is_uniform(obj.prior)
    if t is EXPECTED_LOSS:
        if subset and fam.components == ((1, 1),) and tuple(problem.outputs) == tuple(problem.inputs):
            _, Q = family_channel(fam)  # outputs "{i}" in input order: the labeled k-RR
            return float(evaluate(obj, Q)), "channel", ""
        return None, None, f"{kind} is defined over the problem's outputs only"
    if not problem.free_outputs:
        return None, None, "the problem's outputs are labeled"
    if subset and uniform and t is ESTIMATION_VARIANCE:
        return subset_risk_uniform(fam), "orbit", ""
    if subset and uniform and t.separable:
        return _orbit_utility(problem, fam), "orbit", ""
    if fam.outputs_count() <= MAX_CHANNEL_OUTPUTS:
        _, Q = family_channel(fam)
        return float(evaluate(obj, Q)), "channel", ""
    if subset and t in (HISTOGRAM_MSE, MUTUAL_INFORMATION):
        return _symmetric_sums(obj, fam), "symmetric sums", ""
    if subset and t is ESTIMATION_VARIANCE:
        return _support_count_risk(fam, obj.prior), "support-count estimator", (
            "variance of the protocol's own unbiased estimator: an upper bound on the efficient risk")
    return None, None, f"{approx_count(fam.outputs_count())} outputs: too many to score {kind} without a uniform prior"



def standard_families(p: Problem) -> tuple[list[tuple[dict, object]], str]:
    """``([(row, family)], why)``: every standard mechanism at the problem's budget, not yet checked."""
    from .families import family_from_spec

    notions = list(p.notions)
    eps = baseline_epsilon(notions, p.k)
    if eps is None:
        return [], "no ε-LDP budget is known to imply every notion of the problem (Notion.ldp_equivalent)"
    hl = [n for n in notions if isinstance(n, HighLowLDP)]
    sens = [p.inputs[a] for a in hl[0].sensitive] if hl and hl[0].sensitive else None
    return [({**row, "epsilon": eps}, family_from_spec(row["family"], p.inputs))
            for row in baseline_families(p.k, eps, p.inputs, high_low_sensitive=sens)], ""


def verified_families(p: Problem) -> tuple[list[tuple[dict, object, object]], str]:
    """``([(row, family, certificate)], why)``: every standard mechanism at the problem's budget,
    checked exactly under its notions (``why`` says why there are none)."""
    from .families import verify_family

    rows, why = standard_families(p)
    out = []
    for row, fam in rows:
        try:
            out.append((row, fam, verify_family(fam, list(p.notions))))
        except InputError as err:
            return [], f"the baselines cannot be verified exactly under the problem's notions ({err})"
    return out, why
