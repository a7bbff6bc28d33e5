"""The commit step that consumes startpoints: part of a dataset's commit sequence, so exactly-once covers it.

The run that planned a dataset from startpoints removes exactly those (by id) when the dataset commits; a
startpoint set while the run was going stays for the next run, and a run that fails or crashes before its commit
keeps them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gobblin_py.sdk.commit import CommitStep, step_class_path
from gobblin_py.store.startpoints import StartpointStore


@dataclass
class StartpointsConsumedStep(CommitStep):
    """Remove the startpoints of one dataset that this commit's work units were planned from."""

    root: str
    fs_uri: str | None
    job: str
    urn: str
    ids: list[str] = field(default_factory=list)
    kind: str = "startpoints_consumed"

    def _store(self) -> StartpointStore:
        return StartpointStore(self.root, self.fs_uri)

    def is_completed(self) -> bool:
        return not (self._store().get(self.job, self.urn).ids() & set(self.ids))

    def execute(self, fresh: bool = False) -> None:
        self._store().remove_ids(self.job, self.urn, set(self.ids))

    def to_json(self) -> dict[str, Any]:
        return {"class": step_class_path(self), "kind": self.kind, "root": self.root, "fs_uri": self.fs_uri,
                "job": self.job, "urn": self.urn, "ids": sorted(self.ids)}

    @classmethod
    def from_json(cls, item: dict[str, Any], props: dict[str, str]) -> StartpointsConsumedStep:
        return cls(item["root"], item.get("fs_uri"), item["job"], item["urn"], list(item["ids"]))

    def describe(self) -> str:
        return f"remove the startpoints {', '.join(self.ids)} of dataset {self.urn!r}"
