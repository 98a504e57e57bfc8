"""Load a destination table, or create it (``iceberg.tables.auto-create-enabled``).

As the sink's ``IcebergWriterFactory``: namespaces are created level by level
(``a``, ``a.b``, ``a.b.c`` for ``a.b.c.tbl``; already-existing or forbidden
ones are fine), then the table with the partition spec from ``partition-by``
and the ``auto-create-props``, retried up to 3 times; if another task created
it meanwhile, that table is loaded. The schema comes from the first record
(its Connect schema, or inferred from a schemaless value).

When the table has id columns (``iceberg.table.<table>.id-columns`` or
``iceberg.tables.default-id-columns``), they become its identifier fields, as
Tabular's sink made them: required columns, inside required structs. An
upsert table's id columns must fit (exist, be primitive, not float or double,
not inside a list or a map); an append-only table's only declare the key, so
one that does not fit is logged and the table created without identifier fields.
"""

from __future__ import annotations

import logging

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import (
    ForbiddenError,
    NamespaceAlreadyExistsError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.schema import Schema, assign_fresh_schema_ids
from pyiceberg.table import Table
from pyiceberg.types import IcebergType, StructType

from connector.api.errors import ConfigException, DataException, NotFoundException
from connector.data.changes import id_column
from connector.data.partition_spec import DEFAULT_PARTITION_BY_KEY, partition_spec_for

log = logging.getLogger(__name__)

AUTO_CREATE_KEY = "iceberg.tables.auto-create-enabled"
CREATE_TABLE_ATTEMPTS = 3


def ensure_table(
    catalog: Catalog,
    identifier: str,
    *,
    sample_schema: Schema | None,
    partition_by: list[str],
    properties: dict[str, str],
    auto_create: bool,
    partition_by_key: str = DEFAULT_PARTITION_BY_KEY,
    id_columns: tuple[str, ...] = (),
    upsert: bool = False,
    case_sensitive: bool = True,
) -> Table:
    """The table ``identifier``, created from ``sample_schema`` if missing and allowed.

    ``id_columns`` become the new table's identifier fields (looked up ignoring case
    unless ``case_sensitive``); ``upsert``: they must (ConfigException naming the
    table and the column otherwise).

    Raises:
        NotFoundException: the table is missing and auto-create is off.
        DataException: auto-create with no usable schema ("Unable to create table
            from empty object").
        ConfigException: ``partition_by`` does not fit the schema
            (``partition_by_key`` names the setting in the message).
    """
    try:
        return catalog.load_table(identifier)
    except NoSuchTableError:
        pass
    if not auto_create:
        raise NotFoundException(
            f"Table {identifier} does not exist; set {AUTO_CREATE_KEY}=true to create it from the records"
        )
    if sample_schema is None or not sample_schema.fields:
        raise DataException(f"Unable to create table from empty object: {identifier}")
    schema = assign_fresh_schema_ids(sample_schema)
    if id_columns:
        schema = _keyed(schema, identifier, id_columns, strict=upsert, case_sensitive=case_sensitive)
    spec = partition_spec_for(schema, partition_by, config_key=partition_by_key)
    create_namespaces(catalog, identifier)
    return _create(catalog, identifier, schema, spec, properties)


def _keyed(schema: Schema, identifier: str, id_columns: tuple[str, ...], *, strict: bool,
           case_sensitive: bool) -> Schema:
    """``schema`` with identifier fields; when they do not fit, an error (``strict``) or a warning."""
    try:
        return with_identifier_fields(schema, identifier, id_columns, case_sensitive=case_sensitive)
    except ConfigException as exc:
        if strict:
            raise
        log.warning("Creating %s without identifier fields: %s", identifier, exc)
        return schema


def with_identifier_fields(schema: Schema, table_name: str, id_columns: tuple[str, ...], *,
                           case_sensitive: bool = True) -> Schema:
    """``schema`` whose identifier fields are ``id_columns`` (dotted paths for nested struct fields).

    The columns, and the structs they are nested in, become required (Iceberg's
    rule for identifier fields). ConfigException names the table and the
    column that cannot be one.
    """
    paths = [id_column(schema, table_name, name, case_sensitive=case_sensitive) for name in id_columns]
    on_the_way = {field_id for path in paths for field_id in path.field_ids}
    struct = _required(schema.as_struct(), on_the_way)
    assert isinstance(struct, StructType)
    return Schema(*struct.fields, schema_id=schema.schema_id,
                  identifier_field_ids=[path.field_ids[-1] for path in paths])


def _required(field_type: IcebergType, ids: set[int]) -> IcebergType:
    """``field_type`` with the struct fields of ``ids`` (at any depth of structs) made required."""
    if not isinstance(field_type, StructType):
        return field_type  # identifier fields are never inside lists or maps
    return StructType(*[
        field if field.field_id not in ids else field.model_copy(update={
            "required": True, "field_type": _required(field.field_type, ids)})
        for field in field_type.fields
    ])


def create_namespaces(catalog: Catalog, identifier: str) -> None:
    """Create each namespace level of ``identifier`` that is missing."""
    namespace = Catalog.namespace_from(identifier)
    for depth in range(1, len(namespace) + 1):
        level = namespace[:depth]
        if _create_namespace(catalog, level):
            log.info("Created namespace %s", ".".join(level))


def _create_namespace(catalog: Catalog, level: tuple[str, ...]) -> bool:
    """Create ``level``; False when it exists already (or the catalog does not let icefloe create it).

    pyiceberg's SQL catalog checks, then inserts: of two jobs started at the same moment, the slower
    one can find the namespace missing and then have its insert refused by the database's unique key
    (an IntegrityError, not NamespaceAlreadyExistsError). The namespace is there by then.
    """
    from sqlalchemy.exc import IntegrityError

    try:
        catalog.create_namespace(level)
        return True
    except (NamespaceAlreadyExistsError, ForbiddenError):
        return False
    except IntegrityError:
        if not catalog.namespace_exists(level):
            raise
        return False


def _create(catalog: Catalog, identifier: str, schema: Schema, spec, properties: dict[str, str]) -> Table:
    for attempt in range(1, CREATE_TABLE_ATTEMPTS + 1):
        try:
            table = catalog.create_table(identifier, schema=schema, partition_spec=spec, properties=dict(properties))
            log.info("Created table %s with schema %s and spec %s", identifier, schema, spec)
            return table
        except TableAlreadyExistsError:
            return catalog.load_table(identifier)
        except (ConfigException, ValueError, TypeError):
            raise
        except Exception:
            if attempt == CREATE_TABLE_ATTEMPTS:
                raise
            log.warning("Creating table %s failed (attempt %d), retrying", identifier, attempt, exc_info=True)
    raise AssertionError("unreachable")  # pragma: no cover
