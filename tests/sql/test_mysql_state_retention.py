"""Gobblin's ``mysql-state-store-retention.pull`` against a real MariaDB holding a Gobblin MySQL state store
(Gobblin's own table schema): only the connection pointed at the test server, and the password encrypted, as the
file's is, with a master password file the test writes (``encrypt.key.loc``)."""

from __future__ import annotations

import time

from gobblin_py.jobconf import jasypt
from tests.support.cli import run_gpy_here
from tests.support.environment import needs
from tests.support.paths import CORPUS

SOURCE = CORPUS / "gobblin-example" / "src" / "main" / "resources" / "mysql-state-store-retention.pull"
# Gobblin's MysqlStateStore CREATE_JOB_STATE_TABLE_TEMPLATE, table gobblin_job_state
SCHEMA = ("CREATE TABLE IF NOT EXISTS gobblin_job_state (store_name varchar(100) CHARACTER SET latin1 not null,"
          "table_name varchar(667) CHARACTER SET latin1 not null,"
          " modified_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,"
          " state mediumblob, primary key(store_name, table_name))")
HOUR = 3600

pytestmark = needs(SOURCE.is_file(), f"the Gobblin job corpus is not at {CORPUS}")


def _rows(db) -> set[tuple[str, str]]:
    connection = db.connect()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT store_name, table_name FROM gobblin_job_state")
            return set(cursor.fetchall())
    finally:
        connection.close()


def _job_file(tmp_path, db):
    (tmp_path / "clusterMasterKey").write_text("Cluster-Master-k9\n")
    values = {"state.store.db.url": f"jdbc:mysql://{db.host}:{db.port}/{db.database}",
              "state.store.db.user": db.user, "encrypt.key.loc": str(tmp_path / "clusterMasterKey"),
              "state.store.db.password": f"ENC({jasypt.encrypt(db.password, 'Cluster-Master-k9')})"}
    lines = []
    for line in SOURCE.read_text().splitlines():
        key = line.split("=", 1)[0].strip()
        lines.append(f"{key}={values[key]}" if key in values and "=" in line else line)
    path = tmp_path / "mysql-state-store-retention.pull"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_gobblins_mysql_state_store_retention_job_runs_against_a_real_mariadb(mysql_db, tmp_path):
    db = mysql_db
    db.execute(SCHEMA)
    now = time.time()
    rows = []
    for run in range(1, 9):  # eu: 8 runs, 100 … 30 hours old, and current written with the newest
        rows.append(("Orders", f"eu-job_Orders_17954000000{run:02d}.jst", now - (110 - 10 * run) * HOUR))
    rows.append(("Orders", "eu-current.jst", now - 30 * HOUR))
    for run in range(1, 7):  # us: 6 runs, 50 hours old, no current row (Gobblin's newer layout)
        rows.append(("Orders", f"us-job_Orders_17954000000{run:02d}.jst", now - 50 * HOUR))
    for run in range(1, 7):  # another job's runs, an hour old: younger than the lookback
        rows.append(("Other", f"job_Other_17954000000{run:02d}.jst", now - HOUR))
    db.executemany("INSERT INTO gobblin_job_state (store_name, table_name, modified_time, state) "
                   "VALUES (?, ?, FROM_UNIXTIME(?), x'00')", rows)
    before = _rows(db)
    job = _job_file(tmp_path, db)
    # older than 18 hours AND not among each dataset's 4 newest: eu's runs 1-5, us's two of equal age
    expected = {("Orders", f"eu-job_Orders_17954000000{r:02d}.jst") for r in range(1, 6)}

    dry = run_gpy_here("run", str(job), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    listed = {tuple(line.split(None, 2)[-1].split("/", 1)) for line in dry.stdout.splitlines()
              if line.startswith("would delete")}
    assert expected < listed and len(listed) == 7 and {s for s, _ in listed} == {"Orders"}
    assert _rows(db) == before and db.password not in dry.stdout + dry.stderr

    result = run_gpy_here("run", str(job))
    assert result.returncode == 0, result.stderr
    assert f"7 state row(s) of {db.host}:{db.port}/{db.database} table gobblin_job_state deleted" in result.stdout
    after = _rows(db)
    assert before - after == listed
    assert ("Orders", "eu-current.jst") in after and ("Orders", "eu-job_Orders_1795400000008.jst") in after
    assert ("Orders", "us-job_Orders_1795400000006.jst") in after  # the newest run of a dataset without current
    assert {t for s, t in after if s == "Other"} == {t for s, t, _ in rows if s == "Other"}
