"""The report's figures: matplotlib (Agg) drawn into PNG bytes, embedded as ``data:`` URIs.

A PNG inside the page needs no network request and no namespace URL (an SVG written by
matplotlib names the W3C's), so the page stays self-contained.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def png_data_uri(draw) -> str:
    """``data:image/png;base64,…`` of what ``draw(buffer)`` writes (a PNG into a file object).

    Examples
    --------
    >>> png_data_uri(lambda buf: buf.write(b"\\x89PNG")).startswith("data:image/png;base64,iVBORw")
    True
    """
    buf = io.BytesIO()
    draw(buf)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _save(fig) -> str:
    plt = _pyplot()
    fig.tight_layout()
    try:
        return png_data_uri(lambda buf: fig.savefig(buf, format="png", bbox_inches="tight"))
    finally:
        plt.close(fig)


def heat_map(mechanism) -> str:
    """The channel as a heat map (:func:`mechopt.plot_mechanism`, the figure of ``mechopt plot``)."""
    from .._plots import plot_mechanism

    return png_data_uri(lambda buf: plot_mechanism(mechanism, buf))


def error_bars(labels: list[str], center: np.ndarray, lower: np.ndarray, upper: np.ndarray, title: str) -> str:
    """Each input's assumed frequency with the expected interval around it."""
    plt = _pyplot()
    k = len(labels)
    fig, ax = plt.subplots(figsize=(max(5.0, min(12.0, 0.35 * k + 3)), 3.6), dpi=100)
    x = np.arange(k)
    ax.errorbar(x, center, yerr=[center - lower, upper - center], fmt="o", capsize=3, markersize=4)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    if k <= 40:
        ax.set_xticks(x, labels, rotation=90 if k > 8 else 0)
    ax.set_xlabel("input x")
    ax.set_ylabel("frequency p(x)")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    return _save(fig)


def bars(names: list[str], values: list[float], own: int, xlabel: str, title: str) -> str:
    """Horizontal bars on one axis; bar ``own`` (this mechanism) is drawn in another colour."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, max(2.4, 0.38 * len(names) + 1.2)), dpi=100)
    y = np.arange(len(names))
    colors = ["#d62728" if i == own else "#1f77b4" for i in range(len(names))]
    ax.barh(y, values, color=colors)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    positive = [v for v in values if v > 0]
    if positive and max(positive) / min(positive) > 100:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3, axis="x")
    return _save(fig)


def curves(x: list[float], series: dict[str, list[Any]], xlabel: str, ylabel: str, title: str, *,
           logx: bool = True) -> str:
    """Lines over a common x (``None``, nan and infinite values are left out)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 4.0), dpi=100)
    for label, ys in series.items():
        pts = [(a, b) for a, b in zip(x, ys) if b is not None and np.isfinite(b)]
        if pts:
            ax.plot(*zip(*pts), marker="o", markersize=3, label=label)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig)


def stems(losses: np.ndarray, probs: np.ndarray, xlabel: str, title: str) -> str:
    """A probability mass function as stems (the privacy-loss distribution)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 3.6), dpi=100)
    ax.vlines(losses, 0, probs, color="#1f77b4")
    ax.plot(losses, probs, "o", markersize=3, color="#1f77b4")
    ax.axvline(0.0, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("probability")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    return _save(fig)
