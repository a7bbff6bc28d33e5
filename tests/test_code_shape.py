"""The package's shape: no import circle between its modules, and no module grown past 450 lines.

Imports inside functions count too: a circle broken only by a late import still ties two modules together.
A module importing its own package (``gobblin_py.store`` from ``gobblin_py.store.store``) is not an edge: the
package's ``__init__`` re-exports its children.
"""

from __future__ import annotations

import ast
import graphlib
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gobblin_py"
MAX_LINES = 450
MAX_FUNCTION_LINES = 60


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


@lru_cache(maxsize=1)
def _graph() -> tuple[tuple[str, frozenset[str]], ...]:
    """The package's import graph, parsed once a session (every test reads it; parsing takes seconds)."""
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
    return tuple((name, frozenset(targets)) for name, targets in graph.items())


def import_graph() -> dict[str, set[str]]:
    """Module → the package's modules it imports (the nearest module for a name inside one); a fresh copy, which a
    test may change."""
    return {name: set(targets) for name, targets in _graph()}


def long_functions(path: Path, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    """``qualified name -> lines`` of each function or method in ``path`` longer than ``limit`` lines (its
    decorators, signature and docstring included)."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{scope}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    if (lines := (child.end_lineno or child.lineno) - first + 1) > limit:
                        found[name] = lines
                visit(child, name + ".")

    visit(ast.parse(path.read_text(), str(path)), "")
    return found


def test_no_function_over_the_line_limit():
    long = {f"{name}.{function}": n for name, path in modules().items()
            for function, n in long_functions(path).items()}
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (one small function per step): {long}"


def test_a_long_function_would_be_found(tmp_path):
    source = tmp_path / "long.py"
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    source.write_text(f"class A:\n    @staticmethod\n    def long():\n{'    ' + body.replace(chr(10), chr(10) + '    ')}\n"
                      f"\ndef short():\n    return 1\n")
    assert long_functions(source) == {"A.long": MAX_FUNCTION_LINES + 2}


def test_the_graph_sees_the_package():
    graph = import_graph()
    assert "gobblin_py.runtime.launcher" in graph and "gobblin_py.sdk.settings" in graph
    assert "gobblin_py.sdk.settings" in graph["gobblin_py.sdk.job_keys"]


def test_no_import_circle():
    try:
        graphlib.TopologicalSorter(import_graph()).prepare()
    except graphlib.CycleError as exc:
        raise AssertionError("import circle: " + " → ".join(exc.args[1])) from None


def test_a_circle_would_be_found():
    graph = import_graph()
    graph["gobblin_py.sdk.settings"] = graph["gobblin_py.sdk.settings"] | {"gobblin_py.sdk.job_keys"}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError:
        return
    raise AssertionError("an added back-edge was not seen as a circle")


def test_no_module_over_the_line_limit():
    long = {name: n for name, path in modules().items() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by concept): {long}"


# -- packages in layers ------------------------------------------------------------------------------------------
# Bottom to top: a package imports only from the layers below its own (every import counted, as above). The
# docs' Architecture page (docs/architecture/index.md) draws the same table.
LAYERS: list[tuple[str, ...]] = [
    ("gobblin_py",),
    ("gobblin_py.sdk",),
    ("gobblin_py.io",),
    ("gobblin_py.formats",),
    ("gobblin_py.jobconf", "gobblin_py.store"),
    ("gobblin_py.connectors", "gobblin_py.connectors.files", "gobblin_py.connectors.rest", "gobblin_py.transforms", "gobblin_py.transforms.converters",
     "gobblin_py.transforms.forks", "gobblin_py.transforms.quality", "gobblin_py.examples"),
    ("gobblin_py.connectors.sql", "gobblin_py.connectors.kafka", "gobblin_py.connectors.copy",
     "gobblin_py.connectors.testdata", "gobblin_py.connectors.wikipedia", "gobblin_py.connectors.retention",
     "gobblin_py.connectors.compaction"),
    ("gobblin_py.connectors.tables",),
    ("gobblin_py.connectors.iceberg", "gobblin_py.connectors.delta", "gobblin_py.connectors.hive"),
    ("gobblin_py.runtime.execute",),
    ("gobblin_py.runtime.engines",),
    ("gobblin_py.runtime.commit",),
    ("gobblin_py.runtime.monitor",),
    ("gobblin_py.runtime.plan",),
    ("gobblin_py.runtime",),
    ("gobblin_py.testing",),
    ("gobblin_py.cli",),
]
# Imports not yet layered, in one place: (importing package, imported package).
KNOWN_EXCEPTIONS: set[tuple[str, str]] = set()


def layer_of() -> dict[str, int]:
    return {package: n for n, packages in enumerate(LAYERS) for package in packages}


def package_of(module: str) -> str:
    """The package of LAYERS a module belongs to (the longest that holds it; the root package only itself)."""
    best = ""
    for package in layer_of():
        inside = module == package or (package != "gobblin_py" and module.startswith(package + "."))
        if inside and len(package) > len(best):
            best = package
    return best


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Package → the packages it imports, from the module graph."""
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        source = package_of(module)
        packages.setdefault(source, set()).update(t for t in map(package_of, targets) if t != source)
    return packages


def layering_problems(graph: dict[str, set[str]]) -> list[str]:
    """Each import of a package from its own layer or one above, unless a known exception, and any package
    circle."""
    layers = layer_of()
    packages = package_graph(graph)
    problems = [f"{source} imports {target} (layer {layers[target]} is not below {layers[source]})"
                for source, targets in sorted(packages.items()) for target in sorted(targets)
                if layers[target] >= layers[source] and (source, target) not in KNOWN_EXCEPTIONS]
    try:
        graphlib.TopologicalSorter({s: t - {b for a, b in KNOWN_EXCEPTIONS if a == s}
                                    for s, t in packages.items()}).prepare()
    except graphlib.CycleError as exc:
        problems.append("package circle: " + " → ".join(exc.args[1]))
    return problems


def test_every_module_is_in_a_layer():
    assert not [module for module in modules() if not package_of(module)]


def test_packages_import_only_from_the_layers_below():
    assert not layering_problems(import_graph())


def test_the_known_exceptions_are_still_needed():
    packages = package_graph(import_graph())
    assert not [edge for edge in KNOWN_EXCEPTIONS if edge[1] not in packages.get(edge[0], set())]


def test_a_back_edge_between_packages_would_be_found():
    graph = import_graph()
    graph["gobblin_py.sdk.settings"] = graph["gobblin_py.sdk.settings"] | {"gobblin_py.io.fs"}
    layers = layer_of()
    upward, circle = layering_problems(graph)
    assert upward == (f"gobblin_py.sdk imports gobblin_py.io "
                      f"(layer {layers['gobblin_py.io']} is not below {layers['gobblin_py.sdk']})")
    assert circle.startswith("package circle: ")
    assert set(circle.removeprefix("package circle: ").split(" → ")) == {"gobblin_py.sdk", "gobblin_py.io"}


# The runtime finds connectors and transforms as plugins, by name: it imports none of them.
RUNTIME_DIRECT_IMPORTS: set[str] = set()


def test_the_runtime_imports_connectors_and_transforms_only_where_listed():
    packages = package_graph(import_graph())
    runtime = set().union(*(targets for source, targets in packages.items()
                            if source == "gobblin_py.runtime" or source.startswith("gobblin_py.runtime.")))
    plugins = {p for p in runtime if p.startswith(("gobblin_py.connectors", "gobblin_py.transforms"))}
    assert plugins == RUNTIME_DIRECT_IMPORTS


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code], capture_output=True,
                          text=True, timeout=120)


def test_every_module_imports():
    done = _python("import importlib, pkgutil, gobblin_py\n"
                   "for m in pkgutil.walk_packages(gobblin_py.__path__, 'gobblin_py.'):\n"
                   "    if not m.name.startswith('gobblin_py.examples'):\n"
                   "        importlib.import_module(m.name)\n")
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_sdk_loads_no_runtime_loader_or_hocon():
    done = _python("import sys, gobblin_py.sdk, gobblin_py.sdk.contracts, gobblin_py.sdk.settings, "
                   "gobblin_py.sdk.commit, gobblin_py.sdk.states, gobblin_py.sdk.plugins\n"
                   "print('\\n'.join(m for m in sys.modules if m.startswith('gobblin_py')))")
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = done.stdout.split()
    assert loaded and all(m == "gobblin_py" or m.startswith("gobblin_py.sdk") for m in loaded), loaded


# -- abilities by Protocol ---------------------------------------------------------------------------------------
# What the runtime asks of a plugin is declared in the SDK (a Protocol it checks with isinstance, or a member of
# the plugin's base class): never read by name, where a renamed or misspelt member silently turns an ability off.
PLUGIN_NAMES = {"plugin", "source", "extractor", "converter", "writer", "builder", "publisher", "operator", "policy",
                "partitioner", "step", "job"}
NOT_PLUGINS = {"props"}  # a job's configuration (``props.locate`` finds a key's line in its job file)


def sdk_members(package: Path = PACKAGE) -> set[str]:
    """Every public member (method or attribute) of a Protocol or abstract class the SDK declares."""
    members = set()
    for path in sorted((package / "sdk").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            bases = {ast.unparse(b) for b in node.bases} if isinstance(node, ast.ClassDef) else set()
            if not bases & {"Protocol", "ABC"}:
                continue
            for item in node.body:  # type: ignore[attr-defined]
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members.add(item.target.id)
                elif isinstance(item, ast.Assign):
                    members.update(t.id for t in item.targets if isinstance(t, ast.Name))
    return {name for name in members if not name.startswith("_")}


def abilities_read_by_name(package: Path = PACKAGE) -> list[str]:
    """Each ``getattr``/``hasattr`` in the runtime that names a member of an SDK contract, or is on a plugin
    (a variable or attribute named like one), as ``file:line: code``."""
    members = sdk_members(package)
    found = []
    for path in sorted((package / "runtime").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2):
                continue
            target, name = node.args[0], node.args[1]
            named = isinstance(name, ast.Constant) and name.value in members
            target_name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
            if (named and target_name not in NOT_PLUGINS) or target_name in PLUGIN_NAMES:
                found.append(f"{path.relative_to(package.parent)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_runtime_reads_no_plugin_ability_by_name():
    assert "startpoint_kinds" in sdk_members() and "published_check" in sdk_members()
    assert not abilities_read_by_name(), "declare the ability in gobblin_py.sdk and check it with isinstance"


# -- the SDK is the plugin contract only -------------------------------------------------------------------------
# Its modules, each one a plugin may import (docs/architecture/sdk.md says what each holds, and why it is here). A
# module added to the SDK is a decision: add it here and to that page. What only the runtime or the CLI reads lives
# there (the runtime's keys in gobblin_py.runtime.execute.job_settings, the loader's in gobblin_py.jobconf.keys, the
# Gobblin classes gpy lacks in gobblin_py.jobconf.unported), the crash tests' hooks in gobblin_py.io.crash_points.
SDK_MODULES = {
    "branches", "cluster_tasks", "commit", "config_errors", "contracts", "errors", "failures", "implied_keys",
    "interrupts", "job_keys", "joda", "locating", "logs", "packing", "partitioner", "plugins", "redact", "retry",
    "retry_budget", "run_states", "schema_meta", "settings", "startpoints", "states", "watermarks",
}
# Each connector classifies its own library's errors (gobblin_py.connectors.kafka.failures, …): the SDK names none.
VENDOR_NAMES = ("confluent_kafka", "cimpl", "botocore", "boto3", "SQLSTATE", "sqlite_errorcode", "psycopg",
                "adbc_driver", "AnalysisException", "ArrowInvalid")


def test_the_sdk_holds_exactly_its_modules():
    found = {path.stem for path in (PACKAGE / "sdk").glob("*.py") if path.stem != "__init__"}
    assert found == SDK_MODULES, {"not listed": sorted(found - SDK_MODULES), "gone": sorted(SDK_MODULES - found)}
    assert not [p for p in (PACKAGE / "sdk").iterdir() if p.is_dir() and p.name != "__pycache__"]


def test_the_sdk_names_no_vendor_library():
    named = [f"{path.relative_to(PACKAGE.parent)}:{n}: {word}" for path in sorted((PACKAGE / "sdk").glob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1) for word in VENDOR_NAMES if word in line]
    assert not named, "classify a library's errors in its connector (gobblin_py.sdk.failures.register_classifier)"


def test_every_failure_classifier_is_registered_and_loads():
    from importlib.metadata import entry_points

    points = {p.name: p.value for p in entry_points(group="gobblin_py.failures")}
    assert points == {"kafka": "gobblin_py.connectors.kafka.failures:classify_kafka_error",
                      "sql": "gobblin_py.connectors.sql.failures:classify_database_error",
                      "storage": "gobblin_py.io.failures:classify_storage_error",
                      "spark": "gobblin_py.runtime.engines.spark_failures:classify_spark_error"}
    defined = {f"{name}:{node.name}" for name, path in modules().items() if name.endswith("failures")
               for node in ast.parse(path.read_text()).body
               if isinstance(node, ast.FunctionDef) and node.name.startswith("classify_")}
    assert defined == set(points.values()), "a classify_* function no entry point registers (pyproject.toml)"
