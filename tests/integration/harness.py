"""Helpers shared by the end-to-end tests: connector configs, running a job, reading tables."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.job import SinkJob
from connector.spark.runner import SparkTaskRunner


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def sink_props(name: str, topics: str, tables: str, work: Path, **extra: Any) -> dict[str, str]:
    """A Connect-style Iceberg sink config on a SQLite catalog under ``work``."""
    work.mkdir(parents=True, exist_ok=True)
    props = {
        "name": name,
        "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
        "tasks.max": "2",
        "topics": topics,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "iceberg.tables": tables,
        "iceberg.tables.auto-create-enabled": "true",
        "iceberg.catalog.type": "sql",
        "iceberg.catalog.uri": f"sqlite:///{work}/catalog.db",
        "iceberg.catalog.warehouse": f"file://{work}/warehouse",
        # the tests' topics are small: keep their tasks on Spark, as a large backlog's would be
        # (tests/integration/test_driver_tasks.py covers small cycles run in the driver)
        "icefloe.driver.max-records": "0",
    }
    props.update({k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in extra.items()})
    return props


def run_until_caught_up(props: dict[str, str], bootstrap: str, spark) -> Any:
    config = SinkConfig.parse(props, {"bootstrap.servers": bootstrap})
    runner = SparkTaskRunner(spark)
    return SinkJob(config, runner, default_parallelism=2, until_caught_up=True).run()


def load_table(props: dict[str, str], table: str):
    return load_catalog(props).load_table(table)


def table_rows(props: dict[str, str], table: str) -> list[dict]:
    return load_table(props, table).scan().to_arrow().to_pylist()


def snapshot_offsets(props: dict[str, str], table: str) -> dict[str, dict[str, int]]:
    """The offsets properties of the newest snapshot that has any (maintenance snapshots have none), per topic."""
    from connector.iceberg.snapshot_offsets import summaries

    prefix = "kafka.connect.offsets."
    for summary in summaries(load_table(props, table)):
        found = {k[len(prefix):]: json.loads(v) for k, v in summary.items() if k.startswith(prefix)}
        if found:
            return found
    return {}


def write_config_file(path: Path, props: dict[str, str]) -> Path:
    path.write_text(json.dumps({"name": props["name"], "config": {k: v for k, v in props.items() if k != "name"}}))
    return path


def produce_round_robin(bootstrap: str, topic: str, values: list[bytes], partitions: int) -> None:
    """Value ``i`` goes to partition ``i % partitions``, so offsets are predictable."""
    from tests.support.tansu import produce

    for partition in range(partitions):
        produce(bootstrap, topic, values[partition::partitions], partition=partition)
