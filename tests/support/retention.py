"""Old runs in a state store and a digest of a folder, for the retention tests."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from gobblin_py.store import FsDatasetStateStore
from gobblin_py.store.state_files import encode_dataset_state_file

DAY = 86400


def add_old_runs(store_dir: Path, count: int, oldest_days: float = 40, first: int = 1_700_000_000_000) -> list[Path]:
    """``count`` earlier runs of the job's dataset, written with the store's own encoder as Gobblin's layout
    names them, aged ``oldest_days`` … ``oldest_days - count/100`` days (none within 30 days)."""
    store = FsDatasetStateStore(str(store_dir))
    state = store.get_latest_dataset_state("Orders", "")
    assert state is not None
    written = []
    now = time.time()
    for index in range(count):
        job_id = f"job_Orders_{first + index}"
        state.job_id = state.id = job_id
        path = store_dir / "Orders" / store.table_name("", job_id)
        path.write_bytes(encode_dataset_state_file("", state))
        age = (oldest_days - index / 100) * DAY
        os.utime(path, (now - age, now - age))
        written.append(path)
    return written


def tree_digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def write_orders(folder: Path, name: str, first: int, count: int) -> None:
    rows = "\n".join(f"{i},{i * 2}" for i in range(first, first + count))
    (folder / name).write_text(f"order_id,amount\n{rows}\n")


