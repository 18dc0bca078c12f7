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
    if version != 1:
        payload.update({name: doc[name] for name in OPTIONAL_HASHED_FIELDS if name in doc})
    return payload


def canonical_bytes(doc: dict[str, Any], version: int | None = None) -> bytes:
    """The exact bytes that are hashed: version 1 ``json.dumps``, version 2 RFC 8785.

    Parameters
    ----------
    doc : dict
        A mechanism document (parsed values).
    version : int, optional
        1 or 2; default ``doc.get("version", 1)``.

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

    try:
        return rfc8785.dumps(payload)
    except rfc8785.CanonicalizationError as err:
        raise ValueError(f"not representable in RFC 8785 canonical JSON: {err}") from None


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
        As :func:`canonical_bytes`.

    Examples
    --------
    >>> d = {"version": 2, "inputs": ["a"], "outputs": ["a"], "matrix": [[1.0]], "privacy": []}
    >>> canonical_digest(d) == canonical_digest({**d, "matrix": [[1]]})   # 1.0 and 1 alike
    True
    >>> len(canonical_digest(d))
    64
    """
    return hashlib.sha256(canonical_bytes(doc, version)).hexdigest()
