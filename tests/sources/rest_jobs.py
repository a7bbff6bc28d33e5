"""Jobs of the REST source against the local web server (tests/sources/web_api.py), run in this process for speed
(``gpy run --engine local`` through click), and what they published."""

from __future__ import annotations

import json
from pathlib import Path

import fastavro
from click.testing import CliRunner, Result

from gobblin_py.cli import main
from tests.corpus.harness import system_config
from tests.sources.web_api import TOKEN

SCHEMA = json.dumps({"type": "record", "name": "Item", "fields": [
    {"name": "id", "type": "long"}, {"name": "name", "type": "string"}, {"name": "price", "type": ["null", "double"]}]})


def write_job(root: Path, url: str, **extra: str) -> Path:
    """``items.pull``: the records of ``url``/items by cursor (3 a page), ``id`` their watermark sent as ``since``."""
    props = {"job.name": "Items", "source.class": "RestSource", "rest.url": url + "/items",
             "rest.records.path": "data.items", "rest.paging.type": "cursor", "rest.paging.param": "cursor",
             "rest.paging.size": "3", "rest.paging.cursor.path": "next", "rest.auth.token": "${env:ITEMS_TOKEN}",
             "rest.watermark.field": "id", "rest.watermark.param": "since", "rest.schema": SCHEMA,
             "extract.namespace": "shop", "extract.table.name": "items", "writer.output.format": "AVRO", **extra}
    props = {k: v for k, v in props.items() if v is not None}
    root.mkdir(parents=True, exist_ok=True)
    job = root / "items.pull"
    job.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    system_config(root)
    return job


def run_here(job: Path, root: Path, expect: int = 0, env: dict[str, str] | None = None) -> Result:
    """``gpy run <job> --engine local`` in this process; its exit code checked."""
    result = CliRunner().invoke(main, ["run", str(job), "--engine", "local", "--sysconfig",
                                       str(root / "gobblin.properties")],
                                env={"ITEMS_TOKEN": TOKEN, "GOBBLIN_WORK_DIR": str(root / "work"), **(env or {})})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == expect, result.output
    return result


def published(root: Path) -> list[dict]:
    """Every row published under the extract's folder, oldest file first."""
    rows = []
    for path in sorted((root / "job-output" / "shop" / "items").rglob("*.avro"), key=lambda p: p.stat().st_mtime_ns):
        with open(path, "rb") as stream:
            rows.extend(fastavro.reader(stream))
    return rows


def ids(root: Path) -> list[int]:
    return [r["id"] for r in published(root)]


def items(*numbers: int) -> list[dict]:
    return [{"id": n, "name": f"item {n}", "price": None} for n in numbers]
