"""Deployment runtime: simulation, estimation, budget accounting, personalized ULDP.

The client side (privatizing on a device) is :mod:`mechopt.client`, standard library
only. This package is the server and simulation side, built on numpy.
"""

from mechopt.runtime._budget import (BUDGET_NOTIONS, BudgetExceededError, MemoizationSavings, PrivacyBudget,
                                     bp_lip_composition_bound, ldp_composition, lip_composition_bound,
                                     lip_sequence_composition_bound, memoization_savings)
from mechopt.runtime._commands import estimate_file, estimate_from_files, privatize_file
from mechopt.runtime._counting import count_reports, list_partitions
from mechopt.runtime._estimators import (VarianceReport, estimate_em, estimate_inversion, estimate_projected,
                                         estimation_covariance, estimation_risk, project_simplex, variance_report)
from mechopt.runtime._mmse import mmse_aggregate, mmse_decoder, mmse_histogram, mmse_histogram_risk, mmse_risk
from mechopt.runtime._inference import (ESTIMATE_METHODS, Estimate, estimate, estimate_counts, parse_counts_csv)
from mechopt.runtime._pum import BOT_PREFIX, PersonalizedULDP, utility_optimized_rr
from mechopt.runtime._sampling import as_channel, simulate_reports

__all__ = [
    "BOT_PREFIX",
    "BUDGET_NOTIONS",
    "BudgetExceededError",
    "ESTIMATE_METHODS",
    "Estimate",
    "MemoizationSavings",
    "PersonalizedULDP",
    "PrivacyBudget",
    "VarianceReport",
    "as_channel",
    "bp_lip_composition_bound",
    "count_reports",
    "estimate",
    "estimate_counts",
    "estimate_em",
    "estimate_file",
    "estimate_from_files",
    "estimate_inversion",
    "estimate_projected",
    "estimation_covariance",
    "estimation_risk",
    "ldp_composition",
    "lip_composition_bound",
    "lip_sequence_composition_bound",
    "list_partitions",
    "memoization_savings",
    "mmse_aggregate",
    "mmse_decoder",
    "mmse_histogram",
    "mmse_histogram_risk",
    "mmse_risk",
    "parse_counts_csv",
    "privatize_file",
    "project_simplex",
    "simulate_reports",
    "utility_optimized_rr",
    "variance_report",
]
