"""Reading a converter's configuration key, with the branch suffix when the converter runs inside a fork."""

from __future__ import annotations

from gobblin_py.config.branches import state_branch_key
from gobblin_py.state import State


def converter_prop(state: State, key: str, default: str | None = None) -> str | None:
    """``key.<fork.branch.id>`` inside a fork branch (Gobblin's rule for converters), else ``key``."""
    return state.get_prop(state_branch_key(state, key), default)
