"""JsonSchemaConverter: payloads from confluent-kafka's own JSONSerializer, mapped as JsonSchemaData does."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json

import pytest

from connector.api import Schema, SchemaBuilder, Struct, Type
from connector.api.errors import DataException
from converters import load
from converters.confluent import wire_format
from converters.confluent.json_schema import JsonSchemaConverter
from converters.confluent.registry_client import SchemaReference, SchemaRegistryClient
from tests.confluent import confluent_client, converter, serialization_context, unique

UTC = dt.timezone.utc


def serialize(url: str, schema: dict, value, topic: str, **conf) -> bytes:
    from confluent_kafka.schema_registry.json_schema import JSONSerializer

    ser = JSONSerializer(json.dumps(schema), confluent_client(url), conf=conf or None)
    return ser(value, serialization_context(topic))


def json_converter(url: str, **config) -> JsonSchemaConverter:
    return converter(JsonSchemaConverter, url, **config)


ORDER = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "com.acme.Order", "description": "an order", "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "qty": {"type": "integer", "connect.type": "int16"},
        "ratio": {"type": "number", "connect.type": "float32"},
        "price": {"type": "number"},
        "name": {"type": "string", "description": "the name", "default": "none"},
        "paid": {"type": "boolean"},
        "note": {"oneOf": [{"type": "null"}, {"type": "string"}]},
        "nick": {"type": ["string", "null"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "ship": {"$ref": "#/definitions/Address"},
        "bill": {"$ref": "#/definitions/Address"},
        "kind": {"type": "string", "enum": ["A", "B"]},
        "fixed": {"const": "X"},
        "either": {"oneOf": [{"type": "integer"}, {"type": "string"},
                             {"type": "object", "properties": {"z": {"type": "integer"}}}]},
        "attrs": {"type": "object", "additionalProperties": {"type": "integer"},
                  "connect.type": "map"},
        "by_num": {"type": "array", "connect.type": "map", "items": {"type": "object", "properties": {
            "key": {"type": "integer"}, "value": {"type": "string"}}}},
        "amount": {"type": "string", "title": "org.apache.kafka.connect.data.Decimal",
                   "connect.type": "bytes", "connect.version": 1, "connect.parameters": {"scale": "2"}},
        "num_amount": {"type": "number", "title": "org.apache.kafka.connect.data.Decimal",
                       "connect.type": "bytes", "connect.version": 1,
                       "connect.parameters": {"scale": "3"}},
        "day": {"type": "integer", "title": "org.apache.kafka.connect.data.Date", "connect.type": "int32",
                "connect.version": 1},
        "at": {"type": "integer", "title": "org.apache.kafka.connect.data.Timestamp",
               "connect.type": "int64", "connect.version": 1},
        "raw": {"type": "string", "connect.type": "bytes"},
        "merged": {"allOf": [{"type": "object", "properties": {"p": {"type": "string"}}},
                             {"type": "object", "properties": {"q": {"type": "integer"}},
                              "required": ["q"]}]},
        "ordered": {"type": "object", "properties": {
            "second": {"type": "integer", "connect.index": 1},
            "first": {"type": "integer", "connect.index": 0}}},
    },
    "required": ["id"],
    "definitions": {"Address": {"type": "object", "title": "Address",
                                "properties": {"city": {"type": "string"}}}},
}

ORDER_VALUE = {
    "id": 7, "qty": 3, "ratio": 0.5, "price": 19.99, "name": "x", "paid": True, "note": None,
    "nick": "n", "tags": ["a"], "ship": {"city": "Oslo"}, "bill": {"city": "Rome"}, "kind": "B",
    "fixed": "X", "either": {"z": 1}, "attrs": {"a": 1}, "by_num": [{"key": 1, "value": "one"}],
    "amount": base64.b64encode((12345).to_bytes(2, "big", signed=True)).decode(),
    "num_amount": 1.5, "day": 19000, "at": 1700000000123,
    "raw": base64.b64encode(b"\x01\x02").decode(), "merged": {"p": "s", "q": 2},
    "ordered": {"first": 1, "second": 2},
}


def test_order_from_confluent_serializer(schema_registry):
    topic = unique("json-order")
    data = serialize(schema_registry.url, ORDER, ORDER_VALUE, topic)
    conv = json_converter(schema_registry.url)
    schema, value = conv.to_connect_data(topic, data)
    assert schema.type is Type.STRUCT and schema.name == "com.acme.Order"
    assert schema.doc == "an order" and schema.version == 1
    f = {x.name: x.schema for x in schema.fields()}
    assert f["id"] == Schema.INT64_SCHEMA
    assert f["qty"].type is Type.INT16 and f["ratio"].type is Type.FLOAT32
    assert f["price"] == Schema.FLOAT64_SCHEMA
    assert f["name"].doc == "the name" and f["name"].default == "none" and not f["name"].optional
    assert f["paid"] == Schema.BOOLEAN_SCHEMA
    assert f["note"] == Schema.OPTIONAL_STRING_SCHEMA
    assert f["nick"] == Schema.OPTIONAL_STRING_SCHEMA
    assert f["tags"] == SchemaBuilder.array(Schema.STRING_SCHEMA).build()
    assert f["ship"].name == "Address" and f["ship"] == f["bill"]
    assert f["kind"].parameters == {"io.confluent.connect.json.Enum": "",
                                    "io.confluent.connect.json.Enum.A": "A",
                                    "io.confluent.connect.json.Enum.B": "B"}
    assert f["fixed"].parameters == {"io.confluent.connect.json.Enum": "",
                                     "io.confluent.connect.json.Enum.X": "X"}
    either = f["either"]
    assert either.name == "io.confluent.connect.json.OneOf"
    assert [x.name for x in either.fields()] == [f"io.confluent.connect.json.OneOf.field.{i}"
                                                 for i in range(3)]
    assert f["attrs"] == SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build()
    assert f["by_num"] == SchemaBuilder.map(Schema.INT64_SCHEMA, Schema.STRING_SCHEMA).build()
    assert f["amount"].name == "org.apache.kafka.connect.data.Decimal" and f["amount"].type is Type.BYTES
    assert f["day"].name == "org.apache.kafka.connect.data.Date"
    assert f["raw"] == Schema.BYTES_SCHEMA
    assert [x.name for x in f["merged"].fields()] == ["p", "q"]
    assert [x.name for x in f["ordered"].fields()] == ["first", "second"]

    v = value
    assert v.get("id") == 7 and v.get("qty") == 3 and v.get("ratio") == 0.5
    assert v.get("price") == 19.99 and v.get("name") == "x" and v.get("paid") is True
    assert v.get("note") is None and v.get("nick") == "n" and v.get("tags") == ["a"]
    assert v.get("ship").get("city") == "Oslo" and v.get("kind") == "B" and v.get("fixed") == "X"
    assert v.get("either").get("io.confluent.connect.json.OneOf.field.2").get("z") == 1
    assert v.get("attrs") == {"a": 1} and v.get("by_num") == {1: "one"}
    assert v.get("amount") == decimal.Decimal("123.45")
    assert v.get("num_amount") == decimal.Decimal("1.5")
    assert v.get("day") == dt.date(2022, 1, 8)
    assert v.get("at") == dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)
    assert v.get("raw") == b"\x01\x02"
    assert v.get("merged").get("q") == 2
    # the same schema object for every value with that id
    again = conv.to_connect_data(topic, data)
    assert again.schema is schema and conv.last_schema_id == conv.schema_id_of(data)


def test_missing_fields_defaults_and_optional_nonrequired(schema_registry):
    topic = unique("json-missing")
    schema = {"type": "object", "properties": {
        "a": {"type": "integer"}, "b": {"type": "string", "default": "dflt"},
        "c": {"type": "string"}}, "required": ["a"]}
    data = serialize(schema_registry.url, schema, {"a": 1}, topic)
    result = json_converter(schema_registry.url).to_connect_data(topic, data)
    assert result.schema.name is None and not result.schema.field("c").schema.optional
    assert result.value.get("b") == "dflt" and result.value.get("c") is None
    optional = json_converter(schema_registry.url, use_optional_for_nonrequired="true")
    result = optional.to_connect_data(topic, data)
    assert not result.schema.field("a").schema.optional
    assert result.schema.field("c").schema.optional


def test_version_from_subject_and_connect_version(schema_registry):
    topic = unique("json-version")
    v1 = {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False}
    v2 = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
          "additionalProperties": False}
    conv = json_converter(schema_registry.url)
    d1 = serialize(schema_registry.url, v1, {"a": 1}, topic)
    d2 = serialize(schema_registry.url, v2, {"a": 1, "b": "x"}, topic)
    assert conv.to_connect_data(topic, d1).schema.version == 1
    assert conv.to_connect_data(topic, d2).schema.version == 2
    other = unique("json-version")
    d3 = serialize(schema_registry.url, dict(v1, **{"connect.version": 9}), {"a": 1}, other)
    assert conv.to_connect_data(other, d3).schema.version == 9


def test_references_by_name(schema_registry):
    client = SchemaRegistryClient.from_config({"schema.registry.url": schema_registry.url})
    dep = unique("json-addr")
    address = {"type": "object", "title": "Address", "properties": {"city": {"type": "string"}}}
    client.register(dep, json.dumps(address), schema_type="JSON")
    topic = unique("json-user")
    user = {"type": "object", "title": "User", "properties": {"home": {"$ref": "address.json"}}}
    schema_id = client.register(f"{topic}-value", json.dumps(user), schema_type="JSON",
                                references=[SchemaReference("address.json", dep, 1)])
    data = wire_format.frame(schema_id, b'{"home": {"city": "Bergen"}}')
    result = json_converter(schema_registry.url).to_connect_data(topic, data)
    assert result.schema.field("home").schema.name == "Address"
    assert result.value.get("home").get("city") == "Bergen"


def test_null_payload_and_tombstone(schema_registry):
    topic = unique("json-null")
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    data = serialize(schema_registry.url, schema, {"a": 1}, topic)
    conv = json_converter(schema_registry.url)
    assert conv.to_connect_data(topic, None) == (None, None)
    assert conv.to_connect_data(topic, data[:5] + b"null") == (None, None)


def test_bad_payloads(schema_registry):
    topic = unique("json-bad")
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
              "required": ["a"]}
    data = serialize(schema_registry.url, schema, {"a": 1, "b": "x"}, topic)
    conv = json_converter(schema_registry.url)
    head = data[:5]
    with pytest.raises(DataException, match="not UTF-8 JSON"):
        conv.to_connect_data(topic, head + b'{"a": 1')
    with pytest.raises(DataException, match="Expected a JSON integer for an INT64 field"):
        conv.to_connect_data(topic, head + b'{"a": "one"}')
    with pytest.raises(DataException, match="Invalid null value for required INT64 field"):
        conv.to_connect_data(topic, head + b'{"a": null}')
    with pytest.raises(DataException, match="Structs should be encoded as JSON objects"):
        conv.to_connect_data(topic, head + b'[1]')
    with pytest.raises(DataException, match="Unknown magic byte!"):
        conv.to_connect_data(topic, b"{" + data[1:])
    with pytest.raises(DataException, match="not found"):
        conv.to_connect_data(topic, wire_format.frame(777777, b"{}"))
    strict = json_converter(schema_registry.url, json_fail_invalid_schema="true")
    with pytest.raises(DataException, match="does not match schema"):
        strict.to_connect_data(topic, head + b'{"b": "no a"}')
    assert strict.to_connect_data(topic, data).value.get("a") == 1


def test_unsupported_schemas_fail_clearly(schema_registry):
    client = SchemaRegistryClient.from_config({"schema.registry.url": schema_registry.url})
    topic = unique("json-any")
    schema_id = client.register(f"{topic}-value", json.dumps(
        {"type": "object", "properties": {"anything": {}}}), schema_type="JSON")
    with pytest.raises(DataException, match="empty schema"):
        json_converter(schema_registry.url).to_connect_data(topic, wire_format.frame(schema_id, b"{}"))


def test_from_connect_data_round_trip_and_confluent_deserializer(schema_registry):
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer

    topic = unique("json-write")
    address = SchemaBuilder.struct().name("Address").field("city", Schema.STRING_SCHEMA).build()
    schema = (SchemaBuilder.struct().name("com.acme.Person").version(1).doc("a person")
              .field("name", Schema.STRING_SCHEMA)
              .field("age", Schema.OPTIONAL_INT32_SCHEMA)
              .field("score", Schema.FLOAT64_SCHEMA)
              .field("tiny", Schema.INT8_SCHEMA)
              .field("home", address)
              .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
              .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build())
              .field("by_id", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
              .field("raw", Schema.BYTES_SCHEMA)
              .field("price", SchemaBuilder.bytes().name("org.apache.kafka.connect.data.Decimal")
                     .version(1).parameter("scale", "2").build())
              .field("born", SchemaBuilder.int32().name("org.apache.kafka.connect.data.Date")
                     .version(1).build())
              .build())
    value = (Struct(schema).put("name", "Ann").put("score", 1.5).put("tiny", -1)
             .put("home", Struct(address).put("city", "Oslo")).put("tags", ["x"])
             .put("attrs", {"k": 2}).put("by_id", {3: "c"}).put("raw", b"\x00")
             .put("price", decimal.Decimal("9.99")).put("born", dt.date(2000, 1, 1)))
    conv = json_converter(schema_registry.url)
    data = conv.from_connect_data(topic, schema, value)
    back = conv.to_connect_data(topic, data)
    assert back.schema == schema and back.value == value
    registered = json.loads(SchemaRegistryClient.from_config(
        {"schema.registry.url": schema_registry.url}).get_version(f"{topic}-value", 1).schema)
    assert registered["title"] == "com.acme.Person" and registered["connect.version"] == 1
    assert registered["properties"]["tiny"] == {"type": "integer", "connect.type": "int8",
                                                "connect.index": 3}
    assert registered["properties"]["age"]["oneOf"][0] == {"type": "null"}
    # confluent-kafka's deserializer validates the payload against the registered schema
    got = JSONDeserializer(None, schema_registry_client=confluent_client(schema_registry.url))(
        data, serialization_context(topic))
    assert got["name"] == "Ann" and got["price"] == base64.b64encode(b"\x03\xe7").decode()
    numeric = json_converter(schema_registry.url, decimal_format="NUMERIC")
    topic2 = unique("json-numeric")
    data2 = numeric.from_connect_data(topic2, schema, value)
    assert b'"price":9.99' in data2
    assert numeric.to_connect_data(topic2, data2).value.get("price") == decimal.Decimal("9.99")


def test_loaded_by_connect_class_name(schema_registry):
    conv = load("io.confluent.connect.json.JsonSchemaConverter",
                {"schema.registry.url": schema_registry.url})
    assert isinstance(conv, JsonSchemaConverter)


def test_use_latest_version(schema_registry):
    topic = unique("json-latest")
    v1 = {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False}
    v2 = {"type": "object", "properties": {"a": {"type": "integer"},
                                           "b": {"type": "string", "default": "z"}},
          "additionalProperties": False}
    d1 = serialize(schema_registry.url, v1, {"a": 1}, topic)
    serialize(schema_registry.url, v2, {"a": 2, "b": "y"}, topic)
    conv = json_converter(schema_registry.url, use_latest_version="true")
    result = conv.to_connect_data(topic, d1)
    assert result.schema.version == 2 and [f.name for f in result.schema.fields()] == ["a", "b"]
    assert result.value.get("a") == 1 and result.value.get("b") == "z"
