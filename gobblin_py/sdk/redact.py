"""Credentials kept out of everything gpy writes: log lines, error messages, run history, metrics and lineage.

:func:`redact` masks, in any text, the password of a URL's user-info (``https://user:******@host``), the value
of a query parameter whose name says it is a credential (``api_key=******``, ``token``, ``signature``, …), the
credential after an authorisation scheme (``Bearer ******``, ``Basic ******``), and every value this process
learnt is secret (:func:`remember`: the values of keys declared ``secret=True`` when settings are loaded, and
the headers a client sends), wherever it appears, a server's echo of it included. It is applied where text
leaves the process (the log emitter, a task's failure, the run's outcome, the run history), so a connector's
message cannot leak what it forgot to mask itself.
"""

from __future__ import annotations

import re
import threading
from typing import Any

MASK = "******"
MIN_SECRET_CHARS = 4  # shorter values are not masked wherever they appear: "ab" would mask every word holding it

_lock = threading.Lock()
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None

_CREDENTIAL_WORDS = ("apikey", "api_key", "api-key", "accesskey", "access_key", "privatekey", "private_key", "token",
                     "secret", "password", "passwd", "pwd", "signature", "credential")
_CREDENTIAL_NAMES = frozenset({"key", "auth", "authorization", "sig", "session", "sessionid", "sid", "code"})
_QUERY = re.compile(r"([?&;])([^=&#\s\"'<>?]+)=([^&#\s\"'<>]+)")
_USER_INFO = re.compile(r"(\b[a-z][a-z0-9+.\-]*://)([^/?#@\s:\"']*):([^/?#@\s\"']*)@", re.IGNORECASE)
_SCHEME = re.compile(r"\b(Bearer|Basic)(\s+)([A-Za-z0-9._~+/=\-]{4,})", re.IGNORECASE)


def credential_name(name: str) -> bool:
    """Whether a query parameter (or header) of this name carries a credential: ``api_key``, ``access_token``, …"""
    lowered = name.lower()
    return lowered in _CREDENTIAL_NAMES or any(word in lowered for word in _CREDENTIAL_WORDS)


def _query_value(match: re.Match[str]) -> str:
    sep, name, value = match.groups()
    return f"{sep}{name}={MASK}" if credential_name(name) and value != MASK else match.group(0)


def _scheme_value(match: re.Match[str]) -> str:
    scheme, space, value = match.groups()
    # a credential, not a word of prose ("Basic authentication"): a digit, mixed case or a token's punctuation
    looks_like = (any(c.isdigit() for c in value) or (value.lower() != value and value.upper() != value)
                  or any(c in "._~+/=-" for c in value))
    return f"{scheme}{space}{MASK}" if looks_like else match.group(0)


def remember(value: str | None) -> None:
    """Mask ``value`` wherever it appears in what this process writes from now on (ignored when short)."""
    global _pattern
    if not value or len(value) < MIN_SECRET_CHARS:
        return
    with _lock:
        if value in _secrets:
            return
        _secrets.add(value)
        # longest first: a secret holding another is masked whole
        _pattern = re.compile("|".join(re.escape(s) for s in sorted(_secrets, key=len, reverse=True)))


def redact(text: str) -> str:
    """``text`` with every credential the module knows of masked."""
    if not text:
        return text
    pattern = _pattern
    if pattern is not None:
        text = pattern.sub(MASK, text)
    if "://" in text:
        text = _USER_INFO.sub(rf"\1\2:{MASK}@", text)
    if "=" in text:
        text = _QUERY.sub(_query_value, text)
    return _SCHEME.sub(_scheme_value, text)


def redact_value(value: Any) -> Any:
    """``value`` with :func:`redact` applied to every string in it (inside lists, tuples and dicts too)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value(v) for v in value)
    return value
