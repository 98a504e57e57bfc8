"""Small helpers shared by the Iceberg sink's transforms.

Kept private to ``smt.iceberg``: record/value requirements worded like Kafka's
``org.apache.kafka.connect.transforms.util.Requirements``, the CDC field names
(``CdcConstants``), schema copying (``SchemaUtil.copySchemaBasics``) and
Java-style rendering of values that end up in strings.
"""

from __future__ import annotations

import math
import struct as _struct
from collections import OrderedDict
from decimal import Decimal as _BigDecimal
from typing import Any

from connector.api.errors import DataException
from connector.api.schema import Schema, SchemaBuilder
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


# --- Requirements ------------------------------------------------------------------


def class_name(value: Any) -> str:
    """The type name Kafka's messages show for a value (``null`` for None)."""
    return "null" if value is None else type(value).__name__


def require_map(value: Any, purpose: str) -> dict:
    if not isinstance(value, dict):
        raise DataException(
            f"Only Map objects supported in absence of schema for [{purpose}], found: {class_name(value)}"
        )
    return value


def require_struct(value: Any, purpose: str) -> Struct:
    if not isinstance(value, Struct):
        raise DataException(f"Only Struct objects supported for [{purpose}], found: {class_name(value)}")
    return value


def struct_get(struct: Struct, name: str) -> Any:
    """A field's value, or None when the struct's schema has no such field."""
    field = struct.schema.field(name)
    return None if field is None else struct.get(field)


# --- schemas -----------------------------------------------------------------------


def copy_schema_basics(source: Schema, builder: SchemaBuilder) -> SchemaBuilder:
    """Copy name, version, doc and parameters (not optionality or default), like Kafka."""
    builder.name(source.name)
    builder.version(source.version)
    builder.doc(source.doc)
    if source.parameters:
        builder.parameters(source.parameters)
    return builder


class LRUCache:
    """A tiny least-recently-used map for derived schemas (Kafka's ``LRUCache``)."""

    def __init__(self, max_size: int = 16):
        self.max_size = max_size
        self._data: "OrderedDict[Any, Any]" = OrderedDict()

    def get(self, key: Any) -> Any:
        try:
            value = self._data.pop(key)
        except KeyError:
            return None
        self._data[key] = value
        return value

    def put(self, key: Any, value: Any) -> None:
        self._data.pop(key, None)
        self._data[key] = value
        while len(self._data) > self.max_size:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


# --- config parsing (ConfigDef STRING / BOOLEAN) -------------------------------------


def config_string(config: dict | None, key: str, default: str | None = None, *, required: bool = False) -> str | None:
    config = config or {}
    if key not in config or config[key] is None:
        if required:
            raise _config_exception(f'Missing required configuration "{key}" which has no default value.')
        return default
    value = config[key]
    if not isinstance(value, str):
        raise _config_exception(key, value, "Expected value to be a string, but it was a " + class_name(value))
    return value.strip()


def config_bool(config: dict | None, key: str, default: bool = False) -> bool:
    config = config or {}
    value = config.get(key)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "true":
            return True
        if text == "false":
            return False
    raise _config_exception(key, value, "Expected value to be either true or false")


def _config_exception(*args: Any) -> Exception:
    from connector.api.errors import ConfigException

    return ConfigException(*args)


# --- Java-style text ---------------------------------------------------------------


def java_str(value: Any) -> str:
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
