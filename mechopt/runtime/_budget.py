"""Privacy budget accounting for a user who sends several reports about the same data.

Each report is produced by a mechanism with its own budget ``ε_k``; what the user has
given away after ``n`` reports is bounded by a composition rule that depends on the
notion:

========================  ======================================================  ===========
notion                    bound after reports ``ε_1 … ε_n``                       source
========================  ======================================================  ===========
``ldp`` (and the E-LDP    ``Σ ε_k``; for a fixed pattern ``E = ε·D`` (block,     basic
family ``block``,         high-low, metric) the product channel satisfies        composition
``high_low``, ``metric``) ``(Σ ε_k)·D``
``uldp``                  ``Σ ε_k`` with the same sensitive set ``X_S``           001 Prop. 1
``lip`` (prior ``P``)     ``ln(P_min + exp(Σ ω_k)(1 − P_min))``,                  003 Thm 4
                          ``ω_k = min{2ε_k, ln((e^{ε_k} − 1 + P_min)/P_min)}``
``bp_lip`` (prior set)    Thm 4 with ``min P_min^bp`` outside and                 003 Cor. 4
                          ``max P_min^bp`` inside ``ω_k``
``lip_sequence``          eq. 11: Thm 4 with the joint ``P^min_{X_1^n}`` outside  003 Cor. 5
(correlated data          and each step's marginal ``P^k_min`` inside ``ω_k``
``X_1 … X_n``)
========================  ======================================================  ===========

The LIP bounds are implemented as printed in 003. A single LIP report leaks at most its
own ``ε_1`` (the definition), which is below the printed bound for ``n = 1``, so the
ledger uses ``ε_1`` for the first report and the printed bound from the second on.

**Memoization** (RAPPOR's permanent randomized response; a mechanism file marked
``"memoize": true``): the client draws one response per true value and repeats it. A
repeated report of the same datum is then a deterministic copy of the first — a function
of what was already sent — so it adds no leakage: after any number of rounds the bound
is that of one report. :meth:`PrivacyBudget.spend` records such a replay with
``memo_key`` at no cost, and :func:`memoization_savings` tabulates the bound after each
round with fresh and with memoized responses. This is about one unchanged datum (what
the ledger tracks): when the value changes, its new value gets a new permanent response,
a new report; and which rounds share a response reveals which rounds share a value
(RAPPOR adds an instantaneous randomized response on top for that; mechopt does not).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mechopt._composition import (CompositionRule, bp_lip_composition_bound, check_p_min,
                                  ldp_composition, lip_composition_bound, lip_sequence_composition_bound, prior_min)
from mechopt._errors import InputError, MechoptError
from mechopt._validation import check_epsilon
from mechopt.notions import LDP, REGISTRY, Notion

__all__ = [
    "BUDGET_NOTIONS",
    "BudgetExceededError",
    "MemoizationSavings",
    "PrivacyBudget",
    "bp_lip_composition_bound",
    "ldp_composition",
    "lip_composition_bound",
    "lip_sequence_composition_bound",
    "memoization_savings",
]

#: the budget-only rule of a correlated sequence of LIP releases (003 Cor. 5): not a notion
#: of one channel, so a ledger names it rather than a notion
LIP_SEQUENCE = CompositionRule("lip_sequence", "003 Cor. 5", "joint_p_min", "003 Cor. 5")


def _ledger_notions(*, builtin_only: bool = False) -> tuple[str, ...]:
    """The registered notions that declare a composition rule (additive ones first), then ``lip_sequence``."""
    names = [n for n, t in REGISTRY.items()
             if t.cls.composition is not None and (t.builtin or not builtin_only)]
    names.sort(key=lambda n: REGISTRY[n].cls.composition.kind != "additive")
    return (*names, LIP_SEQUENCE.kind)


#: Built-in notions a :class:`PrivacyBudget` can account for (every registered notion with a
#: ``composition`` rule, plus ``lip_sequence``).
BUDGET_NOTIONS = _ledger_notions(builtin_only=True)


def _composition_of(notion: object) -> tuple[str, CompositionRule, Notion | None]:
    """``(name, rule, instance)`` of a ledger's notion: a Notion, a Notion class or a registered name."""
    if isinstance(notion, str):
        if notion == LIP_SEQUENCE.kind:
            return notion, LIP_SEQUENCE, None
        entry = REGISTRY.get(notion)
        cls, instance = (entry.cls if entry is not None else None), None
    elif isinstance(notion, Notion):
        cls, instance = type(notion), notion
    elif isinstance(notion, type) and issubclass(notion, Notion):
        cls, instance = notion, None
    else:
        cls = instance = None
    rule = getattr(cls, "composition", None)
    if not isinstance(rule, CompositionRule):
        raise InputError("notion", f"must be one of {', '.join(_ledger_notions())} (a notion with a composition "
                                   f"rule), got {notion!r}")
    return cls.name, rule, instance


class BudgetExceededError(MechoptError):
    """A report was refused because it would take the leakage bound over the limit.

    Attributes
    ----------
    notion : str
    limit : float
    spent : float
        The bound before the refused report (unchanged by the refusal).
    requested : float
        The refused report's ε.
    would_be : float
        The bound had the report been sent.
    """

    exit_code = 1

    def __init__(self, notion: str, limit: float, spent: float, requested: float,
                 would_be: float, rule: str):
        self.notion, self.limit, self.spent = notion, limit, spent
        self.requested, self.would_be = requested, would_be
        super().__init__(
            f"budget: a report with epsilon={requested!r} would raise the {notion} leakage "
            f"bound from {spent!r} to {would_be!r}, above the limit {limit!r} ({rule}); "
            "the report was refused and nothing was recorded")


@dataclass(frozen=True)
class _Entry:
    epsilon: float
    total: float
    replay: bool = False


class PrivacyBudget:
    """A ledger of the reports one user sends about the same data, with a hard limit.

    :meth:`spend` records a report only if the composed leakage bound (see the module
    table: LDP adds; ULDP adds, 001 Prop. 1; LIP 003 Thm 4; BP-LIP 003 Cor. 4; correlated
    sequences 003 Cor. 5) stays at or below ``limit``; otherwise it raises
    :class:`BudgetExceededError` and records nothing.

    Parameters
    ----------
    limit : float
        The largest total leakage (natural log) the user accepts; ``inf`` for no limit.
    notion : Notion, Notion class or str
        The notion every report satisfies: its class's ``composition`` rule decides the
        bound. A registered name (``ldp``, ``block``, ``high_low``, ``metric``, ``uldp``,
        ``lip``, ``bp_lip``) is resolved through the registry; ``lip_sequence`` names the
        rule of a correlated sequence (003 Cor. 5). A notion *instance* also gives the
        rule's parameter when it holds it (a LIP notion its ``prior``).
    prior : sequence of float, keyword-only
        ``lip``: the prior every report's mechanism was designed for.
    priors : sequence of sequences, keyword-only
        ``bp_lip``: the prior set.
    joint_p_min : float, keyword-only
        ``lip_sequence``: smallest probability of the joint distribution of the whole
        planned sequence (for a prefix the true value is larger, so the bound stays
        valid and conservative).
    sensitive : iterable of str, keyword-only
        ``uldp``: the sensitive set ``X_S`` every report must protect.

    Raises
    ------
    InputError
        When the notion is unknown, the limit negative, or a parameter the notion needs
        is missing or malformed.

    Examples
    --------
    >>> budget = PrivacyBudget(1.0, "ldp")
    >>> budget.spend(0.5)
    0.5
    >>> budget.spend(0.5)
    1.0
    >>> try:
    ...     budget.spend(0.1)
    ... except BudgetExceededError as err:
    ...     print(err.would_be, budget.spent)
    1.1 1.0
    """

    def __init__(self, limit: float, notion: Notion | type | str, *, prior: Sequence[float] | None = None,
                 priors: Sequence[Sequence[float]] | None = None,
                 joint_p_min: float | None = None,
                 sensitive: Iterable[str] | None = None):
        self.limit = check_epsilon(limit, "limit", allow_inf=True)
        self.notion, self.rule, instance = _composition_of(notion)
        self._entries: list[_Entry] = []
        self._memo: dict[str, float] = {}
        self._marginal_mins: list[float] = []
        self.p_min: float | None = None
        self.priors: list[list[float]] | None = None
        self.joint_p_min: float | None = None
        self.sensitive: frozenset[str] | None = None
        field = self.rule.parameter
        if field is None:
            return
        value = {"prior": prior, "priors": priors, "joint_p_min": joint_p_min, "sensitive": sensitive}[field]
        if value is None and instance is not None:
            value = getattr(instance, field, None)
        if value is None or (field == "priors" and not len(value)):
            verb = "are" if field == "priors" else "is"
            raise InputError(field, f"{verb} required for notion {self.notion!r} ({self.rule.why})")
        if field == "prior":
            self.p_min = prior_min(value, "prior")
        elif field == "priors":
            for i, p in enumerate(value):
                prior_min(p, f"priors[{i}]")
            self.priors = [[float(v) for v in p] for p in value]
        elif field == "joint_p_min":
            self.joint_p_min = check_p_min(value, "joint_p_min")
        else:
            self.sensitive = self._label_set(value, "sensitive")

    @staticmethod
    def _label_set(labels: Iterable[str], field: str) -> frozenset[str]:
        if isinstance(labels, str):
            raise InputError(field, f"must be a list of labels, got the string {labels!r}")
        out = list(labels)
        bad = [v for v in out if not isinstance(v, str)]
        if bad:
            raise InputError(field, f"labels must be strings, got {bad[0]!r}")
        return frozenset(out)

    @property
    def spent(self) -> float:
        """The current leakage bound (0 before any report)."""
        return self._entries[-1].total if self._entries else 0.0

    @property
    def reports(self) -> int:
        """Number of reports recorded."""
        return len(self._entries)

    @property
    def history(self) -> list[tuple[float, float]]:
        """``(ε of the report, bound after it)`` for each recorded report (replays included)."""
        return [(e.epsilon, e.total) for e in self._entries]

    @property
    def replays(self) -> int:
        """Number of recorded reports that replayed a memoized response (free)."""
        return sum(e.replay for e in self._entries)

    def would_spend(self, report_epsilon: float, *, prior: Sequence[float] | None = None,
                    sensitive: Iterable[str] | None = None, memo_key: str | None = None) -> float:
        """The leakage bound if a report with ``report_epsilon`` were sent; records nothing.

        Parameters
        ----------
        report_epsilon : float
            Budget of the report's mechanism under this ledger's notion.
        prior : sequence of float, keyword-only
            ``lip_sequence``: the marginal prior of the datum this report releases.
        sensitive : iterable of str, keyword-only
            ``uldp``: the report mechanism's sensitive set; it must contain the ledger's.
        memo_key : str, keyword-only
            The report is a memoized response (e.g. ``"<mechanism sha256>:<value>"``): the
            first report under a key costs as a fresh one, a replay of a recorded key
            costs nothing (see the module docstring).

        Returns
        -------
        float

        Raises
        ------
        InputError
            When ``report_epsilon`` is negative or NaN, or the notion's parameter for the
            report is missing or incompatible.

        Examples
        --------
        >>> PrivacyBudget(2.0, "ldp").would_spend(0.75)
        0.75
        """
        eps = check_epsilon(report_epsilon, "report_epsilon", allow_inf=True)
        if memo_key is not None and memo_key in self._memo:
            if self._memo[memo_key] != eps:
                raise InputError("memo_key", f"{memo_key!r} was first reported with epsilon "
                                             f"{self._memo[memo_key]!r}, not {eps!r}: a replay repeats the "
                                             "same mechanism's response")
            return self.spent
        history = [e.epsilon for e in self._entries if not e.replay] + [eps]
        kind = self.rule.kind
        if kind == "additive":
            if self.sensitive is not None:
                if sensitive is None:
                    raise InputError("sensitive", "is required for a ULDP report: the "
                                                  "report mechanism's sensitive set X_S")
                missing = sorted(self.sensitive - self._label_set(sensitive, "sensitive"))
                if missing:
                    raise InputError("sensitive", f"the report's mechanism does not protect "
                                                  f"{missing!r}, which this budget treats "
                                                  "as sensitive; 001 Prop. 1 composes only "
                                                  "mechanisms with a common X_S")
            return ldp_composition(history)
        if len(history) == 1:
            return eps  # one LIP report leaks at most its own ε (definition)
        if kind == "lip_prior":
            return lip_composition_bound(history, float(self.p_min or 0.0))
        if kind == "lip_prior_set":
            return bp_lip_composition_bound(history, self.priors or [])
        if prior is None:
            raise InputError("prior", "is required for a 'lip_sequence' report: the "
                                      "marginal prior of the datum it releases (003 Cor. 5)")
        mins = [*self._marginal_mins, prior_min(prior, "prior")]
        return lip_sequence_composition_bound(history, mins, float(self.joint_p_min or 0.0))

    def spend(self, report_epsilon: float, *, prior: Sequence[float] | None = None,
              sensitive: Iterable[str] | None = None, memo_key: str | None = None) -> float:
        """Record a report if the composed bound stays within the limit.

        Parameters
        ----------
        report_epsilon, prior, sensitive, memo_key
            As :meth:`would_spend`: a memoized response's key makes its replays cost nothing.

        Returns
        -------
        float
            The new leakage bound.

        Raises
        ------
        BudgetExceededError
            When the bound after this report would exceed ``limit``; nothing is recorded.
        InputError
            As :meth:`would_spend`.

        Examples
        --------
        >>> budget = PrivacyBudget(4.0, "lip", prior=[0.25, 0.25, 0.5])
        >>> budget.spend(1.0)            # one report: its own epsilon
        1.0
        >>> round(budget.spend(1.0), 4)  # two reports: 003 Thm 4
        3.7184
        >>> memo = PrivacyBudget(1.0, "ldp")
        >>> [memo.spend(0.5, memo_key="m:yes") for _ in range(5)]   # replays cost nothing
        [0.5, 0.5, 0.5, 0.5, 0.5]
        """
        replay = memo_key is not None and memo_key in self._memo
        total = self.would_spend(report_epsilon, prior=prior, sensitive=sensitive, memo_key=memo_key)
        if total > self.limit:
            raise BudgetExceededError(self.notion, self.limit, self.spent,
                                      float(report_epsilon), total, self.rule.source)
        if self.rule is LIP_SEQUENCE and not replay:
            self._marginal_mins.append(prior_min(prior or [], "prior"))
        if memo_key is not None and not replay:
            self._memo[memo_key] = check_epsilon(report_epsilon, "report_epsilon", allow_inf=True)
        self._entries.append(_Entry(float(report_epsilon), total, replay))
        return total

    def __repr__(self) -> str:
        return (f"PrivacyBudget(limit={self.limit!r}, notion={self.notion!r}, "
                f"spent={self.spent!r}, reports={self.reports})")


@dataclass(frozen=True)
class MemoizationSavings:
    """The leakage bound after each round, fresh responses against memoized ones (:func:`memoization_savings`).

    Attributes
    ----------
    notion : str
        The notion whose composition rule gives the bounds.
    epsilon : float
        Budget of one report.
    fresh : list of float
        Bound after rounds 1, 2, … when every round draws a fresh response.
    memoized : list of float
        The same with one permanent response repeated (the value unchanged).
    """

    notion: str
    epsilon: float
    fresh: list[float]
    memoized: list[float]

    @property
    def rounds(self) -> int:
        return len(self.fresh)

    def table(self) -> str:
        """A Markdown table: round, fresh bound, memoized bound, saving."""
        lines = ["| rounds | fresh responses | memoized | saved |", "|---:|---:|---:|---:|"]
        for r, (f, m) in enumerate(zip(self.fresh, self.memoized), start=1):
            lines.append(f"| {r} | {f:.4g} | {m:.4g} | {f - m:.4g} |")
        return "\n".join(lines)


#: the most rounds :func:`memoization_savings` tabulates (it returns one bound per round)
MAX_ROUNDS = 1_000_000


def memoization_savings(epsilon: float, rounds: int, notion: Notion | type | str = LDP, **params) -> MemoizationSavings:
    """What memoization saves: the bound after each of ``rounds`` reports of an unchanged value.

    Two ledgers (:class:`PrivacyBudget` without a limit) receive the same ``rounds``
    reports of budget ``epsilon``: fresh responses compose (LDP: ``r·ε``; LIP: 003
    Thm 4, …); memoized ones replay the first response, so the bound stays at one
    report's. The value is assumed unchanged across rounds (see the module docstring).

    Parameters
    ----------
    epsilon : float
        Budget of each report's mechanism under ``notion``.
    rounds : int
        Number of collection rounds, ``>= 1``.
    notion : Notion, Notion class or str
        A ledger notion, as for :class:`PrivacyBudget` (default ε-LDP).
    **params
        The notion's parameters, as for :class:`PrivacyBudget` (``prior=`` for ``lip``,
        ``priors=`` for ``bp_lip``, ``sensitive=`` for ``uldp`` — then also used for each
        report — and ``joint_p_min=`` / ``prior=`` for ``lip_sequence``).

    Returns
    -------
    MemoizationSavings

    Raises
    ------
    InputError
        When ``rounds < 1`` or above :data:`MAX_ROUNDS`, or a parameter is invalid.

    Examples
    --------
    >>> s = memoization_savings(0.5, 4)
    >>> s.fresh, s.memoized
    ([0.5, 1.0, 1.5, 2.0], [0.5, 0.5, 0.5, 0.5])
    >>> lip = memoization_savings(1.0, 3, "lip", prior=[0.25, 0.25, 0.5])
    >>> [round(v, 4) for v in lip.fresh], lip.memoized
    ([1.0, 3.7184, 5.7131], [1.0, 1.0, 1.0])
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise InputError("rounds", f"must be an integer >= 1, got {rounds!r}")
    if rounds > MAX_ROUNDS:
        # one bound per round is returned: 10**400 rounds would never finish
        raise InputError("rounds", f"must be at most {MAX_ROUNDS:,} (one bound is returned per round), "
                                   f"got {rounds!r}")
    name, rule, _ = _composition_of(notion)
    report = {}
    if rule.parameter == "sensitive":
        report["sensitive"] = params.get("sensitive")
    if rule is LIP_SEQUENCE:
        report["prior"] = params.pop("prior", None)
    fresh = PrivacyBudget(math.inf, notion, **params)
    memo = PrivacyBudget(math.inf, notion, **params)
    out_fresh, out_memo = [], []
    for _ in range(rounds):
        out_fresh.append(fresh.spend(epsilon, **report))
        out_memo.append(memo.spend(epsilon, memo_key="value", **report))
    return MemoizationSavings(name, float(epsilon), out_fresh, out_memo)
