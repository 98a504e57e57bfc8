"""Connect Timestamps at the edges of Java's range (``Long.MAX_VALUE`` ms is in year 292,278,994).

Kafka carries them as ``java.util.Date``: converters read and write them, SMTs pass
them along and cast them to numbers. Only what needs a calendar (text, an Iceberg
timestamp column) refuses them, with an error naming the value.
"""

from __future__ import annotations

import json

import pytest

import converters
import smt
from connector.api import DataException, SchemaBuilder, Struct, Timestamp
from connector.api.instant import OutOfRangeTimestamp
from connector.data.convert.coercion import timestamp_coercer
from tests.smt import value_record

LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)
EDGES = [LONG_MAX, LONG_MIN, 253_402_300_800_000]  # the last: 10000-01-01, one past Python's years


def json_converter():
    return converters.load("org.apache.kafka.connect.json.JsonConverter", {"schemas.enable": "true"})


def timestamp_message(millis: int) -> bytes:
    schema = {"type": "struct", "optional": False, "fields": [
        {"field": "id", "type": "int32", "optional": False},
        {"field": "at", "type": "int64", "optional": False, "name": Timestamp.LOGICAL_NAME, "version": 1}]}
    return json.dumps({"schema": schema, "payload": {"id": 1, "at": millis}}).encode()


@pytest.mark.parametrize("millis", EDGES)
def test_a_json_timestamp_at_javas_edge_is_read_and_written_back_unchanged(millis):
    converter = json_converter()
    data = converter.to_connect_data("t", timestamp_message(millis))

    assert data.value.get("at") == OutOfRangeTimestamp(millis)
    written = json.loads(converter.from_connect_data("t", data.schema, data.value))
    assert written["payload"] == {"id": 1, "at": millis}


@pytest.mark.parametrize("millis", EDGES)
def test_smts_pass_it_along_and_cast_it_to_a_number(millis):
    data = json_converter().to_connect_data("t", timestamp_message(millis))
    record = value_record(data.schema, data.value)
    chain = [smt.load("org.apache.kafka.connect.transforms.InsertField$Value", {"static.field": "src",
                                                                                  "static.value": "x"}),
             smt.load("org.apache.kafka.connect.transforms.ReplaceField$Value", {"renames": "at:when"}),
             smt.load("org.apache.kafka.connect.transforms.Cast$Value", {"spec": "when:int64"})]
    for transform in chain:
        record = transform.apply(record)

    assert record.value.get("when") == millis
    assert record.value.get("src") == "x"


def test_timestamp_converter_gives_its_unix_millis():
    schema = SchemaBuilder.struct().field("at", Timestamp.SCHEMA).build()
    value = Struct(schema).put("at", Timestamp.to_logical(Timestamp.SCHEMA, LONG_MAX))
    xform = smt.load("org.apache.kafka.connect.transforms.TimestampConverter$Value",
                     {"field": "at", "target.type": "unix"})

    assert xform.apply(value_record(schema, value)).value.get("at") == LONG_MAX


def test_what_needs_a_calendar_refuses_it_naming_the_value():
    value = Timestamp.to_logical(Timestamp.SCHEMA, LONG_MAX)
    to_text = smt.load("org.apache.kafka.connect.transforms.Cast$Value", {"spec": "string"})

    with pytest.raises(DataException, match=str(LONG_MAX)):
        to_text.apply(value_record(Timestamp.SCHEMA, value))
    with pytest.raises(DataException, match=str(LONG_MAX)):
        timestamp_coercer(True)(value)


def test_beyond_a_java_long_is_a_data_error():
    with pytest.raises(DataException, match="does not fit a Java long"):
        Timestamp.to_logical(Timestamp.SCHEMA, LONG_MAX + 1)


def test_values_in_pythons_range_are_still_datetimes():
    assert Timestamp.to_logical(Timestamp.SCHEMA, 0).year == 1970
