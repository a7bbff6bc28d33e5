"""The one SparkSession of a gpy process, built from the job's ``spark.*`` keys and the chosen master."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

from gobblin_py.runtime.java import ensure_java

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
_lock = threading.Lock()

# Quiet, small defaults that suit a batch ingestion driver; any spark.* key of the job overrides them.
_DEFAULTS = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
}


def get_spark_session(
    master: str | None = None, conf: Mapping[str, str] | None = None, app_name: str = "gpy"
) -> "SparkSession":
    """Get or create the process's SparkSession. Executors run this interpreter (``PYSPARK_PYTHON``)."""
    with _lock:
        ensure_java()
        # Executors' Python workers must run our virtual environment's interpreter, not python3 from PATH.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        from pyspark.sql import SparkSession

        settings = dict(_DEFAULTS)
        settings.update({k: v for k, v in (conf or {}).items() if k.startswith("spark.")})
        chosen_master = master or settings.pop("spark.master", None) or DEFAULT_MASTER
        settings.pop("spark.master", None)
        builder = SparkSession.builder.master(chosen_master).appName(settings.pop("spark.app.name", app_name))
        for key, value in settings.items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel(os.environ.get("GPY_SPARK_LOG_LEVEL", "WARN"))
        return session
