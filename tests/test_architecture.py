"""The shape of the package that docs/architecture.md promises (measured by benchmarks/architecture.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks import architecture as arch

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def graph():
    return arch.import_graph()[0]


def test_no_import_cycles(graph):
    assert arch.cycles(graph) == []


def test_solvers_never_import_the_dispatcher(graph):
    bad = [(m, t) for m, ts in graph.items() if m.startswith("mechopt.solvers") for t in ts if t in arch.DISPATCHER]
    assert bad == []


def test_names_are_spelled_at_home():
    notions, kinds = arch.literal_counts()
    assert sum(notions.values()) <= 15, notions.most_common(5)
    assert sum(kinds.values()) <= 15, kinds.most_common(5)


def test_no_module_over_600_lines():
    long = {m: n for m, p in arch.modules().items() if (n := len(p.read_text().splitlines())) > 600}
    assert long == {}


def test_the_diagram_in_the_docs_is_the_package_as_it_is(graph):
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = re.search(r"<!-- diagram: python -m benchmarks.architecture --diagram -->\n```\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md lost its generated diagram block"
    assert block.group(1).strip() == arch.diagram(graph).strip()


def test_the_counting_sees_a_cycle_and_a_spelled_name(tmp_path, monkeypatch):
    """The measurement itself can fail: a planted cycle and literal are found."""
    pkg = tmp_path / "mechopt"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "_a.py").write_text("def f():\n    from ._b import g\n    return 'ldp'\n")
    (pkg / "_b.py").write_text("from ._a import f\n\ndef g():\n    return f\n")
    monkeypatch.setattr(arch, "ROOT", tmp_path)
    monkeypatch.setattr(arch, "PKG", pkg)
    edges, total, inside = arch.import_graph()
    assert (total, inside) == (2, 1)
    assert arch.cycles(edges) == [["mechopt._a", "mechopt._b"]]
    assert list(arch._code_strings(pkg / "_a.py")) == ["ldp"]


def test_the_lowest_solver_modules_import_nothing_above_errors(graph):
    low = [m for m in graph if m.startswith("mechopt.solvers.backends")] + ["mechopt.solvers._outcome",
                                                                             "mechopt.solvers._colgen_loop",
                                                                             "mechopt.solvers._progress"]
    allowed = ({"mechopt._errors", "mechopt.solvers._progress"}
               | {m for m in arch.modules() if m.startswith("mechopt.solvers.backends")})
    assert {m: sorted(graph.get(m, set()) - allowed) for m in low if graph.get(m, set()) - allowed} == {}


def test_metric_modules_never_import_the_labeled_lp(graph):
    assert [m for m, ts in graph.items() if m.startswith("mechopt.solvers.metric") and "mechopt.solvers.labeled._lp" in ts] == []
