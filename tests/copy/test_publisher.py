"""CopyDataPublisher: the staged files of a dataset's successful tasks planned as the runtime's commit steps,
conflicts refused before anything moves."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gobblin_py.io.contained_paths import PathEscapeError
from gobblin_py.connectors.copy import descriptor
from gobblin_py.connectors.copy.descriptor import FileCopy
from gobblin_py.connectors.copy.publisher import CopyDataPublisher
from gobblin_py.connectors.copy.writers import FileAwareInputStreamDataWriterBuilder
from gobblin_py.io.rename_step import FsRenameStep
from gobblin_py.sdk.commit import PublishConflictError
from gobblin_py.sdk.states import State, TaskState, WorkingState, WorkUnit
from tests.copy.files import write


def job(tmp_path: Path) -> dict[str, str]:
    return {"writer.staging.dir": str(tmp_path / "staging"), "writer.output.dir": str(tmp_path / "output"),
            "data.publisher.final.dir": str(tmp_path / "publish")}


def copied_task(tmp_path: Path, task_id: str, files: dict[str, bytes], state=WorkingState.SUCCESSFUL) -> TaskState:
    """A task whose writer copied ``files`` (destination -> bytes) and committed them to its output folder."""
    task = TaskState("job_1", task_id, WorkUnit(), {"task.id": task_id, "task.attempt.id": "a1"},
                     job_state=State(job(tmp_path)))
    sources = [FileCopy(str(write(tmp_path / "src" / task_id / name, data)), name, len(data), 0)
               for name, data in files.items()]
    writer = FileAwareInputStreamDataWriterBuilder().build(task, descriptor.SCHEMA, 1, 0, f"{task_id}_0")
    for batch in descriptor.batches(sources):
        writer.write(batch)
    writer.commit()
    task.working_state = state
    return task


def publisher(tmp_path: Path) -> CopyDataPublisher:
    plugin = CopyDataPublisher()
    plugin.init(job(tmp_path))
    return plugin


def test_the_successful_tasks_files_are_planned_then_moved_once(tmp_path):
    tasks = [copied_task(tmp_path, "t1", {"a/1.txt": b"1", "2.txt": b"2"}),
             copied_task(tmp_path, "t2", {"a/3.txt": b"3"}),
             copied_task(tmp_path, "t3", {"failed.txt": b"no"}, WorkingState.FAILED)]
    plugin = publisher(tmp_path)
    steps = plugin.plan(tasks)
    assert all(isinstance(s, FsRenameStep) for s in steps)
    assert sorted(s.dst for s in steps) == [str(tmp_path / "publish" / n) for n in ("2.txt", "a/1.txt", "a/3.txt")]
    assert not (tmp_path / "publish").exists()  # planned, not made
    assert plugin.final_dirs == [str(tmp_path / "publish")]
    for step in steps:
        step.execute(fresh=True)
        assert step.is_completed()
        step.execute()  # finishing it again (a rerun after a crash) changes nothing
    published = {str(p.relative_to(tmp_path / "publish")): p.read_bytes()
                 for p in (tmp_path / "publish").rglob("*") if p.is_file()}
    assert published == {"a/1.txt": b"1", "2.txt": b"2", "a/3.txt": b"3"}


def test_a_destination_that_exists_or_two_files_for_one_destination_refuse_the_dataset(tmp_path):
    write(tmp_path / "publish" / "a.txt", b"old")
    with pytest.raises(PublishConflictError, match="publish/a.txt already exists"):
        publisher(tmp_path).plan([copied_task(tmp_path, "t1", {"a.txt": b"new"})])
    twice = [copied_task(tmp_path, "t2", {"b.txt": b"1"}), copied_task(tmp_path, "t3", {"b.txt": b"2"})]
    with pytest.raises(PublishConflictError, match="is published to the same"):
        publisher(tmp_path).plan(twice)
    assert (tmp_path / "publish" / "a.txt").read_bytes() == b"old" and not (tmp_path / "publish" / "b.txt").exists()


def test_publish_without_a_commit_log_moves_the_files(tmp_path):
    assert publisher(tmp_path).publish([copied_task(tmp_path, "t1", {"x.txt": b"x"})]) == [str(tmp_path / "publish")]
    assert (tmp_path / "publish" / "x.txt").read_bytes() == b"x"


def test_a_file_whose_folder_is_another_file_is_refused_before_anything_moves(tmp_path):
    plugin = publisher(tmp_path)
    with pytest.raises(PublishConflictError, match="its folder .*publish/x is also a file"):
        plugin.plan([copied_task(tmp_path, "t1", {"x": b"1"}), copied_task(tmp_path, "t2", {"x/y.txt": b"2"})])
    with pytest.raises(PublishConflictError, match="publish/x is also a folder"):
        plugin.plan([copied_task(tmp_path, "t3", {"x/y.txt": b"2"}), copied_task(tmp_path, "t4", {"x": b"1"})])
    (tmp_path / "publish").mkdir()
    (tmp_path / "publish" / "x").write_bytes(b"published earlier")
    with pytest.raises(PublishConflictError, match="its folder .*publish/x is a published file"):
        plugin.plan([copied_task(tmp_path, "t5", {"x/y.txt": b"2"})])
    assert [p.name for p in (tmp_path / "publish").iterdir()] == ["x"]


def test_a_link_in_the_final_dir_leading_outside_it_fails_the_dataset_before_anything_moves(tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "publish").mkdir()
    os.symlink(tmp_path / "outside", tmp_path / "publish" / "a")
    tasks = [copied_task(tmp_path, "t1", {"b.txt": b"b"}), copied_task(tmp_path, "t2", {"a/x.txt": b"x"})]
    escape = r"publish/a/x.txt leads through a symbolic link to .*/outside, outside .*/publish$"
    with pytest.raises(PathEscapeError, match=escape):
        publisher(tmp_path).plan(tasks)
    assert list((tmp_path / "outside").iterdir()) == [] and not (tmp_path / "publish" / "b.txt").exists()
    os.symlink(tmp_path / "publish" / "in", tmp_path / "publish" / "c")  # a link that stays inside: written through
    (tmp_path / "publish" / "in").mkdir()
    assert publisher(tmp_path).publish([copied_task(tmp_path, "t3", {"c/y.txt": b"y"})])
    assert (tmp_path / "publish" / "in" / "y.txt").read_bytes() == b"y"
