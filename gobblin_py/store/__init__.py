"""The Gobblin-compatible stores that keep a job's state between runs: the SequenceFile store in a folder
(:class:`FsDatasetStateStore`) or Gobblin's MySQL table (:class:`MysqlDatasetStateStore`), chosen by
``state.store.type`` (:func:`open_state_store`); its run history, startpoints and summaries beside it. The state
types themselves are the SDK's (:mod:`gobblin_py.sdk.states`, :mod:`gobblin_py.sdk.run_states`)."""

from gobblin_py.store.mysql_store import MysqlDatasetStateStore, open_state_store
from gobblin_py.store.store import FsDatasetStateStore, StoredRun

__all__ = ["FsDatasetStateStore", "MysqlDatasetStateStore", "StoredRun", "open_state_store"]
