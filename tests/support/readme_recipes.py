"""The docs' recipes (the cluster recipes of docs/operating/cluster.md and any other page's), as a user copies them:
the fenced block between ``<!-- recipe: NAME -->`` and ``<!-- /recipe -->``."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def recipe(name: str) -> str:
    """The text of the recipe ``name`` on whichever docs page holds it (its fenced block, without the fences)."""
    pattern = re.compile(rf"<!-- recipe: {re.escape(name)} -->\n```[a-z]*\n(.*?)```\n<!-- /recipe -->", re.DOTALL)
    found = [m.group(1) for page in sorted(DOCS.rglob("*.md")) for m in pattern.finditer(page.read_text())]
    assert len(found) == 1, f"{len(found)} docs pages have a recipe {name!r}: one must"
    return found[0]


def properties(name: str) -> dict[str, str]:
    """The keys of a recipe that is a block of job properties (``key=value`` lines, ``#`` comments)."""
    lines = (line.strip() for line in recipe(name).splitlines())
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def job_with(keys: dict[str, str], folder: Path) -> Path:
    """A small files job under ``folder`` (its input folder made) with a recipe's ``keys`` added."""
    (folder / "in").mkdir(exist_ok=True)
    job = folder / "orders.pull"
    job.write_text("\n".join([
        "job.name=orders", "source.class=FileBasedSource", f"source.filebased.data.directory={folder}/in",
        "extract.namespace=shop", "extract.table.name=orders", f"writer.staging.dir={folder}/staging",
        f"writer.output.dir={folder}/output", f"data.publisher.final.dir={folder}/published",
        f"state.store.dir={folder}/state", *(f"{k}={v}" for k, v in keys.items()), ""]))
    return job
