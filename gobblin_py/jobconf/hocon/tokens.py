"""HOCON tokens: the kinds typesafe config's ``Tokenizer`` produces and the :class:`Token` that carries one."""

from __future__ import annotations

from .chars import is_whitespace

__all__ = ["Token", "PUNCTUATION", "VALUE_KINDS", "SIMPLE_KINDS"] + [
    "T_END", "T_NEWLINE", "T_WS", "T_UNQ", "T_STR", "T_NUM", "T_BOOL", "T_NULL", "T_SUBST", "T_COMMENT",
    "T_COLON", "T_COMMA", "T_EQUALS", "T_LBRACE", "T_RBRACE", "T_LBRACKET", "T_RBRACKET", "T_PLUSEQ", "T_PROBLEM",
]

# Token kinds
T_END = "END"
T_NEWLINE = "NEWLINE"
T_WS = "IGNORED_WHITESPACE"
T_UNQ = "UNQUOTED_TEXT"
T_STR = "STRING"
T_NUM = "NUMBER"
T_BOOL = "BOOLEAN"
T_NULL = "NULL"
T_SUBST = "SUBSTITUTION"
T_COMMENT = "COMMENT"
T_COLON = "':'"
T_COMMA = "','"
T_EQUALS = "'='"
T_LBRACE = "'{'"
T_RBRACE = "'}'"
T_LBRACKET = "'['"
T_RBRACKET = "']'"
T_PLUSEQ = "'+='"
T_PROBLEM = "PROBLEM"

PUNCTUATION = {
    ":": T_COLON, ",": T_COMMA, "=": T_EQUALS, "{": T_LBRACE, "}": T_RBRACE, "[": T_LBRACKET, "]": T_RBRACKET
}
# Tokens that are a value by themselves, and those that may also take part in a value concatenation.
VALUE_KINDS = (T_STR, T_NUM, T_BOOL, T_NULL)
SIMPLE_KINDS = (T_STR, T_NUM, T_BOOL, T_NULL, T_UNQ, T_SUBST)


class Token:
    """One HOCON token (``kind`` is one of the ``T_*`` constants)."""

    __slots__ = ("kind", "text", "line", "is_double", "optional", "expr", "bool_value", "message")

    def __init__(self, kind: str, text: str = "", line: int = 0) -> None:
        self.kind = kind
        self.text = text
        self.line = line
        self.is_double = False
        self.optional = False
        self.expr: list[Token] = []
        self.bool_value = False
        self.message = ""  # problem tokens: what is wrong

    def describe(self) -> str:
        if self.kind in (T_UNQ, T_STR):
            return "'" + self.text + "'"
        if self.kind == T_NUM:
            return "'" + self.text + "'"
        if self.kind == T_BOOL:
            return "'true'" if self.bool_value else "'false'"
        if self.kind == T_NULL:
            return "'null'"
        if self.kind == T_SUBST:
            return "'${" + ("?" if self.optional else "") + "".join(t.text for t in self.expr) + "}'"
        if self.kind == T_PROBLEM:
            return self.text
        if self.kind == T_END:
            return "end of file"
        if self.kind == T_NEWLINE:
            return "newline"
        if self.kind == T_COMMENT:
            return "comment"
        return self.kind

    def is_unquoted_whitespace(self) -> bool:
        return self.kind == T_UNQ and all(is_whitespace(c) for c in self.text)

