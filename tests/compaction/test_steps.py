"""The compaction's commit steps finish from wherever a crash stopped them, and never mix old and new output."""

from __future__ import annotations

import struct

import pytest

from gobblin_py.connectors.compaction.publisher import late_name
from gobblin_py.connectors.compaction.steps import CopyFileStep, MarkerStep, SwapFolderStep
from gobblin_py.sdk.commit import PublishConflictError


def _folder(path, name):
    path.mkdir(parents=True)
    (path / name).write_text(name)


@pytest.mark.parametrize("crashed", ["before", "after_old_aside", "after_new_in"])
def test_a_swap_replayed_after_a_crash_ends_with_the_new_output_alone(tmp_path, crashed):
    dest, new, old = tmp_path / "10", tmp_path / ".10.gpy-new", tmp_path / ".10.gpy-old"
    _folder(new, "new.avro")
    _folder(dest if crashed == "before" else old, "old.avro")
    if crashed == "after_new_in":  # both renames made, the old folder not yet deleted
        new.rename(dest)
    step = SwapFolderStep(str(new), str(dest), str(old))
    assert not step.is_completed()
    step.execute()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["10"]
    assert [p.name for p in dest.iterdir()] == ["new.avro"]
    assert step.is_completed()
    step.execute()  # again: nothing changes
    assert [p.name for p in dest.iterdir()] == ["new.avro"]


def test_a_swap_whose_new_output_vanished_fails_rather_than_publish_nothing(tmp_path):
    with pytest.raises(PublishConflictError, match="is gone"):
        SwapFolderStep(str(tmp_path / ".x.gpy-new"), str(tmp_path / "x"), str(tmp_path / ".x.gpy-old")).execute()


def test_a_late_copy_keeps_its_source_and_never_replaces_a_file(tmp_path):
    src = tmp_path / "in" / "f.avro"
    src.parent.mkdir()
    src.write_bytes(b"late data")
    step = CopyFileStep(str(src), str(tmp_path / "late" / "f.avro"), 9)
    step.execute(fresh=True)
    assert step.is_completed() and src.exists() and (tmp_path / "late" / "f.avro").read_bytes() == b"late data"
    step.execute()  # a replay finds it copied
    with pytest.raises(PublishConflictError):
        step.execute(fresh=True)
    assert not [p for p in (tmp_path / "late").iterdir() if p.name.startswith("_tmp_")]
    assert late_name({"f.avro", "f.late1.avro"}, "f.avro") == "f.late2.avro"


def test_the_marker_holds_the_time_as_javas_writelong(tmp_path):
    step = MarkerStep(str(tmp_path), 1_491_238_800_000)
    step.execute(fresh=True)
    assert (tmp_path / "_COMPACTION_COMPLETE").read_bytes() == struct.pack(">q", 1_491_238_800_000)
    assert step.is_completed() and not MarkerStep(str(tmp_path), 1).is_completed()


def test_a_swapped_in_output_carries_the_time_it_was_published(tmp_path):
    """An hourly output written before a daily run started and published after it is late for that daily run."""
    import os
    import time

    new = tmp_path / ".10.gpy-new"
    _folder(new, "part-r-1.avro")
    os.utime(new / "part-r-1.avro", (1, 1))
    before = time.time()
    SwapFolderStep(str(new), str(tmp_path / "10"), str(tmp_path / ".10.gpy-old")).execute(fresh=True)
    assert (tmp_path / "10" / "part-r-1.avro").stat().st_mtime >= before - 1


def test_marking_input_complete_moves_only_the_files_read_and_replays(tmp_path):
    from gobblin_py.connectors.compaction.steps import MarkCompleteStep

    folder = tmp_path / "00"
    folder.mkdir()
    for name in ("a.avro", "b.avro", "arrived-since.avro"):
        (folder / name).write_text(name)
    step = MarkCompleteStep(str(folder), ["a.avro", "b.avro"])
    (tmp_path / "00_COMPLETE").mkdir()
    (folder / "a.avro").rename(tmp_path / "00_COMPLETE" / "a.avro")  # a crash after the first move
    assert not step.is_completed()
    step.execute()
    assert step.is_completed()
    assert sorted(p.name for p in (tmp_path / "00_COMPLETE").iterdir()) == ["a.avro", "b.avro"]
    assert [p.name for p in folder.iterdir()] == ["arrived-since.avro"]  # left for the next run
