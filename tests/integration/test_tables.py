"""Table creation, partitioning, multi-table routing and both JSON flavours, end to end."""

from __future__ import annotations

import json

import pytest

from tests.integration.harness import (
    load_table,
    produce_round_robin,
    run_until_caught_up,
    sink_props,
    table_rows,
    unique,
)
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration

ENVELOPE_SCHEMA = {
    "type": "struct", "optional": False, "name": "orders.Order",
    "fields": [
        {"type": "int64", "optional": False, "field": "id"},
        {"type": "string", "optional": True, "field": "customer"},
        {"type": "int64", "optional": False, "name": "org.apache.kafka.connect.data.Timestamp",
         "version": 1, "field": "ts"},
        {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
         "parameters": {"scale": "2"}, "field": "total"},
    ],
}


def envelope(i: int) -> bytes:
    import base64

    unscaled = (i * 125).to_bytes(4, "big", signed=True)
    payload = {"id": i, "customer": f"c{i % 7}", "ts": 1_700_000_000_000 + i * 3_600_000,
               "total": base64.b64encode(unscaled).decode()}
    return json.dumps({"schema": ENVELOPE_SCHEMA, "payload": payload}).encode()


def test_schemad_json_auto_creates_a_partitioned_table_with_logical_types(kafka_broker, spark, tmp_path):
    topic, table = unique("orders"), "shop.orders"
    props = sink_props(unique("orders"), topic, table, tmp_path,
                       **{"value.converter.schemas.enable": "true",
                          "iceberg.tables.default-partition-by": "days(ts), bucket(id, 4)"})
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, [envelope(i) for i in range(200)], 2)

    run_until_caught_up(props, kafka_broker.bootstrap, spark)

    iceberg_table = load_table(props, table)
    types = {f.name: str(f.field_type) for f in iceberg_table.schema().fields}
    assert types == {"id": "long", "customer": "string", "ts": "timestamptz", "total": "decimal(38, 2)"}
    assert [str(f.transform) for f in iceberg_table.spec().fields] == ["day", "bucket[4]"]
    rows = sorted(table_rows(props, table), key=lambda r: r["id"])
    assert len(rows) == 200
    assert str(rows[3]["total"]) == "3.75"
    assert rows[1]["ts"].isoformat() == "2023-11-14T23:13:20+00:00"


def test_schemaless_json_infers_long_double_string_boolean(kafka_broker, spark, tmp_path):
    topic, table = unique("plain"), "db.plain"
    props = sink_props(unique("plain"), topic, table, tmp_path)
    create_topic(kafka_broker.bootstrap, topic)
    values = [json.dumps({"id": i, "name": f"n{i}", "score": i + 0.5, "ok": i % 2 == 0}).encode()
              for i in range(50)]
    produce_round_robin(kafka_broker.bootstrap, topic, values, 1)

    run_until_caught_up(props, kafka_broker.bootstrap, spark)

    types = {f.name: str(f.field_type) for f in load_table(props, table).schema().fields}
    assert types == {"id": "long", "name": "string", "score": "double", "ok": "boolean"}
    rows = sorted(table_rows(props, table), key=lambda r: r["id"])
    assert rows[4] == {"id": 4, "name": "n4", "score": 4.5, "ok": True}


def test_static_tables_each_receive_every_record(kafka_broker, spark, tmp_path):
    topic = unique("fanout")
    props = sink_props(unique("fanout"), topic, "db.copy_a, db.copy_b", tmp_path)
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(300)], 2)

    run_until_caught_up(props, kafka_broker.bootstrap, spark)

    for table in ("db.copy_a", "db.copy_b"):
        assert sorted(r["id"] for r in table_rows(props, table)) == list(range(300))


def test_route_regex_sends_records_to_matching_tables_only(kafka_broker, spark, tmp_path):
    topic = unique("routed")
    props = sink_props(unique("routed"), topic, "db.clicks, db.views", tmp_path, **{
        "iceberg.tables.route-field": "kind",
        "iceberg.table.db.clicks.route-regex": "click",
        "iceberg.table.db.views.route-regex": "view|impression",
    })
    create_topic(kafka_broker.bootstrap, topic)
    kinds = ["click", "view", "impression", "other"]
    produce_round_robin(kafka_broker.bootstrap, topic,
                        [json.dumps({"id": i, "kind": kinds[i % 4]}).encode() for i in range(40)], 1)

    run_until_caught_up(props, kafka_broker.bootstrap, spark)

    assert {r["kind"] for r in table_rows(props, "db.clicks")} == {"click"}
    assert len(table_rows(props, "db.clicks")) == 10
    assert {r["kind"] for r in table_rows(props, "db.views")} == {"view", "impression"}
    assert len(table_rows(props, "db.views")) == 20


def test_new_fields_are_added_as_columns_when_evolution_is_on(kafka_broker, spark, tmp_path):
    topic, table = unique("evolve"), "db.evolve"
    props = sink_props(unique("evolve"), topic, table, tmp_path,
                       **{"iceberg.tables.evolve-schema-enabled": "true"})
    create_topic(kafka_broker.bootstrap, topic)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(10)], 1)
    run_until_caught_up(props, kafka_broker.bootstrap, spark)
    produce_round_robin(kafka_broker.bootstrap, topic,
                        [json.dumps({"id": i, "extra": {"note": f"x{i}"}}).encode() for i in range(10, 20)], 1)

    run_until_caught_up(props, kafka_broker.bootstrap, spark)

    rows = sorted(table_rows(props, table), key=lambda r: r["id"])
    assert len(rows) == 20
    assert rows[0]["extra"] is None
    assert rows[15]["extra"] == {"note": "x15"}
