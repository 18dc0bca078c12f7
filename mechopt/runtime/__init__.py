"""Deployment runtime: simulation, estimation, budget accounting, personalized ULDP.

The client side (privatizing on a device) is :mod:`mechopt.client`, standard library
only. This package is the server and simulation side, built on numpy.
"""

from mechopt.runtime._budget import (
    BUDGET_NOTIONS,
    BudgetExceededError,
    PrivacyBudget,
    bp_lip_composition_bound,
    ldp_composition,
    lip_composition_bound,
    lip_sequence_composition_bound,
)
from mechopt.runtime._commands import ESTIMATE_METHODS, estimate_file, privatize_file
from mechopt.runtime._estimators import (
    VarianceReport,
    estimate_em,
    estimate_inversion,
    estimate_projected,
    estimation_covariance,
    estimation_risk,
    mmse_aggregate,
    mmse_decoder,
    mmse_histogram,
    mmse_histogram_risk,
    mmse_risk,
    project_simplex,
    variance_report,
)
from mechopt.runtime._pum import BOT_PREFIX, PersonalizedULDP, utility_optimized_rr
from mechopt.runtime._sampling import as_channel, simulate_reports

__all__ = [
    "BOT_PREFIX",
    "BUDGET_NOTIONS",
    "BudgetExceededError",
    "ESTIMATE_METHODS",
    "PersonalizedULDP",
    "PrivacyBudget",
    "VarianceReport",
    "as_channel",
    "bp_lip_composition_bound",
    "estimate_em",
    "estimate_file",
    "estimate_inversion",
    "estimate_projected",
    "estimation_covariance",
    "estimation_risk",
    "ldp_composition",
    "lip_composition_bound",
    "lip_sequence_composition_bound",
    "mmse_aggregate",
    "mmse_decoder",
    "mmse_histogram",
    "mmse_histogram_risk",
    "mmse_risk",
    "privatize_file",
    "project_simplex",
    "simulate_reports",
    "utility_optimized_rr",
    "variance_report",
]
