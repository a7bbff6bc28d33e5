"""What gpy can do, from the declarations themselves: every plugin with its names and keys, and each key explained.

``gpy plugins``, ``gpy validate --explain KEY`` and the key tables of the docs' reference are all rendered from here,
so they cannot drift from the code: a plugin's keys are its ``settings_class``'s declarations, and the runtime's
own keys are those of :data:`gobblin_py.runtime.plan.core_settings.CORE_SETTINGS`.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from gobblin_py.jobconf.gobblin_keys import GOBBLIN_KEYS
from gobblin_py.sdk.contracts import (
    Configurable,
    Converter,
    DataPublisher,
    DataWriterBuilder,
    Extractor,
    ForkOperator,
    RowPolicy,
    Source,
    TaskPolicy,
)
from gobblin_py.sdk.plugins import registered_plugins
from gobblin_py.sdk.settings import Key, Settings

_KINDS: tuple[tuple[type, str], ...] = (
    (Source, "source"), (Extractor, "extractor"), (Converter, "converter"), (ForkOperator, "fork operator"),
    (DataWriterBuilder, "writer"), (DataPublisher, "publisher"), (RowPolicy, "row policy"),
    (TaskPolicy, "task policy"),
)
_SUFFIX = re.compile(r"^(?P<base>.+)\.\d+$")


@dataclass
class PluginEntry:
    """One plugin class: its names and, when it declares them, its keys."""

    target: str
    kind: str
    names: list[str]
    doc: str
    keys: list[Key] = field(default_factory=list)
    error: str | None = None  # its module does not import here (an optional library is missing)
    settings_class: type[Settings] | None = None

    @property
    def title(self) -> str:
        return self.target.replace(":", ".")


def _kind(cls: type) -> str:
    for base, name in _KINDS:
        if isinstance(cls, type) and issubclass(cls, base):
            return name
    if cls.__name__.endswith("Partitioner"):
        return "writer partitioner"
    return "plugin"


def plugin_entries() -> list[PluginEntry]:
    """Every registered plugin, loaded to read its kind, first doc line and keys."""
    entries = []
    for info in registered_plugins():
        try:
            cls = info.load()
        except Exception as exc:  # noqa: BLE001 - a plugin whose optional library is missing
            entries.append(PluginEntry(info.target, "plugin", info.names, "", error=f"{type(exc).__name__}: {exc}"))
            continue
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        settings_class = cls.settings_class if isinstance(cls, Configurable) else None
        keys = settings_class.keys(own=True) if settings_class is not None else []
        entries.append(PluginEntry(info.target, _kind(cls), info.names, doc, keys, settings_class=settings_class))
    return entries


def core_sections() -> list[tuple[str, list[Key]]]:
    """The runtime's own keys, one section per settings class."""
    from gobblin_py.runtime.plan.core_settings import CORE_SETTINGS

    return [(_title(cls), cls.keys(own=True)) for cls in CORE_SETTINGS]


def _title(cls: type[Settings]) -> str:
    return (cls.__doc__ or cls.__name__).strip().splitlines()[0].rstrip(".")


_ENTITY = re.compile(r"^source\.querybased\.entity\.[^.]+\.(?P<key>.+)$")


def explain(key: str) -> str:
    """Every declaration of ``key`` (a branch suffix ``.N`` or a table's ``source.querybased.entity.<t>.``
    prefix is ignored), or why none is found."""
    base = suffixed.group("base") if (suffixed := _SUFFIX.match(key)) else key
    entity = _ENTITY.match(base)
    if entity and not any(_matches(k, base) for e in plugin_entries() for k in e.keys):
        base = entity.group("key")
    owners: dict[int, list[str]] = {}
    found: list[tuple[str, Key]] = []
    for title, keys in core_sections():
        found += [(f"gpy runtime: {title}", k) for k in keys if _matches(k, base)]
    for entry in plugin_entries():
        for k in entry.keys:
            if _matches(k, base):
                if id(k) not in owners:
                    owners[id(k)] = []
                    found.append(("", k))
                owners[id(k)].append(entry.title)
    found = [(owner or f"read by {', '.join(owners[id(k)])}", k) for owner, k in found]
    if not found:
        known = {k.name for _, keys in core_sections() for k in keys} | {
            k.name for e in plugin_entries() for k in e.keys}
        close = difflib.get_close_matches(base, sorted(known), n=3, cutoff=0.7)
        if base in GOBBLIN_KEYS:
            return f"{key}: a Gobblin key gpy accepts and does not act on"
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return f"{key}: no plugin of gpy declares it{hint}"
    lines = []
    for owner, k in found:
        lines.append(f"{k.name}  ({owner})")
        lines.append(f"  {k.doc}")
        lines.append(f"  type: {k.describe_type()}; default: {k.render_default()}")
        if k.secret:
            lines.append("  secret: its value is never printed (gpy validate --json masks it)")
        if k.scope.value != "job":
            lines.append(f"  scope: {_scope_text(k)}")
        if k.aliases:
            lines.append(f"  also read as: {', '.join(k.aliases)}")
        if k.example:
            lines.append(f"  example: {k.name}={k.example}")
    return "\n".join(lines)


def _matches(key: Key, name: str) -> bool:
    if key.is_prefix:
        return name.startswith(key.name[:-1]) or name == key.name
    return name == key.name or name in key.aliases


def _scope_text(key: Key) -> str:
    return {
        "branch": f"per branch: {key.name}.N when the job has several branches",
        "fork": f"per fork branch: {key.name}.N inside branch N",
        "entity": f"per table: source.querybased.entity.<table>.{key.name}",
    }.get(key.scope.value, "job")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(keys: list[Key]) -> list[str]:
    rows = ["| key | default | accepted | meaning |", "|---|---|---|---|"]
    for k in keys:
        name = f"`{k.name}`" + (" (`.N` per branch)" if k.scope.value in ("branch", "fork") else "") + (
            " (secret)" if k.secret else "")
        rows.append(f"| {name} | {_cell(k.render_default())} | {_cell(k.describe_type())} | {_cell(k.doc)} |")
    return rows


def settings_groups() -> dict[type[Settings], list[PluginEntry]]:
    """The plugins that declare keys, grouped by the settings class they share (several plugins may read one)."""
    groups: dict[type[Settings], list[PluginEntry]] = {}
    for entry in plugin_entries():
        if entry.settings_class is not None and entry.keys:
            groups.setdefault(entry.settings_class, []).append(entry)
    return groups


def group_section(settings_class: type[Settings], entries: list[PluginEntry], heading: str = "####") -> list[str]:
    """One settings class's key table, under a heading naming the plugins that read it."""
    first = entries[0]
    names = "; ".join(f"`{e.title}` ({', '.join(f'`{n}`' for n in e.names)})" for e in entries)
    return [f"{heading} {first.kind}: {_title(settings_class)}", "", f"Read by {names}.", "", *_table(first.keys), ""]


def runtime_section() -> list[str]:
    """The runtime's own keys: one table per settings class."""
    out = []
    for title, keys in core_sections():
        out += [f"*{title}*", "", *_table(keys), ""]
    return out


def markdown() -> str:
    """``gpy plugins --markdown``: every key table of the docs' reference, the runtime's keys, then each plugin's."""
    out = ["#### The runtime", "", *runtime_section()]
    for settings_class, entries in settings_groups().items():
        out += group_section(settings_class, entries)
    return "\n".join(out)


def text_listing() -> str:
    """``gpy plugins``: one block per plugin."""
    lines = []
    for entry in plugin_entries():
        lines.append(f"{entry.kind:<18} {entry.title}")
        lines.append(f"{'':<18} names: {', '.join(entry.names)}")
        if entry.doc:
            lines.append(f"{'':<18} {entry.doc}")
        if entry.error:
            lines.append(f"{'':<18} not loadable here: {entry.error}")
        if entry.keys:
            lines.append(f"{'':<18} keys: {', '.join(k.name for k in entry.keys)}")
    return "\n".join(lines)


def json_listing() -> list[dict]:
    """``gpy plugins --json``."""
    return [{"class": e.title, "kind": e.kind, "names": e.names, "doc": e.doc, "error": e.error,
             "keys": [{"key": k.name, "type": k.describe_type(), "default": k.render_default(), "doc": k.doc,
                       "scope": k.scope.value} for k in e.keys]} for e in plugin_entries()]
