"""The operation of each row of an upsert or CDC table, and the rows that cannot be applied.

With ``iceberg.tables.cdc-field`` each converted row carries its operation in
that column (``_cdc.op`` as ``DebeziumTransform``, ``DmsTransform`` and
``MongoDebeziumTransform`` write it). Its first character, after trimming
whitespace and upper-casing, decides:

* ``I`` (insert), ``R`` (read: a snapshot row), ``C`` (create) and ``U``
  (update) write the row, replacing whatever row the table holds for the key
  (so an insert delivered twice still leaves one row);
* ``D`` deletes the key's row and writes nothing.

Anything else — another letter, an empty or blank string, null — is an error
of that record. Tabular's sink inserted such rows; icefloe refuses them, so
that a typo in an op code cannot silently turn into an upsert. Without a cdc
field (``upsert-mode-enabled`` alone) every row is an upsert.

A row whose id columns hold a null cannot be keyed and is an error too. All
checks are column-wise; only the failing rows are looked at one by one, to
name them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.table import Table
from pyiceberg.types import StringType

from connector.api.errors import ConfigException
from connector.config.iceberg_config import IcebergConfig
from connector.data.convert.column_paths import ColumnPath, PathNotFound, resolve

INSERT_LETTERS = ("I", "R", "C")
UPDATE, DELETE = "U", "D"
VALID_LETTERS = pa.array([*INSERT_LETTERS, UPDATE, DELETE], pa.string())


def op_column(config: IcebergConfig, table_name: str, table: Table) -> ColumnPath | None:
    """The table's cdc-field column, or None without ``iceberg.tables.cdc-field``.

    Raises ConfigException naming the table and the field when the table has
    no such column or it is not a string.
    """
    if config.cdc_field is None:
        return None
    try:
        path = resolve(table.schema(), config.cdc_field, case_sensitive=not config.case_insensitive)
    except PathNotFound as exc:
        raise ConfigException(f"Table {table_name} has no column {config.cdc_field} (iceberg.tables.cdc-field): "
                              f"{exc.reason}") from None
    if not isinstance(path.field_type, StringType):
        raise ConfigException(f"Column {path.name} of table {table_name} (iceberg.tables.cdc-field) is a "
                              f"{path.field_type}; the operation must be a string")
    return path


def op_letters(values: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """Each value's operation letter: its first character after trimming, upper-cased (null stays null)."""
    return pc.utf8_upper(pc.utf8_slice_codeunits(pc.utf8_trim_whitespace(values), 0, 1))


@dataclass
class RowChanges:
    """What the rows of one converted batch do: ``deleted`` (bool per row, no nulls) and the ``bad`` rows.

    ``bad``: (row index, why) for each row that cannot be applied, in row order.
    """

    deleted: pa.Array
    bad: list[tuple[int, str]]


def row_changes(data: pa.Table, op: ColumnPath | None, keys: tuple[ColumnPath, ...]) -> RowChanges:
    """The operation of each row of ``data`` (in the table's schema) and the rows that cannot be applied."""
    failing = pa.array(np.zeros(data.num_rows, dtype=bool))
    if op is None:
        deleted = failing
        raw = None
    else:
        raw = op.read(data).combine_chunks()
        letters = op_letters(raw)
        deleted = pc.fill_null(pc.equal(letters, DELETE), False)
        failing = pc.invert(pc.is_in(letters, value_set=VALID_LETTERS))
    nulls = [pc.is_null(key.read(data)).combine_chunks() for key in keys]
    for null in nulls:
        failing = pc.or_(failing, null)
    if not pc.any(failing).as_py():
        return RowChanges(deleted, [])
    bad = []
    for index in pc.indices_nonzero(failing).to_pylist():
        bad.append((index, _why(index, op, raw, keys, nulls)))
    return RowChanges(deleted, bad)


def _why(index: int, op: ColumnPath | None, raw: pa.Array | None, keys: tuple[ColumnPath, ...],
         nulls: list[pa.Array]) -> str:
    for key, null in zip(keys, nulls):
        if null[index].as_py():
            return f"id column {key.name} is null; every row of an upsert table needs a key"
    assert op is not None and raw is not None  # a failing row with all its keys is a bad operation
    value = raw[index].as_py()
    return (f"invalid operation {value!r} in {op.name} (iceberg.tables.cdc-field): its first letter must be "
            f"I, R or C (insert), U (update) or D (delete)")
