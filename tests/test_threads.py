"""A solve runs with the BLAS/OpenMP pools mechopt chose (mechopt/_threads.py), and gives them back."""

from __future__ import annotations

import pytest
from threadpoolctl import threadpool_info

import mechopt
import mechopt._solve as dispatch
from mechopt import InputError

KRR = {"k": 3, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
       "objective": {"kind": "expected_loss", "loss": "hamming"}}


def _blas_threads_now() -> dict[str, int]:
    import scipy.linalg  # noqa: F401 - scipy's own OpenBLAS, loaded by any solve: load it before looking

    return {p["filepath"]: p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}


def _spy(monkeypatch) -> list:
    seen = []
    real = dispatch._solve_labeled

    def spy(*args, **kwargs):
        seen.append(_blas_threads_now())
        return real(*args, **kwargs)

    monkeypatch.setattr(dispatch, "_solve_labeled", spy)
    return seen


def test_a_solve_runs_on_one_blas_thread_and_restores_the_pools(monkeypatch):
    monkeypatch.delenv("MECHOPT_BLAS_THREADS", raising=False)
    before = _blas_threads_now()
    seen = _spy(monkeypatch)
    r = mechopt.solve(KRR, quiet=True)
    assert r.status == "optimal" and r.stats["blas_threads"] == 1
    assert [set(s.values()) for s in seen] == [{1}]
    assert _blas_threads_now() == before


def test_the_environment_chooses_the_threads(monkeypatch):
    monkeypatch.setenv("MECHOPT_BLAS_THREADS", "2")
    seen = _spy(monkeypatch)
    r = mechopt.solve(KRR, quiet=True)
    # a pool can be limited below the threads OpenBLAS allocated when it was loaded, not above
    # (a library loaded under OPENBLAS_NUM_THREADS=1 stays at 1): none above 2, numpy's at 2
    assert r.stats["blas_threads"] == 2 and len(seen) == 1 and max(seen[0].values()) == 2


@pytest.mark.parametrize("bad", ["0", "-1", "two", "1.5"])
def test_a_bad_thread_count_is_bad_input_naming_the_variable(monkeypatch, bad):
    monkeypatch.setenv("MECHOPT_BLAS_THREADS", bad)
    with pytest.raises(InputError, match="MECHOPT_BLAS_THREADS"):
        mechopt.solve(KRR, quiet=True)


def _faults_of_reused_arrays(n: int = 8, mb: int = 96) -> int:
    """Minor page faults of making, filling and dropping an array of ``mb`` MB ``n`` times."""
    import resource

    import numpy as np

    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(n):
        a = np.empty(mb * 2**20 // 8)
        a.fill(1.0)
        del a
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def test_the_ipm_keeps_freed_arrays_for_reuse_and_gives_the_memory_back():
    import mechopt._heap as heap
    from mechopt.solvers.metric._ipm import metric_ipm

    if heap._LIBC is None:
        pytest.skip("the C library has no mallopt (not glibc)")
    fresh = _faults_of_reused_arrays()
    with heap.heap_kept():
        with heap.heap_kept():  # nested: the outer one keeps the setting
            pass
        _faults_of_reused_arrays(1)  # the first array's pages are faulted in once
        kept = _faults_of_reused_arrays()
    assert heap._depth == 0
    # fresh pages (with or without huge pages) for each of 8 arrays, against none to few
    assert kept < fresh / 4, (kept, fresh)
    assert _faults_of_reused_arrays() > kept  # afterwards glibc's own policy again
    # the IPM runs within it
    import numpy as np

    seen = []
    metric_ipm(np.array([[0.0, 0.5], [0.5, 0.0]]), np.array([0, 1]), np.array([1, 0]), np.full(2, np.e),
               progress=lambda *args: seen.append(heap._depth))
    assert seen and set(seen) == {1} and heap._depth == 0
