"""``PublisherContract``: a DataPublisher publishes each record exactly once, whatever happens to the run.

A subclass names the publisher, the keys of the writer and publisher it works with, and how to read what it
published (files under the final folder by default)::

    class TestWarehousePublisher(PublisherContract):
        publisher_class = "mypkg.WarehousePublisher"

        def publisher_props(self, workdir):
            return {"writer.builder.class": "mypkg.StagingWriterBuilder", "warehouse.table": "orders"}

        def published_keys(self, job):
            return [row[0] for row in warehouse.query("SELECT id FROM orders")]

The jobs read Parquet files of :meth:`input_batch` (keyed by ``id``) with the file source. Checked: the keys
validate; the publisher offers ``plan`` (``exactly_once``); ``plan`` changes nothing, its steps survive the commit
log's JSON, each says when it has taken effect, and running them twice publishes once; a job publishes every
record once, run after run, on each engine; under ``job.commit.policy=successful`` only the successful tasks are
published and the failed one's records come with the next run; and a run killed between any two commit steps
(SIGKILL, at every boundary in turn) is finished by the next run with every record published exactly once.
"""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pytest

from gobblin_py.runtime.commit.commit_sequence import CommitSequence
from gobblin_py.runtime.plan.validation import check_job
from gobblin_py.sdk.contracts import DataPublisher, ExactlyOncePublisher, Initializable
from gobblin_py.sdk.plugins import instantiate, resolve_class
from gobblin_py.store import FsDatasetStateStore
from gobblin_py.testing.base import Contract, add_parquet, file_source_job
from gobblin_py.testing.crash import boundary_campaign
from gobblin_py.testing.harness import ContractJob, run_tasks, successful
from gobblin_py.testing.outputs import exactly_once, keys_under
from gobblin_py.testing.plugins import FAIL_TASKS, FLAG_KEY, with_converter_first


class PublisherContract(Contract):
    """The contract of a DataPublisher."""

    #: the class as a job names it (``data.publisher.type``)
    publisher_class: ClassVar[str] = "BaseDataPublisher"
    #: the published columns that identify a record
    key_columns: ClassVar[tuple[str, ...]] = ("id",)
    #: the publisher offers ``plan`` and joins exactly-once commits (without it gpy publishes at least once)
    exactly_once: ClassVar[bool] = True
    #: batches of input before the first run (one Parquet file, one task, each)
    seed_batches: ClassVar[int] = 2
    #: at most this many commit boundaries are crashed at, one run each
    crash_limit: ClassVar[int] = 20

    # ------------------------------------------------------------------ hooks

    def publisher_props(self, workdir: Path) -> dict[str, str]:
        """The keys of the writer and the publisher (``data.publisher.type`` is added); create their target."""
        return {}

    def input_batch(self, batch: int) -> pa.RecordBatch:
        """The records of the ``batch``-th input file (``batch`` counts from 0); keyed by ``id`` by default."""
        ids = [batch * 100 + i for i in range(1, 5)]
        return pa.record_batch({"id": pa.array(ids, pa.int64()), "name": [f"name {i}" for i in ids],
                                "amount": [i * 1.25 for i in ids]})

    def published_keys(self, job: ContractJob) -> list[Hashable]:
        """The key of every record published so far (duplicates kept); default: files under the final folder."""
        return keys_under(job.final, self.key_columns)

    # ------------------------------------------------------------------ the job

    @pytest.fixture
    def publisher_job(self, tmp_path: Path, contract_env: Any) -> ContractJob:
        """A job of the file source, the suite's writer and the publisher, with ``seed_batches`` input files."""
        self.env = contract_env
        job = file_source_job(tmp_path, [], key_columns=self.key_columns,
                              **{**self.publisher_props(tmp_path), "data.publisher.type": self.publisher_class})
        for _ in range(self.seed_batches):
            self.add(job)
        return job

    def add(self, job: ContractJob) -> None:
        """One more input file; its keys join ``job.expected``."""
        add_parquet(job, self.input_batch(job.batches))

    def check(self, job: ContractJob) -> None:
        """Every record made so far published exactly once."""
        exactly_once(self.published_keys(job), job.expected)

    def publisher(self, props: dict[str, str]) -> DataPublisher:
        """A fresh publisher, ``init``-ed with ``props`` as the runtime does."""
        publisher = instantiate(self.publisher_class, "data.publisher.type", DataPublisher)
        if isinstance(publisher, Initializable):
            publisher.init(dict(props))
        return publisher  # type: ignore[return-value]

    # ------------------------------------------------------------------ the contract

    def test_is_a_publisher_whose_keys_validate(self, publisher_job: ContractJob) -> None:
        cls = resolve_class(self.publisher_class, "data.publisher.type")
        assert issubclass(cls, DataPublisher), f"{cls} is not a DataPublisher"
        check = check_job(publisher_job.props, strict=True)
        assert not check.errors, "; ".join(str(e) for e in check.errors)

    def test_offers_plan_for_exactly_once_commits(self, publisher_job: ContractJob) -> None:
        self.require(self.exactly_once, "exactly_once", "the publisher publishes at least once")
        publisher = self.publisher(publisher_job.props)  # as the runtime asks: built, then init-ed
        assert isinstance(publisher, ExactlyOncePublisher), f"{type(publisher).__name__} has no plan() and final_dirs"

    def test_plan_changes_nothing_and_its_steps_repeat_safely(self, publisher_job: ContractJob) -> None:
        self.require(self.exactly_once, "exactly_once", "the publisher publishes at least once")
        run_props, tasks = run_tasks(publisher_job)
        assert len(successful(tasks)) == len(tasks), [t.get_prop("task.failure.exception") for t in tasks]
        publisher = self.publisher(run_props)
        steps = list(publisher.plan(successful(tasks)))  # type: ignore[attr-defined]
        assert steps, "plan() returned no step for tasks that wrote records"
        assert isinstance(publisher.final_dirs, list)  # type: ignore[attr-defined]
        assert self.published_keys(publisher_job) == [], "plan() published records"
        store = FsDatasetStateStore(str(publisher_job.state_dir))
        logged = CommitSequence(publisher_job.name, "", "job_contract_1", steps).to_json()
        rebuilt = CommitSequence.from_json(logged, store, "the contract's commit log", run_props)
        assert rebuilt.to_json() == logged, "the steps change through the commit log's JSON"
        assert not any(step.is_completed() for step in rebuilt.steps), "a planned step says it has taken effect"
        for step in rebuilt.steps:
            step.execute(fresh=True)
        assert all(step.is_completed() for step in rebuilt.steps), "an executed step says it has not taken effect"
        self.check(publisher_job)
        again = CommitSequence.from_json(logged, store, "the contract's commit log", run_props)
        for step in again.steps:  # as the next run does after a crash at the last boundary
            step.execute()
        self.check(publisher_job)

    def test_a_job_publishes_every_record_once(self, publisher_job: ContractJob, engine: str,
                                               request: pytest.FixtureRequest) -> None:
        self.start_engine(request, engine)
        for _ in range(2):
            result = publisher_job.run(engine)
            assert result.exit_code == 0, [d.error for d in result.datasets]
            self.check(publisher_job)
            self.add(publisher_job)
        publisher_job.run(engine)
        self.check(publisher_job)
        again = publisher_job.run(engine)
        assert again.exit_code == 0 and sum(d.records_extracted for d in again.datasets) == 0
        self.check(publisher_job)

    def test_only_successful_tasks_are_published_under_successful(self, publisher_job: ContractJob) -> None:
        flag = publisher_job.root / "fail-task-0"
        flag.touch()
        result = publisher_job.run(**{"job.commit.policy": "successful", FLAG_KEY: str(flag),
                                      "converter.classes": with_converter_first(publisher_job.props,
                                                                                "converter.classes", FAIL_TASKS)})
        assert result.exit_code == 3, f"exit {result.exit_code}: {[d.error for d in result.datasets]}"
        published = self.published_keys(publisher_job)
        exactly_once(published, [], allow_more=True)
        assert published and set(published) < set(publisher_job.expected), "not just the successful task was published"
        flag.unlink()
        assert publisher_job.run(**{"job.commit.policy": "successful"}).exit_code == 0
        self.check(publisher_job)

    def test_a_crash_between_any_two_commit_steps_publishes_exactly_once(self, publisher_job: ContractJob) -> None:
        self.require(self.exactly_once, "exactly_once", "the publisher publishes at least once")
        campaign = boundary_campaign(publisher_job, lambda: self.published_keys(publisher_job),
                                     lambda: self.add(publisher_job), lambda: self.check(publisher_job),
                                     limit=self.crash_limit)
        kinds = {name.rsplit(":", 1)[-1] for name in campaign.killed_at}
        assert {"before_log", "logged", "done"} <= kinds, f"boundaries covered: {campaign.killed_at}"
        assert any(":step" in name for name in campaign.killed_at), f"no step boundary: {campaign.killed_at}"
