"""The suite's shape: a test module takes its helpers from tests/support (or as fixtures), never from another test
module or a conftest, so moving, renaming or deleting a test never breaks another, and pytest never imports a
test module twice (once collected, once imported)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# the text of each import statement (with its parenthesised names): only a file where one names a test module or a
# conftest is parsed (parsing all of them takes seconds of a busy machine)
_IMPORTS = re.compile(r"^[ \t]*(?:from|import)[ \t][^\n(]*(?:\([^)]*\))?[^\n]*", re.M)
_SUSPECT = re.compile(r"\b(?:test_\w+|conftest)\b")


def _imported(path: Path, root: Path) -> set[str]:
    """Every tests.* module ``path`` (under ``root``) imports, anywhere in it, relative imports resolved."""
    package = ".".join(path.relative_to(root.parent).parent.parts)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # `from tests.x import test_y`
    return {name for name in found if name == "tests" or name.startswith("tests.")}


def _is_test_module_or_conftest(name: str) -> bool:
    leaf = name.rpartition(".")[2]
    return leaf.startswith("test_") or leaf == "conftest"


def offending_imports(root: Path = TESTS) -> list[str]:
    """``file: module`` for each import of a test module or a conftest, by any module under ``root``."""
    suspects = [path for path in sorted(root.rglob("*.py"))
                if any(_SUSPECT.search(statement) for statement in _IMPORTS.findall(path.read_text()))]
    return [f"{path.relative_to(root.parent)}: {name}"
            for path in suspects for name in sorted(_imported(path, root)) if _is_test_module_or_conftest(name)]


def test_no_module_imports_a_test_module_or_a_conftest():
    assert offending_imports() == [], "move the helper into tests/support (or make it a conftest fixture)"


def test_the_check_finds_each_way_of_importing_a_test_module(tmp_path):
    folder = tmp_path / "tests" / "area"
    folder.mkdir(parents=True)
    (folder / "test_a.py").write_text("from tests.runtime.test_run_cli import Job\n"
                                      "from .conftest import build\n"
                                      "from tests.area import (\n    test_b,\n)\n"
                                      "def test_x():\n    import tests.state.test_store\n")
    (folder / "test_ok.py").write_text("from tests.support.jobs import Job\nfrom tests.area.helpers import one\n")
    assert offending_imports(tmp_path / "tests") == [
        "tests/area/test_a.py: tests.area.conftest",
        "tests/area/test_a.py: tests.area.test_b",
        "tests/area/test_a.py: tests.runtime.test_run_cli",
        "tests/area/test_a.py: tests.state.test_store",
    ]
