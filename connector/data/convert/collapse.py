"""One row per key: the rows a task flushes for an upsert or CDC table, collapsed to each key's latest record.

The order of records is their source position: topic, then partition, then
offset, compared lexicographically (topics by their UTF-8 bytes, i.e. by code
point); the latest wins. Within one source partition this is Kafka's order,
the order the changes were made in. Across partitions of one key there is no
true order (a producer that spreads one key over partitions loses it anyway);
the rule only makes the outcome deterministic, and the commit applies the same
rule between segments.

Everything is column-wise: rows are ranked by one sort of their positions,
grouped by key with a hash aggregation that keeps each key's highest rank,
and the winners are taken — no Python loop over rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector.data.convert.changes import DELETED, OFFSET, PARTITION, TOPIC
from connector.data.convert.column_paths import ColumnPath

#: Arrow schema of the per-row positions handed along with an upsert table's rows.
POSITIONS_SCHEMA = pa.schema([(TOPIC, pa.string()), (PARTITION, pa.int32()), (OFFSET, pa.int64()),
                              (DELETED, pa.bool_())])


def positions_table(topics: pa.Array, partitions: pa.Array, offsets: pa.Array, deleted: pa.Array) -> pa.Table:
    """The source position and the delete flag of each row, typed as :data:`POSITIONS_SCHEMA`."""
    columns = [topics, partitions, offsets, deleted]
    return pa.Table.from_arrays([c.cast(f.type) for c, f in zip(columns, POSITIONS_SCHEMA)],
                                schema=POSITIONS_SCHEMA)


@dataclass
class Collapsed:
    """A flush's rows collapsed: ``rows`` to write (the latest row of each key that is not deleted, in
    their input order) and ``keys`` (one row per key: the id columns by name, then the latest record's
    position and whether it deletes the key; :class:`~connector.data.convert.changes.ChangeSegment` ``keys``)."""

    rows: pa.Table
    keys: pa.Table


def collapse(data: pa.Table, positions: pa.Table, id_columns: tuple[ColumnPath, ...]) -> Collapsed:
    """Keep, per key, the row of the latest record; ``positions`` is aligned with ``data``.

    Equal positions (which one task never produces) are broken by row order: the later row wins.
    """
    assert data.num_rows == positions.num_rows, "the positions must align with the rows"
    key_values = [path.read(data) for path in id_columns]
    winners = _latest_per_key(key_values, positions)
    deleted = positions.column(DELETED).take(winners)
    kept = winners.filter(pc.invert(deleted))
    keys = {path.name: values.take(winners) for path, values in zip(id_columns, key_values)}
    keys.update({name: positions.column(name).take(winners) for name in POSITIONS_SCHEMA.names})
    return Collapsed(rows=data.take(kept), keys=pa.table(keys))


def _latest_per_key(key_values: list[pa.ChunkedArray], positions: pa.Table) -> pa.Array:
    """Row indices of each key's latest record, ascending."""
    n = positions.num_rows
    order = pc.sort_indices(
        positions.append_column("__row", pa.array(np.arange(n, dtype=np.int64))),
        sort_keys=[(TOPIC, "ascending"), (PARTITION, "ascending"), (OFFSET, "ascending"), ("__row", "ascending")],
    ).to_numpy()
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n, dtype=np.int64)
    grouping = {f"k{i}": _groupable(values) for i, values in enumerate(key_values)}
    grouping["rank"] = pa.array(rank)
    latest = pa.table(grouping).group_by([f"k{i}" for i in range(len(key_values))]).aggregate([("rank", "max")])
    winners = order[latest.column("rank_max").to_numpy()]
    winners.sort()
    return pa.array(winners, pa.int64())


def _groupable(values: pa.ChunkedArray) -> pa.ChunkedArray:
    """Values Arrow's hash grouping takes: extension types (uuid) by their storage."""
    if isinstance(values.type, pa.BaseExtensionType):
        return pa.chunked_array([chunk.storage for chunk in values.chunks], values.type.storage_type)
    return values
