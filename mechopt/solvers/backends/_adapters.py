"""LP back-ends as adapters: a name, capabilities, a lazy import and a status map.

The embedded default is HiGHS through :func:`scipy.optimize.linprog` (interior point
for large problems, dual simplex for small ones). Any LP solver cvxpy knows can be
used through the ``cvxpy:NAME`` adapter.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ..._errors import InputError


@dataclass(frozen=True)
class LPSolution:
    """What an adapter returns: our status, primal x, equality duals, objective."""

    status: str  # "optimal" | "infeasible" | "unbounded" | "error"
    x: np.ndarray | None
    eq_duals: np.ndarray | None
    objective: float | None
    message: str = ""
    backend: str = ""
    ub_duals: np.ndarray | None = None  # marginals of the <= rows (<= 0 for a minimisation)


class HighsAdapter:
    """HiGHS via :func:`scipy.optimize.linprog`.

    ``method`` is ``"highs-ipm"`` (interior point with crossover), ``"highs-ds"``
    (dual simplex) or ``"highs"`` (HiGHS chooses).
    """

    #: scipy's linprog status codes -> ours
    STATUS_MAP = {0: "optimal", 1: "error", 2: "infeasible", 3: "unbounded", 4: "error"}
    capabilities = frozenset({"lp", "duals", "sparse", "milp", "vertex"})

    #: feasibility and optimality tolerance asked of HiGHS (below)
    accuracy = 1e-9

    def __init__(self, method: str = "highs"):
        self.method = method
        self.name = method

    def solve(self, c, A_ub=None, b_ub=None, A_eq=None, b_eq=None, bounds=(0, None), *, time_limit=None,
              presolve: bool = True) -> LPSolution:
        from scipy.optimize import linprog

        # HiGHS accepts violations up to 1e-7 by default: far above a small budget's
        # slack (e^1e-9 - 1), which mixing then cannot repair. Ask for 1e-10.
        options = {"presolve": presolve, "primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
        if time_limit:
            options["time_limit"] = float(time_limit)
        res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method=self.method,
                      options=options)
        status = self.STATUS_MAP.get(res.status, "error")
        duals = ub_duals = None
        if status == "optimal" and getattr(res, "eqlin", None) is not None:
            duals = np.asarray(res.eqlin.marginals, dtype=float)
        if status == "optimal" and getattr(res, "ineqlin", None) is not None:
            ub_duals = np.asarray(res.ineqlin.marginals, dtype=float)
        return LPSolution(status, res.x if status == "optimal" else None, duals,
                          float(res.fun) if status == "optimal" else None, str(res.message), self.name, ub_duals)


    def solve_milp(self, c, A_ub, b_ub, A_eq, b_eq, bounds, integrality, *, time_limit=None) -> LPSolution:
        """Mixed-integer LP through :func:`scipy.optimize.milp` (HiGHS branch and bound)."""
        from scipy.optimize import Bounds, LinearConstraint, milp

        cons = []
        if A_ub is not None and A_ub.shape[0]:
            cons.append(LinearConstraint(A_ub, -np.inf, b_ub))
        if A_eq is not None and A_eq.shape[0]:
            cons.append(LinearConstraint(A_eq, b_eq, b_eq))
        lo, hi = _bounds_arrays(bounds, len(c))
        options = {"mip_rel_gap": 1e-9}
        if time_limit:
            options["time_limit"] = float(time_limit)
        with _quiet_stdout():  # HiGHS's MIP solver prints debugging lines on the C-level stdout
            res = milp(c, constraints=cons, integrality=integrality, bounds=Bounds(lo, hi), options=options)
        status = {0: "optimal", 1: "error", 2: "infeasible", 3: "unbounded", 4: "error"}.get(res.status, "error")
        if status != "optimal":
            return LPSolution(status, None, None, None, str(res.message), "highs-milp")
        return LPSolution("optimal", res.x, None, float(res.fun), str(res.message), "highs-milp")


class CvxpyAdapter:
    """Any LP solver known to cvxpy (``cvxpy:CLARABEL``, ``cvxpy:SCS``, ``cvxpy:HIGHS``...)."""

    STATUS_MAP = {"optimal": "optimal", "optimal_inaccurate": "optimal", "infeasible": "infeasible",
                  "infeasible_inaccurate": "infeasible", "unbounded": "unbounded",
                  "unbounded_inaccurate": "unbounded"}
    capabilities = frozenset({"lp", "duals"})

    #: first-order solvers stop at about 1e-4 relative; interior point ones near 1e-8
    LOOSE = frozenset({"SCS", "OSQP"})

    def __init__(self, solver: str):
        self.solver = solver.upper()
        self.name = f"cvxpy:{self.solver}"
        self.accuracy = 1e-4 if self.solver in self.LOOSE else 1e-7

    def solve(self, c, A_ub=None, b_ub=None, A_eq=None, b_eq=None, bounds=(0, None), *, time_limit=None,
              presolve: bool = True) -> LPSolution:
        import cvxpy as cp

        n = len(c)
        x = cp.Variable(n)
        cons = []
        lo, hi = _bounds_arrays(bounds, n)
        fin_lo = np.isfinite(lo)
        fin_hi = np.isfinite(hi)
        if fin_lo.any():
            cons.append(x[np.flatnonzero(fin_lo)] >= lo[fin_lo])
        if fin_hi.any():
            cons.append(x[np.flatnonzero(fin_hi)] <= hi[fin_hi])
        ub = None
        if A_ub is not None and A_ub.shape[0]:
            ub = sp.csr_matrix(A_ub) @ x <= b_ub
            cons.append(ub)
        eq = None
        if A_eq is not None and A_eq.shape[0]:
            eq = sp.csr_matrix(A_eq) @ x == b_eq
            cons.append(eq)
        prob = cp.Problem(cp.Minimize(np.asarray(c) @ x), cons)
        try:
            prob.solve(solver=self.solver)
        except cp.error.SolverError as err:
            return LPSolution("error", None, None, None, str(err), self.name)
        status = self.STATUS_MAP.get(prob.status, "error")
        if status != "optimal":
            return LPSolution(status, None, None, None, str(prob.status), self.name)
        duals = -np.asarray(eq.dual_value, dtype=float) if eq is not None and eq.dual_value is not None else None
        ub_duals = None
        if ub is not None and ub.dual_value is not None:
            ub_duals = -np.asarray(ub.dual_value, dtype=float)
        return LPSolution("optimal", np.asarray(x.value, dtype=float), duals, float(prob.value), "", self.name,
                          ub_duals)


@contextlib.contextmanager
def _quiet_stdout():
    """Silence file descriptor 1 (C-level writes) for the duration; Python's stdout is flushed first."""
    import os
    import sys

    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # no real descriptor (captured): nothing to silence
        yield
        return
    sys.stdout.flush()
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), fd)
            yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def _bounds_arrays(bounds, n):
    if isinstance(bounds, tuple):
        lo = np.full(n, -np.inf if bounds[0] is None else bounds[0], dtype=float)
        hi = np.full(n, np.inf if bounds[1] is None else bounds[1], dtype=float)
        return lo, hi
    b = np.asarray(bounds, dtype=float)
    return np.where(np.isnan(b[:, 0]), -np.inf, b[:, 0]), np.where(np.isnan(b[:, 1]), np.inf, b[:, 1])


@dataclass(frozen=True)
class LinearProgram:
    """One LP (or MILP) as a value: ``min c·x`` s.t. ``A_ub x <= b_ub``, ``A_eq x = b_eq``, bounds.

    ``integrality`` (1 = integer) makes it a MILP. Built once by a solver module and
    handed to any adapter: ``lp.solve(choose(...))``.

    Examples
    --------
    >>> import numpy as np
    >>> lp = LinearProgram(np.array([1.0, 2.0]), A_eq=np.ones((1, 2)), b_eq=np.ones(1))
    >>> sol = lp.solve(choose())
    >>> sol.status, sol.x.round(12).tolist(), float(sol.eq_duals[0])
    ('optimal', [1.0, 0.0], 1.0)
    """

    c: np.ndarray
    A_ub: object = None
    b_ub: np.ndarray | None = None
    A_eq: object = None
    b_eq: np.ndarray | None = None
    bounds: object = (0, None)
    integrality: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.c)

    @property
    def is_milp(self) -> bool:
        return self.integrality is not None and bool(np.any(self.integrality))

    def solve(self, adapter=None, **options) -> LPSolution:
        adapter = adapter if adapter is not None else choose(milp=self.is_milp, size=self.n)
        if self.is_milp:
            return adapter.solve_milp(self.c, self.A_ub, self.b_ub, self.A_eq, self.b_eq, self.bounds,
                                      self.integrality, **options)
        return adapter.solve(self.c, self.A_ub, self.b_ub, self.A_eq, self.b_eq, self.bounds, **options)


@dataclass(frozen=True)
class BackendInfo:
    """A registered back-end: how to build it and what it can do.

    ``capabilities``: ``lp``, ``duals`` (equality and inequality marginals), ``sparse``
    (takes scipy sparse matrices without densifying), ``milp``, ``vertex`` (returns a
    basic solution: few nonzeros). ``tight``: feasibility tolerances of 1e-10 or below
    (the labeled LP's small budgets need them; others are fine for bounds, whose safety
    comes from :mod:`mechopt.solvers.backends._safe_bound`, not from the solver).
    """

    name: str
    factory: Callable[[], object]
    capabilities: frozenset
    tight: bool
    description: str = ""


_REGISTRY: dict[str, BackendInfo] = {}


def register_backend(name: str, factory: Callable[[], object], capabilities, *, tight: bool,
                     description: str = "") -> None:
    """Add a back-end under ``name`` (the ``backend=`` option and ``--backend`` read it)."""
    _REGISTRY[name] = BackendInfo(name, factory, frozenset(capabilities), tight, description)


register_backend("highs", lambda: HighsAdapter("highs"), {"lp", "duals", "sparse", "milp", "vertex"}, tight=True,
                 description="HiGHS through scipy, HiGHS chooses simplex or interior point")
register_backend("highs-ipm", lambda: HighsAdapter("highs-ipm"), {"lp", "duals", "sparse", "milp", "vertex"},
                 tight=True, description="HiGHS interior point with crossover")
register_backend("highs-ds", lambda: HighsAdapter("highs-ds"), {"lp", "duals", "sparse", "milp", "vertex"},
                 tight=True, description="HiGHS dual simplex")

BACKENDS = tuple(_REGISTRY)

#: above this many variables the default LP method is interior point (measured: the
#: labeled LP at k = 40 solves 3x faster with IPM + crossover than with dual simplex)
IPM_FROM = 1000


def installed_backends() -> list[str]:
    """The registered back-ends, then ``cvxpy:SOLVER`` for each LP solver cvxpy has installed."""
    names = list(_REGISTRY)
    try:
        import cvxpy as cp
    except ImportError:  # pragma: no cover - cvxpy is a dependency
        return names
    lp_solvers = {"CLARABEL", "ECOS", "SCS", "GLPK", "CBC", "CVXOPT", "HIGHS", "OSQP", "PIQP"}
    return names + [f"cvxpy:{s}" for s in sorted(cp.installed_solvers()) if s in lp_solvers and s != "OSQP"]


def choose(requested: str = "auto", *, size: int = 0, milp: bool = False, vertex: bool = False,
           retry: bool = False):
    """The one policy that picks an adapter (labeled LP, MILP, ray LP, design, bounds).

    ``requested`` other than ``"auto"`` is honoured (and checked for the capabilities
    asked for); ``"auto"`` takes HiGHS: interior point above :data:`IPM_FROM` variables,
    else HiGHS's own choice; ``vertex=True`` asks for dual simplex (a basic solution);
    ``retry=True`` gives the method the first attempt did not use.

    Examples
    --------
    >>> choose(size=5000).name, choose(size=10).name, choose(vertex=True).name
    ('highs-ipm', 'highs', 'highs-ds')
    >>> choose(size=5000, retry=True).name
    'highs-ds'
    """
    if requested != "auto" and not retry:
        adapter = get_backend(requested)
        need = {"milp"} if milp else set()
        missing = need - set(getattr(adapter, "capabilities", ()))
        if missing:
            return get_backend("highs")  # MILP: HiGHS whatever LP back-end was asked for
        return adapter
    if retry:
        return get_backend("highs-ds" if size > IPM_FROM else "highs-ipm")
    if vertex:
        return get_backend("highs-ds")
    return get_backend("highs-ipm" if size > IPM_FROM else "highs")


def get_backend(name: str = "highs"):
    """Return an LP adapter by name: a registered one (``highs``, ``highs-ipm``, ``highs-ds``) or ``cvxpy:SOLVER``."""
    if name in _REGISTRY:
        return _REGISTRY[name].factory()
    if name.startswith("cvxpy:"):
        solver = name.split(":", 1)[1]
        import cvxpy as cp

        if solver.upper() not in cp.installed_solvers():
            raise InputError("backend", f"cvxpy has no installed solver {solver!r}; installed: "
                             f"{sorted(cp.installed_solvers())}")
        return CvxpyAdapter(solver)
    raise InputError("backend", f"unknown back-end {name!r}; expected one of {list(_REGISTRY)} or 'cvxpy:SOLVER'")


#: the cvxpy solver tried last when every HiGHS method failed (interior point, no HiGHS code)
RETRY_CVXPY = "CLARABEL"


def retry_order(requested: str = "auto", *, size: int = 0, cvxpy: bool = True) -> list[str]:
    """The back-ends to try, in order, for an LP: the one asked for (or the default), then the others.

    A HiGHS failure ("HiGHS Status 15: model_status is Unknown" on a ray LP whose rays
    hold e^58 next to 1) is often one method's: interior point solves what simplex
    could not, or the reverse. After the HiGHS methods comes ``cvxpy:CLARABEL`` when it
    is installed (``cvxpy=False`` leaves it out). Names are those of :func:`get_backend`.

    Examples
    --------
    >>> retry_order(cvxpy=False)
    ['highs', 'highs-ipm', 'highs-ds']
    >>> retry_order(size=5000, cvxpy=False)
    ['highs-ipm', 'highs-ds', 'highs']
    >>> retry_order("highs-ds", cvxpy=False)
    ['highs-ds', 'highs-ipm', 'highs']
    """
    if requested == "auto":
        first = "highs-ipm" if size > IPM_FROM else "highs"
    else:
        first = requested
    order = [first] + [b for b in ("highs-ipm", "highs-ds", "highs") if b != first]
    if cvxpy:
        name = f"cvxpy:{RETRY_CVXPY}"
        try:
            import cvxpy as cp

            if RETRY_CVXPY in cp.installed_solvers() and name != first:
                order.append(name)
        except ImportError:  # pragma: no cover - cvxpy is a dependency
            pass
    return order


def solve_with_retry(attempt: Callable[[str], object], order: list[str]):
    """Call ``attempt(backend)`` for each back-end of ``order`` until one answers ``status == "optimal"``.

    Returns ``(result, backend, failures)``: the first optimal result (or the last
    failure), the back-end that gave it, and ``(backend, message)`` of each failed try.
    :func:`retry_note` says in one phrase what happened.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> answers = {"highs": NS(status="error", message="Status 15"), "highs-ipm": NS(status="optimal", message="")}
    >>> res, used, failed = solve_with_retry(answers.get, ["highs", "highs-ipm"])
    >>> used, failed
    ('highs-ipm', [('highs', 'Status 15')])
    >>> retry_note("the ray LP", failed, used, res.status == "optimal")
    'the ray LP failed on highs (Status 15); retried on highs-ipm, which solved it'
    """
    failures: list[tuple[str, str]] = []
    res, used = None, order[0]
    for name in order:
        res, used = attempt(name), name
        if res.status == "optimal":
            break
        failures.append((name, str(getattr(res, "message", "") or res.status)))
    return res, used, failures


def retry_note(what: str, failures: list[tuple[str, str]], used: str, solved: bool) -> str:
    """One phrase for the message: which back-ends failed, and which one produced the answer."""
    if not failures:
        return ""
    tried = "; ".join(f"{name} ({msg})" for name, msg in failures)
    if solved:
        return f"{what} failed on {tried}; retried on {used}, which solved it"
    return f"{what} failed on every back-end tried: {tried}"


# -- persistent HiGHS models (warm-started masters and pricing LPs) ----------------------------


def new_highs(**options):
    """A silent ``highspy.Highs`` with ``options`` set, and the ``highspy`` module (its enums).

    For the solvers that keep one model between solves (column-generation masters that
    add columns, pricing LPs whose costs change) and warm-start it from its basis. The
    first construction prints a banner on the C-level stdout: it is silenced. Raises
    ``ImportError`` without highspy.
    """
    import os
    import sys

    import highspy

    sys.stdout.flush()
    try:
        fd = os.dup(1)
    except OSError:
        h = highspy.Highs()
    else:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 1)
            h = highspy.Highs()
        finally:
            os.dup2(fd, 1)
            os.close(fd)
            os.close(null)
    h.setOptionValue("output_flag", False)
    for name, value in options.items():
        h.setOptionValue(name, value)
    return h, highspy
