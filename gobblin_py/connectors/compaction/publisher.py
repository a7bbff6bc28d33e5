"""``CompactionPublisher``: a dataset's compaction committed exactly once, through the runtime's commit log.

For a compacted dataset the steps are: swap the new output in for the destination, remove the late folder a
recompaction consumed, write the marker; for a dataset whose late files are set aside: copy each into the late
folder (a name already there gets ``.late<n>`` before its extension, as Gobblin's LateFileRecordCountProvider
does), then rewrite the marker. In rename mode the files read move to ``<folder>_COMPLETE`` instead of a marker. The runtime logs the steps with the dataset's state before running any, so a run
killed mid-commit is finished by the next (:mod:`.steps`).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Sequence

from gobblin_py.connectors.compaction.plan import COMPACT, LATE_COPY
from gobblin_py.connectors.compaction.steps import (
    CopyFileStep,
    MarkCompleteStep,
    MarkerStep,
    RemoveFolderStep,
    SwapFolderStep,
)
from gobblin_py.connectors.compaction.unit_keys import (
    CONSUME_KEY,
    DEST_KEY,
    FILES_KEY,
    LATE_TARGET_KEY,
    MARK_COMPLETE_KEY,
    MARKER_KEY,
    MODE_KEY,
    NEW_KEY,
    OLD_KEY,
    decode_files,
)
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.commit import CommitStep
from gobblin_py.sdk.contracts import DataPublisher
from gobblin_py.sdk.states import TaskState, WorkingState


def late_name(taken: set[str], name: str) -> str:
    """``name``, or with ``.late<n>`` before its extension when ``taken`` has it."""
    if name not in taken:
        return name
    stem, dot, ext = name.rpartition(".")
    stem, ext = (stem, f".{ext}") if dot else (name, "")
    n = 1
    while f"{stem}.late{n}{ext}" in taken:
        n += 1
    return f"{stem}.late{n}{ext}"


class CompactionPublisher(DataPublisher):
    """Publishes each compacted dataset (see the module); used by compaction jobs without being named."""

    def init(self, job_props: dict[str, str]) -> None:
        self.job_props = job_props
        self.final_dirs: list[str] = []

    def plan(self, task_states: Sequence[TaskState]) -> list[CommitStep]:
        steps: list[CommitStep] = []
        self.final_dirs = []
        for task in task_states:
            if task.working_state is not WorkingState.SUCCESSFUL:
                continue
            dest = task.get_prop(DEST_KEY)
            mode = task.get_prop(MODE_KEY)
            if mode == COMPACT:
                steps.append(SwapFolderStep(task.get_prop(NEW_KEY), dest, task.get_prop(OLD_KEY)))
                if task.get_prop(CONSUME_KEY):
                    steps.append(RemoveFolderStep(task.get_prop(CONSUME_KEY)))
            elif mode == LATE_COPY:
                target = task.get_prop(LATE_TARGET_KEY)
                fs, root = fsutil.open_fs(target)
                taken = set(fs.ls(root, detail=False)) if fs.exists(root) else set()
                taken = {posixpath.basename(p.rstrip("/")) for p in taken}
                for f in decode_files(task.get_prop(FILES_KEY)):
                    name = late_name(taken, posixpath.basename(f.path))
                    taken.add(name)
                    steps.append(CopyFileStep(f.path, posixpath.join(target, name), f.size))
            else:
                continue
            for folder, names in sorted(json.loads(task.get_prop(MARK_COMPLETE_KEY) or "{}").items()):
                steps.append(MarkCompleteStep(folder, names))
            if int(task.get_prop(MARKER_KEY) or 0):
                steps.append(MarkerStep(dest, int(task.get_prop(MARKER_KEY))))
            self.final_dirs.append(dest)
        return steps

    def publish(self, task_states: Sequence[TaskState]) -> list[str]:
        """Plan the steps and make them (at least once: used without a commit log)."""
        for step in self.plan(task_states):
            step.execute(fresh=True)
        return list(self.final_dirs)
