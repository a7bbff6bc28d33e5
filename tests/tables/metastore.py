"""A real Hive Metastore thrift service for the test session (a plugin of tests/conftest.py, so it starts once per
session, or once per xdist worker of the ``tables`` group), from the jars pyspark ships: Hive 2.3's metastore,
Derby, DataNucleus and libthrift (shared/spec/environment.md, "Tables and their independent readers").

The service keeps its Derby database and its warehouse in a temporary folder, new each session. One JVM first
makes Hive's transaction and lock tables in the new database (``TxnDbUtil.prepDb``, which pyiceberg's Hive catalog
needs for its locks) and then serves the metastore (``GpyHiveMetastore.java`` beside this file). What makes its
start cheap, measured on a loaded 2-core machine: the JIT's first tier only (``-XX:TieredStopAtLevel=1``: a
start is class loading and interpreting, not long-running code), Derby without a sync per commit (the schema is
hundreds of small DDL commits; a test database need not survive a power cut), and the transaction tables made in
the service's own JVM. The Java program runs from its source the first time; outside CI a compiled copy is then
kept under ``~/.cache/gobblin_py/hive-metastore`` for the next session, which saves the compilation. A prepared
Derby database is not cached: a measured start from a copy of one was no faster than making a new one.

Java must be a JDK (the source launcher needs its compiler). A machine without one skips the tests that use the
metastore, or fails them under ``GPY_REQUIRE_ALL=1`` (tests/support/environment.py).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.environment import missing
from tests.support.net import free_port

PROGRAM = Path(__file__).with_name("GpyHiveMetastore.java")
MAIN_CLASS = PROGRAM.stem
START_DEADLINE_S = 180  # a start takes 5-16 s here; a machine this loaded would fail the suite's budget anyway
JVM_OPTIONS = ["-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Dderby.system.durability=test"]
LOG4J2 = """\
status = WARN
name = GpyHiveMetastore
appenders = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:hive.log.dir}/metastore.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{ISO8601} %5p [%t] %c{2}: %m%n
rootLogger.level = WARN
rootLogger.appenderRefs = file
rootLogger.appenderRef.file.ref = file
"""


@dataclass
class HiveMetastore:
    """A running metastore: ``uri`` for clients, ``folder`` holding its database, warehouse and log."""

    port: int
    folder: Path
    process: subprocess.Popen
    started_in_s: float
    compiling: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    @property
    def warehouse(self) -> Path:
        return self.folder / "warehouse"

    def log_tail(self, lines: int = 40) -> str:
        texts = []
        for name in ("metastore.log", "stderr.log"):
            path = self.folder / name
            if path.exists():
                texts.append(f"--- {name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:]))
        return "\n".join(texts)


def find_jdk() -> Path | None:
    """The ``java`` of a JDK (JAVA_HOME's, else the one on PATH) whose ``javac`` is beside it, or None."""
    candidates = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(Path(os.environ["JAVA_HOME"]) / "bin" / "java")
    on_path = shutil.which("java")
    if on_path:
        candidates.append(Path(on_path))
    for java in candidates:
        real = java.resolve()
        if real.is_file() and (real.parent / "javac").exists():
            return real
    return None


def pyspark_jars() -> Path | None:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return None
    jars = Path(list(spec.submodule_search_locations)[0]) / "jars"
    return jars if any(jars.glob("hive-metastore-*.jar")) else None


def cache_dir(java: Path, jars: Path) -> Path:
    """Where the compiled program is kept: one folder per program text, JDK and metastore jar."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gobblin_py" / "hive-metastore"
    key = hashlib.sha1(PROGRAM.read_bytes() + str(java).encode()
                       + "".join(sorted(p.name for p in jars.glob("hive-*.jar"))).encode()).hexdigest()[:16]
    return base / key


def write_conf(folder: Path) -> Path:
    """``conf/hive-site.xml`` (Derby in ``folder``, the recipe's settings) and a quiet log configuration."""
    conf = folder / "conf"
    conf.mkdir(parents=True)
    properties = {
        "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={folder / 'metastore_db'};create=true",
        "javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.EmbeddedDriver",
        "hive.metastore.warehouse.dir": (folder / "warehouse").as_uri(),
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.schema.verification": "false",
        "hive.async.log.enabled": "false",  # its async logger needs a jar pyspark does not ship (disruptor)
        "datanucleus.connectionPoolingType": "HikariCP",  # the default pool (BoneCP) is not among pyspark's jars
    }
    body = "".join(f"  <property><name>{k}</name><value>{v}</value></property>\n" for k, v in properties.items())
    (conf / "hive-site.xml").write_text(f'<?xml version="1.0"?>\n<configuration>\n{body}</configuration>\n')
    (conf / "hive-log4j2.properties").write_text(LOG4J2)
    return conf


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def start(folder: Path) -> HiveMetastore:
    """Start a metastore serving a new database in ``folder``; returns once it accepts connections."""
    java, jars = find_jdk(), pyspark_jars()
    if java is None:
        missing("a JDK (java with javac beside it, e.g. Debian's openjdk-17-jdk) to run the Hive metastore")
    if jars is None:
        missing("pyspark's jars with Hive's metastore (hive-metastore-*.jar) to run the Hive metastore")
    conf = write_conf(folder)
    cached = cache_dir(java, jars)
    compiled = (cached / f"{MAIN_CLASS}.class").exists()
    classpath = os.pathsep.join([*([str(cached)] if compiled else []), str(conf), str(jars / "*")])
    port = free_port()
    command = [str(java), *JVM_OPTIONS, f"-Dhive.log.dir={folder}", "-Dgpy.prepare.transactions=true",
               "-cp", classpath, MAIN_CLASS if compiled else str(PROGRAM), "-p", str(port)]
    began = time.monotonic()
    with open(folder / "stderr.log", "wb") as errors:
        process = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=errors)
    metastore = HiveMetastore(port, folder, process, 0.0)
    while not listening(port):
        if process.poll() is not None or time.monotonic() - began > START_DEADLINE_S:
            stop(metastore)
            pytest.fail(f"the Hive metastore did not start (exit {process.returncode}):\n{metastore.log_tail()}",
                        pytrace=False)
        time.sleep(0.05)
    metastore.started_in_s = time.monotonic() - began
    if not compiled and not os.environ.get("CI"):  # CI starts it once on a new machine: nothing to keep for
        metastore.compiling = compile_for_next_time(java, jars, cached)
    return metastore


def compile_for_next_time(java: Path, jars: Path, cached: Path) -> subprocess.Popen | None:
    """Compile the program into ``cached`` in the background, at low priority (its folder appears whole)."""
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".compiling-", dir=cached.parent))
    except OSError:
        return None
    script = (f'nice -n 15 "{java.parent / "javac"}" -nowarn -cp "{jars}/*" -d "{staging}" "{PROGRAM}" '
              f'&& mv -T "{staging}" "{cached}" || rm -rf "{staging}"')
    return subprocess.Popen(["sh", "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop(metastore: HiveMetastore) -> None:
    for process in (metastore.process, metastore.compiling):
        if process is None or process.poll() is not None:
            continue
        if process is metastore.compiling:
            try:
                process.wait(timeout=60)  # a compilation left unfinished is simply not kept
                continue
            except subprocess.TimeoutExpired:
                pass
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def hive_metastore(tmp_path_factory) -> Iterator[HiveMetastore]:
    """One Hive metastore thrift service for the session (``.uri``: ``thrift://127.0.0.1:<port>``)."""
    metastore = start(tmp_path_factory.mktemp("hive-metastore"))
    try:
        yield metastore
    finally:
        stop(metastore)


READER = Path(__file__).with_name("spark_sql_reader.py")


@dataclass
class SparkSqlReader:
    """A Spark SQL process of its own (spark_sql_reader.py) on the session's metastore: the independent reader
    of the tables the tests make. One per session: a Spark start costs 10-40 s here."""

    process: subprocess.Popen
    folder: Path

    def read(self, tables: list[str]) -> dict[str, dict]:
        """Each table's rows, partitions and columns, or ``{"error": …}`` (read by Spark, not by gpy)."""
        from tests.tables.spark_sql_reader import ANSWER

        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"tables": tables}) + "\n")
        self.process.stdin.flush()
        for line in self.process.stdout:  # Spark may say more on its standard output first
            if line.startswith(ANSWER):
                return json.loads(line[len(ANSWER):])
        self.process.wait(timeout=60)
        errors = (self.folder / "stderr.log").read_text(errors="replace")[-3000:]
        pytest.fail(f"the Spark SQL reader stopped (exit {self.process.returncode}):\n{errors}", pytrace=False)


@pytest.fixture(scope="session")
def spark_sql_reader(hive_metastore, tmp_path_factory) -> Iterator[SparkSqlReader]:
    """The session's Spark SQL reader; it starts Spark at once, while the tests that asked for it publish."""
    folder = tmp_path_factory.mktemp("spark-sql-reader")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK_"))}
    with open(folder / "stderr.log", "w") as errors:
        process = subprocess.Popen([sys.executable, str(READER), hive_metastore.uri, str(folder)], cwd=folder,
                                   env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, text=True)
    try:
        yield SparkSqlReader(process, folder)
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
