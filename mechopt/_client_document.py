"""The one load-and-verify path of a mechanism file (``docs/formats.md``, "Reading a mechanism file").

:func:`check_text` is what every reader runs — ``mechopt verify``, ``privatize``,
``estimate``, :mod:`mechopt.client`, the families, :meth:`mechopt.Mechanism.load`
(through :func:`mechopt._mechanism.load_verified`): strict JSON
(:mod:`mechopt._jsonsafe`), the structure (matrix or family file), the digest, the
claims' parameters, then every claim exactly. So no reader can use a file another
refuses, and :func:`verdict` gives the verdict ``mechopt verify`` gives (same class).

Standard library only (plus ``rfc8785`` for version 2 digests), like the rest of
:mod:`mechopt.client`, which re-exports :func:`check_document`, :func:`load_document`,
:func:`check_text` and :func:`verdict`; the sampler lives there. These checks are the
client's standard-library copy of the rules of :mod:`mechopt._validation`, the notions
and the JSON Schema (``tests/test_claims.py``, ``tests/test_trust_load.py`` and the
differential harness ``tests/_differential.py`` check that they agree).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from mechopt._canonical import VERSIONS, canonical_digest
from mechopt._claims import Claim, check_claims, parse_claims
from mechopt._errors import InputError, VerificationError
from mechopt._jsonsafe import loads_strict

__all__ = ["FORMAT", "VERSION", "VERSIONS", "ROW_SUM_TOLERANCE", "MAX_FILE_BYTES", "Checked", "check_document",
           "check_text", "load_document", "read_mechanism_text", "verdict"]

#: Value of the ``format`` field of a mechanism file.
FORMAT = "mechopt-mechanism"
#: The mechanism file version writers emit (readers accept :data:`VERSIONS`).
VERSION = 2
#: Rows must sum to 1 within this, computed exactly on the decimals.
ROW_SUM_TOLERANCE = Fraction(1, 10**12)
#: Mechanism files larger than this are refused before they are read (as problem files).
MAX_FILE_BYTES = 512 * 2**20

_REQUIRED = ("format", "version", "inputs", "outputs", "matrix", "privacy", "objective",
             "certificate", "sha256")
_FAMILY_REQUIRED = ("format", "version", "inputs", "family", "privacy", "objective", "certificate", "sha256")
_HEX = frozenset("0123456789abcdef")
_FLOAT_MAX = int(1.7976931348623157e308)


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
    if isinstance(value, int) and abs(value) > _FLOAT_MAX:
        raise InputError(field, "is beyond the range of a float (about 1.8e308)")
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
        try:
            plain = kinds <= {float, int} and all(map(math.isfinite, row)) and min(row) >= 0
        except OverflowError:  # an int beyond float range (not from a file: the reader refuses it)
            plain = False
        if not plain:
            for j, v in enumerate(row):  # name the offending entry
                _check_number(v, f"matrix[{i}][{j}]")
        total = math.fsum(row)
        if abs(total - 1.0) <= 1e-12 - 4.5e-16 * max(total, 1.0):
            continue
        exact = sum((_exact(v) for v in row), Fraction(0))
        if abs(exact - 1) > ROW_SUM_TOLERANCE:
            raise InputError(f"matrix[{i}]", f"row must sum to 1 within 1e-12, sums to "
                                             f"{float(exact)!r} (input {doc['inputs'][i]!r})")


def _check_objective_certificate(doc: dict[str, Any], family: bool) -> None:
    """``objective`` and ``certificate``: the fields the JSON Schemas require, of their types."""
    objective, certificate = doc["objective"], doc["certificate"]
    if not isinstance(objective, dict):
        raise InputError("objective", f"must be an object, got {objective!r}")
    if "kind" not in objective:
        raise InputError("objective.kind", "is required (the objective's name)")
    if not isinstance(certificate, dict):
        raise InputError("certificate", f"must be an object, got {certificate!r}")
    for name in ("verified", "method", "checks"):
        if name not in certificate:
            raise InputError(f"certificate.{name}", "is required")
    if family:
        return
    if not isinstance(objective["kind"], str):
        raise InputError("objective.kind", f"must be a string, got {objective['kind']!r}")
    for name in ("value", "bound"):
        v = objective.get(name)
        if name in objective and v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise InputError(f"objective.{name}", f"must be a number or null, got {v!r}")
    if not isinstance(certificate["verified"], bool):
        raise InputError("certificate.verified", f"must be true or false, got {certificate['verified']!r}")
    if not isinstance(certificate["method"], str):
        raise InputError("certificate.method", f"must be a string, got {certificate['method']!r}")
    checks = certificate["checks"]
    if not isinstance(checks, list):
        raise InputError("certificate.checks", f"must be a list, got {checks!r}")
    for i, c in enumerate(checks):
        if not isinstance(c, dict) or "notion" not in c or "ok" not in c:
            raise InputError(f"certificate.checks[{i}]", f"must be an object with 'notion' and 'ok', got {c!r}")


def _check_sha256(doc: dict[str, Any]) -> str:
    recorded = doc["sha256"]
    if not (isinstance(recorded, str) and len(recorded) == 64 and set(recorded) <= _HEX):
        raise InputError("sha256", f"must be 64 lowercase hex digits, got {recorded!r}")
    return recorded


def _check_family_document(doc: dict[str, Any]) -> Any:
    """Structure, parameters, claims' parameters and digest of a family file (``docs/families.md``)."""
    from mechopt.families._spec import FAMILY_VERSION, family_digest, family_from_spec

    missing = [name for name in _FAMILY_REQUIRED if name not in doc]
    if missing:
        raise InputError(missing[0], f"required field is missing from a family mechanism file (it requires "
                                     f"{', '.join(_FAMILY_REQUIRED)}); missing: {missing!r}")
    if doc["format"] != FORMAT:
        raise InputError("format", f"must be {FORMAT!r}, got {doc['format']!r}")
    version = doc["version"]
    if isinstance(version, bool) or not isinstance(version, int) or version != FAMILY_VERSION:
        raise InputError("version", f"a family file is version {FAMILY_VERSION}, got {version!r}")
    for name in ("outputs", "matrix"):
        if name in doc:
            raise InputError(name, "a family file lists no outputs and no matrix ('family' replaces them)")
    if "memoize" in doc:  # the family digest does not cover it: an added flag must not pass unseen
        raise InputError("memoize", "family mechanisms are not memoized (their digest covers no 'memoize' "
                                    "field); remove it")
    inputs = _check_labels(doc, "inputs")
    family = family_from_spec(doc["family"], inputs)
    _check_privacy_list(doc["privacy"])
    _check_objective_certificate(doc, family=True)
    recorded = _check_sha256(doc)
    computed = family_digest(doc)
    if computed != recorded:
        raise VerificationError(
            f"sha256: recorded digest {recorded!r} does not match {computed!r}, the digest of inputs, family "
            "and privacy; the file was modified after export — re-export it or obtain the original")
    return family


def _check_privacy_list(privacy: Any) -> None:
    """``privacy`` is a list of objects with a string ``notion`` (the claims' parameters come later)."""
    if not isinstance(privacy, list):
        raise InputError("privacy", f"must be a list of notions, got {privacy!r}")
    for i, notion in enumerate(privacy):
        if not isinstance(notion, dict) or not isinstance(notion.get("notion"), str):
            raise InputError(f"privacy[{i}]", f"must be an object with a string 'notion', got {notion!r}")


def _check_matrix_document(doc: dict[str, Any]) -> None:
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
    _check_privacy_list(doc["privacy"])
    _check_objective_certificate(doc, family=False)
    if "memoize" in doc:
        if version == 1:
            raise InputError("memoize", "is a version 2 field (a version 1 digest does not "
                                        "cover it); re-export the mechanism")
        if not isinstance(doc["memoize"], bool):
            raise InputError("memoize", f"must be true or false, got {doc['memoize']!r}")
    recorded = _check_sha256(doc)
    try:
        computed = canonical_digest(doc)
    except ValueError as err:  # an integer beyond +-(2**53 - 1), say
        raise InputError("privacy", f"cannot be written as canonical JSON: {err}") from None
    if computed != recorded:
        raise VerificationError(
            f"sha256: recorded digest {recorded!r} does not match {computed!r}, the digest "
            f"of the hashed fields (version {version}); the file was modified after export "
            "— re-export it or obtain the original")


class Checked:
    """A mechanism document that passed the client's checks: ``doc``, its ``family``, its parsed ``claims``.

    ``family`` is None for a matrix file, else the parsed family
    (:class:`mechopt.families.SubsetMixture` or :class:`~mechopt.families.HadamardFamily`);
    ``claims`` is None until :func:`parse_document_claims` has run.
    """

    __slots__ = ("doc", "claims", "family")

    def __init__(self, doc: dict[str, Any], claims: list[Claim] | None, family: Any) -> None:
        self.doc, self.claims, self.family = doc, claims, family


def _check(doc: Any) -> Checked:
    """Structure and digest (steps 1-2 of :func:`check_text`, after parsing)."""
    if not isinstance(doc, dict):
        raise InputError("document", f"must be a JSON object, got {type(doc).__name__}")
    if "family" in doc:
        return Checked(doc, None, _check_family_document(doc))
    _check_matrix_document(doc)
    return Checked(doc, None, None)


def parse_document_claims(checked: Checked, external: frozenset = frozenset()) -> list[Claim]:
    """The claims' parameters, validated (:func:`mechopt._claims.parse_claims`); kept on ``checked``.

    ``external``: notions registered at run time, passed through to their own checker
    (the numpy side, :func:`mechopt._mechanism.load_verified`); the client passes none.
    """
    if checked.claims is None:
        checked.claims = parse_claims(checked.doc["privacy"], checked.doc["inputs"], external)
    return checked.claims


def _verify_claims(checked: Checked, external: frozenset = frozenset()) -> None:
    """Exactly verify the claims: :func:`mechopt._claims.check_claims` or the family closed forms."""
    parse_document_claims(checked, external)
    if checked.family is None:
        check_claims(checked.doc, checked.claims)
        return
    from mechopt.families._privacy import family_claim

    for i, claim in enumerate(checked.claims):
        if claim.external:
            continue  # a run-time notion: its own checker decides (or refuses a family)
        ok, _, _, detail = family_claim(checked.family, claim)
        if not ok:
            raise VerificationError(f"privacy[{i}] ({claim.name}): {detail or 'the family fails the claim'}")


def check_document(doc: Any) -> dict[str, Any]:
    """Check the structure, the claims' parameters and the sha256 digest of a parsed mechanism document.

    A matrix file (``docs/formats.md``): ``format``; ``version`` (1 or 2); ``inputs`` and
    ``outputs`` are non-empty lists of unique strings; ``matrix`` is ``k × m`` of finite
    non-negative numbers whose rows sum to 1 within 1e-12, computed exactly on the
    decimal values; ``privacy`` is a list of objects with a string ``notion``;
    ``objective`` and ``certificate`` have the fields the JSON Schema requires;
    ``memoize``, if present, is a boolean of a version 2 file; and ``sha256`` equals
    :func:`mechopt._canonical.canonical_digest` of the document for its version. A family
    file (``docs/families.md``): the same with ``family`` (its parameters checked by
    :func:`mechopt.families.family_from_spec`) instead of ``outputs`` and ``matrix``,
    and the digest of :func:`mechopt.families.family_digest`. The claims — their
    parameters, then exactly — are checked after the digest, by :func:`load_document`
    and :class:`mechopt.client.Sampler` (unless ``verify=False``).

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
    return _check(doc).doc


def read_mechanism_text(path: str | Path) -> str:
    """The text of a mechanism file (UTF-8, at most :data:`MAX_FILE_BYTES`); one-line errors naming the path."""
    source = str(path)
    p = Path(path)
    try:
        if not p.exists():
            raise InputError(source, "file does not exist")
        if p.is_file() and p.stat().st_size > MAX_FILE_BYTES:
            raise InputError(source, f"is {p.stat().st_size} bytes; files up to {MAX_FILE_BYTES} bytes are read")
        return p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(source, f"cannot read the mechanism file: {err}") from None


def check_text(text: str, source: str = "mechanism", *, verify: bool = True) -> Checked:
    """The one load-and-verify path of a mechanism file's text: parse, check, verify the claims exactly.

    Every consumer of a mechanism file goes through this function — ``mechopt verify``
    (before its own exact certificate), ``mechopt privatize`` and ``estimate``,
    :func:`load_document`, :class:`mechopt.client.Sampler` (via :func:`check_document`),
    the family readers — so none of them can use a file another would refuse.

    1. :func:`mechopt._jsonsafe.loads_strict`: nesting deeper than 64 levels is refused
       before the parser recurses; duplicate keys, ``NaN``/``Infinity`` and numbers
       beyond float range are refused naming the place.
    2. :func:`check_document`: structure, then the digest.
    3. ``verify``: the claims' parameters (:func:`mechopt._claims.parse_claims`: JSON
       numbers where numbers belong, ``"inf"`` only where infinity is allowed, labels
       that exist, sizes equal to ``k``; at least one claim), then every claim exactly
       (:func:`mechopt._claims.check_claims` for a matrix, the closed forms of
       :mod:`mechopt.families._privacy` for a family).

    Parameters
    ----------
    text : str
        The file's text.
    source : str
        Prefix of every error's field (the file name).
    verify : bool, keyword-only
        Step 3 (default on; off only for test vectors of the digest and the sampler).

    Returns
    -------
    Checked

    Raises
    ------
    InputError
        Malformed (exit code 2 in the CLI); the field names the source and the place.
    VerificationError
        The digest does not match, there is no claim, or (``verify``) a claim fails (exit code 1).

    Examples
    --------
    >>> import json
    >>> from mechopt._canonical import signed_document
    >>> doc = signed_document(["a", "b"], ["a", "b"], [[1.0, 0.0], [0.0, 1.0]],
    ...                       [{"notion": "ldp", "epsilon": 1.0}])
    >>> check_text(json.dumps(doc), "m.json")
    Traceback (most recent call last):
    ...
    mechopt._errors.VerificationError: m.json: privacy[0] (ldp): column 0: Q[a][0] = 1.0 > e^1.0 * Q[b][0] = 0.0
    """
    doc = loads_strict(text, source)
    try:
        checked = _check(doc)
        if verify:
            _verify_claims(checked)
        return checked
    except InputError as err:
        raise InputError(f"{source}: {err.field}", err.rule) from None
    except VerificationError as err:
        raise VerificationError(f"{source}: {err}") from None


def load_document(path: str | Path, *, verify: bool = True) -> dict[str, Any]:
    """Read a mechanism file; check its structure, sha256 digest and (exactly) its privacy claims.

    Matrix and family files alike (:func:`check_text`, the one path every consumer takes).

    Parameters
    ----------
    path : str or pathlib.Path
        A mechanism JSON file, as written by ``mechopt solve``.
    verify : bool, keyword-only
        Re-verify the privacy claims exactly (standard library only). On by default: a
        re-hashed file whose matrix (or family) breaks its claims must never be used.

    Returns
    -------
    dict
        The parsed document (see :func:`check_document` for what was checked).

    Raises
    ------
    InputError
        When the file cannot be read, is not strict JSON (duplicate keys, ``NaN``, numbers
        beyond float range, nesting deeper than 64), or a field is missing or malformed;
        the message starts with the path and names the field.
    VerificationError
        When the recorded sha256 does not match the content, or (``verify``) a claim fails.

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
    return check_text(read_mechanism_text(path), str(path), verify=verify).doc


def verdict(text: str) -> tuple[str, str]:
    """The client's verdict on a mechanism file's text, as a pair ``(kind, message)``.

    ``("accept", "")`` when :func:`check_text` passes (the client would sample from the
    file); ``("refuse-input", message)`` for a malformed file (``mechopt verify`` exits
    2); ``("refuse-verification", message)`` when the digest or a claim fails (exit 1).
    ``mechopt verify FILE`` gives the same class on the same text (it runs
    :func:`check_text` first).

    Examples
    --------
    >>> verdict("[" * 100)[0]
    'refuse-input'
    """
    try:
        check_text(text, "mechanism")
    except InputError as err:
        return "refuse-input", str(err)
    except VerificationError as err:
        return "refuse-verification", str(err)
    return "accept", ""


def load_family_document(path) -> tuple[dict, Any]:
    """Read a family mechanism file on a device: structure, parameters, sha256 and claims, exactly.

    Standard library only. The same path as every reader of a mechanism file
    (:func:`mechopt._client_document.check_text`): strict JSON, the structure and the
    claims' parameters, the digest of ``inputs``, ``family`` and ``privacy``, then every
    privacy claim decided exactly from the family's parameters
    (:func:`mechopt.families._privacy.family_claim`), so a re-hashed file whose family
    breaks its claims is refused.

    Raises
    ------
    InputError
        Unreadable, not JSON, a matrix file, or a malformed field (the message names it).
    VerificationError
        The recorded sha256 is not the digest of ``inputs``, ``family`` and ``privacy``,
        or the family fails one of its privacy claims.
    """
    checked = check_text(read_mechanism_text(path), str(path))
    if checked.family is None:
        raise InputError(f"{path}: family", "is missing: this is a matrix mechanism file (read it with "
                                            "mechopt.client.load_document)")
    return checked.doc, checked.family
