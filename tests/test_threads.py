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
    assert r.stats["blas_threads"] == 2 and [set(s.values()) for s in seen] == [{2}]


@pytest.mark.parametrize("bad", ["0", "-1", "two", "1.5"])
def test_a_bad_thread_count_is_bad_input_naming_the_variable(monkeypatch, bad):
    monkeypatch.setenv("MECHOPT_BLAS_THREADS", bad)
    with pytest.raises(InputError, match="MECHOPT_BLAS_THREADS"):
        mechopt.solve(KRR, quiet=True)
