"""Read an Iceberg table with DuckDB's own Iceberg reader: a second engine checking what icefloe wrote.

The extensions come from their PyPI wheels (``duckdb-extension-iceberg`` and
``duckdb-extension-avro``, which the Iceberg extension reads manifests with),
so nothing is downloaded at run time.
"""

from __future__ import annotations

import pathlib

import duckdb
import duckdb_extension_avro
import duckdb_extension_iceberg
import pyarrow as pa


def _extension_file(module) -> str:
    found = sorted(pathlib.Path(module.__file__).parent.glob("extensions/*/*.duckdb_extension"))
    assert found, f"no DuckDB extension file in {module.__name__}"
    return str(found[-1])


def connect() -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the Iceberg extension loaded from the wheels (no autoinstall)."""
    connection = duckdb.connect(config={"autoinstall_known_extensions": False,
                                        "autoload_known_extensions": False})
    for module in (duckdb_extension_avro, duckdb_extension_iceberg):
        connection.execute(f"LOAD '{_extension_file(module)}'")
    return connection


def scan(table, columns: str = "*", where: str = "", snapshot_id: int | None = None) -> pa.Table:
    """The rows DuckDB reads from the pyiceberg ``table`` (its metadata file): its current snapshot,
    or ``snapshot_id``."""
    metadata = table.metadata_location
    if metadata.startswith("file://"):
        metadata = metadata[len("file://"):]
    source = f"'{metadata}'" + (f", snapshot_from_id={snapshot_id}" if snapshot_id is not None else "")
    query = f"SELECT {columns} FROM iceberg_scan({source})" + (f" WHERE {where}" if where else "")
    with connect() as connection:
        return connection.execute(query).to_arrow_table()
