"""Personalized ULDP mechanism (PUM) of Murakami & Kawamoto (001 §5).

Some inputs are sensitive for everybody (``X_S``, e.g. hospitals); others only for one
user (``X_S^(i) ⊆ X_N``, e.g. her home). Publishing a per-user channel would reveal what
is sensitive for her. The PUM keeps that secret:

1. a **pre-processor** ``f_pre^(i)`` private to user ``i`` maps each of her sensitive
   inputs that carries semantic tag ``κ`` ("home", "work", …) to a *bot* ``⊥_κ`` and every
   other input to itself (001 eq. 20), giving intermediate data in
   ``Z = X ∪ {⊥_1 … ⊥_K}``;
2. a **common mechanism** ``Q_cmn``, the same for all users and public, that is
   ``(Z_S, Y_P, ε)``-ULDP for ``Z_S = X_S ∪ {⊥_1 … ⊥_K}`` — by default the
   utility-optimized RR of 001 Def. 4 over ``Z``.

The user's overall channel ``Q^(i) = Q_cmn ∘ f_pre^(i)`` is
``(X_S ∪ X_S^(i), Y_P, ε)``-ULDP (001 Prop. 11). The server estimates the distribution
``r`` of intermediate data from the reports with ``Q_cmn``, then the input distribution
by 001 eq. 22: ``p̂(x) = r̂(x) + Σ_κ r̂(⊥_κ) π̂_κ(x)``, with ``π̂_κ`` background knowledge
of the inputs behind bot ``κ`` (001 eq. 21).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from mechopt._validation import check_epsilon, check_k, check_prior
from mechopt._errors import InputError
from mechopt.closed_forms._utility_optimized import urr_channel
from mechopt.runtime._estimators import estimate_em, estimate_inversion, estimate_projected
from mechopt.runtime._sampling import as_channel

__all__ = ["BOT_PREFIX", "PersonalizedULDP", "utility_optimized_rr"]

#: Intermediate label of the bot of tag ``t`` is ``BOT_PREFIX + t``.
BOT_PREFIX = "bot:"

_ESTIMATORS = {"em": estimate_em, "inversion": estimate_inversion,
               "projected": estimate_projected}


def utility_optimized_rr(k: int, sensitive: Iterable[int], epsilon: float) -> np.ndarray:
    """The ``(X_S, ε)``-utility-optimized randomized response (001 Def. 4), ``Y = X``.

    With ``c1 = e^ε / (|X_S| + e^ε − 1)``, ``c2 = 1 / (|X_S| + e^ε − 1)`` and
    ``c3 = 1 − |X_S| c2``:

    * a sensitive input ``x ∈ X_S`` reports itself with ``c1`` and each other sensitive
      value with ``c2`` (never a non-sensitive one) — 001 eq. 6;
    * a non-sensitive input reports each sensitive value with ``c2`` and itself with
      ``c3`` — 001 eq. 7.

    It is ``(X_S, X_S, ε)``-ULDP (001 Prop. 4). The matrix is
    :func:`mechopt.closed_forms.urr_channel`'s; this entry point asks for a non-empty
    ``X_S`` and ``ε > 0`` (a PUM protects its bots).

    Parameters
    ----------
    k : int
        Number of inputs.
    sensitive : iterable of int
        Indices of ``X_S``; non-empty.
    epsilon : float
        ``ε > 0``, finite.

    Returns
    -------
    numpy.ndarray, shape (k, k)

    Raises
    ------
    InputError
        When ``k < 1``, ``ε`` is not a positive finite number, or ``sensitive`` is empty
        or has an index outside ``0 … k-1``.

    Examples
    --------
    >>> Q = utility_optimized_rr(3, [0], 1.0)     # one sensitive value: it is kept
    >>> Q.round(4).tolist()
    [[1.0, 0.0, 0.0], [0.3679, 0.6321, 0.0], [0.3679, 0.0, 0.6321]]
    """
    k = check_k(k, "k")
    epsilon = check_epsilon(epsilon, "epsilon", positive=True)
    s = sorted(set(int(i) for i in sensitive))
    if not s:
        raise InputError("sensitive", "must contain at least one input index, got none")
    if s[0] < 0 or s[-1] >= k:
        raise InputError("sensitive", f"indices must lie in 0..{k - 1}, got {s!r}")
    return urr_channel(k, s, epsilon)


@dataclass(frozen=True)
class PersonalizedULDP:
    """A PUM: the public common mechanism and the bookkeeping around it (001 §5).

    Build one with :meth:`with_urr` (common mechanism = utility-optimized RR over ``Z``)
    or directly with any ``(Z_S, Y_P, ε)``-ULDP common channel (e.g. the optimum mechopt
    solves for ``Z``); the channel is not re-verified here.

    Parameters
    ----------
    inputs : tuple of str
        ``X``.
    sensitive : tuple of str
        ``X_S``, sensitive for every user.
    tags : tuple of str
        The semantic tags; tag ``t`` has bot ``BOT_PREFIX + t`` in ``Z``.
    common : numpy.ndarray, shape (k + K, m)
        ``Q_cmn``, rows ordered as :attr:`intermediates`.
    outputs : tuple of str
        Labels of the columns of ``common``.

    Examples
    --------
    >>> pum = PersonalizedULDP.with_urr(["h", "a", "b", "c"], sensitive=["h"],
    ...                                 tags=["home"], epsilon=1.0)
    >>> pum.intermediates
    ('h', 'a', 'b', 'c', 'bot:home')
    >>> pum.preprocessor({"b": "home"})["b"]
    'bot:home'
    """

    inputs: tuple[str, ...]
    sensitive: tuple[str, ...]
    tags: tuple[str, ...]
    common: np.ndarray
    outputs: tuple[str, ...]

    def __post_init__(self) -> None:
        inputs = tuple(self.inputs)
        if len(set(inputs)) != len(inputs) or not all(isinstance(v, str) for v in inputs):
            raise InputError("inputs", f"must be unique strings, got {self.inputs!r}")
        unknown = [v for v in self.sensitive if v not in inputs]
        if unknown:
            raise InputError("sensitive", f"{unknown[0]!r} is not an input")
        tags = tuple(self.tags)
        if not tags or len(set(tags)) != len(tags):
            raise InputError("tags", f"must be a non-empty list of unique tags, got "
                                     f"{self.tags!r}")
        clash = [t for t in tags if BOT_PREFIX + t in inputs]
        if clash:
            raise InputError("tags", f"bot label {BOT_PREFIX + clash[0]!r} is already an "
                                     "input label; rename the tag")
        common = as_channel(self.common, field="common")
        if common.shape != (len(inputs) + len(tags), len(self.outputs)):
            raise InputError("common", f"must have shape {(len(inputs) + len(tags), len(self.outputs))!r} "
                                       f"(rows = inputs then bots, columns = outputs), got "
                                       f"{common.shape!r}")
        object.__setattr__(self, "inputs", inputs)
        object.__setattr__(self, "sensitive", tuple(self.sensitive))
        object.__setattr__(self, "tags", tags)
        object.__setattr__(self, "outputs", tuple(self.outputs))
        object.__setattr__(self, "common", common)

    @classmethod
    def with_urr(cls, inputs: Sequence[str], *, sensitive: Iterable[str],
                 tags: Sequence[str], epsilon: float) -> PersonalizedULDP:
        """PUM whose common mechanism is the ``(Z_S, ε)``-utility-optimized RR (001 §5.1).

        Parameters
        ----------
        inputs : sequence of str
            ``X``.
        sensitive : iterable of str, keyword-only
            ``X_S`` (may be empty: then only the bots are protected).
        tags : sequence of str, keyword-only
            Semantic tags, one bot each.
        epsilon : float, keyword-only
            ``ε > 0``.

        Returns
        -------
        PersonalizedULDP
            Outputs ``Y = Z``.

        Examples
        --------
        >>> pum = PersonalizedULDP.with_urr(["a", "b"], sensitive=[], tags=["home"],
        ...                                 epsilon=2.0)
        >>> pum.common.shape
        (3, 3)
        """
        inputs = tuple(inputs)
        sensitive = tuple(sensitive)
        z = inputs + tuple(BOT_PREFIX + t for t in tags)
        index = {v: i for i, v in enumerate(inputs)}
        unknown = [v for v in sensitive if v not in index]
        if unknown:
            raise InputError("sensitive", f"{unknown[0]!r} is not an input")
        zs = [index[v] for v in sensitive] + list(range(len(inputs), len(z)))
        common = utility_optimized_rr(len(z), zs, epsilon)
        return cls(inputs=inputs, sensitive=sensitive, tags=tuple(tags), common=common,
                   outputs=z)

    @property
    def intermediates(self) -> tuple[str, ...]:
        """``Z = X ∪ {⊥_1 … ⊥_K}``: the inputs, then one bot per tag."""
        return self.inputs + tuple(BOT_PREFIX + t for t in self.tags)

    def preprocessor(self, user_sensitive: Mapping[str, str]) -> dict[str, str]:
        """The user's private pre-processor ``f_pre^(i)`` (001 eq. 20), as a label map.

        Parameters
        ----------
        user_sensitive : mapping str → str
            ``X_S^(i)``: each of the user's own sensitive inputs with its tag. They must
            be non-sensitive for everybody (``X_S^(i) ⊆ X_N``).

        Returns
        -------
        dict
            Input label → intermediate label (its tag's bot, or itself).

        Raises
        ------
        InputError
            When a key is not an input, is in ``X_S``, or its tag is unknown.

        Examples
        --------
        >>> pum = PersonalizedULDP.with_urr(["a", "b"], sensitive=[], tags=["home"],
        ...                                 epsilon=1.0)
        >>> pum.preprocessor({"a": "home"})
        {'a': 'bot:home', 'b': 'b'}
        """
        mapping = {x: x for x in self.inputs}
        common = set(self.sensitive)
        for x, tag in user_sensitive.items():
            if x not in mapping:
                raise InputError("user_sensitive", f"{x!r} is not an input")
            if x in common:
                raise InputError("user_sensitive", f"{x!r} is already sensitive for every "
                                                   "user (X_S); X_S^(i) must lie in X_N")
            if tag not in self.tags:
                raise InputError(f"user_sensitive[{x!r}]", f"tag {tag!r} is not one of "
                                                           f"{list(self.tags)!r}")
            mapping[x] = BOT_PREFIX + tag
        return mapping

    def user_channel(self, user_sensitive: Mapping[str, str]) -> np.ndarray:
        """The user's whole channel ``Q^(i) = Q_cmn ∘ f_pre^(i)`` (k × m), 001 §5.1.

        It is ``(X_S ∪ X_S^(i), Y_P, ε)``-ULDP (001 Prop. 11). Kept on the device only:
        publishing it would reveal ``X_S^(i)``.

        Parameters
        ----------
        user_sensitive : mapping str → str
            As :meth:`preprocessor`.

        Returns
        -------
        numpy.ndarray, shape (k, m)

        Examples
        --------
        >>> pum = PersonalizedULDP.with_urr(["a", "b"], sensitive=[], tags=["home"],
        ...                                 epsilon=1.0)
        >>> bool((pum.user_channel({"a": "home"})[0] == pum.common[2]).all())
        True
        """
        z_index = {z: i for i, z in enumerate(self.intermediates)}
        f = self.preprocessor(user_sensitive)
        return self.common[[z_index[f[x]] for x in self.inputs]]

    def distribution_from_intermediate(
            self, r_hat: ArrayLike, *,
            tag_distributions: Mapping[str, ArrayLike] | None = None) -> np.ndarray:
        """Input distribution from an estimate of the intermediate one (001 eq. 22).

        ``p̂(x) = r̂(x) + Σ_κ r̂(⊥_κ) π̂_κ(x)`` for ``x ∈ X``. For a tag without background
        knowledge, ``π̂_κ(x) = r̂(x) / Σ_{x' ∈ X_N} r̂(x')`` on ``X_N`` and 0 on ``X_S``
        (001 §5.3, last paragraph). If ``r̂`` and every ``π̂_κ`` are in the simplex, so is
        ``p̂``.

        Parameters
        ----------
        r_hat : array_like, shape (k + K,)
            Estimate of the distribution of intermediate data, ordered as
            :attr:`intermediates`.
        tag_distributions : mapping tag → array_like of shape (k,), keyword-only
            ``π̂_κ``: distribution of the inputs that users map to bot ``κ`` (e.g. of
            homes), zero on ``X_S``.

        Returns
        -------
        numpy.ndarray, shape (k,)

        Raises
        ------
        InputError
            When a tag is unknown, or a ``π̂_κ`` is not a distribution over ``X_N``.

        Examples
        --------
        >>> pum = PersonalizedULDP.with_urr(["a", "b"], sensitive=[], tags=["home"],
        ...                                 epsilon=1.0)
        >>> pum.distribution_from_intermediate([0.3, 0.3, 0.4],
        ...     tag_distributions={"home": [0.25, 0.75]}).round(12).tolist()
        [0.4, 0.6]
        """
        k, K = len(self.inputs), len(self.tags)
        r = np.asarray(r_hat, dtype=float)
        if r.shape != (k + K,) or not np.all(np.isfinite(r)):
            raise InputError("r_hat", f"must be {k + K} finite numbers (inputs, then bots), "
                                      f"got shape {r.shape!r}")
        known = dict(tag_distributions or {})
        unknown = [t for t in known if t not in self.tags]
        if unknown:
            raise InputError("tag_distributions", f"tag {unknown[0]!r} is not one of "
                                                  f"{list(self.tags)!r}")
        nonsensitive = np.array([x not in set(self.sensitive) for x in self.inputs])
        fallback = np.where(nonsensitive, r[:k], 0.0)
        if fallback.sum() > 0:
            fallback = fallback / fallback.sum()
        else:  # nothing non-sensitive estimated positive: spread uniformly over X_N
            fallback = nonsensitive / max(int(nonsensitive.sum()), 1)
        p = r[:k].copy()
        for j, tag in enumerate(self.tags):
            if tag in known:
                field = f"tag_distributions[{tag!r}]"
                pi = check_prior(known[tag], field, k=k)
                if np.any(pi[~nonsensitive] > 0):
                    raise InputError(field, "puts mass on an input of X_S; user-specific "
                                            "sensitive inputs lie in X_N")
            else:
                pi = fallback
            p += r[k + j] * pi
        return p

    def estimate(self, counts: ArrayLike, *, method: str = "em",
                 tag_distributions: Mapping[str, ArrayLike] | None = None) -> np.ndarray:
        """Estimate the input distribution from report counts (001 §5.3).

        First ``r̂`` from the counts with the common mechanism (``method`` as in
        :func:`mechopt.runtime.estimate_em` and friends), then 001 eq. 22
        (:meth:`distribution_from_intermediate`).

        Parameters
        ----------
        counts : array_like, shape (m,)
            Number of reports of each output.
        method : {"em", "inversion", "projected"}, keyword-only
        tag_distributions : mapping, keyword-only
            Background knowledge ``π̂_κ`` per tag.

        Returns
        -------
        numpy.ndarray, shape (k,)
            The estimated input distribution, ordered as :attr:`inputs`.

        Raises
        ------
        InputError
            When ``method`` is unknown, ``counts`` is malformed, or as
            :meth:`distribution_from_intermediate`.

        Examples
        --------
        >>> pum = PersonalizedULDP.with_urr(["a", "b"], sensitive=[], tags=["home"],
        ...                                 epsilon=50.0)   # almost no noise
        >>> pum.estimate([30, 50, 20], tag_distributions={"home": [1.0, 0.0]}).round(3).tolist()
        [0.5, 0.5]
        """
        if method not in _ESTIMATORS:
            raise InputError("method", f"must be one of {', '.join(_ESTIMATORS)}, got "
                                       f"{method!r}")
        r = _ESTIMATORS[method](self.common, counts)
        return self.distribution_from_intermediate(r, tag_distributions=tag_distributions)
