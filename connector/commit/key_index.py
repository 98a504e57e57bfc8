"""Where each key of an upsert table lives: the key index the commit turns changed keys into deletes with.

An upsert table holds one row per key (its id columns). A commit receives the
changes of its tasks as :class:`~connector.data.convert.changes.ChangeSegment` (the
files a flush wrote and one row per key it saw) and must delete every other
row of each changed key: the rows the table held before, wherever their
partition (a key may move between table partitions), and the rows of other
segments of the same commit that an older record of the key produced.

:func:`winners` decides, per key, which segment holds the key's latest record
(order: topic, partition, offset — the latest wins). :func:`rows_to_delete`
then returns the (file, position) of every row of a changed key that is not the
winning segment's own row. Both are column-wise pyarrow joins.

:class:`KeyIndex` keeps, for one branch of one table, the live rows' keys with
their file and position. Data files never change, so the index is built once
from the files and their position deletes and then moved forward by each
commit (new files in, deleted positions out). It is tied to the snapshot it
describes: when the branch head is another snapshot (maintenance rewrote files,
another writer committed), it is built again from the table.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io.pyarrow import ArrowScan
from pyiceberg.manifest import DataFile
from pyiceberg.table import FileScanTask, Table

from connector.data.convert.changes import DELETED, OFFSET, PARTITION, TOPIC

FILE, POS, SEGMENT, RANK = "__file", "__pos", "__segment", "__rank"
#: The segment of rows the table held before the commit.
OLD = -1


# --- the rules -------------------------------------------------------------------------------


def winners(segments: Sequence[pa.Table], id_columns: Sequence[str]) -> pa.Table:
    """Per changed key, the segment whose record of it is the latest: (id columns, ``__segment``, ``__deleted``).

    ``segments[i]`` is the ``keys`` table of segment ``i``. The latest record is
    the greatest (topic, partition, offset); the index breaks a tie (the same
    record seen twice), the later segment winning.
    """
    keys = list(id_columns)
    tables = [s.select([*keys, TOPIC, PARTITION, OFFSET, DELETED])
              .append_column(SEGMENT, pa.array(np.full(s.num_rows, i, dtype=np.int32)))
              for i, s in enumerate(segments) if s.num_rows]
    if not tables:
        return pa.table({**{k: pa.array([]) for k in keys}, SEGMENT: pa.array([], pa.int32()),
                         DELETED: pa.array([], pa.bool_())})
    changes = pa.concat_tables(tables, promote_options="permissive")
    order = pc.sort_indices(changes, [(TOPIC, "ascending"), (PARTITION, "ascending"), (OFFSET, "ascending"),
                                      (SEGMENT, "ascending")])
    ranked = changes.take(order).append_column(RANK, pa.array(np.arange(changes.num_rows, dtype=np.int64)))
    latest = ranked.group_by(keys, use_threads=False).aggregate([(RANK, "max")])
    chosen = ranked.take(latest.column(f"{RANK}_max"))
    return chosen.select([*keys, SEGMENT, DELETED])


def rows_to_delete(rows: pa.Table, won: pa.Table, id_columns: Sequence[str]) -> pa.Table:
    """(``__file``, ``__pos``) of the ``rows`` of changed keys that are not their winning segment's row.

    ``rows``: id columns, ``__file``, ``__pos`` and ``__segment`` (:data:`OLD`
    for the rows the table held, else the segment whose file holds the row).
    A deleted key keeps no row: its winning segment wrote none.
    """
    keys = list(id_columns)
    if rows.num_rows == 0 or won.num_rows == 0:
        return pa.table({FILE: pa.array([], pa.string()), POS: pa.array([], pa.int64())})
    won = won.select([*keys, SEGMENT]).rename_columns([*keys, "__winner"])
    for key in keys:  # a segment flushed before an id column was widened (int → long) has the old type
        wanted = rows.schema.field(key).type
        if won.schema.field(key).type != wanted:
            won = won.set_column(won.schema.get_field_index(key), key, pc.cast(won.column(key), wanted))
    matched = rows.join(won, keys=keys, join_type="inner", use_threads=False)
    losing = pc.not_equal(matched.column(SEGMENT), matched.column("__winner"))
    return matched.filter(losing).select([FILE, POS])


def without(rows: pa.Table, deleted: pa.Table) -> pa.Table:
    """``rows`` minus those at the (``__file``, ``__pos``) of ``deleted``."""
    if deleted.num_rows == 0 or rows.num_rows == 0:
        return rows
    marked = deleted.select([FILE, POS]).append_column("__gone", pa.array(np.ones(deleted.num_rows, dtype=bool)))
    joined = rows.join(marked, keys=[FILE, POS], join_type="left outer", use_threads=False)
    return joined.filter(pc.is_null(joined.column("__gone"))).drop_columns(["__gone"])


# --- reading keys from files ---------------------------------------------------------------------


def read_keys(table: Table, files: Sequence[DataFile], id_columns: Sequence[str], segment: int = OLD) -> pa.Table:
    """The id columns of every row of ``files`` with its file path, position and ``segment``.

    Read through pyiceberg's Arrow scan projected on the id columns, so files
    written under an older schema read by field id. No delete file is applied:
    positions are row numbers within each file.
    """
    keys = list(id_columns)
    if not files:
        return _empty(table, keys)
    metadata = table.metadata
    projected = metadata.schema().select(*{k.split(".")[0] for k in keys})
    scanned = ArrowScan(metadata, table.io, projected, AlwaysTrue()).to_table([FileScanTask(f) for f in files])
    counts = [f.record_count for f in files]
    if scanned.num_rows != sum(counts):
        raise AssertionError(f"read {scanned.num_rows} rows of {table.name()} where the manifests count "
                             f"{sum(counts)}")  # no deletes and no filter: every row is read, in file order
    columns = {k: _column(scanned, k) for k in keys}
    paths = pa.DictionaryArray.from_arrays(pa.array(np.repeat(np.arange(len(files), dtype=np.int32), counts)),
                                           pa.array([f.file_path for f in files], pa.string()))
    positions = np.concatenate([np.arange(c, dtype=np.int64) for c in counts])
    return pa.table({**columns, FILE: pc.cast(paths, pa.string()), POS: positions,
                     SEGMENT: pa.array(np.full(len(positions), segment, dtype=np.int32))})


def _column(scanned: pa.Table, path: str) -> pa.ChunkedArray:
    """The column at a dotted ``path`` (a field of a struct column)."""
    head, *rest = path.split(".")
    column = scanned.column(head)
    for name in rest:
        column = pc.struct_field(column, name)
    return column


def _empty(table: Table, keys: list[str]) -> pa.Table:
    from pyiceberg.io.pyarrow import schema_to_pyarrow

    arrow = schema_to_pyarrow(table.metadata.schema().select(*{k.split(".")[0] for k in keys}))
    empty = arrow.empty_table()
    columns = {k: _column(empty, k) for k in keys}
    return pa.table({**columns, FILE: pa.array([], pa.string()), POS: pa.array([], pa.int64()),
                     SEGMENT: pa.array([], pa.int32())})


# --- the index ---------------------------------------------------------------------------------


@dataclass
class KeyIndex:
    """The live rows of one table branch at ``snapshot_id``.

    ``rows``: id columns, ``__file``, ``__pos`` and ``__segment`` (always
    :data:`OLD`) of every row no position delete removed; ``files``: the live
    data files by path (the partition and spec a position delete file takes
    from the file it refers to).
    """

    snapshot_id: int | None
    id_columns: tuple[str, ...]
    rows: pa.Table
    files: dict[str, DataFile]

    def advance(self, snapshot_id: int, added_files: Iterable[DataFile], added: pa.Table,
                deleted: pa.Table) -> None:
        """Move to the snapshot of a commit that added ``added`` rows (in ``added_files``) and deleted
        the ``deleted`` positions."""
        added = added.set_column(added.schema.get_field_index(SEGMENT), SEGMENT,
                                 pa.array(np.full(added.num_rows, OLD, dtype=np.int32)))
        rows = pa.concat_tables([self.rows, added.select(self.rows.column_names)], promote_options="permissive")
        self.rows = without(rows, deleted)
        self.files.update((f.file_path, f) for f in added_files)
        self.snapshot_id = snapshot_id


#: (table uuid, branch) → its index, as the last commit of this process left it.
_indexes: dict[tuple[str, str], KeyIndex] = {}
_lock = threading.Lock()


def cached(table_key: tuple[str, str], snapshot_id: int | None, id_columns: Iterable[str]) -> KeyIndex | None:
    """The index kept for ``table_key`` (table uuid, branch) if it describes ``snapshot_id``."""
    with _lock:
        index = _indexes.get(table_key)
    if index is None or index.snapshot_id != snapshot_id or index.id_columns != tuple(id_columns):
        return None
    return index


def remember(table_key: tuple[str, str], index: KeyIndex) -> None:
    with _lock:
        _indexes[table_key] = index


def forget(table_key: tuple[str, str]) -> None:
    with _lock:
        _indexes.pop(table_key, None)
