"""Reading Java-properties files (and their ``include`` lines) into a :class:`PropertiesFile`."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from urllib.parse import unquote, urlparse

from gobblin_py.sdk.config_errors import ConfigError

from .model import LineProblem, PropertiesFile
from .syntax import (
    DISABLED_DELIMITER,
    INCLUDE_KEY_RE,
    LIST_DELIMITER,
    PROPERTY_RE,
    UnicodeEscapeError,
    count_trailing_backslashes,
    is_comment_line,
    java_trim,
    physical_lines,
    split_list,
    split_omit_empty,
    unescape_java,
)

__all__ = ["parse_properties", "load_properties", "read_text_file", "checked_text"]


class _Reader:
    """Loads one file (and its includes) into a :class:`PropertiesFile`."""

    def __init__(self, target: PropertiesFile, cwd: str | None) -> None:
        self.target = target
        self.cwd = cwd
        self.include_stack: list[str] = []

    def _add_property(self, key: str, value: str, origin: tuple[str | None, int]) -> None:
        delimiter = DISABLED_DELIMITER if self.target.delimiter_parsing_disabled else LIST_DELIMITER
        if value.find(delimiter) > 0:
            elements = split_list(value, delimiter, True)
        else:
            elements = [value]
        self.target.entries.setdefault(key, []).extend(elements)
        self.target.origins.setdefault(key, []).append(origin)
        self.target.element_origins.setdefault(key, []).extend([origin] * len(elements))

    def read_text(self, text: str, path: str | None) -> None:
        if text.startswith("\ufeff"):
            text = text[1:]
        for line_no, logical in self._logical_lines(text, path):
            self._handle_line(logical, line_no, path)

    def _logical_lines(self, text: str, path: str | None) -> Iterator[tuple[int, str]]:
        buffer: list[str] = []
        start_line = 0
        for index, line in enumerate(physical_lines(text), start=1):
            if is_comment_line(line):
                continue
            line = java_trim(line)
            if not buffer:
                start_line = index
            if count_trailing_backslashes(line) % 2 != 0:
                buffer.append(line[:-1])
                continue
            buffer.append(line)
            yield start_line, "".join(buffer)
            buffer = []
        if buffer:
            # commons-configuration drops a property whose continuation runs into the end of the file.
            self.target.problems.append(
                LineProblem(path, start_line, "dangling-continuation", "".join(buffer))
            )

    def _handle_line(self, logical: str, line_no: int, path: str | None) -> None:
        match = PROPERTY_RE.fullmatch(logical)
        if match is None:
            raw_key, raw_value = "", ""
            self.target.problems.append(LineProblem(path, line_no, "no-separator", logical))
            try:  # the whole line becomes a key later (levels.checked_properties): its escapes must be sound
                unescape_java(logical, None)
            except UnicodeEscapeError as exc:
                raise ConfigError(f"unable to parse unicode value '{exc}' in `{logical}`", path=path, line=line_no,
                                  hint="a \\u escape needs exactly four hex digits") from None
        else:
            raw_key = java_trim(match.group(1))
            raw_value = java_trim(match.group(3))
            if raw_key == "":
                self.target.problems.append(LineProblem(path, line_no, "empty-key", logical))
        try:
            key = unescape_java(raw_key, None)
        except UnicodeEscapeError as exc:
            raise ConfigError(
                f"unable to parse unicode value '{exc}' in the key of `{logical}`",
                path=path,
                line=line_no,
                hint="a \\u escape needs exactly four hex digits",
            ) from None
        try:
            value = unescape_java(raw_value, LIST_DELIMITER)
        except UnicodeEscapeError as exc:
            raise ConfigError(
                f"unable to parse unicode value '{exc}'",
                path=path,
                line=line_no,
                key=key,
                hint="a \\u escape needs exactly four hex digits",
            ) from None
        if INCLUDE_KEY_RE.fullmatch(key):
            if self.target.delimiter_parsing_disabled:
                names = [value]
            else:
                names = split_omit_empty(value, LIST_DELIMITER)
            for name in names:
                resolved = self.target.interpolate(java_trim(name), key=None)
                self._include(resolved, path, line_no, key)
            return
        self._add_property(key, value, (path, line_no))

    def _include(self, name: str, including: str | None, line_no: int, key: str) -> None:
        candidates: list[str] = []
        location = name
        if name.startswith("file:"):
            location = unquote(urlparse(name).path)
        if location and os.path.isabs(location):
            candidates.append(location)
        elif location:
            if including is not None:
                candidates.append(os.path.join(os.path.dirname(os.path.abspath(including)), location))
            candidates.append(os.path.join(self.cwd or os.getcwd(), location))
        candidates = list(dict.fromkeys(candidates))
        found = next((c for c in candidates if os.path.isfile(c)), None)
        if found is None:
            looked = ", ".join(candidates) if candidates else "nowhere (empty name)"
            raise ConfigError(
                f"cannot resolve include file '{name}' (looked at {looked})",
                path=including,
                line=line_no,
                key=key,
                hint="fix the file name (relative names are resolved against the including file's folder, "
                "then the working directory) or remove the include line",
            )
        absolute = os.path.abspath(found)
        if absolute in self.include_stack:
            chain = " -> ".join(self.include_stack + [absolute])
            raise ConfigError(
                f"include cycle: {chain}",
                path=including,
                line=line_no,
                key=key,
                hint="remove one of the include lines",
            )
        self.include_stack.append(absolute)
        try:
            self.read_text(_read_text_file(found, including, line_no), found)
        finally:
            self.include_stack.pop()


def _read_text_file(path: str, referrer: str | None = None, line: int | None = None) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise ConfigError(
            f"cannot read '{path}': {exc.strerror or exc}",
            path=referrer if referrer is not None else path,
            line=line,
            hint="check that the file exists and is readable",
        ) from None
    return checked_text(data, path)


_LINE_END = re.compile("\r\n|\r|\n")
# C0 controls and DEL, but tab, line feed, form feed and carriage return, which Java-properties and HOCON use
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f]")


def checked_text(data: bytes, path: str) -> str:
    """``data`` decoded as UTF-8; ConfigError naming the file and line of a byte that text does not hold.

    Deliberately stricter than Gobblin, whose reader replaces malformed input and keeps NUL and other control
    characters: such bytes mean a binary or corrupt file, and read on they make keys and values nobody wrote.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start].decode("utf-8", errors="replace")
        raise ConfigError(
            f"byte 0x{data[exc.start]:02x} is not UTF-8 text: this looks like a binary or corrupt file",
            path=path,
            line=_line_at(before, len(before)),
            hint="job and configuration files are UTF-8 text; restore the file or re-save it as UTF-8",
        ) from None
    found = _CONTROL.search(text)
    if found is not None:
        char = found.group()
        name = "a NUL byte" if char == "\x00" else f"the control character U+{ord(char):04X}"
        raise ConfigError(
            f"the line holds {name}: this looks like a binary or corrupt file",
            path=path,
            line=_line_at(text, found.start()),
            hint="job and configuration files are text; remove the character or restore the file",
        )
    return text


def _line_at(text: str, position: int) -> int:
    """The 1-based line of ``position``, lines ending as ``BufferedReader.readLine`` ends them."""
    return len(_LINE_END.findall(text, 0, position)) + 1


def parse_properties(
    text: str,
    *,
    path: str | None = None,
    delimiter_parsing_disabled: bool = False,
    env: Mapping[str, str] | None = None,
    system_properties: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> PropertiesFile:
    """Parse Java-properties ``text`` the way commons-configuration 1.10 loads it from a reader.

    ``path`` is used for error messages and to resolve relative ``include`` names; ``env`` (default:
    ``os.environ``) serves ``${env:X}`` and ``system_properties`` (default: empty) serves ``${sys:x}``.
    Raises :class:`ConfigError` for malformed ``\\u`` escapes, unresolvable or cyclic includes.
    """
    result = PropertiesFile(
        path=None if path is None else str(path),
        delimiter_parsing_disabled=delimiter_parsing_disabled,
        env=os.environ if env is None else env,
        system_properties={} if system_properties is None else system_properties,
    )
    reader = _Reader(result, cwd)
    if path is not None:
        reader.include_stack.append(os.path.abspath(str(path)))
    reader.read_text(text, result.path)
    return result


def load_properties(
    path: str | os.PathLike[str],
    *,
    delimiter_parsing_disabled: bool = False,
    env: Mapping[str, str] | None = None,
    system_properties: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> PropertiesFile:
    """Read and parse the Java-properties file at ``path`` (UTF-8); see :func:`parse_properties`."""
    name = os.fspath(path)
    return parse_properties(
        _read_text_file(name),
        path=name,
        delimiter_parsing_disabled=delimiter_parsing_disabled,
        env=env,
        system_properties=system_properties,
        cwd=cwd,
    )


def read_text_file(path: str | os.PathLike[str]) -> str:
    """Read a config file (UTF-8); ConfigError if unreadable, or if it holds bytes no text file holds."""
    return _read_text_file(os.fspath(path))
