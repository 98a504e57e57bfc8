"""Confluent Schema Registry wire format.

Every value written by Confluent's serializers starts with a small header:

* magic byte ``0x00`` followed by the schema id as a 4-byte big-endian integer, or
* magic byte ``0x01`` followed by a 16-byte schema GUID (newer clients),

then, for Protobuf only, the *message indexes*: the path to the message type
inside the ``.proto`` file (index of the top-level message, then of the nested
messages), written as a zig-zag varint count followed by zig-zag varint
indexes. The very common path ``[0]`` is written as the single byte ``0x00``
(a count of zero), which reads back as ``[0]``.

Newer clients may instead put the header (magic byte 1 + GUID, plus the
message indexes for Protobuf) in a record header named ``__key_schema_id`` or
``__value_schema_id``; the whole value is then the payload. :func:`parse`
handles both, like Confluent's ``DualSchemaIdDeserializer``.

Errors are :class:`~connector.api.errors.DataException` saying what was
expected; the caller adds topic/partition/offset.
"""

from __future__ import annotations

import struct as _struct
import uuid
from dataclasses import dataclass
from typing import Any, Iterable

from connector.api.errors import DataException

MAGIC_BYTE_V0 = 0x00
MAGIC_BYTE_V1 = 0x01
ID_SIZE = 4
GUID_SIZE = 16
KEY_SCHEMA_ID_HEADER = "__key_schema_id"
VALUE_SCHEMA_ID_HEADER = "__value_schema_id"

#: Upper bound on the number of message indexes we accept (a protobuf nesting depth).
MAX_MESSAGE_INDEXES = 256

_INT32 = _struct.Struct(">i")


@dataclass(frozen=True)
class SchemaId:
    """Which registry schema a value was written with.

    Exactly one of ``id`` (magic byte 0) and ``guid`` (magic byte 1) is set.
    ``message_indexes`` is only read for Protobuf (else ``None``).
    """

    id: int | None = None
    guid: uuid.UUID | None = None
    message_indexes: tuple[int, ...] | None = None

    @property
    def key(self) -> "int | uuid.UUID":
        """The id, or the GUID when the value carries no numeric id."""
        return self.id if self.id is not None else self.guid  # type: ignore[return-value]

    def __str__(self) -> str:
        return str(self.id) if self.id is not None else f"guid {self.guid}"


# --- varints (Kafka ByteUtils.writeVarint / readVarint: zig-zag, 32 bit) --------------------

def write_varint(value: int) -> bytes:
    """Zig-zag encode a signed 32-bit integer as a varint."""
    if not -(2**31) <= value < 2**31:
        raise DataException(f"Varint value {value} does not fit in 32 bits")
    return encode_unsigned_varint(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def encode_unsigned_varint(value: int) -> bytes:
    """A non-negative integer as a base-128 varint (7 bits a byte, least significant first)."""
    out = bytearray()
    while value & ~0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_varint(data: bytes | memoryview, offset: int) -> tuple[int, int]:
    """Read a zig-zag varint at ``offset``; returns ``(value, new_offset)``."""
    value = 0
    shift = 0
    end = len(data)
    while True:
        if offset >= end:
            raise DataException(
                "Truncated Confluent Protobuf header: expected a varint message index, "
                "found the end of the data"
            )
        b = data[offset]
        offset += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if shift > 28:
            raise DataException(
                "Invalid Confluent Protobuf header: a message index varint is longer than 5 bytes"
            )
    value &= 0xFFFFFFFF
    return (value >> 1) ^ -(value & 1), offset


def encode_message_indexes(indexes: Iterable[int] | None) -> bytes:
    """The message-index bytes for a Protobuf value (``[0]`` is the single byte ``0x00``)."""
    idx = list(indexes) if indexes is not None else [0]
    if idx == [0] or not idx:
        return b"\x00"
    return write_varint(len(idx)) + b"".join(write_varint(i) for i in idx)


def decode_message_indexes(data: bytes | memoryview, offset: int) -> tuple[tuple[int, ...], int]:
    count, offset = read_varint(data, offset)
    if count == 0:
        return (0,), offset
    if count < 0 or count > MAX_MESSAGE_INDEXES:
        raise DataException(
            f"Invalid Confluent Protobuf header: message index count {count} is out of range "
            f"(expected 0..{MAX_MESSAGE_INDEXES})"
        )
    indexes = []
    for _ in range(count):
        index, offset = read_varint(data, offset)
        if index < 0:
            raise DataException(f"Invalid Confluent Protobuf header: negative message index {index}")
        indexes.append(index)
    return tuple(indexes), offset


# --- header ------------------------------------------------------------------------------------

def read_schema_id(data: bytes | memoryview, *, protobuf: bool = False) -> tuple[SchemaId, int]:
    """Parse the header at the start of ``data``; returns ``(schema_id, payload_offset)``."""
    n = len(data)
    if n == 0:
        raise DataException(
            "Expected Confluent wire format (magic byte 0 and a 4-byte schema id) but the data is empty"
        )
    magic = data[0]
    if magic == MAGIC_BYTE_V0:
        if n < 1 + ID_SIZE:
            raise DataException(
                f"Truncated Confluent wire format: expected at least {1 + ID_SIZE} bytes "
                f"(magic byte 0 and a 4-byte schema id), got {n}"
            )
        schema_id = _INT32.unpack_from(data, 1)[0]
        offset = 1 + ID_SIZE
        guid = None
    elif magic == MAGIC_BYTE_V1:
        if n < 1 + GUID_SIZE:
            raise DataException(
                f"Truncated Confluent wire format: expected at least {1 + GUID_SIZE} bytes "
                f"(magic byte 1 and a 16-byte schema GUID), got {n}"
            )
        guid = uuid.UUID(bytes=bytes(data[1:1 + GUID_SIZE]))
        schema_id = None
        offset = 1 + GUID_SIZE
    else:
        raise DataException(
            f"Unknown magic byte! Expected 0 (schema id) or 1 (schema GUID) at the start of the "
            f"Confluent wire format, got {magic}"
        )
    indexes = None
    if protobuf:
        indexes, offset = decode_message_indexes(data, offset)
    return SchemaId(schema_id, guid, indexes), offset


def _header_value(headers: Any, name: str) -> bytes | None:
    """The last value of header ``name`` from Header objects, (key, value) pairs or a dict."""
    if not headers:
        return None
    if isinstance(headers, dict):
        value = headers.get(name)
        return bytes(value) if value is not None else None
    found = None
    for header in headers:
        if isinstance(header, tuple):
            key, value = header[0], header[1]
        else:
            key, value = getattr(header, "key", None), getattr(header, "value", None)
        if key == name and value is not None:
            found = value
    if found is None:
        return None
    if isinstance(found, str):
        found = found.encode("latin-1")
    return bytes(found)


def parse(
    data: bytes | bytearray | memoryview,
    *,
    protobuf: bool = False,
    headers: Any = None,
    is_key: bool = False,
) -> tuple[SchemaId, memoryview]:
    """Split a serialized value into its schema id and payload.

    When ``headers`` carry ``__key_schema_id``/``__value_schema_id`` (for
    ``is_key`` true/false) the id comes from that header and all of ``data``
    is the payload; otherwise the id is read from the prefix.
    """
    view = memoryview(data)
    header = _header_value(headers, KEY_SCHEMA_ID_HEADER if is_key else VALUE_SCHEMA_ID_HEADER)
    if header is not None:
        schema_id, end = read_schema_id(header, protobuf=protobuf)
        if end != len(header):
            raise DataException(
                f"Invalid schema id header: {len(header) - end} unexpected trailing bytes"
            )
        return schema_id, view
    schema_id, offset = read_schema_id(view, protobuf=protobuf)
    return schema_id, view[offset:]


def schema_id_of(data: bytes | bytearray | memoryview | None, *, headers: Any = None,
                 is_key: bool = False) -> int | None:
    """The numeric schema id of a value, or None (null value, GUID-only, or not Confluent framed)."""
    if data is None:
        return None
    try:
        schema_id, _ = parse(data, headers=headers, is_key=is_key)
    except DataException:
        return None
    return schema_id.id


def frame(schema_id: int, payload: bytes, message_indexes: Iterable[int] | None = None,
          *, protobuf: bool = False) -> bytes:
    """Prefix ``payload`` with magic byte 0, the schema id and (Protobuf) the message indexes."""
    head = bytes([MAGIC_BYTE_V0]) + _INT32.pack(schema_id)
    if protobuf or message_indexes is not None:
        head += encode_message_indexes(message_indexes)
    return head + payload


def frame_guid(guid: uuid.UUID, payload: bytes, message_indexes: Iterable[int] | None = None,
               *, protobuf: bool = False) -> bytes:
    """Prefix ``payload`` with magic byte 1 and the schema GUID (and Protobuf message indexes)."""
    head = bytes([MAGIC_BYTE_V1]) + guid.bytes
    if protobuf or message_indexes is not None:
        head += encode_message_indexes(message_indexes)
    return head + payload
