"""Figures drawn from solver results (matplotlib, Agg back-end: no screen needed).

* :func:`tradeoff` / :func:`tradeoff_plot` — utility against ε under the problem's own
  notions and under their LDP counterpart (like Jiang, Li, Tandon Fig. 5–6 and Jiang
  et al. Fig. 11).
* :func:`plot_mechanism` — a channel as a heat map.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from ._errors import InputError
from ._notions import LDP, Notion
from ._problem import Problem, load_problem


def parse_epsilons(spec: str | list) -> np.ndarray:
    """``"0.5:5:0.5"`` (start:stop:step, stop included) or ``"0.5,1,2"`` or a list."""
    if isinstance(spec, (list, tuple, np.ndarray)):
        vals = [float(v) for v in spec]
    else:
        try:
            if ":" in spec:
                a, b, s = (float(t) for t in spec.split(":"))
                if s <= 0 or b < a:
                    raise ValueError
                n = int(math.floor((b - a) / s + 1e-9)) + 1
                vals = [a + i * s for i in range(n)]
            else:
                vals = [float(t) for t in spec.split(",") if t.strip()]
        except ValueError:
            raise InputError("epsilons", f"must be start:stop:step with step > 0, or a comma list, got {spec!r}") from None
    if not vals or any((not math.isfinite(v)) or v < 0 for v in vals):
        raise InputError("epsilons", f"must be finite numbers >= 0, got {spec!r}")
    return np.array(vals)


def _with_epsilon(n: Notion, eps: float) -> Notion:
    if hasattr(n, "epsilon"):
        return replace(n, epsilon=float(eps))
    return n


def tradeoff(problem: Problem | str | dict, epsilons, *, quiet: bool = True) -> dict:
    """Solve the problem at every ε, under its notions and under plain ε-LDP.

    Returns ``{"epsilons": [...], "curves": {label: [objective or nan, ...]}, "kind": ...}``.
    Notions without an ``epsilon`` (an E matrix) are kept as they are.
    """
    from ._solve import solve

    p = problem if isinstance(problem, Problem) else load_problem(problem)
    eps = parse_epsilons(epsilons)
    own = "+".join(n.name for n in p.notions)
    curves: dict[str, list[float]] = {own: [], "ldp": []}
    for e in eps:
        variants = {own: tuple(_with_epsilon(n, e) for n in p.notions), "ldp": (LDP(float(e)),)}
        for label, notions in variants.items():
            r = solve(replace(p, notions=notions), quiet=quiet)
            curves[label].append(r.objective if r.ok else float("nan"))
    if own == "ldp":
        curves.pop("ldp")
    return {"epsilons": eps.tolist(), "curves": curves, "kind": p.objective.kind}


def tradeoff_plot(problem: Problem | str | dict, epsilons, png: str | Path) -> dict:
    """Draw :func:`tradeoff` as a PNG; returns the data drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = tradeoff(problem, epsilons)
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    for label, ys in data["curves"].items():
        ax.plot(data["epsilons"], ys, marker="o", label=f"optimal under {label}")
    ax.set_xlabel("privacy budget ε")
    ax.set_ylabel(data["kind"])
    ax.set_title("utility–privacy trade-off (solver optima)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)
    return data


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
