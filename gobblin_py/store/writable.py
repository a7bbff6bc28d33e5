"""Gobblin's Writable serialisation of its state classes, byte for byte.

Layouts (all big-endian, sub-objects inline without length prefixes or type tags):

- State / Extract: ``int n`` then n × (Text key, Text value); on read the last occurrence of a key wins.
- WorkUnit: its properties, then its Extract's properties. MultiWorkUnit: ``int n``, n × WorkUnit, then its
  own WorkUnit body.
- WorkUnitState: the WorkUnit, then its own properties.
- TaskState: Text jobId, Text taskId, long start, long end, long duration, then the WorkUnitState body.
- SourceState part: ``int m``, m × WorkUnitState, then own properties.
- JobState / DatasetState: Text jobName, Text jobId, long start, long end, long duration, Text running state,
  int taskCount, ``int k`` then k × TaskState, then the SourceState part.

Class names are written in the ``org.apache.gobblin.`` spelling; the older ``gobblin.`` spelling is accepted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gobblin_py.sdk.errors import CorruptFileError
from gobblin_py.sdk.run_states import DatasetState, JobState, SourceState
from gobblin_py.sdk.states import Extract, MultiWorkUnit, RunningState, State, TaskState, WorkUnit, WorkUnitState
from gobblin_py.store.hadoop_io import DataInput, DataOutput

STATE_CLASS = "org.apache.gobblin.configuration.State"
SOURCE_STATE_CLASS = "org.apache.gobblin.configuration.SourceState"
WORK_UNIT_STATE_CLASS = "org.apache.gobblin.configuration.WorkUnitState"
EXTRACT_CLASS = "org.apache.gobblin.source.workunit.Extract"
WORK_UNIT_CLASS = "org.apache.gobblin.source.workunit.WorkUnit"
MULTI_WORK_UNIT_CLASS = "org.apache.gobblin.source.workunit.MultiWorkUnit"
TASK_STATE_CLASS = "org.apache.gobblin.runtime.TaskState"
JOB_STATE_CLASS = "org.apache.gobblin.runtime.JobState"
DATASET_STATE_CLASS = "org.apache.gobblin.runtime.JobState$DatasetState"


def canonical_class_name(name: str) -> str:
    """``gobblin.x.Y`` → ``org.apache.gobblin.x.Y`` (the package moved in 2017; both appear in stores)."""
    return "org.apache." + name if name.startswith("gobblin.") else name


# ---------------------------------------------------------------- writing


def write_props(out: DataOutput, props: Mapping[str, str]) -> None:
    out.write_int(len(props))
    for key, value in props.items():
        out.write_text(key)
        out.write_text(value)


def _write_workunit_body(out: DataOutput, unit: WorkUnit) -> None:
    write_props(out, unit.properties)
    write_props(out, unit.extract.properties)


def _write_workunit(out: DataOutput, unit: WorkUnit) -> None:
    if isinstance(unit, MultiWorkUnit):
        out.write_int(len(unit.work_units))
        for inner in unit.work_units:
            _write_workunit(out, inner)
    _write_workunit_body(out, unit)


def _write_workunit_state(out: DataOutput, state: WorkUnitState) -> None:
    _write_workunit(out, state.workunit)
    write_props(out, state.properties)


def _write_task_state(out: DataOutput, state: TaskState) -> None:
    out.write_text(state.job_id)
    out.write_text(state.task_id)
    out.write_long(state.start_time)
    out.write_long(state.end_time)
    out.write_long(state.task_duration)
    _write_workunit_state(out, state)


def _write_source_state_part(out: DataOutput, state: SourceState) -> None:
    out.write_int(len(state.previous_workunit_states))
    for previous in state.previous_workunit_states:
        _write_workunit_state(out, previous)
    write_props(out, state.properties)


def _write_job_state(out: DataOutput, state: JobState) -> None:
    out.write_text(state.job_name)
    out.write_text(state.job_id)
    out.write_long(state.start_time)
    out.write_long(state.end_time)
    out.write_long(state.duration)
    out.write_text(RunningState(state.state).value)
    out.write_int(state.task_count)
    tasks = state.all_task_states()
    out.write_int(len(tasks))
    for task in tasks:
        _write_task_state(out, task)
    _write_source_state_part(out, state)


# most specific first: the first isinstance match decides the layout and the class name
# (each writer takes an instance of the class it is paired with, which mypy cannot express in one list)
_WRITERS: list[tuple[type, str, Callable[[DataOutput, Any], None]]] = [
    (DatasetState, DATASET_STATE_CLASS, _write_job_state),
    (JobState, JOB_STATE_CLASS, _write_job_state),
    (SourceState, SOURCE_STATE_CLASS, _write_source_state_part),
    (TaskState, TASK_STATE_CLASS, _write_task_state),
    (WorkUnitState, WORK_UNIT_STATE_CLASS, _write_workunit_state),
    (MultiWorkUnit, MULTI_WORK_UNIT_CLASS, _write_workunit),
    (WorkUnit, WORK_UNIT_CLASS, _write_workunit),
    (Extract, EXTRACT_CLASS, lambda out, s: write_props(out, s.properties)),
    (State, STATE_CLASS, lambda out, s: write_props(out, s.properties)),
]


def class_name_of(state: State) -> str:
    """The Java class name Gobblin would write for this state."""
    for cls, name, _ in _WRITERS:
        if isinstance(state, cls):
            return name
    raise TypeError(f"not a Gobblin state: {state!r}")


def serialize(state: State) -> bytes:
    """The Writable bytes of ``state``."""
    out = DataOutput()
    for cls, _, writer in _WRITERS:
        if isinstance(state, cls):
            writer(out, state)
            return out.getvalue()
    raise TypeError(f"not a Gobblin state: {state!r}")


# ---------------------------------------------------------------- reading


def read_props(inp: DataInput, what: str = "properties") -> dict[str, str]:
    at = inp.pos
    count = inp.read_int(f"{what} count")
    if count < 0 or count > inp.remaining():  # each entry takes at least 2 bytes
        raise CorruptFileError(inp._what, f"implausible {what} count {count}", at)
    props: dict[str, str] = {}
    read = inp.read_text
    for _ in range(count):
        key = read("property key")
        at = inp.pos
        try:
            props[key] = read("property value")
        except CorruptFileError:  # read again for the error that names the property (not formatted per value)
            inp.pos = at
            props[key] = read(f"value of property {key!r}")
    return props


def _read_workunit(inp: DataInput, multi: bool = False) -> WorkUnit:
    if multi:
        count = inp.read_int("work unit count")
        if count < 0 or count > inp.remaining():
            raise CorruptFileError(inp._what, f"implausible work unit count {count}", inp.pos)
        inner = [_read_workunit(inp) for _ in range(count)]
        props = read_props(inp, "work unit properties")
        return MultiWorkUnit(inner, props, Extract(read_props(inp, "extract properties")))
    props = read_props(inp, "work unit properties")
    return WorkUnit(props, Extract(read_props(inp, "extract properties")))


def _read_workunit_state(inp: DataInput) -> WorkUnitState:
    unit = _read_workunit(inp)
    return WorkUnitState(unit, read_props(inp, "work unit state properties"))


def _read_task_state(inp: DataInput) -> TaskState:
    job_id = inp.read_text("task job id")
    task_id = inp.read_text("task id")
    start, end, duration = inp.read_long("task start"), inp.read_long("task end"), inp.read_long("task duration")
    unit = _read_workunit(inp)
    props = read_props(inp, "task state properties")
    return TaskState(job_id, task_id, unit, props, start, end, duration)


def _read_source_state_part(inp: DataInput) -> tuple[list[WorkUnitState], dict[str, str]]:
    count = inp.read_int("previous work unit state count")
    if count < 0 or count > inp.remaining():
        raise CorruptFileError(inp._what, f"implausible previous work unit state count {count}", inp.pos)
    previous = [_read_workunit_state(inp) for _ in range(count)]
    return previous, read_props(inp, "job state properties")


def _read_job_state(inp: DataInput, cls: type[JobState]) -> JobState:
    job_name = inp.read_text("job name")
    job_id = inp.read_text("job id")
    start, end, duration = inp.read_long("job start"), inp.read_long("job end"), inp.read_long("job duration")
    at = inp.pos
    state_name = inp.read_text("running state")
    try:
        running = RunningState(state_name)
    except ValueError:
        raise CorruptFileError(inp._what, f"unknown running state {state_name!r}", at) from None
    task_count = inp.read_int("task count")
    count = inp.read_int("task state count")
    if count < 0 or count > inp.remaining():
        raise CorruptFileError(inp._what, f"implausible task state count {count}", inp.pos)
    tasks = [_read_task_state(inp) for _ in range(count)]
    previous, props = _read_source_state_part(inp)
    job = cls(
        job_name,
        job_id,
        properties=props,
        state=running,
        start_time=start,
        end_time=end,
        duration=duration,
        task_count=task_count,
        task_states=tasks,
        previous_workunit_states=previous,
    )
    if cls is DatasetState:  # the constructor fills defaults; keep exactly what was stored
        job.properties = props
    return job


def _read_source_state(inp: DataInput) -> SourceState:
    previous, props = _read_source_state_part(inp)
    return SourceState(props, previous)


_READERS: dict[str, Callable[[DataInput], State]] = {
    STATE_CLASS: lambda inp: State(read_props(inp)),
    EXTRACT_CLASS: lambda inp: Extract(read_props(inp)),
    WORK_UNIT_CLASS: _read_workunit,
    MULTI_WORK_UNIT_CLASS: lambda inp: _read_workunit(inp, multi=True),
    WORK_UNIT_STATE_CLASS: _read_workunit_state,
    TASK_STATE_CLASS: _read_task_state,
    SOURCE_STATE_CLASS: _read_source_state,
    JOB_STATE_CLASS: lambda inp: _read_job_state(inp, JobState),
    DATASET_STATE_CLASS: lambda inp: _read_job_state(inp, DatasetState),
}

SUPPORTED_CLASSES = tuple(_READERS)


def read_state(class_name: str, inp: DataInput) -> State:
    """Decode one state of Java class ``class_name`` at the reader's position (several may follow one another)."""
    reader = _READERS.get(canonical_class_name(class_name))
    if reader is None:
        raise CorruptFileError("value", f"unsupported state class {class_name!r}")
    return reader(inp)


def deserialize(class_name: str, data: bytes, what: str = "value", base_offset: int = 0) -> State:
    """Decode the Writable bytes of a state of Java class ``class_name``; every byte must be consumed."""
    reader = _READERS.get(canonical_class_name(class_name))
    if reader is None:
        raise CorruptFileError(what, f"unsupported state class {class_name!r}")
    inp = DataInput(data, what, base_offset)
    state = reader(inp)
    if inp.remaining():
        raise CorruptFileError(
            what, f"{inp.remaining()} unexpected bytes after the {class_name} value", base_offset + inp.pos
        )
    return state
