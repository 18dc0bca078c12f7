"""Seeded geo test inputs shared by tests/test_geo.py and tests/test_metric_ipm.py."""

from __future__ import annotations

import numpy as np

from mechopt.geo import Places


def clustered(places: Places, seed: int = 0) -> np.ndarray:
    """Two Gaussian hotspots plus a small floor (seeded)."""
    rng = np.random.default_rng(seed)
    c = places.coords[rng.choice(places.k, 2, replace=False)]
    d2 = ((places.coords[:, None, :] - c[None]) ** 2).sum(-1)
    p = np.exp(-d2 / 2.0).sum(axis=1) + 0.02
    return p / p.sum()
