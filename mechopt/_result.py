"""One frozen result type for every solve."""

from __future__ import annotations

from dataclasses import dataclass, field

from ._mechanism import Mechanism
from ._verify import Certificate


@dataclass(frozen=True)
class SolveResult:
    """The outcome of :func:`mechopt.solve`.

    Attributes
    ----------
    status : str
        ``"optimal"`` (global optimum, verified), ``"feasible"`` (verified, optimality
        not proven: see ``gap``), ``"infeasible"``, ``"error"``.
    mechanism : Mechanism or None
        The exported, exactly verified mechanism (None unless status is optimal or
        feasible).
    objective : float or None
        Objective of the exported (repaired) channel, in the objective's units (mutual
        information in nats; see ``docs/formats.md``).
    bound : float or None
        A proven bound on the optimum (LP value or dual bound).
    gap : float or None
        ``|objective - bound|``: includes the cost of the repair.
    certificate : Certificate
        The exact verification of the exported matrix. With no mechanism (status
        ``infeasible`` or ``error``) a certificate with ``verified = False``, no checks,
        ``method = "none"`` and the reason in ``detail``: ``r.certificate.verified`` is
        always safe to read.
    timings : dict
        Seconds per phase.
    message : str
        What went wrong, or a note.
    stats : dict
        Problem sizes, back-end, repair ``t`` and its cost.
    """

    status: str
    mechanism: Mechanism | None
    objective: float | None
    bound: float | None
    gap: float | None
    certificate: Certificate | None  # None is replaced by an unverified certificate (__post_init__)
    timings: dict = field(default_factory=dict)
    message: str = ""
    stats: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.certificate is None:  # nothing was verified: say so instead of None
            why = f"no mechanism was exported (status {self.status})" + (f": {self.message}" if self.message else "")
            object.__setattr__(self, "certificate", Certificate(False, False, (), "none", why))

    @property
    def ok(self) -> bool:
        return self.status in ("optimal", "feasible") and self.mechanism is not None

    def summary(self) -> str:
        """One line for the terminal."""
        if not self.ok:
            return f"{self.status}: {self.message}"
        from ._units import objective_unit

        t = self.timings.get("total", 0.0)
        gap = "n/a" if self.gap is None else f"{self.gap:.3g}"
        bound = "none proven" if self.bound is None else f"{self.bound:.10g}"
        m = self.mechanism
        unit = objective_unit(m.objective)
        outputs = m.output_summary() if hasattr(m, "output_summary") else f"{len(m.outputs)} outputs"
        return (f"{self.status}: {m.objective['kind']} = {self.objective:.10g} [{unit}] (bound {bound}, gap {gap}); "
                f"{len(m.inputs)} inputs x {outputs}; verified exactly; {t:.2f} s{self._how()}")

    def _how(self) -> str:
        """`` (method ipm, 1 BLAS thread)``: the route that ran and the threads it had, when known."""
        parts = []
        if isinstance(self.stats.get("method"), str):
            parts.append(f"method {self.stats['method']}")
        if isinstance(self.stats.get("incumbent"), str):  # the export is (or equals) a standard mechanism
            parts.append(self.stats["incumbent"])
        n = self.stats.get("blas_threads")
        if isinstance(n, int):
            parts.append(f"{n} BLAS thread{'s' if n != 1 else ''}")
        return f" ({', '.join(parts)})" if parts else ""
