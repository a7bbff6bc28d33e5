"""Keys a job's Source implies: a Source class with ``job_defaults(props) -> dict`` (a class method) names the
keys its jobs need and a Gobblin job file of its kind does not set (Gobblin's compaction job runs its own writer
and publisher; its ``.pull`` names neither). A key the job, its ``.properties`` files or the system configuration
set always wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gobblin_py.jobconf import JobConfig
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.implied_keys import ImpliesJobKeys
from gobblin_py.sdk.plugins import resolve_class


def with_source_defaults(props: Mapping[str, str]) -> Any:
    """``props`` with the keys its Source implies where it sets none (the same mapping when there are none; a
    :class:`~gobblin_py.jobconf.JobConfig` stays one, keeping where each of its own keys was set)."""
    name = (props.get("source.class") or "").strip()
    if not name:
        return props
    try:
        cls = resolve_class(name, "source.class")
    except UsageError:
        return props  # reported by the job's checks
    if not (isinstance(cls, type) and issubclass(cls, ImpliesJobKeys)):
        return props
    missing = {key: value for key, value in cls.job_defaults(props).items() if key not in props}
    if not missing:
        return props
    return props.with_defaults(missing) if isinstance(props, JobConfig) else {**missing, **props}
