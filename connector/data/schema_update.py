"""Schema-evolution requests, merged across records and tasks, applied in one commit.

Conversion (with ``iceberg.tables.evolve-schema-enabled``) produces requests:

* :class:`AddColumn` — a field the table lacks, under ``parent`` (a full column
  name; ``list.element`` / ``map.value`` for structs inside lists and maps);
* :class:`UpdateType` — widen int → long or float → double;
* :class:`MakeOptional` — a required column that records leave null.

:class:`SchemaUpdates` keeps them ordered and de-duplicated. Within one task,
:meth:`SchemaUpdates.add_column` mirrors the Java sink, which applies each
record's updates before converting the next record: the first record to add a
column decides its type, later compatible requests widen it (structs gain
fields, int becomes long), and a conflicting later request is dropped (that
record is then coerced to, or fails against, the first type). Across tasks
there is no "first", so :meth:`SchemaUpdates.merge` raises on conflicts.

:func:`apply_schema_updates` refreshes the table, drops what is already there
and commits the rest as one ``update_schema()`` transaction, retried on
commit conflicts (3 attempts, like the sink's ``SCHEMA_UPDATE_RETRIES``).
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass
from typing import Iterator

from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import (
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
)

from connector.api.errors import DataException

log = logging.getLogger(__name__)

SCHEMA_UPDATE_ATTEMPTS = 3


@dataclass(frozen=True)
class AddColumn:
    """Add ``name`` (optional) of ``type`` under ``parent`` (None: a top-level column)."""

    parent: str | None
    name: str
    type: IcebergType

    @property
    def key(self) -> str:
        """The new column's full name."""
        return self.name if self.parent is None else f"{self.parent}.{self.name}"


@dataclass(frozen=True)
class UpdateType:
    """Widen column ``name`` to ``type`` (int → long, float → double)."""

    name: str
    type: PrimitiveType


@dataclass(frozen=True)
class MakeOptional:
    """Make the required column ``name`` optional."""

    name: str


SchemaUpdate = AddColumn | UpdateType | MakeOptional


class SchemaUpdates:
    """An ordered, de-duplicated, picklable collection of schema-evolution requests."""

    def __init__(self) -> None:
        self._add_columns: dict[str, AddColumn] = {}
        self._update_types: dict[str, UpdateType] = {}
        self._make_optionals: dict[str, MakeOptional] = {}

    # --- recording ------------------------------------------------------------------

    def add_column(self, parent: str | None, name: str, type: IcebergType) -> None:
        """Request a column; a repeated request widens the first or, if it conflicts, is dropped."""
        request = AddColumn(parent, name, type)
        existing = self._add_columns.get(request.key)
        if existing is None:
            self._add_columns[request.key] = request
            return
        try:
            merged = merge_types(existing.type, type, request.key)
        except DataException:
            log.debug("Keeping %s for column %s, not %s", existing.type, request.key, type)
            return
        self._add_columns[request.key] = AddColumn(parent, name, merged)

    def update_type(self, name: str, type: PrimitiveType) -> None:
        """Request widening ``name`` to ``type``."""
        self._update_types[name] = UpdateType(name, type)

    def make_optional(self, name: str) -> None:
        """Request making ``name`` optional."""
        self._make_optionals[name] = MakeOptional(name)

    def record(self, update: "SchemaUpdate") -> None:
        """Record one request (as :meth:`add_column`, :meth:`update_type` or :meth:`make_optional`)."""
        if isinstance(update, AddColumn):
            self.add_column(update.parent, update.name, update.type)
        elif isinstance(update, UpdateType):
            self.update_type(update.name, update.type)
        else:
            self.make_optional(update.name)

    def merge(self, other: "SchemaUpdates") -> "SchemaUpdates":
        """A new collection with both sets of requests; DataException if two add-column types conflict."""
        result = SchemaUpdates()
        for source in (self, other):
            for add in source.add_columns:
                result._merge_add_column(add)
            result._update_types.update(source._update_types)
            result._make_optionals.update(source._make_optionals)
        return result

    def _merge_add_column(self, request: AddColumn) -> None:
        existing = self._add_columns.get(request.key)
        merged = request.type if existing is None else merge_types(existing.type, request.type, request.key)
        self._add_columns[request.key] = AddColumn(request.parent, request.name, merged)

    # --- reading --------------------------------------------------------------------

    @property
    def add_columns(self) -> list[AddColumn]:
        return list(self._add_columns.values())

    @property
    def update_types(self) -> list[UpdateType]:
        return list(self._update_types.values())

    @property
    def make_optionals(self) -> list[MakeOptional]:
        return list(self._make_optionals.values())

    def __iter__(self) -> Iterator[SchemaUpdate]:
        yield from self._add_columns.values()
        yield from self._update_types.values()
        yield from self._make_optionals.values()

    def __len__(self) -> int:
        return len(self._add_columns) + len(self._update_types) + len(self._make_optionals)

    def __bool__(self) -> bool:
        return len(self) > 0

    def is_empty(self) -> bool:
        return len(self) == 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SchemaUpdates) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"SchemaUpdates({list(self)!r})"


# --- type merging -----------------------------------------------------------------------


def same_type(left: IcebergType, right: IcebergType) -> bool:
    """Structural equality of two types, ignoring field ids."""
    if isinstance(left, StructType) and isinstance(right, StructType):
        return len(left.fields) == len(right.fields) and all(
            a.name == b.name and a.required == b.required and same_type(a.field_type, b.field_type)
            for a, b in zip(left.fields, right.fields)
        )
    if isinstance(left, ListType) and isinstance(right, ListType):
        return left.element_required == right.element_required and same_type(left.element_type, right.element_type)
    if isinstance(left, MapType) and isinstance(right, MapType):
        return (
            left.value_required == right.value_required
            and same_type(left.key_type, right.key_type)
            and same_type(left.value_type, right.value_type)
        )
    return left == right


def merge_types(left: IcebergType, right: IcebergType, column: str) -> IcebergType:
    """The type satisfying both requests for ``column``; DataException if they conflict.

    Equal types merge to themselves; int + long → long; float + double →
    double; decimals of equal scale → the larger precision; structs merge
    field by field (union, optional if either side is); lists and maps merge
    their element / value types.
    """
    return _renumbered(_merge(left, right, column), itertools.count(1))


def _merge(left: IcebergType, right: IcebergType, column: str) -> IcebergType:
    if same_type(left, right):
        return left
    kinds = {type(left), type(right)}
    if kinds == {IntegerType, LongType}:
        return LongType()
    if kinds == {FloatType, DoubleType}:
        return DoubleType()
    if isinstance(left, DecimalType) and isinstance(right, DecimalType) and left.scale == right.scale:
        return DecimalType(max(left.precision, right.precision), left.scale)
    if isinstance(left, StructType) and isinstance(right, StructType):
        return _merge_structs(left, right, column)
    if isinstance(left, ListType) and isinstance(right, ListType):
        element = _merge(left.element_type, right.element_type, f"{column}.element")
        return ListType(left.element_id, element, element_required=left.element_required and right.element_required)
    if isinstance(left, MapType) and isinstance(right, MapType):
        key = _merge(left.key_type, right.key_type, f"{column}.key")
        value = _merge(left.value_type, right.value_type, f"{column}.value")
        required = left.value_required and right.value_required
        return MapType(left.key_id, key, left.value_id, value, value_required=required)
    raise DataException(f"Conflicting types requested for new column '{column}': {left} and {right}")


def _merge_structs(left: StructType, right: StructType, column: str) -> StructType:
    by_name = {field.name: field for field in right.fields}
    fields: list[NestedField] = []
    for field in left.fields:
        other = by_name.pop(field.name, None)
        if other is None:
            fields.append(field)
            continue
        merged = _merge(field.field_type, other.field_type, f"{column}.{field.name}")
        required = field.required and other.required
        fields.append(NestedField(field.field_id, field.name, merged, required=required))
    fields.extend(by_name.values())
    return StructType(*fields)


def _renumbered(type_: IcebergType, ids: Iterator[int]) -> IcebergType:
    """A copy of ``type_`` with fresh sequential nested ids (merged halves may share ids)."""
    if isinstance(type_, StructType):
        return StructType(
            *[NestedField(next(ids), f.name, _renumbered(f.field_type, ids), required=f.required) for f in type_.fields]
        )
    if isinstance(type_, ListType):
        return ListType(next(ids), _renumbered(type_.element_type, ids), element_required=type_.element_required)
    if isinstance(type_, MapType):
        key_id, value_id = next(ids), next(ids)
        key, value = _renumbered(type_.key_type, ids), _renumbered(type_.value_type, ids)
        return MapType(key_id, key, value_id, value, value_required=type_.value_required)
    return type_


# --- applying ------------------------------------------------------------------------


def pending_updates(schema: Schema, updates: SchemaUpdates) -> SchemaUpdates:
    """The requests ``schema`` does not satisfy yet (``commitSchemaUpdates``' filters)."""
    pending = SchemaUpdates()
    for add in updates.add_columns:
        if _find(schema, add.key) is None:
            pending._add_columns[add.key] = add
    for update in updates.update_types:
        if type(_existing(schema, update.name).field_type) is not type(update.type):
            pending._update_types[update.name] = update
    for optional in updates.make_optionals:
        if _existing(schema, optional.name).required:
            pending._make_optionals[optional.name] = optional
    return pending


def _find(schema: Schema, name: str) -> NestedField | None:
    try:
        return schema.find_field(name)
    except ValueError:
        return None


def _existing(schema: Schema, name: str) -> NestedField:
    field = _find(schema, name)
    if field is None:
        raise DataException(f"Invalid column: {name}")
    return field


def apply_schema_updates(table: Table, updates: SchemaUpdates) -> bool:
    """Apply ``updates`` to ``table`` in one schema commit; True if the schema changed.

    Refreshes first and applies only what is missing, so several tasks (or a
    retry) asking for the same change commit it once. Retries commit
    conflicts up to :data:`SCHEMA_UPDATE_ATTEMPTS` times.
    """
    if not updates:
        return False
    for attempt in range(1, SCHEMA_UPDATE_ATTEMPTS + 1):
        table.refresh()
        pending = pending_updates(table.schema(), updates)
        if not pending:
            log.info("Schema for table %s already up-to-date", table.name())
            return False
        try:
            _commit(table, pending)
        except CommitFailedException:
            if attempt == SCHEMA_UPDATE_ATTEMPTS:
                raise
            log.warning("Schema update of %s conflicted (attempt %d), retrying", table.name(), attempt)
            continue
        log.info("Schema for table %s updated: %s", table.name(), pending)
        return True
    return False  # pragma: no cover - the loop returns or raises


def _commit(table: Table, pending: SchemaUpdates) -> None:
    with table.update_schema() as update:
        for add in pending.add_columns:
            path = (add.name,) if add.parent is None else (add.parent, add.name)
            update.add_column(path, add.type)
        for widen in pending.update_types:
            update.update_column(widen.name, field_type=widen.type)
        for optional in pending.make_optionals:
            update.make_column_optional(optional.name)
