"""Fuzz as a benchmark: random problems over the whole ε range, each solved and judged independently.

Each problem is drawn from its own generator ``default_rng([seed, i])``, so problem ``i``
of a run can be reproduced alone (``--only i --show``).

**Problems.** k = 2..6 inputs; one notion or a combination of two (E-LDP with entries
0, ``inf`` and any budget; LDP; block; high-low; metric on random graphs, possibly
disconnected, with zero-length edges; LIP with priors holding zeros and entries down to
1e-12, and (ε, δ)-LIP on labeled outputs; BP-LIP with prior lists or boxes, including
the whole simplex and single points; WC-LIP; ULDP). Budgets cover the whole range:
0, 1e-9 … 1e-3, the usual 0.05 … 6, 20 … 700, a few beyond (710 … 1e4), and ``inf``
where a notion allows it (E-LDP entries). Objectives: ``expected_loss`` on labeled
outputs (Hamming, absolute, squared, explicit losses; outputs = inputs, an extra output,
or a subset); ``mmse``, ``histogram_mse``, ``mutual_information``, ``bayes_risk``,
``estimation_variance`` on free outputs.

**Judging** (every problem here is feasible: the constant channel satisfies every notion):

* the exported mechanism is saved, re-loaded (:meth:`mechopt.Mechanism.load`: schema,
  digest, exact re-verification of its claims) and verified exactly against the notions of
  the original problem; it is also checked in floating point against this module's own
  rows (:mod:`benchmarks.fuzz_reference`), and its objective recomputed there;
* an **independent reference** (:mod:`benchmarks.fuzz_reference`, no mechopt solver code):
  for labeled outputs the all-pairs LP (ULDP: brute force over every role assignment, or
  a big-M MILP), for free outputs verified channels built independently (constant, k-RR,
  utility-optimised RR, Frank–Wolfe local optima). A reference channel accuses mechopt only
  after it passed the exact verifier;
* failures (the acceptance of issue 14): an exported file that fails a check
  (**violation**); an exception escaping ``solve`` (**crash**); a status ``error`` or
  ``infeasible`` on a problem that is not rejected as bad input (**status failure**; a
  ``estimation_variance`` problem whose rows are forced equal, where every channel has
  infinite risk, is counted apart when this module confirms the tie); ``optimal`` beaten by
  a verified reference channel by more than the optimality tolerance the status claims
  (**optimal beaten**); a verified channel — the reference's or mechopt's own — better
  than mechopt's proven bound (**false bound**); ``optimal`` without a bound closing the
  gap (**optimal unproven**); a reported objective that is not the file's
  (**objective mismatch**); a file that breaks this module's own rows by more than 1e-9
  (**reference rows violated**);
* information: ``feasible`` results (by category and with the reference's verdict), how
  the reference was obtained, rejections by reason, timings.

**Generators** (:mod:`benchmarks.fuzz_kinds`): beside the problems above (``core``), a share
of the draws goes to geo metric problems on the IPM and relaxation routes, near-chord LIP
column generation, subset-selection families, custom utilities and labeled ULDP with
(ε, δ)-LIP, each with its own independent judge (``--kinds`` runs some of them). Every
verified export is loaded by the Python client, and with ``--js`` by the JavaScript client.

    python -m benchmarks.fuzz --n 2000 --seed 0 --jobs 2 --out fuzz0.jsonl
    python -m benchmarks.fuzz --only 137 --seed 0 --show
    python -m benchmarks.fuzz --summarize fuzz0.jsonl fuzz1.jsonl --markdown
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import multiprocessing as mp
import os
import queue
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter, defaultdict
from typing import Any, Callable

import numpy as np

__all__ = ["random_problem", "check_problem", "run", "summarize", "FAILURES"]

NOTIONS = ("eldp", "ldp", "block", "high_low", "metric", "lip", "bp_lip", "wc_lip", "uldp")
FREE_KINDS = ("mmse", "histogram_mse", "mutual_information", "bayes_risk", "estimation_variance")

#: record flags that fail the run (issue 14's acceptance), with their line in the summary table
FAILURES = {
    "violation": "exported files failing an exact check",
    "crash": "crashes (exception from solve)",
    "status_failure": "status error/infeasible on a feasible problem",
    "optimal_beaten": "optimal beaten by a verified reference channel",
    "false_bound": "false bounds (a verified channel beyond the bound)",
    "optimal_unproven": "optimal without a bound closing the gap",
    "objective_mismatch": "reported objective != the file's",
    "reference_rows_violated": "file breaks the reference's rows (> 1e-9)",
    "closed_form": "a closed form contradicted (chord bound, subset selection)",
    "client_refused": "a verified export refused by the Python client",
    "js_refused": "a verified export refused by the JavaScript client",
}
#: seconds before a solve (or the reference) is abandoned in-process, and before a worker is killed
SOFT_TIMEOUT = 120.0
HARD_TIMEOUT = 400.0


# -----------------------------------------------------------------------------
# random problems
# -----------------------------------------------------------------------------

#: budget classes, in the order a problem's category is chosen (the most extreme wins)
EPS_CLASSES = ("huge", "large", "zero", "tiny", "usual")


def eps_class(v: float) -> str:
    if math.isinf(v):
        return "inf"
    if v == 0:
        return "zero"
    if v < 0.01:
        return "tiny"
    if v < 20:
        return "usual"
    if v <= 700:
        return "large"
    return "huge"


def _eps(rng: np.random.Generator) -> float:
    """A budget from the whole range: 0, 1e-9 … 1e-3, usual values, 20 … 700, a few beyond."""
    u = rng.random()
    if u < 0.04:
        return 0.0
    if u < 0.16:
        if rng.random() < 0.3:
            return float(rng.choice([1e-9, 1e-6, 1e-3]))
        return float(f"{10 ** rng.uniform(-9, -3):.3g}")
    if u < 0.76:
        if rng.random() < 0.12:
            return float(round(rng.uniform(3.0, 6.0), 3))
        return float(round(rng.uniform(0.05, 3.0), 3))
    if u < 0.975:
        if rng.random() < 0.4:
            return float(rng.choice([20.0, 30.0, 34.5, 35.0, 50.0, 100.0, 300.0, 700.0]))
        return float(round(math.exp(rng.uniform(math.log(20.0), math.log(700.0))), 2))
    return float(rng.choice([709.5, 710.0, 745.0, 1000.0, 1e4]))


def _prior(rng: np.random.Generator, k: int, *, zeros: bool = True, exact: bool = False) -> list[float]:
    """A prior; mostly short decimals summing to 1 exactly, entries down to 1e-12, zeros (unless not ``zeros``)."""
    P = rng.dirichlet(np.full(k, rng.choice([0.3, 1.0, 5.0])))
    if not exact and rng.random() < 0.25:  # float noise, as numpy writes it
        P = P / P.sum()
        if not zeros and np.any(P <= 0):
            P = np.full(k, 1.0 / k)
        return [float(v) for v in P]
    d = int(rng.choice([2, 3, 3, 6, 9, 12]))
    scale = 10**d
    c = np.floor(P * scale).astype(np.int64)
    if zeros and k > 2 and rng.random() < 0.12:
        c[rng.integers(k)] = 0
    if d >= 6 and rng.random() < 0.3:
        c[rng.integers(k)] = 1  # an entry of 1e-6 … 1e-12
    if not zeros:
        c = np.maximum(c, 1)
    c[int(np.argmax(c))] += scale - int(c.sum())
    if np.any(c < 0):  # the fix-up overshot: back to a plain split
        c = np.full(k, scale // k, dtype=np.int64)
        c[0] += scale - int(c.sum())
    return [float(int(v) / scale) for v in c]


def _subset(rng: np.random.Generator, labels: list[str], lo: int = 0, hi: int | None = None) -> list[str]:
    hi = len(labels) if hi is None else hi
    n = int(rng.integers(lo, hi + 1))
    return [labels[i] for i in sorted(rng.choice(len(labels), size=n, replace=False))]


def _notion(rng: np.random.Generator, kind: str, labels: list[str], *, labeled: bool) -> dict:
    k = len(labels)
    if kind == "eldp":
        E: list[list[Any]] = []
        for i in range(k):
            row: list[Any] = []
            for j in range(k):
                if i == j:
                    row.append(0.0)
                    continue
                u = rng.random()
                row.append("inf" if u < 0.25 else (0.0 if u < 0.29 else _eps(rng)))
            E.append(row)
        return {"notion": "eldp", "matrix": E}
    if kind in ("ldp", "wc_lip"):
        return {"notion": kind, "epsilon": _eps(rng)}
    if kind == "block":
        ids = rng.permutation(k)
        cuts = sorted(rng.choice(np.arange(1, k), size=int(rng.integers(0, k)), replace=False)) if k > 1 else []
        blocks = [[labels[i] for i in part] for part in np.split(ids, cuts) if len(part)]
        return {"notion": "block", "epsilon": _eps(rng), "blocks": blocks}
    if kind == "high_low":
        return {"notion": "high_low", "epsilon": _eps(rng), "sensitive": _subset(rng, labels, 1)}
    if kind == "metric":
        if rng.random() < 0.15:  # a full distance matrix (not necessarily a metric), "inf" entries
            D = [[0.0 if i == j else ("inf" if rng.random() < 0.2 else float(round(rng.uniform(0.0, 3.0), 3)))
                  for j in range(k)] for i in range(k)]
            return {"notion": "metric", "epsilon": _eps(rng), "distance": D}
        edges = []
        p = rng.uniform(0.3, 1.0)
        for i in range(k):
            for j in range(i + 1, k):
                if rng.random() < p:
                    w = 0.0 if rng.random() < 0.03 else float(round(rng.uniform(0.1, 3.0), 3))
                    edges.append([labels[i], labels[j], w])
        if not edges:
            edges.append([labels[0], labels[-1], 1.0])
        return {"notion": "metric", "epsilon": _eps(rng), "edges": edges}
    if kind == "lip":
        eps = _eps(rng)
        out: dict[str, Any] = {"notion": "lip", "epsilon": eps, "prior": _prior(rng, k, exact=eps == 0)}
        if labeled and rng.random() < 0.35:
            u = rng.random()
            out["delta"] = (float(f"{10 ** rng.uniform(-9, -3):.2g}") if u < 0.3 else
                            1.0 if u < 0.35 else float(round(rng.uniform(0.001, 0.3), 3)))
        return out
    if kind == "bp_lip":
        eps = _eps(rng)
        u = rng.random()
        if u < 0.45:
            n = int(rng.integers(1, 4))
            return {"notion": "bp_lip", "epsilon": eps, "priors": [_prior(rng, k, exact=eps == 0) for _ in range(n)]}
        if u < 0.5:  # the whole simplex (BP-LIP = LDP) or one point
            if rng.random() < 0.5:
                return {"notion": "bp_lip", "epsilon": eps, "lower": [0.0] * k, "upper": [1.0] * k}
            P = _prior(rng, k, exact=True)
            return {"notion": "bp_lip", "epsilon": eps, "lower": P, "upper": list(P)}
        center = np.asarray(_prior(rng, k, zeros=False, exact=True))
        width = rng.uniform(0.0, 0.3, size=k)
        lower = np.round(np.clip(center - width, 0.0, 1.0), 3)
        upper = np.round(np.clip(center + width, 0.0, 1.0), 3)
        lower = np.minimum(lower, center)  # keep the center inside the rounded box
        upper = np.maximum(upper, center)
        return {"notion": "bp_lip", "epsilon": eps, "lower": [float(v) for v in lower],
                "upper": [float(v) for v in upper]}
    if kind == "uldp":
        return {"notion": "uldp", "epsilon": _eps(rng), "sensitive": _subset(rng, labels, 1)}
    raise ValueError(kind)


def random_problem(rng: np.random.Generator) -> dict:
    """One random problem dict (docs/formats.md); every one is feasible (the constant channel)."""
    k = int(rng.choice([2, 3, 4, 5, 6], p=[0.18, 0.27, 0.25, 0.18, 0.12]))
    labels = [f"x{i}" for i in range(k)]
    labeled = rng.random() < 0.4
    n_notions = 2 if rng.random() < 0.35 else 1
    kinds = [str(rng.choice(NOTIONS)) for _ in range(n_notions)]
    privacy = [_notion(rng, kd, labels, labeled=labeled) for kd in kinds]
    doc: dict[str, Any] = {"inputs": labels, "privacy": privacy}
    if labeled:
        u = rng.random()
        if u < 0.7:
            doc["outputs"] = "inputs"
            out_labels = labels
        elif u < 0.85:  # an extra output
            out_labels = labels + ["other"]
            doc["outputs"] = out_labels
        else:  # a subset of the inputs
            out_labels = _subset(rng, labels, 1)
            doc["outputs"] = out_labels
        obj: dict[str, Any] = {"kind": "expected_loss"}
        v = rng.random()
        if v < 0.4:
            obj["loss"] = "hamming"
        elif v < 0.7:
            obj["loss"] = str(rng.choice(["absolute", "squared"]))
            obj["values"] = [float(round(x, 2)) for x in rng.normal(size=k)]
            if out_labels != labels:
                obj["loss"] = [[float(round(abs(rng.normal()), 3)) for _ in out_labels] for _ in labels]
                del obj["values"]
        else:
            obj["loss"] = [[float(round(abs(rng.normal()), 3)) for _ in out_labels] for _ in labels]
    else:
        doc["outputs"] = "free"
        kind = str(rng.choice(FREE_KINDS))
        obj = {"kind": kind}
        if kind == "mmse":
            obj["values"] = [float(round(x, 2)) for x in rng.normal(size=k)]
        if kind == "bayes_risk":
            v = rng.random()
            if v < 0.5:
                obj["loss"] = "hamming"
            elif v < 0.75:
                obj["loss"] = "absolute"
                obj["values"] = [float(round(x, 2)) for x in rng.normal(size=k)]
            else:
                obj["loss"] = [[0.0 if i == j else float(round(rng.uniform(0.1, 2.0), 3)) for j in range(k)]
                               for i in range(k)]
    if rng.random() < 0.5:
        obj["prior"] = _prior(rng, k, zeros=obj["kind"] != "estimation_variance")
    doc["objective"] = obj
    return doc


def categories(doc: dict) -> dict[str, str]:
    """The problem's notions, objective, output kind and most extreme budget class."""
    classes = set()
    for p in doc["privacy"]:
        if "epsilon" in p:
            classes.add(eps_class(float(p["epsilon"])))
        if p["notion"] == "eldp":
            vals = [float("inf") if v == "inf" else float(v) for i, r in enumerate(p["matrix"])
                    for j, v in enumerate(r) if i != j]
            classes |= {eps_class(v) for v in vals if not math.isinf(v)}
    eps = next((c for c in EPS_CLASSES if c in classes), "usual")
    notions = "+".join(sorted(p["notion"] + ("(delta)" if p.get("delta") else "") +
                              ("(box)" if "lower" in p else "") for p in doc["privacy"]))
    return {"notions": notions, "kind": doc["objective"]["kind"], "eps": eps,
            "outputs": "free" if doc["outputs"] == "free" else "labeled"}


# -----------------------------------------------------------------------------
# one check
# -----------------------------------------------------------------------------


class _Timeout(BaseException):
    """Raised by SIGALRM; a BaseException so no ``except Exception`` in mechopt swallows it."""


@contextlib.contextmanager
def _deadline(seconds: float | None):
    if not seconds or not hasattr(signal, "SIGALRM"):
        yield
        return

    def handler(signum, frame):
        raise _Timeout()

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def guarded_load(doc: dict, rec: dict):
    """The problem of a copy of ``doc``, or None with ``rec`` marked ``rejected`` (the reason as its detail).

    Examples
    --------
    >>> from benchmarks.fuzz import guarded_load
    >>> rec = {"outcome": None, "detail": ""}
    >>> guarded_load({"k": 0}, rec) is None, rec["outcome"]
    (True, 'rejected')
    """
    from mechopt import InputError, load_problem

    try:
        return load_problem(json.loads(json.dumps(doc)))
    except InputError as err:
        rec.update(outcome="rejected", detail=str(err))
        return None


def guarded_solve(solver: Callable, doc: dict, rec: dict, timeout: float | None, *,
                  ignore_warnings: bool = False, detailed: bool = False):
    """Solve a copy of ``doc`` under the soft ``timeout``; the result, or None with the failure in ``rec``.

    On success ``rec["seconds"]`` is the solve time. A timeout, an :class:`mechopt.InputError`
    (``rejected``) or any other exception (``crash``, with its trace) sets ``outcome`` and returns
    None. ``ignore_warnings`` silences warnings during the solve; ``detailed`` also records the
    time of a failure and a crash's message as its ``detail``.

    Examples
    --------
    >>> from benchmarks.fuzz import guarded_solve
    >>> def boom(doc, quiet):
    ...     raise ValueError("no")
    >>> rec = {"outcome": None, "detail": ""}
    >>> guarded_solve(boom, {}, rec, None) is None, rec["outcome"], rec["crash"]
    (True, 'crash', 'ValueError: no')
    """
    from mechopt import InputError

    t0 = time.perf_counter()
    try:
        with _deadline(timeout), (warnings.catch_warnings() if ignore_warnings else contextlib.nullcontext()):
            if ignore_warnings:
                warnings.simplefilter("ignore")
            res = solver(json.loads(json.dumps(doc)), quiet=True)
    except _Timeout:
        rec.update(outcome="timeout", detail=f"solve took more than {timeout} s")
    except InputError as err:  # a valid-looking problem the solver does not support
        rec.update(outcome="rejected", detail=str(err))
    except Exception as err:  # noqa: BLE001 - anything escaping solve() is a crash
        crash = f"{type(err).__name__}: {err}"
        rec.update(outcome="crash", crash=crash, trace=traceback.format_exc(limit=8))
        if detailed:
            rec["detail"] = crash
    else:
        rec["seconds"] = time.perf_counter() - t0
        return res
    if detailed:
        rec["seconds"] = time.perf_counter() - t0
    return None


def _error_category(message: str) -> str:
    msg = message.lower()
    for key, cat in (("could not be repaired", "repair failed"), ("no channel makes this objective finite", "objective infinite"),
                     ("identical rows", "objective infinite (tied rows)"),
                     ("identifies the input distribution", "objective infinite (not identifiable)"),
                     ("rays were lost", "rays lost (double description)"), ("too many", "too many rays"),
                     ("design failed", "design failed"), ("column generation", "colgen failed"),
                     ("numerical trouble", "numerical trouble"), ("lp solver failed", "LP back-end failed"),
                     ("ray lp failed", "ray LP failed"), ("unbounded", "unbounded")):
        if key in msg:
            return cat
    return message.split(":")[0][:60]


def _claimed_rel_gap(res, problem) -> float:
    """The relative gap an ``optimal`` status claims (mechopt/_solve.py's constants)."""
    from mechopt.solvers._outcome import LABELED_REL_GAP, RAYS_REL_GAP
    from mechopt.solvers.design._convex import DESIGN_REL_GAP

    if not problem.free_outputs:
        return LABELED_REL_GAP
    if problem.objective.kind == "estimation_variance":
        return DESIGN_REL_GAP
    return RAYS_REL_GAP


def _rows_violation(ref, Q: np.ndarray) -> float:
    """Largest violation of the reference's rows by ``Q`` (relative to the row and column size)."""
    from benchmarks.fuzz_reference import column_rows

    Ap, bp = column_rows(ref, protected=True)
    Ai, bi = column_rows(ref, protected=False)
    worst = 0.0
    for y in range(Q.shape[1]):
        q = Q[:, y]
        nz = np.flatnonzero(q > 0)
        invertible = ref.uldp_eps is not None and len(nz) == 1 and int(nz[0]) not in ref.sensitive
        A, b = (Ai, bi) if invertible else (Ap, bp)
        if not len(A):
            continue
        size = np.abs(A) @ q + np.abs(b) + 1e-300
        worst = max(worst, float(np.max((A @ q - b) / np.maximum(size, 1e-300 + np.abs(q).max()))))
    return worst


def check_problem(doc: dict, *, tmpdir: str, rng: np.random.Generator | None = None,
                  solver: Callable | None = None, reference: bool = True,
                  timeout: float | None = SOFT_TIMEOUT, max_assignments: int | None = None) -> dict:
    """Solve one problem, check its mechanism and judge it against the independent reference.

    ``solver`` replaces :func:`mechopt.solve` (tests plant wrong answers with it). Returns a
    record: ``outcome`` (solved, rejected, crash, timeout, status_failure,
    objective_infinite, violation), ``status``, the failure flags of :data:`FAILURES` that
    apply (as keys with a detail), and information (times, gap, the reference's verdict).
    """
    from mechopt import Mechanism, MechoptError, solve, verify

    from benchmarks import fuzz_reference as fr

    solver = solver or solve
    rng = rng if rng is not None else np.random.default_rng(0)
    rec: dict[str, Any] = {"outcome": None, "detail": "", **categories(doc)}
    problem = guarded_load(doc, rec)
    if problem is None:
        return rec
    # identifiability notes: not the fuzzer's business
    res = guarded_solve(solver, doc, rec, timeout, ignore_warnings=True, detailed=True)
    if res is None:
        return rec
    rec["status"] = res.status
    rec["route"] = (getattr(res, "stats", None) or {}).get("method")
    notions = list(problem.notions)
    ref = fr.read(doc)
    if res.status not in ("optimal", "feasible") or not res.ok:
        rec["detail"] = res.message
        rec["category"] = _error_category(res.message or res.status)
        if problem.objective.kind == "estimation_variance" and res.status == "error" and ref.ties:
            # every channel has the forced-equal rows, so rank Q < k and the risk is infinite
            rec["outcome"] = "objective_infinite"
            return rec
        rec.update(outcome="status_failure", status_failure=f"{res.status}: {res.message}")
        if reference:  # evidence: a verified channel with a finite objective
            try:
                with _deadline(timeout):
                    rf = (fr.labeled_reference(ref, notions, max_assignments=max_assignments) if not ref.free
                          else fr.free_witnesses(ref, notions, rng))
                rec["reference_value"] = rf.witness_value
                rec["reference_how"] = rf.how
            except (Exception, _Timeout):  # noqa: BLE001 - evidence only
                pass
        return rec
    rec["outcome"] = "solved"
    path = os.path.join(tmpdir, "mechanism.json")
    try:
        res.mechanism.save(path)
        mech = Mechanism.load(path)  # schema, digest, exact re-verification of its own claims
        cert = verify(mech.matrix, notions)  # against the original problem
        if not cert.verified:
            rec.update(outcome="violation", violation=f"verify against the problem: {cert.detail}")
        elif mech.privacy != problem.privacy_spec():
            rec.update(outcome="violation", violation="the file's privacy claims differ from the problem's")
        elif not problem.free_outputs and list(mech.outputs) != list(problem.outputs):
            rec.update(outcome="violation", violation=f"labeled outputs changed: {list(mech.outputs)!r}")
    except MechoptError as err:
        rec.update(outcome="violation", violation=f"{type(err).__name__}: {err}")
    except Exception as err:  # noqa: BLE001 - a solved result that cannot be saved/loaded
        rec.update(outcome="violation", violation=f"export/reload raised {type(err).__name__}: {err}",
                   trace=traceback.format_exc(limit=6))
    if rec["outcome"] == "violation":
        rec["detail"] = rec["violation"]
        return rec
    client_check(path, rec)
    Q = np.asarray(mech.matrix, dtype=float)
    minimize = problem.objective.minimize
    sign = 1.0 if minimize else -1.0
    value = fr.objective_value(ref, Q, exact=True)
    scale = ref.scale
    rec["objective"] = value
    rec["bound"] = res.bound
    rec["message"] = res.message
    ev = problem.objective.kind == "estimation_variance"
    # mutual information in floats: terms p log(q/p_y) of size ~1 cancel to values of 1e-17
    # (seed 20 #1510: the reference's evaluation gave -4.4e-17 nats), so 1e-15 absolute is noise
    floor = 1e-15 if problem.objective.kind == "mutual_information" else 0.0
    tol_eval = (1e-6 if ev else 1e-9) * max(abs(value), scale, 1e-300) + floor
    if not (math.isfinite(value) and abs(value - res.objective) <= tol_eval):
        rec["objective_mismatch"] = f"the file's {problem.objective.kind} is {value!r}, reported {res.objective!r}"
    viol = _rows_violation(ref, Q)
    rec["rows_violation"] = viol
    if viol > 1e-9:
        rec["reference_rows_violated"] = f"the exported matrix breaks the reference's rows by {viol:.3g} (relative)"
    size = max(abs(res.objective), scale)
    rel_claim = _claimed_rel_gap(res, problem)
    if res.status == "optimal":
        if res.bound is None or not (sign * (res.objective - res.bound) <= rel_claim * size * (1 + 1e-9) + 1e-300):
            rec["optimal_unproven"] = f"status optimal with objective {res.objective!r} and bound {res.bound!r}"
    if res.status == "feasible":
        rec["gap_rel"] = (abs(res.objective - res.bound) / size if res.bound is not None and size > 0 else None)
    tol_bound = (1e-6 if ev else 1e-10) * max(abs(res.bound) if res.bound is not None else 0.0, scale, 1e-300) + floor
    if res.bound is not None and sign * (res.bound - value) > tol_bound:
        rec["false_bound"] = f"mechopt's own channel ({value!r}) is better than its bound {res.bound!r}"
    if not reference:
        return rec
    t1 = time.perf_counter()
    try:
        with _deadline(timeout):
            rf = (fr.labeled_reference(ref, notions, max_assignments=max_assignments) if not ref.free
                  else fr.free_witnesses(ref, notions, rng))
    except _Timeout:
        rec["reference_timeout"] = True
        rec["reference_seconds"] = time.perf_counter() - t1
        return rec
    except Exception as err:  # noqa: BLE001 - the reference's own trouble is information, not mechopt's
        rec["reference_error"] = f"{type(err).__name__}: {err}"
        rec["trace"] = traceback.format_exc(limit=8)
        return rec
    rec["reference_seconds"] = time.perf_counter() - t1
    rec["reference_method"] = rf.method
    rec["reference_how"] = rf.how
    rec["reference_candidates"] = [rf.candidates, rf.verified_candidates]
    if rf.lp_value is not None:
        rec["reference_lp"] = rf.lp_value
    if rf.witness_value is None:
        rec["reference_none"] = rf.lp_status or "no verified candidate"
        return rec
    w = rf.witness_value
    rec["reference_value"] = w
    with contextlib.suppress(Exception):
        mv = float(__import__("mechopt").evaluate(problem.objective, rf.witness))
        if not abs(mv - w) <= (1e-6 if ev else 1e-9) * max(abs(w), scale, 1e-300):
            # information: mechopt's float evaluation of a channel it did not produce
            rec["evaluate_disagrees"] = f"mechopt evaluates the reference channel to {mv!r}, exactly {w!r}"
    # how much better the reference's verified channel is (positive: better than mechopt's)
    better = sign * (res.objective - w)
    rec["reference_better_by"] = better / size if size > 0 else better
    if res.status == "optimal" and better > rel_claim * size + 1e-12 * max(scale, abs(w)):
        rec["optimal_beaten"] = (f"a verified {rf.how} channel has {problem.objective.kind} {w!r}; mechopt's "
                                 f"optimal {res.objective!r} (claimed within {rel_claim:g} relative)")
    if res.bound is not None and sign * (res.bound - w) > tol_bound:
        rec["false_bound"] = f"a verified {rf.how} channel has {problem.objective.kind} {w!r}, beyond the bound {res.bound!r}"
    if (rf.lp_value is not None and res.status == "optimal" and "optimal_beaten" not in rec
            and sign * (res.objective - rf.lp_value) > rel_claim * size + 1e-12 * max(scale, abs(w))):
        # the float LP claims better than mechopt's optimal but no verified channel shows it:
        # information (the LP's tolerances at large budgets), never an accusation
        rec["reference_lp_better_unconfirmed"] = (res.objective - rf.lp_value) / size
    if rf.lp_value is not None and sign * (rf.lp_value - res.objective) > 1e-7 * size:
        # mechopt's verified channel is better than the reference LP's optimum: the float LP
        # solved a relaxation badly or failed (information: the reference is not reliable here)
        rec["reference_lp_worse"] = (rf.lp_value - res.objective) / size
    return rec


# -----------------------------------------------------------------------------
# runs
# -----------------------------------------------------------------------------


def client_check(path: str, rec: dict) -> None:
    """The Python client (``mechopt.client``: load, exact re-verification, one sample) must accept a
    verified export; ``rec["file"]`` keeps the path for the JavaScript client at the end of a run."""
    from mechopt.client import Sampler, load_document

    try:
        d = load_document(path)
        Sampler(d, seed=1).sample(d["inputs"][0])
        rec["file"] = path
    except Exception as err:  # noqa: BLE001 - any refusal of a verified file is the finding
        rec["client_refused"] = f"{type(err).__name__}: {err}"


def solver_variant(doc: dict, rng: np.random.Generator) -> dict:
    """Options of :func:`mechopt.solve` to exercise beside the defaults: column generation where it
    applies (one LDP notion and mmse; one LIP notion without δ whose prior is the objective's),
    the unreduced labeled LP."""
    priv, obj = doc["privacy"], doc["objective"]
    if doc["outputs"] == "free" and len(priv) == 1 and rng.random() < 0.6:
        n = priv[0]
        if (n["notion"] == "ldp" and obj["kind"] == "mmse") or (
                n["notion"] == "lip" and not n.get("delta") and "prior" not in obj
                and obj["kind"] in ("mmse", "histogram_mse", "mutual_information")):
            return {"method": "colgen"}
    if doc["outputs"] != "free" and rng.random() < 0.1:
        return {"reduce": False}
    return {}


def problem_of(seed: int, i: int, kinds: tuple[str, ...] | None = None) -> tuple[str, dict, dict]:
    """``(generator, problem dict, solve options)`` of problem ``i`` of ``seed``."""
    from benchmarks import fuzz_kinds as fk

    gen = fk.pick_kind(seed, i, kinds)
    if gen == "core":
        doc = random_problem(np.random.default_rng([seed, i]))
        return gen, doc, solver_variant(doc, np.random.default_rng([seed, i, 2]))
    doc, variant = fk.draw(seed, i, gen)
    return gen, doc, variant


def one(seed: int, i: int, tmpdir: str, *, reference: bool = True, timeout: float | None = SOFT_TIMEOUT,
        kinds: tuple[str, ...] | None = None, export_dir: str | None = None) -> dict:
    """Problem ``i`` of ``seed``, checked: its record (with the index and, if flagged, the problem)."""
    import functools
    import shutil

    from mechopt import solve

    from benchmarks import fuzz_kinds as fk

    gen, doc, variant = problem_of(seed, i, kinds)
    plain = fk._plain(doc)
    t = time.perf_counter()
    solver = functools.partial(solve, **variant) if variant else None
    crng = np.random.default_rng([seed, i, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if gen == "family":
            rec = fk.check_family(plain, tmpdir, timeout=timeout)
        elif gen == "custom":
            rec = fk.check_custom(plain, tmpdir, timeout=timeout)
            if "file" in rec:
                client_check(rec["file"], rec)
        else:
            rec = check_problem(plain, tmpdir=tmpdir, rng=crng, reference=reference, timeout=timeout, solver=solver,
                                max_assignments=1100 if gen == "uldp_delta" else None)
            if reference and gen == "geo" and rec.get("outcome") == "solved":
                fk.check_geo_routes(doc, rec, rec.get("reference_value"))
            if reference and gen == "chord":
                fk.check_chord(plain, rec, tmpdir)
    rec["gen"] = gen
    if gen == "geo":
        rec["geo"] = doc["_geo"]
    if variant:
        rec["variant"] = variant
    if "file" in rec:
        if export_dir:
            dest = os.path.join(export_dir, f"{seed}-{i}.json")
            shutil.copyfile(rec["file"], dest)
            rec["file"] = dest
        else:
            del rec["file"]
    rec["index"] = i
    rec["wall"] = time.perf_counter() - t
    if rec["outcome"] != "solved" or any(f in rec for f in FAILURES) or rec.get("status") == "feasible":
        rec["problem"] = plain
    return rec


def _worker(seed: int, tasks, results, opts: dict) -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory(prefix="mechopt-fuzz-") as tmp:
        while True:
            try:
                i = tasks.get(timeout=1.0)
            except queue.Empty:
                return
            if i is None:
                return
            results.put(("start", os.getpid(), i))
            try:
                rec = one(seed, i, tmp, **opts)
            except BaseException as err:  # noqa: BLE001 - the fuzzer's own trouble is recorded, not fatal
                rec = {"index": i, "outcome": "crash", "crash": f"fuzzer: {type(err).__name__}: {err}",
                       "trace": traceback.format_exc(limit=8), "problem": problem_of(seed, i, opts.get("kinds"))[1]}
            results.put(("done", os.getpid(), json.loads(json.dumps(rec, default=_json_default))))


def _json_default(v):
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    return str(v)


def run(n: int, seed: int, *, only: int | None = None, jobs: int = 1, out: str | None = None,
        reference: bool = True, timeout: float | None = SOFT_TIMEOUT, hard_timeout: float = HARD_TIMEOUT,
        start: int = 0, log: Callable[[str], None] | None = None, kinds: tuple[str, ...] | None = None,
        export_dir: str | None = None, js: bool = False) -> dict:
    """Fuzz problems ``start .. start + n - 1`` of ``seed``; return :func:`summarize` of their records.

    With ``jobs > 1`` the problems run in worker processes; a worker stuck longer than
    ``hard_timeout`` on one problem is killed (that problem is recorded as a timeout) and
    replaced. ``out``: append every record to this JSON-lines file, and skip the indices it
    already holds (a run can be resumed or done in chunks). ``kinds``: only these generators
    (:data:`benchmarks.fuzz_kinds.SHARES`). ``export_dir``: keep every verified export there
    (``SEED-I.json``); with ``js``, one Node process then loads each with the JavaScript
    client's ``loadMechanism`` (a record ``outcome: js_check`` per file).
    """
    opts = {"reference": reference, "timeout": timeout, "kinds": tuple(kinds) if kinds else None}
    tmp_export = None
    if export_dir is None and js:
        export_dir = tmp_export = tempfile.mkdtemp(prefix="mechopt-fuzz-files-")
    if export_dir:
        os.makedirs(export_dir, exist_ok=True)
        opts["export_dir"] = export_dir
    indices = [only] if only is not None else list(range(start, start + n))
    done: set[int] = set()
    records: list[dict] = []
    if out and os.path.exists(out):
        with open(out) as fh:
            for line in fh:
                r = json.loads(line)
                if r.get("outcome") == "js_check":
                    continue
                if r.get("seed", seed) == seed and r["index"] in indices and r["index"] not in done:
                    done.add(r["index"])
                    records.append(r)
    todo = [i for i in indices if i not in done]
    t0 = time.perf_counter()
    sink = open(out, "a") if out else None

    def keep(rec: dict) -> None:
        rec["seed"] = seed
        records.append(rec)
        if sink:
            sink.write(json.dumps(rec, default=_json_default) + "\n")
            sink.flush()
        if log is not None and any(f in rec for f in FAILURES):
            flags = [f for f in FAILURES if f in rec]
            log(f"[{rec['index']}] {', '.join(flags)}: {rec.get(flags[0])}\n  {json.dumps(rec.get('problem'))}")

    try:
        if jobs <= 1:
            with tempfile.TemporaryDirectory(prefix="mechopt-fuzz-") as tmp:
                for i in todo:
                    keep(json.loads(json.dumps(one(seed, i, tmp, **opts),
                                               default=_json_default)))
        else:
            _run_parallel(seed, todo, jobs, keep, opts, hard_timeout)
        if js:
            _js_differential(records, keep)
    finally:
        if sink:
            sink.close()
    if tmp_export:
        import shutil

        shutil.rmtree(tmp_export, ignore_errors=True)
    summary = summarize(records)
    summary["seconds"] = time.perf_counter() - t0
    summary["seed"] = seed
    return summary


def _js_differential(records: list[dict], keep: Callable[[dict], None]) -> None:
    """Every exported file of ``records`` through one Node process (``loadMechanism``): one record each."""
    from benchmarks.fuzz_kinds import js_verdicts

    files = {r["file"]: r for r in records if r.get("file") and r.get("outcome") != "js_check"
             and os.path.exists(r["file"])}
    if not files:
        return
    verdicts = js_verdicts(sorted(files))
    for f, v in sorted(verdicts.items()):
        r = files[f]
        rec = {"index": r["index"], "outcome": "js_check", "gen": r.get("gen"), "file": f, "js": v}
        if v != "ok":
            if r.get("gen") == "family" and "does not read yet" in v:
                rec["js_family_unsupported"] = v
            else:
                rec["js_refused"] = v
                rec["problem"] = r.get("problem")
        keep(rec)


def _run_parallel(seed, todo, jobs, keep, opts, hard_timeout) -> None:
    ctx = mp.get_context("fork")
    tasks = ctx.Queue()
    results = ctx.Queue()
    for i in todo:
        tasks.put(i)
    workers: dict[int, Any] = {}
    current: dict[int, tuple[int, float]] = {}
    remaining = set(todo)

    def spawn():
        p = ctx.Process(target=_worker, args=(seed, tasks, results, opts), daemon=True)
        p.start()
        workers[p.pid] = p

    for _ in range(min(jobs, len(todo))):
        spawn()
    while remaining:
        try:
            kind, pid, payload = results.get(timeout=2.0)
        except queue.Empty:
            kind = None
        if kind == "start":
            current[pid] = (payload, time.perf_counter())
        elif kind == "done":
            current.pop(pid, None)
            if payload["index"] in remaining:
                remaining.discard(payload["index"])
                keep(payload)
        now = time.perf_counter()
        for pid, (i, since) in list(current.items()):
            if now - since > hard_timeout:
                workers[pid].kill()
                workers[pid].join()
                del workers[pid], current[pid]
                remaining.discard(i)
                gen, doc, _ = problem_of(seed, i, opts.get("kinds"))
                keep({"index": i, "outcome": "timeout", "detail": f"killed after {hard_timeout} s", "gen": gen,
                      "problem": doc, **categories(doc)})
                if remaining:
                    spawn()
        for pid, p in list(workers.items()):
            if not p.is_alive() and pid not in current:
                p.join()
                del workers[pid]
        if remaining and not workers:
            # every worker left (queue drained) with results still pending: wait for them
            with contextlib.suppress(queue.Empty):
                kind, pid, payload = results.get(timeout=5.0)
                if kind == "done" and payload["index"] in remaining:
                    remaining.discard(payload["index"])
                    keep(payload)
                continue
            for i in sorted(remaining):  # lost: run them here
                with tempfile.TemporaryDirectory() as tmp:
                    keep(json.loads(json.dumps(one(seed, i, tmp, **opts),
                                               default=_json_default)))
            remaining.clear()
    for p in workers.values():
        p.join(timeout=5)


# -----------------------------------------------------------------------------
# counts
# -----------------------------------------------------------------------------


def summarize(records: list[dict], *, examples: int = 3) -> dict:
    """Counts over records (of one or several runs)."""
    c: Counter = Counter()
    fails: Counter = Counter()
    feasible_by: dict[str, Counter] = defaultdict(Counter)
    by_eps: dict[str, Counter] = defaultdict(Counter)
    by_notion: dict[str, Counter] = defaultdict(Counter)
    rejected: Counter = Counter()
    ref_methods: Counter = Counter()
    ex: dict[str, list] = defaultdict(list)
    where: dict[str, list] = defaultdict(list)
    solve_s, ref_s, walls = [], [], []
    gaps = []
    by_gen: dict[str, Counter] = defaultdict(Counter)
    for r in records:
        out = r["outcome"]
        if out == "js_check":
            c["js_files"] += 1
            by_gen[r.get("gen") or "core"]["js files"] += 1
            if "js_family_unsupported" in r:
                c["js_family_unsupported"] += 1
            if "js_refused" in r:
                fails["js_refused"] += 1
                where["js_refused"].append(r.get("index"))
                if len(ex["js_refused"]) < examples:
                    ex["js_refused"].append({"index": r.get("index"), "seed": r.get("seed"),
                                             "detail": r.get("js_refused"), "problem": r.get("problem")})
            continue
        gen = r.get("gen") or "core"
        by_gen[gen]["n"] += 1
        by_gen[gen][out if out != "solved" else r.get("status", "solved")] += 1
        if any(f in r for f in FAILURES):
            by_gen[gen]["failures"] += 1
        if r.get("route"):
            by_gen[gen]["route " + str(r["route"])] += 1
        if isinstance(r.get("geo_routes"), dict):
            for name in ("ipm", "relax"):
                g = r["geo_routes"].get(name)
                if g:
                    by_gen[gen][f"direct {name} {g['status']}"] += 1
                    by_gen[gen][f"direct {name} channel " + ("verified" if "channel_value" in g else "not")] += 1
        if r.get("rays_objective") is not None:
            by_gen[gen]["compared with rays"] += 1
        if "closed_form_best" in r:
            by_gen[gen]["exported " + str(r.get("exported"))] += 1
        if "file" in r:
            c["files"] += 1
        c[out] += 1
        c["n"] += 1
        key = r.get("notions", "?")
        by_notion[key][out] += 1
        by_eps[r.get("eps", "?")][out if out != "solved" else r.get("status", "solved")] += 1
        if out == "rejected":
            rejected[r.get("detail", "")[:90]] += 1
        if out == "solved":
            c[r["status"]] += 1
        if r.get("status") == "feasible":
            for cat in ("eps", "outputs", "kind"):
                feasible_by[f"{cat}={r.get(cat)}"]["n"] += 1
            if r.get("gap_rel") is not None:
                gaps.append(r["gap_rel"])
            verdict = ("reference better" if (r.get("reference_better_by") or 0) > 1e-7 else "reference not better")
            feasible_by["verdict"][verdict] += 1
            msg = (r.get("message") or "")
            feasible_by["why"][_why(msg)] += 1
        for f in FAILURES:
            if f in r:
                fails[f] += 1
                where[f].append(r.get("index"))
                if len(ex[f]) < examples:
                    ex[f].append({"index": r.get("index"), "seed": r.get("seed"), "detail": r.get(f),
                                  "problem": r.get("problem")})
        for info in ("reference_none", "reference_timeout", "reference_error", "reference_lp_worse",
                     "reference_lp_better_unconfirmed", "evaluate_disagrees"):
            if info in r:
                c[info] += 1
                if len(ex[info]) < examples:
                    ex[info].append({"index": r.get("index"), "seed": r.get("seed"), "detail": r.get(info),
                                     "problem": r.get("problem")})
        if out in ("timeout", "objective_infinite"):
            where[out].append(r.get("index"))
            if len(ex[out]) < examples:
                ex[out].append({"index": r.get("index"), "seed": r.get("seed"), "detail": r.get("detail"),
                                "problem": r.get("problem")})
        if r.get("reference_method"):
            m = r["reference_method"]
            ref_methods["brute force over roles" if m.startswith("brute") else m] += 1
        if "seconds" in r:
            solve_s.append(r["seconds"])
        if "reference_seconds" in r:
            ref_s.append(r["reference_seconds"])
        if "wall" in r:
            walls.append((r["wall"], r.get("index")))
        if r.get("reference_value") is not None and r.get("status") in ("optimal", "feasible"):
            c["judged"] += 1
    walls.sort(reverse=True)
    return {
        "n": c["n"], "solved": c["solved"], "optimal": c["optimal"], "feasible": c["feasible"],
        "rejected": c["rejected"], "timeouts": c["timeout"], "objective_infinite": c["objective_infinite"],
        "judged": c["judged"], "failures": {f: fails[f] for f in FAILURES},
        "infeasible_confirmed": c["infeasible_confirmed"], "files": c["files"], "js_files": c["js_files"],
        "js_family_unsupported": c["js_family_unsupported"], "by_gen": {k: dict(v) for k, v in sorted(by_gen.items())},
        "reference_none": c["reference_none"], "reference_timeout": c["reference_timeout"],
        "reference_error": c["reference_error"], "evaluate_disagrees": c["evaluate_disagrees"],
        "reference_lp_worse": c["reference_lp_worse"],
        "reference_lp_better_unconfirmed": c["reference_lp_better_unconfirmed"], "reference_methods": dict(ref_methods),
        "feasible_by": {k: dict(v) for k, v in sorted(feasible_by.items())},
        "feasible_gap_rel": _quantiles(gaps),
        "by_eps": {k: dict(v) for k, v in sorted(by_eps.items())},
        "by_notion": {k: dict(v) for k, v in sorted(by_notion.items())},
        "rejected_reasons": dict(rejected.most_common(12)),
        "solve_seconds": _quantiles(solve_s, total=True), "reference_seconds": _quantiles(ref_s, total=True),
        "slowest": [{"index": i, "seconds": round(s, 2)} for s, i in walls[:5]],
        "examples": dict(ex), "indices": {k: v for k, v in where.items()},
    }


def _why(message: str) -> str:
    m = message.lower()
    if "constant channel" in m:
        return "constant-channel fallback: " + m.split(";")[0][:60]
    if "proven gap" in m:
        return "gap above the tolerance"
    if "no bound" in m:
        return "no bound proven"
    return m[:60] or "(no message)"


def _quantiles(xs: list, total: bool = False) -> dict:
    if not xs:
        return {}
    a = np.asarray(xs, dtype=float)
    out = {"median": float(np.median(a)), "p99": float(np.quantile(a, 0.99)), "max": float(a.max())}
    if total:
        out["total"] = float(a.sum())
    return out


def _table(s: dict, *, markdown: bool = False) -> str:
    f = s["failures"]
    rows = [
        ("problems", s["n"]),
        ("solved, exported, verified twice", s["solved"]),
        ("  optimal", s["optimal"]),
        ("  feasible (proven gap above the tolerance)", s["feasible"]),
        ("  judged against a verified reference channel", s["judged"]),
        ("rejected as bad input", s["rejected"]),
        ("estimation_variance infinite for every channel (tied rows, confirmed)", s["objective_infinite"]),
        ("infeasible under custom constraints (confirmed by cvxpy)", s.get("infeasible_confirmed", 0)),
        ("exported files accepted by the Python client (load, exact check, sample)", s.get("files", 0)),
        ("exported files loaded by the JavaScript client", s.get("js_files", 0)),
        ("  family files the JavaScript client does not read (yet)", s.get("js_family_unsupported", 0)),
        ("timeouts (solve > %g s)" % SOFT_TIMEOUT, s["timeouts"]),
        *((f"**{label}**", f[flag]) for flag, label in FAILURES.items()),
        ("reference LP worse than mechopt's channel (reference unreliable)", s["reference_lp_worse"]),
        ("reference LP below an optimal value, no verified channel confirms it", s["reference_lp_better_unconfirmed"]),
        ("no verified reference channel", s["reference_none"]),
        ("reference errors / timeouts (the fuzzer's own)", s["reference_error"] + s["reference_timeout"]),
        ("mechopt.evaluate disagrees with the exact value on a reference channel", s["evaluate_disagrees"]),
    ]
    if markdown:
        lines = ["| count | value |", "|---|---:|"] + [f"| {a} | {b} |" for a, b in rows]
    else:
        w = max(len(r[0]) for r in rows)
        lines = [f"mechopt fuzz: n={s['n']} seed={s.get('seed')} ({s.get('seconds', 0):.1f} s)", ""]
        lines += [f"  {a.replace('**', ''):<{w}}  {b:>6}" for a, b in rows]
    st, rt = s["solve_seconds"], s["reference_seconds"]
    lines += ["", f"solve time: total {st.get('total', 0):.0f} s, median {st.get('median', 0):.3f} s, "
              f"p99 {st.get('p99', 0):.2f} s, max {st.get('max', 0):.1f} s; reference: total {rt.get('total', 0):.0f} s"]
    if s["reference_methods"]:
        lines.append("reference: " + ", ".join(f"{k} {v}" for k, v in sorted(s["reference_methods"].items())))
    if s["feasible_by"]:
        lines += ["", "feasible results:"]
        for k, v in s["feasible_by"].items():
            lines.append(f"  {k}: " + ", ".join(f"{a} {b}" for a, b in sorted(v.items())))
        g = s["feasible_gap_rel"]
        if g:
            lines.append(f"  relative gap: median {g['median']:.2g}, p99 {g['p99']:.2g}, max {g['max']:.2g}")
    if s.get("by_gen"):
        lines += ["", "by generator:"]
        for k, v in s["by_gen"].items():
            lines.append(f"  {k:<10} " + ", ".join(f"{a} {b}" for a, b in sorted(v.items())))
    lines += ["", "outcomes by budget class:"]
    for k, v in s["by_eps"].items():
        lines.append(f"  {k:<6} " + ", ".join(f"{a} {b}" for a, b in sorted(v.items())))
    if s["rejected_reasons"]:
        lines += ["", "rejections:"] + [f"  {v:>5}  {k}" for k, v in s["rejected_reasons"].items()]
    if s["slowest"]:
        lines += ["", "slowest: " + ", ".join(f"#{x['index']} {x['seconds']} s" for x in s["slowest"])]
    return "\n".join(lines)


def _kinds() -> tuple[str, ...]:
    from benchmarks.fuzz_kinds import KINDS

    return KINDS


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.fuzz", description=__doc__.split("\n\n")[0],
                                 epilog="Output: the counts on standard output (--markdown: as a table); the records "
                                 "go to --out (JSON lines), the summary with example problems to --examples.")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0, help="first problem index (chunks)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (the machine is shared: at most 2)")
    ap.add_argument("--out", default=None, help="append records to this JSON-lines file (resumable)")
    ap.add_argument("--only", type=int, default=None, help="run problem number ONLY of this seed")
    ap.add_argument("--show", action="store_true", help="print the problem dict and its record")
    ap.add_argument("--no-reference", action="store_true", help="skip the independent references")
    ap.add_argument("--summarize", nargs="+", default=None, metavar="JSONL", help="only summarize record files")
    ap.add_argument("--markdown", action="store_true", help="print the counts as a markdown table")
    ap.add_argument("--kinds", default=None, help="comma-separated generators: " + ", ".join(_kinds()))
    ap.add_argument("--export-dir", default=None, help="keep every verified export here (SEED-I.json)")
    ap.add_argument("--js", action="store_true", help="load every export with the JavaScript client at the end")
    ap.add_argument("--examples", default=None, help="write the summary (with example problems) to this JSON file")
    args = ap.parse_args(argv)
    kinds = tuple(k.strip() for k in args.kinds.split(",")) if args.kinds else None
    if kinds and not set(kinds) <= set(_kinds()):
        ap.error(f"--kinds: unknown generator in {args.kinds!r}; expected some of {', '.join(_kinds())}")
    if args.summarize:
        recs = []
        for path in args.summarize:
            with open(path) as fh:
                recs += [json.loads(line) for line in fh if line.strip()]
        summary = summarize(recs)
        summary["seed"] = ",".join(sorted({str(r.get("seed")) for r in recs}))
    else:
        if args.show and args.only is not None:
            print(json.dumps(problem_of(args.seed, args.only, kinds)[:2]))
            with tempfile.TemporaryDirectory() as tmp:
                rec = one(args.seed, args.only, tmp, kinds=kinds)
            print(json.dumps(rec, default=_json_default, indent=1))
            return 1 if any(f in rec for f in FAILURES) else 0
        summary = run(args.n, args.seed, only=args.only, jobs=min(args.jobs, 2), out=args.out, start=args.start,
                      reference=not args.no_reference, log=lambda s: print(s, file=sys.stderr), kinds=kinds,
                      export_dir=args.export_dir, js=args.js)
    print(_table(summary, markdown=args.markdown))
    if any(summary["failures"].values()):
        print("\nexamples (first per failure):")
        for cat, items in summary["examples"].items():
            it = items[0]
            print(f"  [{cat}] seed {it.get('seed')} #{it['index']}: {it.get('detail')}")
            print(f"    {json.dumps(it['problem'])}")
    if args.examples:
        with open(args.examples, "w") as fh:
            json.dump(summary, fh, indent=1, default=_json_default)
    return 1 if any(summary["failures"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
