"""The mechanism file (SPEC §5): write, load, digest, schema, exact re-verification."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ._canonical import canonical_digest
from ._errors import InputError, VerificationError
from ._notions import Notion, notion_from_spec
from ._verify import Certificate, as_matrix, verify

FORMAT = "mechopt-mechanism"
VERSION = 1


@lru_cache(maxsize=1)
def mechanism_schema() -> dict:
    """The published JSON Schema of the mechanism file (``mechopt/schema``)."""
    text = resources.files("mechopt").joinpath("schema/mechanism.schema.json").read_text()
    return json.loads(text)


def _reject_constant(name: str) -> float:
    raise InputError("matrix", f"JSON constant {name} is not allowed (numbers must be finite)")


def _json_path(err) -> str:
    parts = [str(p) for p in err.absolute_path]
    out = ""
    for p in parts:
        out += f"[{p}]" if p.isdigit() else (f".{p}" if out else p)
    return out or "mechanism"


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
        The claims, in problem-file notation (SPEC §5).
    objective : dict
        ``{"kind", "value", "bound", ...}``.
    certificate : dict
        The exact certificate (see :func:`mechopt.verify`).
    extra : dict
        Further fields (solver statistics, repair cost...).

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
        return cls(inputs, outputs, Q, specs, objective or {"kind": "none", "value": None, "bound": None},
                   cert, extra or {})

    @property
    def notions(self) -> list[Notion]:
        return [notion_from_spec(s, self.inputs, f"privacy[{i}]") for i, s in enumerate(self.privacy)]

    def verify(self, notions: Sequence[Notion] | None = None) -> Certificate:
        """Re-verify exactly against the file's own claims (or the given notions)."""
        return verify(self.matrix, self.notions if notions is None else notions)

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
        doc.update(self.extra)
        doc["sha256"] = canonical_digest(doc)
        return doc

    def save(self, path: str | Path) -> None:
        """Write the mechanism file (JSON, with its sha256)."""
        text = json.dumps(self.to_dict(), indent=1, allow_nan=False)
        Path(path).write_text(text + "\n")

    @classmethod
    def from_dict(cls, doc: Any, *, check_hash: bool = True) -> "Mechanism":
        """Validate a parsed mechanism document against the schema and its digest."""
        import jsonschema

        if not isinstance(doc, dict):
            raise InputError("mechanism", f"must be a JSON object, got {type(doc).__name__}")
        if "family" in doc:  # a structured mechanism (version 2, mechopt.families)
            from .families import FamilyMechanism

            return FamilyMechanism.from_dict(doc, check_hash=check_hash)
        validator = jsonschema.Draft202012Validator(mechanism_schema())
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        if errors:
            err = errors[0]
            raise InputError(_json_path(err), err.message)
        Q = as_matrix(doc["matrix"])
        k, m = Q.shape
        if k != len(doc["inputs"]):
            raise InputError("matrix", f"has {k} rows but there are {len(doc['inputs'])} inputs")
        if m != len(doc["outputs"]):
            raise InputError("matrix", f"has {m} columns but there are {len(doc['outputs'])} outputs")
        if check_hash:
            digest = canonical_digest(doc)
            if digest != doc["sha256"]:
                raise VerificationError(f"sha256: the file's digest {doc['sha256'][:12]}... does not match its "
                                        f"content ({digest[:12]}...): the file was edited after export")
        inputs = tuple(doc["inputs"])
        privacy = [dict(p) for p in doc["privacy"]]
        for i, s in enumerate(privacy):
            notion_from_spec(s, inputs, f"privacy[{i}]")  # validates the claims
        known = {"format", "version", "inputs", "outputs", "matrix", "privacy", "objective", "certificate", "sha256"}
        extra = {k2: v for k2, v in doc.items() if k2 not in known}
        return cls(inputs, tuple(doc["outputs"]), Q, privacy, doc["objective"], doc["certificate"], extra)

    @classmethod
    def load(cls, path: str | Path, *, verify: bool = True) -> "Mechanism":
        """Load a mechanism file: schema, digest, and (by default) exact re-verification.

        Raises
        ------
        InputError
            The file is missing, not JSON, or breaks the schema (exit code 2).
        VerificationError
            The digest does not match, or ``verify`` and the matrix fails its own
            privacy claims exactly (exit code 1).
        """
        p = Path(path)
        if not p.exists():
            raise InputError(str(path), "file does not exist")
        try:
            doc = json.loads(p.read_text(), parse_constant=_reject_constant)
        except json.JSONDecodeError as err:
            raise InputError(str(path), f"is not valid JSON: {err}") from None
        except UnicodeDecodeError as err:
            raise InputError(str(path), f"is not text: {err}") from None
        mech = cls.from_dict(doc)
        if verify:
            cert = mech.verify()
            if not cert.verified:
                raise VerificationError(f"privacy: {cert.detail or 'the matrix fails its claims'}")
        return mech
