"""The HOCON parser: typesafe config 1.4.1's ``ConfigDocumentParser`` and ``ConfigParser`` in one pass.

Reproduced: value concatenation on one line (``${num}" items"``, ``The "x" job``), ``+=`` (``${?self}`` plus a
one-element list), duplicate keys merged through ``withFallback`` (so ``a=1`` then ``a.b=2`` keeps only
``a.b``), newlines allowed around separators, ``{`` without separator, ``include`` statements (resolved by an
:class:`IncludeResolver`), and typesafe's error messages; every error is a :class:`ConfigError` reading
``Failed to parse config file <path> at lineNo:<n>: ...`` (Gobblin's wording) with the typesafe line.
"""

from __future__ import annotations

from typing import Protocol

from gobblin_py.sdk.config_errors import ConfigError

from .concat import WrongType, concatenate
from .paths import BadPath, path_from_tokens, render_path
from .tokenizer import tokenize
from .tokens import (
    SIMPLE_KINDS,
    T_BOOL,
    T_COLON,
    T_COMMA,
    T_COMMENT,
    T_END,
    T_EQUALS,
    T_LBRACE,
    T_LBRACKET,
    T_NEWLINE,
    T_NULL,
    T_NUM,
    T_PLUSEQ,
    T_RBRACE,
    T_RBRACKET,
    T_STR,
    T_UNQ,
    T_WS,
    VALUE_KINDS,
    Token,
)
from .tree import MAX_NESTING, create_value_under_path, nested_beyond
from .values import HBool, HList, HNull, HNum, HObj, HRef, HStr, HValue, Origin

__all__ = ["IncludeResolver", "parse_document"]


class IncludeResolver(Protocol):
    """What the parser asks to read an ``include`` statement's target."""

    def include(self, kind: str, name: str, required: bool, including: str | None, line: int) -> HObj:
        """The included object (empty when an optional include finds nothing)."""
        ...


class _ParseError(Exception):
    def __init__(self, message: str, line: int, path: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.path = path


_PARSE_HINT = (
    "this file is HOCON: quote values that contain reserved characters ($ \" { } [ ] : = , + # ` ^ ? ! @ * & \\) "
    "or commas (Java-properties job files use the .pull/.job extensions instead)"
)


class _Parser:
    """typesafe ``ConfigDocumentParser`` + ``ConfigParser`` in one pass."""

    def __init__(self, tokens: list[Token], path: str | None, includer: IncludeResolver) -> None:
        self.tokens = tokens
        self.index = 0
        self.buffer: list[Token] = []
        self.line = 1
        self.path = path
        self.includer = includer
        self.array_count = 0

    # -- token stream -----------------------------------------------------------------------------
    def _next(self) -> Token:
        if self.buffer:
            return self.buffer.pop()
        token = self.tokens[self.index]
        if self.index < len(self.tokens) - 1:
            self.index += 1
        return token

    def _put_back(self, token: Token) -> None:
        self.buffer.append(token)

    def _next_collecting_ws(self) -> Token:
        while True:
            token = self._next()
            if token.kind in (T_WS, T_NEWLINE) or token.is_unquoted_whitespace():
                if token.kind == T_NEWLINE:
                    self.line = token.line + 1
                continue
            if token.kind == T_COMMENT:
                continue
            if token.line > 0:
                self.line = token.line
            return token

    def _error(self, message: str, token: Token | None = None) -> _ParseError:
        line = self.line
        if token is not None and token.kind not in (T_END,) and token.line > 0:
            line = token.line
        return _ParseError(message, line, self.path)

    def _origin(self, token: Token) -> Origin:
        return (self.path, token.line if token.line > 0 else self.line)

    def _check_element_separator(self) -> bool:
        saw_separator = False
        token = self._next()
        while True:
            if token.kind in (T_WS, T_COMMENT) or token.is_unquoted_whitespace():
                pass
            elif token.kind == T_NEWLINE:
                saw_separator = True
                self.line += 1
            elif token.kind == T_COMMA:
                return True
            else:
                self._put_back(token)
                return saw_separator
            token = self._next()

    # -- values ---------------------------------------------------------------------------------
    def _simple_value(self, token: Token) -> HValue:
        origin = self._origin(token)
        if token.kind == T_STR:
            return HStr(token.text, True, origin)
        if token.kind == T_UNQ:
            return HStr(token.text, False, origin)
        if token.kind == T_NUM:
            return HNum(token.text, token.is_double, origin)
        if token.kind == T_BOOL:
            return HBool(token.bool_value, origin)
        if token.kind == T_NULL:
            return HNull(origin)
        # substitution
        try:
            path = path_from_tokens(token.expr, "")
        except BadPath as exc:
            raise self._error(f"Invalid path in substitution: {exc}", token) from None
        return HRef(path, token.optional, origin)

    def _parse_value(self, token: Token, prefix: tuple[str, ...]) -> HValue:
        if token.kind in SIMPLE_KINDS:
            return self._simple_value(token)
        if token.kind == T_LBRACE:
            return self._parse_object(True, prefix, token)
        if token.kind == T_LBRACKET:
            return self._parse_array(prefix, token)
        raise self._error(f"Expecting a value but got wrong token: {token.describe()}", token)

    def _consolidate_values(self, prefix: tuple[str, ...]) -> HValue | None:
        token = self._next_collecting_ws()
        nodes: list[tuple[bool, object]] = []  # (is_value, HValue | Token)
        value_count = 0
        first_token = token
        while True:
            if token.kind == T_WS:
                nodes.append((False, token))
                token = self._next()
                continue
            if token.kind in SIMPLE_KINDS or token.kind in (T_LBRACE, T_LBRACKET):
                value = self._parse_value(token, prefix)
                value_count += 1
                nodes.append((True, value))
            else:
                break
            token = self._next()
        self._put_back(token)
        if value_count < 2:
            result: HValue | None = None
            for is_value, node in nodes:
                if is_value:
                    result = node  # type: ignore[assignment]
                elif result is not None:
                    self._put_back(node)  # type: ignore[arg-type]
            return result
        while nodes and not nodes[-1][0]:
            self._put_back(nodes.pop()[1])  # type: ignore[arg-type]
        pieces = [node for is_value, node in nodes if is_value]
        try:
            return concatenate(pieces, self._origin(first_token))  # type: ignore[arg-type]
        except WrongType as exc:
            raise self._error(str(exc), first_token) from None

    def _parse_key(self, token: Token) -> tuple[str, ...]:
        expression: list[Token] = []
        first = token
        while token.kind in VALUE_KINDS or token.kind == T_UNQ:
            expression.append(token)
            token = self._next()
        if not expression:
            raise self._error(f"expecting a close parentheses ')' here, not: {token.describe()}", token)
        self._put_back(token)
        try:
            return path_from_tokens(expression, "")
        except BadPath as exc:
            raise self._error(str(exc), first) from None

    def _parse_object(self, had_open_curly: bool, prefix: tuple[str, ...], start: Token | None = None) -> HObj:
        values: dict[str, HValue] = {}
        origin: Origin = (self.path, start.line if start is not None and start.line > 0 else self.line)
        while True:
            token = self._next_collecting_ws()
            if token.kind == T_RBRACE:
                if not had_open_curly:
                    raise self._error("unbalanced close brace '}' with no open brace", token)
                break
            if token.kind == T_END and not had_open_curly:
                self._put_back(token)
                break
            if token.kind == T_UNQ and token.text == "include":
                self._parse_include(values, prefix, token)
            else:
                path, value = self._parse_field(token, prefix)
                key = path[0]
                existing = values.get(key)
                if len(path) > 1:
                    value = create_value_under_path(path[1:], value)
                values[key] = value if existing is None else value.with_fallback(existing)
            if self._check_element_separator():
                continue
            token = self._next_collecting_ws()
            if token.kind == T_RBRACE:
                if not had_open_curly:
                    raise self._error("unbalanced close brace '}' with no open brace", token)
                break
            if had_open_curly:
                raise self._error(f"Expecting close brace }} or a comma, got {token.describe()}", token)
            if token.kind == T_END:
                self._put_back(token)
                break
            raise self._error(f"Expecting end of input or a comma, got {token.describe()}", token)
        return HObj(values, origin)

    def _parse_field(self, token: Token, prefix: tuple[str, ...]) -> tuple[tuple[str, ...], HValue]:
        """A field of an object, from its key (``token``) through its value: ``key { … }``, ``key = value``,
        ``key : value`` or ``key += value`` (a self-referential concatenation)."""
        path = self._parse_key(token)
        after = self._next_collecting_ws()
        if after.kind == T_LBRACE:
            return path, self._parse_value(after, prefix + path)
        if after.kind not in (T_COLON, T_EQUALS, T_PLUSEQ):
            raise self._error(f"Key '{render_path(path)}' may not be followed by token: {after.describe()}", after)
        appends = after.kind == T_PLUSEQ
        if appends:
            if self.array_count > 0:
                raise self._error(
                    "Due to current limitations of the config parser, += does not work nested inside a list.", after
                )
            self.array_count += 1
        value = self._consolidate_values(prefix + path)
        if value is None:
            value = self._parse_value(self._next_collecting_ws(), prefix + path)
        if not appends:
            return path, value
        self.array_count -= 1
        previous = HRef(prefix + path, True, value.origin)
        try:
            concatenated = concatenate([previous, HList([value], value.origin)], value.origin)
        except WrongType as exc:  # pragma: no cover - a reference never joins eagerly
            raise self._error(str(exc), after) from None
        assert concatenated is not None
        return path, concatenated

    def _parse_array(self, prefix: tuple[str, ...], start: Token) -> HList:
        self.array_count += 1
        origin = self._origin(start)
        items: list[HValue] = []
        value = self._consolidate_values(prefix)
        if value is not None:
            items.append(value)
        else:
            token = self._next_collecting_ws()
            if token.kind == T_RBRACKET:
                self.array_count -= 1
                return HList(items, origin)
            if token.kind in SIMPLE_KINDS or token.kind in (T_LBRACE, T_LBRACKET):
                items.append(self._parse_value(token, prefix))
            else:
                raise self._error(
                    f"List should have ] or a first element after the open [, instead had token: {token.describe()} "
                    f"(if you want {token.describe()} to be part of a string value, then double-quote it)",
                    token,
                )
        while True:
            if not self._check_element_separator():
                token = self._next_collecting_ws()
                if token.kind == T_RBRACKET:
                    self.array_count -= 1
                    return HList(items, origin)
                raise self._error(
                    f"List should have ended with ] or had a comma, instead had token: {token.describe()} "
                    f"(if you want {token.describe()} to be part of a string value, then double-quote it)",
                    token,
                )
            value = self._consolidate_values(prefix)
            if value is not None:
                items.append(value)
                continue
            token = self._next_collecting_ws()
            if token.kind in SIMPLE_KINDS or token.kind in (T_LBRACE, T_LBRACKET):
                items.append(self._parse_value(token, prefix))
            elif token.kind == T_RBRACKET:
                self._put_back(token)
            else:
                raise self._error(
                    f"List should have had new element after a comma, instead had token: {token.describe()} "
                    f"(if you want the comma or {token.describe()} to be part of a string value, then double-quote it)",
                    token,
                )

    # -- includes -------------------------------------------------------------------------------
    def _parse_include(self, values: dict[str, HValue], prefix: tuple[str, ...], keyword: Token) -> None:
        token = self._next_collecting_ws()
        required = False
        if token.kind == T_UNQ and token.text.startswith("required("):
            rest = token.text[len("required(") :]
            if rest:
                self._put_back(Token(T_UNQ, rest, token.line))
            kind, name = self._parse_include_resource()
            required = True
            token = self._next_collecting_ws()
            if not (token.kind == T_UNQ and token.text == ")"):
                raise self._error(f"expecting a close parentheses ')' here, not: {token.describe()}", token)
        else:
            self._put_back(token)
            kind, name = self._parse_include_resource()
        included = self.includer.include(kind, name, required, self.path, keyword.line)
        if self.array_count > 0 and not included.resolved:
            raise self._error(
                "Due to current limitations of the config parser, when an include statement is nested inside a "
                "list value, ${} substitutions inside the included file cannot be resolved correctly.",
                keyword,
            )
        if prefix:
            included = included.relativized(prefix)  # type: ignore[assignment]
        for key, value in included.fields.items():
            existing = values.get(key)
            values[key] = value if existing is None else value.with_fallback(existing)

    def _parse_include_resource(self) -> tuple[str, str]:
        token = self._next_collecting_ws()
        if token.kind == T_UNQ:
            text = token.text
            for kind in ("url", "file", "classpath"):
                if text.startswith(kind + "("):
                    break
            else:
                raise self._error(
                    "expecting include parameter to be quoted filename, file(), classpath(), or url(). "
                    f"No spaces are allowed before the open paren. Not expecting: {token.describe()}",
                    token,
                )
            rest = text[text.index("(") + 1 :]
            if rest:
                self._put_back(Token(T_UNQ, rest, token.line))
            token = self._next_collecting_ws()
            if token.kind != T_STR:
                raise self._error(
                    f"expecting include {kind}() parameter to be a quoted string, rather than: {token.describe()}",
                    token,
                )
            name = token.text
            token = self._next_collecting_ws()
            if token.kind == T_UNQ and token.text.startswith(")"):
                rest = token.text[1:]
                if rest:
                    self._put_back(Token(T_UNQ, rest, token.line))
            else:
                raise self._error(f"expecting a close parentheses ')' here, not: {token.describe()}", token)
            return kind, name
        if token.kind == T_STR:
            return "heuristic", token.text
        raise self._error(f"include keyword is not followed by a quoted string, but by: {token.describe()}", token)

    # -- document -------------------------------------------------------------------------------
    def parse_document(self, allow_list_root: bool = False) -> HValue:
        token = self._next_collecting_ws()
        if token.kind in (T_LBRACE, T_LBRACKET):
            result = self._parse_value(token, ())
        else:
            self._put_back(token)
            result = self._parse_object(False, ())
        token = self._next_collecting_ws()
        if token.kind != T_END:
            raise self._error(f"Document has trailing tokens after first object or array: {token.describe()}", token)
        if not isinstance(result, HObj) and not allow_list_root:
            raise _ParseError("the file must contain an object at its root, not a list", 1, self.path)
        return result


def parse_document(text: str, path: str | None, includer: IncludeResolver, allow_list_root: bool = False) -> HValue:
    """Parse HOCON ``text`` (from ``path``, for messages) into an unresolved object (or, if allowed, a list).

    Raises :class:`ConfigError`.
    """
    parser = _Parser(tokenize(text), path, includer)
    try:
        document = parser.parse_document(allow_list_root)
    except _ParseError as exc:
        where = exc.path if exc.path is not None else "<string>"
        raise ConfigError(
            f"Failed to parse config file {where} at lineNo:{exc.line}: {exc.message}",
            path=exc.path,
            line=exc.line,
            hint=_PARSE_HINT,
        ) from None
    except RecursionError:
        document = None
    if document is None or nested_beyond(document, MAX_NESTING) is not None:
        raise ConfigError(
            f"Failed to parse config file {path or '<string>'}: nesting is too deep (more than {MAX_NESTING} "
            "levels of objects and lists, dotted keys and included files counted)",
            path=path,
            hint="flatten the nested objects or lists",
        )
    return document

