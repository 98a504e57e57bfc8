"""HoistField$Value column-wise: each value wrapped in a one-field Map or Struct."""

from __future__ import annotations

from connector.api.declined import Declined
from smt.batch.base import BatchTransform, register
from smt.batch.typed_rules import register_typed, schema_of, typed_view
from smt.batch.view import RecordBatchView, Values, make_struct
from smt.transforms import hoist_field


@register(hoist_field.Value)
class HoistFieldBatch(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        name = self.transformation.field_name
        value = view.value
        struct = make_struct([name], [value.array], view.num_rows, None)
        return view.with_value(Values(struct, frozenset([name]) if value.any_loose else frozenset()))


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
