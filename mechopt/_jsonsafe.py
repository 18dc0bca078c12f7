"""Strict JSON reading for untrusted files: one line naming the place and the rule, never a traceback.

Standard library only (the device client, :mod:`mechopt.client`, imports it). What
:func:`loads_strict` refuses, beyond what :func:`json.loads` refuses:

* a key given twice in one object (``json.loads`` silently keeps the last one, so a
  file with two ``"epsilon"`` or two ``"matrix"`` keys means what its last key says);
* nesting deeper than ``max_depth`` lists and objects, refused by a scan of the text
  *before* the recursive parser runs (no ``RecursionError``);
* ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON, though Python writes them);
* numbers beyond the range of a float: an integer larger in magnitude than the
  largest float (``1e400`` written as digits) and a decimal such as ``1e400`` that
  Python would read as ``inf``. Integers keep their exact value (``10**300`` stays an
  ``int``); callers that need a float get a finite one.

Errors are :class:`mechopt._errors.InputError` whose field is ``"<source>: <path>"``
(``"mech.json: privacy[0]"``) and whose rule says what must hold.

Examples
--------
>>> loads_strict('{"epsilon": 0.5, "prior": [0.25, 0.75]}', "p.json")
{'epsilon': 0.5, 'prior': [0.25, 0.75]}
>>> loads_strict('{"privacy": [{"epsilon": 0.1, "epsilon": 50}]}', "p.json")
Traceback (most recent call last):
...
mechopt._errors.InputError: p.json: privacy[0]: has the key 'epsilon' twice; duplicate keys are refused (a reader would silently keep one)
>>> loads_strict('{"epsilon": 1e400}', "p.json")
Traceback (most recent call last):
...
mechopt._errors.InputError: p.json: epsilon: the number 1e400 is beyond the range of a float (about 1.8e308)
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from mechopt._errors import InputError

__all__ = ["BEYOND_FLOAT", "FLOAT_MAX_INT", "MAX_DEPTH", "int_literal_rule", "loads_strict", "json_depth", "check_number_range"]

#: deeper nesting than this is refused (no problem or mechanism file needs more than ~6)
MAX_DEPTH = 64
#: the largest integer accepted: the largest float, 1.7976931348623157e308, as an exact integer.
#: (Integers a little larger still round to it, but a file's numbers are read exactly, so the
#: rule is the plain one; ``mechopt._client_document`` uses the same bound.)
FLOAT_MAX_INT = int(1.7976931348623157e308)
#: the rule broken by a number that has no float
BEYOND_FLOAT = "is beyond the range of a float (about 1.8e308)"
#: an integer literal longer than this has no float (10**309 > 1.8e308); refused before int()
_MAX_INT_DIGITS = 330

_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


def json_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """The deepest nesting of lists and objects in JSON ``text`` (brackets in strings ignored).

    Stops counting as soon as the depth passes ``limit`` and returns that depth, so a
    hostile file costs one scan up to its first too-deep bracket.

    Examples
    --------
    >>> json_depth('{"a": [[1], "]]]"]}')
    3
    """
    depth = deepest = 0
    for m in _TOKEN.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif c in "]}":
            depth -= 1
    return deepest


def check_number_range(value: Any, field: str) -> Any:
    """Refuse an ``int`` larger in magnitude than the largest float (:data:`FLOAT_MAX_INT`); return ``value``.

    A float, a bool or anything else is returned unchanged (its type is checked elsewhere).

    Examples
    --------
    >>> check_number_range(10**300, "epsilon") == 10**300
    True
    >>> check_number_range(10**400, "epsilon")
    Traceback (most recent call last):
    ...
    mechopt._errors.InputError: epsilon: the integer ~1e400 is beyond the range of a float (about 1.8e308)
    """
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > FLOAT_MAX_INT:
        raise InputError(field, f"the integer {_short_int(value)} {BEYOND_FLOAT}")
    return value


def _short_int(value: int) -> str:
    # no str(): slow for a huge int, and refused by Python itself past 4300 digits
    return f"~{'-' if value < 0 else ''}1e{int(abs(value).bit_length() * 0.30103)}"


class _Bad(Exception):
    pass


class _Marker:
    """Stands in for a refused value in the second, locating parse."""

    def __init__(self, rule: str):
        self.rule = rule


class _DupDict(dict):
    duplicate: str | None = None


def int_literal_rule(s: str) -> str | None:
    """Why the integer literal ``s`` (decimal digits, optional sign) is refused, or None.

    Literals longer than any float are refused from their length, before ``int()``
    (which Python itself refuses past 4300 digits).

    Examples
    --------
    >>> int_literal_rule("-1" + "0" * 400)
    'the integer ~-1e400 is beyond the range of a float (about 1.8e308)'
    >>> int_literal_rule("17") is None
    True
    """
    body = s.lstrip("+-").lstrip("0") or "0"
    if len(body) <= _MAX_INT_DIGITS and abs(int(s)) <= FLOAT_MAX_INT:
        return None
    return f"the integer ~{'-' if s.startswith('-') else ''}1e{len(body) - 1} {BEYOND_FLOAT}"


def _float_rule(s: str) -> str | None:
    if math.isinf(float(s)):
        return f"the number {s[:40]} {BEYOND_FLOAT}"
    return None


def _constant_rule(s: str) -> str:
    return f"{s} is not a JSON number (write a finite number)"


def _strict_int(s: str) -> int:
    if int_literal_rule(s):
        raise _Bad
    return int(s)


def _strict_float(s: str) -> float:
    v = float(s)
    if math.isinf(v):
        raise _Bad
    return v


def _strict_constant(s: str) -> Any:
    raise _Bad


def _strict_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Bad
    return out


def _marking_int(s: str) -> Any:
    rule = int_literal_rule(s)
    return _Marker(rule) if rule else int(s)


def _marking_float(s: str) -> Any:
    rule = _float_rule(s)
    return _Marker(rule) if rule else float(s)


def _marking_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = _DupDict()
    for key, value in pairs:
        if key in out and out.duplicate is None:
            out.duplicate = key
        out[key] = value
    return out


def _locate(obj: Any, path: str) -> tuple[str, str] | None:
    """The first refused place in document order: (path, rule)."""
    stack = [(obj, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, _Marker):
            return where, node.rule
        if isinstance(node, _DupDict) and node.duplicate is not None:
            return where, (f"has the key {node.duplicate!r} twice; duplicate keys are refused "
                           "(a reader would silently keep one)")
        if isinstance(node, dict):
            children = [(v, f"{where}.{k}" if where else str(k)) for k, v in node.items()]
        elif isinstance(node, list):
            children = [(v, f"{where}[{i}]") for i, v in enumerate(node)]
        else:
            continue
        stack.extend(reversed(children))
    return None


#: a surrogate code unit, raw or escaped; json.loads joins escaped pairs into one character,
#: so a surrogate left in a parsed string is a lone one
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _refuse_lone_surrogates(doc: Any, source: str) -> None:
    """Refuse a string (value or key) holding a lone surrogate, as the JavaScript client does.

    Such a string is not I-JSON (RFC 7493 §2.1) and has no UTF-8 encoding, so RFC 8785
    cannot hash it; refusing it anywhere keeps the two clients' verdicts equal.
    """
    stack = [(doc, "")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            if _SURROGATE.search(node):
                raise InputError(_field(source, where), f"the string {node!r} has a lone surrogate "
                                                        "(not I-JSON; it has no UTF-8 encoding)")
        elif isinstance(node, dict):
            for key, value in reversed(list(node.items())):
                path = f"{where}.{key}" if where else str(key)
                if _SURROGATE.search(key):
                    raise InputError(_field(source, where or "document"),
                                     f"the key {key!r} has a lone surrogate (not I-JSON; it has no UTF-8 encoding)")
                stack.append((value, path))
        elif isinstance(node, list):
            stack.extend((v, f"{where}[{i}]") for i, v in reversed(list(enumerate(node))))


def _field(source: str, path: str) -> str:
    return f"{source}: {path}" if path else source


def loads_strict(text: str, source: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse untrusted JSON ``text``; refuse duplicate keys, deep nesting, NaN/Infinity and out-of-range numbers.

    Parameters
    ----------
    text : str
        The JSON text.
    source : str
        What to call the text in an error (a file name).
    max_depth : int, optional
        The deepest nesting of lists and objects accepted (default :data:`MAX_DEPTH`).

    Returns
    -------
    object
        The parsed value (dicts, lists, str, int, float, bool, None). Integers keep
        their exact value.

    Raises
    ------
    InputError
        When the text is not JSON, nests deeper than ``max_depth``, repeats a key in an
        object, or holds ``NaN``/``Infinity`` or a number beyond float range. The field
        is ``"<source>: <path>"`` naming the object or number (``privacy[0].epsilon``).

    Examples
    --------
    >>> loads_strict('[1, 2.5, "x"]', "a.json")
    [1, 2.5, 'x']
    >>> loads_strict('[NaN]', "a.json")
    Traceback (most recent call last):
    ...
    mechopt._errors.InputError: a.json: [0]: NaN is not a JSON number (write a finite number)
    """
    if not isinstance(text, str):
        raise InputError(source, f"must be JSON text, got {type(text).__name__}")
    depth = json_depth(text, max_depth)
    if depth > max_depth:
        raise InputError(source, f"nests deeper than {max_depth} levels (lists and objects); "
                                 "a problem or mechanism file never needs that")
    try:
        doc = json.loads(text, parse_int=_strict_int, parse_float=_strict_float,
                         parse_constant=_strict_constant, object_pairs_hook=_strict_pairs)
        if _SURROGATE.search(text) or _SURROGATE_ESCAPE.search(text):
            _refuse_lone_surrogates(doc, source)
        return doc
    except _Bad:
        pass
    except json.JSONDecodeError as err:
        raise InputError(source, f"is not valid JSON: {err}") from None
    except RecursionError:  # pragma: no cover - the depth scan refuses first
        raise InputError(source, f"nests deeper than {max_depth} levels (lists and objects)") from None
    # something was refused: parse again, marking the refused values, to name the place
    try:
        doc = json.loads(text, parse_int=_marking_int, parse_float=_marking_float,
                         parse_constant=lambda s: _Marker(_constant_rule(s)), object_pairs_hook=_marking_pairs)
    except json.JSONDecodeError as err:  # the refused value came before a syntax error
        raise InputError(source, f"is not valid JSON: {err}") from None
    found = _locate(doc, "")
    if found is None:  # pragma: no cover - the strict parse refused something the marking parse did not see
        raise InputError(source, "holds a value that is refused (duplicate key or number out of range)")
    path, rule = found
    raise InputError(_field(source, path), rule)

