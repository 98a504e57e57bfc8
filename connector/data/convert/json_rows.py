"""Schemaless JSON bytes → Arrow table of the table schema, with ``pyarrow.json`` when it is exact.

The per-record path (``json.loads`` each value, then :class:`RecordConverter`)
is the specification; :class:`JsonBatchConverter` gives the same table, or
the same error, faster: it parses the newline-joined batch with
``pyarrow.json`` using an explicit schema derived from the table, then turns
the parsed columns into the table's Arrow types with the coercions the
per-record path would apply.

The fast path only produces a table when it can prove the result identical;
otherwise the whole batch goes through the per-record path, so errors are
always the per-record ones. It declines when:

* a value is not one single-line JSON object (``{`` ... ``}``) or the reader
  fails (syntax, duplicate keys, a value of another JSON kind than declared);
* a key the table lacks carries a value while evolving (the per-record path
  infers its type), or matches a column only case-insensitively;
* a required column or nested field is null, or a value is out of range;
* a column holds a type the fast path cannot reproduce (maps; temporal,
  decimal, uuid or binary values inside nested types) with non-null values;
* the table has a name mapping, or case-insensitive lookup is ambiguous.

JSON itself decides part of the declared schema: pyarrow needs to know
whether a timestamp, date, time or decimal column holds numbers or strings
(declaring a timestamp type would let pyarrow parse strings its own way and
read numbers as the wrong unit). The converter guesses "number", and flips a
column's guess when the reader reports that the column holds the other kind;
the guess sticks for later batches.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json
from pyiceberg import types as ice
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.table import Table
from pyiceberg.table.name_mapping import NameMapping

from connector.api.declined import Declined, guarded
from connector.api.errors import DataException
from connector.data.convert import coercion, temporal
from connector.data.convert.record_converter import (
    ConversionResult,
    RecordConversionError,
    RecordConverter,
    name_mapping_of,
)
from connector.data.convert.schema_update import SchemaUpdates
from connector.data.convert.value_converters import storage_type
from converters.batch.json_payloads import newline_joined
from converters.batch.json_screen import check_lax_tokens

log = logging.getLogger(__name__)

NUMBER, STRING = "number", "string"
_KIND_CHANGE = re.compile(r"Column\(/([^/)]*)\) changed from (\w+) to (\w+)")
_EXACT_DOUBLE_LIMIT = 2.0**53
_LONG_LIMIT = 2.0**63
_INT32 = (-(2**31), 2**31 - 1)
_OPEN_BRACE, _NEWLINE, _CARRIAGE_RETURN = ord("{"), ord("\n"), ord("\r")

# Decline reasons that name no key: keys come from the data, and reasons are counted.
_NEW_COLUMN = "a key the table lacks (a new column)"
_CASE_MISMATCH = "a key matches a column only case-insensitively"
_UNKNOWN_NESTED = "a nested key the table lacks"
_MIXED_KINDS = "a key holds values of different JSON kinds"
_BROKEN_LISTS = "pyarrow built invalid list arrays"


# --- per-column plans --------------------------------------------------------------------

Finish = Callable[[pa.Array], pa.Array]


@dataclass
class _Column:
    """How one top-level column is declared to pyarrow and finished into the table type."""

    name: str
    target: pa.DataType
    required: bool
    declared: dict[str, tuple[pa.DataType, Finish]] | None  # JSON kind → (declared type, finish)
    guess: str | None = NUMBER  # current kind for guessed columns; None: one exact declaration

    @property
    def choice(self) -> tuple[pa.DataType, Finish] | None:
        if self.declared is None:
            return None
        return self.declared[self.guess or NUMBER]


def _column_plan(name: str, iceberg_type: ice.IcebergType, target: pa.DataType, required: bool,
                 strict: bool) -> _Column:
    exact = _exact(iceberg_type, target, strict)
    if exact is not None:
        return _Column(name, target, required, {NUMBER: exact}, guess=None)
    guessed = _guessed(iceberg_type, target)
    return _Column(name, target, required, guessed, guess=next(iter(guessed)) if guessed else None)


def _exact(iceberg_type: ice.IcebergType, target: pa.DataType, strict: bool) -> tuple[pa.DataType, Finish] | None:
    """Declared type and finishing step for types whose JSON kind is fixed."""
    if type(iceberg_type) in _FIXED_KIND_PRIMITIVES:
        return _FIXED_KIND_PRIMITIVES[type(iceberg_type)]
    if isinstance(iceberg_type, ice.ListType):
        return _exact_list(iceberg_type, target, strict)
    if isinstance(iceberg_type, ice.StructType):
        return _exact_struct(iceberg_type, target, strict)
    return None


def _exact_list(list_type: ice.ListType, target: pa.DataType, strict: bool) -> tuple[pa.DataType, Finish] | None:
    element = _exact(list_type.element_type, target.value_type, strict)
    if element is None:
        return None
    declared = pa.list_(pa.field("element", element[0]))
    return declared, lambda parsed: _finish_list(parsed, element[1], target, list_type.element_required)


def _exact_struct(struct: ice.StructType, target: pa.DataType, strict: bool) -> tuple[pa.DataType, Finish] | None:
    """``strict``: a nested key the struct lacks matters (evolving, or case-insensitive lookup)."""
    children = []
    for index, field in enumerate(struct.fields):
        child = _exact(field.field_type, target.field(index).type, strict)
        if child is None:
            return None
        children.append((field.name, field.required, child))
    declared = pa.struct([pa.field(name, child[0]) for name, _, child in children])
    return declared, lambda parsed: _finish_struct(parsed, children, target, strict)


def _guessed(iceberg_type: ice.IcebergType, target: pa.DataType) -> dict[str, tuple[pa.DataType, Finish]] | None:
    """Declarations for types whose JSON kind varies: numbers or strings."""
    if isinstance(iceberg_type, (ice.TimestampType, ice.TimestamptzType)):
        utc = isinstance(iceberg_type, ice.TimestamptzType)
        return {
            NUMBER: (pa.int64(), lambda a: _millis_to(a, target)),
            STRING: (pa.large_string(), lambda a: _parsed(temporal.parse_timestamp_array(a, utc))),
        }
    if isinstance(iceberg_type, ice.DateType):
        return {
            NUMBER: (pa.int64(), lambda a: _to_int32(a).cast(target)),
            STRING: (pa.large_string(), lambda a: _parsed(temporal.parse_date_array(a))),
        }
    if isinstance(iceberg_type, ice.TimeType):
        return {
            NUMBER: (pa.int64(), lambda a: _millis_of_day(a, target)),
            STRING: (pa.large_string(), _per_value(temporal.parse_time_micros, target)),
        }
    if isinstance(iceberg_type, ice.DecimalType):
        coerce = coercion.primitive_coercer(iceberg_type)
        return {
            NUMBER: (pa.float64(), _exact_doubles(_per_value(coerce, target))),
            STRING: (pa.large_string(), _per_value(coerce, target)),
        }
    if isinstance(iceberg_type, (ice.UUIDType, ice.BinaryType, ice.FixedType)):
        coerce = coercion.primitive_coercer(iceberg_type)
        return {STRING: (pa.large_string(), _per_value(coerce, target))}
    return None


# --- finishing steps ------------------------------------------------------------------------


def _identity(parsed: pa.Array) -> pa.Array:
    return parsed


def _parsed(result: pa.Array | None) -> pa.Array:
    if result is None:
        raise Declined("strings need the scalar parser")
    return result


def _check_range(parsed: pa.Array, low: int, high: int) -> None:
    bounds = pc.min_max(parsed).as_py()
    if bounds["min"] is not None and (bounds["min"] < low or bounds["max"] > high):
        raise Declined("value out of range")


def _to_int32(parsed: pa.Array) -> pa.Array:
    _check_range(parsed, *_INT32)
    return parsed.cast(pa.int32())


def _to_float32(parsed: pa.Array) -> pa.Array:
    return _as_jackson_reads(parsed).cast(pa.float32(), safe=False)


def _as_jackson_reads(parsed: pa.Array) -> pa.Array:
    """Doubles pyarrow read where JsonConverter reads the same number: no -0.0 (Jackson's exact
    decimals have no negative zero), nothing from 2**63 on (an integer token there is a long to
    JsonConverter, wrapped to its low 64 bits; a double token is rare and goes per record too)."""
    if parsed.null_count == len(parsed):
        return parsed
    if _max_abs(parsed) >= _LONG_LIMIT:
        raise Declined("a number from 2**63 on (an integer JsonConverter wraps)")
    if _has_negative_zero(parsed):
        raise Declined("-0.0 (JsonConverter reads 0.0)")
    return parsed


#: The primitive types whose JSON kind is fixed: the type pyarrow reads them as, and the finishing step.
_FIXED_KIND_PRIMITIVES: dict[type, tuple[pa.DataType, Finish]] = {
    ice.BooleanType: (pa.bool_(), _identity),
    ice.LongType: (pa.int64(), _identity),
    ice.IntegerType: (pa.int64(), _to_int32),
    ice.DoubleType: (pa.float64(), _as_jackson_reads),
    ice.FloatType: (pa.float64(), _to_float32),
    ice.StringType: (pa.large_string(), _identity),
}


def _millis_to(parsed: pa.Array, target: pa.DataType) -> pa.Array:
    _check_range(parsed, -((2**63) // 1000), (2**63 - 1) // 1000)
    return pc.multiply(parsed, 1000).cast(target)


def _millis_of_day(parsed: pa.Array, target: pa.DataType) -> pa.Array:
    _check_range(parsed, 0, temporal.MICROS_PER_DAY // 1000 - 1)
    return pc.multiply(parsed, 1000).cast(target)


def _per_value(coerce: Callable[[Any], Any], target: pa.DataType) -> Finish:
    build = storage_type(target)

    def finish(parsed: pa.Array) -> pa.Array:
        try:
            values = [None if v is None else coerce(v) for v in parsed.to_pylist()]
        except DataException as e:  # the per-record path reports it with the record index
            raise Declined("a value the per-record coercion rejects") from e
        array = pa.array(values, type=build)
        return array if build == target else array.cast(target)

    return finish


def _exact_doubles(finish: Finish) -> Finish:
    """Doubles read by pyarrow equal json.loads' values unless an integer lost precision."""

    def checked(parsed: pa.Array) -> pa.Array:
        bounds = pc.min_max(pc.abs(parsed)).as_py()
        if bounds["max"] is not None and bounds["max"] >= _EXACT_DOUBLE_LIMIT:
            raise Declined("number beyond exact double range")
        return finish(parsed)

    return checked


def _no_nulls_where_valid(child: pa.Array, parent_valid: pa.Array | None) -> None:
    nulls = child.is_null()
    if parent_valid is not None:
        nulls = pc.and_(nulls, parent_valid)
    if pc.any(nulls).as_py():
        raise Declined("null in a required field")


def _finish_list(parsed: pa.Array, finish_element: Finish, target: pa.DataType, element_required: bool) -> pa.Array:
    values = parsed.values
    if element_required:
        _no_nulls_where_valid(values, None)
    elements = finish_element(values)
    offsets = pc.subtract(parsed.offsets, parsed.offsets[0]).cast(pa.int64())
    mask = parsed.is_null() if parsed.null_count else None
    return pa.LargeListArray.from_arrays(offsets, elements, type=target, mask=mask)


def _finish_struct(
    parsed: pa.Array, children: list[tuple[str, bool, tuple[pa.DataType, Finish]]], target: pa.DataType, strict: bool
) -> pa.Array:
    parsed_type = parsed.type
    declared = {name for name, _, _ in children}
    for index in range(parsed_type.num_fields):
        extra = parsed_type.field(index)
        if strict and extra.name not in declared and _carries_value(extra.type):
            raise Declined(_UNKNOWN_NESTED)
    valid = parsed.is_valid() if parsed.null_count else None
    arrays = []
    for name, required, (_, finish) in children:
        child = parsed.field(name)
        if required:
            _no_nulls_where_valid(child, valid)
        arrays.append(finish(child))
    mask = parsed.is_null() if parsed.null_count else None
    fields = [target.field(i) for i in range(target.num_fields)]
    return pa.StructArray.from_arrays(arrays, fields=fields, mask=mask)


def _carries_value(arrow_type: pa.DataType) -> bool:
    """Whether a value of this pyarrow-inferred type can be typed by the per-record inference."""
    if pa.types.is_null(arrow_type):
        return False
    if pa.types.is_struct(arrow_type):
        return any(_carries_value(arrow_type.field(i).type) for i in range(arrow_type.num_fields))
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return _carries_value(arrow_type.value_type)
    return True


# --- the converter ---------------------------------------------------------------------------


class JsonBatchConverter:
    """Converts batches of schemaless JSON values (bytes) like ``json.loads`` + :class:`RecordConverter`.

    Takes the options of :class:`RecordConverter`. :meth:`convert` takes the
    column-wise path when it can and counts the batches it did not, by reason,
    in ``declines`` (``fast_batches`` counts the others). Values must be JSON
    objects; drop tombstones (null values) before converting.
    """

    def __init__(self, table_schema: IcebergSchema, *, evolve: bool, case_insensitive: bool = False,
                 name_mapping: NameMapping | str | None = None, **options: Any):
        # evolve, case_insensitive and name_mapping shape the column-wise path too; RecordConverter's
        # other options (force_optional) concern only the per-record path.
        self.evolve = evolve
        self.records = RecordConverter(table_schema, evolve=evolve, case_insensitive=case_insensitive,
                                       name_mapping=name_mapping, **options)
        self.arrow_schema = schema_to_pyarrow(table_schema)
        strict = evolve or case_insensitive
        self._columns = [
            _column_plan(f.name, f.field_type, self.arrow_schema.field(i).type, f.required, strict)
            for i, f in enumerate(table_schema.fields)
        ]
        names = [f.name for f in table_schema.fields]
        self._case_insensitive = case_insensitive
        self._lower_names = {n.lower() for n in names}
        self._disabled = _why_disabled(name_mapping, case_insensitive and len(self._lower_names) < len(names))
        self.fast_batches = 0
        self.declines: Counter[str] = Counter()  # batches convert() left to the per-record path, by reason
        self.last_decline_reason: str | None = None

    @classmethod
    def for_table(cls, table: Table, *, evolve: bool, **options: Any) -> "JsonBatchConverter":
        """A converter for ``table``'s current schema and name mapping."""
        return cls(table.schema(), evolve=evolve, name_mapping=name_mapping_of(table), **options)

    @property
    def slow_batches(self) -> int:
        return sum(self.declines.values())

    def convert(self, values: Sequence[bytes]) -> ConversionResult:
        """Convert a batch; RecordConversionError names the index of the failing value.

        Column-wise (:meth:`convert_fast`) when that gives the per-record
        result, else record by record; the reason for the latter is counted in
        ``declines`` and kept in ``last_decline_reason``.
        """
        try:
            array = pa.array(values, pa.binary())
        except (pa.ArrowTypeError, pa.ArrowInvalid):
            return self._per_record(values, "non-bytes value")
        try:
            table = self.convert_fast(array)
        except Declined as declined:
            return self._per_record(values, declined.reason)
        self.fast_batches += 1
        return ConversionResult(table, SchemaUpdates())

    def _per_record(self, values: Sequence[bytes], reason: str) -> ConversionResult:
        self.last_decline_reason = reason
        self.declines[reason] += 1
        log.debug("JSON fast path declined: %s", reason)
        return self.records.convert(decode_json_values(values))

    def convert_fast(self, values: pa.Array) -> pa.Table:
        """The table :meth:`convert` gives for ``values`` (binary), column-wise, with no schema updates.

        Raises :class:`Declined` (with a reason) when the result could differ,
        and whenever the per-record path would raise or ask for schema updates:
        the caller then converts the batch record by record.
        """
        if self._disabled:
            raise Declined(self._disabled)
        if not len(values):
            raise Declined("empty batch")
        with guarded("JSON batch conversion"):
            return self._fast(values)

    # --- already-parsed maps (the columnar path with batch SMTs) ---------------------

    def convert_struct(self, values: pa.Array) -> pa.Table:
        """Maps already in Arrow (a struct array, see :func:`parse_json_objects`) → a table of this schema.

        Row ``i`` stands for the dict whose items are the row's non-null
        fields (null fields may be absent keys or keys with null values:
        :class:`RecordConverter` treats both alike). The result equals
        ``RecordConverter.convert`` of those dicts. Raises :class:`Declined`
        (with a reason) when not sure, or when the per-record path would raise
        or ask for schema updates: the caller then converts the records one by one.
        """
        if self._disabled:
            raise Declined(self._disabled)
        if not pa.types.is_struct(values.type):
            raise Declined("values are not maps")
        with guarded("struct conversion"):
            return self._from_struct(values)

    def _from_struct(self, values: pa.StructArray) -> pa.Table:
        if values.null_count:
            raise Declined("null values")
        strict = self.evolve or self._case_insensitive
        names = [values.type.field(i).name for i in range(values.type.num_fields)]
        children = dict(zip(names, values.flatten()))
        known = {c.name for c in self._columns}
        for name, child in children.items():
            if name in known:
                continue
            if self._case_insensitive and name.lower() in self._lower_names:
                raise Declined(_CASE_MISMATCH)
            if self.evolve and _holds_value(child):
                raise Declined(_NEW_COLUMN)
        columns = []
        for field, column in zip(self.records.table_schema.fields, self._columns):
            source = children.get(field.name)
            if source is None:
                array = pa.nulls(len(values), type=column.target)
            else:
                array = _from_arrow(source, field.field_type, column.target, strict)
            if column.required and array.null_count:
                raise Declined(f"required column {column.name} is null")
            columns.append(array)
        return pa.Table.from_arrays(columns, schema=self.arrow_schema)

    # --- fast path ------------------------------------------------------------------

    def _fast(self, values: pa.Array) -> pa.Table:
        parsed = self._read(_joined_lines(values))
        if parsed.num_rows != len(values):
            raise Declined("values are not one object each")
        self._check_unexpected(parsed)
        return pa.Table.from_arrays([self._finish(c, parsed) for c in self._columns], schema=self.arrow_schema)

    def _read(self, joined: pa.Buffer) -> pa.Table:
        flipped: set[str] = set()
        while True:
            schema = pa.schema([pa.field(c.name, c.choice[0]) for c in self._columns if c.choice is not None])
            options = pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
            try:
                table = pa_json.read_json(
                    pa.BufferReader(joined),
                    read_options=pa_json.ReadOptions(use_threads=False, block_size=_block_size(joined)),
                    parse_options=options,
                )
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                if not self._flip_guess(str(e), flipped):
                    raise _unreadable(e, "a value of another JSON kind than its column's") from e
            else:
                _check_depth(table.schema)
                return _with_valid_lists(table)  # inferred (undeclared) columns may hold broken lists

    def _flip_guess(self, message: str, flipped: set[str]) -> bool:
        """Switch a guessed column to the JSON kind the reader found, once per batch."""
        match = _KIND_CHANGE.search(message)
        if match is None:
            return False
        name, _, actual = match.groups()
        for column in self._columns:
            if column.name != name or column.guess is None or name in flipped:
                continue
            if column.declared and actual in column.declared and column.guess != actual:
                column.guess = actual
                flipped.add(name)
                return True
        return False

    def _check_unexpected(self, parsed: pa.Table) -> None:
        known = {c.name for c in self._columns}
        for field in parsed.schema:
            if field.name in known:
                continue
            if self._case_insensitive and field.name.lower() in self._lower_names:
                raise Declined(_CASE_MISMATCH)
            if self.evolve and _carries_value(field.type):
                raise Declined(_NEW_COLUMN)

    def _finish(self, column: _Column, parsed: pa.Table) -> pa.Array:
        index = parsed.schema.get_field_index(column.name)
        if index < 0:
            if column.required:
                raise Declined(f"required column {column.name} missing")
            return pa.nulls(parsed.num_rows, type=column.target)
        data = parsed.column(index).combine_chunks()
        if column.required and data.null_count:
            raise Declined(f"required column {column.name} is null")
        if column.choice is None:
            if data.null_count == len(data):
                return pa.nulls(len(data), type=column.target)
            raise Declined(f"column {column.name} needs the per-record path")
        result = column.choice[1](data)
        if result.type != column.target:
            raise Declined(f"column {column.name} came out as {result.type}")
        return result


def _why_disabled(name_mapping: NameMapping | str | None, ambiguous: bool) -> str | None:
    """Why the column-wise path never applies to a table, or None."""
    if name_mapping is not None:
        return "the table has a name mapping"
    if ambiguous:
        return "column names differ only in case"
    return None


def _unreadable(error: pa.ArrowException, kind_change: str) -> Declined:
    """Why pyarrow's JSON reader rejected a batch, in words that do not depend on the batch.

    ``kind_change``: the reason when a value is of another JSON kind than
    the reader expected (declared, or inferred from earlier rows).
    """
    if _KIND_CHANGE.search(str(error)):
        return Declined(kind_change)
    return Declined("JSON pyarrow cannot read (syntax, duplicate keys, ...)")


def _block_size(joined: pa.Buffer) -> int:
    # one block: a row never straddles blocks, and type inference sees the whole batch
    return max(1 << 20, len(joined) + 1)


def decode_json_values(values: Sequence[bytes]) -> list[Any]:
    """``json.loads`` of each value; RecordConversionError names the first undecodable one."""
    decoded = []
    for index, value in enumerate(values):
        try:
            decoded.append(json.loads(value))
        except (ValueError, TypeError) as e:
            cause = DataException(f"Converting byte[] to Kafka Connect data failed due to serialization error: {e}")
            raise RecordConversionError(index, cause) from e
    return decoded


# --- Arrow values of any type → a table type (the columnar path with batch SMTs) ---------------


def _holds_value(array: pa.Array) -> bool:
    return array.null_count != len(array) and _carries_value(array.type)


def _is_list(arrow_type: pa.DataType) -> bool:
    return pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)


def _from_arrow(source: pa.Array, iceberg_type: ice.IcebergType, target: pa.DataType, strict: bool) -> pa.Array:
    """What RecordConverter makes of the Python values of ``source`` (see ``convert_struct``), or Declined."""
    if source.null_count == len(source):
        return pa.nulls(len(source), type=target)
    kind = source.type
    if isinstance(iceberg_type, ice.StructType):
        if not pa.types.is_struct(kind):
            raise Declined("not a map where a struct is expected")
        return _struct_from_arrow(source, iceberg_type, target, strict)
    if isinstance(iceberg_type, ice.ListType):
        if not _is_list(kind):
            raise Declined("not a list where a list is expected")
        return _list_from_arrow(source, iceberg_type, target, strict)
    if isinstance(iceberg_type, ice.MapType) or pa.types.is_struct(kind) or _is_list(kind):
        raise Declined("map or nested value needs the per-record path")
    is_int, is_float = pa.types.is_integer(kind), pa.types.is_floating(kind)
    is_text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
    if isinstance(iceberg_type, ice.BooleanType):
        if pa.types.is_boolean(kind):
            return source
        raise Declined("boolean column from other values")
    if isinstance(iceberg_type, (ice.LongType, ice.IntegerType)) and (is_int or is_float):
        longs = source.cast(pa.int64()) if is_int else _truncated_doubles(source)
        return _to_int32(longs) if isinstance(iceberg_type, ice.IntegerType) else longs
    if isinstance(iceberg_type, (ice.DoubleType, ice.FloatType)) and (is_int or is_float):
        if is_int and _max_abs(source) >= _EXACT_DOUBLE_LIMIT:
            raise Declined("integer beyond exact double range")
        doubles = source.cast(pa.float64(), safe=False)
        return doubles.cast(pa.float32(), safe=False) if isinstance(iceberg_type, ice.FloatType) else doubles
    if isinstance(iceberg_type, ice.StringType):
        if is_text:
            return source.cast(pa.large_string())
        raise Declined("string column from other values")  # numbers' text depends on int vs float
    if isinstance(iceberg_type, (ice.TimestampType, ice.TimestamptzType)):
        if is_int:
            return _millis_to(source.cast(pa.int64()), target)
        if is_text:
            parsed = temporal.parse_timestamp_array(source.cast(pa.large_string()),
                                                    isinstance(iceberg_type, ice.TimestamptzType))
            if parsed is not None:
                return parsed
    if isinstance(iceberg_type, ice.DateType):
        if is_int:
            return _to_int32(source.cast(pa.int64())).cast(target)
        if is_text:
            parsed = temporal.parse_date_array(source.cast(pa.large_string()))
            if parsed is not None:
                return parsed
    if isinstance(iceberg_type, ice.TimeType) and is_int:
        return _millis_of_day(source.cast(pa.int64()), target)
    if pa.types.is_boolean(kind) \
            or is_float and isinstance(iceberg_type, (ice.UUIDType, ice.BinaryType, ice.FixedType)):
        raise Declined("per-record coercion fails")
    if is_text or is_int or is_float or pa.types.is_date32(kind) or pa.types.is_time32(kind) \
            or pa.types.is_timestamp(kind):
        # Python values (to_pylist) equal the per-record ones here; a float that stands for a
        # JSON integer coerces to the same number, date, time or decimal.
        return _per_value(coercion.primitive_coercer(iceberg_type), target)(source)
    raise Declined(f"values of Arrow type {kind}")


def _max_abs(array: pa.Array) -> float:
    bounds = pc.min_max(array).as_py()
    return 0 if bounds["min"] is None else max(abs(bounds["min"]), abs(bounds["max"]))


def _truncated_doubles(source: pa.Array) -> pa.Array:
    """``Number.longValue()`` of doubles, for those exactly a long after truncation."""
    doubles = source.cast(pa.float64())
    if not pc.all(pc.is_finite(doubles)).as_py() or _max_abs(doubles) >= _EXACT_DOUBLE_LIMIT:
        raise Declined("double not exactly a long")
    return pc.trunc(doubles).cast(pa.int64())


def _list_from_arrow(source: pa.Array, list_type: ice.ListType, target: pa.DataType, strict: bool) -> pa.Array:
    start, end = source.offsets[0].as_py(), source.offsets[-1].as_py()
    offsets = pc.subtract(source.offsets, start).cast(pa.int64())
    elements = _from_arrow(source.values.slice(start, end - start), list_type.element_type,
                           target.value_type, strict)
    if list_type.element_required:
        _no_nulls_where_valid(elements, None)
    mask = source.is_null() if source.null_count else None
    return pa.LargeListArray.from_arrays(offsets, elements, type=target, mask=mask)


def _struct_from_arrow(source: pa.Array, struct: ice.StructType, target: pa.DataType, strict: bool) -> pa.Array:
    names = [source.type.field(i).name for i in range(source.type.num_fields)]
    children = dict(zip(names, source.flatten()))
    declared = {field.name for field in struct.fields}
    if strict:
        for name, child in children.items():
            if name not in declared and _holds_value(child):
                raise Declined(_UNKNOWN_NESTED)
    valid = source.is_valid() if source.null_count else None
    arrays = []
    for index, field in enumerate(struct.fields):
        child_target = target.field(index).type
        child = children.get(field.name)
        array = pa.nulls(len(source), type=child_target) if child is None else \
            _from_arrow(child, field.field_type, child_target, strict)
        if field.required:
            _no_nulls_where_valid(array, valid)
        arrays.append(array)
    mask = source.is_null() if source.null_count else None
    fields = [target.field(i) for i in range(target.num_fields)]
    return pa.StructArray.from_arrays(arrays, fields=fields, mask=mask)


# --- schemaless JSON objects → one Arrow struct column, as JsonConverter reads them --------------


@dataclass
class ParsedObjects:
    """JSON object values as one struct array (row = object, null row = null value).

    Fields are the union of the objects' keys; a null field is an absent key
    or a null value. ``loose``: top-level fields whose floating-point values
    may stand for JSON integers (the column mixed ``1`` and ``1.5``).
    """

    array: pa.StructArray
    loose: frozenset


def parse_json_objects(values: pa.Array) -> ParsedObjects:
    """Parse raw JSON values (bytes, null = tombstone) the way ``JsonConverter`` (schemaless) does.

    Raises :class:`Declined` (with a reason) when the result could differ from
    the per-record decoding: a value that is not one single-line JSON object,
    duplicate keys, a key whose values are of different JSON kinds, numbers
    pyarrow reads differently (integers beyond 64 bits, ``NaN``, ``-0.0``,
    floats at or beyond 2**53), invalid text.
    """
    with guarded("column-wise JSON parsing"):
        return _parse_objects(values)


def _parse_objects(values: pa.Array) -> ParsedObjects:
    present = values.drop_null() if values.null_count else values
    if len(present) == 0:
        return ParsedObjects(_empty_struct(len(values), np.ones(len(values), dtype=bool)), frozenset())
    joined = _joined_lines(present)
    table = _read_inferred(joined)
    if table.num_rows != len(present):
        raise Declined("values are not one object each")
    for column in table.columns:
        _check_doubles(column.combine_chunks())
    if table.num_columns == 0:
        struct = _empty_struct(len(present), None)
    else:
        struct = pa.StructArray.from_arrays([c.combine_chunks() for c in table.columns],
                                            fields=list(table.schema))
    if values.null_count:
        valid = values.is_valid().to_numpy(zero_copy_only=False)
        positions = np.cumsum(valid, dtype=np.int64) - 1
        struct = struct.take(pa.array(positions, mask=~valid))
    loose = frozenset(f.name for f in table.schema if _contains(f.type, pa.types.is_floating))
    return ParsedObjects(struct, loose)


def _empty_struct(length: int, nulls) -> pa.StructArray:
    buffers = [None]
    if nulls is not None and nulls.any():
        buffers = [pa.py_buffer(np.packbits(~nulls, bitorder="little").tobytes())]
    return pa.StructArray.from_buffers(pa.struct([]), length, buffers)


def _joined_lines(values: pa.Array) -> pa.Buffer:
    """The values (binary), each followed by a newline, as one document for the JSON reader.

    Declined unless each value is one line starting with ``{`` (pyarrow skips
    empty lines and reads ``{..} {..}`` as two rows: with every line non-empty,
    "as many rows as values" then means one object per value), and when the
    text holds what pyarrow's reader takes and JsonConverter refuses
    (:mod:`converters.batch.json_screen`: ``NaN``, invalid UTF-8, ...). Checked
    on Arrow's buffers, with no Python object per value.
    """
    if values.null_count:
        raise Declined("a null value")
    lines, starts = newline_joined(values)
    if np.any(np.diff(starts) < 2):
        raise Declined("empty value")
    text = np.frombuffer(lines, dtype=np.uint8)
    if (not np.all(text[starts[:-1]] == _OPEN_BRACE) or np.count_nonzero(text == _NEWLINE) != len(values)
            or np.count_nonzero(text == _CARRIAGE_RETURN)):
        raise Declined("not one single-line JSON object per value")
    check_lax_tokens(lines, int(np.max(np.diff(starts))), "in a value")
    return lines


#: Deeper Arrow types than this are left to the per-record path (whose JSON reader has a nesting
#: limit): walking them recursively, in Python or in Arrow's C++, could exhaust the stack.
MAX_NESTING = 64


def _check_depth(schema: pa.Schema) -> None:
    """Declined when a column's type nests deeper than :data:`MAX_NESTING` (checked without recursion)."""
    stack = [(field.type, 1) for field in schema]
    while stack:
        arrow_type, depth = stack.pop()
        if depth > MAX_NESTING:
            raise Declined("values nested too deeply")
        stack.extend((arrow_type.field(i).type, depth + 1) for i in range(arrow_type.num_fields))


def _read_inferred(joined: pa.Buffer) -> pa.Table:
    """The objects with inferred types, read again with those types declared when the first read
    is not usable: pyarrow reads date-like strings as timestamps (JsonConverter keeps strings), and
    (pyarrow 26) builds invalid list arrays when a list's element type is only known after a null.
    """
    options = pa_json.ReadOptions(use_threads=False, block_size=_block_size(joined))
    try:
        table = pa_json.read_json(pa.BufferReader(joined), read_options=options)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise _unreadable(e, _MIXED_KINDS) from e
    _check_depth(table.schema)
    if not any(_contains(f.type, pa.types.is_timestamp) for f in table.schema) and _valid_lists(table):
        return table
    schema = pa.schema([pa.field(f.name, _timestamps_as_strings(f.type)) for f in table.schema])
    try:
        table = pa_json.read_json(pa.BufferReader(joined), read_options=options,
                                  parse_options=pa_json.ParseOptions(explicit_schema=schema))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise _unreadable(e, _MIXED_KINDS) from e
    return _with_valid_lists(table)


def _with_valid_lists(table: pa.Table) -> pa.Table:
    """``table`` with the list arrays pyarrow (26) built invalid repaired; Declined if that fails."""
    if _valid_lists(table):
        return table
    try:
        table = pa.Table.from_arrays(
            [pa.chunked_array([_null_lists_repaired(chunk) for chunk in c.chunks], type=c.type)
             for c in table.columns], schema=table.schema)
    except pa.ArrowInvalid as e:  # e.g. [null, []]: pyarrow lost an element of a list of lists
        raise Declined(_BROKEN_LISTS) from e
    if not _valid_lists(table):
        raise Declined(_BROKEN_LISTS)
    return table


def _null_lists_repaired(array: pa.Array) -> pa.Array:
    """``array`` with the values of ``list<null>`` arrays rebuilt (pyarrow 26 keeps one null for ``[null, null]``)."""
    kind = array.type
    if _is_list(kind):
        start, end = array.offsets[0].as_py(), array.offsets[-1].as_py()
        if pa.types.is_null(kind.value_type):
            values = pa.nulls(end - start)
        else:
            values = _null_lists_repaired(array.values.slice(start, end - start))
        offsets = pc.subtract(array.offsets, start)
        mask = array.is_null() if array.null_count else None
        cls = pa.LargeListArray if pa.types.is_large_list(kind) else pa.ListArray
        return cls.from_arrays(offsets, values, type=kind, mask=mask)
    if pa.types.is_struct(kind) and _contains(kind, _is_list):
        children = [_null_lists_repaired(array.field(i)) for i in range(kind.num_fields)]
        mask = array.is_null() if array.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(kind), mask=mask)
    return array


def _valid_lists(table: pa.Table) -> bool:
    for column in table.columns:
        if _contains(column.type, _is_list):
            try:
                for chunk in column.chunks:
                    chunk.validate(full=True)
            except pa.ArrowInvalid:
                return False
    return True


def _contains(arrow_type: pa.DataType, matches: Callable[[pa.DataType], bool]) -> bool:
    """Whether ``arrow_type`` or a type nested in it (struct fields, list elements) ``matches``."""
    if matches(arrow_type):
        return True
    if pa.types.is_struct(arrow_type):
        return any(_contains(arrow_type.field(i).type, matches) for i in range(arrow_type.num_fields))
    if _is_list(arrow_type):
        return _contains(arrow_type.value_type, matches)
    return False


def _timestamps_as_strings(arrow_type: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(arrow_type):
        return pa.string()
    if pa.types.is_struct(arrow_type):
        return pa.struct([pa.field(arrow_type.field(i).name, _timestamps_as_strings(arrow_type.field(i).type))
                          for i in range(arrow_type.num_fields)])
    if pa.types.is_list(arrow_type):
        return pa.list_(_timestamps_as_strings(arrow_type.value_type))
    return arrow_type


_NEGATIVE_ZERO_BITS = -(2**63)


def _check_doubles(array: pa.Array) -> None:
    """Doubles JsonConverter would read the same way: finite, no -0.0, below 2**53 (big integers)."""
    kind = array.type
    if pa.types.is_struct(kind):
        for child in array.flatten():
            _check_doubles(child)
    elif _is_list(kind):
        _check_doubles(array.flatten())
    elif pa.types.is_floating(kind) and array.null_count != len(array):
        if not pc.all(pc.is_finite(array)).as_py() or _max_abs(array) >= _EXACT_DOUBLE_LIMIT:
            raise Declined("number pyarrow reads differently")
        if _has_negative_zero(array):
            raise Declined("-0.0 (JsonConverter reads 0.0)")


def _has_negative_zero(array: pa.Array) -> bool:
    """Whether a float64 array holds -0.0 (equal to 0.0: told apart by its bits)."""
    zeros = array.filter(pc.fill_null(pc.equal(array, 0.0), False))
    return bool(len(zeros)) and bool(pc.any(pc.equal(zeros.view(pa.int64()), _NEGATIVE_ZERO_BITS)).as_py())
