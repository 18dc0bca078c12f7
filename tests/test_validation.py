"""One validation module: every ε / δ / prior / channel check goes through mechopt._validation.

A grep over the package finds no other place that states those rules; the client's
standard-library copies (mechopt/client.py, mechopt/_claims.py) must agree with it.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mechopt import InputError
from mechopt._validation import (check_channel, check_delta, check_epsilon, check_finite, check_labels,
                                 check_number_or_inf, check_prior)

PACKAGE = Path(__file__).resolve().parents[1] / "mechopt"
#: the one module, and the standard-library modules a device runs, which may not import it
#: (numpy): the client, its claim checker, and the family reader (families/_spec.py)
ALLOWED = {"_validation.py", "client.py", "_client_document.py", "_claims.py", "families/_spec.py"}

#: the rules of ε, δ, priors and channels, as an error message would state them
STRAY = [
    re.compile(r"raise InputError\([^\n]*(\"|')(epsilon|delta|prior|p0)(\"|')[^\n]*must be (>= 0|> 0|finite|a number|in \[)"),
    re.compile(r"must sum to 1"),
    re.compile(r"def (_eps|_epsilon|check_epsilon|_prior|check_prior|_delta|check_delta|check_channel|_real)\("),
    re.compile(r"raise InputError\([^\n]*must be >= 0 or (inf|'inf')"),
]


def _source_lines():
    for path in sorted(PACKAGE.rglob("*.py")):
        if str(path.relative_to(PACKAGE)) in ALLOWED:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            stripped = line.strip()
            if stripped.startswith("#") or stripped.startswith(">>>"):
                continue
            yield path.relative_to(PACKAGE.parent), n, line


def test_no_stray_validators():
    hits = [f"{p}:{n}: {line.strip()}" for p, n, line in _source_lines() if any(r.search(line) for r in STRAY)]
    # a comment about the rule (not a check) is fine; checks are not
    hits = [h for h in hits if "Rows of a channel given as floats" not in h]
    assert not hits, "validation outside mechopt/_validation.py:\n" + "\n".join(hits)


@pytest.mark.parametrize("bad", [-1, float("nan"), "x", True, None])
def test_epsilon_rules(bad):
    with pytest.raises(InputError, match="epsilon"):
        check_epsilon(bad)


def test_epsilon_inf_only_when_allowed():
    assert check_epsilon("inf", allow_inf=True) == math.inf
    with pytest.raises(InputError, match="finite"):
        check_epsilon(math.inf)
    with pytest.raises(InputError, match="> 0"):
        check_epsilon(0, positive=True)
    assert check_number_or_inf("inf", "e") == math.inf


def test_delta_prior_channel_labels():
    with pytest.raises(InputError, match=r"delta: must lie in \[0, 1\]"):
        check_delta(1.5)
    with pytest.raises(InputError, match=r"prior\[1\]: must be >= 0"):
        check_prior([1.5, -0.5])
    with pytest.raises(InputError, match="must sum to 1"):
        check_prior([0.5, 0.6])
    with pytest.raises(InputError, match=r"Q\[1\]: row must sum to 1"):
        check_channel([[0.5, 0.5], [0.5, 0.6]])
    with pytest.raises(InputError, match="unique"):
        check_labels(["a", "a"], "inputs")
    assert check_labels([1, "b"], "inputs") == ("1", "b")


@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5), st.booleans(), st.text(max_size=3),
                 st.sampled_from([10**300, 10**400, -(10**400), 2**1024, int(sys.float_info.max) + 2**970 - 1])))
def test_the_client_reads_numbers_as_the_validation_module_does(v):
    """The client's own number check (stdlib only) accepts exactly the finite numbers >= 0."""
    from mechopt.client import _check_number

    try:
        ok_val = check_finite(v, "v") >= 0
    except InputError:
        ok_val = False
    try:
        _check_number(v, "v")
        ok_client = True
    except InputError:
        ok_client = False
    assert ok_client == ok_val


def test_the_client_refuses_the_rows_the_validation_module_refuses():
    from mechopt.client import _check_matrix

    for rows in ([[0.5, 0.5]], [[0.5, 0.5 + 2e-12]], [[0.5, 0.5 + 5e-13]], [[1.0, -0.0]]):
        try:
            check_channel(np.array(rows), atol=1e-12)
            ok_val = True
        except InputError:
            ok_val = False
        try:
            _check_matrix({"matrix": rows, "inputs": ["a"]}, 1, 2)
            ok_client = True
        except InputError:
            ok_client = False
        assert ok_client == ok_val, rows


@pytest.mark.parametrize("check", [check_epsilon, lambda v: check_delta(v), lambda v: check_prior([v, 0]),
                                   lambda v: check_channel([[v, 0]]), lambda v: check_finite(v, "v")])
def test_an_integer_beyond_float_range_is_an_input_error(check):
    """float(10**400) raises OverflowError; every check turns it into one line naming the field."""
    with pytest.raises(InputError, match="beyond the range of a float"):
        check(10**400)
