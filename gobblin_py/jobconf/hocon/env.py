"""Environment variables as the last fallback of substitutions (typesafe ``ConfigImpl.envVariablesAsConfigObject``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .values import HObj, HStr, HValue

__all__ = ["EnvironmentObject"]


class EnvironmentObject:
    """The environment as an object: names split on dots into paths, an object winning over a string."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self._tree: dict[str, object] | None = None

    def _build(self) -> dict[str, object]:
        tree: dict[str, object] = {}
        names = sorted(self.env, key=lambda n: n.count("."), reverse=True)
        for name in names:  # longer paths first so that objects win over strings
            node = tree
            parts = name.split(".")
            for part in parts[:-1]:
                child = node.setdefault(part, {})
                if not isinstance(child, dict):
                    child = {}
                    node[part] = child
                node = child
            if not isinstance(node.get(parts[-1]), dict):
                node[parts[-1]] = self.env[name]
        return tree

    def lookup(self, path: Sequence[str]) -> HValue | None:
        """The value at ``path`` (a string or an object of strings), or None."""
        if self._tree is None:
            self._tree = self._build()
        node: object = self._tree
        for element in path:
            if not isinstance(node, dict) or element not in node:
                return None
            node = node[element]
        return _value(node)


def _value(node: object) -> HValue:
    if isinstance(node, dict):
        return HObj({k: _value(v) for k, v in node.items()})
    return HStr(str(node))
