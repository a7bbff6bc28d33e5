"""Substitution resolution with the semantics of typesafe config 1.4.1 ``Config.resolve()``.

Every ``${path}`` is looked up in the whole (merged) tree. Looking a path up resolves only what lies along
that path (typesafe's ``restrictToChild``): an object on the way is walked into without resolving its other
fields, and a substitution, concatenation or delayed merge on the way is resolved just far enough to see the
next element. So ``ints = 12`` then ``ints { fortyTwo = 42, again = ${ints.fortyTwo} }`` gives 42 twice: the
lookup of ``ints.fortyTwo`` does not need ``ints.again``, and the object hides the earlier ``12``.

A value that is part of a delayed merge sees, for its own path, only the part of the merge stack below it
(self-references such as ``path = ${path}"/sub"`` or ``a = ${a} { y = 2 }``). ``${?path}`` that finds nothing
drops the assignment (in a concatenation: the piece); unresolved names fall back to environment variables.
A cycle is a substitution met again while it is being resolved (typesafe's cycle markers); the error names
the file, line and key of the substitution and lists the cycle. Results are memoised as typesafe memoises
them (per value, whatever the self-reference being resolved; never a dropped result; not what was computed on
the way to a cycle).

Deliberate differences: typesafe 1.4.1 cannot look a key up through an object that hides a non-object below
it while that object is itself being resolved (``x = 1``, ``ints = 12``, ``ints { a = ${x}, b = ${ints.a} }``
fails there, or not, depending on hash order); here the earlier non-object is simply overridden and
``ints.b`` is 1. And typesafe resolves the fields of an object in hash order, this port in file order: where
substitutions reach each other by several routes, whether one of them meets a cycle can differ.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Optional

from gobblin_py.sdk.config_errors import ConfigError

from .concat import WrongType, consolidate
from .env import EnvironmentObject
from .paths import render_path
from .tree import MAX_NESTING, nested_beyond
from .values import HConcat, HList, HMerge, HMergeObj, HObj, HRef, HValue

__all__ = ["resolve", "lookup_resolved"]

# The path below a value that a partial resolution is restricted to (None: resolve everything).
Restriction = Optional[tuple[str, ...]]  # noqa: UP045 - a runtime alias
# Delayed merges being resolved, each replaced (for lookups) by the part of its stack below the current layer:
# (id(merge), merge, remainder-or-None).
Replacements = tuple[tuple[int, HValue, HValue | None], ...]

_NOT_FOUND = object()


class _Cycle(Exception):
    """A substitution was met again while being resolved; ``chain`` runs from it back to itself."""

    def __init__(self, chain: list[HRef]) -> None:
        super().__init__()
        self.chain = chain


class _Resolver:
    """typesafe ``ResolveContext``/``ResolveSource`` reduced to what a fully-resolving ``resolve()`` needs."""

    def __init__(self, root: HObj, env: Mapping[str, str]) -> None:
        self.root = root
        self.env = EnvironmentObject(env)
        # typesafe's memos: (id(value), restriction) -> (value, result), the value kept so that its id stays
        # unique; ``journal`` lists the keys in the order they were added, so that they can be rolled back.
        self.memo: dict[tuple[int, Restriction], tuple[HValue, HValue]] = {}
        self.journal: list[tuple[int, Restriction]] = []
        self.trail: list[HRef] = []  # substitutions being resolved, outermost first
        self.markers: dict[int, int] = {}  # id(substitution) -> its index in trail

    def resolve(self, value: HValue, repl: Replacements, restrict: Restriction = None) -> HValue | None:
        """``value`` resolved (None when an optional substitution dropped it); partially with ``restrict``."""
        if value.resolved:
            return value
        cached = self.memo.get((id(value), None))
        if cached is None and restrict is not None:
            cached = self.memo.get((id(value), restrict))
        if cached is not None:
            return cached[1]
        if isinstance(value, HRef):
            result = self._resolve_ref(value, repl, restrict)
        else:
            result = self._resolve_inner(value, repl, restrict)
        if result is not None:  # typesafe cannot tell a memoised null from a missing memo: never reused
            key = (id(value), None if result.resolved else restrict)
            if key not in self.memo:
                self.journal.append(key)
            self.memo[key] = (value, result)
        return result

    def _rollback(self, checkpoint: int) -> None:
        """Forget the memos made since ``checkpoint`` (typesafe drops them with the context of a failed try)."""
        for key in self.journal[checkpoint:]:
            del self.memo[key]
        del self.journal[checkpoint:]

    def _resolve_inner(self, value: HValue, repl: Replacements, restrict: Restriction) -> HValue | None:
        if isinstance(value, HObj):
            return self._resolve_object(value, repl, restrict)
        if isinstance(value, HList):
            if restrict is not None:  # a list has no paths below it
                return value
            items = [r for r in (self.resolve(item, repl) for item in value.items) if r is not None]
            return HList(items, value.origin)
        if isinstance(value, HConcat):
            return self._resolve_concat(value, repl)
        if isinstance(value, HMerge):
            return self._resolve_merge(value, repl, restrict)
        return value  # pragma: no cover - simple values are resolved

    def _resolve_object(self, value: HObj, repl: Replacements, restrict: Restriction) -> HObj:
        if restrict is None:
            fields: dict[str, HValue] = {}
            for name, child in value.fields.items():
                # A value found by a self-reference may hold the merge being resolved: it stands for its remainder.
                replaced = self._replaced(child, repl)
                resolved = None if replaced is None else self.resolve(replaced, repl)
                if resolved is not None:
                    fields[name] = resolved
            return HObj(fields, value.origin, value.ignores)
        # Partial: only the field along the path, and not the last element itself (the caller resolves it).
        first, rest = restrict[0], restrict[1:]
        along = self._replaced(value.fields.get(first), repl)
        if not rest or along is None or along.resolved:
            return value
        resolved = self.resolve(along, repl, rest)
        fields = dict(value.fields)
        if resolved is None:
            del fields[first]
        else:
            fields[first] = resolved
        return HObj(fields, value.origin, value.ignores)

    def _resolve_concat(self, value: HConcat, repl: Replacements) -> HValue | None:
        # Joining needs whole values, so the pieces are always resolved completely.
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

    def _resolve_merge(self, value: HMerge, repl: Replacements, restrict: Restriction) -> HValue | None:
        merged: HValue | None = None
        for index, end in enumerate(value.stack):
            if end.unmergeable:
                # While resolving this layer, the merge stands for what lies below the layer (self-references).
                remainder: HValue | None = None
                for lower in value.stack[index + 1 :]:
                    remainder = lower if remainder is None else remainder.with_fallback(lower)
                resolved = self.resolve(end, repl + ((id(value), value, remainder),), restrict)
            else:
                resolved = self.resolve(end, repl, restrict)
            if resolved is not None:
                merged = resolved if merged is None else merged.with_fallback(resolved)
        return merged

    # -- lookups (typesafe ResolveSource.findInObject) ------------------------------------------------
    @staticmethod
    def _replaced(child: HValue | None, repl: Replacements) -> HValue | None:
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

    def _child(self, node: HValue, key: str, repl: Replacements) -> HValue | None:
        if isinstance(node, HObj):
            return self._replaced(node.fields.get(key), repl)
        if isinstance(node, HMergeObj):
            return self._peek(node, key, repl)
        return None

    def _peek(self, node: HMergeObj, key: str, repl: Replacements) -> HValue | None:
        """The field ``key`` of a partially resolved object that still hides or merges lower layers."""
        found: list[HValue] = []
        for layer in node.stack:
            assert not layer.unmergeable, "a partial resolution leaves no substitution in a merge stack"
            if not isinstance(layer, HObj):
                break  # a non-object hides everything below it and has no fields
            value = self._replaced(layer.fields.get(key), repl)
            if value is not None:
                found.append(value)
                if value.ignores_fallbacks():
                    break
            if layer.ignores_fallbacks():
                break
        if not found:
            return None
        merged = found[0]
        for lower in found[1:]:
            merged = merged.with_fallback(lower)
        return merged

    def _lookup(self, path: tuple[str, ...], repl: Replacements):
        """The unresolved value at ``path``, resolving only what lies along the way; _NOT_FOUND if none."""
        node: HValue = self.root
        last = len(path) - 1
        for index, element in enumerate(path):
            child = self._child(node, element, repl)
            if child is None:
                return _NOT_FOUND
            if index == last:
                return child
            if not child.resolved:  # resolved just far enough to see the next element (or taken from the memo)
                child = self.resolve(child, repl, path[index + 1 :])
                if child is None:
                    return _NOT_FOUND
            node = child
        return _NOT_FOUND  # pragma: no cover - paths are never empty

    # -- substitutions (typesafe ConfigReference) -----------------------------------------------------
    def _resolve_ref(self, ref: HRef, repl: Replacements, restrict: Restriction) -> HValue | None:
        position = self.markers.get(id(ref))
        if position is not None:
            raise _Cycle(self.trail[position:] + [ref])
        self.markers[id(ref)] = len(self.trail)
        self.trail.append(ref)
        checkpoints = [len(self.journal)]
        try:
            result = self._resolve_target(ref, repl, restrict, checkpoints)
        except _Cycle as cycle:
            self._rollback(checkpoints[-1])
            if ref.optional:
                return None
            raise _cycle_error(ref, cycle.chain) from None
        finally:
            self.trail.pop()
            del self.markers[id(ref)]
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

    def _resolve_target(
        self, ref: HRef, repl: Replacements, restrict: Restriction, checkpoints: list[int]
    ) -> HValue | None:
        found = self._lookup(ref.path, repl)
        if found is _NOT_FOUND and ref.prefix_len > 0:  # an included file's reference, relative to the root
            found = self._lookup(ref.path[ref.prefix_len :], repl)
        if found is _NOT_FOUND:
            found = self.env.lookup(ref.path[ref.prefix_len :])
            if found is None:
                return None
        checkpoints.append(len(self.journal))  # what the lookup memoised stays, even if the value cycles
        return self.resolve(found, repl, restrict)


def _cycle_error(ref: HRef, chain: list[HRef]) -> ConfigError:
    steps = " -> ".join(
        f"{step.expression()} ({step.origin[0] or '<string>'}:{step.origin[1]})" for step in chain[:-1]
    )
    return ConfigError(
        f"substitution {ref.expression()} is part of a cycle of substitutions: {steps} -> {chain[-1].expression()}",
        path=ref.origin[0],
        line=ref.origin[1],
        key=render_path(ref.path[ref.prefix_len :]),
        hint="make sure the ${...} references do not refer back to each other",
    )


def resolve(root: HObj, env: Mapping[str, str] | None = None) -> HObj:
    """Resolve every substitution of ``root`` (typesafe ``Config.resolve()``); ``env`` defaults to os.environ."""
    resolver = _Resolver(root, os.environ if env is None else env)
    try:
        result = resolver.resolve(root, ())
        too_deep = nested_beyond(result, MAX_NESTING) if result is not None else None
    except RecursionError:
        result, too_deep = None, root
    if too_deep is not None:
        raise ConfigError(f"substitutions are nested too deeply (values of more than {MAX_NESTING} levels)",
                          path=too_deep.origin[0], line=too_deep.origin[1] if too_deep is not root else None,
                          hint="shorten the chain of ${...} references")
    assert isinstance(result, HObj)
    return result


def lookup_resolved(root: HObj, path: Sequence[str], env: Mapping[str, str] | None = None) -> HValue | None:
    """Resolve just the value at ``path`` of the unresolved tree ``root`` (None when absent)."""
    resolver = _Resolver(root, os.environ if env is None else env)
    try:
        found = resolver._lookup(tuple(path), ())
        if found is _NOT_FOUND:
            return None
        return resolver.resolve(found, ())
    except RecursionError:
        raise ConfigError("substitutions are nested too deeply") from None
