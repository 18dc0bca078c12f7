"""solve_many: de-duplication, order, executors (serial, process pool, Dask)."""

from __future__ import annotations

import pickle
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import mechopt._batch as batch
from mechopt import InputError, load_problem, solve, verify
from mechopt._batch import problem_key, solve_many


def lip_problem(prior, kind: str = "histogram_mse", eps: float = 1.0) -> dict:
    doc = {"k": len(prior), "outputs": "free",
           "privacy": [{"notion": "lip", "epsilon": eps, "prior": [float(p) for p in prior]}],
           "objective": {"kind": kind}}
    if kind == "mmse":
        doc["objective"]["values"] = list(range(len(prior)))
    return doc


@pytest.fixture(scope="module")
def problems() -> list[dict]:
    rng = np.random.default_rng(7)
    return [lip_problem(rng.dirichlet(np.ones(4)), "histogram_mse" if i % 2 else "mmse") for i in range(12)]


@pytest.fixture(scope="module")
def serial(problems):
    return solve_many(problems, executor="serial")


def _prior_of(result) -> list[float]:
    return result.mechanism.privacy[0]["prior"]


def test_identical_problems_solved_once(monkeypatch):
    calls = []

    def counting_solve(problem, **kwargs):
        calls.append(problem_key(problem))
        return solve(problem, **kwargs)

    monkeypatch.setattr(batch, "solve", counting_solve)
    a = lip_problem([0.1, 0.2, 0.3, 0.4])
    b = lip_problem([0.4, 0.3, 0.2, 0.1])
    # the same problem written differently: labels instead of k, a single notion as a mapping
    a_again = {"inputs": ["0", "1", "2", "3"], "outputs": "free",
               "privacy": {"notion": "lip", "epsilon": 1, "prior": [0.1, 0.2, 0.3, 0.4]},
               "objective": {"kind": "histogram_mse"}}
    results = solve_many([a, b, a, a_again, load_problem(b)], executor="serial")
    assert len(calls) == 2
    assert len(set(calls)) == 2
    assert len(results) == 5
    assert results[0] is results[2] is results[3]
    assert results[1] is results[4]
    assert results[0] is not results[1]


def test_problem_key_ignores_name_but_not_content():
    p = lip_problem([0.25, 0.25, 0.25, 0.25])
    named = dict(p, name="user-17")
    other = lip_problem([0.25, 0.25, 0.25, 0.25], eps=0.5)
    assert problem_key(load_problem(p)) == problem_key(load_problem(named))
    assert problem_key(load_problem(p)) != problem_key(load_problem(other))


def test_order_preserved(problems, serial):
    assert len(serial) == len(problems)
    for doc, r in zip(problems, serial):
        assert r.status == "optimal"
        assert _prior_of(r) == doc["privacy"][0]["prior"]
        assert r.mechanism.objective["kind"] == doc["objective"]["kind"]


def test_serial_matches_single_solves(problems, serial):
    for doc, r in zip(problems, serial):
        one = solve(doc, quiet=True)
        assert abs(one.objective - r.objective) <= 1e-12


def _assert_matches_serial(results, problems, serial, *, repeated):
    """``results`` of ``problems + problems[:repeated]``: the serial optima, repeats shared."""
    assert len(results) == len(problems) + repeated
    for r_s, r in zip(serial + serial[:repeated], results):
        assert r.status == "optimal"
        assert abs(r_s.objective - r.objective) <= 1e-12
        assert _prior_of(r_s) == _prior_of(r)
    assert results[0] is results[len(problems)]


def test_process_pool_matches_serial(problems, serial):
    # chunksize=3 -> 4 tasks on 2 processes: exercises chunking and reassembly
    pooled = solve_many(problems + problems[:3], max_workers=2, chunksize=3)
    _assert_matches_serial(pooled, problems, serial, repeated=3)
    # what came back through pickling still passes the exact check
    for r in pooled[:4]:
        assert verify(r.mechanism.matrix, r.mechanism.notions).verified


def test_executor_instance_is_used_and_left_running(problems, serial):
    with ThreadPoolExecutor(max_workers=2) as pool:
        out = solve_many(problems[:4], executor=pool, chunksize=1)
        assert pool.submit(lambda: 1).result() == 1  # not shut down by solve_many
    assert [r.objective for r in out] == pytest.approx([r.objective for r in serial[:4]], abs=1e-12)


def test_results_are_picklable(serial):
    r = serial[0]
    back = pickle.loads(pickle.dumps(r))
    assert back.objective == r.objective
    assert np.array_equal(np.asarray(back.mechanism.matrix), np.asarray(r.mechanism.matrix))
    assert back.certificate.verified


def test_solve_kwargs_are_forwarded():
    doc = lip_problem([0.1, 0.2, 0.3, 0.4], kind="mmse")
    (r,) = solve_many([doc], executor="serial", method="colgen")
    assert r.stats["method"] == "colgen"
    assert abs(r.objective - solve(doc, method="rays", quiet=True).objective) <= 1e-8


def test_empty_input():
    assert solve_many([]) == []


def test_generator_input(problems, serial):
    out = solve_many((p for p in problems[:3]), executor="serial")
    assert [r.objective for r in out] == [r.objective for r in serial[:3]]


# -- errors --------------------------------------------------------------------------


def test_malformed_problem_named_by_index(problems):
    bad = lip_problem([0.5, 0.6, 0.1, 0.1])  # prior sums to 1.3
    with pytest.raises(InputError, match=r"problems\[2\]\.privacy\[0\]\.prior"):
        solve_many([problems[0], problems[1], bad], executor="serial")


def test_input_error_inside_a_worker_is_named_by_index():
    # solve() itself refuses column generation when the objective's prior is not the LIP
    # prior (no exact pricing there); the MMSE problem is fine
    mmse = lip_problem([0.1, 0.2, 0.3, 0.4], kind="mmse")
    other = dict(lip_problem([0.1, 0.2, 0.3, 0.4]), objective={"kind": "bayes_risk", "prior": [0.4, 0.3, 0.2, 0.1]})
    with pytest.raises(InputError, match=r"problems\[1\]\.method: column generation is available"):
        solve_many([mmse, other], executor="serial", method="colgen")


def test_unknown_executor():
    with pytest.raises(InputError, match=r"executor: unknown executor 'threads'"):
        solve_many([lip_problem([0.5, 0.5])], executor="threads")
    with pytest.raises(InputError, match=r"executor: must be 'process'.*got int"):
        solve_many([lip_problem([0.5, 0.5])], executor=3)


@pytest.mark.parametrize("name", ["max_workers", "chunksize"])
def test_bad_worker_counts(name):
    with pytest.raises(InputError, match=rf"{name}: must be >= 1, got 0"):
        solve_many([lip_problem([0.5, 0.5])], **{name: 0})
    with pytest.raises(TypeError, match=rf"{name} must be an int or None, got '2'"):
        solve_many([lip_problem([0.5, 0.5])], **{name: "2"})


def test_unknown_solve_keyword():
    with pytest.raises(TypeError, match=r"solve_many: .*'solver'.*passed to mechopt.solve"):
        solve_many([lip_problem([0.5, 0.5])], solver="highs")


def test_dask_missing_is_a_clear_input_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # makes `import distributed` fail
    with pytest.raises(InputError, match=r"^executor: .*pip install mechopt\[dask\]"):
        solve_many([lip_problem([0.5, 0.5])], executor="dask")


# -- Dask ------------------------------------------------------------------------------


def test_dask_local_cluster_matches_serial(problems, serial):
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed "
                                                            "(pip install mechopt[dask])")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        via_client = solve_many(problems + problems[:2], executor=client, chunksize=2)
        # executor="dask" picks up the running client
        via_default = solve_many(problems[:4], executor="dask")
        assert len(client.nthreads()) == 2
    _assert_matches_serial(via_client, problems, serial, repeated=2)
    assert [r.objective for r in via_default] == pytest.approx([r.objective for r in serial[:4]], abs=1e-12)
