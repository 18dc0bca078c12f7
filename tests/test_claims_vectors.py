"""``clients/vectors/claims.json`` still holds ``mechopt verify``'s verdicts (the JS client's claim tests read it).

The JavaScript client (``clients/js/test/claims.test.js``, in Node and in Chromium) must give
each of these re-hashed files the verdict recorded here; this test re-derives every verdict
with the command-line ``verify`` of the current code, so the fixture cannot drift from it.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "clients" / "vectors"


def _generator():
    spec = importlib.util.spec_from_file_location("generate_claims", VECTORS / "generate_claims.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_claims_vectors_match_mechopt_verify(tmp_path):
    gen = _generator()
    data = json.loads((VECTORS / "claims.json").read_text())
    cases = data["cases"]
    assert len(cases) >= 600
    wrong = []
    for c in cases:
        got = gen.verdict(c["text"], tmp_path)
        if got != (c["verdict"], c["field"]):
            wrong.append(f"{c['name']}: recorded {c['verdict']} {c['field']}, mechopt verify now {got}")
    assert wrong == [], "\n".join(wrong[:20]) + "\nregenerate: python clients/vectors/generate_claims.py"
    # every verdict occurs, and every notion of docs/formats.md is exercised both ways
    counts = {v: sum(c["verdict"] == v for c in cases) for v in ("accept", "verification", "input")}
    assert min(counts.values()) >= 50, counts
    for notion in ("ldp", "wc_lip", "block", "high_low", "uldp", "eldp", "metric", "lip", "bp_lip"):
        got = {c["verdict"] for c in cases if c["name"].startswith(notion + " ")}
        assert {"accept", "verification"} <= got, (notion, got)
