"""Typed settings: each plugin declares the keys it reads once, and one coercer builds a frozen object of them.

A plugin's settings are a frozen dataclass whose fields are declared with :func:`setting`::

    @dataclass(frozen=True)
    class FileSourceSettings(Settings):
        directory: str = setting("source.filebased.data.directory", required=True, doc="folder to list")
        max_files: int | None = setting("source.filebased.maxFilesPerRun", minimum=1, doc="new files per run")

    settings = FileSourceSettings.load(state)          # raises SettingsError naming every bad key at once
    problems = FileSourceSettings.problems(job_config)  # the same checks, as a list, for `gpy validate`

The declaration is the one source of truth: validation before a run, ``gpy validate --explain KEY`` and the
docs' key tables are all built from it. Keys keep Gobblin's names and its parsing rules (comma lists are
trimmed with empty items dropped; numbers are Java's), with three scoping rules (:class:`Scope`): a branch
suffix ``.N`` when a job has several branches, ``fork.branch.id`` inside a fork, and per-table overrides
``source.querybased.entity.<table>.<key>``. One deliberate difference: a boolean must be ``true`` or
``false`` — Gobblin reads every other word as false, which turns a typo into a silent change of behaviour.
"""

from __future__ import annotations

import dataclasses
import enum
import re
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from gobblin_py.sdk import redact
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import UsageError

T = TypeVar("T", bound="Settings")
_SETTING = "gpy.setting"
_INT = re.compile(r"^[+-]?\d+$")
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmgt]i?b?|b)?$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_UNRESOLVED = re.compile(r"\$\{[^}]*\}")
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


class Scope(str, enum.Enum):
    """Where a key's value is looked up."""

    JOB = "job"
    """The key as named."""
    BRANCH = "branch"
    """``key.N`` when the job has several branches, else ``key`` (writers, publishers, task policies)."""
    FORK = "fork"
    """``key.N`` inside fork branch N, ``key`` before the fork (converters, row policies)."""
    ENTITY = "entity"
    """``source.querybased.entity.<table>.key`` for one table, else ``key``."""


class Kind(str, enum.Enum):
    """How a value is parsed."""

    STR = "string"
    INT = "integer"
    FLOAT = "number"
    BOOL = "boolean"
    SIZE = "size"
    LIST = "list"
    CHOICE = "choice"
    REGEX = "regex"
    NAME = "name"
    PREFIX = "prefix"


@dataclass(frozen=True)
class Key:
    """One declared configuration key: everything validation, docs and the coercer need to know."""

    name: str
    kind: Kind
    doc: str
    default: Any = None
    default_doc: str | None = None
    required: bool = False
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    scope: Scope = Scope.JOB
    secret: bool = False
    aliases: tuple[str, ...] = ()
    example: str | None = None
    shared_fallback: bool = False
    borrowed: bool = False  # declared by another settings class, read here too (see same_as)

    @property
    def is_prefix(self) -> bool:
        return self.kind is Kind.PREFIX

    def render_default(self) -> str:
        """The default as a job file would spell it (for docs)."""
        if self.default_doc is not None:
            return self.default_doc
        if self.required:
            return "required"
        value = self.default
        if value is None or value == () or value == {}:
            return "—"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (list, tuple)):
            return ",".join(str(v) for v in value)
        if isinstance(value, re.Pattern):
            return value.pattern
        return str(value)

    def describe_type(self) -> str:
        """The accepted values, in words (for docs and error hints)."""
        if self.kind is Kind.CHOICE:
            return " | ".join(self.choices)
        bounds = []
        if self.minimum is not None:
            bounds.append(f">= {_num(self.minimum)}")
        if self.maximum is not None:
            bounds.append(f"<= {_num(self.maximum)}")
        words = {
            Kind.STR: "text", Kind.INT: "whole number", Kind.FLOAT: "number", Kind.BOOL: "true | false",
            Kind.SIZE: "bytes, or 128MB / 1GiB", Kind.LIST: "comma list", Kind.REGEX: "regular expression",
            Kind.NAME: "a name usable as one folder (no '/', no '..')", Kind.PREFIX: "any key under this prefix",
        }[self.kind]
        return words + (f" ({', '.join(bounds)})" if bounds else "")


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def setting(
    key: str,
    *,
    doc: str,
    default: Any = None,
    default_doc: str | None = None,
    kind: Kind | None = None,
    required: bool = False,
    minimum: float | None = None,
    maximum: float | None = None,
    choices: Iterable[str] = (),
    scope: Scope = Scope.JOB,
    secret: bool = False,
    aliases: Iterable[str] = (),
    example: str | None = None,
    shared_fallback: bool = False,
) -> Any:
    """Declare a settings field read from ``key`` (its kind comes from the field's annotation unless given).

    ``shared_fallback``: a branch-scoped key with no value for the branch falls back to the unsuffixed key.
    """
    choices = tuple(choices)
    if choices and kind is None:
        kind = Kind.CHOICE
    meta = {
        _SETTING: dict(name=key, kind=kind, doc=doc, default=default, default_doc=default_doc, required=required,
                       minimum=minimum, maximum=maximum, choices=choices, scope=scope, secret=secret,
                       aliases=tuple(aliases), example=example, shared_fallback=shared_fallback)
    }
    if isinstance(default, (list, dict, set)):
        raise TypeError(f"{key}: use a tuple or None as default, not a mutable {type(default).__name__}")
    return dataclasses.field(default=default, metadata=meta)


def _kind_from_annotation(annotation: Any, key: str) -> Kind:
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)) and len(args) == 1:
        return _kind_from_annotation(args[0], key)
    if annotation is bool:
        return Kind.BOOL
    if annotation is int:
        return Kind.INT
    if annotation is float:
        return Kind.FLOAT
    if annotation is str:
        return Kind.STR
    if origin in (tuple, list) or annotation in (tuple, list):
        return Kind.LIST
    if annotation is re.Pattern or origin is re.Pattern:
        return Kind.REGEX
    if origin is dict or annotation is dict:
        return Kind.PREFIX
    raise TypeError(f"{key}: cannot tell the kind of a {annotation!r} setting; pass kind=")


@dataclass(frozen=True)
class Context:
    """What a key's scope needs: the number of branches and this branch, or the table of an entity."""

    branches: int = 1
    branch: int | None = None
    entity: str | None = None

    def lookup_names(self, key: Key) -> list[str]:
        """The names to try, most specific first (remembered: settings are read for every task)."""
        cache_key = (id(key), self.branches, self.branch, self.entity)
        known = _LOOKUP_NAMES.get(cache_key)
        if known is None or known[0] is not key:
            known = _LOOKUP_NAMES[cache_key] = (key, self._lookup_names(key))
        return list(known[1])

    def _lookup_names(self, key: Key) -> tuple[str, ...]:
        names: list[str] = []
        for name in (key.name, *key.aliases):
            if key.scope is Scope.BRANCH and self.branch is not None and self.branches > 1:
                names.append(f"{name}.{self.branch}")
            elif key.scope is Scope.FORK and self.branch is not None and self.branch >= 0:
                names.append(f"{name}.{self.branch}")
            elif key.scope is Scope.ENTITY and self.entity:
                names.extend([f"source.querybased.entity.{self.entity}.{name}", name])
            else:
                names.append(name)
        if key.shared_fallback:  # a branch without its own value uses the unsuffixed one (gpy's rule, not Gobblin's)
            names.append(key.name)
        return tuple(dict.fromkeys(names))


# (id of the key, branches, branch, entity) -> (the key, its lookup names); the key is kept, so its id stays its own
_LOOKUP_NAMES: dict[tuple[int, int, int | None, str | None], tuple[Key, tuple[str, ...]]] = {}


Lookup = Callable[[str], Any]
Locator = Callable[[str], "tuple[str | None, int | None]"]


def _lookup_of(props: Any) -> Lookup:
    if isinstance(props, Mapping):
        return props.get
    getter = getattr(props, "get_prop", None) or getattr(props, "get", None)
    if getter is None:
        raise TypeError(f"cannot read settings from a {type(props).__name__}")
    return getter


def _locator_of(props: Any) -> Locator | None:
    locate = getattr(props, "locate", None)
    return locate if callable(locate) else None


def _prefix_items(props: Any, prefix: str) -> dict[str, str]:
    items: Iterable[tuple[Any, Any]]
    if isinstance(props, Mapping):
        items = props.items()
    else:
        all_properties = getattr(props, "all_properties", None)
        items = all_properties().items() if callable(all_properties) else ()
    return {k[len(prefix):]: v for k, v in items if k.startswith(prefix) and len(k) > len(prefix)}


class SettingsError(UsageError):
    """Settings that do not parse: every problem found, each naming its key (exit code 2)."""

    def __init__(self, problems: list[ConfigError]) -> None:
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems) if len(problems) > 1 else str(problems[0]))


class Settings:
    """Base of a plugin's frozen settings dataclass; fields are declared with :func:`setting`."""

    _keys_cache: ClassVar[dict[type, tuple[tuple[str, Key], ...]]] = {}

    @classmethod
    def declared(cls) -> tuple[tuple[str, Key], ...]:
        """``(field name, Key)`` of every declared field, in declaration order."""
        cached = Settings._keys_cache.get(cls)
        if cached is not None:
            return cached
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"{cls.__qualname__} must be a @dataclass(frozen=True)")
        hints = typing.get_type_hints(cls)
        out = []
        for f in dataclasses.fields(cls):
            spec = f.metadata.get(_SETTING)
            if spec is None:
                continue
            spec = dict(spec, borrowed="gpy.declared_by" in f.metadata)
            if spec["kind"] is None:
                spec["kind"] = _kind_from_annotation(hints[f.name], spec["name"])
            out.append((f.name, Key(**spec)))
        result = tuple(out)
        Settings._keys_cache[cls] = result
        return result

    @classmethod
    def keys(cls, own: bool = False) -> list[Key]:
        """Every key it reads (``own``: only those it declares itself, not those borrowed with same_as)."""
        return [key for _, key in cls.declared() if not (own and key.borrowed)]

    @classmethod
    def load(cls: type[T], props: Any, context: Context | None = None, **context_args: Any) -> T:
        """The settings read from ``props`` (a mapping or a State); SettingsError listing every bad key."""
        settings, problems = cls._build(props, context or Context(**context_args))
        if problems:
            raise SettingsError(problems)
        return settings

    @classmethod
    def problems(cls, props: Any, context: Context | None = None, **context_args: Any) -> list[ConfigError]:
        """What :meth:`load` would complain about, as a list (empty when the settings are good)."""
        return cls._build(props, context or Context(**context_args))[1]

    def check(self) -> list[ConfigError]:
        """Problems of keys taken together, which no single declaration can say (override when there are some)."""
        return []

    @classmethod
    def _build(cls: type[T], props: Any, context: Context) -> tuple[T, list[ConfigError]]:
        values, problems = cls._coerce(props, context)
        settings = cls(**values)
        if not problems:
            locate = _locator_of(props)
            for problem in settings.check():
                path, line = locate(problem.key) if locate is not None and problem.key else (None, None)
                problems.append(problem.with_location(path=path, line=line))
        return settings, problems

    @classmethod
    def _coerce(cls, props: Any, context: Context) -> tuple[dict[str, Any], list[ConfigError]]:
        lookup, locate = _lookup_of(props), _locator_of(props)
        values: dict[str, Any] = {}
        problems: list[ConfigError] = []
        fork_context = context
        if context.branch is None:  # inside a fork branch a converter's state carries its branch id
            fork_id = str(lookup("fork.branch.id") or "").strip()
            if fork_id.isdigit():
                fork_context = Context(context.branches, int(fork_id), context.entity)
        for field_name, key in cls.declared():
            if key.is_prefix:
                values[field_name] = _prefix_items(props, key.name.rstrip("*"))
                continue
            name, raw = None, None
            scoped = fork_context if key.scope is Scope.FORK else context
            for candidate in scoped.lookup_names(key):
                raw = lookup(candidate)
                if raw is not None:
                    name = candidate
                    break
            if raw is None or (isinstance(raw, str) and not raw.strip() and key.kind is not Kind.STR):
                if key.required:
                    problems.append(_problem(locate, key.name, "is not set", f"set it: {key.doc}"))
                values[field_name] = key.default
                continue
            if key.secret:
                redact.remember(str(raw))  # masked wherever this process writes it
            try:
                values[field_name] = coerce(key, str(raw))
            except ValueError as exc:
                shown = "(secret value)" if key.secret else repr(raw)  # a secret is never printed
                problems.append(_problem(locate, name or key.name, f"{shown}: {exc}", _fix(key)))
                values[field_name] = key.default
        return values, problems


def _fix(key: Key) -> str:
    example = f", e.g. {key.name}={key.example}" if key.example else ""
    return f"expected {key.describe_type()}{example}"


def _problem(locate: Locator | None, name: str, problem: str, hint: str) -> ConfigError:
    path, line = locate(name) if locate is not None else (None, None)
    return ConfigError(problem, path=path, line=line, key=name, hint=hint or None)


def parse_size(text: str) -> int:
    """Bytes from ``134217728``, ``128MB``, ``128m``, ``1.5GiB`` (binary units)."""
    match = _SIZE.match(text.strip())
    if not match:
        raise ValueError("not a size")
    return int(float(match.group(1)) * _SIZE_UNITS[(match.group(2) or "").lower()[:1]])


def coerce(key: Key, raw: str) -> Any:
    """``raw`` parsed as ``key`` declares, bounds and choices checked; ValueError saying what is wrong."""
    if unresolved := _UNRESOLVED.search(raw):
        raise ValueError(f"holds an unresolved substitution {unresolved.group(0)}")
    text = raw.strip()
    kind = key.kind
    if kind is Kind.STR:
        value: Any = raw  # as written: a tab or a trailing space can be the value (a delimiter, say)
    elif kind is Kind.BOOL:
        if text.lower() not in ("true", "false"):
            raise ValueError("not a boolean")
        value = text.lower() == "true"
    elif kind is Kind.INT:
        if not _INT.match(text) or not _LONG_MIN <= int(text) <= _LONG_MAX:
            raise ValueError("not a whole number")
        value = int(text)
    elif kind is Kind.FLOAT:
        try:
            value = float(text.rstrip("dDfF") if text[-1:] in "dDfF" and not text.lower().endswith("inf") else text)
        except ValueError:
            raise ValueError("not a number") from None
    elif kind is Kind.SIZE:
        value = parse_size(text)
    elif kind is Kind.LIST:
        value = tuple(item.strip() for item in raw.split(",") if item.strip())
    elif kind is Kind.CHOICE:
        matches = [c for c in key.choices if c.lower() == text.lower()]
        if not matches:
            raise ValueError("not one of the accepted values")
        value = matches[0]
    elif kind is Kind.REGEX:
        try:
            value = re.compile(text)
        except re.error as exc:
            raise ValueError(f"not a regular expression ({exc})") from None
    elif kind is Kind.NAME:
        if not text or "/" in text or "\\" in text or text in (".", "..") or "\x00" in text:
            raise ValueError("cannot be used as a folder name")
        value = text
    else:  # pragma: no cover - PREFIX keys are not coerced one by one
        raise AssertionError(kind)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if key.minimum is not None and value < key.minimum:
            raise ValueError(f"must be at least {_num(key.minimum)}")
        if key.maximum is not None and value > key.maximum:
            raise ValueError(f"must be at most {_num(key.maximum)}")
    return value


def unresolved_substitutions(props: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(key, ${…})`` for every value that still holds a substitution the loader could not resolve."""
    found = []
    for key, value in props.items():
        match = _UNRESOLVED.search(value) if isinstance(value, str) else None
        if match:
            found.append((key, match.group(0)))
    return found


def same_as(settings_class: type[Settings], field_name: str) -> Any:
    """A field that reads the key another settings class declares (the key keeps its one declaration)."""
    if not dataclasses.is_dataclass(settings_class):
        raise TypeError(f"{settings_class.__qualname__} must be a @dataclass(frozen=True)")
    for f in dataclasses.fields(settings_class):
        if f.name == field_name and _SETTING in f.metadata:
            return dataclasses.field(default=f.default, metadata={**f.metadata, "gpy.declared_by": settings_class})
    raise AttributeError(f"{settings_class.__qualname__} declares no setting {field_name!r}")


def problem_at(props: Any, key: str, problem: str, hint: str | None = None) -> ConfigError:
    """A ConfigError about ``key``, located in its file and line when ``props`` knows them (a JobConfig)."""
    return _problem(_locator_of(props), key, problem, hint or "")
