"""Server-side estimates with standard errors and confidence intervals.

:func:`estimate_counts` turns report counts into an estimate of the input distribution
with a standard error and an interval per input:

* ``em`` (maximum likelihood, :func:`~mechopt.runtime.estimate_em`): covariance
  ``B J(p̂)⁻¹ Bᵀ / n`` from the Fisher information ``J`` at the estimate (the
  information-matrix form of ``docs/cli.md``; ``B = [I; −1ᵀ]``);
* ``inversion`` and ``projected``: the exact covariance of the linear inversion
  estimator, ``B P Σ Pᵀ Bᵀ`` with ``P`` the pseudo-inverse of ``Qᵀ B`` and
  ``Σ = (diag λ̂ − λ̂ λ̂ᵀ) / n`` at the observed output frequencies ``λ̂`` (for a square
  channel this is the inverse Fisher information at ``λ̂``);
* ``mmse`` (Bayesian, under a prior — 000 eq. 30): the posterior mean of the realised
  histogram of these ``n`` users and its posterior standard deviation
  ``√(Σ_y c_y π_y(a)(1 − π_y(a))) / n``, ``π_y`` the posterior of an input given report
  ``y``. The only method for a channel that cannot identify the distribution: where the
  reports say nothing, the prior decides — said in the notes.

Intervals are ``estimate ± z·se`` (``z`` the normal quantile of ``(1 + level)/2``),
clipped to [0, 1]. They rest on a normal approximation that fails near the boundary of
the simplex (an input with a true share near 0 or 1, where the ML estimate is
constrained): an input whose unclipped interval leaves [0, 1], or whose ML estimate is
0, is marked ``reliable = False`` and a note says why.

The frequentist methods never split unidentifiable mass silently: from a channel that
cannot identify the distribution they estimate the total mass of each group of inputs
the reports do identify (:mod:`mechopt.runtime._groups`: groups of identical rows, or
components of the null space), with an :class:`~mechopt._identifiability.IdentifiabilityWarning`,
and refuse (:class:`~mechopt._identifiability.NotIdentifiableError`, CLI exit code 3)
when no grouping short of all inputs is identifiable.
"""

from __future__ import annotations

import csv
import io
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from mechopt._errors import InputError
from mechopt._identifiability import IdentifiabilityWarning, identifiability, summarize_labels
from mechopt.objectives import fisher_information, simplex_basis
from mechopt.runtime._estimators import (
    _as_counts,
    _as_distribution,
    estimate_em,
    estimate_inversion,
    estimate_projected,
)
from mechopt.runtime._mmse import mmse_histogram
from mechopt.runtime._groups import group_estimate, plan_groups
from mechopt.runtime._postprocess import (BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, bootstrap, check_postprocess,
                                          check_resamples, inversion_rows)
from mechopt.runtime._postprocess import postprocess as _postprocess
from mechopt.runtime._sampling import as_channel

__all__ = ["ESTIMATE_METHODS", "Estimate", "estimate", "estimate_counts", "parse_counts_csv"]

#: Values accepted by ``method``.
ESTIMATE_METHODS = ("em", "inversion", "projected", "mmse")
_DESCRIPTION = {"em": "maximum likelihood (EM)", "inversion": "channel inversion (unbiased, may be negative)",
                "projected": "channel inversion projected onto the simplex",
                "mmse": "Bayesian posterior mean under a prior (000 eq. 30)"}


@dataclass(frozen=True)
class Estimate:
    """An estimate of the input distribution with its uncertainty.

    Attributes
    ----------
    labels : tuple of str
        Input labels.
    n : int
        Number of reports.
    method : str
        ``em``, ``inversion``, ``projected`` or ``mmse``.
    estimate : numpy.ndarray, shape (k,)
        Estimated probability of each input (sums to 1).
    standard_errors : numpy.ndarray, shape (k,)
    lower, upper : numpy.ndarray, shape (k,)
        Interval bounds, clipped to [0, 1].
    level : float
        Confidence (``mmse``: credibility) level.
    interval : str
        ``"wald (information matrix)"``, ``"wald (inversion covariance)"`` or
        ``"posterior (under the prior)"``.
    reliable : numpy.ndarray of bool, shape (k,)
        ``False`` where the normal approximation is not trustworthy (see module doc).
    notes : tuple of str
        Plain-language caveats.
    postprocess : str
        ``none``, ``simplex`` or ``norm-sub`` (:mod:`mechopt.runtime._postprocess`).
    groups : tuple of tuple of str
        When the channel merges inputs (identical rows): the inputs of each label, whose
        total mass is what was estimated (``labels`` are then group names,
        :func:`mechopt._identifiability.group_label`); empty otherwise.
    """

    labels: tuple[str, ...]
    n: int
    method: str
    estimate: np.ndarray
    standard_errors: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    level: float
    interval: str
    reliable: np.ndarray
    notes: tuple[str, ...] = field(default=())
    postprocess: str = "none"
    groups: tuple[tuple[str, ...], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``mechopt estimate --json`` (``docs/cli.md``)."""
        lab = self.labels
        return {"n": self.n, "method": self.method,
                "estimate": {x: float(v) for x, v in zip(lab, self.estimate)},
                "standard_error": {x: float(v) for x, v in zip(lab, self.standard_errors)},
                "interval": {x: [float(a), float(b)] for x, a, b in zip(lab, self.lower, self.upper)},
                "level": self.level, "interval_kind": self.interval,
                "reliable": {x: bool(r) for x, r in zip(lab, self.reliable)},
                "postprocess": self.postprocess, "notes": list(self.notes),
                **({"groups": {x: list(g) for x, g in zip(lab, self.groups)}} if self.groups else {})}

    def table(self) -> str:
        """A plain-text table (what ``mechopt estimate`` prints)."""
        width = max(5, *(len(x) for x in self.labels))
        pct = f"{100 * self.level:g}%"
        post = "" if self.postprocess == "none" else f", post-processed: {self.postprocess}"
        head = (f"n = {self.n} reports, method = {self.method}: {_DESCRIPTION[self.method]}{post}; "
                f"{pct} intervals: {self.interval}")
        lines = [head, f"{'input':{width}s}  estimate  std.err   {pct} interval"]
        for x, p, se, a, b, ok in zip(self.labels, self.estimate, self.standard_errors, self.lower,
                                      self.upper, self.reliable):
            lines.append(f"{x:{width}s}  {p:8.6f}  {se:8.6f}  [{a:.6f}, {b:.6f}]{'' if ok else ' *'}")
        for note in self.notes:
            lines.append(f"note: {note}")
        return "\n".join(lines)


def _z(level: float) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < float(level) < 1.0:
        raise InputError("level", f"must lie strictly between 0 and 1, got {level!r}")
    return NormalDist().inv_cdf((1.0 + float(level)) / 2.0)


def _fisher_covariance(Q: np.ndarray, p: np.ndarray, n: float) -> np.ndarray:
    """``B J⁻¹ Bᵀ / n``, ``J = Σ_y (Bᵀq_y)(Bᵀq_y)ᵀ / λ_y`` at ``λ = Qᵀ p`` (outputs with λ > 0)."""
    B = simplex_basis(Q.shape[0])
    return B @ np.linalg.pinv(fisher_information(Q, p)) @ B.T / n


def _inversion_covariance(Q: np.ndarray, freq: np.ndarray, n: float) -> np.ndarray:
    """Covariance of the linear inversion estimator at the observed frequencies."""
    B = simplex_basis(Q.shape[0])
    P = np.linalg.pinv(Q.T @ B)  # (k-1) × m
    sigma = (np.diag(freq) - np.outer(freq, freq)) / n
    return B @ P @ sigma @ P.T @ B.T


def estimate_counts(Q: ArrayLike, counts: ArrayLike, *, method: str = "em", level: float = 0.95,
                    prior: ArrayLike | None = None, labels: Sequence[str] | None = None,
                    postprocess: str = "none", resamples: int = BOOTSTRAP_RESAMPLES,
                    seed: int | None = BOOTSTRAP_SEED) -> Estimate:
    """Estimate the input distribution from report counts, with standard errors and intervals.

    Parameters
    ----------
    Q, counts : array_like
        The channel (k × m) and the number of reports of each output (m).
    method : {"em", "inversion", "projected", "mmse"}, keyword-only
        See the module docstring.
    level : float, keyword-only
        Interval level in (0, 1).
    prior : array_like, shape (k,), optional, keyword-only
        Required by ``mmse`` (the prior of each user's input); ignored otherwise.
    labels : sequence of str, optional, keyword-only
        Input labels (default ``"0" … "k-1"``).
    postprocess : {"none", "simplex", "norm-sub"}, keyword-only
        Map the estimate into the simplex (:mod:`mechopt.runtime._postprocess`). With
        ``inversion`` or ``projected`` the intervals become parametric percentile-bootstrap
        intervals of the whole procedure; ``em`` and ``mmse`` estimates already lie in the
        simplex (post-processing leaves them unchanged, a note says so).
    resamples : int, keyword-only
        Bootstrap resamples behind post-processed intervals (100 … 1 000 000).
    seed : int or None, keyword-only
        Seed of the bootstrap draws (``None``: fresh entropy).

    Returns
    -------
    Estimate

    Raises
    ------
    NotIdentifiableError
        When ``method`` is ``em``, ``inversion`` or ``projected`` and the channel cannot
        identify even the masses of its groups of identical rows (see below): the message
        points to ``mmse``.

    Warns
    -----
    IdentifiabilityWarning
        When the channel merges inputs (identical rows) and ``method`` is not ``mmse``:
        the total mass of each group is estimated instead (``groups``; one line naming the
        groups, summarised past a few labels).
    InputError
        When an argument is malformed, or ``mmse`` has no prior.

    Examples
    --------
    >>> Q = [[0.75, 0.25], [0.25, 0.75]]
    >>> e = estimate_counts(Q, [600, 400], labels=["no", "yes"])
    >>> e.estimate.round(6).tolist(), e.standard_errors.round(4).tolist()
    ([0.7, 0.3], [0.031, 0.031])
    >>> e.lower.round(4).tolist()
    [0.6393, 0.2393]
    >>> inv = estimate_counts(Q, [90, 10], method="inversion", postprocess="simplex")
    >>> inv.estimate.tolist(), inv.interval                 # inversion gives [1.3, -0.3]
    ([1.0, 0.0], 'percentile bootstrap (1000 parametric resamples, seed 0)')
    >>> import warnings
    >>> merged = [[0.5, 0.5], [0.5, 0.5], [0.2, 0.8]]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     g = estimate_counts(merged, [50, 50], method="inversion", labels=["a", "b", "c"])
    >>> g.labels, g.estimate.round(6).tolist(), g.groups
    (('a+b', 'c'), [1.0, 0.0], (('a', 'b'), ('c',)))
    >>> print(caught[0].message)
    not identifiable: inputs 'a', 'b' have identical rows (rank 2 < 3 inputs): no estimator can split that mass from the reports; estimated instead: the total mass of each group of identical inputs (2 inputs in 1 group: a+b); --method mmse splits it by a prior
    """
    if method not in ESTIMATE_METHODS:
        raise InputError("method", f"must be one of {', '.join(ESTIMATE_METHODS)}, got {method!r}")
    check_postprocess(postprocess)
    Q = as_channel(Q)
    k, m = Q.shape
    c = _as_counts(counts, m)
    names = tuple(labels) if labels is not None else tuple(str(i) for i in range(k))
    if len(names) != k:
        raise InputError("labels", f"must give one label per input ({k}), got {len(names)}")
    z = _z(level)
    n = float(c.sum())
    notes: list[str] = []
    ident = identifiability(Q)
    groups: tuple[tuple[str, ...], ...] = ()
    plan = None
    if not ident.identifiable and method != "mmse":
        plan = plan_groups(Q, names, ident)
        names, groups = plan.names, plan.members
        notes.append(plan.why)
        warnings.warn(plan.why, IdentifiabilityWarning, stacklevel=2)
        k = len(names)
        if plan.channel is not None:  # identical rows: the group channel, every estimator applies
            Q, plan = plan.channel, None
    invert = None
    if plan is not None:  # general groups: a linear functional of the report frequencies
        p, cov, lam, kind = group_estimate(Q, c, plan, method)
        se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        M, offset = plan.linear, plan.offset

        def invert(F: np.ndarray) -> np.ndarray:
            return F @ M.T + offset
    elif method == "mmse":
        if prior is None:
            raise InputError("prior", "method 'mmse' needs a prior: the distribution each user's input is "
                                      "drawn from (the mechanism's design prior, or --prior)")
        P = _as_distribution(prior, k, "prior")
        p = mmse_histogram(Q, P, c, normalize=True)
        joint = P[:, None] * Q
        lam = joint.sum(axis=0)
        used = lam > 0
        post = joint[:, used] / lam[used]  # π_y(a), columns y
        se = np.sqrt(post * (1 - post) @ c[used]) / n
        kind = "posterior (under the prior)"
        notes.append("Bayesian: the estimate and its interval describe the realised histogram of these "
                     f"{int(n)} users if each input was drawn from the prior; they are only as good as the prior")
        if not ident.identifiable:
            notes.append(ident.describe(names) + "; that mass is split as the prior splits it")
    else:  # identifiable here: plan_groups raised otherwise
        freq = c / n
        if method == "em":
            p = estimate_em(Q, c)
            cov = _fisher_covariance(Q, p, n)
            kind = "wald (information matrix)"
        else:
            p = estimate_inversion(Q, c) if method == "inversion" else estimate_projected(Q, c)
            cov = _inversion_covariance(Q, freq, n)
            kind = "wald (inversion covariance)"
        se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    if postprocess != "none" and method in ("inversion", "projected"):
        p = _postprocess(p, postprocess)
        how = postprocess if method == "inversion" else "simplex"  # projected: on the simplex already
        if invert is None:
            fitted = p @ Q  # the multinomial fitted to the post-processed estimate

            def invert(F: np.ndarray) -> np.ndarray:
                return inversion_rows(Q, F)
        else:
            fitted = c / n  # general groups: the report frequencies (no channel maps the group masses)
        se, lo, hi = bootstrap(fitted, int(round(n)), invert, how, float(level), resamples=resamples, seed=seed)
        kind = f"percentile bootstrap ({check_resamples(resamples)} parametric resamples, seed {seed})"
        return Estimate(names, int(round(n)), method, p, se, lo, hi, float(level), kind, np.ones(k, bool),
                        tuple(notes), postprocess, groups)
    if postprocess != "none":
        notes.append(f"the {method} estimate lies in the simplex already: {postprocess} leaves it unchanged")
    raw_lo, raw_hi = p - z * se, p + z * se
    reliable = (raw_lo >= 0.0) & (raw_hi <= 1.0)
    if method == "em":
        reliable &= p > 0
    if not reliable.all():
        shown = summarize_labels([x for x, ok in zip(names, reliable) if not ok])
        notes.append(f"* near the simplex boundary ({shown}): the normal approximation behind the interval "
                     "fails there (the estimate is constrained to [0, 1]); the interval is clipped and only "
                     "indicative — collect more reports")
    return Estimate(names, int(round(n)), method, p, se, np.clip(raw_lo, 0.0, 1.0), np.clip(raw_hi, 0.0, 1.0),
                    float(level), kind, reliable, tuple(notes), postprocess, groups)


def parse_counts_csv(text: str, outputs: Sequence[str], *, source: str = "counts") -> np.ndarray:
    """Read ``output label,count`` lines (an optional ``label,count`` header) into counts.

    Parameters
    ----------
    text : str
        CSV text: one output label and one non-negative integer count per line, standard
        CSV quoting for labels with commas or quotes. Outputs not listed count 0.
    outputs : sequence of str
        The mechanism's output labels.
    source : str, keyword-only
        Name used in error messages (the file).

    Returns
    -------
    numpy.ndarray of float, shape (m,)

    Raises
    ------
    InputError
        On a malformed line, an unknown or repeated label, or a negative or non-integer
        count; the message gives ``source:line``.

    Examples
    --------
    >>> parse_counts_csv("label,count\\nn,60\\ny,40\\n", ["n", "y"]).tolist()
    [60.0, 40.0]
    """
    index = {y: j for j, y in enumerate(outputs)}
    counts = np.zeros(len(outputs))
    seen: dict[str, int] = {}
    for lineno, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != 2:
            raise InputError(f"{source}:{lineno}", f"must be 'output label,count', got {row!r}")
        label, raw = row[0], row[1].strip()
        if lineno == 1 and label.strip().lower() == "label" and raw.lower() == "count":
            continue
        if label not in index:
            shown = list(outputs)[:8] + (["..."] if len(outputs) > 8 else [])
            raise InputError(f"{source}:{lineno}", f"{label!r} is not an output label of the mechanism; "
                                                   f"expected one of {shown!r}")
        if label in seen:
            raise InputError(f"{source}:{lineno}", f"{label!r} is listed twice (also on line {seen[label]})")
        try:
            value = int(raw)
        except ValueError:
            raise InputError(f"{source}:{lineno}", f"count must be a non-negative integer, got {raw!r}") from None
        if value < 0:
            raise InputError(f"{source}:{lineno}", f"count must be a non-negative integer, got {raw!r}")
        seen[label] = lineno
        counts[index[label]] = value
    if counts.sum() <= 0:
        raise InputError(source, "holds no reports (every count is 0 or the file is empty)")
    return counts


def _doc_of(mechanism: Any) -> dict:
    """A matrix mechanism's document; a dict or a file is checked and its claims verified exactly."""
    from mechopt._client_document import _check, _verify_claims
    from mechopt._mechanism import Mechanism, load_verified

    if isinstance(mechanism, Mechanism):
        return mechanism.to_dict()
    if isinstance(mechanism, dict):
        checked = _check(mechanism)
    else:
        checked = load_verified(mechanism)[0]
    if checked.family is not None:
        raise InputError("family", "is a family mechanism: estimate from its reports with "
                                   "mechopt.families (estimate_family_file)")
    if isinstance(mechanism, dict):
        _verify_claims(checked)
    return checked.doc


def estimate(mechanism: Any, reports: Sequence[str] | None = None, *,
             counts: Mapping[str, int] | ArrayLike | None = None, method: str = "em", level: float = 0.95,
             prior: ArrayLike | None = None, postprocess: str = "none", resamples: int = BOOTSTRAP_RESAMPLES,
             seed: int | None = BOOTSTRAP_SEED) -> Estimate:
    """Estimate the input distribution from reports of a mechanism, with intervals.

    Parameters
    ----------
    mechanism : Mechanism, dict or path
        The mechanism (a file is loaded and its sha256 checked).
    reports : sequence of str, optional
        Output labels, one per report.
    counts : mapping or array_like, optional, keyword-only
        Instead of ``reports``: ``{output label: count}`` or one count per output.
    method, level, prior, postprocess, resamples, seed : keyword-only
        As :func:`estimate_counts`; the ``mmse`` prior defaults to the mechanism's design
        prior (``objective.prior``).

    Returns
    -------
    Estimate

    Raises
    ------
    InputError
        When neither or both of ``reports`` and ``counts`` are given, a label is unknown,
        or an argument is malformed.
    NotIdentifiableError
        As :func:`estimate_counts`.

    Examples
    --------
    >>> import mechopt
    >>> m = mechopt.Mechanism.from_channel([[0.75, 0.25], [0.25, 0.75]],
    ...                                    [{"notion": "ldp", "epsilon": 1.1}],
    ...                                    inputs=["no", "yes"], outputs=["n", "y"])
    >>> e = estimate(m, ["n"] * 600 + ["y"] * 400)
    >>> e.estimate.round(3).tolist()
    [0.7, 0.3]
    """
    doc = _doc_of(mechanism)
    outputs = list(doc["outputs"])
    if (reports is None) == (counts is None):
        raise InputError("reports", "give either reports (one output label per report) or counts, not both "
                                    "or neither")
    if reports is not None:
        if isinstance(reports, str):
            raise InputError("reports", "must be a list of output labels, got a string")
        index = {y: j for j, y in enumerate(outputs)}
        c = np.zeros(len(outputs))
        for i, y in enumerate(reports):
            if y not in index:
                raise InputError(f"reports[{i}]", f"{y!r} is not an output label of the mechanism")
            c[index[y]] += 1
    elif isinstance(counts, Mapping):
        c = parse_counts_csv("\n".join(f"{_csv_cell(k)},{v}" for k, v in counts.items()), outputs)
    else:
        c = np.asarray(counts, dtype=float)
    if method == "mmse" and prior is None:
        prior = (doc.get("objective") or {}).get("prior")
    return estimate_counts(np.array(doc["matrix"], dtype=float), c, method=method, level=level, prior=prior,
                           labels=doc["inputs"], postprocess=postprocess, resamples=resamples, seed=seed)


def _csv_cell(label: Any) -> str:
    out = io.StringIO()
    csv.writer(out).writerow([label])
    return out.getvalue().rstrip("\r\n")


def read_text(path: str | Path, what: str) -> str:
    """The text of a file, or of standard input for ``-``."""
    import sys

    if str(path) == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(str(path), f"cannot read the {what} file: {err}") from None
