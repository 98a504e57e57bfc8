"""InsertField$Value column-wise: the new fields (static values, topic, partition, offset, timestamp) added to
every row of Maps or of Structs at once.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from connector.api.schema import Schema
from smt.batch.base import NullPassingForm, register
from smt.batch.kernels import INT, has_values, int64_values, kind
from smt.batch.typed_rules import StructRewrite, register_typed
from smt.batch.view import RecordBatchView, constant
from smt.transforms import insert_field


@register(insert_field.Value)
class InsertFieldBatch(NullPassingForm):
    def apply_to_values(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        fields = view.value.maps(insert_field.PURPOSE)
        n = view.num_rows
        if smt.topic_field is not None:
            fields.put(smt.topic_field.name, view.topic)
        if smt.partition_field is not None:
            fields.put(smt.partition_field.name, _coalesce(view.partition, fields.get(smt.partition_field.name)))
        if smt.offset_field is not None:
            fields.put(smt.offset_field.name, view.offset)
        if smt.timestamp_field is not None:
            name = smt.timestamp_field.name
            fields.put(name, _coalesce(view.timestamp, fields.get(name)))
        if smt.static_field is not None and smt.static_value is not None:
            fields.put(smt.static_field.name, constant(smt.static_value, n, pa.string()))
        return view.with_value(fields.values())


def _coalesce(new: pa.Array, old: pa.Array | None) -> pa.Array:
    """``new`` where it is not null, else the map's current value (the key is not overwritten)."""
    if new.null_count == 0 or old is None or not has_values(old):
        return new
    if kind(old) != INT:
        raise Declined("inserted metadata would keep values of another kind")
    return pc.coalesce(int64_values(new), int64_values(old))


@register_typed(insert_field.Value)
class InsertFieldTyped(StructRewrite):
    purpose = insert_field.PURPOSE
    building = "inserting fields"

    def new_columns(self, view: RecordBatchView, columns: dict[str, pa.Array], updated: Schema) -> list[pa.Array]:
        inserted = self._inserted(view)
        for field in updated.fields():
            if not field.schema.optional and field.name in inserted and inserted[field.name].null_count:
                raise Declined(f"a null for required inserted field {field.name}")
        return [columns[f.name] if f.name in columns else inserted[f.name] for f in updated.fields()]

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
