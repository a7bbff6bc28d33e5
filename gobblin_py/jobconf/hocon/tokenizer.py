"""The HOCON tokenizer, a port of typesafe config 1.4.1's ``Tokenizer``.

Numbers keep their original text, ``true``/``false``/``null`` are case-sensitive keywords recognised at the
start of unquoted text, whitespace between two simple values is kept as unquoted text (so ``a b`` is one
value) and reserved characters outside quotes (``$ " { } [ ] : = , + # ` ^ ? ! @ * & \\``) become problem
tokens that the parser reports.
"""

from __future__ import annotations

import re

from .chars import FIRST_NUMBER_CHARS, NOT_IN_UNQUOTED, NUMBER_CHARS, describe_char, is_whitespace
from .tokens import (
    PUNCTUATION,
    SIMPLE_KINDS,
    T_BOOL,
    T_COMMENT,
    T_END,
    T_NEWLINE,
    T_NULL,
    T_NUM,
    T_PLUSEQ,
    T_PROBLEM,
    T_RBRACE,
    T_STR,
    T_SUBST,
    T_UNQ,
    T_WS,
    Token,
)

__all__ = ["tokenize"]

_DOUBLE_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_LONG_RE = re.compile(r"[+-]?\d+")
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


class _Problem(Exception):
    def __init__(self, what: str, message: str, suggest_quotes: bool = False, line: int | None = None) -> None:
        super().__init__(message)
        self.what = what
        self.message = message
        self.suggest_quotes = suggest_quotes
        self.line = line


class _WhitespaceSaver:
    __slots__ = ("whitespace", "last_simple")

    def __init__(self) -> None:
        self.whitespace: list[str] = []
        self.last_simple = False

    def check(self, token: Token, line: int) -> Token | None:
        if token.kind in SIMPLE_KINDS:
            saved = self._create(line)
            self.last_simple = True
            return saved
        self.last_simple = False
        return self._create(line)

    def _create(self, line: int) -> Token | None:
        if not self.whitespace:
            return None
        text = "".join(self.whitespace)
        self.whitespace = []
        return Token(T_UNQ if self.last_simple else T_WS, text, line)


class _Tokenizer:
    """typesafe ``Tokenizer.TokenIterator`` over a Python string."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1

    def _next_char(self) -> str:
        if self.pos >= len(self.text):
            self.pos += 1  # keep put-back symmetric for EOF
            return ""
        ch = self.text[self.pos]
        self.pos += 1
        return ch

    def _put_back(self) -> None:
        self.pos -= 1

    def _start_of_comment(self, ch: str) -> bool:
        if ch == "#":
            return True
        if ch == "/":
            return self.pos < len(self.text) and self.text[self.pos] == "/"
        return False

    def tokens(self) -> list[Token]:
        out: list[Token] = []
        saver = _WhitespaceSaver()
        while True:
            try:
                token = self._pull_next_token(saver)
            except _Problem as problem:
                saver.whitespace = []
                token = _problem_token(problem, self.line)
                out.append(token)
                continue
            whitespace = saver.check(token, self.line)
            if whitespace is not None:
                out.append(whitespace)
            out.append(token)
            if token.kind == T_END:
                return out

    def _next_char_after_whitespace(self, saver: _WhitespaceSaver) -> str:
        while True:
            ch = self._next_char()
            if ch == "":
                return ch
            if ch != "\n" and is_whitespace(ch):
                saver.whitespace.append(ch)
                continue
            return ch

    def _pull_next_token(self, saver: _WhitespaceSaver) -> Token:
        ch = self._next_char_after_whitespace(saver)
        if ch == "":
            return Token(T_END, "", self.line)
        if ch == "\n":
            token = Token(T_NEWLINE, "\n", self.line)
            self.line += 1
            return token
        if self._start_of_comment(ch):
            return self._pull_comment(ch)
        if ch == '"':
            return self._pull_quoted_string()
        if ch == "$":
            return self._pull_substitution()
        if ch in PUNCTUATION:
            return Token(PUNCTUATION[ch], ch, self.line)
        if ch == "+":
            nxt = self._next_char()
            if nxt != "=":
                raise _Problem(
                    describe_char(nxt),
                    f"'+' not followed by =, '{describe_char(nxt)}' not allowed after '+'",
                    True,
                )
            return Token(T_PLUSEQ, "+=", self.line)
        if ch in FIRST_NUMBER_CHARS:
            return self._pull_number(ch)
        if ch in NOT_IN_UNQUOTED:
            raise _Problem(ch, f"Reserved character '{ch}' is not allowed outside quotes", True)
        self._put_back()
        return self._pull_unquoted_text()

    def _pull_comment(self, first: str) -> Token:
        if first == "/":
            self._next_char()
        start = self.pos
        end = self.text.find("\n", start)
        if end < 0:
            end = len(self.text)
        self.pos = end
        return Token(T_COMMENT, self.text[start:end], self.line)

    def _pull_unquoted_text(self) -> Token:
        line = self.line
        buf: list[str] = []
        while True:
            ch = self._next_char()
            if ch == "" or ch in NOT_IN_UNQUOTED or is_whitespace(ch) or self._start_of_comment(ch):
                break
            buf.append(ch)
            if len(buf) == 4:
                word = "".join(buf)
                if word == "true":
                    token = Token(T_BOOL, "true", line)
                    token.bool_value = True
                    return token
                if word == "null":
                    return Token(T_NULL, "null", line)
            elif len(buf) == 5 and "".join(buf) == "false":
                return Token(T_BOOL, "false", line)
        self._put_back()
        return Token(T_UNQ, "".join(buf), line)

    def _pull_number(self, first: str) -> Token:
        buf = [first]
        is_double = False
        while True:
            ch = self._next_char()
            if ch == "" or ch not in NUMBER_CHARS:
                break
            if ch in ".eE":
                is_double = True
            buf.append(ch)
        self._put_back()
        text = "".join(buf)
        valid = False
        if is_double:
            valid = _DOUBLE_RE.fullmatch(text) is not None
        elif _LONG_RE.fullmatch(text) is not None:
            valid = _LONG_MIN <= int(text) <= _LONG_MAX
        if valid:
            token = Token(T_NUM, text, self.line)
            token.is_double = is_double
            return token
        for ch in text:
            if ch in NOT_IN_UNQUOTED:
                raise _Problem(ch, f"Reserved character '{ch}' is not allowed outside quotes", True)
        return Token(T_UNQ, text, self.line)

    def _pull_escape(self, buf: list[str]) -> None:
        ch = self._next_char()
        if ch == "":
            raise _Problem("", "End of input but backslash in string had nothing after it")
        simple = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
        if ch in simple:
            buf.append(simple[ch])
            return
        if ch == "u":
            digits = []
            for _ in range(4):
                d = self._next_char()
                if d == "":
                    raise _Problem("", "End of input but expecting 4 hex digits for \\uXXXX escape")
                digits.append(d)
            text = "".join(digits)
            if re.fullmatch(r"\+?[0-9a-fA-F]+", text) is None:
                raise _Problem(text, f"Malformed hex digits after \\u escape in string: '{text}'")
            buf.append(chr(int(text, 16)))
            return
        raise _Problem(
            describe_char(ch),
            f"backslash followed by '{describe_char(ch)}', this is not a valid escape sequence "
            "(quoted strings use JSON escaping, so use double-backslash \\\\ for literal backslash)",
        )

    def _pull_quoted_string(self) -> Token:
        buf: list[str] = []
        while True:
            ch = self._next_char()
            if ch == "":
                raise _Problem("", "End of input but string quote was still open")
            if ch == "\\":
                self._pull_escape(buf)
            elif ch == '"':
                break
            elif ord(ch) < 0x20:
                raise _Problem(
                    describe_char(ch),
                    f"JSON does not allow unescaped {describe_char(ch)} in quoted strings, use a backslash escape",
                )
            else:
                buf.append(ch)
        if not buf:
            third = self._next_char()
            if third == '"':
                self._append_triple_quoted(buf)
            else:
                self._put_back()
        text = "".join(buf)
        if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
            text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
        return Token(T_STR, text, self.line)

    def _append_triple_quoted(self, buf: list[str]) -> None:
        quotes = 0
        while True:
            ch = self._next_char()
            if ch == '"':
                quotes += 1
            elif quotes >= 3:
                del buf[-3:]
                self._put_back()
                return
            else:
                quotes = 0
                if ch == "":
                    raise _Problem("", "End of input but triple-quoted string was still open")
                if ch == "\n":
                    self.line += 1
            buf.append(ch)

    def _pull_substitution(self) -> Token:
        line = self.line
        ch = self._next_char()
        if ch != "{":
            raise _Problem(
                describe_char(ch), f"'$' not followed by {{, '{describe_char(ch)}' not allowed after '$'", True
            )
        optional = False
        ch = self._next_char()
        if ch == "?":
            optional = True
        else:
            self._put_back()
        saver = _WhitespaceSaver()
        expression: list[Token] = []
        while True:
            token = self._pull_next_token(saver)
            if token.kind == T_RBRACE:
                break
            if token.kind == T_END:
                raise _Problem("", "Substitution ${ was not closed with a }", line=line)
            whitespace = saver.check(token, self.line)
            if whitespace is not None:
                expression.append(whitespace)
            expression.append(token)
        token = Token(T_SUBST, "", line)
        token.optional = optional
        token.expr = expression
        return token


def _problem_token(problem: _Problem, line: int) -> Token:
    token = Token(T_PROBLEM, f"'{problem.what}' ({problem.message})", problem.line or line)
    token.message = problem.message
    return token


def tokenize(text: str) -> list[Token]:
    """Tokenize HOCON ``text`` (problems become ``T_PROBLEM`` tokens, the list ends with ``T_END``)."""
    return _Tokenizer(text).tokens()

