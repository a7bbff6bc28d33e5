"""Gobblin's default fork operator: ``fork.branches`` branches (default 1), every record to every branch."""

from __future__ import annotations

from gobblin_py.state import State


class IdentityForkOperator:
    """Sends the schema and every record to all ``fork.branches`` branches."""

    def init(self, state: State) -> None:
        self.branches = state.get_prop_as_int("fork.branches", 1) or 1

    def get_branches(self, state: State) -> int:
        return state.get_prop_as_int("fork.branches", 1) or 1

    def fork_schema(self, state: State, schema) -> list[bool]:
        return [True] * self.get_branches(state)

    def fork_data_record(self, state: State, record) -> list[bool]:
        return [True] * self.get_branches(state)
