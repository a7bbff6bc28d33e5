"""Job files with a Gobblin job.schedule, for the tests of `gpy schedule`."""

from __future__ import annotations

from pathlib import Path


def job_file(folder: Path, name: str, schedule: str | None, *more: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.pull"
    lines = [f"job.name={name}", "source.class=FileBasedSource", *more]
    if schedule is not None:
        lines.append(f"job.schedule={schedule}")
    path.write_text("\n".join(lines) + "\n")
    return path
