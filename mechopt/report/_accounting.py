"""The report's central-privacy sections: ε after shuffling n reports, and the privacy-loss distribution.

Both read :mod:`mechopt.accounting`; where it cannot be imported the sections say so in one
line and the rest of the page is unchanged.
"""

from __future__ import annotations

import math

import numpy as np

from .._errors import MechoptError
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
    """Population sizes for the shuffle curve: powers of ten from 10 to max(100, n), and n.

    Examples
    --------
    >>> n_grid(5000)
    [10, 100, 1000, 5000]
    >>> n_grid(20)
    [10, 20, 100]
    """
    top = max(100, n)
    grid = {10 ** e for e in range(1, int(math.log10(top)) + 1)} | {int(n)}
    return sorted(grid)


def _missing(s: Section) -> Section:
    s.paragraphs.append(f"{UNAVAILABLE}: mechopt.accounting is not installed with this mechopt.")
    s.data = {"available": False}
    return s


def _failed(s: Section, what: str, err: Exception) -> Section:
    s.paragraphs.append(f"{what} could not be computed: {err}")
    s.data = {"available": False, "error": str(err)}
    return s


#: what the accounting may raise on a channel it cannot handle (the section says so; the page stays)
_ERRORS = (MechoptError, ValueError, ArithmeticError, IndexError)


def shuffle(mech, n: int, delta: float) -> Section:
    """ε_central(n) after a shuffler mixes n reports (numerical bound and the closed form)."""
    s = Section("shuffle", "Central privacy after shuffling")
    acc = _accounting()
    if acc is None:
        return _missing(s)
    Q = mech.matrix
    grid = n_grid(n)
    try:
        eps0 = acc.local_epsilon(Q)
        numeric = [acc.shuffle_epsilon(Q, m, delta) for m in grid]
        closed = [acc.shuffle_epsilon_closed_form(eps0, m, delta) if math.isfinite(eps0) else None for m in grid]
    except _ERRORS as err:
        return _failed(s, "The central ε after shuffling", err)
    at_n = numeric[grid.index(n)]
    s.paragraphs.append(
        f"A shuffler that mixes the reports of n users turns the local guarantee (ε₀ = {_g(eps0, 6)} as ε-LDP) "
        f"into a central (ε, δ) guarantee at δ = {delta:g} (Feldman, McMillan, Talwar, FOCS 2021, 'Hiding among "
        f"the clones', on the exact channel; the closed form uses ε₀ alone). At n = {n:,}: "
        f"ε_central = {_g(at_n, 4)}.")
    if not math.isfinite(eps0):
        s.paragraphs.append("ε₀ is infinite (an output some inputs never report): the closed form does not apply.")
    s.header = ["n", "ε_central (numerical, this channel)", "ε_central (closed form from ε₀)"]
    s.rows = [[f"{m:,}", _g(a, 4), _g(b, 4)] for m, a, b in zip(grid, numeric, closed)]
    if not any(math.isfinite(v) for v in numeric):
        s.paragraphs.append("The central ε is infinite at every n: shuffling cannot hide a report that rules an "
                            "input out, so there is no curve to draw.")
        s.data = {"available": True, "n": grid, "numeric": numeric, "closed_form": closed, "eps0": eps0}
        return s
    s.figures.append(Figure("fig-shuffle", _figures.curves(
        [float(m) for m in grid], {"numerical bound (this channel)": numeric, "closed form (ε₀ only)": closed},
        "n (reports shuffled)", f"ε_central at δ = {delta:g}", "central ε after shuffling n reports"),
        "central epsilon against the number of shuffled reports",
        f"ε_central(n) at δ = {delta:g}; lower is more private."))
    s.data = {"available": True, "n": grid, "numeric": numeric, "closed_form": closed, "eps0": eps0}
    return s


def loss_pmf(P: np.ndarray, R: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """The privacy loss ``ln(P[y] / R[y])`` under ``y ~ P``: distinct finite values, their mass, the mass at +∞.

    Examples
    --------
    >>> losses, probs, inf_mass = loss_pmf(np.array([0.5, 0.25, 0.25]), np.array([0.25, 0.5, 0.0]))
    >>> losses.round(6).tolist(), probs.tolist(), inf_mass
    ([-0.693147, 0.693147], [0.25, 0.5], 0.25)
    """
    mass: dict[float, float] = {}
    inf_mass = 0.0
    for p, r in zip(P.tolist(), R.tolist()):
        if p <= 0:
            continue
        if r <= 0:
            inf_mass += p
            continue
        key = round(math.log(p) - math.log(r), 12)
        mass[key] = mass.get(key, 0.0) + p
    losses = np.array(sorted(mass))
    return losses, np.array([mass[v] for v in losses]), inf_mass


#: the numbers of collections of the composition table
COLLECTIONS = (1, 2, 5, 10)


def pld(mech, delta: float) -> Section:
    """The privacy-loss distribution of the worst pair of inputs, and ε after T collections."""
    s = Section("pld", "Privacy-loss distribution")
    acc = _accounting()
    if acc is None:
        return _missing(s)
    Q = mech.matrix
    if Q.shape[0] < 2:
        s.paragraphs.append("One input: there is no pair to tell apart.")
        s.data = {"available": False}
        return s
    try:
        a, b = acc.worst_pair(Q)
        dist = acc.privacy_loss_distribution(Q, (a, b))
        eps_pure, eps_delta = float(dist.get_epsilon_for_delta(0.0)), float(dist.get_epsilon_for_delta(delta))
        composed = [acc.compose_epsilon(Q, t, delta) for t in COLLECTIONS]
        memo = acc.compose_epsilon(Q, COLLECTIONS[-1], delta, memoized=True)
    except _ERRORS as err:
        return _failed(s, "The privacy-loss distribution", err)
    x, y = mech.inputs[a], mech.inputs[b]
    losses, probs, inf_mass = loss_pmf(Q[a], Q[b])
    s.paragraphs.append(
        f"The pair of inputs with the largest privacy loss: {x!r} and {y!r}. The loss of a report y is "
        f"ln(Q[{x}, y] / Q[{y}, y]) with y drawn from Q[{x}, ·]"
        + (f"; with probability {_g(inf_mass, 4)} it is +∞ (a report {y!r} never gives)" if inf_mass else "")
        + f". Exported to dp_accounting (mechopt.accounting.privacy_loss_distribution, pessimistic rounding): "
        f"ε = {_g(eps_pure, 6)} at δ = 0, {_g(eps_delta, 6)} at δ = {delta:g}.")
    s.paragraphs.append(f"T collections from one user (fresh reports, composed by dp_accounting at δ = {delta:g}, "
                        f"every distinct pair of inputs); memoized, {COLLECTIONS[-1]} collections cost one report: "
                        f"ε = {_g(memo, 6)}.")
    s.header = ["T", f"ε at δ = {delta:g}"]
    s.rows = [[str(t), _g(e, 6)] for t, e in zip(COLLECTIONS, composed)]
    if len(losses):
        s.figures.append(Figure("fig-pld", _figures.stems(losses, probs, f"privacy loss ln(Q[{x}, y] / Q[{y}, y])",
                                                          f"privacy-loss distribution, {x!r} against {y!r}"),
                                "the privacy-loss distribution of the worst pair of inputs",
                                "Mass of each value of the privacy loss"
                                + (f" (and {_g(inf_mass, 4)} at +∞, not drawn)." if inf_mass else ".")))
    s.data = {"available": True, "pair": (a, b), "losses": losses.tolist(), "probs": probs.tolist(),
              "inf_mass": inf_mass, "epsilon": eps_pure, "epsilon_delta": eps_delta, "composed": composed,
              "memoized": memo}
    return s
