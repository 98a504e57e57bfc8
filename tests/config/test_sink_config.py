"""Connector config validation: Connect's and the Iceberg sink's rules, before any Spark work."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connector.api.errors import ConfigException
from connector.config.sink_config import SinkConfig, load_connector_file

BASE = {
    "name": "orders-sink",
    "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
    "topics": "orders",
    "iceberg.tables": "db.orders",
    "iceberg.catalog.type": "sql",
    "iceberg.catalog.uri": "sqlite:///:memory:",
}


def parse(**changes):
    props = {**BASE, **changes}
    return SinkConfig.parse({k: v for k, v in props.items() if v is not None})


def test_defaults_follow_connect_and_the_iceberg_sink():
    config = parse()
    assert config.connect.tasks_max == 1
    assert config.connect.value_converter == "org.apache.kafka.connect.json.JsonConverter"
    assert config.connect.header_converter == "org.apache.kafka.connect.storage.SimpleHeaderConverter"
    assert config.iceberg.commit_interval_ms == 300_000
    assert config.iceberg.auto_create is False and config.iceberg.evolve_schema is False
    assert config.group_id == "connect-orders-sink"
    assert config.unused_keys == ()


def test_unknown_keys_are_accepted_and_reported_as_unused():
    config = parse(**{"my.custom.key": "1", "iceberg.tables.auto-create-props.format-version": "2"})
    assert config.unused_keys == ("my.custom.key",)


@pytest.mark.parametrize("changes, fragment", [
    ({"name": None}, 'Missing required configuration "name"'),
    ({"tasks.max": "zero"}, "Invalid value zero for configuration tasks.max"),
    ({"tasks.max": "0"}, "Invalid value 0 for configuration tasks.max: Value must be at least 1"),
    ({"topics.regex": "orders.*"}, "topics and topics.regex are mutually exclusive"),
    ({"topics": None}, "Must configure one of topics or topics.regex"),
    ({"topics": None, "topics.regex": "(unclosed"}, "Invalid value (unclosed for configuration topics.regex"),
    ({"connector.class": "io.confluent.connect.s3.S3SinkConnector"}, "connector.class"),
    ({"iceberg.catalog.type": None, "iceberg.catalog.uri": None}, "Must specify Iceberg catalog properties"),
    ({"iceberg.tables.dynamic-enabled": "true"}, "Cannot specify both static and dynamic table names"),
    ({"iceberg.tables": None, "iceberg.tables.dynamic-enabled": "true"}, "Must specify a route field"),
    ({"iceberg.tables": None}, "Must specify table name(s)"),
    ({"iceberg.tables.auto-create-enabled": "yes"},
     "Invalid value yes for configuration iceberg.tables.auto-create-enabled"),
    ({"value.converter": "com.example.NoSuchConverter"}, "com.example.NoSuchConverter"),
    ({"transforms": "x", "transforms.x.type": "org.apache.kafka.connect.transforms.NoSuch"}, "transforms.x"),
    ({"errors.deadletterqueue.topic.name": "orders"}, "The DLQ topic 'orders' may not be included"),
    ({"iceberg.table.db.orders.route-regex": "("}, "iceberg.table.db.orders.route-regex"),
    ({"icefloe.commit.max-records": "-1"},
     "Invalid value -1 for configuration icefloe.commit.max-records: Value must be at least 0"),
    ({"icefloe.commit.max-records": "5M"}, "Invalid value 5M for configuration icefloe.commit.max-records"),
])
def test_bad_configs_fail_naming_the_key(changes, fragment):
    with pytest.raises(ConfigException) as failure:
        parse(**changes)
    assert fragment in str(failure.value)


def test_converter_settings_pass_through_without_their_prefix():
    config = parse(**{"value.converter.schemas.enable": "false", "key.converter": "StringConverter",
                      "key.converter.converter.encoding": "UTF-16"})
    assert config.connect.value_converter_config == {"schemas.enable": "false"}
    assert config.connect.key_converter_config == {"converter.encoding": "UTF-16"}


def test_worker_converters_apply_when_the_connector_names_none():
    worker = {"bootstrap.servers": "x:1", "value.converter": "org.apache.kafka.connect.storage.StringConverter",
              "value.converter.converter.encoding": "UTF-8"}
    config = SinkConfig.parse(BASE, worker)
    assert config.connect.value_converter == "org.apache.kafka.connect.storage.StringConverter"
    assert config.connect.value_converter_config == {"converter.encoding": "UTF-8"}


def test_per_table_settings_fall_back_to_the_defaults():
    config = parse(**{"iceberg.tables": "db.a,db.b", "iceberg.tables.default-partition-by": "bucket(id, 4), day(ts)",
                      "iceberg.table.db.b.partition-by": "kind", "iceberg.tables.route-field": "kind",
                      "iceberg.table.db.a.route-regex": "a.*"})
    a, b = config.iceberg.table_config("db.a"), config.iceberg.table_config("db.b")
    assert a.partition_by == ("bucket(id, 4)", "day(ts)") and a.route_regex.pattern == "a.*"
    assert b.partition_by == ("kind",) and b.route_regex is None


def test_a_rest_body_file_and_a_flat_file_both_load(tmp_path):
    body = tmp_path / "body.json"
    body.write_text(json.dumps({"name": "n1", "config": {k: v for k, v in BASE.items() if k != "name"}}))
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({**BASE, "tasks.max": 3, "iceberg.tables.evolve-schema-enabled": True}))
    assert load_connector_file(body)["name"] == "n1"
    assert load_connector_file(flat)["tasks.max"] == "3"
    assert load_connector_file(flat)["iceberg.tables.evolve-schema-enabled"] == "true"


def test_a_body_whose_names_disagree_is_rejected(tmp_path):
    body = tmp_path / "body.json"
    body.write_text(json.dumps({"name": "n1", "config": {**BASE, "name": "n2"}}))
    with pytest.raises(ConfigException, match="doesn't match"):
        load_connector_file(body)


@given(st.integers(min_value=1, max_value=2**31 - 1))
def test_any_positive_int_is_a_valid_tasks_max(n):
    assert parse(**{"tasks.max": str(n)}).connect.tasks_max == n


def test_commit_max_records_is_known_and_parsed():
    config = parse(**{"icefloe.commit.max-records": "1000"})
    assert config.icefloe.commit_max_records == 1000 and "icefloe.commit.max-records" not in config.unused_keys
    assert parse().icefloe.commit_max_records == 5_000_000
