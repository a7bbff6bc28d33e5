"""Job loading with the semantics of Gobblin's ``PullFileLoader`` + ``SchedulerUtils`` (spec §1.2-§1.4, §1.11-§1.13).

For one job file ``F`` under a configuration root ``R``:

1. system config (Java properties; a later file overrides an earlier one; ``jobconf.dir`` gives
   ``jobconf.fullyQualifiedPath``) -> lowest-priority fallback;
2. at most one ``.properties`` (Java props) or ``.configuration`` (HOCON) global file per folder, from ``R``
   down to ``F``'s folder, each one over the previous fallback (``property.parsing.enablekey`` for a Java
   props file is read from the fallback below it);
3. the job file itself (``jobconf.extensions``, default ``pull,job`` -> Java props; ``conf``/``json`` ->
   HOCON), with ``job.config.path`` injected at the top of every loaded file;
4. ``resolve()`` over the merged tree (HOCON substitutions see everything, environment variables are
   the last fallback), flattening to properties;
5. ``job.template`` (then ``gobblin.template.uri``/``gobblin.template.uris``): user props over the template
   over its super templates, required attributes enforced.

Precedence: job file > nearest global > ... > root global > system config; user job > template > later
super templates > earlier super templates.

Deliberate differences from Gobblin: every failure becomes a :class:`ConfigError` naming the file and the
line or key, and a recursive load records it per file (:class:`LoadResult`) and carries on (Gobblin skips
``IOException``s but aborts the whole load on ``RuntimeException``s such as an unresolved substitution);
``gobblin.template.required_attributes`` is enforced (Gobblin only reports it); a line without a
separator is reported instead of producing an empty key.

Modules: :mod:`.job_config` (results), :mod:`.job_files` (classification, discovery), :mod:`.sysconfig`,
:mod:`.levels` (one file over the levels below it), :mod:`.chains` (global files), :mod:`.session` (one
load call and the entry points).
"""

from .job_config import JobConfig, LoadResult
from .job_files import classify, discover_job_files
from .session import load_job, load_jobs
from .sysconfig import DEFAULT_SYSCONFIG, find_sysconfig, load_sysconfig

__all__ = [
    "JobConfig",
    "LoadResult",
    "load_job",
    "load_jobs",
    "load_sysconfig",
    "find_sysconfig",
    "DEFAULT_SYSCONFIG",
    "discover_job_files",
    "classify",
]
