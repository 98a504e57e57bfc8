"""Scale-out: ``icefloe run`` as its own Spark driver against a standalone cluster on loopback.

The tasks run in the worker's executor JVM and its Python workers (the
venv's interpreter, via PYSPARK_PYTHON), not in the driver; the table must
equal the topic and the command must exit 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.harness import (
    produce_round_robin,
    sink_props,
    snapshot_offsets,
    table_rows,
    unique,
    write_config_file,
)
from tests.support.tansu import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PARTITIONS = 4
RECORDS = 4000
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def events(count: int) -> list[bytes]:
    return [json.dumps({"id": i, "kind": ["a", "b", "c", "d"][i % 4], "amount": i / 8,
                        "note": f"record {i}"}).encode() for i in range(count)]


def icefloe_command() -> list[str]:
    script = Path(sys.executable).with_name("icefloe")  # the console script of this venv
    return [str(script)] if script.exists() else [sys.executable, "-m", "connector.cli"]


def test_icefloe_run_on_a_standalone_cluster_writes_the_whole_topic(kafka_broker, spark_cluster, tmp_path):
    topic, table = unique("scaleout"), "db.scaleout"
    props = sink_props(unique("scaleout"), topic, table, tmp_path / "work", **{"tasks.max": PARTITIONS})
    config_file = write_config_file(tmp_path / "config.json", props)
    create_topic(kafka_broker.bootstrap, topic, partitions=PARTITIONS)
    produce_round_robin(kafka_broker.bootstrap, topic, events(RECORDS), PARTITIONS)

    # No PYSPARK_PYTHON: icefloe must itself give the executors the driver's (this venv's) Python.
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    started = time.monotonic()
    try:
        result = subprocess.run(
            [*icefloe_command(), "run", str(config_file), "--bootstrap-servers", kafka_broker.bootstrap,
             "--until-caught-up",
             "--spark-conf", f"spark.master={spark_cluster.master_url}",
             "--spark-conf", "spark.ui.enabled=false",
             # Short-lived JVMs: C1 only and the serial collector halve start-up on a small machine.
             "--spark-conf", f"spark.driver.extraJavaOptions={QUICK_JVM}",
             "--spark-conf", f"spark.executor.extraJavaOptions={QUICK_JVM}"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=150,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"icefloe run did not finish in {exc.timeout}s\nstdout:\n{exc.stdout}\nstderr:\n{exc.stderr}\n"
                    f"{spark_cluster.logs()}", pytrace=False)
    elapsed = time.monotonic() - started

    assert result.returncode == 0, (f"exit {result.returncode} after {elapsed:.0f}s\nstdout:\n{result.stdout}\n"
                                    f"stderr:\n{result.stderr[-20000:]}\n{spark_cluster.logs()}")
    rows = table_rows(props, table)
    assert sorted(r["id"] for r in rows) == list(range(RECORDS))
    by_id = {r["id"]: r for r in rows}
    assert by_id[1] == {"id": 1, "kind": "b", "amount": 1 / 8, "note": "record 1"}
    per_partition = RECORDS // PARTITIONS
    assert snapshot_offsets(props, table) == {
        f"{topic}.connect-{props['name']}": {str(p): per_partition for p in range(PARTITIONS)}}
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["records_read"] == RECORDS and summary["rows_written"] == {table: RECORDS}

    # The job ran as an application of the standalone master, on the worker's executors.
    app = _completed_app(spark_cluster, f"icefloe-{props['name']}")
    assert app is not None, json.dumps(spark_cluster.state(), indent=1)
    assert app["cores"] >= 1


def _completed_app(cluster, name: str, timeout: float = 15.0) -> dict | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = cluster.state() or {}
        for app in state.get("completedapps", []):
            if app.get("name") == name:
                return app
        time.sleep(0.25)
    return None
