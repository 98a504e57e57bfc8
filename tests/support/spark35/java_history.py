"""Make a table with Iceberg's own Java writers (Spark 3.5 and Iceberg's Spark runtime) as an oracle.

Runs inside the Spark 3.5 venv, as ``read_tables.py`` does; started by ``tests/support/spark_iceberg.py``:

    java_history.py REQUEST.json RESULT.pickle

where the request is ``{"warehouse": folder}``. In a Hadoop catalog there it creates ``db.t (id bigint,
name string)`` partitioned by ``name``, appends two batches (``AppendFiles``), compacts it
(``rewrite_data_files``: ``RewriteFiles``) and rewrites its manifests (``RewriteManifests``). The
result: ``{"metadata": <the table's current metadata.json, parsed>, "created": <its first one, parsed>}``.
"""

from __future__ import annotations

import json
import pickle
import sys
import time
from pathlib import Path

from read_tables import session


def main(request_file: str, result_file: str) -> None:
    request = json.loads(Path(request_file).read_text())
    started = time.monotonic()
    spark = session({"spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
                     "spark.sql.catalog.j": "org.apache.iceberg.spark.SparkCatalog",
                     "spark.sql.catalog.j.type": "hadoop", "spark.sql.catalog.j.warehouse": request["warehouse"]})
    spark.sparkContext.setLogLevel("ERROR")
    timings = {"session_s": round(time.monotonic() - started, 1)}
    spark.sql("CREATE TABLE j.db.t (id bigint, name string) USING iceberg PARTITIONED BY (name)")
    spark.sql("INSERT INTO j.db.t VALUES (1, 'a'), (2, 'b')")
    spark.sql("INSERT INTO j.db.t VALUES (3, 'a'), (4, 'b')")
    spark.sql("CALL j.system.rewrite_data_files(table => 'db.t', options => map('min-input-files', '2'))")
    spark.sql("CALL j.system.rewrite_manifests('db.t')")
    folder = Path(request["warehouse"].removeprefix("file:")) / "db" / "t" / "metadata"
    versions = sorted(folder.glob("v*.metadata.json"), key=lambda p: int(p.name[1:].split(".")[0]))
    timings["total_s"] = round(time.monotonic() - started, 1)
    spark.stop()
    with open(result_file, "wb") as out:
        pickle.dump({"metadata": json.loads(versions[-1].read_text()), "created": json.loads(versions[0].read_text()),
                     "timings": timings}, out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
