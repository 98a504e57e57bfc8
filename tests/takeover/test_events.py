"""The control topic's event encoding (connector/takeover/events.py)."""

from __future__ import annotations

import json
import uuid

import fastavro
import pytest

from connector.takeover.events import (
    NULL_NAMESPACE,
    CommitComplete,
    CommitToTable,
    DataComplete,
    DataFileInfo,
    DataWritten,
    Event,
    EventFormatError,
    StartCommit,
    TableReference,
    TopicPartitionOffset,
    decode_event,
    encode_event,
    java_read_utf,
    java_write_utf,
    payload_type,
    resolve_names,
)

TABLE = TableReference("iceberg", ("db", "inner"), "events", uuid.uuid4())
FILE = DataFileInfo("s3://b/data/f.parquet", "PARQUET", 12, 3456, partition={"day": 19000}, spec_id=1,
                    fields={"column_sizes": [{"key": 1, "value": 40}], "lower_bounds": [{"key": 1, "value": b"\x01"}],
                            "split_offsets": [4]})
PAYLOADS = [
    StartCommit(uuid.uuid4()),
    DataWritten(uuid.uuid4(), TABLE, [FILE], [FILE]),
    DataComplete(uuid.uuid4(), [TopicPartitionOffset("t", 0, 10, 1_700_000_000_000_000),
                                TopicPartitionOffset("t", 1, None, None)]),
    CommitToTable(uuid.uuid4(), TABLE, 42, 1_700_000_000_000_000),
    CommitComplete(uuid.uuid4(), None),
]


@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: type(p).__name__)
def test_events_round_trip(payload):
    event = Event(uuid.uuid4(), payload_type(payload), 1_700_000_000_000_001, "connect-orders", payload)
    data = encode_event(event, partition_fields=[(1000, "day", "int")])
    assert data[:2] == b"\xc2\x01"
    decoded = decode_event(data)
    assert (decoded.id, decoded.type, decoded.timestamp, decoded.group_id) == (
        event.id, event.type, event.timestamp, event.group_id)
    if isinstance(payload, DataWritten):
        assert decoded.payload.commit_id == payload.commit_id and decoded.payload.table == TABLE
        got = decoded.payload.data_files[0]
        assert (got.path, got.file_format, got.record_count, got.file_size_in_bytes, got.partition, got.spec_id) == (
            FILE.path, "PARQUET", 12, 3456, {"day": 19000}, 1)
        assert got.fields["column_sizes"] == [{"key": 1, "value": 40}]
        assert len(decoded.payload.delete_files) == 1
    else:
        assert decoded.payload == payload


def test_the_java_schema_names_null_namespace_types_by_bare_name_which_the_spec_rejects():
    event = Event(uuid.uuid4(), 1, 1, "g", DataWritten(uuid.uuid4(), TABLE, [FILE], [FILE]))
    text, _ = java_read_utf(encode_event(event), 2)
    schema = json.loads(text)
    assert '"name":"uuid_fixed","namespace":""' in text and '"type":"uuid_fixed"' in text
    assert '"name":"k117_v118","namespace":""' in text and '"items":"k117_v118"' in text
    with pytest.raises(Exception, match="uuid_fixed"):
        fastavro.parse_schema(schema)  # the spec reads "uuid_fixed" as org.apache.iceberg.connect.events.uuid_fixed
    resolved = resolve_names(schema)
    fastavro.parse_schema(resolved)
    assert f"{NULL_NAMESPACE}.uuid_fixed" in json.dumps(resolved)


def test_a_bare_name_means_the_enclosing_namespace_first_as_in_java():
    schema = {"type": "record", "name": "a.Outer", "fields": [
        {"name": "x", "type": {"type": "fixed", "name": "F", "namespace": "", "size": 1}},
        {"name": "y", "type": {"type": "fixed", "name": "F", "size": 2}},  # a.F
        {"name": "z", "type": "F"},
    ]}
    resolved = resolve_names(schema)
    assert [f["type"] if isinstance(f["type"], str) else f["type"]["name"] for f in resolved["fields"]] == [
        f"{NULL_NAMESPACE}.F", "a.F", "a.F"]
    with pytest.raises(EventFormatError, match="Unknown Avro type 'G'"):
        resolve_names({"type": "record", "name": "R", "fields": [{"name": "g", "type": "G"}]})


@pytest.mark.parametrize("text", ["plain", "nul\x00char", "é and 漢", "emoji 😀"])
def test_write_utf_is_javas_modified_utf8(text):
    data = java_write_utf(text)
    if "\x00" in text:
        assert b"\xc0\x80" in data and b"\x00" not in data[2:]
    if "😀" in text:
        assert b"\xed\xa0\xbd\xed\xb8\x80" in data  # the surrogate pair, three bytes each
    assert java_read_utf(data, 0) == (text, len(data))


def test_records_that_are_not_events_are_refused():
    with pytest.raises(EventFormatError, match="magic"):
        decode_event(b'{"json": true}')
    with pytest.raises(EventFormatError):
        decode_event(b"\xc2\x01" + java_write_utf("not json"))


def test_an_unknown_payload_type_decodes_without_a_payload():
    event = Event(uuid.uuid4(), 0, 1, "g", StartCommit(uuid.uuid4()))
    data = encode_event(event)
    text, at = java_read_utf(data, 2)
    # the same bytes with the type field set to 9 (a newer version's payload)
    body = data[at:]
    assert body[16:17] == b"\x00"  # zig-zag 0 right after the 16 uuid bytes
    decoded = decode_event(data[:at] + body[:16] + b"\x12" + body[17:])
    assert decoded.type == 9 and decoded.payload is None
