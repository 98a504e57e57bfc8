"""Confluent-framed Avro values → Arrow, a batch at a time, and into a table's schema.

The per-record strategy (``AvroConverter.to_connect_data`` → ``Struct`` →
``RecordConverter``) is the specification; this module gives the same rows
faster. A batch of values written with one registry schema is, once each
5-byte header (magic byte, schema id) is cut off, the body of one Avro
object-container-file block: with a file header for the writer schema and a
block header in front, a native reader (polars, Rust) decodes it straight
into Arrow columns.

Invariants (else the batch declines, :class:`Declined`, and runs per record):

* every value is framed with the same magic byte 0 and schema id, and no
  record carries the schema id in a header instead;
* every value is exactly one record: the encoded size of each decoded row
  equals its value's length (``converters/batch/avro_sizes.py``), since one value
  with trailing bytes would shift the rest of a block;
* the converter reads those values as the writer schema (no
  ``use.latest.version`` resolution) — :meth:`AvroConverter.columnar_plan`;
* each Connect field maps to an Arrow type the native reader gives for it,
  and each table column takes it unchanged or widened (int → long, float →
  double, timestamp millis → micros): :func:`to_table` checks field by field
  and declines on anything else (maps, unions, decimals, times, uuids,
  narrowing, a null in a required column, a null where the schema has a
  default that the per-record path would put instead) — see
  ``converters/batch/typed.py``;
* the table needs no schema change for the Connect schema
  (``RecordConverter.schema_updates_for``).
"""

from __future__ import annotations

import io
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from connector.api.logical import Date, Timestamp, logical_type_of
from connector.api.lru import LRUCache
from connector.api.schema import Schema, Type
from converters.batch.avro_sizes import check_aligned
from converters.batch.registry_frame import FRAME, RegistryBatchReader
from converters.batch.typed import DecodedBatch, is_union, spread_rows
from converters.confluent.wire_format import encode_unsigned_varint

_SYNC = bytes(range(16))  # the file's sync marker: any 16 bytes, the same in header and block


class AvroBatchReader(RegistryBatchReader):
    """Decodes batches of one Avro converter's values column-wise."""

    def __init__(self, converter: Any):
        super().__init__(converter)
        self._headers: LRUCache[Any, bytes] = LRUCache(64)  # writer schema id → container-file header

    def unsupported(self, plan: Any) -> str | None:
        return _unreadable(plan.connect_schema)

    def read(self, plan: Any, header: bytes, framed: pa.Array, values: pa.Array) -> DecodedBatch:
        """One row a value of the batch: its nulls stay null rows."""
        body = _bodies(framed)
        table = self._read(plan.schema_id.key, plan.writer, len(framed), body)
        # each value must have been exactly one record, as fastavro reads it on its own
        check_aligned(plan.writer, table, pc.subtract(pc.binary_length(framed), FRAME).to_numpy())
        struct = pa.StructArray.from_arrays([c.combine_chunks() for c in table.columns], fields=list(table.schema))
        if len(framed) != len(values):
            struct = spread_rows(struct, values.is_valid())
        return DecodedBatch(struct, plan.connect_schema)

    def _read(self, key: Any, writer: Any, count: int, body: bytes) -> pa.Table:
        import polars as pl

        header = self._headers.get(key)
        if header is None:
            header = _file_header(writer)
            self._headers.put(key, header)
        block = _long(count) + _long(len(body)) + body + _SYNC
        try:
            return pl.read_avro(io.BytesIO(header + block)).to_arrow()
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise Declined(f"the native Avro reader cannot read schema {key} ({type(exc).__name__})") from exc
        except pl.exceptions.PanicException as exc:  # bytes that are not one record per value can end here
            raise Declined("values whose bytes are not exactly one record each") from exc


def _unreadable(schema: Schema, name: str = "") -> str | None:
    """What in ``schema`` the native reader cannot give column-wise (maps, unions, decimals, times), or None."""
    logical = logical_type_of(schema)
    if logical is not None:
        return None if logical in (Date, Timestamp) else f"a {logical.__name__} field {name}".rstrip()
    if schema.type is Type.MAP:
        return f"a map field {name}".rstrip()
    if schema.type is Type.STRUCT:
        if is_union(schema):
            return f"a union field {name}".rstrip()
        for field in schema.fields():
            found = _unreadable(field.schema, field.name)
            if found is not None:
                return found
    if schema.type is Type.ARRAY and schema.value_schema is not None:
        element = schema.value_schema
        if element.type in (Type.ARRAY, Type.MAP, Type.STRUCT):
            return f"a list of lists, maps or records {name}".rstrip()
        return _unreadable(element, name)
    return None


def _bodies(values: pa.Array) -> bytes:
    """The values without their frames, back to back (the body of one container-file block)."""
    if not pa.types.is_binary(values.type):
        values = values.cast(pa.binary())
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32)[values.offset:values.offset + len(values) + 1]
    data = np.frombuffer(values.buffers()[2], dtype=np.uint8)
    keep = np.ones(offsets[-1] - offsets[0], dtype=bool)
    starts = offsets[:-1] - offsets[0]
    keep[(starts[:, None] + np.arange(FRAME)).ravel()] = False
    return data[offsets[0]:offsets[-1]][keep].tobytes()


def _file_header(writer: Any) -> bytes:
    """An Avro object-container-file header for ``writer`` with the sync marker :data:`_SYNC`."""
    out = io.BytesIO()
    fastavro.writer(out, writer, [], codec="null", sync_marker=_SYNC)
    return out.getvalue()


def _long(value: int) -> bytes:
    """Avro's zig-zag varint encoding of a long."""
    return encode_unsigned_varint((value << 1) ^ (value >> 63))
