"""Seeded fuzzing of the solver: random problems, every exported mechanism re-verified.

Each problem is drawn from its own generator ``default_rng([seed, i])``, so problem
``i`` of a run can be reproduced alone (``--only i``). Notions: E-LDP with random
``E`` (including ``inf`` and 0 entries), LDP, block LDP with random partitions,
high-low, metric on random graphs (possibly disconnected), LIP with random priors
(with zeros, and δ > 0 on labeled outputs), BP-LIP with random prior lists and boxes,
WC-LIP, ULDP with random sensitive sets, and combinations of two. Objectives:
``expected_loss`` on labeled outputs; ``mmse``, ``histogram_mse``,
``mutual_information``, ``bayes_risk`` and ``estimation_variance`` on free outputs.
k = 2..5 mostly.

Every mechanism the solver exports is checked through a path independent of the
solver: saved to a temporary file, re-loaded with :meth:`mechopt.Mechanism.load`
(schema, digest and exact re-verification of the file's own claims), then verified
again with :func:`mechopt.verify` against the notions of the *original problem*,
re-parsed from the problem dict. Any failure there is a **violation**. An exception
escaping :func:`mechopt.solve` is a **crash**. Both make the script exit non-zero.

Also tallied, as information: ``infeasible`` results whose constant channel (every
output column constant across inputs — it satisfies every notion of docs/model.md) passes
the exact verifier (``infeasible_constant_ok``), solver ``error`` statuses by
category, and objective/bound inconsistencies (the reported objective better than the
reported proven bound by more than 1e-6 relative: ``bound_inconsistent``).

    python -m benchmarks.fuzz --n 2000 --seed 0
    python -m benchmarks.fuzz --only 137 --seed 0 --show
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from typing import Any

import numpy as np

__all__ = ["random_problem", "check_problem", "run"]

NOTIONS = ("eldp", "ldp", "block", "high_low", "metric", "lip", "bp_lip", "wc_lip", "uldp")
FREE_KINDS = ("mmse", "histogram_mse", "mutual_information", "bayes_risk", "estimation_variance")


# -----------------------------------------------------------------------------
# random problems
# -----------------------------------------------------------------------------


def _eps(rng: np.random.Generator) -> float:
    u = rng.random()
    if u < 0.03:
        return 0.0
    if u < 0.1:
        return float(round(rng.uniform(3.0, 6.0), 3))
    return float(round(rng.uniform(0.05, 3.0), 3))


def _prior(rng: np.random.Generator, k: int, *, zeros: bool = True) -> list[float]:
    P = rng.dirichlet(np.full(k, rng.choice([0.3, 1.0, 5.0])))
    if zeros and rng.random() < 0.1 and k > 2:
        P[rng.integers(k)] = 0.0
        if P.sum() == 0:
            P[0] = 1.0
    P = P / P.sum()
    if rng.random() < 0.4:  # short decimals, as a user would write them
        P = np.round(P, 3)
        P[np.argmax(P)] += 1.0 - P.sum()
        P = np.clip(P, 0.0, None)
        P = np.round(P, 12)
    return [float(v) for v in P]


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
                row.append("inf" if u < 0.25 else (0.0 if u < 0.3 else float(round(rng.uniform(0.05, 3.0), 3))))
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
        edges = []
        p = rng.uniform(0.3, 1.0)
        for i in range(k):
            for j in range(i + 1, k):
                if rng.random() < p:
                    edges.append([labels[i], labels[j], float(round(rng.uniform(0.1, 3.0), 3))])
        if not edges:
            edges.append([labels[0], labels[-1], 1.0])
        return {"notion": "metric", "epsilon": _eps(rng), "edges": edges}
    if kind == "lip":
        out: dict[str, Any] = {"notion": "lip", "epsilon": _eps(rng), "prior": _prior(rng, k)}
        if labeled and rng.random() < 0.3:
            out["delta"] = float(round(rng.uniform(0.0, 0.2), 3))
        return out
    if kind == "bp_lip":
        if rng.random() < 0.5:
            n = int(rng.integers(1, 4))
            return {"notion": "bp_lip", "epsilon": _eps(rng), "priors": [_prior(rng, k) for _ in range(n)]}
        center = np.asarray(_prior(rng, k, zeros=False))
        width = rng.uniform(0.0, 0.3, size=k)
        lower = np.round(np.clip(center - width, 0.0, 1.0), 3)
        upper = np.round(np.clip(center + width, 0.0, 1.0), 3)
        lower = np.minimum(lower, center)  # keep the center inside the rounded box
        upper = np.maximum(upper, center)
        return {"notion": "bp_lip", "epsilon": _eps(rng), "lower": [float(v) for v in lower],
                "upper": [float(v) for v in upper]}
    if kind == "uldp":
        return {"notion": "uldp", "epsilon": _eps(rng), "sensitive": _subset(rng, labels, 0)}
    raise ValueError(kind)


def random_problem(rng: np.random.Generator) -> dict:
    """One random problem dict (docs/formats.md)."""
    k = int(rng.choice([2, 3, 3, 4, 4, 5, 5, 6], p=[0.15, 0.15, 0.15, 0.15, 0.12, 0.1, 0.1, 0.08]))
    labels = [f"x{i}" for i in range(k)]
    labeled = rng.random() < 0.35
    n_notions = 2 if rng.random() < 0.3 else 1
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
    if rng.random() < 0.5 and "prior" not in obj:
        obj["prior"] = _prior(rng, k)
    doc["objective"] = obj
    return doc


# -----------------------------------------------------------------------------
# one check
# -----------------------------------------------------------------------------


def _error_category(message: str) -> str:
    msg = message.lower()
    for key, cat in (("could not be repaired", "repair failed"), ("no channel makes this objective finite", "objective infinite"),
                     ("rays were lost", "rays lost (double description)"), ("too many", "too many rays"),
                     ("design failed", "design failed"), ("do not identify", "design: not identifiable"),
                     ("column generation", "colgen failed"), ("numerical trouble", "numerical trouble"),
                     ("lp solver failed", "LP back-end failed"), ("ray lp failed", "ray LP failed"),
                     ("unbounded", "unbounded")):
        if key in msg:
            return cat
    return message.split(":")[0][:60]


def check_problem(doc: dict, *, tmpdir: str) -> dict:
    """Solve one problem and check its mechanism independently; returns a record."""
    from mechopt import Mechanism, MechoptError, InputError, evaluate, load_problem, solve, verify

    rec: dict[str, Any] = {"outcome": None, "detail": ""}
    try:
        problem = load_problem(json.loads(json.dumps(doc)))
    except InputError as err:
        rec.update(outcome="rejected", detail=str(err))
        return rec
    t0 = time.perf_counter()
    try:
        res = solve(json.loads(json.dumps(doc)), quiet=True)
    except InputError as err:  # a valid-looking problem the solver does not support
        rec.update(outcome="rejected", detail=str(err), seconds=time.perf_counter() - t0)
        return rec
    except Exception as err:  # noqa: BLE001 - anything escaping solve() is a crash
        rec.update(outcome="crash", detail=f"{type(err).__name__}: {err}",
                   trace=traceback.format_exc(limit=6), seconds=time.perf_counter() - t0)
        return rec
    rec["seconds"] = time.perf_counter() - t0
    rec["status"] = res.status
    if res.status == "infeasible":
        rec["outcome"] = "infeasible"
        # every notion admits the constant channel; is this infeasibility only the
        # solver's fixed output roles (ULDP, labeled outputs)?
        m = len(problem.outputs) if not problem.free_outputs else 1
        const = np.full((problem.k, m), 1.0 / m)
        rec["constant_ok"] = bool(verify(const, list(problem.notions)).verified)
        rec["detail"] = res.message
        return rec
    if res.status == "error" or not res.ok:
        rec.update(outcome="error", detail=res.message, category=_error_category(res.message))
        return rec
    rec["outcome"] = "solved"
    path = os.path.join(tmpdir, "mechanism.json")
    try:
        res.mechanism.save(path)
        mech = Mechanism.load(path)  # schema, digest, exact re-verification of its own claims
        cert = verify(mech.matrix, list(problem.notions))  # against the original problem
        if not cert.verified:
            rec.update(outcome="violation", detail=f"verify against the problem: {cert.detail}")
            return rec
        if mech.privacy != problem.privacy_spec():
            rec.update(outcome="violation", detail="the file's privacy claims differ from the problem's")
            return rec
        if not problem.free_outputs and list(mech.outputs) != list(problem.outputs):
            rec.update(outcome="violation", detail=f"labeled outputs changed: {list(mech.outputs)!r}")
            return rec
    except MechoptError as err:
        rec.update(outcome="violation", detail=f"{type(err).__name__}: {err}")
        return rec
    except Exception as err:  # noqa: BLE001 - a solved result that cannot be saved/loaded
        rec.update(outcome="violation", detail=f"export/reload raised {type(err).__name__}: {err}",
                   trace=traceback.format_exc(limit=6))
        return rec
    # the reported objective is the exported matrix's, and is not better than the bound
    value = evaluate(problem.objective, mech.matrix)
    rec["objective"] = value
    if not (math.isfinite(value) and math.isclose(value, res.objective, rel_tol=1e-9, abs_tol=1e-12)):
        rec["objective_mismatch"] = (value, res.objective)
    if res.bound is not None and math.isfinite(res.bound) and res.status == "optimal":
        tol = 1e-6 * max(1.0, abs(res.bound))
        better = (value > res.bound + tol) if not problem.objective.minimize else (value < res.bound - tol)
        if better:
            rec["bound_inconsistent"] = (value, res.bound)
    return rec


# -----------------------------------------------------------------------------
# a run
# -----------------------------------------------------------------------------


def run(n: int, seed: int, *, only: int | None = None, examples: int = 3, log=None) -> dict:
    """Fuzz ``n`` problems; return the counts (and a few examples per category).

    Returns
    -------
    dict
        ``{"n", "solved", "infeasible", "infeasible_constant_ok", "errors", "rejected",
        "crashes", "violations", "objective_mismatch", "bound_inconsistent",
        "error_categories": {...}, "by_notion": {...}, "examples": {...}, "indices": {...},
        "seconds"}``; ``indices`` lists the problem numbers of every outcome but "solved".
    """
    counts: Counter = Counter()
    cats: Counter = Counter()
    by_notion: dict[str, Counter] = defaultdict(Counter)
    ex: dict[str, list] = defaultdict(list)
    where: dict[str, list] = defaultdict(list)
    slow: list[tuple[float, int]] = []
    t0 = time.perf_counter()
    indices = [only] if only is not None else range(n)
    with tempfile.TemporaryDirectory(prefix="mechopt-fuzz-") as tmp:
        for i in indices:
            rng = np.random.default_rng([seed, i])
            doc = random_problem(rng)
            rec = check_problem(doc, tmpdir=tmp)
            out = rec["outcome"]
            counts[out] += 1
            key = "+".join(sorted(p["notion"] for p in doc["privacy"]))
            by_notion[key][out] += 1
            slow.append((rec.get("seconds", 0.0), i))
            label = out
            if out == "error":
                cats[rec["category"]] += 1
                label = f"error: {rec['category']}"
            if out == "infeasible" and rec.get("constant_ok"):
                counts["infeasible_constant_ok"] += 1
                label = "infeasible_constant_ok"
            for flag in ("objective_mismatch", "bound_inconsistent"):
                if flag in rec:
                    counts[flag] += 1
                    if len(ex[flag]) < examples:
                        ex[flag].append({"index": i, "values": rec[flag], "problem": doc})
            if out != "solved":
                where[label].append(i)
            if out != "solved" and len(ex[label]) < examples:
                ex[label].append({"index": i, "detail": rec["detail"], "problem": doc,
                                  **({"trace": rec["trace"]} if "trace" in rec else {})})
            if log is not None and out in ("crash", "violation"):
                log(f"[{i}] {out}: {rec['detail']}\n  {json.dumps(doc)}")
    slow.sort(reverse=True)
    return {
        "n": len(list(indices)), "seed": seed,
        "solved": counts["solved"], "infeasible": counts["infeasible"],
        "infeasible_constant_ok": counts["infeasible_constant_ok"], "errors": counts["error"],
        "rejected": counts["rejected"], "crashes": counts["crash"], "violations": counts["violation"],
        "objective_mismatch": counts["objective_mismatch"], "bound_inconsistent": counts["bound_inconsistent"],
        "error_categories": dict(cats.most_common()),
        "by_notion": {k: dict(v) for k, v in sorted(by_notion.items())},
        "slowest": [{"index": i, "seconds": round(s, 3)} for s, i in slow[:5]],
        "examples": dict(ex), "indices": dict(where), "seconds": time.perf_counter() - t0,
    }


def _table(summary: dict) -> str:
    rows = [("problems", summary["n"]), ("solved (verified twice)", summary["solved"]),
            ("infeasible", summary["infeasible"]),
            ("  of which the constant channel verifies", summary["infeasible_constant_ok"]),
            ("error status", summary["errors"]), ("rejected as input", summary["rejected"]),
            ("CRASHES (exception from solve)", summary["crashes"]),
            ("VIOLATIONS (exported file fails)", summary["violations"]),
            ("objective != objective of the file", summary["objective_mismatch"]),
            ("objective beyond the proven bound", summary["bound_inconsistent"])]
    w = max(len(r[0]) for r in rows)
    lines = [f"mechopt fuzz: n={summary['n']} seed={summary['seed']} ({summary['seconds']:.1f} s)", ""]
    lines += [f"  {name:<{w}}  {val:>6}" for name, val in rows]
    if summary["error_categories"]:
        lines += ["", "  error categories:"]
        lines += [f"    {c:<40} {v:>6}" for c, v in summary["error_categories"].items()]
    lines += ["", "  by notion (outcome counts):"]
    for key, c in summary["by_notion"].items():
        lines.append(f"    {key:<22} " + ", ".join(f"{o} {v}" for o, v in sorted(c.items())))
    lines += ["", "  slowest: " + ", ".join(f"#{s['index']} {s['seconds']} s" for s in summary["slowest"])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.fuzz", description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", type=int, default=None, help="run problem number ONLY of this seed")
    ap.add_argument("--show", action="store_true", help="print the problem dict(s) and records")
    ap.add_argument("--examples", default=None, help="write example problems per category to this JSON file")
    args = ap.parse_args(argv)
    if args.show and args.only is not None:
        doc = random_problem(np.random.default_rng([args.seed, args.only]))
        print(json.dumps(doc))
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(check_problem(doc, tmpdir=tmp), default=str, indent=1))
    summary = run(args.n, args.seed, only=args.only, log=lambda s: print(s, file=sys.stderr))
    print(_table(summary))
    if summary["examples"]:
        print("\n  examples (first per category):")
        for cat, items in summary["examples"].items():
            it = items[0]
            print(f"    [{cat}] #{it['index']}: {it.get('detail', it.get('values'))}")
            print(f"      {json.dumps(it['problem'])}")
    if args.examples:
        with open(args.examples, "w") as fh:
            json.dump(summary, fh, indent=1, default=str)
    return 1 if (summary["violations"] or summary["crashes"]) else 0


if __name__ == "__main__":
    sys.exit(main())
