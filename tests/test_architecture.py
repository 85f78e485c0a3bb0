"""The package's architecture: no import cycles, imports only downward through the layers, nothing
below the planner reads the spec, small modules, a short top level, every module documented.

The import graph is read from the source with :mod:`ast`: every ``import`` and ``from ... import``
of a ``designer`` module counts, at module level (``if TYPE_CHECKING:`` blocks included) or inside
a function (lazy imports are dependencies too). ``from package import name`` is an edge to the
submodule ``package.name`` when there is one, else to the package. One import is not a
dependency: ``from designer import __version__`` reads a constant of the root package.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "designer"

# The layers, top down: a module may import its own layer and the layers below it, never one above.
LAYERS: dict[str, int] = {
    # the face: the public API's lazy re-exports and the command line
    "designer": 4, "designer.__main__": 4, "designer.cli": 4,
    # the planner (spec and catalog -> compiled problem -> design) and the studies that re-run it
    "designer.planner": 3, "designer.study": 3,
    # the stages
    "designer.optimize": 2, "designer.topology": 2, "designer.perf": 2, "designer.report": 2,
    "designer.pictures": 2,
    # the data: inputs, results, errors
    "designer.spec": 1, "designer.catalog": 1, "designer.design": 1, "designer.errors": 1,
}
# What the stages and the data may import of the spec package: its shared vocabulary, never the
# spec's models, loading, schema, messages or presets (the planner compiles those away).
SPEC_VOCABULARY = {"designer.spec.units", "designer.spec.rates", "designer.spec.humanize", "designer.spec.yamlio", "designer.spec.files",
                   "designer.spec.bounds",
                   "designer.spec.choices"}
# Root modules that read the spec only through the planner's compiled problem.
BELOW_PLANNER = [unit for unit, layer in LAYERS.items() if layer <= 2 and unit != "designer.spec"]
MAX_LINES = 450
MAX_TOP_LEVEL = 12  # modules and packages directly in designer/, besides __init__.py and __main__.py


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def resolve(module: str, node: ast.ImportFrom | ast.Import, alias: ast.alias) -> str | None:
    """The designer module an import depends on, or None when it is not one."""
    if isinstance(node, ast.Import):
        target = alias.name
    else:
        base = node.module or ""
        if node.level:
            package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}" if base else package
        if base == "designer" and alias.name == "__version__":
            return None  # a constant of the root package, not a dependency
        target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
    return target if target == "designer" or target.startswith("designer.") else None


def import_graph(modules: dict[str, Path]) -> nx.DiGraph:
    """Modules as nodes, ``a -> b`` when ``a`` imports ``b`` (each edge keeps the line numbers)."""
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for alias in node.names:
                target = resolve(module, node, alias)
                if target is None or target == module:
                    continue
                assert target in modules, f"{module}:{node.lineno} imports {target}, which does not exist"
                lines = graph.get_edge_data(module, target, {}).get("lines", ())
                graph.add_edge(module, target, lines=(*lines, node.lineno))
    return graph


GRAPH = import_graph(MODULES)


def unit_of(module: str) -> str:
    """The root module or package of ``module`` (``designer.optimize.milp`` -> ``designer.optimize``)."""
    parts = module.split(".")
    return ".".join(parts[:2])


def where(a: str, b: str, graph: nx.DiGraph = GRAPH) -> str:
    lines = ", ".join(str(n) for n in graph.edges[a, b]["lines"])
    return f"{a} (line {lines}) imports {b}"


def cycles(graph: nx.DiGraph) -> list[list[str]]:
    """Every import cycle, each in import order from its first module (alphabetically)."""
    found = []
    for c in nx.simple_cycles(graph):
        first = c.index(min(c))
        found.append(c[first:] + c[:first] + [c[first]])
    return sorted(found)


def upward(graph: nx.DiGraph) -> list[str]:
    return [where(a, b, graph) for a, b in sorted(graph.edges) if LAYERS[unit_of(a)] < LAYERS[unit_of(b)]]


def test_every_top_level_module_has_a_layer():
    assert {unit_of(m) for m in MODULES} == set(LAYERS)


def test_no_import_cycles():
    found = cycles(GRAPH)
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_imports_go_only_downward():
    violations = upward(GRAPH)
    assert not violations, "imports of a higher layer:\n" + "\n".join(violations)


def test_the_checks_catch_an_injected_cycle_and_upward_import():
    """The two tests above can fail: a topology module importing the planner is both."""
    graph = GRAPH.copy()
    graph.add_edge("designer.topology.sizing", "designer.planner.pipeline", lines=(1,))
    assert any("designer.topology.sizing" in c for c in cycles(graph))
    assert any(v.startswith("designer.topology.sizing") for v in upward(graph))


@pytest.mark.parametrize("module", sorted(m for m in MODULES if unit_of(m) in BELOW_PLANNER))
def test_nothing_below_the_planner_imports_the_spec(module):
    spec_imports = {b for b in GRAPH.successors(module) if unit_of(b) == "designer.spec"}
    assert spec_imports <= SPEC_VOCABULARY, [where(module, b) for b in sorted(spec_imports - SPEC_VOCABULARY)]


def test_importing_the_stages_loads_no_spec_model():
    """At run time too: the spec's package and vocabulary modules load neither the spec's models
    nor pydantic (``designer.spec`` re-exports lazily)."""
    stages = sorted(m for m in MODULES if unit_of(m) in BELOW_PLANNER)
    code = ("import importlib, sys\n"
            f"for m in {stages!r}: importlib.import_module(m)\n"
            "print(sorted(m for m in sys.modules if m.startswith(('designer.spec.', 'designer.planner', "
            "'designer.study', 'designer.cli', 'pydantic'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = set(eval(out.stdout))  # noqa: S307 - our own subprocess's printed list
    assert loaded <= SPEC_VOCABULARY, sorted(loaded - SPEC_VOCABULARY)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_the_size_guide(module):
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MAX_LINES, f"{module} has {lines} lines; split it by concern (STYLE.md 7.2)"


def test_the_top_level_stays_short():
    entries = sorted(p.name for p in PACKAGE.iterdir()
                     if (p.suffix == ".py" and p.name not in ("__init__.py", "__main__.py"))
                     or (p.is_dir() and (p / "__init__.py").exists()))
    assert len(entries) <= MAX_TOP_LEVEL, entries


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_has_a_docstring_and_all(module):
    tree = ast.parse(MODULES[module].read_text())
    doc = ast.get_docstring(tree)
    assert doc and doc.splitlines()[0].strip(), f"{module} has no one-line docstring"
    names = {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
             for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
    assert "__all__" in names, f"{module} has no __all__"


def test_pyproject_lists_every_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    packages = {module_name(p) for p in PACKAGE.rglob("__init__.py")}
    assert packages <= listed, sorted(packages - listed)
