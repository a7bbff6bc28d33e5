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
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

ROWS_PER_FILE = 30
DATASETS = ("eu", "us", "apac")
LOGS = "test-logs"  # the campaigns' phase logs, beside the job file
PHASE_LOG_ENV = "GPY_TEST_PHASE_LOG"  # gobblin_py.io.crash_points
# what a job run may leave under its folders once it has succeeded: the rest is a leftover
KEPT_FILE = re.compile(r"(data/[^/]+/f\d{5}\.csv|published/[^/]+/part\.task_Crash_\d+_\d+_0\.parquet"
                       r"|published/_gpy_published\.Crash\.marker|published/_gpy_owner\.marker"
                       r"|state/Crash/[^/]+-(job_Crash_\d+|current)\.jst|state/Crash/_gpy_state_index\.json|state/_history/Crash/\d{15}-job_Crash_\d+\.json)")
KEPT_FOLDER = re.compile(r"(data|published)(/[^/]+)?|state(/Crash|/_commit_sequences(/Crash)?|/_history(/Crash)?)?|(staging|output)(/Crash)?")


def _exits_by(proc: subprocess.Popen, instant: float) -> bool:
    """Whether the process exits before ``instant`` (``time.monotonic``), waiting until then at most. Its exit is
    seen at once through a pidfd, where ``Popen.wait`` polls and would see it up to 50 ms late."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux 5.3 or later
        try:
            proc.wait(timeout=max(0.0, instant - time.monotonic()))
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        return bool(select.select([pidfd], [], [], max(0.0, instant - time.monotonic()))[0])
    finally:
        os.close(pidfd)


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
    started_at: float = 0.0
    killed_at: float | None = None
    ended_at: float | None = None  # the last run's exit, unless it was killed
    late: float = 0.0  # how long after its instant the last kill was sent (the harness woke late, or saw the log late)
    boundary_scoped: bool = False  # the last boundary campaign counted each dataset's boundaries on their own

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

    def run(self, env: dict | None = None, kill_after: float | None = None, timeout: float = 300,
            kill_at: Callable[[subprocess.Popen], float | None] | None = None) -> int:
        """One run; with ``kill_after`` it is SIGKILLed that many seconds after start, with ``kill_at`` at the
        instant it returns for the started process (if still running then; None: not at all). ``started_at``,
        ``killed_at`` and ``ended_at`` (its exit, unless killed) keep the instants (``time.monotonic``, the clock
        of the phase logs)."""
        self.runs += 1
        self.killed_at = self.ended_at = None
        self.started_at = time.monotonic()
        proc = subprocess.Popen(self.command(), env={**os.environ, **self.env, **(env or {})},
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            instant = kill_at(proc) if kill_at is not None else \
                None if kill_after is None else self.started_at + kill_after
            if instant is not None:
                if _exits_by(proc, instant):
                    self.ended_at = time.monotonic()
                else:
                    self.killed_at = time.monotonic()
                    self.late = self.killed_at - instant
                    proc.send_signal(signal.SIGKILL)
                    self.kills += 1
            _, err = proc.communicate(timeout=timeout)
            if self.ended_at is None and self.killed_at is None:
                self.ended_at = time.monotonic()
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        code = proc.returncode
        self.exit_codes.append(code)
        if code not in (0, -signal.SIGKILL):
            raise AssertionError(f"run exited {code}: {err.decode(errors='replace')[-3000:]}")
        if code == -signal.SIGKILL and kill_after is None and kill_at is None:
            self.kills += 1
        return code

    def run_killed_after(self, entered: str, delay: float, log: Path, timeout: float = 300) -> float | None:
        """One run with a phase log, SIGKILLed ``delay`` seconds after it entered the phase ``entered`` for the
        first time (``lock``, ``tasks``, ``commit.datasets``: the instant read from the log as the run writes it,
        on the clock the log shares with this process); the kill's instant, or None if it ended first."""
        marker = f"enter {entered} 1 "

        def after_entry(proc: subprocess.Popen) -> float | None:
            while proc.poll() is None and time.monotonic() - self.started_at < timeout:
                text = log.read_text() if log.exists() else ""
                at = next((float(line.split()[3]) for line in text.splitlines() if line.startswith(marker)), None)
                if at is not None:
                    return at + delay
                time.sleep(0.0005)
            return None

        self.run(env={PHASE_LOG_ENV: str(log)}, kill_at=after_entry, timeout=timeout)
        return self.killed_at

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

    def rows_expected(self) -> int:
        """How many rows the source has: after ``check()``, each published once, checked by its id."""
        return self.files_written * ROWS_PER_FILE

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
        from gobblin_py.connectors.files.file_settings import SNAPSHOT_KEY
        from gobblin_py.connectors.files.filebased import parse_snapshot
        from gobblin_py.store import FsDatasetStateStore, open_state_store

        keys = dict(line.split("=", 1) for line in self.job_keys.splitlines() if "=" in line)
        store = open_state_store({**keys, "state.store.dir": self.state_url}) if keys.get("state.store.type") == "mysql" \
            else FsDatasetStateStore(self.state_url, storage_options=self._storage_options())
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


def killed_boundaries(job: CrashJob) -> dict[str, list[str]]:
    """Per dataset (or batch), the boundaries a boundary campaign's runs were killed at, in order: ``before_log``,
    ``logged``, each commit step's kind (``fs_rename``, ``dataset_state``, …), ``synced_one``, ``done``."""
    log = job.root / LOGS / "boundaries.log"
    found: dict[str, list[str]] = {}
    previous: dict[str | None, int] = {}  # per dataset when the campaign counted each dataset's own
    for line in log.read_text().splitlines() if log.exists() else []:
        number, name = line.split(" ", 1)
        dataset, _, where = name.partition(":")
        scope = dataset if job.boundary_scoped else None
        assert int(number) == previous.get(scope, 0) + 1, f"a kill skipped a boundary before {line}"
        previous[scope] = int(number)
        found.setdefault(dataset, []).append(where.split(":")[-1])
    return found


def check_boundaries(job: CrashJob, covered: int, steps: set[str], datasets: tuple[str, ...] | None = None) -> None:
    """The boundary campaign's kills landed at each of its ``covered`` boundaries, in every one of ``datasets``
    (default: the job's), and among them before a log, with it logged, after each kind of step in ``steps``
    and when done."""
    killed = killed_boundaries(job)
    assert sum(map(len, killed.values())) == covered, killed
    assert set(job.datasets if datasets is None else datasets) <= set(killed), killed
    assert {"before_log", "logged", "done", *steps} <= {kind for kinds in killed.values() for kind in kinds}, killed


def boundary_campaign(job: CrashJob, max_boundaries: int = 200, full_checks: bool = True,
                      each_dataset: bool = False, scopes: tuple[str, ...] | None = None) -> int:
    """Kill the run at its 1st, 2nd, … commit boundary in turn (each time rerunning to success with new data).

    After each recovery every check runs, or with ``full_checks=False`` the row and commit-log checks (a row
    lost or doubled stays so, and the state checks run at the end). With ``each_dataset`` the boundaries are
    counted per dataset and the campaign runs through each dataset's in turn (of ``scopes``, default all): with
    commits in parallel the n-th boundary of the run is whichever dataset gets there first, the n-th of one
    dataset is always the same one.
    """
    (job.root / LOGS).mkdir(exist_ok=True)
    log = job.root / LOGS / "boundaries.log"  # "<n> <dataset>:<boundary>" for each run killed at one
    job.boundary_scoped = each_dataset
    covered = 0
    for scope in (scopes or job.datasets) if each_dataset else (None,):
        job.add_files(len(job.datasets))
        for n in range(1, max_boundaries + 1):
            env = {"GPY_TEST_CRASH_AT_BOUNDARY": str(n), "GPY_TEST_BOUNDARY_LOG": str(log)}
            code = job.run(env={**env, "GPY_TEST_BOUNDARY_OF": scope} if scope else env)
            job.run_until_success()
            job.check() if full_checks else job.check_rows()
            if code == 0:  # the run had fewer than n boundaries: all were covered
                break
            assert n < max_boundaries, f"still a boundary after {max_boundaries}"
            covered += 1
            job.add_files(len(job.datasets))
    job.check()
    return covered


if __name__ == "__main__":  # pragma: no cover
    print("use scripts/crash_soak.py")
