"""The benchmarks ``make bench`` runs, one module each, in this order.

A suite module has one function, ``benchmarks(ctx) -> Iterator[Benchmark]``: for each selected case
(``ctx.wants(key)``) it prepares the input (cached under ``ctx.data``, or a server started for the
benchmark), builds the contenders and yields the :class:`~benchkit.model.Benchmark`; the runner measures it
before the generator resumes, so a ``with`` block around the ``yield`` stops a server afterwards. To add a
benchmark, write such a module and add its name here.
"""

from __future__ import annotations

import importlib
from types import ModuleType

SUITES = ("files", "delta", "iceberg", "table_commits", "spark_cluster", "compaction", "sql", "kafka", "state",
          "state_s3")


def load(name: str) -> ModuleType:
    return importlib.import_module(f"benchkit.suites.{name}")
