"""Reading a converter's configuration key, with the branch suffix when the converter runs inside a fork."""

from __future__ import annotations

from gobblin_py.config.branches import state_branch_key
from gobblin_py.state import State


def converter_prop(state: State, key: str, default: str | None = None) -> str | None:
    """``key.<fork.branch.id>`` inside a fork branch (Gobblin's rule for converters), else ``key``."""
    return state.get_prop(state_branch_key(state, key), default)


def converter_settings(settings_class, state: State):
    """A converter's settings, its ``Scope.FORK`` keys read with the branch suffix inside a fork branch."""
    from gobblin_py.config.settings import Context

    raw = state.get_prop("fork.branch.id")
    branch = int(raw) if raw is not None and str(raw).lstrip("-").isdigit() else None
    return settings_class.load(state, Context(branch=branch))
