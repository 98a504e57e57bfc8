"""Batches of Connect values → an Arrow table of an Iceberg table's schema.

The Python counterpart of the Iceberg sink's ``RecordConverter``: the table
schema is the source of truth, values are Structs (with their schema) or
dicts (schemaless), fields are looked up by name (case-insensitively, or
through the table's name mapping, if configured), unknown fields are ignored
unless evolution is on, and each value is coerced as the sink coerces it
(:mod:`connector.data.convert.coercion`).

Columns are built column-wise: one Python list per top-level column, then
``pyarrow.array`` with fast paths when values already have the column's
Python type. Values of different Struct schemas (or dicts mixed with Structs)
are converted per group and put back in batch order.

Schema evolution (``evolve=True``) collects what the values need and the table
lacks — new columns (types from the Connect schema for Structs, inferred from
the value for dicts), int → long and float → double widening, required →
optional — and returns them *instead of* a table; the caller applies them and
converts the batch again. For Struct values the requests come from the
Connect schema, computed once per distinct schema: the requests the sink
finds record by record, except that they also reach into empty lists and maps
(whose element schema is known even when no element is present).

Beyond the Java sink, for Struct values (schemas from a Schema Registry, see
docs/schema-evolution.md):

* list elements and map values are widened and made optional like fields;
* a required column the record's schema no longer has is made optional (a
  field dropped from the schema: its column stays, later rows hold null);
* a field whose type the column cannot take (e.g. a string column and an int
  field: anything but the same type, a widening, a narrower number or the
  conversions in :func:`conversion_conflict`) raises
  :class:`~connector.data.convert.schema_update.IncompatibleSchemaChange` instead of
  being coerced, so a table never changes meaning silently;
* the requests carry the registry schema id of the schema that asked for them
  (when the task's decoder saw it: :class:`~connector.data.schema_ids.RegistrySchemaIds`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Sequence

import pyarrow as pa
from pyiceberg import types as ice
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.table import Table
from pyiceberg.table.name_mapping import NameMapping, parse_mapping_from_json

from connector.api.errors import DataException
from connector.api.schema import Schema, Type
from connector.api.struct import Struct
from connector.data.convert.schema_update import IncompatibleSchemaChange, SchemaUpdates
from connector.data.convert.type_mapping import iceberg_type_for, infer_iceberg_type, widened_type_for
from connector.data.convert.value_converters import (
    ROOT_ID,
    ColumnError,
    ConversionContext,
    FieldLookup,
    StructConverter,
    names_by_field_id,
)
from connector.data.schema_ids import RegistrySchemaIds

NAME_MAPPING_PROPERTY = "schema.name-mapping.default"


def name_mapping_of(table: Table) -> str | None:
    """The table's name mapping (JSON), through which its columns are looked up; None without one."""
    return table.properties.get(NAME_MAPPING_PROPERTY)


class RecordConversionError(DataException):
    """Converting the value at ``index`` of the batch failed; ``cause`` says why."""

    def __init__(self, index: int, cause: Exception):
        super().__init__(f"An error occurred converting record at batch index {index}: {cause}")
        self.index = index
        self.cause = cause
        self.__cause__ = cause


@dataclass
class ConversionResult:
    """An Arrow table of the table schema, or (when evolving) the schema updates it needs first.

    ``table`` is None exactly when ``updates`` is not empty.
    """

    table: pa.Table | None
    updates: SchemaUpdates = field(default_factory=SchemaUpdates)


@dataclass
class _Group:
    """Rows of one shape: dicts (``schema`` None) or Structs of one Connect schema."""

    schema: Schema | None
    rows: list
    indices: list[int] | None  # batch positions; None = all rows, in order
    _layout: "_DictLayout | None" = None

    @property
    def layout(self) -> "_DictLayout":
        """The keys of a dict group (computed once)."""
        if self._layout is None:
            self._layout = _DictLayout(self.rows)
        return self._layout


class _DictLayout:
    """The distinct keys of some dicts, in first-seen order; ``uniform`` if every dict has them all."""

    def __init__(self, rows: list[dict]):
        first = rows[0].keys() if rows else {}.keys()
        self.uniform = all(row.keys() == first for row in rows)
        if self.uniform:
            self.keys = list(first)
        else:
            seen: dict[Any, None] = {}
            for row in rows:
                seen.update(dict.fromkeys(row))
            self.keys = list(seen)

    def columns(self, rows: list[dict], keys: list[Any]) -> list[Sequence[Any]]:
        """The values of each of ``keys`` (None where missing), one sequence per key."""
        if not self.uniform:
            return [[row.get(key) for row in rows] for key in keys]
        return [list(map(itemgetter(key), rows)) for key in keys]


class RecordConverter:
    """Converts batches of Struct/dict values to Arrow tables of ``table_schema``.

    Args:
        table_schema: the Iceberg table's current schema.
        evolve: collect schema updates (``iceberg.tables.evolve-schema-enabled``).
        case_insensitive: look columns up ignoring case
            (``iceberg.tables.schema-case-insensitive``; ignored with a name mapping).
        force_optional: make the types of added columns optional throughout
            (``iceberg.tables.schema-force-optional``).
        name_mapping: the table's ``schema.name-mapping.default`` (JSON or parsed).
        replace_null_with_default: use a Struct field's schema default for nulls.
        schema_ids: the task's registry schema ids, to note which registry schema asked for updates.

    One instance per thread: converting is not thread-safe.
    """

    def __init__(
        self,
        table_schema: IcebergSchema,
        *,
        evolve: bool,
        case_insensitive: bool = False,
        force_optional: bool = False,
        name_mapping: NameMapping | str | None = None,
        replace_null_with_default: bool = True,
        schema_ids: RegistrySchemaIds | None = None,
    ):
        if isinstance(name_mapping, str):
            name_mapping = parse_mapping_from_json(name_mapping)
        self.table_schema = table_schema
        self.evolve = evolve
        self.force_optional = force_optional
        self.schema_ids = schema_ids
        self.arrow_schema = schema_to_pyarrow(table_schema)
        self._context = ConversionContext(
            table_schema,
            case_insensitive=case_insensitive,
            replace_null_with_default=replace_null_with_default,
            names_by_id=names_by_field_id(name_mapping),
        )
        self._root = StructConverter(table_schema.as_struct(), ROOT_ID, self._context)
        self._lookups: dict[int, FieldLookup] = {ROOT_ID: self._root.lookup}
        self._schema_updates: dict[Schema, SchemaUpdates] = {}

    @classmethod
    def for_table(cls, table: Table, *, evolve: bool, **options: Any) -> "RecordConverter":
        """A converter for ``table``'s current schema and name mapping."""
        return cls(table.schema(), evolve=evolve, name_mapping=name_mapping_of(table), **options)

    # --- API ----------------------------------------------------------------------

    def convert(self, values: Sequence[Struct | dict], schemas: Any = None) -> ConversionResult:
        """Convert a batch; RecordConversionError names the index of the failing value.

        ``schemas`` (the records' value schemas) may be given for symmetry with
        ``SinkRecord``; as in the Java sink, a Struct's own schema is what counts
        and dicts are converted schemaless.
        """
        groups = self._groups(values)
        updates = SchemaUpdates()
        if self.evolve:
            self._collect_schema_updates(groups, updates)
            if updates:
                return ConversionResult(None, updates)
            self._context.updates = updates
        try:
            table = self._table(groups, len(values))
        finally:
            self._context.updates = None
        return ConversionResult(None, updates) if updates else ConversionResult(table, updates)

    # --- grouping -------------------------------------------------------------------

    def _groups(self, values: Sequence[Any]) -> list[_Group]:
        rows = values if isinstance(values, list) else list(values)
        if rows and all(type(v) is dict for v in rows):
            return [_Group(None, rows, None)]
        if rows and type(rows[0]) is Struct:
            schema = rows[0].schema
            if all(type(v) is Struct and v.schema is schema for v in rows):
                return [_Group(schema, rows, None)]
        return self._mixed_groups(rows)

    @staticmethod
    def _mixed_groups(rows: list) -> list[_Group]:
        by_shape: dict[Any, _Group] = {}
        for index, value in enumerate(rows):
            if isinstance(value, dict):
                key: Any = None
            elif isinstance(value, Struct):
                key = value.schema
            else:
                cause = DataException(f"Cannot convert type: {type(value).__name__}")
                raise RecordConversionError(index, cause)
            group = by_shape.setdefault(key, _Group(key, [], []))
            group.rows.append(value)
            assert group.indices is not None
            group.indices.append(index)
        if len(by_shape) == 1:
            only = next(iter(by_shape.values()))
            return [_Group(only.schema, only.rows, None)]
        return list(by_shape.values())

    # --- schema evolution -------------------------------------------------------------

    def _collect_schema_updates(self, groups: list[_Group], updates: SchemaUpdates) -> None:
        for group in groups:
            if group.schema is None:
                self._dict_updates(group, updates)
                continue
            try:
                group_updates = self._struct_schema_updates(group.schema)
            except IncompatibleSchemaChange as exc:
                raise RecordConversionError(group.indices[0] if group.indices else 0, exc) from None
            for update in group_updates:
                updates.record(update)
            if group_updates:
                source = self.schema_ids.of_schema(group.schema) if self.schema_ids is not None else None
                if source is not None:
                    updates.note_registry_schema(*source)

    def _dict_updates(self, group: _Group, updates: SchemaUpdates) -> None:
        """Top-level keys no column matches, typed from their values in record order."""
        lookup = self._root.lookup
        unknown = [k for k in group.layout.keys if lookup.get(_field_name(k)) is None]
        for key, values in zip(unknown, group.layout.columns(group.rows, unknown)):
            for value in values:
                inferred = infer_iceberg_type(value)
                if inferred is not None:
                    updates.add_column(None, _field_name(key), inferred)

    def schema_updates_for(self, schema: Schema) -> SchemaUpdates:
        """The updates values of this Connect STRUCT schema ask of the table (none unless evolving).

        Raises :class:`IncompatibleSchemaChange` when the schema cannot be written to the table.
        """
        return self._struct_schema_updates(schema) if self.evolve else SchemaUpdates()

    def _struct_schema_updates(self, schema: Schema) -> SchemaUpdates:
        cached = self._schema_updates.get(schema)
        if cached is None:
            cached = SchemaUpdates()
            self._walk_struct(schema, self.table_schema.as_struct(), ROOT_ID, cached)
            self._schema_updates[schema] = cached
        return cached

    def _lookup(self, struct: ice.StructType, field_id: int) -> FieldLookup:
        lookup = self._lookups.get(field_id)
        if lookup is None:
            lookup = self._lookups[field_id] = FieldLookup(struct, self._context)
        return lookup

    def _walk_struct(self, schema: Schema, struct: ice.StructType, field_id: int, updates: SchemaUpdates) -> None:
        lookup = self._lookup(struct, field_id)
        parent = self._context.column_name(field_id)
        matched: set[int] = set()
        for connect_field in schema.fields():
            index = lookup.get(connect_field.name)
            if index is None:
                added = iceberg_type_for(connect_field.schema, force_optional=self.force_optional)
                updates.add_column(parent, connect_field.name, added)
                continue
            matched.add(index)
            table_field = struct.fields[index]
            self._walk_value(connect_field.schema, table_field.field_type, table_field.field_id,
                             table_field.required, updates)
        for index, table_field in enumerate(struct.fields):
            if table_field.required and index not in matched:  # dropped from the record's schema
                updates.make_optional(self._column_name(table_field.field_id))

    def _walk_value(self, schema: Schema, table_type: ice.IcebergType, field_id: int, required: bool,
                    updates: SchemaUpdates) -> None:
        """A field, list element or map value that exists in the table: widen, make optional, recurse."""
        name = self._column_name(field_id)
        record_type = conversion_conflict(table_type, schema)
        if record_type is not None:
            raise IncompatibleSchemaChange(name, field_id, table_type, record_type)
        changed = False
        widened = widened_type_for(table_type, schema)
        if widened is not None:
            updates.update_type(name, widened)
            changed = True
        if required and schema.optional:
            updates.make_optional(name)
            changed = True
        # As in Java, a field that changes is not looked into yet (its nested updates come the
        # round after); it is still checked for incompatible changes now.
        self._walk_nested(schema, table_type, field_id, SchemaUpdates() if changed else updates)

    def _column_name(self, field_id: int) -> str:
        name = self.table_schema.find_column_name(field_id)
        assert name is not None
        return name

    def _walk_nested(self, schema: Schema, table_type: ice.IcebergType, field_id: int, updates: SchemaUpdates) -> None:
        if schema.type is Type.STRUCT and isinstance(table_type, ice.StructType):
            self._walk_struct(schema, table_type, field_id, updates)
        elif schema.type is Type.ARRAY and isinstance(table_type, ice.ListType):
            assert schema.value_schema is not None
            self._walk_value(schema.value_schema, table_type.element_type, table_type.element_id,
                             table_type.element_required, updates)
        elif schema.type is Type.MAP and isinstance(table_type, ice.MapType):
            assert schema.value_schema is not None
            self._walk_value(schema.value_schema, table_type.value_type, table_type.value_id,
                             table_type.value_required, updates)

    # --- columns --------------------------------------------------------------------

    def _table(self, groups: list[_Group], count: int) -> pa.Table:
        if count == 0:
            return self.arrow_schema.empty_table()
        if len(groups) == 1 and groups[0].indices is None:
            columns = self._group_columns(groups[0])
            return pa.Table.from_arrays(columns, schema=self.arrow_schema)
        per_group = [self._group_columns(group) for group in groups]
        order = [i for group in groups for i in (group.indices or [])]
        positions = pa.array(_inverse(order, count), type=pa.int64())
        columns = [
            pa.concat_arrays([arrays[j] for arrays in per_group]).take(positions)
            for j in range(len(self.arrow_schema))
        ]
        return pa.Table.from_arrays(columns, schema=self.arrow_schema)

    def _group_columns(self, group: _Group) -> list[pa.Array]:
        """One Arrow array per table column; raises the error of the group's first bad row."""
        if group.schema is None:
            raw = self._dict_columns(group)
        else:
            raw = self._struct_columns(group.schema, group.rows)
        arrays: list[pa.Array] = []
        errors: list[ColumnError] = []
        for table_field, converter, (values, convert) in zip(self._root.fields, self._root.children, raw):
            try:
                array = converter.to_arrow(values, convert)
                if table_field.required and array.null_count:
                    raise ColumnError(
                        _first_null(array), DataException(f"Null value for required field: {table_field.name}")
                    )
                arrays.append(array)
            except ColumnError as e:
                errors.append(e)
        if errors:
            first = min(errors, key=lambda e: e.index)
            index = first.index if group.indices is None else group.indices[first.index]
            raise RecordConversionError(index, first.cause)
        return arrays

    def _dict_columns(self, group: _Group) -> list[tuple[Sequence[Any], Any]]:
        rows, layout = group.rows, group.layout
        keys_by_field: dict[int, list[Any]] = {}
        for key in layout.keys:
            index = self._root.lookup.get(_field_name(key))
            if index is not None:
                keys_by_field.setdefault(index, []).append(key)
        single = [keys[0] for keys in keys_by_field.values() if len(keys) == 1]
        by_key = dict(zip(single, layout.columns(rows, single)))
        columns: list[tuple[Sequence[Any], Any]] = []
        for index in range(len(self._root.fields)):
            keys = keys_by_field.get(index, [])
            if not keys:
                columns.append(([None] * len(rows), None))
            elif len(keys) == 1:
                columns.append((by_key[keys[0]], None))
            else:
                columns.append((_last_of(rows, set(keys)), None))
        return columns

    def _struct_columns(self, schema: Schema, rows: list[Struct]) -> list[tuple[Sequence[Any], Any]]:
        plan = {name: (connect_field, convert) for connect_field, name, convert in self._root.plan_for(schema)}
        use_default = self._context.replace_null_with_default
        columns: list[tuple[Sequence[Any], Any]] = []
        for table_field in self._root.fields:
            entry = plan.get(table_field.name)
            if entry is None:
                columns.append(([None] * len(rows), None))
                continue
            connect_field, convert = entry
            if use_default:
                values = [row.get(connect_field) for row in rows]
            else:
                values = [row.get_without_default(connect_field) for row in rows]
            columns.append((values, convert))
        return columns


def registry_schema_note(schema: Schema | None, schema_ids: RegistrySchemaIds) -> SchemaUpdates | None:
    """Provenance-only updates naming the registry schema of ``schema`` (a new table's sample), or None."""
    source = schema_ids.of_schema(schema)
    if source is None:
        return None
    note = SchemaUpdates()
    note.note_registry_schema(*source)
    return note


_INTEGERS = (ice.IntegerType, ice.LongType)
_NUMBERS = (ice.IntegerType, ice.LongType, ice.FloatType, ice.DoubleType)
_TEMPORAL = (ice.DateType, ice.TimeType, ice.TimestampType, ice.TimestamptzType)
_BINARY = (ice.BinaryType, ice.FixedType, ice.UUIDType)


def conversion_conflict(table_type: ice.IcebergType, schema: Schema) -> ice.IcebergType | None:
    """The record's Iceberg type when a column of ``table_type`` cannot take values of ``schema``, else None.

    A column takes: its own type; a type it widens to (int -> long, float ->
    double: an evolution); narrower numbers (int into long, any integer or
    float into float/double, integers and same-scale decimals into a decimal);
    integers, strings and other temporal values into dates, times and
    timestamps; strings and bytes into uuid and bytes columns; maps into
    structs; and structs, lists and maps into strings (as JSON text) — the
    conversions the Iceberg sink performs without changing what the column
    means. Anything else (string -> int, int -> string, boolean -> int,
    decimal scale changes, struct -> list, ...) is a conflict. Nested types
    only compare their kind here; their contents are checked field by field.
    """
    record_type = iceberg_type_for(schema)
    return None if _writable(table_type, record_type) else record_type


def _writable(table: ice.IcebergType, record: ice.IcebergType) -> bool:
    if isinstance(table, ice.StructType):
        return isinstance(record, (ice.StructType, ice.MapType))
    if isinstance(table, (ice.ListType, ice.MapType)):
        return type(record) is type(table)
    if isinstance(record, (ice.StructType, ice.ListType, ice.MapType)):
        return isinstance(table, ice.StringType)
    if isinstance(table, ice.DecimalType):
        return isinstance(record, _INTEGERS) or (isinstance(record, ice.DecimalType) and record.scale == table.scale)
    if isinstance(table, _INTEGERS):
        return isinstance(record, _INTEGERS)
    if isinstance(table, (ice.FloatType, ice.DoubleType)):
        return isinstance(record, _NUMBERS)
    if isinstance(table, _TEMPORAL):
        return isinstance(record, _TEMPORAL + _INTEGERS + (ice.StringType,))
    if isinstance(table, _BINARY):
        return isinstance(record, _BINARY) or (isinstance(table, ice.UUIDType) and isinstance(record, ice.StringType))
    if isinstance(table, ice.StringType):
        return isinstance(record, (ice.StringType, ice.UUIDType))
    if isinstance(table, ice.BooleanType):
        return isinstance(record, ice.BooleanType)
    return table == record


def _field_name(key: Any) -> str:
    """A dict key as a field name (Java: ``toString()``)."""
    return key if isinstance(key, str) else str(key)


def _last_of(rows: list[dict], keys: set[Any]) -> list[Any]:
    """Per row, the value of the last of ``keys`` in the row (several keys match case-insensitively)."""
    column = []
    for row in rows:
        value = None
        for key, item in row.items():
            if key in keys:
                value = item
        column.append(value)
    return column


def _inverse(order: list[int], count: int) -> list[int]:
    positions = [0] * count
    for position, index in enumerate(order):
        positions[index] = position
    return positions


def _first_null(array: pa.Array) -> int:
    for index, valid in enumerate(array.is_valid().to_pylist()):
        if not valid:
            return index
    return 0
