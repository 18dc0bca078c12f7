"""The BLAS and OpenMP thread pools a solve runs with (through ``threadpoolctl``).

numpy and scipy each bundle an OpenBLAS that starts one thread per core. The dense
linear algebra of a solve (the structured interior point's Cholesky factorisations of
49 × 49 blocks, the design's small eigen-decompositions) is too small to gain from a
second thread, and OpenBLAS threads that wait on a busy machine spin: the same solve of
``problems/geo_city.yaml`` took 4.7–122 s with the default pools on a loaded 2-core
machine and 1.3–1.5 s with one thread. :func:`solver_threads` therefore runs every solve
with the pools limited to :func:`blas_threads` threads (1 unless the environment variable
``MECHOPT_BLAS_THREADS`` says otherwise), whatever ``OPENBLAS_NUM_THREADS`` or
``OMP_NUM_THREADS`` say; the pools are restored afterwards. HiGHS keeps its own threads
(one unless asked otherwise).

Examples
--------
>>> from mechopt._threads import blas_threads, solver_threads
>>> with solver_threads() as n:
...     n == blas_threads()
True
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from ._errors import InputError

#: the environment variable that overrides the number of BLAS/OpenMP threads of a solve
ENV = "MECHOPT_BLAS_THREADS"
#: threads when the variable is not set (measured: ``python -m benchmarks.bench_threads``)
DEFAULT = 1

_controller = None


def blas_threads() -> int:
    """The BLAS/OpenMP threads a solve uses: ``MECHOPT_BLAS_THREADS`` if set (a positive integer), else 1.

    Raises
    ------
    InputError
        When the variable is set to anything but a positive integer.
    """
    raw = os.environ.get(ENV)
    if raw is None or raw.strip() == "":
        return DEFAULT
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 1:
        raise InputError(ENV, f"must be a positive integer (BLAS threads per solve), got {raw!r}")
    return n


def _pools():
    """One controller of the process's thread pools, made once numpy and scipy's BLAS are loaded."""
    global _controller
    if _controller is None:
        import scipy.linalg  # noqa: F401 - scipy bundles its own OpenBLAS: load it before looking
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller


@contextmanager
def solver_threads(n: int | None = None):
    """Run the block with the BLAS and OpenMP pools limited to ``n`` threads (default :func:`blas_threads`).

    Yields the number of threads.
    """
    n = blas_threads() if n is None else n
    with _pools().limit(limits=n):
        yield n
