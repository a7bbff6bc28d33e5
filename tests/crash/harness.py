"""Crash harness: run a real job as a subprocess, kill it with SIGKILL, rerun until it succeeds, check.

Invariants after every campaign:
- every source row appears in the published output exactly once;
- the state store reads cleanly (``gpy state show`` exits 0);
- each dataset's state matches its published data: the files its snapshot records are exactly the files
  whose rows were published, and nothing else was published;
- nothing is left behind: no staging or task output file, no run or attempt folder, no temporary file of a
  publish, the state store, the commit log or the lock, no commit sequence, no lock — only the data, the
  published files and the state store's run and ``current`` files.

Used by tests/crash/ (a bounded number of kills in CI) and by ``scripts/crash_soak.py`` (thousands).
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

ROWS_PER_FILE = 30
DATASETS = ("eu", "us", "apac")
LOGS = "test-logs"  # the campaigns' phase logs, beside the job file
# what a job run may leave under its folders once it has succeeded: the rest is a leftover
KEPT_FILE = re.compile(r"(data/[^/]+/f\d{5}\.csv|published/[^/]+/part\.task_Crash_\d+_\d+_0\.parquet"
                       r"|state/Crash/[^/]+-(job_Crash_\d+|current)\.jst|state/_history/Crash/\d{15}-job_Crash_\d+\.json)")
KEPT_FOLDER = re.compile(r"(data|published)(/[^/]+)?|state(/Crash|/_commit_sequences(/Crash)?|/_history(/Crash)?)?|(staging|output)(/Crash)?")


@dataclass
class CrashJob:
    """A three-dataset file job whose files carry globally unique order ids (file k: k*1000 + row).

    Everything lives under ``root`` on local disk, or, with ``store_url`` (``s3://bucket/prefix``) and the
    ``job_keys`` that reach the store, the data, staging, task output, published files, state store, commit
    log and lock all live on that store and only the job file stays in ``root``.
    """

    root: Path
    store_url: str | None = None
    job_keys: str = ""
    env: dict = field(default_factory=dict)
    datasets: tuple[str, ...] = DATASETS
    files_written: int = 0
    kills: int = 0
    runs: int = 0
    exit_codes: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        import fsspec

        base = self.store_url.rstrip("/") if self.store_url else str(self.root)
        self.fs, self.base = fsspec.core.url_to_fs(base, **self._storage_options())
        self.data_url = f"{base}/data"
        self.final_url = f"{base}/published"
        self.state_url = f"{base}/state"
        self.job_file = self.root / "crash.pull"
        if not self.store_url:  # the local folders, for tests that look at them directly
            self.data, self.final, self.state = self.root / "data", self.root / "published", self.root / "state"
        self.root.mkdir(parents=True, exist_ok=True)
        self.job_file.write_text("\n".join([
            "job.name=Crash",
            "source.class=gobblin_py.connectors.files.filebased.FileBasedSource",
            f"source.filebased.data.directory={self.data_url}",
            "source.filebased.dataset.urn.level=subdirectory",
            "extract.namespace=crash",
            f"writer.staging.dir={base}/staging",
            f"writer.output.dir={base}/output",
            f"data.publisher.final.dir={self.final_url}",
            f"state.store.dir={self.state_url}",
            "writer.file.pathType=TABLENAME",
            "task.maxretries=0",
            "job.lock.timeout.seconds=600",
            self.job_keys,
        ]))

    def _storage_options(self) -> dict:
        if not self.store_url:
            return {}
        from gobblin_py.io.fs_settings import FsSettings

        keys = dict(line.split("=", 1) for line in self.job_keys.splitlines() if "=" in line)
        options = FsSettings.load(keys).storage_options().get("s3", {})
        return {**options, "use_listings_cache": False, "skip_instance_cache": True}

    def _path(self, *parts: str) -> str:
        return "/".join([self.base.rstrip("/"), *parts])

    def add_files(self, count: int) -> None:
        for _ in range(count):
            k = self.files_written
            dataset = self.datasets[k % len(self.datasets)]
            rows = "\n".join(f"{k * 1000 + i},{dataset}" for i in range(ROWS_PER_FILE))
            path = self._path("data", dataset, f"f{k:05d}.csv")
            if not self.store_url:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self.fs.pipe_file(path, f"order_id,region\n{rows}\n".encode())
            self.files_written += 1

    def command(self) -> list[str]:
        return [sys.executable, "-m", "gobblin_py.cli", "--log-format", "json", "run", str(self.job_file),
                "--engine", "local"]

    def run(self, env: dict | None = None, kill_after: float | None = None, timeout: float = 300) -> int:
        """One run; with ``kill_after`` it is SIGKILLed that many seconds after start (if still running)."""
        self.runs += 1
        proc = subprocess.Popen(self.command(), env={**os.environ, **self.env, **(env or {})},
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
        paths = [p for p in self._find("published") if p.endswith(".parquet")]
        contents = self.fs.cat(paths) if paths else {}  # all at once (concurrent requests on an object store)
        return sorted(i for data in contents.values() for i in pq.read_table(io.BytesIO(data)).column("order_id").to_pylist())

    def _find(self, *parts: str) -> list[str]:
        try:
            return sorted(self.fs.find(self._path(*parts)))
        except FileNotFoundError:
            return []

    def pending_commits(self) -> list[str]:
        """The commit sequences runs left unfinished."""
        return [p for p in self._find("state", "_commit_sequences") if p.endswith(".json")]

    def check_rows(self) -> None:
        """Every source row published exactly once, and no commit left unfinished."""
        ids = self.published_ids()
        expected = sorted(k * 1000 + i for k in range(self.files_written) for i in range(ROWS_PER_FILE))
        assert len(ids) == len(set(ids)), f"{len(ids) - len(set(ids))} rows published twice"
        assert ids == expected, f"{len(set(expected) - set(ids))} rows never published"
        left = [p for p in self._find("state", "_commit_sequences") if p.endswith(".json")]
        assert not left, f"a commit sequence was left behind: {left}"

    def check(self) -> None:
        ids = self.published_ids()
        expected = sorted(k * 1000 + i for k in range(self.files_written) for i in range(ROWS_PER_FILE))
        duplicates = len(ids) - len(set(ids))
        assert duplicates == 0, f"{duplicates} rows published twice"
        missing = sorted(set(expected) - set(ids))
        assert not missing, f"{len(missing)} rows never published (first: {missing[:5]})"
        assert ids == expected
        shown = subprocess.run([sys.executable, "-m", "gobblin_py.cli", "state", "show", str(self.job_file), "--json"],
                               capture_output=True, text=True, timeout=120, env={**os.environ, **self.env})
        assert shown.returncode == 0, shown.stderr
        datasets = {d["urn"]: d for d in json.loads(shown.stdout)["datasets"]}
        assert set(datasets) == set(self.datasets)
        from gobblin_py.store import FsDatasetStateStore
        from gobblin_py.connectors.files.filebased import SNAPSHOT_KEY, parse_snapshot

        store = FsDatasetStateStore(self.state_url, storage_options=self._storage_options())
        for urn in self.datasets:
            state = store.get_latest_dataset_state("Crash", urn)
            snapshot = set()
            for task in state.all_task_states():
                snapshot |= {e.rsplit(":::", 1)[0] for e in parse_snapshot(task.get_prop(SNAPSHOT_KEY))}
                assert task.working_state.value == "COMMITTED"
            on_disk = {p for p in self._find("data", urn) if p.endswith(".csv")}
            assert snapshot == on_disk, f"dataset {urn}: state and published data disagree"
        left = [p for p in self._find("state", "_commit_sequences") if p.endswith(".json")]
        assert not left, f"a commit sequence was left behind: {left}"
        self.check_nothing_left()

    def leftovers(self) -> list[str]:
        """Files and folders under the job's folders that a run which succeeded should not have left."""
        base = self.base.rstrip("/")
        found = []
        for path, info in self.fs.find(base, withdirs=True, detail=True).items():
            relative = path[len(base):].lstrip("/")
            if not relative or relative == self.job_file.name and not self.store_url or relative.split("/")[0] == LOGS:
                continue
            kept = KEPT_FOLDER if info["type"] == "directory" else KEPT_FILE
            if not kept.fullmatch(relative):
                found.append(relative)
        return sorted(found)

    def check_nothing_left(self) -> None:
        left = self.leftovers()
        assert not left, f"{len(left)} files or folders left behind: {left[:20]}"


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


def boundary_campaign(job: CrashJob, max_boundaries: int = 200, full_checks: bool = True) -> int:
    """Kill the run at its 1st, 2nd, … commit boundary in turn (each time rerunning to success with new data).

    After each recovery every check runs, or with ``full_checks=False`` the row and commit-log checks (a row
    lost or doubled stays so, and the state checks run at the end).
    """
    job.add_files(len(job.datasets))
    for n in range(1, max_boundaries + 1):
        code = job.run(env={"GPY_TEST_CRASH_AT_BOUNDARY": str(n)})
        job.run_until_success()
        job.check() if full_checks else job.check_rows()
        if code == 0:  # the run had fewer than n boundaries: all were covered
            job.check()
            return n - 1
        job.add_files(len(job.datasets))
    job.check()
    return max_boundaries


if __name__ == "__main__":  # pragma: no cover
    print("use scripts/crash_soak.py")
