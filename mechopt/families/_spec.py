"""Structured mechanisms: a family's parameters, its digest, its output labels, its exact sampler.

Standard library only (plus the pure-Python ``rfc8785`` package for the digest): this is
the part a device needs to privatize with a family mechanism file, so it imports no numpy.

Two families, both with outputs that are never listed:

``subset_selection`` — a mixture over ``d`` of d-subset selection (Ye & Barg, *Optimal
schemes for discrete distribution estimation under locally differential privacy*, IEEE
Trans. IT 2018, §III; Wang et al., *Mutual information optimally local private discrete
distribution estimation*, 2016, §IV). With probability ``weight_d`` the user runs
component ``d``: it reports a set ``S`` of ``d`` inputs with
``Pr(S | x) = ratio / Z_d`` if ``x ∈ S`` and ``1 / Z_d`` otherwise,
``Z_d = ratio·C(k-1, d-1) + C(k-1, d)``. ``d = 0`` and ``d = k`` are allowed (one
constant output each): unary encoding and local hashing are such mixtures (see
:mod:`mechopt.baselines`). Output labels are ``"{i,j,...}"``: the sorted 0-based
positions of the inputs in ``S`` (``"{}"`` for the empty set).

``hadamard_response`` — the high-low Hadamard response of Acharya, Bonawitz, Kairouz,
Ramage, Sun, *Context-aware local differential privacy* (ICML 2020) §5.1, eqs. (13)–(14),
with the row the estimator (15) assumes (``H(i+1, ·)`` for the ``i``-th sensitive input,
see :mod:`mechopt.closed_forms._hadamard`): ``S = 2^⌈log2(s+1)⌉`` slots; the ``i``-th
sensitive input gives ``2·ratio/(S(ratio+1))`` to the slots where row ``i`` of
Sylvester's ``H_S`` is +1 and ``2/(S(ratio+1))`` to the others; a non-sensitive input
gives ``2/(S(ratio+1))`` to every slot and ``(ratio-1)/(ratio+1)`` to its own direct
output. Every input sensitive is the Hadamard response of Acharya, Sun, Zhang (2019).
Labels ``"h<c>"`` (slot ``c``) and ``"d<i>"`` (direct output of input position ``i``).

``ratio`` is a JSON number read as the exact decimal it prints as (SPEC §4), so every
probability is rational and the sampler draws it exactly.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import struct
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Iterable, Iterator, Sequence

from .._errors import InputError
from .._words import StreamWords, uniform_masked

FAMILY_KINDS = ("subset_selection", "hadamard_response")
_WORD = 1 << 32
#: the mechanism file version that may hold a family (version 1 files are matrices)
FAMILY_VERSION = 2
#: mixture weights must sum to 1 within this (exactly computed), like matrix rows
WEIGHT_TOL = Fraction(1, 10**12)


def exact_number(value: Any, field: str) -> Fraction:
    """The exact decimal value of a finite JSON number (``Fraction(repr(float(v)))``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(field, f"must be a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(field, f"must be finite, got {value!r}")
    return Fraction(repr(float(value))) if isinstance(value, float) else Fraction(value)


def family_digest(doc: dict[str, Any]) -> str:
    """sha256 of the RFC 8785 canonical JSON of ``{"inputs", "family", "privacy"}`` (SPEC §5, version 2).

    Examples
    --------
    >>> doc = {"inputs": ["a", "b"], "privacy": [{"notion": "ldp", "epsilon": 1.0}],
    ...        "family": {"kind": "subset_selection", "ratio": 2.5, "mixture": [{"d": 1, "weight": 1.0}]}}
    >>> canonical = (b'{"family":{"kind":"subset_selection","mixture":[{"d":1,"weight":1}],"ratio":2.5},'
    ...              b'"inputs":["a","b"],"privacy":[{"epsilon":1,"notion":"ldp"}]}')
    >>> family_digest(doc) == hashlib.sha256(canonical).hexdigest()
    True
    """
    import rfc8785

    payload = {"inputs": doc["inputs"], "family": doc["family"], "privacy": doc["privacy"]}
    try:
        text = rfc8785.dumps(payload)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as err:
        raise InputError("family", f"cannot be written as RFC 8785 canonical JSON: {err}") from None
    return hashlib.sha256(text).hexdigest()


def _ratio(spec: dict, where: str) -> Fraction:
    if "ratio" not in spec:
        raise InputError(f"{where}.ratio", "is required: the exact probability ratio e^epsilon' (a number >= 1)")
    r = exact_number(spec["ratio"], f"{where}.ratio")
    if r < 1:
        raise InputError(f"{where}.ratio", f"must be >= 1, got {spec['ratio']!r}")
    return r


@dataclass(frozen=True)
class SubsetMixture:
    """A mixture over ``d`` of d-subset selection on ``k`` inputs (see the module docstring).

    Attributes
    ----------
    k : int
    ratio : Fraction
        ``Pr(S | x in S) / Pr(S | x not in S)`` within a component.
    components : tuple of (int, Fraction)
        ``(d, weight)`` with exact weights summing to exactly 1 (normalised on reading).
    ratio_value : float
        The ratio as written in the file.

    Examples
    --------
    >>> m = SubsetMixture.from_spec({"kind": "subset_selection", "ratio": 3,
    ...                             "mixture": [{"d": 1, "weight": 1}]}, 3)
    >>> m.inclusion(1)          # Pr(x in S | x) for 1-subset selection = k-RR
    Fraction(3, 5)
    """

    k: int
    ratio: Fraction
    components: tuple[tuple[int, Fraction], ...]
    ratio_value: float

    kind = "subset_selection"

    @classmethod
    def from_spec(cls, spec: Any, k: int, where: str = "family") -> "SubsetMixture":
        if not isinstance(spec, dict):
            raise InputError(where, f"must be an object, got {spec!r}")
        r = _ratio(spec, where)
        mix = spec.get("mixture")
        if not isinstance(mix, list) or not mix:
            raise InputError(f"{where}.mixture", "must be a non-empty list of {\"d\": int, \"weight\": number}")
        comps: dict[int, Fraction] = {}
        for i, c in enumerate(mix):
            w = f"{where}.mixture[{i}]"
            if not isinstance(c, dict) or set(c) != {"d", "weight"}:
                raise InputError(w, f"must be an object with exactly the keys 'd' and 'weight', got {c!r}")
            d = c["d"]
            if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d <= k:
                raise InputError(f"{w}.d", f"must be an integer in [0, {k}], got {d!r}")
            if d in comps:
                raise InputError(f"{w}.d", f"{d} appears twice; each subset size may appear once")
            wt = exact_number(c["weight"], f"{w}.weight")
            if wt < 0:
                raise InputError(f"{w}.weight", f"must be >= 0, got {c['weight']!r}")
            comps[d] = wt
        total = sum(comps.values(), Fraction(0))
        if abs(total - 1) > WEIGHT_TOL:
            raise InputError(f"{where}.mixture", f"weights must sum to 1 within 1e-12, they sum to {float(total)!r}")
        comps = {d: w / total for d, w in comps.items() if w > 0}
        return cls(k, r, tuple(sorted(comps.items())), float(spec["ratio"]))

    @staticmethod
    def spec(ratio: float, mixture: Sequence[tuple[int, float]]) -> dict:
        """The JSON object of a mixture (``ratio`` and ``[(d, weight)]``)."""
        return {"kind": "subset_selection", "ratio": float(ratio),
                "mixture": [{"d": int(d), "weight": float(w)} for d, w in mixture]}

    @property
    def informative(self) -> tuple[int, ...]:
        """Components whose outputs depend on the input (``1 <= d <= k-1``)."""
        return tuple(d for d, _ in self.components if 0 < d < self.k)

    def normaliser(self, d: int) -> int | Fraction:
        return self.ratio * math.comb(self.k - 1, d - 1) + math.comb(self.k - 1, d) if d > 0 else 1

    def inclusion(self, d: int) -> Fraction:
        """``Pr(x ∈ S | x)`` in component ``d`` (Ye & Barg's ``d e^ε / (d e^ε + k - d)``)."""
        if d == 0:
            return Fraction(0)
        return self.ratio * math.comb(self.k - 1, d - 1) / self.normaliser(d)

    def cross_inclusion(self, d: int) -> Fraction:
        """``Pr(x ∈ S | x')`` for ``x' != x`` in component ``d``."""
        k = self.k
        if d == 0 or k < 2:
            return Fraction(0)
        num = (self.ratio * math.comb(k - 2, d - 2) if d >= 2 else 0) + math.comb(k - 2, d - 1)
        return Fraction(num) / self.normaliser(d)

    def outputs_count(self) -> int:
        return sum(math.comb(self.k, d) for d, _ in self.components)

    def describe(self) -> str:
        parts = ", ".join(f"d={d} (weight {float(w):.6g})" for d, w in self.components)
        return f"subset selection, ratio {float(self.ratio):.10g}: {parts}"


@dataclass(frozen=True)
class HadamardFamily:
    """The high-low Hadamard response of 002 §5.1 (see the module docstring)."""

    k: int
    ratio: Fraction
    sensitive: tuple[int, ...]
    ratio_value: float

    kind = "hadamard_response"

    @classmethod
    def from_spec(cls, spec: Any, k: int, inputs: Sequence[str], where: str = "family") -> "HadamardFamily":
        if not isinstance(spec, dict):
            raise InputError(where, f"must be an object, got {spec!r}")
        extra = set(spec) - {"kind", "ratio", "sensitive"}
        if extra:
            raise InputError(where, f"unknown key(s) {sorted(extra)!r}; a hadamard_response has kind, ratio, sensitive")
        r = _ratio(spec, where)
        sens = spec.get("sensitive")
        if not isinstance(sens, list) or not sens:
            raise InputError(f"{where}.sensitive", "must be a non-empty list of input labels")
        pos = {x: i for i, x in enumerate(inputs)}
        idx = []
        for j, s in enumerate(sens):
            if not isinstance(s, str) or s not in pos:  # (a list is no label, and unhashable)
                raise InputError(f"{where}.sensitive[{j}]", f"{s!r} is not an input label")
            idx.append(pos[s])
        if len(set(idx)) != len(idx):
            raise InputError(f"{where}.sensitive", "labels must be unique")
        return cls(k, r, tuple(sorted(idx)), float(spec["ratio"]))

    @staticmethod
    def spec(ratio: float, sensitive_labels: Sequence[str]) -> dict:
        return {"kind": "hadamard_response", "ratio": float(ratio), "sensitive": list(sensitive_labels)}

    @property
    def slots(self) -> int:
        return 1 << len(self.sensitive).bit_length()

    @property
    def others(self) -> tuple[int, ...]:
        s = set(self.sensitive)
        return tuple(x for x in range(self.k) if x not in s)

    def row_of(self, x: int) -> int:
        """Hadamard row (0-based) of a sensitive input: ``i`` for the ``i``-th (1-based)."""
        return self.sensitive.index(x) + 1

    def output_labels(self) -> list[str]:
        return [f"h{c}" for c in range(self.slots)] + [f"d{x}" for x in self.others]

    def outputs_count(self) -> int:
        return self.slots + len(self.others)

    def describe(self) -> str:
        return (f"Hadamard response (002 §5.1), ratio {float(self.ratio):.10g}, {len(self.sensitive)} sensitive inputs, "
                f"{self.slots} slots")


def family_from_spec(spec: Any, inputs: Sequence[str], where: str = "family"):
    """Validate a ``family`` object and return its parsed form.

    Raises
    ------
    InputError
        For an unknown kind or malformed parameters (the message names the field).
    """
    if not isinstance(spec, dict):
        raise InputError(where, f"must be an object, got {spec!r}")
    kind = spec.get("kind")
    k = len(inputs)
    if kind == "subset_selection":
        extra = set(spec) - {"kind", "ratio", "mixture"}
        if extra:
            raise InputError(where, f"unknown key(s) {sorted(extra)!r}; a subset_selection has kind, ratio, mixture")
        return SubsetMixture.from_spec(spec, k, where)
    if kind == "hadamard_response":
        return HadamardFamily.from_spec(spec, k, inputs, where)
    raise InputError(f"{where}.kind", f"must be one of {', '.join(FAMILY_KINDS)}, got {kind!r}")


def approx_count(n: int) -> float | str:
    """A float for a count that fits one, else a string ``"2.12e+2612"`` (JSON-safe either way)."""
    if n < 10**300:
        return float(n)
    # no str(n): Python refuses int -> str beyond 4300 digits (C(10^5, d) has thousands)
    shift = max(n.bit_length() - 64, 0)
    lg = math.log10(n >> shift) + shift * math.log10(2)
    digits = math.floor(lg)
    return f"{math.floor(10 ** (lg - digits) * 100 + 1e-6) / 100:.2f}e+{digits}"


# -- output labels -----------------------------------------------------------------------


def subset_label(members: Sequence[int]) -> str:
    """``"{0,4,17}"`` for the positions 0, 4, 17 (sorted)."""
    return "{" + ",".join(str(i) for i in sorted(members)) + "}"


def parse_subset_label(label: str, k: int) -> list[int]:
    """The sorted positions of a subset label; ValueError if it is not one (canonical form only)."""
    if len(label) < 2 or label[0] != "{" or label[-1] != "}":
        raise ValueError(label)
    body = label[1:-1]
    if not body:
        return []
    out = [int(t) for t in body.split(",")]
    # canonical: no signs, spaces or leading zeros; strictly increasing; in range
    if ",".join(map(str, out)) != body or out[0] < 0 or out[-1] >= k or any(a >= b for a, b in zip(out, out[1:])):
        raise ValueError(label)
    return out


# -- exact sampling ------------------------------------------------------------------------


def _thresholds(weights: Sequence[Fraction]) -> tuple[list[int], int]:
    """Cumulative integer weights and their total: the smallest integers proportional to ``weights``."""
    den = 1
    for w in weights:
        den = den * w.denominator // math.gcd(den, w.denominator)
    cum, run = [], 0
    for w in weights:
        run += w.numerator * (den // w.denominator)
        cum.append(run)
    return cum, run


def _uniform_subset(n: int, m: int, randbelow: Callable[[int], int], skip: int) -> list[int]:
    """A uniformly random ``m``-subset of ``{0..n-1} minus {skip}`` (Floyd's algorithm, ``m`` draws).

    Floyd runs over ``{0..n-2}``: for ``j = n-1-m, ..., n-2`` it draws ``t`` below
    ``j + 1`` and adds ``j`` if ``t`` is already chosen, else ``t``; each chosen ``i`` is
    then shifted past ``skip`` (``i + 1`` when ``i >= skip``).
    """
    chosen: set[int] = set()
    for j in range(n - 1 - m, n - 1):
        t = randbelow(j + 1)
        chosen.add(j if t in chosen else t)
    return [i + (i >= skip) for i in chosen]


#: bumped in a forked child, which must drop the words its parent buffered
_FORKS = [0]
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _FORKS.__setitem__(0, _FORKS[0] + 1))


class _OsWords:
    """32-bit words from :func:`os.urandom`, 4 bytes big-endian each (the words of
    :mod:`mechopt.client`'s default source), decoded a block at a time.

    A subset report reads hundreds of one-word draws, so the words are unpacked 16 384 at
    a time. The block is never shared across processes: a forked child drops it (it would
    otherwise replay its parent's unread words).
    """

    block = 16384

    def __init__(self) -> None:
        self._it: Iterator[int] = iter(())
        self._fork = _FORKS[0]

    def __call__(self, n: int) -> int:
        if self._fork != _FORKS[0]:
            self._it, self._fork = iter(()), _FORKS[0]
        r = 0
        for _ in range(n):
            w = next(self._it, None)
            if w is None:
                self._it = iter(struct.unpack(f">{self.block}I", os.urandom(4 * self.block)))
                w = next(self._it)
            r = (r << 32) | w
        return r


class FamilySampler:
    """Exact sampler of a family's reports, never listing the outputs.

    Every probability the family defines is rational (``ratio`` and the weights are read
    as exact decimals), and every draw is one uniform integer ``U(T)`` below an exact
    integer ``T``, compared with an exact integer threshold, so the report's distribution
    is the family's exactly. ``U(T)`` is the matrix sampler's step 3 (docs/formats.md,
    "Exact sampling"; :func:`mechopt.client.uniform_below`): ``n = ceil(b/32)`` 32-bit
    words joined big-endian, the low ``b`` bits kept (``b`` = bit length of ``T - 1``),
    rejected if ``>= T``; ``U(1)`` reads no word. The order of the draws is specified in
    docs/families.md ("Exact sampling of a family"), so every client fed the same words
    reports the same outputs (``clients/vectors/families.json`` pins it).

    Subset selection: the component ``d`` (one draw below the total of the smallest
    integer weights, components in increasing ``d``); ``x ∈ S`` iff
    ``U(Z) < ratio_n·C(k-1,d-1)`` with ``Z = ratio_n·C(k-1,d-1) + ratio_d·C(k-1,d)``
    (``ratio = ratio_n / ratio_d`` in lowest terms); the rest of ``S`` uniformly from the
    other inputs (Floyd's algorithm). Hadamard response: a sensitive input takes one of
    its +1 slots with probability ``ratio/(ratio+1)``, uniformly (a uniform slot whose
    parity is fixed by flipping the lowest set bit of its row — a bijection between the -1
    and +1 slots); a non-sensitive input reports itself with probability
    ``(ratio-1)/(ratio+1)``, else a uniform slot.

    Parameters
    ----------
    family : SubsetMixture or HadamardFamily
    seed : int or None, keyword-only
        ``None`` (default): words from :func:`os.urandom`, cryptographically secure — use
        this to privatize real data (read 16 384 words at a time, dropped in a forked child). An integer: words from ``random.Random(seed)``,
        reproducible and **for simulation only**.
    words : iterable of int, keyword-only
        An explicit stream of 32-bit words (test vectors, cross-client checks); not with
        ``seed``. :attr:`words_used` counts the words read.

    Raises
    ------
    InputError
        ``seed`` is not an integer, both ``seed`` and ``words`` are given, or (when
        drawing) the word stream runs out or holds a value outside ``[0, 2**32)``.

    Examples
    --------
    >>> fam = SubsetMixture.from_spec({"kind": "subset_selection", "ratio": 2,
    ...                               "mixture": [{"d": 2, "weight": 1}]}, 4)
    >>> s = FamilySampler(fam, seed=3)
    >>> len(parse_subset_label(s.sample_index(0), 4))
    2
    >>> # U(9) < 6: input 0 is in S (words 5); Floyd over {0,1,2}: U(3) = 1 -> {1 + 1}
    >>> s = FamilySampler(fam, words=[5, 1])
    >>> s.sample_index(0), s.words_used
    ('{0,2}', 2)
    """

    def __init__(self, family, *, seed: int | None = None, words: Iterable[int] | None = None):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise InputError("seed", f"must be an integer or None, got {seed!r}")
        if seed is not None and words is not None:
            raise InputError("words", "give either a seed or a word stream, not both")
        self.family = family
        self.seeded = seed is not None
        self._stream = None
        if words is not None:
            self._stream = take = StreamWords(words)
        elif seed is not None:
            rng = random.Random(seed)

            def take(n: int) -> int:
                return rng.getrandbits(32 * n)
        else:
            take = _OsWords()
        self._take = take

        def below(total: int) -> int:  # U(total): mechopt.client.uniform_below, one word up to 2**32
            if total <= _WORD:
                if total == 1:
                    return 0
                mask = (1 << (total - 1).bit_length()) - 1
                while True:
                    r = take(1) & mask
                    if r < total:
                        return r
            bits = (total - 1).bit_length()
            return uniform_masked(total, (bits + 31) // 32, (1 << bits) - 1, take)

        self._randbelow = below
        r = family.ratio
        self._rn, self._rd = r.numerator, r.denominator
        if family.kind == "subset_selection":
            self._cum, self._total = _thresholds([w for _, w in family.components])
            k = family.k
            self._incl = []
            for d, _ in family.components:
                if d == 0 or d == k:
                    self._incl.append((0, 1))
                else:  # Pr(x in S) = rn C(k-1,d-1) / (rn C(k-1,d-1) + rd C(k-1,d))
                    a = self._rn * math.comb(k - 1, d - 1)
                    self._incl.append((a, a + self._rd * math.comb(k - 1, d)))
        else:
            self._row = {x: i + 1 for i, x in enumerate(family.sensitive)}
            self._direct = {x: f"d{x}" for x in family.others}

    @property
    def words_used(self) -> int | None:
        """Words read from an explicit ``words`` stream (``None`` for other sources)."""
        return None if self._stream is None else self._stream.used

    def sample_index(self, x: int) -> str:
        """One report (an output label) for the input at position ``x``."""
        fam, draw = self.family, self._randbelow
        if fam.kind == "subset_selection":
            j = 0
            u = draw(self._total)
            while self._cum[j] <= u:
                j += 1
            d = fam.components[j][0]
            k = fam.k
            if d == 0:
                return "{}"
            if d == k:
                return subset_label(range(k))
            a, z = self._incl[j]
            if draw(z) < a:
                return subset_label(_uniform_subset(k, d - 1, draw, x) + [x])
            return subset_label(_uniform_subset(k, d, draw, x))
        S = fam.slots
        if x in self._row:
            row = self._row[x]
            plus = draw(self._rn + self._rd) < self._rn  # ratio / (ratio + 1)
            c = draw(S)
            if (bin(row & c).count("1") % 2 == 0) != plus:
                c ^= row & -row
            return f"h{c}"
        # direct report w.p. (ratio - 1) / (ratio + 1)
        if draw(self._rn + self._rd) < self._rn - self._rd:
            return self._direct[x]
        return f"h{draw(S)}"
