"""What a `gpy run --engine local` imports: only what the run uses, so its fixed start-up cost stays small.

Every run pays for each module it imports (a no-op run is mostly that), so the commands it does not run, the
packing of an archive for a Spark cluster, Arrow's compute kernels on a run that reads nothing, and the libraries
of connectors the job does not name must not be imported. The CLI runs in a subprocess that prints its
``sys.modules`` on the way out.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.sql.helpers import SqliteDb, SqlJob, create_shop

WATCHED_CLI = ("import json, sys\n"
               "from gobblin_py.cli import main\n"
               "try:\n"
               "    main(sys.argv[1:])\n"
               "finally:\n"
               "    sys.stderr.write('MODULES ' + json.dumps(sorted(sys.modules)) + '\\n')\n")

# libraries no local run of a file or SQL job needs (other connectors', Spark's, the dev tools')
NEVER = ("pandas", "polars", "rich", "pydantic", "sqlalchemy", "confluent_kafka", "psycopg", "pymysql", "hypothesis",
         "pyspark", "py4j", "s3fs", "fastavro", "importlib.metadata", "pyarrow.dataset")
# what only other commands or other engines use
NOT_FOR_A_RUN = ("gobblin_py.cli.schedule", "gobblin_py.cli.state", "gobblin_py.cli.history", "gobblin_py.cli.pack",
                 "gobblin_py.runtime.engines.pack", "gobblin_py.runtime.engines.spark", "tarfile", "hashlib",
                 "difflib", "tempfile", "importlib.resources")


def imported_by_run(job: Path) -> set[str]:
    """The modules loaded by ``gpy run JOB --engine local``, which must succeed."""
    done = subprocess.run([sys.executable, "-c", WATCHED_CLI, "run", str(job), "--engine", "local"],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert done.returncode == 0, done.stdout + done.stderr
    line = next(line for line in done.stderr.splitlines() if line.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


def test_a_csv_run_imports_neither_other_commands_nor_packing(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    for n in range(2):
        (data / f"orders-{n}.csv").write_text("order_id,amount\n" + "".join(f"{i},{i * 1.5}\n" for i in range(20)))
    job = tmp_path / "orders.pull"
    job.write_text("\n".join([
        "job.name=Orders", "source.class=gobblin_py.connectors.files.filebased.FileBasedSource",
        f"source.filebased.data.directory={data}", "extract.namespace=shop", "extract.table.name=orders",
        "writer.output.format=PARQUET", f"writer.staging.dir={tmp_path}/staging",
        f"writer.output.dir={tmp_path}/output", f"data.publisher.final.dir={tmp_path}/published",
        f"state.store.dir={tmp_path}/state", "task.maxretries=0", ""]))
    modules = imported_by_run(job)
    assert "gobblin_py.cli.run" in modules and "pyarrow.parquet" in modules  # the watch sees the run's imports
    assert sorted(modules & {*NEVER, *NOT_FOR_A_RUN, "pyarrow.compute"}) == []
    assert len(list((tmp_path / "published").rglob("*.parquet"))) == 2


def test_a_sql_run_with_nothing_new_loads_no_arrow_kernels(tmp_path):
    db = SqliteDb(tmp_path / "shop.db")
    create_shop(db, orders=10)
    job = SqlJob(tmp_path / "job", db, tables="orders")
    imported_by_run(job.file)
    assert sorted(job.ids("orders")) == list(range(1, 11))
    modules = imported_by_run(job.file)  # nothing new: no rows to convert
    assert "gobblin_py.connectors.sql.source" in modules
    assert sorted(modules & {*NEVER, *NOT_FOR_A_RUN, "pyarrow.compute"}) == []
