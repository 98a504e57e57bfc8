"""Which table(s) a record goes to: the Iceberg sink's static, route-regex and dynamic routing.

The rule lives in :meth:`RecordRouter.tables_for` (a route value → table
names). :meth:`RecordRouter.route` applies it to one record;
:meth:`RecordRouter.route_batch` applies it column-wise, once per distinct
route value of a batch, and declines (:class:`Declined`) where it cannot
promise the per-record answer.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from connector.api.errors import DataException
from connector.api.record import SinkRecord
from connector.api.struct import Struct
from connector.config.iceberg_config import IcebergConfig
from connector.config.table_names import table_name_problem
from connector.tolerance.errant import SINK_TASK_CLASS, TASK_PUT, mark


def extract_path(value: Any, path: str) -> Any:
    """Walk a dotted path through nested Structs and dicts; a missing step gives None."""
    current = value
    for part in path.split("."):
        if current is None:
            return None
        if isinstance(current, Struct):
            field = current.schema.field(part)
            current = current.get(field) if field is not None else None
        elif isinstance(current, dict):
            current = current.get(part)
        else:
            return None
    return current


class RecordRouter:
    """Routes records to destination table names."""

    def __init__(self, config: IcebergConfig):
        self.config = config
        self.static_tables = config.tables
        self.route_field = config.route_field
        self.regexes = [(t, config.table_config(t).route_regex) for t in config.tables]

    @property
    def routes_everything_everywhere(self) -> bool:
        """Static tables and no route field: every record goes to every table."""
        return not self.config.dynamic_enabled and not self.route_field

    def tables_for(self, route_text: str | None) -> list[str]:
        """The tables a record whose route field reads ``route_text`` (Java's ``toString``) goes to."""
        if self.routes_everything_everywhere:
            return list(self.static_tables)
        if route_text is None:
            return []
        if self.config.dynamic_enabled:
            return [self._dynamic_table(route_text)]
        return [table for table, regex in self.regexes if regex is not None and regex.fullmatch(route_text)]

    def _dynamic_table(self, route_text: str) -> str:
        """The table a dynamic route value names; a value that names none is the record's failure."""
        table = route_text.lower()
        problem = table_name_problem(table, self.config.catalog_properties)
        if problem:
            raise mark(DataException(f"The value '{route_text}' of route field {self.route_field} does not name "
                                     f"a table: {problem}"), TASK_PUT, SINK_TASK_CLASS)
        return table

    def route(self, record: SinkRecord) -> list[str]:
        """The tables ``record`` goes to; none for a tombstone (the Iceberg sink skips them)."""
        if record.value is None:
            return []
        # (without a route field, routing is static: the config refuses dynamic routing without one)
        if self.routes_everything_everywhere or not self.route_field:
            return list(self.static_tables)
        route_value = extract_path(record.value, self.route_field)
        try:
            return self.tables_for(None if route_value is None else str(route_value))
        except DataException as exc:  # the task fails naming the record, as a converter's failure does
            raise mark(DataException(f"{exc}; topic: {record.original_topic}, partition: "
                                     f"{record.original_kafka_partition}, offset: {record.original_kafka_offset}"),
                       TASK_PUT, SINK_TASK_CLASS, exc) from exc

    def route_batch(self, values: pa.Array) -> dict[str, pa.Array]:
        """Per table, the mask of the rows of ``values`` (maps as a struct array) it gets.

        Null values (tombstones) go nowhere, as in :meth:`route`. Declines when a
        route value is neither a string nor an integer (``str`` of other kinds
        is Python's, not Java's).
        """
        written = values.is_valid()
        if self.routes_everything_everywhere or not self.route_field:
            return {table: written for table in self.static_tables}
        route = pc.if_else(written, _route_texts(values, self.route_field), pa.scalar(None, pa.string()))
        encoded = pc.dictionary_encode(route)  # the rule runs once per distinct route value
        try:
            tables_by_entry = [self.tables_for(text) for text in encoded.dictionary.to_pylist()]
        except DataException as exc:  # a record's failure: the per-record path reports it with its coordinates
            raise Declined(str(exc)) from exc
        masks: dict[str, pa.Array] = {}
        for table in dict.fromkeys(t for tables in tables_by_entry for t in tables):
            entry_goes = pa.array([table in tables for tables in tables_by_entry], pa.bool_())
            masks[table] = pc.fill_null(entry_goes.take(encoded.indices), False)
        return masks


def _route_texts(values: pa.Array, path: str) -> pa.Array:
    """``str(extract_path(value, path))`` per row as strings (null where the path gives None)."""
    current = values
    for part in path.split("."):
        if not pa.types.is_struct(current.type):
            return pa.nulls(len(values), pa.string())  # a step into a non-map gives None
        names = [current.type.field(i).name for i in range(current.type.num_fields)]
        if part not in names:
            return pa.nulls(len(values), pa.string())
        current = current.flatten()[names.index(part)]
    if current.null_count == len(current):
        return pa.nulls(len(values), pa.string())
    if pa.types.is_string(current.type) or pa.types.is_large_string(current.type) \
            or pa.types.is_integer(current.type):
        return current.cast(pa.string())
    raise Declined(f"route field {path} holds {current.type} values")
