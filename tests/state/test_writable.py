"""Gobblin Writable codec: every state class round-trips, and bytes match Gobblin's own files."""

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gobblin_py.sdk.errors import CorruptFileError
from gobblin_py.sdk.run_states import DatasetState, JobState, SourceState
from gobblin_py.sdk.states import Extract, MultiWorkUnit, RunningState, State, TaskState, WorkUnit, WorkUnitState
from gobblin_py.store.sequencefile import SequenceFileReader, SequenceFileWriter
from gobblin_py.store.state_files import read_state_file
from gobblin_py.store.writable import (
    DATASET_STATE_CLASS,
    STATE_CLASS,
    class_name_of,
    deserialize,
    serialize,
)
from tests.support.paths import GOBBLIN_DATA

# Java strings: any text Java can hold after UTF-8 round trip (no lone surrogates)
text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
props = st.dictionaries(text, text, max_size=8)
longs = st.integers(-(2**63), 2**63 - 1)
extracts = st.builds(Extract, props)
workunits = st.builds(lambda p, e: WorkUnit(p, e), props, extracts)
multi_workunits = st.builds(lambda units, p, e: MultiWorkUnit(units, p, e), st.lists(workunits, max_size=3), props, extracts)
workunit_states = st.builds(lambda u, p: WorkUnitState(u, p), workunits, props)
task_states = st.builds(
    lambda j, t, u, p, a, b, c: TaskState(j, t, u, p, a, b, c), text, text, workunits, props, longs, longs, longs
)
running_states = st.sampled_from(list(RunningState))


def _job(cls):
    return st.builds(
        lambda name, jid, p, state, a, b, c, n, tasks, prev: cls(
            name, jid, properties=p, state=state, start_time=a, end_time=b, duration=c, task_count=n,
            task_states=tasks, previous_workunit_states=prev,
        ),
        text, text, props, running_states, longs, longs, longs, st.integers(-(2**31), 2**31 - 1),
        st.lists(task_states, max_size=3, unique_by=lambda t: t.task_id), st.lists(workunit_states, max_size=2),
    )


all_states = st.one_of(
    st.builds(State, props), extracts, workunits, multi_workunits, workunit_states, task_states,
    st.builds(lambda p, prev: SourceState(p, prev), props, st.lists(workunit_states, max_size=2)),
    _job(JobState), _job(DatasetState),
)


@given(all_states)
def test_every_state_class_round_trips(state):
    data = serialize(state)
    back = deserialize(class_name_of(state), data)
    assert type(back) is type(state)
    assert serialize(back) == data
    assert back.properties == state.properties
    if isinstance(state, JobState):
        assert back.all_task_states() == state.all_task_states()
        assert back.previous_workunit_states == state.previous_workunit_states
    if isinstance(state, MultiWorkUnit):
        assert back.work_units == state.work_units


@given(all_states)
def test_old_gobblin_package_names_are_accepted(state):
    name = class_name_of(state).replace("org.apache.gobblin.", "gobblin.")
    assert serialize(deserialize(name, serialize(state))) == serialize(state)


def test_duplicate_keys_last_occurrence_wins():
    # Gobblin writes commonProperties then specProperties: a key can appear twice
    from gobblin_py.store.hadoop_io import DataOutput

    out = DataOutput()
    out.write_int(3)
    for key, value in (("a", "common"), ("b", "x"), ("a", "spec")):
        out.write_text(key)
        out.write_text(value)
    assert deserialize("org.apache.gobblin.configuration.State", out.getvalue()).properties == {"a": "spec", "b": "x"}


def test_worked_example_bytes_of_a_dataset_state():
    """The opening bytes of the spec's worked example (state spec §4.8)."""
    state = DatasetState(
        "GobblinTest2", "job_GobblinTest2_1474984320032", dataset_urn="", state=RunningState.COMMITTED,
        start_time=1474984320143, end_time=1474984321612, duration=1469, task_count=2,
    )
    state.properties = {"job.failures": "0", "dataset.urn": ""}
    data = serialize(state)
    expected = (
        b"\x0cGobblinTest2" + b"\x1ejob_GobblinTest2_1474984320032"
        + bytes.fromhex("000001576bea9c8f") + bytes.fromhex("000001576beaa24c") + bytes.fromhex("00000000000005bd")
        + b"\x09COMMITTED" + bytes.fromhex("00000002") + bytes.fromhex("00000000")
        + bytes.fromhex("00000000")
        + bytes.fromhex("00000002") + b"\x0cjob.failures" + b"\x010" + b"\x0bdataset.urn" + b"\x00"
    )
    assert data == expected


def test_gobblins_real_dataset_state_file_decodes_and_reencodes_byte_for_byte():
    data = (GOBBLIN_DATA / "TestJob-current.jst").read_bytes()
    records = read_state_file(data, "TestJob-current.jst")
    assert len(records) == 1
    key, state = records[0]
    assert key == ""
    assert (state.job_name, state.job_id, state.state) == ("GobblinTest2", "job_GobblinTest2_1474984320032", RunningState.COMMITTED)
    assert (state.start_time, state.end_time, state.duration, state.task_count) == (1474984320143, 1474984321612, 1469, 2)
    assert state.properties == {"job.failures": "0", "dataset.urn": ""}
    tasks = state.all_task_states()
    assert [t.task_id for t in tasks] == ["task_GobblinTest2_1474984320032_0", "task_GobblinTest2_1474984320032_1"]
    first = tasks[0]
    assert (first.start_time, first.task_duration) == (1474984320146, 1465)
    assert len(first.workunit.properties) == 39 and len(first.extract.properties) == 4 and len(first.properties) == 14
    assert first.get_prop("writer.records.written") == "1000"
    assert first.get_prop("extract.table.name") == "TestTable1"  # found through the extract
    assert first.get_prop("source.class") == "gobblin.test.TestSource"  # through the work unit
    assert first.working_state.value == "COMMITTED"

    reader = SequenceFileReader(io.BytesIO(data))
    out = io.BytesIO()
    with SequenceFileWriter(out, reader.header.key_class, reader.header.value_class, sync_marker=reader.header.sync) as writer:
        writer.append_text(key, serialize(state))
    assert out.getvalue() == data


def test_trailing_bytes_and_bad_running_state_are_corruption():
    data = serialize(DatasetState("j", "job_j_1"))
    with pytest.raises(CorruptFileError, match="unexpected bytes after"):
        deserialize(DATASET_STATE_CLASS, data + b"\x00")
    bad = data.replace(b"\x07PENDING", b"\x07PENDINX")
    with pytest.raises(CorruptFileError, match="unknown running state 'PENDINX'"):
        deserialize(DATASET_STATE_CLASS, bad)
    with pytest.raises(CorruptFileError, match="unsupported state class"):
        deserialize("com.example.Other", data)


def test_a_cut_short_property_value_is_named():
    state = State({"a.key": "a value"})
    data = serialize(state)
    with pytest.raises(CorruptFileError, match="value of property 'a.key' runs past the end"):
        deserialize(STATE_CLASS, data[:-2])
