"""Substitution resolution with the semantics of typesafe config 1.4.1 ``Config.resolve()``.

Every ``${path}`` is looked up in the whole (merged) tree; a value that is part of a delayed merge sees, for
references to its own path, only the part of the merge stack below it (self-references such as
``path = ${path}"/sub"``). ``${?path}`` that finds nothing drops the assignment (in a concatenation: the
piece); unresolved names fall back to environment variables (names split on dots, objects winning, as
typesafe builds its environment object); cycles are detected. Errors name the file, line and key of the
substitution.
"""

from __future__ import annotations

import os
from typing import Dict, Mapping, Optional, Sequence, Tuple

from ..errors import ConfigError
from .concat import WrongType, consolidate
from .paths import render_path
from .values import HConcat, HList, HMerge, HObj, HRef, HStr, HValue

__all__ = ["resolve", "lookup_resolved"]


class _Cycle(Exception):
    pass


_NOT_FOUND = object()


class _Resolver:
    """typesafe ``ResolveContext``/``ResolveSource`` reduced to what a fully-resolving ``resolve()`` needs."""

    def __init__(self, root: HObj, env: Mapping[str, str]) -> None:
        self.root = root
        self.env = env
        self._env_tree: Optional[Dict[str, object]] = None
        self.memo: Dict[int, Tuple[HValue, Optional[HValue]]] = {}
        self.in_progress: set = set()

    # Replacements: a tuple of (id(merge), merge, replacement-or-None) -- a merge being resolved is seen by
    # self-references as only the part of its stack below the element being resolved.
    def resolve(self, value: HValue, repl: Tuple) -> Optional[HValue]:
        if value.resolved:
            return value
        if not repl:
            cached = self.memo.get(id(value))
            if cached is not None:
                return cached[1]
        key = (id(value), tuple(entry[0] for entry in repl))
        if key in self.in_progress:
            raise _Cycle()
        self.in_progress.add(key)
        try:
            result = self._resolve_inner(value, repl)
        finally:
            self.in_progress.discard(key)
        if not repl:
            self.memo[id(value)] = (value, result)
        return result

    def _resolve_inner(self, value: HValue, repl: Tuple) -> Optional[HValue]:
        if isinstance(value, HObj):
            fields: Dict[str, HValue] = {}
            for name, child in value.fields.items():
                resolved = self.resolve(child, repl)
                if resolved is not None:
                    fields[name] = resolved
            return HObj(fields, value.origin, value.ignores)
        if isinstance(value, HList):
            items = [r for r in (self.resolve(item, repl) for item in value.items) if r is not None]
            return HList(items, value.origin)
        if isinstance(value, HRef):
            return self._resolve_ref(value, repl)
        if isinstance(value, HConcat):
            pieces = [r for r in (self.resolve(p, repl) for p in value.pieces) if r is not None]
            try:
                joined = consolidate(pieces)
            except WrongType as exc:
                raise ConfigError(
                    str(exc),
                    path=value.origin[0],
                    line=value.origin[1],
                    hint="quote the pieces or use only strings, only lists or only objects in one value",
                ) from None
            if not joined:
                return None
            if len(joined) > 1:  # pragma: no cover - resolved pieces always join
                raise ConfigError("internal error: concatenation did not join", path=value.origin[0])
            return joined[0]
        if isinstance(value, HMerge):
            merged: Optional[HValue] = None
            for index, end in enumerate(value.stack):
                if end.unmergeable:
                    remainder: Optional[HValue] = None
                    for lower in value.stack[index + 1 :]:
                        remainder = lower if remainder is None else remainder.with_fallback(lower)
                    resolved = self.resolve(end, repl + ((id(value), value, remainder),))
                else:
                    resolved = self.resolve(end, repl)
                if resolved is not None:
                    merged = resolved if merged is None else merged.with_fallback(resolved)
            return merged
        return value  # pragma: no cover - simple values are resolved

    @staticmethod
    def _replaced(child: Optional[HValue], repl: Tuple) -> Optional[HValue]:
        seen = 0
        while child is not None and seen <= len(repl):
            for merge_id, _merge, replacement in repl:
                if merge_id == id(child):
                    child = replacement
                    break
            else:
                return child
            seen += 1
        return child

    def _lookup(self, path: Tuple[str, ...], repl: Tuple):
        node: Optional[HValue] = self.root
        last = len(path) - 1
        for index, element in enumerate(path):
            if not isinstance(node, HObj):
                return _NOT_FOUND
            child = self._replaced(node.fields.get(element), repl)
            if child is None:
                return _NOT_FOUND
            if index == last:
                return child
            if not isinstance(child, HObj) and not child.resolved:
                child = self.resolve(child, repl)
                if child is None:
                    return _NOT_FOUND
            node = child
        return _NOT_FOUND  # pragma: no cover - paths are never empty

    def _lookup_env(self, path: Tuple[str, ...]) -> Optional[HValue]:
        if self._env_tree is None:
            tree: Dict[str, object] = {}
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
            self._env_tree = tree
        node: object = self._env_tree
        for element in path:
            if not isinstance(node, dict) or element not in node:
                return None
            node = node[element]
        return _env_value(node)

    def _resolve_ref(self, ref: HRef, repl: Tuple) -> Optional[HValue]:
        result: Optional[HValue] = None
        try:
            found = self._lookup(ref.path, repl)
            if found is _NOT_FOUND and ref.prefix_len > 0:
                found = self._lookup(ref.path[ref.prefix_len :], repl)
            if found is _NOT_FOUND:
                found = self._lookup_env(ref.path[ref.prefix_len :])
                if found is None:
                    found = _NOT_FOUND
            if found is not _NOT_FOUND:
                result = self.resolve(found, repl)  # type: ignore[arg-type]
        except _Cycle:
            if ref.optional:
                return None
            raise ConfigError(
                f"substitution {ref.expression()} is part of a cycle of substitutions",
                path=ref.origin[0],
                line=ref.origin[1],
                key=render_path(ref.path[ref.prefix_len :]),
                hint="make sure the ${...} references do not refer back to each other",
            ) from None
        if result is None and not ref.optional:
            name = render_path(ref.path[ref.prefix_len :])
            raise ConfigError(
                f"could not resolve substitution to a value: {ref.expression()}",
                path=ref.origin[0],
                line=ref.origin[1],
                key=name,
                hint=f"define '{name}' (in the job, a global file or the system config) or an environment "
                f"variable of that name, or make it optional with ${{?{name}}}",
            )
        return result


def _env_value(node: object) -> HValue:
    if isinstance(node, dict):
        return HObj({k: _env_value(v) for k, v in node.items()})
    return HStr(str(node))


def resolve(root: HObj, env: Optional[Mapping[str, str]] = None) -> HObj:
    """Resolve every substitution of ``root`` (typesafe ``Config.resolve()``); ``env`` defaults to os.environ."""
    resolver = _Resolver(root, os.environ if env is None else env)
    try:
        result = resolver.resolve(root, ())
    except RecursionError:
        raise ConfigError(
            "substitutions are nested too deeply", hint="shorten the chain of ${...} references"
        ) from None
    assert isinstance(result, HObj)
    return result


def lookup_resolved(root: HObj, path: Sequence[str], env: Optional[Mapping[str, str]] = None) -> Optional[HValue]:
    """Resolve just the value at ``path`` of the unresolved tree ``root`` (None when absent)."""
    resolver = _Resolver(root, os.environ if env is None else env)
    found = resolver._lookup(tuple(path), ())
    if found is _NOT_FOUND:
        return None
    try:
        return resolver.resolve(found, ())  # type: ignore[arg-type]
    except RecursionError:
        raise ConfigError("substitutions are nested too deeply") from None
