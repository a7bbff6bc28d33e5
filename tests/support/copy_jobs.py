"""Gobblin copy jobs as the copy tests write and run them."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_gpy_here

G = "org.apache.gobblin.data.management.copy."


def job_file(root: Path, pattern: Path, writer: str, converter: str = "", **extra: str) -> Path:
    lines = {"job.name": "CopyJob", "source.class": G + "CopySource",
             "data.publisher.type": G + "publisher.CopyDataPublisher",
             "writer.builder.class": G + f"writer.{writer}", "gobblin.dataset.pattern": str(pattern),
             "state.store.dir": str(root / "state"), "writer.staging.dir": str(root / "staging"),
             "writer.output.dir": str(root / "output"), "data.publisher.final.dir": str(root / "publish"),
             "task.maxretries": "0", **extra}
    if converter:
        lines["converter.classes"] = G + f"converter.{converter}"
    path = root / "copy.pull"
    path.write_text("".join(f"{k}={v}\n" for k, v in lines.items()))
    return path


def run(job: Path, expect: int = 0, env: dict | None = None):
    result = run_gpy_here("run", str(job), "--engine", "local", env=env)
    assert result.returncode == expect, result.stdout + result.stderr
    return result


def published(root: Path) -> dict[str, bytes]:
    folder = root / "publish"
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
