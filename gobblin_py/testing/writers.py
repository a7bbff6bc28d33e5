"""``WriterContract``: what every DataWriterBuilder's writers promise — Gobblin's staging → output protocol.

A subclass names the builder and the formats it writes (``writer_props`` says how a job asks for one)::

    class TestMyFormat(WriterContract):
        builder_class = "mypkg.MyWriterBuilder"
        formats = ("MYFMT",)

        def read_back(self, paths, fmt):
            return my_reader(paths)          # a table of the rows written

Checked per format: the builder and its keys validate; files stay in staging until ``commit``, which moves
them all to the output folder, returns their paths and leaves staging empty, with ``records_written`` and
``bytes_written`` telling the truth; every row reads back unchanged; a writer cleaned up without a commit leaves
nothing; a writer given no row makes no file; with ``supports_rolling``, files roll at
``writer.target.file.size`` and every rolled file is staged until the commit; and a real job publishes every
row once, on each engine.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import ClassVar, cast

import pyarrow as pa
import pytest

from gobblin_py.runtime.commit.folder_owner import OWNER_MARKER
from gobblin_py.runtime.commit.published_marks import MARKER_PREFIX
from gobblin_py.runtime.plan.validation import check_job
from gobblin_py.sdk.contracts import DataWriter, DataWriterBuilder
from gobblin_py.sdk.plugins import instantiate
from gobblin_py.sdk.states import State, WorkUnit, WorkUnitState
from gobblin_py.testing.base import Contract, default_batches, file_source_job, same_rows
from gobblin_py.testing.outputs import exactly_once, keys_of, read_files

WRITER_ID = "task_contract_1700000000000_0_0"


def files_under(root: Path) -> list[Path]:
    """Every file under ``root`` (hidden ones included: a writer leaves nothing behind)."""
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def published_files(root: Path) -> list[Path]:
    """Every file a job published under ``root``: all of them but the markers naming the job that published there
    and the folder's owner."""
    return [p for p in files_under(root) if not p.name.startswith(MARKER_PREFIX) and p.name != OWNER_MARKER]


class WriterContract(Contract):
    """The contract of a DataWriterBuilder and its writers."""

    #: the builder as a job names it (``writer.builder.class``)
    builder_class: ClassVar[str] = "FsDataWriterBuilder"
    #: the formats to check, each a value of :meth:`writer_props`'s ``fmt``
    formats: ClassVar[tuple[str, ...]] = ("PARQUET",)
    #: files roll at ``writer.target.file.size``
    supports_rolling: ClassVar[bool] = True
    #: the target size of the rolling test (:meth:`rolling_batches` hold several times as much, hard to compress)
    rolling_target: ClassVar[str] = "16KB"
    #: the written columns that identify a row
    key_columns: ClassVar[tuple[str, ...]] = ("id",)

    # ------------------------------------------------------------------ hooks

    def writer_props(self, fmt: str) -> dict[str, str | None]:
        """The keys that make the builder write ``fmt`` (None removes a key the contract's jobs set)."""
        return {"writer.output.format": fmt}

    def builder_for(self, fmt: str) -> str:
        """The builder that writes ``fmt`` (default: :attr:`builder_class` for every format)."""
        return self.builder_class

    def sample_batches(self) -> list[pa.RecordBatch]:
        """Rows to write, in a few batches of one schema (default: ids, names, amounts, flags)."""
        return default_batches()

    def rolling_batches(self) -> list[pa.RecordBatch]:
        """Rows for the rolling test, of the sample's schema: about 200 KB of text that compresses badly."""
        schema = self.sample_batches()[0].schema
        ids = list(range(2000))
        text = [hashlib.sha256(str(i).encode()).hexdigest() * 2 for i in ids]
        table = pa.table({"id": ids, "name": text, "amount": [i / 8 for i in ids], "paid": [i % 2 == 0 for i in ids]})
        return table.cast(schema).to_batches(max_chunksize=50)

    def read_back(self, paths: list[str], fmt: str) -> pa.Table:
        """The rows of written files, as a table comparable with :meth:`sample_batches` (default: by file name)."""
        schema = self.sample_batches()[0].schema
        table = read_files(paths, schema=schema)
        return table.select(schema.names) if table.num_rows else table

    # ------------------------------------------------------------------ in this process

    def state(self, root: Path, fmt: str, **props: str) -> WorkUnitState:
        """A task's state writing ``fmt`` under ``root/staging`` and ``root/output``."""
        settings = {"writer.staging.dir": str(root / "staging"), "writer.output.dir": str(root / "output"),
                    "writer.file.path": "records", "extract.namespace": "contract", "extract.table.name": "records",
                    "writer.builder.class": self.builder_for(fmt), **self.writer_props(fmt), **props}
        settings = {key: value for key, value in settings.items() if value is not None}
        return WorkUnitState(WorkUnit(), {"task.id": WRITER_ID[:-2]}, job_state=State(settings))

    def build(self, state: WorkUnitState, schema: pa.Schema | None = None) -> DataWriter:
        """The writer of branch 0 of 1, as the runtime builds it."""
        builder = cast(DataWriterBuilder, instantiate(state.get_prop("writer.builder.class"), "writer.builder.class",
                                                      DataWriterBuilder))  # instantiate checked its class
        return builder.build(state, schema or self.sample_batches()[0].schema, 1, 0, WRITER_ID)

    def sample_table(self) -> pa.Table:
        """:meth:`sample_batches` as one table."""
        return pa.Table.from_batches(self.sample_batches())

    # ------------------------------------------------------------------ the contract

    def test_is_a_builder_whose_keys_validate(self, tmp_path: Path, fmt: str) -> None:
        job = file_source_job(tmp_path, self.sample_batches(), key_columns=self.key_columns,
                              **{**self.writer_props(fmt), "writer.builder.class": self.builder_for(fmt)})
        check = check_job(job.props, strict=True)
        assert not check.errors, "; ".join(str(e) for e in check.errors)

    def test_files_stay_staged_until_commit_moves_them(self, tmp_path: Path, fmt: str) -> None:
        writer = self.build(self.state(tmp_path, fmt))
        try:
            for batch in self.sample_batches():
                writer.write(batch)
            assert not files_under(tmp_path / "output"), "output appeared before the commit"
            paths = writer.commit()
        finally:
            writer.cleanup()
        assert paths, "the commit returned no output file"
        for path in paths:
            assert Path(path).is_file(), f"{path}: returned by the commit, not there"
            assert Path(path).is_relative_to(tmp_path / "output"), f"{path}: not under the output folder"
        assert sorted(Path(p) for p in paths) == files_under(tmp_path / "output"), "the commit did not name every file"
        assert not files_under(tmp_path / "staging"), "files were left in staging after the commit"
        assert writer.records_written == self.sample_table().num_rows
        assert writer.bytes_written == sum(Path(p).stat().st_size for p in paths), (
            f"bytes_written {writer.bytes_written}, the files hold {sum(Path(p).stat().st_size for p in paths)}")

    def test_every_row_reads_back_unchanged(self, tmp_path: Path, fmt: str) -> None:
        writer = self.build(self.state(tmp_path, fmt))
        try:
            for batch in self.sample_batches():
                writer.write(batch)
            paths = writer.commit()
        finally:
            writer.cleanup()
        same_rows(self.read_back(paths, fmt), self.sample_table())

    def test_nothing_is_left_after_a_failure(self, tmp_path: Path, fmt: str) -> None:
        writer = self.build(self.state(tmp_path, fmt))
        for batch in self.sample_batches():
            writer.write(batch)
        writer.cleanup()  # the task failed: no commit
        assert not files_under(tmp_path / "staging") and not files_under(tmp_path / "output")

    def test_a_writer_given_no_row_makes_no_file(self, tmp_path: Path, fmt: str) -> None:
        writer = self.build(self.state(tmp_path, fmt))
        try:
            writer.write(self.sample_batches()[0].slice(0, 0))
            assert writer.commit() == []
        finally:
            writer.cleanup()
        assert not files_under(tmp_path / "staging") and not files_under(tmp_path / "output")
        assert writer.records_written == 0 and writer.bytes_written == 0

    def test_files_roll_at_the_target_size(self, tmp_path: Path, fmt: str) -> None:
        self.require(self.supports_rolling, "supports_rolling", "the writer does not roll files")
        batches = self.rolling_batches()
        table = pa.Table.from_batches(batches)
        writer = self.build(self.state(tmp_path, fmt, **{"writer.target.file.size": self.rolling_target}))
        try:
            for batch in batches:
                writer.write(batch)
            assert not files_under(tmp_path / "output"), "a rolled file reached the output before the commit"
            paths = writer.commit()
        finally:
            writer.cleanup()
        assert len(paths) >= 2, f"{len(paths)} file(s) at a target of {self.rolling_target}"
        assert not files_under(tmp_path / "staging")
        assert writer.records_written == table.num_rows
        same_rows(self.read_back(sorted(paths), fmt), table)

    def test_a_job_publishes_every_row_once(self, tmp_path: Path, fmt: str, engine: str,
                                             request: pytest.FixtureRequest) -> None:
        self.start_engine(request, engine)
        job = file_source_job(tmp_path, self.sample_batches(), key_columns=self.key_columns,
                              **{**self.writer_props(fmt), "writer.builder.class": self.builder_for(fmt)})
        result = job.run(engine)
        assert result.exit_code == 0, [d.error for d in result.datasets]
        published = [str(p) for p in published_files(job.final)]
        table = self.read_back(published, fmt)
        exactly_once(keys_of(table, self.key_columns), job.expected)
        same_rows(table, self.sample_table())
        again = job.run(engine)
        assert again.exit_code == 0 and sum(d.records_extracted for d in again.datasets) == 0
        assert [str(p) for p in published_files(job.final)] == published

    def test_in_a_forked_job_it_reads_its_branch_keys(self, tmp_path: Path, fmt: str) -> None:
        props = {f"{key}.1": value for key, value in self.writer_props(fmt).items() if value is not None}
        job = file_source_job(tmp_path, self.sample_batches(), key_columns=self.key_columns,
                              **{**props, "fork.branches": "2", "writer.builder.class.1": self.builder_for(fmt),
                                 "writer.output.format.0": "PARQUET"})
        result = job.run()
        assert result.exit_code == 0, [d.error for d in result.datasets]
        same_rows(read_files([str(p) for p in published_files(job.final / "fork_0")]), self.sample_table())
        same_rows(self.read_back([str(p) for p in published_files(job.final / "fork_1")], fmt), self.sample_table())
