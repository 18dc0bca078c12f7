"""The column-generation loop (Dantzig–Wolfe; Desaulniers, Desrosiers, Solomon, *Column Generation*).

One loop, two roles. A :class:`Master` holds the restricted problem: it adds columns,
solves, and reports a :class:`Round` (status, incumbent value, duals, size). A
:class:`Pricer` looks at a round and answers :class:`Found`: the columns that improve the
master and a *proven* bound on the full problem's optimum from these duals (``None``
when its search was a heuristic). :func:`run` alternates them and keeps the best bound
(the smallest upper bound when maximising, the largest lower bound when minimising); it
stops, in this order of checks after each pricing, when

* the gap is closed (``closed(value, bound)``, the caller's test in its own units),
* the pricer found no column,
* the pricer asked for a last round (``Found.last``: its time is up),
* the master took none of the columns offered (its duals cannot move),
* the ``deadline`` has passed,

or after ``max_iter`` rounds, or at once when the master fails. With
``check_first=True`` the gap is also tested before pricing (an initial analytic bound
may already close it). The stop reason is returned with the last round, the bound and
the number of master solves; what the reason means for a status or a message is the
caller's.

May import: the standard library. Nothing of mechopt: masters and pricers come from the
routes (:mod:`mechopt.solvers.free`, :mod:`mechopt.solvers.design`).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol

#: why :func:`run` stopped
PROVEN, NO_COLUMN, LAST, STALLED, TIME_LIMIT, MAX_ITER, FAILED = (
    "proven", "no_column", "last", "stalled", "time_limit", "max_iter", "failed")


@dataclass
class Round:
    """One solve of the restricted master: ``value`` is the incumbent's, ``size`` its column count."""

    status: str  # "optimal" or the master's failure
    value: float = math.nan
    duals: Any = None
    size: int = 0
    message: str = ""


@dataclass
class Found:
    """A pricer's answer: ``n`` improving columns and a proven bound on the optimum (or ``None``)."""

    columns: Any
    n: int
    bound: float | None = None
    last: bool = False


@dataclass
class LoopResult:
    reason: str
    rounds: int  # master solves
    bound: float  # best proven bound (inf / -inf when none)
    state: Round  # the last round


class Master(Protocol):
    def solve(self) -> Round: ...

    def add(self, columns: Any) -> int: ...


class Pricer(Protocol):
    def price(self, state: Round) -> Found: ...


def run(master: Master, pricer: Pricer, *, sense: str = "max", bound: float | None = None,
        closed: Callable[[float, float], bool] | None = None, check_first: bool = False,
        deadline: float | None = None, max_iter: int | None = None,
        progress: Callable | None = None) -> LoopResult:
    """Alternate ``master`` and ``pricer`` until a stop (module docstring).

    ``sense`` is ``"max"`` (bounds are upper bounds: the smallest is kept) or ``"min"``;
    ``bound`` an initial proven bound; ``deadline`` a :func:`time.perf_counter` value;
    ``progress(it, value, bound, size)`` is called after each pricing (``it`` from 0).

    Examples
    --------
    Maximise ``max(x)`` over columns offered one at a time (a toy master and pricer):

    >>> class M:
    ...     def __init__(self): self.cols = [1.0]
    ...     def solve(self): return Round("optimal", max(self.cols), None, len(self.cols))
    ...     def add(self, cols): self.cols += cols; return len(cols)
    >>> class P:
    ...     def price(self, r):
    ...         new = [r.value + 1.0] if r.value < 3 else []
    ...         return Found(new, len(new), bound=3.0)
    >>> res = run(M(), P(), closed=lambda v, b: b - v <= 0)
    >>> res.reason, res.rounds, res.state.value, res.bound
    ('proven', 3, 3.0, 3.0)
    """
    better = min if sense == "max" else max
    best = bound if bound is not None else (math.inf if sense == "max" else -math.inf)
    state = Round("optimal")
    rounds = range(max_iter) if max_iter is not None else itertools.count()
    it = -1
    for it in rounds:
        state = master.solve()
        if state.status != "optimal":
            return LoopResult(FAILED, it + 1, best, state)
        if check_first and closed is not None and closed(state.value, best):
            return LoopResult(PROVEN, it + 1, best, state)
        found = pricer.price(state)
        if found.bound is not None:
            best = better(best, found.bound)
        if progress is not None:
            progress(it, state.value, best, state.size)
        if closed is not None and closed(state.value, best):
            return LoopResult(PROVEN, it + 1, best, state)
        if found.n == 0:
            return LoopResult(NO_COLUMN, it + 1, best, state)
        if found.last:
            return LoopResult(LAST, it + 1, best, state)
        if master.add(found.columns) == 0:
            return LoopResult(STALLED, it + 1, best, state)
        if deadline is not None and time.perf_counter() > deadline:
            return LoopResult(TIME_LIMIT, it + 1, best, state)
    return LoopResult(MAX_ITER, it + 1, best, state)
