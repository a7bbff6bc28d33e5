"""An optional ability of a Source: the keys its jobs need that a job file of its kind does not set."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable


@runtime_checkable
class ImpliesJobKeys(Protocol):
    """A Source whose jobs imply keys (Gobblin's compaction job runs its own writer and publisher, and its ``.pull``
    names neither): ``job_defaults`` returns them; a key the job, its ``.properties`` or the system configuration
    set always wins."""

    @classmethod
    def job_defaults(cls, props: Mapping[str, str]) -> dict[str, str]: ...
