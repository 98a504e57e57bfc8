"""Row-level changes of upsert and CDC tables: what a task hands to the commit besides its files.

A table is written in upsert mode when the connector sets
``iceberg.tables.upsert-mode-enabled=true`` or ``iceberg.tables.cdc-field``:
each row replaces the table's row with the same id columns, and a delete
removes it. The task keeps, per key, only the latest record it saw (by
source position: topic, then partition, then offset; ``connector.data.convert.collapse``);
the commit (``connector.channel``) turns the keys into position deletes of
the rows the table, or another segment of the same commit, already holds for them.

One :class:`ChangeSegment` is one flush of one task's rows for one table.
Which columns are a table's keys is decided here (:func:`id_column_paths`);
which rows delete them, in ``connector.data.convert.cdc_ops``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import DoubleType, FloatType

from connector.api.errors import ConfigException, ConnectException
from connector.config.iceberg_config import IcebergConfig
from connector.data.convert.column_paths import ColumnPath, PathNotFound, resolve

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


# --- the keys of an upsert table ----------------------------------------------------------------

def id_column_paths(config: IcebergConfig, table_name: str, table: Table) -> tuple[ColumnPath, ...]:
    """The id columns of upsert table ``table_name``, resolved against its current schema.

    The rule: ``iceberg.table.<table>.id-columns``, else
    ``iceberg.tables.default-id-columns``, else the table's identifier fields
    (in their schema order). Raises ConnectException when no source gives
    any, ConfigException when one is missing from the schema or is a column
    Iceberg forbids as an identifier field.
    """
    schema = table.schema()
    names = config.table_config(table_name).id_columns or identifier_names(schema)
    if not names:
        raise no_id_columns(table_name)
    case_sensitive = not config.case_insensitive
    return tuple(id_column(schema, table_name, name, case_sensitive=case_sensitive) for name in names)


def no_id_columns(table_name: str) -> ConnectException:
    """The error for an upsert table without id columns, naming the three ways to give it some."""
    return ConnectException(
        f"Table {table_name} is written in upsert mode but has no id columns: set "
        f"iceberg.table.{table_name}.id-columns or iceberg.tables.default-id-columns, or give the table "
        f"identifier fields in its schema")


def id_columns_of(config: IcebergConfig, table_name: str, table: Table) -> tuple[str, ...]:
    """The names (as the table spells them, nested ones by dotted path) of :func:`id_column_paths`."""
    return tuple(path.name for path in id_column_paths(config, table_name, table))


def identifier_names(schema: Schema) -> tuple[str, ...]:
    """The schema's identifier fields by dotted name, in the order of their ids in the schema."""
    return tuple(str(schema.find_column_name(field_id)) for field_id in schema.identifier_field_ids)


def id_column(schema: Schema, table_name: str, name: str, *, case_sensitive: bool = True) -> ColumnPath:
    """Id column ``name`` of ``table_name`` in ``schema``; ConfigException naming both when it cannot be one."""
    try:
        path = resolve(schema, name, case_sensitive=case_sensitive)
    except PathNotFound as exc:
        where = " (identifier fields cannot be inside a list or a map)" if exc.in_list else ""
        raise ConfigException(f"Id column {name} of table {table_name} is not in the table's schema: "
                              f"{exc.reason}{where}") from None
    problem = id_column_problem(path)
    if problem is not None:
        raise ConfigException(f"Id column {name} of table {table_name} {problem}: Iceberg does not allow it "
                              f"as an identifier field")
    return path


def id_column_problem(path: ColumnPath) -> str | None:
    """Why Iceberg forbids the column at ``path`` as an identifier field (optional ones aside), or None."""
    if path.through_map:
        return "is inside a map"
    if not path.field_type.is_primitive:
        return f"is a {path.field_type}, not a primitive type"
    if isinstance(path.field_type, (FloatType, DoubleType)):
        return f"is a {path.field_type}"
    return None
