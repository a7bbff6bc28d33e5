"""The engines that run a job's tasks, by name: ``--engine local`` and ``--engine spark``.

``ENGINES`` names each engine's class by path, so the CLI lists the names without importing an engine (the local
engine brings pyarrow and the task pipeline, the Spark one PySpark); :func:`make_engine` imports the one a run uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gobblin_py.runtime.engines.base import Engine

# --engine NAME → "module:Class" of its Engine; an engine is added here
ENGINES: dict[str, str | type[Engine]] = {
    "local": "gobblin_py.runtime.engines.local:LocalEngine",
    "spark": "gobblin_py.runtime.engines.spark:SparkEngine",
}

# the names this package held as one module, kept importable from here
_EXPORTS = {"Engine": "base", "EngineSettings": "base", "TaskGroup": "base", "task_groups": "base",
            "LocalEngine": "local", "ProcessEngine": "local", "ThreadEngine": "local", "SparkEngine": "spark"}

__all__ = ["ENGINES", "engine_class", "make_engine", *_EXPORTS]


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


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
