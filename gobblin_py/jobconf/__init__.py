"""Gobblin-compatible job configuration: Java-properties and HOCON job files, global-file inheritance,
system configuration, templates and per-branch key names.

Typical use::

    from gobblin_py.jobconf import load_job, load_jobs, ConfigError

    job = load_job("jobs/wikipedia.pull", conf_root="jobs", sysconfig="conf/gobblin.properties")
    job.get("job.name"); job.get_int("task.maxretries", 5); job.get_list("converter.classes")

    for result in load_jobs(["jobs/"]):
        print(result.path, "ok" if result.ok else result.error)
"""

from gobblin_py.sdk.branches import (
    branch_key,
    branch_name,
    fork_id,
    fork_key,
    get_branch_prop,
    path_for_branch,
    state_branch_key,
)
from gobblin_py.sdk.config_errors import ConfigError

from . import unported  # noqa: F401  (registers the hints for Gobblin classes gpy lacks)
from .loader import (
    DEFAULT_SYSCONFIG,
    JobConfig,
    LoadResult,
    discover_job_files,
    find_sysconfig,
    load_job,
    load_jobs,
    load_sysconfig,
)

__all__ = [
    "ConfigError",
    "JobConfig",
    "LoadResult",
    "load_job",
    "load_jobs",
    "load_sysconfig",
    "find_sysconfig",
    "DEFAULT_SYSCONFIG",
    "discover_job_files",
    "branch_key",
    "fork_key",
    "state_branch_key",
    "path_for_branch",
    "branch_name",
    "get_branch_prop",
    "fork_id",
]
