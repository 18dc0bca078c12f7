"""Client-side deployment of a mechanism file: load, check, sample (``docs/formats.md``).

This module is what runs on a user's device. It uses the **standard library only**
(plus, for version 2 files, the pure-Python ``rfc8785`` package, which has no
dependencies; it imports :mod:`mechopt._client_document` (the file's checks, re-exported
here), :mod:`mechopt._claims`, :mod:`mechopt._canonical`, :mod:`mechopt._words` (the
exact uniform draws) and :mod:`mechopt._errors` and nothing else of mechopt), so a phone
or a browser-side Python without numpy can load a mechanism file, check that it is the file that was exported, and privatize its data.
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

The client trusts nothing: it reads the file strictly (duplicate keys, nesting deeper
than 64, numbers beyond float range are refused), checks the structure and the sha256
digest (a file changed after export is refused), checks every claim's parameters as
``mechopt verify`` does and, by default, re-verifies the matrix (or the family) against
the file's own privacy claims exactly (:mod:`mechopt._claims`, standard library only), so
a re-hashed file whose matrix breaks its claims is refused too. :func:`verdict` is that
decision on a file's text, the same class as ``mechopt verify``'s exit code.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Iterable, MutableMapping, Sequence
from fractions import Fraction
from typing import Any

from mechopt._client_document import (FORMAT, ROW_SUM_TOLERANCE, VERSION, VERSIONS, _check,  # noqa: F401
                                      _check_matrix, _check_number, _exact, _short, _verify_claims,
                                      check_document, check_text, load_document, verdict)
from mechopt._errors import InputError
from mechopt._words import SecureWords, StreamWords, uniform_below, uniform_masked

__all__ = ["FORMAT", "VERSION", "VERSIONS", "ROW_SUM_TOLERANCE", "check_document", "check_text",
           "load_document", "verdict", "row_weights", "uniform_below", "Sampler"]



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
    >>> from mechopt._canonical import signed_document
    >>> doc = signed_document(["no", "yes"], ["no", "yes"], [[0.75, 0.25], [0.25, 0.75]],
    ...                       [{"notion": "ldp", "epsilon": 1.1}])
    >>> Sampler(doc, words=[2]).sample("yes")     # weights [1, 3]: U = 2 & 0b11 = 2
    'yes'
    >>> Sampler(doc, seed=7).sample("yes") in ("no", "yes")   # seeded: simulation only
    True
    >>> Sampler(doc).probabilities("yes")
    (Fraction(1, 4), Fraction(3, 4))
    """

    def __init__(self, doc: dict[str, Any], *, seed: int | None = None,
                 words: Iterable[int] | None = None,
                 store: MutableMapping[str, str] | None = None, verify: bool = True, _checked: bool = False):
        # _checked: the caller has just run the whole check_text path on this document
        # (mechopt privatize, after load_verified): do not check and verify it twice
        if not _checked:
            checked = _check(doc)
            if checked.family is not None:
                raise InputError("family", "is a family mechanism: sample it with mechopt.families.FamilySampler "
                                           "(mechopt.families.load_family_document reads and verifies the file)")
            if verify:
                _verify_claims(checked)
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
        # per row, prepared when first drawn from: (total T, words per draw, mask of the low
        # bits, cumulative sums C)
        self._matrix = doc["matrix"]
        self._rows: list[tuple[int, int, int, list[int]] | None] = [None] * len(self._matrix)
        self._stream: StreamWords | None = None
        if words is not None:
            self._stream = StreamWords(words)
            self._take = self._stream
        elif seed is not None:
            rng = random.Random(seed)
            self._take = lambda n: rng.getrandbits(32 * n)
        else:
            self._take = SecureWords()

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
        >>> from mechopt._canonical import signed_document
        >>> doc = signed_document(["x"], ["u", "v"], [[0.1, 0.9]],
        ...                       [{"notion": "ldp", "epsilon": 1.0}])
        >>> Sampler(doc).probabilities("x")
        (Fraction(1, 10), Fraction(9, 10))
        """
        x = self._lookup(label)
        total, _, _, cumulative = self._row(x)
        previous = [0, *cumulative[:-1]]
        return tuple(Fraction(c - p, total) for c, p in zip(cumulative, previous))

    def _lookup(self, label: str) -> int:
        try:
            return self._index[label]
        except (KeyError, TypeError):
            raise InputError("label", f"{label!r} is not an input of the mechanism; "
                                      f"inputs are {_short(self.inputs)}") from None

    def _row(self, x: int) -> tuple[int, int, int, list[int]]:
        prepared = self._rows[x]
        if prepared is None:
            cumulative, running = [], 0
            for w in row_weights(self._matrix[x]):
                running += w
                cumulative.append(running)
            bits = (running - 1).bit_length()
            prepared = self._rows[x] = (running, (bits + 31) // 32, (1 << bits) - 1, cumulative)
        return prepared

    def _draw(self, x: int) -> str:
        total, count, mask, cumulative = self._row(x)
        return self.outputs[bisect.bisect_right(cumulative, uniform_masked(total, count, mask, self._take))]

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
        ``store``; later reports of the same value repeat it. ``label`` (the user's true
        input) and the error for an unknown one are as in :meth:`probabilities`.

        Returns
        -------
        str
            The output label to report.

        Examples
        --------
        >>> from mechopt._canonical import signed_document
        >>> doc = signed_document(["x"], ["u", "v"], [[0.0, 1.0]], [{"notion": "ldp", "epsilon": 1.0}])
        >>> Sampler(doc).sample("x")   # the only output of positive probability
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
        >>> from mechopt._canonical import signed_document
        >>> doc = signed_document(["x", "y"], ["u", "v"], [[1, 0], [0, 1]],
        ...                       [{"notion": "eldp", "matrix": [[0, "inf"], ["inf", 0]]}])
        >>> Sampler(doc, seed=0).sample_many(["y", "x", "y"])
        ['v', 'u', 'v']
        """
        rows = [self._lookup(label) for label in labels]
        if self.memoize:
            return [self._memoized(x) for x in rows]
        for x in set(rows):
            self._row(x)
        take, prepared, outputs, right = self._take, self._rows, self.outputs, bisect.bisect_right
        out = []
        for x in rows:
            total, count, mask, cumulative = prepared[x]
            r = take(count) & mask
            while r >= total:  # rejection, as in uniform_below
                r = take(count) & mask
            out.append(outputs[right(cumulative, r)])
        return out
