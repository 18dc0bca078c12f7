"""The README's examples run as written (in a scratch directory).

* Python blocks outside the workflow section run one by one, each on its own.
* The workflow section ("From design to deployment") runs as two roads, each in order in
  one scratch directory: every ``bash`` block (the commands) and every ``python`` block
  (their twins, sharing one namespace). The install line is not re-run here (it would
  re-install into the test environment); it is checked to be the line ``.ci/run``
  executes, so CI installs exactly as the README says, then runs this test.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "README.md").read_text(encoding="utf-8")
START, END = "<!-- workflow:start", "<!-- workflow:end -->"
WORKFLOW = TEXT[TEXT.index(START):TEXT.index(END)]
OUTSIDE = TEXT[:TEXT.index(START)] + TEXT[TEXT.index(END):]
BLOCKS = re.findall(r"```python\n(.*?)```", OUTSIDE, flags=re.S)
FLOW_BASH = re.findall(r"```bash\n(.*?)```", WORKFLOW, flags=re.S)
FLOW_PYTHON = re.findall(r"```python\n(.*?)```", WORKFLOW, flags=re.S)
INSTALL = 'pip install -e ".[test]"'


def test_readme_has_python_examples():
    assert BLOCKS and len(FLOW_BASH) >= 5 and len(FLOW_PYTHON) >= 5


@pytest.mark.parametrize("i", range(len(BLOCKS)))
def test_readme_python_block_runs(i, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(BLOCKS[i], f"README.md[python block {i}]", "exec"), {"__name__": "__readme__"})
    out = capsys.readouterr().out
    if "# True" in BLOCKS[i]:
        assert out.strip().splitlines()[-1] == "True"


def test_first_commands_and_install_line_are_what_ci_runs():
    first = re.findall(r"```bash\n(.*?)```", TEXT, flags=re.S)[0].splitlines()
    assert first[0] == f"{INSTALL} && mechopt solve problems/quickstart.yaml -o mechanism.json"
    assert first[1] == "pytest"
    assert FLOW_BASH[0].strip() == INSTALL
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^pip install --quiet -e \"\.\[test\]\"$", ci, flags=re.M)  # the same install, quiet
    assert "mechopt solve problems/quickstart.yaml -o mechanism.json" in ci


def _scratch(tmp_path: Path) -> Path:
    (tmp_path / "problems").symlink_to(ROOT / "problems", target_is_directory=True)
    return tmp_path


def test_workflow_commands_run_in_order(tmp_path):
    """Design → export → privatize → estimate with intervals → trade-off and plots → memoize."""
    cwd = _scratch(tmp_path)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               OPENBLAS_NUM_THREADS="1")
    outputs = []
    for i, block in enumerate(FLOW_BASH[1:], start=1):
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, f"workflow bash block {i}:\n{block}\n{proc.stderr}"
        outputs.append(proc.stdout)
    text = "\n".join(outputs)
    assert "verified exactly" in text
    assert "95% intervals: wald (information matrix)" in text and "std.err" in text
    assert len((cwd / "reports.txt").read_text().splitlines()) == 20_000
    assert (cwd / "tradeoff.png").stat().st_size > 10_000 and (cwd / "web.png").stat().st_size > 5_000
    import json

    est, _ = json.JSONDecoder().raw_decode(outputs[2][outputs[2].index("{"):])  # the --counts --json estimate
    assert "post-processed: simplex; 95% intervals: percentile bootstrap" in outputs[2]
    assert est["n"] == 20_000 and set(est["estimate"]) == {"news", "mail", "shop", "video", "clinic", "casino"}
    truth = {"news": 0.30, "mail": 0.25, "shop": 0.20, "video": 0.15, "clinic": 0.06, "casino": 0.04}
    for label, (lo, hi) in est["interval"].items():
        assert lo - 0.02 <= truth[label] <= hi + 0.02  # near the truth (intervals are 95%, six of them)
    kept = json.loads((cwd / "devices.json").read_text())
    assert len(kept) == 20_000 and all(len(v) == 1 for v in kept.values())  # one device per user
    assert len(set((cwd / "day1.txt").read_text().splitlines())) >= 6  # users, not one device's 6 responses


def test_workflow_python_twins_run_in_order(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(_scratch(tmp_path))
    namespace = {"__name__": "__readme__"}
    for i, block in enumerate(FLOW_PYTHON):
        exec(compile(block, f"README.md[workflow python block {i}]", "exec"), namespace)
    out = capsys.readouterr().out
    assert "True" in out.splitlines()[1]  # the design identifies the distribution
    est = namespace["estimate"]
    assert est.n == 20_000 and est.estimate.sum() == pytest.approx(1.0)
    assert (tmp_path / "tradeoff.png").exists() and (tmp_path / "web.png").exists()
    assert "| 7 | 7 | 1 | 6 |" in out
