"""A small orders job and a Prometheus scrape, for the monitoring tests."""

from __future__ import annotations

import urllib.request
from pathlib import Path


def make_job(root: Path, *extra: str, rows: int = 20, name: str = "Orders") -> Path:
    """A job pulling ``rows`` orders (one an hour from 2026-01-01T00:00Z) from a CSV file into Parquet."""
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "orders.csv").write_text("order_id,amount,ordered_at\n" + "".join(
        f"{i},{i * 0.5},2026-01-01T{i:02d}:00:00Z\n" for i in range(rows)))
    job = root / "orders.pull"
    job.write_text("\n".join([
        f"job.name={name}",
        "source.class=FileBasedSource",
        f"source.filebased.data.directory={data}",
        f"writer.staging.dir={root}/staging",
        f"writer.output.dir={root}/output",
        f"data.publisher.final.dir={root}/published",
        f"state.store.dir={root}/state",
        "writer.file.pathType=TABLENAME",
        "extract.table.name=orders",
        "task.maxretries=0",
        "source.event.time.column=ordered_at",
        *extra,
        "",
    ]))
    return job


def make_sequential_job(root: Path, *extra: str, name: str = "Orders") -> Path:
    """A job of Gobblin's ``SequentialTestSource`` (``extra`` sets its pace), with :func:`make_job`'s folders. It
    sets no key of FileBasedSource's: a key its source does not declare makes the run look through every plugin
    (about 2 s in a new interpreter)."""
    job = make_job(root, *extra, name=name)
    text = job.read_text().replace("source.class=FileBasedSource", "source.class=SequentialTestSource")
    job.write_text(text.replace("source.event.time.column=ordered_at\n", ""))
    return job


def scrape(url: str) -> dict[tuple[str, frozenset], float]:
    """The Pushgateway's /metrics: ``(name, labels) → value`` of the series gpy pushed."""
    from prometheus_client.parser import text_string_to_metric_families

    text = urllib.request.urlopen(url + "/metrics", timeout=5).read().decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples if s.name.startswith("gpy_")}
