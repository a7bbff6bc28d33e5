"""Row-level policies (``qualitychecker.row.policies[.N]`` with ``qualitychecker.row.policy.types[.N]``).

Policies run in order on each batch, vectorised; a row failing a policy is handled by that policy's type and
not seen by later policies (Gobblin's "the first failing policy decides"):

- ``FAIL``: the task fails, naming the policy and the first failing record;
- ``OPTIONAL``: the row is dropped;
- ``ERR_FILE``: the row is written to an error file under ``qualitychecker.row.err.file`` and dropped.

Error files hold one JSON object per line, named ``<policy>-<task id>[.<branch>]-<millis>.err``; the first
``qualitychecker.row.errFile.recordsPerTask`` failing rows of a task are written, then every k-th with k
growing ×1.5 (Gobblin's sampling). Per-record policies (``check_record(record) -> bool``) work through an
adapter, one Python call per row (the slow path).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pyarrow as pa

from gobblin_py.io.error_files import ErrorFile
from gobblin_py.sdk.branches import fork_key
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import Initializable, RecordRowPolicy, RowPolicy, plugin_name
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.plugins import instantiate
from gobblin_py.sdk.settings import Scope, Settings, setting
from gobblin_py.sdk.states import State, WorkUnitState

POLICIES_KEY = "qualitychecker.row.policies"
TYPES_KEY = "qualitychecker.row.policy.types"
ERR_DIR_KEY = "qualitychecker.row.err.file"
ERR_BUDGET_KEY = "qualitychecker.row.errFile.recordsPerTask"
TYPES = ("FAIL", "OPTIONAL", "ERR_FILE")


class RowPolicyFailure(GobblinPyError):
    """A FAIL-type row policy rejected a record."""


@dataclass(frozen=True)
class RowQualitySettings(Settings):
    """The row policies of the stream before the fork, or of one branch (``.N`` whenever in branch N)."""

    policies: tuple[str, ...] = setting(POLICIES_KEY, scope=Scope.FORK, default=(),
                                        doc="row-level policy classes, in order")
    types: tuple[str, ...] = setting(TYPES_KEY, scope=Scope.FORK, default=(),
                                     doc="one type per policy: FAIL, OPTIONAL or ERR_FILE")
    err_dir: str | None = setting(ERR_DIR_KEY, scope=Scope.FORK, shared_fallback=True,
                                  doc="folder of ERR_FILE policies' rejected rows")
    err_budget: int = setting(ERR_BUDGET_KEY, default=1_000_000, minimum=0,
                              doc="rejected rows written per task before sampling")
    err_speculative: bool = setting("allowSpeculativeExecutionWithErrFilePolicy", default=True,
                                    doc="each task attempt writes its own error file")

    def check(self) -> list[ConfigError]:
        if len(self.policies) != len(self.types):
            return [ConfigError(f"lists {len(self.types)} types for {len(self.policies)} policies", key=TYPES_KEY,
                                hint="give one type per policy in qualitychecker.row.policies")]
        bad = [t for t in self.types if t not in TYPES]
        if bad:
            return [ConfigError(f"{bad[0]!r} is not a row policy type", key=TYPES_KEY, hint=f"use {', '.join(TYPES)}")]
        if "ERR_FILE" in self.types and not self.err_dir:
            return [ConfigError("is not set", key=ERR_DIR_KEY, hint="an ERR_FILE policy needs a folder for rejected rows")]
        return []


class RecordRowPolicyAdapter(RowPolicy):
    """Runs a per-record policy (``check_record(record) -> bool``) on batches: one Python call per row."""

    def __init__(self, plugin: RecordRowPolicy) -> None:
        self.plugin = plugin

    def init(self, state: State) -> None:
        if isinstance(self.plugin, Initializable):
            self.plugin.init(state)

    def check_batch(self, batch: pa.RecordBatch, state: State) -> pa.BooleanArray:
        return pa.array([bool(self.plugin.check_record(r)) for r in batch.to_pylist()], pa.bool_())


@dataclass
class _Policy:
    policy: RowPolicy
    kind: str
    name: str
    failed: int = 0


@dataclass
class RowChecker:
    """The row policies of the pre-fork stream (``branch`` -1) or of one branch, applied batch by batch."""

    policies: list[_Policy]
    state: WorkUnitState
    task_id: str
    branch: int
    settings: RowQualitySettings
    _err_files: dict = field(default_factory=dict)
    _err_seen: int = 0
    _err_next: float = 0.0
    _err_gap: float = 1.0

    @classmethod
    def build(cls, state: WorkUnitState, task_id: str, branch: int) -> RowChecker | None:
        """The checker configured for ``branch`` (suffix ``.N`` whenever branch ≥ 0, as Gobblin); None if none."""
        settings = RowQualitySettings.load(state, branch=branch if branch >= 0 else None)
        if not settings.policies:
            return None
        policies = []
        for name, kind in zip(settings.policies, settings.types, strict=True):
            plugin = instantiate(name, fork_key(POLICIES_KEY, branch))
            policy = plugin if isinstance(plugin, RowPolicy) else None
            if policy is None:
                if not isinstance(plugin, RecordRowPolicy):
                    raise UsageError(f"{fork_key(POLICIES_KEY, branch)}={name}: neither a RowPolicy nor has check_record")
                policy = RecordRowPolicyAdapter(plugin)
            policy.init(state)
            policies.append(_Policy(policy, kind, plugin_name(plugin)))
        return cls(policies, state, task_id, branch, settings) if policies else None

    def apply(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The rows of ``batch`` that pass every policy; FAIL policies raise instead."""
        import pyarrow.compute as pc  # only where a policy runs: a job without one never loads Arrow's kernels

        for entry in self.policies:
            if batch.num_rows == 0:
                return batch
            mask = entry.policy.check_batch(batch, self.state)
            if len(mask) != batch.num_rows:
                raise GobblinPyError(f"row policy {entry.name} returned {len(mask)} results for {batch.num_rows} rows")
            mask = pc.fill_null(mask, False)
            failing = batch.num_rows - pc.sum(mask).as_py() if batch.num_rows else 0
            if not failing:
                continue
            entry.failed += failing
            if entry.kind == "FAIL":
                first = batch.filter(pc.invert(mask)).slice(0, 1).to_pylist()[0]
                raise RowPolicyFailure(f"row policy {entry.name} (FAIL) failed on record {json.dumps(first, default=str)}")
            if entry.kind == "ERR_FILE":
                self._write_errors(entry, batch.filter(pc.invert(mask)))
            batch = batch.filter(mask)
        return batch

    def _write_errors(self, entry: _Policy, rows: pa.RecordBatch) -> None:
        directory = self.settings.err_dir
        if not directory:
            raise UsageError(f"{ERR_DIR_KEY} is not set: an ERR_FILE row policy needs a directory for failing rows")
        budget = self.settings.err_budget
        handle = self._err_files.get(entry.name)
        if handle is None:
            handle = self._err_files[entry.name] = ErrorFile(directory, self.state.get_prop("writer.fs.uri"),
                                                             entry.name, self.task_id, self.branch,
                                                             self.settings.err_speculative)
        kept = []
        for record in rows.to_pylist():  # only failing rows cross into Python
            self._err_seen += 1
            if self._err_seen > budget:  # past the budget, sample with a gap growing x1.5
                if self._err_seen < self._err_next:
                    continue
                self._err_gap *= 1.5
                self._err_next = self._err_seen + self._err_gap
            kept.append(record)
        handle.write(kept)

    def dropped(self) -> int:
        """Rows the policies took out of the stream (OPTIONAL and ERR_FILE; a FAIL policy fails the task)."""
        return sum(p.failed for p in self.policies if p.kind != "FAIL")

    def results(self) -> list[dict]:
        return [{"policy": p.name, "type": p.kind, "failed_rows": p.failed} for p in self.policies]

    def close(self) -> None:
        for handle in self._err_files.values():
            handle.close()
        self._err_files.clear()
