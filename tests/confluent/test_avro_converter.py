"""AvroConverter: payloads written by confluent-kafka's own AvroSerializer, as Confluent's AvroData maps them."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import uuid

import fastavro
import pytest

from connector.api import Schema, SchemaBuilder, Struct, Type
from connector.api.errors import ConfigException, DataException
from connector.api.record import Header
from converters import load
from converters.confluent import wire_format
from converters.confluent.avro import AvroConverter
from converters.confluent.registry_client import SchemaRegistryClient
from tests.confluent import confluent_client, converter, serialization_context, unique

UTC = dt.timezone.utc


def serialize(url: str, schema: dict | str, value, topic: str, is_key: bool = False, **conf) -> bytes:
    from confluent_kafka.schema_registry.avro import AvroSerializer

    text = schema if isinstance(schema, str) else json.dumps(schema)
    ser = AvroSerializer(confluent_client(url), text, conf=conf or None)
    return ser(value, serialization_context(topic, is_key))


def avro_converter(url: str, is_key: bool = False, **config) -> AvroConverter:
    return converter(AvroConverter, url, is_key, **config)


EVERYTHING = {
    "type": "record", "name": "Everything", "namespace": "com.acme", "doc": "all the types",
    "fields": [
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int", "doc": "an int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "raw", "type": "bytes"},
        {"name": "i8", "type": {"type": "int", "connect.type": "int8"}},
        {"name": "i16", "type": {"type": "int", "connect.type": "int16"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tod", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "micros", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10,
                                   "scale": 2}},
        {"name": "big", "type": {"type": "fixed", "name": "Big", "size": 8,
                                 "logicalType": "decimal", "precision": 18, "scale": 3}},
        {"name": "md5", "type": {"type": "fixed", "name": "MD5", "size": 4}},
        {"name": "color", "type": {"type": "enum", "name": "Color", "doc": "colours",
                                   "symbols": ["RED", "GREEN"], "default": "RED"}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "scores", "type": {"type": "map", "values": "double"}},
        {"name": "by_id", "type": {"type": "array", "items": {
            "type": "record", "name": "MapEntry", "namespace": "io.confluent.connect.avro",
            "fields": [{"name": "key", "type": "int"}, {"name": "value", "type": "string"}]}}},
        {"name": "home", "type": {"type": "record", "name": "Address", "fields": [
            {"name": "city", "type": "string"}, {"name": "zip", "type": ["null", "string"],
                                                 "default": None}]}},
        {"name": "work", "type": ["null", "Address"], "default": None},
        {"name": "email", "type": ["null", "string"], "default": None},
        {"name": "nick", "type": ["string", "null"], "default": "x"},
        {"name": "either", "type": ["int", "long", "string", "Address"]},
        {"name": "maybe_either", "type": ["null", "int", "string"], "default": None},
        {"name": "single", "type": ["long"]},
        {"name": "with_default", "type": "int", "default": 42},
    ],
}

EVERYTHING_VALUE = {
    "b": True, "i": -7, "l": 2**40, "f": 1.5, "d": 2.25, "s": "héllo", "raw": b"\x00\xff",
    "i8": -128, "i16": 32000, "day": dt.date(2024, 2, 29), "tod": dt.time(13, 14, 15, 16000),
    "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=UTC),
    "micros": dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
    "price": decimal.Decimal("-12.34"), "big": decimal.Decimal("123456789012.345"),
    "md5": b"abcd", "color": "GREEN", "tags": ["a", "b"], "scores": {"x": 0.5},
    "by_id": [{"key": 1, "value": "one"}, {"key": 2, "value": "two"}],
    "home": {"city": "Paris", "zip": None}, "work": {"city": "Lyon", "zip": "69000"},
    "email": None, "nick": "nick", "either": ("long", 5), "maybe_either": "s",
    "single": 9, "with_default": 1,
}


def test_everything_from_confluent_serializer(schema_registry):
    topic = unique("everything")
    data = serialize(schema_registry.url, EVERYTHING, EVERYTHING_VALUE, topic)
    conv = avro_converter(schema_registry.url)
    schema, value = conv.to_connect_data(topic, data)

    assert schema.type is Type.STRUCT and schema.name == "com.acme.Everything"
    assert schema.version == 1  # the version in subject <topic>-value
    assert schema.parameters["io.confluent.connect.avro.record.doc"] == "all the types"
    assert schema.parameters["io.confluent.connect.avro.field.doc.i"] == "an int"
    f = {field.name: field.schema for field in schema.fields()}
    assert f["b"] == Schema.BOOLEAN_SCHEMA and f["l"] == Schema.INT64_SCHEMA
    assert f["f"] == Schema.FLOAT32_SCHEMA and f["d"] == Schema.FLOAT64_SCHEMA
    assert f["s"] == Schema.STRING_SCHEMA and f["raw"] == Schema.BYTES_SCHEMA
    assert f["i8"].type is Type.INT8 and f["i16"].type is Type.INT16
    assert f["day"].name == "org.apache.kafka.connect.data.Date" and f["day"].version == 1
    assert f["tod"].name == "org.apache.kafka.connect.data.Time"
    assert f["ts"].name == "org.apache.kafka.connect.data.Timestamp"
    assert f["micros"] == Schema.INT64_SCHEMA  # not a Connect logical type
    assert f["price"].name == "org.apache.kafka.connect.data.Decimal"
    assert f["price"].parameters == {"scale": "2", "connect.decimal.precision": "10"}
    assert f["big"].parameters == {"scale": "3", "connect.decimal.precision": "18",
                                   "connect.fixed.size": "8"}
    assert f["md5"].type is Type.BYTES and f["md5"].name == "com.acme.MD5"
    assert f["md5"].parameters == {"connect.fixed.size": "4"}
    assert f["color"].type is Type.STRING and f["color"].name == "com.acme.Color"
    assert f["color"].parameters == {
        "io.confluent.connect.avro.Enum": "com.acme.Color",
        "io.confluent.connect.avro.Enum.RED": "RED", "io.confluent.connect.avro.Enum.GREEN": "GREEN",
        "io.confluent.connect.avro.enum.doc.Color": "colours",
        "io.confluent.connect.avro.enum.default.Color": "RED"}
    assert f["tags"] == SchemaBuilder.array(Schema.STRING_SCHEMA).build()
    assert f["scores"] == SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.FLOAT64_SCHEMA).build()
    assert f["by_id"] == SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build()
    assert f["home"].name == "com.acme.Address" and not f["home"].optional
    assert f["work"].name == "com.acme.Address" and f["work"].optional
    assert f["email"] == Schema.OPTIONAL_STRING_SCHEMA  # the null default is dropped
    assert f["nick"] == Schema.OPTIONAL_STRING_SCHEMA
    either = f["either"]
    assert either.name == "io.confluent.connect.avro.Union" and not either.optional
    assert [x.name for x in either.fields()] == ["int", "long", "string", "Address"]
    assert all(x.schema.optional for x in either.fields())
    assert f["maybe_either"].optional and [x.name for x in f["maybe_either"].fields()] == \
        ["int", "string"]
    assert f["single"] == Schema.INT64_SCHEMA
    assert f["with_default"].default == 42
    assert f["with_default"].parameters == {"io.confluent.connect.avro.field.default": "true"}

    v = value
    assert isinstance(v, Struct)
    assert v.get("b") is True and v.get("i") == -7 and v.get("l") == 2**40
    assert v.get("f") == 1.5 and v.get("s") == "héllo" and v.get("raw") == b"\x00\xff"
    assert v.get("i8") == -128 and v.get("i16") == 32000
    assert v.get("day") == dt.date(2024, 2, 29)
    assert v.get("tod") == dt.time(13, 14, 15, 16000)
    assert v.get("ts") == dt.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=UTC)
    assert v.get("micros") == 1704164645000006
    assert v.get("price") == decimal.Decimal("-12.34")
    assert v.get("big") == decimal.Decimal("123456789012.345")
    assert v.get("md5") == b"abcd" and v.get("color") == "GREEN"
    assert v.get("tags") == ["a", "b"] and v.get("scores") == {"x": 0.5}
    assert v.get("by_id") == {1: "one", 2: "two"}
    assert v.get("home").get("city") == "Paris" and v.get("home").get("zip") is None
    assert v.get("work").get("zip") == "69000"
    assert v.get("email") is None and v.get("nick") == "nick"
    assert v.get("either").get("long") == 5 and v.get("either").get("int") is None
    assert v.get("maybe_either").get("string") == "s"
    assert v.get("single") == 9 and v.get("with_default") == 1
    v.validate()


def test_same_schema_id_gives_the_same_schema_object(schema_registry):
    topic = unique("stable")
    schema = {"type": "record", "name": "S", "fields": [{"name": "a", "type": "int"}]}
    first = serialize(schema_registry.url, schema, {"a": 1}, topic)
    second = serialize(schema_registry.url, schema, {"a": 2}, topic)
    conv = avro_converter(schema_registry.url)
    s1 = conv.to_connect_data(topic, first).schema
    schema_id = conv.last_schema_id
    s2 = conv.to_connect_data(topic, second).schema
    assert s1 is s2
    assert schema_id == conv.schema_id_of(first) == wire_format.schema_id_of(second)
    assert conv.connect_schema_of(topic, schema_id) is s1
    # a second converter gets an equal schema
    assert avro_converter(schema_registry.url).to_connect_data(topic, first).schema == s1


def test_versions_follow_the_subject(schema_registry):
    topic = unique("evolve")
    v1 = {"type": "record", "name": "E", "fields": [{"name": "a", "type": "int"}]}
    v2 = {"type": "record", "name": "E", "fields": [
        {"name": "a", "type": "int"}, {"name": "b", "type": ["null", "string"], "default": None}]}
    d1 = serialize(schema_registry.url, v1, {"a": 1}, topic)
    d2 = serialize(schema_registry.url, v2, {"a": 2, "b": "x"}, topic)
    conv = avro_converter(schema_registry.url)
    r1, r2 = conv.to_connect_data(topic, d1), conv.to_connect_data(topic, d2)
    assert (r1.schema.version, r2.schema.version) == (1, 2)
    assert conv.schema_id_of(d1) != conv.schema_id_of(d2)
    assert [f.name for f in r2.schema.fields()] == ["a", "b"]
    # connect.version wins over the registry version
    v3 = dict(v2, **{"connect.version": 7})
    d3 = serialize(schema_registry.url, v3, {"a": 3, "b": None}, topic)
    assert conv.to_connect_data(topic, d3).schema.version == 7


def test_use_latest_version_reads_into_the_latest_schema(schema_registry):
    topic = unique("latest")
    v1 = {"type": "record", "name": "L", "fields": [
        {"name": "a", "type": "int"}, {"name": "gone", "type": "string", "default": ""}]}
    v2 = {"type": "record", "name": "L", "fields": [
        {"name": "a", "type": "long"}, {"name": "c", "type": "string", "default": "dflt"}]}
    d1 = serialize(schema_registry.url, v1, {"a": 1, "gone": "x"}, topic)
    serialize(schema_registry.url, v2, {"a": 2, "c": "y"}, topic)
    conv = avro_converter(schema_registry.url, use_latest_version="true")
    schema, value = conv.to_connect_data(topic, d1)
    assert schema.version == 2 and [f.name for f in schema.fields()] == ["a", "c"]
    assert schema.field("a").schema == Schema.INT64_SCHEMA
    assert value.get("a") == 1 and value.get("c") == "dflt"


def test_connect_properties_are_honoured(schema_registry):
    topic = unique("props")
    schema = {"type": "record", "name": "P", "fields": [
        {"name": "a", "type": {"type": "string", "connect.doc": "the a",
                               "connect.parameters": {"k": "v"}, "connect.default": "zz",
                               "connect.name": "my.Name", "avro.java.string": "String"}},
        {"name": "b", "type": {"type": "int", "connect.version": 3}},
    ], "connect.name": "custom.Name", "connect.version": 4}
    data = serialize(schema_registry.url, schema, {"a": "q", "b": 1}, topic)
    result = avro_converter(schema_registry.url).to_connect_data(topic, data)
    assert result.schema.name == "custom.Name" and result.schema.version == 4
    a = result.schema.field("a").schema
    assert a.doc == "the a" and a.name == "my.Name" and a.default == "zz"
    assert a.parameters == {"k": "v", "avro.java.string": "String"}
    assert result.schema.field("b").schema.version == 3
    plain = avro_converter(schema_registry.url, connect_meta_data="false").to_connect_data(topic, data)
    assert plain.schema.field("a").schema.doc is None
    assert plain.schema.field("a").schema.parameters == {"avro.java.string": "String"}


def test_generalized_sum_types_and_enhanced_support(schema_registry):
    topic = unique("sum")
    schema = {"type": "record", "name": "G", "namespace": "n", "fields": [
        {"name": "u", "type": ["null", "int", {"type": "record", "name": "In", "fields": [
            {"name": "x", "type": "int"}]}]},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}}]}
    data = serialize(schema_registry.url, schema, {"u": {"x": 1}, "e": "B"}, topic)
    gen = avro_converter(schema_registry.url, generalized_sum_type_support="true")
    result = gen.to_connect_data(topic, data)
    u = result.schema.field("u").schema
    assert u.name == "connect_union_0" and u.parameters == {"org.apache.kafka.connect.data.Union":
                                                            "connect_union_0"}
    assert [f.name for f in u.fields()] == ["connect_union_field_1", "connect_union_field_2"]
    assert result.value.get("u").get("connect_union_field_2").get("x") == 1
    e = result.schema.field("e").schema
    assert e.parameters["org.apache.kafka.connect.data.Enum.B"] == "1"
    enhanced = avro_converter(schema_registry.url, enhanced_avro_schema_support="true")
    u2 = enhanced.to_connect_data(topic, data).schema.field("u").schema
    assert [f.name for f in u2.fields()] == ["int", "n.In"]


def test_null_is_a_tombstone(schema_registry):
    conv = avro_converter(schema_registry.url)
    assert conv.to_connect_data("t", None) == (None, None)
    assert conv.from_connect_data("t", None, None) is None


def test_key_converter_uses_the_key_subject(schema_registry):
    topic = unique("keys")
    data = serialize(schema_registry.url, '"string"', "k1", topic, is_key=True)
    conv = avro_converter(schema_registry.url, is_key=True)
    result = conv.to_connect_data(topic, data)
    assert result == (Schema(Type.STRING, version=1), "k1")


def test_subject_name_strategies(schema_registry):
    from confluent_kafka.schema_registry import record_subject_name_strategy, topic_record_subject_name_strategy

    schema = {"type": "record", "name": "Rec", "namespace": "strat", "fields": [
        {"name": "a", "type": "int"}]}
    topic = unique("strat")
    data = serialize(schema_registry.url, schema, {"a": 1}, topic,
                     **{"subject.name.strategy": record_subject_name_strategy})
    conv = avro_converter(schema_registry.url, value_subject_name_strategy=
                          "io.confluent.kafka.serializers.subject.RecordNameStrategy")
    assert conv.to_connect_data(topic, data).schema.version == 1
    client = SchemaRegistryClient.from_config({"schema.registry.url": schema_registry.url})
    assert client.get_subject_versions("strat.Rec") == [1]

    topic2 = unique("strat")
    data2 = serialize(schema_registry.url, schema, {"a": 1}, topic2,
                      **{"subject.name.strategy": topic_record_subject_name_strategy})
    conv2 = avro_converter(schema_registry.url, value_subject_name_strategy=
                           "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy")
    assert conv2.to_connect_data(topic2, data2).schema.version == 1
    # writing registers under the strategy's subject
    struct_schema = SchemaBuilder.struct().name("strat.Written").field("a", Schema.INT32_SCHEMA).build()
    conv2.from_connect_data(topic2, struct_schema, Struct(struct_schema).put("a", 5))
    assert client.get_subject_versions(f"{topic2}-strat.Written") == [1]
    # record strategies need a record
    with pytest.raises(DataException, match="must only be a record schema"):
        conv2.from_connect_data(topic2, Schema.STRING_SCHEMA, "x")
    with pytest.raises(ConfigException, match="value.subject.name.strategy"):
        avro_converter(schema_registry.url, value_subject_name_strategy="NoSuchStrategy")


def test_schema_not_under_the_subject_gets_no_version(schema_registry):
    topic = unique("nosubject")
    schema = {"type": "record", "name": "N", "fields": [{"name": "a", "type": "int"}]}
    data = serialize(schema_registry.url, schema, {"a": 1}, topic)
    result = avro_converter(schema_registry.url).to_connect_data(unique("other-topic"), data)
    assert result.schema.version is None and result.value.get("a") == 1


def test_header_schema_guid(schema_registry):
    from confluent_kafka.schema_registry import header_schema_id_serializer

    topic = unique("guid")
    schema = {"type": "record", "name": "H", "fields": [{"name": "a", "type": "int"}]}
    from confluent_kafka.schema_registry.avro import AvroSerializer

    ser = AvroSerializer(confluent_client(schema_registry.url), json.dumps(schema),
                         conf={"schema.id.serializer": header_schema_id_serializer})
    headers: list = []
    payload = ser({"a": 3}, serialization_context(topic, headers=headers))
    assert payload == b"\x06" and headers[0][0] == "__value_schema_id"
    conv = avro_converter(schema_registry.url)
    result = conv.to_connect_data(topic, payload, [Header(k, v) for k, v in headers])
    assert result.value.get("a") == 3
    assert conv.last_schema_guid == str(uuid.UUID(bytes=headers[0][1][1:]))


def test_references(schema_registry):
    client = SchemaRegistryClient.from_config({"schema.registry.url": schema_registry.url})
    dep_subject = unique("ref-address")
    address = {"type": "record", "name": "Address", "namespace": "refs",
               "fields": [{"name": "city", "type": "string"}]}
    client.register(dep_subject, json.dumps(address))
    from converters.confluent.registry_client import SchemaReference

    user = {"type": "record", "name": "User", "namespace": "refs",
            "fields": [{"name": "home", "type": "refs.Address"}]}
    topic = unique("ref-user")
    refs = [SchemaReference("refs.Address", dep_subject, 1)]
    schema_id = client.register(f"{topic}-value", json.dumps(user), references=refs)
    full = dict(user, fields=[{"name": "home", "type": address}])
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(full), {"home": {"city": "Oslo"}})
    result = avro_converter(schema_registry.url).to_connect_data(
        topic, wire_format.frame(schema_id, buf.getvalue()))
    assert result.schema.field("home").schema.name == "refs.Address"
    assert result.value.get("home").get("city") == "Oslo"


def test_loaded_by_connect_class_name(schema_registry):
    conv = load("io.confluent.connect.avro.AvroConverter", {"schema.registry.url": schema_registry.url})
    assert isinstance(conv, AvroConverter)
    with pytest.raises(ConfigException, match="schema.registry.url"):
        load("io.confluent.connect.avro.AvroConverter", {})


# --- writing --------------------------------------------------------------------------------------

def test_from_connect_data_round_trip_and_registered_schema(schema_registry):
    topic = unique("write")
    inner = SchemaBuilder.struct().name("w.Inner").field("x", Schema.OPTIONAL_INT16_SCHEMA).build()
    schema = (SchemaBuilder.struct().name("w.Outer").version(2).doc("outer")
              .field("i8", Schema.INT8_SCHEMA)
              .field("dec", SchemaBuilder.bytes().name("org.apache.kafka.connect.data.Decimal")
                     .version(1).parameter("scale", "2").build())
              .field("inner", inner)
              .field("m", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
              .field("opt", SchemaBuilder.string().optional().default_value("d").build())
              .build())
    value = (Struct(schema).put("i8", 3).put("dec", decimal.Decimal("1.25"))
             .put("inner", Struct(inner).put("x", 7)).put("m", {1: "a"}).put("opt", None))
    conv = avro_converter(schema_registry.url)
    data = conv.from_connect_data(topic, schema, value)
    assert data[0] == 0 and conv.last_schema_id == wire_format.schema_id_of(data)
    back = conv.to_connect_data(topic, data)
    assert back.schema == schema
    assert back.value.get("opt") == "d" and back.value.get("m") == {1: "a"}
    assert back.value.get("inner").get("x") == 7
    registered = json.loads(SchemaRegistryClient.from_config(
        {"schema.registry.url": schema_registry.url}).get_version(f"{topic}-value", 1).schema)
    assert registered["name"] == "Outer" and registered["namespace"] == "w"
    assert registered["connect.version"] == 2 and registered["connect.doc"] == "outer"
    fields = {f["name"]: f for f in registered["fields"]}
    assert fields["i8"]["type"] == {"type": "int", "connect.type": "int8"}
    assert fields["dec"]["type"]["logicalType"] == "decimal"
    assert fields["m"]["type"]["items"]["name"] == "MapEntry"
    assert fields["opt"]["type"][0]["type"] == "string" and fields["opt"]["default"] == "d"
    # confluent-kafka's deserializer reads what we wrote
    from confluent_kafka.schema_registry.avro import AvroDeserializer

    got = AvroDeserializer(confluent_client(schema_registry.url))(data, serialization_context(topic))
    assert got["i8"] == 3 and got["dec"] == decimal.Decimal("1.25") and got["inner"] == {"x": 7}


def test_auto_register_false_needs_an_existing_schema(schema_registry):
    conv = avro_converter(schema_registry.url, auto_register_schemas="false")
    with pytest.raises(DataException, match="not found"):
        conv.from_connect_data(unique("noreg"), Schema.STRING_SCHEMA, "x")


def test_write_null_checks(schema_registry):
    conv = avro_converter(schema_registry.url)
    with pytest.raises(DataException, match="non-optional"):
        conv.from_connect_data("t", Schema.STRING_SCHEMA, None)
    assert conv.from_connect_data("t", Schema.OPTIONAL_STRING_SCHEMA, None) is None


def test_schemaless_values_use_the_anything_record(schema_registry):
    topic = unique("anything")
    conv = avro_converter(schema_registry.url)
    value = {"a": [1, "two", None, {b"k": 2.5}], "b": True}
    data = conv.from_connect_data(topic, None, value)
    assert conv.to_connect_data(topic, data) == (None, value)


# --- bad input --------------------------------------------------------------------------------------

def test_unknown_schema_id(schema_registry):
    conv = avro_converter(schema_registry.url)
    with pytest.raises(DataException, match="Schema 999999 not found"):
        conv.to_connect_data("t", wire_format.frame(999999, b"\x02"))


def test_wrong_magic_byte_and_truncated_header(schema_registry):
    conv = avro_converter(schema_registry.url)
    with pytest.raises(DataException, match="Unknown magic byte!"):
        conv.to_connect_data("t", b"\x07\x00\x00\x00\x01\x02")
    with pytest.raises(DataException, match="Truncated Confluent wire format"):
        conv.to_connect_data("t", b"\x00\x00\x01")
    with pytest.raises(DataException, match="empty"):
        conv.to_connect_data("t", b"")


def test_truncated_and_mismatched_payloads(schema_registry):
    topic = unique("truncated")
    schema = {"type": "record", "name": "T", "fields": [
        {"name": "s", "type": "string"}, {"name": "l", "type": "long"}]}
    data = serialize(schema_registry.url, schema, {"s": "hello world", "l": 2**50}, topic)
    conv = avro_converter(schema_registry.url)
    schema_id = conv.schema_id_of(data)
    with pytest.raises(DataException, match=f"does not match schema {schema_id}"):
        conv.to_connect_data(topic, data[:9])
    with pytest.raises(DataException, match="does not match schema"):
        conv.to_connect_data(topic, wire_format.frame(schema_id, b"\x80"))  # bad string length
    json_id = SchemaRegistryClient.from_config({"schema.registry.url": schema_registry.url}).register(
        unique("json"), json.dumps({"type": "string"}), schema_type="JSON")
    with pytest.raises(DataException, match="is a JSON schema but the converter expects AVRO"):
        conv.to_connect_data(topic, wire_format.frame(json_id, b'"x"'))


def test_unreachable_registry_is_retried_then_fails():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{s.getsockname()[1]}"
    s.close()
    conv = avro_converter(url, max_retries="2", retries_wait_ms="1")
    with pytest.raises(DataException, match="Schema Registry unavailable while fetching schema 5") \
            as info:
        conv.to_connect_data("t", wire_format.frame(5, b""))
    assert url in str(info.value) and "3 attempt(s)" in str(info.value)


def test_basic_auth_config():
    from tests.support.schema_registry import SchemaRegistryServer

    with SchemaRegistryServer(users={"u": "p"}) as registry:
        conv = avro_converter(registry.url, basic_auth_credentials_source="USER_INFO",
                              basic_auth_user_info="u:p")
        data = conv.from_connect_data("auth", Schema.INT64_SCHEMA, 5)
        assert conv.to_connect_data("auth", data).value == 5
        anonymous = avro_converter(registry.url)
        with pytest.raises(DataException, match="401"):
            anonymous.to_connect_data("auth", data)


def test_recursive_schema_is_rejected_clearly(schema_registry):
    topic = unique("recursive")
    schema = {"type": "record", "name": "Node", "fields": [
        {"name": "next", "type": ["null", "Node"], "default": None}]}
    data = serialize(schema_registry.url, schema, {"next": {"next": None}}, topic)
    with pytest.raises(DataException, match="Recursive Avro schema Node"):
        avro_converter(schema_registry.url).to_connect_data(topic, data)
