"""The mechanism file (``docs/formats.md``): write, load, digest, schema, exact re-verification."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ._canonical import CURRENT_VERSION, VERSIONS, canonical_digest
from ._client_document import Checked, _check, parse_document_claims
from ._errors import InputError, VerificationError
from ._reader import external_notions, read_verified
from .notions import Notion, notion_from_spec
from ._verify import Certificate, as_matrix, verify

FORMAT = "mechopt-mechanism"
#: The version :meth:`Mechanism.save` writes; :meth:`Mechanism.load` reads 1 and 2.
VERSION = CURRENT_VERSION


def mechanism_schema() -> dict:
    """The JSON Schema of the mechanism file (``mechopt/schema``), its notion enum from the registry.

    The published file lists the built-in notions; a notion registered at run time
    (:func:`mechopt.notions.register_notion`) is added here, so its files validate too.
    """
    from .notions import notion_names

    text = resources.files("mechopt").joinpath("schema/mechanism.schema.json").read_text()
    schema = json.loads(text)
    enum = schema["properties"]["privacy"]["items"]["properties"]["notion"]["enum"]
    enum.extend(n for n in notion_names() if n not in enum)
    return schema


def _json_path(err) -> str:
    parts = [str(p) for p in err.absolute_path]
    out = ""
    for p in parts:
        out += f"[{p}]" if p.isdigit() else (f".{p}" if out else p)
    return out or "mechanism"


def _skeleton(doc: dict) -> dict:
    """The document with its large arrays cut to their first row, for the JSON Schema.

    jsonschema walks every entry in Python (a k = 1000 file: 60 s); the cut rows are
    checked by :func:`as_matrix` and the notions' own validation, with the same field
    names in the messages.
    """
    out = dict(doc)
    if isinstance(doc.get("matrix"), list) and doc["matrix"]:
        out["matrix"] = doc["matrix"][:1]
    if isinstance(doc.get("privacy"), list):
        priv = []
        for p in doc["privacy"]:
            if isinstance(p, dict):
                p = {key: (v[:1] if key in ("matrix", "distance", "priors", "edges") and isinstance(v, list) else v)
                     for key, v in p.items()}
            priv.append(p)
        out["privacy"] = priv
    return out


#: Fields with a meaning of their own; any other field is kept in ``Mechanism.extra``.
_KNOWN = frozenset({"format", "version", "inputs", "outputs", "matrix", "privacy", "objective", "certificate",
                    "memoize", "sha256"})


def _file_text(doc: dict) -> str:
    """``json.dumps(doc, indent=1)``, but matrices (the channel, the claims' and the
    objective's) a row a line.

    Indented number by number, a 2 000-place channel and its loss matrix took 9 s
    (``json``'s Python encoder); a row a line goes through its C encoder.
    """
    doc = dict(doc)
    swaps: list[tuple[str, list]] = []

    def swap(holder: dict) -> None:
        for key, value in holder.items():
            if isinstance(value, list) and value and all(isinstance(r, list) for r in value):
                token = f"mechopt-rows-{len(swaps)}-7f3a9c"
                holder[key] = token
                swaps.append((token, value))

    swap(doc)
    if isinstance(doc.get("objective"), dict):
        doc["objective"] = dict(doc["objective"])
        swap(doc["objective"])
    if isinstance(doc.get("privacy"), list):
        doc["privacy"] = [dict(p) if isinstance(p, dict) else p for p in doc["privacy"]]
        for p in doc["privacy"]:
            if isinstance(p, dict):
                swap(p)
    text = json.dumps(doc, indent=1, allow_nan=False)
    for token, rows in swaps:
        body = ",\n  ".join(json.dumps(r, allow_nan=False) for r in rows)
        text = text.replace(f'"{token}"', f"[\n  {body}\n ]", 1)
    return text


@dataclass(frozen=True)
class Mechanism:
    """A channel with its privacy claims, as exported and deployed.

    Parameters
    ----------
    inputs, outputs : tuple of str
        Row and column labels.
    matrix : ndarray, shape (k, m)
        ``matrix[x, y] = Pr(Y = y | X = x)``.
    privacy : list of dict
        The claims, in problem-file notation (``docs/formats.md``).
    objective : dict
        ``{"kind", "value", "bound", ...}``.
    certificate : dict
        The exact certificate (see :func:`mechopt.verify`).
    extra : dict
        Further fields (solver statistics, repair cost...).
    memoize : bool
        Clients keep one permanent response per true value and repeat it (RAPPOR's
        permanent randomized response); hashed, so it cannot be switched off unnoticed.
        Mark an exported mechanism with ``dataclasses.replace(m, memoize=True)``.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> e = np.exp(1.0)
    >>> m = Mechanism.from_channel(np.array([[0.7, 0.3], [0.3, 0.7]]), [{"notion": "ldp", "epsilon": 1.0}])
    >>> m.certificate["verified"]
    True
    >>> path = os.path.join(tempfile.mkdtemp(), "m.json")
    >>> m.save(path)
    >>> Mechanism.load(path).matrix.shape
    (2, 2)
    """

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    matrix: np.ndarray
    privacy: list
    objective: dict = field(default_factory=lambda: {"kind": "none", "value": None, "bound": None})
    certificate: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    memoize: bool = False

    # -- construction ------------------------------------------------------------
    @classmethod
    def from_channel(cls, matrix: Any, privacy: Sequence[dict | Notion], *, inputs: Sequence[str] | None = None,
                     outputs: Sequence[str] | None = None, objective: dict | None = None,
                     extra: dict | None = None) -> "Mechanism":
        """Wrap a channel, verify it exactly, and attach the certificate."""
        Q = as_matrix(matrix)
        k, m = Q.shape
        inputs = tuple(inputs) if inputs is not None else tuple(str(i) for i in range(k))
        outputs = tuple(outputs) if outputs is not None else tuple(str(i) for i in range(m))
        if len(inputs) != k or len(outputs) != m:
            raise InputError("matrix", f"shape {Q.shape} does not match {len(inputs)} inputs x {len(outputs)} outputs")
        specs = [p.to_spec(inputs) if isinstance(p, Notion) else dict(p) for p in privacy]
        notions = [notion_from_spec(s, inputs, f"privacy[{i}]") for i, s in enumerate(specs)]
        specs = [n.to_spec(inputs) for n in notions]
        cert = verify(Q, notions).to_dict()
        mech = cls(inputs, outputs, Q, specs, objective or {"kind": "none", "value": None, "bound": None},
                   cert, extra or {})
        mech.__dict__["notions"] = notions
        return mech

    @cached_property
    def notions(self) -> list[Notion]:
        """The privacy claims as bound notions (validated once)."""
        return [notion_from_spec(s, self.inputs, f"privacy[{i}]") for i, s in enumerate(self.privacy)]

    def verify(self, notions: Sequence[Notion] | None = None) -> Certificate:
        """Re-verify exactly against the file's own claims (or the given notions)."""
        return verify(self.matrix, self.notions if notions is None else notions)

    # -- accounting (mechopt.accounting) ------------------------------------------
    def shuffle_epsilon(self, n: int, delta: float) -> float:
        """Central ε at ``delta`` after a shuffler mixes ``n`` users' reports (:func:`mechopt.accounting.shuffle_epsilon`)."""
        from .accounting import shuffle_epsilon

        return shuffle_epsilon(self.matrix, n, delta)

    def shuffle_delta(self, n: int, epsilon: float) -> float:
        """Central δ at ``epsilon`` after shuffling ``n`` reports (:func:`mechopt.accounting.shuffle_delta`)."""
        from .accounting import shuffle_delta

        return shuffle_delta(self.matrix, n, epsilon)

    def pld(self, pair=None, value_discretization_interval: float = 1e-4):
        """The ``dp_accounting`` privacy-loss distribution of a pair of inputs (default the worst pair; labels allowed)."""
        from .accounting import privacy_loss_distribution

        return privacy_loss_distribution(self, pair, value_discretization_interval)

    # -- files ---------------------------------------------------------------------
    def to_dict(self) -> dict:
        doc = {
            "format": FORMAT,
            "version": VERSION,
            "inputs": list(self.inputs),
            "outputs": list(self.outputs),
            "matrix": [[float(v) for v in row] for row in self.matrix],
            "privacy": self.privacy,
            "objective": self.objective,
            "certificate": self.certificate,
        }
        if self.memoize:
            doc["memoize"] = True
        doc.update({k2: v for k2, v in self.extra.items() if k2 not in _KNOWN})
        doc["sha256"] = canonical_digest(doc)
        return doc

    def save(self, path: str | Path) -> None:
        """Write the mechanism file (JSON, format version 2, with its sha256), a row of the matrix a line."""
        Path(path).write_text(_file_text(self.to_dict()) + "\n")

    @classmethod
    def from_dict(cls, doc: Any, *, check_hash: bool = True, _checked: bool = False) -> "Mechanism":
        """Validate a parsed mechanism document: the client's checks, the schema, the digest, the notions.

        With ``check_hash`` (default) the document first passes the checks every reader
        applies (:func:`mechopt._client_document.check_document` and the claims'
        parameters, :func:`mechopt._claims.parse_claims`), so a document a client refuses
        is refused here too. The claims are not verified here (:meth:`verify`,
        :func:`load_verified`).
        """
        import jsonschema

        if not isinstance(doc, dict):
            raise InputError("mechanism", f"must be a JSON object, got {type(doc).__name__}")
        if check_hash and not _checked:
            parse_document_claims(_check(doc), external_notions())
        if "family" in doc:  # a structured mechanism (version 2, mechopt.families)
            from .families import FamilyMechanism

            return FamilyMechanism.from_dict(doc, check_hash=check_hash, _checked=True)
        version = doc.get("version")
        if isinstance(version, bool) or version not in VERSIONS:
            raise InputError("version", f"must be one of {list(VERSIONS)} (the versions this mechopt reads), "
                             f"got {version!r}")
        if version == 1 and "memoize" in doc:
            raise InputError("memoize", "is a version 2 field (a version 1 digest does not cover it); "
                             "re-export the mechanism")
        validator = jsonschema.Draft202012Validator(mechanism_schema())
        errors = sorted(validator.iter_errors(_skeleton(doc)), key=lambda e: list(e.absolute_path))
        if errors:
            err = errors[0]
            raise InputError(_json_path(err), err.message)
        Q = as_matrix(doc["matrix"])
        neg = np.argwhere(Q < 0)
        if len(neg):
            i, j = neg[0]
            raise InputError(f"matrix[{i}][{j}]", f"{float(Q[i, j])!r} is less than the minimum of 0")
        k, m = Q.shape
        if k != len(doc["inputs"]):
            raise InputError("matrix", f"has {k} rows but there are {len(doc['inputs'])} inputs")
        if m != len(doc["outputs"]):
            raise InputError("matrix", f"has {m} columns but there are {len(doc['outputs'])} outputs")
        if check_hash and not _checked:  # _checked: the client's check_document compared this very digest
            try:
                digest = canonical_digest(doc)
            except ValueError as err:
                raise InputError("privacy", f"cannot be written as canonical JSON: {err}") from None
            if digest != doc["sha256"]:
                raise VerificationError(f"sha256: the file's digest {doc['sha256'][:12]}... does not match its "
                                        f"content ({digest[:12]}...): the file was edited after export")
        inputs = tuple(doc["inputs"])
        privacy = [dict(p) for p in doc["privacy"]]
        notions = [notion_from_spec(s, inputs, f"privacy[{i}]") for i, s in enumerate(privacy)]  # validates
        extra = {k2: v for k2, v in doc.items() if k2 not in _KNOWN}
        mech = cls(inputs, tuple(doc["outputs"]), Q, privacy, doc["objective"], doc["certificate"], extra,
                   bool(doc.get("memoize", False)))
        mech.__dict__["notions"] = notions  # the cached_property, filled with what was just validated
        return mech

    @classmethod
    def load(cls, path: str | Path, *, verify: bool = True) -> "Mechanism":
        """Load a mechanism file: strict JSON, structure, digest, and (by default) exact re-verification.

        The file goes through :func:`load_verified` — the one path of every reader
        (``mechopt verify``, ``privatize``, ``estimate``, the client) — so a file any of
        them refuses is refused here too. A family file gives a
        :class:`mechopt.families.FamilyMechanism`.

        Raises
        ------
        InputError
            The file is missing, not strict JSON, or malformed (exit code 2).
        VerificationError
            The digest does not match, or ``verify`` and a privacy claim fails exactly
            (exit code 1).
        """
        return load_verified(path, verify=verify)[1]


def load_verified(path: str | Path, *, verify: bool = True, _collect: list | None = None) -> tuple[Checked, Any]:
    """Read a mechanism file the one way every consumer reads it, and verify its claims exactly.

    1. :func:`mechopt._client_document.check_text` — the standard-library client's path:
       strict JSON (depth, duplicate keys, numbers beyond float range), structure, the
       digest, the claims' parameters, and (``verify``) every claim decided exactly by
       the client's verifier (:mod:`mechopt._claims`, or a family's closed forms).
    2. :meth:`Mechanism.from_dict` (the JSON Schema, the notions) and, with ``verify``,
       the exact certificate of :mod:`mechopt._verify`.

    A file passes only if both pass, so ``mechopt privatize``/``estimate`` (which call
    this) accept exactly what ``mechopt verify`` accepts, and never anything the
    standard-library client would refuse.

    Parameters
    ----------
    path : str or pathlib.Path
        The mechanism file (matrix or family).
    verify : bool, keyword-only
        Decide the claims (default). ``False`` stops after the structure, the digest and
        the claims' parameters.

    Returns
    -------
    (Checked, Mechanism or FamilyMechanism)
        The client's view (``doc``, ``family``, parsed ``claims``) and the mechanism.

    Raises
    ------
    InputError
        Malformed; one line naming the file and the field (exit code 2).
    VerificationError
        Digest mismatch, no claim, or (``verify``) a claim fails (exit code 1).

    Examples
    --------
    >>> import tempfile, os
    >>> m = Mechanism.from_channel([[0.7, 0.3], [0.3, 0.7]], [{"notion": "ldp", "epsilon": 1.0}])
    >>> path = os.path.join(tempfile.mkdtemp(), "m.json")
    >>> m.save(path)
    >>> checked, mech = load_verified(path)
    >>> checked.family is None, mech.matrix.shape
    (True, (2, 2))
    """
    return read_verified(path, lambda doc: Mechanism.from_dict(doc, _checked=True), verify=verify, _collect=_collect)
