"""``ConverterContract``: what every Converter promises, in this process and in real jobs.

A subclass names the converter, and gives its keys and input unless the defaults fit (none; the kit's rows)::

    class TestMaskEmails(ConverterContract):
        converter_class = "mypkg.MaskEmails"

        def converter_props(self):
            return {"mask.fields": "email"}

        def input_batches(self):
            return [pa.record_batch({"id": [1, 2], "email": ["a@x.org", None]})]

Checked: it is a Converter (or a per-record one the runtime adapts) and its keys validate; every batch it makes
matches the schema ``convert_schema`` declared; an empty batch makes no rows; its output does not depend on how
the input is cut into batches (``batch_independent``, for ``deterministic`` converters); the rows
``expected_rows`` gives, when it gives some; a real job with it publishes what it converts, on each engine; and
with ``fork_scoped_keys``, inside fork branch N it reads its keys as ``key.N``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pytest

from gobblin_py.runtime.execute.converter_chain import ConverterChain
from gobblin_py.runtime.plan.validation import check_job
from gobblin_py.sdk.contracts import Converter, RecordConverter
from gobblin_py.sdk.plugins import resolve_class
from gobblin_py.sdk.states import State, WorkUnit, WorkUnitState
from gobblin_py.testing.base import Contract, default_batches, file_source_job, same_rows
from gobblin_py.testing.outputs import read_tree


class ConverterContract(Contract):
    """The contract of a Converter."""

    #: the class as a job names it
    converter_class: ClassVar[str] = ""
    #: the same input always gives the same output (false for a sampler)
    deterministic: ClassVar[bool] = True
    #: the rows out do not depend on how the rows in are cut into batches
    batch_independent: ClassVar[bool] = True
    #: inside fork branch N every key of :meth:`converter_props` is read as ``key.N``
    fork_scoped_keys: ClassVar[bool] = False

    # ------------------------------------------------------------------ hooks

    def converter_props(self) -> dict[str, str]:
        """The converter's keys."""
        return {}

    def input_batches(self) -> list[pa.RecordBatch]:
        """Input of one schema, in a few batches (the in-job test reads them back from Parquet files); default:
        the kit's ids, names, amounts and flags."""
        return default_batches()

    def expected_rows(self) -> list[dict[str, Any]] | None:
        """The rows the input converts to (in any order), or None to check only the contract's properties."""
        return None

    # ------------------------------------------------------------------ in this process

    def convert(self, batches: Iterable[pa.RecordBatch], props: Mapping[str, str] | None = None,
                key: str = "converter.classes") -> tuple[pa.Schema, list[pa.RecordBatch]]:
        """The declared output schema and the batches out, through the runtime's converter chain."""
        batches = list(batches)
        settings = {**self.converter_props(), **(props or {}), key: self.converter_class}
        state = WorkUnitState(WorkUnit(), job_state=State(settings))
        chain = ConverterChain.build(state, key)
        try:
            schema = chain.schema(self.input_batches()[0].schema)
            out = [b for batch in batches for b in chain.apply(batch)]
        finally:
            chain.close()
        return schema, out

    @staticmethod
    def table(schema: pa.Schema, batches: list[pa.RecordBatch]) -> pa.Table:
        """Batches of ``schema`` as one table (an empty one for none)."""
        return pa.Table.from_batches(batches, schema=schema) if batches else schema.empty_table()

    # ------------------------------------------------------------------ the contract

    def test_is_a_converter_whose_keys_validate(self, tmp_path: Path) -> None:
        cls = resolve_class(self.converter_class, "converter.classes")
        assert issubclass(cls, Converter) or isinstance(cls, RecordConverter), f"{cls} is not a Converter"
        job = file_source_job(tmp_path, self.input_batches(), key_columns=(),
                              **{**self.converter_props(), "converter.classes": self.converter_class})
        check = check_job(job.props, strict=True)
        assert not check.errors, "; ".join(str(e) for e in check.errors)

    def test_every_batch_matches_the_declared_schema(self) -> None:
        schema, batches = self.convert(self.input_batches())
        for index, batch in enumerate(batches):
            assert batch.schema.equals(schema), (
                f"batch {index} has the schema\n{batch.schema}\nwhere convert_schema declared\n{schema}")

    def test_an_empty_batch_makes_no_rows(self) -> None:
        empty = self.input_batches()[0].slice(0, 0)
        _, batches = self.convert([empty])
        assert sum(b.num_rows for b in batches) == 0

    def test_output_does_not_depend_on_batch_boundaries(self) -> None:
        self.require(self.deterministic, "deterministic", "the converter's output varies from run to run")
        self.require(self.batch_independent, "batch_independent", "the converter's output depends on its batches")
        given = self.input_batches()
        schema, as_given = self.convert(given)
        whole = pa.Table.from_batches(given).combine_chunks().to_batches()
        _, as_one = self.convert(whole)
        _, one_by_one = self.convert([b.slice(i, 1) for b in given for i in range(b.num_rows)])
        same_rows(self.table(schema, as_one), self.table(schema, as_given))
        same_rows(self.table(schema, one_by_one), self.table(schema, as_given))

    def test_gives_the_expected_rows(self) -> None:
        expected = self.expected_rows()
        if expected is None:
            pytest.skip("expected_rows gives no rows to compare with")
        schema, batches = self.convert(self.input_batches())
        same_rows(self.table(schema, batches), pa.Table.from_pylist(expected))

    def test_a_job_publishes_what_it_converts(self, tmp_path: Path, engine: str, request: pytest.FixtureRequest) -> None:
        self.start_engine(request, engine)
        job = file_source_job(tmp_path, self.input_batches(), key_columns=(),
                              **{**self.converter_props(), "converter.classes": self.converter_class})
        result = job.run(engine)
        assert result.exit_code == 0, [d.error for d in result.datasets]
        published = job.published()
        schema, batches = self.convert(self.input_batches())
        self.compare_published(published, self.table(schema, batches))
        again = job.run(engine)
        assert again.exit_code == 0 and sum(d.records_extracted for d in again.datasets) == 0

    def test_inside_a_fork_branch_it_reads_its_suffixed_keys(self, tmp_path: Path) -> None:
        self.require(self.fork_scoped_keys, "fork_scoped_keys", "the converter's keys are not per fork branch")
        suffixed = {f"{key}.1": value for key, value in self.converter_props().items()}
        job = file_source_job(tmp_path, self.input_batches(), key_columns=(),
                              **{**suffixed, "fork.branches": "2", "converter.classes.1": self.converter_class})
        result = job.run()
        assert result.exit_code == 0, [d.error for d in result.datasets]
        same_rows(read_tree(job.final / "fork_0"), pa.Table.from_batches(self.input_batches()))
        schema, batches = self.convert(self.input_batches())
        self.compare_published(read_tree(job.final / "fork_1"), self.table(schema, batches))

    def compare_published(self, published: pa.Table, converted: pa.Table) -> None:
        """What a job published against what the converter made in this process: the same rows (a converter
        that is not deterministic: the same columns)."""
        if self.deterministic:
            same_rows(published, converted)
        elif published.num_rows:
            assert published.column_names == converted.column_names, (published.column_names, converted.column_names)
