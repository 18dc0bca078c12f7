"""``mechopt privatize`` and ``mechopt estimate`` for a family mechanism file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InputError
from ._estimate import count_reports, family_channel, subset_em, subset_inversion, subset_variance
from ._mechanism import FamilyMechanism
from ._spec import SubsetMixture


def privatize_family_file(mech_path: str | Path, input_path: str | Path, output_path: str | Path, *,
                          seed: int | None = None) -> int:
    """Privatize a file of input labels with a family mechanism (exact sampler, CSPRNG unless seeded).

    The file is read and its claims verified exactly by :meth:`FamilyMechanism.load` (the
    one path of every reader: a file ``mechopt verify`` refuses is refused here); every
    label is checked before anything is drawn.
    """
    from ..runtime._files import read_labels, refuse_unknown, write_atomically

    mech = FamilyMechanism.load(mech_path)
    sampler = mech.sampler(seed=seed)
    labels = read_labels(input_path, "input")
    index = {x: i for i, x in enumerate(mech.inputs)}
    refuse_unknown(input_path, labels, index, str(mech_path), "input")
    text = "".join(f"{sampler.sample_index(index[x])}\n" for x in labels)
    if str(output_path) == "-":  # standard output, as for a matrix file
        import sys

        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_atomically(Path(output_path), text, "output")
    return len(labels)


def estimate_family_file(mech_path: str | Path, reports_path: str | Path, *, method: str = "em") -> dict[str, Any]:
    """Estimate the input distribution from a file of reports of a family mechanism.

    Subset selection: ``inversion`` is the unbiased per-item estimator of
    :func:`mechopt.families.subset_inversion`, ``projected`` its projection on the
    simplex, ``em`` maximum likelihood started there. Hadamard response: the channel has
    at most ``2k`` outputs, so the matrix estimators of :mod:`mechopt.runtime` run on it.
    The result also holds ``variance`` (plug-in per-item variances of the unbiased
    estimator, and their sum ``risk``).
    """
    from ..runtime._files import read_labels, refuse_unknown
    from ..runtime._inference import ESTIMATE_METHODS
    from ..runtime._estimators import estimate_em, estimate_inversion, estimate_projected, project_simplex

    if method not in ESTIMATE_METHODS:
        raise InputError("method", f"must be one of {', '.join(ESTIMATE_METHODS)}, got {method!r}")
    mech = FamilyMechanism.load(mech_path)
    fam = mech.family
    labels = read_labels(reports_path, "reports")
    if not labels:
        raise InputError(str(reports_path), "contains no reports; the reports file must hold one output label per line")
    out: dict[str, Any] = {"n": len(labels), "method": method}
    if isinstance(fam, SubsetMixture):
        counts, packed = count_reports(fam, labels, str(reports_path))
        unbiased, var = subset_inversion(fam, counts)
        if method == "inversion":
            p = unbiased
        else:
            p = project_simplex(unbiased)
            if method == "em":
                p, gap = subset_em(fam, packed, p)
                out["em_gap"] = gap  # certified log-likelihood per report still to gain
            var = subset_variance(fam, counts, p)
    else:
        outs, Q = family_channel(fam)
        index = {y: j for j, y in enumerate(outs)}
        refuse_unknown(reports_path, labels, index, str(mech_path), "output")
        cnt = np.bincount([index[y] for y in labels], minlength=len(outs))
        p = {"em": estimate_em, "inversion": estimate_inversion, "projected": estimate_projected}[method](Q, cnt)
        var = None
    out["estimate"] = {x: float(v) for x, v in zip(mech.inputs, p)}
    if var is not None:
        out["variance"] = {"per_item": {x: float(v) for x, v in zip(mech.inputs, var)}, "risk": float(np.sum(var))}
    return out
