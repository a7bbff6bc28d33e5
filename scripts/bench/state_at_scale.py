"""Benchmark: a job of many datasets — the whole run, and looking at its state afterwards.

    python scripts/bench/state_at_scale.py [--datasets 10000] [--runs 3] [--repeat 3] [--dir DIR] [--profile] [--keep]

Builds a file job whose data folder has ``--datasets`` sub-folders of one small CSV file each, with
``source.filebased.dataset.urn.level=subdirectory``: one dataset, one task, one published file and one state
per sub-folder; its tasks run in a worker process per core (``gpy.taskexecutor.processes``). Then times, each as a whole ``gpy`` process started from here:

- the first run (``gpy run --engine local``): plan, 10,000 tasks, 10,000 exactly-once commits (``--runs`` times,
  each on an empty store; the median);
- ``gpy state show`` on the job (a summary of every dataset; then once without its index file),
  ``gpy state show --dataset`` (one), ``gpy state datasets`` (medians of ``--repeat``);
- a second run, which finds nothing new but reads every dataset's previous state.

With ``--profile`` the first run runs under cProfile (``<dir>/run.prof``; slower) and the run's JSON log events
are kept, so the time between the last ``dataset_committed`` event and the end of the process can be read.
Every dataset's published file and state are checked to be there.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def build(root: Path, count: int) -> Path:
    """The data folders and the job file; returns the job file."""
    data = root / "data"
    for i in range(count):
        folder = data / f"d{i:05d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "part.csv").write_text(f"id,name\n{i},row{i}\n")
    job = root / "scale.pull"
    job.write_text("\n".join([
        "job.name=Scale",
        "source.class=gobblin_py.connectors.files.filebased.FileBasedSource",
        f"source.filebased.data.directory={data}",
        "source.filebased.dataset.urn.level=subdirectory",
        "extract.namespace=scale",
        f"writer.staging.dir={root}/staging",
        f"writer.output.dir={root}/output",
        f"data.publisher.final.dir={root}/published",
        f"state.store.dir={root}/state",
        "writer.file.pathType=TABLENAME",
        # thousands of one-row tasks spend their time in Python: worker processes, one per core, run them at once
        f"gpy.taskexecutor.processes={os.cpu_count() or 2}",
        "",
    ]))
    return job


def gpy(*args: str, profile: Path | None = None, log: Path | None = None) -> tuple[float, subprocess.CompletedProcess]:
    """Run one gpy command as its own process; its wall time and outcome."""
    if profile:
        # the click group itself, not the ``gpy`` entry: the entry ends a local run with os._exit, which would
        # leave cProfile no chance to write its file
        script = "\n".join([
            "import cProfile, sys", "from gobblin_py.cli.base import main",
            "sys.argv[0] = 'gpy'", "profiler, code = cProfile.Profile(), 0",
            "try:", "    profiler.runcall(main)", "except SystemExit as exc:", "    code = exc.code",
            f"profiler.dump_stats({str(profile)!r})", "sys.exit(code)"])
        prefix = [sys.executable, "-c", script]
    else:
        prefix = [sys.executable, "-m", "gobblin_py.cli"]
    command = [*prefix, "--log-format", "json", *args]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    elapsed = time.perf_counter() - started
    if log is not None:
        log.write_text(done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return elapsed, done


def commit_span(log: Path) -> tuple[float, float, float] | None:
    """From a run's JSON log: seconds from the first to the last dataset commit, from the last commit to the
    ``job_finished`` event, the job's own seconds, and from its start to the last task's end."""
    stamps: dict[str, list[float]] = {}
    for line in log.read_text().splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if "timestamp" in event:
            from datetime import datetime

            at = datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp()
            stamps.setdefault(event.get("event", ""), []).append(at)
    commits, finished = stamps.get("dataset_committed"), stamps.get("job_finished")
    if not commits or not finished:
        return None
    tasks = stamps.get("task_finished") or [stamps["job_started"][0]]
    return (max(commits) - min(commits), finished[-1] - max(commits), finished[-1] - stamps["job_started"][0],
            max(tasks) - stamps["job_started"][0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", type=int, default=10_000)
    parser.add_argument("--dir", default=None)
    parser.add_argument("--profile", action="store_true", help="run the first run under cProfile")
    parser.add_argument("--runs", type=int, default=3, help="first runs, each on an empty store (median)")
    parser.add_argument("--repeat", type=int, default=3, help="repeats of each state command (median)")
    parser.add_argument("--keep", action="store_true", help="keep the folder (its path is printed)")
    args = parser.parse_args()
    root = Path(args.dir or tempfile.mkdtemp(prefix="gpy-scale-")) / "scale"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    job = build(root, args.datasets)
    print(f"{args.datasets} datasets of one file each ({os.cpu_count()} cores), under {root}")
    log = root / "run.log"
    firsts, spans = [], []
    for attempt in range(args.runs):
        for folder in ("state", "published", "staging", "output"):
            shutil.rmtree(root / folder, ignore_errors=True)
        elapsed, done = gpy("run", str(job), "--engine", "local",
                            profile=root / "run.prof" if args.profile else None, log=log)
        published = sum(1 for _ in (root / "published").rglob("*.parquet"))
        currents = sum(1 for name in os.listdir(root / "state" / "Scale") if name.endswith("-current.jst"))
        assert published == args.datasets and currents == args.datasets, (published, currents)
        firsts.append(elapsed)
        spans.append(commit_span(log))
        print(f"  run {attempt + 1}: {elapsed:.2f} s", flush=True)
    first = statistics.median(firsts)
    span = spans[firsts.index(first)] if len(firsts) % 2 else None
    print(f"first run          {first:7.2f} s  median of {args.runs} (exit 0, {published} files published, "
          f"{currents} states)")
    if span:
        print(f"  plan and tasks   {span[3]:7.2f} s  job_started to the last task_finished event")
        print(f"  commits          {span[0]:7.2f} s  first to last dataset_committed event")
        print(f"  after the last   {span[1]:7.2f} s  last commit to job_finished (the job itself: {span[2]:.2f} s)")
    def median(*command: str) -> tuple[float, subprocess.CompletedProcess]:
        timed = [gpy(*command) for _ in range(args.repeat)]
        return statistics.median(t for t, _ in timed), timed[-1][1]

    shown, done = median("state", "show", str(job))
    print(f"state show         {shown:7.2f} s  ({len(done.stdout.splitlines())} lines; median of {args.repeat})")
    (root / "state" / "Scale" / "_gpy_state_index.json").unlink(missing_ok=True)
    rebuilt, _ = gpy("state", "show", str(job))
    print(f"  without an index {rebuilt:7.2f} s  (every state file read, the index rebuilt)")
    one, _ = median("state", "show", str(job), "--dataset", "d00042")
    print(f"state show --dataset {one:5.2f} s")
    listed, _ = median("state", "datasets", str(job))
    print(f"state datasets     {listed:7.2f} s")
    second, done = gpy("run", str(job), "--engine", "local")
    print(f"second run         {second:7.2f} s  (nothing new to pull)")
    if args.keep or args.profile:
        print(f"kept {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
