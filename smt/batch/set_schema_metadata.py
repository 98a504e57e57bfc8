"""SetSchemaMetadata$Value for Structs: the schema renamed and re-versioned, the values untouched."""

from __future__ import annotations

from connector.api.schema import Schema, Type
from smt.batch.typed_rules import SchemaReadingForm, register_typed, struct_fields
from smt.batch.view import RecordBatchView, Values
from smt.transforms import set_schema_metadata


@register_typed(set_schema_metadata.Value)
class SetSchemaMetadataTyped(SchemaReadingForm):
    smt_name = "SetSchemaMetadata"

    def apply_with_schema(self, view: RecordBatchView, schema: Schema) -> RecordBatchView:
        smt = self.transformation
        if schema.type is Type.STRUCT:  # the Struct is copied field by field
            struct_fields(view.value, set_schema_metadata.PURPOSE, with_defaults=smt.replace_null_with_default)
        return view.with_value(Values(view.value.array, schema=smt.updated_schema(schema)))
