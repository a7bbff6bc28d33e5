"""HOCON ``include`` statements: finding and reading the included files.

Deliberately different from typesafe: ``include "x"`` and ``include file("x")`` are looked up relative to the
including file's folder, then the working directory (typesafe: the classpath, resp. the working directory);
``classpath(...)`` and non-``file:`` URLs find nothing; an included ``.json`` file is read as HOCON, like every job
file (typesafe reads it as strict JSON). As in typesafe, a name without a known extension reads
``x.conf``, ``x.json`` and ``x.properties`` (merged in that order of priority), a ``.properties`` file becomes
an object of strings, a missing file is an empty object unless ``required(...)``, and includes may not loop.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import unquote, urlparse

from gobblin_py.sdk.config_errors import ConfigError

from ..properties import load_properties, read_text_file
from .parser import parse_document
from .tree import object_from_path_map
from .values import HObj, HStr, HValue

__all__ = ["Includer"]


class Includer:
    """Resolves ``include`` statements (relative to the including file, then the working directory)."""

    def __init__(self, stack: tuple[str, ...], cwd: str | None) -> None:
        self.stack = stack
        self.cwd = cwd

    def _candidates(self, name: str, including: str | None) -> list[str]:
        if os.path.isabs(name):
            return [name]
        out = []
        if including is not None:
            out.append(os.path.join(os.path.dirname(os.path.abspath(including)), name))
        out.append(os.path.join(self.cwd or os.getcwd(), name))
        return list(dict.fromkeys(out))

    def include(self, kind: str, name: str, required: bool, including: str | None, line: int) -> HObj:
        paths: list[str] = []
        if kind == "url":
            parsed = urlparse(name)
            if parsed.scheme == "file":
                paths = [unquote(parsed.path)]
        elif kind in ("file", "heuristic"):
            base, ext = os.path.splitext(name)
            if kind == "heuristic" and ext.lower() not in (".conf", ".json", ".properties"):
                names = [name + ".conf", name + ".json", name + ".properties"]
            else:
                names = [name]
            for candidate in names:
                found = next((c for c in self._candidates(candidate, including) if os.path.isfile(c)), None)
                if found is not None:
                    paths.append(found)
        # "classpath" includes find nothing: there is no classpath.
        if not paths:
            if required:
                raise ConfigError(
                    f"required include '{name}' was not found",
                    path=including,
                    line=line,
                    key="include",
                    hint="relative include names are looked up next to the including file, then in the working "
                    "directory; fix the name or drop required(...)",
                )
            return HObj({})
        result: HObj | None = None
        for found in paths:
            loaded = self._load(found, including, line)
            result = loaded if result is None else result.with_fallback(loaded)  # type: ignore[assignment]
        assert result is not None
        return result

    def _load(self, found: str, including: str | None, line: int) -> HObj:
        absolute = os.path.abspath(found)
        if absolute in self.stack:
            raise ConfigError(
                "include cycle: " + " -> ".join(self.stack + (absolute,)),
                path=including,
                line=line,
                key="include",
                hint="remove one of the include statements",
            )
        if found.lower().endswith(".properties"):
            parsed = load_properties(found, delimiter_parsing_disabled=True, env={})
            raw = {key: values[-1] for key, values in parsed.entries.items() if values}
            return _from_java_properties(raw)
        return Includer(self.stack + (absolute,), self.cwd).parse_file(found)

    def parse_text(self, text: str, path: str | None) -> HObj:
        """Parse ``text`` read from ``path``, its includes resolved by this includer."""
        result = parse_document(text, path, self)
        assert isinstance(result, HObj)
        return result

    def parse_value(self, text: str, path: str | None) -> HValue:
        """Like :meth:`parse_text`, but the root may also be a list."""
        return parse_document(text, path, self, allow_list_root=True)

    def parse_file(self, path: str) -> HObj:
        """Read (UTF-8) and parse the HOCON file at ``path``."""
        return self.parse_text(read_text_file(path), str(path))


def _from_java_properties(props: Mapping[str, str]) -> HObj:
    """typesafe ``PropertiesParser.fromProperties``: keys split on dots, objects win over strings."""
    paths = {tuple(key.split(".")): HStr(value) for key, value in props.items()}
    scopes = {path[:i] for path in paths for i in range(1, len(path))}
    return object_from_path_map([(path, value) for path, value in paths.items() if path not in scopes])
