"""``Flatten$Value`` and ``SetSchemaMetadata$Value`` for values with a Connect schema, column-wise.

Both change the schema and move columns without touching a value: Flatten
lays the leaves of nested Structs side by side, depth first, as its
``updated_schema`` names them (a nested Struct that is null gives nulls, like
the unset fields per record); SetSchemaMetadata only renames or re-versions
the schema. Both read fields with ``Struct.get``, so a null in a field with a
default declines (:func:`~smt.batch.typed_rules.struct_fields`).
"""

from __future__ import annotations

import pyarrow as pa

from connector.api.declined import Declined
from connector.api.schema import Schema, Type
from smt.batch.kernels import has_values
from smt.batch.transforms import BatchTransform
from smt.batch.typed_rules import (
    check_nulls_keep_schema,
    null_mask,
    register_typed,
    schema_of,
    struct_fields,
    typed_view,
)
from smt.batch.view import RecordBatchView, Values
from smt.transforms import flatten, set_schema_metadata


@register_typed(flatten.Value)
class FlattenTyped(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        values = view.value
        if not has_values(values.array):
            return view  # Flatten returns a record with a null value unchanged
        schema, columns = struct_fields(values, flatten.PURPOSE)
        updated = schema_of(self.transformation.updated_schema, schema, "flattening the schema")
        check_nulls_keep_schema(view, updated)
        leaves: list[pa.Array] = []
        _leaves(schema, columns, leaves)
        return typed_view(view, updated, [f.name for f in updated.fields()], leaves, null_mask(values.array))


def _leaves(schema: Schema, columns: dict[str, pa.Array], out: list[pa.Array]) -> None:
    """The leaf columns of Structs of ``schema``, in the order ``Flatten.updated_schema`` names them."""
    for field in schema.fields():
        column = columns[field.name]
        if field.schema.type is Type.STRUCT:  # its columns are null where it is (StructArray.flatten)
            _, children = struct_fields(Values(column, schema=field.schema), flatten.PURPOSE)
            _leaves(field.schema, children, out)
        else:
            out.append(column)


@register_typed(set_schema_metadata.Value)
class SetSchemaMetadataTyped(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        values = view.value
        if not view.carries_schema():
            return view  # a tombstone has no schema: SetSchemaMetadata returns it unchanged
        if values.schema is None:
            raise Declined("SetSchemaMetadata: values without a schema")
        if values.schema.type is Type.STRUCT:  # the Struct is copied field by field
            struct_fields(values, set_schema_metadata.PURPOSE, with_defaults=smt.replace_null_with_default)
        return view.with_value(Values(values.array, schema=smt.updated_schema(values.schema)))
