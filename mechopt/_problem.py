"""Problems: inputs, outputs, privacy notions and a utility (docs/model.md, docs/formats.md).

Input is validated once, here, and comes out as clean numpy values; every error is an
:class:`~mechopt._errors.InputError` naming the field and the rule. The privacy entries
are read by their notions' registry (:func:`mechopt.notions.notion_from_spec`), the
objective by the objectives' (:func:`mechopt.objectives.objective_from_spec`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _jsonsafe
from ._errors import InputError
# the documented input limits live with the other input rules (geo reads them too)
from ._validation import MAX_INPUTS, MAX_LABELED_ENTRIES, MAX_MATRIX_INPUTS, check_labels, check_tree
from .notions import REGISTRY, Notion, notion_from_spec
from .objectives import REGISTRY as OBJECTIVE_TYPES
from .objectives import Objective, objective_from_spec

#: problem and mechanism files larger than this are refused unread (bytes)
MAX_FILE_BYTES = 512 * 2**20


@dataclass(frozen=True)
class Problem:
    """A mechanism design problem.

    Parameters
    ----------
    inputs : sequence of str
        Input labels ``x_1..x_k``.
    outputs : "free" or sequence of str
        ``"free"`` lets the solver choose the outputs (sublinear objectives);
        a list of labels fixes them (``expected_loss``).
    notions : sequence of Notion
        All must hold (bound to ``inputs``).
    objective : Objective
    constraints : tuple of ChannelConstraint
        Extra linear conditions on a labeled channel (:mod:`mechopt._custom`).

    Examples
    --------
    >>> p = load_problem({"k": 3, "outputs": "inputs",
    ...                   "privacy": [{"notion": "ldp", "epsilon": 1.0}],
    ...                   "objective": {"kind": "expected_loss", "loss": "hamming"}})
    >>> p.inputs, p.outputs
    (('0', '1', '2'), ('0', '1', '2'))
    """

    inputs: tuple[str, ...]
    outputs: str | tuple[str, ...]
    notions: tuple[Notion, ...]
    objective: Objective
    name: str = ""
    constraints: tuple = ()

    @property
    def k(self) -> int:
        return len(self.inputs)

    @property
    def free_outputs(self) -> bool:
        return self.outputs == "free"

    def privacy_spec(self) -> list[dict]:
        return [n.to_spec(self.inputs) for n in self.notions]

    def to_spec(self) -> dict:
        out = {"inputs": list(self.inputs),
               "outputs": "free" if self.free_outputs else list(self.outputs),
               "privacy": self.privacy_spec(), "objective": self.objective.to_spec()}
        if self.constraints:
            out["constraints"] = [c.spec for c in self.constraints]
        return out


def _check_sizes(doc: dict, k: int, outputs) -> None:
    """Refuse problems too large for the documented limits, before building any matrix."""
    if outputs != "free":
        m = len(outputs)
        if k * m > MAX_LABELED_ENTRIES:
            raise InputError("outputs", f"a labeled channel of {k} inputs x {m} outputs has {k * m} entries; at most "
                             f"{MAX_LABELED_ENTRIES} are supported (use fewer labels, or free outputs)")
    obj = doc.get("objective")
    kind = obj.get("kind") if isinstance(obj, dict) else None
    square = isinstance(kind, str) and kind in OBJECTIVE_TYPES and OBJECTIVE_TYPES[kind].square_loss
    if square and k > MAX_MATRIX_INPUTS:
        raise InputError("objective.kind", f"{kind} carries a k x k loss matrix: at most {MAX_MATRIX_INPUTS} "
                         f"inputs are supported, got {k}")
    priv = doc.get("privacy")
    for i, p in enumerate(priv if isinstance(priv, list) else [priv]):
        # a per-input list of another length is refused before the notion builds anything from it
        # (a 10^5-row 'matrix' under k = 3 allocated 75 GB; a long 'lower' enumerates box vertices)
        name = p.get("notion") if isinstance(p, dict) else None
        entry = REGISTRY.get(name) if isinstance(name, str) else None
        for key, shape in entry.cls.per_input if entry is not None else ():
            v = p.get(key)
            if not isinstance(v, (list, tuple)):
                continue
            if shape == "rows":  # a k x k matrix with fewer rows: the matrix reader names the short row
                if len(v) > k:
                    raise InputError(f"privacy[{i}].{key}", f"must be {k}x{k} (one row per input), got {len(v)} rows")
            elif len(v) != k:
                raise InputError(f"privacy[{i}].{key}", f"must have one entry per input ({k}), got {len(v)}")
        if isinstance(p, dict) and ("matrix" in p or "distance" in p) and k > MAX_MATRIX_INPUTS:
            key = "matrix" if "matrix" in p else "distance"
            raise InputError(f"privacy[{i}].{key}", f"a k x k budget matrix is supported up to {MAX_MATRIX_INPUTS} "
                             f"inputs, got {k} (give metric privacy by 'edges' instead)")


def problem_from_dict(doc: Any, *, name: str = "", base: Path | None = None) -> Problem:
    """Validate a parsed problem document (docs/formats.md) and return a :class:`Problem`.

    A ``places:`` section (grid, x/y or latitude/longitude) is expanded first by
    :func:`mechopt.geo.expand_places`; files it names are read relative to ``base``.
    """
    if not isinstance(doc, dict):
        raise InputError("problem", f"must be a mapping (inputs, outputs, privacy, objective), got {type(doc).__name__}")
    # every number of every field, before any is read: an integer with no float (10**400)
    # is refused naming its place, never an OverflowError from a conversion deep inside
    check_tree(doc)
    if "places" in doc:
        from .geo import expand_places

        doc = expand_places(doc, base)
    allowed = {"inputs", "k", "outputs", "privacy", "objective", "name", "description", "constraints"}
    extra = sorted(set(doc) - allowed)
    if extra:
        raise InputError(extra[0], f"is not a problem field (fields: {sorted(allowed)})")
    if "inputs" in doc and "k" in doc:
        raise InputError("inputs", "give either 'inputs' or 'k', not both")
    if "inputs" in doc:
        if isinstance(doc["inputs"], (list, tuple)) and len(doc["inputs"]) > MAX_INPUTS:
            raise InputError("inputs", f"at most {MAX_INPUTS} inputs are supported, got {len(doc['inputs'])}")
        inputs = check_labels(doc["inputs"], "inputs")
    elif "k" in doc:
        k = doc["k"]
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError("k", f"must be a positive integer, got {k!r}")
        if k > MAX_INPUTS:
            raise InputError("k", f"at most {MAX_INPUTS} inputs are supported, got {k}")
        inputs = tuple(str(i) for i in range(k))
    else:
        raise InputError("inputs", "is required (a list of labels, or 'k: N')")
    outs = doc.get("outputs", "inputs")
    if outs == "inputs":
        outputs: str | tuple[str, ...] = inputs
    elif outs == "free":
        outputs = "free"
    elif isinstance(outs, (list, tuple)):
        outputs = check_labels(outs, "outputs")
    else:
        raise InputError("outputs", f"must be 'inputs', 'free' or a list of labels, got {outs!r}")
    _check_sizes(doc, len(inputs), outputs)
    priv = doc.get("privacy")
    if priv is None:
        raise InputError("privacy", "is required: a list of notions, e.g. [{notion: ldp, epsilon: 1.0}]")
    if isinstance(priv, dict):
        priv = [priv]
    if not isinstance(priv, list) or not priv:
        raise InputError("privacy", f"must be a non-empty list of notions, got {priv!r}")
    notions = tuple(notion_from_spec(p, inputs, f"privacy[{i}]") for i, p in enumerate(priv))
    objective = objective_from_spec(doc.get("objective"), inputs, outputs, notions)
    constraints: tuple = ()
    if doc.get("constraints") is not None:
        from ._custom import parse_constraints

        constraints = parse_constraints(doc["constraints"], inputs, outputs, objective)
    return Problem(inputs, outputs, notions, objective, str(doc.get("name", name)), constraints)


def read_document(path: str | Path) -> Any:
    """Read a YAML or JSON file; a missing or unparsable file is an InputError."""
    p = Path(path)
    if not p.exists():
        raise InputError(str(path), "file does not exist")
    if p.is_dir():
        raise InputError(str(path), "is a directory, not a file")
    try:
        size = p.stat().st_size
    except OSError as err:
        raise InputError(str(path), f"cannot be read: {err}") from None
    if size > MAX_FILE_BYTES:
        raise InputError(str(path), f"is {size} bytes; files up to {MAX_FILE_BYTES} bytes are read")
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(str(path), f"cannot be read: {err}") from None
    return parse_document(text, str(path), json_only=p.suffix.lower() == ".json")


#: deeper nesting than this is refused (no problem or mechanism file needs more than ~6)
MAX_DEPTH = _jsonsafe.MAX_DEPTH


def parse_document(text: str, where: str, *, json_only: bool = False) -> Any:
    r"""Parse JSON (or YAML 1.2, a superset) text from an untrusted file; refuse what could mislead or hang.

    YAML is read with the YAML 1.2 core schema's numbers, so ``epsilon: 1e-9`` is the
    number 1e-9 (PyYAML's YAML 1.1 resolver would read it as a string). Refused, each
    with one line naming the place (an :class:`InputError`):

    * a key given twice in one mapping (YAML, with its line) or object (JSON, with its
      path) -- a reader would silently keep one of the two values;
    * YAML anchors and aliases (``&a``, ``*a``): no problem needs them, and a few
      hundred bytes of nested aliases expand to gigabytes ("billion laughs");
    * YAML merge keys (``<<``), which YAML 1.2 does not have (read as the plain key
      ``<<``, which no problem field is);
    * nesting deeper than :data:`MAX_DEPTH` lists and mappings, refused before the
      recursive part of either parser runs;
    * numbers beyond float range: an integer whose ``float()`` overflows, and a decimal
      such as ``1e400`` that would silently become infinity (YAML's ``.inf`` and the
      string ``"inf"`` remain the ways to write infinity where a field allows it);
      in JSON also ``NaN``/``Infinity``, which are not JSON.

    Examples
    --------
    >>> parse_document("epsilon: 1e-9", "p.yaml")
    {'epsilon': 1e-09}
    >>> parse_document("epsilon: 0.1\nepsilon: 50", "p.yaml")
    Traceback (most recent call last):
    ...
    mechopt._errors.InputError: p.yaml: line 2: the key 'epsilon' appears twice in one mapping (first on line 1); duplicate keys are refused
    """
    if json_only:
        return _jsonsafe.loads_strict(text, where)
    import yaml

    loader = None
    try:
        loader = _yaml12_loader()(text)  # the reader refuses control characters here
        return loader.get_single_data()
    except _YamlRefused as err:
        raise InputError(f"{where}: line {err.line}" if err.line else where, err.rule) from None
    except yaml.YAMLError as err:
        msg = str(err).replace("\n", " ")
        raise InputError(where, f"is not valid YAML: {msg}") from None
    except RecursionError:  # pragma: no cover - the composer's depth cap refuses first
        raise InputError(where, f"nests deeper than {MAX_DEPTH} levels") from None
    finally:
        if loader is not None:
            loader.dispose()


class _YamlRefused(Exception):
    """A YAML construct refused while parsing; ``parse_document`` adds the file name."""

    def __init__(self, mark, rule: str):
        self.line = None if mark is None else mark.line + 1
        self.rule = rule
        super().__init__(rule)


_LOADER = None
_FLOAT_OUT_OF_RANGE = f"{_jsonsafe.BEYOND_FLOAT}; write .inf (or 'inf') for infinity"


def _yaml12_loader():
    """PyYAML's SafeLoader with the YAML 1.2 core schema, refusing aliases, duplicate keys and deep nesting.

    Floats ``1e-9``, ``.5``, ``-.inf``; integers in decimal, ``0o`` octal and ``0x`` hex;
    booleans only ``true``/``false`` (``yes``, ``no``, ``on``, ``off``, ``1:30`` and
    ``2020-01-01`` are strings); no merge key ``<<``; the YAML 1.1 tags ``!!timestamp``,
    ``!!binary``, ``!!set``, ``!!omap``, ``!!pairs`` are refused. See :func:`parse_document`
    for what else is refused.
    """
    global _LOADER
    if _LOADER is None:
        import re

        import yaml
        from yaml.constructor import BaseConstructor, SafeConstructor

        class Loader(yaml.SafeLoader):
            _depth = 0

            def compose_node(self, parent, index):
                event = self.peek_event()
                if isinstance(event, yaml.AliasEvent):
                    raise _YamlRefused(event.start_mark, f"the YAML alias *{event.anchor} is refused: write the "
                                       "value out (aliases can expand a small file to gigabytes)")
                anchor = getattr(event, "anchor", None)
                if anchor is not None:
                    raise _YamlRefused(event.start_mark, f"the YAML anchor &{anchor} is refused: write the value "
                                       "out (anchors and aliases can expand a small file to gigabytes)")
                self._depth += 1
                try:
                    if self._depth > MAX_DEPTH:
                        raise _YamlRefused(event.start_mark, f"nests deeper than {MAX_DEPTH} levels (lists and "
                                           "mappings); a problem file never needs that")
                    return super().compose_node(parent, index)
                finally:
                    self._depth -= 1

            def construct_mapping(self, node, deep=False):
                if not isinstance(node, yaml.MappingNode):
                    return super().construct_mapping(node, deep)
                seen = {}
                for key_node, _ in node.value:
                    key = self.construct_object(key_node, deep=True)
                    try:
                        first = seen.setdefault(key, key_node)
                    except TypeError:  # an unhashable key: PyYAML's own message follows
                        break
                    if first is not key_node:
                        raise _YamlRefused(key_node.start_mark, f"the key {key!r} appears twice in one mapping "
                                           f"(first on line {first.start_mark.line + 1}); duplicate keys are "
                                           "refused")
                # no flatten_mapping: without merge keys there is nothing to merge
                return BaseConstructor.construct_mapping(self, node, deep)

        float_re = re.compile(r"""^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?
                                  |[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$""", re.X)
        replaced = {"tag:yaml.org,2002:float", "tag:yaml.org,2002:int", "tag:yaml.org,2002:bool",
                    "tag:yaml.org,2002:merge", "tag:yaml.org,2002:timestamp"}
        Loader.yaml_implicit_resolvers = {k: [r for r in v if r[0] not in replaced]
                                          for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
        # YAML 1.2 core schema: yes/no/on/off and 1:30 are strings; 1e-9 is a float
        Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                     list("tTfF"))
        Loader.add_implicit_resolver("tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
                                     list("-+0123456789"))
        Loader.add_implicit_resolver("tag:yaml.org,2002:float", float_re, list("-+0123456789."))

        def construct_int(loader, node):
            v = str(loader.construct_scalar(node)).replace("_", "")
            try:
                if v.startswith("0o"):
                    out = int(v[2:], 8)
                elif v.startswith("0x"):
                    out = int(v[2:], 16)
                else:
                    rule = _jsonsafe.int_literal_rule(v)  # from the digits, before int() of a huge literal
                    if rule:
                        raise _YamlRefused(node.start_mark, f"{rule}; write .inf (or 'inf') for infinity")
                    out = int(v, 10)  # 017 is seventeen in YAML 1.2
            except ValueError:
                raise _YamlRefused(node.start_mark, f"{v[:40]!r} is not an integer") from None
            if abs(out) > _jsonsafe.FLOAT_MAX_INT:  # a long octal or hex literal
                raise _YamlRefused(node.start_mark, f"the integer {v[:12]}… {_FLOAT_OUT_OF_RANGE}")
            return out

        def construct_float(loader, node):
            v = str(loader.construct_scalar(node))
            try:
                out = SafeConstructor.construct_yaml_float(loader, node)
            except ValueError:
                raise _YamlRefused(node.start_mark, f"{v[:40]!r} is not a number") from None
            if math.isinf(out) and "inf" not in v.lower():
                raise _YamlRefused(node.start_mark, f"the number {v[:40]} " + _FLOAT_OUT_OF_RANGE)
            return out

        def refuse_tag(loader, node):
            raise _YamlRefused(node.start_mark, f"the YAML tag {node.tag.replace('tag:yaml.org,2002:', '!!')} is "
                               "refused: problem files use the YAML 1.2 core schema (strings, numbers, true/false, "
                               "null, lists and mappings)")

        Loader.add_constructor("tag:yaml.org,2002:int", construct_int)
        Loader.add_constructor("tag:yaml.org,2002:float", construct_float)
        for tag in ("timestamp", "binary", "set", "omap", "pairs", "merge", "value"):
            Loader.add_constructor(f"tag:yaml.org,2002:{tag}", refuse_tag)
        _LOADER = Loader
    return _LOADER


def load_problem(source: str | Path | dict) -> Problem:
    """Load and validate a problem from a YAML/JSON file or an already parsed dict.

    Raises
    ------
    InputError
        For a missing file, invalid YAML/JSON, or any field that breaks docs/formats.md.

    Examples
    --------
    >>> p = load_problem({"inputs": ["yes", "no"], "outputs": "free",
    ...                   "privacy": [{"notion": "lip", "epsilon": 1.0, "prior": [0.1, 0.9]}],
    ...                   "objective": {"kind": "mmse", "values": [1, 0]}})
    >>> p.objective.prior.tolist()
    [0.1, 0.9]
    """
    if isinstance(source, dict):
        return problem_from_dict(source)
    doc = read_document(source)
    return problem_from_dict(doc, name=Path(source).stem, base=Path(source).parent)
