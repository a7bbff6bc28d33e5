"""The ``make bench`` harness's own logic: medians and ratios, targets, the results table, the row-count check.

Cheap by design: the only processes started are ``python -c`` one-liners, and nothing here asserts a time.
"""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "scripts" / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from benchkit import report  # noqa: E402
from benchkit.context import Context  # noqa: E402
from benchkit.model import GPY_LOCAL, Case, Contender, Step, Target  # noqa: E402
from benchkit.process import Sample  # noqa: E402
from benchkit.runner import Row, _run_trial, evaluate  # noqa: E402
from benchkit.suites.state import shown_datasets  # noqa: E402


def _row(case: Case, name: str, role: str, seconds: list[float], peaks: list[int] | None = None) -> Row:
    contender = Contender(name, role, lambda work: [])
    peaks = peaks or [100 * 2**20] * len(seconds)
    return Row(case, contender, [Sample(s, p, 0) for s, p in zip(seconds, peaks)])


def test_a_row_reports_the_median_time_the_highest_peak_and_the_rate():
    case = Case("c", "CSV", 1_000_000)
    row = _row(case, GPY_LOCAL, "gpy", [3.0, 1.0, 2.0], [10, 30, 20])
    assert row.ok and row.seconds == 2.0 and row.peak_bytes == 30
    assert row.rate == 500_000
    assert _row(Case("n", "no-op", 0), GPY_LOCAL, "gpy", [1.0]).rate is None


def test_targets_compare_medians_by_time_or_by_rate():
    case = Case("c", "CSV", 1000, targets=[Target("c", GPY_LOCAL, "limit", "<=", 1.2),
                                           Target("c", GPY_LOCAL, "limit", ">=", 0.8, "rate"),
                                           Target("c", "dlt", GPY_LOCAL, ">", 1.0)])
    rows = [_row(case, "limit", "limit", [1.0, 1.0, 1.0]), _row(case, GPY_LOCAL, "gpy", [1.5, 1.5, 1.5]),
            _row(case, "dlt", "peer", [3.0, 3.0, 3.0])]
    results = evaluate(rows)
    assert [round(r.ratio, 3) for r in results] == [1.5, 0.667, 2.0]
    assert [r.status for r in results] == ["MISSED", "MISSED", "met"]


def test_a_goal_in_seconds_needs_no_baseline():
    case = Case("c", "10,000 datasets", 10_000, targets=[Target("c", GPY_LOCAL, "", "<", 20.0, "seconds")])
    (met,) = evaluate([_row(case, GPY_LOCAL, "gpy", [17.0, 19.0, 18.0])])
    assert met.ratio == 18.0 and met.status == "met" and met.target.describe() == "gpy --engine local seconds < 20"
    (missed,) = evaluate([_row(case, GPY_LOCAL, "gpy", [21.0])])
    assert missed.status == "MISSED"
    failed = _row(case, GPY_LOCAL, "gpy", [])
    failed.failure = "exit code 1"
    assert evaluate([failed])[0].status == "FAILED"


def test_a_target_against_a_failed_contender_is_failed_not_met():
    case = Case("c", "CSV", 1000, targets=[Target("c", "dlt", GPY_LOCAL, ">", 1.0)])
    dlt = _row(case, "dlt", "peer", [])
    dlt.failure = "exit code 1"
    (result,) = evaluate([_row(case, GPY_LOCAL, "gpy", [1.0]), dlt])
    assert result.ratio is None and result.status == "FAILED"


def test_the_table_shows_rates_ratios_to_gpy_and_failures():
    case = Case("c", "CSV → Parquet, 1,000,000 rows", 1_000_000)
    dlt = _row(case, "dlt", "peer", [])
    dlt.failure = "5 rows in its output, 6 expected"
    table = report.results_table([_row(case, "pyarrow script", "limit", [0.5]),
                                  _row(case, GPY_LOCAL, "gpy", [1.0]), dlt])
    lines = table.splitlines()
    assert lines[2] == ("| CSV → Parquet, 1,000,000 rows | pyarrow script (limit) | 1 | 0.50 s | 2.00 M rows | 100 "
                        "| 0.50 |")
    assert lines[3] == "|  | **gpy --engine local** | 1 | 1.00 s | 1.00 M rows | 100 | 1.00 |"
    assert lines[4] == "|  | dlt (peer) | 0 | FAILED: 5 rows in its output, 6 expected | | | |"


def test_a_wrong_row_count_fails_the_step_and_every_later_case_of_its_trial(tmp_path):
    first, second = Case("first", "first load", 6), Case("incremental", "incremental", 1)
    contender = Contender(GPY_LOCAL, "gpy", lambda work: [])
    rows = {case.key: Row(case, contender) for case in (first, second)}
    steps = [Step([sys.executable, "-c", "pass"], "first", expect=6, count=lambda: 5),
             Step([sys.executable, "-c", "pass"], "incremental", expect=7, count=lambda: 7)]
    ctx = Context(tmp_path, tmp_path, tmp_path, log=lambda text: None)
    assert _run_trial(contender, steps, tmp_path, rows, ctx, "test") is False
    assert rows["first"].failure == "5 rows in its output, 6 expected" and not rows["first"].ok
    assert rows["incremental"].failure == rows["first"].failure and not rows["incremental"].samples


def test_a_right_count_records_a_sample_and_a_failing_process_is_caught(tmp_path):
    case = Case("c", "CSV", 3)
    contender = Contender(GPY_LOCAL, "gpy", lambda work: [])
    ctx = Context(tmp_path, tmp_path, tmp_path, log=lambda text: None)
    rows = {"c": Row(case, contender)}
    assert _run_trial(contender, [Step([sys.executable, "-c", "pass"], "c", 3, lambda: 3)], tmp_path, rows, ctx, "t")
    assert rows["c"].ok and len(rows["c"].samples) == 1 and rows["c"].samples[0].peak_bytes > 0
    rows = {"c": Row(case, contender)}
    failing = Step([sys.executable, "-c", "raise SystemExit(4)"], "c", 3, lambda: 3)
    assert not _run_trial(contender, [failing], tmp_path, rows, ctx, "t")
    assert rows["c"].failure == "exit code 4"


def test_times_a_process_measured_itself_are_samples_of_their_cases_and_shown_in_milliseconds(tmp_path):
    whole, early, late = Case("runs", "200 runs", 200, unit="runs"), Case("10th", "run 10", 0), Case("200th", "run 200", 0)
    late.targets.append(Target("200th", GPY_LOCAL, GPY_LOCAL, "<=", 1.5, baseline_case="10th"))
    contender = Contender(GPY_LOCAL, "gpy", lambda work: [])
    rows = {case.key: Row(case, contender) for case in (whole, early, late)}
    ctx = Context(tmp_path, tmp_path, tmp_path, log=lambda text: None)
    step = Step([sys.executable, "-c", "pass"], "runs", reports=lambda: {"10th": 0.020, "200th": 0.027})
    assert _run_trial(contender, [step], tmp_path, rows, ctx, "t")
    assert [rows[k].seconds for k in ("10th", "200th")] == [0.020, 0.027] and rows["runs"].seconds > 0
    [result] = evaluate(list(rows.values()))
    assert result.status == "met" and round(result.ratio, 2) == 1.35
    assert "| 20.0 ms |" in report.results_table(list(rows.values()))


def test_only_selects_cases_by_glob_or_by_part_of_their_key(tmp_path):
    ctx = Context(tmp_path, tmp_path, tmp_path, only=["files-5M", "sql-*-noop"])
    assert ctx.wants("files-5M") and ctx.wants("sql-sqlite-noop") and not ctx.wants("files-20M", "kafka-first")
    assert Context(tmp_path, tmp_path, tmp_path, only=["kafka"]).wants("kafka-first")
    assert Context(tmp_path, tmp_path, tmp_path, scale=0.02).size(1_000_000) == 20_000


def test_state_show_is_counted_in_its_summary_and_in_its_full_form(tmp_path):
    summary = tmp_path / "summary.log"
    summary.write_text("job Scale: 3 datasets, newest first (--dataset URN or --json for the full detail)\n"
                       "  dataset  state      last run                  records  watermark\n"
                       "  d2       COMMITTED  2026-11-23T06:24:15.496Z  1        17\n"
                       "  d1       COMMITTED  2026-11-23T06:24:15.496Z  1        17\n\n")
    assert shown_datasets(summary) == 2
    full = tmp_path / "full.log"
    full.write_text('job Scale  dataset d1\n  task t COMMITTED\njob Scale  dataset d2\n  task t COMMITTED\n')
    assert shown_datasets(full) == 2


def test_a_fast_benchmark_runs_more_rounds_and_a_slow_one_fewer(tmp_path):
    from benchkit.model import Benchmark
    from benchkit.runner import run_benchmark

    case = Case("c", "CSV", 1)

    def counting(log):
        return Contender(GPY_LOCAL, "gpy", lambda work: (log.append(1), [Step([sys.executable, "-c", "pass"], "c", 1,
                                                                              lambda: 1)])[1])

    ctx = Context(tmp_path, tmp_path, tmp_path, repeat=3, log=lambda text: None)
    for factor, cap, expected in ((3, None, 9), (1, None, 3), (3, 1, 1)):
        trials: list[int] = []
        [row] = run_benchmark(Benchmark("b", [case], [counting(trials)], max_rounds=cap, rounds_factor=factor), ctx)
        assert len(trials) == expected and len(row.samples) == expected


def test_a_target_against_the_fastest_of_several_peers_names_the_one_it_met():
    peers = ("Polars", "DuckDB", "pyarrow write_dataset")
    case = Case("c", "CSV", 1000, targets=[Target("c", GPY_LOCAL, peers, "<=", 1.0)])
    rows = [_row(case, GPY_LOCAL, "gpy", [2.0]), _row(case, "Polars", "peer", [1.6]),
            _row(case, "DuckDB", "peer", [2.5]), _row(case, "pyarrow write_dataset", "peer", [3.0])]
    (result,) = evaluate(rows)
    assert result.ratio == 1.25 and result.status == "MISSED" and result.against == "Polars"
    assert result.target.describe() == ("gpy --engine local time ÷ the fastest of Polars, DuckDB, pyarrow write_dataset"
                                        " time <= 1")
    assert "| 1.25 (Polars) | MISSED |" in report.targets_table([result])
    failed = _row(case, "Polars", "peer", [])
    failed.failure = "exit code 1"
    (result,) = evaluate([rows[0], failed, *rows[2:]])
    assert result.ratio == 0.8 and result.against == "DuckDB"  # measured against the peers that ran
    sql = Case("s", "SQL", 1000, targets=[Target("s", GPY_LOCAL, ("DuckDB", "Polars"), ">=", 0.9, "rate")])
    (rate,) = evaluate([_row(sql, GPY_LOCAL, "gpy", [2.0]), _row(sql, "DuckDB", "peer", [1.0]),
                        _row(sql, "Polars", "peer", [4.0])])
    assert rate.ratio == 0.5 and rate.against == "DuckDB" and rate.status == "MISSED"


def test_memory_targets_compare_peaks_in_one_case_or_across_two():
    small, large = Case("files-5M", "5M", 5), Case("files-20M", "20M", 20)
    targets = [Target("files-20M", GPY_LOCAL, "pyarrow script", "<=", 1.5, "memory"),
               Target("files-20M", GPY_LOCAL, GPY_LOCAL, "<=", 1.1, "memory", baseline_case="files-5M")]
    large.targets = targets
    rows = [_row(small, GPY_LOCAL, "gpy", [1.0], [400]), _row(large, "pyarrow script", "limit", [1.0], [300]),
            _row(large, GPY_LOCAL, "gpy", [4.0, 4.0], [500, 480])]
    over, growth = evaluate(rows)
    assert round(over.ratio, 3) == 1.667 and over.status == "MISSED"
    assert growth.ratio == 1.25 and growth.status == "MISSED"
    assert over.target.describe() == "gpy --engine local peak memory ÷ pyarrow script peak memory <= 1.5"
    assert growth.target.describe() == "gpy --engine local peak memory ÷ its own at files-5M <= 1.1"
    assert evaluate(rows[1:])[1].status == "FAILED"  # the 5M case did not run


def test_the_compaction_lake_holds_exact_duplicates_across_hours_and_the_gobblin_job_reads_it(tmp_path):
    import pyarrow.dataset as ds
    from benchkit.peers import parquet_rows
    from benchkit.suites import compaction

    from tests.support.cli import run_gpy_here

    rows = 4800
    compaction.make_lake(tmp_path / "lake", rows)
    day = tmp_path / "lake" / compaction.TOPIC / "hourly" / compaction.DAY
    assert sorted(p.name for p in day.iterdir()) == [f"{h:02d}" for h in range(compaction.HOURS)]
    table = ds.dataset(str(day), format="parquet").to_table()
    distinct, duplicates = compaction.split(rows)
    assert (table.num_rows, duplicates) == (rows, 240)
    assert table.group_by(table.column_names).aggregate([]).num_rows == distinct
    # a repeated event is the same row byte for byte, in its own hour or another one
    hours = {}
    for hour in day.iterdir():
        for event in ds.dataset(str(hour), format="parquet").to_table().column("event_id").to_pylist():
            hours.setdefault(event, []).append(hour.name)
    repeated = [h for h in hours.values() if len(h) > 1]
    assert len(repeated) == duplicates
    assert any(h[0] == h[1] for h in repeated) and any(h[0] != h[1] for h in repeated)

    job = compaction.gpy_job(tmp_path / "work", tmp_path / "lake")
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 0, result.stdout
    assert parquet_rows(tmp_path / "work" / "lake") == distinct
    assert parquet_rows(tmp_path / "lake") == rows  # the input is left as it was
