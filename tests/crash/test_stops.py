"""A signal stops ``gpy run`` cleanly in every phase of a run, on every engine: exit 128 + the signal, one line on
stderr saying what was and was not committed, no traceback, history STOPPED, the job lock free, and no process
of the run left (Spark's JVM, worker processes).

Each case waits for the phase's event in the run's JSON log (``job_loading``, ``planning_started``,
``spark_starting``, ``spark_jvm_started``, ``tasks_planned`` / ``spark_started``) and sends the signal: SIGINT to the run's process group,
as Ctrl-C at a terminal does, SIGTERM to the process, as ``kill`` does. A commit is too short to aim at from
outside: the run signals itself at a commit step boundary, as the crash tests do.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gobblin_py.runtime.plan.locks import JobLock
from tests.crash.harness import CrashJob
from tests.support.environment import needs
from tests.support.processes import in_session

pytestmark = needs(sys.platform.startswith("linux"), "Linux's /proc (these tests read it)")

# the event that says the phase began, and one that would say it had ended (the signal must land before it)
PHASES = {
    "loading": ("job_loading", "job_started"),
    "planning": ("planning_started", "tasks_planned"),
    "spark start-up": ("spark_starting", "spark_started"),  # the JVM starts
    "spark context": ("spark_jvm_started", "spark_started"),  # its SparkContext starts, over py4j
    "tasks": ("tasks_planned", "dataset_committed"),
    "spark tasks": ("spark_started", "dataset_committed"),
}
# the SparkContext starts in one call into the JVM, which a signal does not cut short: the run stops after it
UNINTERRUPTIBLE = ("spark context",)
SIGNALS = (signal.SIGINT, signal.SIGTERM)
CASES = [
    *[("local", phase, s) for phase in ("loading", "planning", "tasks", "commit") for s in SIGNALS],
    *[("processes", "tasks", s) for s in SIGNALS],
    pytest.param("spark", "spark start-up", signal.SIGTERM, marks=pytest.mark.spark),
    pytest.param("spark", "spark context", signal.SIGINT, marks=pytest.mark.spark),
    pytest.param("spark", "spark tasks", signal.SIGINT, marks=pytest.mark.spark),
]


def _job_file(root: Path, engine: str, phase: str) -> Path:
    """A job of the testing source, slow in the phase aimed at, without a pause written for the test."""
    lines = [
        "job.name=Stops",
        "source.class=gobblin_py.connectors.testdata.test_sources.SequentialTestSource",
        # tasks: 40 of one 2 s batch each (a task stops at its next batch); planning: 5,000 work units;
        # loading: 15,000 keys
        "source.numParallelism=" + ("5000" if phase == "planning" else "40"),
        "source.numRecordsPerExtract=200",
        "source.sleepTimePerRecordMillis=10",
        f"writer.staging.dir={root}/staging",
        f"writer.output.dir={root}/output",
        f"data.publisher.final.dir={root}/published",
        f"state.store.dir={root}/state",
        "spark.master=local[1]",
    ]
    if engine == "processes":
        lines.append("gpy.taskexecutor.processes=2")
    if phase == "loading":
        lines += [f"stops.padding.key{i}=value {i} of ${{job.name}}" for i in range(15000)]
    path = root / "stops.pull"
    path.write_text("\n".join(lines) + "\n")
    return path


class _Run:
    """``gpy run`` in a session of its own, its JSON log read as it comes."""

    def __init__(self, command: list[str], env: dict | None = None) -> None:
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **(env or {})}, start_new_session=True)
        self.lines: list[str] = []
        self.before_signal: list[str] = []  # the events logged when the signal was sent
        self.seen = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self.seen:
                self.lines.append(line.rstrip("\n"))
                self.seen.notify_all()

    def events(self) -> list[str]:
        return [json.loads(line)["event"] for line in list(self.lines) if line.startswith("{")]

    def wait_for(self, event: str, seconds: float = 120) -> None:
        with self.seen:
            assert self.seen.wait_for(lambda: event in self.events() or self.proc.poll() is not None, seconds), \
                f"no {event} in {seconds} s"
        assert event in self.events(), "\n".join(self.lines[-30:])

    def finish(self, seconds: float = 120) -> int:
        code = self.proc.wait(timeout=seconds)
        self.reader.join(timeout=10)
        return code


def _start(engine: str, phase: str, signum: int, root: Path) -> tuple[_Run, Path, str]:
    """The run, stopped by ``signum`` in ``phase``: the run, its state folder and its job name."""
    gpy = [sys.executable, "-m", "gobblin_py.cli", "--log-format", "json"]
    if phase == "commit":  # the 3rd boundary is inside the first dataset's commit, of three one after another
        job = CrashJob(root)
        job.job_file.write_text(job.job_file.read_text() + "job.commit.parallelize=false\n")
        job.add_files(3)
        run = _Run(job.command(), {"GPY_TEST_CRASH_AT_BOUNDARY": "3", "GPY_TEST_SIGNAL": str(int(signum))})
        return run, job.state, "Crash"
    level = ["--log-level", "DEBUG"] if phase == "loading" else []
    run = _Run([*gpy, *level, "run", str(_job_file(root, engine, phase)),
                "--engine", "spark" if engine == "spark" else "local"])
    began, ended = PHASES[phase]
    run.wait_for(began)
    run.before_signal = run.events()
    if signum == signal.SIGINT:
        os.killpg(run.proc.pid, signum)  # Ctrl-C: the terminal signals the whole foreground group
    else:
        run.proc.send_signal(signum)
    return run, root / "state", "Stops"


@pytest.mark.parametrize("engine,phase,signum", CASES)
def test_a_signal_in_any_phase_stops_the_run_cleanly(tmp_path, engine, phase, signum):
    run, state, job_name = _start(engine, phase, signum, tmp_path)
    code = run.finish()
    name = signal.Signals(signum).name
    err = "\n".join(run.lines)
    assert code == 128 + signum, err[-5000:]
    assert "Traceback" not in err, err[-5000:]
    said = [line for line in run.lines if not line.startswith("{")]
    assert len(said) == 1 and said[0].startswith(f"gpy: error: stopped by {name}: "), said
    if phase == "commit":
        assert "the dataset commits under way finished; no other was started" in said[0]
    elif phase in UNINTERRUPTIBLE:  # the phase runs to its end, then the run stops: the signal came inside it
        assert PHASES[phase][1] not in run.before_signal, "the signal was sent after the phase"
    else:
        assert PHASES[phase][1] not in run.events(), "the signal landed after the phase"
        assert "nothing" in said[0] and "committed" in said[0]
    history = list((state / "_history" / job_name).glob("*.json"))
    if phase == "loading":  # the run never started: it has no record
        assert history == [] and "the run had not started" in said[0]
    else:
        assert [json.loads(p.read_text())["status"] for p in history] == ["STOPPED"]
        assert json.loads(history[0].read_text())["exit_code"] == 128 + signum
    lock = JobLock({"state.store.dir": str(state)}, job_name, "job_next_1")
    lock.acquire()  # free: the next run can start
    lock.release()
    deadline = time.monotonic() + 5
    while in_session(run.proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not in_session(run.proc.pid)  # no worker, JVM or Python worker of Spark outlives the run
