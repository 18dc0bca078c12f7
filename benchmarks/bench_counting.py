"""Counting reports at volume on Dask: ``python -m benchmarks.bench_counting [--reports 1e8]``.

Solves ``problems/web_high_low_002.yaml`` (six web sites, two sensitive; high-low LDP) and
saves the verified mechanism; draws ``--reports`` inputs from a fixed distribution and one
report each with :func:`mechopt.runtime.simulate_reports` (seeded), and writes them as
``--partitions`` Parquet files of int16 output indices under ``--dir`` (default
``/tmp/mechopt-counting``; kept and reused when the same run asks again). Generation is not
timed.

Then counts them with :func:`mechopt.runtime.count_reports` on a Dask ``LocalCluster`` of
1 and of 2 single-threaded worker processes, alternating which goes first, ``--rounds``
times (with ``--scheduler ADDRESS``: on that cluster instead, ``--dir`` on storage its
workers mount); each cluster is started and warmed up (one partition counted) before its clock
starts, and closed after. Each count must equal the per-partition numpy ``bincount`` taken
at generation. Also timed: the same count in this process without Dask. Reports the times,
the ratio of the medians, throughput, each worker's peak RSS and the load average before and
after every measurement.

Writes ``benchmarks/results/counting-<date>.md`` and ``.json`` (``--md``, ``--json`` to choose).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = ROOT / "problems" / "web_high_low_002.yaml"
#: the true input distribution of the simulated users (news, mail, shop, video, clinic, casino)
TRUE_P = np.array([0.30, 0.25, 0.20, 0.15, 0.06, 0.04])


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def generate(directory: Path, reports: int, partitions: int, seed: int = 2026, log=print) -> dict:
    """Write the mechanism and the partitions; the manifest holds the exact counts of each file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mechopt import Mechanism, solve
    from mechopt.runtime import simulate_reports

    manifest_path = directory / "manifest.json"
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        if manifest["reports"] == reports and manifest["partitions"] == partitions and manifest["seed"] == seed:
            log(f"reusing the {partitions} partitions of {reports:.3g} reports in {directory}")
            return manifest
    directory.mkdir(parents=True, exist_ok=True)
    mech_path = directory / "mechanism.json"
    solve(str(PROBLEM), quiet=True).mechanism.save(mech_path)
    mech = Mechanism.load(mech_path)
    Q = mech.matrix
    m = Q.shape[1]
    dtype = np.int16 if m < 2 ** 15 else np.int32
    rng = np.random.default_rng(seed)
    sizes = [reports // partitions + (i < reports % partitions) for i in range(partitions)]
    per_file = []
    t0 = time.perf_counter()
    for i, size in enumerate(sizes):
        x = rng.choice(len(TRUE_P), size=size, p=TRUE_P)
        y = simulate_reports(Q, x, seed=rng).astype(dtype)
        per_file.append(np.bincount(y, minlength=m).tolist())
        pq.write_table(pa.table({"report": y}), directory / f"part-{i:04d}.parquet", compression="snappy")
    manifest = {"reports": reports, "partitions": partitions, "seed": seed, "outputs": list(mech.outputs),
                "dtype": np.dtype(dtype).name, "per_file": per_file, "seconds": time.perf_counter() - t0,
                "bytes": sum((directory / f"part-{i:04d}.parquet").stat().st_size for i in range(partitions))}
    manifest_path.write_text(json.dumps(manifest))
    log(f"wrote {partitions} partitions of {reports:.3g} reports ({manifest['bytes'] / 2 ** 20:.0f} MiB) "
        f"in {manifest['seconds']:.0f} s")
    return manifest


def _spin(n: int) -> None:
    s = 0
    for i in range(n):
        s += i


def machine_scaling(n: int = 3_000_000) -> float:
    """What 2 processes get against 1 right now: 2 × t(one spinning alone) / t(two spinning at once).

    2.0 on two free cores; less when other work takes a share of them. Recorded beside
    every round, so a ratio can be read against what the machine could give at the time.
    """
    import multiprocessing as mp

    with mp.get_context("fork").Pool(2) as pool:
        pool.map(_spin, [1000, 1000], chunksize=1)
        t0 = time.perf_counter()
        pool.map(_spin, [n], chunksize=1)
        one = time.perf_counter() - t0
        t0 = time.perf_counter()
        pool.map(_spin, [n, n], chunksize=1)
        two = time.perf_counter() - t0
    return 2 * one / two


def _worker_peak_rss_mib() -> float:  # runs on a worker (module-level: Dask pickles it by reference)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def measure_dask(files: list[str], outputs: list[str], scheduler: str, expected: np.ndarray) -> dict:
    """One timed count on a fresh LocalCluster (``local:N``) or on the cluster at a scheduler address."""
    from mechopt.runtime import count_reports
    from mechopt.runtime._counting import close_client, count_files, open_client

    client, _ = open_client(scheduler)
    try:
        if scheduler.startswith("local:"):
            client.wait_for_workers(int(scheduler[len("local:"):]))
        workers = sum(client.nthreads().values())
        client.run(count_files, files[:1], outputs)  # warm-up on every worker: imports, one file
        load_before = os.getloadavg()[0]
        t0, c0 = time.perf_counter(), time.process_time()
        counts = count_reports(files, outputs, scheduler=client)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        load_after = os.getloadavg()[0]
        peaks = sorted(client.run(_worker_peak_rss_mib).values())
    finally:
        close_client(client)
    if not np.array_equal(counts, expected):
        raise AssertionError(f"{workers} workers counted {counts.tolist()}, expected {expected.tolist()}")
    return {"workers": workers, "seconds": seconds, "client_cpu_seconds": cpu, "worker_peak_rss_mib": peaks,
            "load_before": load_before, "load_after": load_after}


def measure_in_process(files: list[str], outputs: list[str], expected: np.ndarray) -> dict:
    from mechopt.runtime import count_reports

    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    counts = count_reports(files, outputs)
    seconds = time.perf_counter() - t0
    if not np.array_equal(counts, expected):
        raise AssertionError(f"in-process count {counts.tolist()}, expected {expected.tolist()}")
    return {"workers": 0, "seconds": seconds, "load_before": load_before, "load_after": os.getloadavg()[0]}


def run(reports: int, partitions: int, rounds: int, directory: Path, scheduler: str | None = None,
        log=print) -> dict:
    from mechopt.runtime import estimate_counts

    report = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "cores": os.cpu_count(), "reports": reports,
              "partitions": partitions, "rounds": rounds, "directory": str(directory),
              "loadavg_at_start": os.getloadavg()}
    manifest = generate(directory, reports, partitions, log=log)
    files = [str(directory / f"part-{i:04d}.parquet") for i in range(partitions)]
    outputs = manifest["outputs"]
    expected = np.sum(manifest["per_file"], axis=0)
    report.update(dtype=manifest["dtype"], outputs=outputs, data_bytes=manifest["bytes"],
                  generation_seconds=manifest["seconds"], loadavg_after_generation=os.getloadavg())
    runs, scaling = [], []
    for r in range(rounds):
        scaling.append(machine_scaling())
        for workers in ((1, 2, 0) if r % 2 == 0 else (0, 2, 1)) if scheduler is None else (scheduler,):
            m = measure_dask(files, outputs, workers if isinstance(workers, str) else f"local:{workers}",
                             expected) if workers else measure_in_process(files, outputs, expected)
            m["round"] = r
            runs.append(m)
            log(f"round {r}: {m['workers'] or 'no Dask,'} {'workers' if m['workers'] else 'this process'}: "
                f"{m['seconds']:.3f} s (load {m['load_before']:.2f} -> {m['load_after']:.2f}; "
                f"machine scaling {scaling[-1]:.2f})")
    report["runs"] = runs
    report["machine_scaling"] = scaling
    med = {w: statistics.median(m["seconds"] for m in runs if m["workers"] == w) for w in {m["workers"] for m in runs}}
    report["median_seconds"] = med
    report["ratio"] = med[1] / med[2] if scheduler is None else None
    report["throughput_reports_per_s"] = {w: reports / s for w, s in med.items()}
    report["scheduler"] = scheduler
    report["client_peak_rss_mib"] = _peak_rss_mib()
    report["loadavg_at_end"] = os.getloadavg()
    Q = json.loads((directory / "mechanism.json").read_text())["matrix"]
    est = estimate_counts(Q, expected, method="em")
    report["estimate_max_abs_error"] = float(np.max(np.abs(est.estimate - TRUE_P)))
    return report


def markdown(report: dict) -> str:
    med, tp = report["median_seconds"], report["throughput_reports_per_s"]
    lines = ["# Counting reports on Dask", "",
             f"`python -m benchmarks.bench_counting --reports {report['reports']:.0e} --partitions "
             f"{report['partitions']} --rounds {report['rounds']}`, started {report['started']}, "
             f"{report['cores']} cores, load average at start {report['loadavg_at_start'][0]:.2f}, at end "
             f"{report['loadavg_at_end'][0]:.2f}.", "",
             f"{report['reports']:,} reports of `problems/web_high_low_002.yaml`'s optimal mechanism "
             f"({len(report['outputs'])} outputs) in {report['partitions']} Parquet files of {report['dtype']} "
             f"output indices (snappy, {report['data_bytes'] / 2 ** 20:.0f} MiB; written in "
             f"{report['generation_seconds']:.0f} s, not timed). Every count equals the numpy `bincount` of "
             f"generation; EM on it is within {report['estimate_max_abs_error']:.1e} of the true distribution.", "",
             "| counting | median s | reports/s | worker peak RSS (MiB) | client + scheduler CPU s | "
             "runs: s (1-min load before) |",
             "|---|---:|---:|---:|---:|---|"]
    where = f" at {report['scheduler']}" if report["scheduler"] else " (LocalCluster)"
    for w in sorted(med):
        mine = [m for m in report["runs"] if m["workers"] == w]
        runs = ", ".join(f"{m['seconds']:.3f} ({m['load_before']:.2f})" for m in mine)
        rss = f"{max(max(m['worker_peak_rss_mib']) for m in mine):.0f}" if w else "—"
        cpu = f"{statistics.median(m['client_cpu_seconds'] for m in mine):.3f}" if w else "—"
        name = f"Dask, {w} worker{'s' if w > 1 else ''}{where}" if w else "in this process, no Dask"
        lines.append(f"| {name} | {med[w]:.3f} | {tp[w] / 1e6:.0f} M | {rss} | {cpu} | {runs} |")
    lines += ["", f"Two spinning processes against one, before each round (2.00 on two free cores): "
              f"{', '.join(f'{x:.2f}' for x in report['machine_scaling'])}.", ""]
    if report["ratio"] is not None:
        lines[-1] = f"**2 workers against 1: {report['ratio']:.2f}×** (ratio of the medians). "
    lines[-1] += f"Peak RSS of this process (generation included): {report['client_peak_rss_mib']:.0f} MiB."
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from benchmarks.run import write_results

    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_counting", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reports", type=float, default=1e8, help="reports to generate and count (default 1e8)")
    ap.add_argument("--partitions", type=int, default=64, help="Parquet files (default 64)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of 1 worker / 2 workers / no Dask (default 3)")
    ap.add_argument("--dir", default="/tmp/mechopt-counting", help="where the partitions are written")
    ap.add_argument("--scheduler", metavar="ADDRESS",
                    help="time the cluster at this Dask scheduler address instead (--dir on storage its workers see)")
    ap.add_argument("--md", help="write the Markdown here instead of benchmarks/results/counting-<date>.md")
    ap.add_argument("--json", help="write the JSON here instead of benchmarks/results/counting-<date>.json")
    args = ap.parse_args(argv)
    if args.reports < args.partitions or args.partitions < 2 or args.rounds < 1:
        ap.error("need --reports >= --partitions >= 2 and --rounds >= 1")
    started, load_start = time.strftime("%Y-%m-%d %H:%M:%S"), os.getloadavg()
    saved = dict(os.environ)  # starting a LocalCluster sets OMP_NUM_THREADS & co. here too (nproc would say 1)
    report = run(int(args.reports), args.partitions, args.rounds, Path(args.dir) / f"{int(args.reports)}",
                 args.scheduler)
    os.environ.clear()
    os.environ.update(saved)
    md = markdown(report)
    print(md)
    write_results("bench_counting", "counting", md, report, args.md, args.json, started, load_start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
