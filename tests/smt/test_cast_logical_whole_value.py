"""Cast$Value of a whole Decimal, Date, Time or Timestamp value: a plain schema a JsonConverter can write."""

from __future__ import annotations

import datetime as _dt
import decimal
import json

import pytest

import converters
from connector.api import Date, Decimal, Schema, SchemaBuilder, Time, Timestamp, Type
from smt.transforms.cast import Value
from tests.smt import value_record

UTC = _dt.timezone.utc


def cast(spec: str, schema: Schema, value):
    xform = Value()
    xform.configure({"spec": spec})
    return xform.apply(value_record(schema, value))


def json_bytes(schema: Schema, value) -> dict:
    converter = converters.load("org.apache.kafka.connect.json.JsonConverter", {"schemas.enable": "true"})
    return json.loads(converter.from_connect_data("t", schema, value))


@pytest.mark.parametrize("schema, value, spec, expected", [
    (Decimal.schema(2), decimal.Decimal("12.34"), "string", "12.34"),
    (Date.SCHEMA, _dt.date(2024, 5, 17), "string", "2024-05-17"),
    (Time.SCHEMA, _dt.time(13, 4, 5, 6000), "string", "13:04:05.006Z"),
    (Timestamp.SCHEMA, _dt.datetime(2024, 5, 17, 13, 4, 5, 6000, tzinfo=UTC), "string", "2024-05-17T13:04:05.006Z"),
    (Timestamp.SCHEMA, _dt.datetime(2024, 5, 17, tzinfo=UTC), "int64", 1_715_904_000_000),
    (Date.SCHEMA, _dt.date(1970, 1, 3), "int32", 2),
])
def test_a_whole_logical_value_cast_has_a_plain_schema_a_json_converter_writes(schema, value, spec, expected):
    transformed = cast(spec, schema, value)

    assert transformed.value == expected
    assert transformed.value_schema.name is None and transformed.value_schema.parameters is None
    assert transformed.value_schema.version is None
    written = json_bytes(transformed.value_schema, transformed.value)
    assert written == {"schema": {"type": transformed.value_schema.type.name.lower(), "optional": False},
                       "payload": expected}


def test_a_whole_named_non_logical_value_keeps_its_name_version_and_doc():
    schema = SchemaBuilder.int32().name("com.example.Count").version(3).doc("how many").build()

    transformed = cast("string", schema, 7)

    assert transformed.value == "7"
    assert (transformed.value_schema.name, transformed.value_schema.version, transformed.value_schema.doc) == (
        "com.example.Count", 3, "how many")


def test_an_optional_logical_value_stays_optional():
    transformed = cast("string", Decimal.builder(0).optional().build(), decimal.Decimal(5))

    assert transformed.value_schema.optional and transformed.value_schema.type is Type.STRING
