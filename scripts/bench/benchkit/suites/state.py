"""A state store of 10,000 datasets: the run committing them all, ``gpy state show`` on it, the next run.

The job comes from ``scripts/bench/state_at_scale.py``'s ``build(root, datasets) -> job file``, which writes, under ``root``, a file job whose every dataset is one sub-folder of one CSV file of one row
(``source.filebased.dataset.urn.level=subdirectory``), published under ``root/published`` with its state under
``root/state``. Each trial builds it afresh (untimed), then times, as whole processes: the first run
(``--engine local``: 10,000 tasks, 10,000 exactly-once commits), ``gpy state show`` on the job (every dataset;
its output must show each one), and the next run with nothing new. Only gpy takes part. At full size a run
takes over a minute, so this benchmark runs one round (``MAX_ROUNDS``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from benchkit.context import Context
from benchkit.model import GPY_LOCAL, Benchmark, Case, Contender, Step, Target
from benchkit.peers import parquet_rows
from state_at_scale import build

DATASETS = 10_000
STATE_NOTE = (
    "State at scale: the job built by state_at_scale.py; one round (a full run takes minutes). Profile "
    "(py-spy, cProfile, strace): the tasks are 40 to 50 % of the run, about 3 ms of CPU each in the worker "
    "processes (opening the CSV, moving its file from staging, loading the task's settings, the Parquet writer); "
    "the commit 35 to 45 %, on one thread while the other core idles, about 1.1 ms of CPU a dataset and two to "
    "three times that in waits on the file system (creating each state file and published folder, the batched "
    "syncs, which also wait on other programs' unwritten data). Made cheaper: state encoding and decoding "
    "(about twice as fast), the history record, folder listings, small files' read blocks, property lookups. "
    "What would take it under 20 s: committing datasets while the last tasks still run, or on two processes.")
MAX_ROUNDS = 1
RUN_GOAL_S = 20.0  # the whole first run of 10,000 datasets, start-up to exit
RUN, SHOW, NOOP = "state-run", "state-show", "state-noop"
KEYS = (RUN, SHOW, NOOP)


def shown_datasets(log: Path) -> int:
    """Datasets ``gpy state show`` printed: a summary line each (``job <name>: N datasets, newest first``, a column
    header, then one line per dataset), or else one ``job <name>  dataset <urn>`` heading each."""
    lines = log.read_text(errors="replace").splitlines()
    if lines and re.match(r"job .+: [\d,]+ datasets, newest first", lines[0]):
        return sum(1 for line in lines[2:] if line.strip())
    return sum(1 for line in lines if line.startswith("job "))


def benchmarks(ctx: Context) -> Iterator[Benchmark]:
    if not ctx.wants(*KEYS):
        return
    datasets = ctx.size(DATASETS, least=2)

    def trial(work: Path) -> list[Step]:
        job = build(work / "scale", datasets)
        out, show_log = job.parent / "published", work / "state-show.log"
        return [Step(ctx.gpy("run", str(job), "--engine", "local"), RUN, datasets, lambda: parquet_rows(out)),
                Step(ctx.gpy("state", "show", str(job)), SHOW, datasets, lambda: shown_datasets(show_log),
                     log=show_log),
                Step(ctx.gpy("run", str(job), "--engine", "local"), NOOP, datasets, lambda: parquet_rows(out))]

    goal = [Target(RUN, GPY_LOCAL, "", "<", RUN_GOAL_S, "seconds")] if datasets == DATASETS else []
    cases = [Case(RUN, f"{datasets:,} datasets of one row: the run committing them", datasets, unit="datasets",
                  targets=goal),
             Case(SHOW, f"`gpy state show` on {datasets:,} datasets", datasets, unit="datasets"),
             Case(NOOP, f"{datasets:,} datasets, the next run with nothing new", 0, unit="datasets")]
    yield Benchmark("state", cases, [Contender(GPY_LOCAL, "gpy", trial)], max_rounds=MAX_ROUNDS,
                    notes=[STATE_NOTE])
