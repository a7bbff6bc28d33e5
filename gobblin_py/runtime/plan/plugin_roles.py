"""The plugins a job uses and the role each must play: which class a plugin key names (or the default one when
the key is not set), in which branch contexts its keys are read, and whether the class fits its key."""

from __future__ import annotations

import re
from collections.abc import Mapping

from gobblin_py.runtime.commit.datasets import DEFAULT_PUBLISHER
from gobblin_py.runtime.execute.task_settings import DEFAULT_FORK_OPERATOR, DEFAULT_WRITER_BUILDER
from gobblin_py.sdk.contracts import (
    BatchPartitioner,
    Converter,
    DataPublisher,
    DataWriterBuilder,
    ForkOperator,
    RecordConverter,
    RecordForkOperator,
    RecordPartitioner,
    RecordRowPolicy,
    RowPolicy,
    Source,
    TaskPolicy,
)
from gobblin_py.sdk.partitioner import WriterPartitioner
from gobblin_py.sdk.plugins import PluginRef, plugin_refs
from gobblin_py.sdk.settings import Context

BRANCH_SUFFIX = re.compile(r"^(?P<base>.+)\.(?P<branch>\d+)$")
# what the class a key names must be (a protocol: it offers the methods; a class: it subclasses it)
_ROLES: dict[str, tuple[type, ...]] = {
    "source.class": (Source,),
    "converter.classes": (Converter, RecordConverter),
    "fork.operator.class": (ForkOperator, RecordForkOperator),
    "writer.builder.class": (DataWriterBuilder,),
    "data.publisher.type": (DataPublisher,),
    "data.publisher.job.type": (DataPublisher,),
    "qualitychecker.row.policies": (RowPolicy, RecordRowPolicy),
    "qualitychecker.task.policies": (TaskPolicy,),
    "writer.partitioner.class": (WriterPartitioner, BatchPartitioner, RecordPartitioner),
}
ROLE_NAMES = {"source.class": "Source", "converter.classes": "Converter", "fork.operator.class": "ForkOperator",
              "writer.builder.class": "DataWriterBuilder", "data.publisher.type": "DataPublisher",
              "data.publisher.job.type": "DataPublisher", "qualitychecker.row.policies": "RowPolicy",
              "qualitychecker.task.policies": "TaskPolicy", "writer.partitioner.class": "WriterPartitioner"}
# per-branch keys: which plugin keys apply to which branch (Gobblin's rules, spec §3.1)
_PER_BRANCH_PLUGIN_KEYS = ("writer.builder.class", "writer.partitioner.class", "data.publisher.type",
                           "qualitychecker.task.policies")


def plugin_uses(props: Mapping[str, str], branches: int) -> list[tuple[PluginRef, Context]]:
    """Every plugin the job uses (named or by default) with each context its keys are read in."""
    uses: list[tuple[PluginRef, Context]] = []
    named = plugin_refs(props)
    for ref in named:
        match = BRANCH_SUFFIX.match(ref.key)
        base = match.group("base") if match else ref.key
        if match:
            uses.append((ref, Context(branches, int(match.group("branch")))))
        elif base in _PER_BRANCH_PLUGIN_KEYS:
            uses.extend((ref, Context(branches, b)) for b in range(branches))
        else:
            uses.append((ref, Context(branches, None)))
    keys = {ref.key for ref in named}
    if "fork.operator.class" not in keys:
        uses.append((PluginRef("fork.operator.class", DEFAULT_FORK_OPERATOR), Context(branches, None)))
    if "data.publisher.type" not in keys and "data.publisher.job.type" not in keys:
        uses.extend((PluginRef("data.publisher.type", DEFAULT_PUBLISHER), Context(branches, b)) for b in range(branches))
    for branch in range(branches):
        suffixed = f"writer.builder.class.{branch}" if branches > 1 else "writer.builder.class"
        if suffixed not in keys and "writer.builder.class" not in keys:
            uses.append((PluginRef(suffixed, DEFAULT_WRITER_BUILDER), Context(branches, branch)))
    return uses


def reader(ref: PluginRef) -> str:
    """Who reads the keys of the plugin ``ref`` names, as an error says it."""
    return f"the job's {base_key(ref.key)} ({ref.name.rsplit('.', 1)[-1]})"


def base_key(key: str) -> str:
    """``key`` without its branch suffix."""
    match = BRANCH_SUFFIX.match(key)
    return match.group("base") if match else key


def role_mismatch(ref: PluginRef, cls: type) -> str | None:
    """Why ``cls`` cannot play the role of its key (a converter named as the source, say), or None."""
    accepted = _ROLES.get(base_key(ref.key))
    if accepted is None or any(isinstance(cls, a) if _is_protocol(a) else issubclass(cls, a) for a in accepted):
        return None
    return f"{ref.name} is not a {ROLE_NAMES[base_key(ref.key)]} ({cls.__module__}.{cls.__qualname__})"


def _is_protocol(cls: type) -> bool:
    return bool(getattr(cls, "_is_protocol", False))
