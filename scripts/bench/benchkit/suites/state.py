"""A state store of 10,000 datasets: the run committing them all, ``gpy state show`` on it, the next run.

The job comes from a *scale module*: ``scripts/bench/state_at_scale.py`` when it is there, else this
module's own :func:`build`. The interface is one function::

    build(root: Path, datasets: int) -> Path   # the job file

which writes, under ``root``, a file job whose every dataset is one sub-folder of one CSV file of one row
(``source.filebased.dataset.urn.level=subdirectory``), published under ``root/published`` with its state under
``root/state``. Each trial builds it afresh (untimed), then times, as whole processes: the first run
(``--engine local``: 10,000 tasks, 10,000 exactly-once commits), ``gpy state show`` on the job (every dataset;
its output must show each one), and the next run with nothing new. Only gpy takes part. At full size a run
takes over a minute, so this benchmark runs one round (``MAX_ROUNDS``).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from benchkit.context import Context
from benchkit.model import GPY_LOCAL, Benchmark, Case, Contender, Step
from benchkit.peers import parquet_rows

DATASETS = 10_000
MAX_ROUNDS = 1
RUN, SHOW, NOOP = "state-run", "state-show", "state-noop"
KEYS = (RUN, SHOW, NOOP)
SCALE_MODULE = "state_at_scale"


def build(root: Path, datasets: int) -> Path:
    """The many-dataset job (used when no scale module is found): one folder, one file, one row per dataset."""
    data = root / "data"
    for i in range(datasets):
        folder = data / f"d{i:05d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "part.csv").write_text(f"id,name\n{i},row{i}\n")
    job = root / "scale.pull"
    job.write_text("\n".join([
        "job.name=Scale", "source.class=gobblin_py.sources.filebased.FileBasedSource",
        f"source.filebased.data.directory={data}", "source.filebased.dataset.urn.level=subdirectory",
        "extract.namespace=scale", f"writer.staging.dir={root}/staging", f"writer.output.dir={root}/output",
        f"data.publisher.final.dir={root}/published", f"state.store.dir={root}/state",
        "writer.file.pathType=TABLENAME", "taskexecutor.threadpool.size=4", "",
    ]))
    return job


def scale_module() -> ModuleType | None:
    """``state_at_scale`` when it exists and offers ``build``, else None (this module's ``build`` is used)."""
    try:
        module = importlib.import_module(SCALE_MODULE)
    except ImportError:
        return None
    return module if callable(getattr(module, "build", None)) else None


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
    module = scale_module()
    maker = module.build if module is not None else build
    source = f"{SCALE_MODULE}.py" if module is not None else "benchkit/suites/state.py"

    def trial(work: Path) -> list[Step]:
        job = maker(work / "scale", datasets)
        out, show_log = job.parent / "published", work / "state-show.log"
        return [Step(ctx.gpy("run", str(job), "--engine", "local"), RUN, datasets, lambda: parquet_rows(out)),
                Step(ctx.gpy("state", "show", str(job)), SHOW, datasets, lambda: shown_datasets(show_log),
                     log=show_log),
                Step(ctx.gpy("run", str(job), "--engine", "local"), NOOP, datasets, lambda: parquet_rows(out))]

    cases = [Case(RUN, f"{datasets:,} datasets of one row: the run committing them", datasets, unit="datasets"),
             Case(SHOW, f"`gpy state show` on {datasets:,} datasets", datasets, unit="datasets"),
             Case(NOOP, f"{datasets:,} datasets, the next run with nothing new", 0, unit="datasets")]
    yield Benchmark("state", cases, [Contender(GPY_LOCAL, "gpy", trial)], max_rounds=MAX_ROUNDS,
                    notes=[f"State at scale: the job built by {source}; one round (a full run takes minutes)."])
