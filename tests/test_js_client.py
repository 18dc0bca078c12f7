"""Python writes, JavaScript reads: the JS client (clients/js) on files mechopt just wrote.

Needs ``node`` (>= 18); skipped without it. The full JS suite (the shared vectors in Node
and in headless Chromium) runs in CI (``.ci/run``): ``npm test`` and
``npm run test:browser`` in ``clients/js``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import mechopt
from mechopt.client import Sampler, load_document

ROOT = Path(__file__).resolve().parents[1]
INDEX = (ROOT / "clients" / "js" / "src" / "index.js").as_uri()
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

SCRIPT = """
import { readFileSync } from "node:fs";
import { loadMechanism, wordStream } from "%s";
const [path, mode, arg] = process.argv.slice(2);
try {
  const mech = await loadMechanism(readFileSync(path, "utf8"));
  if (mode === "words") {
    const { inputs, words } = JSON.parse(readFileSync(arg, "utf8"));
    const stream = wordStream(words);
    const reports = mech.sampler({ words: stream }).sampleMany(inputs);
    console.log(JSON.stringify({ sha256: mech.sha256, reports, used: stream.used() }));
  } else {
    const x = mech.inputs.indexOf(arg);
    const counts = new Array(mech.outputs.length).fill(0);
    for (const j of mech.sampler().sampleIndices(arg, 1000000)) counts[j] += 1;
    console.log(JSON.stringify({ sha256: mech.sha256, counts, row: mech.matrix[x] }));
  }
} catch (err) {
  console.log(JSON.stringify({ error: err.kind ?? "other", field: err.field, message: err.message }));
}
""" % INDEX


def run_node(tmp_path: Path, *args: str) -> dict:
    script = tmp_path / "run.mjs"
    script.write_text(SCRIPT)
    proc = subprocess.run([NODE, str(script), *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    """A mechanism mechopt solves and writes now (17-digit decimals, version 2)."""
    path = tmp_path_factory.mktemp("js") / "web.json"
    result = mechopt.solve(str(ROOT / "problems" / "web_high_low_002.yaml"), quiet=True)
    assert result.ok
    result.mechanism.save(path)
    return path


def test_js_recomputes_the_digest_and_samples_what_python_samples(written, tmp_path):
    doc = load_document(written)
    rng = np.random.default_rng(7)
    words = [int(w) for w in rng.integers(0, 2**32, size=20_000, dtype=np.uint64)]
    inputs = [doc["inputs"][i] for i in rng.integers(0, len(doc["inputs"]), size=2_000)]
    (tmp_path / "w.json").write_text(json.dumps({"inputs": inputs, "words": words}))
    out = run_node(tmp_path, str(written), "words", str(tmp_path / "w.json"))
    assert out["sha256"] == doc["sha256"]
    sampler = Sampler(doc, words=words)
    assert out["reports"] == sampler.sample_many(inputs)
    assert out["used"] == sampler.words_used


def test_js_refuses_a_tampered_python_file(written, tmp_path):
    doc = json.loads(written.read_text())
    doc["privacy"][0]["epsilon"] = 0.5
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert run_node(tmp_path, str(bad), "words", "-")["error"] == "verification"


def test_js_frequencies_over_a_million_draws_pass_chi_square(written, tmp_path):
    out = run_node(tmp_path, str(written), "count", "news")
    counts, row = np.array(out["counts"]), np.array(out["row"])
    assert counts.sum() == 10**6
    assert np.all(counts[row == 0] == 0)
    pos = row > 0
    result = stats.chisquare(counts[pos], 10**6 * row[pos] / row[pos].sum())
    assert result.pvalue > 1e-3, result
