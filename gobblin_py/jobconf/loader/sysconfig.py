"""The system configuration: Gobblin's ``gobblin.properties``-style files, the lowest level under every job."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

from gobblin_py.sdk import keys as K
from ..convert import properties_to_config
from gobblin_py.sdk.config_errors import ConfigError
from ..hocon import HObj
from ..properties import PropertiesFile, load_properties
from .job_config import KeyLocator
from .job_files import PathLike
from .levels import checked_properties

_log = logging.getLogger(__name__)

__all__ = ["SysConfig", "LoadedSysConfig", "load_sysconfig", "read_sysconfig", "environment"]

SysConfig = Union[None, PathLike, Mapping[str, str], Sequence[PathLike]]


def environment(env: Optional[Mapping[str, str]]) -> Mapping[str, str]:
    """``env``, or the process environment when None."""
    return os.environ if env is None else env


@dataclass
class LoadedSysConfig:
    """The system properties, their config tree, the file they came from and where each key was set."""

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
    return read_sysconfig(sysconfig, environment(env), system_properties or {}).props


def read_sysconfig(
    sysconfig: SysConfig, env: Mapping[str, str], system_properties: Mapping[str, str]
) -> LoadedSysConfig:
    """:func:`load_sysconfig` with the config tree and key locations kept."""
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
            warnings: List[str] = []
            parsed_files.append(parsed)
            props.update(checked_properties(parsed, warnings))
            for warning in warnings:
                _log.warning("%s", warning)
            origin = name
    if K.JOB_CONFIG_FILE_DIR_KEY in props and K.JOB_CONFIG_FILE_GENERAL_PATH_KEY not in props:
        props[K.JOB_CONFIG_FILE_GENERAL_PATH_KEY] = "file://" + props[K.JOB_CONFIG_FILE_DIR_KEY]

    def locate(key: str) -> Tuple[Optional[str], Optional[int]]:
        for parsed in reversed(parsed_files):
            if key in parsed.entries:
                return parsed.location(key)
        return origin, None

    tree = properties_to_config(props, locate=locate, path=origin)
    return LoadedSysConfig(props, tree, origin, locate)
