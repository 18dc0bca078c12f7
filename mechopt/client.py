"""Client-side deployment of a mechanism file: load, check, sample (``docs/formats.md``).

This module is what runs on a user's device. It uses the **standard library only**
(plus, for version 2 files, the pure-Python ``rfc8785`` package, which has no
dependencies; it imports :mod:`mechopt._canonical` and :mod:`mechopt._errors` and
nothing else of mechopt), so a phone or a browser-side Python without numpy can load a
mechanism file, check that it is the file that was exported, and privatize its data.
``clients/js`` is the same client in JavaScript; both pass the test vectors in
``clients/vectors``.

Sampling is **exact** and specified to the bit (``docs/formats.md``, "Exact
sampling"): each row's decimal probabilities are read as exact fractions (the same
reading the exact verifier uses), turned into the smallest integer weights with the same
ratios, and an output is drawn with one uniform integer below their total, built from
32-bit random words by rejection. The report's distribution is therefore exactly the
matrix row (renormalised exactly if the row sums to 1 within 1e-12), with no
floating-point rounding, and two clients fed the same words report the same outputs.
By default the words come from :func:`os.urandom` (the operating system's
cryptographically secure generator); ``seed`` switches to :class:`random.Random`, which
is reproducible and **for simulation only**; ``words`` takes an explicit stream (test
vectors, cross-client checks).

A mechanism marked ``"memoize": true`` is sampled once per true value: the client keeps
that permanent response (as RAPPOR's permanent randomized response) in ``store`` and
repeats it, so reporting an unchanged value again reveals nothing new.

The client trusts nothing: it checks the structure and the sha256 digest (a file changed
after export is refused) and, by default, re-verifies the matrix against the file's own
privacy claims exactly (:mod:`mechopt._claims`, standard library only), so a re-hashed
file whose matrix breaks its claims is refused too.
"""

from __future__ import annotations

import bisect
import json
import math
import os
import random
from collections.abc import Iterable, Iterator, MutableMapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from mechopt._canonical import VERSIONS, canonical_digest
from mechopt._claims import check_claims
from mechopt._errors import InputError, VerificationError

__all__ = ["FORMAT", "VERSION", "VERSIONS", "ROW_SUM_TOLERANCE", "check_document",
           "load_document", "row_weights", "uniform_below", "Sampler"]

#: Value of the ``format`` field of a mechanism file.
FORMAT = "mechopt-mechanism"
#: The mechanism file version writers emit (readers accept :data:`VERSIONS`).
VERSION = 2
#: Rows must sum to 1 within this, computed exactly on the decimals.
ROW_SUM_TOLERANCE = Fraction(1, 10**12)

_REQUIRED = ("format", "version", "inputs", "outputs", "matrix", "privacy", "objective",
             "certificate", "sha256")
_HEX = frozenset("0123456789abcdef")
_WORD = 1 << 32


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
    >>> from mechopt._canonical import canonical_digest
    >>> doc = {"format": "mechopt-mechanism", "version": 2, "inputs": ["a", "b"],
    ...        "outputs": ["a", "b"], "matrix": [[0.75, 0.25], [0.25, 0.75]],
    ...        "privacy": [{"notion": "ldp", "epsilon": 1.1}], "objective": {},
    ...        "certificate": {}}
    >>> doc["sha256"] = canonical_digest(doc)
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
    >>> from mechopt._canonical import canonical_digest
    >>> doc = {"format": "mechopt-mechanism", "version": 2, "inputs": ["no", "yes"],
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


# ----------------------------------------------------------------- exact sampling


def row_weights(row: Sequence[Any]) -> list[int]:
    """The smallest non-negative integers proportional to a row's exact decimals.

    Step 1 of the exact sampler (``docs/formats.md``, "Exact sampling"): each entry is
    read as its exact decimal value, all are brought to a common denominator, and the
    resulting integers are divided by their greatest common divisor. Output ``j`` is
    reported with probability ``c_j / Σ c``.

    Parameters
    ----------
    row : sequence of int or float
        One row of a mechanism's matrix (as parsed from JSON); not all zero.

    Returns
    -------
    list of int

    Examples
    --------
    >>> row_weights([0.1, 0.9])
    [1, 9]
    >>> row_weights([0.25, 0.5, 0.25, 0])
    [1, 2, 1, 0]
    """
    exact = [_exact(v) for v in row]
    denominator = 1
    for f in exact:
        denominator = denominator * f.denominator // math.gcd(denominator, f.denominator)
    weights = [f.numerator * (denominator // f.denominator) for f in exact]
    common = 0
    for w in weights:
        common = math.gcd(common, w)
    return [w // common for w in weights]


def uniform_below(total: int, take) -> int:
    """A uniform integer in ``[0, total)`` from 32-bit words, by rejection (step 3).

    With ``b`` the bit length of ``total − 1`` and ``n = ceil(b / 32)``: read ``n``
    words, join them big-endian (the first word is the most significant), keep the low
    ``b`` bits; accept if below ``total``, otherwise read ``n`` new words. ``total = 1``
    reads nothing.

    Parameters
    ----------
    total : int
        ``>= 1``.
    take : callable
        ``take(n)`` returns the next ``n`` words joined big-endian, an integer below
        ``2**(32 n)``.

    Returns
    -------
    int

    Examples
    --------
    >>> words = iter([0xFFFFFFFF, 0x0000000C, 0x00000005])
    >>> take = lambda n: next(words)      # one word at a time here (total < 2**32)
    >>> uniform_below(10, take)           # 15 and 12 are rejected; 5 is accepted
    5
    """
    bits = (total - 1).bit_length()
    return _uniform(total, (bits + 31) // 32, (1 << bits) - 1, take)


def _uniform(total: int, count: int, mask: int, take) -> int:
    """:func:`uniform_below` with its word count and mask precomputed (0 and 0 for 1)."""
    while True:
        r = take(count) & mask
        if r < total:
            return r


class _SecureWords:
    """Words from :func:`os.urandom`, read in 64 KiB blocks (big-endian 4-byte words).

    The block is never shared across processes: a forked child (a pre-forking server,
    a process pool) would otherwise replay its parent's unread bytes, so the buffer is
    dropped whenever the process id changes.
    """

    block = 65536

    def __init__(self) -> None:
        self._buf = b""
        self._pos = 0
        self._pid = os.getpid()

    def __call__(self, n: int) -> int:
        size = 4 * n
        if self._pid != os.getpid():
            self._buf, self._pos, self._pid = b"", 0, os.getpid()
        if self._pos + size > len(self._buf):
            self._buf = self._buf[self._pos:] + os.urandom(max(self.block, size))
            self._pos = 0
        start = self._pos
        self._pos = start + size
        return int.from_bytes(self._buf[start:start + size], "big")


class _StreamWords:
    """Words from an explicit iterable of integers in ``[0, 2**32)`` (portable stream)."""

    def __init__(self, words: Iterable[int]) -> None:
        self._it: Iterator[int] = iter(words)
        self.used = 0

    def __call__(self, n: int) -> int:
        r = 0
        for _ in range(n):
            try:
                w = next(self._it)
            except StopIteration:
                raise InputError("words", f"the word stream ran out after {self.used} "
                                          "words") from None
            if isinstance(w, bool) or not isinstance(w, int) or not 0 <= w < _WORD:
                raise InputError(f"words[{self.used}]", f"must be an integer in "
                                                        f"[0, 2**32), got {w!r}")
            r = (r << 32) | w
            self.used += 1
        return r


class Sampler:
    """Exact sampler of a mechanism's reports, for use on the client.

    For each row the sampler precomputes the integer weights ``c`` of
    :func:`row_weights`, their cumulative sums ``C`` and total ``T``. A report for input
    ``x`` is the output ``j`` with ``C[j−1] <= U < C[j]`` for ``U`` drawn by
    :func:`uniform_below` ``(T)``, so ``Pr(report = j | x) = c_j / T`` exactly — the row's
    decimals, renormalised exactly when they sum to 1 within 1e-12 but not exactly.
    The procedure is specified in ``docs/formats.md`` ("Exact sampling"); the JavaScript
    client implements the same one, and ``clients/vectors/sampling.json`` pins it.

    Parameters
    ----------
    doc : dict
        A mechanism document (checked again with :func:`check_document`).
    seed : int or None, keyword-only
        ``None`` (default): 32-bit words from :func:`os.urandom`, cryptographically
        secure — use this to privatize real data. An integer: words from
        ``random.Random(seed)``, reproducible and **for simulation and tests only** (its
        outputs can be predicted, which defeats the privacy guarantee).
    words : iterable of int, keyword-only
        An explicit stream of 32-bit words (test vectors, cross-client checks); not with
        ``seed``. :attr:`words_used` counts the words read.
    store : mutable mapping, keyword-only
        For a memoized mechanism, where permanent responses are kept, under the key
        ``"<sha256>:<input label>"`` (default: a new dict; pass a persistent mapping —
        e.g. a ``shelve`` — to keep them across sessions). Ignored otherwise.
    verify : bool, keyword-only
        Re-verify the privacy claims exactly before sampling (default; see
        :func:`load_document`).

    Raises
    ------
    InputError
        When the document is malformed, ``seed`` is not an integer, or both ``seed`` and
        ``words`` are given.
    VerificationError
        When the document's sha256 does not match, or its matrix fails a privacy claim.

    Examples
    --------
    >>> from mechopt._canonical import canonical_digest
    >>> doc = {"format": "mechopt-mechanism", "version": 2, "inputs": ["no", "yes"],
    ...        "outputs": ["no", "yes"], "matrix": [[0.75, 0.25], [0.25, 0.75]],
    ...        "privacy": [{"notion": "ldp", "epsilon": 1.1}], "objective": {},
    ...        "certificate": {}}
    >>> doc["sha256"] = canonical_digest(doc)
    >>> Sampler(doc, words=[2]).sample("yes")     # weights [1, 3]: U = 2 & 0b11 = 2
    'yes'
    >>> Sampler(doc, seed=7).sample("yes") in ("no", "yes")   # seeded: simulation only
    True
    >>> Sampler(doc).probabilities("yes")
    (Fraction(1, 4), Fraction(3, 4))
    """

    def __init__(self, doc: dict[str, Any], *, seed: int | None = None,
                 words: Iterable[int] | None = None,
                 store: MutableMapping[str, str] | None = None, verify: bool = True):
        check_document(doc)
        if verify:
            check_claims(doc)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise InputError("seed", f"must be an integer or None, got {seed!r}")
        if seed is not None and words is not None:
            raise InputError("words", "give either a seed or a word stream, not both")
        self.inputs: tuple[str, ...] = tuple(doc["inputs"])
        self.outputs: tuple[str, ...] = tuple(doc["outputs"])
        self.sha256: str = doc["sha256"]
        self.memoize: bool = bool(doc.get("memoize", False))
        self.store: MutableMapping[str, str] = {} if store is None else store
        self.seeded = seed is not None
        self._index = {label: i for i, label in enumerate(self.inputs)}
        self._output_index = {label: j for j, label in enumerate(self.outputs)}
        # per row: (total T, words per draw, mask of the low bits, cumulative sums C)
        self._rows: list[tuple[int, int, int, list[int]]] = []
        for row in doc["matrix"]:
            cumulative, running = [], 0
            for w in row_weights(row):
                running += w
                cumulative.append(running)
            bits = (running - 1).bit_length()
            self._rows.append((running, (bits + 31) // 32, (1 << bits) - 1, cumulative))
        self._stream: _StreamWords | None = None
        if words is not None:
            self._stream = _StreamWords(words)
            self._take = self._stream
        elif seed is not None:
            rng = random.Random(seed)
            self._take = lambda n: rng.getrandbits(32 * n)
        else:
            self._take = _SecureWords()

    @property
    def words_used(self) -> int | None:
        """Words read from an explicit ``words`` stream (``None`` for other sources)."""
        return None if self._stream is None else self._stream.used

    def probabilities(self, label: str) -> tuple[Fraction, ...]:
        """Return the exact probabilities with which a fresh draw reports each output.

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
        >>> doc = {"format": "mechopt-mechanism", "version": 2, "inputs": ["x"],
        ...        "outputs": ["u", "v"], "matrix": [[0.1, 0.9]],
        ...        "privacy": [{"notion": "ldp", "epsilon": 1.0}],
        ...        "objective": {}, "certificate": {}}
        >>> doc["sha256"] = canonical_digest(doc)
        >>> Sampler(doc).probabilities("x")
        (Fraction(1, 10), Fraction(9, 10))
        """
        x = self._lookup(label)
        total, _, _, cumulative = self._rows[x]
        previous = [0, *cumulative[:-1]]
        return tuple(Fraction(c - p, total) for c, p in zip(cumulative, previous))

    def _lookup(self, label: str) -> int:
        try:
            return self._index[label]
        except (KeyError, TypeError):
            raise InputError("label", f"{label!r} is not an input of the mechanism; "
                                      f"inputs are {_short(self.inputs)}") from None

    def _draw(self, x: int) -> str:
        total, count, mask, cumulative = self._rows[x]
        return self.outputs[bisect.bisect_right(cumulative, _uniform(total, count, mask, self._take))]

    def _memoized(self, x: int) -> str:
        key = f"{self.sha256}:{self.inputs[x]}"
        kept = self.store.get(key)
        if kept is None:
            kept = self._draw(x)
            self.store[key] = kept
        elif kept not in self._output_index:
            raise InputError("store", f"holds {kept!r} for input {self.inputs[x]!r}, which is "
                                      "not an output of this mechanism; the store belongs to "
                                      "another mechanism or was altered")
        return kept

    def sample(self, label: str) -> str:
        """Privatize one input: draw an output label from the input's row.

        For a memoized mechanism the first report of a value is drawn and kept in
        ``store``; later reports of the same value repeat it.

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
        >>> doc = {"format": "mechopt-mechanism", "version": 2, "inputs": ["x"],
        ...        "outputs": ["u", "v"], "matrix": [[0.0, 1.0]],
        ...        "privacy": [{"notion": "ldp", "epsilon": 1.0}],
        ...        "objective": {}, "certificate": {}}
        >>> doc["sha256"] = canonical_digest(doc)
        >>> Sampler(doc).sample("x")
        'v'
        """
        x = self._lookup(label)
        return self._memoized(x) if self.memoize else self._draw(x)

    def sample_many(self, labels: Iterable[str]) -> list[str]:
        """Privatize many inputs, in order; all labels are checked before any draw.

        Each label is one report of :meth:`sample` (independent draws, or the kept
        responses of a memoized mechanism).

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
        >>> doc = {"format": "mechopt-mechanism", "version": 2, "inputs": ["x", "y"],
        ...        "outputs": ["u", "v"], "matrix": [[1, 0], [0, 1]],
        ...        "privacy": [{"notion": "eldp", "matrix": [[0, "inf"], ["inf", 0]]}],
        ...        "objective": {}, "certificate": {}}
        >>> doc["sha256"] = canonical_digest(doc)
        >>> Sampler(doc, seed=0).sample_many(["y", "x", "y"])
        ['v', 'u', 'v']
        """
        rows = [self._lookup(label) for label in labels]
        if self.memoize:
            return [self._memoized(x) for x in rows]
        take, prepared, outputs, right = self._take, self._rows, self.outputs, bisect.bisect_right
        out = []
        for x in rows:
            total, count, mask, cumulative = prepared[x]
            r = take(count) & mask
            while r >= total:  # rejection, as in uniform_below
                r = take(count) & mask
            out.append(outputs[right(cumulative, r)])
        return out
