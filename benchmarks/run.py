"""One seeded benchmark runner: mechopt against what a user would write by hand.

    python -m benchmarks [--quick] [--json out.json] [--md out.md] [--cases ldp,metric_grid]

Without ``--md`` and ``--json`` the report goes to ``benchmarks/results/<quick|full>-<date>.md``
and ``.json`` (``<quick|full>-<date>-<cases>`` for a subset of cases): the machine, the
load average at start and at end, the date and every table.

Every case is measured **in the same run** against a baseline:

* labeled LPs (LDP, block, high-low, metric grid, random E, LIP, BP-LIP, ULDP): the
  plain cvxpy formulation — one constraint ``Q[x, :] <= e^E[x,x'] Q[x', :]`` for every
  pair with a finite budget (LIP: ``e^-ε Q[x, :] <= P Q <= e^ε Q[x, :]`` for every
  input and prior), solved by HiGHS through cvxpy;
* rays (MI on LDP, histogram MSE on LIP): the k-RR closed form as a reference value
  (no LP baseline: these objectives are convex *maximisations*, cvxpy cannot state them);
* column generation (LIP MMSE): full ray enumeration (mechopt ``method="rays"``);
* estimation design: the default (conic) against ``method="frank-wolfe"``;
* exact verification: a plain float all-pairs check of the same matrix;
* sampling: one ``Generator.choice`` call per report (timed on 10^4, scaled);
* js_sampler: the Python client on the same mechanism files (``benchmarks/bench_js.py``);
* ``solve_many``: 1 worker against 2 workers, and the Dask executor.

Each measurement runs in a forked child process (so its peak RSS, ``ru_maxrss``, is
its own) with a time limit; a case stops growing at the first size that exceeds it.
Sub-second measurements are repeated (best of 3). Time grows like ``k^a``; ``a`` is
fitted by least squares on log-log, over all sizes and over the three largest.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import platform
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from benchmarks import bench_model

SEED = 20240601
AGREE_TOL = 1e-6
#: where the benchmark commands write their reports when no output file is given
RESULTS = Path(__file__).resolve().parent / "results"


def default_outputs(stem: str) -> tuple[Path, Path]:
    """``benchmarks/results/<stem>-<YYYY-MM-DD>.md`` and ``.json`` (the directory is created)."""
    RESULTS.mkdir(exist_ok=True)
    base = RESULTS / f"{stem}-{time.strftime('%Y-%m-%d')}"
    return base.with_suffix(".md"), base.with_suffix(".json")


def write_results(module: str, stem: str, md: str, data: Any, md_out: str | None, json_out: str | None,
                  started: str, load_start: tuple[float, ...]) -> None:
    """Write the Markdown and JSON of ``python -m benchmarks.<module>`` where asked; with
    neither path given, to :func:`default_outputs` ``(stem)``, headed by the command, the
    date, the machine and the load average at start and end (the JSON holds ``data`` under
    ``"results"`` beside those facts)."""
    if md_out or json_out:
        if md_out:
            Path(md_out).write_text(md if md.endswith("\n") else md + "\n")
        if json_out:
            Path(json_out).write_text(json.dumps(data, indent=1, default=str))
        return
    mach = machine()
    mach["loadavg_at_start"], mach["loadavg_at_end"] = load_start, os.getloadavg()
    mach["speed_at_end"] = speed()
    cpu = next((line.split(":", 1)[1].strip() for line in mach["lscpu"].splitlines()
                if line.startswith("Model name")), "")
    command = " ".join([f"python -m benchmarks.{module}"] + sys.argv[1:])
    head = (f"Run {started} (`{command}`, commit {mach.get('commit') or '?'}); "
            f"machine: `nproc` = {mach['nproc']}, {cpu}, Python {mach['python']}, numpy {mach['numpy']}; "
            f"load average at start {', '.join(f'{v:.2f}' for v in load_start)}, at end "
            f"{', '.join(f'{v:.2f}' for v in mach['loadavg_at_end'])}; one core at the end: "
            f"{mach['speed_at_end']['gflops_f32']:.0f} GFLOP/s (float32 batched products), "
            f"{mach['speed_at_end']['gb_per_s']:.0f} GB/s (a sum over memory).\n\n")
    md_path, json_path = default_outputs(stem)
    md_path.write_text(head + md + ("" if md.endswith("\n") else "\n"))
    json_path.write_text(json.dumps({"started": started, "command": command, "machine": mach, "results": data},
                                    indent=1, default=str))
    print(f"written: {md_path}, {json_path}")


def speed() -> dict:
    """One core's speed now: float32 batched products (the band IPM's kind) and a sum over
    200 MB. The host's speed varies (the same factorisation took 3.0 s and 4.7 s an hour
    apart on this machine); a results file says which it ran at.
    """
    import numpy as np
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    A = rng.random((200, 46, 46), dtype=np.float32)
    B = rng.random((200, 46, 2000), dtype=np.float32)
    x = np.ones(25_000_000)
    with threadpool_limits(1):
        best = math.inf
        for _ in range(3):
            t = time.perf_counter()
            A @ B
            best = min(best, time.perf_counter() - t)
        sweep = math.inf
        for _ in range(3):
            t = time.perf_counter()
            x.sum()
            sweep = min(sweep, time.perf_counter() - t)
    return {"gflops_f32": 2 * 200 * 46 * 46 * 2000 / best / 1e9, "gb_per_s": x.nbytes / sweep / 1e9}


# -- measurement in a child process ----------------------------------------------------


def _rss_mb() -> float:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _timed(fn: Callable[[], dict], repeat_below: float = 0.3, max_repeat: int = 3) -> dict:
    """Call ``fn`` (it returns a dict of facts), best wall time of up to 3 calls if fast."""
    best = math.inf
    out: dict = {}
    for _ in range(max_repeat):
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        best = min(best, dt)
        if dt >= repeat_below:
            break
    out["t"] = best
    return out


def _child(conn, fn, args) -> None:
    os.setsid()  # own process group: a timeout ends this child and whatever it started
    start = _rss_mb()
    try:
        out = fn(*args)
        out["start_mb"] = start
        out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        conn.send(("ok", out))
    except BaseException as err:  # report, never hang the runner
        conn.send(("error", f"{type(err).__name__}: {err}"))
    finally:
        conn.close()


def isolated(fn: Callable[..., dict], *args, timeout: float) -> dict:
    """Run ``fn(*args)`` in a forked child; return its dict, or ``{"error"|"timeout": ...}``."""
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args))
    t0 = time.perf_counter()
    proc.start()
    send.close()
    try:
        if recv.poll(timeout):
            status, out = recv.recv()
        else:
            status, out = "timeout", f"no result within {timeout:.0f} s"
    except EOFError:
        status, out = "error", f"the child process died (exit code {proc.exitcode})"
    if proc.is_alive():
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.join()
    if status == "ok":
        return out
    return {status: out, "t": time.perf_counter() - t0}


# -- problems ------------------------------------------------------------------------


def labeled(k: int, privacy: list[dict], loss: Any = "hamming", prior: list[float] | None = None,
            inputs: list[str] | None = None) -> dict:
    doc: dict = {"outputs": "inputs", "privacy": privacy, "objective": {"kind": "expected_loss", "loss": loss}}
    if inputs is None:
        doc["k"] = k
    else:
        doc["inputs"] = inputs
    if prior is not None:
        doc["objective"]["prior"] = prior
    return doc


def grid(n: int) -> tuple[list[str], list[list], np.ndarray]:
    """Labels, Manhattan (4-neighbour, unit) edges and squared Euclidean distances of an n×n grid."""
    labels = [f"{i},{j}" for i in range(n) for j in range(n)]
    edges = []
    for i in range(n):
        for j in range(n):
            if i + 1 < n:
                edges.append([f"{i},{j}", f"{i + 1},{j}", 1.0])
            if j + 1 < n:
                edges.append([f"{i},{j}", f"{i},{j + 1}", 1.0])
    xy = np.array([(i, j) for i in range(n) for j in range(n)], dtype=float)
    sq = ((xy[:, None, :] - xy[None, :, :]) ** 2).sum(-1)
    return labels, edges, sq


def random_E(k: int, rng: np.random.Generator, p_inf: float = 0.3) -> np.ndarray:
    E = rng.uniform(0.5, 2.0, size=(k, k))
    E[rng.random((k, k)) < p_inf] = np.inf
    np.fill_diagonal(E, 0.0)
    return E


def _E_spec(E: np.ndarray) -> list[list]:
    return [["inf" if math.isinf(v) else float(v) for v in row] for row in E]


def _priors(k: int, rng: np.random.Generator, n: int) -> list[list[float]]:
    P = rng.dirichlet(np.full(k, 2.0), size=n)
    return [[float(v) for v in p] for p in P]


@dataclass
class Labeled:
    """A labeled LP instance: the mechopt document and the plain baseline's data."""

    doc: dict
    cost: np.ndarray  # prior[x] * loss[x, y]
    pairs: list[tuple[int, int, float]] = field(default_factory=list)  # q[x] <= r q[x'] on cols
    cols: np.ndarray | None = None  # columns the pairs apply to (ULDP: protected)
    candidates: list[tuple[int, int]] = field(default_factory=list)  # ULDP: (column, owner) invertible or not
    lip: list[tuple[np.ndarray, float]] = field(default_factory=list)  # (prior, eps)


def _all_pairs(k: int, eps: float) -> list[tuple[int, int, float]]:
    r = math.exp(eps)
    return [(x, xp, r) for x in range(k) for xp in range(k) if x != xp]


def make_labeled(case: str, k: int) -> Labeled:
    rng = np.random.default_rng(SEED + k)
    hamming = 1.0 - np.eye(k)
    uniform = np.full(k, 1.0 / k)
    eps = 1.0
    if case == "ldp":
        return Labeled(labeled(k, [{"notion": "ldp", "epsilon": eps}]), uniform[:, None] * hamming, _all_pairs(k, eps))
    if case == "block":
        blocks = np.array_split(np.arange(k), 4)
        doc = labeled(k, [{"notion": "block", "epsilon": eps, "blocks": [[str(x) for x in b] for b in blocks]}])
        r = math.exp(eps)
        pairs = [(int(x), int(xp), r) for b in blocks for x in b for xp in b if x != xp]
        return Labeled(doc, uniform[:, None] * hamming, pairs)
    if case == "high_low":
        A = list(range(max(1, k // 4)))
        doc = labeled(k, [{"notion": "high_low", "epsilon": eps, "sensitive": [str(a) for a in A]}])
        r = math.exp(eps)
        return Labeled(doc, uniform[:, None] * hamming, [(a, xp, r) for a in A for xp in range(k) if xp != a])
    if case == "metric_grid":
        n = int(round(math.sqrt(k)))
        labels, edges, sq = grid(n)
        eps_m = 0.7
        doc = labeled(k, [{"notion": "metric", "epsilon": eps_m, "edges": edges}], loss=sq.tolist(), inputs=labels)
        # every pair: E = eps * Manhattan distance (the shortest path on the grid)
        xy = np.array([(i, j) for i in range(n) for j in range(n)])
        D = np.abs(xy[:, None, :] - xy[None, :, :]).sum(-1)
        pairs = [(x, xp, math.exp(eps_m * D[x, xp])) for x in range(k) for xp in range(k) if x != xp]
        return Labeled(doc, uniform[:, None] * sq, pairs)
    if case == "random_eldp":
        E = random_E(k, rng)
        doc = labeled(k, [{"notion": "eldp", "matrix": _E_spec(E)}])
        pairs = [(x, xp, math.exp(E[x, xp])) for x in range(k) for xp in range(k)
                 if x != xp and math.isfinite(E[x, xp])]
        return Labeled(doc, uniform[:, None] * hamming, pairs)
    if case == "lip":
        (P,) = _priors(k, rng, 1)
        doc = labeled(k, [{"notion": "lip", "epsilon": eps, "prior": P}])
        Pa = np.array(P)
        return Labeled(doc, Pa[:, None] * hamming, lip=[(Pa, eps)])
    if case == "bp_lip":
        priors = _priors(k, rng, 4)
        doc = labeled(k, [{"notion": "bp_lip", "epsilon": eps, "priors": priors}], prior=[1.0 / k] * k)
        return Labeled(doc, uniform[:, None] * hamming, lip=[(np.array(P), eps) for P in priors])
    if case == "uldp":
        S = list(range(k // 2))
        doc = labeled(k, [{"notion": "uldp", "epsilon": eps, "sensitive": [str(s) for s in S]}])
        # outputs named like sensitive inputs are protected (eps-LDP over all inputs); one
        # named like a non-sensitive input x may instead be x's invertible output (only x
        # maps there): mechopt chooses each role optimally (a MILP), and so does the baseline
        return Labeled(doc, uniform[:, None] * hamming, _all_pairs(k, eps), cols=np.array(S),
                       candidates=[(y, y) for y in range(k // 2, k)])
    raise ValueError(case)


def phases(r) -> dict:
    """Where mechopt's time went, from the result's timings and solver statistics."""
    st, tm = r.stats, r.timings
    out = {}
    if "symmetry_s" in st:
        out["symmetry"] = st["symmetry_s"]
    if "build_s" in st:
        out["build LP"] = st["build_s"] - st.get("symmetry_s", 0.0) if "symmetry_s" in st else st["build_s"]
    if "lp_s" in st:
        out["LP"] = st["lp_s"]
    elif "solve" in tm:
        out["solve"] = tm["solve"]
    if "rays" in tm:
        out["rays"] = tm["rays"]
    if "repair_verify" in tm:
        out["repair+verify"] = tm["repair_verify"]
    total = tm.get("total", sum(out.values()))
    out["other"] = max(0.0, total - sum(out.values()))
    return out


def _phase_note(ph: dict | None) -> str:
    if not ph:
        return ""
    total = sum(ph.values()) or 1.0
    top = sorted(ph.items(), key=lambda kv: -kv[1])[:2]
    return " · ".join(f"{name} {100 * v / total:.0f}%" for name, v in top if v / total >= 0.05)


def run_mechopt_labeled(case: str, k: int) -> dict:
    from mechopt import solve

    inst = make_labeled(case, k)

    def go() -> dict:
        r = solve(inst.doc, quiet=True)
        if not r.ok:
            raise RuntimeError(f"mechopt: {r.status}: {r.message}")
        return {"objective": r.objective, "bound": r.bound, "verified": bool(r.certificate.verified),
                "rows": r.stats.get("rows"), "variables": r.stats.get("variables"), "phases": phases(r),
                "note": f"{r.stats.get('symmetries', 1)} symmetries" if r.stats.get("symmetries", 1) > 1 else ""}

    return _timed(go)


def run_cvxpy_labeled(case: str, k: int) -> dict:
    import cvxpy as cp

    inst = make_labeled(case, k)

    def go() -> dict:
        Q = cp.Variable((k, k), nonneg=True)
        cons = [cp.sum(Q, axis=1) == 1]
        cols = inst.cols
        for x, xp, r in inst.pairs:
            if cols is None:
                cons.append(Q[x, :] <= r * Q[xp, :])
            else:
                cons.append(Q[x, cols] <= r * Q[xp, cols])
        if inst.candidates:
            # big-M with M = 1 (entries are <= 1): z_j = 1 makes column y invertible (only its
            # owner maps there, LDP waived), z_j = 0 keeps it protected (every LDP pair holds)
            z = cp.Variable(len(inst.candidates), boolean=True)
            cand = np.array([y for y, _ in inst.candidates])
            for x, xp, r in inst.pairs:
                cons.append(Q[x, cand] <= r * Q[xp, cand] + z)
            for j, (y, owner) in enumerate(inst.candidates):
                others = np.array([x for x in range(k) if x != owner])
                cons.append(Q[others, y] <= 1 - z[j])
        for P, eps in inst.lip:
            PQ = P @ Q
            for x in range(k):
                cons.append(math.exp(-eps) * Q[x, :] <= PQ)
                cons.append(PQ <= math.exp(eps) * Q[x, :])
        prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(inst.cost, Q))), cons)
        prob.solve(solver="HIGHS")
        if prob.status != "optimal":
            raise RuntimeError(f"cvxpy: {prob.status}")
        sm = prob.size_metrics
        return {"objective": float(prob.value), "rows": int(sm.num_scalar_eq_constr + sm.num_scalar_leq_constr),
                "variables": int(sm.num_scalar_variables), "note": "MILP" if inst.candidates else "",
                "phases": {"cvxpy compile": float(prob.compilation_time or 0.0),
                           "HiGHS": float(prob.solver_stats.solve_time or 0.0)}}

    return _timed(go)


# -- sublinear: rays, column generation, design -------------------------------------------


def _krr_mi(k: int, eps: float) -> float:
    e = math.exp(eps)
    a, b = e / (e + k - 1), 1 / (e + k - 1)
    return a * math.log(a * k) + (k - 1) * b * math.log(b * k)


def run_rays(case: str, k: int) -> dict:
    from mechopt import solve

    rng = np.random.default_rng(SEED + k)
    if case == "rays_mi":
        doc = {"k": k, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
               "objective": {"kind": "mutual_information"}}
    else:
        (P,) = _priors(k, rng, 1)
        doc = {"k": k, "outputs": "free", "privacy": [{"notion": "lip", "epsilon": 1.0, "prior": P}],
               "objective": {"kind": "histogram_mse"}}

    def go() -> dict:
        r = solve(doc, method="rays", quiet=True)
        if not r.ok:
            raise RuntimeError(f"mechopt: {r.status}: {r.message}")
        out = {"objective": r.objective, "bound": r.bound, "verified": bool(r.certificate.verified),
               "rows": k, "variables": r.stats.get("rays"), "outputs": len(r.mechanism.outputs), "phases": phases(r)}
        if case == "rays_mi":
            out["reference"] = _krr_mi(k, 1.0)
            out["note"] = f"k-RR MI {out['reference']:.4f}"
        return out

    return _timed(go)


def _lip_mmse(k: int) -> dict:
    rng = np.random.default_rng(SEED + k)
    (P,) = _priors(k, rng, 1)
    return {"k": k, "outputs": "free", "privacy": [{"notion": "lip", "epsilon": 1.0, "prior": P}],
            "objective": {"kind": "mmse", "values": list(range(k))}}


def run_colgen(k: int, method: str) -> dict:
    from mechopt import solve

    doc = _lip_mmse(k)

    def go() -> dict:
        r = solve(doc, method=method, quiet=True)
        if not r.ok:
            raise RuntimeError(f"mechopt {method}: {r.status}: {r.message}")
        out = {"objective": r.objective, "bound": r.bound, "verified": bool(r.certificate.verified),
               "rows": k, "variables": r.stats.get("rays"), "phases": phases(r)}
        if method == "colgen":
            out["note"] = f"{r.stats.get('iterations')} iterations"
        return out

    return _timed(go)


def run_design(k: int, method: str) -> dict:
    from mechopt import solve

    doc = {"k": k, "outputs": "free", "privacy": [{"notion": "ldp", "epsilon": 0.5}],
           "objective": {"kind": "estimation_variance"}}

    def go() -> dict:
        r = solve(doc, method=method, quiet=True)
        if not r.ok:
            raise RuntimeError(f"mechopt {method}: {r.status}: {r.message}")
        return {"objective": r.objective, "bound": r.bound, "verified": bool(r.certificate.verified),
                "rows": k, "variables": r.stats.get("rays"), "status": r.status, "phases": phases(r)}

    return _timed(go)


# -- verification ------------------------------------------------------------------------


def _verify_instance(case: str, k: int):
    """A channel sitting on (1e-13 inside) its privacy boundary, so the exact path is exercised."""
    from mechopt import ELDP, LDP

    eps = 1.0
    e = math.exp(eps * (1 - 1e-13))
    Q = np.full((k, k), 1.0)
    np.fill_diagonal(Q, e)
    Q /= Q.sum(axis=1, keepdims=True)
    if case == "verify_ldp":
        return Q, [LDP(eps)], np.full((k, k), eps)
    rng = np.random.default_rng(SEED + k)
    E = np.where(rng.random((k, k)) < 0.5, eps, rng.uniform(eps, 3.0, size=(k, k)))
    E[rng.random((k, k)) < 0.2] = np.inf
    np.fill_diagonal(E, 0.0)
    return Q, [ELDP(E)], E


def run_verify(case: str, k: int) -> dict:
    from mechopt import verify

    Q, notions, _ = _verify_instance(case, k)

    def go() -> dict:
        c = verify(Q, notions)
        return {"verified": bool(c.verified), "objective": float(c.verified), "rows": k, "variables": k}

    return _timed(go)


def run_float_check(case: str, k: int) -> dict:
    Q, _, E = _verify_instance(case, k)

    def go() -> dict:
        # what one writes by hand: every pair (x, x'), every column, in floats
        ok = bool(np.all(np.abs(Q.sum(axis=1) - 1) <= 1e-12)) and bool(np.all(Q >= 0))
        with np.errstate(over="ignore"):
            R = np.exp(E)
        for x in range(k):
            ok &= bool(np.all(Q[x][None, :] <= R[x][:, None] * Q))
        return {"verified": ok, "objective": float(ok), "rows": k, "variables": k}

    return _timed(go)


# -- sampling ------------------------------------------------------------------------------


N_REPORTS = 10**6


def run_sampling(k: int) -> dict:
    from mechopt.runtime import simulate_reports

    rng = np.random.default_rng(SEED + k)
    Q = rng.dirichlet(np.ones(k), size=k)
    x = rng.integers(0, k, size=N_REPORTS)

    def go() -> dict:
        y = simulate_reports(Q, x, seed=SEED)
        return {"rows": N_REPORTS, "variables": k, "objective": None, "checksum": int(y[:1000].sum())}

    return _timed(go)


def run_sampling_baseline(k: int) -> dict:
    rng = np.random.default_rng(SEED + k)
    Q = rng.dirichlet(np.ones(k), size=k)
    few = rng.integers(0, k, size=10_000)
    gen = np.random.default_rng(SEED)

    def go() -> dict:
        for i in few:
            gen.choice(k, p=Q[i])
        return {"rows": N_REPORTS, "variables": k, "objective": None}

    out = _timed(go, max_repeat=1)
    out["t"] *= N_REPORTS / few.size
    out["note"] = "timed on 10^4 reports, scaled"
    return out


# -- solve_many ------------------------------------------------------------------------------


def batch_problems(n: int) -> list[dict]:
    """n small LIP problems: k=4, outputs free, different random priors, half MMSE half histogram."""
    rng = np.random.default_rng(SEED)
    out = []
    for i in range(n):
        P = [float(v) for v in rng.dirichlet(np.ones(4))]
        obj: dict = {"kind": "histogram_mse"} if i % 2 else {"kind": "mmse", "values": [0, 1, 2, 3]}
        out.append({"k": 4, "outputs": "free", "privacy": [{"notion": "lip", "epsilon": 1.0, "prior": P}],
                    "objective": obj})
    return out


def run_solve_many(n: int, rounds: int = 3) -> dict:
    """1 worker vs 2 workers, alternated ``rounds`` times (best of each: the machine is shared), then Dask."""
    from mechopt._batch import _solve_chunk, solve_many

    probs = batch_problems(n)
    out: dict = {"n": n, "rounds": rounds, "loadavg_before": os.getloadavg()}
    results = {}
    runs: dict[str, list[float]] = {"1 worker": [], "2 workers": []}
    for _ in range(rounds):
        for label, workers in (("1 worker", 1), ("2 workers", 2)):
            t0 = time.perf_counter()
            rs = solve_many(probs, max_workers=workers)
            runs[label].append(time.perf_counter() - t0)
            results[label] = np.array([r.objective for r in rs])
            out[f"{label} ok"] = sum(r.ok for r in rs)
    for label, ts in runs.items():
        out[label] = min(ts)
        out[f"{label} all"] = ts
    out["speedup"] = out["1 worker"] / out["2 workers"]
    try:
        import distributed
    except ImportError:
        out["dask"] = None
        out["dask_note"] = "dask.distributed not installed (pip install mechopt[dask])"
    else:
        t0 = time.perf_counter()
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            client.wait_for_workers(2)
            # warm the workers (imports, first solve) like the forked pool workers are
            client.run(_solve_chunk, probs[:1], {"quiet": True})
            out["dask_startup"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            rs = solve_many(probs, executor=client)
            out["dask"] = time.perf_counter() - t0
        results["dask"] = np.array([r.objective for r in rs])
        out["dask ok"] = sum(r.ok for r in rs)
        out["dask_max_diff"] = float(np.max(np.abs(results["dask"] - results["1 worker"])))
    out["pool_max_diff"] = float(np.max(np.abs(results["2 workers"] - results["1 worker"])))
    out["loadavg_after"] = os.getloadavg()
    return out


# -- cases -----------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    title: str
    sizes: list[int]
    quick: list[int]
    mechopt: Callable[[int], dict]
    baseline: Callable[[int], dict] | None
    baseline_label: str
    baseline_max: int = 0
    baseline_max_quick: int = 0
    size_label: str = "k"
    objective_agrees: bool = True  # both sides must reach the same optimum
    agree_rtol: float = AGREE_TOL
    compare_bound: bool = True  # compare the baseline with mechopt's LP bound (else its objective)


def _labeled_case(name: str, title: str, sizes, quick, bmax, bmax_quick, size_label="k") -> Case:
    return Case(name, title, sizes, quick, lambda k: run_mechopt_labeled(name, k),
                lambda k: run_cvxpy_labeled(name, k), "cvxpy all pairs + HiGHS", bmax, bmax_quick, size_label)


from benchmarks import bench_design as _bd  # noqa: E402  (issue 10: estimation design at real sizes)
from benchmarks import bench_large as _bl  # noqa: E402  (issue 10 A: free outputs at large k)

CASES: list[Case] = [
    _labeled_case("ldp", "labeled LDP, Hamming, uniform prior, ε=1", [10, 20, 40, 60, 100, 200],
                  [10, 20, 40, 100], 60, 40),
    _labeled_case("block", "labeled block LDP (4 blocks), Hamming, ε=1", [20, 40, 60, 80, 100, 200, 400],
                  [20, 40, 100], 80, 40),
    _labeled_case("high_low", "labeled high-low LDP (|A| = k/4), Hamming, ε=1", [20, 40, 60, 100, 200],
                  [20, 40, 100], 60, 40),
    _labeled_case("metric_grid", "metric grid n×n (Manhattan edges, ε=0.7/edge), squared distance, uniform",
                  [9, 16, 25, 36, 49, 64, 100, 144, 196, 256, 400], [9, 16, 25, 36, 100, 196], 49, 36,
                  size_label="k=n²"),
    _labeled_case("random_eldp", "labeled E-LDP, random E in [0.5, 2] with 30% inf, Hamming",
                  [10, 20, 40, 60, 100], [10, 20, 40], 40, 20),
    _labeled_case("lip", "labeled LIP, random prior, Hamming, ε=1", [10, 20, 40, 80, 160, 240],
                  [10, 20, 40, 80], 80, 40),
    _labeled_case("bp_lip", "labeled BP-LIP (4 priors), Hamming, ε=1", [10, 20, 40, 60, 80, 120],
                  [10, 20, 40], 40, 20),
    _labeled_case("uldp", "labeled ULDP (k/2 sensitive; roles of the other outputs chosen by a MILP), Hamming, ε=1",
                  [10, 20, 30, 40, 60, 100, 160], [10, 20, 30], 30, 20),
    Case("worst_case", "labeled LDP, worst_case_loss (minimax), Hamming, ε=1 (benchmarks/bench_model.py)",
         [10, 20, 40, 60, 100], [10, 20, 40, 100], bench_model.run_mechopt,
         bench_model.run_all_pairs, "cvxpy all pairs (epigraph) + HiGHS", 60, 40),
    Case("rays_mi", "free outputs, mutual information, LDP ε=1: rays (2^k−2)", [4, 6, 8, 10, 12, 14],
         [4, 6, 8, 10, 12], lambda k: run_rays("rays_mi", k), None, "k-RR (reference value)",
         objective_agrees=False),
    Case("rays_hist", "free outputs, histogram MSE, LIP ε=1 random prior: rays (slice vertices)",
         [4, 6, 8, 10, 12, 14], [4, 6, 8, 10], lambda k: run_rays("rays_hist", k), None, "—",
         objective_agrees=False),
    Case("colgen", "free outputs, LIP MMSE (f = 0..k−1), ε=1: column generation", [10, 12, 14, 15, 20, 25, 30],
         [10, 12, 20, 30], lambda k: run_colgen(k, "colgen"), lambda k: run_colgen(k, "rays"),
         "mechopt rays (all slice vertices)", 14, 12),
    Case("design", "estimation design, LDP ε=0.5, uniform p0: method=colgen (auto takes the orbit: design_uniform)",
         [6, 7, 8, 9, 10, 11, 12, 13, 14], [6, 8, 10, 12], lambda k: run_design(k, "colgen"),
         lambda k: run_design(k, "frank-wolfe"), "mechopt method=frank-wolfe (stops at relative gap 1e-4)", 12, 10,
         agree_rtol=1e-3, compare_bound=False),
    Case("design_nonuniform", "estimation design, LDP ε=1, Dirichlet(1) p0: staircase column generation "
         "(benchmarks/bench_design.py)", [12, 16, 20, 24, 28, 30], [12, 16, 20], _bd.run_nonuniform, None, "—",
         objective_agrees=False),
    Case("large_mi", "free outputs, MI, LDP ε=1, Dirichlet prior: exact-pricing column generation "
         "(benchmarks/bench_large.py)", [10, 12, 14, 50, 100, 200], [10, 12, 50], lambda k: _bl.run_case(k), lambda k: _bl.run_case_rays(k),
         "mechopt rays (2^k−2 staircases)", 14, 12),
    Case("design_uniform", "estimation design, LDP ε=1, uniform p0: the subset-selection orbit", [10, 100, 1000, 10000],
         [10, 100, 1000], _bd.run_uniform, None, "—", objective_agrees=False),
    Case("verify_ldp", "exact verification, k-RR on the ε-LDP boundary", [100, 200, 300, 400, 500],
         [100, 300, 500], lambda k: run_verify("verify_ldp", k), lambda k: run_float_check("verify_ldp", k),
         "float all-pairs check", 500, 500, objective_agrees=True),
    Case("verify_eldp", "exact verification, E-LDP (half the pairs tight, 20% inf)", [100, 200, 300, 400, 500],
         [100, 300, 500], lambda k: run_verify("verify_eldp", k), lambda k: run_float_check("verify_eldp", k),
         "float all-pairs check", 500, 500, objective_agrees=True),
    Case("dd_box", "free outputs, MI, box BP-LIP ε=1: rays from the box's structure (benchmarks/bench_dd.py)",
         [4, 5, 6, 7, 8], [4, 5, 6], lambda k: _dd("run_new_box", k), lambda k: _dd("run_old_box", k),
         "floating-point pycddlib (before issue 14), ray LP value", 6, 5, compare_bound=False),
    Case("sampling", "simulate 10^6 reports (mechopt.runtime.simulate_reports)", [10, 100, 1000],
         [10, 100, 1000], run_sampling, run_sampling_baseline, "one Generator.choice per report", 1000, 1000,
         objective_agrees=False),
    Case("js_sampler", "exact client sampler in JavaScript (node, benchmarks/bench_js.py), 10^6 reports",
         [10, 100, 1000], [100], lambda k: _bench_js().case_js(k), lambda k: _bench_js().case_python(k),
         "Python client (mechopt.client.Sampler)", 1000, 1000, objective_agrees=False),
]


def _bench_js():
    from benchmarks import bench_js

    return bench_js


def _dd(name: str, k: int) -> dict:
    from benchmarks import bench_dd

    return getattr(bench_dd, name)(k)


def _sampling_available() -> bool:
    try:
        from mechopt.runtime import simulate_reports  # noqa: F401
    except ImportError:
        return False
    return True


# -- growth ---------------------------------------------------------------------------------


def fit_exponent(ks: list[float], ts: list[float]) -> float | None:
    """Least-squares slope of log t against log k (None with fewer than 2 distinct sizes)."""
    pts = [(math.log(k), math.log(t)) for k, t in zip(ks, ts) if t and t > 0]
    if len({p[0] for p in pts}) < 2:
        return None
    x = np.array([p[0] for p in pts])
    y = np.array([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])


def growth(rows: list[dict], key: str) -> dict:
    """Exponents of time against k (all sizes, three largest) and against the LP's variables."""
    ok = [(r["k"], r[key]["t"], r[key].get("variables")) for r in rows if not _failed(r.get(key))]
    ks = [k for k, _, _ in ok]
    ts = [t for _, t, _ in ok]
    nv = [(v, t) for _, t, v in ok if v]
    return {"all": fit_exponent(ks, ts), "largest3": fit_exponent(ks[-3:], ts[-3:]),
            "vars_largest3": fit_exponent([v for v, _ in nv][-3:], [t for _, t in nv][-3:]),
            "sizes": f"{ks[0]}–{ks[-1]}" if ks else ""}


def _failed(m: dict | None) -> bool:
    return m is None or "error" in m or "timeout" in m


# -- running ---------------------------------------------------------------------------------


def run_case(case: Case, quick: bool, timeout: float, log) -> dict:
    sizes = case.quick if quick else case.sizes
    bmax = case.baseline_max_quick if quick else case.baseline_max
    rows = []
    stop_m = stop_b = False
    for k in sizes:
        row: dict = {"k": k}
        if not stop_m:
            row["mechopt"] = isolated(case.mechopt, k, timeout=timeout)
            stop_m = _failed(row["mechopt"]) or row["mechopt"]["t"] > timeout
        if case.baseline is not None and k <= bmax and not stop_b:
            row["baseline"] = isolated(case.baseline, k, timeout=timeout)
            stop_b = _failed(row["baseline"]) or row["baseline"]["t"] > timeout
        m, b = row.get("mechopt"), row.get("baseline")
        if not _failed(m) and not _failed(b):
            row["ratio"] = b["t"] / m["t"] if m["t"] > 0 else None
            if case.objective_agrees and m.get("objective") is not None and b.get("objective") is not None:
                ref = m["bound"] if case.compare_bound and m.get("bound") is not None else m["objective"]
                row["diff"] = abs(b["objective"] - ref)
                row["agree"] = row["diff"] <= case.agree_rtol * max(1.0, abs(ref))
        rows.append(row)
        log(_md_row(case, row))
        if stop_m and (case.baseline is None or stop_b or k >= bmax):
            break
    out = {"name": case.name, "title": case.title, "baseline": case.baseline_label, "size_label": case.size_label,
           "rows": rows, "growth": {"mechopt": growth(rows, "mechopt"), "baseline": growth(rows, "baseline")}}
    return out


def _fmt_t(m: dict | None) -> str:
    if m is None:
        return "—"
    if "timeout" in m:
        return f"> {m['t']:.0f} (timeout)"
    if "error" in m:
        return "error"
    t = m["t"]
    return f"{t:.4f}" if t < 0.1 else f"{t:.3f}" if t < 10 else f"{t:.1f}"


def _fmt_size(m: dict | None) -> str:
    if _failed(m) or m.get("rows") is None:
        return "—"
    return f"{m['rows']:,} × {m['variables']:,}" if m.get("variables") is not None else f"{m['rows']:,}"


def _fmt_mb(m: dict | None) -> str:
    return "—" if _failed(m) else f"{m['peak_mb']:.0f}"


def _md_row(case: Case, row: dict) -> str:
    m, b = row.get("mechopt"), row.get("baseline")
    ratio = row.get("ratio")
    ratio_s = "—" if ratio is None else (f"{ratio:,.0f}×" if ratio >= 10 else f"{ratio:.2f}×")
    agree = {True: "yes", False: "**no**"}.get(row.get("agree"), "—")
    if "diff" in row:
        agree += f" ({row['diff']:.1e})"
    notes = []
    for who, side in (("m", m), ("b", b)):
        if side and not _failed(side) and side.get("note"):
            notes.append(side["note"])
        if side and not _failed(side) and _phase_note(side.get("phases")):
            notes.append(f"{who}: {_phase_note(side['phases'])}")
        if side and "error" in side:
            notes.append(side["error"][:80])
    if m and not _failed(m) and m.get("verified") is False:
        notes.append("**not verified**")
    return (f"| {case.name} | {row['k']} | {_fmt_t(m)} | {_fmt_t(b)} | {ratio_s} | {_fmt_size(m)} | {_fmt_size(b)} | "
            f"{_fmt_mb(m)} / {_fmt_mb(b)} | {agree} | {'; '.join(notes)} |")


TABLE_HEAD = ("| case | k | mechopt s | baseline s | baseline / mechopt | mechopt rows × vars | "
              "baseline rows × vars | peak RSS MB (m / b) | same optimum | notes |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---|---|")


def machine() -> dict:
    def sh(cmd: str) -> str:
        try:
            return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    import cvxpy
    import scipy

    return {"nproc": sh("nproc"), "lscpu": sh("lscpu | head -n 15"), "python": sys.version.split()[0],
            "commit": sh(f"git -C '{RESULTS.parent.parent}' describe --always --dirty --abbrev=7"),
            "platform": platform.platform(), "numpy": np.__version__, "scipy": scipy.__version__,
            "cvxpy": cvxpy.__version__, "loadavg_at_start": os.getloadavg()}


def _fmt_exp(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}"


def _find(report: dict, case: str, k: int, side: str = "mechopt") -> dict | None:
    for c in report["cases"]:
        if c["name"] == case:
            for r in c["rows"]:
                if r["k"] == k:
                    return r if side == "row" else r.get(side)
    return None


#: (case, k, seconds, criterion, digits shown): the issue's time limits, in report order
_TIME_TARGETS = (
    ("ldp", 100, 2, "labeled LDP k=100 ≤ 2 s", 2),
    ("ldp", 200, 15, "labeled LDP k=200 ≤ 15 s", 2),
    ("worst_case", 100, 2, "worst_case_loss labeled LDP k=100 ≤ 2 s", 2),
    ("metric_grid", 400, 60, "metric 20×20 grid (k=400) ≤ 60 s", 1),
    ("colgen", 30, 60, "LIP MMSE k=30 ≤ 60 s (column generation)", 1),
    ("design", 12, 60, "estimation design LDP k=12 ≤ 60 s (method=auto: conic)", 1),
)


def acceptance(report: dict) -> list[str]:
    """The issue's acceptance lines, checked against this run (only those it measured)."""
    out = []

    def t_of(case, k):
        m = _find(report, case, k)
        return None if _failed(m) else m["t"]

    def line(what: str, value: str, ok: bool) -> None:
        out.append(f"| {what} | {value} | {'pass' if ok else '**FAIL**'} |")

    row = _find(report, "ldp", 60, "row")
    if row and row.get("ratio"):
        line("labeled LDP k=60 ≥ 100× faster than all-pairs cvxpy", f"{row['ratio']:.0f}×", row["ratio"] >= 100)
    for case, k, lim, what, digits in _TIME_TARGETS:
        t = t_of(case, k)
        if t is not None:
            line(what, f"{t:.{digits}f} s", t <= lim)
    tb = _find(report, "design", 12, "baseline")
    if not _failed(tb):
        line("estimation design LDP k=12 ≤ 60 s (method=frank-wolfe)", f"{tb['t']:.1f} s", tb["t"] <= 60)
    for case in ("verify_ldp", "verify_eldp"):
        t = t_of(case, 500)
        if t is not None:
            line(f"exact verification of a k=500 channel ≤ 5 s ({case})", f"{t:.2f} s", t <= 5)
    sm = report.get("solve_many")
    if sm and "speedup" in sm:
        line(f"solve_many {sm['n']:,} LIP k=4: 2 workers ≥ 1.7× faster than 1", f"{sm['speedup']:.2f}×",
             sm["speedup"] >= 1.7)
        if sm.get("dask") is not None:
            line("solve_many through Dask gives the same results", f"max abs Δ = {sm['dask_max_diff']:.1e}",
                 sm["dask_max_diff"] <= 1e-12 and sm.get("dask ok") == sm["n"])
    return out


def markdown(report: dict) -> str:
    mach = report["machine"]
    lines = [f"### Run {report['started']} ({'--quick' if report['quick'] else 'full'}, seed {SEED}, "
             f"{report['total_s']:.0f} s total, commit {mach.get('commit') or '?'})", "",
             f"Machine: `nproc` = {mach['nproc']}, Python {mach['python']}, numpy {mach['numpy']}, "
             f"scipy {mach['scipy']}, cvxpy {mach['cvxpy']}; load average at start "
             f"{', '.join(f'{v:.2f}' for v in mach['loadavg_at_start'])}, at end "
             f"{', '.join(f'{v:.2f}' for v in mach.get('loadavg_at_end', ()))}.", "", "```", mach["lscpu"], "```", "",
             "Times are wall seconds (best of 3 below 0.3 s), end to end: building the model, solving, and for "
             "mechopt also the exact verification and repair. Ratio = baseline time / mechopt time. Each "
             "measurement runs in its own forked process; peak RSS is that process's `ru_maxrss` (it includes "
             "the ~150–200 MB of imported numpy/scipy/cvxpy).", "",
             TABLE_HEAD]
    for c in report["cases"]:
        case = next(x for x in CASES if x.name == c["name"])
        lines += [_md_row(case, r) for r in c["rows"]]
    lines += ["", "Baselines and cases:", ""]
    for c in report["cases"]:
        lines.append(f"- **{c['name']}**: {c['title']}; baseline: {c['baseline']}.")
    lines += ["", "**Growth** — time ∝ k^a, least squares on log-log:", "",
              "| case | sizes | a (mechopt, all sizes) | a (mechopt, 3 largest) | b: mechopt time ∝ vars^b "
              "(3 largest) | a (baseline, all) | a (baseline, 3 largest) |", "|---|---|---:|---:|---:|---:|---:|"]
    for c in report["cases"]:
        g = c["growth"]
        lines.append(f"| {c['name']} | {g['mechopt']['sizes']} | {_fmt_exp(g['mechopt']['all'])} | "
                     f"{_fmt_exp(g['mechopt']['largest3'])} | {_fmt_exp(g['mechopt']['vars_largest3'])} | "
                     f"{_fmt_exp(g['baseline']['all'])} | "
                     f"{_fmt_exp(g['baseline']['largest3'])} |")
    acc = acceptance(report)
    if acc:
        lines += ["", "**Acceptance** (issue 6), from this run:", "", "| criterion | measured | |", "|---|---:|---|"]
        lines += acc
    sm = report.get("solve_many")
    if sm:
        lines += ["", f"**solve_many** on {sm.get('n', '?'):,} LIP problems (k=4, outputs free, random priors, half "
                  "MMSE half histogram MSE):", ""]
        if "error" in sm or "timeout" in sm:
            lines.append(f"failed: {sm.get('error') or sm.get('timeout')}")
        else:
            lines += ["| executor | wall s | problems/s | speed-up vs 1 worker | max abs Δ objective vs 1 worker |",
                      "|---|---:|---:|---:|---:|"]
            n = sm["n"]
            lines.append(f"| process pool, 1 worker | {sm['1 worker']:.2f} | {n / sm['1 worker']:,.0f} | 1.00× | — |")
            lines.append(f"| process pool, 2 workers | {sm['2 workers']:.2f} | {n / sm['2 workers']:,.0f} | "
                         f"{sm['speedup']:.2f}× | {sm['pool_max_diff']:.1e} |")
            if sm.get("dask") is not None:
                lines.append(f"| Dask LocalCluster, 2 worker processes | {sm['dask']:.2f} | {n / sm['dask']:,.0f} | "
                             f"{sm['1 worker'] / sm['dask']:.2f}× | {sm['dask_max_diff']:.1e} |")
                lines += ["", f"Dask cluster start-up and worker warm-up (imports, one solve), not included above: "
                          f"{sm['dask_startup']:.1f} s. The scheduler runs in the benchmark's process, on the same "
                          "2 cores."]
            else:
                lines += ["", sm.get("dask_note", "")]
            lines += ["", f"Pool times are the best of {sm['rounds']} alternated runs (1 worker: "
                      f"{', '.join(f'{t:.2f}' for t in sm['1 worker all'])}; 2 workers: "
                      f"{', '.join(f'{t:.2f}' for t in sm['2 workers all'])}); every problem solved and verified "
                      f"({sm['2 workers ok']:,}/{n:,}); load average before/after "
                      f"{sm['loadavg_before'][0]:.2f}/{sm['loadavg_after'][0]:.2f}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes; finishes in under 3 minutes")
    ap.add_argument("--json", metavar="OUT.json", help="write the full results as JSON (default, without --md: "
                    "benchmarks/results/<quick|full>-<date>.json)")
    ap.add_argument("--md", metavar="OUT.md", help="write the Markdown report (default, without --json: "
                    "benchmarks/results/<quick|full>-<date>.md)")
    ap.add_argument("--cases", help=f"comma-separated subset of: {','.join(c.name for c in CASES)},solve_many,geo")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds per measurement (default 40 with --quick, 300 otherwise)")
    ap.add_argument("--batch", type=int, default=None,
                    help="problems for solve_many (default 2000 with --quick, 10000 otherwise)")
    args = ap.parse_args(argv)
    timeout = args.timeout or (40.0 if args.quick else 300.0)
    wanted = None if not args.cases else set(args.cases.split(","))
    known = {c.name for c in CASES} | {"solve_many", "geo"}
    if wanted and wanted - known:
        ap.error(f"unknown case(s) {sorted(wanted - known)}; choose from {sorted(known)}")

    # import once in the parent so every forked measurement starts warm
    import cvxpy  # noqa: F401

    import mechopt._batch  # noqa: F401
    from mechopt import solve

    solve({"k": 2, "privacy": [{"notion": "ldp", "epsilon": 1.0}]}, quiet=True)

    t_start = time.perf_counter()
    report: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "quick": args.quick, "seed": SEED,
                    "timeout_s": timeout, "machine": machine(), "cases": []}

    def log(line: str) -> None:
        print(line, flush=True)

    if wanted and "geo" in wanted:  # location privacy at city scale: its own table (benchmarks/bench_geo.py)
        from benchmarks.bench_geo import main as geo_main

        report["geo"] = geo_main(["--md", args.md] if args.md and wanted == {"geo"} else [])
    print(TABLE_HEAD, flush=True)
    for case in CASES:
        if wanted and case.name not in wanted:
            continue
        if case.name == "sampling" and not _sampling_available():
            print("| sampling | — | skipped: mechopt.runtime.simulate_reports is not available |", flush=True)
            continue
        report["cases"].append(run_case(case, args.quick, timeout, log))
    if not wanted or "solve_many" in wanted:
        n = args.batch or (2000 if args.quick else 10_000)
        sm = isolated(run_solve_many, n, timeout=max(timeout, 600.0))
        sm.setdefault("n", n)
        report["solve_many"] = sm
    report["total_s"] = time.perf_counter() - t_start
    report["machine"]["loadavg_at_end"] = os.getloadavg()
    md = markdown(report)
    print()
    print(md)
    if not (args.md or args.json):
        stem = ("quick" if args.quick else "full") + (f"-{'_'.join(sorted(wanted))}" if wanted else "")
        md_path, json_path = default_outputs(stem)
        args.md, args.json = str(md_path), str(json_path)
        print(f"written: {md_path}, {json_path}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1, default=lambda o: None)
    if args.md:
        with open(args.md, "w") as fh:
            fh.write(md)
    return report
