"""The Confluent frame of registry-encoded values, checked a batch at a time (columnar Avro and JSON Schema).

A value written through a schema registry starts with a 5-byte frame: the
magic byte 0 and the 4-byte schema id. A columnar strategy reads a batch as
one schema only when every value carries the same frame and no record names
its schema in a header instead (:mod:`converters.confluent.wire_format`).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from converters.confluent.wire_format import VALUE_SCHEMA_ID_HEADER

FRAME = 5  # magic byte 0 + 4-byte schema id


def framed_values(values: pa.Array, headers: pa.Array) -> pa.Array:
    """A batch's ``values`` (its non-null ones, as binary) for a registry strategy to read as one schema.

    Declined when a record names its schema in a header instead of a frame, or when no value is left.
    """
    if has_schema_id_headers(headers):
        raise Declined("schema ids in record headers")
    present = values.drop_null() if values.null_count else values
    if len(present) == 0:
        raise Declined("only tombstones")
    return present if pa.types.is_binary(present.type) else present.cast(pa.binary())


def has_schema_id_headers(headers: pa.Array) -> bool:
    """Whether a record of the batch carries its value's schema id in a header."""
    keys = pc.list_flatten(headers).field("key") if len(headers) else pa.array([], pa.string())
    return bool(pc.any(pc.equal(keys, VALUE_SCHEMA_ID_HEADER)).as_py())


def common_frame(values: pa.Array) -> bytes:
    """The 5-byte frame every (non-null) value starts with; Declined when they differ or are not framed so."""
    lengths = pc.binary_length(values)
    if pc.min(lengths).as_py() < FRAME:
        raise Declined("a value shorter than its frame")
    frames = pc.binary_slice(values, 0, FRAME)
    first = frames[0].as_py()
    if first[0] != 0:
        raise Declined("values framed without a numeric schema id")
    if not pc.all(pc.equal(frames, pa.scalar(first, frames.type))).as_py():
        raise Declined("several schema ids in one batch")
    return first
