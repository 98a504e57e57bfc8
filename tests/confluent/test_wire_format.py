"""Confluent wire format: magic byte, schema id/GUID, Protobuf message indexes, headers."""

from __future__ import annotations

import io
import uuid
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connector.api.errors import DataException
from connector.api.record import Header
from converters.confluent import wire_format as wf

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from confluent_kafka.schema_registry.common.serde import SchemaId as ConfluentSchemaId


def test_magic_zero_and_big_endian_id():
    schema_id, payload = wf.parse(b"\x00\x00\x00\x01\x02payload")
    assert schema_id == wf.SchemaId(id=258)
    assert bytes(payload) == b"payload"
    assert wf.frame(258, b"payload") == b"\x00\x00\x00\x01\x02payload"


def test_magic_one_and_guid():
    guid = uuid.UUID("12345678-1234-5678-1234-567812345678")
    data = b"\x01" + guid.bytes + b"rest"
    schema_id, payload = wf.parse(data)
    assert schema_id.guid == guid and schema_id.id is None
    assert bytes(payload) == b"rest"
    assert wf.frame_guid(guid, b"rest") == data
    assert wf.schema_id_of(data) is None


@pytest.mark.parametrize("magic", [2, 0x7F, 0xFF])
def test_unknown_magic_byte(magic):
    with pytest.raises(DataException, match="Unknown magic byte!"):
        wf.parse(bytes([magic]) + b"\x00\x00\x00\x01")


@pytest.mark.parametrize("data,expected", [
    (b"", "empty"),
    (b"\x00\x00\x01", "expected at least 5 bytes"),
    (b"\x01" + b"\x00" * 10, "expected at least 17 bytes"),
])
def test_truncated_header(data, expected):
    with pytest.raises(DataException, match=expected):
        wf.parse(data)


def test_protobuf_first_message_shortcut():
    data = wf.frame(7, b"msg", [0], protobuf=True)
    assert data == b"\x00\x00\x00\x00\x07\x00msg"
    schema_id, payload = wf.parse(data, protobuf=True)
    assert schema_id.message_indexes == (0,)
    assert bytes(payload) == b"msg"


def test_protobuf_nested_indexes_are_zigzag_varints():
    # [1, 2] -> count 2 (zig-zag 4), 1 (zig-zag 2), 2 (zig-zag 4)
    assert wf.encode_message_indexes([1, 2]) == b"\x04\x02\x04"
    schema_id, payload = wf.parse(b"\x00\x00\x00\x00\x07\x04\x02\x04msg", protobuf=True)
    assert schema_id.message_indexes == (1, 2)
    assert bytes(payload) == b"msg"


def test_protobuf_count_zero_reads_as_first_message():
    indexes, offset = wf.decode_message_indexes(b"\x00", 0)
    assert indexes == (0,) and offset == 1


def test_protobuf_truncated_indexes():
    with pytest.raises(DataException, match="Truncated Confluent Protobuf header"):
        wf.parse(b"\x00\x00\x00\x00\x07\x04\x02", protobuf=True)
    with pytest.raises(DataException, match="negative message index"):
        wf.parse(b"\x00\x00\x00\x00\x07\x02\x01", protobuf=True)


@given(st.integers(min_value=0, max_value=2**31 - 1),
       st.lists(st.integers(min_value=0, max_value=2**20), min_size=1, max_size=6),
       st.binary(max_size=20))
def test_matches_confluent_kafka_encoding(schema_id, indexes, payload):
    ours = wf.frame(schema_id, payload, indexes, protobuf=True)
    theirs_id = ConfluentSchemaId("PROTOBUF", schema_id, None, indexes)
    assert ours == theirs_id.id_to_bytes() + payload
    parsed = ConfluentSchemaId("PROTOBUF")
    rest = parsed.from_bytes(io.BytesIO(ours))
    assert parsed.id == schema_id and list(parsed.message_indexes) == indexes
    assert rest.read() == payload
    back, view = wf.parse(ours, protobuf=True)
    assert back.id == schema_id and list(back.message_indexes) == indexes
    assert bytes(view) == payload


def test_guid_matches_confluent_kafka():
    guid = uuid.uuid4()
    theirs = ConfluentSchemaId("AVRO", None, str(guid)).guid_to_bytes()
    assert theirs == b"\x01" + guid.bytes
    assert wf.parse(theirs + b"x")[0].guid == guid


def test_schema_id_from_header_takes_the_whole_value_as_payload():
    guid = uuid.uuid4()
    headers = [Header("other", b"x"), Header(wf.VALUE_SCHEMA_ID_HEADER, b"\x01" + guid.bytes)]
    schema_id, payload = wf.parse(b"raw-avro", headers=headers)
    assert schema_id.guid == guid and bytes(payload) == b"raw-avro"
    # key side looks at the key header only
    with pytest.raises(DataException, match="Unknown magic byte!"):
        wf.parse(b"raw-avro", headers=headers, is_key=True)
    # tuples and dicts work too; protobuf indexes live in the header
    key_header = b"\x00\x00\x00\x00\x09\x02\x02"
    schema_id, payload = wf.parse(b"pb", headers={wf.KEY_SCHEMA_ID_HEADER: key_header},
                                  protobuf=True, is_key=True)
    assert schema_id == wf.SchemaId(id=9, message_indexes=(1,))
    schema_id, _ = wf.parse(b"pb", headers=[(wf.KEY_SCHEMA_ID_HEADER, key_header)], protobuf=True,
                            is_key=True)
    assert schema_id.id == 9


def test_schema_id_of():
    assert wf.schema_id_of(None) is None
    assert wf.schema_id_of(b"\x00\x00\x00\x00\x2a") == 42
    assert wf.schema_id_of(b"\x05garbage") is None
    assert wf.schema_id_of(b"") is None


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_varint_round_trip(value):
    encoded = wf.write_varint(value)
    assert wf.read_varint(encoded, 0) == (value, len(encoded))
