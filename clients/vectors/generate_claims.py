"""Write ``claims.json``: mechanism files and the verdict ``mechopt verify`` gives each.

Run from the repository root: ``python clients/vectors/generate_claims.py``. The files are
re-hashed (their digest is right), so the verdict is about the claims alone:

* ``accept`` — ``mechopt verify`` exits 0;
* ``verification`` — exit 1 (a claim fails exactly);
* ``input`` — exit 2 (a claim is malformed), with the ``field`` named (its first part,
  ``privacy[i]``, is what clients must name too).

Every notion of ``docs/formats.md`` appears with random channels and claims set at the
channel's achieved budget and moved by 1e-9, 1e-12, 1e-15 relative and by one or two
floats either way (the tightest claims a JSON number can state), constructed boundary
channels (a ratio e^eps (1 +- 1e-15)), and malformed claims (string numbers, "Infinity",
out-of-range values, unknown labels, wrong sizes...). The JavaScript client's test
(``clients/js/test/claims.test.js``) loads each text and must reach the same verdict.
The verdicts are ``mechopt verify``'s, computed here by its command-line entry point.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import random
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from mechopt._canonical import canonical_digest  # noqa: E402
from mechopt.cli import main as cli_main  # noqa: E402

SEED = 20261126


def _doc(inputs, outputs, matrix, privacy):
    doc = {"format": "mechopt-mechanism", "version": 2, "inputs": inputs, "outputs": outputs, "matrix": matrix,
           "privacy": privacy, "objective": {"kind": "none", "value": None, "bound": None},
           "certificate": {"verified": False, "method": "none", "checks": []}}
    try:
        doc["sha256"] = canonical_digest(doc)
    except ValueError:
        doc["sha256"] = "0" * 64
    return doc


def verdict(text: str, tmp: Path) -> tuple[str, str]:
    """``mechopt verify``'s verdict on a file's text: (accept|verification|input, field)."""
    path = tmp / "m.json"
    path.write_text(text)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli_main(["verify", str(path)])
    if code == 0:
        return "accept", ""
    if code == 1:
        return "verification", ""
    msg = err.getvalue().strip().splitlines()[-1]
    m = re.match(rf"mechopt: {re.escape(str(path))}: ([^:]+):", msg)
    return "input", (m.group(1) if m else "")


def _row(rng: random.Random, m: int, zeros: float = 0.0) -> list[float]:
    w = [0.0 if rng.random() < zeros else rng.uniform(0.05, 1.0) for _ in range(m)]
    if not any(w):
        w[rng.randrange(m)] = 1.0
    s = sum(w)
    row = [v / s for v in w]
    row[-1] = max(0.0, 1.0 - math.fsum(row[:-1]))
    return row


def _labels(k: int, prefix: str = "x") -> list[str]:
    return [f"{prefix}{i}" for i in range(k)]


def _steps(eps: float) -> list[float]:
    """Claims around an achieved budget: relative moves and neighbouring floats."""
    out = []
    for t in (1e-9, 1e-12, 1e-15, 0.0, -1e-15, -1e-12, -1e-9):
        out.append(eps * (1 + t))
    up = down = eps
    for _ in range(2):
        up = math.nextafter(up, math.inf)
        down = math.nextafter(down, -math.inf)
        out += [up, down]
    return [v for v in out if v >= 0]


def cases(rng: random.Random):
    """Yield (name, document) pairs."""
    import numpy as np

    from mechopt.notions import notion_from_spec

    def achieved(spec, Q, inputs):
        n = notion_from_spec(spec, inputs)
        return float(n.achieved(np.asarray(Q)))

    for trial in range(6):
        k = rng.randint(2, 5)
        m = rng.randint(2, 5)
        inputs, outputs = _labels(k), _labels(m, "y")
        Q = [_row(rng, m) for _ in range(k)]
        for notion in ("ldp", "wc_lip"):
            eps = achieved({"notion": notion, "epsilon": 1.0}, Q, inputs)
            for e in _steps(eps):
                yield f"{notion} t{trial} eps={e!r}", _doc(inputs, outputs, Q, [{"notion": notion, "epsilon": e}])
        # block: a random partition
        perm = inputs[:]
        rng.shuffle(perm)
        cut = rng.randint(1, k - 1)
        blocks = [perm[:cut], perm[cut:]]
        spec = {"notion": "block", "epsilon": 1.0, "blocks": blocks}
        eps = achieved(spec, Q, inputs)
        for e in _steps(eps):
            yield f"block t{trial} eps={e!r}", _doc(inputs, outputs, Q, [{**spec, "epsilon": e}])
        sens = rng.sample(inputs, rng.randint(1, k - 1))
        spec = {"notion": "high_low", "epsilon": 1.0, "sensitive": sens}
        eps = achieved(spec, Q, inputs)
        for e in _steps(eps):
            yield f"high_low t{trial} eps={e!r}", _doc(inputs, outputs, Q, [{**spec, "epsilon": e}])
        # E-LDP: random budgets, some "inf"; the claim scaled to the achieved factor
        E = [[0.0 if i == j else ("inf" if rng.random() < 0.15 else rng.uniform(0.2, 3.0)) for j in range(k)]
             for i in range(k)]
        s = achieved({"notion": "eldp", "matrix": E}, Q, inputs)
        for t in (1e-9, 1e-15, 0.0, -1e-15, -1e-9):
            Es = [[v if isinstance(v, str) or i == j else v * s * (1 + t) for j, v in enumerate(row)]
                  for i, row in enumerate(E)]
            yield f"eldp t{trial} scale {t}", _doc(inputs, outputs, Q, [{"notion": "eldp", "matrix": Es}])
        # metric: a path graph (labels and integer indices), and a distance matrix
        edges = [[inputs[i], i + 1 if rng.random() < 0.5 else inputs[i + 1], rng.uniform(0.5, 2.0)]
                 for i in range(k - 1)]
        spec = {"notion": "metric", "epsilon": 1.0, "edges": edges}
        eps = achieved(spec, Q, inputs)
        for e in _steps(eps)[::2]:
            yield f"metric edges t{trial} eps={e!r}", _doc(inputs, outputs, Q, [{**spec, "epsilon": e}])
        D = [[abs(i - j) * 0.7 for j in range(k)] for i in range(k)]
        spec = {"notion": "metric", "epsilon": 1.0, "distance": D}
        eps = achieved(spec, Q, inputs)
        for e in _steps(eps)[::2]:
            yield f"metric distance t{trial} eps={e!r}", _doc(inputs, outputs, Q, [{**spec, "epsilon": e}])
        # LIP (with and without delta), BP-LIP priors and box
        P = _row(rng, k)
        for delta in (0.0, 0.01):
            spec = {"notion": "lip", "epsilon": 1.0, "prior": P}
            if delta:
                spec["delta"] = delta
            eps = achieved(spec, Q, inputs)
            for e in _steps(eps)[::2]:
                yield f"lip delta={delta} t{trial} eps={e!r}", _doc(inputs, outputs, Q, [{**spec, "epsilon": e}])
        P2 = _row(rng, k)
        spec = {"notion": "bp_lip", "epsilon": 1.0, "priors": [P, P2]}
        eps = achieved(spec, Q, inputs)
        for e in _steps(eps)[::2]:
            yield f"bp_lip priors t{trial} eps={e!r}", _doc(inputs, outputs, Q, [{**spec, "epsilon": e}])
        lower = [round(p * 0.5, 6) for p in P]
        upper = [min(1.0, round(p * 1.5 + 0.01, 6)) for p in P]
        spec = {"notion": "bp_lip", "epsilon": 1.0, "lower": lower, "upper": upper}
        eps = achieved(spec, Q, inputs)
        for e in _steps(eps)[::2]:
            yield f"bp_lip box t{trial} eps={e!r}", _doc(inputs, outputs, Q, [{**spec, "epsilon": e}])
        # ULDP: a protected part and invertible columns at non-sensitive inputs
        sens = rng.sample(inputs, rng.randint(1, k - 1))
        free = [x for x in inputs if x not in sens]
        Qu = []
        for x in inputs:
            row = _row(rng, m)
            if x in free:
                keep = rng.uniform(0.3, 0.9)
                row = [v * keep for v in row] + [1.0 - keep if x == y else 0.0 for y in free]
                row[-1] = max(0.0, 1.0 - math.fsum(row[:-1])) if row[-1] else row[-1]
            else:
                row = row + [0.0] * len(free)
            Qu.append(row)
        # rows must sum to 1: renormalise exactly enough (the last non-zero entry absorbs the rest)
        for row in Qu:
            j = max(i for i, v in enumerate(row) if v > 0)
            row[j] = 0.0
            row[j] = max(0.0, 1.0 - math.fsum(row))
        outs = outputs + [f"inv_{x}" for x in free]
        spec = {"notion": "uldp", "epsilon": 1.0, "sensitive": sens}
        eps = achieved(spec, Qu, inputs)
        for e in _steps(eps)[::2]:
            yield f"uldp t{trial} eps={e!r}", _doc(inputs, outs, Qu, [{**spec, "epsilon": e}])

    # boundary channels: a ratio of e^eps (1 +- 1e-15), e^eps (1 +- 1e-17), equal entries at eps = 0
    for eps in (1.0, 0.5, 3.0, 1e-9, 20.0):
        for t in (1e-12, 1e-15, 1e-16, -1e-16, -1e-15, -1e-12):
            b = 0.2 if eps < 10 else 1e-9
            a = math.exp(eps) * b * (1 + t)
            Q = [[a, 1 - a], [b, 1 - b]] if a < 1 else [[0.5, 0.5], [0.5, 0.5]]
            if 1 - a <= 0:
                continue
            # the reverse direction must hold for the test to be about this column: claim max
            rev = math.log((1 - b) / (1 - a)) if a < 1 else 0.0
            yield f"boundary eps={eps} t={t}", _doc(["a", "b"], ["y0", "y1"], Q,
                                                    [{"notion": "ldp", "epsilon": max(eps, rev * (1 + 1e-9))}])
    yield "eps 0 equal rows", _doc(["a", "b"], ["y0", "y1"], [[0.3, 0.7], [0.3, 0.7]], [{"notion": "ldp", "epsilon": 0}])
    yield "eps 0 rows 1e-17 apart", _doc(["a", "b"], ["y0", "y1"], [[0.30000000000000004, 0.7], [0.3, 0.7]],
                                         [{"notion": "ldp", "epsilon": 0}])
    yield "subnormal entries", _doc(["a", "b"], ["y0", "y1"], [[5e-324, 1.0], [1e-323, 1.0]], [{"notion": "ldp", "epsilon": 0.7}])
    yield "subnormal entries fail", _doc(["a", "b"], ["y0", "y1"], [[5e-324, 1.0], [1.5e-323, 1.0]],
                                         [{"notion": "ldp", "epsilon": 1.0}])
    yield "huge budget", _doc(["a", "b"], ["y0", "y1"], [[1e-300, 1.0], [1.0, 1e-300]], [{"notion": "ldp", "epsilon": 1e300}])
    yield "budget 700", _doc(["a", "b"], ["y0", "y1"], [[1e-300, 1.0], [1.0, 1e-300]], [{"notion": "ldp", "epsilon": 700}])
    yield "budget 690", _doc(["a", "b"], ["y0", "y1"], [[1e-300, 1.0], [1.0, 1e-300]], [{"notion": "ldp", "epsilon": 690}])
    yield "identity claims ldp", _doc(["a", "b"], ["a", "b"], [[1.0, 0.0], [0.0, 1.0]], [{"notion": "ldp", "epsilon": 50}])
    yield "identity claims lip delta", _doc(["a", "b"], ["a", "b"], [[1.0, 0.0], [0.0, 1.0]],
                                            [{"notion": "lip", "epsilon": 1, "prior": [0.5, 0.5], "delta": 0.1}])
    yield "identity claims uldp", _doc(["a", "b"], ["a", "b"], [[1.0, 0.0], [0.0, 1.0]],
                                       [{"notion": "uldp", "epsilon": 1, "sensitive": ["a"]}])
    yield "identity uldp nothing sensitive", _doc(["a", "b"], ["a", "b"], [[1.0, 0.0], [0.0, 1.0]],
                                                  [{"notion": "uldp", "epsilon": 1, "sensitive": []}])
    yield "no claim", _doc(["a", "b"], ["a", "b"], [[0.5, 0.5], [0.5, 0.5]], [])
    yield "two claims, second fails", _doc(["a", "b"], ["a", "b"], [[0.6, 0.4], [0.4, 0.6]],
                                           [{"notion": "ldp", "epsilon": 1}, {"notion": "ldp", "epsilon": 0.4}])

    # malformed claims (the digest is right: the verdict is about the claim)
    Q = [[0.6, 0.4], [0.4, 0.6]]
    io2 = (["a", "b"], ["y0", "y1"], Q)
    bad = [
        {"notion": "ldp", "epsilon": "0.5"},
        {"notion": "ldp", "epsilon": "inf"},
        {"notion": "ldp", "epsilon": -1},
        {"notion": "ldp", "epsilon": True},
        {"notion": "ldp", "epsilon": None},
        {"notion": "ldp"},
        {"notion": "ldp", "epsilon": 1, "delta": 0.1},
        {"notion": "dp", "epsilon": 1},
        {"notion": "eldp", "matrix": [[0, "0.1"], [1, 0]]},
        {"notion": "eldp", "matrix": [[0, "Infinity"], [1, 0]]},
        {"notion": "eldp", "matrix": [[0, 1], [" inf", 0]]},
        {"notion": "eldp", "matrix": [[0, "inf"], ["inf", 0]]},
        {"notion": "eldp", "matrix": [[0, 1], [1]]},
        {"notion": "eldp", "matrix": [[0, 1, 1], [1, 0, 1], [1, 1, 0]]},
        {"notion": "eldp", "matrix": [[1, 1], [1, 0]]},
        {"notion": "eldp", "matrix": [[0, -1], [1, 0]]},
        {"notion": "eldp", "matrix": []},
        {"notion": "metric", "epsilon": 1, "distance": [[0, "1"], [1, 0]]},
        {"notion": "metric", "epsilon": 1, "distance": [[0, "inf"], ["inf", 0]]},
        {"notion": "metric", "epsilon": 1, "edges": [["a", "b", "1"]]},
        {"notion": "metric", "epsilon": 1, "edges": [["a", "b", "inf"]]},
        {"notion": "metric", "epsilon": 1, "edges": [["a", "c", 1]]},
        {"notion": "metric", "epsilon": 1, "edges": [[0, 1, 1]]},
        {"notion": "metric", "epsilon": 1, "edges": [[0, 2, 1]]},
        {"notion": "metric", "epsilon": 1, "edges": [[0.0, 1, 1]]},
        {"notion": "metric", "epsilon": 1, "edges": [["a", "b"]]},
        {"notion": "metric", "epsilon": 1, "edges": [["a"]]},
        {"notion": "metric", "epsilon": 1, "edges": []},
        {"notion": "metric", "epsilon": 1, "edges": [["a", "b", -1]]},
        {"notion": "metric", "epsilon": 1},
        {"notion": "metric", "epsilon": 1, "edges": [["a", "b", 1]], "distance": [[0, 1], [1, 0]]},
        {"notion": "metric", "epsilon": 1, "edges": None, "distance": [[0, 1], [1, 0]]},
        {"notion": "block", "epsilon": 1, "blocks": [["a"], ["b"]]},
        {"notion": "block", "epsilon": 1, "blocks": [[0], [1]]},
        {"notion": "block", "epsilon": 1, "blocks": [["a"]]},
        {"notion": "block", "epsilon": 1, "blocks": [["a", "b"], ["b"]]},
        {"notion": "block", "epsilon": 1, "blocks": [["a", "b"], []]},
        {"notion": "block", "epsilon": 1, "blocks": []},
        {"notion": "high_low", "epsilon": 1, "sensitive": ["a"]},
        {"notion": "high_low", "epsilon": 1, "sensitive": []},
        {"notion": "high_low", "epsilon": 1, "sensitive": [0]},
        {"notion": "high_low", "epsilon": 1, "sensitive": ["z"]},
        {"notion": "high_low", "epsilon": 1, "sensitive": ["a", "a"]},
        {"notion": "uldp", "epsilon": 1, "sensitive": "a"},
        {"notion": "lip", "epsilon": 1, "prior": [0.5, 0.5]},
        {"notion": "lip", "epsilon": 1, "prior": [0.5, "0.5"]},
        {"notion": "lip", "epsilon": 1, "prior": [0.5, 0.5, 0.0]},
        {"notion": "lip", "epsilon": 1, "prior": [0.6, 0.5]},
        {"notion": "lip", "epsilon": 1, "prior": [0.5, 0.5000000001]},
        {"notion": "lip", "epsilon": 1e-12, "prior": [0.5, 0.5000000001]},
        {"notion": "lip", "epsilon": 1, "prior": [-0.5, 1.5]},
        {"notion": "lip", "epsilon": 1, "prior": []},
        {"notion": "lip", "epsilon": 1, "prior": [0.5, 0.5], "delta": 1.5},
        {"notion": "lip", "epsilon": 1, "prior": [0.5, 0.5], "delta": "0.1"},
        {"notion": "lip", "epsilon": 1, "prior": [0.5, 0.5], "delta": 0.0},
        {"notion": "lip", "epsilon": 1, "prior": None},
        {"notion": "bp_lip", "epsilon": 1, "priors": [[0.5, 0.5], [0.3, 0.7]]},
        {"notion": "bp_lip", "epsilon": 1, "priors": [[0.5, 0.5], [0.3, 0.7, 0.0]]},
        {"notion": "bp_lip", "epsilon": 1, "priors": []},
        {"notion": "bp_lip", "epsilon": 1, "priors": [[0.5, 0.5]], "lower": [0, 0], "upper": [1, 1]},
        {"notion": "bp_lip", "epsilon": 1, "lower": [0.3, 0.3], "upper": [0.7, 0.7]},
        {"notion": "bp_lip", "epsilon": 1, "lower": [0.3, 0.3, 0.0], "upper": [0.7, 0.7, 0.1]},
        {"notion": "bp_lip", "epsilon": 1, "lower": [0.6, 0.6], "upper": [0.7, 0.7]},
        {"notion": "bp_lip", "epsilon": 1, "lower": [0.1, 0.1], "upper": [0.3, 0.3]},
        {"notion": "bp_lip", "epsilon": 1, "lower": [0.5, 0.1], "upper": [0.4, 0.9]},
        {"notion": "bp_lip", "epsilon": 1, "lower": [0.3, 0.3]},
        {"notion": "bp_lip", "epsilon": 1, "lower": [0.3, 0.3], "upper": [0.7, 1.2]},
        {"notion": "wc_lip", "epsilon": 1},
        {"notion": "wc_lip", "epsilon": 1, "prior": [0.5, 0.5]},
    ]
    for spec in bad:
        yield f"malformed {json.dumps(spec)}", _doc(*io2, [spec])
    yield "malformed second claim", _doc(*io2, [{"notion": "ldp", "epsilon": 0.1}, {"notion": "ldp", "epsilon": "1"}])
    big = ["a", "b"] + [f"c{i}" for i in range(20)]
    Qb = [[1.0 / 22] * 22 for _ in big]
    yield "box over 20 inputs", _doc(big, [f"y{i}" for i in range(22)], Qb,
                                     [{"notion": "bp_lip", "epsilon": 1, "lower": [0.0] * 22, "upper": [1.0] * 22}])


def exp_values(rng: random.Random) -> list[dict]:
    """e^x to 90 significant digits (:mod:`decimal`) for doubles x: tests of clients' e^x enclosures."""
    from decimal import Decimal, localcontext

    xs = [0.1, 0.5, 1.0, 2.0, 0.6931471805599453, 0.6931471805599454, 1e-10, 5e-324, 1e-300, 2.5, 10.0, 20.5,
          100.0, 699.9999999999999, 700.0, 709.78, 1000.0, 5000.5, -1.0, -3.5, -700.0, 1 / 1024, 3 / 1024,
          1 / 1024 - 2**-60]
    xs += [rng.uniform(0, 3) for _ in range(40)] + [rng.uniform(0, 700) for _ in range(20)]
    out = []
    with localcontext() as ctx:
        ctx.prec = 100
        for x in xs:
            out.append({"x": x, "exp": format(Decimal(repr(x)).exp(), ".90e")})
    return out


def main() -> None:
    rng = random.Random(SEED)
    (HERE / "exp.json").write_text(json.dumps({
        "about": "e^x to 90 significant digits for doubles x (read as their shortest decimals), computed with "
                 "Python's decimal at 100 digits. Written by clients/vectors/generate_claims.py.",
        "values": exp_values(random.Random(SEED + 1))}, indent=1) + "\n")
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, doc in cases(rng):
            text = json.dumps(doc, indent=None, allow_nan=False)
            v, field = verdict(text, tmp)
            out.append({"name": name, "verdict": v, "field": field, "text": text})
    counts = {v: sum(c["verdict"] == v for c in out) for v in ("accept", "verification", "input")}
    (HERE / "claims.json").write_text(json.dumps({
        "about": "mechanism files (re-hashed) and the verdict of `mechopt verify` on each: accept (exit 0), "
                 "verification (exit 1: a claim fails exactly), input (exit 2: a malformed claim; field named). "
                 "Written by clients/vectors/generate_claims.py.",
        "counts": counts, "cases": out}, indent=1) + "\n")
    print(f"{len(out)} cases: {counts}")


if __name__ == "__main__":
    main()
