"""Regenerate the example jobs' sample data; deterministic, so reruns match.

- jobs/data/orders/*.csv: orders for the quickstart and the dual-write fork example;
- jobs/data/customers/*.jsonl: customers, some with sensitive fields, for the classifier fork example.
"""

from __future__ import annotations

import csv
import json
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


def write_customers(path: Path, rows: int, rng: random.Random) -> None:
    with path.open("w") as out:
        for i in range(1, rows + 1):
            record = {"customer_id": i, "name": f"customer {i}", "email": f"c{i}@example.com",
                      "country": rng.choice(["DE", "FR", "US", "GB"]), "ssn": None, "card_number": None}
            kind = rng.random()
            if kind < 0.2:
                record["ssn"] = f"{rng.randrange(100, 999)}-{rng.randrange(10, 99)}-{rng.randrange(1000, 9999)}"
            elif kind < 0.35:
                record["card_number"] = "4" + "".join(str(rng.randrange(10)) for _ in range(15))
            out.write(json.dumps(record) + "\n")


def main(root: str = "jobs/data") -> None:
    orders = Path(root) / "orders"
    orders.mkdir(parents=True, exist_ok=True)
    rng = random.Random(20261101)
    first = datetime(2026, 11, 1, tzinfo=timezone.utc)
    for n in range(3):
        write_day(orders, first + timedelta(days=n), 250, 1 + 250 * n, rng)
    customers = Path(root) / "customers"
    customers.mkdir(parents=True, exist_ok=True)
    write_customers(customers / "customers-2026-11-01.jsonl", 300, random.Random(7))


if __name__ == "__main__":
    main(*sys.argv[1:])
