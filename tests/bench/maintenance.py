"""The ``maintenance`` bench scenario: streaming-sized commits with and without table maintenance.

Kafka- and Spark-free, so the figures are about the tables: ``COMMITS``
commit cycles (the equivalent of ``COMMITS`` seconds of streaming at a
1-second commit interval; 1,800 = 30 minutes), each writing ``ROWS`` rows as
two tasks' files through the task pipeline and committing them through the
one commit path. With maintenance on, the job's :class:`Maintainer` runs
between cycles as in continuous mode, on a clock that advances one second per
cycle (so ``interval-ms`` and ``budget-ms`` mean what they mean in a real
job); the snapshots kept are the newest ``MIN_TO_KEEP`` (expiry by count:
the bench runs faster than real time, so snapshot ages are not a minute per
minute). A third table gets all the rows in one commit, the baseline for scan
times. Reported: live data files, average file size, snapshots, metadata and
data bytes on disk, pyiceberg scan time (median of 3) and its ratio to the
baseline, and the commit latency p50/p99 of each cycle including the
maintenance that ran before it (what a data commit waits for).
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

COMMITS = int(os.environ.get("ICEFLOE_BENCH_MAINT_COMMITS", "1800"))
ROWS = int(os.environ.get("ICEFLOE_BENCH_MAINT_ROWS", "500"))
MIN_TO_KEEP = 60


def _raw(offsets: range) -> pa.RecordBatch:
    from connector.kafka.range_reader import RAW_SCHEMA

    n = len(offsets)
    values = [json.dumps({"id": o, "name": f"customer-{o % 97}", "amount": o * 0.5, "kind": "abcd"[o % 4]}).encode()
              for o in offsets]
    return pa.RecordBatch.from_pydict({
        "topic": ["bench"] * n, "partition": [0] * n, "offset": list(offsets),
        "timestamp": [1_700_000_000_000 + o for o in offsets], "timestamp_type": [1] * n,
        "key": [None] * n, "value": values, "headers": [[]] * n}, schema=RAW_SCHEMA)


def _files(config, offsets: range, task: str) -> list:
    from connector.commit.commit import schema_rounds
    from connector.task import new_pipeline

    pipeline = new_pipeline(config, task)

    def run(batch):
        needs = pipeline.process(batch)
        if needs:
            pipeline.forget_tables(needs.tables)
            return needs, batch
        return needs, None

    schema_rounds(pipeline.catalog, config, _raw(offsets), run)
    files, _ = pipeline.close()
    return files.get("db.events", [])


def _disk(root: Path) -> tuple[int, int]:
    """(files, bytes) under ``root``."""
    paths = [p for p in root.rglob("*") if p.is_file()]
    return len(paths), sum(p.stat().st_size for p in paths)


def scan_seconds(table) -> float:
    """The median of three full pyiceberg scans of ``table``, in seconds."""
    times = []
    for _ in range(3):
        began = time.perf_counter()
        table.scan().to_arrow()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def _stream(work: Path, maintained: bool) -> dict[str, Any]:
    from connector.commit.commit import commit_table
    from connector.config.sink_config import SinkConfig
    from connector.data.catalog import load_catalog
    from connector.maintenance.compaction import live_data_files
    from connector.maintenance.runner import Maintainer
    from tests.integration.harness import sink_props

    props = sink_props("maint-on" if maintained else "maint-off", "bench", "db.events", work, **{
        "icefloe.maintenance.snapshot.max-age-ms": "0",
        "icefloe.maintenance.snapshot.min-to-keep": str(MIN_TO_KEEP),
        "icefloe.maintenance.orphan.min-age-ms": "0"})  # between cycles nothing is in flight
    config = SinkConfig.parse(props)
    catalog = load_catalog(config.props)
    simulated = [0.0]
    maintainer = Maintainer(config, catalog, clock=lambda: time.monotonic() + simulated[0])
    latencies = []
    maintenance_seconds = 0.0
    for cycle in range(COMMITS):
        began = time.monotonic()
        waited = 0.0
        if maintained and cycle:
            maintainer.between_cycles([])
            waited = time.monotonic() - began
            maintenance_seconds += waited
        first = cycle * ROWS
        committed = time.monotonic()
        files = _files(config, range(first, first + ROWS // 2), f"t{cycle}a") + \
            _files(config, range(first + ROWS // 2, first + ROWS), f"t{cycle}b")
        commit_table(catalog, config, "db.events", files, {("bench", 0): first + ROWS}, f"c{cycle}", None)
        took = time.monotonic() - committed
        latencies.append(took + waited)
        simulated[0] += max(0.0, 1.0 - (time.monotonic() - began))  # one second of streaming per cycle
    table = catalog.load_table("db.events")
    live = live_data_files(table, None)[0]
    location = Path(table.location().removeprefix("file://"))
    meta_files, meta_bytes = _disk(location / "metadata")
    data_files, data_bytes = _disk(location / "data")
    if table.scan().to_arrow().num_rows != COMMITS * ROWS:
        raise SystemExit("the maintained table lost or duplicated rows")
    cuts = statistics.quantiles(latencies, n=100)
    figures: dict[str, Any] = {
        "live files": len(live), "avg file KB": sum(f.file_size_in_bytes for f in live) / max(1, len(live)) / 1024,
        "snapshots": len(table.metadata.snapshots), "metadata files": meta_files,
        "metadata MB": meta_bytes / 2**20, "data files on disk": data_files, "data MB": data_bytes / 2**20,
        "scan s": scan_seconds(table), "commit p50 s": statistics.median(latencies), "commit p99 s": cuts[98],
        "maintenance s": maintenance_seconds}
    if maintained:  # what a reader sees right after a round (the stream's last minute is not compacted yet)
        maintainer.run_round()
        table = catalog.load_table("db.events")
        figures["live files after a round"] = len(live_data_files(table, None)[0])
        figures["scan s after a round"] = scan_seconds(table)
    return figures


def _one_batch(work: Path) -> float:
    from connector.commit.commit import commit_table
    from connector.config.sink_config import SinkConfig
    from connector.data.catalog import load_catalog
    from tests.integration.harness import sink_props

    config = SinkConfig.parse(sink_props("one-batch", "bench", "db.events", work))
    catalog = load_catalog(config.props)
    commit_table(catalog, config, "db.events", _files(config, range(COMMITS * ROWS), "all"),
                 {("bench", 0): COMMITS * ROWS}, "all", None)
    return scan_seconds(catalog.load_table("db.events"))


def measure_maintenance() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        off = _stream(Path(tmp) / "off", maintained=False)
        on = _stream(Path(tmp) / "on", maintained=True)
        baseline = _one_batch(Path(tmp) / "one")
    return {"off": off, "on": on, "one batch scan s": baseline}


def _cell(value: Any) -> str:
    if value is None:
        return f"{'-':>10}"
    return f"{value:>10.3f}" if isinstance(value, float) else f"{value:>10}"


def report_maintenance(result: dict[str, Any] | None) -> None:
    if result is None:
        return
    print(f"\nmaintenance: {COMMITS} commits of {ROWS} rows (2 files each), as {COMMITS} s of streaming at a "
          f"1 s interval; maintenance keeps the newest {MIN_TO_KEEP} snapshots")
    for key in result["on"]:
        print(f"  {key:<26} off {_cell(result['off'].get(key))}   on {_cell(result['on'][key])}")
    baseline = result["one batch scan s"]
    print(f"  scan vs one batch ({baseline:.3f} s): off {result['off']['scan s'] / baseline:.2f}x, "
          f"on {result['on']['scan s'] / baseline:.2f}x, on after a round "
          f"{result['on']['scan s after a round'] / baseline:.2f}x (target on <= 1.5x)")
    print(f"  commit p99 on/off: {result['on']['commit p99 s'] / result['off']['commit p99 s']:.2f}x "
          f"(target <= 2x)")
