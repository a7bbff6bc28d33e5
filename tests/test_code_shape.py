"""The package's shape: no import circle between its modules, and no module grown past 450 lines.

Imports inside functions count too: a circle broken only by a late import still ties two modules together.
A module importing its own package (``gobblin_py.state`` from ``gobblin_py.state.store``) is not an edge: the
package's ``__init__`` re-exports its children.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gobblin_py"
MAX_LINES = 450


def modules() -> dict[str, Path]:
    """Dotted module name → file, for every module of the package."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imported_names(name: str, path: Path) -> set[str]:
    """Every dotted name the module imports, anywhere in it, relative imports resolved."""
    names = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def import_graph() -> dict[str, set[str]]:
    """Module → the package's modules it imports (the nearest module for a name inside one)."""
    known = modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        targets = set()
        for imported in imported_names(name, path):
            while imported and imported not in known:
                imported = imported.rpartition(".")[0]
            if imported and imported != name and not name.startswith(imported + "."):
                targets.add(imported)
        graph[name] = targets
    return graph


def test_the_graph_sees_the_package():
    graph = import_graph()
    assert "gobblin_py.runtime.launcher" in graph and "gobblin_py.config.settings" in graph
    assert "gobblin_py.config.settings" in graph["gobblin_py.runtime.job_settings"]


def test_no_import_circle():
    try:
        graphlib.TopologicalSorter(import_graph()).prepare()
    except graphlib.CycleError as exc:
        raise AssertionError("import circle: " + " → ".join(exc.args[1])) from None


def test_a_circle_would_be_found():
    graph = import_graph()
    graph["gobblin_py.config.settings"] = graph["gobblin_py.config.settings"] | {"gobblin_py.runtime.job_settings"}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError:
        return
    raise AssertionError("an added back-edge was not seen as a circle")


def test_no_module_over_the_line_limit():
    long = {name: n for name, path in modules().items() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by concept): {long}"
