"""The package's modules import one another without a circle.

The imports are read from the source with ``ast``, not by importing: every ``import`` and
``from … import`` statement, wherever it stands (inside a function and under
``TYPE_CHECKING`` too), and every string that is exactly the dotted name of one of the
package's modules (what ``importlib.import_module`` is given, e.g. the command table's
``"raidlab.cli.experiments"``). Left out are the imports of the top package ``raidlab``
itself (``from raidlab import __version__``, ``import raidlab`` to call ``raidlab.run``):
Python runs it before any of its modules anyway, and its own imports, done when
``raidlab.run`` is called, are of the modules everything uses (``raidlab.config``,
``raidlab.results``). A package's ``__init__`` counts as a module like any other.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "python" / "raidlab"
TOP = "raidlab"


def _modules() -> Dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _known(name: str, modules: Dict[str, Path]) -> str:
    """The module ``name`` is, or the one it is an attribute of (``raidlab.config.to_toml``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name


def import_graph() -> Dict[str, Set[str]]:
    """Module -> the package's modules it imports."""
    modules = _modules()
    graph: Dict[str, Set[str]] = {}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        named: List[str] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                named += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                named += [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                          for alias in node.names]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in modules:
                named.append(node.value)
        graph[module] = {target for target in (_known(name, modules) for name in named)
                         if target and target not in (module, TOP)}
    return graph


def find_cycle(graph: Dict[str, Set[str]]) -> List[str]:
    """One circle of ``graph`` (its modules, the first repeated at the end), or []."""
    state: Dict[str, int] = {}  # 1: on the current path, 2: done
    path: List[str] = []

    def visit(module: str) -> List[str]:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[module] = 2
        return []

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return []


def test_the_graph_sees_the_imports_it_should():
    graph = import_graph()
    assert "raidlab.exceptions" in graph["raidlab.config"]  # at the top of the module
    assert graph["raidlab.exceptions"] == set()
    assert "raidlab.results" in graph[TOP]  # inside raidlab.run
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_a_module_that_imports_it_back():
    cycle = find_cycle(import_graph())
    assert not cycle, "import circle: " + " -> ".join(cycle)


#: The package's layers, bottom up (docs/architecture.md): a module imports only from its own
#: layer or those below it. The top-level modules are the bottom layer; ``results`` (run and
#: sweep directories) is read by every layer above it, from the figures up.
LAYERS = ("", "results", "output", "experiments", "reproductions", "cli")


def _layer(module: str) -> int:
    if module == TOP:  # the public API: raidlab.run and raidlab.load_result hand out a Result
        return LAYERS.index("results")
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else 0


def _compatibility_modules() -> Set[str]:
    """The modules left at a former path, whose docstring starts with "Compatibility path"."""
    return {module for module, path in _modules().items()
            if path.read_text(encoding="utf-8").startswith('"""Compatibility path')}


def test_each_layer_imports_only_from_itself_and_those_below():
    compatibility = _compatibility_modules()
    assert {"raidlab.sweep", "raidlab.plots", "raidlab.reproduce", "raidlab.store"} <= compatibility
    found = [f"{module} -> {target}" for module, targets in sorted(import_graph().items())
             if module not in compatibility and module != "raidlab.__main__"  # python -m raidlab
             for target in sorted(targets) if _layer(target) > _layer(module) or target in compatibility]
    assert not found, "imports from a layer above, or of a compatibility path: " + ", ".join(found)
