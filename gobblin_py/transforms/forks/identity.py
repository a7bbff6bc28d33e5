"""Gobblin's default fork operator: ``fork.branches`` branches (default 1), every record to every branch."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from gobblin_py.sdk.contracts import ForkOperator
from gobblin_py.sdk.branches import MAX_BRANCHES
from gobblin_py.sdk.settings import Settings, setting
from gobblin_py.sdk.states import State


@dataclass(frozen=True)
class ForkSettings(Settings):
    """The keys of the identity fork."""

    branches: int = setting("fork.branches", default=1, minimum=1, maximum=MAX_BRANCHES,
                            doc="how many branches every record goes to")


class IdentityForkOperator(ForkOperator):
    """Sends the schema and every batch, whole, to all ``fork.branches`` branches."""

    settings_class = ForkSettings

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
