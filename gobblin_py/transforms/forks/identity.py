"""Gobblin's default fork operator: ``fork.branches`` branches (default 1), every record to every branch."""

from __future__ import annotations

import pyarrow as pa

from gobblin_py.sdk.branches import ForkSettings
from gobblin_py.sdk.contracts import ForkOperator
from gobblin_py.sdk.states import State


class IdentityForkOperator(ForkOperator):
    """Sends the schema and every batch, whole, to all ``fork.branches`` branches."""

    settings_class = ForkSettings
    routes_everything = True

    def init(self, state: State) -> None:
        self.branches = ForkSettings.load(state).branches

    def get_branches(self, state: State) -> int:
        return self.branches

    def fork_schema(self, state: State, schema: pa.Schema) -> list[bool]:
        return [True] * self.branches

    def fork_data_record(self, state: State, record: dict) -> list[bool]:
        return [True] * self.branches

    def fork_batch(self, state: State, batch: pa.RecordBatch) -> list[bool]:
        return [True] * self.branches
