"""GPY_REQUIRE_ALL=1 (set by .ci/run): a test whose environment is missing fails, naming what, instead of skipping;
skips that are not about the environment (the contract kit's "this plugin does not declare X") stay skips."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO

# One test of each kind: missing() in a test, in a fixture, the needs() marker, and a skip the kit would make.
_TINY_SUITE = '''
import pytest
from tests.support.environment import missing, needs


@pytest.fixture
def server():
    missing("the frobnicator server could not be started")


def test_inside(): missing("the widget library is not installed")
def test_fixture(server): pass
@needs(False, "the gizmo kernel module")
def test_marker(): pass
@needs(True, "always here")
def test_present(): pass
def test_not_environment(): pytest.skip("this plugin does not declare supports_widgets")
'''


# as tests/conftest.py does
_CONFTEST = "from tests.support.environment import pytest_configure, pytest_runtest_setup  # noqa: F401\n"


def _run_tiny_suite(folder: Path, require_all: str | None) -> subprocess.CompletedProcess:
    (folder / "test_tiny.py").write_text(_TINY_SUITE)
    (folder / "conftest.py").write_text(_CONFTEST)
    env = {key: value for key, value in os.environ.items() if key != "GPY_REQUIRE_ALL"}
    if require_all is not None:
        env["GPY_REQUIRE_ALL"] = require_all
    env["COLUMNS"] = "400"  # the summary lines whole
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider", "--rootdir",
                           str(folder), "test_tiny.py"], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=120)


def test_without_require_all_a_missing_environment_skips_with_its_reason(tmp_path):
    ran = _run_tiny_suite(tmp_path, None)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 passed, 4 skipped" in ran.stdout, ran.stdout
    for what in ("the widget library is not installed", "the frobnicator server could not be started",
                 "the gizmo kernel module", "this plugin does not declare supports_widgets"):
        assert what in ran.stdout, ran.stdout


def test_require_all_fails_each_missing_environment_naming_it_and_keeps_other_skips(tmp_path):
    ran = _run_tiny_suite(tmp_path, "1")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "1 failed, 1 passed, 1 skipped, 2 errors" in ran.stdout, ran.stdout
    said = "GPY_REQUIRE_ALL=1 and this test's environment is missing: "
    assert f"FAILED test_tiny.py::test_inside - Failed: {said}the widget library is not installed" in ran.stdout
    assert f"ERROR test_tiny.py::test_marker - Failed: {said}the gizmo kernel module" in ran.stdout
    assert f"ERROR test_tiny.py::test_fixture - Failed: {said}the frobnicator server could not be started" in ran.stdout
    assert "SKIPPED [1] test_tiny.py:17: this plugin does not declare supports_widgets" in ran.stdout, ran.stdout


def test_require_all_0_is_off(tmp_path):
    ran = _run_tiny_suite(tmp_path, "0")
    assert ran.returncode == 0 and "1 passed, 4 skipped" in ran.stdout, ran.stdout


_BARE_SKIP = re.compile(r"\bpytest\.(skip|importorskip)\(|\bmark\.skip(if)?\b|from pytest import .*\bskip\b")


def test_every_skip_in_the_suite_goes_through_the_environment_rule():
    """A bare skip would bypass GPY_REQUIRE_ALL; the suite's skips are all about the environment (the kit's
    skips, in gobblin_py/testing, are about what a plugin declares)."""
    bare = [f"{path.relative_to(REPO)}:{number}" for path in sorted((REPO / "tests").rglob("*.py"))
            if path.name not in ("environment.py", "test_environment.py")
            for number, line in enumerate(path.read_text().splitlines(), 1) if _BARE_SKIP.search(line)]
    assert bare == []


def test_ci_runs_the_suite_with_require_all():
    script = (REPO / ".ci" / "run").read_text()
    commands = [line.strip() for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert commands[-1] == "GPY_REQUIRE_ALL=1 make test", commands
