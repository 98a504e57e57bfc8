"""JsonConverter envelopes (``schemas.enable=true``) → Arrow rows typed by their Connect schema, a batch at a time.

The per-record strategy (``JsonConverter.to_connect_data`` → ``Struct`` →
``RecordConverter``) is the specification; this module gives the same rows
faster. When every value of a batch starts with the same bytes
``{"schema":<S>,"payload":`` and ends with ``}``, the payloads are those
values with that prefix and the last byte cut off: one newline-delimited
JSON document, read by Arrow's JSON reader with an explicit schema derived
from the Connect schema of ``S`` (the shared JSON rules and typing:
``converters/batch/json_payloads.py``).

Invariants (else the batch declines, :class:`Declined`, and runs per record):

* the envelope prefix, schema spelling and white space included, is the same
  byte for byte across the batch, each payload is one JSON object and nothing
  follows it but white space and the envelope's closing ``}``;
* ``S`` is a STRUCT whose fields (recursively) are BOOLEAN, INT8/16/32/64,
  FLOAT32/64, STRING, STRUCT or an ARRAY of the primitive ones, with no
  default values and no named (logical) types (:func:`unsupported`);
* every payload token the reader reads is of the JSON kind the schema asks
  for (the reader refuses a string for a number, a number for a string, ...:
  Java's JsonConverter would coerce them, which is left to the per-record
  path), integers fit their Connect type (Java wraps silently), a FLOAT32 is
  not a double exactly halfway between two floats (rounding twice could
  differ), and nulls are only where the schema is optional;
* the payloads hold nothing the reader is laxer about than Jackson: no byte
  below 0x20 (line breaks would split documents; raw control characters in
  strings), no ``NaN``/``Infinity``, no number longer than 1,000 characters
  or with a three-digit negative exponent (a negative underflow is a negative
  zero per record, and the reader's zero is made positive), valid UTF-8.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from connector.api.errors import DataException
from connector.api.java import jackson
from connector.api.lru import LRUCache
from connector.api.schema import Schema
from converters.batch.json_payloads import arrow_type, buffers, payload_lines, read_rows, typed, unsupported
from converters.batch.typed import DecodedBatch

_SPACE = rb"[ \t\n\r]*"
_HEAD = re.compile(_SPACE + rb'\{' + _SPACE + rb'"schema"' + _SPACE + rb":" + _SPACE)
_MIDDLE = re.compile(_SPACE + rb"," + _SPACE + rb'"payload"' + _SPACE + rb":" + _SPACE)


class EnvelopeReader:
    """Decodes batches of one JsonConverter's envelopes column-wise."""

    def __init__(self, converter: Any):
        self.converter = converter
        self._schemas: LRUCache[bytes, Schema] = LRUCache(64)  # envelope prefix → its Connect schema

    def decode(self, values: pa.Array) -> DecodedBatch:
        """The non-null ``values`` of one batch as a struct array (one row each); Declined when not exact."""
        if len(values) == 0:
            raise Declined("only tombstones")
        if not pa.types.is_binary(values.type):
            values = values.cast(pa.binary())
        prefix = envelope_prefix(values[0].as_py())
        _check_envelopes(values, prefix)
        schema = self._schema(prefix)
        lines = payload_lines(values, len(prefix), closing=True)
        parsed = read_rows(lines, arrow_type(schema), len(values))
        return DecodedBatch(typed(parsed, schema, ""), schema)

    def _schema(self, prefix: bytes) -> Schema:
        schema = self._schemas.get(prefix)
        if schema is None:
            schema = self._connect_schema(prefix)
            self._schemas.put(prefix, schema)
        return schema

    def _connect_schema(self, prefix: bytes) -> Schema:
        text = _HEAD.sub(b"", prefix, count=1)
        text = text[:_MIDDLE.search(text).start()]  # type: ignore[union-attr]  # found by envelope_prefix
        try:
            schema = self.converter.as_connect_schema(jackson.read_tree(text))
        except (jackson.JsonReadError, DataException) as exc:
            raise Declined(f"an envelope schema the converter refuses ({type(exc).__name__})") from exc
        if schema is None:
            raise Declined("an envelope without a schema")
        reason = unsupported(schema)
        if reason is not None:
            raise Declined(f"an envelope schema with {reason}")
        return schema


def envelope_prefix(first: bytes) -> bytes:
    """The bytes ``{"schema":<S>,"payload":`` (white space included) that ``first`` starts with."""
    head = _HEAD.match(first)
    if head is None:
        raise Declined('values not shaped {"schema": ..., "payload": ...}')
    text = first.decode("utf-8", "surrogateescape")  # bytes that are not UTF-8 are checked later
    try:
        _, end = json.JSONDecoder().raw_decode(text, head.end())  # the head is ASCII: same offset
    except json.JSONDecodeError as exc:
        raise Declined("an envelope schema that does not parse") from exc
    schema_end = len(text[:end].encode("utf-8", "surrogateescape"))
    middle = _MIDDLE.match(first, schema_end)
    if middle is None:
        raise Declined('values not shaped {"schema": ..., "payload": ...}')
    return first[:middle.end()]


def _check_envelopes(values: pa.Array, prefix: bytes) -> None:
    """Every value starts with ``prefix`` then ``{``, and ends with ``}``."""
    if pc.min(pc.binary_length(values)).as_py() < len(prefix) + 2:
        raise Declined("a value shorter than its envelope")
    if not pc.all(pc.starts_with(values, pattern=prefix)).as_py():
        raise Declined("several envelope schemas (or spellings) in one batch")
    offsets, data = buffers(values)
    if np.any(data[offsets[:-1] + len(prefix)] != ord("{")):
        raise Declined("a payload that is not a JSON object")
    if np.any(data[offsets[1:] - 1] != ord("}")):
        raise Declined("a value that does not end with the envelope's }")
