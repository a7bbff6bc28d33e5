"""Keeping Spark's and the JVM's start-up noise off gpy's console, without hiding real errors.

At gpy's default log level the driver JVM is started with gpy's log4j2 configuration (errors only), and its
stderr goes through :class:`JvmStderrFilter`, which drops the JVM launcher's own ``WARNING:`` lines (incubator
modules, ``sun.misc.Unsafe``, native access) and Spark's announcements of its log level, and passes every other
line on: log4j errors, Java exceptions, the executors' own log lines. ``gpy --log-level DEBUG``, a job that sets
``spark.log.level``, or one that names its own log4j configuration in ``spark.driver.extraJavaOptions`` gets
Spark's logging exactly as Spark sets it up.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO

QUIET_CONFIG = Path(__file__).with_name("log4j2-quiet.properties")
JAVA_OPTIONS_KEY = "spark.driver.extraJavaOptions"
LOG_LEVEL_KEY = "spark.log.level"
# lines the JVM and Spark print straight to stderr while starting, whatever log4j says
NOISE_PREFIXES = (
    "WARNING: ",  # the JVM launcher's own warnings: incubator modules, sun.misc.Unsafe, restricted methods …
    "Using Spark's default log4j profile",
    "Setting default log level to",
    "To adjust logging level use sc.setLogLevel",
)


def job_owns_logging(conf: Mapping[str, str]) -> bool:
    """Whether the job configures Spark's logging itself (``spark.log.level``, a log4j file of its own)."""
    return bool(conf.get(LOG_LEVEL_KEY)) or "log4j" in (conf.get(JAVA_OPTIONS_KEY) or "")


def quiet(conf: Mapping[str, str]) -> bool:
    """Whether to hide Spark's start-up noise: gpy's log level is not DEBUG and the job leaves logging to gpy."""
    return os.environ.get("GPY_LOG_LEVEL", "INFO").upper() != "DEBUG" and not job_owns_logging(conf)


def driver_java_options(conf: Mapping[str, str]) -> str:
    """The job's driver JVM options with gpy's quiet log4j2 configuration added."""
    own = (conf.get(JAVA_OPTIONS_KEY) or "").strip()
    option = f"-Dlog4j2.configurationFile={QUIET_CONFIG.as_uri()}"
    return f"{own} {option}".strip()


def spark_log_level(conf: Mapping[str, str]) -> str | None:
    """The level to set on the SparkContext once it runs (None: leave the job's ``spark.log.level``)."""
    if conf.get(LOG_LEVEL_KEY):
        return None
    if os.environ.get("GPY_SPARK_LOG_LEVEL"):
        return os.environ["GPY_SPARK_LOG_LEVEL"]
    return "ERROR" if quiet(conf) else "WARN"


def is_noise(line: str) -> bool:
    """A start-up line nobody at a terminal needs (see :data:`NOISE_PREFIXES`)."""
    return line.startswith(NOISE_PREFIXES)


class JvmStderrFilter(threading.Thread):
    """Copies the JVM's stderr, line by line, to this process's current ``sys.stderr`` (without the noise when
    ``drop_noise``).

    It runs as long as the JVM does (the pipe must be drained, or the JVM would block writing to it) and writes
    through ``sys.stderr`` as it is at each line, so a live progress display that takes stderr over prints
    those lines above itself.
    """

    def __init__(self, stream: IO[bytes], drop_noise: bool = True) -> None:
        super().__init__(name="gpy-jvm-stderr", daemon=True)
        self.stream = stream
        self.drop_noise = drop_noise

    def run(self) -> None:
        for raw in iter(self.stream.readline, b""):
            line = raw.decode("utf-8", errors="replace")
            if self.drop_noise and is_noise(line):
                continue
            try:
                sys.stderr.write(line)
                sys.stderr.flush()
            except (OSError, ValueError):  # our stderr is gone (the process is ending): keep draining the pipe
                continue
