"""Job loading with the semantics of Gobblin's ``PullFileLoader`` + ``SchedulerUtils`` (spec §1.2-§1.4, §1.11-§1.13).

For one job file ``F`` under a configuration root ``R``:

1. system config (Java properties; a later file overrides an earlier one; ``jobconf.dir`` gives
   ``jobconf.fullyQualifiedPath``) -> lowest-priority fallback;
2. at most one ``.properties`` (Java props) or ``.configuration`` (HOCON) global file per folder, from ``R``
   down to ``F``'s folder, each one over the previous fallback (``property.parsing.enablekey`` for a Java
   props file is read from the fallback below it);
3. the job file itself (``jobconf.extensions``, default ``pull,job`` -> Java props; ``conf``/``json`` ->
   HOCON), with ``job.config.path`` injected at the top of every loaded file;
4. ``resolve()`` over the merged tree (HOCON substitutions see everything, environment variables are
   the last fallback), flattening to properties;
5. ``job.template`` (then ``gobblin.template.uri``/``gobblin.template.uris``): user props over the template
   over its super templates, required attributes enforced.

Precedence: job file > nearest global > ... > root global > system config; user job > template > later
super templates > earlier super templates.

Deliberate differences from Gobblin: every failure becomes a :class:`ConfigError` naming the file and the
line or key, and a recursive load records it per file (:class:`LoadResult`) and carries on (Gobblin skips
``IOException``s but aborts the whole load on ``RuntimeException``s such as an unresolved substitution);
``gobblin.template.required_attributes`` is enforced (Gobblin only reports it); a line without a
separator is reported instead of producing an empty key.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import keys as K
from .convert import (
    config_get_boolean,
    config_to_properties,
    desanitize_key,
    guava_trim,
    merge_with_fallback,
    properties_to_config,
)
from .errors import ConfigError
from .hocon import HObj, iter_leaves, parse_hocon_file, render_path, resolve
from .properties import LineProblem, PropertiesFile, load_properties
from .job_templates import TemplateResolver, ordered

__all__ = [
    "JobConfig",
    "LoadResult",
    "load_job",
    "load_jobs",
    "load_sysconfig",
    "discover_job_files",
    "classify",
]

PathLike = Union[str, "os.PathLike[str]"]
SysConfig = Union[None, PathLike, Mapping[str, str], Sequence[PathLike]]
KeyLocator = Callable[[str], Tuple[Optional[str], Optional[int]]]

HOCON_JOB_EXTENSIONS = ("json", "conf")
GLOBAL_PROPS_EXTENSION = ".properties"
GLOBAL_HOCON_EXTENSION = ".configuration"

_INT_RE = re.compile(r"[+-]?[0-9]+")
_SEPARATOR_TYPO_RE = re.compile(r"(.+?)[-_](true|false|yes|no|[0-9]+)", re.IGNORECASE)

# ----------------------------------------------------------------------------------------------------
# Public result types
# ----------------------------------------------------------------------------------------------------


class JobConfig(Mapping[str, str]):
    """The resolved, flat ``str -> str`` properties of one job (Gobblin's job ``Properties``/``State``).

    Behaves as a read-only mapping; ``path`` is the job file and ``warnings`` lists non-fatal findings.
    The typed getters follow Gobblin's ``State`` accessors and raise :class:`ConfigError` naming the key.
    """

    def __init__(
        self,
        path: str,
        properties: Mapping[str, str],
        warnings: Iterable[str] = (),
        locator: Optional[KeyLocator] = None,
    ) -> None:
        self.path = str(path)
        self.properties: Dict[str, str] = dict(properties)
        self.warnings: List[str] = list(warnings)
        self._locator = locator

    def locate(self, key: str) -> Tuple[Optional[str], Optional[int]]:
        """``(file, line)`` where ``key`` was set: the job file, a global file or the system configuration (the
        line is None where it is not known, e.g. in HOCON); the job file when no file sets it (a template)."""
        if self._locator is not None:
            file, line = self._locator(key)
            if file is not None:
                return file, line
        return self.path, None

    def __getitem__(self, key: str) -> str:
        return self.properties[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.properties)

    def __len__(self) -> int:
        return len(self.properties)

    def __repr__(self) -> str:
        return f"JobConfig({self.path!r}, {len(self.properties)} properties)"

    def get(self, key: str, default: Optional[str] = None) -> Optional[str]:  # type: ignore[override]
        """The value of ``key`` or ``default``."""
        return self.properties.get(key, default)

    def _number(self, key: str, default: Optional[int], bits: int) -> Optional[int]:
        value = self.properties.get(key)
        if value is None:
            return default
        limit = 2 ** (bits - 1)
        if _INT_RE.fullmatch(value) is None or not -limit <= int(value) < limit:
            kind = "an integer" if bits == 32 else "a long integer"
            raise ConfigError(
                f"expected {kind}, got '{value}'",
                path=self.path,
                key=key,
                hint=f"set {key} to a whole number without spaces",
            )
        return int(value)

    def get_int(self, key: str, default: Optional[int] = None) -> Optional[int]:
        """``State.getPropAsInt``: Java ``Integer.parseInt`` (no spaces, 32-bit range)."""
        return self._number(key, default, 32)

    def get_long(self, key: str, default: Optional[int] = None) -> Optional[int]:
        """``State.getPropAsLong``: Java ``Long.parseLong`` (no spaces, 64-bit range)."""
        return self._number(key, default, 64)

    def get_bool(self, key: str, default: bool = False) -> bool:
        """``State.getPropAsBoolean``: Java ``Boolean.parseBoolean`` -- only ``true`` (any case) is true."""
        value = self.properties.get(key)
        if value is None:
            return default
        return value.lower() == "true"

    def get_list(self, key: str, default: Optional[Sequence[str]] = None) -> List[str]:
        """``State.getPropAsList``: split on ``,``, trim, drop empty pieces."""
        value = self.properties.get(key)
        if value is None:
            return list(default) if default is not None else []
        return [piece for piece in (guava_trim(p) for p in value.split(",")) if piece]


@dataclass
class LoadResult:
    """Outcome of loading one job file: either ``config`` or ``error`` is set."""

    path: str
    config: Optional[JobConfig] = None
    error: Optional[ConfigError] = None
    mtime_ms: Optional[int] = None

    @property
    def ok(self) -> bool:
        """True when the job loaded."""
        return self.error is None


# ----------------------------------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------------------------------


def _env(env: Optional[Mapping[str, str]]) -> Mapping[str, str]:
    return os.environ if env is None else env


def _job_extensions(sys_props: Mapping[str, str], origin: Optional[str]) -> Tuple[str, ...]:
    raw = sys_props.get(K.JOB_CONFIG_FILE_EXTENSIONS_KEY, K.DEFAULT_JOB_CONFIG_FILE_EXTENSIONS)
    extensions = tuple(dict.fromkeys(p.lower() for p in (guava_trim(x) for x in raw.split(",")) if p))
    common = sorted(set(extensions) & set(HOCON_JOB_EXTENSIONS))
    if common:
        raise ConfigError(
            f"Java props and HOCON pull file extensions intersect: {common}",
            path=origin,
            key=K.JOB_CONFIG_FILE_EXTENSIONS_KEY,
            hint="conf and json are always HOCON; remove them from jobconf.extensions",
        )
    return extensions


def classify(path: PathLike, extensions: Sequence[str] = ("pull", "job")) -> Optional[str]:
    """``"props"``, ``"hocon"``, ``"global-props"``, ``"global-hocon"`` or None for ``path``'s file name."""
    name = os.path.basename(os.fspath(path)).lower()
    if any(name.endswith("." + ext) for ext in extensions):
        return "props"
    if any(name.endswith("." + ext) for ext in HOCON_JOB_EXTENSIONS):
        return "hocon"
    if name.endswith(GLOBAL_PROPS_EXTENSION):
        return "global-props"
    if name.endswith(GLOBAL_HOCON_EXTENSION):
        return "global-hocon"
    return None


def _mtime_ms(path: str) -> int:
    return os.stat(path).st_mtime_ns // 1_000_000


def discover_job_files(root: PathLike, extensions: Sequence[str] = ("pull", "job")) -> List[Tuple[str, int]]:
    """``PullFileLoader.fetchJobFilesRecursively``: job files under ``root`` ordered by mtime ascending.

    The walk is depth-first with entries in name order; the sort by modification time (milliseconds) is
    stable, so files with equal times keep walk order. Global files are never job files.
    """
    found: List[Tuple[str, int]] = []
    visited = set()

    def walk(directory: str) -> None:
        real = os.path.realpath(directory)
        if real in visited:  # a symlink loop
            return
        visited.add(real)
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            return
        for name in names:
            full = os.path.join(directory, name)
            if os.path.isdir(full):
                walk(full)
            elif classify(full, extensions) in ("props", "hocon"):
                try:
                    found.append((full, _mtime_ms(full)))
                except OSError:
                    continue

    walk(os.fspath(root))
    found.sort(key=lambda item: item[1])
    return found


def _separator_hint(problem: LineProblem) -> str:
    if problem.kind == "no-separator":
        typo = _SEPARATOR_TYPO_RE.fullmatch(problem.text)
        suggestion = f" (did you mean `{typo.group(1)}={typo.group(2)}`?)" if typo else ""
        return f"write it as key=value{suggestion}; Gobblin reads such a line as an empty key and rejects the file"
    return "put the key before the '=' or ':' separator; Gobblin rejects empty keys"


def _check_line_problems(parsed: PropertiesFile, warnings: List[str]) -> None:
    for problem in parsed.problems:
        if problem.kind == "dangling-continuation":
            warnings.append(problem.describe())
            continue
        name = os.path.basename(problem.path) if problem.path else "<properties>"
        if problem.kind == "no-separator":
            text = f"line {problem.line} of {name} has no key/value separator (`{problem.text}`)"
        else:
            text = f"line {problem.line} of {name} has an empty key (`{problem.text}`)"
        raise ConfigError(text, path=problem.path, line=problem.line, hint=_separator_hint(problem))


def _flat_keys(tree: HObj) -> List[str]:
    return [desanitize_key(render_path(path)) for path, _ in iter_leaves(tree)]


def _is_within(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([os.path.abspath(path), os.path.abspath(root)]) == os.path.abspath(root)
    except ValueError:
        return False


# ----------------------------------------------------------------------------------------------------
# System configuration
# ----------------------------------------------------------------------------------------------------


@dataclass
class _SysConfig:
    props: Dict[str, str]
    tree: HObj
    origin: Optional[str]
    locate: KeyLocator = lambda key: (None, None)


def load_sysconfig(
    sysconfig: SysConfig = None,
    *,
    env: Optional[Mapping[str, str]] = None,
    system_properties: Optional[Mapping[str, str]] = None,
) -> Dict[str, str]:
    """The flat system properties from ``sysconfig`` (None, a mapping, a file, or files where later win).

    Files are Java properties (commons-configuration semantics, in-file interpolation). When
    ``jobconf.dir`` is set and ``jobconf.fullyQualifiedPath`` is not, the latter becomes
    ``file://<jobconf.dir>`` (standalone ``JobScheduler``).
    """
    return _load_sys(sysconfig, _env(env), system_properties or {}).props


def _load_sys(sysconfig: SysConfig, env: Mapping[str, str], system_properties: Mapping[str, str]) -> _SysConfig:
    props: Dict[str, str] = {}
    parsed_files: List[PropertiesFile] = []
    origin: Optional[str] = None
    if sysconfig is None:
        pass
    elif isinstance(sysconfig, Mapping):
        props = {str(k): str(v) for k, v in sysconfig.items()}
        origin = "<system configuration>"
    else:
        paths = [sysconfig] if isinstance(sysconfig, (str, os.PathLike)) else list(sysconfig)
        for item in paths:
            name = os.fspath(item)
            if not os.path.isfile(name):
                raise ConfigError(
                    "system configuration file not found",
                    path=name,
                    hint="pass an existing Java-properties file (for example conf/gobblin.properties)",
                )
            parsed = load_properties(name, env=env, system_properties=system_properties)
            _check_line_problems(parsed, [])
            parsed_files.append(parsed)
            props.update(parsed.to_dict())
            origin = name
    if K.JOB_CONFIG_FILE_DIR_KEY in props and K.JOB_CONFIG_FILE_GENERAL_PATH_KEY not in props:
        props[K.JOB_CONFIG_FILE_GENERAL_PATH_KEY] = "file://" + props[K.JOB_CONFIG_FILE_DIR_KEY]

    def locate(key: str) -> Tuple[Optional[str], Optional[int]]:
        for parsed in reversed(parsed_files):
            if key in parsed.entries:
                return parsed.location(key)
        return origin, None

    tree = properties_to_config(props, locate=locate, path=origin)
    return _SysConfig(props, tree, origin, locate)


# ----------------------------------------------------------------------------------------------------
# Loading
# ----------------------------------------------------------------------------------------------------


@dataclass
class _Level:
    """One loaded file of a fallback chain."""

    path: str
    tree: HObj  # already merged over everything below it
    keys: List[str]  # keys this file defines, in file order
    locate: KeyLocator  # key -> (file, line) for error messages


@dataclass
class _Chain:
    tree: HObj
    levels: List[_Level] = field(default_factory=list)  # nearest first
    warnings: List[str] = field(default_factory=list)


class _Session:
    """State shared by the loads of one call (system config, global-file chains, templates)."""

    def __init__(
        self,
        sys: _SysConfig,
        env: Mapping[str, str],
        system_properties: Mapping[str, str],
        load_globals: bool,
    ) -> None:
        self.sys = sys
        self.env = env
        self.system_properties = system_properties
        self.load_globals = load_globals
        self.extensions = _job_extensions(sys.props, sys.origin)
        self._chains: Dict[Tuple[str, str], Union[_Chain, ConfigError]] = {}
        self.cwd = os.getcwd()
        self.templates = TemplateResolver(env, self.cwd)

    # -- Java properties / HOCON files ----------------------------------------------------------
    def _delimiter_parsing_disabled(self, fallback: HObj) -> bool:
        return config_get_boolean(
            fallback,
            K.PROPERTY_DELIMITER_PARSING_ENABLED_KEY,
            K.DEFAULT_PROPERTY_DELIMITER_PARSING_ENABLED,
            env=self.env,
            path=self.sys.origin,
        )

    def _load_props_level(self, path: str, fallback: HObj, warnings: List[str]) -> _Level:
        parsed = load_properties(
            path,
            delimiter_parsing_disabled=self._delimiter_parsing_disabled(fallback),
            env=self.env,
            system_properties=self.system_properties,
            cwd=self.cwd,
        )
        _check_line_problems(parsed, warnings)
        props = parsed.to_dict()
        converted = properties_to_config(props, locate=parsed.location, path=path)
        tree = merge_with_fallback([_config_path_object(os.path.abspath(path)), converted, fallback])
        return _Level(path, tree, list(props) + [K.JOB_CONFIG_FILE_PATH_KEY], parsed.location)

    def _load_hocon_level(self, path: str, fallback: HObj) -> _Level:
        parsed = parse_hocon_file(path, cwd=self.cwd)
        tree = merge_with_fallback([_config_path_object(os.path.abspath(path)), parsed, fallback])
        return _Level(path, tree, _flat_keys(parsed) + [K.JOB_CONFIG_FILE_PATH_KEY], lambda key: (path, None))

    # -- global files ---------------------------------------------------------------------------
    def chain_for(self, directory: str, root: str) -> _Chain:
        """The fallback for a job in ``directory``: system config plus globals from ``root`` down."""
        directory = os.path.abspath(directory)
        root = os.path.abspath(root)
        key = (directory, root)
        cached = self._chains.get(key)
        if isinstance(cached, ConfigError):
            raise cached
        if cached is not None:
            return cached
        try:
            chain = self._build_chain(directory, root)
        except ConfigError as exc:
            self._chains[key] = exc
            raise
        self._chains[key] = chain
        return chain

    def _build_chain(self, directory: str, root: str) -> _Chain:
        if directory == root or not self.load_globals:
            parent = _Chain(self.sys.tree, [])
        elif not _is_within(directory, root):
            return _Chain(self.sys.tree, [])
        else:
            parent = self.chain_for(os.path.dirname(directory), root)
        if not self.load_globals:
            return parent
        globals_here = _global_files(directory)
        if not globals_here:
            return parent
        if len(globals_here) > 1:
            names = ", ".join(os.path.basename(g) for g in globals_here)
            raise ConfigError(
                f"found more than one global properties file in folder {directory}: {names}",
                path=directory,
                hint="keep at most one .properties or .configuration file per folder",
            )
        path = globals_here[0]
        warnings = list(parent.warnings)
        if path.lower().endswith(GLOBAL_HOCON_EXTENSION):
            level = self._load_hocon_level(path, parent.tree)
        else:
            level = self._load_props_level(path, parent.tree, warnings)
        return _Chain(level.tree, [level] + parent.levels, warnings)

    # -- one job --------------------------------------------------------------------------------
    def load(self, path: str, root: str) -> JobConfig:
        warnings: List[str] = []
        if not os.path.isfile(path):
            raise ConfigError("job file not found", path=path, hint="check the path")
        kind = classify(path, self.extensions)
        if kind not in ("props", "hocon"):
            raise ConfigError(
                f"Cannot load pull file {path} due to unrecognized extension",
                path=path,
                hint=f"job files end in {', '.join('.' + e for e in self.extensions + HOCON_JOB_EXTENSIONS)} "
                f"(extensions for Java-properties jobs come from {K.JOB_CONFIG_FILE_EXTENSIONS_KEY})",
            )
        directory = os.path.dirname(os.path.abspath(path))
        if self.load_globals and not _is_within(directory, root):
            warnings.append(
                f"{path} is not inside the configuration root {root}; global .properties/.configuration "
                "files are not loaded for it"
            )
        chain = self.chain_for(directory, root)
        warnings.extend(chain.warnings)
        if kind == "props":
            level = self._load_props_level(path, chain.tree, warnings)
        else:
            level = self._load_hocon_level(path, chain.tree)
        resolved = resolve(level.tree, self.env)
        props = config_to_properties(resolved)
        key_order = [level.keys] + [lvl.keys for lvl in chain.levels] + [list(self.sys.props)]
        props = ordered(props, *key_order)
        props = self.templates.apply(props, path, root, level.locate)
        levels = [level] + chain.levels

        def locate(key: str) -> Tuple[Optional[str], Optional[int]]:
            for candidate in levels:
                if key in candidate.keys:
                    return candidate.locate(key)
            if key in self.sys.props:
                return self.sys.locate(key)
            return None, None

        return JobConfig(path, props, warnings, locate)


def _config_path_object(path: str) -> HObj:
    return properties_to_config({K.JOB_CONFIG_FILE_PATH_KEY: path})


def _global_files(directory: str) -> List[str]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    out = []
    for name in names:
        lowered = name.lower()
        full = os.path.join(directory, name)
        if (lowered.endswith(GLOBAL_PROPS_EXTENSION) or lowered.endswith(GLOBAL_HOCON_EXTENSION)) and os.path.isfile(full):
            out.append(full)
    return out


# ----------------------------------------------------------------------------------------------------
# Entry points
# ----------------------------------------------------------------------------------------------------


def _session(
    sysconfig: SysConfig,
    env: Optional[Mapping[str, str]],
    system_properties: Optional[Mapping[str, str]],
    load_globals: bool,
) -> _Session:
    environment = _env(env)
    sys_props = system_properties or {}
    return _Session(_load_sys(sysconfig, environment, sys_props), environment, sys_props, load_globals)


def load_job(
    path: PathLike,
    conf_root: Optional[PathLike] = None,
    sysconfig: SysConfig = None,
    env: Optional[Mapping[str, str]] = None,
    *,
    system_properties: Optional[Mapping[str, str]] = None,
    load_globals: bool = True,
) -> JobConfig:
    """Load one job file the way Gobblin's standalone scheduler does (see the module docstring).

    ``conf_root`` (default: the job file's folder) is where global-file inheritance starts; ``sysconfig``
    is None, a mapping of system properties, a Java-properties file or a list of them (later files win);
    ``env`` (default ``os.environ``) serves ``${env:X}`` and the HOCON environment fallback;
    ``system_properties`` serves ``${sys:x}``; ``load_globals=False`` skips global files.
    Raises :class:`ConfigError`.
    """
    name = os.fspath(path)
    root = os.fspath(conf_root) if conf_root is not None else os.path.dirname(os.path.abspath(name))
    session = _session(sysconfig, env, system_properties, load_globals)
    return session.load(name, os.path.abspath(root))


def load_jobs(
    paths_or_dirs: Union[PathLike, Sequence[PathLike]],
    conf_root: Optional[PathLike] = None,
    sysconfig: SysConfig = None,
    env: Optional[Mapping[str, str]] = None,
    *,
    system_properties: Optional[Mapping[str, str]] = None,
    load_globals: bool = True,
) -> List[LoadResult]:
    """Load job files and folders (recursively, oldest first); one :class:`LoadResult` per job file.

    A folder is searched for files with a job extension (``jobconf.extensions`` of the system config,
    default ``pull,job``, plus ``conf``/``json``); its own path is the configuration root unless
    ``conf_root`` is given. Errors are recorded per file and loading goes on. A problem with the system
    configuration itself raises :class:`ConfigError`.
    """
    items = [paths_or_dirs] if isinstance(paths_or_dirs, (str, os.PathLike)) else list(paths_or_dirs)
    session = _session(sysconfig, env, system_properties, load_globals)
    results: List[LoadResult] = []
    for item in items:
        name = os.fspath(item)
        if os.path.isdir(name):
            root = os.path.abspath(os.fspath(conf_root) if conf_root is not None else name)
            for job_path, mtime in discover_job_files(name, session.extensions):
                results.append(_load_one(session, job_path, root, mtime))
        else:
            root_name = os.fspath(conf_root) if conf_root is not None else os.path.dirname(os.path.abspath(name))
            mtime = _mtime_ms(name) if os.path.isfile(name) else None
            results.append(_load_one(session, name, os.path.abspath(root_name), mtime))
    return results


def _load_one(session: _Session, path: str, root: str, mtime: Optional[int]) -> LoadResult:
    try:
        return LoadResult(path, config=session.load(path, root), mtime_ms=mtime)
    except ConfigError as exc:
        return LoadResult(path, error=exc.with_location(path=path), mtime_ms=mtime)

