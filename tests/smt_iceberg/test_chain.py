"""The Iceberg SMTs and user plugins inside a connector's transforms/predicates chain,
configured the way docs/smt-iceberg.md and docs/plugins.md show."""

from __future__ import annotations

import json

import pytest

import smt.chain as chain
from connector.api.errors import ConfigException, DataException
from connector.api.schema import Schema, SchemaBuilder
from connector.api.struct import Struct
from tests.smt_iceberg import sink_record


def build(config: dict):
    chain.validate(config)
    return chain.TransformationChain.from_config(config)


def test_user_plugin_with_predicate_from_docs():
    config = {
        "transforms": "upper",
        "transforms.upper.type": "tests.smt_iceberg.example_plugins:UppercaseField",
        "transforms.upper.field": "name",
        "transforms.upper.predicate": "isOrders",
        "predicates": "isOrders",
        "predicates.isOrders.type": "tests.smt_iceberg.example_plugins:TopicSuffix",
        "predicates.isOrders.suffix": ".orders",
    }
    transforms = build(config)
    assert transforms.apply(sink_record(None, {"name": "ada"}, topic="shop.orders")).value == {"name": "ADA"}
    assert transforms.apply(sink_record(None, {"name": "ada"}, topic="shop.users")).value == {"name": "ada"}


def test_unknown_user_plugin_is_a_config_error():
    with pytest.raises(ConfigException):
        build({"transforms": "x", "transforms.x.type": "tests.smt_iceberg.example_plugins:Nope"})


def test_copy_value_missing_key_names_the_connector_key():
    with pytest.raises(ConfigException, match="source.field"):
        build({"transforms": "c", "transforms.c.type": "org.apache.iceberg.connect.transforms.CopyValue",
               "transforms.c.target.field": "x"})


def test_json_to_map_then_kafka_metadata_then_copy_value():
    config = {
        "transforms": "json,meta,copy",
        "transforms.json.type": "io.tabular.iceberg.connect.transforms.JsonToMapTransform",
        "transforms.meta.type": "org.apache.iceberg.connect.transforms.KafkaMetadataTransform",
        "transforms.meta.nested": "true",
        "transforms.meta.external_field": "cluster,eu-west-1",
        "transforms.copy.type": "CopyValue",  # the simple-name alias works too
        "transforms.copy.source.field": "id",
        "transforms.copy.target.field": "id_copy",
    }
    result = build(config).apply(sink_record(None, json.dumps({"id": 7, "tags": {"a": 1}}), offset=1000, timestamp=5))
    value = result.value
    assert value.get("id") == 7 and value.get("id_copy") == 7
    assert value.get("tags") == {"a": "1"}
    meta = value.get("_kafka_metadata")
    assert (meta.get("offset"), meta.get("timestamp"), meta.get("cluster")) == (1000, 5, "eu-west-1")


def test_mongo_then_debezium_from_docs():
    config = {
        "transforms": "mongo,dbz",
        "transforms.mongo.type": "org.apache.iceberg.connect.transforms.MongoDebeziumTransform",
        "transforms.mongo.array_handling_mode": "document",
        "transforms.dbz.type": "org.apache.iceberg.connect.transforms.DebeziumTransform",
        "transforms.dbz.cdc.target.pattern": "mongo.{table}",
    }
    json_string = SchemaBuilder.string().optional().name("io.debezium.data.Json").version(1).build()
    source_schema = (
        SchemaBuilder.struct().field("db", Schema.STRING_SCHEMA).field("collection", Schema.STRING_SCHEMA).build()
    )
    value_schema = (
        SchemaBuilder.struct().name("srv.shop.orders.Envelope")
        .field("after", json_string).field("before", json_string)
        .field("op", Schema.STRING_SCHEMA).field("ts_ms", Schema.INT64_SCHEMA).field("source", source_schema).build()
    )
    key_schema = SchemaBuilder.struct().name("srv.shop.orders.Key").field("id", Schema.STRING_SCHEMA).build()
    after = ('{"_id": {"$oid": "596e275826f08b2730779e1f"}, "placed": {"$date": 1500000000000},'
             ' "tags": ["a", 1]}')
    value = (
        Struct(value_schema).put("after", after).put("op", "c").put("ts_ms", 1500000000001)
        .put("source", Struct(source_schema).put("db", "shop").put("collection", "orders"))
    )
    key = Struct(key_schema).put("id", '{"$oid": "596e275826f08b2730779e1f"}')
    result = build(config).apply(sink_record(value_schema, value, key_schema, key, offset=3))
    row = result.value
    assert row.get("_id") == "596e275826f08b2730779e1f"
    assert (row.get("tags").get("_0"), row.get("tags").get("_1")) == ("a", 1)
    cdc = row.get("_cdc")
    assert (cdc.get("op"), cdc.get("source"), cdc.get("target"), cdc.get("offset")) == (
        "I",
        "shop.orders",
        "mongo.orders",
        3,
    )


def test_errors_surface_as_data_exceptions_with_the_record():
    transforms = build(
        {"transforms": "dms", "transforms.dms.type": "org.apache.iceberg.connect.transforms.DmsTransform"}
    )
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match="Schema not support for DMS records"):
        transforms.apply(sink_record(schema, Struct(schema).put("a", 1)))
    # a dropped record ends the chain
    assert transforms.apply(sink_record(None, {"data": {"a": 1}})) is None
