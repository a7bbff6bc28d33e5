"""The system configuration: Gobblin's ``gobblin.properties``-style files, the lowest level under every job."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Union

from gobblin_py.jobconf import keys as K
from gobblin_py.sdk.config_errors import ConfigError

from ..convert import properties_to_config
from ..hocon import HObj
from ..properties import PropertiesFile, load_properties
from .job_config import KeyLocator
from .job_files import PathLike
from .levels import checked_properties

_log = logging.getLogger(__name__)

__all__ = ["SysConfig", "LoadedSysConfig", "load_sysconfig", "read_sysconfig", "environment", "find_sysconfig",
           "DEFAULT_SYSCONFIG"]

DEFAULT_SYSCONFIG = os.path.join("conf", "gobblin.properties")

SysConfig = Union[None, PathLike, Mapping[str, str], Sequence[PathLike]]  # noqa: UP007 - a runtime alias


def environment(env: Mapping[str, str] | None) -> Mapping[str, str]:
    """``env``, or the process environment when None."""
    return os.environ if env is None else env


@dataclass
class LoadedSysConfig:
    """The system properties, their config tree, the file they came from and where each key was set."""

    props: dict[str, str]
    tree: HObj
    origin: str | None
    locate: KeyLocator = lambda key: (None, None)
    files: tuple[str, ...] = ()  # the files read, absolute, in the order applied (later ones win)


def find_sysconfig(*starts: str) -> str | None:
    """The ``conf/gobblin.properties`` nearest above the first of ``starts`` (folders) that has one, absolute;
    None when none has. Found from where the job is, as Gobblin's deployment folder is, never from the folder
    gpy happens to be started in."""
    for start in starts:
        folder = os.path.abspath(start)
        while True:
            candidate = os.path.join(folder, DEFAULT_SYSCONFIG)
            if os.path.isfile(candidate):
                return candidate
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return None


def load_sysconfig(
    sysconfig: SysConfig = None,
    *,
    env: Mapping[str, str] | None = None,
    system_properties: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The flat system properties from ``sysconfig`` (None, a mapping, a file, or files where later win).

    Files are Java properties (commons-configuration semantics, in-file interpolation). When
    ``jobconf.dir`` is set and ``jobconf.fullyQualifiedPath`` is not, the latter becomes
    ``file://<jobconf.dir>`` (standalone ``JobScheduler``).
    """
    return read_sysconfig(sysconfig, environment(env), system_properties or {}).props


def read_sysconfig(
    sysconfig: SysConfig, env: Mapping[str, str], system_properties: Mapping[str, str]
) -> LoadedSysConfig:
    """:func:`load_sysconfig` with the config tree and key locations kept."""
    props: dict[str, str] = {}
    parsed_files: list[PropertiesFile] = []
    read: list[str] = []
    origin: str | None = None
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
            warnings: list[str] = []
            parsed_files.append(parsed)
            read.append(os.path.abspath(name))
            props.update(checked_properties(parsed, warnings))
            for warning in warnings:
                _log.warning("%s", warning)
            origin = name
    if K.JOB_CONFIG_FILE_DIR_KEY in props and K.JOB_CONFIG_FILE_GENERAL_PATH_KEY not in props:
        props[K.JOB_CONFIG_FILE_GENERAL_PATH_KEY] = "file://" + props[K.JOB_CONFIG_FILE_DIR_KEY]

    def locate(key: str) -> tuple[str | None, int | None]:
        for parsed in reversed(parsed_files):
            if key in parsed.entries:
                return parsed.location(key)
        return origin, None

    tree = properties_to_config(props, locate=locate, path=origin)
    return LoadedSysConfig(props, tree, origin, locate, tuple(read))
