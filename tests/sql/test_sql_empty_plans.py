"""A run of the query-based source that plans nothing says why: an empty table on a first run (a warning, or exit
4 under job.fail.on.empty), no row past the watermark on a later run (nothing new, no warning)."""

from __future__ import annotations

from tests.sql.helpers import SqlJob, add_orders, create_shop


def test_an_empty_table_is_named_on_the_first_run(sqlite_db, tmp_path):
    create_shop(sqlite_db, orders=0, customers=0)
    job = SqlJob(tmp_path, sqlite_db, tables="orders")
    first = job.run()
    assert first.returncode == 0, first.output
    assert "nothing new to pull: table orders has no row to pull" in first.stdout
    assert "warning: the job's first run found nothing at all to pull" in first.stdout
    failing = job.set(job__fail__on__empty="true").run()
    assert failing.returncode == 4 and "table orders has no row to pull" in failing.stderr


def test_no_row_past_the_watermark_is_nothing_new(sqlite_db, tmp_path):
    create_shop(sqlite_db, orders=5, customers=2)
    job = SqlJob(tmp_path, sqlite_db, job__fail__on__empty="true")
    assert job.run().returncode == 0
    again = job.run()
    assert again.returncode == 0, again.output
    assert "nothing new to pull: no row past the watermark of tables orders, customers" in again.stdout
    assert "warning" not in again.stdout
    add_orders(sqlite_db, 6, 1)
    assert "nothing new to pull" not in job.run().stdout
