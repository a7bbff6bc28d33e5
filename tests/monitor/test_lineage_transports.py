"""The OpenLineage transports a job names in its keys, end to end: ``console`` prints each event, ``file`` appends
to one file unless ``append=false``; and folders named relative to the working folder are named by their absolute
paths, so two jobs in two folders are two datasets. Every event is checked against OpenLineage's schema."""

from __future__ import annotations

import json
from pathlib import Path

from tests.monitor.lineage_schema import validate_event
from tests.support.cli import run_gpy_here
from tests.support.monitor import make_job


def _events(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{") and '"eventType"' in line]


def test_the_console_transport_prints_each_event_on_stderr(tmp_path):
    job = make_job(tmp_path, "openlineage.transport.type=console")
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 0, result.stderr[-3000:]
    events = _events(result.stderr)
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    for event in events:
        validate_event(event)
    assert _events(result.stdout) == []  # stdout keeps the run's summary alone


def test_the_file_transport_appends_to_one_file_unless_append_is_false(tmp_path):
    lineage = tmp_path / "lineage"
    lineage.mkdir()
    job = make_job(tmp_path / "one", "openlineage.transport.type=file",
                   f"openlineage.transport.log_file_path={lineage}/events.jsonl")
    for _ in range(2):
        assert run_gpy_here("run", str(job), "--engine", "local").returncode == 0
    assert [p.name for p in lineage.iterdir()] == ["events.jsonl"]
    events = _events((lineage / "events.jsonl").read_text())
    assert [e["eventType"] for e in events] == ["START", "COMPLETE", "START", "COMPLETE"]
    for event in events:
        validate_event(event)

    apart = tmp_path / "apart"
    apart.mkdir()
    job = make_job(tmp_path / "two", "openlineage.transport.type=file", "openlineage.transport.append=false",
                   f"openlineage.transport.log_file_path={apart}/event")
    assert run_gpy_here("run", str(job), "--engine", "local").returncode == 0
    files = sorted(apart.iterdir())
    assert len(files) == 2 and all(f.name.startswith("event-") and f.suffix == ".json" for f in files)


def test_a_file_transport_without_its_file_is_a_configuration_error(tmp_path):
    job = make_job(tmp_path, "openlineage.transport.type=file")
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 2
    assert "openlineage.transport.log_file_path" in result.stderr + result.stdout


def _relative_job(folder: Path, lineage: Path) -> Path:
    """A job in ``folder`` whose folders are all relative to the working folder."""
    (folder / "incoming").mkdir(parents=True)
    (folder / "incoming" / "orders.csv").write_text("order_id,amount\n1,0.5\n2,1.0\n")
    job = folder / "orders.pull"
    job.write_text("\n".join([
        "job.name=Orders", "source.class=FileBasedSource", "source.filebased.data.directory=incoming",
        "writer.staging.dir=staging", "writer.output.dir=output", "data.publisher.final.dir=published",
        "state.store.dir=state", "writer.file.pathType=TABLENAME", "extract.table.name=orders",
        "openlineage.transport.type=file", f"openlineage.transport.log_file_path={lineage}", ""]))
    return job


def test_relative_folders_are_named_by_their_absolute_paths(tmp_path):
    names = []
    for place in ("eu", "us"):
        lineage = tmp_path / f"{place}.jsonl"
        job = _relative_job(tmp_path / place, lineage)
        result = run_gpy_here("run", job.name, "--engine", "local", cwd=job.parent)
        assert result.returncode == 0, result.stderr[-3000:]
        end = _events(lineage.read_text())[-1]
        validate_event(end)
        [source], [output] = end["inputs"], end["outputs"]
        assert (source["namespace"], source["name"]) == ("file", str(tmp_path / place / "incoming"))
        assert (output["namespace"], output["name"]) == ("file", str(tmp_path / place / "published" / "orders"))
        names.append(source["name"])
    assert names[0] != names[1]
