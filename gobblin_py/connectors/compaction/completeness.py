"""Completeness before compaction (Gobblin's ``compaction.completeness.verification.*``): a time folder never
compacted is compacted only once the ingestion job that writes it is complete past the folder's end.

Gobblin asks an audit-count verifier; gpy asks its own completeness clock, the one ``gpy state watermark --at``
reads: the completeness watermark the ingestion job keeps per dataset in its state store (every record with an
earlier event time is committed). ``compaction.completeness.verification.job.name`` and ``.state.store.dir`` name
that job and its store; ``.dataset.urn`` which of its datasets answers for a compaction dataset. An hour folder
``…/2024/05/01/13`` is complete once the watermark is at or past 14:00.

As in Gobblin, only datasets never compacted are verified (late data of a compacted one is handled as always),
and only those ``.whitelist`` / ``.blacklist`` let through. An incomplete one is skipped, and compacted by a later
run once complete, unless ``.publish.data.if.cannot.verify=true`` compacts it all the same; either way the run
logs it by name. A clock that cannot answer (no store, no state for the job, a file that does not decode) is a
configuration error naming the key and the folder, before any work: never a silent skip.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from gobblin_py.connectors.compaction.finder import Dataset
from gobblin_py.connectors.compaction.plan import Action
from gobblin_py.connectors.compaction.settings import VERIFY_JOB_KEY, VERIFY_STORE_KEY, CompactionSettings
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.store import FsDatasetStateStore, progress
from gobblin_py.store.report import iso_time

log = get_logger(__name__)


@dataclass(frozen=True)
class Verdict:
    """What the clock says of one dataset: the ingestion dataset asked (``urn``), the time it must be complete up
    to (``end_ms``) and its watermark (``clock_ms``, None when the dataset has no event time committed yet)."""

    urn: str
    end_ms: int
    clock_ms: int | None

    @property
    def complete(self) -> bool:
        return self.clock_ms is not None and self.clock_ms >= self.end_ms


def _text(ms: int | None) -> str:
    return (iso_time(ms) or str(ms)) if ms is not None else "none yet"


class CompletenessClock:
    """The completeness watermarks of the ingestion job's datasets, read once from its state store."""

    def __init__(self, settings: CompactionSettings, watermarks: Mapping[str, int | None]) -> None:
        self.settings = settings
        self.watermarks = dict(watermarks)

    @classmethod
    def read(cls, settings: CompactionSettings) -> CompletenessClock:
        """The clock of the job the settings name; ConfigError naming the key and folder when it cannot answer."""
        job, folder = (settings.verify_job or "").strip(), (settings.verify_store or "").strip()

        def refused(problem: str) -> ConfigError:
            return ConfigError(f"{problem}: the completeness clock of job {job!r} cannot answer", key=VERIFY_STORE_KEY,
                               hint=f"name the ingestion job's state.store.dir there and its job.name in "
                                    f"{VERIFY_JOB_KEY}")

        try:
            store = FsDatasetStateStore.from_properties({"state.store.dir": folder})
            if not store.fs.isdir(store.root):
                raise refused(f"{folder} is no folder")
            if not store.fs.isdir(store.job_dir(job)) or not store.current_tables(job):
                raise refused(f"{folder} holds no state for job {job!r} ({posixpath.join(folder, job)} has no "
                              "committed run)")
            states = store.get_latest_dataset_states_by_urns(job)
        except ConfigError:
            raise
        except (GobblinPyError, OSError) as exc:
            raise refused(f"{folder}: {exc}") from None
        return cls(settings, {urn: progress.completeness(state) for urn, state in states.items()})

    def urn_of(self, dataset: Dataset) -> str:
        """The ingestion job's dataset that answers for ``dataset`` (``.dataset.urn``, its placeholders filled)."""
        return self.settings.verify_urn.format(name=dataset.name, table=dataset.name.rsplit("/", 1)[-1])

    def verdict(self, dataset: Dataset) -> Verdict | None:
        """The clock's answer for a time folder; None for a dataset without a time window."""
        if dataset.end_ms is None:
            return None
        urn = self.urn_of(dataset)
        return Verdict(urn, dataset.end_ms, self.watermarks.get(urn))


@dataclass
class CompletenessGate:
    """Lets through the planned actions whose time folder is complete (see the module), logging each one that is
    not; ``skipped`` and ``anyway`` name the datasets skipped and those compacted incomplete."""

    settings: CompactionSettings
    clock: CompletenessClock
    skipped: list[str] = field(default_factory=list)
    anyway: list[str] = field(default_factory=list)

    @classmethod
    def open(cls, settings: CompactionSettings) -> CompletenessGate | None:
        """The gate of a job that verifies completeness (its clock read now), None for one that does not."""
        return cls(settings, CompletenessClock.read(settings)) if settings.completeness else None

    def _verified(self, name: str) -> bool:
        s = self.settings
        if any(re.fullmatch(p, name) for p in s.verify_blacklist):
            return False
        return not s.verify_whitelist or any(re.fullmatch(p, name) for p in s.verify_whitelist)

    def admits(self, action: Action) -> bool:
        """Whether the run compacts ``action``'s dataset now."""
        dataset = action.dataset
        if not action.first or not self._verified(dataset.name):
            return True
        verdict = self.clock.verdict(dataset)
        if verdict is None or verdict.complete:
            return True
        fields = {"dataset": dataset.urn, "time": dataset.time, "complete_up_to_needed": _text(verdict.end_ms),
                  "clock": _text(verdict.clock_ms), "ingestion_job": self.settings.verify_job,
                  "ingestion_dataset": verdict.urn}
        if verdict.urn not in self.clock.watermarks:
            fields["note"] = "the ingestion job has no state for this dataset"
        if self.settings.verify_anyway:
            self.anyway.append(dataset.urn)
            log.warning("compaction_incomplete_compacted_anyway", **fields,
                        reason="compaction.completeness.verification.publish.data.if.cannot.verify=true")
            return True
        self.skipped.append(dataset.urn)
        log.warning("compaction_incomplete_skipped", **fields, reason="not complete yet: a later run compacts it")
        return False

    def report(self) -> None:
        """One line for the run's log naming every dataset skipped or compacted incomplete."""
        if self.skipped:
            log.warning("compaction_incomplete_datasets_skipped", count=len(self.skipped), datasets=self.skipped)
        if self.anyway:
            log.warning("compaction_incomplete_datasets_compacted", count=len(self.anyway), datasets=self.anyway)
