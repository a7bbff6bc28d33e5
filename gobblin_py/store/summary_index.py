"""A one-line summary of each dataset's latest state, and the index file that makes it fast on large stores.

``<state.store.dir>/<job>/_gpy_state_index.json`` keeps, per ``current`` file, the file's fingerprint (size,
modification time and inode on local disk; size, time and ETag on object stores) and the summary line read
from it. It is an extra file, never the source of truth: the ``.jst`` SequenceFiles are. Every use lists the job
folder and re-reads each ``current`` file whose fingerprint differs from (or is missing in) the index, so a
stale, partial or deleted index only costs time; a corrupt one is reported and rebuilt. The leading ``_``
keeps it out of Gobblin's and Hadoop's listings, as it is out of gpy's own. A run of a job with more than
``SUMMARY_ABOVE`` datasets (or one that has an index already) updates it once, after its datasets committed;
``gpy state show`` rewrites it when it found entries to refresh.
"""

from __future__ import annotations

import json
import os
import posixpath
from dataclasses import dataclass, field
from typing import Any

from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.sdk.states import DEFAULT_DATASET_URN
from gobblin_py.store.progress import completeness
from gobblin_py.store.report import RECORDS_WRITTEN_KEY, iso_time, task_summary, watermark_text
from gobblin_py.store.store import CURRENT, TABLE_SUFFIX, FsDatasetStateStore

log = get_logger(__name__)

INDEX_FILE = "_gpy_state_index.json"
FORMAT = "gpy-state-index"
VERSION = 2  # 2: each line carries the completeness watermark (complete_ms)
_CURRENT_SUFFIX = f"{CURRENT}{TABLE_SUFFIX}"
_WATERMARK_WIDTH = 48
SUMMARY_ABOVE = 20  # more datasets than this: state show summarises, and runs keep an index for it


def dataset_line(state: DatasetState) -> dict[str, Any]:
    """The summary of a dataset's latest state: URN, run, state, end time, records written, actual high watermark,
    completeness watermark."""
    tasks = state.all_task_states()
    written = [int(t.get_prop(RECORDS_WRITTEN_KEY)) for t in tasks if (t.get_prop(RECORDS_WRITTEN_KEY) or "").isdigit()]
    highs = sorted({watermark_text(task_summary(t)["actual_high_watermark"]) for t in tasks} - {"-"})
    watermark = ",".join(highs) or "-"
    if len(watermark) > _WATERMARK_WIDTH:
        watermark = f"{len(highs)} values: {highs[0]} … {highs[-1]}"
    return {"urn": state.dataset_urn, "job_id": state.job_id, "state": state.state.value, "end_ms": state.end_time,
            "end_time": iso_time(state.end_time), "records": sum(written) if written else None, "watermark": watermark,
            "complete_ms": completeness(state)}


def _fingerprint(entry: dict[str, Any]) -> list | None:
    """What changes whenever a file is rewritten (every state write is a new file renamed into place)."""
    when = entry.get("mtime") or entry.get("LastModified") or entry.get("last_modified")
    tag = entry.get("ino") or entry.get("ETag") or entry.get("etag")
    if when is None and tag is None:
        return None  # nothing to tell a rewrite of the same size apart: never trust an entry
    return [entry.get("size"), str(when), str(tag)]


def current_files(store: FsDatasetStateStore, job_name: str) -> dict[str, list | None]:
    """Each ``current`` file of the job with its fingerprint, from one listing of the job folder."""
    directory = store.job_dir(job_name)
    found: dict[str, list | None] = {}
    if fsutil.is_local(store.fs):
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.name.endswith(_CURRENT_SUFFIX) and not entry.name.startswith((".", "_")):
                        stat = entry.stat()
                        found[entry.name] = [stat.st_size, str(stat.st_mtime_ns), str(stat.st_ino)]
        except FileNotFoundError:
            pass
        return found
    try:
        listing = store.fs.ls(directory, detail=True)
    except FileNotFoundError:
        return found
    for entry in listing:
        name = posixpath.basename(entry["name"].rstrip("/"))
        if entry.get("type") != "directory" and name.endswith(_CURRENT_SUFFIX) and not name.startswith((".", "_")):
            found[name] = _fingerprint(entry)
    return found


@dataclass
class Summary:
    """The summary lines of one job, newest first, and what was learnt about its index on the way."""

    job: str
    lines: list[dict[str, Any]]
    refreshed: int = 0  # current files read because the index had no fresh entry for them
    problems: list[str] = field(default_factory=list)  # a corrupt index, said to the user


_LINE_KEYS: dict[str, type | tuple[type, ...]] = {"urn": str, "job_id": str, "state": str, "end_ms": int, "end_time": (str, type(None)),
              "records": (int, type(None)), "watermark": str, "complete_ms": (int, type(None))}


def _well_formed(entry: Any) -> bool:
    if not (isinstance(entry, dict) and isinstance(entry.get("fp"), list) and isinstance(entry.get("line"), dict)):
        return False
    line = entry["line"]
    return all(key in line and isinstance(line[key], kind) for key, kind in _LINE_KEYS.items())


class StateIndex:
    """The index file of one job's folder in a store."""

    def __init__(self, store: FsDatasetStateStore, job_name: str) -> None:
        self.store = store
        self.job_name = job_name
        self.path = posixpath.join(store.job_dir(job_name), INDEX_FILE)

    def load(self) -> tuple[dict[str, dict[str, Any]], str | None]:
        """The entries by file name, and why the file was unusable (None if it was fine or absent)."""
        try:
            data = self.store.fs.cat_file(self.path)
        except FileNotFoundError:
            return {}, None
        try:
            index = json.loads(data.decode("utf-8"))
            if not isinstance(index, dict) or index.get("format") != FORMAT:
                raise ValueError("not a gpy state index")
            if index.get("version") != VERSION:
                return {}, None  # another version's index: rebuilt without complaint
            tables = index["tables"]
            if not isinstance(tables, dict) or not all(_well_formed(v) for v in tables.values()):
                raise ValueError("its entries are malformed")
            return tables, None
        except (ValueError, KeyError, UnicodeDecodeError) as exc:
            return {}, str(exc)

    def save(self, tables: dict[str, dict[str, Any]]) -> None:
        """Write the index; a store gpy cannot write to (read-only access) just stays without one."""
        data = json.dumps({"format": FORMAT, "version": VERSION, "job": self.job_name, "tables": tables},
                          separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        try:
            fsutil.atomic_write(self.store.fs, self.path, data)
        except OSError as exc:
            log.debug("state_index_not_written", path=self.store.display_path(self.path), error=str(exc))

    def summary(self) -> Summary:
        """Every dataset's summary line, newest first: from the index where it is fresh, else from its file."""
        files = current_files(self.store, self.job_name)  # listed before any file is read: see record()
        tables, problem = self.load()
        result = Summary(self.job_name, [])
        if problem:
            result.problems.append(f"{self.store.display_path(self.path)}: the state index is corrupt ({problem}); "
                                   "the summary was read from the state files and the index rebuilt")
        fresh: dict[str, dict[str, Any]] = {}
        for name, fingerprint in files.items():
            entry = tables.get(name)
            if fingerprint is not None and entry is not None and entry["fp"] == fingerprint:
                fresh[name] = entry
                continue
            records = self.store.read_table(self.job_name, name)
            if not records:
                continue
            fresh[name] = {"fp": fingerprint, "line": dataset_line(records[0][1])}
            result.refreshed += 1
        if result.refreshed or problem or set(tables) != set(fresh):
            self.save({name: entry for name, entry in fresh.items() if entry["fp"] is not None})
        lines = [entry["line"] for entry in fresh.values()]
        if len(lines) > 1:  # a legacy job-level current.jst is ignored once per-dataset files exist (as the store does)
            lines = [line for line in lines if line["urn"] != DEFAULT_DATASET_URN]
        result.lines = sorted(lines, key=lambda line: (-(line["end_ms"] or 0), line["urn"]))
        return result

    def record(self, states: dict[str, DatasetState]) -> None:
        """After a run's commits: the summaries of the datasets it saved, with their files' fingerprints.

        The fingerprint is taken after the run wrote the file, under the job's lock (no other run rewrites it
        in between); any later rewrite changes the fingerprint, so the entry is then re-read, never believed.
        """
        try:
            self._record(states)
        except OSError as exc:  # the index is only a shortcut: the run's state is saved already
            log.warning("state_index_not_updated", path=self.store.display_path(self.path), error=str(exc))

    def _record(self, states: dict[str, DatasetState]) -> None:
        files = current_files(self.store, self.job_name)
        if len(files) <= SUMMARY_ABOVE and not self.store.fs.exists(self.path):
            return  # a store of few datasets is shown in full detail: it needs no index
        tables, _ = self.load()
        for urn, state in states.items():
            name = self.store.current_table_name(urn)
            if files.get(name) is not None:
                tables[name] = {"fp": files[name], "line": dataset_line(state)}
        self.save({name: entry for name, entry in tables.items() if name in files})


def render_summary(summaries: list[Summary], store_url: str) -> str:
    """One line per dataset, newest first, under a heading per job."""
    from gobblin_py.store.report import _table

    if not any(s.lines for s in summaries):
        return f"no dataset state in {store_url}"
    out: list[str] = []
    for summary in summaries:
        if not summary.lines:
            continue
        out.append(f"job {summary.job}: {len(summary.lines)} datasets, newest first "
                   "(--dataset URN or --json for the full detail)")
        rows = [[line["urn"] or '"" (default)', line["state"], line["end_time"] or "-",
                 "-" if line["records"] is None else str(line["records"]), line["watermark"]]
                for line in summary.lines]
        out += _table(["dataset", "state", "last run", "records", "watermark"], rows, indent="  ")
        out.append("")
    return "\n".join(out).rstrip()
