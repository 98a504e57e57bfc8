"""``TimestampConverter$Value`` for values with a Connect schema, column-wise.

Follows ``TimestampConverter.apply_with_schema``: the source format comes from
the schema (``timestamp_type_from_schema``: Timestamp, Date, Time by name,
else STRING or INT64), every conversion goes through epoch milliseconds, and
the target is held in the typed representation (:mod:`smt.batch.typed`):
unix as int64, string as string, Date as int32 days, Time as int32 ms of day,
Timestamp as int64 ms. The new schema is the SMT's own (``updated_schema``
for a field, the target's ``type_schema`` for the whole value).

Strings are parsed, and millis formatted, by the same ``JavaDateFormat`` the
per-record SMT uses, once per distinct value, so a result is the per-record
one by construction; a string that does not parse, or a result out of the
range Kafka's types hold, declines the batch for the per-record path to raise.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from connector.api.errors import ConnectException
from connector.api.logical import MILLIS_PER_DAY
from connector.api.schema import Schema
from smt.batch.kernels import floor_div, has_values
from smt.batch.transforms import (
    BatchTransform,
    check_date_range,
    format_millis,
    millis_of_day,
    millis_to_unix,
    parse_millis,
    unix_to_millis,
)
from smt.batch.typed_rules import null_mask, plain, register_typed, schema_of, struct_fields, typed_view
from smt.batch.view import RecordBatchView, Values
from smt.transforms import timestamp_converter as tc

#: Arrow types of the typed representation of each target type.
TYPED_OUT = {tc.TYPE_UNIX: pa.int64(), tc.TYPE_STRING: pa.string(), tc.TYPE_DATE: pa.int32(),
             tc.TYPE_TIME: pa.int32(), tc.TYPE_TIMESTAMP: pa.int64()}


@register_typed(tc.Value)
class TimestampConverterTyped(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        values = view.value
        # A null with a schema is converted with it (the schema must be a timestamp type, or a Struct).
        if not view.carries_schema():
            return view  # tombstones take the schemaless branch: they stay null
        if values.schema is None:
            raise Declined("TimestampConverter: values without a schema")
        if not smt.settings.field:
            converted = self.convert(values.array, values.schema)
            updated = tc.TRANSLATORS[smt.settings.type].type_schema(values.schema.optional)
            return view.with_value(Values(converted, schema=updated))
        schema, columns = struct_fields(values, tc.PURPOSE, with_defaults=smt.replace_null_with_default)
        updated = schema_of(smt.updated_schema, schema, "converting the schema")
        arrays = [self.convert(columns[f.name], f.schema) if f.name == smt.settings.field else columns[f.name]
                  for f in schema.fields()]
        return typed_view(view, updated, list(columns), arrays, null_mask(values.array))

    def convert(self, array: pa.Array, schema: Schema) -> pa.Array:
        """``convert_timestamp(v, timestamp_type_from_schema(schema))`` of every value, typed."""
        settings = self.transformation.settings
        source = _source_type(schema)  # asked even for a null value, as per record
        if not has_values(array):
            return pa.nulls(len(array), type=TYPED_OUT[settings.type])
        return _from_millis(_to_millis(plain(array), source, settings), settings)


def _source_type(schema: Schema) -> str:
    try:
        return tc.timestamp_type_from_schema(schema)
    except ConnectException as exc:
        raise Declined(f"TimestampConverter of a {schema.type.name} fails") from exc


def _to_millis(array: pa.Array, source: str, settings: Any) -> pa.Array:
    if source == tc.TYPE_STRING:
        return parse_millis(array, settings.format)
    if not pa.types.is_integer(array.type):
        raise Declined(f"TimestampConverter of {source} values held as {array.type}")
    values = array.cast(pa.int64())
    if source == tc.TYPE_UNIX:
        return unix_to_millis(values, settings.unix_precision)
    if source == tc.TYPE_DATE:
        return pc.multiply(values, MILLIS_PER_DAY)
    return values  # Time: ms of day, Timestamp: epoch ms


def _from_millis(millis: pa.Array, settings: Any) -> pa.Array:
    target = settings.type
    if target == tc.TYPE_UNIX:
        return millis_to_unix(millis, settings.unix_precision)
    if target == tc.TYPE_STRING:
        return format_millis(settings.format, millis)
    if target == tc.TYPE_TIME:
        return millis_of_day(millis)
    check_date_range(millis)
    if target == tc.TYPE_DATE:
        return floor_div(millis, MILLIS_PER_DAY).cast(pa.int32())  # days before 1970 round down, as per record
    return millis
