"""JSON trees the way the Java transforms see them through Jackson.

A parsed JSON value is plain Python: ``None``, ``bool``, ``int``, ``float``,
``str``, ``list`` and ``dict`` (key order kept). Jackson distinguishes node
classes that Python does not, so a node's *kind* is derived from its value:

=============  ======================================================
kind           Python value
=============  ======================================================
``int``        ``int`` within the 32-bit range (Jackson ``IntNode``)
``long``       ``int`` within the 64-bit range (``LongNode``)
``bigint``     any larger ``int`` (``BigIntegerNode``)
``float``      :class:`Float32` (``FloatNode``; never produced by parsing)
``double``     ``float`` (``DoubleNode``: every JSON number with . or e)
``decimal``    ``decimal.Decimal`` (``DecimalNode``; never produced by parsing)
``binary``     ``bytes`` (``BinaryNode``; never produced by parsing)
``text``       ``str``
``boolean``    ``bool``
``null``       ``None``
``missing``    :data:`MISSING` (``MissingNode``: an absent member)
``array``      ``list``
``object``     ``dict``
=============  ======================================================

:func:`to_json_text` renders a node as Jackson's ``JsonNode.toString()`` does:
compact, non-ASCII unescaped, doubles as Java's ``Double.toString``.
"""

from __future__ import annotations

import base64
import decimal
import json
import math
from typing import Any

from smt.iceberg._util import java_double_str, java_float_str

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class Float32(float):
    """A JSON number held as a 32-bit float (Jackson's ``FloatNode``)."""

    def __repr__(self) -> str:
        return f"Float32({float(self)!r})"


class _Missing:
    """Jackson's ``MissingNode``: what looking up an absent member yields."""

    _instance = None

    def __new__(cls) -> "_Missing":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING = _Missing()


def node_kind(node: Any) -> str:
    """The Jackson node class of a parsed JSON value (see the module table)."""
    if node is None:
        return "null"
    if node is MISSING:
        return "missing"
    if isinstance(node, bool):
        return "boolean"
    if isinstance(node, int):
        if INT32_MIN <= node <= INT32_MAX:
            return "int"
        if INT64_MIN <= node <= INT64_MAX:
            return "long"
        return "bigint"
    if isinstance(node, Float32):
        return "float"
    if isinstance(node, float):
        return "double"
    if isinstance(node, decimal.Decimal):
        return "decimal"
    if isinstance(node, str):
        return "text"
    if isinstance(node, (bytes, bytearray)):
        return "binary"
    if isinstance(node, list):
        return "array"
    if isinstance(node, dict):
        return "object"
    raise TypeError(f"not a JSON node: {type(node).__name__}")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"Non-standard token '{name}': enable JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_WHITESPACE = " \t\n\r"


def parse(text: str) -> Any:
    """Parse the first JSON value in ``text``, as Jackson's ``ObjectReader.readTree``.

    Like Jackson with default features: NaN/Infinity are rejected, and content
    after the first complete value is ignored. Raises ``ValueError`` when the
    text is not valid JSON.
    """
    start = len(text) - len(text.lstrip(_WHITESPACE))
    if start == len(text):
        return MISSING
    value, _end = _DECODER.raw_decode(text, start)
    return value


def to_json_text(node: Any) -> str:
    """Compact JSON for a node, as Jackson's ``JsonNode.toString()``."""
    parts: list[str] = []
    _write(node, parts)
    return "".join(parts)


def _write(node: Any, out: list[str]) -> None:
    kind = node_kind(node)
    if kind == "object":
        out.append("{")
        first = True
        for key, value in node.items():
            if not first:
                out.append(",")
            first = False
            out.append(json.dumps(key, ensure_ascii=False))
            out.append(":")
            _write(value, out)
        out.append("}")
    elif kind == "array":
        out.append("[")
        for index, value in enumerate(node):
            if index:
                out.append(",")
            _write(value, out)
        out.append("]")
    elif kind == "text":
        out.append(json.dumps(node, ensure_ascii=False))
    elif kind == "boolean":
        out.append("true" if node else "false")
    elif kind in ("null", "missing"):
        out.append("null" if kind == "null" else "")
    elif kind in ("int", "long", "bigint"):
        out.append(str(node))
    elif kind in ("double", "float"):
        text = java_double_str(node) if kind == "double" else java_float_str(node)
        # Jackson quotes non-finite numbers (QUOTE_NON_NUMERIC_NUMBERS).
        out.append(text if math.isfinite(node) else f'"{text}"')
    elif kind == "decimal":
        out.append(str(node))
    elif kind == "binary":
        out.append('"' + base64.b64encode(bytes(node)).decode("ascii") + '"')

