"""Library functions behind ``mechopt privatize`` and ``mechopt estimate`` (``docs/cli.md``).

The CLI parses arguments, calls these, prints, and maps :class:`mechopt._errors.InputError`
to exit code 2, :class:`mechopt._errors.VerificationError` to exit code 1 and
:class:`mechopt._identifiability.NotIdentifiableError` to exit code 3. A path ``-`` means
standard input (``--input``, ``--reports``, ``--counts``) or output (``--output``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from mechopt._errors import InputError
from mechopt.client import Sampler
from mechopt.runtime._inference import (
    ESTIMATE_METHODS,
    Estimate,
    estimate_counts,
    parse_counts_csv,
    read_text,
)
from mechopt.runtime._files import read_labels, refuse_unknown, write_atomically
from mechopt.runtime._postprocess import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, check_postprocess

__all__ = ["ESTIMATE_METHODS", "estimate_file", "estimate_from_files", "privatize_file"]


def _memo_store(path: str | Path, *, per_user: bool = False) -> dict:
    """The memo store: one device's ``{key: response}``, or with ``per_user`` ``{user: {key: response}}``."""
    p = Path(path)
    if not p.exists():
        return {}
    from mechopt._jsonsafe import loads_strict

    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(str(path), f"cannot read the memo store (a JSON object): {err}") from None
    store = loads_strict(text, str(path))  # depth, duplicate keys: one line, never a traceback
    if per_user:
        if not isinstance(store, dict) or not all(
                isinstance(v, dict) and all(isinstance(r, str) for r in v.values()) for v in store.values()):
            raise InputError(str(path), "with --user-column the memo store must be a JSON object of user id -> "
                                        "that device's store (an object of strings)")
        return store
    if not isinstance(store, dict) or not all(isinstance(v, str) for v in store.values()):
        raise InputError(str(path), "the memo store must be a JSON object of strings")
    return store


def _read_user_rows(path: str | Path) -> tuple[list[str], list[str]]:
    """``user,label`` CSV lines (standard quoting) as the user ids and the labels, in order."""
    import csv
    import io

    from mechopt.runtime._inference import read_text

    users, labels = [], []
    for lineno, row in enumerate(csv.reader(io.StringIO(read_text(path, "input"))), start=1):
        if len(row) != 2 or not row[0].strip() or not row[1]:
            raise InputError(f"{path}:{lineno}", f"with --user-column every line must be 'user id,input label', "
                                                 f"got {row!r}")
        users.append(row[0])
        labels.append(row[1])
    return users, labels


def privatize_file(mech_path: str | Path, input_path: str | Path,
                   output_path: str | Path, *, seed: int | None = None,
                   memo: str | Path | None = None, user_column: bool = False) -> int:
    """Privatize a file of inputs, one label per line, into a file of reports.

    The mechanism file is read, its sha256 checked and its privacy claims verified
    exactly by :func:`mechopt._mechanism.load_verified` (the path ``mechopt verify``
    takes: a file it refuses is refused here); every input label is checked before anything is
    drawn; reports are drawn with the exact :class:`mechopt.client.Sampler` and written
    one per line, in order, to ``output_path`` (written to a temporary file first and
    renamed, so a failure never leaves a partial output). Each line is one user's
    report, drawn afresh — except with ``memo``: a memoized mechanism then keeps one
    permanent response per user and value in that JSON file and repeats it. Without
    ``user_column`` the store is one device's, so an input of more than one line is
    refused (it would treat many users as one device).

    Parameters
    ----------
    mech_path : str or pathlib.Path
        The mechanism JSON file.
    input_path : str or pathlib.Path
        True input labels, one per line (UTF-8); ``-`` reads standard input. With
        ``user_column``: CSV lines ``user id,input label``.
    output_path : str or pathlib.Path
        Where to write the output labels; ``-`` writes to standard output.
    seed : int or None, keyword-only
        ``None``: cryptographically secure draws (:func:`os.urandom`). An integer:
        reproducible draws for simulation only (see :class:`mechopt.client.Sampler`).
    memo : str or pathlib.Path or None, keyword-only
        A JSON file holding the permanent responses of a memoized mechanism (created if
        missing, updated after the run). Only with a mechanism marked ``memoize``. One
        device's store (``{key: response}``, keys as :class:`mechopt.client.Sampler`'s), or
        with ``user_column`` one store per user (``{user id: {key: response}}``).
    user_column : bool, keyword-only
        The input is ``user id,input label`` CSV: each user is one device.

    Returns
    -------
    int
        Number of reports written (0 for an empty input file).

    Raises
    ------
    InputError
        When a file cannot be read or written, the mechanism is malformed, a line is
        empty, or a line is not an input label (the message gives ``path:line``), or
        ``memo`` is given without ``user_column`` for an input of more than one line.
    VerificationError
        When the mechanism file's sha256 does not match its content, or its matrix (or
        family) fails one of its privacy claims.

    Examples
    --------
    >>> import os, tempfile, mechopt
    >>> tmp = tempfile.mkdtemp()
    >>> mech, inp, out = (os.path.join(tmp, n) for n in ("m.json", "in.txt", "out.txt"))
    >>> eldp = {"notion": "eldp", "matrix": [[0, "inf"], ["inf", 0]]}     # the identity is allowed
    >>> mechopt.Mechanism.from_channel([[1.0, 0.0], [0.0, 1.0]], [eldp], inputs=["no", "yes"],
    ...                                outputs=["no", "yes"]).save(mech)
    >>> with open(inp, "w") as f:
    ...     _ = f.write("yes\\nno\\n")
    >>> privatize_file(mech, inp, out, seed=1)
    2
    >>> open(out).read().split()
    ['yes', 'no']
    """
    from mechopt._mechanism import load_verified
    from mechopt.families import privatize_family_file

    checked, _ = load_verified(mech_path)  # the one path: what 'mechopt verify' refuses is refused here
    if checked.family is not None:
        if user_column or memo is not None:
            raise InputError("memo", "a family mechanism draws fresh reports: drop --memo and --user-column")
        return privatize_family_file(mech_path, input_path, output_path, seed=seed)
    doc = checked.doc
    if memo is not None and not doc.get("memoize"):
        raise InputError("memo", f"{mech_path} is not a memoized mechanism ('memoize' is not true); "
                                 "drop --memo, or export it with 'mechopt solve --memoize'")
    if user_column:
        users, labels = _read_user_rows(input_path)
    else:
        users, labels = None, read_labels(input_path, "input")
        if memo is not None and len(labels) > 1:
            raise InputError("memo", f"keeps one device's permanent responses, but {input_path} has "
                                     f"{len(labels)} lines (one per user?): give a 'user id,label' CSV with "
                                     "--user-column to keep one store per user")
    refuse_unknown(input_path, labels, {x: i for i, x in enumerate(doc["inputs"])},
                   str(mech_path), "input")
    store = None if memo is None else _memo_store(memo, per_user=user_column)
    one_store = store if store is not None and not user_column else None
    sampler = Sampler(doc, seed=seed, store=one_store, _checked=True)  # load_verified checked and verified it
    if doc.get("memoize") and memo is None:
        sampler.memoize = False  # every line is another user: fresh responses
    if users is not None and store is not None:
        reports = []
        for user, label in zip(users, labels):
            sampler.store = store.setdefault(user, {})  # this user's device
            reports.append(sampler.sample(label))
    else:
        reports = sampler.sample_many(labels)
    text = "".join(f"{y}\n" for y in reports)
    if str(output_path) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_atomically(Path(output_path), text, "output")
    if memo is not None and store is not None:
        write_atomically(Path(memo), json.dumps(store, indent=1, ensure_ascii=False) + "\n", "memo store")
    return len(reports)


def estimate_file(mech_path: str | Path, reports_path: str | Path | None = None, *,
                  counts_path: str | Path | None = None, method: str = "em",
                  level: float = 0.95, prior: Any = None, **options: Any) -> dict[str, Any]:
    """Estimate the input distribution from a file of reports or of counts, with intervals.

    :func:`estimate_from_files` as the JSON document of ``mechopt estimate --json``
    (``docs/cli.md``): ``n``, ``method``, ``estimate``, ``standard_error``, ``interval``,
    ``level``, ``interval_kind``, ``reliable``, ``postprocess``, ``notes``; labels in the
    file's order. Parameters (``options``: ``postprocess``, ``resamples``, ``seed``), errors: as
    :func:`estimate_from_files`.

    Examples
    --------
    >>> import os, tempfile, mechopt
    >>> tmp = tempfile.mkdtemp()
    >>> mech, rep = os.path.join(tmp, "m.json"), os.path.join(tmp, "r.txt")
    >>> mechopt.Mechanism.from_channel([[0.75, 0.25], [0.25, 0.75]], [{"notion": "ldp", "epsilon": 1.1}],
    ...                                inputs=["no", "yes"], outputs=["n", "y"]).save(mech)
    >>> with open(rep, "w") as f:
    ...     _ = f.write("n\\n" * 6 + "y\\n" * 4)
    >>> result = estimate_file(mech, rep, method="inversion")
    >>> result["n"], {k: round(v, 6) for k, v in result["estimate"].items()}
    (10, {'no': 0.7, 'yes': 0.3})
    """
    return estimate_from_files(mech_path, reports_path, counts_path=counts_path, method=method,
                               level=level, prior=prior, **options).to_dict()


def estimate_from_files(mech_path: str | Path, reports_path: str | Path | None = None, *,
                        counts_path: str | Path | None = None, method: str = "em",
                        level: float = 0.95, prior: Any = None, postprocess: str = "none",
                        resamples: int = BOOTSTRAP_RESAMPLES, seed: int | None = BOOTSTRAP_SEED) -> Estimate:
    """Estimate the input distribution from a file of reports or of counts, with intervals.

    Parameters
    ----------
    mech_path : str or pathlib.Path
        The mechanism JSON file (structure, sha256 and every privacy claim are checked,
        as ``mechopt verify`` checks them).
    reports_path : str or pathlib.Path, optional
        Output labels, one per line (UTF-8); ``-`` reads standard input.
    counts_path : str or pathlib.Path, optional, keyword-only
        Instead of reports: a CSV of ``output label,count`` (optional header
        ``label,count``; outputs not listed count 0); ``-`` reads standard input.
    method : {"em", "inversion", "projected", "mmse"}, keyword-only
        ``em``: maximum likelihood (:func:`mechopt.runtime.estimate_em`);
        ``inversion``: unbiased, may be negative; ``projected``: inversion projected onto
        the simplex; ``mmse``: Bayesian posterior mean under a prior (the only method for
        a channel that cannot identify the distribution). See
        :func:`mechopt.runtime.estimate_counts`.
    level : float, keyword-only
        Level of the intervals, in (0, 1).
    prior : sequence of float, optional, keyword-only
        ``mmse``: the prior; default the mechanism's design prior (``objective.prior``).
    postprocess : {"none", "simplex", "norm-sub"}, keyword-only
        Consistent post-processing, with parametric-bootstrap intervals
        (:func:`mechopt.runtime.estimate_counts`).
    resamples, seed : int, keyword-only
        The bootstrap's number of resamples and seed.

    Returns
    -------
    Estimate
        See :class:`mechopt.runtime.Estimate`; ``.table()`` is what ``mechopt estimate``
        prints.

    Raises
    ------
    NotIdentifiableError
        When the channel cannot identify the input distribution and ``method`` is not
        ``mmse`` (exit code 3).
    InputError
        When ``method`` is unknown, a file cannot be read, there are no reports, a line
        is empty or has a label that is not an output of the mechanism (the message
        gives ``path:line``), both or neither of reports and counts are given.
    VerificationError
        When the mechanism file's sha256 does not match its content, or it fails one of
        its privacy claims.

    Examples
    --------
    >>> import os, tempfile
    >>> from mechopt import Mechanism
    >>> tmp = tempfile.mkdtemp()
    >>> mech, rep = os.path.join(tmp, "m.json"), os.path.join(tmp, "r.txt")
    >>> Mechanism.from_channel([[0.75, 0.25], [0.25, 0.75]], [{"notion": "ldp", "epsilon": 1.1}],
    ...                        inputs=["no", "yes"], outputs=["n", "y"]).save(mech)
    >>> open(rep, "w").write("n\\n" * 6 + "y\\n" * 4)     # characters written
    20
    >>> est = estimate_from_files(mech, rep, method="inversion")
    >>> est.n, est.estimate.round(6).tolist()
    (10, [0.7, 0.3])
    """
    if method not in ESTIMATE_METHODS:
        raise InputError("method", f"must be one of {', '.join(ESTIMATE_METHODS)}, got "
                                   f"{method!r}")
    from mechopt._mechanism import load_verified
    from mechopt.families import estimate_family_file

    check_postprocess(postprocess)
    checked, _ = load_verified(mech_path)  # the one path: what 'mechopt verify' refuses is refused here
    if checked.family is not None:
        if postprocess != "none":
            raise InputError("postprocess", "applies to matrix mechanisms; a family's estimator has its own "
                                            "output (use --postprocess none)")
        if counts_path is not None:
            raise InputError("counts", "a family mechanism is estimated from its reports (--reports): its outputs "
                                       "are subsets or codes, not a short list of labels to count")
        return _family_estimate(estimate_family_file(mech_path, reports_path, method=method), level)
    if (reports_path is None) == (counts_path is None):
        raise InputError("reports", "give either --reports (one output label per line) or --counts "
                                    "(a CSV of output label,count), not both or neither")
    doc = checked.doc
    index = {y: j for j, y in enumerate(doc["outputs"])}
    if reports_path is not None:
        labels = read_labels(reports_path, "reports")
        if not labels:
            raise InputError(str(reports_path), "contains no reports; the reports file must "
                                                "hold one output label per line")
        refuse_unknown(reports_path, labels, index, str(mech_path), "output")
        counts = np.bincount([index[y] for y in labels], minlength=len(index)).astype(float)
    else:
        counts = parse_counts_csv(read_text(counts_path, "counts"), doc["outputs"],
                                  source=str(counts_path))
    if method == "mmse" and prior is None:
        prior = doc["objective"].get("prior")
    Q = np.array(doc["matrix"], dtype=float)
    return estimate_counts(Q, counts, method=method, level=level, prior=prior,
                           labels=doc["inputs"], postprocess=postprocess, resamples=resamples, seed=seed)


def _family_estimate(out: dict, level: float):
    """A family's estimate (a dict of :func:`mechopt.families.estimate_family_file`) as an :class:`Estimate`.

    Standard errors are the square roots of the estimator's per-item variance where the
    family gives it (subset selection); Wald intervals, clipped to [0, 1].
    """
    from statistics import NormalDist

    from mechopt.runtime._inference import Estimate

    labels = tuple(out["estimate"])
    p = np.array([out["estimate"][x] for x in labels])
    var = out.get("variance", {}).get("per_item")
    notes = []
    if var is None:
        se = np.full(len(labels), np.nan)
        notes.append("this family's estimator reports no variance: no intervals")
    else:
        se = np.sqrt(np.maximum([var[x] for x in labels], 0.0))
    z = NormalDist().inv_cdf((1.0 + float(level)) / 2.0)
    lower = np.clip(p - z * se, 0.0, 1.0)
    upper = np.clip(p + z * se, 0.0, 1.0)
    if "em_gap" in out:
        notes.append(f"EM stopped with a certified log-likelihood gap of {out['em_gap']:.3g} per report")
    return Estimate(labels, int(out["n"]), out["method"], p, se, lower, upper, float(level),
                    "wald (the family estimator's variance)", np.isfinite(se), tuple(notes))
