"""Column-wise forms of Kafka's SMTs, for schemaless values (Connect Maps).

Each batch form wraps a configured per-record transformation and follows its
``apply_schemaless`` (or ``apply``) line by line, on whole columns. Where the
per-record code would raise, or where the result could depend on something
the batch representation does not keep (see :mod:`smt.batch.view`), the
batch form raises :class:`Declined` and the caller runs the per-record path
for the whole batch, which then raises the SMT's own error with the failing
record's coordinates.

Batch forms are registered for exact classes (a user's subclass may override
``apply``): :func:`batch_form` returns None for anything else.
"""

from __future__ import annotations

import abc
import functools
import math
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from connector.api.errors import DataException
from connector.api.java.dateformat import JavaDateFormat
from connector.api.logical import MILLIS_PER_DAY
from connector.api.schema import Type
from smt.batch.kernels import (
    BOOL,
    DATE,
    EXACT_DOUBLE,
    FLOAT,
    INT,
    LIST,
    LONG_MAX,
    LONG_MIN,
    MAP,
    NULL,
    STRING,
    TIME,
    TIMESTAMP,
    empty_lists_like,
    floor_div,
    floor_mod,
    has_values,
    int64_values,
    kind,
    like,
    map_distinct,
    max_abs,
)
from smt.batch.view import (
    ALL,
    MapFields,
    RecordBatchView,
    Values,
    constant,
    make_struct,
)
from smt.transforms import (
    cast,
    extract_field,
    flatten,
    hoist_field,
    insert_field,
    mask_field,
    regex_router,
    replace_field,
    timestamp_converter,
    timestamp_router,
)
from smt.transforms import (
    filter as filter_smt,
)

_REGISTRY: dict[type, Callable[[Any], "BatchTransform | None"]] = {}


class BatchTransform(abc.ABC):
    """The batch form of one configured transformation."""

    def __init__(self, transformation: Any):
        self.transformation = transformation

    @abc.abstractmethod
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        """The transformation applied to every record of ``view``, column-wise."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.transformation!r})"


def register(*classes: type) -> Callable[[type], type]:
    """Register a :class:`BatchTransform` subclass (or factory) for exact transformation classes."""

    def decorate(factory: type) -> type:
        for cls in classes:
            _REGISTRY[cls] = factory
        return factory

    return decorate


def batch_form(transformation: Any) -> BatchTransform | None:
    """The batch form of a configured transformation, or None when it has none (for this config)."""
    factory = _REGISTRY.get(type(transformation))
    if factory is None:
        return None
    return factory(transformation)


# --- InsertField$Value ------------------------------------------------------------------------


@register(insert_field.Value)
class InsertFieldBatch(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        if not has_values(view.value.array):
            return view  # every value is null: records unchanged
        fields = view.value.maps(insert_field.PURPOSE)
        n = view.num_rows
        if smt.topic_field is not None:
            fields.put(smt.topic_field.name, view.topic)
        if smt.partition_field is not None:
            fields.put(smt.partition_field.name, _coalesce(view.partition, fields.get(smt.partition_field.name)))
        if smt.offset_field is not None:
            fields.put(smt.offset_field.name, view.offset)
        if smt.timestamp_field is not None:
            name = smt.timestamp_field.name
            fields.put(name, _coalesce(view.timestamp, fields.get(name)))
        if smt.static_field is not None and smt.static_value is not None:
            fields.put(smt.static_field.name, constant(smt.static_value, n, pa.string()))
        return view.with_value(fields.values())


def _coalesce(new: pa.Array, old: pa.Array | None) -> pa.Array:
    """``new`` where it is not null, else the map's current value (the key is not overwritten)."""
    if new.null_count == 0 or old is None or not has_values(old):
        return new
    if kind(old) != INT:
        raise Declined("inserted metadata would keep values of another kind")
    return pc.coalesce(int64_values(new), int64_values(old))


# --- ReplaceField$Value -----------------------------------------------------------------------


@register(replace_field.Value)
class ReplaceFieldBatch(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        if not has_values(view.value.array):
            return view
        fields = view.value.maps(replace_field.PURPOSE)
        kept = [(smt.renamed(name), array, name in fields.loose)
                for name, array in zip(fields.names, fields.arrays) if smt.keeps(name)]
        names = [name for name, _, _ in kept]
        if len(set(names)) != len(names):
            raise Declined("renamed keys collide with other keys")
        origins = {smt.renamed(name): origin for name, origin in fields.origins.items() if smt.keeps(name)}
        out = MapFields([(name, array) for name, array, _ in kept], fields.length, fields.null_mask,
                        frozenset(name for name, _, loose in kept if loose), origins)
        return view.with_value(out.values())


# --- MaskField$Value --------------------------------------------------------------------------


@register(mask_field.Value)
class MaskFieldBatch(BatchTransform):
    def __init__(self, transformation: Any):
        super().__init__(transformation)
        replacement = transformation.replacement
        self._as_long = self._as_double = None
        if replacement is not None:
            self._as_long = _replacement_for(0, replacement)
            self._as_double = _replacement_for(0.0, replacement)

    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        if view.value.array.null_count:
            raise Declined("MaskField on a null value fails")
        fields = view.value.maps(mask_field.PURPOSE)
        for name in smt.masked_field_order:
            array = fields.get(name)
            if array is None:
                # The key is added with a null value: the same as absent downstream, but a later
                # rename onto it collides (per record, the later key wins), so keep it as a column.
                fields.put(name, pa.nulls(fields.length))
                continue
            loose = fields.field_loose(name)
            origin = fields.origins.get(name)
            fields.put(name, self._masked(array, functools.partial(view.is_loose, name)), loose)
            if origin is not None:
                fields.origins[name] = origin  # masking keeps each value's kind
        return view.with_value(fields.values())

    def _masked(self, array: pa.Array, loose: Callable[[], bool]) -> pa.Array:
        k = kind(array)
        if k == NULL or not has_values(array):
            return array
        if self.transformation.replacement is None:
            return _zero_like(array, k)
        return self._replaced(array, k, loose)

    def _replaced(self, array: pa.Array, k: str, loose: Callable[[], bool]) -> pa.Array:
        text = self.transformation.replacement
        if k == STRING:
            return like(array, text, pa.string())
        if k == INT:
            return like(array, _ok(self._as_long), pa.int64())
        if k == FLOAT:
            value = _ok(self._as_double)
            if loose():
                as_long = _ok(self._as_long)
                if as_long != value or value == 0.0 and math.copysign(1.0, value) < 0:
                    raise Declined("replacement parses differently as long and double")
            return like(array, value, pa.float64())
        raise Declined("MaskField cannot replace values of this kind")


def _replacement_for(sample: Any, replacement: str) -> tuple[bool, Any]:
    """(True, the replacement for values like ``sample``), or (False, the per-record SMT's error)."""
    try:
        return True, mask_field.masked_with_replacement(sample, replacement)
    except DataException as exc:
        return False, exc


def _ok(result: tuple[bool, Any] | None) -> Any:
    assert result is not None  # computed in __init__ whenever there is a replacement
    ok, value = result
    if not ok:
        raise Declined("MaskField replacement does not parse as a number") from value
    return value


def _zero_like(array: pa.Array, k: str) -> pa.Array:
    if k == BOOL:
        return like(array, False, pa.bool_())
    if k in (INT, FLOAT):
        return like(array, 0, array.type)
    if k in (DATE, TIME):
        return like(array, 0, pa.int32()).cast(array.type)
    if k == TIMESTAMP:
        return like(array, 0, pa.int64()).cast(array.type)
    if k == STRING:
        return like(array, "", pa.string())
    if k == LIST:
        return empty_lists_like(array)
    if k == MAP:
        return make_struct([], [], len(array), array.is_null() if array.null_count else None)
    raise Declined(f"MaskField cannot mask values of type {array.type}")


# --- Cast$Value -------------------------------------------------------------------------------

_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}
_INT_TYPES = {8: pa.int8(), 16: pa.int16(), 32: pa.int32(), 64: pa.int64()}
_OUT_TYPES = {Type.FLOAT32: pa.float32(), Type.FLOAT64: pa.float64(), Type.BOOLEAN: pa.bool_(),
              Type.STRING: pa.string(), **{t: _INT_TYPES[b] for t, b in _BITS.items()}}


@register(cast.Value)
class CastBatch(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        if not has_values(view.value.array):
            return view
        if smt.whole_value_cast_type is not None:
            if view.value.is_map:
                raise Declined("Cast of a whole map fails")
            loose = ALL in view.value.loose
            array = cast_array(view.value.array, smt.whole_value_cast_type, lambda: loose)
            return view.with_value(Values(array))
        fields = view.value.maps(cast.PURPOSE)
        for name, target in smt.casts.items():
            array = fields.get(name)
            if array is None:
                # Cast puts the key with a null value (Kafka: updatedValue.put(field, null)); keep it as a
                # column so that a later rename onto it collides, as per record.
                fields.put(name, pa.nulls(fields.length))
                continue
            fields.put(name, cast_array(array, target, functools.partial(view.is_loose, name)))
        return view.with_value(fields.values())


def cast_array(array: pa.Array, target: Type, loose: Callable[[], bool]) -> pa.Array:
    """``cast_value_to_type(None, v, target)`` for every value (schemaless: kinds from the values).

    ``loose()``: whether the (floating-point) values may stand for JSON integers; asked only if it matters.
    """
    out_type = _OUT_TYPES[target]
    k = kind(array)
    if not has_values(array):
        return pa.nulls(len(array), type=out_type)
    if k not in (BOOL, INT, FLOAT, STRING):
        raise Declined(f"Cast of {k} values fails")
    if target in _BITS:
        return _cast_integer(array, k, target, loose)
    if target in (Type.FLOAT32, Type.FLOAT64):
        if k == STRING:
            return _cast_strings(array, target, out_type)
        if k == BOOL:
            return pc.if_else(array, 1.0, 0.0).cast(out_type)
        return array.cast(out_type, safe=False)
    if target is Type.BOOLEAN:
        if k == BOOL:
            return array
        if k == INT:
            return pc.not_equal(array, 0)
        if k == FLOAT:
            return pc.not_equal(pc.if_else(pc.is_nan(array), 0.0, pc.trunc(array)), 0.0)
        return pc.equal(pc.utf8_lower(array), "true")
    # STRING
    if k == STRING:
        return array.cast(pa.string())
    if k == BOOL:
        return pc.if_else(array, "true", "false")
    if k == INT:
        return array.cast(pa.string())
    if loose():
        raise Declined("Cast of loose numbers to string")
    return map_distinct(array, lambda v: cast.cast_value_to_type(None, float(v), target), out_type)


def _cast_strings(array: pa.Array, target: Type, out_type: pa.DataType) -> pa.Array:
    """Strings parsed as numbers; one that does not parse (or overflows) fails per record."""
    return map_distinct(array, lambda v: cast.cast_value_to_type(None, v, target), out_type,
                        fails=DataException, reason="Cast of a string that does not parse as the target type")


def _cast_integer(array: pa.Array, k: str, target: Type, loose: Callable[[], bool]) -> pa.Array:
    bits = _BITS[target]
    out_type = _INT_TYPES[bits]
    if k == INT:
        return array.cast(out_type, safe=False)  # two's complement wrap, like Java's narrowing
    if k == BOOL:
        return pc.if_else(array, 1, 0).cast(out_type)
    if k == STRING:
        return _cast_strings(array, target, out_type)
    # FLOAT: truncate, saturate to long (64) or int (then wrap to 8/16 bits), NaN -> 0
    if max_abs(array) >= (2.0**31 if bits < 64 else EXACT_DOUBLE) and loose():
        raise Declined("loose numbers out of int range")
    values = pc.if_else(pc.is_nan(array), 0.0, pc.trunc(array.cast(pa.float64())))
    low, high = (LONG_MIN, LONG_MAX) if bits == 64 else (-(2**31), 2**31 - 1)
    big = pc.greater_equal(values, float(high) + 1)  # 2**63 / 2**31 as doubles
    small = pc.less_equal(values, float(low))
    inside = pc.if_else(pc.or_(big, small), 0.0, values).cast(pa.int64())
    saturated = pc.if_else(big, high, pc.if_else(small, low, inside))
    return saturated.cast(out_type, safe=False)


# --- TimestampConverter$Value -----------------------------------------------------------------

_MILLIS_MIN = -62135596800000  # 0001-01-01T00:00:00Z
_MILLIS_MAX = 253402300799999  # 9999-12-31T23:59:59.999Z
_OUT_OF_RANGE = "timestamp out of the supported range (years 1-9999)"
_TARGET_TYPES = {
    timestamp_converter.TYPE_UNIX: pa.int64(),
    timestamp_converter.TYPE_STRING: pa.string(),
    timestamp_converter.TYPE_DATE: pa.date32(),
    timestamp_converter.TYPE_TIME: pa.time32("ms"),
    timestamp_converter.TYPE_TIMESTAMP: pa.timestamp("ms", tz="UTC"),
}


@register(timestamp_converter.Value)
class TimestampConverterBatch(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        if not has_values(view.value.array):
            return view
        if not smt.settings.field:
            if view.value.is_map:
                raise Declined("TimestampConverter of a whole map fails")
            return view.with_value(Values(self.convert(view.value.array)))
        fields = view.value.maps(timestamp_converter.PURPOSE)
        array = fields.get(smt.settings.field)
        if array is None:
            return view.with_value(fields.values())  # the key gets a null value: the same as absent
        fields.put(smt.settings.field, self.convert(array))
        return view.with_value(fields.values())

    def convert(self, array: pa.Array) -> pa.Array:
        settings = self.transformation.settings
        out_type = _TARGET_TYPES[settings.type]
        if not has_values(array):
            return pa.nulls(len(array), type=out_type)
        millis = self._to_millis(array)
        return self._from_millis(millis, settings)

    def _to_millis(self, array: pa.Array) -> pa.Array:
        settings = self.transformation.settings
        k = kind(array)
        if k == INT:
            return unix_to_millis(int64_values(array), settings.unix_precision)
        if k == STRING:
            return parse_millis(array, settings.format)
        if k == DATE:
            return pc.multiply(array.cast(pa.int32()).cast(pa.int64()), MILLIS_PER_DAY)
        if k == TIME:
            return array.cast(pa.int32()).cast(pa.int64())
        if k == TIMESTAMP and array.type.unit == "ms":
            return array.cast(pa.int64())
        raise Declined(f"TimestampConverter of {k} values fails")

    @staticmethod
    def _from_millis(millis: pa.Array, settings: Any) -> pa.Array:
        target = settings.type
        if target == timestamp_converter.TYPE_UNIX:
            return millis_to_unix(millis, settings.unix_precision)
        if target == timestamp_converter.TYPE_STRING:
            return format_millis(settings.format, millis)
        if target == timestamp_converter.TYPE_TIME:
            return millis_of_day(millis).cast(pa.time32("ms"))
        check_date_range(millis)
        if target == timestamp_converter.TYPE_DATE:
            return floor_div(millis, MILLIS_PER_DAY).cast(pa.int32()).cast(pa.date32())
        return millis.cast(pa.timestamp("ms", tz="UTC"))


def unix_to_millis(values: pa.Array, precision: str) -> pa.Array:
    """Epoch millis of int64 unix timestamps of ``precision`` (``_unix_to_raw``)."""
    if precision == timestamp_converter.UNIX_PRECISION_SECONDS:
        if max_abs(values) > LONG_MAX // 1000:
            raise Declined("seconds out of range")
        return pc.multiply(values, 1000)
    if precision == timestamp_converter.UNIX_PRECISION_MICROS:
        return pc.divide(values, 1000)  # truncating division, as Java's
    if precision == timestamp_converter.UNIX_PRECISION_NANOS:
        return pc.divide(values, 1_000_000)
    return values


def parse_millis(array: pa.Array, date_format: JavaDateFormat | None) -> pa.Array:
    """Epoch millis of string timestamps, parsed once per distinct string; one that fails declines."""
    if date_format is None:
        raise Declined("string timestamps need a format")
    return map_distinct(array, date_format.parse_millis, pa.int64(),
                        fails=ValueError, reason="string timestamp does not match the format")


def millis_to_unix(millis: pa.Array, precision: str) -> pa.Array:
    """Unix timestamps of ``precision`` (``_unix_to_type``); one that would saturate declines."""
    if precision == timestamp_converter.UNIX_PRECISION_SECONDS:
        return pc.divide(millis, 1000)
    factor = {timestamp_converter.UNIX_PRECISION_MICROS: 1000,
              timestamp_converter.UNIX_PRECISION_NANOS: 1_000_000}.get(precision)
    if factor is None:
        return millis
    if max_abs(millis) > LONG_MAX // factor:
        raise Declined("unix timestamp saturates")
    return pc.multiply(millis, factor)


def millis_of_day(millis: pa.Array) -> pa.Array:
    """Milliseconds since midnight (UTC) as int32, for times before 1970 too (Python's ``%``)."""
    return floor_mod(millis, MILLIS_PER_DAY).cast(pa.int32())


def check_date_range(millis: pa.Array) -> None:
    """Decline where a Date or Timestamp would be out of years 1-9999 (per record: an error)."""
    bounds = pc.min_max(millis).as_py()
    if bounds["min"] is not None and (bounds["min"] < _MILLIS_MIN or bounds["max"] > _MILLIS_MAX):
        raise Declined(_OUT_OF_RANGE)


_GRANULARITY = {"S": 1, "s": 1000, "m": 60_000, "H": 3_600_000, "k": 3_600_000, "K": 3_600_000,
                "h": 3_600_000, "a": 43_200_000}


def _granularity(pattern: str) -> int:
    """The coarsest number of millis that formatting with ``pattern`` cannot tell apart (UTC)."""
    unit = MILLIS_PER_DAY
    quoted = False
    for char in pattern:
        if char == "'":
            quoted = not quoted
        elif not quoted and char in _GRANULARITY:
            unit = min(unit, _GRANULARITY[char])
    return unit


def format_millis(date_format: JavaDateFormat, millis: pa.Array) -> pa.Array:
    """``date_format.format_millis`` of every value, computed once per distinct formatted unit."""
    unit = _granularity(date_format.pattern)
    buckets = millis if unit == 1 else pc.multiply(floor_div(millis, unit), unit)
    return map_distinct(buckets, date_format.format_millis, pa.string(), fails=DataException, reason=_OUT_OF_RANGE)


# --- Flatten$Value ----------------------------------------------------------------------------


@register(flatten.Value)
class FlattenBatch(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        if not has_values(view.value.array):
            return view
        fields = view.value.maps(flatten.PURPOSE)
        out: list[tuple[str, pa.Array, bool]] = []
        maps: list[tuple[str, pa.Array]] = []
        for name, array in zip(fields.names, fields.arrays):
            self._flatten(name, array, "", out, maps, name in fields.loose)
        names = [name for name, _, _ in out]
        if len(set(names)) != len(names):
            raise Declined("flattened names collide")
        # A null map writes ``name: None`` (per-record), overwriting a leaf of the same name written
        # before it in the record's key order (which the batch does not keep); a map that is not null
        # writes only its children's names. Decline if some row has both a null map and a value there.
        leaves = {name: array for name, array, _ in out}
        for name, array in maps:
            leaf = leaves.get(name)
            if leaf is not None and pc.any(pc.and_(array.is_null(), leaf.is_valid())).as_py():
                raise Declined("a null map and a flattened value share a name")
        # Keep the names null maps write (null-valued keys) as null columns, for later renames' checks.
        for name in dict.fromkeys(name for name, array in maps if name not in leaves and array.null_count):
            out.append((name, pa.nulls(fields.length), False))
        origins = {name: origin for name, origin in fields.origins.items() if name in names}  # top level
        result = MapFields([(name, array) for name, array, _ in out], fields.length, fields.null_mask,
                           frozenset(name for name, _, loose in out if loose), origins)
        return view.with_value(result.values())

    def _flatten(self, key: str, array: pa.Array, prefix: str, out: list, maps: list, loose: bool) -> None:
        name = key if not prefix else prefix + self.transformation.delimiter + key
        k = kind(array)
        if k in (NULL, BOOL, INT, FLOAT, STRING, LIST):
            out.append((name, array, loose))
        elif k == MAP:
            maps.append((name, array))
            for child_name, child in zip(_field_names(array), array.flatten()):
                self._flatten(child_name, child, name, out, maps, loose)
        elif has_values(array):
            raise Declined(f"Flatten of {k} values fails")


def _field_names(struct: pa.Array) -> list[str]:
    return [struct.type.field(i).name for i in range(struct.type.num_fields)]


# --- HoistField$Value -------------------------------------------------------------------------


@register(hoist_field.Value)
class HoistFieldBatch(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        name = self.transformation.field_name
        value = view.value
        struct = make_struct([name], [value.array], view.num_rows, None)
        return view.with_value(Values(struct, frozenset([name]) if value.any_loose else frozenset()))


# --- ExtractField$Value -----------------------------------------------------------------------


@register(extract_field.Value)
class ExtractFieldBatch(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        value = view.value
        if not has_values(value.array):
            return view
        if not value.is_map:
            raise Declined("ExtractField of a non-map value fails")
        steps = self.transformation.field_path.steps
        current: pa.Array = value.array
        for step in steps:
            if kind(current) != MAP:
                if has_values(current):
                    raise Declined("ExtractField through a non-map value fails")
                current = pa.nulls(len(current))
                break
            names = _field_names(current)
            if step not in names:
                current = pa.nulls(len(current))
                break
            current = current.flatten()[names.index(step)]
        loose = frozenset([ALL]) if value.field_loose(steps[0]) else frozenset()
        return view.with_value(Values(current, loose))


# --- Filter, RegexRouter, TimestampRouter ---------------------------------------------------


@register(filter_smt.Filter)
class FilterBatch(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        return view.filter(pa.array(np.zeros(view.num_rows, dtype=bool)))


@register(regex_router.RegexRouter)
class RegexRouterBatch(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        return view.with_topic(map_distinct(view.topic, self.transformation.route, pa.string()))


@register(timestamp_router.TimestampRouter)
class TimestampRouterBatch(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        if view.num_rows == 0:
            return view
        if view.timestamp.null_count or smt._format_error is not None:
            raise Declined("TimestampRouter fails on this batch")
        formatted = pc.dictionary_encode(format_millis(smt.timestamp_format, view.timestamp))
        topics = pc.dictionary_encode(view.topic)
        width = len(formatted.dictionary)
        codes = pc.add(pc.multiply(topics.indices.cast(pa.int64()), width), formatted.indices.cast(pa.int64()))
        topic_names = topics.dictionary.to_pylist()
        stamps = formatted.dictionary.to_pylist()

        def topic_for(code: int) -> str:
            return smt.topic_format.replace("${topic}", topic_names[code // width]).replace(
                "${timestamp}", stamps[code % width])

        return view.with_topic(map_distinct(codes, topic_for, pa.string()))


__all__ = ["BatchTransform", "batch_form", "register", "cast_array", "check_date_range", "format_millis",
           "millis_of_day", "millis_to_unix", "parse_millis", "unix_to_millis"]
