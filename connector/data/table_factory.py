"""Load a destination table, or create it (``iceberg.tables.auto-create-enabled``).

As the sink's ``IcebergWriterFactory``: namespaces are created level by level
(``a``, ``a.b``, ``a.b.c`` for ``a.b.c.tbl``; already-existing or forbidden
ones are fine), then the table with the partition spec from ``partition-by``
and the ``auto-create-props``, retried up to 3 times; if another task created
it meanwhile, that table is loaded. The schema comes from the first record
(its Connect schema, or inferred from a schemaless value).
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

from connector.api.errors import ConfigException, DataException, NotFoundException
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
) -> Table:
    """The table ``identifier``, created from ``sample_schema`` if missing and allowed.

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
    spec = partition_spec_for(schema, partition_by, config_key=partition_by_key)
    create_namespaces(catalog, identifier)
    return _create(catalog, identifier, schema, spec, properties)


def create_namespaces(catalog: Catalog, identifier: str) -> None:
    """Create each namespace level of ``identifier`` that is missing."""
    namespace = Catalog.namespace_from(identifier)
    for depth in range(1, len(namespace) + 1):
        level = namespace[:depth]
        try:
            catalog.create_namespace(level)
            log.info("Created namespace %s", ".".join(level))
        except (NamespaceAlreadyExistsError, ForbiddenError):
            pass


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
