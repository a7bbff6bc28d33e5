"""A job's configuration checked before any work starts: every problem at once, each naming file, line and key.

What is checked (``gpy validate`` and the start of ``gpy run`` share it):

- no value still holds an unresolved ``${…}`` substitution;
- every plugin class named resolves;
- the runtime's own keys and the keys every plugin of the job declares (its ``settings_class``) parse, in each
  scope they are read in (a writer's keys once per branch, say), with bounds and enumerations;
- each plugin's own cross-key checks (``Settings.check`` and the :class:`~gobblin_py.sdk.contracts.Validating` protocol);
- no table, namespace, branch, file path or file name would lead a written file out of its folder;
- the job's folders and names together lose nothing (:mod:`gobblin_py.runtime.plan.folder_checks`);
- a key nothing declares that misspells a key the job's own plugins or the runtime read
  (:mod:`~gobblin_py.runtime.plan.key_typos`) is an error — the value set is not used — or, with ``lenient``,
  a warning;
- other keys in namespaces gpy owns that nothing declares are reported with the nearest known key ("did you
  mean"): warnings, or errors with ``strict``.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from gobblin_py.io.branch_paths import path_key_problems
from gobblin_py.jobconf.gobblin_keys import GOBBLIN_KEYS
from gobblin_py.jobconf.schedule import SCHEDULE_KEY, scheduling_warnings
from gobblin_py.runtime.commit.datasets import DEFAULT_PUBLISHER
from gobblin_py.runtime.execute.task_settings import DEFAULT_FORK_OPERATOR, DEFAULT_WRITER_BUILDER
from gobblin_py.runtime.monitor.settings import is_reporter_key, unsupported_reporter_keys
from gobblin_py.runtime.plan.core_settings import CORE_SETTINGS
from gobblin_py.runtime.plan.folder_checks import folder_problems
from gobblin_py.runtime.plan.implied_keys import with_source_defaults
from gobblin_py.runtime.plan.key_typos import meant_key
from gobblin_py.sdk.branches import branch_count
from gobblin_py.sdk.config_errors import ConfigError, ConfigWarning
from gobblin_py.sdk.contracts import (
    BatchPartitioner,
    Configurable,
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
    StandaloneJob,
    TaskPolicy,
    Validating,
)
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.partitioner import WriterPartitioner
from gobblin_py.sdk.plugins import PluginError, PluginRef, class_refs, plugin_refs, registered_plugins, resolve_class
from gobblin_py.sdk.settings import Context, Key, Scope, Settings, SettingsError, problem_at, unresolved_substitutions

_BRANCH_SUFFIX = re.compile(r"^(?P<base>.+)\.(?P<branch>\d+)$")
_ENTITY = re.compile(r"^source\.querybased\.entity\.[^.]+\.(?P<key>.+)$")
# key families passed through to other systems, or named per branch by design
_PASS_THROUGH = ("spark.", "fork.branch.name.", "previous.extract.schema", "hadoop.", "fs.")
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
_ROLE_NAMES = {"source.class": "Source", "converter.classes": "Converter", "fork.operator.class": "ForkOperator",
               "writer.builder.class": "DataWriterBuilder", "data.publisher.type": "DataPublisher",
               "data.publisher.job.type": "DataPublisher", "qualitychecker.row.policies": "RowPolicy",
               "qualitychecker.task.policies": "TaskPolicy", "writer.partitioner.class": "WriterPartitioner"}
# per-branch keys: which plugin keys apply to which branch (Gobblin's rules, spec §3.1)
_PER_BRANCH_PLUGIN_KEYS = ("writer.builder.class", "writer.partitioner.class", "data.publisher.type",
                           "qualitychecker.task.policies")


@dataclass
class JobCheck:
    """Everything wrong with a job's configuration and what looks suspicious (``warnings``).

    ``unsupported`` lists Gobblin classes gpy has no equivalent for and ``unresolved`` other class names that
    resolve nowhere (``key=name``); ``errors`` holds every other problem, and each of those two as well.
    """

    errors: list[ConfigError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def settings_errors(self) -> list[ConfigError]:
        """The errors that are not about plugin class names."""
        plugin = [p + ":" for p in self.unsupported] + list(self.unresolved)
        return [e for e in self.errors if not any(e.problem.startswith(p) for p in plugin)]

    def raise_for_errors(self) -> None:
        """SettingsError (exit code 2) listing every error, if there is any."""
        if self.errors:
            raise SettingsError(self.errors)


def _located(props: object, exc: UsageError, key: str) -> ConfigError:
    if isinstance(exc, ConfigError):
        return exc
    locate = getattr(props, "locate", None)
    path, line = locate(key) if callable(locate) else (None, None)
    return ConfigError(str(exc), path=path, line=line)


def _plugin_uses(props: Mapping[str, str], branches: int) -> list[tuple[PluginRef, Context]]:
    """Every plugin the job uses (named or by default) with each context its keys are read in."""
    uses: list[tuple[PluginRef, Context]] = []
    named = plugin_refs(props)
    for ref in named:
        match = _BRANCH_SUFFIX.match(ref.key)
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


def _reader(ref: PluginRef) -> str:
    return f"the job's {_base_key(ref.key)} ({ref.name.rsplit('.', 1)[-1]})"


def _base_key(key: str) -> str:
    match = _BRANCH_SUFFIX.match(key)
    return match.group("base") if match else key


def _role_mismatch(ref: PluginRef, cls: type) -> str | None:
    """Why ``cls`` cannot play the role of its key (a converter named as the source, say), or None."""
    accepted = _ROLES.get(_base_key(ref.key))
    if accepted is None or any(isinstance(cls, a) if _is_protocol(a) else issubclass(cls, a) for a in accepted):
        return None
    return f"{ref.name} is not a {_ROLE_NAMES[_base_key(ref.key)]} ({cls.__module__}.{cls.__qualname__})"


def _is_protocol(cls: type) -> bool:
    return bool(getattr(cls, "_is_protocol", False))


JOB_CLASS_KEY = "job.class"
# a job file with a retention dataset finder and nothing else to run is Gobblin's retention job
RETENTION_FINDER_KEY = "gobblin.retention.dataset.finder.class"
RETENTION_JOB = "org.apache.gobblin.data.management.retention.DatasetCleanerJob"


def standalone_job_class(props: Mapping[str, str]) -> type[StandaloneJob] | None:
    """The :class:`StandaloneJob` ``job.class`` names (Gobblin's ``DatasetCleanerJob``), or None: the job is an
    ingestion pipeline (``job.class`` unset, or naming a Gobblin launcher such as ``AzkabanJobLauncher``). A job
    with a ``gobblin.retention.dataset.finder.class`` and neither ``job.class`` nor ``source.class`` is a
    ``DatasetCleanerJob``."""
    name = (props.get(JOB_CLASS_KEY) or "").strip()
    if not name and (props.get(RETENTION_FINDER_KEY) or "").strip() and not (props.get("source.class") or "").strip():
        name = RETENTION_JOB
    if not name:
        return None
    try:
        cls = resolve_class(name, JOB_CLASS_KEY)
    except UsageError:
        return None
    return cls if issubclass(cls, StandaloneJob) else None


def _check_standalone(props: Mapping[str, str], job_class: type[StandaloneJob], check: JobCheck,
                      lenient: bool) -> JobCheck:
    """A standalone job's keys, the classes its keys name, misspellings of its keys and the runtime's, and its
    own checks and warnings; no pipeline is checked."""
    problems = list(job_class.settings_class.problems(props))
    readers = dict.fromkeys(_declared_names(CORE_SETTINGS), "the gpy runtime")
    readers.update(dict.fromkeys(_declared_names([job_class.settings_class]), f"the job's {job_class.__name__}"))
    doubtful = [key for key in props if not is_reporter_key(key) and not _known(_plain_key(key), set(readers))]
    typos = _typos(props, doubtful, readers, check, lenient)
    if not lenient:
        problems.extend(typos.values())
    for key in job_class.plugin_keys:
        for name in (n.strip() for n in (props.get(key) or "").split(",") if n.strip()):
            try:
                resolve_class(name, key)
            except PluginError as exc:
                if exc.unsupported:
                    check.unsupported.append(f"{key}={name}")
                else:
                    check.unresolved.append(str(exc))
                problems.append(_located(props, exc, key))
    if not problems:
        found = job_class.validate(props)
        check.warnings.extend(str(_placed(props, p)) for p in found if isinstance(p, ConfigWarning))
        problems.extend(p for p in found if not isinstance(p, ConfigWarning))
    check.errors.extend(problems)
    return check


def _placed(props: Mapping[str, str], problem: ConfigError) -> ConfigError:
    """``problem`` with the file and line of its key (the file of a key left to its default), where it has none."""
    locate = getattr(props, "locate", None)
    if problem.path is not None or problem.key is None or not callable(locate):
        return problem
    path, line = locate(problem.key) if problem.key in props else (getattr(props, "path", None), None)
    return problem.with_location(path=path, line=line)


def check_job(props: Mapping[str, str], *, strict: bool = False, lenient: bool = False) -> JobCheck:
    """Check a job's properties (a :class:`~gobblin_py.jobconf.JobConfig` gives file and line). ``strict``: every
    unknown key is an error; ``lenient``: a misspelling of a key the job reads is only a warning."""
    props = with_source_defaults(props)
    check = JobCheck()
    standalone = standalone_job_class(props)
    if standalone is not None:
        return _check_standalone(props, standalone, check, lenient)
    seen: set[str] = set()
    unresolved = unresolved_substitutions(props)
    unresolved_keys = {key for key, _ in unresolved}

    def add(problems: Iterable[ConfigError]) -> None:
        for problem in problems:
            if str(problem) not in seen and not (problem.key in unresolved_keys and "unresolved" in problem.problem):
                seen.add(str(problem))
                check.errors.append(problem)

    locate = getattr(props, "locate", None)
    for key, text in unresolved:
        path, line = locate(key) if callable(locate) else (None, None)
        add([ConfigError(f"holds {text}, which nothing resolved", path=path, line=line, key=key,
                         hint="define it in the job or its .properties files, or export the environment variable")])
    branches = branch_count(props)
    for settings_class in CORE_SETTINGS:
        add(settings_class.problems(props, Context(branches, None)))
        if any(key.scope in (Scope.BRANCH, Scope.FORK) for key in settings_class.keys()):
            for branch in range(branches):
                add(settings_class.problems(props, Context(branches, branch)))
    add(problem_at(props, key, problem, "it names a folder or file below the job's staging, output and final folders")
        for key, problem in path_key_problems(props))
    add(folder_problems(props))
    declared = set(_declared_names(CORE_SETTINGS))
    readers = dict.fromkeys(declared, "the gpy runtime")  # who reads each declared key, for the typo errors
    for ref in class_refs(props):  # a Gobblin class named outside the plugin keys: honoured only when registered
        named = _resolve(props, ref, check, seen, add)
        if isinstance(named, Configurable):
            add(named.settings_class.problems(props, Context(branches, None)))
            declared.update(_declared_names([named.settings_class]))
            readers.update(dict.fromkeys(_declared_names([named.settings_class]), _reader(ref)))
    for ref, context in _plugin_uses(props, branches):
        cls = _resolve(props, ref, check, seen, add)
        if cls is None:
            continue
        mismatch = _role_mismatch(ref, cls)
        if mismatch:
            add([problem_at(props, ref.key, mismatch, f"name a {_ROLE_NAMES[_base_key(ref.key)]} class")])
            continue
        if isinstance(cls, Configurable):
            add(cls.settings_class.problems(props, context))
            names = _declared_names([cls.settings_class])
            declared.update(names)
            readers.update((name, _reader(ref)) for name in names if name not in readers)
        if isinstance(cls, Validating) and isinstance(inspect.getattr_static(cls, "validate"), classmethod):
            try:
                add(cls.validate(props))
            except SettingsError as exc:  # the plugin read its settings; their problems are its answer
                add(exc.problems)
            except UsageError as exc:
                add([_located(props, exc, ref.key)])
    reporters = unsupported_reporter_keys(props)
    for key, what in reporters:
        path, line = locate(key) if callable(locate) else (None, None)
        problem = f"{what} is not part of gpy: nothing is reported there"
        hint = "use metrics.reporting.file.*, metrics.reporting.prometheus.* or openlineage.* (README: Monitoring)"
        if strict:
            add([ConfigError(problem, path=path, line=line, key=key, hint=hint)])
        else:
            where = f"{path}:{line}: " if path and line else f"{path}: " if path else ""
            check.warnings.append(f"{where}key '{key}': {problem}; {hint}")
    # every plugin module is imported to know all keys only when a key is not one the job's own plugins declare
    doubtful = [key for key in props if not is_reporter_key(key) and not _known(_plain_key(key), declared)]
    typos = _typos(props, doubtful, readers, check, lenient)
    if not lenient:
        add(typos.values())
    doubtful = [key for key in doubtful if key not in typos]
    for key, suggestion in unknown_keys({k: props[k] for k in doubtful}, declared | all_declared_names()) \
            if doubtful else ():
        path, line = locate(key) if callable(locate) else (None, None)
        where = f"{path}:{line}: " if path and line else f"{path}: " if path else ""
        hint = f"did you mean {suggestion}?" if suggestion else "no plugin of gpy or Gobblin reads it"
        if strict:
            add([ConfigError("unknown key", path=path, line=line, key=key, hint=hint)])
        else:
            check.warnings.append(f"{where}key '{key}': unknown key; {hint}")
    for warning in scheduling_warnings(props):
        path, line = locate(SCHEDULE_KEY) if callable(locate) and SCHEDULE_KEY in props else (None, None)
        check.warnings.append(f"{path}:{line}: {warning}" if path and line else warning)
    check.errors.sort(key=lambda e: (e.path or "", e.line if e.line is not None else 1 << 30))
    return check


def _typos(props: Mapping[str, str], keys: Iterable[str], readers: Mapping[str, str], check: JobCheck,
           lenient: bool) -> dict[str, ConfigError]:
    """The error of each of ``keys`` (none declared) that misspells a key of ``readers`` (key -> who reads it);
    with ``lenient`` a warning in ``check`` says each instead."""
    locate = getattr(props, "locate", None)
    found: dict[str, ConfigError] = {}
    for key in keys:
        meant = meant_key(_plain_key(key), readers)
        if meant is None:
            continue
        path, line = locate(key) if callable(locate) else (None, None)
        problem = f"unknown key, so its value is not used; {readers[meant]} reads {meant}"
        error = ConfigError(problem, path=path, line=line, key=key, hint=f"did you mean {meant}? (--lenient: only warn)")
        if lenient:
            where = f"{path}:{line}: " if path and line else f"{path}: " if path else ""
            check.warnings.append(f"{where}key '{key}': {problem}")
        found[key] = error
    return found


def _resolve(props: Mapping[str, str], ref: PluginRef, check: JobCheck, seen: set[str],
             add: Callable[[Iterable[ConfigError]], None]) -> type | None:
    """The class ``ref`` names, or None with its problem added (a Gobblin class gpy lacks listed as unsupported)."""
    try:
        return resolve_class(ref.name, ref.key)
    except UsageError as exc:
        error = _located(props, exc, ref.key)
        if str(error) not in seen:
            if isinstance(exc, PluginError) and exc.unsupported:
                check.unsupported.append(f"{ref.key}={ref.name}")
            else:
                check.unresolved.append(str(exc))
        add([error])
        return None


def _declared_names(classes: Iterable[type[Settings]]) -> list[str]:
    names: list[str] = []
    for settings_class in classes:
        for key in settings_class.keys():
            names.extend((key.name, *key.aliases))
    return names


@lru_cache(maxsize=1)
def declared_keys() -> tuple[tuple[Key, str], ...]:
    """Every key gpy declares, with who declares it: the runtime, then each registered plugin."""
    out: list[tuple[Key, str]] = []
    for settings_class in CORE_SETTINGS:
        out.extend((key, f"gpy runtime ({settings_class.__name__})") for key in settings_class.keys())
    for info in registered_plugins():
        try:
            cls = info.load()
        except Exception:  # noqa: BLE001 - an optional plugin whose library is not installed declares nothing here
            continue
        if isinstance(cls, Configurable):
            owner = (info.short_names or [info.target])[0]
            out.extend((key, owner) for key in cls.settings_class.keys())
    return tuple(out)


def all_declared_names() -> set[str]:
    return {name for key, _ in declared_keys() for name in (key.name, *key.aliases)}


def _known(base: str, declared: set[str]) -> bool:
    if base in declared or base in GOBBLIN_KEYS or base.startswith(_PASS_THROUGH):
        return True
    return any(name.endswith(".*") and base.startswith(name[:-1]) for name in declared)


def _owned_namespaces(declared: set[str]) -> tuple[set[str], set[str]]:
    spaces, roots = set(), set()
    for name in declared:
        if name.endswith(".*") or "." not in name:
            continue
        spaces.add(name.rsplit(".", 1)[0] + ".")
        if name.count(".") >= 2:
            roots.add(name.split(".", 1)[0] + ".")
    return spaces, roots


def _plain_key(key: str) -> str:
    """``key`` without a branch suffix or an entity prefix: the name a settings class declares."""
    match = _BRANCH_SUFFIX.match(key)
    base = match.group("base") if match else key
    entity = _ENTITY.match(base)
    return entity.group("key") if entity else base


def unknown_keys(props: Mapping[str, str], declared: set[str]) -> list[tuple[str, str | None]]:
    """``(key, nearest known key or None)`` for each key in a namespace gpy owns that nothing declares."""
    spaces, roots = _owned_namespaces(declared)
    owned = tuple(spaces | roots)
    unknown = [(key, base) for key, base in ((key, _plain_key(key)) for key in props)
               if not _known(base, declared) and base.startswith(owned)]
    if not unknown:
        return []
    import difflib  # only for the hints: a job without unknown keys does not need it

    candidates = sorted(declared | GOBBLIN_KEYS)
    found = []
    for key, base in unknown:
        close = difflib.get_close_matches(base, candidates, n=1, cutoff=0.75)
        found.append((key, close[0] if close else None))
    return found
