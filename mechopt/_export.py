"""The last step of ``solve``: tidy the verified channel for export, record what it can tell.

1. **Negligible outputs are dropped** (free outputs only: a labeled output is a label of
   the problem and stays). An output whose total mass (its column summed over the
   inputs) is below :data:`DROP_MASS` = 1e-12 is never reported in practice (a client
   would see it once in 10^12 reports); it only clutters the file and every client.
   Every privacy notion constrains each column on its own, so removing a column cannot
   break privacy; the rows then sum to 1 − (the dropped mass), within the format's
   1e-12. The smaller matrix is verified again, exactly, and the drop is kept only if it
   passes; the certificate records it (``dropped_outputs``). (Outputs of larger but
   still negligible mass left by an interior-point solver are pruned earlier, with the
   risk re-checked: :func:`mechopt.solvers.design._convex.prune_small_outputs`.)
2. **Identifiability is recorded.** The certificate gets ``identifiability``
   (``identifiable``, ``rank``, ``merged_inputs``); when the reports cannot identify the
   input distribution, :func:`finalize_export` warns (:class:`IdentifiabilityWarning`)
   and ``mechopt solve`` prints one line: ``mechopt estimate`` will refuse such a
   mechanism unless asked for a Bayesian (``--method mmse``) estimate.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np

from ._identifiability import IdentifiabilityWarning, identifiability
from .objectives import evaluate
from ._problem import Problem
from ._result import SolveResult
from ._verify import verify

#: outputs whose column sums to less than this are dropped before export
DROP_MASS = 1e-12
#: at most this much mass, summed over the dropped outputs, leaves every row within 1e-12 of 1
_DROP_BUDGET = 5e-13


def _caller_level() -> int:
    """The ``stacklevel`` that points a warning at the first frame outside mechopt."""
    import os
    import sys

    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def finalize_export(problem: Problem, result: SolveResult) -> SolveResult:
    """Drop negligible outputs (re-verified exactly) and record identifiability.

    Parameters
    ----------
    problem : Problem
        The problem solved.
    result : SolveResult
        A result of :func:`mechopt.solve` (returned unchanged unless ``ok``).

    Returns
    -------
    SolveResult
        With the pruned mechanism, its new exact certificate, objective and gap.

    Warns
    -----
    IdentifiabilityWarning
        When the exported channel cannot identify the input distribution.

    Examples
    --------
    The quickstart problem: the optimum never reports the bar (the repair's constant
    channel left 1e-14 there; a labeled output is kept), so it cannot tell the bar's
    share either.

    >>> import warnings, mechopt
    >>> quickstart = {"inputs": ["home", "work", "gym", "bar"], "outputs": "inputs",
    ...     "privacy": [{"notion": "high_low", "epsilon": 1.0, "sensitive": ["bar"]},
    ...                 {"notion": "ldp", "epsilon": 2.0}],
    ...     "objective": {"kind": "expected_loss", "prior": [0.4, 0.3, 0.2, 0.1]}}
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     r = mechopt.solve(quickstart, quiet=True)
    >>> r.mechanism.certificate["identifiability"]
    {'identifiable': False, 'rank': 3, 'merged_inputs': []}
    """
    if not result.ok:
        return result
    mech = result.mechanism
    Q = mech.matrix
    cert = dict(mech.certificate)
    objective = dict(mech.objective)
    certificate = result.certificate
    value, gap = result.objective, result.gap
    outputs = tuple(mech.outputs)
    mass = Q.sum(axis=0)
    order = [j for j in np.argsort(mass, kind="stable") if mass[j] < DROP_MASS]
    chosen, total = [], 0.0
    for j in order:
        if total + mass[j] > _DROP_BUDGET:
            break
        chosen.append(int(j))
        total += float(mass[j])
    if chosen and len(chosen) < Q.shape[1] and problem.free_outputs:
        keep = np.ones(Q.shape[1], bool)
        keep[chosen] = False
        Qd = Q[:, keep]
        check = verify(Qd, list(problem.notions))
        if check.verified:
            new_value = float(evaluate(problem.objective, Qd))
            if math.isfinite(new_value):
                new_outputs = tuple(f"y{j}" for j in range(Qd.shape[1]))
                repair = {k2: cert[k2] for k2 in ("repair_t", "repair_cost") if k2 in cert}
                cert = {**check.to_dict(), **repair,
                        "dropped_outputs": {"count": len(chosen), "mass": total,
                                            "labels": [outputs[j] for j in sorted(chosen)],
                                            "rule": f"total mass below {DROP_MASS:g}"}}
                certificate, Q, outputs, value = check, Qd, new_outputs, new_value
                if objective.get("bound") is not None:
                    gap = abs(value - objective["bound"])
                objective.update(value=value, gap=gap)
    ident = identifiability(Q)
    cert["identifiability"] = ident.to_dict(problem.inputs)
    message = result.message
    if not ident.identifiable:
        note = (f"the channel cannot identify the input distribution: {ident.describe(problem.inputs)}; "
                f"{ident.next_step()}")
        warnings.warn(note, IdentifiabilityWarning, stacklevel=_caller_level())
        message = f"{message}; {note}" if message else note
    new_mech = replace(mech, outputs=outputs, matrix=Q, objective=objective, certificate=cert)
    return replace(result, mechanism=new_mech, objective=value, gap=gap, certificate=certificate, message=message)
