"""ExtractField$Value column-wise: one field's column taken out of Maps or Structs (a dotted path too)."""

from __future__ import annotations

import pyarrow as pa

from connector.api.declined import Declined
from connector.api.schema import Schema, Type
from smt.batch.base import BatchTransform, NullPassingForm, register
from smt.batch.flatten import field_names
from smt.batch.kernels import MAP, has_values, kind
from smt.batch.typed_rules import register_typed, struct_fields
from smt.batch.view import ALL, RecordBatchView, Values
from smt.transforms import extract_field


@register(extract_field.Value)
class ExtractFieldBatch(NullPassingForm):
    def apply_to_values(self, view: RecordBatchView) -> RecordBatchView:
        value = view.value
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
            names = field_names(current)
            if step not in names:
                current = pa.nulls(len(current))
                break
            current = current.flatten()[names.index(step)]
        loose = frozenset([ALL]) if value.field_loose(steps[0]) else frozenset()
        return view.with_value(Values(current, loose))


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
