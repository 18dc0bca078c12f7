"""Compatibility: the objectives' public evaluations live in :mod:`mechopt.objectives._functions`."""

from __future__ import annotations

from ..objectives._functions import (bayes_risk, estimation_variance, expected_loss, histogram_mse,  # noqa: F401
                                     loss_matrix, mmse, mutual_information, objective_value)
