"""Units of the objectives, said once (summaries, plot axes, docs).

Budgets ε are natural-log ratios ("nats" of privacy loss); information is in nats.
"""

from __future__ import annotations

from typing import Any

_LOSS_UNITS = {"hamming": "probability of a wrong report", "absolute": "units of the labels",
               "squared": "squared units of the labels"}

_UNITS = {
    "mutual_information": "nats",
    "mmse": "squared units of f",
    "histogram_mse": "E‖Ŝ − S‖² / n: squared count errors per user",
    "estimation_variance": "n·E‖p̂ − p‖²: divide by n reports",
}


def objective_unit(objective: Any) -> str:
    """The unit of an objective's value, for people.

    Parameters
    ----------
    objective : Objective or dict or str
        An :class:`~mechopt._problem.Objective`, its spec (``{"kind", "loss"}``) or a kind.

    Returns
    -------
    str

    Examples
    --------
    >>> objective_unit("mutual_information")
    'nats'
    >>> objective_unit({"kind": "expected_loss", "loss": "hamming"})
    'probability of a wrong report'
    """
    if isinstance(objective, str):
        kind, loss = objective, None
    elif isinstance(objective, dict):
        kind, loss = objective.get("kind"), objective.get("loss")
    else:
        kind, loss = objective.kind, getattr(objective, "loss_name", None)
    if kind in ("expected_loss", "bayes_risk"):
        if isinstance(loss, str) or loss is None:
            unit = _LOSS_UNITS.get(loss or "hamming", "loss units")
            if kind == "bayes_risk" and (loss or "hamming") == "hamming":
                return "probability of a wrong guess"
            return unit
        return "units of the loss matrix"
    return _UNITS.get(kind, "")
