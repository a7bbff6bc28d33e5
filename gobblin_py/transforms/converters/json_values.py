"""Gobblin's JSON value rules (Gson's ``getAsX``), per value, for the JSON intermediate → Avro conversion.

Used where Gobblin's semantics are per value: a JSON record given as text, nested values, unions (one branch
tried, then the other) and columns whose Arrow type needs a rule (a number read as text, ``"true"`` as a
boolean). Each function raises :class:`ValueFailure` for a value Gobblin would refuse.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from gobblin_py.sdk import joda
from gobblin_py.sdk.errors import UsageError
from gobblin_py.transforms.converters.json_schema import Node

_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?$")
_OFFSET = re.compile(r"^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$")
# Java's old three-letter zone ids (ZoneId.SHORT_IDS), which Gobblin accepts when Joda does not know the id
JAVA_SHORT_IDS = {
    "ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo", "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare", "CNT": "America/St_Johns", "CST": "America/Chicago", "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis", "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan", "NST": "Pacific/Auckland",
    "PLT": "Asia/Karachi", "PNT": "America/Phoenix", "PRT": "America/Puerto_Rico", "PST": "America/Los_Angeles",
    "SST": "Pacific/Guadalcanal", "VST": "Asia/Ho_Chi_Minh",
}
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


class ValueFailure(ValueError):
    """A value Gobblin's converter would refuse."""


@dataclass(frozen=True)
class JsonNumber:
    """A JSON number as written (Gson keeps the literal: a ``string`` field gets ``"4.30"``, not ``4.3``)."""

    text: str


def parse_json(text: str) -> Any:
    """A JSON text with numbers kept as :class:`JsonNumber`."""
    return json.loads(text, parse_int=JsonNumber, parse_float=JsonNumber, parse_constant=JsonNumber)


def resolve_zone(name: str, key: str) -> tuple[str, dt.tzinfo]:
    """``(Arrow time zone, tzinfo)`` for a zone id as Gobblin resolves it: an IANA id or offset, else Java's old ids."""
    text = name.strip()
    offset = _OFFSET.match(text)
    if offset:
        sign, hours, minutes = offset.group(1), int(offset.group(2)), int(offset.group(3) or 0)
        delta = dt.timedelta(hours=hours, minutes=minutes) * (-1 if sign == "-" else 1)
        return f"{sign}{hours:02d}:{minutes:02d}", dt.timezone(delta)
    for candidate in (text, JAVA_SHORT_IDS.get(text.upper())):
        if candidate:
            try:
                return candidate, ZoneInfo(candidate)
            except (ZoneInfoNotFoundError, ValueError):
                continue
    raise UsageError(f"{key}={name}: time zone not recognized (use an IANA id such as America/Los_Angeles, "
                     "UTC, an offset such as +05:00, or a Java id such as PST)")


def as_text(value: Any) -> str:
    """Gson's ``getAsString``."""
    if isinstance(value, str):
        return value
    if isinstance(value, JsonNumber):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list) and len(value) == 1:
        return as_text(value[0])
    raise ValueFailure(f"{json.dumps(value, default=str)[:80]} is not a single value")


def _wrap(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def as_integer(value: Any, bits: int) -> int:
    """Gson's ``getAsInt``/``getAsLong``: a number narrowed as Java does, text parsed strictly."""
    if isinstance(value, bool):
        raise ValueFailure(f"{value} is not a number")
    if isinstance(value, int):
        return _wrap(value, bits)
    if isinstance(value, float):
        return _wrap(int(value), bits)
    if isinstance(value, JsonNumber):
        text = value.text
        return _wrap(int(text) if _INT.match(text) else int(float(text)), bits)
    text = as_text(value)
    if not _INT.match(text) or not -(1 << (bits - 1)) <= int(text) < 1 << (bits - 1):
        raise ValueFailure(f"{text!r} is not a whole number of {bits} bits")
    return int(text)


def as_float(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueFailure(f"{value} is not a number")
    if isinstance(value, (int, float)):
        return float(value)
    text = as_text(value)
    if not _FLOAT.match(text):
        raise ValueFailure(f"{text!r} is not a number")
    return float(text.rstrip("fFdD").replace("Infinity", "inf"))


def as_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.lower() == "true"
    if isinstance(value, (int, float, JsonNumber)):
        return False
    raise ValueFailure(f"{json.dumps(value, default=str)[:80]} is not a boolean")


@dataclass
class TimeRules:
    """How date, timestamp and time values are parsed: Joda patterns per kind, one zone, ms or s."""

    patterns: dict[str, list[str]]
    zone: dt.tzinfo
    seconds: bool

    def parse(self, kind: str, text: str) -> int:
        for pattern in self.patterns[kind]:
            fmt = joda.to_strftime(pattern)
            candidate = text
            if not joda.has_date(pattern):
                fmt, candidate = "%Y-%m-%d " + fmt, "1970-01-01 " + text
            try:
                parsed = dt.datetime.strptime(candidate, fmt)
            except ValueError:
                continue
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=self.zone)
            millis = (parsed - EPOCH) // dt.timedelta(milliseconds=1)
            return int(millis / 1000) if self.seconds else millis
        raise ValueFailure(f"failed to parse the date {text!r} with {','.join(self.patterns[kind])}")


def convert_value(node: Node, value: Any, rules: TimeRules, charset: str) -> Any:
    """A JSON value as the Python value of ``node``'s Arrow type (a non-null union: ``(branch, value)``)."""
    if value is None:
        if node.nullable:
            return None
        raise ValueFailure(f"Field: {node.column} is not nullable and contains a null value")
    kind = node.kind
    if kind == "union":
        for index, branch in enumerate(node.branches):
            try:
                converted = convert_value(branch, value, rules, charset)
            except Exception:  # noqa: BLE001 - Gobblin tries the next branch whatever went wrong
                continue
            return converted if node.union_null else (index, converted)
        raise ValueFailure(f"{json.dumps(value, default=str)[:80]} fits no branch of the union")
    if kind in ("string", "enum"):
        return as_text(value)
    if kind in ("int", "long"):
        return as_integer(value, 32 if kind == "int" else 64)
    if kind in ("float", "double"):
        return as_float(value)
    if kind == "boolean":
        return as_boolean(value)
    if kind == "bytes":
        return as_text(value).encode(charset)
    if kind in ("date", "timestamp", "time"):
        return rules.parse(kind, as_text(value))
    if kind == "null":
        raise ValueFailure(f"{json.dumps(value, default=str)[:80]} is not null")
    if kind == "array":
        if not isinstance(value, list):
            raise ValueFailure(f"{json.dumps(value, default=str)[:80]} is not an array")
        return [convert_value(node.element(), v, rules, charset) for v in value]
    if kind == "map":
        if isinstance(value, list) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
            value = dict(value)  # an Arrow map column's rows
        if not isinstance(value, dict):
            raise ValueFailure(f"{json.dumps(value, default=str)[:80]} is not an object")
        return {str(k): convert_value(node.element(), v, rules, charset) for k, v in value.items()}
    if not isinstance(value, dict):
        raise ValueFailure(f"{json.dumps(value, default=str)[:80]} is not an object")
    return convert_record(node, value, rules, charset)


def convert_record(node: Node, value: dict, rules: TimeRules, charset: str) -> dict:
    """A JSON object as a record: every key must be a field; a field missing from it stays null."""
    names = {f.name: f for f in node.fields}
    out: dict[str, Any] = {f.name: None for f in node.fields}
    for key, item in value.items():
        f = names.get(key)
        if f is None:
            raise ValueFailure(f"no field {key!r} in the schema")
        out[key] = convert_value(f.node, item, rules, charset)
    return out
