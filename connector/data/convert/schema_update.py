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

Schema Registry provenance. Requests can carry the registry schema ids that
asked for them (:meth:`SchemaUpdates.note_registry_schema`). Applying them
records, in the same commit, two kinds of table properties:

* ``icefloe.schema-registry.<topic>.schema-ids`` — the ids (comma-separated,
  in the order they were first applied) of ``<topic>``'s value schemas that
  created or evolved the table;
* ``icefloe.schema-registry.iceberg-schema.<N>`` — the registry ids whose
  requests produced the table's Iceberg schema ``N``.

From the second and the table's schema history, :func:`registry_ids_of_column`
tells which registry schema gave a column its current type, so an
:class:`IncompatibleSchemaChange` can name both schema ids.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass
from typing import Iterator

from pyiceberg import types as ice
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema
from pyiceberg.table import Table

from connector.api.errors import DataException

log = logging.getLogger(__name__)

SCHEMA_UPDATE_ATTEMPTS = 3
REGISTRY_PROPERTY_PREFIX = "icefloe.schema-registry."
EVOLVABLE_CHANGES = ("only adding columns (nested too), widening int -> long and float -> double, "
                     "and making required columns optional evolve a table")


def topic_schema_ids_property(topic: str) -> str:
    """The table property listing the registry schema ids of ``topic`` that created or evolved the table."""
    return f"{REGISTRY_PROPERTY_PREFIX}{topic}.schema-ids"


def iceberg_schema_property(schema_id: int) -> str:
    """The table property naming the registry schema ids that produced Iceberg schema ``schema_id``."""
    return f"{REGISTRY_PROPERTY_PREFIX}iceberg-schema.{schema_id}"


def _ids(text: str | None) -> list[int]:
    return [int(part) for part in (text or "").split(",") if part.strip().lstrip("-").isdigit()]


def _join(ids) -> str:
    return ",".join(str(i) for i in ids)


class IncompatibleSchemaChange(DataException):
    """A record's schema gives an existing column a type the table cannot evolve to (e.g. string -> int).

    Raised when evolution is on; ``column`` is the full column name,
    ``field_id`` its Iceberg field id. :meth:`for_table` adds the table, the
    registry schema ids and the record's coordinates to the message.
    """

    def __init__(self, column: str, field_id: int, table_type: ice.IcebergType, record_type: ice.IcebergType,
                 message: str | None = None):
        self.column = column
        self.field_id = field_id
        self.table_type = table_type
        self.record_type = record_type
        super().__init__(message or (
            f"Incompatible schema change: column '{column}' is {table_type} in the table, the record's "
            f"schema makes it {record_type}; {EVOLVABLE_CHANGES}"))

    def for_table(self, table_name: str, table: Table | None, schema_id: int | None,
                  where: str) -> "IncompatibleSchemaChange":
        """The same error, naming ``table_name``, the registry schema ids and the record (``where``)."""
        old_ids = registry_ids_of_column(table, self.field_id) if table is not None else []
        old = (f"schema id {', '.join(map(str, old_ids))}" if old_ids
               else "no registry schema id recorded for it")
        new = f"schema id {schema_id}" if schema_id is not None else "the record's schema (no registry schema id)"
        message = (
            f"Incompatible schema change for table {table_name}: column '{self.column}' is "
            f"{self.table_type} ({old}), {new} makes it {self.record_type}. {EVOLVABLE_CHANGES[0].upper()}"
            f"{EVOLVABLE_CHANGES[1:]}; the table was not changed. Record: {where}"
        )
        return IncompatibleSchemaChange(self.column, self.field_id, self.table_type, self.record_type, message)


@dataclass(frozen=True)
class AddColumn:
    """Add ``name`` (optional) of ``type`` under ``parent`` (None: a top-level column)."""

    parent: str | None
    name: str
    type: ice.IcebergType

    @property
    def key(self) -> str:
        """The new column's full name."""
        return self.name if self.parent is None else f"{self.parent}.{self.name}"


@dataclass(frozen=True)
class UpdateType:
    """Widen column ``name`` to ``type`` (int → long, float → double)."""

    name: str
    type: ice.PrimitiveType


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
        self._registry_ids: dict[str, list[int]] = {}  # topic -> registry schema ids (provenance only)

    # --- recording ------------------------------------------------------------------

    def add_column(self, parent: str | None, name: str, type: ice.IcebergType) -> None:
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

    def update_type(self, name: str, type: ice.PrimitiveType) -> None:
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

    def note_registry_schema(self, topic: str, schema_id: int) -> None:
        """Registry schema ``schema_id`` (of ``topic``'s values) asked for these updates, or creates the table.

        Provenance only: it is recorded in the table's properties when the
        updates are applied and does not count as an update (``bool()``, ``len()``).
        """
        ids = self._registry_ids.setdefault(topic, [])
        if schema_id not in ids:
            ids.append(schema_id)

    @property
    def registry_schema_ids(self) -> dict[str, list[int]]:
        """Topic -> the registry schema ids noted for these updates."""
        return {topic: list(ids) for topic, ids in getattr(self, "_registry_ids", {}).items()}

    def merge(self, other: "SchemaUpdates") -> "SchemaUpdates":
        """A new collection with both sets of requests; DataException if two add-column types conflict."""
        result = SchemaUpdates()
        for source in (self, other):
            for add in source.add_columns:
                result._merge_add_column(add)
            result._update_types.update(source._update_types)
            result._make_optionals.update(source._make_optionals)
            for topic, ids in source.registry_schema_ids.items():
                for schema_id in ids:
                    result.note_registry_schema(topic, schema_id)
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
        notes = self.registry_schema_ids
        return f"SchemaUpdates({list(self)!r}{f', registry schema ids {notes}' if notes else ''})"


# --- type merging -----------------------------------------------------------------------


def same_type(left: ice.IcebergType, right: ice.IcebergType) -> bool:
    """Structural equality of two types, ignoring field ids."""
    if isinstance(left, ice.StructType) and isinstance(right, ice.StructType):
        return len(left.fields) == len(right.fields) and all(
            a.name == b.name and a.required == b.required and same_type(a.field_type, b.field_type)
            for a, b in zip(left.fields, right.fields)
        )
    if isinstance(left, ice.ListType) and isinstance(right, ice.ListType):
        return left.element_required == right.element_required and same_type(left.element_type, right.element_type)
    if isinstance(left, ice.MapType) and isinstance(right, ice.MapType):
        return (
            left.value_required == right.value_required
            and same_type(left.key_type, right.key_type)
            and same_type(left.value_type, right.value_type)
        )
    return left == right


def merge_types(left: ice.IcebergType, right: ice.IcebergType, column: str) -> ice.IcebergType:
    """The type satisfying both requests for ``column``; DataException if they conflict.

    Equal types merge to themselves; int + long → long; float + double →
    double; decimals of equal scale → the larger precision; structs merge
    field by field (union, optional if either side is); lists and maps merge
    their element / value types.
    """
    return _renumbered(_merge(left, right, column), itertools.count(1))


def _merge(left: ice.IcebergType, right: ice.IcebergType, column: str) -> ice.IcebergType:
    if same_type(left, right):
        return left
    kinds = {type(left), type(right)}
    if kinds == {ice.IntegerType, ice.LongType}:
        return ice.LongType()
    if kinds == {ice.FloatType, ice.DoubleType}:
        return ice.DoubleType()
    if isinstance(left, ice.DecimalType) and isinstance(right, ice.DecimalType) and left.scale == right.scale:
        return ice.DecimalType(max(left.precision, right.precision), left.scale)
    if isinstance(left, ice.StructType) and isinstance(right, ice.StructType):
        return _merge_structs(left, right, column)
    if isinstance(left, ice.ListType) and isinstance(right, ice.ListType):
        element = _merge(left.element_type, right.element_type, f"{column}.element")
        return ice.ListType(left.element_id, element, element_required=left.element_required and right.element_required)
    if isinstance(left, ice.MapType) and isinstance(right, ice.MapType):
        key = _merge(left.key_type, right.key_type, f"{column}.key")
        value = _merge(left.value_type, right.value_type, f"{column}.value")
        required = left.value_required and right.value_required
        return ice.MapType(left.key_id, key, left.value_id, value, value_required=required)
    raise DataException(f"Conflicting types requested for new column '{column}': {left} and {right}")


def _merge_structs(left: ice.StructType, right: ice.StructType, column: str) -> ice.StructType:
    by_name = {field.name: field for field in right.fields}
    fields: list[ice.NestedField] = []
    for field in left.fields:
        other = by_name.pop(field.name, None)
        if other is None:
            fields.append(field)
            continue
        merged = _merge(field.field_type, other.field_type, f"{column}.{field.name}")
        required = field.required and other.required
        fields.append(ice.NestedField(field.field_id, field.name, merged, required=required))
    fields.extend(by_name.values())
    return ice.StructType(*fields)


def _renumbered(type_: ice.IcebergType, ids: Iterator[int]) -> ice.IcebergType:
    """A copy of ``type_`` with fresh sequential nested ids (merged halves may share ids)."""
    if isinstance(type_, ice.StructType):
        return ice.StructType(
            *[ice.NestedField(next(ids), f.name, _renumbered(f.field_type, ids), required=f.required)
              for f in type_.fields]
        )
    if isinstance(type_, ice.ListType):
        return ice.ListType(next(ids), _renumbered(type_.element_type, ids), element_required=type_.element_required)
    if isinstance(type_, ice.MapType):
        key_id, value_id = next(ids), next(ids)
        key, value = _renumbered(type_.key_type, ids), _renumbered(type_.value_type, ids)
        return ice.MapType(key_id, key, value_id, value, value_required=type_.value_required)
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


def _find(schema: Schema, name: str) -> ice.NestedField | None:
    try:
        return schema.find_field(name)
    except ValueError:
        return None


def _existing(schema: Schema, name: str) -> ice.NestedField:
    field = _find(schema, name)
    if field is None:
        raise DataException(f"Invalid column: {name}")
    return field


def apply_schema_updates(table: Table, updates: SchemaUpdates) -> bool:
    """Apply ``updates`` to ``table`` in one schema commit; True if the schema changed.

    Refreshes first and applies only what is missing, so several tasks (or a
    retry) asking for the same change commit it once. Retries commit
    conflicts up to :data:`SCHEMA_UPDATE_ATTEMPTS` times. Registry schema ids
    noted on ``updates`` are recorded in the table's properties in the same
    commit (with no schema change pending — a table just created from a
    registry schema — they are recorded alone).
    """
    notes = updates.registry_schema_ids
    if not updates and not notes:
        return False
    for attempt in range(1, SCHEMA_UPDATE_ATTEMPTS + 1):
        table.refresh()
        pending = pending_updates(table.schema(), updates)
        properties = _topic_properties(table, notes)
        attribute = [i for ids in notes.values() for i in ids]
        if not pending and iceberg_schema_property(table.schema().schema_id) in table.properties:
            attribute = []  # the current schema's origin is already known: nothing is created or changed
        if not pending and not properties and not attribute:
            log.info("Schema for table %s already up-to-date", table.name())
            return False
        try:
            _commit(table, pending, properties, sorted(set(attribute)))
        except CommitFailedException:
            if attempt == SCHEMA_UPDATE_ATTEMPTS:
                raise
            log.warning("Schema update of %s conflicted (attempt %d), retrying", table.name(), attempt)
            continue
        if pending:
            log.info("Schema for table %s updated: %s", table.name(), pending)
        return bool(pending)
    return False  # pragma: no cover - the loop returns or raises


def _topic_properties(table: Table, notes: dict[str, list[int]]) -> dict[str, str]:
    """The per-topic schema-id properties that change with ``notes``."""
    properties = {}
    for topic, ids in notes.items():
        key = topic_schema_ids_property(topic)
        known = _ids(table.properties.get(key))
        merged = known + [i for i in ids if i not in known]
        if merged != known:
            properties[key] = _join(merged)
    return properties


def _commit(table: Table, pending: SchemaUpdates, properties: dict[str, str] | None = None,
            attribute: list[int] | None = None) -> None:
    if not properties and not attribute:
        with table.update_schema() as update:
            _stage(update, pending)
        return
    transaction = table.transaction()
    if pending:
        with transaction.update_schema() as update:
            _stage(update, pending)
    properties = dict(properties or {})
    if attribute:
        properties[iceberg_schema_property(transaction.table_metadata.current_schema_id)] = _join(attribute)
    transaction.set_properties(properties)
    transaction.commit_transaction()


def _stage(update, pending: SchemaUpdates) -> None:
    for add in pending.add_columns:
        path = (add.name,) if add.parent is None else (add.parent, add.name)
        update.add_column(path, add.type)
    for widen in pending.update_types:
        update.update_column(widen.name, field_type=widen.type)
    for optional in pending.make_optionals:
        update.make_column_optional(optional.name)


# --- provenance ------------------------------------------------------------------------


def registry_ids_of_column(table: Table, field_id: int) -> list[int]:
    """The registry schema ids that gave column ``field_id`` its current type (empty if not recorded).

    Walks the table's schema history back from the current schema while the
    column keeps its type (for nested columns: its kind), and reads the ids
    recorded for the oldest such schema.
    """
    current = table.schema()
    try:
        column = current.find_field(field_id)
    except ValueError:
        return []
    origin = None
    for schema in sorted(table.metadata.schemas, key=lambda s: s.schema_id, reverse=True):
        if schema.schema_id > current.schema_id:
            continue
        try:
            past = schema.find_field(field_id)
        except ValueError:
            break
        if not _same_kind(past.field_type, column.field_type):
            break
        origin = schema.schema_id
    if origin is None:
        return []
    return _ids(table.properties.get(iceberg_schema_property(origin)))


def _same_kind(left: ice.IcebergType, right: ice.IcebergType) -> bool:
    if isinstance(left, ice.PrimitiveType) or isinstance(right, ice.PrimitiveType):
        return left == right
    return type(left) is type(right)
