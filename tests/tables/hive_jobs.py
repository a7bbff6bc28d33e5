"""The CSV orders job of tests/runtime with Gobblin's Hive registration, for the Hive tests."""

from __future__ import annotations

from pathlib import Path

from tests.support.jobs import Job


def hive_job(root: Path, metastore_uri: str, table: str, extra: str = "") -> Job:
    """The CSV orders job of tests/runtime, published into ``<root>/published/orders`` and registered as
    ``shop.<table>``."""
    return Job(root, extra=f"""writer.file.pathType=TABLENAME
data.publisher.type=BaseDataPublisherWithHiveRegistration
hive.metastore.uri={metastore_uri}
hive.database.name=shop
hive.table.name={table}
{extra}""")


def write_orders(job: Job, name: str, ids: range, note: str | None = None) -> None:
    """A CSV file of orders ``ids`` in the job's data folder: region eu for odd ids, us for even; with a ``note``
    column (``<note><id>``) when ``note`` is given."""
    header = "order_id,region,amount" + (",note" if note is not None else "")
    rows = [f"{i},{'eu' if i % 2 else 'us'},{i * 1.5}" + (f",{note}{i}" if note is not None else "") for i in ids]
    (job.data / name).write_text("\n".join([header, *rows]) + "\n")
