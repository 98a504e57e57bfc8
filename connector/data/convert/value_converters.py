"""Converters from Connect/schemaless values to Arrow-ready values, one per Iceberg type.

A converter tree is built once per table schema. Each node turns a non-null
value into what ``pyarrow.array`` accepts for its Arrow type (dicts for
structs, lists for lists, ``(key, value)`` pairs for maps, integers for
temporal types) and builds whole top-level columns with fast paths for values
that already have the column's Python type.

Struct nodes look fields up by name (case-insensitively if configured, or by
the table's name mapping). While an evolving conversion runs, a struct node
that meets a dict with an unknown key records an :class:`AddColumn` with the
key's inferred type, as the sink does for Map values; Struct values are
evolved from their schema by the record converter instead.
"""

from __future__ import annotations

import abc
import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg import types as ice
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.table.name_mapping import MappedField, NameMapping

from connector.api.errors import DataException
from connector.api.java.numbers import float_to_string
from connector.api.schema import Field, Schema, Type
from connector.api.struct import Struct
from connector.data.convert.coercion import primitive_coercer, to_string
from connector.data.convert.schema_update import SchemaUpdates
from connector.data.convert.temporal import MICROS_PER_DAY
from connector.data.convert.type_mapping import infer_iceberg_type

ROOT_ID = -1


class ColumnError(Exception):
    """Conversion of a column failed at row ``index`` (of the rows given to it)."""

    def __init__(self, index: int, cause: Exception):
        super().__init__(str(cause))
        self.index = index
        self.cause = cause


@dataclass
class ConversionContext:
    """What every converter of one table schema shares."""

    table_schema: IcebergSchema
    case_insensitive: bool = False
    replace_null_with_default: bool = True
    names_by_id: dict[int, list[str]] | None = None
    updates: SchemaUpdates | None = field(default=None, repr=False)

    def column_name(self, field_id: int) -> str | None:
        """Full name of a field (``a.b``, ``li.element``), None for the root."""
        return None if field_id == ROOT_ID else self.table_schema.find_column_name(field_id)


def names_by_field_id(mapping: NameMapping | None) -> dict[int, list[str]] | None:
    """Field id → accepted names, from a table's name mapping."""
    if mapping is None:
        return None
    result: dict[int, list[str]] = {}

    def visit(fields: Sequence[MappedField]) -> None:
        for mapped in fields:
            if mapped.field_id is not None:
                result[mapped.field_id] = list(mapped.names)
            visit(mapped.fields)

    visit(list(mapping))
    return result


class FieldLookup:
    """Record field name → index of the table struct's field."""

    def __init__(self, struct: ice.StructType, context: ConversionContext):
        self._lower = context.case_insensitive and context.names_by_id is None
        self._index: dict[str, int] = {}
        for index, table_field in enumerate(struct.fields):
            for name in self._names_of(table_field, context):
                self._index[name.lower() if self._lower else name] = index

    @staticmethod
    def _names_of(table_field: ice.NestedField, context: ConversionContext) -> list[str]:
        if context.names_by_id is not None:
            mapped = context.names_by_id.get(table_field.field_id)
            if mapped:
                return mapped
        return [table_field.name]

    def get(self, name: str) -> int | None:
        return self._index.get(name.lower() if self._lower else name)


# --- the converter tree ---------------------------------------------------------------


class ValueConverter(abc.ABC):
    """Converts non-null values to one Iceberg type; see the module doc."""

    def __init__(self, iceberg_type: ice.IcebergType, arrow_type: pa.DataType):
        self.iceberg_type = iceberg_type
        self.arrow_type = arrow_type
        # pyarrow cannot build extension types (uuid) from Python values inside
        # nested types: build the storage type, then cast to the real type.
        self.build_type = storage_type(arrow_type)

    @abc.abstractmethod
    def convert(self, value: Any) -> Any:
        """Convert one value to the column's Arrow-ready Python value."""

    def for_connect(self, schema: Schema | None) -> Callable[[Any], Any]:
        """The conversion function for values of a Connect schema (default: :meth:`convert`)."""
        return self.convert

    def to_arrow(self, values: Sequence[Any], convert: Callable[[Any], Any] | None = None) -> pa.Array:
        """An Arrow array of ``values`` (None = null); ColumnError locates a failure."""
        return self._slow_array(values, convert or self.convert)

    def _slow_array(self, values: Sequence[Any], convert: Callable[[Any], Any]) -> pa.Array:
        try:
            converted = [None if v is None else convert(v) for v in values]
        except Exception:  # noqa: BLE001 - any failure is located and reported per value below
            converted = _convert_locating(values, convert)
        try:
            array = pa.array(converted, type=self.build_type)
        except (pa.ArrowException, ValueError, TypeError, OverflowError) as e:
            raise ColumnError(_first_unbuildable(converted, self.build_type), DataException(str(e))) from e
        return array if self.build_type == self.arrow_type else array.cast(self.arrow_type)


def _convert_locating(values: Sequence[Any], convert: Callable[[Any], Any]) -> list:
    out = []
    for index, value in enumerate(values):
        try:
            out.append(None if value is None else convert(value))
        except Exception as e:
            raise ColumnError(index, e if isinstance(e, DataException) else DataException(str(e))) from e
    return out


def _first_unbuildable(values: list, arrow_type: pa.DataType) -> int:
    for index, value in enumerate(values):
        try:
            pa.array([value], type=arrow_type)
        except (pa.ArrowException, ValueError, TypeError, OverflowError):
            return index
    return 0


def storage_type(arrow_type: pa.DataType) -> pa.DataType:
    """``arrow_type`` with every extension type replaced by its storage type."""
    if isinstance(arrow_type, pa.BaseExtensionType):
        return arrow_type.storage_type
    if pa.types.is_struct(arrow_type):
        return pa.struct([_storage_field(arrow_type.field(i)) for i in range(arrow_type.num_fields)])
    if pa.types.is_large_list(arrow_type):
        return pa.large_list(_storage_field(arrow_type.value_field))
    if pa.types.is_list(arrow_type):
        return pa.list_(_storage_field(arrow_type.value_field))
    if pa.types.is_map(arrow_type):
        return pa.map_(_storage_field(arrow_type.key_field), _storage_field(arrow_type.item_field))
    return arrow_type


def _storage_field(arrow_field: pa.Field) -> pa.Field:
    return arrow_field.with_type(storage_type(arrow_field.type))


class PrimitiveConverter(ValueConverter):
    """A primitive column: a coercer plus fast paths for values already of the right type."""

    def __init__(self, iceberg_type: ice.IcebergType, arrow_type: pa.DataType):
        super().__init__(iceberg_type, arrow_type)
        # The coercer itself shadows the method below: no extra call per value.
        self.convert = primitive_coercer(iceberg_type)  # type: ignore[method-assign,assignment]

    def convert(self, value: Any) -> Any:
        return primitive_coercer(self.iceberg_type)(value)

    def for_connect(self, schema: Schema | None) -> Callable[[Any], Any]:
        if isinstance(self.iceberg_type, ice.StringType) and schema is not None and schema.type is Type.FLOAT32:
            return _float32_text
        return self.convert

    def to_arrow(self, values: Sequence[Any], convert: Callable[[Any], Any] | None = None) -> pa.Array:
        if convert is None or convert is self.convert:
            fast = _fast_array(self.iceberg_type, self.arrow_type, values)
            if fast is not None:
                return fast
        return self._slow_array(values, convert or self.convert)


def _float32_text(value: Any) -> str:
    return float_to_string(value) if isinstance(value, float) else to_string(value)


class StructConverter(ValueConverter):
    """A struct from a dict or a Connect Struct; unknown fields ignored (or evolved, for dicts)."""

    def __init__(self, struct: ice.StructType, field_id: int, context: ConversionContext, evolvable: bool = True):
        super().__init__(struct, schema_to_pyarrow(struct))
        self.context = context
        self.field_id = field_id
        self.fields = list(struct.fields)
        self.children = [converter_for(f.field_type, f.field_id, context, evolvable) for f in self.fields]
        self.lookup = FieldLookup(struct, context)
        self.evolvable = evolvable
        self._required = [f.name for f in self.fields if f.required]
        self._plans: dict[Schema, list[tuple[Field, str, Callable[[Any], Any]]]] = {}

    def convert(self, value: Any) -> dict:
        if isinstance(value, dict):
            result = self._from_dict(value)
        elif isinstance(value, Struct):
            result = self._from_struct(value)
        else:
            raise DataException(f"Cannot convert to struct: {type(value).__name__}")
        for name in self._required:
            if result.get(name) is None:
                raise DataException(f"Null value for required field: {self._full_name(name)}")
        return result

    def _full_name(self, name: str) -> str:
        parent = self.context.column_name(self.field_id)
        return name if parent is None else f"{parent}.{name}"

    def _from_dict(self, value: dict) -> dict:
        result: dict[str, Any] = {}
        for key, item in value.items():
            name = key if isinstance(key, str) else _key_text(key)
            index = self.lookup.get(name)
            if index is None:
                self._evolve(name, item)
                continue
            result[self.fields[index].name] = None if item is None else self.children[index].convert(item)
        return result

    def _evolve(self, name: str, item: Any) -> None:
        updates = self.context.updates
        if updates is None or not self.evolvable:
            return
        inferred = infer_iceberg_type(item)
        if inferred is not None:
            updates.add_column(self.context.column_name(self.field_id), name, inferred)

    def _from_struct(self, value: Struct) -> dict:
        get = value.get if self.context.replace_null_with_default else value.get_without_default
        result: dict[str, Any] = {}
        for connect_field, name, convert in self.plan_for(value.schema):
            item = get(connect_field)
            result[name] = None if item is None else convert(item)
        return result

    def plan_for(self, schema: Schema) -> list[tuple[Field, str, Callable[[Any], Any]]]:
        """(Connect field, table field name, conversion) for the fields of a Struct schema."""
        plan = self._plans.get(schema)
        if plan is None:
            plan = []
            for connect_field in schema.fields():
                index = self.lookup.get(connect_field.name)
                if index is not None:
                    converter = self.children[index].for_connect(connect_field.schema)
                    plan.append((connect_field, self.fields[index].name, converter))
            self._plans[schema] = plan
        return plan


def _key_text(key: Any) -> str:
    if key is None:
        raise DataException("Cannot convert a null field name")
    return to_string(key)


class ListConverter(ValueConverter):
    """A list from a Python list or tuple, element by element."""

    def __init__(self, list_type: ice.ListType, context: ConversionContext, evolvable: bool):
        super().__init__(list_type, schema_to_pyarrow(list_type))
        self.element = converter_for(list_type.element_type, list_type.element_id, context, evolvable)
        self.element_required = list_type.element_required
        self._name = lambda: context.column_name(list_type.element_id)

    def convert(self, value: Any) -> list:
        if not isinstance(value, (list, tuple)):
            raise DataException(f"Cannot convert to list: {type(value).__name__}")
        convert = self.element.convert
        result = [None if item is None else convert(item) for item in value]
        if self.element_required and None in result:
            raise DataException(f"Null value for required field: {self._name()}")
        return result


class MapConverter(ValueConverter):
    """A map from a dict, as ``(key, value)`` pairs; keys are never evolved."""

    def __init__(self, map_type: ice.MapType, context: ConversionContext, evolvable: bool):
        super().__init__(map_type, schema_to_pyarrow(map_type))
        self.key = converter_for(map_type.key_type, map_type.key_id, context, evolvable=False)
        self.value = converter_for(map_type.value_type, map_type.value_id, context, evolvable)
        self.value_required = map_type.value_required
        self._name = lambda: context.column_name(map_type.value_id)

    def convert(self, value: Any) -> list:
        if not isinstance(value, dict):
            raise DataException(f"Cannot convert to map: {type(value).__name__}")
        pairs = [(self._key(k), None if v is None else self.value.convert(v)) for k, v in value.items()]
        if self.value_required and any(v is None for _, v in pairs):
            raise DataException(f"Null value for required field: {self._name()}")
        try:
            return list(dict(pairs).items())  # converted keys may collide; the last wins (HashMap.put)
        except TypeError:
            return pairs

    def _key(self, key: Any) -> Any:
        if key is None:
            raise DataException("Null map key")
        return self.key.convert(key)


def converter_for(
    iceberg_type: ice.IcebergType, field_id: int, context: ConversionContext, evolvable: bool = True
) -> ValueConverter:
    """The converter tree for an Iceberg type (``field_id`` is the id of the field holding it)."""
    if isinstance(iceberg_type, ice.StructType):
        return StructConverter(iceberg_type, field_id, context, evolvable)
    if isinstance(iceberg_type, ice.ListType):
        return ListConverter(iceberg_type, context, evolvable)
    if isinstance(iceberg_type, ice.MapType):
        return MapConverter(iceberg_type, context, evolvable)
    return PrimitiveConverter(iceberg_type, schema_to_pyarrow(iceberg_type))


# --- fast paths for primitive columns ------------------------------------------------------


def _python_types(values: Sequence[Any]) -> set[type]:
    types = set(map(type, values))
    types.discard(type(None))
    return types


def _fast_array(iceberg_type: ice.IcebergType, arrow_type: pa.DataType, values: Sequence[Any]) -> pa.Array | None:
    """The column built directly by Arrow when that is exactly the coercion's result, else None."""
    types = _python_types(values)
    builder = _FAST_BUILDERS.get((type(iceberg_type), frozenset(types)))
    if builder is None:
        return None
    try:
        return builder(values, arrow_type)
    except (pa.ArrowException, OverflowError, ValueError, TypeError):
        return None  # out of range and the like: the slow path reports it per value


def _direct(values: Sequence[Any], arrow_type: pa.DataType) -> pa.Array:
    return pa.array(values, type=arrow_type)


def _epoch_millis(values: Sequence[Any], arrow_type: pa.DataType) -> pa.Array:
    micros = pc.multiply_checked(pa.array(values, type=pa.int64()), 1000)
    return micros.cast(arrow_type)


def _epoch_days(values: Sequence[Any], arrow_type: pa.DataType) -> pa.Array:
    return pa.array(values, type=pa.int32()).cast(arrow_type)


def _millis_of_day(values: Sequence[Any], arrow_type: pa.DataType) -> pa.Array:
    micros = pc.multiply_checked(pa.array(values, type=pa.int64()), 1000)
    bounds = pc.min_max(micros).as_py()
    if bounds["min"] is not None and (bounds["min"] < 0 or bounds["max"] >= MICROS_PER_DAY):
        raise ValueError("time of day out of range")
    return micros.cast(arrow_type)


_FAST_BUILDERS: dict[tuple[type, frozenset], Callable[[Sequence[Any], pa.DataType], pa.Array]] = {}
for _iceberg, _python, _builder in (
    (ice.IntegerType, int, _direct),
    (ice.LongType, int, _direct),
    (ice.FloatType, float, _direct),
    (ice.DoubleType, float, _direct),
    (ice.BooleanType, bool, _direct),
    (ice.StringType, str, _direct),
    (ice.TimestamptzType, int, _epoch_millis),
    (ice.TimestamptzType, _dt.datetime, _direct),
    (ice.TimestampType, int, _epoch_millis),
    (ice.DateType, int, _epoch_days),
    (ice.DateType, _dt.date, _direct),
    (ice.TimeType, int, _millis_of_day),
    (ice.TimeType, _dt.time, _direct),
):
    _FAST_BUILDERS[(_iceberg, frozenset({_python}))] = _builder
    _FAST_BUILDERS[(_iceberg, frozenset())] = _direct  # all null
