"""The registry of privacy notions: the one list of notion names, and how to build one.

The parser (:func:`notion_from_spec`), the mechanism file's JSON Schema
(:func:`mechopt._mechanism.mechanism_schema` fills its enum from here) and the exact
verifier (each entry carries its notion's checker) read this registry;
``tests/test_notions.py`` checks they agree.

A new notion is a :class:`~mechopt.notions.Notion` subclass with a ``name``, its problem-
file ``fields`` and ``required`` fields, registered with :func:`register_notion` — from
any module, a test file included — together with its exact checker (the verifier shares
no code with constraint building, so a notion brings its own exact check); see
``docs/architecture.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .._errors import InputError

#: an exact checker: ``checker(Q, notion) -> (ok, detail)`` (optionally a third item, the
#: worst slack in floats), deciding every inequality of the notion exactly on the matrix as
#: written (see :mod:`mechopt._verify`)
Checker = Callable[[Any, Any], "tuple[bool, str]"]


@dataclass(frozen=True)
class NotionType:
    """A registered notion: its class, its problem-file fields and its exact checker."""

    name: str
    cls: type
    fields: frozenset
    required: frozenset
    checker: Checker | None = None
    builtin: bool = False


REGISTRY: dict[str, NotionType] = {}


def register_notion(cls: type, *, checker: Checker | None = None, builtin: bool = False) -> type:
    """Register a notion class under ``cls.name`` (its ``fields`` and ``required`` class attributes).

    Every notion brings its exact ``checker`` (the built-in ones come from
    :mod:`mechopt._verify`; ``builtin`` marks the notions shipped with mechopt). Returns
    ``cls``.

    Examples
    --------
    >>> "ldp" in REGISTRY and REGISTRY["ldp"].builtin
    True
    """
    name = getattr(cls, "name", "")
    if not isinstance(name, str) or not name:
        raise InputError("notion", f"a notion class needs a non-empty 'name', got {name!r}")
    if name in REGISTRY and REGISTRY[name].cls is not cls:
        raise InputError("notion", f"a notion named {name!r} is already registered")
    if checker is None:
        raise InputError("notion", f"notion {name!r} needs an exact checker (checker=...): the verifier decides "
                         "every claim exactly")
    fields = frozenset(getattr(cls, "fields", ()))
    required = frozenset(getattr(cls, "required", ()))
    REGISTRY[name] = NotionType(name, cls, fields, required, checker, builtin)
    return cls


def notion_names(*, builtin_only: bool = False) -> list[str]:
    """The registered notion names, sorted."""
    return sorted(n for n, t in REGISTRY.items() if t.builtin or not builtin_only)


def notion_from_spec(spec: Any, inputs: Sequence[str], where: str = "privacy"):
    """Build and bind a notion from its problem-file entry (docs/formats.md).

    Raises
    ------
    InputError
        When the entry is not a mapping, names an unknown notion, misses a required
        field, has an unknown field, or a value breaks the notion's rules. The
        error's field is prefixed by ``where``.

    Examples
    --------
    >>> notion_from_spec({"notion": "ldp", "epsilon": 1}, ["a", "b"])
    LDP(epsilon=1.0)
    """
    if not isinstance(spec, dict):
        raise InputError(where, f"each privacy entry must be a mapping with a 'notion' key, got {spec!r}")
    kind = spec.get("notion")
    entry = REGISTRY.get(kind) if isinstance(kind, str) else None
    if entry is None:
        raise InputError(f"{where}.notion", f"unknown notion {kind!r}; expected one of {notion_names()}")
    allowed = entry.fields | {"notion"}
    extra = sorted(set(spec) - allowed)
    if extra:
        raise InputError(f"{where}.{extra[0]}", f"is not a field of notion {kind!r} (fields: {sorted(allowed)})")
    missing = sorted(entry.required - set(spec))
    if missing:
        raise InputError(f"{where}.{missing[0]}", f"is required for notion {kind!r}")
    kwargs = {k: v for k, v in spec.items() if k != "notion"}
    try:
        notion = entry.cls(**kwargs)
        notion = notion.bind(list(inputs))
        notion.validate_bound(len(inputs))
        return notion
    except InputError as err:
        raise InputError(f"{where}.{err.field}", err.rule) from None
