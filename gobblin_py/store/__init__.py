"""State of jobs and datasets, and the Gobblin-compatible store that keeps it between runs."""

from gobblin_py.sdk.run_states import DatasetState, JobState, SourceState
from gobblin_py.sdk.states import (
    Extract,
    MultiWorkUnit,
    RunningState,
    State,
    TaskState,
    WorkingState,
    WorkUnit,
    WorkUnitState,
)
from gobblin_py.sdk.watermarks import (
    LongWatermark,
    MultiLongWatermark,
    Watermark,
    WatermarkInterval,
    register_watermark_type,
    resolve_watermark_type,
)
from gobblin_py.store.mysql_store import MysqlDatasetStateStore, open_state_store
from gobblin_py.store.store import FsDatasetStateStore, StoredRun

__all__ = [
    "DatasetState", "Extract", "FsDatasetStateStore", "JobState", "LongWatermark", "MultiLongWatermark",
    "MultiWorkUnit", "MysqlDatasetStateStore", "RunningState", "SourceState", "State", "StoredRun", "TaskState", "Watermark",
    "WatermarkInterval", "WorkUnit", "WorkUnitState", "WorkingState", "register_watermark_type",
    "resolve_watermark_type", "open_state_store",
]
