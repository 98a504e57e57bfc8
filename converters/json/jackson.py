"""JSON text and Jackson's tree model, as the JsonConverter sees them.

Kafka's JsonConverter reads and writes JSON with Jackson; its output bytes and
its reading of numbers are part of the converter's contract. This module
reproduces the settings Kafka uses:

* Reading: floats become exact decimals (``USE_BIG_DECIMAL_FOR_FLOATS``,
  exact node factory: ``1.5600`` keeps its scale), integers stay integers,
  leading zeros are accepted (``ALLOW_LEADING_ZEROS_FOR_NUMBERS``), ``NaN``
  is not, text after the first value is ignored, and an empty document is
  the MISSING node.
* Writing: compact (``{"a":1}``), non-ASCII as UTF-8, control characters
  escaped with upper-case hex, doubles as ``Double.toString`` (``1.0E10``),
  FLOAT32 values (:class:`Float32`) as ``Float.toString``, decimals as
  ``BigDecimal.toString``, non-finite numbers as the strings ``"NaN"``,
  ``"Infinity"``, ``"-Infinity"``, and bytes as base64 text.

The tree uses plain Python values: dict (object), list (array), str, int,
``decimal.Decimal`` (a floating-point number), bool, None (JSON null), and
:data:`MISSING`. The ``*_value`` accessors answer as Jackson's ``JsonNode``
accessors do, including their leniency (``int_value`` of a string is 0).
"""

from __future__ import annotations

import base64
import decimal
import json
import math
import re
from typing import Any

from connector.api.values import (
    decimal_to_float32,
    java_decimal_to_string,
    java_double_to_string,
    java_double_value,
    java_float_to_string,
    java_long_value,
    to_float32,
    wrap_int,
)

__all__ = [
    "MISSING", "Float32", "JsonReadError", "JsonWriteError", "read_tree", "write_tree",
    "node_type", "is_number", "is_integral", "is_int", "int_value", "long_value",
    "float_value", "double_value", "decimal_value", "boolean_value", "text_value",
    "binary_value",
]


class JsonReadError(ValueError):
    """The bytes are not a JSON document Jackson would accept."""


class JsonWriteError(ValueError):
    """A tree cannot be written as JSON."""


class _Missing:
    """Jackson's MissingNode: what an empty document reads as."""

    _instance: "_Missing | None" = None

    def __new__(cls) -> "_Missing":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Float32(float):
    """A float written as Java's ``Float.toString`` (Jackson's FloatNode)."""


# ======================================================================================
# Reading
# ======================================================================================

_MAX_NUMBER_LENGTH = 1000  # Jackson's StreamReadConstraints default
_JSON_WHITESPACE = " \t\n\r"


def _parse_float(text: str) -> decimal.Decimal:
    if len(text) > _MAX_NUMBER_LENGTH:
        raise JsonReadError(
            f"Number value length ({len(text)}) exceeds the maximum length ({_MAX_NUMBER_LENGTH})"
        )
    number = decimal.Decimal(text)
    # BigDecimal has no negative zero.
    return number.copy_abs() if number.is_zero() else number


def _reject_constant(name: str) -> Any:
    raise JsonReadError(f"Non-standard token '{name}': not allowed in JSON")


_DECODER = json.JSONDecoder(parse_float=_parse_float, parse_constant=_reject_constant, strict=True)

# A string literal (kept as is), or the redundant zeros leading a number.
_LEADING_ZEROS = re.compile(r'"(?:[^"\\]|\\.)*"|(?<![\w.])(-?)0+(?=[0-9])')


def _strip_leading_zeros(text: str) -> str:
    return _LEADING_ZEROS.sub(lambda m: m.group(0) if m.group(1) is None else m.group(1), text)


def _decode_text(data: bytes) -> str:
    data = bytes(data)
    try:
        return data.decode(json.detect_encoding(data))
    except UnicodeDecodeError as exc:
        raise JsonReadError(f"Invalid text encoding: {exc}") from exc


def _check_root_end(text: str, value: Any, end: int) -> None:
    """Jackson needs white space after a top-level number and no letters after a literal."""
    if end >= len(text):
        return
    following = text[end]
    if isinstance(value, (int, decimal.Decimal)) and not isinstance(value, bool):
        if following not in _JSON_WHITESPACE:
            raise JsonReadError(f"Expected space separating root-level values, found {following!r}")
    elif isinstance(value, bool) or value is None:
        if following.isalnum() or following in "_$":
            raise JsonReadError(f"Unrecognized token at position {end}")


def _parse_document(text: str) -> Any:
    start = len(text) - len(text.lstrip(_JSON_WHITESPACE))
    if start == len(text):
        return MISSING
    try:
        value, end = _DECODER.raw_decode(text, start)
    except RecursionError as exc:
        raise JsonReadError("Document nesting depth exceeds the maximum allowed") from exc
    except (json.JSONDecodeError, decimal.InvalidOperation) as exc:
        raise JsonReadError(str(exc)) from exc
    _check_root_end(text, value, end)
    return value


def read_tree(data: bytes) -> Any:
    """Parse one JSON document as Kafka's JsonDeserializer does; raises :class:`JsonReadError`."""
    text = _decode_text(data)
    try:
        return _parse_document(text)
    except JsonReadError:
        # Leading zeros are rare and rejected by Python's parser: retry without them.
        relaxed = _strip_leading_zeros(text)
        if relaxed == text:
            raise
        return _parse_document(relaxed)


# ======================================================================================
# Writing
# ======================================================================================

# Characters whose \\u escape has letters; Python writes those in lower case, Jackson in upper.
_HEX_LETTER_CONTROLS = re.compile("[\x0b\x0e\x0f\x1a-\x1f]")
_ESCAPES = {code: f"\\u{code:04X}" for code in range(0x20)}
_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n",
                 0x0C: "\\f", 0x0D: "\\r"})


def _quote(text: str) -> str:
    if _HEX_LETTER_CONTROLS.search(text):
        return '"' + text.translate(_ESCAPES) + '"'
    return json.encoder.encode_basestring(text)  # C-accelerated; same escapes otherwise


def _number_text(value: float, rendered: str) -> str:
    # Jackson quotes non-finite numbers (QUOTE_NON_NUMERIC_NUMBERS).
    return rendered if math.isfinite(value) else f'"{rendered}"'


def _write(node: Any, parts: list[str]) -> None:
    if node is None:
        parts.append("null")
    elif isinstance(node, bool):
        parts.append("true" if node else "false")
    elif isinstance(node, int):
        parts.append(str(node))
    elif isinstance(node, Float32):
        parts.append(_number_text(node, java_float_to_string(node)))
    elif isinstance(node, float):
        parts.append(_number_text(node, java_double_to_string(node)))
    elif isinstance(node, decimal.Decimal):
        if not node.is_finite():
            raise JsonWriteError(f"Cannot write the decimal {node} as a JSON number")
        parts.append(java_decimal_to_string(node))
    elif isinstance(node, str):
        parts.append(_quote(node))
    elif isinstance(node, (bytes, bytearray, memoryview)):
        parts.append('"' + base64.b64encode(bytes(node)).decode("ascii") + '"')
    elif isinstance(node, (list, tuple)):
        _write_array(node, parts)
    elif isinstance(node, dict):
        _write_object(node, parts)
    else:
        raise JsonWriteError(f"Cannot write a {type(node).__name__} as JSON")


def _write_array(node: list | tuple, parts: list[str]) -> None:
    parts.append("[")
    for index, element in enumerate(node):
        if index:
            parts.append(",")
        _write(element, parts)
    parts.append("]")


def _write_object(node: dict, parts: list[str]) -> None:
    parts.append("{")
    for index, (key, value) in enumerate(node.items()):
        if index:
            parts.append(",")
        parts.append(_quote(key))
        parts.append(":")
        _write(value, parts)
    parts.append("}")


def write_text(node: Any) -> str:
    """``node`` as compact JSON text, as Jackson's ObjectMapper writes it."""
    parts: list[str] = []
    _write(node, parts)
    return "".join(parts)


def write_tree(node: Any) -> bytes:
    """``node`` as UTF-8 JSON bytes; raises :class:`JsonWriteError`."""
    try:
        return write_text(node).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise JsonWriteError(f"Text is not valid Unicode (unpaired surrogate): {exc}") from exc


# ======================================================================================
# Jackson's JsonNode accessors
# ======================================================================================


def node_type(node: Any) -> str:
    """``JsonNode.getNodeType()`` as its name (``NUMBER``, ``STRING``, ...)."""
    if node is MISSING:
        return "MISSING"
    if node is None:
        return "NULL"
    if isinstance(node, bool):
        return "BOOLEAN"
    if isinstance(node, (int, float, decimal.Decimal)):
        return "NUMBER"
    if isinstance(node, str):
        return "STRING"
    if isinstance(node, (bytes, bytearray)):
        return "BINARY"
    if isinstance(node, list):
        return "ARRAY"
    if isinstance(node, dict):
        return "OBJECT"
    return "POJO"


def is_number(node: Any) -> bool:
    return isinstance(node, (int, float, decimal.Decimal)) and not isinstance(node, bool)


def is_integral(node: Any) -> bool:
    """An integer node (IntNode, LongNode or BigIntegerNode)."""
    return isinstance(node, int) and not isinstance(node, bool)


def is_int(node: Any) -> bool:
    """An IntNode: an integer that fits 32 bits."""
    return is_integral(node) and wrap_int(node, 32) == node


def int_value(node: Any) -> int:
    """``JsonNode.intValue()``: numbers truncated to their low 32 bits, anything else 0."""
    return wrap_int(java_long_value(node), 32) if is_number(node) else 0


def long_value(node: Any) -> int:
    """``JsonNode.longValue()``: numbers truncated to their low 64 bits, anything else 0."""
    return java_long_value(node) if is_number(node) else 0


def float_value(node: Any) -> float:
    """``JsonNode.floatValue()``: the nearest float32, or 0.0 for non-numbers."""
    if not is_number(node):
        return 0.0
    if isinstance(node, int) and abs(node) < 2**53:
        return to_float32(float(node))
    if isinstance(node, float):
        return to_float32(node)
    return decimal_to_float32(decimal.Decimal(node))


def double_value(node: Any) -> float:
    """``JsonNode.doubleValue()``: the nearest double, or 0.0 for non-numbers."""
    return java_double_value(node) if is_number(node) else 0.0


def decimal_value(node: Any) -> decimal.Decimal:
    """``JsonNode.decimalValue()``: exact for numbers, 0 otherwise."""
    if isinstance(node, decimal.Decimal):
        return node
    if is_integral(node):
        return decimal.Decimal(node)
    return decimal.Decimal(0)


def boolean_value(node: Any) -> bool:
    """``JsonNode.booleanValue()``: false unless the node is ``true``."""
    return node is True


def text_value(node: Any) -> str | None:
    """``JsonNode.textValue()``: the text of a string node, else None."""
    return node if isinstance(node, str) else None


# Jackson's default base64 (MIME without line feeds): padding required, white space
# allowed before each group of four.
_BASE64_GROUPS = re.compile(
    r"(?:[\x00-\x20]*(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}==))*[\x00-\x20]*"
)
_BASE64_SPACE = re.compile(r"[\x00-\x20]+")


def _decode_base64(text: str) -> bytes:
    if not _BASE64_GROUPS.fullmatch(text):
        raise ValueError("Illegal base64 content")
    compact = _BASE64_SPACE.sub("", text)
    if "=" not in compact[:-2]:
        return base64.b64decode(compact)
    # Jackson carries on after a padded group; decode group by group.
    return b"".join(base64.b64decode(compact[i:i + 4]) for i in range(0, len(compact), 4))


def binary_value(node: Any) -> bytes | None:
    """``JsonNode.binaryValue()``: base64-decoded text; None for non-text nodes.

    Raises ValueError for text that is not valid base64.
    """
    if isinstance(node, (bytes, bytearray)):
        return bytes(node)
    if isinstance(node, str):
        return _decode_base64(node)
    return None
