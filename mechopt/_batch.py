"""``solve_many``: many problems at once, on a local process pool or a Dask cluster.

One personalized mechanism per user means many small, independent problems. They are
validated once in the calling process, de-duplicated on the canonical JSON of their
spec (:meth:`Problem.to_spec`, sorted keys), cut into chunks, and each chunk is solved
by one worker with :func:`mechopt.solve`. Chunks keep the per-task overhead (pickling,
scheduling) small next to the solves: 10 000 problems of 3 ms each make ~40 tasks,
not 10 000.
"""

from __future__ import annotations

import inspect
import json
import math
import os
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterable

from ._errors import InputError
from ._problem import Problem, load_problem
from ._result import SolveResult
from ._solve import solve

#: at most this many problems in one task (keeps the load balanced at the end)
MAX_CHUNK = 256
#: aim for this many tasks per worker
TASKS_PER_WORKER = 8
EXECUTORS = ("process", "serial", "dask")


@dataclass(frozen=True)
class _Rejected:
    """A problem that :func:`solve` refused with an InputError inside a worker."""

    field: str
    rule: str


def problem_key(problem: Problem) -> str:
    """The de-duplication key of a problem: canonical JSON of its spec.

    Two problems with the same key have the same inputs, outputs, notions and
    objective, so one solve serves both. The problem's ``name`` is not part of it.

    Examples
    --------
    >>> a = load_problem({"k": 2, "privacy": [{"notion": "ldp", "epsilon": 1.0}]})
    >>> b = load_problem({"inputs": ["0", "1"], "outputs": "inputs",
    ...                   "privacy": {"notion": "ldp", "epsilon": 1}})
    >>> problem_key(a) == problem_key(b)
    True
    """
    return json.dumps(problem.to_spec(), sort_keys=True, separators=(",", ":"))


def _solve_chunk(problems: list[Problem], kwargs: dict) -> list[SolveResult | _Rejected]:
    """Solve one chunk in a worker (module-level, so pools and Dask can pickle it)."""
    import warnings

    from ._identifiability import IdentifiabilityWarning

    out: list[SolveResult | _Rejected] = []
    with warnings.catch_warnings():
        # one line per problem from every worker would drown the output; each result's
        # certificate records identifiability
        warnings.simplefilter("ignore", IdentifiabilityWarning)
        for p in problems:
            try:
                out.append(solve(p, **kwargs))
            except InputError as err:
                out.append(_Rejected(err.field, err.rule))
    return out


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _chunks(items: list, workers: int, chunksize: int | None) -> list[list]:
    if chunksize is None:
        chunksize = max(1, min(MAX_CHUNK, math.ceil(len(items) / (TASKS_PER_WORKER * max(1, workers)))))
    return [items[i:i + chunksize] for i in range(0, len(items), chunksize)]


def _is_dask_client(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "distributed" and hasattr(obj, "gather")


def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise InputError("executor", "the Dask executor needs dask.distributed, which is not installed; "
                         "pip install mechopt[dask]") from None
    return distributed


def _run_dask(client, chunks: list[list], kwargs: dict) -> list[list]:
    futures = [client.submit(_solve_chunk, chunk, kwargs, pure=False) for chunk in chunks]
    return client.gather(futures)


def _run_executor(pool: Executor, chunks: list[list], kwargs: dict) -> list[list]:
    futures = [pool.submit(_solve_chunk, chunk, kwargs) for chunk in chunks]
    return [f.result() for f in futures]


def solve_many(problems: Iterable[Problem | dict | str], *, executor: str | Any | None = None,
               max_workers: int | None = None, chunksize: int | None = None,
               **solve_kwargs: Any) -> list[SolveResult]:
    """Solve many problems in parallel; identical problems are solved once.

    Parameters
    ----------
    problems : iterable of Problem, dict or path
        Each as accepted by :func:`mechopt.solve`. All are validated here, before any
        work starts.
    executor : None, str, concurrent.futures.Executor or dask.distributed.Client, keyword-only
        ``None`` or ``"process"``: a local :class:`~concurrent.futures.ProcessPoolExecutor`
        (started and shut down here). ``"serial"``: in this process, one after the
        other (for debugging). ``"dask"``: the current Dask client
        (``distributed.default_client()``), or else a ``LocalCluster`` with
        ``max_workers`` single-threaded worker processes, closed afterwards. A
        ``dask.distributed.Client`` or any ``concurrent.futures.Executor`` you pass
        is used as is and left running.
    max_workers : int or None, keyword-only
        Workers of a pool or cluster started here (default: the CPUs this process
        may use). Ignored for an executor you pass.
    chunksize : int or None, keyword-only
        Problems per task (default: about 8 tasks per worker, at most 256 problems).
    **solve_kwargs
        Passed to :func:`mechopt.solve` (``backend``, ``method``, ``reduce``...).
        ``quiet`` defaults to True: workers draw no progress display.

    Returns
    -------
    list of SolveResult
        One per problem, in input order. Duplicates share one result object.

    Raises
    ------
    InputError
        For a malformed problem (``problems[i]...`` names which one; raised before
        any solving), an unknown ``executor``, ``max_workers`` or ``chunksize`` < 1,
        or ``executor="dask"`` when dask.distributed is not installed
        (``pip install mechopt[dask]``).
    TypeError
        For a keyword :func:`mechopt.solve` does not take.

    Examples
    --------
    >>> from mechopt import solve_many
    >>> spec = {"k": 2, "privacy": [{"notion": "ldp", "epsilon": 1.0}]}
    >>> rs = solve_many([spec, spec], executor="serial")
    >>> [r.status for r in rs], rs[0] is rs[1]
    (['optimal', 'optimal'], True)
    """
    for name, value in (("max_workers", max_workers), ("chunksize", chunksize)):
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int or None, got {value!r}")
            if value < 1:
                raise InputError(name, f"must be >= 1, got {value!r}")
    kwargs = {"quiet": True, **solve_kwargs}
    try:
        inspect.signature(solve).bind(None, **kwargs)
    except TypeError as err:
        raise TypeError(f"solve_many: {err} (keywords are passed to mechopt.solve)") from None
    if isinstance(executor, str):
        if executor not in EXECUTORS:
            raise InputError("executor", f"unknown executor {executor!r}; expected one of {list(EXECUTORS)}, "
                             "a concurrent.futures.Executor or a dask.distributed.Client")
        if executor == "dask":
            _import_distributed()  # fail before any work when dask is missing
    elif executor is not None and not (isinstance(executor, Executor) or _is_dask_client(executor)):
        raise InputError("executor", f"must be 'process', 'serial', 'dask', a concurrent.futures.Executor or a "
                         f"dask.distributed.Client, got {type(executor).__name__}")

    cleaned: list[Problem] = []
    for i, p in enumerate(problems):
        try:
            cleaned.append(p if isinstance(p, Problem) else load_problem(p))
        except InputError as err:
            raise InputError(f"problems[{i}].{err.field}" if err.field else f"problems[{i}]", err.rule) from None
    slot: dict[str, int] = {}
    unique: list[Problem] = []
    where = []
    for p in cleaned:
        key = problem_key(p)
        j = slot.get(key)
        if j is None:
            j = slot[key] = len(unique)
            unique.append(p)
        where.append(j)
    if not unique:
        return []

    if executor == "serial":
        solved = _solve_chunk(unique, kwargs)
    elif executor is None or executor == "process":
        workers = max_workers or _cpu_count()
        chunks = _chunks(unique, workers, chunksize)
        with ProcessPoolExecutor(max_workers=min(workers, len(chunks))) as pool:
            solved = [r for part in _run_executor(pool, chunks, kwargs) for r in part]
    elif executor == "dask":
        distributed = _import_distributed()
        try:
            client = distributed.default_client()
            own = None
        except ValueError:  # no client running: start a local cluster for this call
            workers = max_workers or _cpu_count()
            own = distributed.Client(distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                                              processes=True, dashboard_address=None))
            client = own
        try:
            threads = sum(client.nthreads().values()) or 1
            solved = [r for part in _run_dask(client, _chunks(unique, threads, chunksize), kwargs) for r in part]
        finally:
            if own is not None:
                cluster = own.cluster
                own.close()
                cluster.close()
    elif _is_dask_client(executor):
        threads = sum(executor.nthreads().values()) or 1
        solved = [r for part in _run_dask(executor, _chunks(unique, threads, chunksize), kwargs) for r in part]
    else:
        workers = getattr(executor, "_max_workers", None) or _cpu_count()
        solved = [r for part in _run_executor(executor, _chunks(unique, workers, chunksize), kwargs) for r in part]

    for i, j in enumerate(where):
        r = solved[j]
        if isinstance(r, _Rejected):
            raise InputError(f"problems[{i}].{r.field}" if r.field else f"problems[{i}]", r.rule)
    return [solved[j] for j in where]
