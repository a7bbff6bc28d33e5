"""The end-of-run summary at any terminal width: numbers and states always whole, nothing wider than the screen."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from gobblin_py.cli.base import load_job_properties
from gobblin_py.cli.summary_table import print_summary_table
from gobblin_py.runtime.commit.job_result import JobResult
from gobblin_py.runtime.commit.summary import render
from gobblin_py.runtime.launcher import JobLauncher
from tests.support.jobs import Job, write_csv
from tests.support.pty_run import run_gpy_in_pty


@pytest.fixture(scope="module")
def multi_dataset_result(tmp_path_factory) -> JobResult:
    """A real local run of three datasets (one folder each), forked into two branches, one dataset large."""
    root = tmp_path_factory.mktemp("summary")
    job = Job(root, extra="source.filebased.dataset.urn.level=subdirectory\nfork.branches=2\n"
                          "source.filebased.file.pattern=*.csv\n")
    write_csv(job.data / "commercial_orders" / "a.csv", 1, rows=22_100)
    write_csv(job.data / "retail" / "b.csv", 100_000, rows=40)
    write_csv(job.data / "wholesale_partners" / "c.csv", 200_000, rows=7)
    result = JobLauncher(load_job_properties(str(job.file), None, None), engine="local").run()
    assert len(result.datasets) == 3 and result.exit_code == 0
    return result


def _expected_pieces(result: JobResult) -> list[str]:
    """Every number and state the summary must show whole."""
    pieces = [result.state.value]
    for d in result.datasets:
        pieces += [d.urn, d.state.value, f"{d.tasks - d.failed_tasks}/{d.tasks}", f"{d.records_extracted:,}",
                   f"{d.seconds:.1f} s"]
        for branch in d.branches:
            pieces += [branch.name, f"{branch.records_written:,}", f"{branch.bytes_written:,}"]
    return pieces


def _table_at(result: JobResult, width: int) -> str:
    out = io.StringIO()
    print_summary_table(result, Console(file=out, width=width, force_terminal=True, color_system=None))
    return out.getvalue()


@pytest.mark.parametrize("width", [80, 100, 200])
def test_the_summary_table_shows_every_number_and_state_whole_within_the_terminal_width(multi_dataset_result,
                                                                                         width):
    text = _table_at(multi_dataset_result, width)
    assert "…" not in text, text
    for piece in _expected_pieces(multi_dataset_result):
        assert piece in text, f"{piece!r} not whole at {width} columns:\n{text}"
    # a published path stays whole on its line (the terminal wraps it), so that it can be copied
    lines = [line for line in text.splitlines() if " published " not in line]
    assert max(len(line) for line in lines) <= width, text


def test_at_a_wide_terminal_the_summary_is_one_table_of_every_column(multi_dataset_result):
    text = _table_at(multi_dataset_result, 200)
    header = next(line for line in text.splitlines() if "rows out" in line)
    for column in ("dataset", "status", "tasks", "rows in", "branch", "files", "bytes", "watermark from → to",
                   "duration"):
        assert column in header, header


def test_off_a_terminal_the_plain_summary_shows_every_number_and_state(multi_dataset_result):
    text = render(multi_dataset_result)
    for d in multi_dataset_result.datasets:
        assert f"dataset {d.urn}: {d.state.value}" in text
        assert f"records extracted {d.records_extracted}" in text and f"written {d.records_written}" in text
    assert "…" not in text


def test_gpy_run_at_an_80_column_terminal_lays_the_table_out_for_80_columns(tmp_path):
    """The width comes from the terminal itself (here a real 80-column pseudo-terminal)."""
    job = Job(tmp_path, extra="source.filebased.dataset.urn.level=subdirectory\nfork.branches=2\n")
    write_csv(job.data / "commercial_orders" / "a.csv", 1, rows=22_100)
    write_csv(job.data / "wholesale_partners" / "c.csv", 200_000, rows=7)
    result = run_gpy_in_pty("run", str(job.file), "--engine", "local", width=80,
                            env={"COLUMNS": "200"})  # the terminal's own size wins over a stale COLUMNS
    assert result.returncode == 0, result.text
    table = [line for line in result.text.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and max(len(line) for line in table) <= 80, result.text
    assert any("22,100" in line and "COMMITTED" in line for line in table), result.text
    assert "COMM…" not in result.text and "22,1…" not in result.text, result.text
