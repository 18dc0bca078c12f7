"""The cvxpy frontend (mechopt/_model.py): the reduced constraints admit exactly the private
channels, optima match all-pairs models written here, bounds are below the true optimum,
and every failure is a status or one line."""

import math

import cvxpy as cp
import numpy as np
import pytest

import mechopt
from mechopt import BPLIP, ELDP, LDP, LIP, BlockLDP, HighLowLDP, InputError, MetricLDP, ULDP


def pair_rows(Q, E):
    k = E.shape[0]
    return [Q[x, :] <= math.exp(E[x, xp]) * Q[xp, :] for x in range(k) for xp in range(k)
            if x != xp and np.isfinite(E[x, xp])]


def lip_rows(Q, P, eps):
    PQ = P @ Q
    return [c for x in range(len(P)) for c in (math.exp(-eps) * Q[x, :] <= PQ, PQ <= math.exp(eps) * Q[x, :])]


def hand_model(k, m, notions):
    """All-pairs rows written from the definitions (SPEC §2), not from mechopt's builders."""
    Q = cp.Variable((k, m), nonneg=True)
    cons = [cp.sum(Q, axis=1) == 1]
    for n in notions:
        if isinstance(n, (LIP, BPLIP)):
            for P in (n.priors if isinstance(n, BPLIP) else [np.asarray(n.prior)]):
                cons += lip_rows(Q, np.asarray(P), n.epsilon)
        else:
            cons += pair_rows(Q, n.eldp_matrix(k))
    return Q, cons


NOTIONS = {
    "ldp": [LDP(1.0)],
    "block": [BlockLDP(0.8, blocks=[["0", "1"], ["2", "3", "4"]])],
    "high_low": [HighLowLDP(0.6, sensitive=["4"]), LDP(2.0)],
    "metric": [MetricLDP(0.7, edges=[["0", "1", 1], ["1", "2", 1], ["2", "3", 1], ["3", "4", 1]])],
    "eldp": [ELDP([[0, 1, 2, "inf", 1], [1, 0, 1, 2, "inf"], [2, 1, 0, 1, 2], ["inf", 2, 1, 0, 1],
                   [1, "inf", 2, 1, 0]])],
    "lip": [LIP(1.0, prior=[0.1, 0.15, 0.2, 0.25, 0.3])],
    "bp_lip": [BPLIP(1.0, priors=[[0.2] * 5, [0.1, 0.1, 0.2, 0.3, 0.3]])],
}


@pytest.mark.parametrize("name", sorted(NOTIONS))
def test_smooth_objective_matches_all_pairs(name):
    k = 5
    ns = NOTIONS[name]
    target = np.eye(k)
    m = mechopt.model(ns, inputs=k)
    r = m.solve(cp.Minimize(cp.sum_squares(m.Q - target)), solver="CLARABEL")
    Q, cons = hand_model(k, k, [n.bind([str(i) for i in range(k)]) for n in ns])
    ref = cp.Problem(cp.Minimize(cp.sum_squares(Q - target)), cons)
    ref.solve(solver="CLARABEL")
    assert r.status == "optimal" and r.certificate.verified
    assert abs(r.objective - ref.value) <= 1e-6
    assert r.bound <= ref.value + 1e-7          # a lower bound on the true optimum
    assert r.mechanism.certificate["bound_proven"] is True


@pytest.mark.parametrize("name", ["ldp", "lip", "metric"])
def test_reduced_rows_admit_exactly_the_private_channels(name):
    k = 5
    ns = [n.bind([str(i) for i in range(k)]) for n in NOTIONS[name]]
    rng = np.random.default_rng(1)
    m = mechopt.model(ns, inputs=k)
    fixed = cp.Parameter((k, k))
    prob = cp.Problem(cp.Minimize(0), m.constraints + [m.Q == fixed])
    for trial in range(6):
        # a random channel, mixed towards uniform until it is private (checked by the definitions)
        R = rng.random((k, k)) ** 3
        R /= R.sum(axis=1, keepdims=True)
        lo, hi = 0.0, 1.0
        for _ in range(40):
            mid = (lo + hi) / 2
            C = (1 - mid) * R + mid / k
            ok = all(n.achieved(C) <= n.budget for n in ns)
            lo, hi = (lo, mid) if ok else (mid, hi)
        inside = (1 - hi) * R + hi / k
        outside = (1 - lo + 0.02) * R + (lo - 0.02) / k
        outside = np.clip(outside, 0, None) / np.clip(outside, 0, None).sum(1)[:, None]
        assert not all(n.achieved(outside) <= n.budget for n in ns)
        for C, expect in ((inside, "optimal"), (outside, "infeasible")):
            fixed.value = C
            prob.solve(solver="HIGHS")
            assert prob.status == expect, (trial, expect)


def test_reductions_are_used():
    m = mechopt.model([LDP(1.0)], inputs=30)
    assert m.stats["privacy_rows"] == 30 * (30 + 30 + 1)     # two auxiliaries per column, not all pairs
    assert m.stats["auxiliaries"] == 60
    mm = mechopt.model([MetricLDP(1.0, edges=[[str(i), str(i + 1), 1] for i in range(9)])], inputs=10)
    # only the path's edges (both directions): a graph's notion hands its edges to the pruning, not all 90 pairs
    assert mm.stats["pairs_after"] == 18 and mm.stats["pairs_before"] == 18


def test_minimax_and_maximize_certified():
    k = 6
    L = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    m = mechopt.model([LDP(1.0)], inputs=k)
    r = m.solve(cp.Minimize(m.worst_case_loss(L) + 0.1 * m.expected_loss(L)))
    Q, cons = hand_model(k, k, [LDP(1.0)])
    t = cp.Variable()
    ref = cp.Problem(cp.Minimize(t + 0.1 * cp.sum(cp.multiply(L, Q)) / k), cons + [cp.sum(cp.multiply(L, Q), 1) <= t])
    ref.solve(solver="HIGHS")
    assert r.status == "optimal" and abs(r.objective - ref.value) <= 1e-6 and r.bound <= ref.value + 1e-9
    r2 = m.solve(cp.Maximize(cp.min(cp.diag(m.Q))))          # the best worst truthful probability
    e = math.e
    assert r2.status == "optimal" and abs(r2.objective - e / (e + k - 1)) <= 1e-6
    assert r2.bound >= e / (e + k - 1) - 1e-9                  # an upper bound for a maximisation


def test_kelley_with_a_non_affine_maximum():
    # max of two convex quadratics is not lifted: cutting planes must close the gap
    k = 4
    m = mechopt.model([LDP(0.7)], inputs=k)
    f = lambda Q: cp.maximum(cp.sum_squares(Q[0] - np.eye(k)[0]), cp.sum_squares(Q[1] - np.eye(k)[1]))
    r = m.solve(cp.Minimize(f(m.Q)), solver="CLARABEL")
    Q, cons = hand_model(k, k, [LDP(0.7)])
    ref = cp.Problem(cp.Minimize(f(Q)), cons)
    ref.solve(solver="CLARABEL")
    assert r.status == "optimal" and abs(r.objective - ref.value) <= 1e-6
    assert r.bound <= ref.value + 1e-7


def test_convex_user_constraint_dualised():
    k = 4
    L = 1 - np.eye(k)
    m = mechopt.model([LDP(1.0)], inputs=k)
    extra = lambda Q: [cp.sum_squares(Q[0]) <= 0.3]
    r = m.solve(cp.Minimize(m.expected_loss(L)), extra(m.Q), solver="CLARABEL")
    Q, cons = hand_model(k, k, [LDP(1.0)])
    ref = cp.Problem(cp.Minimize(cp.sum(cp.multiply(L, Q)) / k), cons + extra(Q))
    ref.solve(solver="CLARABEL")
    assert abs(r.objective - ref.value) <= 1e-6
    assert r.bound <= ref.value + 1e-7
    assert r.status == "optimal"
    assert r.mechanism.certificate["constraints"][0]["ok"]


def test_model_from_problem_matches_the_lp():
    doc = {"inputs": ["a", "b", "c", "d"], "outputs": "inputs",
           "privacy": [{"notion": "lip", "epsilon": 1.0, "prior": [0.1, 0.2, 0.3, 0.4]}],
           "objective": {"kind": "weighted", "terms": [{"weight": 1, "kind": "worst_case_loss", "loss": "hamming"},
                                                       {"weight": 0.5, "kind": "expected_loss"}]},
           "constraints": [{"kind": "min_truthful", "value": 0.3}, {"kind": "max_frequency", "value": {"d": 0.35}}]}
    lp = mechopt.solve(doc)
    m = mechopt.model(doc)
    for solver in ("CLARABEL", "HIGHS"):
        r = m.solve(solver=solver)
        assert r.status == "optimal" and abs(r.objective - lp.objective) <= 1e-6
        assert r.mechanism.objective["kind"] == "weighted"


def test_epigraph_variable_is_not_proven():
    k = 3
    L = 1 - np.eye(k)
    m = mechopt.model([LDP(1.0)], inputs=k)
    t = cp.Variable()
    r = m.solve(cp.Minimize(t), [m.row_losses(L) <= t])
    assert r.status == "feasible" and r.certificate.verified
    assert "not a proven bound" in r.message
    assert r.mechanism.certificate["bound_proven"] is False
    assert abs(r.objective - 2 / (2 + math.e)) <= 1e-6


def test_finish_own_problem_and_export(tmp_path):
    m = mechopt.model([HighLowLDP(1.0, sensitive=["bar"])], inputs=["home", "work", "bar"], outputs=["home", "work",
                                                                                                      "bar", "none"])
    assert m.Q.shape == (3, 4)
    prob = cp.Problem(cp.Minimize(-cp.sum(cp.diag(m.Q[:, :3])) + cp.sum_squares(m.Q[:, 3])), m.constraints)
    prob.solve(solver="CLARABEL")
    r = m.finish(prob, name="my_utility")
    assert r.ok and r.mechanism.objective["kind"] == "my_utility"
    path = tmp_path / "m.json"
    r.mechanism.save(path)
    from mechopt.cli import main

    assert main(["verify", str(path)]) == 0
    with pytest.raises(InputError, match="must include the model's constraints"):
        m.finish(cp.Problem(cp.Minimize(cp.sum(m.Q)), [cp.sum(m.Q, axis=1) == 1]))


def test_uldp_with_fixed_roles():
    m = mechopt.model([ULDP(1.0, sensitive=["s"])], inputs=["s", "a", "b"], invertible={"a": "a"})
    L = 1 - np.eye(3)
    r = m.solve(cp.Minimize(m.expected_loss(L)))
    assert r.ok and r.certificate.verified
    Q = r.mechanism.matrix
    assert np.count_nonzero(Q[:, 1]) == 1 and Q[1, 1] > 0      # output 'a' is invertible, at input 'a'
    assert r.status == "feasible" and "roles" in r.message
    m2 = mechopt.model([ULDP(1.0, sensitive=["s"])], inputs=["s", "a", "b"])
    r = m2.solve(cp.Minimize(cp.sum(m2.Q[:, 0])))
    assert r.status == "feasible" and "invertible: none" in r.message      # all protected: a restriction
    with pytest.raises(InputError, match="is sensitive"):
        mechopt.model([ULDP(1.0, sensitive=["s"])], inputs=["s", "a"], invertible={"a": "s"})


def test_infeasible_user_constraints_are_a_status():
    m = mechopt.model([LDP(1.0)], inputs=4)
    r = m.solve(cp.Minimize(cp.sum(m.Q)), [cp.diag(m.Q) >= 0.9])
    assert r.status == "infeasible" and r.mechanism is None


NON_DCP = [
    (lambda Q: cp.Minimize(-cp.sum_squares(Q)), [], "objective", "is not DCP"),
    (lambda Q: cp.Maximize(cp.sum_squares(Q)), [], "objective", "Maximize needs a concave"),
    (lambda Q: cp.Minimize(cp.sum(Q)), [lambda Q: cp.sum_squares(Q) >= 1], r"constraints\[0\]", "is not DCP"),
    (lambda Q: cp.Minimize(cp.sum(Q)), [lambda Q: cp.sum_squares(Q) == 1], r"constraints\[0\]", "is not DCP"),
    (lambda Q: "minimise the error", [], "objective", "must be cvxpy.Minimize"),
]


@pytest.mark.parametrize("obj,cons,field,rule", NON_DCP)
def test_non_convex_is_one_line(obj, cons, field, rule):
    import re

    m = mechopt.model([LDP(1.0)], inputs=3)
    with pytest.raises(InputError, match=rule) as info:
        m.solve(obj(m.Q), [c(m.Q) for c in cons])
    assert re.fullmatch(field, info.value.field) and "\n" not in str(info.value)


def test_bad_model_input():
    with pytest.raises(InputError, match="needs labeled outputs"):
        mechopt.model({"k": 2, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1}],
                       "objective": {"kind": "mutual_information"}})
    with pytest.raises(InputError, match="is required with notions"):
        mechopt.model([LDP(1.0)])
    with pytest.raises(InputError, match="only with notions"):
        mechopt.model({"k": 2, "privacy": [{"notion": "ldp", "epsilon": 1}]}, inputs=2)
    with pytest.raises(InputError, match=r"privacy\[0\].prior"):
        mechopt.model([LIP(1.0, prior=[0.5, 0.5])], inputs=3)
    with pytest.raises(InputError, match="no installed solver"):
        mechopt.model([LDP(1.0)], inputs=2).solve(cp.Minimize(0), solver="NOSUCH")
    with pytest.raises(InputError, match="fixes ULDP roles"):
        mechopt.model([LDP(1.0)], inputs=2, invertible={"0": "1"})
