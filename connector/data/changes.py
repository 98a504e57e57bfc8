"""Row-level changes of upsert and CDC tables: what a task hands to the commit besides its files.

A table is written in upsert mode when the connector sets
``iceberg.tables.upsert-mode-enabled=true`` or ``iceberg.tables.cdc-field``:
each row replaces the table's row with the same id columns, and a delete
removes it. The task keeps, per key, only the latest record it saw (offset
order within a source partition); the commit (``connector.channel``) turns
the keys into position deletes of the rows the table, or another segment of
the same commit, already holds for them.

One :class:`ChangeSegment` is one flush of one task's rows for one table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

#: Columns of :attr:`ChangeSegment.keys` besides the id columns: the source position of the key's
#: latest record (the order between segments: topic, then partition, then offset) and whether
#: that record deletes the key.
TOPIC, PARTITION, OFFSET, DELETED = "__topic", "__partition", "__offset", "__deleted"
POSITION_COLUMNS = (TOPIC, PARTITION, OFFSET)


@dataclass
class ChangeSegment:
    """One flush of one task's rows for one upsert/CDC table.

    ``files``: the data files this flush wrote, holding the latest version of
    each key it saw that is not deleted (one row per key). They are also among
    the task's ``data_files`` of the table.

    ``keys``: one row per key the flush saw: the id columns (named by their
    column names in the table, nested ones by their dotted path, in the
    table's types), ``__topic`` (string), ``__partition`` (int32) and
    ``__offset`` (int64) of the key's latest record, and ``__deleted`` (bool):
    whether that record deletes the key (then no file holds it).
    """

    files: list[Any] = field(default_factory=list)
    keys: pa.Table = field(default_factory=lambda: pa.table({}))
