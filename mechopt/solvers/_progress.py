"""Progress of a long solve: the method running, its gap, the time, the memory.

:class:`Progress` is what a solver calls after each round, ``progress(it, value, bound,
size)``; it turns the solver's numbers into the objective's units and the relative gap
the final status is judged by, hands a :class:`ProgressRecord` to a callback and draws a
line on stderr. :func:`progress_reports` is a solve's session: the callback, whether to
draw, the start time, and a heartbeat that writes a line when nothing was written for an
interval (a solve busy building its LP or inside one long factorisation is seen to be
alive, also in a log file).

May import: the standard library. Nothing of mechopt.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable

#: seconds between progress lines when stderr is not a terminal (``MECHOPT_PROGRESS_INTERVAL`` overrides)
PROGRESS_INTERVAL = 10.0
#: seconds between redraws of the progress line on a terminal
TTY_INTERVAL = 0.2
#: the method a progress report comes from, by the solver function on the call stack (the outermost wins:
#: the relaxation runs the IPM inside); a route may also name it: ``progress(..., method="ipm")``
def env_interval() -> float | None:
    """``MECHOPT_PROGRESS_INTERVAL`` in seconds (a number >= 0), or None."""
    try:
        v = float(os.environ.get("MECHOPT_PROGRESS_INTERVAL", ""))
    except ValueError:
        return None
    return v if v >= 0 and math.isfinite(v) else None


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
        with open("/proc/self/statm") as fh:
            now = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    if now is not None and peak is not None:
        peak = max(peak, now)  # the two counters differ a little (shared pages)
    return now, peak


def _memory_words() -> str:
    cur, peak = memory_mb()
    if peak is None:
        return ""
    return f", memory {cur:.0f} MB (peak {peak:.0f} MB)" if cur is not None else f", peak memory {peak:.0f} MB"


@dataclass(frozen=True)
class ProgressRecord:
    """One progress report: the method running, its round, value, bound and gap in the problem's units.

    ``elapsed``: seconds since the solve began; memory in MB (None where unknown).
    """

    method: str
    iteration: int
    value: float
    bound: float
    gap: float
    relative_gap: float
    elapsed: float
    memory_mb: float | None
    peak_memory_mb: float | None


class _Session:
    """One solve's progress settings, its clock, its last line, and the heartbeat's thread."""

    def __init__(self, callback: Callable | None, display: bool, stream: Any = None, interval: float | None = None):
        self.callback = callback
        self.display = bool(display)
        self._stream = stream
        self.t0 = time.perf_counter()
        self.last_write = self.t0
        self.latest: ProgressRecord | None = None
        self.lock = threading.Lock()
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.drawn = False

    @property
    def stream(self):
        return self._stream if self._stream is not None else sys.stderr

    @property
    def tty(self) -> bool:
        s = self.stream
        return bool(hasattr(s, "isatty") and s.isatty())

    def write(self, line: str) -> None:
        """One line: redrawn in place on a terminal, a new line otherwise."""
        with self.lock:
            if self.tty:
                self.stream.write(f"\r{line}   ")
                self.drawn = True
            else:
                self.stream.write(line + "\n")
            self.stream.flush()
            self.last_write = time.perf_counter()

    def end_line(self) -> None:
        with self.lock:
            if self.drawn:
                self.stream.write("\n")
                self.stream.flush()
                self.drawn = False

    def heartbeat_interval(self) -> float:
        if self.interval is not None:
            return self.interval
        v = env_interval()
        return PROGRESS_INTERVAL if v is None else v

    def start(self) -> None:
        if not self.display:
            return
        self._thread = threading.Thread(target=self._beat, name="mechopt-progress", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=5.0)
            self._thread = None
        self.end_line()

    def _beat(self) -> None:
        period = self.heartbeat_interval()
        while not self._stop.wait(max(period / 4.0, 0.02)):
            now = time.perf_counter()
            if now - self.last_write < period:
                continue
            rec = self.latest
            if rec is None:
                line = f"solving: {now - self.t0:.1f} s{_memory_words()}"
            else:
                line = (f"{rec.method}: after iteration {rec.iteration}, value {rec.value:.8g}, bound "
                        f"{rec.bound:.8g}, gap {rec.gap:.3g} ({rec.relative_gap:.1e} relative), "
                        f"{now - self.t0:.1f} s{_memory_words()}")
            self.write(line)


#: the session of the solve running in this context (None: a Progress on its own)
_SESSION: ContextVar = ContextVar("mechopt_progress_session", default=None)


@contextmanager
def progress_reports(callback: Callable | None, display: bool = True, *, stream: Any = None,
                     interval: float | None = None):
    """A solve's progress session: inside it every :class:`Progress` sends its records to
    ``callback``, draws only if ``display``, and counts time from the session's start; a
    heartbeat writes a line when nothing was written for ``interval`` seconds (default
    :data:`PROGRESS_INTERVAL` or ``MECHOPT_PROGRESS_INTERVAL``).

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> with progress_reports(None, True, stream=out, interval=0.0):
    ...     time.sleep(0.2)          # a long step that reports nothing
    >>> out.getvalue().startswith("solving: ")
    True
    """
    session = _Session(callback, display, stream, interval)
    token = _SESSION.set(session)
    session.start()
    try:
        yield session
    finally:
        session.stop()
        _SESSION.reset(token)


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
        session = _SESSION.get()
        if session is None or stream is not None:
            session = _Session(None, True, stream, interval)  # on its own: its own clock and stream
        self.session = session
        self.enabled = session.display if enabled is None else bool(enabled)
        if interval is None:
            interval = env_interval()
            if interval is None:
                interval = TTY_INTERVAL if session.tty else PROGRESS_INTERVAL
        self.interval = float(interval)
        self.label = label
        self.callback = callback if callback is not None else session.callback
        self.offset, self.sign, self.scale = float(offset), float(sign), float(scale)

    @property
    def tty(self) -> bool:
        return self.session.tty

    def __call__(self, it: int, value: float, bound: float, size: int, *, method: str | None = None) -> None:
        if not self.enabled and self.callback is None:
            return
        now = time.perf_counter()
        due = self.enabled and now - self.session.last_write >= self.interval  # a heartbeat's line counts
        if not due and self.callback is None and not self.enabled:
            return
        v = self.offset + self.sign * float(value)
        b = self.offset + self.sign * float(bound)
        gap = abs(v - b) if math.isfinite(v) and math.isfinite(b) else math.inf
        rel = gap / max(abs(v), self.scale, 1e-300) if math.isfinite(gap) else math.inf
        cur, peak = memory_mb()
        rec = ProgressRecord(method or self.label, int(it), v, b, gap, rel, now - self.session.t0, cur, peak)
        self.session.latest = rec
        if self.callback is not None:
            self.callback(rec)
        if not due:
            return
        self.session.write(f"{rec.method}: iteration {rec.iteration}, value {v:.8g}, bound {b:.8g}, gap {gap:.3g} "
                           f"({rel:.1e} relative), {size} columns, {rec.elapsed:.1f} s{_memory_words()}")

    def done(self) -> None:
        if self.enabled:
            self.session.end_line()


class _Named:
    """A :class:`Progress` bar whose records name ``method`` (see :func:`named`)."""

    def __init__(self, bar: Progress, method: str):
        self.bar, self.method = bar, method

    def __call__(self, *args, **kwargs) -> None:
        kwargs.setdefault("method", self.method)
        self.bar(*args, **kwargs)


def named(progress, method: str):
    """``progress`` with its records naming ``method`` — when it is a :class:`Progress` bar.

    A route wraps the bar it was given before handing it to a method (the labeled LP's
    bar then reports ``ipm``, ``relax`` or ``decompose``); ``None``, a bar already named
    by a caller and a plain callable pass through unchanged.

    Examples
    --------
    >>> import io
    >>> seen = []
    >>> bar = Progress("labeled LP", stream=io.StringIO(), interval=0.0, callback=seen.append)
    >>> named(bar, "ipm")(3, 1.0, 0.5, 10)
    >>> named(named(bar, "relax"), "ipm")(4, 1.0, 0.5, 10)   # the outer name is kept
    >>> [(r.method, r.iteration) for r in seen]
    [('ipm', 3), ('relax', 4)]
    >>> named(None, "ipm") is None
    True
    """
    return _Named(progress, method) if isinstance(progress, Progress) else progress
