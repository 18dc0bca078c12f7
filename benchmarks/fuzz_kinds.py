"""The fuzzer's generators beside the core one (issue 20, item 7), with their own references.

Problem ``i`` of seed ``s`` belongs to one generator, drawn from ``default_rng([s, i, 5])``
with the shares of :data:`SHARES` (``--kinds`` restricts a run to some of them: the
shares are renormalised). The core generator (:func:`benchmarks.fuzz.random_problem`)
still draws its problem from ``default_rng([s, i])``, so an index that is ``core`` is the
same problem as before this module existed.

* ``geo`` — metric privacy on at most 8 places (grids with Manhattan edges, random points
  with Euclidean distances, random graphs), clustered priors, squared or absolute loss,
  labeled outputs, solved with ``method="ipm"`` or ``method="relax"``; the route's own
  functions (:func:`mechopt.solvers.metric._route.solve_metric_ipm`, and
  ``solve_metric_relaxed`` at a random threshold, which forces a genuine relaxation even
  where ``solve`` falls back to the LP at such small sizes) are judged too: their bounds
  may not exceed a verified channel of the all-pairs reference LP.
* ``chord`` — free outputs, one LIP notion whose prior is the objective's, histogram MSE or
  mutual information, column generation (the master seeded by ``_near_chord``); judged by
  the chord closed form (histogram risk ``>= 1 - sum P^2 (lo + hi - lo hi)``, mutual
  information ``<= chord of t log t at 1``, ``lo = e^-eps``, ``hi = e^eps``), the free
  witnesses, and at ``k <= 7`` against the ray enumeration (``method="rays"``).
* ``family`` — ε-LDP with a uniform prior where mechopt exports a ``subset_selection``
  family (estimation variance from ``C(k, d) > 3000`` outputs, histogram MSE and mutual
  information beyond k = 400): the file re-loaded with
  :func:`mechopt.families.load_family_document`, checked by ``verify_family`` against the
  problem's notions, sampled by ``FamilySampler``; its objective against the closed forms
  of d-subset selection written out here, and the best d against the reported optimum.
* ``custom`` — ``worst_case_loss``, ``weighted`` objectives and ``constraints``
  (docs/custom_utilities.md) on labeled outputs; reference: cvxpy (Clarabel) on the
  all-pairs rows of :func:`benchmarks.fuzz_reference.column_rows`.
* ``uldp_delta`` — labeled ULDP with (ε, δ)-LIP, k <= 4:
  the reference brute-forces every role assignment.
"""

from __future__ import annotations

import json
import math
import os
import time
import traceback
from typing import Any

import numpy as np

#: share of the draws per generator (the rest of issue 14's fuzz is ``core``)
SHARES = {"core": 0.875, "geo": 0.03, "chord": 0.015, "family": 0.02, "custom": 0.03, "uldp_delta": 0.03}
KINDS = tuple(SHARES)


def pick_kind(seed: int, i: int, kinds: tuple[str, ...] | None = None) -> str:
    """The generator of problem ``i`` of ``seed`` (among ``kinds``, shares renormalised)."""
    kinds = tuple(kinds) if kinds else KINDS
    p = np.array([SHARES[k] for k in kinds], dtype=float)
    u = np.random.default_rng([seed, i, 5]).random()
    c = np.cumsum(p / p.sum())
    return kinds[min(int(np.searchsorted(c, u, side="right")), len(kinds) - 1)]


def _usual_eps(rng: np.random.Generator) -> float:
    u = rng.random()
    if u < 0.08:
        return float(rng.choice([1e-3, 0.01]))
    if u < 0.9:
        return float(round(rng.uniform(0.1, 3.0), 3))
    return float(round(rng.uniform(5.0, 25.0), 2))


def _clustered_prior(rng: np.random.Generator, pts: np.ndarray) -> list[float]:
    """A prior with one to three hot spots (decimals with 6 digits summing to 1 exactly)."""
    k = len(pts)
    w = np.full(k, 0.02)
    for _ in range(int(rng.integers(1, 4))):
        c = pts[int(rng.integers(k))]
        w += rng.uniform(0.5, 3.0) * np.exp(-((pts - c) ** 2).sum(axis=1) / rng.uniform(0.2, 2.0))
    c6 = np.maximum(np.floor(w / w.sum() * 1e6).astype(np.int64), 1)
    c6[int(np.argmax(c6))] += 10**6 - int(c6.sum())
    return [int(v) / 1e6 for v in c6]


# -----------------------------------------------------------------------------
# geo
# -----------------------------------------------------------------------------


def geo_problem(rng: np.random.Generator) -> tuple[dict, dict]:
    """A metric problem on at most 8 places and the ``solve`` options forcing its route."""
    u = rng.random()
    if u < 0.4:  # a grid
        rows = int(rng.integers(1, 3)) + 1
        cols = int(rng.integers(2, 8 // rows + 1))
        pts = np.array([(r, c) for r in range(rows) for c in range(cols)], dtype=float)
        shape = "grid"
    else:
        n = int(rng.integers(3, 9))
        pts = np.round(rng.random((n, 2)) * 3.0, 2)
        shape = "points"
    k = len(pts)
    labels = [f"p{i}" for i in range(k)]
    eps = _usual_eps(rng)
    diff = pts[:, None, :] - pts[None, :, :]
    v = rng.random()
    if shape == "grid" and v < 0.5:  # Manhattan as the grid's 4-neighbour edges
        edges = [[labels[a], labels[b], 1.0] for a in range(k) for b in range(a + 1, k)
                 if abs(pts[a] - pts[b]).sum() == 1.0]
        notion = {"notion": "metric", "epsilon": eps, "edges": edges}
        D = np.abs(diff).sum(axis=2)
        dist = "manhattan"
    elif v < 0.8:  # Euclidean, every pair
        D = np.round(np.sqrt((diff**2).sum(axis=2)), 4)
        notion = {"notion": "metric", "epsilon": eps, "distance": D.tolist()}
        dist = "euclidean"
    else:  # a random connected graph
        edges = [[labels[i], labels[i + 1], float(round(rng.uniform(0.2, 2.0), 3))] for i in range(k - 1)]
        for a in range(k):
            for b in range(a + 2, k):
                if rng.random() < 0.3:
                    edges.append([labels[a], labels[b], float(round(rng.uniform(0.2, 2.0), 3))])
        notion = {"notion": "metric", "epsilon": eps, "edges": edges}
        from benchmarks.fuzz_reference import _floyd

        pos = {lab: i for i, lab in enumerate(labels)}
        D = _floyd(k, [(pos[a], pos[b], w) for a, b, w in edges])
        dist = "graph"
    loss = D**2 if rng.random() < 0.6 else D
    doc = {"inputs": labels, "outputs": "inputs", "privacy": [notion],
           "objective": {"kind": "expected_loss", "loss": [[float(round(x, 6)) for x in r] for r in loss],
                         "prior": _clustered_prior(rng, pts)}}
    method = "ipm" if rng.random() < 0.5 else "relax"
    doc["_geo"] = {"shape": shape, "distance": dist, "theta_q": float(rng.random())}
    return doc, {"method": method}


def check_geo_routes(doc: dict, rec: dict, witness_value: float | None) -> None:
    """Judge the IPM, the lazy pairs and one relaxation called directly: bounds below the verified reference channel."""
    from mechopt import load_problem
    from mechopt.solvers.metric._decompose import kept_budgets
    from mechopt.solvers.metric._lazy import solve_metric_lazy
    from mechopt.solvers.metric._route import solve_metric_ipm, solve_metric_relaxed

    from benchmarks import fuzz_reference as fr

    problem = load_problem(_plain(doc))
    ref = fr.read(_plain(doc))
    k = problem.k
    E = kept_budgets(list(problem.notions), k)
    if E is None:
        rec["geo_routes"] = "kept_budgets: None"
        return
    cost = ref.prior[:, None] * ref.loss
    off = ~np.eye(k, dtype=bool) & np.isfinite(E)
    vals = np.unique(E[off])
    out: dict[str, Any] = {}
    runs = [("ipm", lambda: solve_metric_ipm(E, cost)), ("lazy", lambda: solve_metric_lazy(E, cost))]
    if len(vals):
        theta = float(vals[min(int(doc["_geo"]["theta_q"] * len(vals)), len(vals) - 1)])
        runs.append(("relax", lambda: solve_metric_relaxed(E, cost, thetas=[theta])))
        out["theta"] = theta
    for name, call in runs:
        try:
            r = call()
        except Exception as err:  # noqa: BLE001 - mechopt's route raised: counted as a crash
            rec["crash"] = f"{name} route called directly: {type(err).__name__}: {err}"
            rec["trace"] = traceback.format_exc(limit=8)
            continue
        out[name] = {"status": r.status, "objective": r.objective, "bound": r.bound}
        if r.Q is None or witness_value is None:
            continue
        b = r.bound
        tol = 1e-9 * max(abs(witness_value), ref.scale, 1e-300)
        if b is not None and math.isfinite(b) and b - witness_value > tol:
            rec["false_bound"] = (f"{name} route called directly: bound {b!r} above the verified reference "
                                  f"channel's {witness_value!r}")
        # its channel (lifted into the cone) must be a channel of the full problem
        got = fr.verified(ref, list(problem.notions), r.Q)
        if got is None:
            out[name]["channel"] = "not verifiable after repair"
        else:
            out[name]["channel_value"] = fr.objective_value(ref, got[0])
            out[name]["mix_t"] = got[1]
    rec["geo_routes"] = out


def _plain(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if not k.startswith("_")}


# -----------------------------------------------------------------------------
# near-chord LIP columns
# -----------------------------------------------------------------------------


def chord_problem(rng: np.random.Generator) -> tuple[dict, dict]:
    from benchmarks.fuzz import _prior

    k = int(rng.choice([5, 6, 7, 8, 9, 10], p=[0.25, 0.25, 0.2, 0.15, 0.1, 0.05]))
    eps = float(round(rng.uniform(0.3, 2.5), 3)) if rng.random() < 0.85 else 1.0
    doc = {"k": k, "outputs": "free",
           "privacy": [{"notion": "lip", "epsilon": eps, "prior": _prior(rng, k, zeros=False)}],
           "objective": {"kind": str(rng.choice(["histogram_mse", "mutual_information"]))}}
    return doc, {"method": "colgen"}


def chord_value(kind: str, prior, eps: float) -> float:
    """The chord closed form: a lower bound on the histogram risk, an upper bound on MI."""
    lo, hi = math.exp(-eps), math.exp(eps)
    if kind == "histogram_mse":
        P = np.asarray(prior, dtype=float)
        return float(1.0 - (P**2).sum() * (lo + hi - lo * hi))
    a, b = -eps * lo, eps * hi  # t log t at lo and hi
    return a + (1.0 - lo) * (b - a) / (hi - lo)


def check_chord(doc: dict, rec: dict, tmpdir: str) -> None:
    """The chord closed form against the reported objective; colgen against the ray enumeration."""
    from mechopt import load_problem, solve, verify

    from benchmarks import fuzz_reference as fr

    if rec.get("outcome") != "solved":
        return
    spec = doc["privacy"][0]
    kind = doc["objective"]["kind"]
    c = chord_value(kind, spec["prior"], float(spec["epsilon"]))
    v = rec["objective"]
    rec["chord"] = c
    if (v < c - 1e-9 if kind == "histogram_mse" else v > c + 1e-9):
        rec["closed_form"] = f"{kind} {v!r} is beyond the chord closed form {c!r}"
    if doc["k"] > 7:
        return
    problem = load_problem(doc)
    ref = fr.read(doc)
    try:
        other = solve(json.loads(json.dumps(doc)), method="rays", quiet=True)
    except Exception as err:  # noqa: BLE001 - anything escaping solve() is a crash
        rec["crash"] = f'solve(method="rays"): {type(err).__name__}: {err}'
        rec["trace"] = traceback.format_exc(limit=8)
        return
    rec["rays_status"] = other.status
    if other.status not in ("optimal", "feasible") or other.mechanism is None:
        return
    Q = np.asarray(other.mechanism.matrix, dtype=float)
    if not verify(Q, list(problem.notions)).verified:
        rec["violation"] = "the ray enumeration's channel fails verify"
        return
    w = fr.objective_value(ref, Q)
    rec["rays_objective"] = w
    sign = 1.0 if kind == "histogram_mse" else -1.0
    size = max(abs(v), ref.scale)
    tol = 1e-9 * size + 1e-12
    if rec.get("status") == "optimal" and sign * (v - w) > tol:
        rec["optimal_beaten"] = f"colgen optimal {v!r}; the ray enumeration's verified channel {w!r}"
    if other.status == "optimal" and sign * (w - v) > tol:
        rec["optimal_beaten"] = f"rays optimal {w!r}; colgen's verified channel {v!r}"
    b = rec.get("bound")
    if b is not None and sign * (b - w) > 1e-10 * size:
        rec["false_bound"] = f"colgen bound {b!r} beyond the ray enumeration's verified channel {w!r}"
    if other.bound is not None and sign * (other.bound - v) > 1e-10 * size:
        rec["false_bound"] = f"rays bound {other.bound!r} beyond colgen's verified channel {v!r}"


# -----------------------------------------------------------------------------
# families
# -----------------------------------------------------------------------------


def family_problem(rng: np.random.Generator) -> tuple[dict, dict]:
    if rng.random() < 0.7:
        k = int(rng.integers(14, 61))
        kind = "estimation_variance"
        eps = float(round(rng.uniform(0.3, 3.0), 3))
    else:
        k = int(rng.integers(401, 1201))
        kind = str(rng.choice(["histogram_mse", "mutual_information"]))
        eps = float(round(rng.uniform(0.2, 4.0), 3))
    notion = "ldp" if rng.random() < 0.8 else "wc_lip"
    if kind != "estimation_variance":
        notion = "ldp"
    return {"k": k, "outputs": "free", "privacy": [{"notion": notion, "epsilon": eps}],
            "objective": {"kind": kind}}, {}


def _lcomb(n: int, r: int) -> float:
    if r < 0 or r > n:
        return -math.inf
    return math.lgamma(n + 1) - math.lgamma(r + 1) - math.lgamma(n - r + 1)


def subset_value(kind: str, k: int, d: int, r: float) -> float:
    """The objective of d-subset selection with ratio ``r`` under the uniform prior, written out.

    ``Pr(S | x) = r / Z`` if ``x in S`` else ``1 / Z``, ``Z = r C(k-1, d-1) + C(k-1, d)``.
    """
    if d == 0 or d == k:  # one constant output
        return {"histogram_mse": 1.0 - 1.0 / k, "mutual_information": 0.0}.get(kind, math.inf)
    if kind == "histogram_mse":
        return 1.0 - (d * r * r + k - d) / (d * r + k - d) ** 2
    a = math.exp(_lcomb(k - 1, d - 1) - _lcomb(k - 1, d))  # C(k-1, d-1) / C(k-1, d) = d / (k - d)
    zr = r * a + 1.0  # Z / C(k-1, d)
    if kind == "mutual_information":
        lc = _lcomb(k, d) - _lcomb(k - 1, d)  # log (C(k, d) / C(k-1, d))
        return (r * a * (math.log(r) + lc - math.log(zr)) + (lc - math.log(zr))) / zr
    # estimation variance: p = Pr(x in S | x), q = Pr(x in S | x' != x), risk k pi (1 - pi) / (p - q)^2
    p = r * a / zr
    q = (r * (d - 1) + (k - d)) / (k - 1) * a / zr  # [r C(k-2, d-2) + C(k-2, d-1)] / Z
    pi = d / k
    return k * pi * (1 - pi) / (p - q) ** 2


def check_family(doc: dict, tmpdir: str, *, solver=None, timeout=None) -> dict:
    """Solve, expect a family file, re-load and verify it, and judge it against the closed forms."""
    from mechopt import load_problem, solve

    from benchmarks.fuzz import categories, guarded_solve

    rec: dict[str, Any] = {"outcome": None, "detail": "", **categories(doc)}
    problem = load_problem(json.loads(json.dumps(doc)))
    res = guarded_solve(solver or solve, doc, rec, timeout)
    if res is None:
        return rec
    rec["status"] = res.status
    if res.status not in ("optimal", "feasible") or not res.ok:
        rec.update(outcome="status_failure", status_failure=f"{res.status}: {res.message}")
        return rec
    rec.update(outcome="solved", objective=res.objective, bound=res.bound, message=res.message)
    kind, k = doc["objective"]["kind"], doc["k"]
    eps = float(doc["privacy"][0]["epsilon"])
    path = os.path.join(tmpdir, "family.json")
    spec = getattr(res.mechanism, "family_spec", None)
    rec["exported"] = "family" if spec is not None else "matrix"
    if spec is None:  # a matrix (a small orbit): exported as every matrix, its objective recomputed here
        _check_matrix_export(res, problem, doc, path, rec)
    else:
        _check_family_export(res, problem, path, rec, k)
    if "violation" in rec:
        rec["outcome"] = "violation"
        return rec
    size = max(abs(res.objective), 1.0 if kind != "estimation_variance" else 0.0, 1e-300)
    rel = 1e-6 if kind == "estimation_variance" else 1e-9
    if spec is not None:
        fspec = json.loads(json.dumps(spec))
        r = float(fspec["ratio"])
        mix = [(int(c["d"]), float(c["weight"])) for c in fspec["mixture"] if float(c["weight"]) > 0]
        rec["family"] = {"ratio": r, "mixture": mix}
        if len(mix) == 1 or kind != "estimation_variance":
            own = sum(w * subset_value(kind, k, d, r) for d, w in mix)  # histogram, MI: linear in the mixture
            rec["closed_form_value"] = own
            if abs(own - res.objective) > rel * size:
                rec["objective_mismatch"] = f"the family's closed form is {own!r}, reported {res.objective!r}"
    elif abs(rec["file_objective"] - res.objective) > rel * size:
        rec["objective_mismatch"] = f"the file's objective is {rec['file_objective']!r}, reported {res.objective!r}"
    # the best d at a ratio just below e^eps: a feasible channel
    rb = math.exp(eps) * (1 - 4e-16)
    sign = -1.0 if kind == "mutual_information" else 1.0
    best = min((sign * subset_value(kind, k, d, rb), d) for d in range(k + 1))
    bv = sign * best[0]
    rec["closed_form_best"] = [bv, best[1]]
    rec.update(reference_value=bv, reference_how=f"{best[1]}-subset selection", reference_method="closed form")
    if res.status == "optimal" and sign * (res.objective - bv) > max(rel, 1e-9) * size:
        rec["optimal_beaten"] = f"{best[1]}-subset selection at ratio {rb!r} has {bv!r}; optimal {res.objective!r}"
    if res.bound is not None and sign * (res.bound - bv) > max(rel, 1e-10) * size:
        rec["false_bound"] = f"{best[1]}-subset selection at ratio {rb!r} has {bv!r}, beyond the bound {res.bound!r}"
    return rec


def _check_family_export(res, problem, path: str, rec: dict, k: int) -> None:
    from mechopt import MechoptError
    from mechopt.families import FamilySampler, load_family_document
    from mechopt.families._privacy import verify_family

    try:
        res.mechanism.save(path)
        fdoc, fam = load_family_document(path)
        cert = verify_family(fam, list(problem.notions))
        if not cert.verified:
            rec["violation"] = f"verify_family against the problem: {cert.detail}"
        elif fdoc["privacy"] != json.loads(json.dumps(problem.privacy_spec())):
            rec["violation"] = "the family file's privacy claims differ from the problem's"
        else:
            try:
                FamilySampler(fam, seed=1).sample_index(int(np.random.default_rng(k).integers(k)))
                rec["file"] = path
            except Exception as err:  # noqa: BLE001
                rec["client_refused"] = f"FamilySampler: {type(err).__name__}: {err}"
    except MechoptError as err:
        rec["violation"] = f"{type(err).__name__}: {err}"
    except Exception as err:  # noqa: BLE001
        rec["violation"] = f"family export/reload raised {type(err).__name__}: {err}"
        rec["trace"] = traceback.format_exc(limit=6)


def _save_and_reload(res, problem, path: str, rec: dict):
    """Save the solved mechanism to ``path`` and load it back; ``rec["violation"]`` says what failed.

    A violation: the loaded matrix fails :func:`mechopt.verify` against the problem's notions,
    the file claims other privacy than the problem, or saving or loading raises. Returns the
    loaded mechanism (None if loading failed).
    """
    from mechopt import Mechanism, MechoptError, verify

    mech = None
    try:
        res.mechanism.save(path)
        mech = Mechanism.load(path)
        if not verify(mech.matrix, list(problem.notions)).verified:
            rec["violation"] = "verify against the problem failed"
        elif mech.privacy != problem.privacy_spec():
            rec["violation"] = "the file's privacy claims differ from the problem's"
    except MechoptError as err:
        rec["violation"] = f"{type(err).__name__}: {err}"
    return mech


def _check_matrix_export(res, problem, doc: dict, path: str, rec: dict) -> None:
    from benchmarks import fuzz_reference as fr
    from benchmarks.fuzz import client_check

    mech = _save_and_reload(res, problem, path, rec)
    if "violation" in rec:
        return
    client_check(path, rec)
    rec["file_objective"] = fr.objective_value(fr.read(doc), np.asarray(mech.matrix, dtype=float))


# -----------------------------------------------------------------------------
# custom utilities
# -----------------------------------------------------------------------------


def custom_problem(rng: np.random.Generator) -> tuple[dict, dict]:
    from benchmarks.fuzz import _notion, _prior

    k = int(rng.choice([2, 3, 4, 5]))
    labels = [f"x{i}" for i in range(k)]
    kinds = [str(rng.choice(["ldp", "eldp", "metric", "block", "high_low", "lip"]))]
    if rng.random() < 0.3:
        kinds.append(str(rng.choice(["ldp", "metric", "lip", "bp_lip"])))
    privacy = []
    for kd in kinds:
        n = _notion(rng, kd, labels, labeled=False)
        if "epsilon" in n and not 0.0 < n["epsilon"] <= 20:
            n["epsilon"] = float(round(rng.uniform(0.1, 3.0), 3))
        if kd == "eldp":
            n["matrix"] = [[v if (v == "inf" or (0 < float(v) <= 20) or i == j) else 1.0 for j, v in enumerate(r)]
                           for i, r in enumerate(n["matrix"])]
        privacy.append(n)
    values = [float(round(x, 2)) for x in rng.normal(size=k)]
    prior = _prior(rng, k)

    def loss_spec():
        v = rng.random()
        if v < 0.4:
            return {"loss": "hamming"}
        if v < 0.7:
            return {"loss": str(rng.choice(["absolute", "squared"])), "values": values}
        return {"loss": [[0.0 if i == j else float(round(rng.uniform(0.1, 2.0), 3)) for j in range(k)]
                         for i in range(k)]}

    u = rng.random()
    if u < 0.4:
        obj = {"kind": "worst_case_loss", **loss_spec()}
    elif u < 0.75:
        obj = {"kind": "weighted", "prior": prior,
               "terms": [{"weight": float(round(rng.uniform(0.1, 2.0), 2)), "kind": "expected_loss", **loss_spec()},
                         {"weight": float(round(rng.uniform(0.1, 2.0), 2)), "kind": "worst_case_loss", **loss_spec()}]}
    else:
        obj = {"kind": "expected_loss", "prior": prior, **loss_spec()}
    doc: dict[str, Any] = {"inputs": labels, "outputs": "inputs", "privacy": privacy, "objective": obj}
    cons = []
    if rng.random() < 0.6:
        # loose enough that the constant channel usually stays feasible for the frequency cap
        if rng.random() < 0.5:
            cons.append({"kind": "min_truthful", "value": float(round(rng.uniform(0.0, 1.0 / k), 3))})
        if rng.random() < 0.5:
            cons.append({"kind": "max_loss", "value": float(round(rng.uniform(0.5, 2.0), 2)), "loss": "hamming"})
        if rng.random() < 0.4:
            lab = labels[int(rng.integers(k))]
            cons.append({"kind": "max_frequency", "value": {lab: float(round(rng.uniform(0.1, 0.9), 2))}})
    if cons:
        doc["constraints"] = cons
    return doc, {}


def _loss_matrix(spec: dict, labels: list[str]) -> np.ndarray:
    L = spec.get("loss", "hamming")
    k = len(labels)
    if isinstance(L, str):
        if L == "hamming":
            return 1.0 - np.eye(k)
        v = np.array(spec["values"], dtype=float)
        d = np.abs(v[:, None] - v[None, :])
        return d if L == "absolute" else d**2
    return np.array(L, dtype=float)


def custom_terms(doc: dict):
    """``[(weight, 'expected'|'worst', L)]``, the prior, and the constraints as plain arrays."""
    labels = doc["inputs"]
    k = len(labels)
    obj = doc["objective"]
    # no prior given: the first LIP notion's, else uniform (docs/formats.md; as fuzz_reference.read)
    lips = [p["prior"] for p in doc["privacy"] if p["notion"] == "lip"]
    prior = np.array(obj.get("prior", lips[0] if lips else [1.0 / k] * k), dtype=float)
    terms = obj["terms"] if obj["kind"] == "weighted" else [dict(obj, weight=1.0)]
    out = [(float(t["weight"]), "worst" if t["kind"] == "worst_case_loss" else "expected", _loss_matrix(t, labels))
           for t in terms]
    return out, prior


def custom_value(doc: dict, Q: np.ndarray) -> float:
    terms, P = custom_terms(doc)
    total = 0.0
    for w, how, L in terms:
        per = (Q * L).sum(axis=1)
        total += w * (float(per.max()) if how == "worst" else float(P @ per))
    return total


def custom_violation(doc: dict, Q: np.ndarray) -> float:
    """The largest violation of the problem's constraints by ``Q`` (absolute)."""
    labels = doc["inputs"]
    k = len(labels)
    _, P = custom_terms(doc)
    worst = 0.0
    for c in doc.get("constraints", []):
        if c["kind"] == "min_truthful":
            worst = max(worst, float(np.max(c["value"] - np.diag(Q))))
        elif c["kind"] == "max_loss":
            worst = max(worst, float(np.max((Q * _loss_matrix(c, labels)).sum(axis=1) - c["value"])))
        else:
            for lab, v in c["value"].items():
                worst = max(worst, float(P @ Q[:, labels.index(lab)] - v))
    return worst + 0.0 * k


def custom_reference(doc: dict, margin: float = 1e-8) -> tuple[str, float | None, np.ndarray | None]:
    """cvxpy (Clarabel) on the all-pairs rows: ``(status, value, Q)``.

    The utility constraints are tightened by ``margin``: Clarabel meets them to about 1e-9,
    and a channel that breaks one by that much can beat the true optimum by as much (seed 20
    #163: 2e-9 below mechopt's proven bound). A witness must meet them in floating point.
    """
    import cvxpy as cp

    from benchmarks import fuzz_reference as fr

    ref = fr.read(dict(doc, objective={"kind": "expected_loss", "loss": "hamming"}))
    k = ref.k
    A, b = fr.column_rows(ref, protected=True)
    Q = cp.Variable((k, k), nonneg=True)
    cons = [cp.sum(Q, axis=1) == 1]
    if len(A):
        cons.append(A @ Q <= np.repeat(b[:, None], k, axis=1))
    terms, P = custom_terms(doc)
    expr = 0
    for w, how, L in terms:
        per = cp.sum(cp.multiply(Q, L), axis=1)
        expr = expr + w * (cp.max(per) if how == "worst" else P @ per)
    labels = doc["inputs"]
    for c in doc.get("constraints", []):
        if c["kind"] == "min_truthful":
            cons.append(cp.diag(Q) >= c["value"] + margin)
        elif c["kind"] == "max_loss":
            cons.append(cp.sum(cp.multiply(Q, _loss_matrix(c, labels)), axis=1) <= c["value"] - margin)
        else:
            for lab, v in c["value"].items():
                cons.append(P @ Q[:, labels.index(lab)] <= v - margin)
    prob = cp.Problem(cp.Minimize(expr), cons)
    try:
        prob.solve(solver="CLARABEL")
    except Exception as err:  # noqa: BLE001
        return f"error: {type(err).__name__}", None, None
    if prob.status not in ("optimal", "optimal_inaccurate"):
        return prob.status, None, None
    return prob.status, float(prob.value), np.asarray(Q.value)


def check_custom(doc: dict, tmpdir: str, *, timeout=None) -> dict:
    from mechopt import solve

    from benchmarks import fuzz_reference as fr
    from benchmarks.fuzz import categories, guarded_load, guarded_solve

    rec: dict[str, Any] = {"outcome": None, "detail": "", **categories(doc)}
    problem = guarded_load(doc, rec)
    if problem is None:
        return rec
    res = guarded_solve(solve, doc, rec, timeout)
    if res is None:
        return rec
    rec["status"] = res.status
    t1 = time.perf_counter()
    st, val, Qr = custom_reference(doc)
    rec["reference_seconds"] = time.perf_counter() - t1
    rec["reference_method"] = "cvxpy all-pairs"
    rec["reference_lp"] = val
    if res.status == "infeasible":
        if val is not None and Qr is not None and custom_violation(doc, Qr) <= 0.0:
            rec.update(outcome="status_failure", status_failure=f"infeasible, but cvxpy finds {val!r}")
        else:
            rec.update(outcome="infeasible_confirmed", detail=f"cvxpy: {st}")
        return rec
    if res.status not in ("optimal", "feasible") or not res.ok:
        rec.update(outcome="status_failure", status_failure=f"{res.status}: {res.message}")
        return rec
    rec["outcome"] = "solved"
    path = os.path.join(tmpdir, "mechanism.json")
    notions = list(problem.notions)
    mech = _save_and_reload(res, problem, path, rec)
    if "violation" in rec:
        rec["outcome"] = "violation"
        return rec
    rec["file"] = path
    Q = np.asarray(mech.matrix, dtype=float)
    value = custom_value(doc, Q)
    rec.update(objective=value, bound=res.bound, message=res.message)
    # the objective's natural size (docs: gaps are judged relative to max(|value|, scale)):
    # the largest loss, for a weighted objective the weighted sum of its terms' (seed 21 #7774)
    terms, _ = custom_terms(doc)
    scale = max(abs(value), sum(w * float(np.max(np.abs(L))) for w, _, L in terms), 1e-300)
    if abs(value - res.objective) > 1e-9 * scale:
        rec["objective_mismatch"] = f"the file's value is {value!r}, reported {res.objective!r}"
    cv = custom_violation(doc, Q)
    if cv > 1e-9:
        rec["violation"] = f"the exported matrix breaks a constraint by {cv:.3g}"
        rec["outcome"] = "violation"
    if res.status == "optimal" and (res.bound is None or value - res.bound > 1e-7 * scale * (1 + 1e-9)):
        rec["optimal_unproven"] = f"optimal {res.objective!r}, bound {res.bound!r}"
    if res.bound is not None and res.bound - value > 1e-10 * scale:
        rec["false_bound"] = f"mechopt's own channel {value!r} is better than its bound {res.bound!r}"
    if val is None:
        rec["reference_none"] = st
        return rec
    # a witness: the cvxpy channel, repaired (privacy) and still meeting the constraints
    ref = fr.read(dict(_plain(doc), objective={"kind": "expected_loss", "loss": "hamming"}))
    got = fr.verified(ref, notions, Qr)
    if got is not None and custom_violation(doc, got[0]) <= 0.0:
        w = custom_value(doc, got[0])
        rec["reference_value"] = w
        rec["reference_how"] = f"cvxpy (mix {got[1]:g})"
        rec["reference_better_by"] = (value - w) / scale
        if res.status == "optimal" and value - w > 1e-7 * scale + 1e-12:
            rec["optimal_beaten"] = f"a verified cvxpy channel has {w!r}; optimal {res.objective!r}"
        if res.bound is not None and res.bound - w > 1e-10 * scale:
            rec["false_bound"] = f"a verified cvxpy channel has {w!r}, beyond the bound {res.bound!r}"
    if value - val > 1e-6 * scale and res.status == "optimal":
        rec["reference_lp_better_unconfirmed"] = (value - val) / scale
    if val - value > 1e-6 * scale:
        rec["reference_lp_worse"] = (val - value) / scale
    return rec


# -----------------------------------------------------------------------------
# labeled ULDP with (eps, delta)-LIP
# -----------------------------------------------------------------------------


def uldp_delta_problem(rng: np.random.Generator) -> tuple[dict, dict]:
    from benchmarks.fuzz import _prior

    k = int(rng.choice([2, 3, 4], p=[0.2, 0.45, 0.35]))
    labels = [f"x{i}" for i in range(k)]
    n_sens = int(rng.integers(1, k + 1))
    sens = sorted(str(s) for s in rng.choice(labels, size=n_sens, replace=False))
    u = rng.random()
    delta = (float(f"{10 ** rng.uniform(-6, -3):.2g}") if u < 0.25 else 1.0 if u < 0.3 else
             float(round(rng.uniform(0.001, 0.4), 3)))
    privacy = [{"notion": "uldp", "epsilon": _usual_eps(rng), "sensitive": sens},
               {"notion": "lip", "epsilon": _usual_eps(rng), "prior": _prior(rng, k, zeros=rng.random() < 0.2),
                "delta": delta}]
    if rng.random() < 0.5:
        privacy.reverse()
    v = rng.random()
    if v < 0.7:
        outputs = "inputs"
        m = k
    else:
        outputs = labels + ["other"]
        m = k + 1
    if v < 0.35:
        obj = {"kind": "expected_loss", "loss": "hamming"}
    else:
        obj = {"kind": "expected_loss", "loss": [[float(round(abs(rng.normal()), 3)) for _ in range(m)]
                                                 for _ in range(k)]}
    if rng.random() < 0.5:
        obj["prior"] = _prior(rng, k)
    return {"inputs": labels, "outputs": outputs, "privacy": privacy, "objective": obj}, {}


GENERATORS = {"geo": geo_problem, "chord": chord_problem, "family": family_problem, "custom": custom_problem,
              "uldp_delta": uldp_delta_problem}


def draw(seed: int, i: int, kind: str) -> tuple[dict, dict]:
    """Problem ``i`` of ``seed`` from generator ``kind`` (not ``core``) and its solve options."""
    return GENERATORS[kind](np.random.default_rng([seed, i, 6]))


# -----------------------------------------------------------------------------
# client differential: every exported file through the JavaScript client
# -----------------------------------------------------------------------------

_NODE = r"""
import { readFileSync } from "node:fs";
const mod = await import(process.argv[2]);
const files = JSON.parse(readFileSync(0, "utf8"));
const out = {};
for (const f of files) {
  try { await mod.loadMechanism(readFileSync(f, "utf8")); out[f] = "ok"; }
  catch (e) { out[f] = `${e.name}: ${e.message}`.slice(0, 300); }
}
process.stdout.write(JSON.stringify(out));
"""


def js_verdicts(files: list[str], root: str | None = None) -> dict[str, str]:
    """``{file: "ok" | error}`` from one Node process loading every file with ``loadMechanism``."""
    import subprocess
    import tempfile
    from pathlib import Path

    root = root or str(Path(__file__).resolve().parents[1])
    index = Path(root, "clients", "js", "src", "index.js").as_uri()
    with tempfile.NamedTemporaryFile("w", suffix=".mjs", delete=False) as fh:
        fh.write(_NODE)
        script = fh.name
    try:
        p = subprocess.run(["node", script, index], input=json.dumps(files), capture_output=True, text=True,
                           timeout=3600)
    finally:
        os.unlink(script)
    if p.returncode != 0:
        raise RuntimeError(f"node failed: {p.stderr[-500:]}")
    return json.loads(p.stdout)

