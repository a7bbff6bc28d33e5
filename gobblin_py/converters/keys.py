"""Reading a converter's configuration key, with the branch suffix when the converter runs inside a fork."""

from __future__ import annotations

from gobblin_py.state import State


def converter_prop(state: State, key: str, default: str | None = None) -> str | None:
    """``key.<fork.branch.id>`` inside a fork branch (Gobblin's rule for converters), else ``key``."""
    branch = state.get_prop("fork.branch.id")
    if branch is not None and branch.strip().lstrip("-").isdigit() and int(branch) >= 0:
        value = state.get_prop(f"{key}.{int(branch)}")
        if value is not None:
            return value
    return state.get_prop(key, default)
