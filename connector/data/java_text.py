"""Text the Java sink would produce for a value: ``toString`` of numbers and JSON.

The Iceberg sink turns non-string values into string columns with Java's
``Long.toString``/``Double.toString``, Jackson's ``ObjectMapper`` (maps and
lists) and Kafka's ``JsonConverter`` with schemas disabled (structs). Python's
``repr``/``json.dumps`` differ in visible ways (``1e+20`` vs ``1.0E20``,
``NaN`` unquoted, lower-case ``\\u001f``), so the rendering is done here.

Python values of Connect's logical types render as Jackson renders their Java
values: ``java.util.Date`` (Connect Date/Time/Timestamp) as epoch milliseconds.
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
import math
import uuid
from typing import Any, Callable

import numpy as np

from connector.api.errors import DataException
from connector.api.logical import Decimal as ConnectDecimal
from connector.api.logical import logical_type_of, Date, Time, Timestamp
from connector.api.schema import Schema, Type
from connector.api.struct import Struct

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_DATE = _dt.date(1970, 1, 1)

# Jackson escapes '"', '\\' and every control character below 0x20 (short forms
# for \b \t \n \f \r, upper-case \\u00XX otherwise), and nothing else.
_SHORT_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_ESCAPES = str.maketrans(
    {
        **{chr(c): f"\\u{c:04X}" for c in range(0x20)},
        **_SHORT_ESCAPES,
        '"': '\\"',
        "\\": "\\\\",
    }
)


# --- numbers ------------------------------------------------------------------------


def _significant_digits(text: str) -> tuple[str, int]:
    """Digits (no leading/trailing zeros) and the exponent of the last digit, for a decimal text."""
    sign, digits, exponent = decimal.Decimal(text).as_tuple()
    text_digits = "".join(map(str, digits)).lstrip("0")
    stripped = text_digits.rstrip("0")
    return stripped, int(exponent) + (len(text_digits) - len(stripped))


def _java_digits(value: float, single: bool) -> tuple[str, int]:
    """Shortest round-tripping digits, with Java's rule that one digit becomes two.

    Java (JDK 19+) picks the shortest decimal that rounds to the value, but when
    that has a single digit it picks the closest two-digit decimal instead
    (``Double.MIN_VALUE`` is ``4.9E-324``, not ``5E-324``).
    """
    shortest = np.format_float_scientific(np.float32(value) if single else value, unique=True)
    digits, exponent = _significant_digits(shortest)
    if len(digits) == 1:
        two = np.format_float_scientific(
            np.float32(value) if single else value, unique=False, precision=1
        )
        digits, exponent = _significant_digits(two)
    return digits, exponent


def _java_floating_text(value: float, single: bool) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    digits, exponent = _java_digits(abs(value), single)
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e7:
        return sign + _plain(digits, exponent)
    scientific_exponent = exponent + len(digits) - 1
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{scientific_exponent}"


def _plain(digits: str, exponent: int) -> str:
    if exponent >= 0:
        return digits + "0" * exponent + ".0"
    point = len(digits) + exponent
    if point > 0:
        return digits[:point] + "." + digits[point:]
    return "0." + "0" * (-point) + digits


def java_double_text(value: float) -> str:
    """``Double.toString(value)``: ``1.0``, ``1.0E20``, ``1.0E-5``, ``NaN``, ``Infinity``."""
    return _java_floating_text(float(value), single=False)


def java_float_text(value: float) -> str:
    """``Float.toString((float) value)``: the shortest text of the float32 value."""
    return _java_floating_text(float(value), single=True)


def java_decimal_text(value: decimal.Decimal) -> str:
    """``BigDecimal.toString()``: Python's ``str`` follows the same scientific-notation rule."""
    return str(value)


def java_scalar_text(value: Any) -> str:
    """``toString`` of a Java ``Number`` or ``Boolean`` (the string coercion of scalars)."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return java_double_text(value)
    if isinstance(value, decimal.Decimal):
        return java_decimal_text(value)
    raise DataException(f"Cannot convert to string: {type(value).__name__}")


# --- JSON ---------------------------------------------------------------------------


def json_string(text: str) -> str:
    """A JSON string literal escaped as Jackson escapes it."""
    return '"' + text.translate(_ESCAPES) + '"'


def _json_float(value: float, single: bool = False) -> str:
    text = _java_floating_text(value, single)
    # Jackson quotes non-finite numbers (QUOTE_NON_NUMERIC_NUMBERS is on by default).
    return json_string(text) if not math.isfinite(value) else text


def _epoch_millis(value: _dt.datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    return (value - _EPOCH) // _dt.timedelta(milliseconds=1)


def _jackson_date_millis(value: Any) -> int:
    """Epoch millis of the ``java.util.Date`` a Connect logical value would be."""
    if isinstance(value, _dt.datetime):
        return _epoch_millis(value)
    if isinstance(value, _dt.date):
        return (value - _EPOCH_DATE).days * 86_400_000
    return Time.from_logical(Time.SCHEMA, value)


def jackson_json(value: Any) -> str:
    """Compact JSON of a schemaless value as Jackson's ``ObjectMapper`` writes it.

    A :class:`Struct` nested in the value is written as Kafka's JsonConverter
    would write it (Jackson itself cannot serialize a Connect Struct).
    """
    parts: list[str] = []
    _write_jackson(value, parts.append)
    return "".join(parts)


def _write_jackson(value: Any, out: Callable[[str], Any]) -> None:
    if value is None:
        out("null")
    elif isinstance(value, str):
        out(json_string(value))
    elif value is True or value is False:
        out("true" if value else "false")
    elif isinstance(value, int):
        out(str(value))
    elif isinstance(value, float):
        out(_json_float(value))
    elif isinstance(value, decimal.Decimal):
        out(java_decimal_text(value))
    elif isinstance(value, dict):
        _write_object(value.items(), _write_jackson, out)
    elif isinstance(value, (list, tuple)):
        _write_array(value, _write_jackson, out)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        out(json_string(base64.b64encode(bytes(value)).decode("ascii")))
    elif isinstance(value, Struct):
        _write_connect(value.schema, value, out)
    elif isinstance(value, (_dt.date, _dt.time)):
        out(str(_jackson_date_millis(value)))
    elif isinstance(value, uuid.UUID):
        out(json_string(str(value)))
    else:
        raise DataException(f"Cannot convert to JSON: {type(value).__name__}")


def _key_text(key: Any) -> str:
    if key is None:
        raise DataException("Null key for a Map not allowed in JSON")
    return key if isinstance(key, str) else java_scalar_text(key)


def _write_object(items: Any, write: Callable, out: Callable[[str], Any]) -> None:
    out("{")
    first = True
    for key, item in items:
        if not first:
            out(",")
        first = False
        out(json_string(_key_text(key)))
        out(":")
        write(item, out)
    out("}")


def _write_array(items: Any, write: Callable, out: Callable[[str], Any]) -> None:
    out("[")
    first = True
    for item in items:
        if not first:
            out(",")
        first = False
        write(item, out)
    out("]")


# --- JsonConverter (schemas.enable=false) ---------------------------------------------


def connect_json(schema: Schema | None, value: Any) -> str:
    """JSON of a Connect value as ``JsonConverter`` (schemas disabled) serializes it."""
    parts: list[str] = []
    _write_connect(schema, value, parts.append)
    return "".join(parts)


def _write_connect(schema: Schema | None, value: Any, out: Callable[[str], Any]) -> None:
    if schema is None:
        _write_jackson(value, out)
        return
    if value is None:
        if schema.default is not None:
            value = schema.default
        elif schema.optional:
            out("null")
            return
        else:
            raise DataException(
                "Conversion error: null value for field that is required and has no default value"
            )
    logical = logical_type_of(schema)
    if logical is ConnectDecimal:
        raw = ConnectDecimal.from_logical(schema, value)
        out(json_string(base64.b64encode(raw).decode("ascii")))
    elif logical is Date:
        out(str(Date.from_logical(schema, value)))
    elif logical is Time:
        out(str(Time.from_logical(schema, value)))
    elif logical is Timestamp:
        out(str(Timestamp.from_logical(schema, value)))
    else:
        _write_connect_plain(schema, value, out)


def _write_connect_plain(schema: Schema, value: Any, out: Callable[[str], Any]) -> None:
    kind = schema.type
    if kind is Type.FLOAT32:
        out(_json_float(value, single=True))
    elif kind is Type.STRUCT:
        fields = value.schema.fields() if isinstance(value, Struct) else schema.fields()
        items = ((f.name, (f.schema, value.get(f))) for f in fields)
        _write_object(items, lambda pair, o: _write_connect(pair[0], pair[1], o), out)
    elif kind is Type.ARRAY:
        _write_array(value, lambda item, o: _write_connect(schema.value_schema, item, o), out)
    elif kind is Type.MAP:
        _write_connect_map(schema, value, out)
    else:
        _write_jackson(value, out)


def _write_connect_map(schema: Schema, value: dict, out: Callable[[str], Any]) -> None:
    key_schema, value_schema = schema.key_schema, schema.value_schema
    if key_schema is not None and key_schema.type is Type.STRING:
        items = ((k, v) for k, v in value.items())
        _write_object(items, lambda item, o: _write_connect(value_schema, item, o), out)
        return
    # Non-string keys: JsonConverter writes an array of [key, value] pairs.
    def write_pair(pair: tuple, o: Callable[[str], Any]) -> None:
        o("[")
        _write_connect(key_schema, pair[0], o)
        o(",")
        _write_connect(value_schema, pair[1], o)
        o("]")

    _write_array(list(value.items()), write_pair, out)
