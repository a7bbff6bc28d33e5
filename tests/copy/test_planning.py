"""CopySource's plan: datasets from the glob, each file's destination, what is skipped, packing, refusals."""

from __future__ import annotations

import json
import os

import pytest

from gobblin_py.sdk.settings import SettingsError
from gobblin_py.connectors.copy import descriptor
from gobblin_py.connectors.copy.finder import deepest_plain_folder
from gobblin_py.connectors.copy.packing import pack
from gobblin_py.connectors.copy.source import FILES_KEY, SNAPSHOT_KEY, CopySource
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import WorkingState, WorkUnitState
from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.sdk.states import TaskState
from tests.copy.files import write


def props(tmp_path, pattern: str, **extra: str) -> dict[str, str]:
    return {"gobblin.dataset.pattern": pattern, "data.publisher.final.dir": str(tmp_path / "publish"), **extra}


def plan(job: dict[str, str], previous: dict | None = None):
    return CopySource().get_workunits(SourceState(job, previous_dataset_states=previous or {}))


def files_of(units) -> dict[str, list[str]]:
    return {u.get_prop("dataset.urn"): [f.destination for u2 in units if u2.get_prop("dataset.urn") ==
                                        u.get_prop("dataset.urn") for f in descriptor.from_json(u2.get_prop(FILES_KEY))]
            for u in units}


def test_each_folder_matching_the_glob_is_a_dataset_and_files_keep_their_path_below_the_plain_folder(tmp_path):
    write(tmp_path / "logs" / "a" / "x" / "1.txt", b"1")
    write(tmp_path / "logs" / "a" / ".hidden", b"h")
    write(tmp_path / "logs" / "b" / "2.txt", b"22")
    write(tmp_path / "logs" / "c" / "3.txt", b"333")
    units = plan(props(tmp_path, str(tmp_path / "logs" / "*"), **{"gobblin.dataset.blacklist": "/c$"}))
    assert files_of(units) == {"a": ["a/.hidden", "a/x/1.txt"], "b": ["b/2.txt"]}
    one = descriptor.from_json(units[0].get_prop(FILES_KEY))[0]
    assert one.source == str(tmp_path / "logs" / "a" / ".hidden") and one.size == 1 and one.decodings == ()
    assert len(units) == 3  # Gobblin's default: a work unit per file


def test_a_pattern_without_wildcards_is_one_dataset_whose_files_go_to_the_publish_root(tmp_path):
    write(tmp_path / "data" / "LogData.tar.gz", b"x")
    units = plan(props(tmp_path, str(tmp_path / "data") + "/"))
    assert files_of(units) == {"data": ["LogData.tar.gz"]}
    assert deepest_plain_folder("/a/b*/c/[x]") == "/a" and deepest_plain_folder("/a/b/") == "/a/b/"
    assert files_of(plan(props(tmp_path, str(tmp_path / "data" / "LogData.tar.gz")))) == {
        "LogData.tar.gz": ["LogData.tar.gz"]}  # a pattern naming one file: the file, to the publish root


def previous_state(units, committed: bool = True) -> DatasetState:
    tasks = []
    for index, unit in enumerate(units):
        task = TaskState("job_1", f"task_{index}", unit)
        task.working_state = WorkingState.COMMITTED if committed else WorkingState.FAILED
        tasks.append(task)
    return DatasetState("copy", "job_1", dataset_urn=units[0].get_prop("dataset.urn"), task_states=tasks)


def test_files_the_committed_state_records_are_not_copied_again_and_the_record_is_carried(tmp_path):
    job = props(tmp_path, str(tmp_path / "data"))
    first = write(tmp_path / "data" / "1.txt", b"one", mtime=1_000_000)
    units = plan(job)
    previous = {"data": previous_state(units)}
    assert plan(job, previous) == []  # nothing changed: nothing to copy
    write(tmp_path / "data" / "2.txt", b"two", mtime=1_000_000)
    units = plan(job, previous)
    assert files_of(units) == {"data": ["2.txt"]}
    assert json.loads(units[0].get_prop(SNAPSHOT_KEY)) == {"1.txt": [3, 1_000_000_000]}
    carried = {"data": previous_state(units)}  # run 2's state alone must remember 1.txt
    assert plan(job, carried) == []
    os.utime(first, (2_000_000, 2_000_000))  # changed at the source: copied again
    assert files_of(plan(job, carried)) == {"data": ["1.txt"]}


def test_files_of_a_failed_task_are_planned_again(tmp_path):
    job = props(tmp_path, str(tmp_path / "data"))
    write(tmp_path / "data" / "1.txt", b"one")
    units = plan(job)
    assert files_of(plan(job, {"data": previous_state(units, committed=False)})) == {"data": ["1.txt"]}


def test_a_file_already_at_its_destination_is_skipped_when_the_same_and_refused_when_different(tmp_path):
    job = props(tmp_path, str(tmp_path / "data"))
    write(tmp_path / "data" / "same.txt", b"abc", mtime=1_000_000)
    write(tmp_path / "publish" / "same.txt", b"xyz", mtime=2_000_000)  # same size, not older: Gobblin's rule
    assert plan(job) == []
    write(tmp_path / "data" / "other.txt", b"abcd")
    write(tmp_path / "publish" / "other.txt", b"ab")
    with pytest.raises(GobblinPyError, match="other.txt.*differs from.*already at its destination"):
        plan(job)


def test_simulate_plans_and_copies_nothing(tmp_path):
    write(tmp_path / "data" / "1.txt", b"one")
    assert plan(props(tmp_path, str(tmp_path / "data"), **{"gobblin.copy.simulate": "true"})) == []


def test_packing_fills_units_up_to_the_size_largest_first():
    files = [descriptor.FileCopy(f"/s/{n}", n, size, 0) for n, size in
             (("a", 60), ("b", 50), ("c", 40), ("d", 30), ("e", 200))]
    # largest first, each to the roomiest unit that takes it: c goes with b (50 free), d with a (40 free)
    assert [[f.destination for f in g] for g in pack(files, 100, 50)] == [["a", "d"], ["b", "c"], ["e"]]
    assert [[f.destination for f in g] for g in pack(files, 0, 50)] == [["a"], ["b"], ["c"], ["d"], ["e"]]
    small = [descriptor.FileCopy(f"/s/{i}", f"{i:02}", 1, 0) for i in range(10)]
    assert [len(g) for g in pack(small, 100, 4)] == [4, 4, 2]  # a file weighs at least 100 / 4


@pytest.mark.parametrize("key,value", [("gobblin.copy.recursive.update", "true"),
                                       ("gobblin.copy.preserved.attributes", "ugp"),
                                       ("gobblin.copy.prioritization.maxCopy.size", "10"),
                                       ("gobblin.copy.split.enabled", "true")])
def test_keys_that_would_change_what_is_copied_are_refused_naming_them(tmp_path, key, value):
    with pytest.raises(SettingsError, match=key.replace(".", r"\.")):
        plan(props(tmp_path, str(tmp_path / "data"), **{key: value}))


def test_validation_wants_the_copy_writer_and_publisher_and_a_supported_pattern(tmp_path):
    job = props(tmp_path, str(tmp_path / "{a,b}"), **{"writer.builder.class": "AvroDataWriterBuilder"})
    problems = [str(p) for p in CopySource.validate(job)]
    assert any("writer.builder.class" in p and "cannot handle the files CopySource plans" in p for p in problems)
    assert any("data.publisher.type" in p and "is not set" in p for p in problems)
    assert any("{a,b} alternatives are not supported" in p for p in problems)


def test_the_extractor_gives_the_units_files_as_descriptors(tmp_path):
    write(tmp_path / "data" / "1.txt", b"one")
    unit = plan(props(tmp_path, str(tmp_path / "data")))[0]
    extractor = CopySource().get_extractor(WorkUnitState(unit))
    batches = list(extractor.read_batches())
    assert extractor.get_schema() == descriptor.SCHEMA and batches[0].column("destination").to_pylist() == ["1.txt"]


def test_symbolic_links_and_special_files_are_skipped_with_a_warning(tmp_path, capsys):
    write(tmp_path / "logs" / "a" / "1.txt", b"1")
    write(tmp_path / "secret" / "pw", b"hunter2")
    os.symlink(tmp_path / "secret", tmp_path / "logs" / "a" / "dir-link")
    os.symlink(tmp_path / "secret" / "pw", tmp_path / "logs" / "a" / "file-link")
    os.mkfifo(tmp_path / "logs" / "a" / "fifo")
    units = plan(props(tmp_path, str(tmp_path / "logs" / "a")))
    assert files_of(units) == {"a": ["1.txt"]}
    assert "copy_skipped_special_files" in capsys.readouterr().err


def test_datasets_inside_one_another_are_refused_naming_both(tmp_path):
    write(tmp_path / "src" / "a" / "b" / "f", b"1")
    with pytest.raises(GobblinPyError, match=r"dataset .*/src/a lies inside dataset .*/src: both would copy"):
        plan(props(tmp_path, str(tmp_path / "src" / "**")))


def test_a_dataset_match_that_is_a_symbolic_link_is_skipped_with_a_warning_never_followed(tmp_path, capsys):
    write(tmp_path / "src" / "a" / "1.txt", b"1")
    write(tmp_path / "secret" / "data" / "pw", b"hunter2")
    os.symlink(tmp_path / "secret", tmp_path / "src" / "evil")  # ln -s /etc/secret src/evil
    os.symlink(tmp_path / "src" / "a", tmp_path / "src" / "again")  # a link inside the source: followed neither
    assert files_of(plan(props(tmp_path, str(tmp_path / "src" / "*")))) == {"a": ["a/1.txt"]}
    err = capsys.readouterr().err
    assert "copy_skipped_linked_datasets" in err and str(tmp_path / "src" / "evil") in err
    # a link matched by a wildcard higher up the pattern is not followed either
    assert plan(props(tmp_path, str(tmp_path / "src" / "*" / "data"))) == []
    # a link the job names itself, in the pattern's folder without wildcards, is the user's choice
    os.symlink(tmp_path / "src", tmp_path / "linked-src")
    assert files_of(plan(props(tmp_path, str(tmp_path / "linked-src" / "a")))) == {"a": ["1.txt"]}


@pytest.mark.parametrize("pattern,final", [("src/", "src/copy"), ("src", "src"), ("src/*", "src/a/out"),
                                           ("src/*", "src/new"), ("src/**", "src/copy"), ("data/in/*", "data"),
                                           ("data/*/x", "/")])
def test_a_final_dir_inside_a_source_or_holding_one_is_refused_before_any_work_naming_both(tmp_path, pattern, final):
    job = props(tmp_path, str(tmp_path / pattern), **{"data.publisher.final.dir": str(tmp_path / final)})
    job.update({"writer.builder.class": "FileAwareInputStreamDataWriterBuilder",
                "data.publisher.type": "CopyDataPublisher"})
    problems = [str(p) for p in CopySource.validate(job)]
    assert len(problems) == 1 and "data.publisher.final.dir" in problems[0], problems
    assert str(tmp_path / pattern) in problems[0] and str(tmp_path / final).rstrip("/") in problems[0]


@pytest.mark.parametrize("pattern,final,extra", [("src/a*", "src/copy", {}), ("src/*", "srcs", {}),
                                                 ("src/", "src/copy", {"writer.fs.uri": "memory://"})])
def test_a_final_dir_beside_the_sources_or_on_another_filesystem_is_accepted(tmp_path, pattern, final, extra):
    job = props(tmp_path, str(tmp_path / pattern), **{"data.publisher.final.dir": str(tmp_path / final), **extra})
    job.update({"writer.builder.class": "FileAwareInputStreamDataWriterBuilder",
                "data.publisher.type": "CopyDataPublisher"})
    assert CopySource.validate(job) == []


def test_a_dataset_found_inside_the_final_dir_or_reaching_it_through_a_link_is_refused_naming_both(tmp_path):
    write(tmp_path / "src" / "x" / "in" / "1.txt", b"1")
    with pytest.raises(UsageError, match=r"dataset .*/src/x/in lies inside .*/src/x"):
        plan(props(tmp_path, str(tmp_path / "src" / "*" / "in"),
                   **{"data.publisher.final.dir": str(tmp_path / "src" / "x")}))
    elsewhere = {"data.publisher.final.dir": str(tmp_path / "src" / "x"), "writer.fs.uri": "memory://"}
    assert files_of(plan(props(tmp_path, str(tmp_path / "src" / "*" / "in"), **elsewhere))) == {"x%2Fin": ["x/in/1.txt"]}
    os.symlink(tmp_path / "src" / "x", tmp_path / "out")  # the final dir is a link into the source
    with pytest.raises(UsageError, match=r".*/out lies inside dataset .*/src"):
        plan(props(tmp_path, str(tmp_path / "src"), **{"data.publisher.final.dir": str(tmp_path / "out")}))


def test_a_file_or_dataset_whose_name_is_not_utf8_is_skipped_with_a_warning_naming_its_bytes(tmp_path, capsys):
    write(tmp_path / "src" / "a" / "ok.txt", b"ok")
    bad = os.fsencode(tmp_path / "src" / "a") + b"/bad\xff.txt"
    with open(bad, "wb") as out:
        out.write(b"x")
    os.makedirs(os.fsencode(tmp_path / "src") + b"/\xfe")
    with open(os.fsencode(tmp_path / "src") + b"/\xfe/f.txt", "wb") as out:
        out.write(b"f")
    units = plan(props(tmp_path, str(tmp_path / "src" / "*")))
    assert files_of(units) == {"a": ["a/ok.txt"]}
    err = capsys.readouterr().err
    assert "copy_skipped_unencodable_names" in err
    assert repr(bad).replace("\\", "\\\\") in err and "\\\\xfe" in err  # the bytes, escaped (in JSON)
