"""Finding the class a job names for a plugin key (``source.class``, ``converter.classes``, …).

A name resolves, in this order, as:

1. the Gobblin Java class name of a built-in equivalent (``org.apache.gobblin.…`` or the older ``gobblin.…``);
2. an entry point of group ``gobblin_py.plugins`` (installed packages register plugins by short name);
3. a dotted Python path, ``pkg.mod.Class`` or ``pkg.mod:Class``.

A name that resolves nowhere fails with every place tried and the closest known names.
"""

from __future__ import annotations

import difflib
import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import entry_points

from gobblin_py.errors import UsageError

ENTRY_POINT_GROUP = "gobblin_py.plugins"

# Gobblin Java class (after the "org.apache.gobblin." / "gobblin." prefix) -> our built-in equivalent.
GOBBLIN_EQUIVALENTS: dict[str, str] = {
    "publisher.BaseDataPublisher": "gobblin_py.publishers.base.BaseDataPublisher",
    "publisher.NoopPublisher": "gobblin_py.publishers.noop.NoopPublisher",
    "converter.IdentityConverter": "gobblin_py.converters.identity.IdentityConverter",
    "fork.IdentityForkOperator": "gobblin_py.forks.identity.IdentityForkOperator",
    "writer.ParquetDataWriterBuilder": "gobblin_py.writers.builder.ParquetDataWriterBuilder",
    "source.extractor.extract.jdbc.PostgresqlSource": "gobblin_py.sources.sql.PostgresqlSource",
    "source.extractor.extract.jdbc.MysqlSource": "gobblin_py.sources.sql.MysqlSource",
    "writer.AvroDataWriterBuilder": "gobblin_py.writers.builder.AvroDataWriterBuilder",
    "writer.GobblinOrcWriterBuilder": "gobblin_py.writers.builder.OrcDataWriterBuilder",
    "writer.partitioner.TimeBasedAvroWriterPartitioner": "gobblin_py.writers.partitioners.TimeBasedWriterPartitioner",
    "policies.count.RowCountPolicy": "gobblin_py.quality.task.RowCountPolicy",
    "policies.count.RowCountRangePolicy": "gobblin_py.quality.task.RowCountRangePolicy",
    "policies.schema.SchemaCompatibilityPolicy": "gobblin_py.quality.task.SchemaCompatibilityPolicy",
    "policies.schema.SchemaRowCheckPolicy": "gobblin_py.quality.row.SchemaRowCheckPolicy",
}

# Built-ins that have no Gobblin counterpart, listed so that suggestions can point at them.
BUILTINS: tuple[str, ...] = (
    "gobblin_py.sources.filebased.FileBasedSource",
    "gobblin_py.sources.sql.QueryBasedSource",
    "gobblin_py.sources.sql.SqliteSource",
    "gobblin_py.sources.sql.PostgresqlSource",
    "gobblin_py.sources.sql.MysqlSource",
    "gobblin_py.converters.projection.FieldProjectionConverter",
    "gobblin_py.converters.cast.TypeCastConverter",
    "gobblin_py.converters.identity.IdentityConverter",
    "gobblin_py.writers.builder.FsDataWriterBuilder",
    "gobblin_py.writers.builder.ParquetDataWriterBuilder",
    "gobblin_py.writers.builder.AvroDataWriterBuilder",
    "gobblin_py.writers.builder.OrcDataWriterBuilder",
    "gobblin_py.writers.builder.JsonDataWriterBuilder",
    "gobblin_py.writers.builder.CsvDataWriterBuilder",
    "gobblin_py.writers.partitioners.TimeBasedWriterPartitioner",
    "gobblin_py.writers.partitioners.ColumnValueWriterPartitioner",
    "gobblin_py.publishers.base.BaseDataPublisher",
    "gobblin_py.publishers.noop.NoopPublisher",
    "gobblin_py.forks.identity.IdentityForkOperator",
    "gobblin_py.quality.row.RequiredFieldsPolicy",
    "gobblin_py.quality.row.SchemaRowCheckPolicy",
    "gobblin_py.quality.task.RowCountPolicy",
    "gobblin_py.quality.task.RowCountRangePolicy",
    "gobblin_py.quality.task.SchemaCompatibilityPolicy",
)

# Keys whose values name classes: a single class, or a comma list of them.
SINGLE_CLASS_KEYS = (
    "source.class",
    "fork.operator.class",
    "writer.builder.class",
    "data.publisher.type",
    "data.publisher.job.type",
    "data.publisher.task.type",
    "writer.partitioner.class",
)
LIST_CLASS_KEYS = ("converter.classes", "qualitychecker.row.policies", "qualitychecker.task.policies")
_BRANCH_SUFFIX = re.compile(r"^(?P<base>.+?)(?:\.(?P<branch>\d+))?$")


class PluginError(UsageError):
    """A plugin name that does not resolve, with what was tried and what is close."""

    def __init__(self, name: str, key: str | None, tried: list[str], suggestions: list[str], unsupported: bool = False) -> None:
        self.name, self.key, self.tried, self.suggestions, self.unsupported = name, key, tried, suggestions, unsupported
        where = f"{key}={name}" if key else name
        if unsupported:
            message = f"{where}: Gobblin class with no gobblin_py equivalent yet"
        else:
            message = f"{where}: no such plugin class (tried {'; '.join(tried)})"
        if suggestions:
            message += f"; closest: {', '.join(suggestions)}"
        super().__init__(message)


def _gobblin_suffix(name: str) -> str | None:
    for prefix in ("org.apache.gobblin.", "gobblin."):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return None


@lru_cache(maxsize=1)
def _entry_points() -> dict[str, str]:
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _import(path: str) -> object:
    module_name, sep, attr = path.partition(":")
    if not sep:
        module_name, _, attr = path.rpartition(".")
    if not module_name or not attr:
        raise ImportError(f"'{path}' is not a dotted path 'pkg.mod.Class'")
    obj: object = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _known_names() -> list[str]:
    names = set(BUILTINS) | set(_entry_points())
    for suffix in GOBBLIN_EQUIVALENTS:
        names.add("org.apache.gobblin." + suffix)
    return sorted(names)


def _closest(name: str) -> list[str]:
    known = _known_names()
    by_whole = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    short = name.rsplit(".", 1)[-1].rsplit(":", 1)[-1].lower()
    by_short = [k for k in known if short and short in k.rsplit(".", 1)[-1].lower()]
    return list(dict.fromkeys(by_whole + by_short))[:3]


def resolve_class(name: str, key: str | None = None) -> type:
    """The class a plugin name denotes; PluginError (exit code 2) naming the key if it does not resolve."""
    name = name.strip()
    tried: list[str] = []
    suffix = _gobblin_suffix(name)
    if suffix is not None:
        target = GOBBLIN_EQUIVALENTS.get(suffix)
        if target is not None:
            return _import(target)  # type: ignore[return-value]
        tried.append("Gobblin class names with a built-in equivalent")
    if name in _entry_points():
        try:
            return _import(_entry_points()[name])  # type: ignore[return-value]
        except (ImportError, AttributeError) as exc:
            raise UsageError(f"{key or 'plugin'}={name}: entry point {_entry_points()[name]} fails to load: {exc}") from None
    tried.append(f"entry points of group {ENTRY_POINT_GROUP}")
    try:
        obj = _import(name)
    except ImportError as exc:
        tried.append(f"dotted path ({exc})")
    except AttributeError as exc:
        tried.append(f"dotted path ({exc})")
    else:
        if not isinstance(obj, type):
            raise UsageError(f"{key or 'plugin'}={name}: names a {type(obj).__name__}, not a class")
        return obj
    # a Gobblin name that is not importable as Python either is a Gobblin class we have not ported
    raise PluginError(name, key, tried, _closest(name), unsupported=suffix is not None)


def instantiate(name: str, key: str | None = None, base: type | None = None) -> object:
    """Resolve and construct a plugin with no arguments, checking it implements ``base`` when given."""
    cls = resolve_class(name, key)
    if base is not None and not issubclass(cls, base) and not _duck_types(cls, base):
        raise UsageError(f"{key or 'plugin'}={name}: {cls.__module__}.{cls.__qualname__} is not a {base.__name__}")
    try:
        return cls()
    except Exception as exc:  # noqa: BLE001 - a plugin's constructor may raise anything
        raise UsageError(f"{key or 'plugin'}={name}: cannot be constructed: {exc}") from exc


def _duck_types(cls: type, base: type) -> bool:
    # Gobblin-style per-record converters are accepted without subclassing (they get an adapter)
    return base.__name__ == "Converter" and hasattr(cls, "convert_record")


@dataclass(frozen=True)
class PluginRef:
    """One class named by a job: the key, its position in a list, and the name."""

    key: str
    name: str


def plugin_refs(props: Mapping[str, str]) -> list[PluginRef]:
    """Every class a job's properties name, branch-suffixed keys included, in key order."""
    refs = []
    for key in sorted(props):
        match = _BRANCH_SUFFIX.match(key)
        base = match.group("base") if match else key
        value = props[key].strip()
        if not value:
            continue
        if base in SINGLE_CLASS_KEYS or key in SINGLE_CLASS_KEYS:
            refs.append(PluginRef(key, value))
        elif base in LIST_CLASS_KEYS or key in LIST_CLASS_KEYS:
            refs.extend(PluginRef(key, item.strip()) for item in value.split(",") if item.strip())
    return refs


def check_plugins(props: Mapping[str, str]) -> list[PluginError | UsageError]:
    """Every plugin name in ``props`` that does not resolve (empty when all do)."""
    problems: list[PluginError | UsageError] = []
    for ref in plugin_refs(props):
        try:
            resolve_class(ref.name, ref.key)
        except UsageError as exc:
            problems.append(exc)
    return problems
