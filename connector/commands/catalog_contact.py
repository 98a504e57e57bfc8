"""``icefloe validate`` asks the catalog, where that writes nothing.

A REST, Hive, Glue, DynamoDB or BigQuery catalog is opened (a REST catalog
fetches its config and, with a ``credential``, an OAuth token); a SQL catalog
on a database server is connected to without pyiceberg (which would create
its tables); a SQLite file is not touched. What it meets is classified as
``icefloe run`` would meet it (:mod:`connector.tolerance.catalog_faults`).
"""

from __future__ import annotations

import threading
from typing import Mapping

from connector.config.catalog_config import catalog_properties, pyiceberg_properties
from connector.data.catalog import open_catalog
from connector.tolerance.catalog_faults import CatalogUnavailable, catalog_label, classified

#: Catalog types opened by :func:`contact_catalog`: opening them writes nothing.
OPENED_BY_VALIDATE = {"rest", "hive", "glue", "dynamodb", "bigquery"}


def contact_catalog(config: Mapping[str, str], timeout: float) -> str | None:
    """Ask the catalog (see the module doc); what was asked, or None when nothing could be asked safely.

    Raises :class:`~connector.tolerance.catalog_faults.CatalogRefused` or
    :class:`~connector.tolerance.catalog_faults.CatalogUnavailable` as ``icefloe run`` would meet them
    (no answer within ``timeout`` seconds is the latter).
    """
    _, props = catalog_properties(dict(config))
    translated, _ = pyiceberg_properties(props, create_folders=False)
    catalog_type = translated["type"]
    if catalog_type in OPENED_BY_VALIDATE:
        def ask() -> None:
            open_catalog(config)
    elif catalog_type == "sql" and not translated.get("uri", "").startswith("sqlite"):
        def ask() -> None:
            _connect_database(translated["uri"])
    else:
        return None
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            ask()
            outcome.append(None)
        except Exception as exc:  # noqa: BLE001 - classified below, as the job would
            outcome.append(classified(exc, config))

    worker = threading.Thread(target=attempt, name="validate-catalog", daemon=True)
    worker.start()
    worker.join(timeout)
    label = catalog_label(config)
    if not outcome:
        raise CatalogUnavailable(f"The {label} did not answer within {timeout:.0f}s")
    if outcome[0] is not None:
        raise outcome[0]
    return label


def _connect_database(url: str) -> None:
    """Connect to a SQL catalog's database and disconnect: no table is created."""
    from sqlalchemy import create_engine

    engine = create_engine(url)
    try:
        with engine.connect():
            pass
    finally:
        engine.dispose()
