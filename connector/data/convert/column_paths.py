"""A column of a table named by a dotted path (``_cdc.op``, ``account.id``), read from Arrow rows column-wise.

Upsert and CDC tables name two kinds of columns by path: their id columns
(nested struct fields allowed, as in Iceberg's identifier fields) and the
``iceberg.tables.cdc-field`` (a nested struct field, or a key of a map
column, as ``DmsTransform`` writes ``_cdc``). A path is resolved once
against the table's Iceberg schema (:func:`resolve`), then read from each
batch of converted rows (:meth:`ColumnPath.read`) with Arrow kernels, never
row by row.

A dot separates nested names, but a field whose own name contains dots is
found too: at each level the longest run of segments that names a field wins.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.schema import Schema
from pyiceberg.types import IcebergType, ListType, MapType, StructType

FIELD, KEY = "field", "key"


@dataclass(frozen=True)
class ColumnPath:
    """A resolved path: ``steps`` of (FIELD, struct field name) or (KEY, map key), and the type it reaches.

    ``name`` is the path as the table spells it (its field names, then map keys);
    ``required``: no optional field and no map on the way, and the column itself required.
    """

    name: str
    steps: tuple[tuple[str, str], ...]
    field_type: IcebergType
    required: bool
    field_ids: tuple[int, ...] = ()  # of the struct fields on the way, the column's own last (if it is one)

    @property
    def through_map(self) -> bool:
        return any(kind == KEY for kind, _ in self.steps)

    def read(self, data: pa.Table) -> pa.ChunkedArray:
        """The values at this path, one per row of ``data`` (null where the row or a parent is null).

        ``data`` is in the table's Arrow schema (as the converters produce it).
        """
        (_, first), *rest = self.steps
        values: pa.ChunkedArray = data.column(first)
        for kind, name in rest:
            if kind == FIELD:
                values = pc.struct_field(values, [name])  # propagates the parents' nulls
            else:
                key_type = values.type.key_type
                values = pc.map_lookup(values, pa.scalar(name, key_type), "first")
        return values


class PathNotFound(ValueError):
    """A path that names no column; ``reason`` says where it stopped."""

    def __init__(self, path: str, reason: str, *, in_list: bool = False):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason, self.in_list = path, reason, in_list


def resolve(schema: Schema, path: str, *, case_sensitive: bool = True) -> ColumnPath:
    """The column ``path`` names in ``schema``; raises :class:`PathNotFound` when there is none.

    Struct fields are followed by name; below a map column with string keys the
    next segment is a key. A list on the way is not followed (nothing a path
    names can be inside one).
    """
    segments = path.split(".")
    current: IcebergType = schema.as_struct()
    steps: list[tuple[str, str]] = []
    names: list[str] = []
    field_ids: list[int] = []
    required = True
    while segments:
        if isinstance(current, StructType):
            field, used = _field(current, segments, case_sensitive)
            if field is None:
                raise PathNotFound(path, f"no field {'.'.join(segments)!r} in {'.'.join(names) or 'the table'}")
            steps.append((FIELD, field.name))
            field_ids.append(field.field_id)
            names.append(field.name)
            required = required and field.required
            current, segments = field.field_type, segments[used:]
        elif isinstance(current, MapType):
            key = ".".join(segments)  # the rest of the path is one map key
            steps.append((KEY, key))
            names.append(key)
            required = False
            current, segments = current.value_type, []
        elif isinstance(current, ListType):
            raise PathNotFound(path, f"{'.'.join(names)} is a list", in_list=True)
        else:
            raise PathNotFound(path, f"{'.'.join(names)} is a {current}, not a struct or a map")
    return ColumnPath(".".join(names), tuple(steps), current, required, tuple(field_ids))


def _field(struct: StructType, segments: list[str], case_sensitive: bool):
    """(the field named by the longest prefix of ``segments``, segments used) or (None, 0)."""
    for used in range(len(segments), 0, -1):
        wanted = ".".join(segments[:used])
        for field in struct.fields:
            if field.name == wanted or (not case_sensitive and field.name.lower() == wanted.lower()):
                return field, used
    return None, 0
