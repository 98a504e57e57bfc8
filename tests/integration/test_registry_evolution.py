"""Schema evolution driven by Schema Registry, end to end: Tansu → Spark → Iceberg.

Each format's topic carries records of three registry schema versions,
written by confluent-kafka's own serializers against the test registry:

1. the first version (auto-creates the table);
2. a field added, int → long widened (and float → double where the format's
   compatibility rules allow it);
3. fields added inside a struct, inside the structs of a list and inside the
   struct values of a map.

The job runs with the drop-in config of connector-configs/ after each
version, with two partitions and two tasks that both meet the new schema in
the same cycle: each cycle must add exactly one Iceberg schema. An
incompatible change (string → int) fails naming table, column, types and
schema ids, changes nothing, and a rerun after fixing the config is exact.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from pyiceberg.types import ListType, MapType, StructType

from connector.api.errors import ConnectException
from connector.config.sink_config import load_connector_file
from connector.data.convert.schema_update import iceberg_schema_property, topic_schema_ids_property
from tests.confluent import confluent_client, serialization_context
from tests.integration.harness import load_table, produce_round_robin, run_until_caught_up, table_rows, unique
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
PER_VERSION = 20


def registry_config(name: str, registry_url: str, topic: str, work: Path, **extra: str) -> dict[str, str]:
    """A drop-in config of connector-configs/, pointed at this test's registry, topic and catalog."""
    props = load_connector_file(REPO / "connector-configs" / f"{name}.json")
    work.mkdir(parents=True, exist_ok=True)
    props.update({
        "name": unique(props["name"]),
        "topics": topic,
        "iceberg.tables": f"db.{topic.replace('-', '_')}",
        "value.converter.schema.registry.url": registry_url,
        "iceberg.catalog.uri": f"sqlite:///{work}/catalog.db",
        "iceberg.catalog.warehouse": f"file://{work}/warehouse",
    })
    props.update(extra)
    return props


def schema_id(value: bytes) -> int:
    return struct.unpack(">i", value[1:5])[0]


def evolve(props, kafka_broker, spark, versions: list[list[bytes]]) -> list[int]:
    """Produce each version's records and run the job once per version; the registry schema ids."""
    topic, table = props["topics"], props["iceberg.tables"]
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    ids = []
    for number, values in enumerate(versions, start=1):
        produce_round_robin(kafka_broker.bootstrap, topic, values, 2)
        ids.append(schema_id(values[0]))
        run_until_caught_up(props, kafka_broker.bootstrap, spark)
        # Two tasks met the new schema in this cycle: still one table creation or one schema update.
        assert len(load_table(props, table).metadata.schemas) == number
    return ids


def shape(type_) -> str:
    """An Iceberg type without field ids and nullability: ``struct<a: long>``, ``list<string>``..."""
    if isinstance(type_, StructType):
        return "struct<" + ", ".join(f"{f.name}: {shape(f.field_type)}" for f in type_.fields) + ">"
    if isinstance(type_, ListType):
        return f"list<{shape(type_.element_type)}>"
    if isinstance(type_, MapType):
        return f"map<{shape(type_.key_type)}, {shape(type_.value_type)}>"
    return str(type_)


def field_types(props) -> dict[str, str]:
    return {f.name: shape(f.field_type) for f in load_table(props, props["iceberg.tables"]).schema().fields}


def rows_by_id(props) -> dict[int, dict]:
    rows = table_rows(props, props["iceberg.tables"])
    by_id = {row["id"]: row for row in rows}
    assert len(by_id) == len(rows) == 3 * PER_VERSION
    return by_id


# --- Avro --------------------------------------------------------------------------------------


def _avro(name, fields):
    return {"type": "record", "name": name, "namespace": "shop", "fields": fields}


def _opt(name, type_):
    return {"name": name, "type": ["null", type_], "default": None}


def avro_versions():
    addr1 = _avro("Addr", [{"name": "city", "type": "string"}])
    item1 = _avro("Item", [{"name": "sku", "type": "string"}])
    attr1 = _avro("Attr", [{"name": "v", "type": "float"}])
    attr2 = _avro("Attr", [{"name": "v", "type": "double"}])
    base = [{"name": "id", "type": "long"}, {"name": "name", "type": "string"}]
    v1 = _avro(
        "Order",
        base
        + [
            {"name": "qty", "type": "int"},
            {"name": "price", "type": "float"},
            {"name": "addr", "type": addr1},
            {"name": "items", "type": {"type": "array", "items": item1}},
            {"name": "attrs", "type": {"type": "map", "values": attr1}},
        ],
    )
    v2 = _avro(
        "Order",
        base
        + [
            {"name": "qty", "type": "long"},
            {"name": "price", "type": "double"},
            {"name": "addr", "type": addr1},
            {"name": "items", "type": {"type": "array", "items": item1}},
            {"name": "attrs", "type": {"type": "map", "values": attr2}},
            _opt("note", "string"),
        ],
    )
    addr3 = _avro("Addr", [{"name": "city", "type": "string"}, _opt("zip", "string")])
    item3 = _avro("Item", [{"name": "sku", "type": "string"}, _opt("count", "int")])
    attr3 = _avro("Attr", [{"name": "v", "type": "double"}, _opt("w", "long")])
    v3 = _avro(
        "Order",
        base
        + [
            {"name": "qty", "type": "long"},
            {"name": "price", "type": "double"},
            {"name": "addr", "type": addr3},
            {"name": "items", "type": {"type": "array", "items": item3}},
            {"name": "attrs", "type": {"type": "map", "values": attr3}},
            _opt("note", "string"),
        ],
    )
    return v1, v2, v3


def order(i: int, version: int) -> dict:
    value = {"id": i, "name": f"n{i}", "qty": i if version == 1 else 2**33 + i, "price": i / 4,
             "addr": {"city": f"c{i}"}, "items": [{"sku": f"s{i}"}], "attrs": {"k": {"v": i / 2}}}
    if version >= 2:
        value["note"] = f"note{i}"
    if version == 3:
        value["addr"]["zip"] = f"z{i}"
        value["items"] = [{"sku": f"s{i}", "count": i}]
        value["attrs"] = {"k": {"v": i / 2, "w": 10 * i}}
    return value


def avro_serialize(url: str, schema: dict, topic: str, values: list[dict]) -> list[bytes]:
    from confluent_kafka.schema_registry.avro import AvroSerializer

    serializer = AvroSerializer(confluent_client(url), json.dumps(schema))
    return [serializer(value, serialization_context(topic)) for value in values]


def check_final_orders(props, ids: list[int], *, float_widened: bool) -> None:
    floating = "double" if float_widened else "float"
    assert field_types(props) == {
        "id": "long", "name": "string", "qty": "long", "price": "double",
        "addr": "struct<city: string, zip: string>",
        "items": "list<struct<sku: string, count: int>>",
        "attrs": f"map<string, struct<v: {floating}, w: long>>",
        "note": "string",
    }
    rows = rows_by_id(props)
    first, second, third = rows[3], rows[PER_VERSION + 3], rows[2 * PER_VERSION + 3]
    assert first["qty"] == 3 and first["note"] is None and first["addr"] == {"city": "c3", "zip": None}
    assert first["items"] == [{"sku": "s3", "count": None}] and dict(first["attrs"]) == {"k": {"v": 1.5, "w": None}}
    assert second["qty"] == 2**33 + PER_VERSION + 3 and second["note"] == f"note{PER_VERSION + 3}"
    assert second["price"] == (PER_VERSION + 3) / 4
    i = 2 * PER_VERSION + 3
    assert third["addr"] == {"city": f"c{i}", "zip": f"z{i}"}
    assert third["items"] == [{"sku": f"s{i}", "count": i}]
    assert dict(third["attrs"]) == {"k": {"v": i / 2, "w": 10 * i}}
    table = load_table(props, props["iceberg.tables"])
    assert table.properties[topic_schema_ids_property(props["topics"])] == ",".join(map(str, ids))
    for iceberg_id, registry_id in enumerate(ids):
        assert table.properties[iceberg_schema_property(iceberg_id)] == str(registry_id)


def test_avro_records_of_three_schema_versions_land_in_one_evolving_table(
        kafka_broker, spark, schema_registry, tmp_path):
    topic = unique("avro-evolve")
    props = registry_config("avro-schema-registry", schema_registry.url, topic, tmp_path)
    versions = [
        avro_serialize(schema_registry.url, schema, topic,
                       [order(i, number) for i in range((number - 1) * PER_VERSION, number * PER_VERSION)])
        for number, schema in enumerate(avro_versions(), start=1)
    ]

    ids = evolve(props, kafka_broker, spark, versions)

    assert len(set(ids)) == 3
    check_final_orders(props, ids, float_widened=True)


# --- JSON Schema ---------------------------------------------------------------------------------


def _object(properties: dict, required=()) -> dict:
    return {"type": "object", "additionalProperties": False, "properties": properties, "required": list(required)}


def json_versions():
    def order_schema(version: int) -> dict:
        wide = version >= 2
        addr = {"city": {"type": "string"}}
        item = {"sku": {"type": "string"}}
        attr = {"v": {"type": "number"} if wide else {"type": "number", "connect.type": "float32"}}
        if version == 3:
            addr["zip"] = {"type": "string"}
            item["count"] = {"type": "integer", "connect.type": "int32"}
            attr["w"] = {"type": "integer"}
        properties = {
            "id": {"type": "integer"},
            "name": {"type": "string"},
            "qty": {"type": "integer"} if wide else {"type": "integer", "connect.type": "int32"},
            "price": {"type": "number"} if wide else {"type": "number", "connect.type": "float32"},
            "addr": _object(addr, ["city"]),
            "items": {"type": "array", "items": _object(item, ["sku"])},
            "attrs": {"type": "object", "connect.type": "map", "additionalProperties": _object(attr, ["v"])},
        }
        if wide:
            properties["note"] = {"type": "string"}
        schema = _object(properties, ["id", "name", "qty", "price", "addr", "items", "attrs"])
        return {"$schema": "http://json-schema.org/draft-07/schema#", "title": "shop.Order", **schema}

    return [order_schema(v) for v in (1, 2, 3)]


def json_serialize(url: str, schema: dict, topic: str, values: list[dict]) -> list[bytes]:
    from confluent_kafka.schema_registry.json_schema import JSONSerializer

    serializer = JSONSerializer(json.dumps(schema), confluent_client(url))
    return [serializer(value, serialization_context(topic)) for value in values]


def test_json_schema_records_of_three_schema_versions_land_in_one_evolving_table(
        kafka_broker, spark, schema_registry, tmp_path):
    topic = unique("json-evolve")
    props = registry_config("json-schema-registry", schema_registry.url, topic, tmp_path)
    versions = [
        json_serialize(schema_registry.url, schema, topic,
                       [order(i, number) for i in range((number - 1) * PER_VERSION, number * PER_VERSION)])
        for number, schema in enumerate(json_versions(), start=1)
    ]

    ids = evolve(props, kafka_broker, spark, versions)

    check_final_orders(props, ids, float_widened=True)


# --- Protobuf ------------------------------------------------------------------------------------

F = descriptor_pb2.FieldDescriptorProto


def _add(message, name, number, type_, label=F.LABEL_OPTIONAL, type_name=None):
    field = message.field.add(name=name, number=number, type=type_, label=label)
    if type_name:
        field.type_name = type_name


def proto_order_class(package: str, version: int):
    """``Order`` of ``version``, built from a FileDescriptorProto (no protoc). Float stays float:
    Protobuf's compatibility rules forbid float → double, so only int32 → int64 widens."""
    fdp = descriptor_pb2.FileDescriptorProto(name=f"{package}/order.proto", package=package, syntax="proto3")
    addr, item, attr = (fdp.message_type.add(name=n) for n in ("Addr", "Item", "Attr"))
    _add(addr, "city", 1, F.TYPE_STRING)
    _add(item, "sku", 1, F.TYPE_STRING)
    _add(attr, "v", 1, F.TYPE_FLOAT)
    if version == 3:
        _add(addr, "zip", 2, F.TYPE_STRING)
        _add(item, "count", 2, F.TYPE_INT32)
        _add(attr, "w", 2, F.TYPE_INT64)
    msg = fdp.message_type.add(name="Order")
    _add(msg, "id", 1, F.TYPE_INT64)
    _add(msg, "name", 2, F.TYPE_STRING)
    _add(msg, "qty", 3, F.TYPE_INT64 if version >= 2 else F.TYPE_INT32)
    _add(msg, "price", 4, F.TYPE_DOUBLE)
    _add(msg, "addr", 5, F.TYPE_MESSAGE, type_name=f".{package}.Addr")
    _add(msg, "items", 6, F.TYPE_MESSAGE, F.LABEL_REPEATED, f".{package}.Item")
    _add(msg, "attrs", 7, F.TYPE_MESSAGE, F.LABEL_REPEATED, f".{package}.Order.AttrsEntry")
    entry = msg.nested_type.add(name="AttrsEntry")
    entry.options.map_entry = True
    _add(entry, "key", 1, F.TYPE_STRING)
    _add(entry, "value", 2, F.TYPE_MESSAGE, type_name=f".{package}.Attr")
    if version >= 2:
        _add(msg, "note", 8, F.TYPE_STRING)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.Order"))


def proto_serialize(url: str, cls, topic: str, values: list[dict]) -> list[bytes]:
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer

    serializer = ProtobufSerializer(cls, confluent_client(url), {"use.deprecated.format": False})
    out = []
    for value in values:
        message = cls(id=value["id"], name=value["name"], qty=value["qty"], price=value["price"])
        message.addr.city = value["addr"]["city"]
        for item in value["items"]:
            message.items.add(**item)
        for key, attr in value["attrs"].items():
            message.attrs[key].CopyFrom(type(message.attrs[key])(**attr))
        if "note" in value:
            message.note = value["note"]
        if "zip" in value["addr"]:
            message.addr.zip = value["addr"]["zip"]
        out.append(serializer(message, serialization_context(topic)))
    return out


def test_protobuf_records_of_three_schema_versions_land_in_one_evolving_table(
        kafka_broker, spark, schema_registry, tmp_path):
    topic = unique("proto-evolve")
    package = topic.replace("-", "_")
    props = registry_config("protobuf-schema-registry", schema_registry.url, topic, tmp_path)
    versions = [
        proto_serialize(schema_registry.url, proto_order_class(package, number), topic,
                        [order(i, number) for i in range((number - 1) * PER_VERSION, number * PER_VERSION)])
        for number in (1, 2, 3)
    ]

    ids = evolve(props, kafka_broker, spark, versions)

    check_final_orders(props, ids, float_widened=False)


# --- incompatible change --------------------------------------------------------------------------


def test_string_to_int_fails_naming_table_column_types_and_schema_ids_and_changes_nothing(
        kafka_broker, spark, schema_registry, tmp_path):
    topic = unique("avro-clash")
    props = registry_config("avro-schema-registry", schema_registry.url, topic, tmp_path)
    table_name = props["iceberg.tables"]
    good = _avro("Clash", [{"name": "id", "type": "long"}, {"name": "name", "type": "string"}])
    bad = _avro("Clash", [{"name": "id", "type": "long"}, {"name": "name", "type": "int"}])
    confluent_client(schema_registry.url).set_compatibility(f"{topic}-value", "NONE")
    first = avro_serialize(schema_registry.url, good, topic, [{"id": i, "name": f"n{i}"} for i in range(20)])
    clash = avro_serialize(schema_registry.url, bad, topic, [{"id": i, "name": i} for i in range(20, 30)])
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, first, 2)
    run_until_caught_up(props, kafka_broker.bootstrap, spark)
    before = load_table(props, table_name)
    produce_round_robin(kafka_broker.bootstrap, topic, clash, 2)

    with pytest.raises(ConnectException) as failure:
        run_until_caught_up(props, kafka_broker.bootstrap, spark)

    message = str(failure.value)
    assert f"table {table_name}" in message and "column 'name'" in message, message
    assert f"is string (schema id {schema_id(first[0])})" in message, message
    assert f"schema id {schema_id(clash[0])} makes it int" in message, message
    assert f"topic: {topic}" in message and "offset: 10" in message, message
    after = load_table(props, table_name)
    assert after.metadata.current_snapshot_id == before.metadata.current_snapshot_id
    assert after.schema() == before.schema() and len(after.metadata.schemas) == 1
    assert sorted(r["id"] for r in table_rows(props, table_name)) == list(range(20))

    # The fix: cast the field back to the column's type. The rerun writes exactly what is missing.
    props.update({"transforms": "name", "transforms.name.type": "org.apache.kafka.connect.transforms.Cast$Value",
                  "transforms.name.spec": "name:string"})
    run_until_caught_up(props, kafka_broker.bootstrap, spark)

    rows = table_rows(props, table_name)
    assert sorted(r["id"] for r in rows) == list(range(30))
    assert {r["id"]: r["name"] for r in rows}[25] == "25"
