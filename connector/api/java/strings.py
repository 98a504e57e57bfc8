"""Small ``java.lang.String`` behaviours that configs and values rely on."""

from __future__ import annotations

from typing import Any

_TRIMMED = "".join(chr(c) for c in range(0x21))


def java_trim(text: str) -> str:
    """``String.trim()``: strips every char <= U+0020 at both ends, and nothing else."""
    return text.strip(_TRIMMED)


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
