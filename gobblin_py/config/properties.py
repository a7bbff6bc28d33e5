"""Java-properties parsing with the exact semantics of Apache commons-configuration 1.10.

Gobblin reads ``.pull``/``.job`` job files, ``.properties`` globals and the system configuration with
``PropertiesConfiguration`` (then ``ConfigurationConverter.getProperties``). This module reproduces that
pipeline (spec ``gobblin-runtime.md`` §1.5, §1.6):

* logical lines: blank lines and lines starting with ``#``/``!`` are comments (also in the middle of a
  continuation); other lines are trimmed (Java ``trim``); an odd number of trailing backslashes joins the
  line with the next one;
* key/value split on the first whitespace run, ``=`` or ``:``; Java unescaping of keys and values (``\\,``
  is kept in values for the list splitter);
* list splitting on ``,`` (only when the comma index is > 0; ``\\,`` and ``\\\\`` honoured; pieces trimmed)
  unless delimiter parsing is disabled; duplicate keys accumulate;
* ``include`` (any case) loads other files at that point;
* output: every stored element is interpolated (``${key}``, ``${env:X}``, ``${sys:x}``, ``$${`` escape,
  first element of multi-valued keys, unresolved references kept verbatim, cycles rejected) and the
  elements of a key are joined with ``,``.

Differences from commons-configuration, all deliberate: files (also included ones) are decoded as UTF-8
with a leading byte-order mark dropped; includes are resolved against the including file's folder, then
the working directory (never the user's home or a classpath); ``${const:...}`` finds nothing (there are
no Java constants); lines without a separator and include cycles are reported instead of being silently
turned into an empty key or a stack overflow.
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass, field
from urllib.parse import unquote, urlparse
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Tuple

from .errors import ConfigError

__all__ = [
    "LineProblem",
    "PropertiesFile",
    "parse_properties",
    "load_properties",
    "java_trim",
    "split_list",
    "read_text_file",
]

LIST_DELIMITER = ","
_DISABLED_DELIMITER = "\0"
_ESCAPE = "\\"

# Java String.trim(): every char <= U+0020.
_JAVA_TRIM_CHARS = "".join(chr(c) for c in range(0x21))

# java.util.regex without UNICODE_CHARACTER_CLASS: \s is [ \t\n\x0B\f\r]; "." excludes line terminators.
_WS = r"[ \t\n\x0b\f\r]"
_ANY = r"[^\n\r\u0085\u2028\u2029]"
_PROPERTY_RE = re.compile(
    r"((?:[^ \t\n\x0b\f\r\\=:]|\\" + _ANY + r")*)"  # key
    r"(" + _WS + r"*(?:" + _WS + r"+|[=:])" + _WS + r"*)"  # separator (with surrounding whitespace)
    r"(" + _ANY + r"*)"  # value
)
_PHYSICAL_LINE_RE = re.compile(r"\r\n|\r|\n")
# String.equalsIgnoreCase("include"), including the two Unicode i's that Java case-folds to 'i'.
_INCLUDE_KEY_RE = re.compile("[iI\u0130\u0131][nN][cC][lL][uU][dD][eE]")


def java_trim(text: str) -> str:
    """Java ``String.trim()``: strip every character <= U+0020 from both ends."""
    return text.strip(_JAVA_TRIM_CHARS)


def split_list(text: str, delimiter: str = LIST_DELIMITER, trim: bool = True) -> List[str]:
    """commons-configuration ``PropertyConverter.split``: split on ``delimiter`` honouring ``\\`` escapes.

    ``\\<delimiter>`` gives a literal delimiter and ``\\\\`` a single backslash; any other escaped character
    keeps its backslash. Empty pieces are kept; with ``trim`` every piece is Java-trimmed.
    """
    pieces: List[str] = []
    token: List[str] = []
    in_escape = False
    for ch in text:
        if in_escape:
            if ch != delimiter and ch != _ESCAPE:
                token.append(_ESCAPE)
            token.append(ch)
            in_escape = False
        elif ch == delimiter:
            piece = "".join(token)
            pieces.append(java_trim(piece) if trim else piece)
            token = []
        elif ch == _ESCAPE:
            in_escape = True
        else:
            token.append(ch)
    if in_escape:
        token.append(_ESCAPE)
    piece = "".join(token)
    pieces.append(java_trim(piece) if trim else piece)
    return pieces


def _split_omit_empty(text: str, separator: str) -> List[str]:
    """commons-lang ``StringUtils.split(str, char)``: no empty tokens, no trimming."""
    return [piece for piece in text.split(separator) if piece]


class _UnicodeEscapeError(ValueError):
    pass


def _java_hex_digit(ch: str) -> int:
    """``Character.digit(ch, 16)``."""
    code = ord(ch)
    if 0x30 <= code <= 0x39:
        return code - 0x30
    if 0x61 <= code <= 0x66:
        return code - 0x61 + 10
    if 0x41 <= code <= 0x46:
        return code - 0x41 + 10
    if 0xFF21 <= code <= 0xFF26:  # fullwidth A-F
        return code - 0xFF21 + 10
    if 0xFF41 <= code <= 0xFF46:  # fullwidth a-f
        return code - 0xFF41 + 10
    digit = unicodedata.decimal(ch, -1)
    return digit if digit < 16 else -1


def _java_parse_hex(text: str) -> int:
    """``Integer.parseInt(text, 16)`` for the 4-character window of a ``\\uXXXX`` escape."""
    sign = 1
    digits = text
    if text[:1] in ("+", "-"):
        sign = -1 if text[0] == "-" else 1
        digits = text[1:]
    if not digits:
        raise _UnicodeEscapeError(text)
    value = 0
    for ch in digits:
        digit = _java_hex_digit(ch)
        if digit < 0:
            raise _UnicodeEscapeError(text)
        value = value * 16 + digit
    return sign * value


def _join_surrogates(text: str) -> str:
    """Java strings are UTF-16: turn ``\\uD83D\\uDE00`` escape pairs into one code point."""
    if not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _unescape_java(text: str, delimiter: Optional[str]) -> str:
    """``unescapeJava``: commons-lang 2.6 for keys (``delimiter=None``), PropertiesConfiguration for values.

    Escapes ``\\t \\n \\r \\f \\b \\\\ \\" \\'`` and ``\\uXXXX``; any other escaped char stands for itself, except
    that an escaped list delimiter keeps its backslash (values only). A lone trailing backslash is kept;
    an unfinished ``\\u`` at the end is dropped.
    """
    if _ESCAPE not in text:
        return text
    out: List[str] = []
    unicode_buf: List[str] = []
    had_slash = False
    in_unicode = False
    for ch in text:
        if in_unicode:
            unicode_buf.append(ch)
            if len(unicode_buf) == 4:
                value = _java_parse_hex("".join(unicode_buf))
                out.append(chr(value & 0xFFFF))
                unicode_buf = []
                in_unicode = False
                had_slash = False
            continue
        if had_slash:
            had_slash = False
            if ch == "\\":
                out.append("\\")
            elif ch == "'":
                out.append("'")
            elif ch == '"':
                out.append('"')
            elif ch == "r":
                out.append("\r")
            elif ch == "f":
                out.append("\f")
            elif ch == "t":
                out.append("\t")
            elif ch == "n":
                out.append("\n")
            elif ch == "b":
                out.append("\b")
            elif delimiter is not None and ch == delimiter:
                out.append("\\")
                out.append(delimiter)
            elif ch == "u":
                in_unicode = True
            else:
                out.append(ch)
            continue
        if ch == "\\":
            had_slash = True
            continue
        out.append(ch)
    if had_slash:
        out.append("\\")
    return _join_surrogates("".join(out))


def _count_trailing_backslashes(line: str) -> int:
    count = 0
    for ch in reversed(line):
        if ch != "\\":
            break
        count += 1
    return count


def _is_comment_line(line: str) -> bool:
    stripped = java_trim(line)
    return not stripped or stripped[0] in "#!"


def _physical_lines(text: str) -> List[str]:
    """``BufferedReader.readLine`` semantics: terminators ``\\n``, ``\\r``, ``\\r\\n``; no trailing empty line."""
    lines = _PHYSICAL_LINE_RE.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


@dataclass(frozen=True)
class LineProblem:
    """A logical line that commons-configuration accepts silently but that is almost certainly a mistake."""

    path: Optional[str]
    line: int
    kind: str  # "no-separator", "empty-key" or "dangling-continuation"
    text: str

    def describe(self) -> str:
        """A one-line human description of the problem."""
        where = self.path if self.path is not None else "<properties>"
        if self.kind == "no-separator":
            return f"line {self.line} of {where} has no key/value separator (`{self.text}`)"
        if self.kind == "empty-key":
            return f"line {self.line} of {where} has an empty key (`{self.text}`)"
        return (
            f"line {self.line} of {where} ends with a continuation backslash at the end of the file, "
            f"so it is ignored (`{self.text}`)"
        )


class _InterpolationCycle(Exception):
    def __init__(self, original: str, chain: List[str]) -> None:
        super().__init__(original)
        self.original = original
        self.chain = chain


class _Interpolator:
    """commons-lang 2.6 ``StrSubstitutor`` driven by a commons-configuration ``ConfigurationInterpolator``."""

    def __init__(
        self,
        default_lookup: Callable[[str], Optional[str]],
        env: Mapping[str, str],
        system_properties: Mapping[str, str],
    ) -> None:
        self._default_lookup = default_lookup
        self._env = env
        self._sys = system_properties
        self._env_interpolator: Optional[_Interpolator] = None

    # -- variable lookup (ConfigurationInterpolator.lookup) -----------------------------------------
    def lookup(self, var: str) -> Optional[str]:
        colon = var.find(":")
        if colon >= 0:
            prefix, name = var[:colon], var[colon + 1 :]
            value: Optional[str] = None
            if prefix == "sys":
                raw = self._sys.get(name)
                value = None if raw is None else str(raw)
            elif prefix == "env":
                value = self._lookup_env(name)
            # "const" (Java static fields) and unknown prefixes find nothing.
            if value is not None:
                return value
        return self._default_lookup(var)

    def _lookup_env(self, name: str) -> Optional[str]:
        # EnvironmentLookup -> EnvironmentConfiguration.getString: the variable's value is list-split,
        # its first element is taken and interpolated against the environment itself.
        if self._env_interpolator is None:
            env = self._env

            def env_default(var: str) -> Optional[str]:
                raw = env.get(var)
                return None if raw is None else split_list(raw)[0]

            self._env_interpolator = _Interpolator(env_default, env, self._sys)
        raw = self._env.get(name)
        if raw is None:
            return None
        return self._env_interpolator.replace(split_list(raw)[0])

    # -- substitution (StrSubstitutor.substitute) ---------------------------------------------------
    def replace(self, text: str) -> str:
        """Interpolate ``text``; raises ``_InterpolationCycle`` on an infinite loop."""
        if "${" not in text:
            return text
        return self._substitute(text, None)

    def _substitute(self, region: str, prior: Optional[List[str]]) -> str:
        out: List[str] = []
        pos = 0
        end = len(region)
        while pos < end:
            start = region.find("${", pos)
            if start < 0:
                out.append(region[pos:])
                break
            out.append(region[pos:start])
            if _last_char(out) == "$":
                # "$${": the escape char is dropped and scanning resumes after the "$" of the prefix.
                _drop_last_char(out)
                out.append("$")
                pos = start + 1
                continue
            close = region.find("}", start + 2)
            if close < 0:
                out.append(region[start:])
                break
            var = region[start + 2 : close]
            if prior is None:
                prior = [region]
            if var in prior:
                raise _InterpolationCycle(prior[0], prior[1:] + [var])
            prior.append(var)
            value = self.lookup(var)
            if value is not None:
                out.append(self._substitute(value, prior))
            else:
                out.append(region[start : close + 1])
            prior.pop()
            pos = close + 1
        return "".join(out)


def _last_char(pieces: List[str]) -> str:
    for piece in reversed(pieces):
        if piece:
            return piece[-1]
    return ""


def _drop_last_char(pieces: List[str]) -> None:
    for index in range(len(pieces) - 1, -1, -1):
        if pieces[index]:
            pieces[index] = pieces[index][:-1]
            return


@dataclass
class PropertiesFile:
    """The content of one Java-properties file (plus its includes) as commons-configuration stores it.

    ``entries`` maps each key (in first-definition order) to its stored elements *before* interpolation;
    ``origins`` gives the ``(file, line)`` of every ``addProperty`` call for a key; ``problems`` lists
    separator-less lines, empty keys and a dangling final continuation. Use :meth:`to_dict` for the
    ``ConfigurationConverter.getProperties`` view (interpolated, elements joined with ``,``).
    """

    path: Optional[str]
    delimiter_parsing_disabled: bool = False
    entries: Dict[str, List[str]] = field(default_factory=dict)
    origins: Dict[str, List[Tuple[Optional[str], int]]] = field(default_factory=dict)
    problems: List[LineProblem] = field(default_factory=list)
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    system_properties: Mapping[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._interpolator = _Interpolator(self._first_element, self.env, self.system_properties)

    def _first_element(self, key: str) -> Optional[str]:
        values = self.entries.get(key)
        if not values:
            return None
        return values[0]

    def location(self, key: str) -> Tuple[Optional[str], Optional[int]]:
        """``(file, line)`` where ``key`` was first defined (``(self.path, None)`` if unknown)."""
        origins = self.origins.get(key)
        if origins:
            return origins[0]
        return self.path, None

    def interpolate(self, text: str, *, key: Optional[str] = None) -> str:
        """Interpolate ``text`` against this file's keys (plus ``env:``/``sys:`` lookups)."""
        try:
            return self._interpolator.replace(text)
        except _InterpolationCycle as cycle:
            path, line = self.location(key) if key is not None else (self.path, None)
            chain = " -> ".join(cycle.chain)
            raise ConfigError(
                f"infinite loop in property interpolation of '{cycle.original}': {chain}",
                path=path,
                line=line,
                key=key,
                hint="make sure the ${...} references do not refer back to each other",
            ) from None
        except RecursionError:
            path, line = self.location(key) if key is not None else (self.path, None)
            raise ConfigError(
                "property interpolation is nested too deeply",
                path=path,
                line=line,
                key=key,
                hint="shorten the chain of ${...} references",
            ) from None

    def get_list(self, key: str) -> List[str]:
        """``Configuration.getList``: every element of ``key`` interpolated (empty list if absent)."""
        return [self.interpolate(value, key=key) for value in self.entries.get(key, [])]

    def to_dict(self) -> Dict[str, str]:
        """``ConfigurationConverter.getProperties``: interpolated elements joined with ``,``."""
        return {key: LIST_DELIMITER.join(self.get_list(key)) for key in self.entries}

    def raw_dict(self) -> Dict[str, str]:
        """The stored elements joined with ``,`` without interpolation."""
        return {key: LIST_DELIMITER.join(values) for key, values in self.entries.items()}


class _Reader:
    """Loads one file (and its includes) into a :class:`PropertiesFile`."""

    def __init__(self, target: PropertiesFile, cwd: Optional[str]) -> None:
        self.target = target
        self.cwd = cwd
        self.include_stack: List[str] = []

    def _add_property(self, key: str, value: str, origin: Tuple[Optional[str], int]) -> None:
        delimiter = _DISABLED_DELIMITER if self.target.delimiter_parsing_disabled else LIST_DELIMITER
        if value.find(delimiter) > 0:
            elements = split_list(value, delimiter, True)
        else:
            elements = [value]
        self.target.entries.setdefault(key, []).extend(elements)
        self.target.origins.setdefault(key, []).append(origin)

    def read_text(self, text: str, path: Optional[str]) -> None:
        if text.startswith("\ufeff"):
            text = text[1:]
        for line_no, logical in self._logical_lines(text, path):
            self._handle_line(logical, line_no, path)

    def _logical_lines(self, text: str, path: Optional[str]) -> Iterator[Tuple[int, str]]:
        buffer: List[str] = []
        start_line = 0
        for index, line in enumerate(_physical_lines(text), start=1):
            if _is_comment_line(line):
                continue
            line = java_trim(line)
            if not buffer:
                start_line = index
            if _count_trailing_backslashes(line) % 2 != 0:
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

    def _handle_line(self, logical: str, line_no: int, path: Optional[str]) -> None:
        match = _PROPERTY_RE.fullmatch(logical)
        if match is None:
            raw_key, raw_value = "", ""
            self.target.problems.append(LineProblem(path, line_no, "no-separator", logical))
        else:
            raw_key = java_trim(match.group(1))
            raw_value = java_trim(match.group(3))
            if raw_key == "":
                self.target.problems.append(LineProblem(path, line_no, "empty-key", logical))
        try:
            key = _unescape_java(raw_key, None)
        except _UnicodeEscapeError as exc:
            raise ConfigError(
                f"unable to parse unicode value '{exc}' in the key of `{logical}`",
                path=path,
                line=line_no,
                hint="a \\u escape needs exactly four hex digits",
            ) from None
        try:
            value = _unescape_java(raw_value, LIST_DELIMITER)
        except _UnicodeEscapeError as exc:
            raise ConfigError(
                f"unable to parse unicode value '{exc}'",
                path=path,
                line=line_no,
                key=key,
                hint="a \\u escape needs exactly four hex digits",
            ) from None
        if _INCLUDE_KEY_RE.fullmatch(key):
            if self.target.delimiter_parsing_disabled:
                names = [value]
            else:
                names = _split_omit_empty(value, LIST_DELIMITER)
            for name in names:
                resolved = self.target.interpolate(java_trim(name), key=None)
                self._include(resolved, path, line_no, key)
            return
        self._add_property(key, value, (path, line_no))

    def _include(self, name: str, including: Optional[str], line_no: int, key: str) -> None:
        candidates: List[str] = []
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


def _read_text_file(path: str, referrer: Optional[str] = None, line: Optional[int] = None) -> str:
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
    # Java's InputStreamReader replaces malformed input instead of failing.
    return data.decode("utf-8", errors="replace")


def parse_properties(
    text: str,
    *,
    path: Optional[str] = None,
    delimiter_parsing_disabled: bool = False,
    env: Optional[Mapping[str, str]] = None,
    system_properties: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
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
    path: "str | os.PathLike[str]",
    *,
    delimiter_parsing_disabled: bool = False,
    env: Optional[Mapping[str, str]] = None,
    system_properties: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
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


def read_text_file(path: "str | os.PathLike[str]") -> str:
    """Read a config file as Gobblin does (UTF-8, malformed bytes replaced); ConfigError if unreadable."""
    return _read_text_file(os.fspath(path))
