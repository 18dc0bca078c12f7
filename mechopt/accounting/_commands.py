"""``mechopt account MECH.json --n N``: ε0, the shuffled ε at n, and the ε of T collections."""

from __future__ import annotations

import json
import math

from .._errors import InputError


def account(mechanism, n: int, delta: float = 1e-6, compose: int = 1) -> dict:
    """The numbers ``mechopt account`` prints, for a loaded mechanism.

    Examples
    --------
    >>> from mechopt import Mechanism
    >>> m = Mechanism.from_channel([[0.75, 0.25], [0.25, 0.75]], [{"notion": "ldp", "epsilon": 1.1}])
    >>> out = account(m, 10_000, 1e-6, compose=4)
    >>> round(out["epsilon0"], 6), out["shuffle"]["epsilon"] < out["shuffle"]["closed_form"] < out["epsilon0"]
    (1.098612, True)
    """
    from ._pld import compose_epsilon, worst_pair
    from ._shuffle import local_epsilon, shuffle_epsilon, shuffle_epsilon_closed_form

    Q = mechanism.matrix
    eps0 = local_epsilon(Q)
    memo = bool(getattr(mechanism, "memoize", False))
    out = {"inputs": len(mechanism.inputs), "epsilon0": eps0, "n": n, "delta": delta,
           "shuffle": {"epsilon": shuffle_epsilon(Q, n, delta),
                       "closed_form": shuffle_epsilon_closed_form(eps0, n, delta)},
           "compose": {"T": compose, "memoized": memo, "epsilon_pure": compose_epsilon(Q, compose, 0.0, memo),
                       "epsilon": compose_epsilon(Q, compose, delta, memo)}}
    if Q.shape[0] > 1:
        a, b = worst_pair(Q)
        out["worst_pair"] = [mechanism.inputs[a], mechanism.inputs[b]]
    return out


def _jsonable(value):
    if isinstance(value, float) and not math.isfinite(value):
        return "inf"
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def _cmd_account(args) -> int:
    from .._mechanism import load_verified
    from .._validation import check_delta, check_k

    n = check_k(args.n, "--n", minimum=1)
    delta = check_delta(args.delta, "--delta", low_open=True, high_open=True)
    T = check_k(args.compose, "--compose", minimum=1)
    _, mech = load_verified(args.mechanism)
    if getattr(mech, "family_spec", None) is not None:
        raise InputError("mechanism", "is a structured family: 'account' reads a mechanism with a listed matrix")
    out = account(mech, n, delta, T)
    if args.json:
        print(json.dumps(_jsonable(out), indent=1))
        return 0
    pair = f" (worst pair {out['worst_pair'][0]!r}, {out['worst_pair'][1]!r})" if "worst_pair" in out else ""
    sh, co = out["shuffle"], out["compose"]
    print(f"local: epsilon0 = {out['epsilon0']:.6g}{pair}")
    print(f"shuffled among n = {n}: epsilon = {sh['epsilon']:.6g} at delta = {delta:g} "
          f"(closed form, FMT'21 Thm 3.1: {sh['closed_form']:.6g})")
    memo = "; memoized: the reports repeat, one report's cost" if co["memoized"] else ""
    print(f"{T} collection(s) composed (privacy-loss distribution): epsilon = {co['epsilon_pure']:.6g} at delta = 0, "
          f"{co['epsilon']:.6g} at delta = {delta:g}{memo}")
    return 0


def add_parser(sub, docs: str) -> None:
    """Register ``mechopt account`` on the CLI's sub-parsers."""
    a = sub.add_parser("account", help="central epsilon after shuffling n reports, and of T collections "
                       "(docs/accounting.md)", epilog=docs)
    a.add_argument("mechanism", help="mechanism file (JSON, with a matrix)")
    a.add_argument("--n", type=int, required=True, help="number of users whose reports are shuffled together")
    a.add_argument("--delta", type=float, default=1e-6, help="the central delta (default 1e-6)")
    a.add_argument("--compose", type=int, default=1, metavar="T",
                   help="number of collections from each user to compose (default 1)")
    a.add_argument("--json", action="store_true", help="print the numbers as JSON")
    a.set_defaults(func=_cmd_account)
