"""``CopySource``: plans a copy job, one work unit per file (or per packed group of files), dataset by dataset.

What a run copies, per dataset, following Gobblin's RecursiveCopyableDataset: every file below it, except

- a file this dataset has already copied — recorded in its committed state with the same size and modification
  time — (the record is gpy's: Gobblin compares a file only with what is at its destination, which cannot tell
  a file whose destination a converter renames or an archive whose entries were extracted);
- a file whose destination already holds a file of the same size that is not older (Gobblin's rule).

A destination holding a different file fails the plan, naming both (Gobblin's non-update mode). So a run over
an unchanged source copies nothing. The record rides on each work unit (``gpy.copy.files``) and is carried
forward on the dataset's first work unit (``gpy.copy.snapshot``), so it is committed with the files, through
the same commit sequence, or not at all.
"""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Mapping

from gobblin_py.connectors.copy import descriptor
from gobblin_py.connectors.copy.descriptor import FileCopy
from gobblin_py.connectors.copy.finder import CopyableGlobDatasetFinder, CopyDataset, list_files
from gobblin_py.connectors.copy.overlap import FINAL_KEY, HINT, config_overlap, refuse_overlap
from gobblin_py.connectors.copy.packing import pack
from gobblin_py.connectors.copy.settings import FINDER_KEY, CopySettings, GlobFinderSettings
from gobblin_py.io import fs as fsutil
from gobblin_py.io.contained_paths import PathEscapeError, check_no_symlink_escape, contained_join
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import Extractor, Source
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.plugins import resolve_class
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.settings import problem_at
from gobblin_py.sdk.states import Extract, WorkingState, WorkUnit, WorkUnitState

log = get_logger(__name__)

FILES_KEY = "gpy.copy.files"
SNAPSHOT_KEY = "gpy.copy.snapshot"
REGISTRATION_KEY = "gpy.copy.hive.table"
NAMESPACE = "gobblin.copy"


def copied_before(previous: list[WorkUnitState]) -> dict[str, list[int]]:
    """``{destination: [size, mtime ms]}`` of the files a dataset's latest committed state says were copied."""
    copied: dict[str, list[int]] = {}
    for unit in previous:
        carried = unit.get_prop(SNAPSHOT_KEY)
        if carried:
            copied.update(json.loads(carried))
    for unit in previous:
        if unit.working_state is WorkingState.COMMITTED:
            copied.update({f.destination: [f.size, f.mtime_ms] for f in descriptor.from_json(unit.get_prop(FILES_KEY))})
    return copied


class CopySource(Source):
    """Gobblin's CopySource: every file of the datasets of ``gobblin.dataset.profile.class`` that is not yet at
    its destination, as descriptors (:data:`gobblin_py.connectors.copy.descriptor.SCHEMA`) for the copy writers."""

    settings_class = CopySettings

    @classmethod
    def validate(cls, props: Mapping[str, str]) -> list[ConfigError]:
        """The finder resolves, and the job writes and publishes with the copy plugins (Gobblin fails otherwise,
        mid-run)."""
        from gobblin_py.connectors.copy.publisher import CopyDataPublisher
        from gobblin_py.connectors.copy.writers import CopyWriterBuilder

        problems = []
        wanted = ((FINDER_KEY, CopySettings.load(props).finder if not CopySettings.problems(props) else None, None),
                  ("writer.builder.class", props.get("writer.builder.class"), CopyWriterBuilder),
                  ("data.publisher.type", props.get("data.publisher.type"), CopyDataPublisher))
        for key, name, base in wanted:
            if not name:
                if base is not None:
                    problems.append(problem_at(props, key, "is not set", f"CopySource needs {base.__name__}"))
                continue
            try:
                cls_ = resolve_class(name, key)
            except UsageError:
                continue  # reported with the job's other plugin names
            if base is not None and not issubclass(cls_, base):
                problems.append(problem_at(props, key, f"{name} cannot handle the files CopySource plans",
                                           f"use a copy plugin ({base.__name__})"))
            if base is None:  # the finder's own keys, whether the job names it or leaves the default
                problems += cls_.settings_class.problems(props) if hasattr(cls_, "settings_class") else []
                problems += cls_.validate(props) if hasattr(cls_, "validate") else []
        return problems + _overlap_problems(props)

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        settings = CopySettings.load(state)
        finder = resolve_class(settings.finder, FINDER_KEY)()
        finder.init(state)
        # where the publisher puts the files (data.publisher.fs.uri, else writer.fs.uri)
        target_fs, publish_root = fsutil.open_fs(settings.final_dir, settings.publisher_fs_uri or settings.writer_fs_uri)
        previous = state.previous_workunit_states_by_urn()
        units: list[WorkUnit] = []
        datasets = list(finder.find_datasets())
        _refuse_nested(datasets)
        local = fsutil.is_local(target_fs)
        refuse_overlap([finder.url(d.root) for d in datasets],
                       publish_root if local else target_fs.unstrip_protocol(publish_root), local)
        destinations: dict[str, str] = {}  # destination -> source, across the datasets of this run
        for dataset in datasets:
            planned, snapshot = self._plan(finder, dataset, previous.get(dataset.urn, []), target_fs, publish_root)
            for entry in planned:
                other = destinations.setdefault(entry.destination, entry.source)
                if other != entry.source:
                    raise GobblinPyError(f"{entry.source} and {other} would both be copied to "
                                         f"{posixpath.join(publish_root, entry.destination)}; nothing was copied")
            if settings.simulate:
                for entry in planned:
                    log.info("copy_simulated", dataset=dataset.urn, source=entry.source,
                             destination=posixpath.join(publish_root, entry.destination), size=entry.size)
                continue
            groups = pack(planned, settings.bin_size, settings.bin_files)
            extract = Extract.create("SNAPSHOT_ONLY", NAMESPACE, dataset.urn.replace(":", "_"))
            # what the finder registers after the files are published (a Hive table), on each unit
            registration = finder.registration(dataset) if hasattr(finder, "registration") else None
            for index, group in enumerate(groups):
                unit = WorkUnit.create(extract)
                unit.set_prop("dataset.urn", dataset.urn)
                if registration is not None:
                    unit.set_prop(REGISTRATION_KEY, registration)
                unit.set_prop(FILES_KEY, descriptor.to_json(group))
                if index == 0:
                    unit.set_prop(SNAPSHOT_KEY, json.dumps(snapshot, separators=(",", ":")))
                units.append(unit)
            log.info("copy_planned", dataset=dataset.urn, files=len(planned), work_units=len(groups))
        if settings.simulate:
            log.info("copy_simulate_only", note="gobblin.copy.simulate=true: nothing is copied")
            return []
        return units

    def _plan(self, finder, dataset: CopyDataset, previous: list[WorkUnitState], target_fs,
              publish_root: str) -> tuple[list[FileCopy], dict[str, list[int]]]:
        """The files of ``dataset`` to copy now, and the record of those copied before that are still there."""
        listed = finder.list_files(dataset)
        copied = copied_before(previous)
        target = contained_join(publish_root, dataset.target, what=f"the destination folder of dataset {dataset.urn}")
        at_destination = {} if _leads_out(target_fs, publish_root, target) else {
            posixpath.relpath(f.path, publish_root): f for f in list_files(target_fs, target)}
        planned = []
        for item in listed:
            destination = dataset.destination(item.path)
            if copied.get(destination) == [item.size, item.mtime_ms]:
                continue
            existing = at_destination.get(destination)
            if existing is not None:
                if existing.size == item.size and item.mtime_ms <= existing.mtime_ms:
                    continue  # the same file is there (Gobblin's rule)
                raise GobblinPyError(
                    f"dataset {dataset.urn}: {item.path} ({item.size} bytes) differs from "
                    f"{existing.path} ({existing.size} bytes) already at its destination; gpy never overwrites a "
                    "published file (gobblin.copy.recursive.update is not supported): move one of them away")
            planned.append(FileCopy(finder.url(item.path), destination, item.size, item.mtime_ms))
        still_there = {dataset.destination(item.path) for item in listed}
        return planned, {d: v for d, v in sorted(copied.items()) if d in still_there}

    def get_extractor(self, state: WorkUnitState) -> Extractor:
        return CopyExtractor(state)


class CopyExtractor(Extractor):
    """The descriptors of a work unit's files, as record batches (the writers read the files themselves)."""

    def __init__(self, state: WorkUnitState) -> None:
        self.files = descriptor.from_json(state.get_prop(FILES_KEY))

    def get_schema(self):
        return descriptor.SCHEMA

    def read_batches(self):
        yield from descriptor.batches(self.files)

    def get_expected_record_count(self) -> int:
        return len(self.files)


def _overlap_problems(props: Mapping[str, str]) -> list[ConfigError]:
    """The final dir inside the datasets of gobblin.dataset.pattern, or holding them, when the keys tell."""
    pattern, final_dir = props.get("gobblin.dataset.pattern"), props.get(FINAL_KEY)
    if not pattern or not final_dir or CopySettings.problems(props) or GlobFinderSettings.problems(props):
        return []  # their own problems are reported
    settings, finder = CopySettings.load(props), GlobFinderSettings.load(props)
    if not issubclass(resolve_class(settings.finder, FINDER_KEY), CopyableGlobDatasetFinder):
        return []  # another finder's datasets are not the pattern's (a Hive table's folder is checked when planned)
    problem = config_overlap(finder.pattern, finder.fs_uri, settings.final_dir,
                             settings.publisher_fs_uri or settings.writer_fs_uri)
    return [problem_at(props, FINAL_KEY, problem, HINT)] if problem else []


def _leads_out(fs, root: str, path: str) -> bool:
    """Whether ``path`` leaves ``root`` through a symbolic link on local disk: what is there is not the
    dataset's (everything is planned, and the publisher refuses the dataset naming the link)."""
    if not fsutil.is_local(fs) or not os.path.lexists(root):
        return False
    try:
        check_no_symlink_escape(root, path)
    except PathEscapeError:
        return True
    return False


def _refuse_nested(datasets: list[CopyDataset]) -> None:
    """Refuse datasets of which one lies inside another (``**`` patterns): both would copy the same files."""
    roots = sorted((d.root.rstrip("/") + "/", d) for d in datasets)
    for (outer, a), (inner, b) in zip(roots, roots[1:], strict=False):  # each root with the next: one pair fewer
        if inner.startswith(outer):
            raise ConfigError(f"dataset {b.root} lies inside dataset {a.root}: both would copy its files",
                              key="gobblin.dataset.pattern",
                              hint="make the pattern match folders that do not contain one another")
