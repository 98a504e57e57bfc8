"""The ``cdc`` bench scenario: a CDC stream into an upsert table, against plain appends of the same records.

``EVENTS`` change events over ``KEYS`` keys (the first event of each key an
insert, then 70 % of all events updates and 10 % deletes, a deleted key
inserted again later), JSON with a top-level ``op`` field, keyed to
partition ``id % partitions``. Both runs are ``icefloe run --until-caught-up``
on the warm Spark session with ``icefloe.commit.max-records`` cycles, so
the upsert table takes many commits, each deleting rows of the ones
before. Reported: both rates and their ratio (target >= 0.3x), the upsert
table's data and delete files afterwards, and its scan time against a table
holding the same final rows appended once (target <= 2x).
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path
from typing import Any, Callable

EVENTS = int(os.environ.get("ICEFLOE_BENCH_CDC_EVENTS", "1000000"))
KEYS = int(os.environ.get("ICEFLOE_BENCH_CDC_KEYS", "100000"))
CYCLE_RECORDS = int(os.environ.get("ICEFLOE_BENCH_CDC_CYCLE", "100000"))
TOPIC = "bench-cdc"


def cdc_events(count: int = EVENTS, keys: int = KEYS, seed: int = 3) -> tuple[list[tuple[int, bytes]], dict]:
    """(id, JSON value) in production order, and the final rows (id → row) they leave."""
    rng = random.Random(seed)
    live: dict[int, dict] = {}
    dead: list[int] = []
    fresh = iter(range(keys))
    events: list[tuple[int, bytes]] = []
    for n in range(count):
        roll = rng.random()
        if len(live) < keys * 0.2 or roll < 0.2:
            key = next(fresh, None)
            if key is None:
                key = dead.pop() if dead else rng.choice(list(live))
            op = "I"
        elif roll < 0.9:
            key, op = rng.randrange(keys), "U"
            if key not in live:
                op = "I"
        else:
            key, op = rng.randrange(keys), "D"
            if key not in live:
                key, op = rng.randrange(keys), "U"
        row = {"id": key, "op": op, "name": f"user-{key % 1000:04d}", "amount": (n % 10000) / 100,
               "region": "abcd"[key % 4], "seq": n}
        events.append((key, json.dumps(row).encode()))
        if op == "D":
            live.pop(key, None)
            dead.append(key)
        else:
            live[key] = row
    return events, live


def produce_events(bootstrap: str, events: list[tuple[int, bytes]], partitions: int) -> None:
    from tests.support.tansu import create_topic, produce

    create_topic(bootstrap, TOPIC, partitions=partitions)
    for partition in range(partitions):
        produce(bootstrap, TOPIC, [v for k, v in events if k % partitions == partition], partition=partition)


def measure_cdc(spark, bootstrap: str, props_for: Callable[..., dict[str, str]], partitions: int
                ) -> dict[str, Any]:
    """Rates of the upsert and the append runs, and the upsert table's state afterwards."""
    from connector.data.catalog import load_catalog
    from tests.bench.maintenance import scan_seconds

    events, final = cdc_events()
    produce_events(bootstrap, events, partitions)
    chunk = {"icefloe.commit.max-records": str(CYCLE_RECORDS)}
    append_props = props_for("cdc_append", TOPIC, chunk)
    upsert_props = props_for("cdc_upsert", TOPIC, {**chunk, "iceberg.tables.upsert-mode-enabled": "true",
                                                   "iceberg.tables.cdc-field": "op",
                                                   "iceberg.tables.default-id-columns": "id"})
    appended = EVENTS / _run(spark, bootstrap, append_props)
    upserted = EVENTS / _run(spark, bootstrap, upsert_props)
    catalog = load_catalog(upsert_props)
    table = catalog.load_table(upsert_props["iceberg.tables"])
    rows = table.scan().to_arrow()
    if rows.num_rows != len(final) or set(rows.column("id").to_pylist()) != set(final):
        raise SystemExit(f"cdc: the upsert table holds {rows.num_rows} rows, expected {len(final)}")
    data_files, delete_files = _file_counts(table)
    baseline = _appended_once(catalog, table, rows, Path(upsert_props["iceberg.catalog.warehouse"]))
    return {"append rate": appended, "upsert rate": upserted, "data files": data_files,
            "delete files": delete_files, "rows": rows.num_rows, "scan s": scan_seconds(table),
            "one-batch scan s": scan_seconds(baseline)}


def _run(spark, bootstrap: str, props: dict[str, str]) -> float:
    """Seconds of one ``--until-caught-up`` run on the warm session (the records read are checked)."""
    from connector.config.sink_config import SinkConfig
    from connector.job import SinkJob
    from connector.spark.runner import SparkTaskRunner

    config = SinkConfig.parse(props, {"bootstrap.servers": bootstrap})
    runner = SparkTaskRunner(spark)
    began = time.perf_counter()
    summary = SinkJob(config, runner, default_parallelism=runner.default_parallelism, until_caught_up=True).run()
    elapsed = time.perf_counter() - began
    read = sum(c.records_read for c in summary.cycles)
    if read != EVENTS:
        raise SystemExit(f"{props['name']}: read {read} records, expected {EVENTS}")
    return elapsed


def _file_counts(table) -> tuple[int, int]:
    from pyiceberg.manifest import ManifestContent

    data = deletes = 0
    for manifest in table.current_snapshot().manifests(table.io):
        entries = len(manifest.fetch_manifest_entry(table.io, discard_deleted=True))
        if manifest.content == ManifestContent.DATA:
            data += entries
        else:
            deletes += entries
    return data, deletes


def _appended_once(catalog, table, rows, warehouse: Path):
    """A table with the same schema and spec holding ``rows`` in one append: the scan baseline."""
    name = f"{table.name()[-2]}.cdc_baseline"
    if catalog.table_exists(name):
        catalog.drop_table(name)
    baseline = catalog.create_table(name, schema=table.schema(), partition_spec=table.spec())
    baseline.append(rows)
    return baseline


def report_cdc(result: dict[str, Any] | None) -> None:
    if result is None:
        return
    ratio = result["upsert rate"] / result["append rate"]
    scan = result["scan s"] / result["one-batch scan s"]
    print(f"\ncdc: {EVENTS:,} events over {KEYS:,} keys (70% updates, 10% deletes), cycles of "
          f"{CYCLE_RECORDS:,} records")
    print(f"  append {result['append rate']:>10,.0f} rec/s   upsert {result['upsert rate']:>10,.0f} rec/s   "
          f"ratio {ratio:.2f}x (target >= 0.3x)")
    print(f"  afterwards: {result['rows']:,} rows in {result['data files']} data file(s) and "
          f"{result['delete files']} delete file(s); scan {result['scan s']:.3f} s vs "
          f"{result['one-batch scan s']:.3f} s appended once: {scan:.2f}x (target <= 2x)")
