"""Reading a maintained table with two engines: pyiceberg, and DuckDB's own Iceberg reader.

A compaction snapshot pyiceberg reads back but another engine cannot (a
manifest field it needs, a partition value, a sequence number) would pass a
pyiceberg-only check; every comparison here goes through both.
"""

from __future__ import annotations

from collections import Counter

from tests.support.duckdb_iceberg import scan


def rows_by_both(table, columns: list[str]) -> list[dict]:
    """The current snapshot's rows (``columns`` only, which include ``id``), sorted by ``id``: the same for
    pyiceberg and DuckDB."""
    ours = sorted(table.scan(selected_fields=tuple(columns)).to_arrow().to_pylist(), key=_by_id)
    theirs = sorted(scan(table, ", ".join(columns)).to_pylist(), key=_by_id)
    assert theirs == ours, f"DuckDB reads {len(theirs)} row(s), pyiceberg {len(ours)}; first DuckDB " \
                           f"rows {theirs[:3]}, pyiceberg {ours[:3]}"
    return ours


def ids_by_both(table) -> list[int]:
    """The sorted ``id`` column, the same for pyiceberg and DuckDB."""
    return [row["id"] for row in rows_by_both(table, ["id"])]


def id_counts_by_both(table) -> Counter:
    return Counter(ids_by_both(table))


def _by_id(row: dict) -> int:
    return row["id"]
