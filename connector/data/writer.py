"""Arrow tables → Parquet data files of an Iceberg table, ready to commit elsewhere.

Tasks write files on executors and the driver commits them, so writing must
not commit and file names must never collide: every call uses a fresh
``write_uuid`` (pyiceberg's ``_dataframe_to_data_files`` names files
``00000-<n>-<write_uuid>.parquet``, so one shared uuid would make tasks
overwrite each other's files).

pyiceberg does the rest: the table's current partition spec (non-identity
transforms need the ``pyiceberg-core`` extra), ``write.parquet.compression-codec``
and ``write.target-file-size-bytes`` from the table properties (pyiceberg
measures the target in uncompressed Arrow bytes, so files come out several
times smaller than the target), and the column statistics of each file.

pyiceberg's ``DataFile`` pickles and unpickles to an equal object that another
process can append (tested), so commit messages can carry the objects
themselves; :func:`serialize_data_files` / :func:`deserialize_data_files` wrap
that in bytes for transports that want bytes.
"""

from __future__ import annotations

import logging
import pickle
import uuid

import pyarrow as pa
from pyiceberg.io.pyarrow import _dataframe_to_data_files
from pyiceberg.manifest import DataFile
from pyiceberg.table import Table

log = logging.getLogger(__name__)


def write_data_files(table: Table, data: pa.Table, *, task_id: str) -> list[DataFile]:
    """Write ``data`` (Arrow schema from ``schema_to_pyarrow`` with field ids) as data files.

    Nothing is committed: append the returned files with a transaction's fast
    append. ``task_id`` only labels the log line; uniqueness comes from a
    fresh random ``write_uuid`` per call.
    """
    if data.num_rows == 0:
        return []
    write_uuid = uuid.uuid4()
    files = list(_dataframe_to_data_files(table.metadata, data, table.io, write_uuid=write_uuid))
    log.debug(
        "Task %s wrote %d rows of %s into %d files (write uuid %s)",
        task_id, data.num_rows, table.name(), len(files), write_uuid,
    )
    return files


def serialize_data_files(files: list[DataFile]) -> bytes:
    """Bytes of ``files``, for commit messages (pickle of pyiceberg's DataFile objects)."""
    return pickle.dumps(list(files), protocol=pickle.HIGHEST_PROTOCOL)


def deserialize_data_files(blob: bytes) -> list[DataFile]:
    """The data files of :func:`serialize_data_files` (trusted input only: it unpickles)."""
    files = pickle.loads(blob)
    if not isinstance(files, list) or not all(isinstance(f, DataFile) for f in files):
        raise TypeError("not a serialized list of DataFile")
    return files
