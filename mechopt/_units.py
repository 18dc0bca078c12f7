"""Units of the objectives, said once (summaries, plot axes, docs).

Budgets ε are natural-log ratios ("nats" of privacy loss); information is in nats. Each
objective's unit is its registered type's (:meth:`mechopt.objectives.ObjectiveType.unit`).
"""

from __future__ import annotations

from typing import Any


def objective_unit(objective: Any) -> str:
    """The unit of an objective's value, for people ("" for a kind no objective type registers).

    Parameters
    ----------
    objective : Objective or dict or str
        An :class:`~mechopt.objectives.Objective`, its spec (``{"kind", "loss"}``) or a kind.

    Returns
    -------
    str

    Examples
    --------
    >>> objective_unit("mutual_information")
    'nats'
    >>> objective_unit({"kind": "expected_loss", "loss": "hamming"})
    'probability of a wrong report'
    >>> objective_unit({"kind": "expected_loss", "loss": [[0, 4], [4, 0]], "unit": "km²"})
    'km²'
    """
    from .objectives import REGISTRY

    if isinstance(objective, str):
        kind, loss, unit = objective, None, None
    elif isinstance(objective, dict):
        kind, loss, unit = objective.get("kind"), objective.get("loss"), objective.get("unit")
    else:
        kind, loss = objective.kind, getattr(objective, "loss_name", None)
        unit = objective.param("unit") if hasattr(objective, "param") else None
    if isinstance(unit, str) and unit:
        return unit  # the loss's own unit (a loss between places: km, km²)
    t = REGISTRY.get(kind) if isinstance(kind, str) else None
    return "" if t is None else t.unit(loss)
