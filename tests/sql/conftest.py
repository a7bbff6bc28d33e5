"""Fixtures of the SQL source tests: a real, throwaway PostgreSQL server and SQLite files.

PostgreSQL: one cluster per test session under a temporary directory owned by ``postgres``, listening on a
free loopback port. Its ``pg_hba.conf`` trusts the Unix socket (for set-up as the superuser) and asks TCP
clients on 127.0.0.1 for a SCRAM password, so the jobs connect as a real user with a real password. When the
server binaries are missing they are installed with ``apt-get install -y postgresql`` (Debian); only when that
is impossible are the PostgreSQL tests skipped, with the reason. Each test gets a fresh database.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

PG_USER = "gpy_loader"
PG_PASSWORD = "Pw-7f3c9e1a-ZqX"  # distinctive, so tests can grep for leaks


def _pg_bin_dir() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[-3]))
    return os.path.dirname(found[-1]) if found else None


def _install_postgres() -> str | None:
    """Install Debian's server package when the binaries are missing; the reason it failed otherwise."""
    if shutil.which("apt-get") is None:
        return "PostgreSQL server binaries are missing and apt-get is not available to install them"
    if os.geteuid() != 0:
        return "PostgreSQL server binaries are missing and installing them needs root"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "install", "-y", "-q", "postgresql"],):
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, text=True)
            done = subprocess.run(command, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            return f"apt-get install postgresql failed: {done.stderr.strip()[-500:]}"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _as_postgres(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return subprocess.run(prefix + args, capture_output=True, text=True, **kwargs)


@dataclass
class PgCluster:
    """A private PostgreSQL server: data and socket under ``directory``, TCP on 127.0.0.1:``port``."""

    bin_dir: str
    directory: str
    port: int
    databases: list[str] = field(default_factory=list)

    @property
    def data_dir(self) -> str:
        return os.path.join(self.directory, "data")

    @classmethod
    def create(cls, bin_dir: str) -> "PgCluster":
        directory = tempfile.mkdtemp(prefix="gpy-pg-")
        os.chmod(directory, 0o700)
        if os.geteuid() == 0:
            shutil.chown(directory, "postgres", "postgres")
        cluster = cls(bin_dir, directory, free_port())
        pwfile = os.path.join(directory, "pw")
        with open(pwfile, "w") as handle:
            handle.write("superuser-" + uuid.uuid4().hex)
        if os.geteuid() == 0:
            shutil.chown(pwfile, "postgres", "postgres")
        done = _as_postgres([
            f"{bin_dir}/initdb", "-D", cluster.data_dir, "-U", "postgres", "--auth-local=trust",
            "--auth-host=scram-sha-256", f"--pwfile={pwfile}", "-E", "UTF8", "--locale=C", "--no-sync",
        ])
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed: {done.stderr}")
        cluster.start()
        return cluster

    def start(self) -> None:
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 -c fsync=off"
        done = _as_postgres([f"{self.bin_dir}/pg_ctl", "-D", self.data_dir, "-o", options, "-l",
                             os.path.join(self.directory, "server.log"), "-w", "-t", "60", "start"])
        if done.returncode != 0:
            log = Path(self.directory, "server.log")
            raise RuntimeError(f"pg_ctl start failed: {done.stderr}\n{log.read_text() if log.exists() else ''}")

    def stop(self, mode: str = "fast") -> None:
        _as_postgres([f"{self.bin_dir}/pg_ctl", "-D", self.data_dir, "-m", mode, "-w", "stop"])

    def stop_command(self) -> str:
        """A shell command that kills the server at once (what a crash looks like to clients)."""
        prefix = "runuser -u postgres -- " if os.geteuid() == 0 else ""
        return f"{prefix}{self.bin_dir}/pg_ctl -D {self.data_dir} -m immediate -w stop"

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.directory, ignore_errors=True)

    def admin(self, dbname: str = "postgres"):
        import psycopg

        return psycopg.connect(host=self.directory, port=self.port, user="postgres", dbname=dbname, autocommit=True)

    def create_role(self) -> None:
        with self.admin() as conn:
            conn.execute(f"CREATE ROLE {PG_USER} LOGIN PASSWORD '{PG_PASSWORD}'")

    def create_database(self) -> "PgDatabase":
        name = "shop_" + uuid.uuid4().hex[:10]
        with self.admin() as conn:
            conn.execute(f"CREATE DATABASE {name} OWNER {PG_USER}")
        self.databases.append(name)
        return PgDatabase(self, name)


@dataclass
class PgDatabase:
    """One database of a cluster, owned by the test user; ``connect()`` logs in with the password over TCP."""

    cluster: PgCluster
    name: str
    host: str = "127.0.0.1"
    user: str = PG_USER
    password: str = PG_PASSWORD

    @property
    def port(self) -> int:
        return self.cluster.port

    def connect(self, autocommit: bool = True):
        import psycopg

        return psycopg.connect(host=self.host, port=self.port, user=self.user, password=self.password,
                               dbname=self.name, autocommit=autocommit)

    def execute(self, sql: str, params=None) -> None:
        with self.connect() as conn:
            conn.execute(sql, params)

    def executemany(self, sql: str, rows) -> None:
        with self.connect() as conn, conn.cursor() as cur:
            cur.executemany(sql, rows)

    def query(self, sql: str, params=None) -> list[tuple]:
        with self.connect() as conn:
            return conn.execute(sql, params).fetchall()

    def conn_props(self) -> dict[str, str]:
        return {
            "source.conn.driver": "postgresql",
            "source.conn.host": self.host,
            "source.conn.port": str(self.port),
            "source.conn.username": self.user,
            "source.conn.password": self.password,
            "source.conn.database": self.name,
        }

    def env(self) -> dict[str, str]:
        """libpq's environment variables, as jobs/postgres_incremental.pull reads them."""
        return {"PGHOST": self.host, "PGPORT": str(self.port), "PGUSER": self.user, "PGPASSWORD": self.password,
                "PGDATABASE": self.name}


def _make_cluster() -> PgCluster:
    bin_dir = _pg_bin_dir()
    if bin_dir is None:
        reason = _install_postgres()
        bin_dir = _pg_bin_dir()
        if bin_dir is None:
            pytest.skip(reason or "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin")
    if os.geteuid() == 0 and subprocess.run(["id", "postgres"], capture_output=True).returncode != 0:
        pytest.skip("the postgres system user does not exist, and initdb refuses to run as root")
    cluster = PgCluster.create(bin_dir)
    cluster.create_role()
    return cluster


@pytest.fixture(scope="session")
def pg_cluster():
    """The session's PostgreSQL server (started once, stopped and deleted at the end)."""
    started = time.time()
    cluster = _make_cluster()
    print(f"PostgreSQL test cluster on 127.0.0.1:{cluster.port} in {time.time() - started:.1f} s")
    yield cluster
    cluster.destroy()


@pytest.fixture
def pg_db(pg_cluster) -> PgDatabase:
    """A fresh database on the session's server."""
    return pg_cluster.create_database()


@pytest.fixture
def private_pg_db():
    """A database on a server of its own, for tests that kill the server."""
    cluster = _make_cluster()
    try:
        yield cluster.create_database()
    finally:
        cluster.destroy()


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path):
    """The same test against an embedded SQLite file and a database on the real PostgreSQL server."""
    from tests.sql.helpers import PostgresDb, SqliteDb

    if request.param == "sqlite":
        return SqliteDb(tmp_path / "shop.db")
    return PostgresDb(request.getfixturevalue("pg_db"))


@pytest.fixture
def sqlite_db(tmp_path):
    from tests.sql.helpers import SqliteDb

    return SqliteDb(tmp_path / "shop.db")


@pytest.fixture
def postgres_db(pg_db):
    from tests.sql.helpers import PostgresDb

    return PostgresDb(pg_db)


MYSQL_PASSWORD = "Pw-maria-5d1e-Kq"


@pytest.fixture(scope="session")
def mariadb_server():
    """A private MariaDB server (for the MySQL dialect), when ``mariadbd`` and PyMySQL are installed."""
    server = shutil.which("mariadbd") or ("/usr/sbin/mariadbd" if os.path.exists("/usr/sbin/mariadbd") else None)
    install = shutil.which("mariadb-install-db")
    try:
        import pymysql
    except ImportError:
        pytest.skip("PyMySQL is not installed (pip install pymysql): the MySQL dialect is not tested")
    if not server or not install:
        pytest.skip("no MariaDB server binaries (apt-get install mariadb-server): the MySQL dialect is not tested")
    directory = tempfile.mkdtemp(prefix="gpy-maria-")
    user = [] if os.geteuid() != 0 else ["--user=root"]
    done = subprocess.run([install, "--no-defaults", f"--datadir={directory}/data", *user,
                           "--auth-root-authentication-method=normal", "--skip-test-db"], capture_output=True, text=True)
    if done.returncode != 0:
        shutil.rmtree(directory, ignore_errors=True)
        pytest.skip(f"mariadb-install-db failed: {done.stderr[-300:]}")
    port = free_port()
    socket_path = f"{directory}/sock"
    process = subprocess.Popen([server, "--no-defaults", f"--datadir={directory}/data", f"--socket={socket_path}",
                                f"--port={port}", "--bind-address=127.0.0.1", *user, "--skip-log-bin",
                                "--innodb-buffer-pool-size=32M"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                admin = pymysql.connect(unix_socket=socket_path, user="root", autocommit=True)
                break
            except pymysql.err.OperationalError:
                time.sleep(0.1)
        else:
            pytest.skip("MariaDB did not start")
        with admin.cursor() as cur:
            cur.execute(f"CREATE USER 'gpy'@'127.0.0.1' IDENTIFIED BY '{MYSQL_PASSWORD}'")
        admin.close()
        yield {"socket": socket_path, "port": port}
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def mysql_db(mariadb_server):
    import pymysql

    from tests.sql.helpers import MysqlDb

    name = "shop_" + uuid.uuid4().hex[:10]
    admin = pymysql.connect(unix_socket=mariadb_server["socket"], user="root", autocommit=True)
    with admin.cursor() as cur:
        cur.execute(f"CREATE DATABASE {name}")
        cur.execute(f"GRANT ALL ON {name}.* TO 'gpy'@'127.0.0.1'")
    admin.close()
    return MysqlDb("127.0.0.1", mariadb_server["port"], "gpy", MYSQL_PASSWORD, name)
