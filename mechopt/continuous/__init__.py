"""Continuous-valued LIP mechanisms of 003 §IV-C, and a numerical check of their claims.

Paper 003 is Jiang, Seif, Tandon, Li, *Context-Aware Local Information Privacy*. Its
§IV-C gives three mechanisms for a real-valued input ``X`` with a known prior:

* the **sampling mechanism** (eq. 20, Prop. 2): release ``X`` with probability ``λ``,
  else a fresh draw from the prior;
* the **context-aware Gaussian mechanism** (Def. 8, Lemma 4, Prop. 3, Thm 5, Cor. 10):
  ``Y = X + N(0, σ²)`` with ``σ`` calibrated through the ``E_γ``-divergence;
* the **context-aware Laplace mechanism** (Thm 6, eqs. 25–26): ``Y = X + Lap(0, b)``
  with ``b`` from the smallest prior probability, or ``b(x)`` per input.

Each formula is implemented as printed. The paper's claims are then judged against its
own definition of (ε, δ)-LIP (eq. 3): for every input set ``S_x`` and output set ``S_y``,
``Pr(Y∈S_y) ≥ e^-ε Pr(Y∈S_y | X∈S_x) − δ`` and ``Pr(Y∈S_y) ≤ e^ε Pr(Y∈S_y | X∈S_x) + δ``.
By convexity of ``E_γ`` the worst ``S_x`` is a single input, so the smallest δ that
eq. 3 allows at a given ε is exactly::

    δ(ε) = sup_x max( e^-ε · E_{e^ε}(P_{Y|x} ‖ P_Y),  E_{e^ε}(P_Y ‖ P_{Y|x}) )

The paper's Cor. 9 (eq. 22) drops the factor ``e^-ε`` — a sufficient, slightly stronger
condition; both are reported. Pure ε-LIP (δ = 0) is the density ratio of eq. 7 / eq. 8.
:func:`check_additive_lip` and :func:`check_channel_lip` compute these by quadrature on a
fine grid. What they found is written up in ``docs/continuous.md``.
"""

from __future__ import annotations

from ._check import check_additive_lip, check_channel_lip, discretize_prior
from ._common import ContinuousLIPCheck, e_gamma, e_gamma_gaussian
from ._gaussian import gaussian_delta, gaussian_delta_at, gaussian_mechanism, gaussian_sigma, gaussian_sigma_at
from ._laplace import laplace_mechanism, laplace_scale, laplace_scale_dependent
from ._sampling import sampling_delta, sampling_lambda, sampling_mechanism

__all__ = [
    "ContinuousLIPCheck",
    "check_additive_lip",
    "check_channel_lip",
    "discretize_prior",
    "e_gamma",
    "e_gamma_gaussian",
    "gaussian_delta",
    "gaussian_delta_at",
    "gaussian_mechanism",
    "gaussian_sigma",
    "gaussian_sigma_at",
    "laplace_mechanism",
    "laplace_scale",
    "laplace_scale_dependent",
    "sampling_delta",
    "sampling_lambda",
    "sampling_mechanism",
]
