"""The Iceberg catalog a sink config names, loaded through pyiceberg.

The settings are translated from Java's by :mod:`connector.config.catalog_config`;
the catalog's commits delete old metadata files only by the table's rules
(:mod:`connector.iceberg.metadata_cleanup`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from pyiceberg.catalog import Catalog
from pyiceberg.catalog import load_catalog as _pyiceberg_load_catalog

from connector.api.errors import ConfigException, ConnectException
from connector.config.catalog_config import TYPE_KEY, catalog_properties, pyiceberg_properties
from connector.config.icefloe_config import parse_icefloe_config
from connector.iceberg.metadata_cleanup import MetadataCleanup, install
from connector.tolerance.catalog_faults import CatalogRefused, catalog_label, classified

log = logging.getLogger(__name__)


def load_catalog(config: dict[str, str]) -> Catalog:
    """The pyiceberg catalog for a sink config (see the module doc for translations).

    Its commits delete old metadata files by the table's rules (:mod:`connector.iceberg.metadata_cleanup`).
    """
    name, props = catalog_properties(config)
    translated, defaulted = pyiceberg_properties(props)
    try:
        return install(_load_racing_creators(name, translated), _metadata_cleanup(config, translated["type"]))
    except ConfigException:
        raise
    except Exception as e:
        if defaulted:
            raise ConfigException(
                TYPE_KEY,
                None,
                "not set, so the Java sink's default catalog type 'hive' was used, and loading it failed "
                f"({type(e).__name__}: {e}); set {TYPE_KEY} (rest, sql, glue, hive, jdbc)",
            ) from e
        raise


def _metadata_cleanup(config: dict[str, str], catalog_type: str) -> MetadataCleanup:
    keys = parse_icefloe_config(config).maintenance
    return MetadataCleanup(delete_old=keys.metadata_delete_old, rest=catalog_type == "rest",
                           delete_on_rest=keys.metadata_delete_on_rest)


def _load_racing_creators(name: str, translated: dict[str, str]) -> Catalog:
    """pyiceberg's catalog; once more when another process created a new SQL catalog's tables meanwhile.

    pyiceberg's SQL catalog creates its tables when first opened, checking first: two jobs started
    at once on a new catalog can both find them missing, and the slower one's CREATE then fails with
    "already exists". The tables are there by then, so opening it again succeeds.
    """
    if translated.get("type") != "sql":
        return _pyiceberg_load_catalog(name, **translated)
    from sqlalchemy.exc import DBAPIError

    try:
        return _pyiceberg_load_catalog(name, **translated)
    except DBAPIError as exc:
        if "already exists" not in str(exc):
            raise
        log.info("Catalog %s: another process created its tables meanwhile; opening it again", name)
        return _pyiceberg_load_catalog(name, **translated)


def open_catalog(config: Mapping[str, str]) -> Catalog:
    """The config's catalog (:func:`load_catalog`), its failures classified
    (:mod:`connector.tolerance.catalog_faults`)."""
    try:
        return load_catalog(dict(config))
    except ConnectException:
        raise  # a config error, naming its key
    except Exception as exc:
        meaning = classified(exc, config)
        if meaning is exc:  # nothing known about it, but it is the catalog's: name it
            meaning = CatalogRefused(f"The {catalog_label(config)} cannot be opened: {type(exc).__name__}: {exc}")
        raise meaning from exc
