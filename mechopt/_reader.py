"""The one path by which every consumer reads a mechanism file (matrix or family) and verifies its claims.

1. :func:`mechopt._client_document.check_text` — the standard-library client's path:
   strict JSON, structure, the digest, the claims' parameters and (``verify``) every
   claim decided exactly by the client's verifier.
2. The numpy side's parser (``parse``: :meth:`mechopt.Mechanism.from_dict`, or a family's)
   and, with ``verify``, its exact certificate.

May import: :mod:`mechopt._client_document`, :mod:`mechopt._errors` and the notion
registry. The mechanism types import this module, never the reverse: each passes its
own parser.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ._client_document import Checked, _verify_claims, check_text, parse_document_claims, read_mechanism_text
from ._errors import InputError, VerificationError


def external_notions() -> frozenset:
    """Notions registered at run time: the client has no rules for them, their own checker decides."""
    from .notions import REGISTRY

    return frozenset(name for name, entry in REGISTRY.items() if not entry.builtin)


def read_verified(path: str | Path, parse: Callable[[dict], Any], *, verify: bool = True,
                  _collect: list | None = None) -> tuple[Checked, Any]:
    """``(checked, parse(doc))`` for the file at ``path``, both sides passed (see the module docstring).

    ``parse`` turns the client-checked document into a mechanism (with ``verify()``);
    errors name the file. ``_collect`` gathers the client's verdicts instead of raising
    (``mechopt verify`` reports them with the certificate).
    """
    source = str(path)
    checked = check_text(read_mechanism_text(path), source, verify=False)
    external = external_notions()
    try:
        try:
            if verify or _collect is not None:
                _verify_claims(checked, external)  # the claims' parameters, then the client's exact verdict
            else:
                parse_document_claims(checked, external)
        except VerificationError as err:
            if _collect is None:
                raise
            _collect.append(str(err))  # mechopt verify: reported with the certificate
            parse_document_claims(checked, external)
        mech = parse(checked.doc)
    except InputError as err:
        raise InputError(f"{source}: {err.field}", err.rule) from None
    except VerificationError as err:
        raise VerificationError(f"{source}: {err}") from None
    if verify:
        cert = mech.verify()
        if not cert.verified:
            raise VerificationError(f"{source}: privacy: {cert.detail or 'the mechanism fails its claims'}")
    return checked, mech
