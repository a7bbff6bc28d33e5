"""SourceContract over the query-based source on each real database: SQLite, the session's PostgreSQL server, and
MariaDB when its server and PyMySQL are installed (skipped otherwise, naming what is missing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gobblin_py.testing import ContractJob, SourceContract

ROWS = 4
DATABASES = {"sqlite": "sqlite_db", "postgresql": "postgres_db", "mariadb": "mysql_db"}


class TestQueryBasedSource(SourceContract):
    """One table pulled by its id (``extract.delta.fields=id``), cut into ranges of 50 ids (several work units)."""

    source_class = "QueryBasedSource"
    supports_startpoints = True
    engines = ("local", "spark")

    @pytest.fixture(params=sorted(DATABASES))
    def contract_env(self, request: pytest.FixtureRequest):
        db = request.getfixturevalue(DATABASES[request.param])
        t = db.types
        db.execute(f"CREATE TABLE orders (id {t['id']} PRIMARY KEY, note {t['text']}, amount {t['num']})")
        return db

    def make_job(self, workdir: Path) -> dict[str, str]:
        return {**self.env.conn_props(), "source.entities": "orders", "extract.namespace": "contract",
                "extract.delta.fields": "id", "extract.primary.key.fields": "id",
                "source.querybased.partition.interval": "50"}

    def startpoint_datasets(self, job: ContractJob) -> list[str]:
        return ["orders"]

    def startpoint_value(self, job: ContractJob, keys: list) -> tuple[str, str | None]:
        return str(keys[0]), None  # the delta column, id: from that id on

    def add_data(self, job: ContractJob, batch: int) -> list[int]:
        ids = [batch * 100 + i for i in range(1, ROWS + 1)]
        self.env.executemany("INSERT INTO orders VALUES (?, ?, ?)",
                             [(i, None if i % 3 == 0 else f"note {i}", i * 1.25) for i in ids])
        return ids

