"""Finding the class a job names for a plugin key (``source.class``, ``converter.classes``, …).

A name resolves, in this order, as:

1. an entry point of group ``gobblin_py.plugins``: gpy's built-ins are registered there (in ``pyproject.toml``)
   under their short name and under the Gobblin Java class names they stand in for, and installed packages
   add their own the same way; a Gobblin name may use the older ``gobblin.`` prefix for ``org.apache.gobblin.``;
2. a dotted Python path, ``pkg.mod.Class`` or ``pkg.mod:Class``.

A name that resolves nowhere fails with every place tried and the closest known names; a Gobblin class with no
gpy equivalent says so, with the nearest built-in when there is one.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from gobblin_py.sdk.errors import UsageError

ENTRY_POINT_GROUP = "gobblin_py.plugins"
GOBBLIN_PREFIX = "org.apache.gobblin."
LEGACY_GOBBLIN_PREFIX = "gobblin."

# Keys whose values name classes: a single class, or a comma list of them.
SINGLE_CLASS_KEYS = (
    "source.class",
    "fork.operator.class",
    "writer.builder.class",
    "data.publisher.type",
    "data.publisher.job.type",
    "data.publisher.task.type",
    "writer.partitioner.class",
    "gobblin.dataset.profile.class",
)
LIST_CLASS_KEYS = ("converter.classes", "qualitychecker.row.policies", "qualitychecker.task.policies")
# Other keys whose values name classes: Gobblin's ``job.class``, its convention of a name ending in "class" or
# "classes" (``gobblin.retention.dataset.finder.class``, ``writer.kafka.producerClass``), and a Kafka client's
# serializers. A Gobblin class named there is a reference as a plugin's is: registered, or reported as one gpy lacks.
_CLASS_NAMING_KEY = re.compile(r"(^|\.)job\.class$|\.classe?s?$|[a-z]Classe?s?$|\.(key|value)\.(de)?serializer$")
_GOBBLIN_CLASS = re.compile(r"^(org\.apache\.)?gobblin\.([a-z0-9_]+\.)+[A-Z][A-Za-z0-9_$]*$")
_BRANCH_SUFFIX = re.compile(r"^(?P<base>.+?)(?:\.(?P<branch>\d+))?$")


class PluginError(UsageError):
    """A plugin name that does not resolve, with what was tried and what is close."""

    def __init__(self, name: str, key: str | None, tried: list[str], suggestions: list[str], unsupported: bool = False,
                 hint: str | None = None, meant: list[str] | None = None) -> None:
        self.name, self.key, self.tried, self.suggestions, self.unsupported = name, key, tried, suggestions, unsupported
        self.hint = hint
        self.meant = meant or []  # known names so close to this one that it is most likely their typo
        where = f"{key}={name}" if key else name
        if unsupported:
            message = f"{where}: Gobblin class with no gobblin_py equivalent yet"
        elif self.meant and gobblin_name(name):
            message = f"{where}: not a Gobblin class gpy knows"
        else:
            message = f"{where}: no such plugin class (tried {'; '.join(tried)})"
        if hint:
            message += f" ({hint})"
        if self.meant:
            message += f"; did you mean {' or '.join(self.meant)}?"
        elif suggestions:
            message += f"; closest: {', '.join(suggestions)}"
        super().__init__(message)


OWN_PREFIX = "gobblin_py."


def gobblin_name(name: str) -> str | None:
    """``org.apache.gobblin.X`` for a Gobblin class name in either spelling; None for any other name."""
    if name.startswith(GOBBLIN_PREFIX):
        return name
    if name.startswith(LEGACY_GOBBLIN_PREFIX):
        return GOBBLIN_PREFIX + name[len(LEGACY_GOBBLIN_PREFIX):]
    return None


@lru_cache(maxsize=1)
def _entry_points() -> dict[str, str]:
    from importlib.metadata import entry_points  # scans every installed package: only when a name needs it

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


def dotted(target: str) -> str:
    """``pkg.mod.Class`` for an entry point's ``pkg.mod:Class``."""
    return target.replace(":", ".")


def _known_names() -> list[str]:
    names = set(_entry_points()) | {dotted(v) for v in _entry_points().values()}
    return sorted(names)


def _closest(name: str) -> list[str]:
    known = _known_names()
    import difflib

    by_whole = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    short = name.rsplit(".", 1)[-1].rsplit(":", 1)[-1].lower()
    by_short = [k for k in known if short and short in k.rsplit(".", 1)[-1].lower()]
    return list(dict.fromkeys(by_whole + by_short))[:3]


# How alike (difflib's ratio) a name must be to a known one to be taken for its typo: one or two characters off
# in a class name; distinct Gobblin classes of one package (DatePartitionedJsonFileSource and …AvroFileSource) are
# less alike than this.
TYPO_SIMILARITY = 0.95


def _typo_of(name: str) -> list[str]:
    """The known names (Gobblin's, in the ``org.apache.gobblin.`` spelling, or gpy's) ``name`` is most likely a
    typo of, closest first; empty when none is that close."""
    import difflib

    gobblin = gobblin_name(name)
    known = [k for k in _known_names() if (k.startswith(GOBBLIN_PREFIX) if gobblin else not k.startswith(GOBBLIN_PREFIX))]
    return difflib.get_close_matches(gobblin or name, known, n=2, cutoff=TYPO_SIMILARITY)


# What explains a Gobblin class gpy lacks (its nearest built-in, what to do instead): the job-configuration layer
# registers its table (gobblin_py.jobconf.unported) when it is imported; the SDK holds no such data.
_UNPORTED_HINTS: list[Callable[[str], str | None]] = []


def register_unported_hints(hint_for: Callable[[str], str | None]) -> None:
    """Have a name that resolves nowhere explained by ``hint_for`` (a Gobblin class name ``org.apache.gobblin.…``
    → a one-line hint, or None); registering the same function twice changes nothing."""
    if hint_for not in _UNPORTED_HINTS:
        _UNPORTED_HINTS.append(hint_for)


def _unported_hint(name: str) -> str | None:
    return next((hint for explain in _UNPORTED_HINTS if (hint := explain(name)) is not None), None)


def resolve_class(name: str, key: str | None = None) -> type:
    """The class a plugin name denotes; PluginError (exit code 2) naming the key if it does not resolve."""
    name = name.strip()
    if name.startswith(OWN_PREFIX):
        # gpy's own classes by their path (every default is one): no scan of the installed packages' entry points
        try:
            return _as_class(_import(name), name, key)
        except (ImportError, AttributeError):
            pass
    tried: list[str] = []
    registered = _entry_points()
    gobblin = gobblin_name(name)
    for candidate in dict.fromkeys(n for n in (name, gobblin) if n):
        target = registered.get(candidate)
        if target is None:
            continue
        try:
            obj = _import(target)
        except (ImportError, AttributeError) as exc:
            raise UsageError(f"{key or 'plugin'}={name}: entry point {target} fails to load: {exc}") from None
        return _as_class(obj, name, key)
    tried.append(f"entry points of group {ENTRY_POINT_GROUP}")
    if gobblin is None:
        try:
            obj = _import(name)
        except (ImportError, AttributeError) as exc:
            tried.append(f"dotted path ({exc})")
        else:
            return _as_class(obj, name, key)
    else:
        tried.append("Gobblin class names with a gpy equivalent")
    hint = _unported_hint(gobblin) if gobblin else None
    # a Gobblin class gpy says nothing about, a letter away from one it knows, is a typo rather than a class it lacks
    meant = _typo_of(name) if hint is None else []
    raise PluginError(name, key, tried, _closest(name), unsupported=gobblin is not None and not meant, hint=hint,
                      meant=meant)


def _as_class(obj: object, name: str, key: str | None) -> type:
    if not isinstance(obj, type):
        raise UsageError(f"{key or 'plugin'}={name}: names a {type(obj).__name__}, not a class")
    return obj


def canonical_name(cls: type) -> str:
    """``module:Class`` of a plugin class: what executors import, with no registry needed."""
    return f"{cls.__module__}:{cls.__qualname__}"


def instantiate(name: str, key: str | None = None, base: type | None = None) -> object:
    """Resolve and construct a plugin with no arguments, checking it implements ``base`` when given."""
    cls = resolve_class(name, key)
    if base is not None and not issubclass(cls, base) and not _adaptable(cls, base):
        raise UsageError(f"{key or 'plugin'}={name}: {cls.__module__}.{cls.__qualname__} is not a {base.__name__}")
    try:
        return cls()
    except Exception as exc:  # noqa: BLE001 - a plugin's constructor may raise anything
        raise UsageError(f"{key or 'plugin'}={name}: cannot be constructed: {exc}") from exc


def _adaptable(cls: type, base: type) -> bool:
    # Gobblin-style per-record converters are accepted without subclassing (they get an adapter)
    from gobblin_py.sdk.contracts import Converter, RecordConverter

    return base is Converter and isinstance(cls, RecordConverter)


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


def class_refs(props: Mapping[str, str]) -> list[PluginRef]:
    """Every Gobblin class named by a key other than the plugin keys (``job.class``, ``writer.kafka.producerClass``,
    a producer's ``value.serializer``, …), in key order: each must be registered for gpy to honour it."""
    refs = []
    for key in sorted(props):
        match = _BRANCH_SUFFIX.match(key)
        base = match.group("base") if match else key
        if base in SINGLE_CLASS_KEYS or base in LIST_CLASS_KEYS or key in SINGLE_CLASS_KEYS or key in LIST_CLASS_KEYS \
                or not _CLASS_NAMING_KEY.search(base):
            continue
        for item in props[key].split(","):
            name = item.strip().strip('"').strip()
            if _GOBBLIN_CLASS.match(name):
                refs.append(PluginRef(key, name))
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


def canonical_plugin_props(props: Mapping[str, str]) -> dict[str, str]:
    """``props`` with every plugin name replaced by ``module:Class``, so executors need no registry."""
    out = dict(props)
    for ref in plugin_refs(props):
        names = [item.strip() for item in out[ref.key].split(",")]
        names = [canonical_name(resolve_class(n, ref.key)) if n == ref.name else n for n in names]
        out[ref.key] = ",".join(names)
    return out


@dataclass
class PluginInfo:
    """A registered plugin: its class target and every name it is registered under."""

    target: str
    names: list[str] = field(default_factory=list)

    @property
    def short_names(self) -> list[str]:
        return [n for n in self.names if not n.startswith(GOBBLIN_PREFIX)]

    def load(self) -> type:
        return _import(self.target)  # type: ignore[return-value]


def registered_plugins() -> list[PluginInfo]:
    """Every plugin registered as an entry point, one entry per class, in class order."""
    by_target: dict[str, PluginInfo] = {}
    for name, target in sorted(_entry_points().items()):
        by_target.setdefault(target, PluginInfo(target)).names.append(name)
    return [by_target[t] for t in sorted(by_target)]
