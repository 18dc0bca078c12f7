"""Family files: the JavaScript client and mechopt agree on seeded mutations, and sample alike.

The valid family files of ``clients/vectors/families/`` are mutated (seeded): the ratio
moved by one part in 10^15 or 10^9, set to 1e300, 0.5, a string, a boolean; a mixture
component's ``d`` or ``weight`` changed, an extra key or component added; the sensitive
list of a Hadamard response grown, shrunk or redrawn; a claim's budget tightened by one
part in 10^15, halved, made negative, a string or 1e300; a claim's field replaced by a
list, an object, ``"inf"``, a label; claims added; required fields removed; labels
repeated; an integer written as a decimal (``3`` -> ``3.0``) in the text. 85 % are
re-hashed. Each text gets mechopt's verdict (:func:`mechopt._client_document.verdict`, the
path ``mechopt verify`` runs first) and the JavaScript ``loadMechanism``'s; they must be
the same class (accept, refuse-input, refuse-verification). On every accepted file the
same 32-bit words give the same reports and the same number of words read in
:class:`mechopt.families.FamilySampler` and the JavaScript sampler. Needs ``node``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import rfc8785

from mechopt._client_document import check_text, verdict
from mechopt.families import FamilySampler

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = ROOT / "clients" / "vectors" / "families"
NODE = shutil.which("node")
N_FILES = 400
SEED = 20261126

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed: the JavaScript client cannot run")

_ODD = [0, 1, -1, 2.5, 0.5, 1e300, 1e-300, "1", "inf", None, True, [], {}, 3, 7, 1000, 0.9999999999999999,
        [[1]], {"x": 1}, 2**60, -0.0, 5e-324, 2.0]
_NOTIONS = ["ldp", "wc_lip", "uldp", "high_low", "block", "eldp", "lip", "bp_lip", "metric", "gdp"]


def _rehash(doc: dict) -> None:
    try:
        payload = rfc8785.dumps({k: doc[k] for k in ("inputs", "family", "privacy")})
    except (KeyError, TypeError, ValueError, rfc8785.CanonicalizationError):
        return  # no digest exists (a missing field, an integer beyond 2^53): keep the old one
    doc["sha256"] = hashlib.sha256(payload).hexdigest()


def _mutate(doc: dict, rng: random.Random) -> None:
    fam, inputs = doc["family"], doc["inputs"]
    r = rng.random()
    if r < 0.15:
        fam["ratio"] = rng.choice([fam["ratio"] * (1 + rng.choice([1e-15, -1e-15, 1e-9, 0.5])), 1e300, 0.5, 1, "2",
                                   True, rng.choice(_ODD)])
    elif r < 0.3 and fam["kind"] == "subset_selection":
        rng.choice(fam["mixture"])[rng.choice(["d", "weight", "extra"])] = rng.choice(_ODD + [len(inputs)])
    elif r < 0.35 and fam["kind"] == "subset_selection":
        fam["mixture"].append({"d": rng.randint(0, len(inputs)), "weight": rng.choice([0.0, 0.1, 1e-13])})
    elif r < 0.45 and fam["kind"] == "hadamard_response":
        sens = fam["sensitive"]
        if rng.random() < 0.3:
            sens.append(rng.choice(inputs + ["zz", 1, [1]]))
        elif len(sens) > 1 and rng.random() < 0.5:
            sens.pop()
        else:
            fam["sensitive"] = [x for x in inputs if rng.random() < 0.5] or inputs[:1]
    elif r < 0.5:
        fam[rng.choice(["kind", "extra", "mixture", "sensitive"])] = rng.choice(
            _ODD + ["subset_selection", "hadamard_response"])
    elif r < 0.8:
        claim = rng.choice(doc["privacy"])
        if "epsilon" in claim and rng.random() < 0.6:
            e = claim["epsilon"]
            claim["epsilon"] = rng.choice([e * (1 - 1e-15), e * 0.999, e / 2, 0, -1, "1", e * 1.5, 1e300])
        else:
            key = rng.choice(list(claim))
            if key == "notion":
                claim["notion"] = rng.choice(_NOTIONS)
            elif isinstance(claim[key], list) and claim[key]:
                v, i = claim[key], rng.randrange(len(claim[key]))
                if isinstance(v[i], list) and v[i]:
                    v[i][rng.randrange(len(v[i]))] = rng.choice(_ODD + inputs)
                else:
                    v[i] = rng.choice(_ODD + inputs)
            else:
                claim[key] = rng.choice(_ODD)
    elif r < 0.85:
        k = len(inputs)
        doc["privacy"].append(rng.choice([
            {"notion": "ldp", "epsilon": rng.choice([0.1, 1, 5, 700])},
            {"notion": "uldp", "epsilon": 2, "sensitive": inputs[:1]},
            {"notion": "lip", "epsilon": 1, "prior": [1 / k] * k},
            {"notion": "high_low", "epsilon": 1, "sensitive": inputs[-1:]}]))
    elif r < 0.9:
        key = rng.choice(["objective", "certificate", "format", "version", "inputs", "privacy"])
        if rng.random() < 0.5:
            del doc[key]
        else:
            doc[key] = rng.choice(_ODD)
    else:
        inputs[rng.randrange(len(inputs))] = rng.choice(inputs + ["new"])


def _texts() -> list[str]:
    rng = random.Random(SEED)
    bases = [json.loads(p.read_text()) for p in sorted(FAMILIES.glob("*.json"))]
    bases = [b for b in bases if verdict(json.dumps(b))[0] == "accept" and len(b["inputs"]) <= 20]
    out = []
    while len(out) < N_FILES:
        doc = copy.deepcopy(rng.choice(bases))
        for _ in range(rng.choice([1, 1, 2])):
            try:
                _mutate(doc, rng)
            except (AttributeError, TypeError, KeyError, IndexError, ValueError):
                pass  # a second mutation of a field the first one broke: keep the file as it is
        if rng.random() < 0.85:
            _rehash(doc)
        text = json.dumps(doc)
        if rng.random() < 0.15:  # an integer written as a decimal: 3 -> 3.0
            tokens = list(re.finditer(r"(?<![\w.])(\d+)(?![\d.eE])", text))
            if tokens:
                m = rng.choice(tokens)
                text = text[:m.start()] + m.group(1) + ".0" + text[m.end():]
        out.append(text)
    return out


_JS = """
import { readFileSync } from "node:fs";
import { loadMechanism, MechanismError, wordStream } from "./clients/js/src/index.js";
const { texts, words } = JSON.parse(readFileSync(0, "utf8"));
const out = [];
for (const text of texts) {
  try {
    const mech = await loadMechanism(text);
    const stream = wordStream(words);
    const inputs = [...mech.inputs, ...mech.inputs, ...mech.inputs];
    out.push({ verdict: "accept", reports: mech.sampler({ words: stream }).sampleMany(inputs), used: stream.used() });
  } catch (err) {
    out.push({ verdict: err instanceof MechanismError ? `refuse-${err.kind}` : `crash: ${err}`, message: String(err.message) });
  }
}
process.stdout.write(JSON.stringify(out));
"""


def test_the_clients_agree_on_mutated_family_files():
    texts = _texts()
    rng = random.Random(SEED + 1)
    words = [rng.getrandbits(32) for _ in range(20000)]
    proc = subprocess.run([NODE, "--input-type=module", "-e", _JS], input=json.dumps({"texts": texts, "words": words}),
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    js = json.loads(proc.stdout)
    disagreements, sampled, classes = [], 0, {}
    for text, j in zip(texts, js):
        kind, message = verdict(text)
        classes[kind] = classes.get(kind, 0) + 1
        if kind != j["verdict"]:
            disagreements.append(f"python {kind} ({message[:80]}) vs js {j['verdict']} ({j.get('message', '')[:80]}): "
                                 f"{text[:300]}")
            continue
        if kind == "accept":
            checked = check_text(text)
            inputs = list(range(len(checked.doc["inputs"]))) * 3
            sampler = FamilySampler(checked.family, words=words)
            reports = [sampler.sample_index(x) for x in inputs]
            if reports != j["reports"] or sampler.words_used != j["used"]:
                disagreements.append(f"reports differ: {text[:300]}")
            sampled += 1
    assert not disagreements, f"{len(disagreements)} of {len(texts)}:\n" + "\n".join(disagreements[:20])
    # the mutations reach every verdict, and the accepted files were sampled
    assert classes.get("accept", 0) >= 40 and classes.get("refuse-input", 0) >= 100, classes
    assert classes.get("refuse-verification", 0) >= 40 and sampled == classes["accept"], classes
