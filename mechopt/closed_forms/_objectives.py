"""The objectives as the closed forms evaluate them: the validated public functions of :mod:`mechopt.objectives`.

:func:`objective_value` reports a closed form's objective through the objective's
registered type; :func:`mmse`, :func:`bayes_risk`, ... are exported by
:mod:`mechopt.closed_forms`. Their home is :mod:`mechopt.objectives._functions`.
"""

from __future__ import annotations

from ..objectives._functions import (bayes_risk, estimation_variance, expected_loss, histogram_mse,  # noqa: F401
                                     loss_matrix, mmse, mutual_information, objective_value)
