"""Facts about the shape of the ``mechopt`` package: ``python -m benchmarks.architecture``.

Measures what docs/architecture.md promises and ``tests/test_architecture.py`` guards:

* the import graph of ``mechopt`` modules, counting imports inside functions; a name
  imported from a package's ``__init__`` counts as an import of the module defining it
  (re-exports aside), and its strongly connected components larger than one module (the
  import cycles);
* imports from ``mechopt/solvers/`` into the dispatcher (``_solve``, ``_solve_design``,
  ``_settle``, ``cli``, ``_export``);
* notion names spelled as string literals outside ``mechopt/notions/`` (the standard-library
  client excepted: it must not import the registry) and objective kinds spelled outside
  ``mechopt/objectives/`` — docstrings are not counted;
* underscore names imported across modules, and the longest modules;
* the package diagram: which group of modules imports which (``--diagram``).

Usage::

    python -m benchmarks.architecture            # the counts
    python -m benchmarks.architecture --diagram  # the package diagram of docs/architecture.md
    python -m benchmarks.architecture --json
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "mechopt"
#: the standard-library client: importable without numpy, so it cannot read the notion registry
STDLIB_CLIENT = frozenset({"mechopt.client", "mechopt._claims", "mechopt._claims_exact", "mechopt._client_document",
                           "mechopt._jsonsafe", "mechopt.families._privacy"})
DISPATCHER = frozenset({"mechopt._solve", "mechopt._solve_design", "mechopt._settle", "mechopt.cli", "mechopt._export"})
#: objective kinds when the registry cannot be read (a tree older than registered objectives)
_KNOWN_KINDS = frozenset({"expected_loss", "mmse", "histogram_mse", "mutual_information", "bayes_risk",
                          "estimation_variance", "weighted", "worst_case_loss"})


def _modname(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    """``module name -> path`` for every module of the package."""
    return {_modname(p): p for p in sorted(PKG.rglob("*.py"))}


def _resolve(current: str, is_package: bool, level: int, module: str | None) -> str:
    if not level:
        return module or ""
    base = current.split(".") if is_package else current.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _defining_module(package: str, name: str, mods: dict) -> str:
    if f"{package}.{name}" in mods:
        return f"{package}.{name}"
    try:
        obj = getattr(importlib.import_module(package), name)
    except Exception:  # noqa: BLE001 - a name the package does not define: count the package
        return package
    owner = getattr(obj, "__module__", None)
    return owner if owner in mods else package


def import_graph() -> tuple[dict[str, set[str]], int, int]:
    """The edges ``module -> modules it imports`` (any depth of the file), edge count, edges inside functions."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    mods = modules()
    edges: dict[str, set[str]] = defaultdict(set)
    total = inner_count = 0
    for name, path in mods.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text())
        parent = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node.level, node.module)
                if not base.startswith("mechopt"):
                    continue
                for alias in node.names:
                    is_pkg = base in mods and mods[base].name == "__init__.py"
                    targets.append(_defining_module(base, alias.name, mods) if is_pkg else base)
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("mechopt")]
            else:
                continue
            inside, up = False, node
            while up in parent:
                up = parent[up]
                if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    inside = True
                    break
            for target in targets:
                if target != name and target in mods and target not in edges[name]:
                    edges[name].add(target)
                    total += 1
                    inner_count += inside
    return edges, total, inner_count


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module, package ``__init__`` files aside (Tarjan)."""
    mods = modules()
    nodes = [m for m, p in mods.items() if p.name != "__init__.py"]
    graph = {m: [t for t in edges.get(m, ()) if mods[t].name != "__init__.py"] for m in nodes}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10_000))
    try:
        for v in nodes:
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(old)
    return sorted(found)


def _code_strings(path: Path):
    tree = ast.parse(path.read_text())
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docs.add(id(body[0].value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.value


def objective_kinds() -> frozenset:
    try:
        from mechopt.objectives import objective_kinds as kinds
    except ImportError:
        return _KNOWN_KINDS
    return frozenset(kinds())


def literal_counts() -> tuple[Counter, Counter]:
    """Per module: notion names outside ``notions/`` and objective kinds outside ``objectives/``."""
    from mechopt.notions import notion_names

    notions = set(notion_names(builtin_only=True))
    kinds = objective_kinds()
    notion_count: Counter = Counter()
    kind_count: Counter = Counter()
    for name, path in modules().items():
        for s in _code_strings(path):
            if s in notions and not name.startswith("mechopt.notions") and name not in STDLIB_CLIENT:
                notion_count[name] += 1
            if s in kinds and not name.startswith("mechopt.objectives") and name != "mechopt._objectives":
                kind_count[name] += 1
    return notion_count, kind_count


def underscore_imports() -> int:
    mods = modules()
    n = 0
    for name, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = _resolve(name, path.name == "__init__.py", node.level, node.module)
                if base.startswith("mechopt"):
                    n += sum(1 for a in node.names if a.name.startswith("_") and not a.name.startswith("__"))
    return n


def group_of(module: str) -> str:
    """The diagram's box of a module: a sub-package, or a named group of top-level modules."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] == "solvers" and (PKG / "solvers" / parts[2]).is_dir():
        return "solvers." + parts[2]
    if len(parts) >= 2 and (PKG / parts[1]).is_dir():
        return parts[1]
    leaf = parts[-1] if len(parts) > 1 else "__init__"
    for group, members in _TOP_GROUPS.items():
        if leaf in members:
            return group
    return "core"


#: top-level modules by role (any module not named here is "core": the verifier, the mechanism files, composition)
_TOP_GROUPS = {
    "interface": {"__init__", "cli", "_batch", "_plots", "_target_error"},
    "dispatch": {"_solve", "_solve_design", "_settle", "_fallback", "_export"},
    "client": {m.split(".")[-1] for m in STDLIB_CLIENT} | {"_words"},
    "problem": {"_problem", "_custom", "geo", "_geo_baselines", "_street", "_units"},
    "models": {"_model", "_model_bound", "_sublinear", "_leakage", "_identifiability", "_baselines",
               "_baseline_catalog", "_baseline_exact", "_baseline_seed",
               "_closed_form_report"},
}


def diagram(edges: dict[str, set[str]]) -> str:
    """``group -> groups it imports``, one line per group, sorted (the block in docs/architecture.md)."""
    links: dict[str, set[str]] = defaultdict(set)
    for src, targets in edges.items():
        for t in targets:
            a, b = group_of(src), group_of(t)
            if a != b:
                links[a].add(b)
    groups = sorted({group_of(m) for m in modules()})
    width = max(len(g) for g in groups)
    return "\n".join(f"{g:<{width}} -> {', '.join(sorted(links[g])) or '(nothing of mechopt)'}" for g in groups)


def measure() -> dict:
    edges, total, inner = import_graph()
    notion_count, kind_count = literal_counts()
    sizes = sorted(((len(p.read_text().splitlines()), m) for m, p in modules().items()), reverse=True)
    return {
        "import_edges": total, "import_edges_in_functions": inner,
        "cycles": cycles(edges),
        "solvers_importing_dispatcher": sorted(f"{m} -> {t}" for m, ts in edges.items() if m.startswith("mechopt.solvers")
                                               for t in ts if t in DISPATCHER),
        "notion_literals": sum(notion_count.values()), "notion_literals_by_module": dict(notion_count.most_common()),
        "objective_literals": sum(kind_count.values()), "objective_literals_by_module": dict(kind_count.most_common()),
        "underscore_imports": underscore_imports(),
        "largest_modules": [{"module": m, "lines": n} for n, m in sizes[:5]],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.architecture", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="print the measurements as JSON")
    ap.add_argument("--diagram", action="store_true", help="print the package diagram")
    args = ap.parse_args(argv)
    if args.diagram:
        print(diagram(import_graph()[0]))
        return 0
    facts = measure()
    if args.json:
        print(json.dumps(facts, indent=1))
        return 0
    print(f"import edges: {facts['import_edges']} ({facts['import_edges_in_functions']} inside functions)")
    print(f"import cycles: {len(facts['cycles'])}")
    for comp in facts["cycles"]:
        print("   ", ", ".join(m.removeprefix("mechopt.") for m in comp))
    print(f"solvers importing the dispatcher: {len(facts['solvers_importing_dispatcher'])}")
    for line in facts["solvers_importing_dispatcher"]:
        print("   ", line)
    top = ", ".join(f"{m.removeprefix('mechopt.')} {n}" for m, n in list(facts["notion_literals_by_module"].items())[:6])
    print(f"notion names spelled outside notions/: {facts['notion_literals']} ({top})")
    top = ", ".join(f"{m.removeprefix('mechopt.')} {n}" for m, n in list(facts["objective_literals_by_module"].items())[:6])
    print(f"objective kinds spelled outside objectives/: {facts['objective_literals']} ({top})")
    print(f"underscore names imported across modules: {facts['underscore_imports']}")
    print("longest modules: " + ", ".join(f"{d['module'].removeprefix('mechopt.')} {d['lines']}"
                                          for d in facts["largest_modules"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
