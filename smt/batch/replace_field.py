"""ReplaceField$Value column-wise: fields kept, dropped and renamed by moving whole columns.

Both forms follow
``smt.transforms.replace_field`` and decline (a named reason) what they cannot do exactly as it does.
"""

from __future__ import annotations

from connector.api.declined import Declined
from smt.batch.base import BatchTransform, register
from smt.batch.kernels import (
    has_values,
)
from smt.batch.typed_rules import (
    check_nulls_keep_schema,
    null_mask,
    register_typed,
    schema_of,
    struct_fields,
    typed_view,
)
from smt.batch.view import MapFields, RecordBatchView
from smt.transforms import (
    replace_field,
)


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
