"""``SourceContract``: what every Source promises, checked on real jobs.

A subclass names its source and fills in two hooks::

    class TestOrdersSource(SourceContract):
        source_class = "mypkg.OrdersSource"
        key_columns = ("order_id",)

        def make_job(self, workdir):            # the source's keys; make the (empty) place it reads
            return {"orders.endpoint": ...}

        def add_data(self, job, batch):         # make new records available; return their keys
            ...

The suite seeds ``seed_batches`` batches of data, then checks that the job passes ``gpy validate --strict``,
that the source plans work units that travel in Gobblin's Writable encoding, that its extractors' batches match
their declared schema, that a first run publishes every record once (on each engine of ``engines``), that a
rerun with nothing new pulls nothing, that new data is pulled exactly once, that a work unit that failed is
pulled again under every commit policy (``full`` publishing nothing and keeping the state; ``successful`` and
``partial`` the rest), that the state it leaves round-trips through the Writable codec, and — for a source
that declares ``supports_startpoints`` — that startpoints set with ``gpy state startpoint set`` behave as the
state store's rules say.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pytest

from gobblin_py.runtime.execute.converter_chain import ConverterChain
from gobblin_py.runtime.plan.validation import check_job
from gobblin_py.sdk.contracts import Source
from gobblin_py.sdk.plugins import canonical_plugin_props, instantiate
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import (
    ACTUAL_HIGH_WATERMARK_KEY,
    MultiWorkUnit,
    RunningState,
    State,
    TaskState,
    WorkingState,
    WorkUnit,
)
from gobblin_py.store.writable import DATASET_STATE_CLASS, class_name_of, deserialize, serialize
from gobblin_py.testing.base import Contract
from gobblin_py.testing.harness import ContractJob
from gobblin_py.testing.outputs import exactly_once, keys_of
from gobblin_py.testing.plugins import FAIL_TASKS, FLAG_KEY, with_converter_first

NO_STARTPOINTS = "this source declares no startpoint support"


class SourceContract(Contract):
    """The contract of a Source: planning, extraction, incremental runs, retries and state."""

    #: the class as a job names it (entry-point name, Gobblin name or dotted path)
    source_class: ClassVar[str] = ""
    #: the published columns that identify a record (one key, or several making a tuple)
    key_columns: ClassVar[tuple[str, ...]] = ("id",)
    #: batches of data :meth:`add_data` makes before the first run (two make two work units of most sources)
    seed_batches: ClassVar[int] = 2
    #: a rerun with nothing new pulls nothing (false for snapshot sources and generators)
    supports_nothing_new: ClassVar[bool] = True
    #: no run pulls a record an earlier run committed (false for snapshot sources, which read everything again)
    incremental: ClassVar[bool] = True
    #: records made only by add_data are pulled: false for a generator, which makes new ones every run
    #: (SequentialTestSource); its runs may publish more than add_data announced, never a record twice
    announces_all_data: ClassVar[bool] = True
    #: a failed work unit is pulled again by the next run (under full, successful and partial)
    supports_retry: ClassVar[bool] = True
    #: ``get_expected_record_count()`` is -1 or the exact number of records the extractor reads
    exact_expected_count: ClassVar[bool] = True
    #: the source honours startpoints (``gpy state startpoint set``)
    supports_startpoints: ClassVar[bool] = False

    # ------------------------------------------------------------------ hooks

    def make_job(self, workdir: Path) -> dict[str, str]:
        """The job's keys for the source (``source.class`` is added); create the empty place it reads.

        ``workdir`` is the job's folder; its ``data/`` folder is the test's to fill.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement make_job(workdir)")

    def add_data(self, job: ContractJob, batch: int) -> list[Hashable]:
        """Make new records available to the next run (``batch`` counts calls from 0); return their keys."""
        raise NotImplementedError(f"{type(self).__name__} must implement add_data(job, batch)")

    def startpoint_datasets(self, job: ContractJob) -> list[str]:
        """The dataset URNs startpoint tests set a startpoint on: every dataset the job has state for (before
        its first run, ``dataset.urn``); override for a source whose datasets exist before it runs."""
        return sorted(job.dataset_states()) or [job.props.get("dataset.urn", "")]

    def startpoint_value(self, job: ContractJob, keys: list[Hashable]) -> tuple[str, str | None] | None:
        """``(--value W, --partition P or None)`` that starts the dataset at the first of ``keys`` (None: untested).

        ``keys`` are the records of every batch after the first, which a first run has already pulled: the value
        must start each dataset at them, so that exactly they are read again.
        """
        return None

    # ------------------------------------------------------------------ the job

    @pytest.fixture
    def source_job(self, tmp_path: Path, contract_env: Any) -> ContractJob:
        """A job of the source with ``seed_batches`` batches of data made (not yet run)."""
        self.env = contract_env
        props = {"source.class": self.source_class, **self.make_job(tmp_path)}
        job = ContractJob(tmp_path, props, self.key_columns, name=type(self).__name__)
        for _ in range(self.seed_batches):
            self.more_data(job)
        return job

    def more_data(self, job: ContractJob) -> list[Hashable]:
        """Call :meth:`add_data` once more; its keys join ``job.expected``."""
        keys = list(self.add_data(job, job.batches))
        job.batches += 1
        job.expected.extend(keys)
        job.batch_keys.append(keys)
        return keys

    def check_published(self, job: ContractJob) -> None:
        """Every expected record published exactly once (and, unless a generator, nothing else)."""
        exactly_once(job.published_keys(), job.expected, allow_more=not self.announces_all_data)

    def plan(self, job: ContractJob, previous: dict | None = None) -> list[WorkUnit]:
        """The work units a fresh instance of the source plans for ``job`` (members of MultiWorkUnits)."""
        props = canonical_plugin_props(job.props)
        source: Source = instantiate(props["source.class"], "source.class", Source)  # type: ignore[assignment]
        units = source.get_workunits(SourceState(props, previous_dataset_states=previous or {}))
        assert units is not None, f"{self.source_class}: get_workunits returned None"
        try:
            return units
        finally:
            source.shutdown(SourceState(props))

    @staticmethod
    def members(units: list[WorkUnit]) -> list[WorkUnit]:
        """The work units, those of MultiWorkUnits in their place."""
        return [m for u in units for m in (u.work_units if isinstance(u, MultiWorkUnit) else [u])]

    # ------------------------------------------------------------------ the contract

    def test_the_job_passes_validation(self, source_job: ContractJob) -> None:
        check = check_job(source_job.props, strict=True)
        assert not check.errors, "; ".join(str(e) for e in check.errors)

    def test_plans_work_units_that_travel_in_gobblins_encoding(self, source_job: ContractJob) -> None:
        units = self.plan(source_job)
        assert units, f"{self.source_class} planned no work unit for {len(source_job.expected)} new records"
        for unit in units:
            back = deserialize(class_name_of(unit), serialize(unit))
            assert back == unit, f"a work unit changes through the Writable codec: {unit} became {back}"
        for member in self.members(units):
            assert member.get_prop("extract.table.name"), f"a work unit without an extract table: {member}"

    def test_batches_match_the_declared_schema(self, source_job: ContractJob) -> None:
        props = canonical_plugin_props(source_job.props)
        keys: list[Any] = []
        for index, unit in enumerate(self.members(self.plan(source_job))):
            task = TaskState("job_contract_1", f"task_contract_1_{index}", unit, job_state=State(props))
            source: Source = instantiate(props["source.class"], "source.class", Source)  # type: ignore[assignment]
            extractor = source.get_extractor(task)
            converters = ConverterChain.build(task, "converter.classes")  # the job's own: records become keyed rows
            rows = 0
            try:
                schema = extractor.get_schema()
                converters.schema(schema)
                for batch in extractor.read_batches():
                    assert batch.schema.equals(schema), (
                        f"work unit {index}: a batch of schema\n{batch.schema}\ndiffers from the declared\n{schema}")
                    rows += batch.num_rows
                    for out in converters.apply(batch):
                        keys.extend(keys_of(pa.Table.from_batches([out]), self.key_columns))
                expected = extractor.get_expected_record_count()
            finally:
                extractor.close()
                converters.close()
            if self.exact_expected_count:
                assert expected in (-1, rows), f"work unit {index}: expected {expected} records, read {rows}"
            if unit.expected_high_watermark() is not None:
                assert ACTUAL_HIGH_WATERMARK_KEY in task.properties, (
                    f"work unit {index}: read to its end and closed, its extractor set no actual high watermark")
        exactly_once(keys, source_job.expected, allow_more=not self.announces_all_data)

    def test_a_first_run_publishes_every_record_once(self, source_job: ContractJob, engine: str,
                                                     request: pytest.FixtureRequest) -> None:
        self.start_engine(request, engine)
        result = source_job.run(engine)
        assert result.exit_code == 0, [d.error for d in result.datasets]
        self.check_published(source_job)
        states = source_job.dataset_states()
        assert states, "no dataset state was saved"
        for urn, state in states.items():
            assert state.state.value == "COMMITTED", f"dataset {urn!r}: {state.state.value}"
            for task in state.all_task_states():
                assert task.working_state in (WorkingState.COMMITTED, WorkingState.SKIPPED), (urn, task.task_id)

    def test_a_rerun_with_nothing_new_pulls_nothing(self, source_job: ContractJob) -> None:
        self.require(self.supports_nothing_new, "supports_nothing_new", "a rerun of this source pulls again")
        assert source_job.run().exit_code == 0
        before = sorted(map(repr, source_job.published_keys()))
        again = source_job.run()
        assert again.exit_code == 0, [d.error for d in again.datasets]
        assert sum(d.records_extracted for d in again.datasets) == 0, "a rerun with nothing new extracted records"
        assert sorted(map(repr, source_job.published_keys())) == before

    def test_new_data_is_pulled_exactly_once(self, source_job: ContractJob) -> None:
        self.require(self.incremental, "incremental", "this source reads everything again each run")
        for _ in range(2):
            assert source_job.run().exit_code == 0
            self.check_published(source_job)
            self.more_data(source_job)
        assert source_job.run().exit_code == 0
        self.check_published(source_job)

    @pytest.mark.parametrize("policy", ["full", "successful", "partial"])
    def test_a_failed_work_unit_is_pulled_again(self, source_job: ContractJob, policy: str) -> None:
        self.require(self.supports_retry, "supports_retry", "this source does not pull a failed work unit again")
        assert source_job.run(**{"job.commit.policy": policy}).exit_code == 0  # a committed state to go on from
        for _ in range(self.seed_batches):
            self.more_data(source_job)
        before = sorted(map(repr, source_job.published_keys()))
        committed = {urn: state.job_id for urn, state in source_job.dataset_states().items()}
        flag = source_job.root / "fail-task-0"
        flag.touch()
        failing = source_job.run(**{"job.commit.policy": policy, FLAG_KEY: str(flag),
                                    "converter.classes": with_converter_first(source_job.props, "converter.classes",
                                                                              FAIL_TASKS)})
        if policy == "full":  # the failed task's dataset publishes nothing and keeps its state; others commit
            assert failing.exit_code == 1, f"exit {failing.exit_code} under full with a failed task"
            failed = {d.urn for d in failing.datasets if d.state is RunningState.FAILED}
            assert failed, "no dataset failed"
            now = {urn: state.job_id for urn, state in source_job.dataset_states().items()}
            assert all(now.get(urn) == committed.get(urn) for urn in failed), "a failed dataset's state was saved"
            exactly_once(source_job.published_keys(), [], allow_more=True)
            if failed == {d.urn for d in failing.datasets}:
                assert sorted(map(repr, source_job.published_keys())) == before, "a failed dataset published"
        else:
            assert failing.exit_code == 3, f"exit {failing.exit_code}: {[d.error for d in failing.datasets]}"
            exactly_once(source_job.published_keys(), [], allow_more=True)  # no record twice (a published record of
            # the failed task would come twice after its retry, below)
            failed_tasks = [t for s in source_job.dataset_states().values() for t in s.all_task_states()
                            if t.working_state is WorkingState.FAILED]
            assert failed_tasks, "no failed task in the saved state"
            for task in failed_tasks:
                assert task.actual_high_watermark() == task.workunit.low_watermark(), (
                    f"{task.task_id}: a failed task's watermark was not rolled back to its low watermark")
        flag.unlink()
        fixed = source_job.run(**{"job.commit.policy": policy})
        assert fixed.exit_code == 0, [d.error for d in fixed.datasets]
        self.check_published(source_job)

    def test_state_round_trips_through_the_writable_codec(self, source_job: ContractJob) -> None:
        assert source_job.run().exit_code == 0
        states = source_job.dataset_states()
        assert states
        for urn, state in states.items():
            data = serialize(state)
            back = deserialize(DATASET_STATE_CLASS, data)
            assert serialize(back) == data, f"dataset {urn!r}: its state's bytes change through the codec"
            assert back == state, f"dataset {urn!r}: its state changes through the codec"
        # the next run plans from that state as the source left it
        self.plan(source_job, previous=states)

    # ------------------------------------------------------------------ startpoints

    def set_startpoint(self, job: ContractJob, *how: str) -> None:
        """``gpy state startpoint set JOB --dataset URN <how>`` for each of :meth:`startpoint_datasets`."""
        for urn in self.startpoint_datasets(job):
            done = job.gpy("state", "startpoint", "set", str(job.file), "--dataset", urn, *how)
            assert done.returncode == 0, done.stderr

    def test_startpoint_oldest_pulls_everything_again_once(self, source_job: ContractJob) -> None:
        self.require(self.supports_startpoints, "supports_startpoints", NO_STARTPOINTS)
        assert source_job.run().exit_code == 0
        self.set_startpoint(source_job, "--oldest")
        assert source_job.run().exit_code == 0
        again = source_job.published_keys()
        assert sorted(map(repr, again)) == sorted(map(repr, source_job.expected * 2)), "--oldest did not pull it all again"
        assert source_job.run().exit_code == 0  # the commit consumed the startpoint
        assert len(source_job.published_keys()) == len(again)

    def test_startpoint_upcoming_skips_what_is_there(self, source_job: ContractJob) -> None:
        self.require(self.supports_startpoints, "supports_startpoints", NO_STARTPOINTS)
        self.set_startpoint(source_job, "--upcoming")
        assert source_job.run().exit_code == 0
        assert source_job.published_keys() == [], "--upcoming pulled records that were there before"
        source_job.expected.clear()
        self.more_data(source_job)
        assert source_job.run().exit_code == 0
        self.check_published(source_job)

    def test_startpoint_value_reads_again_from_that_record(self, source_job: ContractJob) -> None:
        self.require(self.supports_startpoints, "supports_startpoints", NO_STARTPOINTS)
        assert len(source_job.batch_keys) >= 2, "the value startpoint test needs seed_batches of 2 or more"
        assert source_job.run().exit_code == 0
        self.check_published(source_job)
        later = [key for keys in source_job.batch_keys[1:] for key in keys]  # a first run pulled them all
        start = self.startpoint_value(source_job, later)
        if start is None:
            pytest.skip("startpoint_value gives no value for this source")
        value, partition = start
        self.set_startpoint(source_job, "--value", value, *(["--partition", partition] if partition else []))
        assert source_job.run().exit_code == 0
        again = Counter(source_job.published_keys()) - Counter(source_job.expected)
        not_again = sorted((k for k in later if k not in again), key=repr)
        assert not not_again, (f"--value {value} (the record {later[0]!r}): {len(not_again)} later record(s) not "
                               f"read again, e.g. {not_again[:5]}")
        earlier = sorted((k for k in again if k not in set(later)), key=repr)
        assert not earlier, (f"--value {value} (the record {later[0]!r}): {len(earlier)} earlier record(s) read "
                             f"again, e.g. {earlier[:5]}")
        exactly_once(list(again.elements()), later)

    def test_a_startpoint_survives_a_failed_commit(self, source_job: ContractJob) -> None:
        self.require(self.supports_startpoints, "supports_startpoints", NO_STARTPOINTS)
        assert source_job.run().exit_code == 0
        self.set_startpoint(source_job, "--oldest")
        flag = source_job.root / "fail-all"
        flag.touch()
        failed = source_job.run(**{FLAG_KEY: str(flag), "gpy.contract.fail.tasks": "*",
                                   "converter.classes": with_converter_first(source_job.props, "converter.classes",
                                                                             FAIL_TASKS)})
        assert failed.exit_code == 1
        flag.unlink()
        assert source_job.run().exit_code == 0  # the startpoint was not consumed by the failed run
        assert sorted(map(repr, source_job.published_keys())) == sorted(map(repr, source_job.expected * 2))
