"""Problem-file additions (mechopt/_custom.py): worst_case_loss, weighted sums, channel
constraints — each optimum against a formulation written here with every pair in cvxpy,
or against a closed form or enumeration."""

import itertools
import math
import re

import cvxpy as cp
import numpy as np
import pytest

import mechopt
from mechopt import InputError, load_problem, solve
from mechopt.cli import main


def all_pairs(k, m, pairs, objective, extra=lambda Q: [], lip=()):
    """A hand-written model: every pairwise row, LIP rows with the prior written out."""
    Q = cp.Variable((k, m), nonneg=True)
    cons = [cp.sum(Q, axis=1) == 1]
    for x, xp, eps in pairs:
        cons.append(Q[x, :] <= math.exp(eps) * Q[xp, :])
    for P, eps in lip:
        PQ = P @ Q
        for x in range(k):
            cons += [math.exp(-eps) * Q[x, :] <= PQ, PQ <= math.exp(eps) * Q[x, :]]
    prob = cp.Problem(cp.Minimize(objective(Q)), cons + extra(Q))
    prob.solve(solver="HIGHS")
    return prob.status, (float(prob.value) if prob.value is not None else None)


def ldp_pairs(k, eps):
    return [(x, xp, eps) for x in range(k) for xp in range(k) if x != xp]


def worst(L):
    return lambda Q: cp.max(cp.sum(cp.multiply(L, Q), axis=1))


@pytest.mark.parametrize("k,eps", [(3, 0.5), (6, 1.0), (10, 2.0)])
def test_worst_case_hamming_ldp_is_krr(k, eps):
    r = solve({"k": k, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": eps}],
               "objective": {"kind": "worst_case_loss"}})
    krr = (k - 1) / (math.exp(eps) + k - 1)     # k-RR equalises every input's error
    assert r.status == "optimal" and r.certificate.verified
    assert abs(r.objective - krr) <= 1e-9 and r.bound <= krr + 1e-12


def test_worst_case_random_eldp_against_all_pairs():
    rng = np.random.default_rng(3)
    k = 6
    E = rng.uniform(0.3, 2.0, (k, k))
    E[rng.random((k, k)) < 0.3] = np.inf
    np.fill_diagonal(E, 0.0)
    L = rng.uniform(0, 3, (k, k))
    np.fill_diagonal(L, 0.0)
    doc = {"k": k, "outputs": "inputs",
           "privacy": [{"notion": "eldp", "matrix": [["inf" if math.isinf(v) else float(v) for v in row] for row in E]}],
           "objective": {"kind": "worst_case_loss", "loss": L.tolist()}}
    r = solve(doc)
    pairs = [(x, xp, E[x, xp]) for x in range(k) for xp in range(k) if x != xp and np.isfinite(E[x, xp])]
    st, ref = all_pairs(k, k, pairs, worst(L))
    assert r.status == "optimal" and st == "optimal"
    assert abs(r.objective - ref) <= 1e-7 and r.bound <= ref + 1e-9


def test_worst_case_lip_with_non_square_outputs():
    P = np.array([0.1, 0.2, 0.3, 0.4])
    outs = ["0", "1", "2", "3", "4", "5"]
    doc = {"inputs": ["0", "1", "2", "3"], "outputs": outs,
           "privacy": [{"notion": "lip", "epsilon": 1.0, "prior": P.tolist()}],
           "objective": {"kind": "worst_case_loss", "loss": "squared"}}
    r = solve(doc)
    L = (np.arange(4)[:, None] - np.arange(6)[None, :]) ** 2.0
    st, ref = all_pairs(4, 6, [], worst(L), lip=[(P, 1.0)])
    assert r.status == "optimal"
    assert abs(r.objective - ref) <= 1e-7


def test_worst_case_uldp_against_every_role_assignment():
    # k = 3, input 0 sensitive: each output protected, or invertible at input 1 or 2 (3^3 LPs)
    k, eps = 3, 0.8
    L = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0.0]])
    doc = {"k": k, "outputs": "inputs", "privacy": [{"notion": "uldp", "epsilon": eps, "sensitive": ["0"]}],
           "objective": {"kind": "worst_case_loss", "loss": L.tolist()}}
    r = solve(doc)
    best = math.inf
    for roles in itertools.product([None, 1, 2], repeat=k):
        prot = [y for y in range(k) if roles[y] is None]

        def extra(Q, roles=roles, prot=prot):
            cons = []
            for y, owner in enumerate(roles):
                if owner is not None:
                    cons += [Q[x, y] == 0 for x in range(k) if x != owner]
            if prot:
                cons += [Q[x, prot] <= math.exp(eps) * Q[xp, prot] for x in range(k) for xp in range(k) if x != xp]
            return cons

        st, val = all_pairs(k, k, [], worst(L), extra)
        if st == "optimal":
            best = min(best, val)
    assert r.status == "optimal"
    assert abs(r.objective - best) <= 1e-7 and r.bound <= best + 1e-9


def test_weighted_labeled_against_all_pairs():
    k, eps = 5, 1.0
    P = np.array([0.3, 0.25, 0.2, 0.15, 0.1])
    v = np.arange(k, dtype=float)
    L1 = np.abs(v[:, None] - v[None, :])
    H = 1 - np.eye(k)
    doc = {"k": k, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": eps}],
           "objective": {"kind": "weighted", "prior": P.tolist(),
                         "terms": [{"weight": 1.0, "kind": "expected_loss", "loss": "absolute"},
                                   {"weight": 0.5, "kind": "worst_case_loss", "loss": "hamming"}]}}
    r = solve(doc)
    obj = lambda Q: cp.sum(cp.multiply(P[:, None] * L1, Q)) + 0.5 * worst(H)(Q)
    st, ref = all_pairs(k, k, ldp_pairs(k, eps), obj)
    assert r.status == "optimal"
    assert abs(r.objective - ref) <= 1e-7
    Q = r.mechanism.matrix   # the reported value is the weighted sum, recomputed here
    assert abs(r.objective - (float(np.sum(P[:, None] * L1 * Q)) + 0.5 * float(np.max((H * Q).sum(1))))) <= 1e-12


def _hist_mse(P, V):
    py = P @ V
    return 1.0 - float(np.sum(((P[:, None] * V) ** 2).sum(0) / py))


def _mi(P, V):
    py = P @ V
    return float(sum(P[x] * V[x, y] * math.log(V[x, y] / py[y]) for x in range(V.shape[0])
                     for y in range(V.shape[1]) if V[x, y] > 0))


def test_weighted_free_outputs_against_enumeration(ray_bases):
    k, eps = 4, 1.0
    P = np.array([0.4, 0.3, 0.2, 0.1])
    doc = {"k": k, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": eps}],
           "objective": {"kind": "weighted", "prior": P.tolist(),
                         "terms": [{"weight": 1.0, "kind": "histogram_mse"},
                                   {"weight": 0.2, "kind": "mutual_information"}]}}
    r = solve(doc)
    e = math.exp(eps)
    V = np.array([[e if (s >> x) & 1 else 1.0 for x in range(k)] for s in range(1, 2**k - 1)]).T
    best = math.inf
    for _, B, w in ray_bases(V):
        Qb = B * np.clip(w, 0, None)
        Qb = Qb[:, Qb.sum(axis=0) > 0]      # a zero-weight ray is no output
        best = min(best, _hist_mse(P, Qb) - 0.2 * _mi(P, Qb))
    assert r.status == "optimal"
    assert abs(r.objective - best) <= 1e-7
    Q = r.mechanism.matrix
    assert abs(r.objective - (_hist_mse(P, Q) - 0.2 * _mi(P, Q))) <= 1e-12


def test_constraints_against_all_pairs():
    k, eps = 5, 1.0
    P = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
    v = np.arange(1, k + 1.0)
    L = np.abs(v[:, None] - v[None, :])
    labels = ["a", "b", "c", "d", "e"]
    doc = {"inputs": labels, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": eps}],
           "objective": {"kind": "expected_loss", "loss": "absolute", "values": v.tolist(), "prior": P.tolist()},
           "constraints": [{"kind": "min_truthful", "value": {"a": 0.35, "e": 0.3}},
                           {"kind": "max_loss", "value": 1.3},
                           {"kind": "max_frequency", "value": {"c": 0.25}}]}
    r = solve(doc)

    def extra(Q):
        return [Q[0, 0] >= 0.35, Q[4, 4] >= 0.3, cp.sum(cp.multiply(L, Q), axis=1) <= 1.3, P @ Q[:, 2] <= 0.25]

    st, ref = all_pairs(k, k, ldp_pairs(k, eps), lambda Q: cp.sum(cp.multiply(P[:, None] * L, Q)), extra)
    assert r.status == "optimal" and st == "optimal"
    assert abs(r.objective - ref) <= 1e-7 and r.bound <= ref + 1e-9
    Q = r.mechanism.matrix
    assert Q[0, 0] >= 0.35 - 1e-9 and Q[4, 4] >= 0.3 - 1e-9
    assert (L * Q).sum(1).max() <= 1.3 + 1e-9 and P @ Q[:, 2] <= 0.25 + 1e-9
    rep = r.mechanism.certificate["constraints"]
    assert [c["kind"] for c in rep] == ["min_truthful", "max_loss", "max_frequency"] and all(c["ok"] for c in rep)


def test_constraints_on_lip_and_high_low():
    P = [0.1, 0.2, 0.3, 0.4]
    doc = {"inputs": ["a", "b", "c", "d"], "outputs": "inputs",
           "privacy": [{"notion": "lip", "epsilon": 1.0, "prior": P},
                       {"notion": "high_low", "epsilon": 0.7, "sensitive": ["d"]}],
           "objective": {"kind": "expected_loss"},
           "constraints": [{"kind": "max_frequency", "value": 0.4}]}
    r = solve(doc)
    Pa = np.array(P)
    pairs = [(3, xp, 0.7) for xp in range(3)]

    def extra(Q):
        return [Pa @ Q <= 0.4]

    st, ref = all_pairs(4, 4, pairs, lambda Q: cp.sum(cp.multiply(Pa[:, None] * (1 - np.eye(4)), Q)), extra,
                        lip=[(Pa, 1.0)])
    assert r.status == "optimal" and abs(r.objective - ref) <= 1e-7


def test_infeasible_constraints_are_a_status():
    doc = {"k": 4, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
           "objective": {"kind": "expected_loss"}, "constraints": [{"kind": "min_truthful", "value": 0.9}]}
    r = solve(doc)
    st, _ = all_pairs(4, 4, ldp_pairs(4, 1.0), lambda Q: cp.sum(Q), lambda Q: [cp.diag(Q) >= 0.9])
    assert st == "infeasible"
    assert r.status == "infeasible" and r.mechanism is None and "constraints" in r.message


def test_cli_infeasible_exit_1(tmp_path, capsys):
    import yaml

    p = tmp_path / "p.yaml"
    p.write_text(yaml.safe_dump({"k": 3, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 0.5}],
                                 "constraints": [{"kind": "max_loss", "value": 0.1}]}))
    assert main(["solve", str(p), "-o", str(tmp_path / "m.json"), "--quiet"]) == 1
    assert "infeasible" in capsys.readouterr().err


def test_worst_case_never_below_the_average_optimum():
    # the worst input's loss is at least the uniform average, so min max >= min average
    rng = np.random.default_rng(7)
    for _ in range(3):
        k = int(rng.integers(3, 7))
        L = rng.uniform(0, 1, (k, k))
        base = {"k": k, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": float(rng.uniform(0.2, 2))}]}
        w = solve({**base, "objective": {"kind": "worst_case_loss", "loss": L.tolist()}})
        a = solve({**base, "objective": {"kind": "expected_loss", "loss": L.tolist()}})
        assert w.objective >= a.objective - 1e-9
        assert w.objective <= float((a.mechanism.matrix * L).sum(1).max()) + 1e-9


def test_round_trip_and_old_files_load():
    doc = {"inputs": ["a", "b", "c"], "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
           "objective": {"kind": "weighted", "terms": [{"weight": 2.0, "kind": "worst_case_loss", "loss": "hamming"},
                                                       {"weight": 1.0, "kind": "expected_loss"}]},
           "constraints": [{"kind": "min_truthful", "value": 0.4}, {"kind": "max_frequency", "value": {"a": 0.5}}]}
    p = load_problem(doc)
    q = load_problem(p.to_spec())
    assert q.to_spec() == p.to_spec()
    assert solve(q).objective == pytest.approx(solve(p).objective, abs=1e-12)
    from pathlib import Path

    for f in sorted((Path(__file__).resolve().parents[1] / "problems").glob("*.yaml")):
        assert load_problem(f).constraints == ()


BAD = [
    ({"constraints": {"kind": "min_truthful"}}, "constraints", "must be a list"),
    ({"constraints": [{"kind": "min_truth", "value": 1}]}, r"constraints\[0\].kind", "unknown constraint"),
    ({"constraints": [{"kind": "min_truthful"}]}, r"constraints\[0\].value", "is required"),
    ({"constraints": [{"kind": "min_truthful", "value": 1.5}]}, r"constraints\[0\].value", r"must be in \[0, 1\]"),
    ({"constraints": [{"kind": "min_truthful", "value": {"z": 0.1}}]}, r"constraints\[0\].value\['z'\]", "is not one of"),
    ({"constraints": [{"kind": "min_truthful", "value": "x"}]}, r"constraints\[0\].value", "must be a number"),
    ({"constraints": [{"kind": "max_loss", "value": 1, "weight": 2}]}, r"constraints\[0\].weight", "is not a field"),
    ({"constraints": [{"kind": "max_loss", "value": 1, "loss": "cubic"}]}, r"constraints\[0\].loss", "unknown loss"),
    ({"constraints": [{"kind": "max_frequency", "value": 0.5, "prior": [1, 0]}]}, r"constraints\[0\].prior",
     "one entry per input"),
    ({"objective": {"kind": "weighted"}}, "objective.terms", "non-empty list"),
    ({"objective": {"kind": "weighted", "terms": [{"kind": "expected_loss"}]}}, r"objective.terms\[0\].weight",
     "is required"),
    ({"objective": {"kind": "weighted", "terms": [{"weight": -1, "kind": "expected_loss"}]}},
     r"objective.terms\[0\].weight", r"must be in \[0"),
    ({"objective": {"kind": "weighted", "terms": [{"weight": 1, "kind": "mmse"}]}}, r"objective.terms\[0\].kind",
     "with labeled outputs"),
    ({"objective": {"kind": "weighted", "terms": [{"weight": 1, "kind": "expected_loss", "loss": "cubic"}]}},
     r"objective.terms\[0\].loss", "unknown loss"),
    ({"objective": {"kind": "weighted", "terms": [{"weight": 1, "kind": "expected_loss", "prior": [1, 0, 0]}]}},
     r"objective.terms\[0\].prior", "set the prior once"),
    ({"objective": {"kind": "weighted", "loss": "hamming", "terms": []}}, "objective.loss", "not a field"),
    ({"objective": {"kind": "worst_case_loss", "values": [1, 2]}}, "objective.values", "one number per input"),
    ({"outputs": "free", "objective": {"kind": "worst_case_loss"}}, "outputs", "needs labeled outputs"),
    ({"outputs": "free", "objective": {"kind": "mutual_information"},
      "constraints": [{"kind": "max_frequency", "value": 0.2}]}, "constraints", "need labeled outputs"),
    ({"outputs": ["u", "v", "w"], "constraints": [{"kind": "min_truthful", "value": 0.2}]},
     r"constraints\[0\].value", "no output of the same name"),
]


@pytest.mark.parametrize("patch,field,rule", BAD)
def test_bad_additions_are_one_line(patch, field, rule):
    doc = {"inputs": ["a", "b", "c"], "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
           **patch}
    with pytest.raises(InputError, match=rule) as info:
        load_problem(doc)
    assert re.fullmatch(field, info.value.field), info.value.field
    assert "\n" not in str(info.value)


def test_bad_addition_cli_exit_2(tmp_path, capsys):
    import yaml

    p = tmp_path / "p.yaml"
    p.write_text(yaml.safe_dump({"k": 2, "privacy": [{"notion": "ldp", "epsilon": 1}],
                                 "constraints": [{"kind": "max_frequency", "value": 2}]}))
    assert main(["solve", str(p), "-o", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "constraints[0].value" in err[0]


def test_verify_with_problem_accepts_new_fields(tmp_path):
    doc = {"k": 3, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
           "objective": {"kind": "worst_case_loss"}, "constraints": [{"kind": "min_truthful", "value": 0.4}]}
    import yaml

    p = tmp_path / "p.yaml"
    p.write_text(yaml.safe_dump(doc))
    assert main(["solve", str(p), "-o", str(tmp_path / "m.json"), "--quiet"]) == 0
    assert main(["verify", str(tmp_path / "m.json"), "--problem", str(p)]) == 0
    mech = mechopt.Mechanism.load(tmp_path / "m.json")
    assert mech.objective["kind"] == "worst_case_loss"



from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(2, 6), eps=st.floats(0.05, 3.0), floor=st.floats(0.0, 0.9), seed=st.integers(0, 10**6),
       minimax=st.booleans())
def test_law_floor_verified_and_never_worse_than_a_feasible_krr(k, eps, floor, seed, minimax):
    """Every answer verifies and meets its floor; it never loses to k-RR when k-RR meets the floor;
    'infeasible' only when the floor is above what eps-LDP allows on the diagonal."""
    rng = np.random.default_rng(seed)
    L = rng.uniform(0, 1, (k, k))
    np.fill_diagonal(L, 0.0)
    doc = {"k": k, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": eps}],
           "objective": {"kind": "worst_case_loss" if minimax else "expected_loss", "loss": L.tolist()},
           "constraints": [{"kind": "min_truthful", "value": floor}]}
    r = solve(doc)
    e = math.exp(eps)
    top = e / (e + k - 1)        # the largest diagonal every row can have at once under eps-LDP (k-RR's)
    if r.status == "infeasible":
        assert floor > top - 1e-9
        return
    assert floor <= top + 1e-7      # above k-RR's diagonal no private channel exists
    assert r.status == "optimal" and r.certificate.verified
    Q = r.mechanism.matrix
    assert np.diag(Q).min() >= floor - 1e-9
    assert r.bound <= r.objective + 1e-12
    if top >= floor:
        krr = (np.ones((k, k)) + (e - 1) * np.eye(k)) / (e + k - 1)
        value = (L * krr).sum(1).max() if minimax else float(np.sum(L * krr)) / k
        assert r.objective <= value + 1e-9
