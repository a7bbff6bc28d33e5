"""Loading jobs: a session (system configuration, global-file chains, templates) and the public entry points."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from gobblin_py.jobconf import keys as K
from gobblin_py.sdk.config_errors import ConfigError

from ..convert import config_to_properties
from ..encrypted import decrypt_properties
from ..hocon import resolve
from ..job_templates import TemplateResolver, ordered
from .chains import GlobalChains
from .job_config import JobConfig, LoadResult
from .job_files import HOCON_JOB_EXTENSIONS, PathLike, classify, discover_job_files, is_within, job_extensions, mtime_ms
from .levels import LevelReader
from .sysconfig import LoadedSysConfig, SysConfig, environment, read_sysconfig

__all__ = ["Session", "load_job", "load_jobs"]


class Session:
    """State shared by the loads of one call (system config, global-file chains, templates)."""

    def __init__(
        self,
        sys: LoadedSysConfig,
        env: Mapping[str, str],
        system_properties: Mapping[str, str],
        load_globals: bool,
    ) -> None:
        self.sys = sys
        self.env = env
        self.load_globals = load_globals
        self.extensions = job_extensions(sys.props, sys.origin)
        self.cwd = os.getcwd()
        self.templates = TemplateResolver(env, self.cwd)
        self.reader = LevelReader(env, system_properties, self.cwd, sys.origin)
        self.chains = GlobalChains(sys.tree, self.reader, load_globals)

    def load(self, path: str, root: str) -> JobConfig:
        """Load the job file ``path`` with global files from ``root`` down; raises :class:`ConfigError`."""
        warnings: list[str] = []
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
        if self.load_globals and not is_within(directory, root):
            warnings.append(
                f"{path} is not inside the configuration root {root}; global .properties/.configuration "
                "files are not loaded for it"
            )
        chain = self.chains.chain_for(directory, root)
        warnings.extend(chain.warnings)
        if kind == "props":
            level = self.reader.props_level(path, chain.tree, warnings)
        else:
            level = self.reader.hocon_level(path, chain.tree)
        resolved = resolve(level.tree, self.env)
        props = config_to_properties(resolved)
        key_order = [level.keys] + [lvl.keys for lvl in chain.levels] + [list(self.sys.props)]
        props = ordered(props, *key_order)
        props = self.templates.apply(props, path, root, level.locate)
        props = decrypt_properties(props)  # ENC(…) values: plugins see plain ones; what fails is checked later
        levels = [level] + chain.levels

        def locate(key: str) -> tuple[str | None, int | None]:
            for candidate in levels:
                if key in candidate.keys:
                    return candidate.locate(key)
            if key in self.sys.props:
                return self.sys.locate(key)
            return None, None

        applied = [*self.sys.files, *(os.path.abspath(lvl.path) for lvl in reversed(chain.levels)), os.path.abspath(path)]
        return JobConfig(path, props, warnings, locate, applied)


def _session(
    sysconfig: SysConfig,
    env: Mapping[str, str] | None,
    system_properties: Mapping[str, str] | None,
    load_globals: bool,
) -> Session:
    environ = environment(env)
    sys_props = system_properties or {}
    return Session(read_sysconfig(sysconfig, environ, sys_props), environ, sys_props, load_globals)


def load_job(
    path: PathLike,
    conf_root: PathLike | None = None,
    sysconfig: SysConfig = None,
    env: Mapping[str, str] | None = None,
    *,
    system_properties: Mapping[str, str] | None = None,
    load_globals: bool = True,
) -> JobConfig:
    """Load one job file the way Gobblin's standalone scheduler does (see :mod:`gobblin_py.jobconf.loader`).

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
    paths_or_dirs: PathLike | Sequence[PathLike],
    conf_root: PathLike | None = None,
    sysconfig: SysConfig = None,
    env: Mapping[str, str] | None = None,
    *,
    system_properties: Mapping[str, str] | None = None,
    load_globals: bool = True,
) -> list[LoadResult]:
    """Load job files and folders (recursively, oldest first); one :class:`LoadResult` per job file.

    A folder is searched for files with a job extension (``jobconf.extensions`` of the system config,
    default ``pull,job``, plus ``conf``/``json``); its own path is the configuration root unless
    ``conf_root`` is given. Errors are recorded per file and loading goes on. A problem with the system
    configuration itself raises :class:`ConfigError`.
    """
    items = [paths_or_dirs] if isinstance(paths_or_dirs, (str, os.PathLike)) else list(paths_or_dirs)
    session = _session(sysconfig, env, system_properties, load_globals)
    results: list[LoadResult] = []
    for item in items:
        name = os.fspath(item)
        if os.path.isdir(name):
            root = os.path.abspath(os.fspath(conf_root) if conf_root is not None else name)
            for job_path, mtime in discover_job_files(name, session.extensions):
                results.append(_load_one(session, job_path, root, mtime))
        else:
            root_name = os.fspath(conf_root) if conf_root is not None else os.path.dirname(os.path.abspath(name))
            file_mtime = mtime_ms(name) if os.path.isfile(name) else None
            results.append(_load_one(session, name, os.path.abspath(root_name), file_mtime))
    return results


def _load_one(session: Session, path: str, root: str, mtime: int | None) -> LoadResult:
    try:
        return LoadResult(path, config=session.load(path, root), mtime_ms=mtime)
    except ConfigError as exc:
        return LoadResult(path, error=exc.with_location(path=path), mtime_ms=mtime)

