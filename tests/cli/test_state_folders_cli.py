"""Folders of the state that are files, and a corrupt lock file: exit 2 with one line naming the path and what
is wrong, never a raw errno with exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import run_gpy_here


def write_job(root: Path, state_dir: Path) -> Path:
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "a.csv").write_text("id\n1\n2\n")
    job = root / "events.pull"
    job.write_text("\n".join([
        "job.name=Events", "source.class=FileBasedSource", f"source.filebased.data.directory={data}",
        "extract.table.name=events", "writer.file.pathType=TABLENAME", f"task.data.root.dir={root / 'work'}",
        f"data.publisher.final.dir={root / 'published'}", f"state.store.dir={state_dir}", "task.maxretries=0",
    ]) + "\n")
    return job


def assert_refused(result, *words: str) -> None:
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "[Errno" not in result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("gpy: error:")]
    assert all(word in line for word in words), line


@pytest.fixture
def job(tmp_path) -> Path:
    job = write_job(tmp_path, tmp_path / "state")
    done = run_gpy_here("run", str(job), "--engine", "local")
    assert done.returncode == 0, done.stderr[-2000:]
    return job


def test_export_onto_a_regular_file_is_refused(job, tmp_path):
    target = tmp_path / "a-file"
    target.write_text("not a folder")
    assert_refused(run_gpy_here("state", "export", str(job), str(target)), str(target), "not a folder")
    assert target.read_text() == "not a folder"
    # the job's folder inside the target is a file
    (tmp_path / "export").mkdir()
    (tmp_path / "export" / "Events").write_text("")
    assert_refused(run_gpy_here("state", "export", str(job), str(tmp_path / "export")),
                   str(tmp_path / "export" / "Events"), "not a folder")


def test_import_from_a_regular_file_is_refused(job, tmp_path):
    (tmp_path / "source").mkdir()
    (tmp_path / "source" / "Events").write_text("")
    assert_refused(run_gpy_here("state", "import", str(job), str(tmp_path / "source")),
                   str(tmp_path / "source" / "Events"), "not a folder")


@pytest.mark.parametrize("below", ["", "sub"])
def test_a_state_folder_that_is_a_regular_file(tmp_path, below):
    blocker = tmp_path / "state-file"
    blocker.write_text("")
    job = write_job(tmp_path / "job", blocker / below if below else blocker)
    for command in (["state", "show", str(job)], ["state", "datasets", str(job)],
                    ["state", "startpoint", "list", str(job)], ["lock", "show", str(job)],
                    ["run", str(job), "--engine", "local"]):
        assert_refused(run_gpy_here(*command), str(blocker), "not a folder")
    assert not (tmp_path / "job" / "published").exists()


def test_a_corrupt_lock_file_exits_2_and_lock_break_removes_it(job, tmp_path):
    lock = tmp_path / "state" / "Events.lock"
    lock.write_text("{not json")
    assert_refused(run_gpy_here("lock", "show", str(job)), str(lock), "unreadable lock file")
    assert_refused(run_gpy_here("run", str(job), "--engine", "local"), str(lock), "unreadable lock file")
    broken = run_gpy_here("lock", "break", str(job))
    assert broken.returncode == 0 and "unreadable" in broken.stdout, broken.stderr
    assert not lock.exists()
    assert run_gpy_here("run", str(job), "--engine", "local").returncode == 0
