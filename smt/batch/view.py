"""An Arrow view of a batch of records, as the batch SMTs read and produce it.

A :class:`RecordBatchView` holds one column per :class:`SinkRecord` attribute
(topic, partition, offset, timestamp, timestamp type, raw key, headers) and
the value as :class:`Values`: an Arrow array whose row ``i`` stands for the
Connect value of record ``i``. ``index`` keeps, for every row, its position
in the batch the view was made from, so rows that survive the chain can be
traced back to their source record (and its coordinates).

How values are represented
--------------------------

Schemaless values (what ``JsonConverter`` with ``schemas.enable=false``
produces) are Connect Maps with string keys. A batch of them is one
``pa.StructArray`` whose fields are the union of the maps' keys; a null row
is a null value (a tombstone). Other values (after ``ExtractField``) are
plain Arrow arrays: integers, floating point, booleans, strings, lists,
structs (maps), and ``date32`` / ``time32[ms]`` / ``timestamp[ms, UTC]`` for
Connect's Date, Time and Timestamp.

Two facts about a per-record map are not kept, because nothing downstream of
the chain can observe them (see docs/smt.md, "Batch path"):

* **null-valued keys**: a struct field that is null in a row stands for
  "the key is absent, or present with a null value". Everything after the
  chain (the record converter, the router's field lookup, the batch SMTs
  themselves) treats both alike, and batch SMTs decline whenever a result
  could depend on the difference (key collisions in renames, flattening).
* **key order**: the struct's field order is the first-seen order of the
  batch, not each map's. Batch SMTs decline when order could matter.

Values are therefore compared "modulo null-valued keys" (:func:`normalized`).

One more fact may be unknown: whether a floating-point value came from a JSON
integer. A JSON column holding both ``1`` and ``1.5`` is read as doubles, while
the per-record path has ``int`` 1 and ``float`` 1.5. Such top-level fields are
*loose* (:attr:`Values.loose`); a batch SMT whose result would depend on the
kind (``Cast`` to string, a ``MaskField`` replacement that parses differently
as long and double, ...) declines for them, and conversion into an Iceberg
column only accepts them where the kind cannot matter.
"""

from __future__ import annotations

import datetime as _dt
import enum
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined


class _Marker(enum.Enum):
    """A marker in :attr:`Values.loose` (an enum member: one object, equal to no field name, pickled as itself)."""

    ALL = "every part of the value may be loose"

    def __repr__(self) -> str:
        return self.name


ALL: Any = _Marker.ALL


@dataclass(frozen=True)
class Values:
    """The record values of a view: one Arrow array, row ``i`` = value of record ``i``.

    ``loose``: top-level field names (of a struct value) whose floating-point
    values may stand for JSON integers, or :data:`ALL` when that holds for the
    whole value. ``origins``: for loose fields still holding the values parsed
    from JSON, the key they were read from (so that
    :meth:`RecordBatchView.is_loose` can check the JSON text). ``pristine``:
    the values are still exactly those parsed from the view's raw JSON (no
    stage changed them; rows may have been selected), so a per-record stage
    can decode them from the text instead of from the maps. ``schema``: for
    values with a Connect schema (typed views, :mod:`smt.batch.typed_rules`), the
    schema of every non-null row; None for schemaless values.
    """

    array: pa.Array
    loose: frozenset = frozenset()
    origins: Mapping[str, str] = field(default_factory=dict)  # loose field -> its key in the raw JSON
    pristine: bool = False
    schema: Any = None

    @property
    def is_map(self) -> bool:
        return pa.types.is_struct(self.array.type)

    def field_loose(self, name: str) -> bool:
        return ALL in self.loose or name in self.loose

    @property
    def any_loose(self) -> bool:
        return bool(self.loose)

    def maps(self, purpose: str) -> "MapFields":
        """The value as maps; Declined if some non-null value is not a map (the SMT would fail)."""
        if not self.is_map:
            if self.array.null_count != len(self.array):
                raise Declined(f"{purpose}: values are not maps")
            return MapFields([], len(self.array), _all_null_mask(len(self.array)), loose=frozenset())
        return MapFields.of(self)

    @classmethod
    def from_json(cls, array: pa.Array, loose: Iterable[str]) -> "Values":
        """Maps parsed from JSON; ``loose`` fields can be checked against the text (their own keys)."""
        loose = frozenset(loose)
        return cls(array, loose, {name: name for name in loose}, pristine=True)

    def to_pylist(self) -> list[Any]:
        return to_python(self.array)


def _all_null_mask(length: int) -> pa.Array:
    return pa.array(np.ones(length, dtype=bool))


class MapFields:
    """A struct value taken apart: ordered (name, child) pairs plus row validity, for editing.

    Children are full-length arrays (rows where the map is null hold anything);
    :meth:`values` puts the struct back together.
    """

    def __init__(self, fields: list[tuple[str, pa.Array]], length: int, null_mask: pa.Array | None,
                 loose: frozenset, origins: Mapping[str, str] | None = None):
        self.names: list[str] = [name for name, _ in fields]
        self.arrays: list[pa.Array] = [array for _, array in fields]
        self.length = length
        self.null_mask = null_mask  # True where the value is null; None when there is none
        self.loose = set(loose)
        self.origins = dict(origins or {})

    @classmethod
    def of(cls, values: Values) -> "MapFields":
        struct = values.array
        names = [struct.type.field(i).name for i in range(struct.type.num_fields)]
        arrays = [_child(struct, i) for i in range(len(names))]
        mask = struct.is_null() if struct.null_count else None
        loose = frozenset(names) if ALL in values.loose else values.loose
        return cls(list(zip(names, arrays)), len(struct), mask, loose, values.origins)

    def field_loose(self, name: str) -> bool:
        return name in self.loose

    def get(self, name: str) -> pa.Array | None:
        try:
            return self.arrays[self.names.index(name)]
        except ValueError:
            return None

    def put(self, name: str, array: pa.Array, loose: bool = False) -> None:
        """``map.put(name, value)``: replace in place, or append."""
        if name in self.names:
            self.arrays[self.names.index(name)] = array
        else:
            self.names.append(name)
            self.arrays.append(array)
        if loose:
            self.loose.add(name)
        else:
            self.loose.discard(name)
            self.origins.pop(name, None)

    def values(self) -> Values:
        if len(set(self.names)) != len(self.names):
            raise Declined("duplicate keys")
        struct = make_struct(self.names, self.arrays, self.length, self.null_mask)
        loose = frozenset(n for n in self.loose if n in self.names)
        return Values(struct, loose, {k: v for k, v in self.origins.items() if k in loose})


def _child(struct: pa.StructArray, index: int) -> pa.Array:
    child = struct.field(index)
    if len(child) != len(struct):  # an offset slice: field() may not apply it
        child = child.slice(struct.offset, len(struct))
    return child


def make_struct(names: Sequence[str], arrays: Sequence[pa.Array], length: int,
                null_mask: pa.Array | None) -> pa.StructArray:
    """A struct array of these children (possibly none) with nulls where ``null_mask`` is true."""
    if null_mask is not None and not pc.any(null_mask).as_py():
        null_mask = None
    if not names:
        validity = None if null_mask is None else _bitmap(pc.invert(null_mask))
        return pa.StructArray.from_buffers(pa.struct([]), length, [validity],
                                           null_count=-1 if validity is not None else 0)
    arrays = [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in arrays]
    fields = [pa.field(name, array.type) for name, array in zip(names, arrays)]
    return pa.StructArray.from_arrays(arrays, fields=fields, mask=null_mask)


def _bitmap(bits: pa.BooleanArray) -> pa.Buffer:
    """A validity bitmap buffer of a boolean array without nulls (offset 0)."""
    packed = np.packbits(np.asarray(bits.to_numpy(zero_copy_only=False), dtype=bool), bitorder="little")
    return pa.py_buffer(packed.tobytes())


def constant(value: Any, length: int, type: pa.DataType) -> pa.Array:
    """``length`` copies of one value."""
    if length == 0:
        return pa.array([], type=type)
    return pa.array([value], type=type).take(pa.array(np.zeros(length, dtype=np.int64)))


@dataclass(frozen=True)
class RecordBatchView:
    """A batch of records column by column. All arrays have ``num_rows`` rows."""

    topic: pa.Array  # string
    partition: pa.Array  # int32
    offset: pa.Array  # int64
    timestamp: pa.Array  # int64, nullable
    timestamp_type: pa.Array  # int8
    key: pa.Array  # raw key bytes (binary); not decoded: the batch SMTs are $Value ones
    headers: pa.Array  # list<struct<key: string, value: binary>>
    value: Values
    index: pa.Array  # int64: row position in the source batch
    original_topic: pa.Array = field(default=None)
    original_partition: pa.Array = field(default=None)
    raw_value: pa.Array | None = None  # the values' JSON text, to tell JSON integers from floats
    # Typed views: true where the record is a tombstone (no value and no schema). A null value that is
    # not one carries ``value.schema`` (a null field ExtractField took out of a Struct), and the SMTs
    # treat the two differently. None: every null value is a tombstone (what the decoders give).
    tombstone: pa.Array | None = None

    def __post_init__(self) -> None:
        if self.original_topic is None:
            object.__setattr__(self, "original_topic", self.topic)
        if self.original_partition is None:
            object.__setattr__(self, "original_partition", self.partition)

    @property
    def num_rows(self) -> int:
        return len(self.offset)

    @classmethod
    def from_raw(cls, batch: pa.RecordBatch, values: Values, raw: bool = True) -> "RecordBatchView":
        """A view of a raw Kafka batch (``connector.kafka.range_reader.RAW_SCHEMA``) with decoded values.

        ``raw``: keep the raw values (JSON text, for :meth:`is_loose`); not for values decoded otherwise.
        """
        return cls(
            topic=batch.column("topic"), partition=batch.column("partition"),
            offset=batch.column("offset"), timestamp=batch.column("timestamp"),
            timestamp_type=batch.column("timestamp_type"), key=batch.column("key"),
            headers=batch.column("headers"), value=values,
            index=pa.array(np.arange(batch.num_rows, dtype=np.int64)),
            raw_value=batch.column("value") if raw else None,
        )

    def with_value(self, values: Values) -> "RecordBatchView":
        return replace(self, value=values)

    def with_topic(self, topic: pa.Array) -> "RecordBatchView":
        return replace(self, topic=topic)

    def _columns(self) -> dict[str, pa.Array]:
        columns = {
            "topic": self.topic, "partition": self.partition, "offset": self.offset,
            "timestamp": self.timestamp, "timestamp_type": self.timestamp_type, "key": self.key,
            "headers": self.headers, "index": self.index, "original_topic": self.original_topic,
            "original_partition": self.original_partition,
        }
        if self.raw_value is not None:
            columns["raw_value"] = self.raw_value
        if self.tombstone is not None:
            columns["tombstone"] = self.tombstone
        return columns

    def carries_schema(self) -> bool:
        """Whether some record has ``value.schema``: a non-null value, or a null one that is no tombstone."""
        return has_rows(self.value.array) or self.has_nulls_with_schema()

    def has_nulls_with_schema(self) -> bool:
        """Whether some null value is no tombstone (it has ``value.schema``)."""
        array = self.value.array
        if self.tombstone is None or not array.null_count:
            return False
        return bool(pc.any(pc.and_(array.is_null(), pc.invert(self.tombstone))).as_py())

    def is_loose(self, name: str) -> bool:
        """Whether field ``name`` of the (map) values may hold floats that were JSON integers.

        A loose field is checked against the JSON text, once per batch and only
        when an SMT needs to know: it is exact when no row that holds it writes
        an integer for its key (rows with backslashes, which could spell the key
        with escapes, leave it loose).
        """
        values = self.value
        if not values.field_loose(name):
            return False
        origin = values.origins.get(name)
        if origin is None or self.raw_value is None or ALL in values.loose:
            return True
        cache = self.__dict__.setdefault("_exact", {})
        if name not in cache:
            cache[name] = _no_integers_for(self.raw_value, values.array, name, origin)
        return not cache[name]

    def loose_fields(self) -> frozenset:
        """:attr:`Values.loose` without the fields :meth:`is_loose` finds exact."""
        if ALL in self.value.loose:
            return self.value.loose
        return frozenset(name for name in self.value.loose if self.is_loose(name))

    def filter(self, mask: pa.Array) -> "RecordBatchView":
        """The rows where ``mask`` is true (in order)."""
        columns = {name: pc.filter(array, mask) for name, array in self._columns().items()}
        return RecordBatchView(**columns, value=replace(self.value, array=pc.filter(self.value.array, mask)))

    def take(self, indices: pa.Array) -> "RecordBatchView":
        columns = {name: pc.take(array, indices) for name, array in self._columns().items()}
        return RecordBatchView(**columns, value=replace(self.value, array=pc.take(self.value.array, indices)))

    # --- per-record views, for tests and diagnostics -----------------------------------

    def topics(self) -> list[str]:
        return self.topic.to_pylist()

    def values(self) -> list[Any]:
        return self.value.to_pylist()


def _no_integers_for(raw: pa.Array, struct: pa.Array, name: str, origin: str) -> bool:
    """No row holding field ``name`` writes a JSON integer for key ``origin`` (and none has a backslash)."""
    index = [struct.type.field(i).name for i in range(struct.type.num_fields)].index(name)
    rows = pc.fill_null(struct.field(index).is_valid(), False)
    if struct.null_count:
        rows = pc.and_(rows, struct.is_valid())
    text = raw.filter(rows)
    if len(text) == 0:
        return True
    if pc.any(pc.match_substring(text, "\\")).as_py():
        return False
    key = "".join(c if c.isalnum() or ord(c) > 127 else "\\x{%x}" % ord(c) for c in origin)
    return not pc.any(pc.match_substring_regex(text, f'"{key}"\\s*:\\s*-?[0-9]+\\s*[,}}]')).as_py()


def concat_views(parts: Iterable[RecordBatchView]) -> RecordBatchView:
    """Rows of several views, one after another; Declined if their values cannot share one Arrow type."""
    parts = [p for p in parts]
    if len(parts) == 1:
        return parts[0]
    names = parts[0]._columns().keys() & set.intersection(*(set(p._columns()) for p in parts))
    columns = {name: pa.concat_arrays([p._columns()[name] for p in parts]) for name in names}
    arrays = [p.value.array for p in parts]
    loose: set = set()
    for p in parts:
        loose |= p.value.loose
    origins = {k: v for k, v in parts[0].value.origins.items()
               if all(p.value.origins.get(k, v) == v for p in parts)}
    pristine = all(p.value.pristine for p in parts)
    return RecordBatchView(**columns, value=Values(unify_arrays(arrays), frozenset(loose), origins, pristine,
                                                   _common_schema(parts)))


def _common_schema(parts: list[RecordBatchView]) -> Any:
    """The Connect schema of the parts' records that have one; Declined if they differ (one schema per batch)."""
    schemas = [p.value.schema for p in parts if p.carries_schema()] or [parts[0].value.schema]
    if any(schema != schemas[0] for schema in schemas[1:]):
        raise Declined("rows with different schemas after a stage with a predicate")
    return schemas[0]


def has_rows(array: pa.Array) -> bool:
    """Whether some value is not null."""
    return array.null_count != len(array)


def unify_arrays(arrays: list[pa.Array]) -> pa.Array:
    """Concatenate arrays whose types may differ only where one side is all-null or lacks struct fields."""
    arrays = [_nulls_as_null_type(a) for a in arrays]
    target = arrays[0].type
    for array in arrays[1:]:
        target = _unified_type(target, array.type)
    return pa.concat_arrays([_conform(a, target) for a in arrays])


def _nulls_as_null_type(array: pa.Array) -> pa.Array:
    """All-null arrays (also struct children) typed ``null``: they take any type."""
    if array.null_count == len(array):
        return pa.nulls(len(array))
    if pa.types.is_struct(array.type):
        names = [array.type.field(i).name for i in range(array.type.num_fields)]
        children = [_nulls_as_null_type(_child(array, i)) for i in range(len(names))]
        if any(c.type != array.type.field(i).type for i, c in enumerate(children)):
            return make_struct(names, children, len(array), array.is_null() if array.null_count else None)
    return array


def _unified_type(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    if a == b:
        return a
    if pa.types.is_null(a):
        return b
    if pa.types.is_null(b):
        return a
    if pa.types.is_struct(a) and pa.types.is_struct(b):
        fields: dict[str, pa.DataType] = {}
        for t in (a, b):
            for i in range(t.num_fields):
                f = t.field(i)
                fields[f.name] = _unified_type(fields[f.name], f.type) if f.name in fields else f.type
        if len(fields) != a.num_fields + b.num_fields - len({a.field(i).name for i in range(a.num_fields)}
                                                            & {b.field(i).name for i in range(b.num_fields)}):
            raise Declined("duplicate struct fields")
        return pa.struct([pa.field(n, t) for n, t in fields.items()])
    if (pa.types.is_list(a) or pa.types.is_large_list(a)) and (pa.types.is_list(b) or pa.types.is_large_list(b)):
        element = _unified_type(a.value_type, b.value_type)
        return pa.large_list(element) if pa.types.is_large_list(a) or pa.types.is_large_list(b) \
            else pa.list_(element)
    raise Declined(f"values of types {a} and {b} in one column")


def _conform(array: pa.Array, target: pa.DataType) -> pa.Array:
    """``array`` as ``target`` (a widening of its type by :func:`_unified_type`)."""
    if array.type == target:
        return array
    if pa.types.is_null(array.type):
        return pa.nulls(len(array), type=target)
    if pa.types.is_struct(target):
        names = [array.type.field(i).name for i in range(array.type.num_fields)]
        children = []
        for i in range(target.num_fields):
            f = target.field(i)
            if f.name in names:
                children.append(_conform(_child(array, names.index(f.name)), f.type))
            else:
                children.append(pa.nulls(len(array), type=f.type))
        mask = array.is_null() if array.null_count else None
        return make_struct([target.field(i).name for i in range(target.num_fields)], children, len(array), mask)
    if pa.types.is_list(target) or pa.types.is_large_list(target):
        offsets = pc.subtract(array.offsets, array.offsets[0]).cast(
            pa.int64() if pa.types.is_large_list(target) else pa.int32())
        start, end = array.offsets[0].as_py(), array.offsets[-1].as_py()
        elements = _conform(array.values.slice(start, end - start), target.value_type)
        mask = array.is_null() if array.null_count else None
        cls = pa.LargeListArray if pa.types.is_large_list(target) else pa.ListArray
        return cls.from_arrays(offsets, elements, type=target, mask=mask)
    return array.cast(target)


# --- per-record values -----------------------------------------------------------------


def to_python(array: pa.Array) -> list[Any]:
    """The per-record Python values: maps as dicts (null-valued keys dropped), lists, scalars."""
    return [_clean(v) for v in array.to_pylist()]


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def normalized(value: Any, loose: bool = False) -> Any:
    """A value in a form where equal means "equal for everything downstream of the chain".

    Null-valued map entries are dropped; scalars are tagged with their kind
    (``1`` and ``1.0`` differ), except under ``loose``, where int and float
    compare as numbers.
    """
    if isinstance(value, dict):
        return {k: normalized(v, loose) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [normalized(v, loose) for v in value]
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)) and loose:
        return ("number", float(value))
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", value)
    if isinstance(value, _dt.datetime):
        return ("datetime", value)
    if isinstance(value, _dt.date):
        return ("date", value)
    if isinstance(value, _dt.time):
        return ("time", value)
    return (type(value).__name__, value)
