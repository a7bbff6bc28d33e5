"""``ForkOperatorContract``: what every ForkOperator promises, in this process and in real jobs.

A subclass names the operator and its keys (and may give its own input)::

    class TestRouteByCountry(ForkOperatorContract):
        fork_operator_class = "mypkg.RouteByCountry"

        def fork_props(self):
            return {"route.countries": "FR,DE"}

Checked: it is a fork operator and its keys validate; it declares 1 to 64 branches and a schema route for each;
its masks fit the batch and the branches (no nulls); its routing does not depend on how the input is cut into
batches; a job writes to each branch exactly the rows the operator routes there, on each engine; and a task one
of whose branches fails publishes no branch, then publishes every branch once the failure is gone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pytest

from gobblin_py.runtime.execute.fork import fork_masks
from gobblin_py.runtime.plan.validation import check_job
from gobblin_py.sdk.branches import MAX_BRANCHES, branch_name
from gobblin_py.sdk.contracts import ForkOperator, Initializable, RecordForkOperator
from gobblin_py.sdk.plugins import instantiate, resolve_class
from gobblin_py.sdk.states import State, WorkUnit, WorkUnitState
from gobblin_py.testing.base import Contract, default_batches, file_source_job, same_rows
from gobblin_py.testing.harness import ContractJob
from gobblin_py.testing.outputs import read_tree
from gobblin_py.testing.plugins import FAIL_TASKS, FLAG_KEY, TASKS_KEY, WHEN_KEY


class ForkOperatorContract(Contract):
    """The contract of a ForkOperator."""

    #: the class as a job names it
    fork_operator_class: ClassVar[str] = ""

    # ------------------------------------------------------------------ hooks

    def fork_props(self) -> dict[str, str]:
        """The operator's keys."""
        return {}

    def input_batches(self) -> list[pa.RecordBatch]:
        """Input of one schema, in a few batches (default: the kit's ids, names, amounts and flags)."""
        return default_batches()

    # ------------------------------------------------------------------ in this process

    def state(self) -> WorkUnitState:
        """A task's state holding the operator's keys."""
        return WorkUnitState(WorkUnit(), job_state=State({**self.fork_props(),
                                                          "fork.operator.class": self.fork_operator_class}))

    def operator(self, state: WorkUnitState) -> Any:
        """A fresh operator, ``init``-ed with ``state`` as the runtime does."""
        operator = instantiate(self.fork_operator_class, "fork.operator.class")
        if isinstance(operator, Initializable):
            operator.init(state)
        return operator

    def routed(self, batches: list[pa.RecordBatch]) -> list[pa.Table | None]:
        """Per branch, the rows the operator routes there (None for a branch its schema route leaves out)."""
        state = self.state()
        operator = self.operator(state)
        count = operator.get_branches(state)
        routes = operator.fork_schema(state, batches[0].schema)
        parts: list[list[pa.RecordBatch]] = [[] for _ in range(count)]
        for batch in batches:
            for index, mask in enumerate(fork_masks(operator, state, batch, count)):
                if mask is True:
                    parts[index].append(batch)
                elif mask is not False:
                    parts[index].append(batch.filter(mask))
        schema = batches[0].schema
        return [pa.Table.from_batches(p, schema=schema) if routes[i] else None for i, p in enumerate(parts)]

    def branch_output(self, job: ContractJob, index: int, count: int) -> pa.Table:
        """What a job published for branch ``index`` (under ``<final>/<branch name>`` with several branches)."""
        return read_tree(job.final if count == 1 else job.final / branch_name(job.props, index))

    def fork_job(self, root: Path, **props: str) -> ContractJob:
        """A job reading :meth:`input_batches` from Parquet files, forked by the operator."""
        return file_source_job(root, self.input_batches(), key_columns=(),
                               **{**self.fork_props(), "fork.operator.class": self.fork_operator_class, **props})

    # ------------------------------------------------------------------ the contract

    def test_is_a_fork_operator_whose_keys_validate(self, tmp_path: Path) -> None:
        cls = resolve_class(self.fork_operator_class, "fork.operator.class")
        assert issubclass(cls, ForkOperator) or isinstance(cls, RecordForkOperator), f"{cls} is not a ForkOperator"
        check = check_job(self.fork_job(tmp_path).props, strict=True)
        assert not check.errors, "; ".join(str(e) for e in check.errors)

    def test_declares_its_branches_and_a_schema_route_for_each(self) -> None:
        state = self.state()
        operator = self.operator(state)
        count = operator.get_branches(state)
        assert 1 <= count <= MAX_BRANCHES, f"{count} branches; a task has 1 to {MAX_BRANCHES}"
        routes = operator.fork_schema(state, self.input_batches()[0].schema)
        assert len(routes) == count, f"fork_schema answered {len(routes)} routes for {count} branches"

    def test_masks_fit_the_batch_and_the_branches(self) -> None:
        state = self.state()
        operator = self.operator(state)
        count = operator.get_branches(state)
        for batch in [*self.input_batches(), self.input_batches()[0].slice(0, 0)]:
            masks = fork_masks(operator, state, batch, count)  # raises ForkBranchMismatchError on a wrong length
            for mask in masks:
                if not isinstance(mask, bool):
                    assert mask.type == pa.bool_() and mask.null_count == 0, f"a mask with nulls or of {mask.type}"

    def test_routing_does_not_depend_on_batch_boundaries(self) -> None:
        given = self.input_batches()
        as_given = self.routed(given)
        as_one = self.routed(pa.Table.from_batches(given).combine_chunks().to_batches())
        one_by_one = self.routed([b.slice(i, 1) for b in given for i in range(b.num_rows)])
        for index, want in enumerate(as_given):
            for other in (as_one[index], one_by_one[index]):
                assert (want is None) == (other is None)
                if want is not None:
                    same_rows(other, want)

    def test_a_job_writes_each_branch_what_is_routed_to_it(self, tmp_path: Path, engine: str,
                                                          request: pytest.FixtureRequest) -> None:
        self.start_engine(request, engine)
        job = self.fork_job(tmp_path)
        result = job.run(engine)
        assert result.exit_code == 0, [d.error for d in result.datasets]
        self.check_branches(job)
        again = job.run(engine)
        assert again.exit_code == 0 and sum(d.records_extracted for d in again.datasets) == 0

    def test_a_failing_branch_publishes_no_branch(self, tmp_path: Path) -> None:
        routed = self.routed(self.input_batches())
        index = max(range(len(routed)), key=lambda i: -1 if (table := routed[i]) is None else table.num_rows)
        if (fullest := routed[index]) is None or fullest.num_rows == 0:
            pytest.skip("the operator routes no row to any branch")
        flag = tmp_path / "fail-branch"
        flag.touch()
        job = self.fork_job(tmp_path / "job", **{f"converter.classes.{index}": FAIL_TASKS,
                                                 f"{FLAG_KEY}.{index}": str(flag), f"{TASKS_KEY}.{index}": "*",
                                                 f"{WHEN_KEY}.{index}": "batch"})
        failed = job.run()
        assert failed.exit_code == 1, f"exit {failed.exit_code}"
        assert read_tree(job.final).num_rows == 0, "a branch of a failed task was published"
        assert not job.dataset_states(), "a failed dataset's state was saved under job.commit.policy=full"
        flag.unlink()
        fixed = job.run()
        assert fixed.exit_code == 0, [d.error for d in fixed.datasets]
        self.check_branches(job)

    def check_branches(self, job: ContractJob) -> None:
        """Each branch published exactly the rows the operator routes to it."""
        routed = self.routed(self.input_batches())
        for index, want in enumerate(routed):
            got = self.branch_output(job, index, len(routed))
            if want is None or want.num_rows == 0:
                assert got.num_rows == 0, f"branch {index} published {got.num_rows} rows the operator did not route"
            else:
                same_rows(got, want)
        total = sum(t.num_rows for t in routed if t is not None)
        assert read_tree(job.final).num_rows == total, "rows were published outside the branches' folders"

