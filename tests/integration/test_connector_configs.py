"""The drop-in configs in connector-configs/ run as shipped (only topics and paths adapted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connector.config.sink_config import load_connector_file
from tests.integration.harness import produce_round_robin, run_until_caught_up, table_rows, unique
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration
CONFIGS = Path(__file__).resolve().parents[2] / "connector-configs"


def shipped(name: str, tmp_path: Path) -> dict[str, str]:
    props = load_connector_file(CONFIGS / name)
    props["iceberg.catalog.uri"] = f"sqlite:///{tmp_path}/catalog.db"
    props["iceberg.catalog.warehouse"] = f"file://{tmp_path}/warehouse"
    props["name"] = unique(props["name"])
    return props


def test_multi_table_routing_config(kafka_broker, spark, tmp_path):
    props = shipped("multi-table-routing.json", tmp_path)
    props["topics"] = topic = unique("events")
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    kinds = ["click", "view", "impression", "purchase"]
    produce_round_robin(kafka_broker.bootstrap, topic,
                        [json.dumps({"id": i, "kind": kinds[i % 4]}).encode() for i in range(80)], 2)

    run_until_caught_up(props, kafka_broker.bootstrap, spark)

    assert len(table_rows(props, "analytics.clicks")) == 20
    assert {r["kind"] for r in table_rows(props, "analytics.pageviews")} == {"view", "impression"}
    assert len(table_rows(props, "analytics.all_events")) == 80


def debezium_event(i: int, table: str, op: str) -> bytes:
    row = {"id": i, "name": f"n{i}", "email": f"n{i}@example.com"}
    return json.dumps({
        "before": row if op == "d" else None, "after": None if op == "d" else row,
        "source": {"version": "2.7.0", "connector": "mysql", "name": "dbserver1", "db": "inventory",
                   "table": table, "ts_ms": 1_700_000_000_000},
        "op": op, "ts_ms": 1_700_000_000_000 + i,
    }).encode()


def test_debezium_cdc_config_routes_each_source_table_to_its_own_iceberg_table(kafka_broker, spark, tmp_path):
    props = shipped("debezium-cdc.json", tmp_path)
    suffix = unique("x")
    props["topics.regex"] = rf"dbserver1\.inventory\.{suffix}_.*"
    for table in ("customers", "orders"):
        topic = f"dbserver1.inventory.{suffix}_{table}"
        create_topic(kafka_broker.bootstrap, topic)
        ops = ["c", "c", "u", "d"]
        produce_round_robin(kafka_broker.bootstrap, topic,
                            [debezium_event(i, f"{suffix}_{table}", ops[i % 4]) for i in range(8)], 1)

    run_until_caught_up(props, kafka_broker.bootstrap, spark)

    for table in ("customers", "orders"):
        rows = table_rows(props, f"cdc_inventory.{suffix}_{table}")
        assert len(rows) == 8
        assert sorted(r["_cdc"]["op"] for r in rows) == sorted(["I", "I", "U", "D"] * 2)
        assert {r["_cdc"]["source"] for r in rows} == {f"inventory.{suffix}_{table}"}
