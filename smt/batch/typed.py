"""Column-wise forms of Kafka's value SMTs for values with a Connect schema (Structs).

A *typed* view's :class:`~smt.batch.view.Values` carry ``schema``: the
Connect STRUCT schema every non-null row has (the batch was decoded with one
registry schema, say). The array is a struct array in the representation
``converters/batch/typed.py`` reads: INT8/16/32 as int32, Date as int32
days, Time as int32 milliseconds of the day, Timestamp as int64 milliseconds,
STRUCT as struct, ARRAY as list. A
null row is a tombstone (per record its value *and* schema are null, so the
SMTs take their schemaless branch for it) where the view's ``tombstone``
column says so; other null rows are nulls ExtractField took out of Structs,
which keep the schema, and an SMT that checks a schema whatever the value
(TimestampConverter, SetSchemaMetadata) checks theirs too
(:meth:`~smt.batch.view.RecordBatchView.carries_schema`).

Each form follows the SMT's ``apply_with_schema``. The new schema comes from
the SMT's own schema code (``updated_schema``, with its cache), so it is
exactly the per-record one, including the errors it raises; the values are
moved column by column. Where the per-record SMT would raise, or where its
result could differ (a null in a field with a default, which ``Struct.get``
replaces), the form declines with a reason.

Filter, RegexRouter and TimestampRouter never look at values: their
schemaless forms serve typed views unchanged. Cast, TimestampConverter,
Flatten and SetSchemaMetadata have their own modules (``typed_cast``,
``typed_timestamp``, ``typed_structure``); all register in ``typed_rules``.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

import pyarrow as pa

import smt.batch.typed_cast as typed_cast
import smt.batch.typed_structure as typed_structure
import smt.batch.typed_timestamp as typed_timestamp
from connector.api.declined import Declined
from connector.api.errors import ConnectException
from connector.api.logical import EPOCH, EPOCH_DATE, Date, Timestamp, logical_type_of
from connector.api.schema import Schema, Type, validate_value
from smt.batch.kernels import empty_lists_like, has_values, like
from smt.batch.transforms import BatchTransform, FilterBatch, RegexRouterBatch, TimestampRouterBatch
from smt.batch.typed_rules import (
    check_nulls_keep_schema,
    lookup,
    null_mask,
    register_typed,
    schema_of,
    struct_fields,
    typed_view,
)
from smt.batch.view import RecordBatchView, Values, constant
from smt.transforms import (
    extract_field,
    hoist_field,
    insert_field,
    mask_field,
    regex_router,
    replace_field,
    timestamp_router,
)
from smt.transforms import filter as filter_smt

# The typed forms defined in their own modules register themselves when imported.
_OTHER_FORMS = (typed_cast, typed_timestamp, typed_structure)


def typed_batch_form(transformation: Any) -> BatchTransform | None:
    """The batch form of a configured transformation for typed views (exact class only), or None."""
    return lookup(transformation)


register_typed(filter_smt.Filter)(FilterBatch)
register_typed(regex_router.RegexRouter)(RegexRouterBatch)
register_typed(timestamp_router.TimestampRouter)(TimestampRouterBatch)


# --- InsertField$Value ----------------------------------------------------------------------------


@register_typed(insert_field.Value)
class InsertFieldTyped(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        if not has_values(view.value.array):
            return view  # every value is null: the records are unchanged
        schema, columns = struct_fields(view.value, insert_field.PURPOSE)
        updated = schema_of(smt.updated_schema, schema, "inserting fields")
        check_nulls_keep_schema(view, updated)
        inserted = self._inserted(view)
        arrays = [columns[f.name] if f.name in columns else inserted[f.name] for f in updated.fields()]
        for field in updated.fields():
            if not field.schema.optional and field.name in inserted and inserted[field.name].null_count:
                raise Declined(f"a null for required inserted field {field.name}")
        return typed_view(view, updated, [f.name for f in updated.fields()], arrays, null_mask(view.value.array))

    def _inserted(self, view: RecordBatchView) -> dict[str, pa.Array]:
        """The inserted fields' columns, in the representation of their schemas (Timestamp as millis)."""
        smt = self.transformation
        inserted: dict[str, pa.Array] = {}
        if smt.topic_field is not None:
            inserted[smt.topic_field.name] = view.topic.cast(pa.string())
        if smt.partition_field is not None:
            inserted[smt.partition_field.name] = view.partition.cast(pa.int32())
        if smt.offset_field is not None:
            inserted[smt.offset_field.name] = view.offset.cast(pa.int64())
        if smt.timestamp_field is not None:
            inserted[smt.timestamp_field.name] = view.timestamp.cast(pa.int64())
        if smt.static_field is not None:
            inserted[smt.static_field.name] = constant(smt.static_value, view.num_rows, pa.string())
        return inserted


# --- ReplaceField$Value ---------------------------------------------------------------------------


@register_typed(replace_field.Value)
class ReplaceFieldTyped(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        if not has_values(view.value.array):
            return view
        schema, columns = struct_fields(view.value, replace_field.PURPOSE)
        updated = schema_of(smt.updated_schema, schema, "renaming fields")
        check_nulls_keep_schema(view, updated)
        names = [f.name for f in updated.fields()]
        sources = [smt.reverse_renamed(name) for name in names]
        missing = [source for source in sources if source not in columns]
        if missing:  # a kept field that is the target of a rename from an absent field: Struct.get fails
            raise Declined(f"ReplaceField reads field {missing[0]}, which the schema lacks")
        arrays = [columns[source] for source in sources]
        return typed_view(view, updated, names, arrays, null_mask(view.value.array))


# --- MaskField$Value ------------------------------------------------------------------------------

#: A value of each Connect type as a Struct holds it: MaskField picks its mask by the value's class.
_SAMPLES: dict[Type, Any] = {
    Type.BOOLEAN: True, Type.INT8: 1, Type.INT16: 1, Type.INT32: 1, Type.INT64: 1, Type.FLOAT32: 1.0,
    Type.FLOAT64: 1.0, Type.STRING: "x", Type.BYTES: b"x", Type.ARRAY: [None],
}


@register_typed(mask_field.Value)
class MaskFieldTyped(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        if view.value.array.null_count:
            raise Declined("MaskField on a null value fails")
        schema, columns = struct_fields(view.value, mask_field.PURPOSE)
        arrays = []
        for field in schema.fields():
            column = columns[field.name]
            arrays.append(self._masked(column, field.schema, field.name)
                          if field.name in smt.masked_fields and has_values(column) else column)
        return typed_view(view, schema, list(columns), arrays, None)

    def _masked(self, column: pa.Array, schema: Schema, name: str) -> pa.Array:
        smt = self.transformation
        sample = _sample(schema, name)
        try:
            mask = smt.masked(sample, schema)
            validate_value(schema, mask, name)
        except ConnectException as exc:
            raise Declined(f"MaskField fails for field {name} ({type(exc).__name__})") from exc
        if schema.type is Type.ARRAY:
            return empty_lists_like(column).cast(column.type)
        if schema.type is Type.STRING:
            return like(column, mask, pa.string())
        return like(column, _stored(mask), column.type)


def _sample(schema: Schema, name: str) -> Any:
    logical = logical_type_of(schema)
    if logical is Date:
        return _dt.date(1970, 1, 2)
    if logical is Timestamp:
        return EPOCH
    if logical is not None or schema.type not in _SAMPLES:
        raise Declined(f"MaskField of field {name} ({schema.name or schema.type.name})")
    return _SAMPLES[schema.type]


def _stored(value: Any) -> Any:
    """A mask as the typed representation holds it (dates as days, timestamps as millis)."""
    if isinstance(value, _dt.datetime):
        return (value - EPOCH) // _dt.timedelta(milliseconds=1)
    if isinstance(value, _dt.date):
        return (value - EPOCH_DATE).days
    return value



# --- HoistField$Value -----------------------------------------------------------------------------


@register_typed(hoist_field.Value)
class HoistFieldTyped(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        values = view.value
        if values.array.null_count:
            raise Declined("HoistField of a null value gives a schemaless map")
        if values.schema is None:
            raise Declined("HoistField: values without a schema")
        updated = schema_of(smt.updated_schema, values.schema, "hoisting the value")
        return typed_view(view, updated, [smt.field_name], [values.array], None)


# --- ExtractField$Value ---------------------------------------------------------------------------


@register_typed(extract_field.Value)
class ExtractFieldTyped(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        values = view.value
        if values.schema is None and not has_values(values.array):
            return view  # null values without a schema: the schemaless branch keeps them null
        # Walked even when every value is null: a null extracted earlier keeps its schema, per record,
        # and an unknown field fails for it (for tombstones it would not: declining is exact either way).
        schema, current = values.schema, values.array
        for step in smt.field_path.steps:
            schema, current = _child(schema, current, step)
        return view.with_value(Values(current, schema=schema))


def _child(schema: Schema | None, array: pa.Array, step: str) -> tuple[Schema, pa.Array]:
    """The schema and column of field ``step`` of typed Structs (null where the Struct is null)."""
    if schema is None or schema.type is not Type.STRUCT:
        raise Declined("ExtractField through a value that is not a Struct fails")
    field = schema.field(step)
    if field is None:
        raise Declined(f"ExtractField of unknown field {step} fails")
    _, columns = struct_fields(Values(array, schema=schema), extract_field.PURPOSE)
    return field.schema, columns[step]


__all__ = ["typed_batch_form"]
