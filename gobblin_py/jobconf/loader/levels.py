"""One level of a job's fallback chain: a Java-properties or HOCON file read over everything below it.

Every loaded file gets ``job.config.path`` (its absolute path) at its top, as Gobblin's ``PullFileLoader``
injects it, and is merged over the levels below with ``withFallback``. Of the lines commons-configuration
accepts silently but that are almost certainly mistakes, an empty key is an error here; a line without a
separator is read the way ``java.util.Properties`` reads it (the whole text is the key, the value is empty) —
as Gobblin's command-line launcher and its own copy test load such a file, while its scheduler rejects it — and
warned of with the likely fix; a continuation running into the end of the file is a warning.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from gobblin_py.jobconf import keys as K
from gobblin_py.sdk.config_errors import ConfigError

from ..convert import config_get_boolean, desanitize_key, merge_with_fallback, properties_to_config
from ..hocon import HObj, iter_leaves, render_path
from ..properties import LineProblem, PropertiesFile, load_properties
from ..properties.syntax import unescape_java
from .job_config import KeyLocator

__all__ = ["Level", "LevelReader", "checked_properties"]

_SEPARATOR_TYPO_RE = re.compile(r"(.+?)[-_](true|false|yes|no|[0-9]+)", re.IGNORECASE)


@dataclass
class Level:
    """One loaded file of a fallback chain."""

    path: str
    tree: HObj  # already merged over everything below it
    keys: list[str]  # keys this file defines, in file order
    locate: KeyLocator  # key -> (file, line) for error messages


class LevelReader:
    """Reads job and global files as levels, with one session's environment and working directory."""

    def __init__(
        self,
        env: Mapping[str, str],
        system_properties: Mapping[str, str],
        cwd: str,
        sys_origin: str | None,
    ) -> None:
        self.env = env
        self.system_properties = system_properties
        self.cwd = cwd
        self.sys_origin = sys_origin

    def _delimiter_parsing_disabled(self, fallback: HObj) -> bool:
        return config_get_boolean(
            fallback,
            K.PROPERTY_DELIMITER_PARSING_ENABLED_KEY,
            K.DEFAULT_PROPERTY_DELIMITER_PARSING_ENABLED,
            env=self.env,
            path=self.sys_origin,
        )

    def props_level(self, path: str, fallback: HObj, warnings: list[str]) -> Level:
        """A Java-properties file over ``fallback`` (which also decides ``property.parsing.enablekey``)."""
        parsed = load_properties(
            path,
            delimiter_parsing_disabled=self._delimiter_parsing_disabled(fallback),
            env=self.env,
            system_properties=self.system_properties,
            cwd=self.cwd,
        )
        props = checked_properties(parsed, warnings)
        converted = properties_to_config(props, locate=parsed.location, path=path)
        tree = merge_with_fallback([_config_path_object(os.path.abspath(path)), converted, fallback])
        return Level(path, tree, list(props) + [K.JOB_CONFIG_FILE_PATH_KEY], parsed.location)

    def hocon_level(self, path: str, fallback: HObj) -> Level:
        """A HOCON file over ``fallback`` (unresolved: substitutions see the whole chain later)."""
        from ..hocon.document import parse_hocon_file

        parsed = parse_hocon_file(path, cwd=self.cwd)
        tree = merge_with_fallback([_config_path_object(os.path.abspath(path)), parsed, fallback])
        return Level(path, tree, _flat_keys(parsed) + [K.JOB_CONFIG_FILE_PATH_KEY], lambda key: (path, None))


def _config_path_object(path: str) -> HObj:
    return properties_to_config({K.JOB_CONFIG_FILE_PATH_KEY: path})


def _flat_keys(tree: HObj) -> list[str]:
    return [desanitize_key(render_path(path)) for path, _ in iter_leaves(tree)]


def _separator_warning(problem: LineProblem) -> str:
    typo = _SEPARATOR_TYPO_RE.fullmatch(problem.text)
    suggestion = f"; did you mean `{typo.group(1)}={typo.group(2)}`?" if typo else "; write it as key=value"
    name = os.path.basename(problem.path) if problem.path else "<properties>"
    return (f"line {problem.line} of {name} has no key/value separator (`{problem.text}`): read as that key with "
            f"an empty value, as java.util.Properties reads it (Gobblin's job scheduler rejects such a file)"
            f"{suggestion}")


def checked_properties(parsed: PropertiesFile, warnings: list[str]) -> dict:
    """The file's properties, after raising :class:`ConfigError` for an empty key and warning of the rest.

    A separator-less line becomes a key of its own (whole text, empty value) instead of commons-configuration's
    empty key, which no Gobblin configuration could hold.
    """
    separator_less: list[str] = []
    for problem in parsed.problems:
        if problem.kind == "dangling-continuation":
            warnings.append(problem.describe())
        elif problem.kind == "no-separator":
            warnings.append(_separator_warning(problem))
            separator_less.append(unescape_java(problem.text, None))
        else:
            name = os.path.basename(problem.path) if problem.path else "<properties>"
            raise ConfigError(f"line {problem.line} of {name} has an empty key (`{problem.text}`)",
                              path=problem.path, line=problem.line,
                              hint="put the key before the '=' or ':' separator; Gobblin rejects empty keys")
    props = parsed.to_dict()
    if separator_less:
        props.pop("", None)
        for key in separator_less:
            props.setdefault(key, "")
    return props
