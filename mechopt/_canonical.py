"""Canonical digest of a mechanism file (``docs/formats.md``, "The digest").

Two digests, chosen by the file's ``version``:

* **version 1** — ``sha256`` of Python's ``json.dumps(payload, sort_keys=True,
  separators=(",", ":"), allow_nan=False)``. Python-specific: it writes ``1e-05`` and
  ``1.0`` where JavaScript writes ``0.00001`` and ``1``, so only Python can check it.
  Still read, never written.
* **version 2** — ``sha256`` of the RFC 8785 JSON Canonicalization Scheme (JCS)
  serialization of the payload, UTF-8. JCS fixes the number format (that of
  ECMAScript's ``Number.prototype.toString``) and the key order (UTF-16 code units), so
  a client in any language recomputes it from the parsed values. The serializer is the
  ``rfc8785`` package (pure Python, no dependencies), imported only when needed.

The payload is ``{"inputs", "outputs", "matrix", "privacy"}``; a version 2 file may also
carry ``memoize`` (hashed when present: it changes what repeated reports reveal). A
*structured* mechanism (extension point, not supported yet) replaces ``outputs`` and
``matrix`` by ``family``: its payload is ``{"inputs", "family", "privacy"}``.

Standard library (plus ``rfc8785``) only: the client path (:mod:`mechopt.client`)
imports this module on devices that have no numpy.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

#: The mechanism file versions that readers accept; writers emit the last one.
VERSIONS = (1, 2)
#: The version writers emit.
CURRENT_VERSION = 2
#: The hashed fields of a matrix mechanism (versions 1 and 2).
HASHED_FIELDS = ("inputs", "outputs", "matrix", "privacy")
#: The hashed fields of a structured ("family") mechanism, version 2 (extension point).
FAMILY_HASHED_FIELDS = ("inputs", "family", "privacy")
#: Optional version 2 fields that are hashed when present.
OPTIONAL_HASHED_FIELDS = ("memoize",)


def hashed_payload(doc: dict[str, Any], version: int | None = None) -> dict[str, Any]:
    """The object whose canonical form is hashed (see the module docstring).

    Parameters
    ----------
    doc : dict
        A mechanism document (parsed values).
    version : int, optional
        1 or 2; default ``doc.get("version", 1)``.

    Returns
    -------
    dict

    Raises
    ------
    KeyError
        When a hashed field is missing (callers check the structure first).

    Examples
    --------
    >>> sorted(hashed_payload({"version": 2, "inputs": ["a"], "outputs": ["a"],
    ...                        "matrix": [[1]], "privacy": [], "objective": {}}))
    ['inputs', 'matrix', 'outputs', 'privacy']
    """
    version = doc.get("version", 1) if version is None else version
    fields = FAMILY_HASHED_FIELDS if "family" in doc else HASHED_FIELDS
    payload = {name: doc[name] for name in fields}
    if version != 1 and "family" not in doc:  # a family file has no memoize (the client refuses one)
        payload.update({name: doc[name] for name in OPTIONAL_HASHED_FIELDS if name in doc})
    return payload


def canonical_bytes(doc: dict[str, Any], version: int | None = None) -> bytes:
    """The exact bytes that are hashed: version 1 ``json.dumps``, version 2 RFC 8785.

    Parameters
    ----------
    doc, version
        As :func:`hashed_payload`.

    Returns
    -------
    bytes

    Raises
    ------
    ValueError
        When a value cannot be written canonically (NaN, infinity; for version 2 also an
        integer beyond ±(2**53 − 1), which JSON readers in other languages cannot hold).

    Examples
    --------
    >>> d = {"inputs": ["a"], "outputs": ["a"], "matrix": [[1.0, 1e-05]], "privacy": []}
    >>> canonical_bytes(d, 1)
    b'{"inputs":["a"],"matrix":[[1.0,1e-05]],"outputs":["a"],"privacy":[]}'
    >>> canonical_bytes(d, 2)
    b'{"inputs":["a"],"matrix":[[1,0.00001]],"outputs":["a"],"privacy":[]}'
    """
    version = doc.get("version", 1) if version is None else version
    payload = hashed_payload(doc, version)
    if version == 1:
        return json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()
    import rfc8785

    # rfc8785 writes the document; large matrices (the channel, an E-LDP or distance
    # matrix: a million numbers each at k = 1000, 9 s through rfc8785's per-number writer)
    # are written by _es_number, the same ECMAScript number format, and put in their
    # places (tests/test_vectors.py checks that both give the same bytes)
    payload = dict(payload)
    swaps: list[tuple[str, str]] = []

    def swap(holder: dict, key: str) -> None:
        value = holder.get(key)
        if isinstance(value, list) and sum(len(r) for r in value if isinstance(r, list)) > 4096:
            text = _matrix_text(value)
            if text is not None:
                token = f"mechopt-placeholder-{len(swaps)}-7f3a9c"
                holder[key] = token
                swaps.append((token, text))

    swap(payload, "matrix")
    if isinstance(payload.get("privacy"), list):
        payload["privacy"] = [dict(p) if isinstance(p, dict) else p for p in payload["privacy"]]
        for p in payload["privacy"]:
            if isinstance(p, dict):
                swap(p, "matrix")
                swap(p, "distance")
    try:
        out = rfc8785.dumps(payload)
    except rfc8785.CanonicalizationError as err:
        raise ValueError(f"not representable in RFC 8785 canonical JSON: {err}") from None
    for token, text in swaps:
        out = out.replace(b'"' + token.encode() + b'"', text.encode(), 1)
    return out


def _es_number(v: Any) -> str:
    """A JSON number as ECMAScript's ``Number.prototype.toString`` writes it (RFC 8785 §3.2.2.3).

    The digits are the shortest that round-trip (Python's ``repr`` finds the same ones);
    the layout follows ECMA-262 ``Number::toString``: plain digits for exponents up to 21,
    ``0.000ddd`` down to 1e-6, otherwise ``d.ddde+N`` / ``d.ddde-N``.

    Examples
    --------
    >>> [_es_number(v) for v in (1.0, 1e-05, 1e21, 1.5e-7, 123.25, 0.1, -2.5e-300)]
    ['1', '0.00001', '1e+21', '1.5e-7', '123.25', '0.1', '-2.5e-300']
    """
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"not a number: {v!r}")
    if isinstance(v, int):
        if abs(v) > 2**53 - 1:
            raise ValueError(f"integer {v} is beyond +-(2**53 - 1)")
        return str(v)
    if v != v or v in (float("inf"), float("-inf")):
        raise ValueError(f"{v!r} is not a JSON number")
    if v == 0:
        return "0"
    if v < 0:
        return "-" + _es_number(-v)
    r = repr(v)
    if "e" not in r:  # 1e-4 <= v < 1e16: repr's layout is ECMAScript's, bar a trailing ".0"
        return r[:-2] if r.endswith(".0") else r
    exp = 0
    if "e" in r:
        r, e = r.split("e")
        exp = int(e)
    intpart, _, frac = r.partition(".")
    digits = intpart + frac
    point = len(intpart) + exp
    lead = len(digits) - len(digits.lstrip("0"))
    s_ = digits[lead:].rstrip("0")
    n = point - lead
    k = len(s_)
    if k <= n <= 21:
        return s_ + "0" * (n - k)
    if 0 < n <= 21:
        return s_[:n] + "." + s_[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + s_
    e = n - 1
    return s_[0] + ("." + s_[1:] if k > 1 else "") + ("e+" if e >= 0 else "e-") + str(abs(e))


_TRAILING_ZERO = re.compile(r"\.0(?=[,\]])")
#: the numbers repr writes with an exponent that ECMAScript writes in full, 1e16 to 1e20
_ES_BIG = re.compile(r"-?\d(?:\.\d+)?e\+(?:1[6-9]|20)(?=[,\]])")


def _plain(token: str) -> str:
    """repr's ``d.ddde-05`` / ``d.ddde-06`` as ECMAScript writes it: ``0.0000dddd`` / ``0.00000dddd``.

    >>> _plain("1.5e-05"), _plain("-1e-06")
    ('0.000015', '-0.000001')
    """
    sign = "-" if token[0] == "-" else ""
    zeros = "0.0000" if token[-1] == "5" else "0.00000"
    return sign + zeros + token[len(sign):-4].replace(".", "")


def _row_text(row: list) -> str | None:
    """One row of numbers (or "inf") in canonical form, or None if it is anything else."""
    kinds = set(map(type, row))
    if not kinds <= {float, int, str}:
        return None
    if str in kinds and {v for v in row if isinstance(v, str)} != {"inf"}:
        return None
    if int in kinds and max(abs(v) for v in row if type(v) is int) > 2**53 - 1:
        return None
    try:
        text = json.dumps(row, separators=(",", ":"), allow_nan=False)
    except ValueError:
        return None
    if "-0.0" in text:
        # negative zero is written "0": number by number
        return "[" + ",".join('"inf"' if v == "inf" else _es_number(v) for v in row) + "]"
    if "e" in text:
        # repr and ECMAScript share the digits; ECMAScript writes 1e-5, 1e-6 and 1e16-1e20
        # without an exponent, and exponents without a leading zero
        if "e-05" in text or "e-06" in text:
            text = "[" + ",".join(_plain(t) if t[-4:] in ("e-05", "e-06") else t for t in text[1:-1].split(",")) + "]"
        if "e+" in text:
            text = _ES_BIG.sub(lambda mt: _es_number(float(mt.group())), text)
        for d in "789":
            text = text.replace("e-0" + d, "e-" + d)
    # plain decimals: Python's repr and ECMAScript agree but for a trailing ".0"
    return _TRAILING_ZERO.sub("", text)


def _matrix_text(matrix: list) -> str | None:
    """The canonical text of a list of lists of numbers, or None if it is anything else."""
    rows = []
    for row in matrix:
        if not isinstance(row, list):
            return None
        text = _row_text(row)
        if text is None:
            return None
        rows.append(text)
    return "[" + ",".join(rows) + "]"


def canonical_digest(doc: dict[str, Any], version: int | None = None) -> str:
    """Return the sha256 hex digest of the hashed fields of a mechanism document.

    Parameters
    ----------
    doc : dict
        A mechanism document as parsed from its file.
    version : int, optional
        The digest's version, 1 or 2; default ``doc.get("version", 1)``.

    Returns
    -------
    str
        64 lowercase hex digits: ``sha256(canonical_bytes(doc, version))``.

    Raises
    ------
    ValueError
        As :func:`canonical_bytes`: a value that cannot be written canonically (NaN,
        infinity, a version 2 integer beyond ±(2**53 − 1)).

    Examples
    --------
    >>> d = {"version": 2, "inputs": ["a"], "outputs": ["a"], "matrix": [[1.0]], "privacy": []}
    >>> canonical_digest(d) == canonical_digest({**d, "matrix": [[1]]})   # 1.0 and 1 alike
    True
    >>> len(canonical_digest(d))
    64
    """
    return hashlib.sha256(canonical_bytes(doc, version)).hexdigest()


def signed_document(inputs: list[str], outputs: list[str], matrix: list[list[Any]],
                    privacy: list[dict[str, Any]]) -> dict[str, Any]:
    """Return a minimal current-version mechanism document carrying its ``sha256``.

    For examples and tests of the readers (:mod:`mechopt.client`): the objective is
    ``{"kind": "none"}`` and the certificate says nothing was verified (readers verify
    the claims themselves); nothing is solved or verified here.

    Parameters
    ----------
    inputs, outputs : list of str
        The labels.
    matrix : list of list
        The channel, one row per input.
    privacy : list of dict
        The privacy claims, as in a mechanism file.

    Returns
    -------
    dict
        The document, ``sha256`` set to :func:`canonical_digest` of it.

    Examples
    --------
    >>> doc = signed_document(["a"], ["a"], [[1.0]], [])
    >>> doc["version"], doc["sha256"] == canonical_digest(doc)
    (2, True)
    """
    doc = {"format": "mechopt-mechanism", "version": CURRENT_VERSION, "inputs": list(inputs),
           "outputs": list(outputs), "matrix": matrix, "privacy": privacy, "objective": {"kind": "none", "value": None, "bound": None},
           "certificate": {"verified": False, "method": "none", "checks": []}}
    doc["sha256"] = canonical_digest(doc)
    return doc
