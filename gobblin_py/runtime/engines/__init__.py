"""The engines that run a job's tasks, by name: ``--engine local`` and ``--engine spark``."""

from __future__ import annotations

from gobblin_py.runtime.engines.base import Engine, EngineSettings, TaskGroup, task_groups
from gobblin_py.runtime.engines.local import LocalEngine, ProcessEngine, ThreadEngine
from gobblin_py.runtime.engines.spark import SparkEngine

# --engine NAME → its class; an engine is added here (and implements Engine)
ENGINES: dict[str, type[Engine]] = {LocalEngine.name: LocalEngine, SparkEngine.name: SparkEngine}

__all__ = ["ENGINES", "Engine", "EngineSettings", "LocalEngine", "ProcessEngine", "SparkEngine", "TaskGroup",
           "ThreadEngine", "make_engine", "task_groups"]


def make_engine(name: str, master: str | None = None) -> Engine:
    """The engine called ``name``, built with the Spark master (which the local engine ignores)."""
    try:
        engine = ENGINES[name]
    except KeyError:
        raise ValueError(f"unknown engine {name!r}") from None
    return engine(master)
