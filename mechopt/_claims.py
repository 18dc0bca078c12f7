"""Exact check of a mechanism file's privacy claims, with the standard library only.

The client (:mod:`mechopt.client`) runs on devices that may have no numpy, yet it must not
privatize anything with a file whose matrix breaks its own claims (a re-hashed file with
an identity matrix claiming LDP would print the true labels). So it carries this second,
deliberately separate, exact verifier of the notions of ``docs/model.md``: the same
definitions as :mod:`mechopt._verify`, decided the same way (extreme entries found by
ordering, a certified float enclosure that can only *prove* an inequality, exact rational
arithmetic for everything else), written on plain lists. ``tests/test_claims.py`` checks
that the two verifiers agree on random channels, notions and boundary cases.

Examples
--------
>>> doc = {"inputs": ["a", "b"], "outputs": ["a", "b"], "matrix": [[0.7, 0.3], [0.3, 0.7]],
...        "privacy": [{"notion": "ldp", "epsilon": 1.0}]}
>>> check_claims(doc)   # ln(0.7/0.3) = 0.85 <= 1; the parsed claims
[Claim('ldp', epsilon=1.0)]
>>> doc["privacy"] = [{"notion": "ldp", "epsilon": 0.5}]
>>> check_claims(doc)
Traceback (most recent call last):
...
mechopt._errors.VerificationError: privacy[0] (ldp): column 0: Q[a][0] = 0.7 > e^0.5 * Q[b][0] = 0.3
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Sequence

from mechopt._claims_exact import (_U, _box_extremes, _exp_lo, _Fail, _frac, _groups, _leq, _lip,  # noqa: F401
                                   _pairs, _pairs_matrix)
from mechopt._errors import InputError, VerificationError

NOTION_FIELDS: dict[str, tuple[frozenset, frozenset]] = {
    "ldp": (frozenset({"epsilon"}), frozenset({"epsilon"})),
    "wc_lip": (frozenset({"epsilon"}), frozenset({"epsilon"})),
    "block": (frozenset({"epsilon", "blocks"}), frozenset({"epsilon", "blocks"})),
    "high_low": (frozenset({"epsilon", "sensitive"}), frozenset({"epsilon", "sensitive"})),
    "uldp": (frozenset({"epsilon", "sensitive"}), frozenset({"epsilon", "sensitive"})),
    "eldp": (frozenset({"matrix"}), frozenset({"matrix"})),
    "metric": (frozenset({"epsilon", "edges", "distance"}), frozenset({"epsilon"})),
    "lip": (frozenset({"epsilon", "prior", "delta"}), frozenset({"epsilon", "prior"})),
    "bp_lip": (frozenset({"epsilon", "priors", "lower", "upper"}), frozenset({"epsilon"})),
}
#: a prior sums to 1 within this (as :data:`mechopt._validation.PRIOR_SUM_TOL`)
PRIOR_SUM_TOL = 1e-9
#: box priors are read up to this many inputs (as :func:`mechopt.notions.box_prior_vertices`)
BOX_MAX_INPUTS = 20


class Claim:
    """One privacy claim of a mechanism file, validated, over input *indices*.

    The attributes are those the exact checks read (and that the family verifier,
    :mod:`mechopt.families._privacy`, reads on a bound notion): ``name``, ``epsilon``
    (a float, or None for ``eldp``), ``budget``, ``k`` (the inputs the claim is sized for,
    or None), ``delta``, ``matrix`` and ``distance`` (floats, ``math.inf`` for "inf"),
    ``edges`` (``(a, b, length)`` with indices), ``blocks`` and ``sensitive`` (indices),
    ``prior``, ``priors``, ``lower``, ``upper`` (numbers as written).
    """

    __slots__ = ("name", "epsilon", "delta", "matrix", "distance", "edges", "blocks", "sensitive",
                 "prior", "priors", "lower", "upper", "k", "external")

    def __init__(self, name: str, **values: Any) -> None:
        self.name = name
        for slot in self.__slots__[1:]:
            setattr(self, slot, values.get(slot))
        if self.delta is None:
            self.delta = 0.0

    @property
    def budget(self) -> float:
        return 1.0 if self.epsilon is None else float(self.epsilon)

    def __repr__(self) -> str:
        return f"Claim({self.name!r}, epsilon={self.epsilon!r})"


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _number(v: Any, field: str, *, what: str = "a number") -> float:
    """A finite JSON number as a float (ints beyond float range are refused by the reader)."""
    if not _is_number(v):
        raise InputError(field, f"must be {what}, got {v!r}")
    try:
        f = float(v)
    except OverflowError:
        raise InputError(field, "is beyond the range of a float (about 1.8e308)") from None
    if not math.isfinite(f):
        raise InputError(field, f"must be finite, got {v!r}")
    return f


def _budget(v: Any, field: str) -> float:
    f = _number(v, field)
    if f < 0:
        raise InputError(field, f"must be >= 0, got {v!r}")
    return f


def _labels(items: Any, inputs: Sequence[str], index: dict[str, int], field: str) -> list[int]:
    """Input labels (strings, as the schema requires) to indices."""
    if not isinstance(items, list):
        raise InputError(field, f"must be a list of input labels, got {items!r}")
    out = []
    for i, it in enumerate(items):
        if not isinstance(it, str):
            raise InputError(f"{field}[{i}]", f"must be an input label (a string), got {it!r}")
        if it not in index:
            raise InputError(f"{field}[{i}]", f"{it!r} is not an input label (inputs: {list(inputs)[:8]!r})")
        out.append(index[it])
    return out


def _endpoint(it: Any, inputs: Sequence[str], index: dict[str, int], field: str) -> int:
    """An edge end: a label, or an integer index (a label ``"3"`` first) — as the problem file."""
    if isinstance(it, str):
        if it not in index:
            raise InputError(field, f"{it!r} is not an input label (inputs: {list(inputs)[:8]!r})")
        return index[it]
    if isinstance(it, int) and not isinstance(it, bool):
        if str(it) in index:
            return index[str(it)]
        if 0 <= it < len(inputs):
            return it
        raise InputError(field, f"{it!r} is not an input label (inputs: {list(inputs)[:8]!r})")
    raise InputError(field, f"must be an input label, got {it!r}")


def _budget_matrix(M: Any, k: int, field: str, size_field: str) -> list[list[float]]:
    """A k x k matrix of budgets >= 0 or the string "inf", zero on the diagonal."""
    if not isinstance(M, list) or not M:
        raise InputError(field, f"must be a non-empty square list of lists, got {M!r}")
    n = len(M)
    out = []
    for i, row in enumerate(M):
        if not isinstance(row, list) or len(row) != n:
            raise InputError(f"{field}[{i}]", f"must have {n} entries (E must be square)")
        kinds = set(map(type, row))
        if kinds <= {float, int, str}:  # the common row, read without a Python step per entry
            nums = [v for v in row if type(v) is not str] if str in kinds else row
            try:
                ok = (all(v == "inf" for v in row if type(v) is str) and all(map(math.isfinite, nums))
                      and min(nums, default=0) >= 0 and type(row[i]) is not str and row[i] == 0)
            except OverflowError:  # an int beyond float range (only from a dict, not from a file)
                ok = False
            if ok:
                out.append([math.inf if type(v) is str else float(v) for v in row])
                continue
        clean = []
        for j, v in enumerate(row):
            if v == "inf":
                f = math.inf
            elif isinstance(v, str):
                raise InputError(f"{field}[{i}][{j}]", f"must be a number >= 0 or the string \"inf\", got {v!r}")
            else:
                f = _budget(v, f"{field}[{i}][{j}]")
            if i == j and f != 0:
                raise InputError(f"{field}[{i}][{j}]", f"diagonal entries must be 0, got {v!r}")
            clean.append(f)
        out.append(clean)
    if n != k:
        raise InputError(size_field, f"must be {k}x{k} (one row and column per input), got {n}x{n}")
    return out


def _prior(values: Any, field: str) -> list[float]:
    """A probability vector: finite numbers >= 0 summing to 1 within 1e-9 (``math.fsum``)."""
    if not isinstance(values, list):
        raise InputError(field, f"must be a list of probabilities, got {values!r}")
    out = []
    for i, v in enumerate(values):
        f = _number(v, f"{field}[{i}]")
        if f < 0:
            raise InputError(f"{field}[{i}]", f"must be >= 0, got {v!r}")
        out.append(f)
    if not out:
        raise InputError(field, "must be a non-empty list of probabilities")
    total = math.fsum(out)
    if abs(total - 1.0) > PRIOR_SUM_TOL:
        raise InputError(field, f"must sum to 1, got sum {total!r}")
    return out


def _prior_sum_exact(prior: list[float], eps: float, field: str, delta: float = 0.0) -> None:
    """LIP is satisfiable only if ``e^-eps - delta <= sum P <= e^eps + delta`` exactly (as the notions)."""
    total = sum((_frac(v) for v in prior), Fraction(0))
    if total == 1:
        return
    e_lo = _exp_lo(_frac(eps))
    d = _frac(delta)
    if not (1 / e_lo - d <= total <= e_lo + d):
        raise InputError(field, f"sums to {float(total)!r} as written; with epsilon = {eps!r} LIP is satisfiable "
                                "only if the sum is within a factor e^epsilon of 1: write the prior's decimals to "
                                "sum to 1")


def _sized(n: int, k: int, field: str) -> None:
    if n != k:
        raise InputError(field, f"must have one entry per input ({k}), got {n}")


def parse_claim(spec: Any, inputs: Sequence[str], where: str, external: frozenset = frozenset()) -> Claim:
    """Validate one privacy claim of a mechanism file and return it over input indices.

    The rules are those of ``mechopt verify`` (the notions of :mod:`mechopt.notions` and
    the mechanism file's JSON Schema): every field a JSON number where a number belongs,
    ``"inf"`` (exactly) only in an ``eldp`` matrix or a ``metric`` distance, labels that
    exist, sizes equal to the number of inputs.

    Raises
    ------
    InputError
        Naming the field (``privacy[0].matrix[0][1]``) and the rule.

    Examples
    --------
    >>> parse_claim({"notion": "high_low", "epsilon": 1, "sensitive": ["b"]}, ["a", "b"], "privacy[0]").sensitive
    (1,)
    >>> parse_claim({"notion": "eldp", "matrix": [[0, "0.1"], [1, 0]]}, ["a", "b"], "privacy[0]")
    Traceback (most recent call last):
    ...
    mechopt._errors.InputError: privacy[0].matrix[0][1]: must be a number >= 0 or the string "inf", got '0.1'
    """
    if not isinstance(spec, dict):
        raise InputError(where, f"each privacy entry must be an object with a 'notion' key, got {spec!r}")
    name = spec.get("notion")
    if isinstance(name, str) and name in external and name not in NOTION_FIELDS:
        # a notion registered at run time (mechopt.notions.register_notion): its parameters
        # and its exact check are its own, in the process that registered it
        return Claim(name, external=True)
    entry = NOTION_FIELDS.get(name) if isinstance(name, str) else None
    if entry is None:
        raise InputError(f"{where}.notion", f"unknown notion {name!r}; expected one of {sorted(NOTION_FIELDS)}")
    fields, required = entry
    extra = sorted(set(spec) - fields - {"notion"})
    if extra:
        raise InputError(f"{where}.{extra[0]}", f"is not a field of notion {name!r} "
                                                f"(fields: {sorted(fields | {'notion'})})")
    missing = sorted(required - set(spec))
    if missing:
        raise InputError(f"{where}.{missing[0]}", f"is required for notion {name!r}")
    k = len(inputs)
    index = {label: i for i, label in enumerate(inputs)}
    w = where
    eps = _budget(spec["epsilon"], f"{w}.epsilon") if "epsilon" in spec else None
    if name in ("ldp", "wc_lip"):
        return Claim(name, epsilon=eps)
    if name == "block":
        blocks = spec["blocks"]
        if not isinstance(blocks, list) or not blocks:
            raise InputError(f"{w}.blocks", f"must be a non-empty list of lists of input labels, got {blocks!r}")
        out, seen = [], {}
        for i, b in enumerate(blocks):
            idx = _labels(b, inputs, index, f"{w}.blocks[{i}]")
            if not idx:
                raise InputError(f"{w}.blocks[{i}]", "must not be empty")
            for x in idx:
                if x in seen:
                    raise InputError(f"{w}.blocks", f"input {inputs[x]!r} is in block {seen[x]} and block {i}: "
                                                    "blocks must not overlap")
                seen[x] = i
            out.append(tuple(idx))
        missing_inputs = [inputs[x] for x in range(k) if x not in seen]
        if missing_inputs:
            raise InputError(f"{w}.blocks", f"must cover every input; missing {missing_inputs[:8]!r}")
        return Claim(name, epsilon=eps, blocks=tuple(out))
    if name in ("high_low", "uldp"):
        sens = _labels(spec["sensitive"], inputs, index, f"{w}.sensitive")
        if len(set(sens)) != len(sens):
            raise InputError(f"{w}.sensitive", "must not repeat a label")
        if not sens and (name == "high_low" or k > 1):
            raise InputError(f"{w}.sensitive", "must name at least one sensitive input (else the notion "
                                               "constrains nothing)")
        return Claim(name, epsilon=eps, sensitive=tuple(sens))
    if name == "eldp":
        E = _budget_matrix(spec["matrix"], k, f"{w}.matrix", f"{w}.matrix")
        return Claim(name, matrix=E, k=k)
    if name == "metric":
        edges, distance = spec.get("edges"), spec.get("distance")
        if (edges is None) == (distance is None):
            raise InputError(f"{w}.metric", "give exactly one of 'edges' or 'distance'")
        if distance is not None:
            D = _budget_matrix(distance, k, f"{w}.distance", f"{w}.distance")
            return Claim(name, epsilon=eps, distance=D, k=k)
        if not isinstance(edges, list):
            raise InputError(f"{w}.edges", f"must be a list of [a, b, length], got {edges!r}")
        clean = []
        for i, e in enumerate(edges):
            if not isinstance(e, list) or len(e) not in (2, 3):
                raise InputError(f"{w}.edges[{i}]", f"must be [a, b] or [a, b, length], got {e!r}")
            length = 1.0 if len(e) == 2 else _budget(e[2], f"{w}.edges[{i}][2]")
            a = _endpoint(e[0], inputs, index, f"{w}.edges[{i}]")
            b = _endpoint(e[1], inputs, index, f"{w}.edges[{i}]")
            clean.append((a, b, length))
        if k > 1 and not clean:
            raise InputError(f"{w}.edges", "must list at least one edge [a, b, length] (else the notion "
                                           "constrains nothing)")
        return Claim(name, epsilon=eps, edges=tuple(clean))
    if name == "lip":
        if spec["prior"] is None:
            raise InputError(f"{w}.prior", "LIP needs a prior (a list of probabilities, one per input)")
        prior = _prior(spec["prior"], f"{w}.prior")
        delta = 0.0
        if "delta" in spec:
            delta = _number(spec["delta"], f"{w}.delta")
            if not 0 <= delta <= 1:
                raise InputError(f"{w}.delta", f"must lie in [0, 1], got {spec['delta']!r}")
        _prior_sum_exact(prior, eps, f"{w}.prior", delta)
        _sized(len(prior), k, f"{w}.prior")
        return Claim(name, epsilon=eps, prior=prior, delta=delta, k=k)
    # bp_lip
    priors, lower, upper = spec.get("priors"), spec.get("lower"), spec.get("upper")
    if priors is not None:
        if lower is not None or upper is not None:
            raise InputError(f"{w}.priors", "give either 'priors' or 'lower'/'upper', not both")
        if not isinstance(priors, list) or not priors:
            raise InputError(f"{w}.priors", f"must be a non-empty list of priors, got {priors!r}")
        ps = [_prior(p, f"{w}.priors[{i}]") for i, p in enumerate(priors)]
        if len({len(p) for p in ps}) != 1:
            raise InputError(f"{w}.priors", "all priors must have the same length")
        for i, p in enumerate(ps):
            _prior_sum_exact(p, eps, f"{w}.priors[{i}]")
        _sized(len(ps[0]), k, f"{w}.priors")
        return Claim(name, epsilon=eps, priors=ps, k=k)
    if lower is None or upper is None:
        raise InputError(f"{w}.priors", "BP-LIP needs 'priors' or both 'lower' and 'upper'")
    bounds = []
    for key, values in (("lower", lower), ("upper", upper)):
        if not isinstance(values, list):
            raise InputError(f"{w}.{key}", f"must be a list of probabilities, got {values!r}")
        bounds.append([_number(v, f"{w}.{key}[{i}]") for i, v in enumerate(values)])
    lo, hi = bounds
    if len(lo) != len(hi):
        raise InputError(f"{w}.upper", f"must have as many entries as 'lower' ({len(lo)}), got {len(hi)}")
    for i in range(len(lo)):
        if not 0 <= lo[i] <= hi[i] <= 1:
            raise InputError(f"{w}.lower[{i}]", f"must satisfy 0 <= lower <= upper <= 1, got lower={lo[i]!r}, "
                                                f"upper={hi[i]!r}")
    if math.fsum(lo) > 1 + 1e-12 or math.fsum(hi) < 1 - 1e-12:
        raise InputError(f"{w}.lower", f"the box lower <= P <= upper contains no probability vector "
                                       f"(sum(lower) = {math.fsum(lo)!r}, sum(upper) = {math.fsum(hi)!r})")
    if len(lo) > BOX_MAX_INPUTS:
        raise InputError(f"{w}.lower", f"box priors are supported up to {BOX_MAX_INPUTS} inputs, got {len(lo)}")
    _sized(len(lo), k, f"{w}.priors")
    return Claim(name, epsilon=eps, lower=list(spec["lower"]), upper=list(spec["upper"]), k=k)


def parse_claims(privacy: Any, inputs: Sequence[str], external: frozenset = frozenset()) -> list[Claim]:
    """Validate the ``privacy`` list of a mechanism file (see :func:`parse_claim`); at least one claim.

    ``external`` names notions registered at run time (numpy side only): they are passed
    through (``Claim.external``) for their own checker; the standard-library client,
    which cannot know them, refuses them as unknown notions.

    Raises
    ------
    InputError
        A malformed claim (the field is named).
    VerificationError
        No claim at all: there is nothing to trust.

    Examples
    --------
    >>> parse_claims([{"notion": "ldp", "epsilon": 1}, {"notion": "uldp", "epsilon": 2, "sensitive": ["a"]}],
    ...              ["a", "b"])
    [Claim('ldp', epsilon=1.0), Claim('uldp', epsilon=2.0)]
    >>> parse_claims([{"notion": "lip", "epsilon": 1, "prior": [0.2, 0.3, 0.5]}], ["a", "b"])
    Traceback (most recent call last):
    ...
    mechopt._errors.InputError: privacy[0].prior: must have one entry per input (2), got 3
    """
    if not isinstance(privacy, list):
        raise InputError("privacy", f"must be a list of notions, got {privacy!r}")
    claims = [parse_claim(spec, inputs, f"privacy[{i}]", external) for i, spec in enumerate(privacy)]
    if not claims:
        raise VerificationError("privacy: the file claims no privacy notion; nothing to verify")
    return claims


def _check_one(c: Claim, rows: list[list[float]], cols: list[list[float]], inputs: Sequence[str]) -> None:
    k = len(inputs)

    def label(x: int) -> str:
        return inputs[x]

    allx = list(range(k))
    name = c.name
    if name in ("ldp", "wc_lip"):
        _groups(cols, allx, allx, c.epsilon, label)
    elif name == "block":
        for b in c.blocks:
            _groups(cols, list(b), list(b), c.epsilon, label)
    elif name == "high_low":
        _groups(cols, list(c.sensitive), allx, c.epsilon, label)
    elif name == "uldp":
        sens = set(c.sensitive)
        prot = []
        for col in cols:
            nz = [x for x in allx if col[x] != 0]
            if not (len(nz) == 1 and nz[0] not in sens):
                prot.append(col)
        _groups(prot, allx, allx, c.epsilon, label)
    elif name == "eldp":
        _pairs_matrix(rows, c.matrix, label)
    elif name == "metric":
        eps = _frac(c.epsilon)
        pairs = []
        if c.edges is not None:
            for a, b, w in c.edges:
                if a != b:
                    budget = eps * _frac(w)
                    lo = float(budget) * (1 - 4 * _U)
                    pairs += [(a, b, budget, lo), (b, a, budget, lo)]
        else:
            for x, row in enumerate(c.distance):
                for xp, v in enumerate(row):
                    if x != xp and not math.isinf(v):
                        budget = eps * _frac(v)
                        pairs.append((x, xp, budget, float(budget) * (1 - 4 * _U)))
        _pairs(rows, pairs, label)
    elif name == "lip":
        _lip(cols, [_frac(p) for p in c.prior], c.epsilon, c.delta, label)
    elif name == "bp_lip":
        if c.priors is not None:
            for P in c.priors:
                _lip(cols, [_frac(p) for p in P], c.epsilon, 0, label)
        else:
            lo = [_frac(v) for v in c.lower]
            hi = [_frac(v) for v in c.upper]
            # q[x] <= e^eps P.q for every P of the box iff at the P minimising P.q, and
            # P.q <= e^eps q[x] iff at the P maximising it (continuous knapsacks, exact)
            for y, col in enumerate(cols):
                P_min, P_max = _box_extremes(col, lo, hi)
                _lip([col], P_min, c.epsilon, 0, label, lower=False, first=y)
                _lip([col], P_max, c.epsilon, 0, label, upper=False, first=y)
    else:  # pragma: no cover - parse_claim knows every notion
        raise InputError("notion", f"no exact check for notion {name!r}")


def check_claims(doc: dict, claims: Sequence[Claim] | None = None) -> list[Claim]:
    """Raise unless the matrix meets every claim in ``privacy``, exactly; return the parsed claims.

    ``doc`` is a structurally checked matrix document (:func:`mechopt.client.check_document`);
    ``claims`` are its parsed claims (:func:`parse_claims`; parsed here when not given).
    A document with no privacy claim is refused too: there is nothing to trust.

    Raises
    ------
    InputError
        A malformed claim (the field is named).
    VerificationError
        The matrix breaks a claim (or there is none).
    """
    inputs = list(doc["inputs"])
    if claims is None:
        claims = parse_claims(doc.get("privacy"), inputs)
    rows = [[float(v) for v in row] for row in doc["matrix"]]
    if any(v < 0 for row in rows for v in row):
        raise VerificationError("matrix: has negative entries")
    cols = [list(c) for c in zip(*rows)]
    for i, claim in enumerate(claims):
        if claim.external:
            continue  # a run-time notion: decided by its own checker (mechopt._verify)
        try:
            _check_one(claim, rows, cols, inputs)
        except _Fail as err:
            raise VerificationError(f"privacy[{i}] ({claim.name}): {err}") from None
    return list(claims)
