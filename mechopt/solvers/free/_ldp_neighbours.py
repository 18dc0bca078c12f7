"""More columns per pricing round for separable objectives over staircases: one-flip and swap neighbours.

The branch and bound of :mod:`mechopt.solvers.free._pricing_sep` proves its bound with
few nodes and so returns few columns, often one: on an LDP master with many degenerate
rows (k = 200 and more) column generation then adds a column a round and creeps. The
reduced value of a raised set ``S`` depends on three sums only, ``P(S)``, ``sum_S P_x^2``
and ``d(S)``, so every set one item away from a good one (one item added or removed) or
two items away (one swapped for another) is scored in ``O(1)`` from the sums: ``O(k)``
flips and ``O(|S| (|G| - |S|))`` swaps per seed set, vectorised. The best of them join the
pricer's columns. Nothing here changes a bound: these are real sets, scored exactly, and
re-scored by the objective's own code (:func:`~mechopt.solvers.free._pricing_base.rescore`).
"""

from __future__ import annotations

import numpy as np

#: at most this many seed sets (the pricer's best) are expanded
SEEDS = 4
#: at most this many neighbours join a pricing round's columns
NEIGHBOURS = 100
#: the swaps of a seed are scored in chunks of at most this many pairs (memory)
CHUNK = 1 << 20


def neighbour_masks(value, pG: np.ndarray, dG: np.ndarray, seeds: list[np.ndarray], top: int,
                    threshold: float) -> list[tuple[float, np.ndarray]]:
    """The ``top`` best sets one flip or one swap away from ``seeds``, valued above ``threshold``.

    ``value(pi, sq, dl)`` is the reduced value of raised sets with ``P(S) = pi``,
    ``sum_S P^2 = sq`` and ``d(S) = dl`` (vectorised); ``seeds`` are boolean masks over
    the ground set (prior ``pG``, duals ``dG``). Returns ``(value, mask)`` pairs, best first.

    Examples
    --------
    >>> import numpy as np
    >>> p, dd = np.array([0.5, 0.3, 0.2]), np.zeros(3)
    >>> out = neighbour_masks(lambda pi, sq, dl: sq - dl, p, dd, [np.array([True, False, False])], 2, 0.0)
    >>> [(round(v, 2), m.tolist()) for v, m in out]
    [(0.34, [True, True, False]), (0.29, [True, False, True])]
    """
    sqG = pG * pG
    found: dict[bytes, tuple[float, np.ndarray]] = {}

    def keep(vals: np.ndarray, make) -> None:
        if vals.size == 0:
            return
        idx = np.argsort(-vals)[:top]
        for i in idx[vals[idx] > threshold]:
            m = make(int(i))
            key = np.packbits(m).tobytes()
            if key not in found:
                found[key] = (float(vals[i]), m)

    for mask in seeds[:SEEDS]:
        pi, sq, dl = float(pG[mask].sum()), float(sqG[mask].sum()), float(dG[mask].sum())
        sgn = np.where(mask, -1.0, 1.0)

        def flip(i, mask=mask):
            m = mask.copy()
            m[i] = not m[i]
            return m
        keep(value(pi + sgn * pG, sq + sgn * sqG, dl + sgn * dG), flip)
        inn, out = np.flatnonzero(mask), np.flatnonzero(~mask)
        if len(inn) == 0 or len(out) == 0:
            continue
        step = max(1, CHUNK // len(out))
        for c in range(0, len(inn), step):
            rows = inn[c:c + step]
            vals = value(pi - pG[rows][:, None] + pG[out][None, :], sq - sqG[rows][:, None] + sqG[out][None, :],
                         dl - dG[rows][:, None] + dG[out][None, :]).ravel()

            def swap(i, mask=mask, rows=rows, out=out):
                m = mask.copy()
                m[rows[i // len(out)]] = False
                m[out[i % len(out)]] = True
                return m
            keep(vals, swap)
    return sorted(found.values(), key=lambda t: -t[0])[:top]
