"""``make bench``: throughput of icefloe against a raw confluent-kafka baseline, in one run.

Figures are reported as ratios to the baseline measured in the same run on the
same machine (this machine is shared and noisy; absolute numbers drift).

Scenarios, each over the same topic of small JSON records in 4 partitions:
  raw        confluent-kafka consumption of the whole topic (tuned librdkafka)
  icefloe    `--until-caught-up` into a fresh table, no SMTs (columnar path)
  smt3       the same with three common SMTs (InsertField, ReplaceField, MaskField)

Environment: ICEFLOE_BENCH_RECORDS (default 1000000), ICEFLOE_BENCH_ONLY (comma list).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

from connector.embedded.tansu import TansuBroker, create_topic, produce

RECORDS = int(os.environ.get("ICEFLOE_BENCH_RECORDS", "1000000"))
PARTITIONS = 4
WORK = Path("bench-work")

SMT3 = {
    "transforms": "insert,rename,mask",
    "transforms.insert.type": "org.apache.kafka.connect.transforms.InsertField$Value",
    "transforms.insert.static.field": "source",
    "transforms.insert.static.value": "bench",
    "transforms.rename.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
    "transforms.rename.renames": "name:customer",
    "transforms.mask.type": "org.apache.kafka.connect.transforms.MaskField$Value",
    "transforms.mask.fields": "amount",
}


def sample_values(count: int) -> list[bytes]:
    """~93-byte JSON objects, like the prototype's."""
    return [json.dumps({"id": i, "name": f"user-{i % 1000:04d}", "ts": 1_700_000_000_000 + i,
                        "amount": (i % 10000) / 100, "active": i % 2 == 0}).encode() for i in range(count)]


def props_for(name: str, topic: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    work = (WORK / name).resolve()
    work.mkdir(parents=True, exist_ok=True)
    return {
        "name": name, "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
        "tasks.max": "4", "topics": topic,
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "iceberg.tables": f"bench.{name}", "iceberg.tables.auto-create-enabled": "true",
        "iceberg.catalog.type": "sql", "iceberg.catalog.uri": f"sqlite:///{work}/catalog.db",
        "iceberg.catalog.warehouse": f"file://{work}/warehouse", **(extra or {}),
    }


def run_icefloe(spark, bootstrap: str, props: dict[str, str]) -> float:
    from connector.config.sink_config import SinkConfig
    from connector.job import SinkJob
    from connector.spark.runner import SparkTaskRunner

    config = SinkConfig.parse(props, {"bootstrap.servers": bootstrap})
    runner = SparkTaskRunner(spark)
    began = time.perf_counter()
    summary = SinkJob(config, runner, default_parallelism=runner.default_parallelism,
                      until_caught_up=True).run()
    elapsed = time.perf_counter() - began
    written = sum(sum(c.rows_written.values()) for c in summary.cycles)
    if written != RECORDS:
        raise SystemExit(f"{props['name']}: wrote {written} rows, expected {RECORDS}")
    return RECORDS / elapsed


def main() -> int:
    from connector.spark.session import build_session
    from tests.bench.raw_consume import raw_consume_records_per_second

    only = set(filter(None, os.environ.get("ICEFLOE_BENCH_ONLY", "").split(",")))
    shutil.rmtree(WORK, ignore_errors=True)
    results: dict[str, float] = {}
    with TansuBroker() as broker:
        topic = "bench"
        create_topic(broker.bootstrap, topic, partitions=PARTITIONS)
        values = sample_values(RECORDS)
        for p in range(PARTITIONS):
            produce(broker.bootstrap, topic, values[p::PARTITIONS], partition=p)
        print(f"{RECORDS} records of ~{sum(map(len, values[:1000])) // 1000} B in {PARTITIONS} partitions")
        spark = build_session("icefloe-bench")
        try:
            results["raw"] = raw_consume_records_per_second(broker.bootstrap, topic, RECORDS)
            if not only or "icefloe" in only:
                results["icefloe"] = run_icefloe(spark, broker.bootstrap, props_for("plain", topic))
            if not only or "smt3" in only:
                results["smt3"] = run_icefloe(spark, broker.bootstrap, props_for("smt3", topic, SMT3))
        finally:
            spark.stop()
    baseline = results["raw"]
    for name, rate in results.items():
        print(f"{name:10s} {rate:12,.0f} records/s   {rate / baseline:5.2f} x raw")
    if "smt3" in results and "icefloe" in results:
        print(f"smt3 cost: {1 - results['smt3'] / results['icefloe']:.0%} of no-SMT throughput")
    return 0


if __name__ == "__main__":
    sys.exit(main())
