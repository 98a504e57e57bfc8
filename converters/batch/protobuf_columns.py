"""Parsed Protobuf messages → Arrow columns typed by the Connect schema ``ProtobufData`` derives for them.

:func:`column_reader` compiles, once per message type and Connect schema, how
each Connect field's column is read from a list of parsed messages (the
``protobuf`` runtime's objects); :meth:`MessageColumns.read` then builds the
struct array field by field, each column in one pass over the messages
(``operator.attrgetter`` in ``map``, then one Arrow or numpy conversion), never
a ``Struct`` per record. The values are those of
``ProtobufData.to_connect_value``, in the Arrow types of
``converters/batch/typed.py`` (INT8/INT16 as int32, Date as int32 days,
Timestamp as int64 milliseconds):

* a field is null when ``ProtobufData.reads_presence`` says its absence
  shows (message fields, ``optional`` scalars) and it is unset; other
  scalars take their value or default;
* INT8/INT16 (``connect.type``) and uint64/fixed64 wrap as Java's integers do;
* enums are their value's name (``UNKNOWN_ENUM_VALUE_<Enum>_<n>`` for an
  unknown number), or the number with ``int.for.enums``;
* ``google.protobuf.*Value`` wrappers are structs with a ``value`` field (their
  Connect schema), or the optional primitive with ``wrapper.for.nullables``;
* a ``oneof`` is a struct with the set member (or its members as top-level
  fields with ``flatten.unions``), null when none is set;
* repeated fields are lists; ``google.protobuf.Timestamp`` and ``google.type.Date``
  are milliseconds and days.

What does not map exactly raises :class:`Declined` when the reader is
compiled (maps, ``confluent.type.Decimal``, ``google.type.TimeOfDay``, a
top-level wrapper read as a primitive) or when a column is read (a date that
is no calendar date, a timestamp beyond the years 1-9999).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter, methodcaller
from typing import Any, Callable, Optional

import numpy as np
import pyarrow as pa

from connector.api.declined import Declined
from connector.api.logical import Date, Decimal, Time, Timestamp
from connector.api.schema import Schema, Type

# FieldDescriptor type numbers (google.protobuf.descriptor.FieldDescriptor.TYPE_*)
_MESSAGE_TYPES = (10, 11)  # GROUP, MESSAGE
_ENUM = 14
_UNSIGNED_64 = (4, 6)  # UINT64, FIXED64: wrap to Java's signed long

_ARROW = {Type.INT8: pa.int32(), Type.INT16: pa.int32(), Type.INT32: pa.int32(), Type.INT64: pa.int64(),
          Type.FLOAT32: pa.float32(), Type.FLOAT64: pa.float64(), Type.BOOLEAN: pa.bool_(),
          Type.STRING: pa.string(), Type.BYTES: pa.binary()}
_BITS = {Type.INT8: 8, Type.INT16: 16}
_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
#: Milliseconds since the epoch of datetime's first and last instants: ``Timestamp.to_logical`` gives a datetime
#: in between (beyond, a stand-in the columnar path does not reproduce).
_FIRST_MILLI = (dt.datetime(1, 1, 1) - dt.datetime(1970, 1, 1)) // dt.timedelta(milliseconds=1)
_LAST_MILLI = (dt.datetime(9999, 12, 31, 23, 59, 59, 999000) - dt.datetime(1970, 1, 1)) // dt.timedelta(milliseconds=1)
_LAST_SECOND = _LAST_MILLI // 1000

Mask = Optional[np.ndarray]  # True where the row is null
#: Reads one column from the parsed values of a field (one per row); ``mask`` marks the rows that are null.
ValuesReader = Callable[[list, Mask], pa.Array]


@dataclass(frozen=True)
class _Column:
    """One Connect field of a message: its name and how its column is read from the messages."""

    name: str
    read: Callable[[list], pa.Array]


class MessageColumns:
    """The columns of one message type, as the struct array of its Connect STRUCT schema."""

    def __init__(self, columns: list[_Column]):
        self.columns = columns

    def read(self, messages: list, mask: Mask = None) -> pa.StructArray:
        arrays = [column.read(messages) for column in self.columns]
        fields = [pa.field(column.name, array.type) for column, array in zip(self.columns, arrays)]
        return pa.StructArray.from_arrays(arrays, fields=fields,
                                          mask=pa.array(mask) if mask is not None and mask.any() else None)


def column_reader(descriptor: Any, schema: Schema, data: Any, where: str = "") -> MessageColumns:
    """How to read messages of ``descriptor`` as ``schema`` (a Connect STRUCT); Declined where not exact.

    ``data``: the converter's ``ProtobufData`` (its options decide presence, enums and unions).
    """
    if schema.type is not Type.STRUCT:
        raise Declined(f"a top-level {descriptor.full_name} read as a {schema.type.name}")
    fields = {field.name: field.schema for field in schema.fields()}
    columns: list[_Column] = []
    for oneof in data.real_oneofs(descriptor):
        columns.extend(_oneof_columns(oneof, fields, data, where))
    for info in data.field_infos(descriptor):
        if info.in_real_oneof:
            continue
        values = _values_reader(info, fields[info.name], data, _path(where, info.name))
        columns.append(_Column(info.name, _field_read(info.name, values, data.reads_presence(info))))
    by_name = {column.name: column for column in columns}
    return MessageColumns([by_name[name] for name in fields])  # in the Connect schema's order


def _path(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _field_read(name: str, values: ValuesReader, presence: bool) -> Callable[[list], pa.Array]:
    """A field's column: its values, null where presence shows it unset."""
    get = attrgetter(name)
    has = methodcaller("HasField", name)

    def read(messages: list) -> pa.Array:
        mask = ~np.fromiter(map(has, messages), bool, len(messages)) if presence else None
        return values(list(map(get, messages)), mask)

    return read


def _oneof_columns(oneof: Any, fields: dict[str, Schema], data: Any, where: str) -> list[_Column]:
    """A oneof's column: a struct with the set member (null when none is), or one column per member (flattened)."""
    which = methodcaller("WhichOneof", oneof.name)
    infos = {info.number: info for info in data.field_infos(oneof.containing_type)}
    members = [infos[fd.number] for fd in oneof.fields]

    def member_read(info: Any, schema: Schema) -> Callable[[list, list], pa.Array]:
        values = _values_reader(info, schema, data, _path(where, info.name))
        get = attrgetter(info.name)
        return lambda messages, set_names: values(list(map(get, messages)),
                                                  np.array([name != info.name for name in set_names], bool))

    if data.flatten_unions:
        return [_Column(info.name, _with_set_names(which, member_read(info, fields[info.name])))
                for info in members]
    union_name = data.union_field_name(oneof)
    members_schemas = {field.name: field.schema for field in fields[union_name].fields()}
    member_reads = [(info.name, member_read(info, members_schemas[info.name])) for info in members]

    def read_union(messages: list) -> pa.StructArray:
        set_names = list(map(which, messages))
        arrays = [read(messages, set_names) for _, read in member_reads]
        unset = np.array([name is None for name in set_names], bool)
        fields = [pa.field(name, array.type) for (name, _), array in zip(member_reads, arrays)]
        return pa.StructArray.from_arrays(arrays, fields=fields, mask=pa.array(unset) if unset.any() else None)

    return [_Column(union_name, read_union)]


def _with_set_names(which: Callable, read: Callable[[list, list], pa.Array]) -> Callable[[list], pa.Array]:
    return lambda messages: read(messages, list(map(which, messages)))


def _values_reader(info: Any, schema: Schema, data: Any, where: str) -> ValuesReader:
    """How a field's values (one per row: scalars, messages or repeated containers) become a column of ``schema``."""
    if info.repeated:
        if schema.type is not Type.ARRAY or schema.value_schema is None:
            raise Declined(f"a map field {where}")
        return _list_reader(_element_reader(info, schema.value_schema, data, where))
    return _element_reader(info, schema, data, where)


def _element_reader(info: Any, schema: Schema, data: Any, where: str) -> ValuesReader:
    """Values of one field (or elements of a repeated one) as ``schema``: logical types, messages, scalars."""
    if schema.name == Timestamp.LOGICAL_NAME and schema.type is Type.INT64:
        return _timestamps(where)
    if schema.name == Date.LOGICAL_NAME and schema.type is Type.INT32:
        return _dates(where)
    if schema.name in (Decimal.LOGICAL_NAME, Time.LOGICAL_NAME):
        raise Declined(f"a {schema.name.rsplit('.', 1)[-1]} field {where}")
    if info.type in _MESSAGE_TYPES:
        message = info.fd.message_type
        if schema.type is Type.STRUCT:
            columns = column_reader(message, schema, data, where)
            return columns.read
        if schema.type in _ARROW:  # a google.protobuf.*Value wrapper read as its primitive (wrapper.for.nullables)
            inner = data.field_infos(message)[0]
            primitive = _scalars(inner.fd, schema.type, data)
            return lambda wrappers, mask: primitive(list(map(attrgetter("value"), wrappers)), mask)
        raise Declined(f"a {schema.type.name} field {where} of message type {message.full_name}")
    if schema.type not in _ARROW:
        raise Declined(f"a {schema.type.name} field {where}")
    return _scalars(info.fd, schema.type, data)


def _scalars(fd: Any, connect: Type, data: Any) -> ValuesReader:
    """Scalar values of field ``fd`` as Connect ``connect`` values, as ``ProtobufData._scalar_or_message`` gives."""
    arrow = _ARROW[connect]
    if fd.type == _ENUM and connect is Type.STRING:
        return _enum_names(fd.enum_type)
    if connect in _BITS:
        bits = _BITS[connect]
        half = 1 << (bits - 1)

        def wrapped(values: list, mask: Mask) -> pa.Array:
            numbers = np.fromiter(values, np.int64, len(values))
            return pa.array((((numbers + half) & ((1 << bits) - 1)) - half).astype(np.int32), mask=mask)

        return wrapped
    if connect is Type.INT64 and fd.type in _UNSIGNED_64:
        return lambda values, mask: pa.array(np.fromiter(values, np.uint64, len(values)).view(np.int64), mask=mask)
    return lambda values, mask: pa.array(values, arrow, mask=mask)


def _enum_names(enum: Any) -> ValuesReader:
    names = {value.number: value.name for value in enum.values}

    def name_of(number: int) -> str:
        found = names.get(number)
        return found if found is not None else f"UNKNOWN_ENUM_VALUE_{enum.name}_{number}"

    return lambda values, mask: pa.array(list(map(name_of, values)), pa.string(), mask=mask)


def _list_reader(elements: ValuesReader) -> ValuesReader:
    """Repeated containers (one per row) as a list column; a repeated field is never null, only empty."""

    def read(containers: list, mask: Mask) -> pa.Array:
        lengths = np.fromiter(map(len, containers), np.int32, len(containers))
        offsets = np.zeros(len(containers) + 1, np.int32)
        np.cumsum(lengths, out=offsets[1:])
        return pa.ListArray.from_arrays(pa.array(offsets), elements(list(chain.from_iterable(containers)), None))

    return read


def _timestamps(where: str) -> ValuesReader:
    """google.protobuf.Timestamp messages as milliseconds: ``seconds * 1000 + int(nanos / 1e6)``, as per record."""

    def read(stamps: list, mask: Mask) -> pa.Array:
        shown = ~mask if mask is not None else np.ones(len(stamps), bool)
        seconds = np.fromiter(map(attrgetter("seconds"), stamps), np.int64, len(stamps))
        # first the seconds (so the product below cannot overflow), then the instant itself
        if np.any(shown & (np.abs(seconds) > _LAST_SECOND * 2)):
            raise Declined(f"a timestamp beyond the years 1-9999 in field {where}")
        nanos = np.fromiter(map(attrgetter("nanos"), stamps), np.int64, len(stamps))
        millis = np.where(shown, seconds, 0) * 1000 + np.trunc(nanos / 1_000_000).astype(np.int64)
        if np.any(shown & ((millis < _FIRST_MILLI) | (millis > _LAST_MILLI))):
            raise Declined(f"a timestamp beyond the years 1-9999 in field {where}")
        return pa.array(millis, pa.int64(), mask=mask)

    return read


def _dates(where: str) -> ValuesReader:
    """google.type.Date messages as days since the epoch; one that is no calendar date declines (per record:
    an error)."""

    def read(dates: list, mask: Mask) -> pa.Array:
        shown = ~mask if mask is not None else np.ones(len(dates), bool)
        days = np.zeros(len(dates), np.int32)
        try:
            for row in np.flatnonzero(shown):
                date = dates[row]
                days[row] = dt.date(date.year, date.month, date.day).toordinal() - _EPOCH_ORDINAL
        except ValueError as exc:
            raise Declined(f"a google.type.Date that is no calendar date in field {where}") from exc
        return pa.array(days, pa.int32(), mask=mask)

    return read
