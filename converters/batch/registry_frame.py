"""The Confluent frame of registry-encoded values, checked a batch at a time (columnar Avro, JSON Schema, Protobuf).

A value written through a schema registry starts with a 5-byte frame: the
magic byte 0 and the 4-byte schema id. A columnar strategy reads a batch as
one schema only when every value carries the same frame and no record names
its schema in a header instead (:mod:`converters.confluent.wire_format`).
:class:`RegistryBatchReader` is what the three readers share: those checks,
then the converter's plan for the batch, then what the plan's schema has
that the reader cannot give.
"""

from __future__ import annotations

import abc
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from connector.api.errors import DataException
from converters.batch.typed import DecodedBatch
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


class RegistryBatchReader(abc.ABC):
    """Decodes batches of one registry converter's values column-wise, as its ``columnar_plan`` says.

    The plan (schema id, Connect schema, what the format's reader needs) is the
    converter's for the header every value starts with; the converter raises
    DataException where only it can read the values (``use.latest.version``, ...).
    """

    def __init__(self, converter: Any):
        self.converter = converter

    def decode(self, topic: str, values: pa.Array, headers: pa.Array) -> DecodedBatch:
        """The non-null ``values`` of one batch (and their ``headers``) as a struct array (:meth:`read`)."""
        framed = framed_values(values, headers)
        header = self.header(framed)
        try:
            plan = self.converter.columnar_plan(topic, header)
        except DataException as exc:
            raise Declined(f"values need the converter ({type(exc).__name__})") from exc
        reason = self.unsupported(plan)
        if reason is not None:
            raise Declined(f"schema {plan.schema_id} has {reason}")
        return self.read(plan, header, framed, values)

    def header(self, framed: pa.Array) -> bytes:
        """The header every value starts with, which the converter plans for: the frame."""
        return common_frame(framed)

    @abc.abstractmethod
    def unsupported(self, plan: Any) -> str | None:
        """What in the plan's schema this reader cannot give column-wise, or None."""

    @abc.abstractmethod
    def read(self, plan: Any, header: bytes, framed: pa.Array, values: pa.Array) -> DecodedBatch:
        """The ``framed`` values (the non-null ones of the batch's ``values``, each starting with ``header``)."""
