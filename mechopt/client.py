"""Client-side deployment of a mechanism file: load, check, sample (SPEC §5, §6).

This module is what runs on a user's device. It uses the **standard library only**
(it imports :mod:`mechopt._canonical` and :mod:`mechopt._errors`, both stdlib-only, and
nothing else of mechopt), so a phone or a browser-side Python without numpy can load a
mechanism file, check that it is the file that was exported, and privatize its data.

Sampling is **exact**: each row's decimal probabilities are read as exact fractions
(``fractions.Fraction(str(v))``, the same reading the verifier uses, SPEC §4), turned into
cumulative integer thresholds over a common denominator, and an output is drawn with one
uniform integer below that denominator. The distribution of the report is therefore
exactly the matrix row (renormalised exactly if the row sums to 1 within 1e-12), with no
floating-point rounding. By default the integer comes from :func:`secrets.randbelow`
(the operating system's cryptographically secure generator); a ``seed`` switches to
:class:`random.Random`, which is reproducible and **for simulation only** — its outputs
are predictable, so it must never be used to privatize real data.

The client does not re-verify the privacy claims: that is :mod:`mechopt`'s exact
verifier (``mechopt verify``). It checks the structure and the sha256 digest, so a file
whose matrix or privacy claim was changed after export is refused.
"""

from __future__ import annotations

import bisect
import json
import math
import random
import secrets
from collections.abc import Iterable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from mechopt._canonical import canonical_digest
from mechopt._errors import InputError, VerificationError

__all__ = ["FORMAT", "VERSION", "ROW_SUM_TOLERANCE", "check_document", "load_document",
           "Sampler"]

#: Value of the ``format`` field of a mechanism file.
FORMAT = "mechopt-mechanism"
#: The mechanism file version this module reads.
VERSION = 1
#: Rows must sum to 1 within this, computed exactly on the decimals (SPEC §4).
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
    """The exact decimal value of a JSON number, as the verifier reads it (SPEC §4)."""
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


def _check_matrix(doc: dict[str, Any], k: int, m: int) -> list[list[Fraction]]:
    matrix = doc["matrix"]
    if not isinstance(matrix, list) or len(matrix) != k:
        got = len(matrix) if isinstance(matrix, list) else type(matrix).__name__
        raise InputError("matrix", f"must be a list of {k} rows (one per input), got {got!r}")
    rows: list[list[Fraction]] = []
    for i, row in enumerate(matrix):
        if not isinstance(row, list) or len(row) != m:
            got = len(row) if isinstance(row, list) else type(row).__name__
            raise InputError(f"matrix[{i}]", f"must be a list of {m} entries (one per "
                                             f"output), got {got!r}")
        exact = [_check_number(v, f"matrix[{i}][{j}]") for j, v in enumerate(row)]
        total = sum(exact, Fraction(0))
        if abs(total - 1) > ROW_SUM_TOLERANCE:
            raise InputError(f"matrix[{i}]", f"row must sum to 1 within 1e-12, sums to "
                                             f"{float(total)!r} (input {doc['inputs'][i]!r})")
        rows.append(exact)
    return rows


def check_document(doc: Any) -> dict[str, Any]:
    """Check the structure and the sha256 digest of a parsed mechanism document.

    Checks the required fields of SPEC §5: ``format`` and ``version``; ``inputs`` and
    ``outputs`` are non-empty lists of unique strings; ``matrix`` is ``k × m`` of finite
    non-negative numbers whose rows sum to 1 within 1e-12, computed exactly on the decimal
    values (``Fraction(str(v))``); ``privacy`` is a list of objects, ``objective`` and
    ``certificate`` objects; and ``sha256`` equals :func:`mechopt._canonical.canonical_digest`
    of the document. The privacy claims themselves are not re-verified here (use
    ``mechopt verify``).

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
        ``inputs``, ``outputs``, ``matrix`` and ``privacy`` (the file was altered).

    Examples
    --------
    >>> from mechopt._canonical import canonical_digest
    >>> doc = {"format": "mechopt-mechanism", "version": 1, "inputs": ["a", "b"],
    ...        "outputs": ["a", "b"], "matrix": [[0.75, 0.25], [0.25, 0.75]],
    ...        "privacy": [{"notion": "ldp", "epsilon": 1.1}], "objective": {},
    ...        "certificate": {}}
    >>> doc["sha256"] = canonical_digest(doc)
    >>> check_document(doc)["outputs"]
    ['a', 'b']
    """
    if not isinstance(doc, dict):
        raise InputError("document", f"must be a JSON object, got {type(doc).__name__}")
    missing = [name for name in _REQUIRED if name not in doc]
    if missing:
        raise InputError(missing[0], f"required field is missing (SPEC §5 requires "
                                     f"{', '.join(_REQUIRED)}); missing: {missing!r}")
    if doc["format"] != FORMAT:
        raise InputError("format", f"must be {FORMAT!r}, got {doc['format']!r}")
    version = doc["version"]
    if isinstance(version, bool) or version != VERSION:
        raise InputError("version", f"must be {VERSION} (the version this client reads), "
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
    recorded = doc["sha256"]
    if not (isinstance(recorded, str) and len(recorded) == 64 and set(recorded) <= _HEX):
        raise InputError("sha256", f"must be 64 lowercase hex digits, got {recorded!r}")
    try:
        computed = canonical_digest(doc)
    except ValueError as err:  # non-finite float inside privacy, say
        raise InputError("privacy", f"cannot be written as canonical JSON: {err}") from None
    if computed != recorded:
        raise VerificationError(
            f"sha256: recorded digest {recorded!r} does not match {computed!r}, the digest "
            "of inputs, outputs, matrix and privacy; the file was modified after export — "
            "re-export it or obtain the original")
    return doc


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def load_document(path: str | Path) -> dict[str, Any]:
    """Read a mechanism file and check its structure and sha256 digest (SPEC §5).

    Parameters
    ----------
    path : str or pathlib.Path
        A mechanism JSON file, as written by ``mechopt solve``.

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
        When the recorded sha256 does not match the content.

    Examples
    --------
    >>> import json, tempfile, os
    >>> from mechopt._canonical import canonical_digest
    >>> doc = {"format": "mechopt-mechanism", "version": 1, "inputs": ["no", "yes"],
    ...        "outputs": ["no", "yes"], "matrix": [[0.75, 0.25], [0.25, 0.75]],
    ...        "privacy": [{"notion": "ldp", "epsilon": 1.1}], "objective": {},
    ...        "certificate": {}}
    >>> doc["sha256"] = canonical_digest(doc)
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
    try:
        return check_document(doc)
    except InputError as err:
        raise InputError(f"{source}: {err.field}", err.rule) from None
    except VerificationError as err:
        raise VerificationError(f"{source}: {err}") from None


class Sampler:
    """Exact sampler of a mechanism's reports, for use on the client.

    Row ``x`` of the matrix is read as exact decimals ``F_j = Fraction(str(Q[x][j]))``.
    With ``D`` the least common denominator of the row, the integers ``c_j = F_j · D`` are
    the output's weights and ``T = Σ_j c_j`` their total (``T = D`` when the row sums to
    exactly 1; otherwise — within the 1e-12 the format allows — this renormalises the row
    exactly). A report is ``j = bisect_right(cumsum(c), U)`` for a uniform integer
    ``U < T``, so ``Pr(report = j | x) = c_j / T = F_j / Σ F`` with no rounding at all.

    Parameters
    ----------
    doc : dict
        A mechanism document (checked again with :func:`check_document`).
    seed : int or None, keyword-only
        ``None`` (default): draw ``U`` with :func:`secrets.randbelow`, a cryptographically
        secure generator — use this to privatize real data. An integer: draw ``U`` with
        ``random.Random(seed).randrange``, reproducible and **for simulation and tests
        only** (its outputs can be predicted, which defeats the privacy guarantee).

    Raises
    ------
    InputError
        When the document is malformed or ``seed`` is not an integer.
    VerificationError
        When the document's sha256 does not match.

    Examples
    --------
    >>> from mechopt._canonical import canonical_digest
    >>> doc = {"format": "mechopt-mechanism", "version": 1, "inputs": ["no", "yes"],
    ...        "outputs": ["no", "yes"], "matrix": [[0.75, 0.25], [0.25, 0.75]],
    ...        "privacy": [{"notion": "ldp", "epsilon": 1.1}], "objective": {},
    ...        "certificate": {}}
    >>> doc["sha256"] = canonical_digest(doc)
    >>> sampler = Sampler(doc, seed=7)          # seeded: simulation only
    >>> sampler.sample("yes") in ("no", "yes")
    True
    >>> sampler.probabilities("yes")
    (Fraction(1, 4), Fraction(3, 4))
    """

    def __init__(self, doc: dict[str, Any], *, seed: int | None = None):
        check_document(doc)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise InputError("seed", f"must be an integer or None, got {seed!r}")
        self.inputs: tuple[str, ...] = tuple(doc["inputs"])
        self.outputs: tuple[str, ...] = tuple(doc["outputs"])
        self.seeded = seed is not None
        self._index = {label: i for i, label in enumerate(self.inputs)}
        self._cumulative: list[list[int]] = []
        self._totals: list[int] = []
        for row in doc["matrix"]:
            exact = [_exact(v) for v in row]
            denominator = 1
            for f in exact:
                denominator = denominator * f.denominator // math.gcd(denominator,
                                                                      f.denominator)
            weights = [f.numerator * (denominator // f.denominator) for f in exact]
            common = 0
            for w in weights:
                common = math.gcd(common, w)
            weights = [w // common for w in weights]
            cumulative, running = [], 0
            for w in weights:
                running += w
                cumulative.append(running)
            self._cumulative.append(cumulative)
            self._totals.append(running)
        if seed is None:
            self._randbelow = secrets.randbelow
        else:
            self._randbelow = random.Random(seed).randrange

    def probabilities(self, label: str) -> tuple[Fraction, ...]:
        """Return the exact probabilities with which :meth:`sample` draws each output.

        Parameters
        ----------
        label : str
            An input label.

        Returns
        -------
        tuple of fractions.Fraction
            One per output, in the order of ``outputs``; they sum to exactly 1.

        Raises
        ------
        InputError
            When ``label`` is not an input of the mechanism.

        Examples
        --------
        >>> from mechopt._canonical import canonical_digest
        >>> doc = {"format": "mechopt-mechanism", "version": 1, "inputs": ["x"],
        ...        "outputs": ["u", "v"], "matrix": [[0.1, 0.9]], "privacy": [],
        ...        "objective": {}, "certificate": {}}
        >>> doc["sha256"] = canonical_digest(doc)
        >>> Sampler(doc).probabilities("x")
        (Fraction(1, 10), Fraction(9, 10))
        """
        x = self._lookup(label)
        cumulative, total = self._cumulative[x], self._totals[x]
        previous = [0, *cumulative[:-1]]
        return tuple(Fraction(c - p, total) for c, p in zip(cumulative, previous))

    def _lookup(self, label: str) -> int:
        try:
            return self._index[label]
        except (KeyError, TypeError):
            raise InputError("label", f"{label!r} is not an input of the mechanism; "
                                      f"inputs are {_short(self.inputs)}") from None

    def sample(self, label: str) -> str:
        """Privatize one input: draw an output label from the input's row.

        Parameters
        ----------
        label : str
            The user's true input label.

        Returns
        -------
        str
            The output label to report.

        Raises
        ------
        InputError
            When ``label`` is not an input of the mechanism.

        Examples
        --------
        >>> from mechopt._canonical import canonical_digest
        >>> doc = {"format": "mechopt-mechanism", "version": 1, "inputs": ["x"],
        ...        "outputs": ["u", "v"], "matrix": [[0.0, 1.0]], "privacy": [],
        ...        "objective": {}, "certificate": {}}
        >>> doc["sha256"] = canonical_digest(doc)
        >>> Sampler(doc).sample("x")
        'v'
        """
        x = self._lookup(label)
        u = self._randbelow(self._totals[x])
        return self.outputs[bisect.bisect_right(self._cumulative[x], u)]

    def sample_many(self, labels: Iterable[str]) -> list[str]:
        """Privatize many inputs independently; all labels are checked before any draw.

        Parameters
        ----------
        labels : iterable of str
            True input labels, one per report.

        Returns
        -------
        list of str
            One output label per input, in the same order.

        Raises
        ------
        InputError
            When a label is not an input of the mechanism (nothing is drawn then).

        Examples
        --------
        >>> from mechopt._canonical import canonical_digest
        >>> doc = {"format": "mechopt-mechanism", "version": 1, "inputs": ["x", "y"],
        ...        "outputs": ["u", "v"], "matrix": [[1, 0], [0, 1]], "privacy": [],
        ...        "objective": {}, "certificate": {}}
        >>> doc["sha256"] = canonical_digest(doc)
        >>> Sampler(doc, seed=0).sample_many(["y", "x", "y"])
        ['v', 'u', 'v']
        """
        rows = [self._lookup(label) for label in labels]
        draw, totals, cumulative = self._randbelow, self._totals, self._cumulative
        outputs, right = self.outputs, bisect.bisect_right
        return [outputs[right(cumulative[x], draw(totals[x]))] for x in rows]
