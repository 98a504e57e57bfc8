"""Flatten$Value column-wise: nested Maps and Structs flattened into dotted (delimiter-joined) columns."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from connector.api.schema import Schema, Type
from smt.batch.base import NullPassingForm, register
from smt.batch.kernels import BOOL, FLOAT, INT, LIST, MAP, NULL, STRING, has_values, kind
from smt.batch.typed_rules import StructRewrite, register_typed, struct_fields
from smt.batch.view import MapFields, RecordBatchView, Values
from smt.transforms import flatten


@register(flatten.Value)
class FlattenBatch(NullPassingForm):
    def apply_to_values(self, view: RecordBatchView) -> RecordBatchView:
        fields = view.value.maps(flatten.PURPOSE)
        out: list[tuple[str, pa.Array, bool]] = []
        maps: list[tuple[str, pa.Array]] = []
        for name, array in zip(fields.names, fields.arrays):
            self._flatten(name, array, "", out, maps, name in fields.loose)
        names = [name for name, _, _ in out]
        if len(set(names)) != len(names):
            raise Declined("flattened names collide")
        # A null map writes ``name: None`` (per-record), overwriting a leaf of the same name written
        # before it in the record's key order (which the batch does not keep); a map that is not null
        # writes only its children's names. Decline if some row has both a null map and a value there.
        leaves = {name: array for name, array, _ in out}
        for name, array in maps:
            leaf = leaves.get(name)
            if leaf is not None and pc.any(pc.and_(array.is_null(), leaf.is_valid())).as_py():
                raise Declined("a null map and a flattened value share a name")
        # Keep the names null maps write (null-valued keys) as null columns, for later renames' checks.
        for name in dict.fromkeys(name for name, array in maps if name not in leaves and array.null_count):
            out.append((name, pa.nulls(fields.length), False))
        origins = {name: origin for name, origin in fields.origins.items() if name in names}  # top level
        result = MapFields([(name, array) for name, array, _ in out], fields.length, fields.null_mask,
                           frozenset(name for name, _, loose in out if loose), origins)
        return view.with_value(result.values())

    def _flatten(self, key: str, array: pa.Array, prefix: str, out: list, maps: list, loose: bool) -> None:
        name = key if not prefix else prefix + self.transformation.delimiter + key
        k = kind(array)
        if k in (NULL, BOOL, INT, FLOAT, STRING, LIST):
            out.append((name, array, loose))
        elif k == MAP:
            maps.append((name, array))
            for child_name, child in zip(field_names(array), array.flatten()):
                self._flatten(child_name, child, name, out, maps, loose)
        elif has_values(array):
            raise Declined(f"Flatten of {k} values fails")


def field_names(struct: pa.Array) -> list[str]:
    return [struct.type.field(i).name for i in range(struct.type.num_fields)]


@register_typed(flatten.Value)
class FlattenTyped(StructRewrite):
    purpose = flatten.PURPOSE
    building = "flattening the schema"

    def new_columns(self, view: RecordBatchView, columns: dict[str, pa.Array], updated: Schema) -> list[pa.Array]:
        leaves: list[pa.Array] = []
        _leaves(view.value.schema, columns, leaves)
        return leaves


def _leaves(schema: Schema, columns: dict[str, pa.Array], out: list[pa.Array]) -> None:
    """The leaf columns of Structs of ``schema``, in the order ``Flatten.updated_schema`` names them."""
    for field in schema.fields():
        column = columns[field.name]
        if field.schema.type is Type.STRUCT:  # its columns are null where it is (StructArray.flatten)
            _, children = struct_fields(Values(column, schema=field.schema), flatten.PURPOSE)
            _leaves(field.schema, children, out)
        else:
            out.append(column)
