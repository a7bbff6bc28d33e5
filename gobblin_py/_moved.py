"""Old module paths, kept working for one release: importing one warns and gives the module at its new path.

gpy's modules moved into layered packages (``gobblin_py.sdk``, ``gobblin_py.io``, ...). A plugin or job file
that still names an old path (``gobblin_py.api``, ``gobblin_py.config.settings``, ...) gets the very module
object now at the new path, under the old name too, with a :class:`DeprecationWarning` naming the new path.
An old package that was split across several new ones becomes an empty package whose old children still
resolve one by one. The finder runs first on the meta path but only ever answers for a name of :data:`MOVED`,
so every other import costs one dictionary lookup.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types
import warnings
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

# old module → new module; None: an old package split across new ones (its children are listed one by one)
MOVED: dict[str, str | None] = {
    "gobblin_py.api": "gobblin_py.sdk.contracts",
    "gobblin_py.errors": "gobblin_py.sdk.errors",
    "gobblin_py.config.settings": "gobblin_py.sdk.settings",
    "gobblin_py.config.errors": "gobblin_py.sdk.config_errors",
    "gobblin_py.config.branches": "gobblin_py.sdk.branches",
    "gobblin_py.config.keys": "gobblin_py.sdk.keys",
    "gobblin_py.runtime.interrupts": "gobblin_py.sdk.interrupts",
    "gobblin_py.runtime.job_settings": "gobblin_py.sdk.job_settings",
    "gobblin_py.logs": "gobblin_py.sdk.logs",
    "gobblin_py.state.states": "gobblin_py.sdk.states",
    "gobblin_py.state.watermarks": "gobblin_py.sdk.watermarks",
    "gobblin_py.state.run_states": "gobblin_py.sdk.run_states",
    "gobblin_py.schema_meta": "gobblin_py.sdk.schema_meta",
    "gobblin_py.joda": "gobblin_py.sdk.joda",
    "gobblin_py.plugins": "gobblin_py.sdk.plugins",
    "gobblin_py.unported": "gobblin_py.sdk.unported",
    "gobblin_py.fs": "gobblin_py.io.fs",
    "gobblin_py.fs_conditional": "gobblin_py.io.fs_conditional",
    "gobblin_py.fs_settings": "gobblin_py.io.fs_settings",
    "gobblin_py.local_fs": "gobblin_py.io.local_fs",
    "gobblin_py.group_sync": "gobblin_py.io.group_sync",
    "gobblin_py.native_io": "gobblin_py.io.native_io",
    "gobblin_py.contained_paths": "gobblin_py.io.contained_paths",
    "gobblin_py.processes": "gobblin_py.io.processes",
    "gobblin_py.prefetch": "gobblin_py.io.prefetch",
    "gobblin_py.writers.avro": "gobblin_py.formats.avro",
    "gobblin_py.sources.avro_read": "gobblin_py.formats.avro_read",
    "gobblin_py.converters.text_render": "gobblin_py.formats.text",
    "gobblin_py.writers.arrow_lists": "gobblin_py.formats.arrow_lists",
    "gobblin_py.writers.base": "gobblin_py.formats.base",
    "gobblin_py.writers.settings": "gobblin_py.formats.settings",
    "gobblin_py.writers.parquet": "gobblin_py.formats.parquet",
    "gobblin_py.writers.orc": "gobblin_py.formats.orc",
    "gobblin_py.writers.csv": "gobblin_py.formats.csv",
    "gobblin_py.writers.jsonl": "gobblin_py.formats.jsonl",
    "gobblin_py.writers.counting": "gobblin_py.formats.counting",
    "gobblin_py.config": "gobblin_py.jobconf",
    "gobblin_py.state": "gobblin_py.store",
    "gobblin_py.catalog": "gobblin_py.cli.catalog",
    "gobblin_py.validate": "gobblin_py.cli.validate_jobs",
    "gobblin_py.sources": None,
    "gobblin_py.writers": None,
    "gobblin_py.publishers": None,
    "gobblin_py.runtime.publish_check": "gobblin_py.formats.publish_check",
    "gobblin_py.sources.packing": "gobblin_py.sdk.packing",
    "gobblin_py.sources.retry": "gobblin_py.sdk.retry",
    "gobblin_py.sources.filebased": "gobblin_py.connectors.files.filebased",
    "gobblin_py.sources.file_extractor": "gobblin_py.connectors.files.file_extractor",
    "gobblin_py.sources.file_readers": "gobblin_py.connectors.files.file_readers",
    "gobblin_py.sources.file_schema": "gobblin_py.connectors.files.file_schema",
    "gobblin_py.sources.file_settings": "gobblin_py.connectors.files.file_settings",
    "gobblin_py.sources.avro_files": "gobblin_py.connectors.files.avro_files",
    "gobblin_py.sources.date_partitioned": "gobblin_py.connectors.files.date_partitioned",
    "gobblin_py.sources.event_time": "gobblin_py.connectors.files.event_time",
    "gobblin_py.sources.simple_json": "gobblin_py.connectors.files.simple_json",
    "gobblin_py.sources.test_sources": "gobblin_py.connectors.testing.test_sources",
    "gobblin_py.sources.sql": "gobblin_py.connectors.sql",
    "gobblin_py.sources.kafka": "gobblin_py.connectors.kafka",
    "gobblin_py.writers.builder": "gobblin_py.connectors.files.builder",
    "gobblin_py.writers.paths": "gobblin_py.io.branch_paths",
    "gobblin_py.writers.partitioned": "gobblin_py.connectors.files.partitioned",
    "gobblin_py.writers.partitioners": "gobblin_py.connectors.files.partitioners",
    "gobblin_py.writers.partitioner_base": "gobblin_py.sdk.partitioner",
    "gobblin_py.writers.rolling": "gobblin_py.connectors.files.rolling",
    "gobblin_py.writers.simple": "gobblin_py.connectors.files.simple",
    "gobblin_py.writers.console": "gobblin_py.connectors.testing.console",
    "gobblin_py.writers.kafka": "gobblin_py.connectors.kafka.writer",
    "gobblin_py.writers.kafka_commit": "gobblin_py.connectors.kafka.writer_commit",
    "gobblin_py.writers.kafka_settings": "gobblin_py.connectors.kafka.writer_settings",
    "gobblin_py.writers.jdbc": "gobblin_py.connectors.sql.writer",
    "gobblin_py.writers.jdbc_sql": "gobblin_py.connectors.sql.writer_sql",
    "gobblin_py.publishers.jdbc": "gobblin_py.connectors.sql.publisher",
    "gobblin_py.converters.jdbc_entry": "gobblin_py.connectors.sql.jdbc_entry",
    "gobblin_py.publishers.base": "gobblin_py.connectors.files.publisher",
    "gobblin_py.publishers.noop": "gobblin_py.connectors.files.noop_publisher",
    "gobblin_py.publishers.time_partitioned": "gobblin_py.connectors.files.time_partitioned",
    "gobblin_py.copy": "gobblin_py.connectors.copy",
    "gobblin_py.converters.chain": "gobblin_py.runtime.execute.converter_chain",
    "gobblin_py.converters.record_adapter": "gobblin_py.runtime.execute.record_adapter",
    "gobblin_py.converters": "gobblin_py.transforms.converters",
    "gobblin_py.forks": "gobblin_py.transforms.forks",
    "gobblin_py.quality": "gobblin_py.transforms.quality",
    "gobblin_py.runtime.task": "gobblin_py.runtime.execute.task",
    "gobblin_py.runtime.pipeline": "gobblin_py.runtime.execute.pipeline",
    "gobblin_py.runtime.fork": "gobblin_py.runtime.execute.fork",
    "gobblin_py.runtime.branch_commit": "gobblin_py.runtime.execute.branch_commit",
    "gobblin_py.runtime.task_settings": "gobblin_py.runtime.execute.task_settings",
    "gobblin_py.runtime.task_progress": "gobblin_py.runtime.execute.task_progress",
    "gobblin_py.runtime.task_processes": "gobblin_py.runtime.execute.task_processes",
    "gobblin_py.runtime.task_worker": "gobblin_py.runtime.execute.task_worker",
    "gobblin_py.runtime.progress_channel": "gobblin_py.runtime.execute.progress_channel",
    "gobblin_py.runtime.dataset_outputs": "gobblin_py.runtime.execute.dataset_outputs",
    "gobblin_py.runtime.run_progress": "gobblin_py.runtime.execute.run_progress",
    "gobblin_py.runtime.spark_session": "gobblin_py.runtime.engines.spark_session",
    "gobblin_py.runtime.spark_logging": "gobblin_py.runtime.engines.spark_logging",
    "gobblin_py.runtime.java": "gobblin_py.runtime.engines.java",
    "gobblin_py.runtime.commit_sequence": "gobblin_py.runtime.commit.commit_sequence",
    "gobblin_py.runtime.startpoint_steps": "gobblin_py.runtime.commit.startpoint_steps",
    "gobblin_py.runtime.job_run": "gobblin_py.runtime.commit.job_run",
    "gobblin_py.runtime.history": "gobblin_py.runtime.commit.history",
    "gobblin_py.runtime.job_result": "gobblin_py.runtime.commit.job_result",
    "gobblin_py.runtime.summary": "gobblin_py.runtime.commit.summary",
    "gobblin_py.runtime.recovery": "gobblin_py.runtime.commit.recovery",
    "gobblin_py.runtime.boundary": "gobblin_py.runtime.commit.boundary",
    "gobblin_py.runtime.crash_points": "gobblin_py.sdk.crash_points",
    "gobblin_py.runtime.commit.crash_points": "gobblin_py.sdk.crash_points",
    "gobblin_py.runtime.validation": "gobblin_py.runtime.plan.validation",
    "gobblin_py.runtime.startpoint_checks": "gobblin_py.runtime.plan.startpoint_checks",
    "gobblin_py.runtime.run_folders": "gobblin_py.runtime.plan.run_folders",
    "gobblin_py.runtime.locks": "gobblin_py.runtime.plan.locks",
}


def new_path(old: str) -> str | None:
    """The module now at old path ``old`` (a moved module or a child of a moved package); None if not moved."""
    probe = old
    while probe.startswith("gobblin_py."):
        if probe in MOVED:
            target = MOVED[probe]
            return None if target is None else target + old[len(probe):]
        probe = probe.rpartition(".")[0]
    return None


# Plain classes, not importlib.abc's: the import system only calls these methods, and importlib.abc would import
# importlib.resources (tempfile, shutil, random, …) into every gpy process.
class _Alias:
    """Loads an old name as the module at its new path (or as an empty package for a split one)."""

    def __init__(self, target: str | None) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        old = module.__name__
        if self.target is None:
            module.__path__ = []
            warnings.warn(f"{old} was split into gobblin_py's layered packages; import from the new paths "
                          "(see the README's Architecture section)", DeprecationWarning, stacklevel=2)
            return
        warnings.warn(f"{old} moved to {self.target}; import it from there", DeprecationWarning, stacklevel=2)
        # the import system returns whatever sys.modules holds under the name once this returns
        sys.modules[old] = importlib.import_module(self.target)


class MovedFinder:
    """Answers for the old paths of :data:`MOVED` only."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("gobblin_py."):
            return None
        if fullname in MOVED and MOVED[fullname] is None:
            return importlib.machinery.ModuleSpec(fullname, cast("Loader", _Alias(None)), is_package=True)
        target = new_path(fullname)
        if target is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, cast("Loader", _Alias(target)))


def install() -> None:
    """Put the finder first on the meta path (once)."""
    if not any(isinstance(finder, MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())
