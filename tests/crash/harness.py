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
import select
import signal
import subprocess
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

ROWS_PER_FILE = 30
DATASETS = ("eu", "us", "apac")
LOGS = "test-logs"  # the campaigns' phase logs, beside the job file
RUNS_PER_STRATUM = 3  # a random campaign's runs at most for one kill: the others ended before their instant
PHASE_LOG_ENV = "GPY_TEST_PHASE_LOG"  # gobblin_py.sdk.crash_points
# what a job run may leave under its folders once it has succeeded: the rest is a leftover
KEPT_FILE = re.compile(r"(data/[^/]+/f\d{5}\.csv|published/[^/]+/part\.task_Crash_\d+_\d+_0\.parquet"
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
    lock_at: float = 0.0
    killed_at: float | None = None
    ended_at: float | None = None  # the last run's exit, unless it was killed
    boundary_scoped: bool = False  # the last boundary campaign counted each dataset's boundaries on their own
    measured: dict = field(default_factory=dict)  # per phase, its share of each measured run's lock-to-exit window

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

    def run_killed_after_lock(self, delay: float, log: Path, timeout: float = 300) -> float | None:
        """One run with a phase log, SIGKILLed ``delay`` seconds after it took its lock (the instant read from
        the log, on the clock it shares with this process); the kill's instant, or None if it ended first."""

        def after_lock(proc: subprocess.Popen) -> float | None:
            while proc.poll() is None and time.monotonic() - self.started_at < timeout:
                text = log.read_text() if log.exists() else ""
                locked = next((float(line.split()[3]) for line in text.splitlines()
                               if line.startswith("enter lock ")), None)
                if locked is not None:
                    return locked + delay
                time.sleep(0.0005)
            return None

        self.run(env={PHASE_LOG_ENV: str(log)}, kill_at=after_lock, timeout=timeout)
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


def open_phases(lines: list[str], instant: float) -> set[str]:
    """The phases a run was inside at ``instant``, from its phase log (``enter|leave <phase> <n> <time>``)."""
    inside: set[tuple[str, str]] = set()
    for line in lines:
        parts = line.split()
        if len(parts) < 4 or parts[0] not in ("enter", "leave") or float(parts[3]) > instant:
            continue
        event, name, count = parts[:3]
        if event == "enter":
            inside.add((name, count))
        else:
            inside.discard((name, count))
    return {name for name, _ in inside}


@dataclass
class Landings:
    """Where a random campaign's kills landed: after the run took its lock, inside its tasks, inside a commit."""

    kills: int = 0
    finished: int = 0  # runs that ended before their instant came
    after_lock: int = 0
    tasks: int = 0
    commits: int = 0
    phases: Counter = field(default_factory=Counter)
    window: tuple[float, float] = (0.0, 0.0)
    # the share of the window the unkilled runs spent in their tasks and in their commits (the medians)
    measured: dict[str, float] = field(default_factory=lambda: {"tasks": 0.0, "commits": 0.0})
    # lock to exit of every unkilled run: the measured ones, then each that ended before its instant
    lengths: list[float] = field(default_factory=list)
    first_window: float = 0.0  # the window before the kills

    def measure(self, length: float) -> None:
        """One more unkilled run's seconds from its lock to its exit: the window is the quicker runs' again."""
        self.lengths.append(length)
        self.window = (self.window[0], quicker(self.lengths))

    def record(self, lines: list[str], killed_at: float | None) -> None:
        if killed_at is None:
            self.finished += 1
            return
        self.kills += 1
        entered = {line.split()[1] for line in lines if line.startswith("enter ")
                   and float(line.split()[3]) <= killed_at}
        inside = open_phases(lines, killed_at)
        self.after_lock += "lock" in entered
        self.tasks += "tasks" in inside
        self.commits += any(name.startswith("commit.") for name in inside)
        self.phases.update(inside or {"(between phases)" if "lock" in entered else "(before the lock)"})

    def describe(self) -> str:
        where = ", ".join(f"{name} {count}" for name, count in sorted(self.phases.items()))
        return (f"{self.kills} kills over the {self.window[1]:.3f} s from taking the lock to the end "
                f"({self.first_window:.3f} s before the kills; the lower quartile of {len(self.lengths)} unkilled "
                f"runs; the lock taken {self.window[0]:.3f} s after start): "
                f"{self.after_lock} after the lock, {self.tasks} in tasks, {self.commits} in commits "
                f"({where}); {self.finished} runs ended before their instant; the unkilled runs spent "
                f"{self.measured['tasks']:.0%} of the window in tasks, {self.measured['commits']:.0%} in commits")

    def check_spread(self, in_commits: bool = True) -> None:
        """Every kill after the lock, and inside tasks and inside commits at least a third as many kills as uniform
        instants would put there: the unkilled runs' share of the window in that phase, times the kills (killed
        runs are mostly slower than the window, the quicker unkilled runs', so fewer instants reach their commits,
        the last phase, than its share: a job is shaped for its commits to fill a good part). So at least one
        in each phase the unkilled runs spent time in, and a third of the kills in one that filled the window.
        Without ``in_commits`` the commits are not counted: a job whose commits are too short a part of the window
        for random instants to reach (its boundary and phase campaigns aim at them). No more than a quarter as
        many runs as kills may end before their instant."""
        assert self.kills and self.after_lock == self.kills, self.describe()
        for phase, landed in (("tasks", self.tasks), ("commits", self.commits))[:2 if in_commits else 1]:
            assert 3 * landed >= self.measured[phase] * self.kills, f"too few kills in {phase}: {self.describe()}"
        assert self.finished <= self.kills // 4, f"too many runs ended before their instant: {self.describe()}"


def quicker(lengths: list[float]) -> float:
    """The window's length from the quicker runs (the lower quartile): one too long sends the last kills past a
    run's end."""
    return sorted(lengths)[len(lengths) // 4]


def lock_to_exit_window(job: CrashJob, runs: int = 3, files: int = 0) -> tuple[float, list[float]]:
    """Seconds from a run's start to taking its lock (the median), and from taking it to the run's end (one per
    run) over ``runs`` unkilled runs, each with ``files`` new files (as the campaign's runs have), read from their
    phase logs."""
    locks, ends = [], []
    job.measured = {"tasks": [], "commits": []}
    for _ in range(runs):
        job.add_files(files or len(job.datasets))
        ends.append(_lock_to_exit(job))
        locks.append(job.lock_at - job.started_at)
    return statistics.median(locks), ends


def _lock_instant(lines: list[str]) -> float | None:
    return next((float(line.split()[3]) for line in lines if line.startswith("enter lock ")), None)


def _time_inside(lines: list[str], wanted: Callable[[str], bool], start: float, end: float) -> float:
    """Seconds of [start, end] a run spent inside any phase whose name is ``wanted`` (nested ones counted once)."""
    depth, since, total = 0, start, 0.0
    for line in lines:
        parts = line.split()
        if len(parts) < 4 or parts[0] not in ("enter", "leave") or not wanted(parts[1]):
            continue
        at = min(max(float(parts[3]), start), end)
        if parts[0] == "enter":
            depth, since = depth + 1, at if depth == 0 else since
        elif depth:
            depth -= 1
            total += (at - since) if depth == 0 else 0.0
    return total


def _lock_to_exit(job: CrashJob) -> float:
    """One unkilled run with a phase log; seconds from taking its lock to its end (``job.lock_at``: the lock's
    instant)."""
    (job.root / LOGS).mkdir(exist_ok=True)
    log = job.root / LOGS / f"measure-{job.runs:05d}.log"
    assert job.run(env={PHASE_LOG_ENV: str(log)}) == 0
    ended = job.ended_at
    assert ended is not None
    lines = log.read_text().splitlines()
    locked = _lock_instant(lines)
    assert locked is not None, f"no lock in {log}"
    job.lock_at = locked
    window = ended - job.lock_at
    for phase, wanted in (("tasks", lambda name: name == "tasks"), ("commits", lambda name: name.startswith("commit."))):
        job.measured.setdefault(phase, []).append(_time_inside(lines, wanted, job.lock_at, ended) / window)
    return window


def random_campaign(job: CrashJob, kills: int, seed: int, files_per_run: int = 0) -> Landings:
    """``kills`` runs each SIGKILLed at a random instant of the measured lock-to-exit window, each with
    ``files_per_run`` new files (else one per dataset) and each followed by runs that finish what it left; then
    every check.

    The instants are uniform over the window and stratified (the k-th of n kills falls in the k-th n-th of it,
    in a random order), so where the kills land follows how long each phase lasts, not luck: the landings say
    how many came after the lock, inside tasks and inside commits (read from each run's phase log).

    A run that ends before its instant is an unkilled run like the measured ones: the window is measured again
    with it (runs vary with the machine's load, and the measured runs may have met a slower spell than the
    campaign's), and its stratum gets another run, up to ``RUNS_PER_STRATUM`` in all.
    """
    rng = random.Random(seed)
    job.add_files(6)
    job.run_until_success()  # a warm start: the first run of a job is slower than the rest
    per_run = files_per_run or len(job.datasets)
    locked, lengths = lock_to_exit_window(job, runs=5, files=per_run)
    landings = Landings(window=(locked, 0.0))
    for length in lengths:
        landings.measure(length)
    landings.first_window = landings.window[1]
    landings.measured = {phase: statistics.median(shares) for phase, shares in job.measured.items()}
    for stratum in rng.sample(range(kills), kills):
        for _ in range(RUNS_PER_STRATUM):
            job.add_files(per_run)  # as much to do as the measured runs had
            log = job.root / LOGS / f"run-{job.runs:05d}.log"
            killed_at = job.run_killed_after_lock(landings.window[1] * (stratum + rng.random()) / kills, log)
            lines = log.read_text().splitlines() if log.exists() else []
            landings.record(lines, killed_at)
            if killed_at is not None:
                job.run_until_success()  # finishes what the kill left: the next killed run starts from a clean store
                break
            lock = _lock_instant(lines)
            if lock is not None and job.ended_at is not None:
                landings.measure(job.ended_at - lock)
    job.run_until_success()
    job.check()
    print(landings.describe())
    return landings


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
                      each_dataset: bool = False) -> int:
    """Kill the run at its 1st, 2nd, … commit boundary in turn (each time rerunning to success with new data).

    After each recovery every check runs, or with ``full_checks=False`` the row and commit-log checks (a row
    lost or doubled stays so, and the state checks run at the end). With ``each_dataset`` the boundaries are
    counted per dataset and the campaign runs through each dataset's in turn: with commits in parallel the n-th
    boundary of the run is whichever dataset gets there first, the n-th of one dataset is always the same one.
    """
    (job.root / LOGS).mkdir(exist_ok=True)
    log = job.root / LOGS / "boundaries.log"  # "<n> <dataset>:<boundary>" for each run killed at one
    job.boundary_scoped = each_dataset
    covered = 0
    for scope in job.datasets if each_dataset else (None,):
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
