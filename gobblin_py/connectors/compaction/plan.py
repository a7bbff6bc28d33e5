"""What a run does with one dataset, decided from its ``_COMPACTION_COMPLETE`` marker (Gobblin's MRCompactor):

- not compacted yet (no marker): compact its input (and its input ``_late`` folder, when there is one) into the
  output; an output folder that exists without a marker is left alone unless
  ``compaction.job.overwrite.output.dir=true`` (it is not gpy's);
- compacted, and input files newer than the marker (late files): by default copy them into the output's
  ``_late`` folder (straight into the output when ``compaction.output.deduplicated=false``); with
  ``compaction.recompact.from.input.for.late.data=true`` and ``compaction.job.overwrite.output.dir=true``
  compact the whole input again;
- ``compaction.recompact.from.dest.paths=true``: compact the output and its ``_late`` folder again when that holds
  files (the late folder is then removed), the marker keeping the newest input file's time (Gobblin's rule);
- otherwise nothing.

With ``compaction.rename.source.dir.enabled=true`` what was compacted is marked in the input instead
(:func:`_plan_marking_input`).

The marker holds the run's start time (8 bytes, big-endian epoch milliseconds, as Gobblin writes it), or the
newest file the run read when that is later (a clock skew must not make a compacted file late).
"""

from __future__ import annotations

import posixpath
import struct
from dataclasses import dataclass, field

from gobblin_py.connectors.compaction.finder import Dataset, InputFile, list_files
from gobblin_py.connectors.compaction.settings import CompactionSettings
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)

MARKER = "_COMPACTION_COMPLETE"
COMPLETE = "_COMPLETE"
COMPACT, LATE_COPY = "compact", "late"


def read_marker(fs, dest: str) -> int | None:
    """The time (epoch ms) in a destination's ``_COMPACTION_COMPLETE``, or None when it has none."""
    try:
        with fs.open(posixpath.join(dest, MARKER), "rb") as stream:
            data = stream.read()
    except FileNotFoundError:
        return None
    if len(data) != 8:
        return None
    return int(struct.unpack(">q", data)[0])


def marker_bytes(millis: int) -> bytes:
    """A marker's content: Java's ``DataOutput.writeLong``."""
    return struct.pack(">q", millis)


@dataclass
class Action:
    """What the run does with a dataset: ``compact`` ``files`` into a new output (then remove ``consume``, a
    late folder compacted with it), or ``late``: copy ``files`` into ``late_target``; ``marker_ms`` is the new
    marker's time; ``first``: the dataset was never compacted (what completeness verification looks at)."""

    dataset: Dataset
    mode: str
    files: list[InputFile]
    marker_ms: int
    late_target: str = ""
    consume: str | None = None
    mark_complete: dict[str, list[str]] = field(default_factory=dict)  # input folder -> names of files compacted
    reason: str = ""
    first: bool = False


def _newest_ms(files: list[InputFile], floor: int) -> int:
    return max([floor, *(f.mtime_ms for f in files)])


def plan_dataset(fs, dataset: Dataset, settings: CompactionSettings, init_ms: int) -> Action | None:
    """The action for one dataset, or None when it has nothing to do (see the module)."""
    if settings.rename_source:
        return _plan_marking_input(fs, dataset, settings, init_ms)
    marker = read_marker(fs, dataset.dest)
    if settings.from_dest:
        late = list_files(fs, dataset.dest_late)
        if not late:
            return None
        files = list_files(fs, dataset.dest) + late
        return Action(dataset, COMPACT, files, _newest_ms(files, 0) or init_ms, consume=dataset.dest_late,
                      reason="recompaction of the output and its late files")
    files = list_files(fs, dataset.input)
    if dataset.input_late:
        files += list_files(fs, dataset.input_late)
    if not files:
        return None
    if marker is None:
        if list_files(fs, dataset.dest) and not settings.overwrite:
            log.warning("compaction_output_exists", dataset=dataset.urn,
                        reason="the output folder holds files but no _COMPACTION_COMPLETE; set "
                               "compaction.job.overwrite.output.dir=true to replace it")
            return None
        return Action(dataset, COMPACT, files, _newest_ms(files, init_ms), reason="first compaction", first=True)
    late = [f for f in files if f.mtime_ms > marker]
    if not late:
        return None
    if settings.from_input:
        if not settings.overwrite:
            log.warning("compaction_late_data_kept", dataset=dataset.urn, late_files=len(late),
                        reason="compaction.recompact.from.input.for.late.data needs "
                               "compaction.job.overwrite.output.dir=true to replace the output")
            return None
        return Action(dataset, COMPACT, files, _newest_ms(files, init_ms), reason="recompaction for late data")
    target = dataset.dest_late if settings.output_deduplicated else dataset.dest
    return Action(dataset, LATE_COPY, late, _newest_ms(late, init_ms), late_target=target,
                  reason="late files set aside")


def _plan_marking_input(fs, dataset: Dataset, settings: CompactionSettings, init_ms: int) -> Action | None:
    """``compaction.rename.source.dir.enabled=true`` (Gobblin's rename mode): the files not yet in a
    ``<folder>_COMPLETE`` are compacted the first time, and set aside as late files once the dataset has been
    compacted (a ``_COMPLETE`` folder in its input, or an output that exists); either way they then move to
    ``<folder>_COMPLETE``, and no marker is written. Gobblin renames the folder itself: gpy moves only the files
    it read, so a file that lands meanwhile stays for the next run."""
    root = dataset.input.rstrip("/")
    everything = list_files(fs, root)
    fresh = [f for f in everything if not any(part.endswith(COMPLETE)
                                              for part in f.path[len(root):].lstrip("/").split("/")[:-1])]
    if not fresh:
        return None
    moves: dict[str, list[str]] = {}
    for f in fresh:
        moves.setdefault(posixpath.dirname(f.path), []).append(posixpath.basename(f.path))
    if len(fresh) == len(everything) and not list_files(fs, dataset.dest):
        return Action(dataset, COMPACT, fresh, 0, mark_complete=moves, reason="first compaction (rename mode)",
                      first=True)
    target = dataset.dest_late if settings.output_deduplicated else dataset.dest
    return Action(dataset, LATE_COPY, fresh, 0, late_target=target, mark_complete=moves,
                  reason="late files set aside (rename mode)")
