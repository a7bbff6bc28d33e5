"""Gobblin's default fork operator: ``fork.branches`` branches (default 1), every record to every branch."""

from __future__ import annotations

import pyarrow as pa

from gobblin_py.api import ForkOperator
from gobblin_py.errors import UsageError
from gobblin_py.state import State


class IdentityForkOperator(ForkOperator):
    """Sends the schema and every batch, whole, to all ``fork.branches`` branches."""

    def init(self, state: State) -> None:
        self.branches = state.get_prop_as_int("fork.branches", 1) or 1
        if self.branches < 1:
            raise UsageError(f"fork.branches={self.branches}: a job needs at least one branch")

    def get_branches(self, state: State) -> int:
        return self.branches

    def fork_schema(self, state: State, schema: pa.Schema) -> list[bool]:
        return [True] * self.branches

    def fork_data_record(self, state: State, record: dict) -> list[bool]:
        return [True] * self.branches

    def fork_batch(self, state: State, batch: pa.RecordBatch) -> list[bool]:
        return [True] * self.branches
