"""Leakage of a channel under a prior, in the measures compared by Jiang et al. (2022, §II).

All values in nats. For a discrete channel ``Q`` (rows = inputs) and prior ``P``:

* LDP: ``max_y max_{x,x'} ln(Q[x,y] / Q[x',y])`` (their eq. (1));
* LIP: ``max_{x,y} |ln(P_{X|Y}(x|y) / P_X(x))| = max |ln(Q[x,y] / P·Q[:,y])|`` (eq. (8));
* MI: ``I(X; Y)`` (Def. 2);
* MIL: maximal leakage ``ln sum_y max_{x: P(x)>0} Q[x,y]`` (Def. 4, eq. (2));
* DI: differential identifiability ``max_{y,x,x'} ln(P(x)Q[x,y] / (P(x')Q[x',y]))``
  (Def. 3; the supremum over sets is reached at singletons by the mediant inequality).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np


@dataclass(frozen=True)
class Leakage:
    ldp: float
    lip: float
    mi: float
    mil: float
    di: float

    def to_dict(self) -> dict:
        return asdict(self)


def _max_log_ratio(num: np.ndarray, den: np.ndarray) -> float:
    """max ln(num/den) over entries with num > 0 (inf if some den = 0 there)."""
    pos = num > 0
    if not pos.any():
        return 0.0
    if np.any(den[pos] <= 0):
        return math.inf
    return float(np.max(np.log(num[pos] / den[pos])))


def leakage_report(Q, prior) -> Leakage:
    """Leakage of channel ``Q`` (k x m) under ``prior`` (k,) in five measures.

    Examples
    --------
    >>> import numpy as np
    >>> e = np.exp(1.0)
    >>> Q = np.array([[e, 1.0], [1.0, e]]) / (1 + e)
    >>> rep = leakage_report(Q, [0.5, 0.5])
    >>> round(rep.ldp, 9), round(rep.di, 9)
    (1.0, 1.0)
    """
    Q = np.asarray(Q, dtype=float)
    P = np.asarray(prior, dtype=float)
    k, m = Q.shape
    ldp = 0.0
    for y in range(m):
        q = Q[:, y]
        ldp = max(ldp, _max_log_ratio(q[:, None] * np.ones(k)[None, :], np.ones(k)[:, None] * q[None, :]))
    py = P @ Q
    sup = P > 0
    lip_up = _max_log_ratio(Q[sup], np.broadcast_to(py, Q[sup].shape))
    lip_dn = _max_log_ratio(np.broadcast_to(py, Q[sup].shape), Q[sup])
    lip = max(lip_up, lip_dn)
    with np.errstate(divide="ignore", invalid="ignore"):
        joint = P[:, None] * Q
        mask = joint > 0
        mi = float(np.sum(joint[mask] * np.log((Q / np.where(py > 0, py, 1)[None, :])[mask])))
    mil = float(math.log(np.sum(Q[sup].max(axis=0))))
    di = 0.0
    for y in range(m):
        j = joint[:, y][sup]
        di = max(di, _max_log_ratio(j[:, None] * np.ones(len(j))[None, :], np.ones(len(j))[:, None] * j[None, :]))
    return Leakage(ldp, lip, mi, mil, di)
