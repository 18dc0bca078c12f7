"""Canonical JSON digest of a mechanism file (SPEC §5).

Standard library only: the client path (:mod:`mechopt.client`) imports this module
on devices that have no numpy.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

HASHED_FIELDS = ("inputs", "outputs", "matrix", "privacy")


def canonical_digest(doc: dict[str, Any]) -> str:
    """Return the sha256 hex digest of the hashed fields of a mechanism document.

    The digest is ``sha256(json.dumps({inputs, outputs, matrix, privacy},
    sort_keys=True, separators=(",", ":"), allow_nan=False))`` over the values as
    parsed from the file, so anyone can recompute it with the standard library.

    Examples
    --------
    >>> d = {"inputs": ["a"], "outputs": ["a"], "matrix": [[1.0]], "privacy": []}
    >>> len(canonical_digest(d))
    64
    """
    payload = {name: doc[name] for name in HASHED_FIELDS}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()
