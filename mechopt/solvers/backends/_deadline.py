"""Run a HiGHS model so that it returns by a deadline.

HiGHS checks its ``time_limit`` only between simplex iterations, and on dense models an
iteration that refactorises the basis is long: a 64×64 grid's Dantzig–Wolfe master
(4 096 dense rows) paused 74, 74, 82 and then 99 s between iterations, and its time
limit returned 58 s late. :func:`run_by` interrupts the simplex from its
interrupt callback early enough instead.
"""

from __future__ import annotations

import time

#: HiGHS is interrupted once the time left is below this many of its longest pauses between
#: simplex iterations (refactorisations of the dense basis; the next one may be longer:
#: 74, 74, 82 then 99 s on a 64×64 grid's first master, with a few seconds of iterations
#: between them). Its own time limit, checked between iterations, returned 8-11 s late on
#: 48×48 and 58 s late on 64×64; an interrupted run returns at once (0.1 s, 0.0 s)
STOP_PAUSES = 1.5


class _EarlyStop:
    """Interrupt a HiGHS simplex early enough that it returns by ``deadline``.

    The simplex-interrupt callback runs every iteration; it records the longest pause
    between two calls (from the start of the run) and interrupts once the time left is
    below :data:`STOP_PAUSES` such pauses.
    """

    def __init__(self, h, deadline: float, start: float):
        self.h, self.deadline = h, deadline
        self.last, self.pause, self.stopped = start, 0.0, False
        try:
            h.cbSimplexInterrupt += self._check
            self.attached = True
        except AttributeError:  # a highspy without callbacks: its time limit alone
            self.attached = False

    def _check(self, event) -> None:
        now = time.perf_counter()
        self.pause = max(self.pause, now - self.last)
        self.last = now
        if now + STOP_PAUSES * self.pause >= self.deadline:
            self.stopped = True
            event.interrupt()

    def detach(self) -> None:
        if self.attached:
            self.h.cbSimplexInterrupt -= self._check


def run_by(h, deadline: float | None) -> bool:
    """``h.run()`` with HiGHS's time limit at ``deadline`` and an :class:`_EarlyStop`; True if it interrupted.

    ``deadline`` is a :func:`time.perf_counter` value (None: no limit).
    """
    if deadline is None:
        h.run()
        return False
    start = time.perf_counter()
    h.setOptionValue("time_limit", h.getRunTime() + max(deadline - start, 1e-3))
    stop = _EarlyStop(h, deadline, start)
    try:
        h.run()
    finally:
        stop.detach()
    return stop.stopped
