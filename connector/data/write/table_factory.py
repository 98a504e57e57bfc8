"""Load a destination table, or create it (``iceberg.tables.auto-create-enabled``).

As the sink's ``IcebergWriterFactory``: namespaces are created level by level
(``a``, ``a.b``, ``a.b.c`` for ``a.b.c.tbl``; already-existing or forbidden
ones are fine), then the table with the partition spec from ``partition-by``
and the ``auto-create-props``, retried up to 3 times; if another task created
it meanwhile, that table is loaded. The schema comes from the first record
(its Connect schema, or inferred from a schemaless value).

The new table gets what Iceberg's Java catalogs give a table the Java sink
creates (docs/migration.md, "Auto-created tables"):

* its properties (:func:`new_table_properties`): the catalog's
  ``table-default.*`` properties, then ``auto-create-props``, then the
  catalog's ``table-override.*``, over the default ``TableMetadata`` writes into
  every new table (``write.parquet.compression-codec=zstd``);
  ``format-version`` among them chooses the format version (2 when unset), as
  in Java;
* its location, in a JDBC (pyiceberg SQL) catalog, where Java's ``JdbcCatalog``
  puts it (:func:`jdbc_location`): ``<warehouse>/a/b/<table>`` for ``a.b.<table>``
  (pyiceberg alone would make ``<warehouse>/a.b/<table>``); other catalogs'
  defaults are Java's already;
* identifier fields only where icefloe needs them, in upsert and CDC mode
  (``id_columns``): required columns, inside required structs, which must fit
  (exist, be primitive, not float or double, not inside a list or a map). The
  Apache sink never sets them, and an append-only table with identifier
  fields would refuse a later null in those columns.
"""

from __future__ import annotations

import logging
import uuid
from typing import Mapping

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
from connector.data.convert.changes import id_column
from connector.data.write.partition_spec import DEFAULT_PARTITION_BY_KEY, partition_spec_for

log = logging.getLogger(__name__)

AUTO_CREATE_KEY = "iceberg.tables.auto-create-enabled"
CREATE_TABLE_ATTEMPTS = 3
#: What Iceberg's ``TableMetadata.newTableMetadata`` writes into every new table's properties.
NEW_TABLE_DEFAULTS = {"write.parquet.compression-codec": "zstd"}
TABLE_DEFAULT_PREFIX = "table-default."  # catalog properties Java's catalogs give every new table
TABLE_OVERRIDE_PREFIX = "table-override."  # ... and those that win over the table's own


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
    case_sensitive: bool = True,
) -> Table:
    """The table ``identifier``, created from ``sample_schema`` if missing and allowed.

    ``id_columns`` (an upsert or CDC table's) become the new table's identifier fields, looked up
    ignoring case unless ``case_sensitive``; ConfigException naming the table and the column when one
    cannot be.

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
        schema = with_identifier_fields(schema, identifier, id_columns, case_sensitive=case_sensitive)
    spec = partition_spec_for(schema, partition_by, config_key=partition_by_key)
    create_namespaces(catalog, identifier)
    return _create(catalog, identifier, schema, spec, new_table_properties(catalog.properties, properties),
                   jdbc_location(catalog, identifier))


def new_table_properties(catalog_properties: Mapping[str, str], properties: Mapping[str, str]) -> dict[str, str]:
    """The properties a new table with ``properties`` gets in a catalog with ``catalog_properties``, as Java's
    catalogs and ``TableMetadata`` give them (see the module)."""
    def prefixed(prefix: str) -> dict[str, str]:
        return {k[len(prefix):]: v for k, v in catalog_properties.items() if k.startswith(prefix) and k != prefix}

    return {**NEW_TABLE_DEFAULTS, **prefixed(TABLE_DEFAULT_PREFIX), **properties, **prefixed(TABLE_OVERRIDE_PREFIX)}


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


def jdbc_location(catalog: Catalog, identifier: str) -> str | None:
    """Where Java's ``JdbcCatalog`` puts a new table: ``<warehouse>/<level>/.../<table>`` (a random suffix
    on the table's folder with the catalog property ``unique-table-location=true``), whatever the namespace's
    properties; None for other catalogs (their own default is Java's)."""
    warehouse = catalog.properties.get("warehouse")
    if catalog.properties.get("type") != "sql" or not warehouse:
        return None
    folder = Catalog.table_name_from(identifier)
    if catalog.properties.get("unique-table-location", "false").strip().lower() == "true":
        folder = f"{folder}-{uuid.uuid4().hex}"
    return "/".join([warehouse.rstrip("/"), *Catalog.namespace_from(identifier), folder])


def _create(catalog: Catalog, identifier: str, schema: Schema, spec, properties: dict[str, str],
            location: str | None = None) -> Table:
    for attempt in range(1, CREATE_TABLE_ATTEMPTS + 1):
        try:
            table = catalog.create_table(identifier, schema=schema, partition_spec=spec, properties=dict(properties),
                                         location=location)
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
