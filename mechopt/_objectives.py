"""Compatibility: the objectives' measures now live in :mod:`mechopt.objectives`; import from there."""

from __future__ import annotations

from .objectives import (RISK_SPREAD, column_utility, estimation_risk, evaluate, evaluation_error,  # noqa: F401
                         fisher_information, information_svd, labeled_form, objective_scale, offset_sign,
                         risk_covariance, risk_from_svd, risk_relative_error, simplex_basis, value_floor)
