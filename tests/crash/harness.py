"""Crash harness: run a real job as a subprocess, kill it with SIGKILL, rerun until it succeeds, check.

Invariants after every campaign:
- every source row appears in the published output exactly once;
- the state store reads cleanly (``gpy state show`` exits 0);
- each dataset's state matches its published data: the files its snapshot records are exactly the files
  whose rows were published, and nothing else was published.

Used by tests/crash/ (a bounded number of kills in CI) and by ``scripts/crash_soak.py`` (thousands).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

ROWS_PER_FILE = 30
DATASETS = ("eu", "us", "apac")


@dataclass
class CrashJob:
    """A three-dataset file job whose files carry globally unique order ids (file k: k*1000 + row)."""

    root: Path
    files_written: int = 0
    kills: int = 0
    runs: int = 0
    exit_codes: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.data = self.root / "data"
        self.final = self.root / "published"
        self.state = self.root / "state"
        self.job_file = self.root / "crash.pull"
        self.data.mkdir(parents=True, exist_ok=True)
        self.job_file.write_text("\n".join([
            "job.name=Crash",
            "source.class=gobblin_py.sources.filebased.FileBasedSource",
            f"source.filebased.data.directory={self.data}",
            "source.filebased.dataset.urn.level=subdirectory",
            "extract.namespace=crash",
            f"writer.staging.dir={self.root}/staging",
            f"writer.output.dir={self.root}/output",
            f"data.publisher.final.dir={self.final}",
            f"state.store.dir={self.state}",
            "writer.file.pathType=TABLENAME",
            "task.maxretries=0",
            "job.lock.timeout.seconds=600",
            "",
        ]))

    def add_files(self, count: int) -> None:
        for _ in range(count):
            k = self.files_written
            dataset = DATASETS[k % len(DATASETS)]
            path = self.data / dataset / f"f{k:05d}.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            rows = "\n".join(f"{k * 1000 + i},{dataset}" for i in range(ROWS_PER_FILE))
            path.write_text(f"order_id,region\n{rows}\n")
            self.files_written += 1

    def command(self) -> list[str]:
        return [sys.executable, "-m", "gobblin_py.cli", "--log-format", "json", "run", str(self.job_file),
                "--engine", "local"]

    def run(self, env: dict | None = None, kill_after: float | None = None, timeout: float = 300) -> int:
        """One run; with ``kill_after`` it is SIGKILLed that many seconds after start (if still running)."""
        self.runs += 1
        proc = subprocess.Popen(self.command(), env={**os.environ, **(env or {})},
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            if kill_after is not None:
                try:
                    proc.wait(timeout=kill_after)
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGKILL)
                    self.kills += 1
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        code = proc.returncode
        self.exit_codes.append(code)
        if code not in (0, -signal.SIGKILL):
            raise AssertionError(f"run exited {code}: {err.decode(errors='replace')[-3000:]}")
        if code == -signal.SIGKILL and kill_after is None:
            self.kills += 1
        return code

    def run_until_success(self, limit: int = 20) -> None:
        for _ in range(limit):
            if self.run() == 0:
                return
        raise AssertionError("the job did not succeed after repeated runs")

    # ------------------------------------------------------------ checks

    def published_ids(self) -> list[int]:
        return sorted(i for f in self.final.rglob("*.parquet") for i in pq.read_table(f).column("order_id").to_pylist())

    def check(self) -> None:
        ids = self.published_ids()
        expected = sorted(k * 1000 + i for k in range(self.files_written) for i in range(ROWS_PER_FILE))
        duplicates = len(ids) - len(set(ids))
        assert duplicates == 0, f"{duplicates} rows published twice"
        missing = sorted(set(expected) - set(ids))
        assert not missing, f"{len(missing)} rows never published (first: {missing[:5]})"
        assert ids == expected
        shown = subprocess.run([sys.executable, "-m", "gobblin_py.cli", "state", "show", str(self.job_file), "--json"],
                               capture_output=True, text=True, timeout=120)
        assert shown.returncode == 0, shown.stderr
        datasets = {d["urn"]: d for d in json.loads(shown.stdout)["datasets"]}
        assert set(datasets) == set(DATASETS)
        from gobblin_py.state import FsDatasetStateStore
        from gobblin_py.sources.filebased import SNAPSHOT_KEY, parse_snapshot

        store = FsDatasetStateStore(str(self.state))
        for urn in DATASETS:
            state = store.get_latest_dataset_state("Crash", urn)
            snapshot = set()
            for task in state.all_task_states():
                snapshot |= {e.rsplit(":::", 1)[0] for e in parse_snapshot(task.get_prop(SNAPSHOT_KEY))}
                assert task.working_state.value == "COMMITTED"
            on_disk = {str(p) for p in (self.data / urn).glob("*.csv")}
            assert snapshot == on_disk, f"dataset {urn}: state and published data disagree"
        assert not list((self.state / "_commit_sequences").rglob("*.json")), "a commit sequence was left behind"


def random_campaign(job: CrashJob, kills: int, seed: int, max_delay: float = 1.6) -> None:
    """``kills`` runs each SIGKILLed at a random instant, new files arriving now and then; then a clean finish."""
    rng = random.Random(seed)
    job.add_files(6)
    while job.kills < kills:
        if rng.random() < 0.3:
            job.add_files(rng.randint(1, 3))
        job.run(kill_after=rng.uniform(0.05, max_delay))
    job.run_until_success()
    job.check()


def boundary_campaign(job: CrashJob, max_boundaries: int = 200) -> int:
    """Kill the run at its 1st, 2nd, … commit boundary in turn (each time rerunning to success with new data)."""
    job.add_files(3)
    for n in range(1, max_boundaries + 1):
        code = job.run(env={"GPY_TEST_CRASH_AT_BOUNDARY": str(n)})
        job.run_until_success()
        job.check()
        if code == 0:  # the run had fewer than n boundaries: all were covered
            return n - 1
        job.add_files(3)
    return max_boundaries


if __name__ == "__main__":  # pragma: no cover
    print("use scripts/crash_soak.py")
