"""Library functions behind ``mechopt privatize`` and ``mechopt estimate`` (SPEC §6).

The CLI parses arguments, calls these, prints, and maps :class:`mechopt._errors.InputError`
to exit code 2 and :class:`mechopt._errors.VerificationError` to exit code 1.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from mechopt._errors import InputError
from mechopt.client import Sampler, load_document
from mechopt.runtime._estimators import estimate_em, estimate_inversion, estimate_projected

__all__ = ["ESTIMATE_METHODS", "estimate_file", "privatize_file"]

#: Values accepted by ``estimate_file(method=...)``.
ESTIMATE_METHODS = ("em", "inversion", "projected")


def _read_labels(path: str | Path, what: str) -> list[str]:
    """One label per line; line terminators (``\\n``, ``\\r\\n``) are not part of it."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(str(path), f"cannot read the {what} file: {err}") from None
    labels = text.splitlines()
    for lineno, label in enumerate(labels, start=1):
        if not label.strip():
            raise InputError(f"{path}:{lineno}", f"line is empty; the {what} file must hold "
                                                 "exactly one label per line")
    return labels


def _unknown(path: str | Path, labels: list[str], known: dict[str, int], what: str,
             kind: str) -> None:
    for lineno, label in enumerate(labels, start=1):
        if label not in known:
            allowed = list(known)
            shown = allowed if len(allowed) <= 8 else allowed[:8] + ["..."]
            raise InputError(f"{path}:{lineno}", f"{label!r} is not an {kind} label of the "
                                                 f"mechanism ({what}); expected one of "
                                                 f"{shown!r}")


def privatize_file(mech_path: str | Path, input_path: str | Path,
                   output_path: str | Path, *, seed: int | None = None) -> int:
    """Privatize a file of inputs, one label per line, into a file of reports.

    The mechanism file is loaded and its sha256 checked with
    :func:`mechopt.client.load_document`; every input label is checked before anything is
    drawn; reports are drawn with the exact :class:`mechopt.client.Sampler` and written
    one per line, in order, to ``output_path`` (written to a temporary file first and
    renamed, so a failure never leaves a partial output).

    Parameters
    ----------
    mech_path : str or pathlib.Path
        The mechanism JSON file.
    input_path : str or pathlib.Path
        True input labels, one per line (UTF-8).
    output_path : str or pathlib.Path
        Where to write the output labels.
    seed : int or None, keyword-only
        ``None``: cryptographically secure draws (:func:`secrets.randbelow`). An integer:
        reproducible draws for simulation only (see :class:`mechopt.client.Sampler`).

    Returns
    -------
    int
        Number of reports written (0 for an empty input file).

    Raises
    ------
    InputError
        When a file cannot be read or written, the mechanism is malformed, a line is
        empty, or a line is not an input label (the message gives ``path:line``).
    VerificationError
        When the mechanism file's sha256 does not match its content.

    Examples
    --------
    >>> import json, os, tempfile
    >>> from mechopt._canonical import canonical_digest
    >>> doc = {"format": "mechopt-mechanism", "version": 1, "inputs": ["no", "yes"],
    ...        "outputs": ["no", "yes"], "matrix": [[1.0, 0.0], [0.0, 1.0]],
    ...        "privacy": [], "objective": {}, "certificate": {}}
    >>> doc["sha256"] = canonical_digest(doc)
    >>> tmp = tempfile.mkdtemp()
    >>> mech, inp, out = (os.path.join(tmp, n) for n in ("m.json", "in.txt", "out.txt"))
    >>> with open(mech, "w") as f:
    ...     json.dump(doc, f)
    >>> with open(inp, "w") as f:
    ...     _ = f.write("yes\\nno\\n")
    >>> privatize_file(mech, inp, out, seed=1)
    2
    >>> open(out).read().split()
    ['yes', 'no']
    """
    from mechopt.families import is_family_file, privatize_family_file

    if is_family_file(mech_path):
        return privatize_family_file(mech_path, input_path, output_path, seed=seed)
    doc = load_document(mech_path)
    sampler = Sampler(doc, seed=seed)
    labels = _read_labels(input_path, "input")
    _unknown(input_path, labels, {x: i for i, x in enumerate(doc["inputs"])},
             str(mech_path), "input")
    reports = sampler.sample_many(labels)
    target = Path(output_path)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent if str(target.parent) else ".",
                                   prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.writelines(f"{y}\n" for y in reports)
            os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    except OSError as err:
        raise InputError(str(output_path), f"cannot write the output file: {err}") from None
    return len(reports)


def estimate_file(mech_path: str | Path, reports_path: str | Path, *,
                  method: str = "em") -> dict[str, Any]:
    """Estimate the input distribution from a file of reports, one label per line.

    Parameters
    ----------
    mech_path : str or pathlib.Path
        The mechanism JSON file (structure and sha256 are checked).
    reports_path : str or pathlib.Path
        Output labels, one per line (UTF-8).
    method : {"em", "inversion", "projected"}, keyword-only
        ``em``: maximum likelihood (:func:`mechopt.runtime.estimate_em`);
        ``inversion``: unbiased, may be negative
        (:func:`mechopt.runtime.estimate_inversion`); ``projected``: inversion projected
        onto the simplex (:func:`mechopt.runtime.estimate_projected`).

    Returns
    -------
    dict
        ``{"n": N, "method": method, "estimate": {input label: probability}}`` — the JSON
        document of ``mechopt estimate --json`` (SPEC §6), labels in the file's order.

    Raises
    ------
    InputError
        When ``method`` is unknown, a file cannot be read, the reports file is empty or
        has an empty line or a label that is not an output of the mechanism (the message
        gives ``path:line``), or the channel cannot be inverted (``inversion`` and
        ``projected`` need rank ``k``).
    VerificationError
        When the mechanism file's sha256 does not match its content.

    Examples
    --------
    >>> import json, os, tempfile
    >>> from mechopt._canonical import canonical_digest
    >>> doc = {"format": "mechopt-mechanism", "version": 1, "inputs": ["no", "yes"],
    ...        "outputs": ["n", "y"], "matrix": [[0.75, 0.25], [0.25, 0.75]],
    ...        "privacy": [], "objective": {}, "certificate": {}}
    >>> doc["sha256"] = canonical_digest(doc)
    >>> tmp = tempfile.mkdtemp()
    >>> mech, rep = os.path.join(tmp, "m.json"), os.path.join(tmp, "r.txt")
    >>> with open(mech, "w") as f:
    ...     json.dump(doc, f)
    >>> with open(rep, "w") as f:
    ...     _ = f.write("n\\n" * 6 + "y\\n" * 4)
    >>> result = estimate_file(mech, rep, method="inversion")
    >>> result["n"], {k: round(v, 6) for k, v in result["estimate"].items()}
    (10, {'no': 0.7, 'yes': 0.3})
    """
    if method not in ESTIMATE_METHODS:
        raise InputError("method", f"must be one of {', '.join(ESTIMATE_METHODS)}, got "
                                   f"{method!r}")
    from mechopt.families import estimate_family_file, is_family_file

    if is_family_file(mech_path):
        return estimate_family_file(mech_path, reports_path, method=method)
    doc = load_document(mech_path)
    labels = _read_labels(reports_path, "reports")
    if not labels:
        raise InputError(str(reports_path), "contains no reports; the reports file must "
                                            "hold one output label per line")
    index = {y: j for j, y in enumerate(doc["outputs"])}
    _unknown(reports_path, labels, index, str(mech_path), "output")
    counts = np.bincount([index[y] for y in labels], minlength=len(index))
    Q = np.array(doc["matrix"], dtype=float)
    estimator = {"em": estimate_em, "inversion": estimate_inversion,
                 "projected": estimate_projected}[method]
    p = estimator(Q, counts)
    return {"n": len(labels), "method": method,
            "estimate": {x: float(v) for x, v in zip(doc["inputs"], p)}}
