"""The JSON text Arrow's reader takes and Kafka's JsonConverter refuses, or reads as another value.

Every column-wise JSON path (schemaless values, JsonConverter envelopes,
Confluent JSON Schema payloads) screens the newline-joined text of its batch
with :func:`check_lax_tokens` before reading it with Arrow, and declines the
batch (:class:`Declined`, so that the per-record converter raises for the
record, or sends it to the dead letter queue) when the text holds:

* ``NaN``, ``Infinity``, ``-Infinity`` or the other spellings Arrow's reader
  takes (``Inf``, ``-NaN``): Jackson refuses them (``ALLOW_NON_NUMERIC_NUMBERS``
  is off in Kafka's mapper), Arrow reads doubles;
* a number longer than 1,000 characters (Jackson's ``StreamReadConstraints``);
* a number with a three-digit negative exponent: it may underflow to a signed
  zero, which Jackson's exact decimals and Arrow's doubles sign differently;
* bytes that are not UTF-8.

:func:`json_converter_value` reads one value as the converter does, for the
few places that look at single values (a new table's sample, the screen of a
declined batch's values).

Each check runs on numpy views of the text first (is there a ``N`` followed
by ``aN``?) and looks for the token with a regular expression only then, so a
clean batch costs a few vectorised scans. A match inside a string value also
declines: the per-record path then gives the same result, only slower.

What Arrow's reader refuses and Jackson takes (leading zeros, which Kafka's
mapper allows, and text after the object) declines at the reader. Numbers
read differently are found in the parsed doubles, where the schema says what
Jackson would make of them (``json_batch``, ``json_payloads``): a ``-0.0``
(Jackson: ``0.0``), and without schemas an integer beyond int64 (Arrow: a
double; JsonConverter: ``longValue()``, its low 64 bits).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np
import pyarrow as pa

import converters
from connector.api.declined import Declined

MAX_NUMBER_LENGTH = 1000  # Jackson's StreamReadConstraints: longer numbers are errors
_NON_FINITE = re.compile(rb"[:,\[][ \t]*-?(?:NaN|Inf)")
_LONG_NUMBER = re.compile(rb"[0-9.eE+-]{%d}" % (MAX_NUMBER_LENGTH + 1))
_TINY_NUMBER = re.compile(rb"[0-9][eE]-[0-9]{3}")


def check_lax_tokens(lines: pa.Buffer, longest: int, where: str) -> None:
    """Declined when ``lines`` (a batch's JSON text) holds a token listed above.

    ``longest``: the length of its longest value; ``where``: what the text is, for the reason
    (``in a payload``, ``in a value``).
    """
    block = np.frombuffer(lines, dtype=np.uint8)
    if (holds(block, b"NaN") or holds(block, b"Inf")) and _NON_FINITE.search(lines):
        raise Declined(f"NaN or Infinity {where}")
    if longest > MAX_NUMBER_LENGTH and _LONG_NUMBER.search(lines):
        raise Declined(f"a number longer than {MAX_NUMBER_LENGTH} characters {where}")
    if _has_negative_exponent(block) and _TINY_NUMBER.search(lines):
        raise Declined(f"a number with a three-digit negative exponent {where}")
    whole = pa.Array.from_buffers(pa.binary(), 1, [None, pa.array([0, lines.size], pa.int32()).buffers()[1], lines])
    try:
        whole.cast(pa.string())
    except pa.ArrowInvalid as exc:
        raise Declined(f"invalid UTF-8 {where}") from exc


def _has_negative_exponent(block: np.ndarray) -> bool:
    """Whether ``block`` holds ``e-`` or ``E-``: from the minus signs, rarer in JSON than the letter e."""
    minus = np.flatnonzero(block[1:] == ord("-"))
    before = block[minus]  # the byte before each minus sign
    return bool(np.any((before == ord("e")) | (before == ord("E"))))


def holds(block: np.ndarray, token: bytes) -> bool:
    """Whether ``token`` occurs in ``block``: the positions of its first byte, then the bytes after them."""
    starts = np.flatnonzero(block[:len(block) - len(token) + 1] == token[0])
    for shift, byte in enumerate(token[1:], start=1):
        if len(starts) == 0:
            return False
        starts = starts[block[starts + shift] == byte]
    return len(starts) > 0



@functools.cache
def _schemaless_converter() -> Any:
    return converters.load("org.apache.kafka.connect.json.JsonConverter", {"schemas.enable": "false"})


def json_converter_value(data: bytes) -> Any:
    """The Connect value Kafka's JsonConverter (``schemas.enable=false``) reads from ``data``.

    Raises ``DataException`` where the converter refuses the bytes.
    """
    return _schemaless_converter().to_connect_data("", data).value
