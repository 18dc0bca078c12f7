"""Benchmark: vectorised simulation sampling and the client's exact sampler.

Seeded; run with ``python benchmarks/bench_sampling.py``. Prints two Markdown tables on
standard output (nothing is written to disk):

1. ``simulate_reports`` (numpy, inverse CDF per input) for 10^6 reports at several k,
   against a baseline measured in the same run: one ``Generator.choice`` call per report
   (timed on 10^4 reports and scaled);
2. the exact client sampler (:class:`mechopt.client.Sampler`, standard library only):
   reports per second with the cryptographically secure default (``os.urandom`` words)
   and with a seed (``random.Random``, simulation only), for several k.
"""

from __future__ import annotations

import time
from functools import partial

import numpy as np

from mechopt._canonical import canonical_digest
from mechopt.client import Sampler
from mechopt.runtime import simulate_reports

SEED = 20240601
N_REPORTS = 10**6
SIZES = (10, 100, 1000)
EXACT_DRAWS = 200_000


def random_channel(k: int, rng: np.random.Generator) -> np.ndarray:
    return rng.dirichlet(np.ones(k), size=k)


def as_document(Q: np.ndarray) -> dict:
    labels = [str(i) for i in range(Q.shape[0])]
    matrix = [[float(v) for v in row] for row in Q]
    for row in matrix:  # make each row sum to 1 within 1e-12 on its decimals
        row[int(np.argmax(row))] += 1.0 - sum(row)
    doc = {"format": "mechopt-mechanism", "version": 2, "inputs": labels,
           "outputs": labels, "matrix": matrix, "privacy": [], "objective": {},
           "certificate": {}}
    doc["sha256"] = canonical_digest(doc)
    return doc


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def time_vectorised() -> list[tuple[int, float, float]]:
    rows = []
    for k in SIZES:
        rng = np.random.default_rng(SEED + k)
        Q = random_channel(k, rng)
        x = rng.integers(0, k, size=N_REPORTS)
        t = best_of(partial(simulate_reports, Q, x, seed=SEED))
        few = x[:10_000]
        gen = np.random.default_rng(SEED)

        def naive(gen=gen, k=k, Q=Q, few=few):
            return [gen.choice(k, p=Q[i]) for i in few]

        t_naive = best_of(naive, repeat=1)
        rows.append((k, t, t_naive * N_REPORTS / few.size))
    return rows


def time_exact() -> list[tuple[int, float, float]]:
    rows = []
    for k in SIZES:
        rng = np.random.default_rng(SEED + k)
        doc = as_document(random_channel(k, rng))
        labels = [str(i) for i in rng.integers(0, k, size=EXACT_DRAWS)]
        secure = Sampler(doc)
        seeded = Sampler(doc, seed=SEED)
        t_secure = best_of(partial(secure.sample_many, labels))
        t_seeded = best_of(partial(seeded.sample_many, labels))
        rows.append((k, EXACT_DRAWS / t_secure, EXACT_DRAWS / t_seeded))
    return rows


def main() -> None:
    print(f"## simulate_reports: {N_REPORTS:,} reports (seed {SEED})\n")
    print("| k | vectorised (s) | one `choice` per report (s, scaled) | speed-up |")
    print("|---:|---:|---:|---:|")
    for k, t, t_naive in time_vectorised():
        print(f"| {k} | {t:.3f} | {t_naive:.1f} | {t_naive / t:,.0f}× |")
    print(f"\n## exact client sampler: {EXACT_DRAWS:,} reports (standard library only)\n")
    print("| k | secure, `os.urandom` words (reports/s) | seeded, `random.Random` "
          "(reports/s) | secure / seeded |")
    print("|---:|---:|---:|---:|")
    for k, secure, seeded in time_exact():
        print(f"| {k} | {secure:,.0f} | {seeded:,.0f} | {secure / seeded:.2f} |")


if __name__ == "__main__":
    main()
