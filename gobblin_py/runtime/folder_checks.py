"""Checks across a job's folder and naming keys, made before any work (``gpy validate`` and the start of a run).

Each key may be fine on its own while two together lose data: a fixed ``job.id`` under exactly-once commits.
"""

from __future__ import annotations

from collections.abc import Mapping

from gobblin_py.config.errors import ConfigError
from gobblin_py.config.settings import problem_at
from gobblin_py.runtime.commit_sequence import EXACTLY_ONCE, SEMANTICS_KEY


def folder_problems(props: Mapping[str, str]) -> list[ConfigError]:
    """Every problem of the job's folder and naming keys taken together."""
    problems: list[ConfigError] = []
    semantics = (props.get(SEMANTICS_KEY) or EXACTLY_ONCE).strip().upper()
    if props.get("job.id") and semantics == EXACTLY_ONCE:
        problems.append(problem_at(props, "job.id", "is set: with exactly-once commits every run needs its own id "
                                   "(job_<name>_<millis>)", f"remove job.id, or set {SEMANTICS_KEY}=AT_LEAST_ONCE"))
    return problems
