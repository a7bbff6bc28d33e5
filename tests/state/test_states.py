"""State classes: lookup order, typed getters, watermarks on work units and task states."""

import json
import pickle

import pytest

from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.run_states import DatasetState, JobState, SourceState
from gobblin_py.sdk.states import Extract, State, TaskState, WorkingState, WorkUnit, WorkUnitState
from gobblin_py.sdk.watermarks import (
    LongWatermark,
    MultiLongWatermark,
    Watermark,
    WatermarkInterval,
    resolve_watermark_type,
)


def test_typed_getters_follow_java():
    state = State({"b1": "TRUE", "b2": "yes", "n": "42", "f": "1.5", "l": " a, ,b ,c,"})
    assert state.get_prop_as_bool("b1") is True
    assert state.get_prop_as_bool("b2") is False  # Boolean.parseBoolean accepts only "true"
    assert state.get_prop_as_bool("missing", True) is True
    assert state.get_prop_as_int("n") == 42 and state.get_prop_as_float("f") == 1.5
    assert state.get_prop_as_list("l") == ["a", "b", "c"]
    state.set_prop("flag", False)
    assert state.get_prop("flag") == "false"


def test_work_unit_state_lookup_order_own_then_workunit_then_extract_then_job():
    extract = Extract({"k": "extract", "e": "extract"})
    unit = WorkUnit({"k": "unit", "u": "unit"}, extract)
    job = State({"k": "job", "j": "job", "e": "job"})
    wus = WorkUnitState(unit, {"k": "own"}, job_state=job)
    assert wus.get_prop("k") == "own"
    assert wus.get_prop("u") == "unit"
    assert wus.get_prop("e") == "extract"
    assert wus.get_prop("j") == "job"
    assert wus.get_prop("nope", "d") == "d"
    assert wus.all_properties() == {"k": "own", "j": "job", "e": "extract", "u": "unit"}



def test_a_tasks_lookups_follow_its_links_as_they_change():
    # the chain is kept as the links are set, not built per lookup: it must follow every change of a link
    unit = WorkUnit({"unit.key": "u"}, Extract({"extract.key": "e"}))
    task = TaskState("job_1", "task_1", unit, {"own": "o"})
    assert task.get_prop("job.key") is None
    task.job_state = State({"job.key": "j"})
    assert [task.get_prop(key) for key in ("own", "unit.key", "extract.key", "job.key", "absent")] == \
        ["o", "u", "e", "j", None]
    assert task.get_prop("absent", "default") == "default"
    unit.extract = Extract({"extract.key": "e2"})
    assert task.get_prop("extract.key") == "e2"
    task.workunit = WorkUnit({"unit.key": "u2"})
    assert (task.get_prop("unit.key"), task.get_prop("extract.key"), task.get_prop("job.key")) == ("u2", None, "j")
    task.job_state = None
    assert task.get_prop("job.key", "d") == "d"
    assert task.all_properties() == {"own": "o", "unit.key": "u2"}


def test_a_state_is_equal_whatever_job_state_it_is_linked_to_and_keeps_its_chain_when_pickled():
    unit = WorkUnit({"unit.key": "u"}, Extract({"extract.key": "e"}))
    linked = WorkUnitState(unit, {"own": "o"}, job_state=State({"job.key": "j"}))
    assert linked == WorkUnitState(unit, {"own": "o"})
    assert linked != WorkUnitState(WorkUnit({"unit.key": "other"}), {"own": "o"})
    copy = pickle.loads(pickle.dumps(linked))
    assert (copy.get_prop("extract.key"), copy.get_prop("job.key")) == ("e", "j")


def test_a_state_class_with_a_chain_of_its_own_is_looked_up_through_it():
    class Layered(WorkUnitState):
        def _link(self):
            super()._link()
            self._fallbacks = (State({"k": "from layer"}), *self._fallbacks)

    class LayeredUnit(WorkUnit):
        @WorkUnit.extract.setter  # type: ignore[attr-defined]
        def extract(self, extract):
            WorkUnit.extract.fset(self, extract)
            self._fallbacks = (State({"u": "from unit layer"}), *self._fallbacks)

    state = Layered(LayeredUnit({}, Extract({"k": "extract", "e": "x"})), {}, job_state=State({"k": "job"}))
    assert (state.get_prop("k"), state.get_prop("u"), state.get_prop("e"), state.get_prop("z", 1)) == \
        ("from layer", "from unit layer", "x", 1)


def test_working_state_defaults_to_pending():
    wus = WorkUnitState()
    assert wus.working_state is WorkingState.PENDING
    wus.working_state = WorkingState.SKIPPED
    assert wus.properties["workunit.working.state"] == "SKIPPED"


def test_watermark_interval_and_actual_high_watermark_keys():
    unit = WorkUnit.create(Extract(), WatermarkInterval.of(LongWatermark(10), LongWatermark(20)))
    assert unit.properties["watermark.interval.value"] == (
        '{"low.watermark.to.json":{"value":10},"expected.watermark.to.json":{"value":20}}'
    )
    assert unit.low_watermark(LongWatermark) == LongWatermark(10)
    assert unit.expected_high_watermark() == {"value": 20}
    task = TaskState("job_j_1", "task_j_1_0", unit)
    # absent actual high watermark falls back to the low watermark, as in Gobblin
    assert task.actual_high_watermark(LongWatermark) == LongWatermark(10)
    task.set_actual_high_watermark(LongWatermark(17))
    assert task.properties["workunit.state.actual.high.water.mark"] == '{"value":17}'
    task.backoff_actual_high_watermark()
    assert task.actual_high_watermark(LongWatermark) == LongWatermark(10)


def test_backoff_without_interval_does_nothing():
    task = TaskState("j", "t")
    task.set_actual_high_watermark(LongWatermark(5))
    task.backoff_actual_high_watermark()
    assert task.actual_high_watermark() == {"value": 5}


def test_dataset_state_always_carries_urn_and_job_failures():
    state = DatasetState("job", "job_job_1")
    assert state.properties == {"dataset.urn": "", "job.failures": "0"}
    state.dataset_urn = "db:t"
    state.job_failures = 2
    assert state.dataset_urn == "db:t" and state.job_failures == 2


def test_previous_workunit_states_come_from_tasks_and_group_by_urn():
    unit = WorkUnit({"dataset.urn": "a"})
    task = TaskState("job_j_1", "task_j_1_0", unit, {"x": "1"})
    dataset = DatasetState("j", "job_j_1", dataset_urn="a", task_states=[task])
    previous = dataset.previous_workunit_states_from_tasks()
    assert previous == [WorkUnitState(unit, {"x": "1"}, id="task_j_1_0")]
    source = SourceState({}, previous_dataset_states={"a": dataset})
    assert source.previous_workunit_states_by_urn() == {"a": previous}


def test_legacy_job_state_reads_as_default_dataset():
    job = JobState("j", "job_j_1", task_states=[TaskState("job_j_1", "t0")])
    dataset = DatasetState.from_job_state(job)
    assert dataset.dataset_urn == "" and list(dataset.task_states) == ["t0"]


def test_long_and_multi_long_watermark_json_and_progress():
    assert LongWatermark(5).to_json_string() == '{"value":5}'
    assert LongWatermark.from_json(json.loads('{"value":5}')) == LongWatermark(5)
    assert LongWatermark(15).percent_completion(LongWatermark(10), LongWatermark(20)) == 50
    multi = MultiLongWatermark([3, 7])
    assert multi.to_json_string() == '{"values":[3,7]}'
    assert MultiLongWatermark.from_json({"values": [3, 7]}) == multi
    assert multi.percent_completion(MultiLongWatermark([0, 0]), MultiLongWatermark([10, 10])) == 50
    with pytest.raises(ValueError):
        LongWatermark.from_json({"values": [1]})


class HourWatermark(Watermark):
    """A custom watermark type, loaded by dotted path."""

    def __init__(self, hour: str) -> None:
        self.hour = hour

    def to_json(self):
        return {"hour": self.hour}

    @classmethod
    def from_json(cls, data):
        return cls(data["hour"])


def test_custom_watermark_types_load_by_dotted_path_and_gobblin_names():
    assert resolve_watermark_type("tests.state.test_states.HourWatermark") is HourWatermark
    assert resolve_watermark_type("tests.state.test_states:HourWatermark") is HourWatermark
    assert resolve_watermark_type("org.apache.gobblin.source.extractor.extract.LongWatermark") is LongWatermark
    assert resolve_watermark_type("gobblin.source.extractor.extract.kafka.MultiLongWatermark") is MultiLongWatermark
    unit = WorkUnit.create(interval=WatermarkInterval.of(HourWatermark("2026-11-20T10"), HourWatermark("2026-11-20T12")))
    assert unit.expected_high_watermark(HourWatermark).hour == "2026-11-20T12"
    with pytest.raises(UsageError, match="cannot be loaded"):
        resolve_watermark_type("tests.state.nope.Missing")
    with pytest.raises(UsageError, match="not a subclass"):
        resolve_watermark_type("json.JSONDecoder")
