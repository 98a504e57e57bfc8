"""ReplaceField$Value column-wise: fields kept, dropped and renamed by moving whole columns."""

from __future__ import annotations

import pyarrow as pa

from connector.api.declined import Declined
from connector.api.schema import Schema
from smt.batch.base import NullPassingForm, register
from smt.batch.typed_rules import StructRewrite, register_typed
from smt.batch.view import MapFields, RecordBatchView
from smt.transforms import replace_field


@register(replace_field.Value)
class ReplaceFieldBatch(NullPassingForm):
    def apply_to_values(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
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
class ReplaceFieldTyped(StructRewrite):
    purpose = replace_field.PURPOSE
    building = "renaming fields"

    def new_columns(self, view: RecordBatchView, columns: dict[str, pa.Array], updated: Schema) -> list[pa.Array]:
        sources = [self.transformation.reverse_renamed(f.name) for f in updated.fields()]
        missing = [source for source in sources if source not in columns]
        if missing:  # a kept field that is the target of a rename from an absent field: Struct.get fails
            raise Declined(f"ReplaceField reads field {missing[0]}, which the schema lacks")
        return [columns[source] for source in sources]
