"""The engines that run a job's tasks, by name: ``--engine local``, ``--engine spark`` and ``connect`` (a Spark
Connect server: ``--remote``, or the job's ``spark.remote``).

``ENGINES`` names each engine's class by path, so the CLI lists the names without importing an engine (the local
engine brings pyarrow and the task pipeline, the Spark one PySpark); :func:`make_engine` imports the one a run uses.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gobblin_py.runtime.engines.base import Engine

# --engine NAME → "module:Class" of its Engine; an engine is added here
ENGINES: dict[str, str | type[Engine]] = {
    "local": "gobblin_py.runtime.engines.local:LocalEngine",
    "spark": "gobblin_py.runtime.engines.spark:SparkEngine",
    "connect": "gobblin_py.runtime.engines.connect:ConnectEngine",
}

__all__ = ["ENGINES", "choose_engine", "engine_class", "make_engine"]


def engine_class(name: str) -> type[Engine]:
    """The class of the engine called ``name``; ValueError naming an unknown one."""
    from gobblin_py.runtime.engines.base import Engine

    try:
        entry = ENGINES[name]
    except KeyError:
        raise ValueError(f"unknown engine {name!r}: use one of {', '.join(sorted(ENGINES))}") from None
    if isinstance(entry, str):
        module, _, attribute = entry.partition(":")
        entry = getattr(importlib.import_module(module), attribute)
    if not (isinstance(entry, type) and issubclass(entry, Engine)):
        raise TypeError(f"engine {name!r}: {entry!r} does not implement gobblin_py.runtime.engines.base.Engine")
    return entry


def make_engine(name: str, master: str | None = None) -> Engine:
    """The engine called ``name``, built with the Spark master (which the local engine ignores)."""
    return engine_class(name)(master)


def choose_engine(name: str, master: str | None, remote: str | None,
                  props: Mapping[str, str]) -> tuple[str, str | None]:
    """The engine a run uses and its master (a Spark Connect engine's: the server), from the command line's
    ``--engine``, ``--master`` and ``--remote`` and the job's ``spark.remote``; UsageError for a mix that
    contradicts itself. The command line wins over the job: ``--master`` runs classic Spark whatever the job's
    ``spark.remote``, and ``--engine local`` ignores it."""
    from gobblin_py.sdk.errors import UsageError

    if remote is not None:
        if name not in ("spark", "connect"):
            raise UsageError(f"--remote runs the tasks on a Spark Connect server: it cannot go with --engine {name}")
        if master is not None:
            raise UsageError("--master and --remote exclude each other: a run uses a Spark master or a Spark "
                             "Connect server")
        return "connect", _checked(remote, "--remote")
    job_remote = props.get("spark.remote") or None
    if name == "connect" or (name == "spark" and master is None and job_remote):
        if master is not None:
            raise UsageError("--engine connect runs on a Spark Connect server: name it with --remote, not --master")
        if job_remote is None:
            raise UsageError("--engine connect needs a Spark Connect server: --remote sc://HOST:PORT or the "
                             "job's spark.remote")
        if props.get("spark.master"):
            raise UsageError(f"the job sets both spark.master={props['spark.master']!r} and spark.remote="
                             f"{job_remote!r}: a run uses a Spark master or a Spark Connect server, not both")
        _checked(job_remote, "spark.remote")
        return "connect", None  # the engine reads the job's spark.remote
    return name, master


def _checked(remote: str, where: str) -> str:
    from gobblin_py.runtime.engines.connect import check_remote

    return check_remote(remote, where)
