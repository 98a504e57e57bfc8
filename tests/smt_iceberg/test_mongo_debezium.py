"""MongoDebeziumTransform: ports TestMongoDebeziumTransform (11 cases), plus the chain into
DebeziumTransform and Debezium's real key/value shapes."""

from __future__ import annotations

import datetime as dt

import pytest

from connector.api.errors import DataException
from connector.api.record import Header, TimestampType
from connector.api.schema import Schema, SchemaBuilder, Type
from connector.api.struct import Struct
from smt.iceberg import DebeziumTransform, MongoDebeziumTransform
from tests.smt_iceberg import sink_record

TIMESTAMP_KEY = "ts_ms"
DEFAULT_ID = 1004
DEFAULT_TS_MS = 1558965515240
DEFAULT_SOURCE_TS_MS = 1558965508000

CREATE_AFTER = (
    '{"_id" : {"$numberLong" : "1004"},"first_name" : "Anne","last_name" : "Kretchmar","email" : "annek@noanswer.org"}'
)
DELETE_BEFORE = (
    '{"_id": {"$numberLong": "1004"},"first_name": "unknown","last_name": "Kretchmar","email": "annek@noanswer.org"}'
)
UPDATE_AFTER = (
    '{"_id": {"$numberLong": "1004"},"first_name": "Anne Marie","last_name": "Kretchmar","email": "annek@noanswer.org"}'
)
UPDATE_BEFORE = DELETE_BEFORE
UPDATED_FIELDS = '{"first_name": "Anne Marie"}'


def optional_json() -> Schema:
    return SchemaBuilder.string().optional().name("io.debezium.data.Json").version(1).build()


TRUNCATED_ARRAY_SCHEMA = (
    SchemaBuilder.struct().name("io.debezium.connector.mongodb.changestream.truncatedarray").version(1)
    .field("field", Schema.STRING_SCHEMA).field("size", Schema.INT32_SCHEMA).build()
)
UPDATE_DESCRIPTION_SCHEMA = (
    SchemaBuilder.struct().optional().name("io.debezium.connector.mongodb.changestream.updatedescription").version(1)
    .field("removedFields", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
    .field("updatedFields", optional_json())
    .field("truncatedArrays", SchemaBuilder.array(TRUNCATED_ARRAY_SCHEMA).optional().build())
    .build()
)
SOURCE_SCHEMA = (
    SchemaBuilder.struct().name("io.debezium.connector.mongo.Source")
    .field("version", Schema.STRING_SCHEMA).field("connector", Schema.STRING_SCHEMA)
    .field("ts_ms", Schema.INT64_SCHEMA).build()
)


def value_schema(valid_envelope: bool = True, source_schema: Schema = SOURCE_SCHEMA) -> Schema:
    return (
        SchemaBuilder.struct()
        .field("after", optional_json())
        .field("before", optional_json())
        .field("op", Schema.OPTIONAL_STRING_SCHEMA)
        .field("ts_ms", Schema.OPTIONAL_INT64_SCHEMA)
        .name("dbserver1.inventory.customers.Envelope" if valid_envelope else "some_invalid_envelope_name")
        .field("updateDescription", UPDATE_DESCRIPTION_SCHEMA)
        .field("source", source_schema)
        .build()
    )


DEFAULT_VALUE_SCHEMA = value_schema()
DEFAULT_KEY_SCHEMA = (
    SchemaBuilder.struct().name("dbserver1.inventory.customers.Key").field("id", Schema.INT64_SCHEMA).build()
)
DEFAULT_KEY = Struct(DEFAULT_KEY_SCHEMA).put("id", DEFAULT_ID)


def source_struct() -> Struct:
    return (
        Struct(SOURCE_SCHEMA).put("version", "2.5.2.final").put("connector", "mongo").put("ts_ms", DEFAULT_SOURCE_TS_MS)
    )


def update_description(removed: list[str] | None, updated: str) -> Struct:
    struct = Struct(UPDATE_DESCRIPTION_SCHEMA)
    if removed is not None:
        struct.put("removedFields", removed)
    return struct.put("updatedFields", updated)


def envelope(op: str, *, after=None, before=None, update=None) -> Struct:
    value = Struct(DEFAULT_VALUE_SCHEMA).put("source", source_struct()).put("ts_ms", DEFAULT_TS_MS).put("op", op)
    if after is not None:
        value.put("after", after)
    if before is not None:
        value.put("before", before)
    if update is not None:
        value.put("updateDescription", update)
    return value


def mongo_record(value: Struct, key_schema=DEFAULT_KEY_SCHEMA, key=DEFAULT_KEY, **kwargs):
    return sink_record(value.schema, value, key_schema, key, offset=0, timestamp=DEFAULT_TS_MS,
                       timestamp_type=TimestampType.CREATE_TIME, **kwargs)


def transformer(mode: str | None = "array") -> MongoDebeziumTransform:
    smt = MongoDebeziumTransform()
    smt.configure({"array_handling_mode": mode})
    return smt


def at(struct: Struct, path: str):
    """The value at a dotted path (struct fields); raises if a part is missing."""
    parts = path.split(".")
    for part in parts[:-1]:
        struct = struct.get(part)
    return struct.get(parts[-1])


def exists(struct: Struct, path: str) -> bool:
    try:
        return at(struct, path) is not None
    except (DataException, AttributeError):
        return False


def schema_type_at(struct: Struct, path: str) -> Type:
    schema = struct.schema
    for part in path.split("."):
        schema = schema.field(part).schema
    return schema.type


# --- TestMongoDebeziumTransform ------------------------------------------------------------------


def test_tombstones_returned_as_is():
    record = sink_record(None, None)
    assert transformer().apply(record) is record


def test_records_with_incorrect_key_become_tombstones():
    value_schema_ = (
        SchemaBuilder.struct()
        .name("some_key_name_missing_key_suffix")
        .field(TIMESTAMP_KEY, Schema.INT64_SCHEMA)
        .build()
    )
    value = Struct(value_schema_).put(TIMESTAMP_KEY, 1444587054854)
    key_schema = SchemaBuilder.struct().name("some_key_name.Envelope").field("serverName", Schema.STRING_SCHEMA).build()
    key = Struct(key_schema).put("serverName", "op.with.heartbeat")
    record = sink_record(value_schema_, value, key_schema, key)
    result = transformer().apply(record)
    assert result is not record
    assert result.value is None


def test_records_with_incorrect_envelope_become_tombstones():
    value_schema_ = SchemaBuilder.struct().name("some_key_name.Key").field(TIMESTAMP_KEY, Schema.INT64_SCHEMA).build()
    value = Struct(value_schema_).put(TIMESTAMP_KEY, 1444587054854)
    key_schema = (
        SchemaBuilder.struct()
        .name("some_key_name_missing_envelope_suffix")
        .field("serverName", Schema.STRING_SCHEMA)
        .build()
    )
    key = Struct(key_schema).put("serverName", "op.with.heartbeat")
    record = sink_record(value_schema_, value, key_schema, key)
    result = transformer().apply(record)
    assert result is not record
    assert result.value is None


def test_key_type_from_bson_inference():
    result = transformer().apply(mongo_record(envelope("c", after=CREATE_AFTER)))
    assert schema_type_at(DEFAULT_KEY, "id") is Type.INT64
    assert result.key.get("id") == DEFAULT_ID
    # "1004" parses as a BSON int32
    assert result.key_schema.field("id").schema.type is Type.INT32
    assert schema_type_at(result.key, "id") is Type.INT32


def test_create_events():
    value = envelope("c", after=CREATE_AFTER)
    record = mongo_record(value)
    result = transformer().apply(record)
    assert result is not record
    assert not exists(result.value, "before")
    assert result.value.get("source") == value.get("source")
    assert result.value.get("op") == "c"
    assert result.value.get("ts_ms") == DEFAULT_TS_MS
    assert (result.kafka_offset, result.kafka_partition, result.topic, result.timestamp) == (
        0,
        0,
        "topic",
        DEFAULT_TS_MS,
    )
    assert at(result.value, "after._id") == 1004
    assert at(result.value, "after.first_name") == "Anne"
    assert at(result.value, "after.last_name") == "Kretchmar"
    assert at(result.value, "after.email") == "annek@noanswer.org"


def test_delete_events():
    result = transformer().apply(mongo_record(envelope("d", before=DELETE_BEFORE)))
    assert not exists(result.value, "after")
    assert result.value.get("op") == "d"
    assert at(result.value, "before._id") == 1004
    assert at(result.value, "before.first_name") == "unknown"
    assert at(result.value, "before.last_name") == "Kretchmar"
    assert at(result.value, "before.email") == "annek@noanswer.org"


def test_fully_specified_update_events():
    result = transformer().apply(mongo_record(envelope("u", before=UPDATE_BEFORE, after=UPDATE_AFTER)))
    value = result.value
    assert value.get("op") == "u"
    assert at(value, "before._id") == 1004
    assert at(value, "before.first_name") == "unknown"
    assert at(value, "before.last_name") == "Kretchmar"
    assert at(value, "before.email") == "annek@noanswer.org"
    assert at(value, "after._id") == 1004
    assert at(value, "after.first_name") == "Anne Marie"
    assert at(value, "after.last_name") == "Kretchmar"
    assert at(value, "after.email") == "annek@noanswer.org"


def test_partial_update_with_before_merges_updated_fields():
    value = transformer().apply(
        mongo_record(envelope("u", before=UPDATE_BEFORE, update=update_description(None, UPDATED_FIELDS)))
    ).value
    assert value.get("op") == "u"
    assert at(value, "before._id") == 1004
    assert at(value, "before.first_name") == "unknown"
    assert at(value, "before.last_name") == "Kretchmar"
    assert at(value, "before.email") == "annek@noanswer.org"
    assert at(value, "after._id") == 1004
    assert at(value, "after.first_name") == "Anne Marie"
    assert at(value, "after.last_name") == "Kretchmar"
    assert at(value, "after.email") == "annek@noanswer.org"


def test_partial_update_removed_fields_not_in_after():
    update = update_description(["last_name", "email"], UPDATED_FIELDS)
    value = transformer().apply(mongo_record(envelope("u", before=UPDATE_BEFORE, update=update))).value
    assert value.get("op") == "u"
    assert at(value, "before._id") == 1004
    assert at(value, "before.first_name") == "unknown"
    assert at(value, "before.last_name") == "Kretchmar"
    assert at(value, "before.email") == "annek@noanswer.org"
    assert at(value, "after._id") == 1004
    assert at(value, "after.first_name") == "Anne Marie"
    assert not exists(value, "after.last_name")
    assert not exists(value, "after.email")


def test_partial_update_without_before_or_after():
    result = transformer().apply(mongo_record(envelope("u", update=update_description(None, UPDATED_FIELDS))))
    value = result.value
    assert not exists(value, "before")
    assert value.get("op") == "u"
    # the id comes from the key; its text "1004" parses as an int32
    assert schema_type_at(value, "after._id") is Type.INT32
    assert result.value_schema.field("after").schema.field("_id").schema.type is Type.INT32
    assert at(value, "after._id") == 1004
    assert at(value, "after.first_name") == "Anne Marie"


def test_missing_before_after_and_update_description_raises():
    with pytest.raises(DataException, match="malformed record topic"):
        transformer().apply(mongo_record(envelope("u")))


# --- beyond the Java tests ----------------------------------------------------------------------


def test_output_shape():
    record = mongo_record(envelope("u", before=UPDATE_BEFORE, after=UPDATE_AFTER), headers=(Header("h", "v"),))
    result = transformer().apply(record)
    schema = result.value_schema
    assert schema.name == "dbserver1.inventory.customers.Envelope"
    assert [f.name for f in schema.fields()] == ["after", "before", "op", "ts_ms", "updateDescription", "source"]
    after = schema.field("after").schema
    assert after.optional and after.type is Type.STRUCT
    assert [(f.name, f.schema) for f in after.fields()] == [
        ("_id", Schema.OPTIONAL_INT64_SCHEMA),
        ("first_name", Schema.OPTIONAL_STRING_SCHEMA),
        ("last_name", Schema.OPTIONAL_STRING_SCHEMA),
        ("email", Schema.OPTIONAL_STRING_SCHEMA),
    ]
    assert result.key_schema.name is None and [f.name for f in result.key_schema.fields()] == ["id"]
    assert result.headers == record.headers


def test_debezium_object_id_key_and_nested_names():
    key_schema = SchemaBuilder.struct().name("srv.db.orders.Key").field("id", Schema.STRING_SCHEMA).build()
    key = Struct(key_schema).put("id", '{"$oid": "596e275826f08b2730779e1f"}')
    after = ('{"_id": {"$oid": "596e275826f08b2730779e1f"}, "placed": {"$date": 1500000000000},'
             ' "total": {"$numberDecimal": "12.50"}, "address": {"city": "Oslo"}, "tags": ["a", "b"]}')
    result = transformer().apply(mongo_record(envelope("c", after=after), key_schema, key))
    assert result.key.get("id") == "596e275826f08b2730779e1f"
    assert result.key_schema.field("id").schema == Schema.OPTIONAL_STRING_SCHEMA
    value = result.value
    assert at(value, "after.placed") == dt.datetime(2017, 7, 14, 2, 40, tzinfo=dt.timezone.utc)
    assert at(value, "after.total") == "12.50"
    assert at(value, "after.address.city") == "Oslo"
    assert at(value, "after.tags") == ["a", "b"]
    # the image struct is unnamed, so nested names start with "null" (as in the Java transform)
    assert value.schema.field("after").schema.field("address").schema.name == "null.address"


def test_document_array_mode():
    after = '{"_id": 1, "mixed": [1, "two", {"three": 3}]}'
    value = transformer("document").apply(mongo_record(envelope("c", after=after))).value
    mixed = at(value, "after.mixed")
    assert (mixed.get("_0"), mixed.get("_1"), mixed.get("_2").get("three")) == (1, "two", 3)
    with pytest.raises(DataException, match="not a homogenous array"):
        transformer("array").apply(mongo_record(envelope("c", after=after)))
    # default mode is array
    with pytest.raises(DataException, match="not a homogenous array"):
        transformer(None).apply(mongo_record(envelope("c", after=after)))


def test_partial_update_adds_new_fields_after_before_fields():
    update = update_description(None, '{"first_name": "A", "age": 42}')
    value = transformer().apply(mongo_record(envelope("u", before=UPDATE_BEFORE, update=update))).value
    assert [f.name for f in value.schema.field("after").schema.fields()] == [
        "_id",
        "first_name",
        "last_name",
        "email",
        "age",
    ]
    assert at(value, "after.age") == 42


def test_chain_into_debezium_transform():
    source_schema = (
        SchemaBuilder.struct().name("io.debezium.connector.mongo.Source")
        .field("db", Schema.STRING_SCHEMA).field("collection", Schema.STRING_SCHEMA).build()
    )
    schema = value_schema(source_schema=source_schema)
    value = (
        Struct(schema).put("op", "u").put("ts_ms", DEFAULT_TS_MS).put("after", UPDATE_AFTER)
        .put("source", Struct(source_schema).put("db", "inventory").put("collection", "customers"))
    )
    record = sink_record(schema, value, DEFAULT_KEY_SCHEMA, DEFAULT_KEY, offset=9)
    typed = transformer().apply(record)
    debezium = DebeziumTransform()
    debezium.configure({"cdc.target.pattern": "mongo.{table}"})
    result = debezium.apply(typed)
    assert result.value.get("first_name") == "Anne Marie"
    cdc = result.value.get("_cdc")
    assert (cdc.get("op"), cdc.get("source"), cdc.get("target"), cdc.get("offset")) == (
        "U", "inventory.customers", "mongo.customers", 9)
    assert cdc.get("key").get("id") == DEFAULT_ID


def test_envelope_without_update_description_field():
    schema = (
        SchemaBuilder.struct()
        .name("x.Envelope")
        .field("after", optional_json())
        .field("op", Schema.STRING_SCHEMA)
        .build()
    )
    value = Struct(schema).put("after", CREATE_AFTER).put("op", "c")
    result = transformer().apply(sink_record(schema, value, DEFAULT_KEY_SCHEMA, DEFAULT_KEY))
    assert at(result.value, "after.first_name") == "Anne"


def test_invalid_bson_raises_data_exception():
    with pytest.raises(DataException):
        transformer().apply(mongo_record(envelope("c", after='{"_id": ')))


def test_loads_by_class_name():
    import smt

    transform = smt.load(
        "org.apache.iceberg.connect.transforms.MongoDebeziumTransform", {"array_handling_mode": "document"}
    )
    result = transform.apply(mongo_record(envelope("c", after='{"_id": 1, "a": [1, "x"]}')))
    assert at(result.value, "after.a._1") == "x"
