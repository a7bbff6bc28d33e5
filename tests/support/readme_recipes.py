"""The README's cluster recipes, as a user copies them: the fenced block between ``<!-- recipe: NAME -->`` and
``<!-- /recipe -->``."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def recipe(name: str) -> str:
    """The text of the README's recipe ``name`` (its fenced block, without the fences)."""
    found = re.search(rf"<!-- recipe: {re.escape(name)} -->\n```[a-z]*\n(.*?)```\n<!-- /recipe -->",
                      README.read_text(), re.DOTALL)
    assert found, f"README.md has no recipe {name!r}"
    return found.group(1)


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
