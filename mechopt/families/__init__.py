"""Structured mechanisms: families whose outputs are too many to list.

* :class:`SubsetMixture`, :class:`HadamardFamily` — parameters (``_spec``, standard library only);
* :func:`verify_family` — exact privacy from the parameters (``_privacy``);
* :class:`FamilySampler` — the exact client sampler (CSPRNG by default);
* :func:`subset_inversion`, :func:`subset_em`, :func:`subset_variance` — the server side;
* :class:`FamilyMechanism` — the version 2 mechanism file with a ``family`` field.

Importing this package imports no numpy: the server-side names load lazily.
"""

from __future__ import annotations

import importlib

from ._spec import (
    FAMILY_KINDS,
    FAMILY_VERSION,
    FamilySampler,
    HadamardFamily,
    SubsetMixture,
    family_digest,
    family_from_spec,
    parse_subset_label,
    subset_label,
)
from .._client_document import load_family_document

_LAZY = {
    "verify_family": "._privacy",
    "check_family": "._privacy",
    "FamilyMechanism": "._mechanism",
    "is_family_document": "._mechanism",
    "is_family_file": "._mechanism",
    "count_reports": "._estimate",
    "subset_inversion": "._estimate",
    "subset_variance": "._estimate",
    "subset_em": "._estimate",
    "simulate_subset_counts": "._estimate",
    "family_channel": "._estimate",
    "subset_risk_uniform": "._estimate",
    "privatize_family_file": "._commands",
    "estimate_family_file": "._commands",
}

__all__ = [
    "FAMILY_KINDS", "FAMILY_VERSION", "FamilySampler", "HadamardFamily", "SubsetMixture", "family_digest",
    "family_from_spec", "load_family_document", "parse_subset_label", "subset_label",
    "verify_family", "check_family", "FamilyMechanism", "is_family_document", "is_family_file", "count_reports",
    "subset_inversion", "subset_variance", "subset_em", "simulate_subset_counts", "family_channel",
    "subset_risk_uniform", "privatize_family_file", "estimate_family_file",
]


def __getattr__(name: str):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'mechopt.families' has no attribute {name!r}")
    value = getattr(importlib.import_module(mod, __name__), name)
    globals()[name] = value
    return value
