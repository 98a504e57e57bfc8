"""Read Iceberg tables by their metadata files with Spark 3.5 and Iceberg's own Spark runtime.

Runs inside the Spark 3.5 venv (``make install`` builds it), never in the project's
venv: Iceberg's Spark runtime on PyPI is built for Spark 3.5, the project runs
pyspark 4. ``tests/support/spark_iceberg.py`` starts it; it takes a JSON request
file and writes a pickle of the rows:

    read_tables.py REQUEST.json RESULT.pickle

where the request is ``{"tables": [{"metadata": ..., "columns": ..., "where": ..., "snapshot_id": ...}, ...]}``
(``snapshot_id`` null for the metadata file's current snapshot)
and the result a list, per table, of rows as dicts of plain Python values.
Every table is read in one Spark session, so a test pays for one JVM start.
"""

from __future__ import annotations

import json
import pickle
import sys
import time
from pathlib import Path

import snowpark_connect_deps_iceberg
from pyspark.sql import SparkSession

VENV = Path(sys.prefix)
RUNTIME = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"  # pyspark 3.5's jars are Scala 2.12 builds
JACKSON = VENV / "iceberg-shaded-jackson.jar"  # made by relocate_jackson.py; see there why


def session(extra: dict[str, str] | None = None) -> SparkSession:
    """The Spark 3.5 session with Iceberg's runtime; ``extra``: more settings (catalogs, extensions)."""
    runtime = snowpark_connect_deps_iceberg.get_jar_path(RUNTIME)
    if not JACKSON.exists():
        sys.exit(f"{JACKSON} is missing: run `make install` (it runs tests/support/spark35/relocate_jackson.py)")
    builder = SparkSession.builder
    for key, value in (extra or {}).items():
        builder = builder.config(key, value)
    return (builder.appName("icefloe-iceberg-reader")
            # One core and a small heap: the machine is shared and the tables are test-sized.
            .master("local[1]")
            .config("spark.driver.memory", "512m")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.jars", f"{runtime},{JACKSON}")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "1")
            # A short-lived JVM: C1 only and the serial collector start faster than the defaults.
            .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
            .getOrCreate())


def main(request_file: str, result_file: str) -> None:
    request = json.loads(Path(request_file).read_text())
    started = time.monotonic()
    spark = session()
    spark.sparkContext.setLogLevel("ERROR")
    timings = {"session_s": round(time.monotonic() - started, 1)}
    results = []
    for number, table in enumerate(request["tables"]):
        # A path ending in metadata.json makes Iceberg load exactly that metadata file (its
        # StaticTableOperations): the same snapshot pyiceberg and DuckDB read, no catalog needed, so
        # the project's SQLite catalog (for which there is no JDBC driver here) never comes into it.
        view = f"t{number}"
        query = f"SELECT {table['columns']} FROM {view}" + (f" WHERE {table['where']}" if table.get("where") else "")
        try:
            reader = spark.read.format("iceberg")
            if table.get("snapshot_id") is not None:
                reader = reader.option("snapshot-id", str(table["snapshot_id"]))
            reader.load(table["metadata"]).createOrReplaceTempView(view)
            results.append([row.asDict(recursive=True) for row in spark.sql(query).collect()])
        except Exception as error:  # noqa: BLE001 - any failure ends the run, naming the table it was reading
            raise SystemExit(f"Spark could not read {table['metadata']}, snapshot {table.get('snapshot_id')} "
                             f"({query}): {error}") from error
    timings["total_s"] = round(time.monotonic() - started, 1)
    spark.stop()
    with open(result_file, "wb") as out:
        pickle.dump({"tables": results, "timings": timings}, out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
