"""Test-wide settings.

OpenBLAS's second thread makes small dense solves (SLSQP in the optimality tests) much
slower on this 2-core machine; one thread is set before numpy is imported.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")


# -- brute force over the ray LP's bases ---------------------------------------------------

import itertools  # noqa: E402
import math  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402


def _feasible_bases(V):
    """Every basis of k rays (columns of ``V``, k x R) with ``V[:, idx] w = 1``, ``w >= 0``.

    These are the vertices of the ray LP ``{w >= 0 : V w = 1}``, enumerated by brute force
    (``R choose k`` subsets): an independent reference for the ray LPs and their bounds.
    Yields ``(idx, B, w)``.
    """
    k, R = V.shape
    for idx in itertools.combinations(range(R), k):
        B = V[:, idx]
        if abs(np.linalg.det(B)) < 1e-12:
            continue
        w = np.linalg.solve(B, np.ones(k))
        if np.all(w >= -1e-12):
            yield list(idx), B, w


@pytest.fixture(scope="session")
def ray_bases():
    """:func:`_feasible_bases`: the ray LP's vertices by brute force."""
    return _feasible_bases


@pytest.fixture(scope="session")
def best_basis():
    """``max mu·w s.t. V w = 1, w >= 0`` by enumerating every basis (the LP's vertices)."""
    return lambda V, mu: max((float(mu[idx] @ w) for idx, _, w in _feasible_bases(V)), default=-math.inf)
