"""The mechanism file on the client: read it, check its structure and digest (``docs/formats.md``).

Standard library only (plus ``rfc8785`` for version 2 digests), like the rest of
:mod:`mechopt.client`, which re-exports :func:`check_document` and :func:`load_document`;
the sampler lives there. These checks are the client's standard-library copy of the
rules in :mod:`mechopt._validation` (a test checks that the two agree).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from mechopt._canonical import VERSIONS, canonical_digest
from mechopt._claims import check_claims
from mechopt._errors import InputError, VerificationError

__all__ = ["FORMAT", "VERSION", "VERSIONS", "ROW_SUM_TOLERANCE", "check_document", "load_document"]

#: Value of the ``format`` field of a mechanism file.
FORMAT = "mechopt-mechanism"
#: The mechanism file version writers emit (readers accept :data:`VERSIONS`).
VERSION = 2
#: Rows must sum to 1 within this, computed exactly on the decimals.
ROW_SUM_TOLERANCE = Fraction(1, 10**12)

_REQUIRED = ("format", "version", "inputs", "outputs", "matrix", "privacy", "objective",
             "certificate", "sha256")
_HEX = frozenset("0123456789abcdef")


def _short(seq: Sequence[Any], limit: int = 8) -> str:
    """Render at most ``limit`` items of a list for an error message."""
    if len(seq) <= limit:
        return repr(list(seq))
    return repr(list(seq[:limit]))[:-1] + f", ... ({len(seq)} in all)]"


def _exact(value: Any) -> Fraction:
    """The exact decimal value of a JSON number, as the verifier reads it.

    A float is read as its shortest round-trip decimal (``repr``), the digits that
    JavaScript's ``Number.prototype.toString`` and RFC 8785 also write.
    """
    return Fraction(str(value))


def _check_labels(doc: dict[str, Any], field: str) -> list[str]:
    labels = doc[field]
    if not isinstance(labels, list) or not labels:
        raise InputError(field, f"must be a non-empty list of strings, got {labels!r}")
    seen: dict[str, int] = {}
    for i, label in enumerate(labels):
        if not isinstance(label, str):
            raise InputError(f"{field}[{i}]", f"must be a string, got {label!r}")
        if label in seen:
            raise InputError(f"{field}[{i}]", f"labels must be unique, {label!r} also "
                                              f"appears at {field}[{seen[label]}]")
        seen[label] = i
    return labels


def _check_number(value: Any, field: str) -> Fraction:
    # bool is an int subclass; JSON true/false is not a probability.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(field, f"must be a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(field, f"must be finite, got {value!r}")
    exact = _exact(value)
    if exact < 0:
        raise InputError(field, f"must be >= 0, got {value!r}")
    return exact


def _check_matrix(doc: dict[str, Any], k: int, m: int) -> None:
    """Shape, finite non-negative numbers, and rows summing to 1 within 1e-12 — exactly.

    The row sum is first taken with :func:`math.fsum` (the correctly rounded sum of the
    binary floats); the decimals differ from the floats by at most 2^-53 relative each,
    so a sum within ``1e-12 - 4.5e-16 max(s, 1)`` of 1 proves the exact condition, and
    only rows near the tolerance are summed in exact fractions.
    """
    matrix = doc["matrix"]
    if not isinstance(matrix, list) or len(matrix) != k:
        got = len(matrix) if isinstance(matrix, list) else type(matrix).__name__
        raise InputError("matrix", f"must be a list of {k} rows (one per input), got {got!r}")
    for i, row in enumerate(matrix):
        if not isinstance(row, list) or len(row) != m:
            got = len(row) if isinstance(row, list) else type(row).__name__
            raise InputError(f"matrix[{i}]", f"must be a list of {m} entries (one per "
                                             f"output), got {got!r}")
        kinds = set(map(type, row))
        if not kinds <= {float, int} or not all(map(math.isfinite, row)) or min(row) < 0:
            for j, v in enumerate(row):  # name the offending entry
                _check_number(v, f"matrix[{i}][{j}]")
        total = math.fsum(row)
        if abs(total - 1.0) <= 1e-12 - 4.5e-16 * max(total, 1.0):
            continue
        exact = sum((_exact(v) for v in row), Fraction(0))
        if abs(exact - 1) > ROW_SUM_TOLERANCE:
            raise InputError(f"matrix[{i}]", f"row must sum to 1 within 1e-12, sums to "
                                             f"{float(exact)!r} (input {doc['inputs'][i]!r})")


def check_document(doc: Any) -> dict[str, Any]:
    """Check the structure and the sha256 digest of a parsed mechanism document.

    Checks the fields of ``docs/formats.md``: ``format``; ``version`` (1 or 2);
    ``inputs`` and ``outputs`` are non-empty lists of unique strings; ``matrix`` is
    ``k × m`` of finite non-negative numbers whose rows sum to 1 within 1e-12, computed
    exactly on the decimal values; ``privacy`` is a list of objects, ``objective`` and
    ``certificate`` objects; ``memoize``, if present, is a boolean of a version 2 file;
    and ``sha256`` equals :func:`mechopt._canonical.canonical_digest` of the document
    for its version. A structured (``family``) mechanism is refused: that extension of
    version 2 is not implemented yet. The privacy claims themselves are not re-verified
    here (use ``mechopt verify``).

    Parameters
    ----------
    doc : dict
        The document as parsed from JSON.

    Returns
    -------
    dict
        The same document, unchanged.

    Raises
    ------
    InputError
        When a required field is missing or malformed; the message names the field.
    VerificationError
        When every field is well formed but the recorded ``sha256`` is not the digest of
        the hashed fields (the file was altered).

    Examples
    --------
    >>> from mechopt._canonical import signed_document
    >>> doc = signed_document(["a", "b"], ["a", "b"], [[0.75, 0.25], [0.25, 0.75]],
    ...                       [{"notion": "ldp", "epsilon": 1.1}])
    >>> check_document(doc)["outputs"]
    ['a', 'b']
    """
    if not isinstance(doc, dict):
        raise InputError("document", f"must be a JSON object, got {type(doc).__name__}")
    if "family" in doc:
        raise InputError("family", "structured mechanisms (a 'family' instead of 'outputs' "
                                   "and 'matrix') are an extension point of format version 2 "
                                   "that this version of mechopt does not read yet "
                                   "(docs/formats.md, 'Structured mechanisms')")
    missing = [name for name in _REQUIRED if name not in doc]
    if missing:
        raise InputError(missing[0], f"required field is missing (docs/formats.md requires "
                                     f"{', '.join(_REQUIRED)}); missing: {missing!r}")
    if doc["format"] != FORMAT:
        raise InputError("format", f"must be {FORMAT!r}, got {doc['format']!r}")
    version = doc["version"]
    if isinstance(version, bool) or not isinstance(version, int) or version not in VERSIONS:
        raise InputError("version", f"must be 1 or 2 (the versions this client reads), "
                                    f"got {version!r}")
    inputs = _check_labels(doc, "inputs")
    outputs = _check_labels(doc, "outputs")
    _check_matrix(doc, len(inputs), len(outputs))
    if not isinstance(doc["privacy"], list):
        raise InputError("privacy", f"must be a list of notions, got {doc['privacy']!r}")
    for i, notion in enumerate(doc["privacy"]):
        if not isinstance(notion, dict) or not isinstance(notion.get("notion"), str):
            raise InputError(f"privacy[{i}]", f"must be an object with a string 'notion', "
                                              f"got {notion!r}")
    for name in ("objective", "certificate"):
        if not isinstance(doc[name], dict):
            raise InputError(name, f"must be an object, got {doc[name]!r}")
    if "memoize" in doc:
        if version == 1:
            raise InputError("memoize", "is a version 2 field (a version 1 digest does not "
                                        "cover it); re-export the mechanism")
        if not isinstance(doc["memoize"], bool):
            raise InputError("memoize", f"must be true or false, got {doc['memoize']!r}")
    recorded = doc["sha256"]
    if not (isinstance(recorded, str) and len(recorded) == 64 and set(recorded) <= _HEX):
        raise InputError("sha256", f"must be 64 lowercase hex digits, got {recorded!r}")
    try:
        computed = canonical_digest(doc)
    except ValueError as err:  # non-finite float or an out-of-range integer, say
        raise InputError("privacy", f"cannot be written as canonical JSON: {err}") from None
    if computed != recorded:
        raise VerificationError(
            f"sha256: recorded digest {recorded!r} does not match {computed!r}, the digest "
            f"of the hashed fields (version {version}); the file was modified after export "
            "— re-export it or obtain the original")
    return doc


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def load_document(path: str | Path, *, verify: bool = True) -> dict[str, Any]:
    """Read a mechanism file; check its structure, sha256 digest and (exactly) its privacy claims.

    Parameters
    ----------
    path : str or pathlib.Path
        A mechanism JSON file, as written by ``mechopt solve``.
    verify : bool, keyword-only
        Re-verify the matrix against the file's privacy claims, exactly
        (:func:`mechopt._claims.check_claims`, standard library only). On by default: a
        re-hashed file whose matrix breaks its claims must never be used.

    Returns
    -------
    dict
        The parsed document (see :func:`check_document` for what was checked).

    Raises
    ------
    InputError
        When the file cannot be read, is not JSON (``NaN`` and ``Infinity`` are refused),
        or a field is missing or malformed; the message starts with the path and names
        the field.
    VerificationError
        When the recorded sha256 does not match the content, or (``verify``) the matrix
        fails a privacy claim.

    Examples
    --------
    >>> import json, tempfile, os
    >>> from mechopt._canonical import signed_document
    >>> doc = signed_document(["no", "yes"], ["no", "yes"], [[0.75, 0.25], [0.25, 0.75]],
    ...                       [{"notion": "ldp", "epsilon": 1.1}])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "mech.json")
    ...     with open(path, "w") as f:
    ...         json.dump(doc, f)
    ...     load_document(path)["inputs"]
    ['no', 'yes']
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(source, f"cannot read the mechanism file: {err}") from None
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except ValueError as err:
        raise InputError(source, f"is not valid JSON: {err}") from None
    except RecursionError:
        raise InputError(source, "nests too deeply (lists and objects) to be a mechanism file") from None
    try:
        check_document(doc)
        if verify:
            check_claims(doc)
        return doc
    except InputError as err:
        raise InputError(f"{source}: {err.field}", err.rule) from None
    except VerificationError as err:
        raise VerificationError(f"{source}: {err}") from None
