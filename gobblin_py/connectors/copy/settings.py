"""The keys of the copy job: the dataset finder's, the source's and the writers'.

Gobblin's copy keys that would change what is copied, or where, are declared too, so that a job setting one is
refused before any work, naming the key, instead of running as if it were not there (:func:`refused`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any

from gobblin_py.connectors.files.file_settings import FileSourceSettings
from gobblin_py.connectors.files.publisher import PublisherSettings
from gobblin_py.formats.settings import FileWriterSettings
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.settings import Kind, Settings, same_as, setting

FINDER_KEY = "gobblin.dataset.profile.class"
FINDER_NAME = "org.apache.gobblin.data.management.copy.CopyableGlobDatasetFinder"
_NOT = "not supported"


def refused(settings: Any) -> list[ConfigError]:
    """A problem for each declared key marked unsupported (its doc starts so) whose value is set to act."""
    problems = []
    for f in fields(settings):
        spec = f.metadata.get("gpy.setting")
        if spec is None or not spec["doc"].startswith(_NOT):
            continue
        value = getattr(settings, f.name)
        if value in (None, False, "", {}, ()):
            continue
        key = spec["name"]
        if isinstance(value, dict):  # a prefix: name the keys set under it
            key = ", ".join(key.rstrip("*") + k for k in sorted(value))
        shown = "true" if value is True else value if isinstance(value, (str, int)) else "set"
        problems.append(ConfigError(f"{shown}: {spec['doc']}", key=key,
                                    hint="remove it (docs: guides/copy.md says what the copy job supports)"))
    return problems


@dataclass(frozen=True)
class GlobFinderSettings(Settings):
    """The keys of the copy job's dataset finder (Gobblin's CopyableGlobDatasetFinder)."""

    pattern: str = setting("gobblin.dataset.pattern", required=True, aliases=("gobblin.retention.dataset.pattern",),
                           example="/data/logs/*",
                           doc="glob of the datasets: each matching folder is copied with everything under it, to "
                               "<data.publisher.final.dir>/<its path below the pattern's deepest folder without "
                               "wildcards>")
    blacklist: re.Pattern | None = setting("gobblin.dataset.blacklist",
                                           aliases=("gobblin.retention.dataset.blacklist",),
                                           doc="a dataset whose path contains a match of this regular expression is "
                                               "not copied")
    glob_blacklist: str | None = setting("gobblin.dataset.glob.blacklist",
                                         doc=f"{_NOT} (use gobblin.dataset.blacklist)")
    path_filter: str | None = setting("gobblin.dataset.path.filter.class", doc=f"{_NOT} (every file is copied)")
    file_filter: str | None = setting("gobblin.dataset.copyable.file.filter.class",
                                      doc=f"{_NOT} (every file is copied)")
    fs_uri: str | None = same_as(FileSourceSettings, "fs_uri")

    def check(self) -> list[ConfigError]:
        return refused(self)


@dataclass(frozen=True)
class CopySettings(Settings):
    """The keys of :class:`gobblin_py.connectors.copy.source.CopySource`."""

    finder: str = setting(FINDER_KEY, default=FINDER_NAME,
                          doc="the dataset finder: CopyableGlobDatasetFinder (gobblin.dataset.pattern), or "
                              "HiveDatasetFinder (the tables of hive.dataset.*, registered at the destination)")
    final_dir: str = same_as(PublisherSettings, "final_dir")
    writer_fs_uri: str | None = same_as(FileWriterSettings, "fs_uri")
    publisher_fs_uri: str | None = same_as(PublisherSettings, "fs_uri")
    simulate: bool = setting("gobblin.copy.simulate", default=False,
                             doc="plan the copy and log each file it would copy, then stop: nothing is copied")
    bin_size: int = setting("gobblin.copy.binPacking.maxSizePerBin", kind=Kind.SIZE, default=0, minimum=0,
                            default_doc="0: a work unit per file",
                            doc="pack each dataset's files into work units of about this many bytes (a larger file "
                                "has a work unit of its own)")
    bin_files: int = setting("gobblin.copy.binPacking.maxWorkUnitsPerBin", default=50, minimum=1,
                             doc="with maxSizePerBin: a file weighs at least maxSizePerBin / this, so a work unit "
                                 "holds at most this many files")
    update: bool = setting("gobblin.copy.recursive.update", default=False,
                           doc=f"{_NOT} (true is refused): a file that differs from the one at its destination "
                               "fails the plan; gpy never overwrites published files")
    delete: bool = setting("gobblin.copy.recursive.delete", default=False,
                           doc=f"{_NOT} (true is refused): nothing is deleted at the destination")
    delete_empty: bool = setting("gobblin.copy.recursive.deleteEmptyDirectories", default=False,
                                 doc=f"{_NOT} (true is refused)")
    empty_dirs: bool = setting("gobblin.copy.includeEmptyDirectories", default=False,
                               doc=f"{_NOT} (true is refused): files are copied, their folders made as needed; "
                                   "empty folders are not")
    preserve: str | None = setting("gobblin.copy.preserved.attributes",
                                   doc=f"{_NOT}: owner, group, permissions, ACLs, replication, block size and times "
                                       "are not preserved")
    preserve_ancestors: bool = setting("gobblin.copy.recursive.useNewPreserveLogic", default=False,
                                       doc=f"{_NOT} (true is refused)")
    group: str | None = setting("gobblin.copy.dataset.destination.group", doc=f"{_NOT} (owners are not set)")
    prioritizer: str | None = setting("gobblin.copy.prioritization.prioritizerAlias", doc=f"{_NOT} (every planned "
                                                                                          "file is copied)")
    max_copy: dict[str, str] | None = setting("gobblin.copy.prioritization.maxCopy.*", kind=Kind.PREFIX,
                                              doc=f"{_NOT} (no limit on the files or bytes of a run)")
    max_files: int | None = setting("gobblin.copy.max.files.copied", doc=f"{_NOT} (no limit on the files of a run)")
    split: bool = setting("gobblin.copy.split.enabled", default=False,
                          doc=f"{_NOT} (true is refused): a file is copied whole by one task")

    def check(self) -> list[ConfigError]:
        return refused(self)


@dataclass(frozen=True)
class CopyWriterSettings(Settings):
    """The keys of the copy writers (byte-for-byte and tar)."""

    fs_uri: str | None = same_as(FileWriterSettings, "fs_uri")
    source_fs_uri: str | None = same_as(FileSourceSettings, "fs_uri")
    buffer_size: int = setting("gobblin.copy.bufferSize", kind=Kind.SIZE, default=32 << 10, minimum=1,
                               default_doc="32KB", doc="bytes read and written at a time")
    check_size: bool = setting("gobblin.copy.checkFileSize", default=False,
                               doc="a file copied without decodings must have exactly the size it had when the run "
                                   "was planned")
    overwrite: bool = setting("gobblin.copy.task.overwrite.on.commit", default=False, doc=f"{_NOT} (true is refused)")
    encrypt: dict[str, str] | None = setting("writer.encrypt.*", kind=Kind.PREFIX,
                                             doc=f"{_NOT}: copied files are not encrypted")

    def check(self) -> list[ConfigError]:
        return refused(self)
