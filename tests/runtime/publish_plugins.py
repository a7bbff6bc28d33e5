"""A publisher that loses one of the files it publishes, to show that publishing is verified, not assumed."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import pyarrow.parquet as pq

from gobblin_py.connectors.files.publisher import BaseDataPublisher
from gobblin_py.io.rename_step import FsRenameStep
from gobblin_py.sdk.commit import CommitStep, step_class_path


@dataclass
class DamagePublishedFile(CommitStep):
    """Once the files are moved: removes ``path`` (``vanish``), or replaces it by a new file (``truncate``) or
    rewrites it in place (``rewrite``) with its first row only."""

    path: str
    how: str
    kind: str = "test_damage_published_file"

    def is_completed(self) -> bool:
        return False

    def execute(self, fresh: bool = False) -> None:
        if not os.path.exists(self.path):
            return
        if self.how == "vanish":
            os.unlink(self.path)
        elif self.how == "rewrite":  # the very file the move published (its inode) rewritten with one row
            table = pq.read_table(self.path)
            pq.write_table(table.slice(0, 1), self.path)
        else:
            table = pq.read_table(self.path)
            os.unlink(self.path)  # a new file: the moved one may still share its data with its source
            pq.write_table(table.slice(0, 1), self.path)

    def to_json(self) -> dict[str, Any]:
        return {"class": step_class_path(self), "kind": self.kind, "path": self.path, "how": self.how}

    @classmethod
    def from_json(cls, item: dict[str, Any], props: dict[str, str]) -> "DamagePublishedFile":
        return cls(item["path"], item["how"])


class DamagingPublisher(BaseDataPublisher):
    """BaseDataPublisher that loses its first file as ``test.publish.damage`` says: ``unplanned`` (left out of its
    plan, so it is never moved), ``vanish`` (removed once moved), ``truncate`` (replaced by a file of its first row
    once moved) or ``rewrite`` (the same, in place)."""

    def plan(self, task_states, allow_replace=False):
        steps = super().plan(task_states, allow_replace)
        renames = [step for step in steps if isinstance(step, FsRenameStep)]
        if not renames:
            return steps
        how = self.job_props["test.publish.damage"]
        if how == "unplanned":
            return [step for step in steps if step is not renames[0]]
        return [*steps, DamagePublishedFile(renames[0].dst, how)]
