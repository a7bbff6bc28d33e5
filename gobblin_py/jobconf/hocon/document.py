"""Reading a HOCON document, from text or from a file, into an unresolved object tree."""

from __future__ import annotations

import os

from .includes import Includer
from .values import HObj, HValue

__all__ = ["parse_hocon", "parse_hocon_file", "parse_hocon_value"]


def parse_hocon(
    text: str,
    *,
    path: str | None = None,
    cwd: str | None = None,
    _stack: tuple[str, ...] = (),
) -> HObj:
    """Parse HOCON ``text`` into an unresolved :class:`HObj`.

    ``path`` names the text in messages and anchors relative includes (then ``cwd``, default the working
    directory). Errors raise :class:`ConfigError` with the message ``Failed to parse config file <path> at
    lineNo:<n>`` (Gobblin's wording) followed by typesafe's explanation.
    """
    if path is not None and not _stack:
        _stack = (os.path.abspath(path),)
    return Includer(_stack, cwd).parse_text(text, path)


def parse_hocon_file(path: str, *, cwd: str | None = None, _stack: tuple[str, ...] = ()) -> HObj:
    """Read (UTF-8) and parse the HOCON file at ``path``; see :func:`parse_hocon`."""
    if not _stack:
        _stack = (os.path.abspath(path),)
    return Includer(_stack, cwd).parse_file(path)


def parse_hocon_value(text: str, *, path: str | None = None, cwd: str | None = None) -> HValue:
    """typesafe ``Parseable.parseValue``: like :func:`parse_hocon`, but the root may also be a list.

    Job files must hold an object; this is for checking the parser against typesafe's own test strings, many of
    which are lists.
    """
    stack = (os.path.abspath(path),) if path is not None else ()
    return Includer(stack, cwd).parse_value(text, path)
