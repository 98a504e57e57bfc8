"""Jackson's JSON tree model: reading, writing and the ``JsonNode`` accessors.

A tree is plain Python: ``dict`` (object, key order kept), ``list`` (array),
``str``, ``bool``, ``None`` (JSON null), :data:`MISSING` (an empty document or
an absent member), ``int``, ``float`` (``DoubleNode``), :class:`Float32`
(``FloatNode``), ``decimal.Decimal`` (``DecimalNode``) and ``bytes``
(``BinaryNode``). Jackson tells node classes apart that Python does not;
:func:`node_kind` derives the class from the value.

Reading has two modes (:class:`ReadMode`) because Kafka's JsonConverter
configures its mapper differently from a default ``ObjectMapper`` (which the
Iceberg SMTs use). Writing is the same for both: compact, non-ASCII as is,
``"``, ``\\`` and control characters escaped (upper-case hex), numbers as
Java's ``toString``, non-finite numbers quoted, bytes as base64.
"""

from __future__ import annotations

import base64
import decimal
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable

from connector.api.java import numbers as java_numbers
from connector.api.sentinel import Sentinel


class JsonReadError(ValueError):
    """The text is not a JSON document Jackson would accept."""


class JsonWriteError(ValueError):
    """A tree cannot be written as JSON."""


class _Missing(Sentinel):
    """Jackson's ``MissingNode``: an empty document, or an absent member."""

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


class Float32(float):
    """A number held as a Java ``float`` (``FloatNode``), written as ``Float.toString``."""

    def __repr__(self) -> str:
        return f"Float32({float(self)!r})"


# ======================================================================================
# Node classes
# ======================================================================================

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def node_kind(node: Any) -> str:
    """The Jackson node class of a tree value.

    ``int``/``long``/``bigint`` for integers by range (``IntNode``, ``LongNode``,
    ``BigIntegerNode``), ``float`` (:class:`Float32`), ``double``, ``decimal``,
    ``binary``, ``text``, ``boolean``, ``null``, ``missing``, ``array``, ``object``.
    """
    if node is None:
        return "null"
    if node is MISSING:
        return "missing"
    if isinstance(node, bool):
        return "boolean"
    if isinstance(node, int):
        if _INT32_MIN <= node <= _INT32_MAX:
            return "int"
        return "long" if _INT64_MIN <= node <= _INT64_MAX else "bigint"
    if isinstance(node, Float32):
        return "float"
    for types, kind in _KINDS:
        if isinstance(node, types):
            return kind
    raise TypeError(f"not a JSON node: {type(node).__name__}")


_KINDS: tuple[tuple[Any, str], ...] = (
    (float, "double"), (decimal.Decimal, "decimal"), (str, "text"),
    ((bytes, bytearray, memoryview), "binary"), ((list, tuple), "array"), (dict, "object"),
)
_NODE_TYPES = {
    "null": "NULL", "missing": "MISSING", "boolean": "BOOLEAN", "text": "STRING", "binary": "BINARY",
    "array": "ARRAY", "object": "OBJECT",
}


def node_type(node: Any) -> str:
    """``JsonNode.getNodeType()`` as its name (``NUMBER``, ``STRING``, ...)."""
    try:
        return _NODE_TYPES.get(node_kind(node), "NUMBER")
    except TypeError:
        return "POJO"


# ======================================================================================
# Reading
# ======================================================================================


@dataclass(frozen=True)
class ReadMode:
    """How a mapper is configured to read.

    ``big_decimal_floats``: floating-point numbers become exact ``Decimal``
    (``USE_BIG_DECIMAL_FOR_FLOATS`` with the exact node factory: ``1.5600``
    keeps its scale) instead of ``float``. ``leading_zeros``:
    ``ALLOW_LEADING_ZEROS_FOR_NUMBERS`` (``007`` reads as 7).
    """

    big_decimal_floats: bool
    leading_zeros: bool


OBJECT_MAPPER = ReadMode(big_decimal_floats=False, leading_zeros=False)
"""A default ``ObjectMapper`` (the Iceberg SMTs)."""
KAFKA_JSON = ReadMode(big_decimal_floats=True, leading_zeros=True)
"""Kafka's ``JsonDeserializer`` (the JsonConverter)."""

_MAX_NUMBER_LENGTH = 1000  # Jackson's StreamReadConstraints default
_WHITESPACE = " \t\n\r"


def _number_length_checked(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse_checked(text: str) -> Any:
        if len(text) > _MAX_NUMBER_LENGTH:
            raise JsonReadError(
                f"Number value length ({len(text)}) exceeds the maximum length ({_MAX_NUMBER_LENGTH})"
            )
        return parse(text)

    return parse_checked


def _big_decimal(text: str) -> decimal.Decimal:
    number = decimal.Decimal(text)
    return number.copy_abs() if number.is_zero() else number  # BigDecimal has no negative zero


def _reject_constant(name: str) -> Any:
    raise JsonReadError(f"Non-standard token '{name}': enable JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS")


def _decoder(big_decimal_floats: bool) -> json.JSONDecoder:
    return json.JSONDecoder(
        # Integers keep the C scanner's fast path; their length is not checked.
        parse_float=_number_length_checked(_big_decimal if big_decimal_floats else float),
        parse_constant=_reject_constant,
        strict=True,
    )


_DECODERS = {floats: _decoder(floats) for floats in (False, True)}

# A string literal (kept as is), or the redundant zeros leading a number.
_LEADING_ZEROS = re.compile(r'"(?:[^"\\]|\\.)*"|(?<![\w.])(-?)0+(?=[0-9])')


def _strip_leading_zeros(text: str) -> str:
    return _LEADING_ZEROS.sub(lambda m: m.group(0) if m.group(1) is None else m.group(1), text)


def _check_root_end(text: str, value: Any, end: int) -> None:
    """Jackson needs white space after a root-level number, and no letters after a literal."""
    if end >= len(text):
        return
    following = text[end]
    if isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool):
        if following not in _WHITESPACE:
            raise JsonReadError(f"Expected space separating root-level values, found {following!r}")
    elif isinstance(value, bool) or value is None:
        if following.isalnum() or following in "_$":
            raise JsonReadError(f"Unrecognized token at position {end}")


def _parse_document(text: str, decoder: json.JSONDecoder) -> Any:
    start = len(text) - len(text.lstrip(_WHITESPACE))
    if start == len(text):
        return MISSING
    try:
        value, end = decoder.raw_decode(text, start)
    except RecursionError as exc:
        raise JsonReadError("Document nesting depth exceeds the maximum allowed") from exc
    except (json.JSONDecodeError, decimal.InvalidOperation) as exc:
        raise JsonReadError(str(exc)) from exc
    _check_root_end(text, value, end)
    return value


def read_text(text: str, mode: ReadMode = OBJECT_MAPPER) -> Any:
    """The first JSON value in ``text``, as ``ObjectMapper.readTree``; raises :class:`JsonReadError`.

    Text after a complete root value is ignored (Jackson's default), and an
    empty document is :data:`MISSING`; ``NaN`` and ``Infinity`` are rejected.
    """
    decoder = _DECODERS[mode.big_decimal_floats]
    try:
        return _parse_document(text, decoder)
    except JsonReadError:
        if not mode.leading_zeros:
            raise
        # Python's parser rejects leading zeros, which are rare: retry without them.
        relaxed = _strip_leading_zeros(text)
        if relaxed == text:
            raise
        return _parse_document(relaxed, decoder)


def read_tree(data: bytes, mode: ReadMode = KAFKA_JSON) -> Any:
    """Parse JSON bytes in any of the UTF encodings Jackson detects; see :func:`read_text`."""
    data = bytes(data)
    try:
        text = data.decode(json.detect_encoding(data))
    except UnicodeDecodeError as exc:
        raise JsonReadError(f"Invalid text encoding: {exc}") from exc
    return read_text(text, mode)


# ======================================================================================
# Writing
# ======================================================================================

# Jackson escapes '"', '\\' and every control character below U+0020 (short forms for
# \b \t \n \f \r, upper-case \u00XX otherwise) and nothing else: not '/', not U+007F.
_ESCAPES = {code: f"\\u{code:04X}" for code in range(0x20)}
_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n",
                 0x0C: "\\f", 0x0D: "\\r"})
# Python's C encoder escapes the same characters, but writes the hex letters in lower case.
_HEX_LETTER_CONTROLS = re.compile("[\x0b\x0e\x0f\x1a-\x1f]")


def quote(text: str) -> str:
    """``text`` as a JSON string literal, escaped as Jackson escapes it."""
    if _HEX_LETTER_CONTROLS.search(text):
        return '"' + text.translate(_ESCAPES) + '"'
    return json.encoder.encode_basestring(text)


def _float_text(value: float, text: str) -> str:
    # Jackson quotes non-finite numbers (WRITE_NAN_AS_STRINGS).
    return text if math.isfinite(value) else f'"{text}"'


def _key_text(key: Any) -> str:
    """A map key: text as is, numbers and booleans as their ``toString`` (StdKeySerializers)."""
    if isinstance(key, str):
        return key
    if key is None:
        raise JsonWriteError("Null key for a Map not allowed in JSON")
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float):
        return java_numbers.double_to_string(key)
    if isinstance(key, (int, decimal.Decimal)):
        return str(key) if isinstance(key, int) else java_numbers.decimal_to_string(key)
    raise JsonWriteError(f"Cannot write a {type(key).__name__} as a JSON object key")


class _Writer:
    """Appends the JSON text of a tree to ``parts``; ``default`` turns other values into trees."""

    def __init__(self, default: Callable[[Any], Any] | None):
        self.parts: list[str] = []
        self.default = default

    def write(self, node: Any) -> None:
        parts = self.parts
        if isinstance(node, str):
            parts.append(quote(node))
        elif node is None:
            parts.append("null")
        elif isinstance(node, bool):
            parts.append("true" if node else "false")
        elif isinstance(node, int):
            parts.append(str(node))
        elif isinstance(node, Float32):
            parts.append(_float_text(node, java_numbers.float_to_string(node)))
        elif isinstance(node, float):
            parts.append(_float_text(node, java_numbers.double_to_string(node)))
        elif isinstance(node, dict):
            self._object(node)
        elif isinstance(node, (list, tuple)):
            self._array(node)
        else:
            self._other(node)

    def _other(self, node: Any) -> None:
        if isinstance(node, decimal.Decimal):
            if not node.is_finite():
                raise JsonWriteError(f"Cannot write the decimal {node} as a JSON number")
            self.parts.append(java_numbers.decimal_to_string(node))
        elif isinstance(node, (bytes, bytearray, memoryview)):
            self.parts.append('"' + base64.b64encode(bytes(node)).decode("ascii") + '"')
        elif node is MISSING:
            pass  # MissingNode.toString() is empty
        elif self.default is not None:
            self.write(self.default(node))
        else:
            raise JsonWriteError(f"Cannot write a {type(node).__name__} as JSON")

    def _array(self, node: list | tuple) -> None:
        self.parts.append("[")
        for index, element in enumerate(node):
            if index:
                self.parts.append(",")
            self.write(element)
        self.parts.append("]")

    def _object(self, node: dict) -> None:
        self.parts.append("{")
        for index, (key, value) in enumerate(node.items()):
            if index:
                self.parts.append(",")
            self.parts.append(quote(_key_text(key)))
            self.parts.append(":")
            self.write(value)
        self.parts.append("}")


def write_text(node: Any, default: Callable[[Any], Any] | None = None) -> str:
    """``node`` as compact JSON text (``JsonNode.toString()``, ``writeValueAsString``).

    ``default`` is called with any value that is not a tree node and returns
    the tree to write in its place (as ``json.dumps``'s ``default``); without
    it such values raise :class:`JsonWriteError`.
    """
    writer = _Writer(default)
    writer.write(node)
    return "".join(writer.parts)


def write_tree(node: Any) -> bytes:
    """``node`` as UTF-8 JSON bytes; an unpaired surrogate raises :class:`JsonWriteError`, as in Jackson."""
    try:
        return write_text(node).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise JsonWriteError(f"Text is not valid Unicode (unpaired surrogate): {exc}") from exc


# ======================================================================================
# JsonNode accessors
# ======================================================================================


def is_number(node: Any) -> bool:
    return isinstance(node, (int, float, decimal.Decimal)) and not isinstance(node, bool)


def is_integral(node: Any) -> bool:
    """An integer node (IntNode, LongNode or BigIntegerNode)."""
    return isinstance(node, int) and not isinstance(node, bool)


def is_int(node: Any) -> bool:
    """An IntNode: an integer that fits 32 bits."""
    return is_integral(node) and java_numbers.wrap_int(node, 32) == node


def int_value(node: Any) -> int:
    """``JsonNode.intValue()``: numbers truncated to their low 32 bits, anything else 0."""
    return java_numbers.wrap_int(java_numbers.java_long_value(node), 32) if is_number(node) else 0


def long_value(node: Any) -> int:
    """``JsonNode.longValue()``: numbers truncated to their low 64 bits, anything else 0."""
    return java_numbers.java_long_value(node) if is_number(node) else 0


def float_value(node: Any) -> float:
    """``JsonNode.floatValue()``: the nearest float32, or 0.0 for non-numbers."""
    if not is_number(node):
        return 0.0
    if isinstance(node, float):
        return java_numbers.to_float32(node)
    return java_numbers.exact_to_float32(node)


def double_value(node: Any) -> float:
    """``JsonNode.doubleValue()``: the nearest double, or 0.0 for non-numbers."""
    return java_numbers.java_double_value(node) if is_number(node) else 0.0


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
