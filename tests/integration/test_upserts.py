"""Upsert and CDC tables end to end: a generated Debezium stream applied to a partitioned table.

The stream has snapshot reads, inserts, updates, deletes followed by
tombstones, deletes of keys never seen, keys whose partition value changes
between versions, and duplicate deliveries. After each run the table must equal the model (the
latest version of every key not deleted), read by pyiceberg, by DuckDB's
own Iceberg reader and by Spark with Iceberg's Spark runtime; after SIGKILLs and restarts too.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pyiceberg.table.snapshots import ancestors_of

from connector.config.sink_config import load_connector_file
from connector.iceberg.snapshot_offsets import OFFSETS_PREFIX, branch_head
from tests.integration.harness import load_table, run_until_caught_up, table_rows, unique, write_config_file
from tests.support import duckdb_iceberg, spark_iceberg
from tests.support.tansu import create_topic, produce

pytestmark = pytest.mark.integration

CONFIGS = Path(__file__).resolve().parents[2] / "connector-configs"
PARTITIONS = 3
REGIONS = ("eu", "us", "apac")
TABLE = "public.customers"
COLUMNS = "id, name, region, version"


class CustomerStream:
    """Debezium Postgres change events for a customers table, and the rows the table must end up with."""

    def __init__(self, topic: str, seed: int):
        self.topic = topic
        self.rng = random.Random(seed)
        self.rows: dict[int, dict] = {}  # the model: id → the row a reader must see
        self.next_id = 0
        self.version = 0

    def event(self, op: str, before: dict | None, after: dict | None) -> bytes:
        self.version += 1
        return json.dumps({
            "before": before, "after": after, "op": op, "ts_ms": 1_700_000_000_000 + self.version,
            "source": {"version": "2.7.0", "connector": "postgresql", "name": "pgserver1", "db": "shop",
                       "schema": "public", "table": "customers", "ts_ms": 1_700_000_000_000},
        }).encode()

    def row(self, key: int) -> dict:
        return {"id": key, "name": f"c{key}-{self.version}", "region": self.rng.choice(REGIONS),
                "version": self.version}

    def round(self, size: int, *, snapshot: bool = False) -> list[tuple[int, bytes | None]]:
        """``size`` changes as (id, value) in production order; None values are tombstones."""
        out: list[tuple[int, bytes | None]] = []
        for _ in range(size):
            live = list(self.rows)
            choice = "r" if snapshot else self.rng.choices(["c", "u", "d", "dup", "ghost"], [3, 5, 2, 1, 1])[0]
            if choice in ("u", "d", "dup") and not live:
                choice = "c"
            if choice in ("c", "r"):
                key, self.next_id = self.next_id, self.next_id + 1
                after = self.row(key)
                out.append((key, self.event(choice, None, after)))
                self.rows[key] = after
            elif choice == "u":
                key = self.rng.choice(live)
                after = self.row(key)  # the region may change: the key moves to another table partition
                out.append((key, self.event("u", self.rows[key], after)))
                self.rows[key] = after
            elif choice == "d":
                key = self.rng.choice(live)
                out.append((key, self.event("d", self.rows.pop(key), None)))
                out.append((key, None))  # the tombstone Debezium sends after a delete
            elif choice == "ghost":  # a delete of a key the table never held: nothing to do
                key = 1_000_000 + self.version
                ghost = {"id": key, "name": "never", "region": "eu", "version": self.version}
                out.append((key, self.event("d", ghost, None)))
            else:  # the last event of a key delivered again
                key = self.rng.choice(live)
                out.append((key, self.event("u", self.rows[key], self.rows[key])))
                out.append(out[-1])
        return out

    def produce(self, bootstrap: str, changes: list[tuple[int, bytes | None]]) -> None:
        """Each key to partition ``id % PARTITIONS``, in order (Debezium keys its topics by the row key)."""
        for partition in range(PARTITIONS):
            mine = [(k, v) for k, v in changes if k % PARTITIONS == partition]
            if mine:
                produce(bootstrap, self.topic, [v for _, v in mine],
                        keys=[json.dumps({"id": k}).encode() for k, _ in mine], partition=partition)


def shipped(tmp_path: Path, topic: str) -> dict[str, str]:
    props = load_connector_file(CONFIGS / "debezium-postgres-upsert.json")
    props.update({"topics": topic, "name": unique(props["name"]),
                  "iceberg.catalog.uri": f"sqlite:///{tmp_path}/catalog.db",
                  "iceberg.catalog.warehouse": f"file://{tmp_path}/warehouse",
                  "icefloe.driver.max-records": "0"})
    return props


def sink_snapshot(table) -> int:
    """The newest snapshot that icefloe's commit wrote (it carries offsets), before any maintenance.

    Maintenance may compact right after a run and fold the position deletes into new data files;
    this snapshot still has the sink's own data and delete files, and the same rows.
    """
    for snapshot in ancestors_of(branch_head(table, None), table.metadata):
        if any(key.startswith(OFFSETS_PREFIX) for key in (snapshot.summary.additional_properties or {})):
            return snapshot.snapshot_id
    raise AssertionError("no snapshot with offsets")


def assert_table_is(props: dict[str, str], expected: dict[int, dict]) -> list[tuple[spark_iceberg.Read, dict]]:
    """pyiceberg and DuckDB read ``expected``, from the current snapshot and from the sink's last commit.

    Returns those reads with a copy of ``expected``, for ``assert_spark_reads`` to check once per
    test (a Spark start costs seconds): the metadata file pins the snapshots, so later commits
    leave them as they are.
    """
    rows = table_rows(props, TABLE)
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "a key has two rows"
    got = {r["id"]: {k: r[k] for k in ("id", "name", "region", "version")} for r in rows}
    assert got.keys() == expected.keys(), (sorted(got.keys() - expected.keys())[:10],
                                          sorted(expected.keys() - got.keys())[:10])
    assert got == expected
    table = load_table(props, TABLE)
    snapshots = sorted({table.current_snapshot().snapshot_id, sink_snapshot(table)})
    for snapshot in snapshots:
        duck = duckdb_iceberg.scan(table, COLUMNS, snapshot_id=snapshot).to_pylist()
        assert {r["id"]: r for r in duck} == expected, f"DuckDB reads other rows than pyiceberg ({snapshot})"
        assert len(duck) == len(expected)
        # pyiceberg's current snapshot was read above; the sink's commit may be its parent.
        older = table.scan(snapshot_id=snapshot, selected_fields=("id", "name", "region", "version")).to_arrow()
        assert {r["id"]: r for r in older.to_pylist()} == expected and older.num_rows == len(expected)
    model = {key: dict(row) for key, row in expected.items()}
    return [(spark_iceberg.Read(table.metadata_location, COLUMNS, snapshot_id=s), model) for s in snapshots]


def assert_spark_reads(checks: list[tuple[spark_iceberg.Read, dict]]) -> None:
    """Spark, with Iceberg's Java reader, reads each snapshot as ``expected``: all of them in one JVM."""
    found = spark_iceberg.scan_tables([read for read, _ in checks])
    for (read, expected), rows in zip(checks, found):
        where = f"snapshot {read.snapshot_id} of {read.table}"
        assert len(rows) == len(expected), f"Spark reads {len(rows)} rows from {where}, not {len(expected)}"
        assert {r["id"]: r for r in rows} == expected, f"Spark reads other rows from {where}"


def test_debezium_postgres_stream_into_an_upsert_table(kafka_broker, spark, tmp_path):
    """The shipped config: rounds of changes, each run leaves the table equal to the source table."""
    topic = f"pgserver1.public.{unique('customers')}"
    create_topic(kafka_broker.bootstrap, topic, partitions=PARTITIONS)
    stream = CustomerStream(topic, seed=7)
    props = shipped(tmp_path, topic)
    checks = []
    for number, size in enumerate((300, 400, 400)):
        stream.produce(kafka_broker.bootstrap, stream.round(size, snapshot=number == 0))
        run_until_caught_up(props, kafka_broker.bootstrap, spark)
        checks += assert_table_is(props, stream.rows)
    assert_spark_reads(checks)
    table = load_table(props, TABLE)
    assert [table.schema().find_column_name(i) for i in table.schema().identifier_field_ids] == ["id"]
    # The sink's own last commit: maintenance may have compacted since, folding the deletes away.
    summary = table.snapshot_by_id(sink_snapshot(table)).summary
    assert int(summary.get("total-position-deletes", "0")) > 0, "updates were written as position deletes"


@pytest.mark.parametrize("connector_class", ["org.apache.iceberg.connect.IcebergSinkConnector",
                                             "io.tabular.iceberg.connect.IcebergSinkConnector"])
def test_upsert_mode_without_a_cdc_field_keeps_the_last_record_of_each_key(kafka_broker, spark, tmp_path,
                                                                            connector_class):
    topic, table = unique("upserts"), "db.latest"
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    from tests.integration.harness import sink_props

    props = sink_props(unique("upserts"), topic, table, tmp_path, **{
        "connector.class": connector_class,
        "iceberg.tables.upsert-mode-enabled": "true", "iceberg.table.db.latest.id-columns": "account,item"})
    expected: dict[tuple, dict] = {}
    for round_number in range(2):
        values = []
        for i in range(200):
            row = {"account": i % 7, "item": f"i{i % 11}", "qty": round_number * 1000 + i}
            values.append(json.dumps(row).encode())
            expected[(row["account"], row["item"])] = row
        produce(kafka_broker.bootstrap, topic, values, partition=round_number % 2)
        run_until_caught_up(props, kafka_broker.bootstrap, spark)
        rows = table_rows(props, table)
        assert len(rows) == len(expected)
        assert {(r["account"], r["item"]): r for r in rows} == expected


def test_a_record_without_its_key_fails_naming_where_it_is(kafka_broker, spark, tmp_path):
    from connector.api.errors import ConnectException
    from tests.integration.harness import sink_props

    topic, table = unique("nokey"), "db.nokey"
    create_topic(kafka_broker.bootstrap, topic)
    props = sink_props(unique("nokey"), topic, table, tmp_path, **{
        "iceberg.tables.upsert-mode-enabled": "true", "iceberg.tables.default-id-columns": "id"})
    produce(kafka_broker.bootstrap, topic, [b'{"id": 1, "v": 1}', b'{"id": null, "v": 2}'], partition=0)
    with pytest.raises(ConnectException) as failure:
        run_until_caught_up(props, kafka_broker.bootstrap, spark)
    message = str(failure.value)
    assert topic in message and "offset" in message and "1" in message, message


@pytest.mark.slow
def test_sigkill_during_a_cdc_stream_never_resurrects_or_duplicates_a_key(kafka_broker, tmp_path):
    topic = f"pgserver1.public.{unique('crash')}"
    create_topic(kafka_broker.bootstrap, topic, partitions=PARTITIONS)
    stream = CustomerStream(topic, seed=11)
    props = shipped(tmp_path, topic)
    props["iceberg.control.commit.interval-ms"] = "500"
    config_file = write_config_file(tmp_path / "cdc.json", props)
    rng = random.Random(5)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    spark_conf = ["--spark-conf", "spark.master=local[2]", "--spark-conf", "spark.ui.enabled=false"]
    with open(tmp_path / "job.log", "wb") as log_file:
        for number in range(3):
            stream.produce(kafka_broker.bootstrap, stream.round(1500, snapshot=number == 0))
            job = subprocess.Popen([sys.executable, "-m", "connector.cli", "run", str(config_file),
                                    "--bootstrap-servers", kafka_broker.bootstrap, *spark_conf],
                                   stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True, env=env)
            time.sleep(rng.uniform(6.0, 12.0))
            os.killpg(job.pid, signal.SIGKILL)
            job.wait(timeout=30)
    finish = subprocess.run([sys.executable, "-m", "connector.cli", "run", str(config_file), "--bootstrap-servers",
                             kafka_broker.bootstrap, "--until-caught-up", *spark_conf],
                            capture_output=True, text=True, timeout=300, env=env)
    assert finish.returncode == 0, finish.stderr[-3000:]
    assert_spark_reads(assert_table_is(props, stream.rows))
