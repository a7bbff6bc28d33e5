"""Renderings of text as typesafe config and Java produce them: JSON strings and ``Double.toString``."""

from __future__ import annotations

import math
from decimal import Decimal

__all__ = ["render_json_string", "java_double_to_string"]


def render_json_string(text: str) -> str:
    """typesafe ``ConfigImplUtil.renderJsonString``."""
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)



def java_double_to_string(value: float) -> str:
    """Java ``Double.toString`` (shortest round-trip digits)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    digits_tuple = Decimal(repr(magnitude)).as_tuple()
    digits = "".join(str(d) for d in digits_tuple.digits).rstrip("0") or "0"
    # decimal exponent of the first digit: magnitude = 0.d1d2... * 10^(point)
    point = len(digits_tuple.digits) + digits_tuple.exponent  # type: ignore[operator]
    if 1e-3 <= magnitude < 1e7:
        if point <= 0:
            text = "0." + "0" * (-point) + digits
        elif point >= len(digits):
            text = digits + "0" * (point - len(digits)) + ".0"
        else:
            text = digits[:point] + "." + digits[point:]
        return sign + text
    exponent = point - 1
    mantissa = digits[0] + "." + (digits[1:] or "0")
    return f"{sign}{mantissa}E{exponent}"
