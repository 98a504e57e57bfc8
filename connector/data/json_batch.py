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

import io
import json
import logging
import re
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Callable, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.table import Table
from pyiceberg.table.name_mapping import NameMapping
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from connector.api.errors import DataException
from connector.data import coercion, temporal
from connector.data.record_converter import (
    NAME_MAPPING_PROPERTY,
    ConversionResult,
    RecordConversionError,
    RecordConverter,
)
from connector.data.schema_update import SchemaUpdates
from connector.data.value_converters import storage_type

log = logging.getLogger(__name__)

NUMBER, STRING = "number", "string"
_KIND_CHANGE = re.compile(r"Column\(/([^/)]*)\) changed from (\w+) to (\w+)")
_EXACT_DOUBLE_LIMIT = 2.0**53
_INT32 = (-(2**31), 2**31 - 1)
_OPEN_BRACE = ord("{")


class _Decline(Exception):
    """The fast path cannot guarantee the per-record result; use the per-record path."""


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


def _column_plan(name: str, iceberg_type: IcebergType, target: pa.DataType, required: bool, strict: bool) -> _Column:
    exact = _exact(iceberg_type, target, strict)
    if exact is not None:
        return _Column(name, target, required, {NUMBER: exact}, guess=None)
    guessed = _guessed(iceberg_type, target)
    return _Column(name, target, required, guessed, guess=next(iter(guessed)) if guessed else None)


def _exact(iceberg_type: IcebergType, target: pa.DataType, strict: bool) -> tuple[pa.DataType, Finish] | None:
    """Declared type and finishing step for types whose JSON kind is fixed."""
    if isinstance(iceberg_type, BooleanType):
        return pa.bool_(), _identity
    if isinstance(iceberg_type, LongType):
        return pa.int64(), _identity
    if isinstance(iceberg_type, IntegerType):
        return pa.int64(), _to_int32
    if isinstance(iceberg_type, DoubleType):
        return pa.float64(), _identity
    if isinstance(iceberg_type, FloatType):
        return pa.float64(), _to_float32
    if isinstance(iceberg_type, StringType):
        return pa.large_string(), _identity
    if isinstance(iceberg_type, ListType):
        return _exact_list(iceberg_type, target, strict)
    if isinstance(iceberg_type, StructType):
        return _exact_struct(iceberg_type, target, strict)
    return None


def _exact_list(list_type: ListType, target: pa.DataType, strict: bool) -> tuple[pa.DataType, Finish] | None:
    element = _exact(list_type.element_type, target.value_type, strict)
    if element is None:
        return None
    declared = pa.list_(pa.field("element", element[0]))
    return declared, lambda parsed: _finish_list(parsed, element[1], target, list_type.element_required)


def _exact_struct(struct: StructType, target: pa.DataType, strict: bool) -> tuple[pa.DataType, Finish] | None:
    """``strict``: a nested key the struct lacks matters (evolving, or case-insensitive lookup)."""
    children = []
    for index, field in enumerate(struct.fields):
        child = _exact(field.field_type, target.field(index).type, strict)
        if child is None:
            return None
        children.append((field.name, field.required, child))
    declared = pa.struct([pa.field(name, child[0]) for name, _, child in children])
    return declared, lambda parsed: _finish_struct(parsed, children, target, strict)


def _guessed(iceberg_type: IcebergType, target: pa.DataType) -> dict[str, tuple[pa.DataType, Finish]] | None:
    """Declarations for types whose JSON kind varies: numbers or strings."""
    if isinstance(iceberg_type, (TimestampType, TimestamptzType)):
        utc = isinstance(iceberg_type, TimestamptzType)
        return {
            NUMBER: (pa.int64(), lambda a: _millis_to(a, target)),
            STRING: (pa.large_string(), lambda a: _parsed(temporal.parse_timestamp_array(a, utc))),
        }
    if isinstance(iceberg_type, DateType):
        return {
            NUMBER: (pa.int64(), lambda a: _to_int32(a).cast(target)),
            STRING: (pa.large_string(), lambda a: _parsed(temporal.parse_date_array(a))),
        }
    if isinstance(iceberg_type, TimeType):
        return {
            NUMBER: (pa.int64(), lambda a: _millis_of_day(a, target)),
            STRING: (pa.large_string(), _per_value(temporal.parse_time_micros, target)),
        }
    if isinstance(iceberg_type, DecimalType):
        coerce = coercion.primitive_coercer(iceberg_type)
        return {
            NUMBER: (pa.float64(), _exact_doubles(_per_value(coerce, target))),
            STRING: (pa.large_string(), _per_value(coerce, target)),
        }
    if isinstance(iceberg_type, (UUIDType, BinaryType, FixedType)):
        coerce = coercion.primitive_coercer(iceberg_type)
        return {STRING: (pa.large_string(), _per_value(coerce, target))}
    return None


# --- finishing steps ------------------------------------------------------------------------


def _identity(parsed: pa.Array) -> pa.Array:
    return parsed


def _parsed(result: pa.Array | None) -> pa.Array:
    if result is None:
        raise _Decline("strings need the scalar parser")
    return result


def _check_range(parsed: pa.Array, low: int, high: int) -> None:
    bounds = pc.min_max(parsed).as_py()
    if bounds["min"] is not None and (bounds["min"] < low or bounds["max"] > high):
        raise _Decline("value out of range")


def _to_int32(parsed: pa.Array) -> pa.Array:
    _check_range(parsed, *_INT32)
    return parsed.cast(pa.int32())


def _to_float32(parsed: pa.Array) -> pa.Array:
    return parsed.cast(pa.float32(), safe=False)


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
            array = pa.array(values, type=build)
        except Exception as e:  # the per-record path reports it with the record index
            raise _Decline(str(e)) from e
        return array if build == target else array.cast(target)

    return finish


def _exact_doubles(finish: Finish) -> Finish:
    """Doubles read by pyarrow equal json.loads' values unless an integer lost precision."""

    def checked(parsed: pa.Array) -> pa.Array:
        bounds = pc.min_max(pc.abs(parsed)).as_py()
        if bounds["max"] is not None and bounds["max"] >= _EXACT_DOUBLE_LIMIT:
            raise _Decline("number beyond exact double range")
        return finish(parsed)

    return checked


def _no_nulls_where_valid(child: pa.Array, parent_valid: pa.Array | None) -> None:
    nulls = child.is_null()
    if parent_valid is not None:
        nulls = pc.and_(nulls, parent_valid)
    if pc.any(nulls).as_py():
        raise _Decline("null in a required field")


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
            raise _Decline(f"unknown nested field {extra.name}")
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

    Takes the options of :class:`RecordConverter`. ``fast_batches`` and
    ``slow_batches`` count which path each batch took; ``fast_failures``
    counts unexpected fast-path exceptions (logged, then per-record). Values must be JSON
    objects; drop tombstones (null values) before converting.
    """

    def __init__(
        self,
        table_schema: IcebergSchema,
        *,
        evolve: bool,
        case_insensitive: bool = False,
        force_optional: bool = False,
        name_mapping: NameMapping | str | None = None,
    ):
        self.evolve = evolve
        self.records = RecordConverter(
            table_schema, evolve=evolve, case_insensitive=case_insensitive,
            force_optional=force_optional, name_mapping=name_mapping,
        )
        self.arrow_schema = schema_to_pyarrow(table_schema)
        strict = evolve or case_insensitive
        self._columns = [
            _column_plan(f.name, f.field_type, self.arrow_schema.field(i).type, f.required, strict)
            for i, f in enumerate(table_schema.fields)
        ]
        names = [f.name for f in table_schema.fields]
        ambiguous = case_insensitive and len({n.lower() for n in names}) < len(names)
        self._enabled = name_mapping is None and not ambiguous
        self._case_insensitive = case_insensitive
        self._lower_names = {n.lower() for n in names}
        self.fast_batches = 0
        self.slow_batches = 0
        self.fast_failures = 0

    @classmethod
    def for_table(cls, table: Table, *, evolve: bool, **options: Any) -> "JsonBatchConverter":
        """A converter for ``table``'s current schema and name mapping."""
        mapping = table.properties.get(NAME_MAPPING_PROPERTY)
        return cls(table.schema(), evolve=evolve, name_mapping=mapping, **options)

    def convert(self, values: Sequence[bytes]) -> ConversionResult:
        """Convert a batch; RecordConversionError names the index of the failing value."""
        if self._enabled and values:
            try:
                table = self._fast(values)
            except _Decline as reason:
                log.debug("JSON fast path declined: %s", reason)
            except Exception:  # a fast-path bug must not fail a batch the per-record path converts
                self.fast_failures += 1
                log.warning("JSON fast path failed; converting record by record", exc_info=True)
            else:
                self.fast_batches += 1
                return ConversionResult(table, SchemaUpdates())
        self.slow_batches += 1
        return self.records.convert(decode_json_values(values))

    # --- fast path ------------------------------------------------------------------

    def _fast(self, values: Sequence[bytes]) -> pa.Table:
        parsed = self._read(_joined_objects(values))
        if parsed.num_rows != len(values):
            raise _Decline("values are not one object each")
        self._check_unexpected(parsed)
        return pa.Table.from_arrays([self._finish(c, parsed) for c in self._columns], schema=self.arrow_schema)

    def _read(self, joined: bytes) -> pa.Table:
        flipped: set[str] = set()
        while True:
            schema = pa.schema([pa.field(c.name, c.choice[0]) for c in self._columns if c.choice is not None])
            options = pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
            try:
                return pa_json.read_json(
                    io.BytesIO(joined), read_options=pa_json.ReadOptions(use_threads=False, block_size=_block_size(joined)),
                    parse_options=options,
                )
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                if not self._flip_guess(str(e), flipped):
                    raise _Decline(str(e)) from e

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
                raise _Decline(f"key {field.name} matches a column case-insensitively")
            if self.evolve and _carries_value(field.type):
                raise _Decline(f"new column {field.name}")

    def _finish(self, column: _Column, parsed: pa.Table) -> pa.Array:
        index = parsed.schema.get_field_index(column.name)
        if index < 0:
            if column.required:
                raise _Decline(f"required column {column.name} missing")
            return pa.nulls(parsed.num_rows, type=column.target)
        data = parsed.column(index).combine_chunks()
        if column.required and data.null_count:
            raise _Decline(f"required column {column.name} is null")
        if column.choice is None:
            if data.null_count == len(data):
                return pa.nulls(len(data), type=column.target)
            raise _Decline(f"column {column.name} needs the per-record path")
        result = column.choice[1](data)
        if result.type != column.target:
            raise _Decline(f"column {column.name} came out as {result.type}")
        return result


def _joined_objects(values: Sequence[bytes]) -> bytes:
    """The values joined by newlines, if each is one line starting with ``{``; else decline.

    pyarrow skips empty lines and reads ``{..} {..}`` as two rows, so with
    every line non-empty, "as many rows as values" means one object per value.
    """
    try:
        first_bytes = set(map(itemgetter(0), values))
    except (IndexError, TypeError):
        raise _Decline("empty or non-bytes value") from None
    joined = b"\n".join(values)
    if first_bytes != {_OPEN_BRACE} or b"\r" in joined or joined.count(b"\n") != len(values) - 1:
        raise _Decline("not one single-line JSON object per value")
    return joined


def _block_size(joined: bytes) -> int:
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
