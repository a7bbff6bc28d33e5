"""HOCON path expressions as typesafe config 1.4.1's ``PathParser`` reads them and ``Path.render`` writes them.

``Path.newPath`` is also how Gobblin validates property keys, so :func:`parse_path_expression` decides which
Java-properties keys can become config paths.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from .chars import unicode_trim
from .render import render_json_string
from .tokenizer import tokenize
from .tokens import T_BOOL, T_END, T_NULL, T_NUM, T_PROBLEM, T_STR, T_UNQ, T_WS, Token

__all__ = ["BadPath", "path_from_tokens", "parse_path_expression", "render_path"]


class BadPath(ValueError):
    """An invalid HOCON path expression (typesafe ``ConfigException.BadPath``)."""


_FAST_PATH_RE = re.compile(r"[A-Za-z_][A-Za-z_\-]*(?:\.[A-Za-z_][A-Za-z_\-]*)*")


def path_from_tokens(tokens: Sequence[Token], original: str) -> tuple[str, ...]:
    """typesafe ``PathParser.parsePathExpression`` over already-read tokens, raising :class:`BadPath`."""
    if not tokens:
        raise BadPath("Expecting a field name or path here, but got nothing")
    elements: list[list[str]] = [[]]
    can_be_empty = [False]

    def add_text(text: str, quoted: bool) -> None:
        if quoted:
            elements[-1].append(text)
            if text == "" and not "".join(elements[-1]):
                can_be_empty[-1] = True
            return
        parts = text.split(".")
        elements[-1].append(parts[0])
        for part in parts[1:]:
            elements.append([part])
            can_be_empty.append(False)

    for token in tokens:
        if token.kind == T_WS or token.kind == T_END:
            continue
        if token.kind == T_STR:
            add_text(token.text, True)
        elif token.kind in (T_NUM, T_BOOL, T_NULL, T_UNQ):
            add_text(token.text, False)
        elif token.kind == T_PROBLEM:
            raise BadPath(f"{token.message} (you can double-quote the key if you really want it)")
        else:
            raise BadPath(
                f"Token not allowed in path expression: {token.describe()} "
                "(you can double-quote this token if you really want it here)"
            )
    result: list[str] = []
    for parts, empty_ok in zip(elements, can_be_empty, strict=True):
        element = "".join(parts)
        if element == "" and not empty_ok:
            raise BadPath(
                "path has a leading, trailing, or two adjacent period '.' "
                '(use quoted "" empty string if you want an empty element)'
            )
        result.append(element)
    return tuple(result)


def parse_path_expression(text: str) -> tuple[str, ...]:
    """typesafe ``Path.newPath``: split a path expression into elements, raising :class:`BadPath`."""
    trimmed = unicode_trim(text)
    if _FAST_PATH_RE.fullmatch(trimmed):
        return tuple(trimmed.split("."))
    tokens = tokenize(text)
    return path_from_tokens([t for t in tokens if t.kind != T_END], text)


def _has_funky_chars(element: str) -> bool:
    for ch in element:
        if ch in "-_":
            continue
        if ch.isalpha() or unicodedata.category(ch) == "Nd":
            if len(ch.encode("utf-16-le")) == 2:  # Java works on UTF-16 units; surrogates are not letters
                continue
        return True
    return False



def render_path(path: Sequence[str]) -> str:
    """typesafe ``Path.render``: elements joined with ``.``, quoted when they hold unusual characters."""
    return ".".join(
        render_json_string(element) if (element == "" or _has_funky_chars(element)) else element
        for element in path
    )
