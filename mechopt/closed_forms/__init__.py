"""Closed-form mechanisms and notion relations from the papers, implemented as *claims*.

Every formula is implemented exactly as printed (docstrings cite seed file and equation);
where a claim fails under its own paper's definition, a corrected or repaired form sits
next to it and ``docs/closed_forms.md`` records where each holds, with numbers.

Seeds: 000 = Jiang, Li, Tandon, *Context-aware data aggregation with LIP*;
001 = Murakami, Kawamoto, *Utility-optimized LDP*; 002 = Acharya et al., *Context-aware
LDP*; 003 = Jiang, Seif, Tandon, Li, *Context-aware local information privacy*.

Modules: :mod:`._binary` (k = 2), :mod:`._rr` (k-RR, LIP RR), :mod:`._utility_optimized`
(uRR, uRAPPOR), :mod:`._hadamard` (high-low / block Hadamard response),
:mod:`._relations` (003 Prop. 1, Thm 1–3, Cor 3), :mod:`._transfer` (Thm 4, Cor 4–7,
Lemma 3; the Thm 4 / Cor. 4 bounds come from :mod:`mechopt._composition`),
:mod:`._budgets` (achieved budgets from the definitions), :mod:`._registry`
(which formula applies to a :class:`~mechopt.Problem`, read through its typed notions); the objectives'
evaluations (mmse, histogram_mse, ...) are re-exported from :mod:`mechopt.objectives`.
"""

from ._binary import (binary_cone_optimum, binary_eldp_optimum, binary_eldp_optimum_corrected, binary_ldp_mse,
                      binary_lip_mse, binary_lip_optimum, binary_lip_rr, binary_ratio_range, mangat_rr,
                      uncertain_prior_lip_optimum, uncertain_prior_lip_rr, uncertain_prior_lip_rr_holds, warner_rr)
from ._budgets import (block_budget, bp_lip_budget, di_budget, eldp_excess, eldp_pair_budgets, high_low_budget,
                       ldp_budget, ldp_delta, lip_budget, lip_delta, maximal_leakage, uldp_budget, uldp_roles)
from ._hadamard import (block_hadamard_channel, block_hadamard_estimate, block_hadamard_outputs, block_hadamard_sample,
                        high_low_hadamard_channel, high_low_hadamard_estimate, high_low_hadamard_outputs,
                        high_low_hadamard_sample, sylvester_hadamard)
from ..objectives import _functions
from ..objectives._functions import *  # noqa: F403 - the objectives' evaluations (their __all__)
from ._registry import ClosedForm, applicable, binary_cone_rows, closed_form_objective, registry
from .._composition import bp_lip_composition_bound, lip_composition_bound
from ._relations import (approx_ldp_to_lip, approx_lip_to_ldp, approx_lip_to_ldp_corrected, bp_lip_to_ldp_bound,
                         bp_lip_to_ldp_exact, bp_lip_vertices, di_to_lip_bound, di_to_lip_exact, ldp_to_bp_lip_bound,
                         ldp_to_bp_lip_exact, ldp_to_lip_bound, ldp_to_lip_exact, lip_to_di_bound, lip_to_di_exact,
                         lip_to_ldp_bound, lip_to_ldp_exact, prior_divergence)
from ._transfer import (compose_parallel, compose_sequential, empirical_prior_gap_bound, sequential_composition_bound,
                        total_variation, transfer_condition, transfer_gap_bound, transfer_leakage_bound)
from ._rr import k_rr, lip_rr, lip_rr_achieved_budget, lip_rr_calibrated, lip_rr_holds
from ._utility_optimized import (urappor_channel, urappor_estimate, urappor_l1_loss, urappor_parameters, urappor_sample,
                                 urr_channel, urr_estimate, urr_l1_loss)

__all__ = [
    # registry
    "ClosedForm", "registry", "applicable", "closed_form_objective", "binary_cone_rows",
    # binary
    "warner_rr", "mangat_rr", "binary_eldp_optimum", "binary_eldp_optimum_corrected",
    "binary_cone_optimum", "binary_ratio_range", "binary_lip_rr", "binary_lip_mse",
    "binary_ldp_mse", "binary_lip_optimum", "uncertain_prior_lip_rr",
    "uncertain_prior_lip_rr_holds", "uncertain_prior_lip_optimum",
    # k-ary RR
    "k_rr", "lip_rr", "lip_rr_holds", "lip_rr_achieved_budget", "lip_rr_calibrated",
    # utility-optimized
    "urr_channel", "urr_estimate", "urr_l1_loss", "urappor_parameters", "urappor_channel",
    "urappor_sample", "urappor_estimate", "urappor_l1_loss",
    # Hadamard
    "sylvester_hadamard", "high_low_hadamard_channel", "high_low_hadamard_outputs",
    "high_low_hadamard_sample", "high_low_hadamard_estimate", "block_hadamard_channel",
    "block_hadamard_outputs", "block_hadamard_sample", "block_hadamard_estimate",
    # relations
    "lip_to_ldp_exact", "lip_to_ldp_bound", "ldp_to_lip_exact", "ldp_to_lip_bound",
    "bp_lip_vertices", "bp_lip_to_ldp_exact", "bp_lip_to_ldp_bound", "ldp_to_bp_lip_exact",
    "ldp_to_bp_lip_bound", "approx_ldp_to_lip", "approx_lip_to_ldp", "approx_lip_to_ldp_corrected",
    "lip_to_di_exact", "lip_to_di_bound", "di_to_lip_exact", "di_to_lip_bound", "prior_divergence",
    "compose_parallel", "compose_sequential", "lip_composition_bound", "bp_lip_composition_bound",
    "sequential_composition_bound", "total_variation", "transfer_gap_bound",
    "transfer_leakage_bound", "transfer_condition", "empirical_prior_gap_bound",
    # budgets
    "ldp_budget", "eldp_pair_budgets", "eldp_excess", "high_low_budget", "block_budget",
    "lip_budget", "bp_lip_budget", "uldp_roles", "uldp_budget", "di_budget", "maximal_leakage",
    "ldp_delta", "lip_delta",
]
# objectives: mmse, histogram_mse, ..., objective_value (:mod:`mechopt.objectives` owns them)
__all__ += _functions.__all__
