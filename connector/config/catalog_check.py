"""Whether the catalog a config names can be loaded, checked without opening it.

``icefloe validate`` must say that a Hadoop or Nessie catalog, a missing
catalog library or a missing database driver will fail, as ``icefloe run``
would, but without connecting anywhere or creating anything: pyiceberg's SQL
catalog creates its SQLite database file (and tables) the moment it is
built, and a REST catalog calls its server. So this module resolves the
catalog type exactly as :func:`connector.data.catalog.load_catalog` does,
then only imports the catalog's class (and, for SQL, the database driver).

Asking the catalog itself is ``icefloe validate``'s (:mod:`connector.commands.validate`).
"""

from __future__ import annotations

import importlib
from typing import Mapping

from connector.api.errors import ConfigException
from connector.config.catalog_config import (
    CATALOG_PREFIX,
    TYPE_KEY,
    catalog_properties,
    missing_library,
    pyiceberg_properties,
    shown_uri,
)

URI_KEY = CATALOG_PREFIX + "uri"

#: pyiceberg's catalog class per type (what installs a missing library: connector/tolerance/catalog_faults.py).
CATALOG_CLASSES: dict[str, tuple[str, str]] = {
    "rest": ("pyiceberg.catalog.rest", "RestCatalog"),
    "sql": ("pyiceberg.catalog.sql", "SqlCatalog"),
    "hive": ("pyiceberg.catalog.hive", "HiveCatalog"),
    "glue": ("pyiceberg.catalog.glue", "GlueCatalog"),
    "dynamodb": ("pyiceberg.catalog.dynamodb", "DynamoDbCatalog"),
    "bigquery": ("pyiceberg.catalog.bigquery_metastore", "BigQueryMetastoreCatalog"),
    "in-memory": ("pyiceberg.catalog.memory", "InMemoryCatalog"),
}
#: Types that cannot be built without a server or database address.
NEEDS_URI = {"rest", "hive", "sql"}


def check_catalog(config: Mapping[str, str]) -> None:
    """Raise a ConfigException naming the key if the config's catalog cannot be loaded; create nothing."""
    _, props = catalog_properties(dict(config))
    key = CATALOG_PREFIX + "catalog-impl" if "catalog-impl" in props and "type" not in props else TYPE_KEY
    try:
        translated, defaulted = pyiceberg_properties(props, create_folders=False)
    except ConfigException as exc:  # said of the type a catalog-impl class stands for: name the key the user set
        if key == TYPE_KEY or exc.name != TYPE_KEY:
            raise
        raise ConfigException(key, config.get(key), exc.reason) from None
    catalog_type = translated["type"]
    try:
        _import_class(catalog_type, key, config.get(key))
        if catalog_type in NEEDS_URI and not translated.get("uri"):
            raise ConfigException(URI_KEY, None, f"the {catalog_type} catalog needs its address; set {URI_KEY}")
    except ConfigException as exc:
        if not defaulted:
            raise
        raise ConfigException(TYPE_KEY, None, f"not set, so the Java sink's default catalog type 'hive' applies, "
                                              f"and {exc.reason}; set {TYPE_KEY} (rest, sql, glue, hive, jdbc)") \
            from None
    if catalog_type == "sql":
        _check_database_driver(translated["uri"], shown_uri(config.get(URI_KEY)))


def _import_class(catalog_type: str, key: str, value: str | None) -> None:
    """Import the pyiceberg class for ``catalog_type``; a missing library is the user's config error."""
    module_name, class_name = CATALOG_CLASSES[catalog_type]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigException(key, value or catalog_type,
                              f"the {catalog_type} catalog cannot be loaded: {missing_library(exc)}") from None
    if not hasattr(module, class_name):
        raise ConfigException(key, value or catalog_type,
                              f"this pyiceberg has no {module_name}.{class_name}; upgrade pyiceberg")


def _check_database_driver(url: str, shown: str | None) -> None:
    """The SQL catalog's SQLAlchemy dialect and DB-API driver import, without connecting to the database."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        dialect = make_url(url).get_dialect()
        dialect.import_dbapi()
    except (NoSuchModuleError, ImportError) as exc:  # NoSuchModuleError is an ArgumentError: first
        raise ConfigException(URI_KEY, shown, f"the database driver cannot be loaded: {missing_library(exc)}") \
            from None
    except ArgumentError:
        raise ConfigException(URI_KEY, shown, "not a database URL (e.g. jdbc:sqlite:FILE, "
                                              "jdbc:postgresql://HOST/DB, sqlite:///FILE)") from None
