"""The Python a Spark Connect server's executors run a job's tasks with.

With no archive, the server's own Python runs them: gobblin_py and the job's plugin modules must be installed
there. With an archive (a packed virtual environment holding gobblin_py, its dependencies and the job's plugin
modules, its interpreter at ``bin/python``), the run uploads it as an artifact of its session, the server unpacks
it beside the session's Python workers (in a folder named as the archive), and the session's workers run its
interpreter: nothing needs to be installed on the cluster beyond a Python of the same minor version.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.logs import get_logger

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession

log = get_logger(__name__)

ENVIRONMENT_DIR = "environment"  # where the server unpacks an archive without a name of its own
PYTHON_KEY = "spark.sql.execution.pyspark.python"  # a session's Python workers' interpreter (a runtime key)


def archive_for(props: Mapping[str, str]) -> Path | None:
    """The archive a job's tasks run from on the server, by ``gpy.spark.archive``: ``auto`` (the default) packs
    gpy, its dependencies and the job's plugin modules (cached by content); ``none``, or a job that names the
    workers' Python itself, leaves the server's own Python; a path names an archive of the user's own."""
    from gobblin_py.runtime.engines.pack import environment_archive
    from gobblin_py.runtime.engines.pack_settings import ARCHIVE_KEY, PackSettings

    choice = PackSettings.load(props).archive
    if choice == "none" or PYTHON_KEY in props:
        return None
    if choice == "auto":
        return environment_archive(props)
    path = choice.partition("#")[0]
    if "://" in path:
        raise UsageError(f"{ARCHIVE_KEY}={choice}: a Spark Connect run uploads the archive from this machine; "
                         "name a local file (or auto, or none)")
    return Path(path).expanduser().resolve()


def ship_environment(session: SparkSession, archive: Path | None) -> None:
    """Make ``archive`` the interpreter of the session's Python workers (None: leave the server's own)."""
    if archive is None:
        return
    if not archive.is_file():
        raise UsageError(f"the environment archive {archive} to ship to the Spark Connect server does not exist")
    # named by the archive (which names its content): a job's session, kept between runs, may get a newer one
    alias = archive.name.split(".", 1)[0] or ENVIRONMENT_DIR
    python = f"{alias}/bin/python"
    if session.conf.get(PYTHON_KEY, None) == python:  # the job's kept session has this very archive already
        log.info("environment_already_shipped", archive=str(archive))
        return
    session.addArtifacts(f"{archive}#{alias}", archive=True)
    session.conf.set(PYTHON_KEY, python)
    log.info("environment_shipped", archive=str(archive), bytes=archive.stat().st_size)
