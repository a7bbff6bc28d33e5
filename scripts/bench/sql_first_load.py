"""Benchmark: a database table to Parquet — gpy against the bare driver-to-Parquet script and dlt.

    python scripts/bench/sql_first_load.py [--rows 5000000] [--repeat 3] [--db sqlite,postgresql] [--no-dlt]

Builds an 8-column table (bigint id, two ints, a double, a numeric(12,2), text, two timestamps) of ``--rows``
rows in SQLite and in a private PostgreSQL server (started here, on a free port), then times, as whole processes
started from here, interleaved and ``--repeat`` times, for each database:

- the first load (the whole table) and an incremental load (``--rows`` / 10 new rows, by id);
- contenders: the bare script, the practical limit (ADBC's ``fetch_record_batch`` straight into a
  ``ParquetWriter``, the id range given), gpy ``--engine local`` (``QueryBasedSource``, fresh state, then the
  next run), and dlt's ``sql_table`` with its pyarrow backend and ``dlt.sources.incremental("id")``.

dlt is installed by this script into its own virtualenv under ``--cache-dir`` (never a project dependency).
Every contender's output is counted against the table. Prints each contender's median time, rows/s and the
ratio of its rows/s to the bare script's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[2]
COLUMNS = "id, grp, qty, price, amount, name, created_at, updated_at"

BARE = """
import sys, pyarrow.parquet as pq
kind, target, low, high, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
if kind == "sqlite":
    import adbc_driver_sqlite.dbapi as driver
else:
    import adbc_driver_postgresql.dbapi as driver
conn = driver.connect(target)
cur = conn.cursor()
if kind == "sqlite":
    cur.adbc_statement.set_options(**{"adbc.sqlite.query.batch_rows": "65536"})
cur.execute(f"SELECT %s FROM orders WHERE id >= {low} AND id < {high} ORDER BY id")
reader = cur.fetch_record_batch()
with pq.ParquetWriter(out, reader.schema, compression="snappy") as writer:
    for batch in reader:
        writer.write_batch(batch)
conn.close()
""" % COLUMNS

DLT = """
import sys, dlt
from dlt.sources.sql_database import sql_table
url, out, pipelines = sys.argv[1], sys.argv[2], sys.argv[3]
pipeline = dlt.pipeline(pipeline_name="bench", destination=dlt.destinations.filesystem("file://" + out),
                        dataset_name="bench", pipelines_dir=pipelines)
table = sql_table(credentials=url, table="orders", backend="pyarrow", incremental=dlt.sources.incremental("id"))
pipeline.run(table, loader_file_format="parquet")
"""


class Postgres:
    """A private PostgreSQL server, started by the SQL tests' own code (``tests/sql/servers.py``): Debian's
    server binaries (installed with apt-get when missing), a cluster in a temporary folder on a free loopback
    port, and a database owned by a user who logs in with a password over TCP."""

    def __init__(self) -> None:
        if str(REPO) not in sys.path:
            sys.path.insert(0, str(REPO))
        from tests.sql import servers as conftest

        bin_dir = conftest._pg_bin_dir()
        if bin_dir is None:
            reason = conftest._install_postgres()
            bin_dir = conftest._pg_bin_dir()
            if bin_dir is None:
                raise SystemExit(reason or "PostgreSQL server binaries not found (apt-get install postgresql)")
        self.cluster = conftest.PgCluster.create(bin_dir)
        self.cluster.create_role()
        self.db = self.cluster.create_database()
        self.uri = f"postgresql://{self.db.user}:{self.db.password}@{self.db.host}:{self.db.port}/{self.db.name}"

    def execute(self, *statements: str) -> None:
        with self.db.connect() as conn:
            for statement in statements:
                conn.execute(statement)

    def stop(self) -> None:
        self.cluster.destroy()


class Database:
    """The benchmark table in one database: build it, grow it by 10 %, shrink it back."""

    def __init__(self, kind: str, root: Path, rows: int) -> None:
        self.kind, self.rows = kind, rows
        if kind == "sqlite":
            self.path = root / "bench.db"
            self.target = f"file:{self.path}?mode=ro"
            self.url = f"sqlite:///{self.path}"
        else:
            self.pg = Postgres()
            self.target = self.url = self.pg.uri
        self.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, grp INTEGER, qty INTEGER, price DOUBLE PRECISION, "
                     "amount NUMERIC(12,2), name TEXT, created_at TIMESTAMP, updated_at TIMESTAMP)")
        self.insert(1, rows + 1)

    def execute(self, *statements: str) -> None:
        if self.kind == "sqlite":
            with sqlite3.connect(self.path) as conn:
                for statement in statements:
                    conn.execute(statement)
        else:
            self.pg.execute(*statements)

    def insert(self, low: int, high: int) -> None:
        if self.kind == "sqlite":
            self.execute(
                f"WITH RECURSIVE s(i) AS (SELECT {low} UNION ALL SELECT i + 1 FROM s WHERE i + 1 < {high}) "
                "INSERT INTO orders SELECT i, i % 100, i % 7, i * 0.5, round((i % 100000) * 0.25, 2), 'customer ' || i,"
                " datetime(1700000000 + i, 'unixepoch'), strftime('%Y-%m-%d %H:%M:%f', 1700000000 + i / 3.0, "
                "'unixepoch') FROM s")
        else:
            self.execute(
                "INSERT INTO orders SELECT i, i % 100, i % 7, i * 0.5, round((i % 100000) * 0.25, 2), 'customer ' || i,"
                " to_timestamp(1700000000 + i)::timestamp, to_timestamp(1700000000 + i / 3.0)::timestamp "
                f"FROM generate_series({low}, {high - 1}) i", "ANALYZE orders")

    def reset(self) -> None:
        self.execute(f"DELETE FROM orders WHERE id > {self.rows}")

    def gpy_props(self) -> dict[str, str]:
        if self.kind == "sqlite":
            return {"source.conn.driver": "sqlite", "source.conn.database": str(self.path)}
        return {"source.conn.url": self.pg.uri}

    def stop(self) -> None:
        if self.kind == "postgresql":
            self.pg.stop()


def dlt_python(cache: Path) -> str | None:
    venv = cache / "dlt-venv"
    python = venv / "bin" / "python"
    marker = venv / ".gpy-bench-installed"
    if not marker.exists():
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        # SQLAlchemy 2.1 reads postgresql:// URLs with psycopg 3
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", "dlt[parquet,sql-database]",
                               "psycopg[binary]"], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"dlt: not installed ({done.stderr.strip()[-300:]})")
            shutil.rmtree(venv, ignore_errors=True)
            return None
        marker.touch()
    return str(python)


def timed(cmd: list[str], env: dict | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{cmd[:3]} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return elapsed


def parquet_rows(folder: Path) -> int:
    return sum(pq.ParquetFile(p).metadata.num_rows for p in folder.rglob("*.parquet"))


def run_bare(db: Database, work: Path, low: int, high: int) -> tuple[float, int]:
    out = work / f"bare-{low}.parquet"
    seconds = timed([sys.executable, "-c", BARE, db.kind, db.target, str(low), str(high), str(out)])
    return seconds, pq.ParquetFile(out).metadata.num_rows


def gpy_job(db: Database, work: Path) -> Path:
    props = {
        "job.name": "SqlBench", "source.class": "gobblin_py.connectors.sql.QueryBasedSource", **db.gpy_props(),
        "source.entities": "orders", "extract.namespace": "bench", "extract.delta.fields": "id",
        "writer.output.format": "PARQUET", "task.data.root.dir": str(work / "task"),
        "data.publisher.final.dir": str(work / "out"), "state.store.dir": str(work / "state"),
        "task.maxretries": "0",
    }
    job = work / "bench.pull"
    job.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return job


GPY_ENV: dict[str, str] = {}


def run_gpy(job: Path, before: int) -> tuple[float, int]:
    seconds = timed([sys.executable, "-m", "gobblin_py.cli", "run", str(job), "--engine", "local"], env=GPY_ENV)
    return seconds, parquet_rows(job.parent / "out") - before


def run_dlt(python: str, db: Database, work: Path, before: int) -> tuple[float, int]:
    out = work / "dlt-out"
    seconds = timed([python, "-c", DLT, db.url, str(out), str(work / "dlt-pipelines")],
                    env={"RUNTIME__LOG_LEVEL": "WARNING"})
    return seconds, parquet_rows(out) - before


def measure(db: Database, contenders: list[str], repeat: int, python: str | None, root: Path) -> dict:
    extra = max(1, db.rows // 10)
    times: dict[tuple[str, str], list[float]] = {}
    for attempt in range(repeat):
        for name in contenders:
            db.reset()
            work = root / f"{db.kind}-{name}-{attempt}"
            work.mkdir()
            job = gpy_job(db, work) if name == "gpy" else None
            for load, low, high in (("first", 1, db.rows + 1), ("incremental", db.rows + 1, db.rows + extra + 1)):
                if load == "incremental":
                    db.insert(db.rows + 1, db.rows + extra + 1)
                if name == "bare":
                    seconds, rows = run_bare(db, work, low, high)
                elif name == "gpy":
                    seconds, rows = run_gpy(job, 0 if load == "first" else db.rows)
                else:
                    seconds, rows = run_dlt(python, db, work, 0 if load == "first" else db.rows)
                expected = high - low
                if rows != expected:
                    raise SystemExit(f"{db.kind} {name} {load}: {rows} rows written, {expected} expected")
                times.setdefault((name, load), []).append(seconds)
            shutil.rmtree(work, ignore_errors=True)
            print(f"  {db.kind} run {attempt + 1}: {name} done", flush=True)
    db.reset()
    return {key: statistics.median(values) for key, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--db", default="sqlite,postgresql")
    parser.add_argument("--no-dlt", action="store_true")
    parser.add_argument("--cache-dir", default=str(Path.home() / ".cache" / "gpy-bench"))
    parser.add_argument("--json", help="also write the medians to this file")
    parser.add_argument("--gpy-repo", help="run gpy from this checkout (an older commit, say) instead of the installed one")
    args = parser.parse_args()
    if args.gpy_repo:
        GPY_ENV["PYTHONPATH"] = str(Path(args.gpy_repo).resolve())
    cache = Path(args.cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    python = None if args.no_dlt else dlt_python(cache)
    contenders = ["bare", "gpy"] + (["dlt"] if python else [])
    results = {}
    root = Path(tempfile.mkdtemp(prefix="gpy-sqlbench-"))
    try:
        for kind in args.db.split(","):
            started = time.perf_counter()
            db = Database(kind, root, args.rows)
            print(f"{kind}: {args.rows:,} rows built in {time.perf_counter() - started:.1f} s", flush=True)
            try:
                results[kind] = measure(db, contenders, args.repeat, python, root)
            finally:
                db.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    extra = max(1, args.rows // 10)
    print(f"\nmedian of {args.repeat}, each contender a whole process (start-up included)\n")
    print("| database | load | contender | time | rows/s | × the bare script's rows/s |")
    print("|---|---|---|---|---|---|")
    for kind, medians in results.items():
        for load, rows in (("first", args.rows), ("incremental", extra)):
            bare = medians[("bare", load)]
            for name in contenders:
                seconds = medians[(name, load)]
                print(f"| {kind} | {load} ({rows:,} rows) | {name} | {seconds:.2f} s | {rows / seconds / 1e6:.2f} M | "
                      f"{bare / seconds:.2f} |")
    if args.json:
        Path(args.json).write_text(json.dumps({k: {f"{n}/{l}": s for (n, l), s in v.items()}
                                               for k, v in results.items()}, indent=1))


if __name__ == "__main__":
    main()
