"""The quickstart config end to end: Tansu → Spark → Iceberg, resumed exactly on restart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connector import cli
from connector.config.sink_config import load_connector_file
from tests.integration.harness import (
    produce_round_robin,
    run_until_caught_up,
    sink_props,
    snapshot_offsets,
    table_rows,
    unique,
    write_config_file,
)
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def events(start: int, count: int) -> list[bytes]:
    return [json.dumps({"id": i, "type": ["a", "b", "c"][i % 3], "ts": 1_700_000_000_000 + i,
                        "amount": i / 4}).encode() for i in range(start, start + count)]


def test_quickstart_config_runs_through_the_cli(kafka_broker, tmp_path, monkeypatch):
    props = load_connector_file(REPO / "connector-configs" / "quickstart.json")
    topic = unique("events")
    props["topics"] = topic
    config_file = write_config_file(tmp_path / "quickstart.json", props)
    monkeypatch.chdir(tmp_path)  # the quickstart's catalog and warehouse paths are relative
    create_topic(kafka_broker.bootstrap, topic, partitions=4)
    produce_round_robin(kafka_broker.bootstrap, topic, events(0, 2000), 4)

    code = cli.main(["run", str(config_file), "--bootstrap-servers", kafka_broker.bootstrap,
                     "--until-caught-up", "--spark-conf", "spark.master=local[2]"])

    assert code == 0
    rows = table_rows(props, props["iceberg.tables"])
    assert sorted(r["id"] for r in rows) == list(range(2000))
    offsets = snapshot_offsets(props, props["iceberg.tables"])
    assert offsets == {f"{topic}.connect-quickstart": {"0": 500, "1": 500, "2": 500, "3": 500}}


def test_restart_resumes_exactly_where_the_table_says(kafka_broker, spark, tmp_path):
    topic, table = unique("resume"), "db.resume"
    props = sink_props(unique("resume"), topic, table, tmp_path)
    create_topic(kafka_broker.bootstrap, topic, partitions=3)
    produce_round_robin(kafka_broker.bootstrap, topic, events(0, 900), 3)
    run_until_caught_up(props, kafka_broker.bootstrap, spark)
    produce_round_robin(kafka_broker.bootstrap, topic, events(900, 600), 3)

    run_until_caught_up(props, kafka_broker.bootstrap, spark)
    run_until_caught_up(props, kafka_broker.bootstrap, spark)  # nothing new: no snapshot, no rows

    rows = table_rows(props, table)
    assert sorted(r["id"] for r in rows) == list(range(1500))
    assert sum(snapshot_offsets(props, table)[f"{topic}.connect-{props['name']}"].values()) == 1500

