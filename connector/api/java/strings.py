"""Small ``java.lang.String`` behaviours that configs and values rely on."""

from __future__ import annotations

from typing import Any


def java_str(value: Any) -> str:
    """``String.valueOf`` of a parsed config value: null, true, [a, b]."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    return str(value)


def java_trim(text: str) -> str:
    """``String.trim()``: strips every char <= U+0020 at both ends."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def java_split(text: str, separator: str) -> list[str]:
    """``String.split(literal)``: trailing empty strings are removed."""
    parts = text.split(separator)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if parts == [""] and text != "":
        return []
    return parts


def class_name(value: Any) -> str:
    """The class of a value for error messages (``nullSafeClassName``); Python's names."""
    if value is None:
        return "null"
    return type(value).__name__
