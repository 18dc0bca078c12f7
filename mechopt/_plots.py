"""Figures drawn from solver results (matplotlib, Agg back-end: no screen needed).

* :func:`tradeoff` / :func:`tradeoff_plot` — utility against a multiplier of every
  budget or against one notion's ε, with the standard mechanisms as baselines (like
  Jiang, Li, Tandon Fig. 5–6 and Jiang et al. Fig. 11).
* :func:`plot_mechanism` — a channel as a heat map.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from ._errors import InputError
from ._validation import check_epsilons
from .notions import ELDP, LDP
from ._problem import Problem, load_problem


#: the most points a trade-off grid may have (each is a solve)
MAX_GRID = 1000


def parse_epsilons(spec: str | list, *, field: str = "epsilons") -> np.ndarray:
    """``"0.5:5:0.5"`` (start:stop:step, stop included) or ``"0.5,1,2"`` or a list."""
    if isinstance(spec, (list, tuple, np.ndarray)):
        # numbers are checked by check_epsilons (an integer beyond float range is one line, not
        # an OverflowError); a numeric string is read as before
        try:
            vals = [float(v) if isinstance(v, str) else v for v in spec]
        except ValueError:
            raise InputError(field, f"must be a list of numbers, got {list(spec)!r}") from None
    else:
        try:
            if ":" in spec:
                a, b, s = (float(t) for t in spec.split(":"))
                if s <= 0 or b < a:
                    raise ValueError
                n = int(math.floor((b - a) / s + 1e-9)) + 1
                if n > MAX_GRID:
                    raise InputError(field, f"{spec!r} gives {n} points; at most {MAX_GRID} are solved "
                                     "(use a coarser step)")
                vals = [a + i * s for i in range(n)]
            else:
                vals = [float(t) for t in spec.split(",") if t.strip()]
        except ValueError:
            raise InputError(field, f"must be start:stop:step with step > 0, or a comma list, got {spec!r}") from None
    if len(vals) > MAX_GRID:
        raise InputError(field, f"gives {len(vals)} points; at most {MAX_GRID} are solved (use a coarser step)")
    return np.array(check_epsilons(vals, field))


#: the default grid of the multiplier axis (``mechopt tradeoff`` without --scale or --epsilons)
DEFAULT_SCALE = "0.25:2:0.25"


def _scaled_spec(notion, inputs, factor: float | None, epsilon: float | None) -> dict:
    """A notion's problem-file entry with its budget multiplied by ``factor`` or set to ``epsilon``."""
    out = notion.to_spec(inputs)
    if "epsilon" in out:
        e = out["epsilon"]
        if factor is not None:
            out["epsilon"] = e if isinstance(e, str) else float(e) * factor
        else:
            out["epsilon"] = float(epsilon)
    elif isinstance(notion, ELDP):
        if factor is None:
            raise InputError("notion", "an eldp notion has no single epsilon to set; scale its matrix with --scale")
        out["matrix"] = [[v if isinstance(v, str) else float(v) * factor for v in row] for row in out["matrix"]]
    return out


def _pick_notion(p: Problem, notion: str | int | None) -> int:
    with_eps = [i for i, n in enumerate(p.notions) if "epsilon" in n.to_spec(p.inputs)]
    if notion is None:
        if len(with_eps) == 1:
            return with_eps[0]
        names = [p.notions[i].name for i in with_eps] or [n.name for n in p.notions]
        raise InputError("notion", f"the problem has {len(with_eps)} notions with an epsilon ({names!r}); "
                                   "name the one to vary (--notion NAME) or scale all budgets (--scale)")
    if isinstance(notion, int) or (isinstance(notion, str) and notion.isdigit()):
        i = int(notion)
        if not 0 <= i < len(p.notions):
            raise InputError("notion", f"index {i} is not a notion of the problem (0..{len(p.notions) - 1})")
        matches = [i]
    else:
        matches = [i for i, n in enumerate(p.notions) if n.name == notion]
        if not matches:
            raise InputError("notion", f"{notion!r} is not a notion of the problem; its notions are "
                                       f"{[n.name for n in p.notions]!r}")
        if len(matches) > 1:
            raise InputError("notion", f"{notion!r} appears {len(matches)} times; give its index "
                                       f"(0..{len(p.notions) - 1}) instead")
    if matches[0] not in with_eps:
        raise InputError("notion", f"notion {p.notions[matches[0]].name!r} has no single epsilon; use --scale")
    return matches[0]


def _variant(p: Problem, *, factor: float | None = None, index: int | None = None,
             epsilon: float | None = None) -> Problem:
    from .notions import notion_from_spec

    specs = [n.to_spec(p.inputs) for n in p.notions]
    if factor is not None:
        specs = [_scaled_spec(n, p.inputs, factor, None) for n in p.notions]
    else:
        specs[index] = _scaled_spec(p.notions[index], p.inputs, None, epsilon)
    notions = tuple(notion_from_spec(s, p.inputs, f"privacy[{i}]") for i, s in enumerate(specs))
    return replace(p, notions=notions)


def tradeoff(problem: Problem | str | dict, epsilons=None, *, scale=None, notion: str | int | None = None,
             baselines: bool = True, quiet: bool = True, progress=None, time_limit: float | None = None) -> dict:
    """Solve the problem along a privacy axis; the data of ``mechopt tradeoff``.

    Two axes:

    * **multiplier** (``scale``, the default): every budget of the problem is multiplied
      by ``t`` (an E matrix entrywise); ``t = 1`` is the problem itself, so a design with
      high-low 1 and LDP 3 sits on its own curve;
    * **epsilon** (``epsilons``): one notion's ε (``notion``: its name or index; optional
      when only one notion has an ε) takes each value, the others stay. A curve "ldp"
      adds the optimum under plain ε-LDP at the same ε, unless the notion is LDP.

    At every point the solver's optimum is drawn, and where they apply and meet the
    (scaled) notions exactly, the standard mechanisms of :mod:`mechopt.closed_forms`
    (k-RR, Warner, uRR, Hadamard response, LIP RR, …) as baselines.

    Parameters
    ----------
    problem : Problem, dict or path
    epsilons : str or sequence, optional
        ``"start:stop:step"`` (stop included), ``"0.5,1,2"`` or a list of ε.
    scale : str or sequence, optional, keyword-only
        Multipliers, same syntax; default :data:`DEFAULT_SCALE` when ``epsilons`` is not given.
    notion : str or int, optional, keyword-only
        The notion whose ε varies (``epsilons`` only).
    baselines : bool, keyword-only
        Also evaluate the standard mechanisms.
    quiet : bool, keyword-only
        No progress display while solving.
    progress : callable, optional, keyword-only
        Called after each point as ``progress(i, count, x, value, seconds)`` (``value``
        the optimum or nan); ``mechopt tradeoff`` prints one line per point with it.
    time_limit : float, optional, keyword-only
        Seconds for each solve (as :func:`mechopt.solve`'s ``time_limit``): a point then
        holds the best verified mechanism found in that time.

    Returns
    -------
    dict
        ``{"axis": "multiplier" | "epsilon", "x": [...], "epsilons": [...], "notion": name or None,
        "curves": {label: [objective or nan, ...]}, "kind", "unit", "xlabel", "ylabel"}``: the
        problem's own curve is labelled by its notions joined with ``+``; baselines are
        ``"baseline: <name>"``.

    Raises
    ------
    InputError
        For a malformed grid, both or neither axis chosen ambiguously, or an unknown notion.

    Examples
    --------
    >>> d = tradeoff({"k": 2, "outputs": "inputs", "privacy": [{"notion": "ldp", "epsilon": 1.0}],
    ...               "objective": {"kind": "expected_loss"}}, "1,2")
    >>> [round(v, 4) for v in d["curves"]["ldp"]]           # 1 / (1 + e^ε): Warner's RR is optimal
    [0.2689, 0.1192]
    >>> [round(v, 4) for v in d["curves"]["baseline: warner_rr"]]
    [0.2689, 0.1192]
    """
    import time
    import warnings

    from ._closed_form_report import baseline_values
    from ._identifiability import IdentifiabilityWarning
    from ._solve import solve
    from ._units import objective_unit

    p = problem if isinstance(problem, Problem) else load_problem(problem)
    if epsilons is not None and scale is not None:
        raise InputError("epsilons", "give either epsilons (one notion's budget) or scale (every budget), not both")
    own = "+".join(n.name for n in p.notions)
    if epsilons is not None:
        xs = parse_epsilons(epsilons)
        index = _pick_notion(p, notion)
        name = p.notions[index].name
        variants = [_variant(p, index=index, epsilon=float(e)) for e in xs]
        axis, xlabel = "epsilon", f"ε of {name} (privacy budget, nats)"
    else:
        if notion is not None:
            raise InputError("notion", "a notion is chosen only with epsilons; scale multiplies every budget")
        xs = parse_epsilons(DEFAULT_SCALE if scale is None else scale, field="scale")
        variants = [_variant(p, factor=float(t)) for t in xs]
        axis, name = "multiplier", None
        xlabel = "budget multiplier t (every ε of the problem × t; t = 1 is the problem)"
    curves: dict[str, list[float]] = {own: []}
    compare_ldp = axis == "epsilon" and own != LDP.name
    if compare_ldp:
        curves[LDP.name] = []
    base: dict[str, list[float]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentifiabilityWarning)
        for i, (x, v) in enumerate(zip(xs, variants)):
            started = time.perf_counter()
            r = solve(v, quiet=quiet, time_limit=time_limit)
            curves[own].append(r.objective if r.ok else float("nan"))
            if compare_ldp:
                r = solve(replace(p, notions=(LDP(float(x)),)), quiet=quiet, time_limit=time_limit)
                curves[LDP.name].append(r.objective if r.ok else float("nan"))
            if baselines:
                values = baseline_values(v)
                for label in values:
                    base.setdefault(label, [float("nan")] * i)
                for label, ys in base.items():
                    ys.append(values.get(label, float("nan")))
            if progress is not None:
                progress(i, len(xs), float(x), curves[own][-1], time.perf_counter() - started)
    curves.update({f"baseline: {k}": vals for k, vals in base.items()})
    unit = objective_unit(p.objective)
    return {"axis": axis, "x": xs.tolist(), "epsilons": xs.tolist(), "notion": name, "curves": curves,
            "kind": p.objective.kind, "unit": unit, "xlabel": xlabel, "ylabel": f"{p.objective.kind} ({unit})"}


def tradeoff_plot(problem: Problem | str | dict, epsilons=None, png: str | Path | None = None, *, scale=None,
                  notion: str | int | None = None, baselines: bool = True, logx: bool = False,
                  logy: bool = False, progress=None, time_limit: float | None = None) -> dict:
    """Draw :func:`tradeoff` as a PNG (optimum solid, baselines dashed); returns the data drawn.

    ``logx`` / ``logy`` put an axis on a log scale (``logy`` needs positive values: a
    mutual information of 0 at ε = 0 is not drawn).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if png is None:
        raise InputError("png", "a PNG file to write is required")
    data = tradeoff(problem, epsilons, scale=scale, notion=notion, baselines=baselines, progress=progress,
                    time_limit=time_limit)
    fig = tradeoff_figure(data, logx=logx, logy=logy)
    fig.savefig(png, bbox_inches="tight")
    plt.close(fig)
    return data


def _wrapped(label: str, width: int) -> str:
    """An axis label on lines of at most ``width`` characters (a long unit must not run off the figure)."""
    import textwrap

    return "\n".join(textwrap.wrap(label, width)) or label


def tradeoff_figure(data: dict, *, logx: bool = False, logy: bool = False):
    """The matplotlib figure of :func:`tradeoff_plot` for the data of :func:`tradeoff` (the caller closes it).

    Axis labels are wrapped to the axes' size, so a long unit stays inside the figure.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    for label, ys in data["curves"].items():
        if label.startswith("baseline: "):
            ax.plot(data["x"], ys, linestyle="--", marker=".", label=label)
        else:
            ax.plot(data["x"], ys, marker="o", label=f"optimal under {label}")
    if data["axis"] == "multiplier" and any(abs(x - 1.0) < 1e-12 for x in data["x"]):
        ax.axvline(1.0, color="grey", linestyle=":", linewidth=1)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(_wrapped(data["xlabel"], 80))
    ax.set_ylabel(_wrapped(data["ylabel"], 40))
    ax.set_title("utility–privacy trade-off (solver optima; dashed: standard mechanisms)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_mechanism(mechanism, png: str | Path) -> None:
    """Draw a mechanism (a :class:`Mechanism` or a file path) as a heat map."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ._mechanism import Mechanism

    m = mechanism if isinstance(mechanism, Mechanism) else Mechanism.load(mechanism)
    k, n = m.matrix.shape
    fig, ax = plt.subplots(figsize=(max(4, min(12, 0.4 * n + 2)), max(3, min(10, 0.4 * k + 1.5))), dpi=100)
    im = ax.imshow(m.matrix, cmap="viridis", aspect="auto", vmin=0, vmax=max(float(m.matrix.max()), 1e-12))
    if n <= 30:
        ax.set_xticks(range(n), m.outputs, rotation=90)
    if k <= 30:
        ax.set_yticks(range(k), m.inputs)
    ax.set_xlabel("output y")
    ax.set_ylabel("input x")
    claims = ", ".join(f"{p['notion']}" + (f" ε={p['epsilon']}" if "epsilon" in p else "") for p in m.privacy)
    ax.set_title(f"Q[x, y]  ({claims})", fontsize=9)
    fig.colorbar(im, ax=ax, label="probability")
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)
