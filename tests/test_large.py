"""Free outputs at large k (issue 10 A): column generation with exact pricing and the
uniform-prior orbit, against main's ray enumeration (an independent path) on small k."""

import math

import numpy as np
import pytest

import mechopt
from mechopt import solve
from mechopt.objectives import evaluate, objective_scale

KINDS = ("mmse", "histogram_mse", "mutual_information", "bayes_risk")
NOTIONS = ("ldp", "block", "high_low", "uldp", "lip")


def problem(notion, kind, k, seed, eps=1.0, prior=None):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(k, 0.8)) if prior is None else np.asarray(prior)
    labels = [str(x) for x in range(k)]
    priv = {"ldp": {"notion": "ldp", "epsilon": eps},
            "block": {"notion": "block", "epsilon": eps, "blocks": [labels[: k // 2], labels[k // 2: k - 1], labels[-1:]]},
            "high_low": {"notion": "high_low", "epsilon": eps, "sensitive": labels[::2]},
            "uldp": {"notion": "uldp", "epsilon": eps, "sensitive": labels[::3]},
            "lip": {"notion": "lip", "epsilon": eps, "prior": P.tolist()}}[notion]
    obj = {"kind": kind, "prior": P.tolist()}
    if kind == "mmse":
        obj["values"] = rng.normal(size=k).tolist()
    if kind == "bayes_risk":
        obj["loss"] = "hamming" if seed % 2 else np.round(rng.uniform(0, 1, (k, k)) * (1 - np.eye(k)), 3).tolist()
    return {"k": k, "outputs": "free", "privacy": [priv], "objective": obj}


@pytest.mark.parametrize("notion", NOTIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_colgen_equals_enumeration(notion, kind):
    k = 8 + 2 * ((NOTIONS.index(notion) + KINDS.index(kind)) % 3)  # k = 8, 10, 12
    doc = problem(notion, kind, k, seed=KINDS.index(kind) + 7 * NOTIONS.index(notion))
    enum = solve(doc, method="rays", quiet=True)
    cg = solve(doc, method="colgen", quiet=True)
    assert enum.stats["method"] == "rays" and cg.stats["method"] == "colgen"
    assert enum.status == cg.status == "optimal"
    assert cg.objective == pytest.approx(enum.objective, rel=1e-9, abs=1e-12)
    # each bound holds against the other method's verified channel
    if kind == "mutual_information":
        assert cg.bound >= enum.objective - 1e-12 and enum.bound >= cg.objective - 1e-12
    else:
        assert cg.bound <= enum.objective + 1e-12 and enum.bound <= cg.objective + 1e-12
    # the exported channel's objective, re-evaluated from its matrix
    o = mechopt.load_problem(doc).objective
    assert evaluate(o, cg.mechanism.matrix) == pytest.approx(cg.objective, rel=1e-12, abs=1e-15)


def _status_is_coherent(r, doc):
    o = mechopt.load_problem(doc).objective
    assert r.certificate.verified
    assert evaluate(o, r.mechanism.matrix) == pytest.approx(r.objective, rel=1e-12, abs=1e-15)
    closes = r.gap <= 1e-9 * max(abs(r.objective), objective_scale(o))
    assert (r.status == "optimal") == closes
    if o.minimize:
        assert r.bound <= r.objective + 1e-12 * max(1.0, abs(r.objective))
    else:
        assert r.bound >= r.objective - 1e-12 * max(1.0, abs(r.objective))


@pytest.mark.parametrize("notion,kind", [("ldp", "mmse"), ("ldp", "bayes_risk"), ("block", "histogram_mse"),
                                         ("uldp", "mutual_information"), ("high_low", "bayes_risk"),
                                         ("lip", "mmse")])
def test_k30_auto_uses_colgen_verified_and_coherent(notion, kind):
    doc = problem(notion, kind, 30, seed=3)
    r = solve(doc, quiet=True)
    assert r.stats["method"] == "colgen"
    assert r.status == "optimal"
    _status_is_coherent(r, doc)
    assert r.mechanism.matrix.shape[1] <= 2 * 30  # a basic solution of the master: few outputs


def test_time_limit_stops_with_a_proven_gap():
    doc = problem("lip", "mutual_information", 40, seed=5)
    r = solve(doc, quiet=True, time_limit=0.05)
    assert r.stats["method"] == "colgen" and r.status in ("optimal", "feasible")
    _status_is_coherent(r, doc)
    if r.status == "feasible":
        assert r.gap > 0 and "time limit" in r.message


@pytest.mark.parametrize("kind", ["histogram_mse", "mutual_information", "bayes_risk"])
@pytest.mark.parametrize("k,eps", [(5, 0.5), (7, 1.0), (9, 2.5)])
def test_orbit_equals_enumeration_for_a_uniform_prior(kind, k, eps):
    doc = {"k": k, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": eps}], "objective": {"kind": kind}}
    if kind == "bayes_risk":
        doc["objective"]["loss"] = "hamming"
    enum = solve(doc, method="rays", quiet=True)
    orb = solve(doc, method="orbit", quiet=True)
    assert orb.stats["method"] == "orbit" and orb.status == enum.status == "optimal"
    assert orb.objective == pytest.approx(enum.objective, rel=1e-9, abs=1e-12)
    assert orb.mechanism.matrix.shape[1] <= k
    _status_is_coherent(orb, doc)


def test_orbit_at_large_k_is_a_verified_family():
    k = 2000
    doc = {"k": k, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
           "objective": {"kind": "histogram_mse"}}
    r = solve(doc, quiet=True)
    assert r.stats["method"] == "orbit" and r.status == "optimal"
    assert r.certificate.verified and r.mechanism.verify().verified
    assert r.gap <= 1e-9 * max(1.0, r.objective)
    # the subset size beats its neighbours: the closed form, evaluated independently
    E, d = math.e, r.stats["subset_size"]

    def hist(d):  # 1 - sum_y (P_x Q[x,y])^2 / P(y) for the k cyclic d-windows, by hand
        return 1 - (d * E * E + k - d) / (d * E + k - d) ** 2

    assert r.objective == pytest.approx(hist(d), rel=1e-12)
    assert hist(d) <= min(hist(d - 1), hist(d + 1))


def test_colgen_refuses_what_it_cannot_price():
    doc = problem("lip", "mmse", 6, seed=0)
    doc["objective"]["prior"] = [0.1, 0.1, 0.2, 0.2, 0.3, 0.1]
    with pytest.raises(mechopt.InputError, match="column generation is available"):
        solve(doc, method="colgen", quiet=True)
    with pytest.raises(mechopt.InputError, match="'orbit' needs"):
        solve(problem("lip", "mmse", 6, seed=0), method="orbit", quiet=True)


@pytest.mark.parametrize("notion", NOTIONS)
def test_epsilon_zero_pieces_collapse_to_their_one_ray(notion):
    """At ε = 0 the staircases (and the LIP slice) are a single ray: the constant channel
    is optimal under LDP and LIP (mutual information 0); the pricers never see a = 0."""
    k = 16
    doc = problem(notion, "histogram_mse", k, seed=1, eps=0.0, prior=np.full(k, 1 / k))
    doc["objective"]["prior"] = [1 / 16] * k
    if notion == "lip":
        doc["privacy"][0]["prior"] = [1 / 16] * k
    r = solve(doc, method="colgen", quiet=True)
    assert r.status == "optimal"
    _status_is_coherent(r, doc)
    if notion in ("ldp", "lip"):
        assert r.objective == pytest.approx(1 - 1 / k, abs=1e-12)  # the constant channel's 1 - sum P^2


def test_budgets_above_the_cap_keep_mains_relaxation():
    """eps above BUDGET_CAP: main's relaxed enumeration, not e^eps in an LP (fuzz seed 14 #351)."""
    doc = {"k": 20, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 240.7}],
           "objective": {"kind": "mmse", "values": list(range(20))}}
    r = solve(doc, quiet=True, method="colgen")
    assert r.stats["method"] == "rays" and r.certificate.verified


def test_sparse_master_matches_a_dense_lp_and_survives_pruning():
    # the master's sparse form (v = alpha 1 + r, one extra row) must solve the same LP as
    # the dense ray LP: same value, duals feasible and optimal for it (scipy, independent)
    from scipy.optimize import linprog

    from mechopt.solvers.free._colgen import Master

    rng = np.random.default_rng(5)
    k, n, a = 9, 60, math.e - 1
    V = np.ones((k, n)) + a * (rng.uniform(size=(k, n)) < 0.4)
    V = np.hstack([V, np.eye(k)[:, :3], np.ones((k, 1))])  # unit rays and the constant ray too
    mu = rng.uniform(0.0, 1.0, V.shape[1]) * V.sum(axis=0)
    ref = linprog(-mu, A_eq=V, b_eq=np.ones(k), bounds=(0, None), method="highs")
    assert ref.status == 0
    m = Master(k)
    m.add(V[:, :30], mu[:30])
    m.solve()
    m.add(V[:, 30:], mu[30:])
    status, value, w, d = m.solve()
    assert status == "optimal" and abs(value + ref.fun) <= 1e-9 * max(1.0, abs(ref.fun))
    assert np.allclose(m.V @ w, 1.0, atol=1e-9)
    assert np.all(d @ V >= mu - 1e-8) and abs(d.sum() - value) <= 1e-8
    # pruning keeps the optimum (only non-basic columns go) and forgets the dropped keys
    before = m.V.copy()
    kept = m.prune(w, d, keep=20, protect=5)
    assert kept is not None and m.V.shape[1] == kept.sum() >= 20 and kept[:5].all()
    assert np.all(w[~kept] == 0)
    status, value2, w2, _ = m.solve()
    assert abs(value2 - value) <= 1e-9 * max(1.0, abs(value))
    assert len(m.add(before[:, ~kept][:, :1], np.zeros(1))) == 1  # a dropped ray can come back


@pytest.mark.parametrize("kind", ["histogram_mse", "mutual_information"])
def test_lip_k50_reaches_the_chord_bound(kind):
    """At k = 50 the LIP optimum sits on the chord bound, a closed form (docs/large.md).

    Each ``phi_x`` (``(P_x t)^2``, ``P_x t log t``) lies under its chord on ``[e^-eps, e^eps]``,
    so the chords at ``t = 1`` bound the ray LP: ``MSE >= 1 - sum P_x^2 (lo + hi - lo hi)``
    and ``MI <= sum P_x (lo log lo + (1 - lo)(hi log hi - lo log lo)/(hi - lo))``. The
    answer must be proven optimal, verified, and its channel's own objective within the
    gap of that bound.
    """
    doc = problem("lip", kind, 50, seed=11, eps=1.0)
    P = np.asarray(doc["objective"]["prior"])
    lo, hi = math.exp(-1.0), math.exp(1.0)
    if kind == "histogram_mse":
        bound = 1.0 - float((P**2).sum()) * (lo + hi - lo * hi)
    else:
        slope = (hi * math.log(hi) - lo * math.log(lo)) / (hi - lo)
        bound = float(P.sum()) * (lo * math.log(lo) + (1 - lo) * slope)
    r = solve(doc, quiet=True, time_limit=60)
    assert r.status == "optimal" and r.certificate.verified
    value = evaluate(mechopt.load_problem(doc).objective, r.mechanism.matrix)
    scale = objective_scale(mechopt.load_problem(doc).objective)
    sign = 1.0 if kind == "histogram_mse" else -1.0  # MSE is minimised, MI maximised
    assert sign * (value - bound) >= -1e-12
    assert sign * (value - bound) <= 1e-9 * scale
