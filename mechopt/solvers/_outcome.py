"""What a solver route hands back to the dispatcher (and the progress display it may show: :mod:`._progress`).

A route never repairs, verifies or sets a status: it returns a :class:`Candidate` (a
channel with the bound it proved), a :class:`FamilyCandidate` (a structured family too
large to list) or a :class:`Failure`; :func:`mechopt._solve.solve` alone repairs the
channel to exact feasibility, verifies it, falls back to the best verified standard
channel and decides ``optimal`` / ``feasible`` / ``error`` (as cvxpy's solvers return a
``Solution`` that only ``Problem.solve`` unpacks). :class:`LabeledSolution` is the raw
answer of the labeled LP and the metric routes, before the dispatcher turns it into a
candidate.

May import: numpy, the standard library and :mod:`mechopt.solvers._progress`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ._progress import Progress, ProgressRecord, memory_mb, progress_reports  # noqa: F401

#: a labeled LP's answer is "optimal" when the proven gap is at most this (relative, see the dispatcher's finish)
LABELED_REL_GAP = 1e-7
#: the same for the ray LP and column generation (SPEC §3)
RAYS_REL_GAP = 1e-9
#: with a time limit, this share of it is kept for the export (repair, exact check, baseline comparison)
EXPORT_SHARE = 0.05


def search_budget(time_limit: float | None, spent: float, default: float) -> float:
    """Seconds a route's search may take: ``default`` without a limit, else the limit less
    :data:`EXPORT_SHARE` of it (kept for the export) and the ``spent`` seconds.

    Examples
    --------
    >>> search_budget(None, 3.0, 600.0), search_budget(100.0, 5.0, 600.0), search_budget(1.0, 5.0, 600.0)
    (600.0, 90.0, 0.0)
    """
    return default if time_limit is None else max(0.0, (1.0 - EXPORT_SHARE) * float(time_limit) - spent)


@dataclass
class Candidate:
    """A channel a route found, with what it proved; the dispatcher repairs, verifies and judges it.

    ``bound`` is a proven bound on the optimum (lower for a minimisation, upper for
    mutual information) or None; the answer is ``optimal`` only when ``proven`` and the
    exported channel is within ``rel_gap`` (relative) of ``bound``. ``mix_columns`` marks
    the columns the repair may mix (ULDP's invertible ones are left alone); ``check(Q) ->
    (ok, report)`` measures extra constraints on the exported channel. ``fallback`` names
    the channel among the fallback's candidates when its repair fails (the best verified
    standard channel is then exported with ``bound``); None: a failed repair is the answer.
    ``recheck_rel_gap``: an ``optimal`` export whose gap exceeds this times ``|objective|``
    is ``feasible`` with ``recheck_message``.
    """

    Q: np.ndarray
    outputs: tuple
    bound: float | None
    stats: dict
    proven: bool = True
    rel_gap: float = RAYS_REL_GAP
    mix_columns: np.ndarray | None = None
    message: str = ""
    check: Callable | None = None
    fallback: str | None = None
    recheck_rel_gap: float | None = None
    recheck_message: str = ""


@dataclass
class FamilyCandidate:
    """A structured family (too many outputs to list) with its objective ``value`` and proven ``bound``.

    ``spec`` is the family document's parameters; the dispatcher checks it exactly and
    calls it ``optimal`` when the gap is within ``rel_gap`` of ``max(|value|, objective
    scale)``. ``started`` is the ``time.perf_counter()`` at which the export began.
    """

    spec: dict
    value: float
    bound: float
    stats: dict
    started: float
    rel_gap: float = RAYS_REL_GAP


@dataclass
class Failure:
    """No channel from the route: a status and why.

    With ``fallback`` the dispatcher exports the best verified standard channel (the best
    constant one, randomized response) instead, judged with ``rel_gap``.
    """

    status: str
    message: str
    stats: dict = field(default_factory=dict)
    fallback: bool = False
    rel_gap: float = RAYS_REL_GAP


@dataclass
class LabeledSolution:
    """The labeled LP's (or a metric route's) answer: its channel, objective and a safe lower bound."""

    status: str
    Q: np.ndarray | None
    objective: float | None
    message: str
    stats: dict
    bound: float = -math.inf  # a safe lower bound on the optimum
