"""Small helpers shared by the Iceberg sink's transforms (private to ``smt.iceberg``).

The CDC field names (``CdcConstants``), lenient struct access, and Java-style
rendering of values that end up in strings. Config parsing, ``Requirements``,
``copySchemaBasics`` and the schema cache come from :mod:`smt.base`.
"""

from __future__ import annotations

import math
import struct as _struct
from decimal import Decimal as _BigDecimal
from typing import Any

from connector.api.struct import Struct

# --- CDC metadata (CdcConstants) ---------------------------------------------------

OP_INSERT = "I"
OP_UPDATE = "U"
OP_DELETE = "D"

COL_CDC = "_cdc"
COL_OP = "op"
COL_TS = "ts"
COL_OFFSET = "offset"
COL_SOURCE = "source"
COL_TARGET = "target"
COL_KEY = "key"


# --- struct access ----------------------------------------------------------------


def struct_get(struct: Struct, name: str) -> Any:
    """A field's value, or None when the struct's schema has no such field."""
    field = struct.schema.field(name)
    return None if field is None else struct.get(field)


# --- Java-style text ---------------------------------------------------------------


def string_value_of(value: Any) -> str:
    """``String.valueOf`` for the values transforms concatenate into names."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_str(value)
    return str(value)


def _java_decimal_text(digits: str, exponent: int) -> str:
    """Format shortest significant ``digits`` x 10**``exponent`` the way Java's
    ``Double.toString`` does: plain notation for 1e-3 <= |x| < 1e7, otherwise
    ``d.dddE<n>``; always at least one digit after the point."""
    stripped = digits.rstrip("0") or "0"
    exponent += len(digits) - len(stripped)
    digits = stripped
    point = len(digits) + exponent  # position of the decimal point from the left
    sci = point - 1
    if -3 <= sci < 7:
        if point <= 0:
            return "0." + "0" * (-point) + digits
        if point >= len(digits):
            return digits + "0" * (point - len(digits)) + ".0"
        return digits[:point] + "." + digits[point:]
    mantissa = digits[0] + "." + (digits[1:] or "0")
    return f"{mantissa}E{sci}"


def java_double_str(value: float) -> str:
    """``Double.toString`` (shortest round-trip digits, as in JDK 19+)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign, digits, exponent = _BigDecimal(repr(abs(value))).as_tuple()
    text = _java_decimal_text("".join(map(str, digits)), exponent)
    return ("-" if value < 0 else "") + text


def java_float_str(value: float) -> str:
    """``Float.toString`` for a value held as a 32-bit float."""
    if math.isnan(value) or math.isinf(value) or value == 0:
        return java_double_str(value)
    as32 = _struct.unpack("<f", _struct.pack("<f", value))[0]
    for precision in range(1, 10):
        text = f"{abs(as32):.{precision - 1}e}"
        try:
            if _struct.unpack("<f", _struct.pack("<f", float(text)))[0] == abs(as32):
                break
        except OverflowError:
            continue
    sign, digits, exponent = _BigDecimal(text).as_tuple()
    return ("-" if as32 < 0 else "") + _java_decimal_text("".join(map(str, digits)), exponent)
