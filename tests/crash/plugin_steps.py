"""A commit step of a kind the runtime does not know, as a plugin would define one (for the tests)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from gobblin_py.sdk.commit import CommitStep, step_class_path


@dataclass
class MarkerStep(CommitStep):
    """Creates ``<marker.dir>/<name>``; the folder comes from the job's properties when rebuilt."""

    name: str
    directory: str = ""
    kind: str = "marker"

    def is_completed(self) -> bool:
        return os.path.exists(os.path.join(self.directory, self.name))

    def execute(self, fresh: bool = False) -> None:
        os.makedirs(self.directory, exist_ok=True)
        open(os.path.join(self.directory, self.name), "w").close()

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "class": step_class_path(self), "name": self.name}

    @classmethod
    def from_json(cls, data: dict[str, Any], props) -> "MarkerStep":
        return cls(data["name"], props["marker.dir"])
