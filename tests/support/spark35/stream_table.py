"""Read one Iceberg table incrementally with Spark 3.5's streaming Iceberg source, default options.

Runs inside the Spark 3.5 venv, as ``read_tables.py`` does (see there why); started by
``tests/support/spark_iceberg.py``:

    stream_table.py REQUEST.json RESULT.pickle

where the request is ``{"metadata": [metadata file, ...], "columns": ...}``: the same table at
successive metadata files (a later one holding the snapshots of the earlier ones and more). The
stream runs to the end of each in turn (``availableNow``) with one checkpoint, as a streaming job
restarted after each commit would; the result, per metadata file, is the rows that run read.
A failure of the stream (Iceberg's source refuses an ``overwrite`` or ``delete`` snapshot by
default) exits non-zero with the source's message.
"""

from __future__ import annotations

import json
import pickle
import sys
import tempfile
import time
from pathlib import Path

from read_tables import session


def main(request_file: str, result_file: str) -> None:
    request = json.loads(Path(request_file).read_text())
    started = time.monotonic()
    spark = session()
    spark.sparkContext.setLogLevel("ERROR")
    timings = {"session_s": round(time.monotonic() - started, 1)}
    runs: list[list[dict]] = []
    with tempfile.TemporaryDirectory(prefix="checkpoint-") as checkpoint:
        for metadata in request["metadata"]:
            rows: list[dict] = []

            def collect(batch, _batch_id, rows=rows):
                rows.extend(row.asDict(recursive=True) for row in batch.selectExpr(request["columns"]).collect())

            query = (spark.readStream.format("iceberg").load(metadata).writeStream
                     .foreachBatch(collect).option("checkpointLocation", checkpoint)
                     .trigger(availableNow=True).start())
            try:
                query.awaitTermination()
            except Exception as error:  # noqa: BLE001 - the stream's failure is the answer
                raise SystemExit(f"The Spark stream failed on {metadata}: {error}") from error
            runs.append(rows)
    timings["total_s"] = round(time.monotonic() - started, 1)
    spark.stop()
    with open(result_file, "wb") as out:
        pickle.dump({"runs": runs, "timings": timings}, out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
