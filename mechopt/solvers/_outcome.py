"""What a solver route hands back to the dispatcher, and the progress display it may show.

A route never repairs, verifies or sets a status: it returns a :class:`Candidate` (a
channel with the bound it proved), a :class:`FamilyCandidate` (a structured family too
large to list) or a :class:`Failure`; :func:`mechopt._solve.solve` alone repairs the
channel to exact feasibility, verifies it, falls back to the best verified standard
channel and decides ``optimal`` / ``feasible`` / ``error`` (as cvxpy's solvers return a
``Solution`` that only ``Problem.solve`` unpacks). :class:`LabeledSolution` is the raw
answer of the labeled LP and the metric routes, before the dispatcher turns it into a
candidate.

May import: numpy and the standard library. Nothing of mechopt.
"""

from __future__ import annotations

import math
import sys
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

#: a labeled LP's answer is "optimal" when the proven gap is at most this (relative, see the dispatcher's finish)
LABELED_REL_GAP = 1e-7
#: the same for the ray LP and column generation (SPEC §3)
RAYS_REL_GAP = 1e-9


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


#: seconds between progress lines when stderr is not a terminal (``MECHOPT_PROGRESS_INTERVAL`` overrides)
PROGRESS_INTERVAL = 10.0
#: seconds between redraws of the progress line on a terminal
TTY_INTERVAL = 0.2
#: the method a progress report comes from, by the solver function on the call stack (the outermost wins:
#: the relaxation runs the IPM inside); a route may also name it: ``progress(..., method="ipm")``
_METHOD_OF_FRAME = {
    "metric_ipm": "ipm", "solve_metric_ipm": "ipm", "solve_metric_relaxed": "relax",
    "solve_metric_lp": "decompose", "column_generation": "colgen", "column_generation_separable": "colgen",
    "column_generation_design": "colgen", "design_frank_wolfe": "frank-wolfe",
}


#: (callback, display) for every Progress made inside :func:`progress_reports` (a solve's own settings)
_REPORTS: ContextVar = ContextVar("mechopt_progress_reports", default=(None, True))


@contextmanager
def progress_reports(callback: Callable | None, display: bool = True):
    """Within this block every :class:`Progress` sends its records to ``callback`` and draws only if ``display``."""
    token = _REPORTS.set((callback, bool(display)))
    try:
        yield
    finally:
        _REPORTS.reset(token)


def memory_mb() -> tuple[float | None, float | None]:
    """``(current, peak)`` resident memory of this process in MB (None where the system does not say).

    The peak is ``getrusage(RUSAGE_SELF).ru_maxrss`` (the whole process so far); the
    current size is read from ``/proc/self/statm`` (Linux).

    Examples
    --------
    >>> now, peak = memory_mb()
    >>> peak is None or peak > 0
    True
    """
    peak = None
    try:
        import resource

        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        peak = kb / (1024.0 * 1024.0) if sys.platform == "darwin" else kb / 1024.0  # bytes on macOS, KiB elsewhere
    except (ImportError, OSError, ValueError):
        pass
    now = None
    try:
        import os

        with open("/proc/self/statm") as fh:
            now = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    return now, peak


@dataclass(frozen=True)
class ProgressRecord:
    """One progress report: the method running, its round, value and bound in the problem's units."""

    method: str
    iteration: int
    value: float
    bound: float
    gap: float
    relative_gap: float
    elapsed: float
    memory_mb: float | None
    peak_memory_mb: float | None


class Progress:
    """Progress of a long solve on stderr, with the method running, the gap, the time and the memory.

    On a terminal one line is redrawn in place (every :data:`TTY_INTERVAL` s); otherwise a
    new line is written every ``interval`` seconds (default :data:`PROGRESS_INTERVAL`, or
    the environment variable ``MECHOPT_PROGRESS_INTERVAL``), so a log file of a long run
    shows it is alive. Solvers call it as ``progress(it, value, bound, size)``;
    ``offset + sign * value`` is the value in the problem's units (the labeled LP's cost
    leaves out constant terms), and ``scale`` is the objective's scale, so the relative
    gap ``(value - bound) / max(|value|, scale)`` is the one the final status uses.
    ``callback(record)`` receives every report as a :class:`ProgressRecord`, displayed or not
    (default: the one of the enclosing :func:`progress_reports`).

    Examples
    --------
    >>> import io
    >>> out, seen = io.StringIO(), []
    >>> p = Progress("solve", stream=out, interval=0.0, callback=seen.append)
    >>> p(0, 1.25, 1.0, 3, method="ipm")
    >>> seen[0].method, seen[0].gap, seen[0].relative_gap
    ('ipm', 0.25, 0.2)
    >>> out.getvalue().startswith("ipm: iteration 0, value 1.25, bound 1, gap 0.25 (2.0e-01 relative)")
    True
    """

    def __init__(self, label: str, *, enabled: bool | None = None, stream: Any = None, interval: float | None = None,
                 callback: Callable | None = None, offset: float = 0.0, sign: float = 1.0, scale: float = 0.0):
        import os

        self.stream = stream or sys.stderr
        self.tty = bool(hasattr(self.stream, "isatty") and self.stream.isatty())
        default_callback, display = _REPORTS.get()
        self.enabled = display if enabled is None else bool(enabled)
        if interval is None:
            try:
                interval = float(os.environ.get("MECHOPT_PROGRESS_INTERVAL", ""))
            except ValueError:
                interval = None
            if interval is None or not interval >= 0:
                interval = TTY_INTERVAL if self.tty else PROGRESS_INTERVAL
        self.interval = float(interval)
        self.label = label
        self.callback = callback if callback is not None else default_callback
        self.offset, self.sign, self.scale = float(offset), float(sign), float(scale)
        self.t0 = time.perf_counter()
        self.last = self.t0
        self.drawn = False
        self.records = 0

    def _method(self) -> str:
        found = None
        f = sys._getframe(2)
        depth = 0
        while f is not None and depth < 12:
            found = _METHOD_OF_FRAME.get(f.f_code.co_name, found)
            f, depth = f.f_back, depth + 1
        return found or self.label

    def __call__(self, it: int, value: float, bound: float, size: int, *, method: str | None = None) -> None:
        if not self.enabled and self.callback is None:
            return
        now = time.perf_counter()
        due = self.enabled and now - self.last >= self.interval
        if not due and self.callback is None:
            return
        v = self.offset + self.sign * float(value)
        b = self.offset + self.sign * float(bound)
        gap = abs(v - b) if math.isfinite(v) and math.isfinite(b) else math.inf
        rel = gap / max(abs(v), self.scale, 1e-300) if math.isfinite(gap) else math.inf
        cur, peak = memory_mb()
        if cur is not None and peak is not None:
            peak = max(peak, cur)  # the two counters differ a little (shared pages)
        rec = ProgressRecord(method or self._method(), int(it), v, b, gap, rel, now - self.t0, cur, peak)
        self.records += 1
        if self.callback is not None:
            self.callback(rec)
        if not due:
            return
        self.last = now
        mem = "" if peak is None else (f", memory {cur:.0f} MB (peak {peak:.0f} MB)" if cur is not None
                                       else f", peak memory {peak:.0f} MB")
        line = (f"{rec.method}: iteration {rec.iteration}, value {v:.8g}, bound {b:.8g}, gap {gap:.3g} "
                f"({rel:.1e} relative), {size} columns, {rec.elapsed:.1f} s{mem}")
        if self.tty:
            self.stream.write(f"\r{line}   ")
            self.drawn = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def done(self) -> None:
        if self.enabled and self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False
