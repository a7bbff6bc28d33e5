"""A job's configuration checked before any work starts: every problem at once, each naming file, line and key.

What is checked (``gpy validate`` and the start of ``gpy run`` share it):

- no value still holds an unresolved ``${…}`` substitution, nor an ``ENC(…)`` the loader could not decrypt;
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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from gobblin_py.io.branch_paths import path_key_problems
from gobblin_py.jobconf.encrypted import encrypted_value_problems
from gobblin_py.jobconf.gobblin_keys import GOBBLIN_KEYS
from gobblin_py.jobconf.schedule import SCHEDULE_KEY, scheduling_warnings
from gobblin_py.runtime.monitor.settings import is_reporter_key, unsupported_reporter_keys
from gobblin_py.runtime.plan.core_settings import CORE_SETTINGS
from gobblin_py.runtime.plan.folder_checks import folder_problems
from gobblin_py.runtime.plan.implied_keys import with_source_defaults
from gobblin_py.runtime.plan.key_typos import meant_key
from gobblin_py.runtime.plan.plugin_roles import BRANCH_SUFFIX, ROLE_NAMES, base_key, plugin_uses, reader, role_mismatch
from gobblin_py.sdk.branches import branch_count
from gobblin_py.sdk.config_errors import ConfigError, ConfigWarning
from gobblin_py.sdk.contracts import (
    Configurable,
    StandaloneJob,
    Validating,
)
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.plugins import PluginError, PluginRef, class_refs, registered_plugins, resolve_class
from gobblin_py.sdk.settings import Context, Key, Scope, Settings, SettingsError, problem_at, unresolved_substitutions

_ENTITY = re.compile(r"^source\.querybased\.entity\.[^.]+\.(?P<key>.+)$")
# key families passed through to other systems, or named per branch by design
_PASS_THROUGH = ("spark.", "fork.branch.name.", "previous.extract.schema", "hadoop.", "fs.")


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


def _located(props: Mapping[str, str], exc: UsageError, key: str) -> ConfigError:
    if isinstance(exc, ConfigError):
        return exc
    path, line = _where(props, key)
    return ConfigError(str(exc), path=path, line=line)


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
    check = JobCheck(errors=[_placed(props, problem) for problem in encrypted_value_problems(props)])
    standalone = standalone_job_class(props)
    if standalone is not None:
        return _check_standalone(props, standalone, check, lenient)
    unresolved = unresolved_substitutions(props)
    errors = _Errors(check, {key for key, _ in unresolved}, {str(error) for error in check.errors})
    for key, text in unresolved:
        errors.add([_error_at(props, key, f"holds {text}, which nothing resolved",
                              "define it in the job or its .properties files, or export the environment variable")])
    branches = branch_count(props)
    _check_runtime_keys(props, branches, errors)
    readers = _check_plugins(props, branches, errors)
    _check_reporter_keys(props, errors, strict)
    _check_unknown_keys(props, readers, errors, strict, lenient)
    for warning in scheduling_warnings(props):
        path, line = _where(props, SCHEDULE_KEY) if SCHEDULE_KEY in props else (None, None)
        check.warnings.append(f"{path}:{line}: {warning}" if path and line else warning)
    check.errors.sort(key=lambda e: (e.path or "", e.line if e.line is not None else 1 << 30))
    return check


@dataclass
class _Errors:
    """The errors of one check, each said once; a key's own problems give way to its unresolved substitution."""

    check: JobCheck
    unresolved_keys: set[str]
    seen: set[str] = field(default_factory=set)

    def add(self, problems: Iterable[ConfigError]) -> None:
        for problem in problems:
            if str(problem) in self.seen or (problem.key in self.unresolved_keys and "unresolved" in problem.problem):
                continue
            self.seen.add(str(problem))
            self.check.errors.append(problem)


def _where(props: Mapping[str, str], key: str) -> tuple[str | None, int | None]:
    """The file and line that set ``key``, when the properties know them."""
    locate = getattr(props, "locate", None)
    return locate(key) if callable(locate) else (None, None)


def _error_at(props: Mapping[str, str], key: str, problem: str, hint: str | None = None) -> ConfigError:
    """An error about ``key``, at the file and line that set it."""
    path, line = _where(props, key)
    return ConfigError(problem, path=path, line=line, key=key, hint=hint)


def _warning(props: Mapping[str, str], key: str, text: str) -> str:
    path, line = _where(props, key)
    where = f"{path}:{line}: " if path and line else f"{path}: " if path else ""
    return f"{where}key '{key}': {text}"


def _check_runtime_keys(props: Mapping[str, str], branches: int, errors: _Errors) -> None:
    """The runtime's own keys in each scope they are read in, the paths keys and the job's folders."""
    for settings_class in CORE_SETTINGS:
        errors.add(settings_class.problems(props, Context(branches, None)))
        if any(key.scope in (Scope.BRANCH, Scope.FORK) for key in settings_class.keys()):
            for branch in range(branches):
                errors.add(settings_class.problems(props, Context(branches, branch)))
    errors.add(problem_at(props, key, problem,
                          "it names a folder or file below the job's staging, output and final folders")
               for key, problem in path_key_problems(props))
    errors.add(folder_problems(props))


def _check_plugins(props: Mapping[str, str], branches: int, errors: _Errors) -> dict[str, str]:
    """Every class the job names resolves and fits its key, and the keys each declares parse; who reads each key
    declared (key -> reader), for the misspelling errors."""
    readers = dict.fromkeys(_declared_names(CORE_SETTINGS), "the gpy runtime")
    for ref in class_refs(props):  # a Gobblin class named outside the plugin keys: honoured only when registered
        named = _resolve(props, ref, errors)
        if isinstance(named, Configurable):
            errors.add(named.settings_class.problems(props, Context(branches, None)))
            readers.update(dict.fromkeys(_declared_names([named.settings_class]), reader(ref)))
    for ref, context in plugin_uses(props, branches):
        cls = _resolve(props, ref, errors)
        if cls is None:
            continue
        mismatch = role_mismatch(ref, cls)
        if mismatch:
            errors.add([problem_at(props, ref.key, mismatch, f"name a {ROLE_NAMES[base_key(ref.key)]} class")])
            continue
        if isinstance(cls, Configurable):
            errors.add(cls.settings_class.problems(props, context))
            readers.update((name, reader(ref)) for name in _declared_names([cls.settings_class])
                           if name not in readers)
        if isinstance(cls, Validating) and isinstance(inspect.getattr_static(cls, "validate"), classmethod):
            try:
                errors.add(cls.validate(props))
            except SettingsError as exc:  # the plugin read its settings; their problems are its answer
                errors.add(exc.problems)
            except UsageError as exc:
                errors.add([_located(props, exc, ref.key)])
    return readers


def _check_reporter_keys(props: Mapping[str, str], errors: _Errors, strict: bool) -> None:
    """Gobblin's reporters gpy does not have: warnings, or errors with ``strict``."""
    for key, what in unsupported_reporter_keys(props):
        problem = f"{what} is not part of gpy: nothing is reported there"
        hint = ("use metrics.reporting.file.*, .kafka.*, .graphite.*, .influxdb.*, .prometheus.* or openlineage.* "
                "(docs: operating/monitoring.md)")
        if strict:
            errors.add([_error_at(props, key, problem, hint)])
        else:
            errors.check.warnings.append(_warning(props, key, f"{problem}; {hint}"))


def _check_unknown_keys(props: Mapping[str, str], readers: dict[str, str], errors: _Errors, strict: bool,
                        lenient: bool) -> None:
    """Keys nothing declares: a misspelling of a key the job reads is an error (a warning with ``lenient``);
    another in a namespace gpy owns a warning (an error with ``strict``)."""
    # every plugin module is imported to know all keys only when a key is not one the job's own plugins declare
    declared = set(readers)
    doubtful = [key for key in props if not is_reporter_key(key) and not _known(_plain_key(key), declared)]
    typos = _typos(props, doubtful, readers, errors.check, lenient)
    if not lenient:
        errors.add(typos.values())
    doubtful = [key for key in doubtful if key not in typos]
    for key, suggestion in unknown_keys({k: props[k] for k in doubtful}, declared | all_declared_names()) \
            if doubtful else ():
        hint = f"did you mean {suggestion}?" if suggestion else "no plugin of gpy or Gobblin reads it"
        if strict:
            errors.add([_error_at(props, key, "unknown key", hint)])
        else:
            errors.check.warnings.append(_warning(props, key, f"unknown key; {hint}"))


def _typos(props: Mapping[str, str], keys: Iterable[str], readers: Mapping[str, str], check: JobCheck,
           lenient: bool) -> dict[str, ConfigError]:
    """The error of each of ``keys`` (none declared) that misspells a key of ``readers`` (key -> who reads it);
    with ``lenient`` a warning in ``check`` says each instead."""
    found: dict[str, ConfigError] = {}
    for key in keys:
        meant = meant_key(_plain_key(key), readers)
        if meant is None:
            continue
        problem = f"unknown key, so its value is not used; {readers[meant]} reads {meant}"
        found[key] = _error_at(props, key, problem, f"did you mean {meant}? (--lenient: only warn)")
        if lenient:
            check.warnings.append(_warning(props, key, problem))
    return found


def _resolve(props: Mapping[str, str], ref: PluginRef, errors: _Errors) -> type | None:
    """The class ``ref`` names, or None with its problem added (a Gobblin class gpy lacks listed as unsupported)."""
    try:
        return resolve_class(ref.name, ref.key)
    except UsageError as exc:
        error = _located(props, exc, ref.key)
        if str(error) not in errors.seen:
            if isinstance(exc, PluginError) and exc.unsupported:
                errors.check.unsupported.append(f"{ref.key}={ref.name}")
            else:
                errors.check.unresolved.append(str(exc))
        errors.add([error])
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
    match = BRANCH_SUFFIX.match(key)
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
