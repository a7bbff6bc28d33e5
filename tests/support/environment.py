"""What the machine must provide for a test: a server, a package, a kernel ability, the job corpus.

Every test that cannot run because the machine lacks something says so through ``missing(what)`` (inside a test or
fixture) or the ``needs(available, what)`` marker (a condition known at import) — never through a bare
``pytest.skip``/``skipif`` (tests/test_environment.py checks that). Locally such a test is skipped with that
reason. With ``GPY_REQUIRE_ALL=1`` (set by ``.ci/run``) it fails instead, naming what was missing, so a CI machine
that lost a server or a package cannot empty a whole area of the suite and still pass.

Skips that are not about the machine stay skips everywhere: the contract kit's "this plugin does not declare X".
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import NoReturn

import pytest

REQUIRE_ALL = "GPY_REQUIRE_ALL"


def required() -> bool:
    """True when every environment a test needs must be present (``GPY_REQUIRE_ALL=1``)."""
    return os.environ.get(REQUIRE_ALL, "").strip() not in ("", "0")


def missing(what: str) -> NoReturn:
    """Stop the calling test or fixture because ``what`` (a sentence naming the missing thing) is not here:
    a skip, or a failure under ``GPY_REQUIRE_ALL=1``."""
    if required():
        pytest.fail(f"{REQUIRE_ALL}=1 and this test's environment is missing: {what}", pytrace=False)
    pytest.skip(what)


def needs(available: bool, what: str) -> pytest.MarkDecorator:
    """A marker for a test (or ``pytestmark`` for a module) that can only run where ``available``; ``what`` names
    the thing missing otherwise. Applied when the test is set up (``pytest_runtest_setup`` below)."""
    return pytest.mark.needs(available=bool(available), what=what)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs(available, what): the test needs something from the machine")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("needs"):
        if not mark.kwargs["available"]:
            missing(mark.kwargs["what"])


def apt_install(package: str) -> str | None:
    """``apt-get install -y <package>`` (Debian; with an update first if it fails, and waiting up to 5 minutes for
    apt's lock when another install holds it); None once installed, else the reason it cannot be."""
    if shutil.which("apt-get") is None:
        return f"{package} is missing and apt-get is not available to install it"
    if os.geteuid() != 0:
        return f"{package} is missing and installing it needs root"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    command = ["apt-get", "-o", "DPkg::Lock::Timeout=300", "install", "-y", "-q", package]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        subprocess.run(["apt-get", "-o", "DPkg::Lock::Timeout=300", "update", "-q"], env=env, capture_output=True,
                       text=True)
        done = subprocess.run(command, env=env, capture_output=True, text=True)
    return None if done.returncode == 0 else f"apt-get install {package} failed: {done.stderr.strip()[-500:]}"
