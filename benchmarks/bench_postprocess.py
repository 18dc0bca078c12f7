"""Benchmark: the effect of consistent post-processing on the README example's estimates.

Run with ``python -m benchmarks.bench_postprocess`` (seeded). Solves the README's design
(``problems/web_high_low_002.yaml``: high-low LDP, ε = 1, six sites, estimation design),
then for each number of users ``n`` draws ``REPS`` collections from the README's true
distribution (30/25/20/15/6/4 %) and estimates each one by channel inversion, inversion
followed by ``--postprocess simplex`` and ``norm-sub``, and maximum likelihood (EM). It
reports the mean squared error ``E‖p̂ − p‖²`` (with its Monte-Carlo standard error), the
share of collections with a negative inversion estimate, and the coverage of the 95 %
parametric-bootstrap intervals of the post-processed estimates (``COVER_REPS``
collections, the default 1 000 resamples). Writes ``benchmarks/results/postprocess-DATE.md``
and prints it.
"""

from __future__ import annotations

import datetime
import time
from pathlib import Path

import numpy as np

import mechopt
from mechopt.runtime import estimate_counts, estimate_em
from mechopt.runtime._postprocess import inversion_rows, postprocess

SEED = 20261126
PROBLEM = "problems/web_high_low_002.yaml"
TRUTH = np.array([30, 25, 20, 15, 6, 4]) / 100
SIZES = (20_000, 2_000, 500)
REPS = 2000
EM_REPS = 500
COVER_REPS = 300


def _mse(est: np.ndarray) -> tuple[float, float]:
    sq = np.sum((est - TRUTH) ** 2, axis=1)
    return float(sq.mean()), float(sq.std(ddof=1) / np.sqrt(sq.size))


def run() -> str:
    root = Path(__file__).resolve().parents[1]
    t0 = time.perf_counter()
    result = mechopt.solve(str(root / PROBLEM), quiet=True)
    Q = result.mechanism.matrix
    lines = [f"# Consistent post-processing on the README example ({datetime.date.today().isoformat()})", "",
             f"Command: `python -m benchmarks.bench_postprocess` (seed {SEED}). Design: `{PROBLEM}` "
             f"({result.status}, {Q.shape[0]} inputs x {Q.shape[1]} outputs); truth "
             f"{TRUTH.tolist()}. MSE = E‖p̂ − p‖² over {REPS} collections ({EM_REPS} for EM), ± one "
             "Monte-Carlo standard error; coverage of the 95 % parametric-bootstrap intervals (1 000 resamples) "
             f"over {COVER_REPS} collections, the lowest input's and the mean over inputs.", "",
             "| n | inversion (none) | simplex | norm-sub | EM | negative inversion | coverage simplex (min / mean) "
             "| coverage norm-sub (min / mean) |",
             "|---|---|---|---|---|---|---|---|"]
    rng = np.random.default_rng(SEED)
    lam = TRUTH @ Q
    for n in SIZES:
        counts = rng.multinomial(n, lam, size=REPS)
        inv = inversion_rows(Q, counts / n)
        cells = {how: _mse(postprocess(inv, how)) for how in ("none", "simplex", "norm-sub")}
        cells["em"] = _mse(np.array([estimate_em(Q, c) for c in counts[:EM_REPS]]))
        negative = float(np.mean(inv.min(axis=1) < 0))
        cover = {}
        for how in ("simplex", "norm-sub"):
            hits = np.zeros(TRUTH.size)
            for r in range(COVER_REPS):
                e = estimate_counts(Q, counts[r], method="inversion", postprocess=how, seed=r)
                hits += (e.lower <= TRUTH) & (TRUTH <= e.upper)
            cover[how] = (float(hits.min() / COVER_REPS), float(hits.mean() / COVER_REPS))
        fmt = {k: f"{m:.3e} ± {s:.1e}" for k, (m, s) in cells.items()}
        lines.append(f"| {n} | {fmt['none']} | {fmt['simplex']} | {fmt['norm-sub']} | {fmt['em']} | "
                     f"{100 * negative:.1f} % | {cover['simplex'][0]:.3f} / {cover['simplex'][1]:.3f} | "
                     f"{cover['norm-sub'][0]:.3f} / {cover['norm-sub'][1]:.3f} |")
    lines += ["", f"Total time {time.perf_counter() - t0:.0f} s. Every inversion estimate sums to 1, so "
              "Norm-Sub equals the simplex projection on it (the two columns agree)."]
    text = "\n".join(lines) + "\n"
    out = root / "benchmarks" / "results" / f"postprocess-{datetime.date.today().isoformat()}.md"
    out.write_text(text, encoding="utf-8")
    return text


if __name__ == "__main__":
    print(run())
