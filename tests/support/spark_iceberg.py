"""Read Iceberg tables with Spark and Iceberg's own Spark runtime: a third engine checking what icefloe wrote.

pyiceberg and DuckDB (``duckdb_iceberg.py``) read in this process; Iceberg's Java
reader, the one most deployments query with, needs Spark 3.5 (the only Spark the
runtime on PyPI is built for, from ``snowpark-connect-deps-iceberg``) while the
project runs pyspark 4. So the reads run in a subprocess of a second venv,
``.venv-spark35``, which ``make install`` builds (see the Makefile), with
``spark35/read_tables.py``. Each call starts one JVM for all the tables it is
given (a Spark start costs seconds), so a test should batch its reads.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
READER = Path(__file__).resolve().parent / "spark35" / "read_tables.py"
STREAMER = Path(__file__).resolve().parent / "spark35" / "stream_table.py"
JAVA_HISTORY = Path(__file__).resolve().parent / "spark35" / "java_history.py"
TIMEOUT_S = 300.0  # a Spark start is 10-20 s on the shared 2-core machine; this bounds a hung JVM

# The timings of the last read, for reports: {"session_s": JVM + session start, "total_s": with the reads}.
last_timings: dict[str, float] = {}


@dataclass(frozen=True)
class Read:
    """One table to read: a pyiceberg table or a metadata location, SQL columns and filter, and a
    snapshot of that metadata file (None: its current one)."""

    table: Any
    columns: str = "*"
    where: str = ""
    snapshot_id: int | None = None


def venv_python() -> Path:
    """The Spark 3.5 venv's Python; ICEFLOE_SPARK35_VENV overrides where the venv is."""
    venv = Path(os.environ.get("ICEFLOE_SPARK35_VENV", ROOT / ".venv-spark35"))
    python = venv / "bin" / "python"
    if not python.exists():
        # No skip: without this venv the Spark check would silently not happen.
        raise RuntimeError(f"no Spark 3.5 venv at {venv}: run `make install` (it builds .venv-spark35 for "
                           "the Spark/Iceberg reader the tests compare tables with)")
    return python


def metadata_file(table_or_location: Any) -> str:
    """A pyiceberg table's current metadata file, or the location given as it is."""
    return getattr(table_or_location, "metadata_location", table_or_location)


def _sort_key(row: dict) -> tuple:
    # Nulls last, scalars by value, anything else (structs, lists) by its repr: a stable order only.
    return tuple((value is None, value if isinstance(value, (int, float, str, bytes)) else repr(value))
                 for value in row.values())


def _failure(stderr: str) -> str:
    """The lines of the reader's stderr that say what failed, without Java stack frames and log noise."""
    lines = [line for line in stderr.splitlines()
             if line.strip() and not line.lstrip().startswith("at ") and " WARN " not in line]
    return "\n".join(lines[-40:])


def scan_tables(reads: Sequence[Read | tuple[Any, str] | tuple[Any, str, str]],
                timeout: float = TIMEOUT_S) -> list[list[dict]]:
    """The rows Spark reads for each ``Read`` or (table or metadata location, columns[, where]), in one
    Spark session.

    ``columns`` and ``where`` are SQL, as for ``duckdb_iceberg.scan``. Each table's rows come back
    as dicts of Python values (ints, strings, floats, datetimes, Decimals, nested dicts and lists),
    sorted by their values in column order.
    """
    wanted = [read if isinstance(read, Read) else Read(*read) for read in reads]
    request = {"tables": [{"metadata": metadata_file(read.table), "columns": read.columns, "where": read.where,
                           "snapshot_id": read.snapshot_id} for read in wanted]}
    found = _run(READER, request, timeout)
    return [sorted(rows, key=_sort_key) for rows in found["tables"]]


def stream(tables: Sequence[Any], columns: str = "*", timeout: float = TIMEOUT_S) -> list[list[dict]]:
    """The rows Spark's streaming Iceberg source (default options) reads from one table at each of its
    successive states ``tables`` (pyiceberg tables or metadata locations), restarted on one checkpoint:
    per state, the rows that run read (sorted). RuntimeError when the stream fails."""
    request = {"metadata": [metadata_file(table) for table in tables], "columns": columns}
    found = _run(STREAMER, request, timeout)
    return [sorted(rows, key=_sort_key) for rows in found["runs"]]


def java_history(warehouse: Path, timeout: float = TIMEOUT_S) -> dict:
    """A table Iceberg's Java writers made in a Hadoop catalog at ``warehouse``: created, two appends, a
    compaction, a manifest rewrite (``spark35/java_history.py``). Its first and its current metadata, parsed:
    ``{"created": ..., "metadata": ...}``."""
    return _run(JAVA_HISTORY, {"warehouse": f"file:{warehouse}"}, timeout)


def _run(script: Path, request: dict, timeout: float) -> dict:
    """Run ``script`` of the Spark 3.5 venv on ``request``; what it pickled."""
    python = venv_python()
    # Only what a JVM needs from this process's environment: pyspark 4's SPARK_HOME or PYTHONPATH
    # would make the 3.5 venv run the wrong Spark.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SPARK_", "PYSPARK_")) and k not in ("PYTHONPATH", "PYTHONHOME")}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    with tempfile.TemporaryDirectory(prefix="icefloe-spark35-") as work:
        request_file, result_file = Path(work, "request.json"), Path(work, "result.pickle")
        request_file.write_text(json.dumps(request))
        started = time.monotonic()
        # Its own session (process group), so a timeout ends the JVM that pyspark started too.
        with subprocess.Popen([str(python), str(script), str(request_file), str(result_file)], cwd=work, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True) as process:
            try:
                _, stderr = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                _, stderr = process.communicate()
                raise RuntimeError(f"the Spark reader did not finish in {timeout:.0f} s:\n{_failure(stderr)}") from None
        if process.returncode != 0 or not result_file.exists():
            raise RuntimeError(f"the Spark reader failed (exit {process.returncode}):\n{_failure(stderr)}")
        with open(result_file, "rb") as result:
            found = pickle.load(result)  # written by our own reader script, in our own temp directory
    last_timings.clear()
    last_timings.update(found["timings"], wall_s=round(time.monotonic() - started, 1))
    return found


def scan(table: Any, columns: str = "*", where: str = "", snapshot_id: int | None = None) -> list[dict]:
    """The rows Spark reads from one table: ``scan_tables`` for a single read."""
    return scan_tables([Read(table, columns, where, snapshot_id)])[0]
