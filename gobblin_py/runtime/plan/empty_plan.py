"""A run that plans no work unit says why: the source's own explanation (``ExplainsEmptyPlan``) in the run summary
and history; finding nothing at all to pull is a warning on a job's first run, and fails the run under
``job.fail.on.empty`` (exit code 4).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gobblin_py.runtime.commit.history import NOTHING_NEW
from gobblin_py.sdk.contracts import EmptyPlan, ExplainsEmptyPlan, Source, supports
from gobblin_py.sdk.errors import NothingToPull
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)


@dataclass
class EmptyRun:
    """What a run that planned nothing reports: its message and its warnings."""

    message: str
    warnings: list[str] = field(default_factory=list)


def explain(source: Source, source_name: str, first_run: bool) -> EmptyPlan | None:
    """The source's explanation of its empty plan; on a job's first run, a source that gives none found nothing
    (there is nothing it could have pulled before)."""
    plan = None
    if supports(source, ExplainsEmptyPlan):
        try:
            plan = source.explain_empty_plan()  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 - an explanation that fails leaves the run as it was
            log.warning("empty_plan_not_explained", source=source_name, error=f"{type(exc).__name__}: {exc}")
        if not isinstance(plan, EmptyPlan):
            plan = None
    if plan is None and first_run:
        plan = EmptyPlan(f"source.class={source_name} planned no work unit (it does not say why)", nothing_found=True)
    return plan


def empty_run(plan: EmptyPlan | None, job: str, job_id: str, first_run: bool, fail_on_empty: bool) -> EmptyRun:
    """The message and warnings of a run that planned nothing; raises :class:`NothingToPull` when the job fails
    on finding nothing at all."""
    if plan is None:
        log.info("job_nothing_to_do", job=job, job_id=job_id)
        return EmptyRun(NOTHING_NEW)
    if plan.nothing_found and fail_on_empty:
        log.error("job_found_nothing", job=job, job_id=job_id, reason=plan.reason, fails="job.fail.on.empty=true")
        raise NothingToPull(f"found nothing to pull: {plan.reason} (job.fail.on.empty=true)")
    run = EmptyRun(f"{NOTHING_NEW}: {plan.reason}")
    if plan.nothing_found and first_run:
        log.warning("job_found_nothing", job=job, job_id=job_id, reason=plan.reason, first_run=True)
        run.warnings.append("the job's first run found nothing at all to pull (job.fail.on.empty=true makes this "
                            "an error)")
    else:
        log.info("job_nothing_to_do", job=job, job_id=job_id, reason=plan.reason)
    return run
