"""Regenerate the quickstart's sample orders (jobs/data/orders/*.csv); deterministic, so reruns match."""

from __future__ import annotations

import csv
import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path


def write_day(directory: Path, day: datetime, rows: int, first_id: int, rng: random.Random) -> None:
    path = directory / f"orders-{day:%Y-%m-%d}.csv"
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["order_id", "customer_id", "amount", "currency", "ordered_at", "note"])
        for i in range(rows):
            at = day + timedelta(seconds=rng.randrange(86400))
            writer.writerow([
                first_id + i, rng.randrange(1, 500), f"{rng.uniform(2, 400):.2f}", rng.choice(["EUR", "USD", "GBP"]),
                at.strftime("%Y-%m-%dT%H:%M:%SZ"), rng.choice(["", "gift", "express", "pickup"]),
            ])


def main(directory: str = "jobs/data/orders") -> None:
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    rng = random.Random(20261101)
    first = datetime(2026, 11, 1, tzinfo=timezone.utc)
    for n in range(3):
        write_day(target, first + timedelta(days=n), 250, 1 + 250 * n, rng)


if __name__ == "__main__":
    main(*sys.argv[1:])
