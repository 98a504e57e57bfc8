"""``icefloe show CONFIG.json``: what landed, without another tool: each table's schema, recent snapshots
with the source offsets they recorded, and sample rows.

The tables are the config's static ``iceberg.tables`` and any ``--table`` (for
dynamic routing); the catalog is the config's, whatever its type (SQL, REST,
Glue, Hive, ...), opened as ``icefloe run`` opens it. No Kafka cluster is
needed. Exit codes: 0 shown, 1 the catalog or a table could not be read (one
line naming it), 2 the configuration is invalid.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from typing import Any, Iterator

from connector.api.errors import ConfigException, ConnectException
from connector.commands.arguments import add_catalog_arguments
from connector.iceberg.snapshot_offsets import OFFSETS_PREFIX


def add_parser(sub) -> None:
    show = sub.add_parser("show", help="print each table's schema, recent snapshots with their source offsets, "
                                       "and sample rows (no Kafka cluster needed)")
    add_catalog_arguments(show, "show")
    show.add_argument("--snapshots", type=int, default=5, metavar="N",
                      help="newest snapshots to list (default: %(default)s)")
    show.add_argument("--rows", type=int, default=5, metavar="N", help="sample rows to print (default: %(default)s)")


def show(args) -> int:
    from connector.data.catalog import open_catalog
    from connector.maintenance.offline import load_config

    try:
        config = load_config(args)
    except ConfigException as exc:
        print(f"Invalid configuration: {exc}", file=sys.stderr)
        return 2
    tables = list(dict.fromkeys([*config.iceberg.tables, *args.table]))
    if not tables:
        print("No table to show: the config names no static iceberg.tables; pass --table NS.TABLE", file=sys.stderr)
        return 2
    try:
        catalog = open_catalog(config.props)
    except ConnectException as exc:
        print(f"Cannot show the tables: {exc}", file=sys.stderr)
        return 1
    failed = 0
    for name in tables:
        try:
            table = catalog.load_table(name)
        except Exception as exc:  # noqa: BLE001 - a missing table, a refusal: one line, then the next table
            print(f"Table {name}: cannot be read: {type(exc).__name__}: {exc}", file=sys.stderr)
            failed += 1
            continue
        for line in describe(name, table, snapshots=args.snapshots, rows=args.rows):
            print(line)
    return 1 if failed else 0


def describe(name: str, table: Any, *, snapshots: int, rows: int) -> Iterator[str]:
    """The lines ``icefloe show`` prints for one pyiceberg table."""
    current = table.current_snapshot()
    total = _summary(current).get("total-records", "0") if current is not None else "0"
    yield f"Table {name}: {total} rows, {len(table.snapshots())} snapshot(s), at {table.location()}"
    yield "Schema:"
    yield from (f"  {field}" for field in table.schema().fields)
    if not table.spec().is_unpartitioned():
        yield f"Partitioned by: {', '.join(f'{f.name} ({f.transform})' for f in table.spec().fields)}"
    yield f"Newest snapshots ({min(snapshots, len(table.snapshots()))}):"
    for snapshot in sorted(table.snapshots(), key=lambda s: s.timestamp_ms, reverse=True)[:snapshots]:
        yield "  " + _snapshot_line(snapshot)
        for key, offsets in _offsets(_summary(snapshot)):
            yield f"      next offsets {key} = {offsets}"
    if rows > 0 and current is not None:
        sample = table.scan(limit=rows).to_arrow().to_pylist()
        yield f"Sample rows ({len(sample)}):"
        yield from (f"  {json.dumps(row, default=str)}" for row in sample)
    yield ""


def _summary(snapshot: Any) -> dict[str, str]:
    summary = snapshot.summary
    if summary is None:
        return {}
    return {"operation": str(summary.operation.value), **summary.additional_properties}


def _snapshot_line(snapshot: Any) -> str:
    summary = _summary(snapshot)
    when = datetime.fromtimestamp(snapshot.timestamp_ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    added = summary.get("added-records", "0")
    return f"{snapshot.snapshot_id} {when} UTC {summary.get('operation', '?')}, {added} rows added"


def _offsets(summary: dict[str, str]) -> Iterator[tuple[str, str]]:
    """The source offsets a snapshot recorded (``kafka.connect.offsets.<topic>.<group>``): next offset per
    partition, as the keys hold them."""
    for key in sorted(summary):
        if key.startswith(OFFSETS_PREFIX):
            yield key, summary[key]
