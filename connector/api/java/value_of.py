"""``String.valueOf``: the text Java gives a value concatenated into a name or message."""

from __future__ import annotations

import decimal
from typing import Any

from connector.api.java.numbers import decimal_to_string, double_to_string


def java_str(value: Any) -> str:
    """``String.valueOf(value)``: ``null``, ``true``, ``1.0E10``, ``[a, b]`` (a ``List``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return double_to_string(value)
    if isinstance(value, decimal.Decimal):
        return decimal_to_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    return str(value)
