"""A mechanism file that describes a family instead of a matrix (SPEC §5, version 2).

Layout (JSON; version 2; the fields of a matrix file but ``family`` replaces
``outputs`` and ``matrix``)::

    {"format": "mechopt-mechanism", "version": 2,
     "inputs": ["a", "b", ...],
     "family": {"kind": "subset_selection", "ratio": 2.718281828459045,
                "mixture": [{"d": 269, "weight": 1.0}]},
     "privacy": [{"notion": "ldp", "epsilon": 1.0}],
     "objective": {...}, "certificate": {...},
     "sha256": "<sha256 of the RFC 8785 form of {inputs, family, privacy}>"}

See :mod:`mechopt.families._spec` for the families and their output labels, and
``docs/families.md`` for the whole contract.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

from .._errors import InputError, VerificationError
from ._privacy import verify_family
from ._spec import FAMILY_VERSION, FamilySampler, family_digest, family_from_spec

FORMAT = "mechopt-mechanism"


@lru_cache(maxsize=1)
def family_schema() -> dict:
    """The JSON Schema of a family mechanism file (``mechopt/schema``)."""
    text = resources.files("mechopt").joinpath("schema/family-mechanism.schema.json").read_text()
    return json.loads(text)


def is_family_document(doc: Any) -> bool:
    return isinstance(doc, dict) and "family" in doc


def _read_json(path: str | Path) -> Any:
    """A mechanism file's JSON, read strictly (:func:`mechopt._jsonsafe.loads_strict`), one-line errors."""
    from .._client_document import read_mechanism_text
    from .._jsonsafe import loads_strict

    return loads_strict(read_mechanism_text(path), str(path))


def is_family_file(path: str | Path) -> bool:
    """True if ``path`` holds a family mechanism (a JSON object with a ``family`` field)."""
    try:
        return is_family_document(_read_json(path))
    except InputError:
        return False


@dataclass(frozen=True)
class FamilyMechanism:
    """A structured mechanism: inputs, a family, its privacy claims and certificate.

    It answers the same calls as :class:`mechopt.Mechanism` where they make sense
    (``inputs``, ``privacy``, ``notions``, ``verify``, ``to_dict``, ``save``, ``load``);
    its outputs are never listed (``outputs_count``, ``sampler``, ``estimate``).

    Examples
    --------
    >>> import os, tempfile
    >>> m = FamilyMechanism.from_family(
    ...     {"kind": "subset_selection", "ratio": 2.718281828459045, "mixture": [{"d": 3, "weight": 1.0}]},
    ...     [{"notion": "ldp", "epsilon": 1.0}], inputs=[str(i) for i in range(10)])
    >>> m.certificate["verified"], m.outputs_count
    (True, 120)
    >>> path = os.path.join(tempfile.mkdtemp(), "m.json")
    >>> m.save(path)
    >>> FamilyMechanism.load(path).family_spec["mixture"]
    [{'d': 3, 'weight': 1.0}]
    """

    inputs: tuple[str, ...]
    family_spec: dict
    privacy: list
    objective: dict = field(default_factory=lambda: {"kind": "none", "value": None, "bound": None})
    certificate: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)

    @property
    def family(self):
        return family_from_spec(self.family_spec, self.inputs)

    @property
    def matrix(self):
        """A family lists no matrix: a clear error for code that expects one (e.g. ``mechopt plot``)."""
        raise InputError("mechanism", f"is a {self.family_spec.get('kind')} family whose outputs are not listed: it "
                         "has no matrix (use mechopt.families.family_channel for a small one)")

    @property
    def outputs(self):
        raise InputError("mechanism", f"is a {self.family_spec.get('kind')} family whose outputs are not listed "
                         "(see outputs_count and the output labels in docs/families.md)")

    @property
    def outputs_count(self) -> int:
        return self.family.outputs_count()

    def output_summary(self) -> str:
        from ._spec import approx_count

        n = approx_count(self.outputs_count)
        return f"{n if isinstance(n, str) else f'{n:.3g}'} outputs (a {self.family_spec['kind']} family)"

    @property
    def notions(self):
        from ..notions import notion_from_spec

        return [notion_from_spec(s, self.inputs, f"privacy[{i}]") for i, s in enumerate(self.privacy)]

    def verify(self, notions: Sequence[Any] | None = None):
        """Exactly verify the family against its own claims (or the given notions)."""
        return verify_family(self.family, self.notions if notions is None else notions)

    @classmethod
    def from_family(cls, family: dict, privacy: Sequence[Any], *, inputs: Sequence[str], objective: dict | None = None,
                    extra: dict | None = None) -> "FamilyMechanism":
        """Wrap a family, verify it exactly, and attach the certificate."""
        from ..notions import Notion, notion_from_spec

        inputs = tuple(inputs)
        specs = [p.to_spec(inputs) if isinstance(p, Notion) else dict(p) for p in privacy]
        notions = [notion_from_spec(s, inputs, f"privacy[{i}]") for i, s in enumerate(specs)]
        specs = [n.to_spec(inputs) for n in notions]
        fam = family_from_spec(family, inputs)
        cert = verify_family(fam, notions).to_dict()
        return cls(inputs, dict(family), specs, objective or {"kind": "none", "value": None, "bound": None},
                   cert, extra or {})

    def to_dict(self) -> dict:
        doc = {"format": FORMAT, "version": FAMILY_VERSION, "inputs": list(self.inputs), "family": self.family_spec,
               "privacy": self.privacy, "objective": self.objective, "certificate": self.certificate}
        doc.update(self.extra)
        doc["sha256"] = family_digest(doc)
        return doc

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1, allow_nan=False) + "\n")

    @classmethod
    def from_dict(cls, doc: Any, *, check_hash: bool = True, _checked: bool = False) -> "FamilyMechanism":
        """Validate a parsed family document (the client's checks, schema, parameters, digest)."""
        import jsonschema

        if not isinstance(doc, dict):
            raise InputError("mechanism", f"must be a JSON object, got {type(doc).__name__}")
        if check_hash and not _checked:
            from .._client_document import _check, parse_document_claims
            from .._reader import external_notions

            parse_document_claims(_check(doc), external_notions())
        errors = sorted(jsonschema.Draft202012Validator(family_schema()).iter_errors(doc),
                        key=lambda e: list(e.absolute_path))
        if errors:
            err = errors[0]
            path = ".".join(str(p) for p in err.absolute_path) or "mechanism"
            raise InputError(path, err.message)
        inputs = tuple(doc["inputs"])
        family_from_spec(doc["family"], inputs)  # validates the parameters
        if check_hash and not _checked:  # _checked: the client compared this very digest
            digest = family_digest(doc)
            if digest != doc["sha256"]:
                raise VerificationError(f"sha256: the file's digest {doc['sha256'][:12]}... does not match its "
                                        f"content ({digest[:12]}...): the file was edited after export")
        from ..notions import notion_from_spec

        privacy = [dict(p) for p in doc["privacy"]]
        for i, s in enumerate(privacy):
            notion_from_spec(s, inputs, f"privacy[{i}]")
        known = {"format", "version", "inputs", "family", "privacy", "objective", "certificate", "sha256"}
        extra = {k: v for k, v in doc.items() if k not in known}
        return cls(inputs, doc["family"], privacy, doc["objective"], doc["certificate"], extra)

    @classmethod
    def load(cls, path: str | Path, *, verify: bool = True) -> "FamilyMechanism":
        """Load a family file through the one path of every reader (:func:`mechopt._reader.read_verified`).

        Strict JSON, schema, parameters, digest and (by default) every claim decided
        exactly; a matrix file is refused here (naming ``family``).
        """
        from .._reader import read_verified

        def parse(doc: dict) -> "FamilyMechanism":
            if "family" not in doc:
                raise InputError("family", "is missing: this is a matrix mechanism file (use mechopt.Mechanism.load)")
            return cls.from_dict(doc, _checked=True)

        return read_verified(path, parse, verify=verify)[1]

    def sampler(self, *, seed: int | None = None, words=None) -> FamilySampler:
        """The exact client sampler (OS words unless seeded or given ``words``; see :class:`FamilySampler`)."""
        return FamilySampler(self.family, seed=seed, words=words)
