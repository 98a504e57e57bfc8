"""SetSchemaMetadata$Value for Structs: the schema renamed and re-versioned, the values untouched.

Both forms follow
``smt.transforms.set_schema_metadata`` and decline (a named reason) what they cannot do exactly as it does.
"""

from __future__ import annotations

from connector.api.declined import Declined
from connector.api.schema import Type
from smt.batch.base import BatchTransform
from smt.batch.typed_rules import (
    register_typed,
    struct_fields,
)
from smt.batch.view import RecordBatchView, Values
from smt.transforms import (
    set_schema_metadata,
)


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
