"""The SQL servers of the whole suite (a plugin of tests/conftest.py, so each starts once per test session, for
the SQL tests and the plugin contracts alike): real, throwaway PostgreSQL and MariaDB servers, and SQLite files.

PostgreSQL: one cluster per test session under a temporary directory owned by ``postgres``, listening on a
free loopback port. Its ``pg_hba.conf`` trusts the Unix socket (for set-up as the superuser) and asks TCP
clients on 127.0.0.1 for a SCRAM password, so the jobs connect as a real user with a real password. When the
server binaries are missing they are installed with ``apt-get install -y postgresql`` (Debian); only when that
is impossible are the PostgreSQL tests skipped, with the reason. MariaDB (the MySQL dialect) likewise: one
server per session, installed with ``apt-get install -y mariadb-server`` when ``mariadbd`` is missing, run as
the ``mysql`` user on a free port with its socket in a temporary folder. Each test gets a fresh database.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.environment import apt_install, missing
from tests.support.net import free_port

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
            missing(reason or "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin")
    if os.geteuid() == 0 and subprocess.run(["id", "postgres"], capture_output=True).returncode != 0:
        missing("the postgres system user does not exist, and initdb refuses to run as root")
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


@pytest.fixture(params=["sqlite", "postgresql", "mysql"])
def db(request, tmp_path):
    """The same test against an embedded SQLite file, a PostgreSQL database and a MariaDB (MySQL) database."""
    from tests.sql.helpers import PostgresDb, SqliteDb

    if request.param == "sqlite":
        return SqliteDb(tmp_path / "shop.db")
    if request.param == "mysql":
        return request.getfixturevalue("mysql_db")
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


def _mariadb_binaries() -> tuple[str | None, str | None]:
    server = shutil.which("mariadbd") or next((p for p in ("/usr/sbin/mariadbd", "/usr/sbin/mysqld")
                                               if os.path.exists(p)), None)
    return server, shutil.which("mariadb-install-db") or shutil.which("mysql_install_db")


def _as_mysql(args: list[str]) -> list[str]:
    """mariadbd refuses to run as root: as root, run it as the ``mysql`` user the package creates."""
    return ["runuser", "-u", "mysql", "--", *args] if os.geteuid() == 0 else args


@pytest.fixture(scope="session")
def mariadb_server():
    """The session's private MariaDB server (for the MySQL dialect), installed with apt-get when missing."""
    import pymysql

    server, install = _mariadb_binaries()
    if not server or not install:
        reason = apt_install("mariadb-server")
        server, install = _mariadb_binaries()
        if not server or not install:
            missing(reason or "no MariaDB server binaries after installing mariadb-server")
    started = time.time()
    directory = tempfile.mkdtemp(prefix="gpy-maria-")
    if os.geteuid() == 0:
        shutil.chown(directory, "mysql", "mysql")
    done = subprocess.run(_as_mysql([install, "--no-defaults", f"--datadir={directory}/data",
                                     "--auth-root-authentication-method=normal", "--skip-test-db"]),
                          capture_output=True, text=True)
    if done.returncode != 0:
        shutil.rmtree(directory, ignore_errors=True)
        raise RuntimeError(f"mariadb-install-db failed: {done.stderr[-500:]}")
    port = free_port()
    socket_path = f"{directory}/sock"
    process = subprocess.Popen(_as_mysql([
        server, "--no-defaults", f"--datadir={directory}/data", f"--socket={socket_path}", f"--port={port}",
        "--bind-address=127.0.0.1", f"--pid-file={directory}/pid", f"--log-error={directory}/error.log",
        "--skip-log-bin", "--innodb-buffer-pool-size=32M"]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    admin = None
    try:
        for _ in range(600):
            try:
                admin = pymysql.connect(unix_socket=socket_path, user="root", autocommit=True)
                break
            except pymysql.err.OperationalError:
                if process.poll() is not None:
                    break
                time.sleep(0.05)
        if admin is None:
            log = Path(directory, "error.log")
            raise RuntimeError(f"MariaDB did not start: {log.read_text()[-1000:] if log.exists() else ''}")
        with admin.cursor() as cur:
            cur.execute(f"CREATE USER 'gpy'@'127.0.0.1' IDENTIFIED BY '{MYSQL_PASSWORD}'")
        print(f"MariaDB test server on 127.0.0.1:{port} in {time.time() - started:.1f} s")
        yield {"socket": socket_path, "port": port}
    finally:
        if admin is not None:
            try:
                admin.cursor().execute("SHUTDOWN")
            except pymysql.err.Error:
                pass
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def mysql_db(mariadb_server):
    """A fresh database on the session's MariaDB server, for the user ``gpy``."""
    import pymysql

    from tests.sql.helpers import MysqlDb

    name = "shop_" + uuid.uuid4().hex[:10]
    admin = pymysql.connect(unix_socket=mariadb_server["socket"], user="root", autocommit=True)
    with admin.cursor() as cur:
        cur.execute(f"CREATE DATABASE {name}")
        cur.execute(f"GRANT ALL ON {name}.* TO 'gpy'@'127.0.0.1'")
    admin.close()
    return MysqlDb("127.0.0.1", mariadb_server["port"], "gpy", MYSQL_PASSWORD, name)
