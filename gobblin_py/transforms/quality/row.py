"""gpy's built-in row-level policies; the runtime applies the row policies a job names
(``qualitychecker.row.policies``) batch by batch."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from gobblin_py.sdk.contracts import RowPolicy
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.settings import Scope, Settings, setting
from gobblin_py.sdk.states import State


class SchemaRowCheckPolicy(RowPolicy):
    """Passes every row (Gobblin's SchemaRowCheckPolicy)."""

    def check_batch(self, batch: pa.RecordBatch, state: State) -> pa.BooleanArray:
        return pa.array([True] * batch.num_rows, pa.bool_())


@dataclass(frozen=True)
class RequiredFieldsSettings(Settings):
    """The key of :class:`RequiredFieldsPolicy`."""

    fields: tuple[str, ...] = setting("qualitychecker.row.required.fields", required=True, scope=Scope.FORK,
                                      doc="fields that must not be null")


class RequiredFieldsPolicy(RowPolicy):
    """Passes rows whose fields listed in ``qualitychecker.row.required.fields`` are all non-null."""

    KEY = "qualitychecker.row.required.fields"
    settings_class = RequiredFieldsSettings

    def init(self, state: State) -> None:
        self.fields = list(RequiredFieldsSettings.load(state).fields)

    def check_batch(self, batch: pa.RecordBatch, state: State) -> pa.BooleanArray:
        import pyarrow.compute as pc  # only where a policy runs: a job without one never loads Arrow's kernels

        mask = None
        for name in self.fields:
            index = batch.schema.get_field_index(name)
            if index < 0:
                raise UsageError(f"{self.KEY}: no field {name!r} in the records (they have {', '.join(batch.schema.names)})")
            valid = pc.is_valid(batch.column(index))
            mask = valid if mask is None else pc.and_(mask, valid)
        return mask if mask is not None else pa.array([True] * batch.num_rows, pa.bool_())
