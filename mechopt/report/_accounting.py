"""The report's central-privacy sections: ε after shuffling n reports, and the privacy-loss distribution.

Both read :mod:`mechopt.accounting`; where it cannot be imported the sections say so in one
line and the rest of the page is unchanged.
"""

from __future__ import annotations

import math

import numpy as np

from . import _figures
from ._sections import Figure, Section, _g

UNAVAILABLE = "shuffle accounting unavailable"


def _accounting():
    try:
        from .. import accounting
    except ImportError:
        return None
    return accounting


def n_grid(n: int) -> list[int]:
    """Population sizes for the shuffle curve: powers of ten from 100 to 100·n (at least 10⁶), and n.

    Examples
    --------
    >>> n_grid(5000)
    [100, 1000, 5000, 10000, 100000, 1000000]
    """
    top = max(10 ** 6, 100 * n)
    grid = {10 ** e for e in range(2, int(math.log10(top)) + 1)} | {int(n)}
    return sorted(v for v in grid if v >= 2)


def ldp_epsilon(Q: np.ndarray) -> float:
    """The channel's ε-LDP budget ``max_y ln(max_x Q[x,y] / min_x Q[x,y])`` (inf with a zero beside a non-zero)."""
    from ..notions import LDP

    return float(LDP(0.0).achieved(Q))


def shuffle(mech, n: int, delta: float) -> Section:
    """ε_central(n) after a shuffler mixes n reports (numerical bound and the closed form)."""
    s = Section("shuffle", "Central privacy after shuffling")
    acc = _accounting()
    if acc is None or not hasattr(acc, "shuffle_epsilon"):
        s.paragraphs.append(f"{UNAVAILABLE}: mechopt.accounting is not installed with this mechopt.")
        s.data = {"available": False}
        return s
    Q = mech.matrix
    eps0 = ldp_epsilon(Q)
    grid = n_grid(n)
    numeric = [acc.shuffle_epsilon(Q, m, delta) for m in grid]
    closed = [acc.shuffle_epsilon_closed_form(eps0, m, delta) if math.isfinite(eps0) else None for m in grid]
    at_n = numeric[grid.index(n)]
    s.paragraphs.append(
        f"A shuffler that mixes the reports of n users turns the local guarantee (ε₀ = {_g(eps0, 6)} as ε-LDP) "
        f"into a central (ε, δ) guarantee, δ = {delta:g} (Feldman, McMillan, Talwar, FOCS 2021, 'Hiding among the "
        f"clones'). At n = {n:,}: ε_central = {_g(at_n, 4)}.")
    s.header = ["n", "ε_central (numerical, this channel)", "ε_central (closed form from ε₀)"]
    s.rows = [[f"{m:,}", _g(a, 4), _g(b, 4)] for m, a, b in zip(grid, numeric, closed)]
    s.figures.append(Figure("fig-shuffle", _figures.curves(
        [float(m) for m in grid], {"numerical bound (this channel)": numeric, "closed form (ε₀ only)": closed},
        "n (reports shuffled)", f"ε_central at δ = {delta:g}", "central ε after shuffling n reports"),
        "central epsilon against the number of shuffled reports",
        f"ε_central(n) at δ = {delta:g}; lower is more private."))
    s.data = {"available": True, "n": grid, "numeric": numeric, "closed_form": closed, "eps0": eps0}
    return s


def pld(mech, collections: int = 10) -> Section:
    """The privacy-loss distribution of the worst pair of inputs, and ε after T collections."""
    s = Section("pld", "Privacy-loss distribution")
    acc = _accounting()
    if acc is None or not hasattr(acc, "privacy_loss_distribution"):
        s.paragraphs.append(f"{UNAVAILABLE}: mechopt.accounting is not installed with this mechopt.")
        s.data = {"available": False}
        return s
    s.data = {"available": True}
    return s
