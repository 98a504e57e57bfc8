"""Java ``.properties`` files (a Kafka Connect worker's config, a ``${file:...}`` provider's file), read as
``java.util.Properties.load`` reads them."""

from __future__ import annotations

import os
import re
from typing import Optional

from connector.api.errors import ConfigException

ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}  # the characters a backslash escapes (also in JAAS values)


def load_worker_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read a Java ``.properties`` file (a Kafka Connect worker config).

    Java reads these files as ISO-8859-1; icefloe reads UTF-8 (what people
    write today) and falls back to ISO-8859-1 when the bytes are not UTF-8.
    ``\\uXXXX`` escapes work either way.
    """
    with open(path, "rb") as handle:
        raw = handle.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("iso-8859-1")
    return parse_properties(text)


def parse_properties(text: str) -> dict[str, str]:
    """Parse ``.properties`` text with ``java.util.Properties.load`` rules.

    Comment lines start with ``#`` or ``!``; a key ends at the first
    unescaped ``=``, ``:`` or whitespace; a line ending in an odd number of
    backslashes continues on the next line (whose leading whitespace is
    dropped); ``\\t \\n \\r \\f \\uXXXX`` are escapes and any other escaped
    character stands for itself. Later duplicates win.
    """
    result: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split_key_value(line)
        result[_unescape(key)] = _unescape(value)
    return result


def _logical_lines(text: str) -> list[str]:
    """Join continuation lines and drop blank and comment lines."""
    lines: list[str] = []
    pending: Optional[str] = None
    for natural in re.split(r"\r\n|\r|\n", text):
        stripped = natural.lstrip(" \t\f")
        if pending is None:
            if not stripped or stripped[0] in "#!":
                continue
            current = stripped
        else:
            current = pending + stripped
        if _ends_with_continuation(current):
            pending = current[:-1]
        else:
            pending = None
            lines.append(current)
    if pending is not None:  # a trailing backslash on the last line is dropped
        lines.append(pending)
    return lines


def _ends_with_continuation(line: str) -> bool:
    trailing = len(line) - len(line.rstrip("\\"))
    return trailing % 2 == 1


def _split_key_value(line: str) -> tuple[str, str]:
    """Split at the first unescaped separator (``=``, ``:`` or whitespace)."""
    index, length = 0, len(line)
    while index < length:
        char = line[index]
        if char == "\\":
            index += 2
            continue
        if char in "=: \t\f":
            break
        index += 1
    key = line[:index]
    rest = line[index:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return key, rest


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        if char != "\\" or index + 1 == length:
            out.append(char)
            index += 1
            continue
        nxt = text[index + 1]
        if nxt == "u":
            digits = text[index + 2 : index + 6]
            if len(digits) != 4 or not all(c in "0123456789abcdefABCDEF" for c in digits):
                # Java's message; the text itself may be a secret, so it is not quoted
                raise ConfigException("Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            index += 6
        else:
            out.append(ESCAPES.get(nxt, nxt))
            index += 2
    return "".join(out)
