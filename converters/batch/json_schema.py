"""Confluent JSON Schema values → Arrow rows typed by their Connect schema, a batch at a time.

The per-record strategy (``JsonSchemaConverter.to_connect_data`` → ``Struct``
→ ``RecordConverter``) is the specification; this module gives the same rows
faster. A value is the 5-byte frame (magic byte 0, schema id) and the JSON
text of its payload; when every value of a batch has the same frame, the
payloads are the values without it, read and typed by the shared JSON rules
(``converters/batch/json_payloads.py``) with the Connect schema the converter
derives from the registered JSON schema.

Invariants (else the batch declines, :class:`Declined`, and runs per record):

* every value is framed with the same magic byte 0 and schema id, no record
  carries the schema id in a header instead, and each payload is exactly one
  JSON object: ``{`` right after the frame, ``}`` its last byte;
* the converter reads those values as that schema, unvalidated
  (:meth:`JsonSchemaConverter.columnar_plan`: no ``use.latest.version``
  resolution to another schema, no ``json.fail.invalid.schema``);
* the Connect schema has only what the shared reader types exactly as
  ``JsonSchemaData.to_connect_value`` does (:func:`json_schema_unsupported`):
  besides the shared rules' exclusions (defaults — including those of
  ``ignore.default.for.nullables`` —, named and logical types — ``connect.type``
  ``bytes``, dates, decimals —, maps — ``connect.type: map`` —, arrays of
  structs), no unions (``oneOf``/``anyOf`` of several non-null types), no
  Connect parameters (``enum``/``const``, ``connect.parameters``) and no FLOAT32
  (``connect.type: float32``: Python's float is rounded to float32 later, not
  by the converter);
* no negative zero where a float is read: per record ``-0`` is 0.0 and ``-0.0``
  is -0.0, which Arrow's reader does not tell apart.

Where per record a value would fail (a string for an integer, ``1.0`` for an
integer, out of range, a null in a required field, a key given twice), the
reader refuses or the typing declines, and the per-record strategy raises.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from connector.api.schema import Schema, Type
from converters.batch.json_payloads import (
    DECLINE_NEGATIVE_ZEROS,
    arrow_type,
    buffers,
    payload_lines,
    read_rows,
    typed,
    unsupported,
)
from converters.batch.registry_frame import FRAME, RegistryBatchReader
from converters.batch.typed import DecodedBatch
from converters.confluent.json_schema_data import JSON_TYPE_ONE_OF
from converters.confluent.sum_types import is_union


class JsonSchemaBatchReader(RegistryBatchReader):
    """Decodes batches of one JsonSchemaConverter's values column-wise."""

    def unsupported(self, plan: Any) -> str | None:
        return json_schema_unsupported(plan.connect_schema)

    def read(self, plan: Any, header: bytes, framed: pa.Array, values: pa.Array) -> DecodedBatch:
        """One row a non-null value."""
        _check_objects(framed)
        lines = payload_lines(framed, FRAME, closing=False)
        parsed = read_rows(lines, arrow_type(plan.connect_schema), len(framed))
        return DecodedBatch(typed(parsed, plan.connect_schema, "", zeros=DECLINE_NEGATIVE_ZEROS),
                            plan.connect_schema)


def json_schema_unsupported(schema: Schema) -> str | None:
    """What in the Connect ``schema`` of a JSON schema the columnar reader does not take, or None."""
    return unsupported(schema) or _beyond_json_converter(schema, "")


def _beyond_json_converter(schema: Schema, name: str) -> str | None:
    """Unions, Connect parameters (enums) and FLOAT32: typed otherwise than by the JsonConverter's rules."""
    where = f" (field {name})" if name else ""
    if schema.parameters:
        return f"Connect parameters (an enum or connect.parameters){where}"
    if schema.type is Type.FLOAT32:
        return f"a FLOAT32{where}"
    if schema.type is Type.STRUCT:
        if is_union(schema, JSON_TYPE_ONE_OF):
            return f"a union{where}"
        for field in schema.fields():
            found = _beyond_json_converter(field.schema, f"{name}.{field.name}" if name else field.name)
            if found is not None:
                return found
    if schema.type is Type.ARRAY and schema.value_schema is not None:
        return _beyond_json_converter(schema.value_schema, f"{name}[]")
    return None


def _check_objects(values: pa.Array) -> None:
    """Every payload starts with ``{`` and ends with ``}`` (no white space around it)."""
    if pc.min(pc.binary_length(values)).as_py() < FRAME + 2:
        raise Declined("a payload that is not a JSON object")
    offsets, data = buffers(values)
    if np.any(data[offsets[:-1] + FRAME] != ord("{")) or np.any(data[offsets[1:] - 1] != ord("}")):
        raise Declined("a payload that is not a JSON object (or has white space around it)")
