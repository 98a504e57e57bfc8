"""Iceberg v2 position delete files: one Parquet file per data file it deletes rows of.

A position delete file holds ``(file_path, pos)`` rows: "row ``pos`` (0-based)
of data file ``file_path`` is deleted". icefloe writes them file-scoped: every
delete file references exactly one data file, so that

* readers match it to its data file without reading it: pyiceberg by the
  ``file_path`` lower and upper bounds (equal, the full path, never
  truncated), Iceberg Java and DuckDB by ``referenced_data_file`` as well;
* compaction can drop it together with the one data file it applies to.

The file follows the spec: the reserved field ids (``file_path`` 2147483546,
``pos`` 2147483545, both required), rows sorted by ``pos`` with no duplicate,
the referenced data file's partition spec and partition, bounds in Iceberg's
single-value serialization. It is written through the table's FileIO and
location provider (under the data location, in the data file's partition
directory), so any storage the table's data lives on works.
"""

from __future__ import annotations

import uuid
from typing import Iterable, Mapping

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg.conversions import to_bytes
from pyiceberg.io import FileIO
from pyiceberg.io.pyarrow import _get_parquet_writer_kwargs
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.partitioning import PartitionFieldValue, PartitionKey
from pyiceberg.table import Table
from pyiceberg.types import LongType

from connector.iceberg.live_files import FILE_PATH_ID, POS_ID, spec_id_of

#: The Arrow schema of a position delete file (field ids in the Parquet schema, both columns required).
DELETE_SCHEMA = pa.schema([
    pa.field("file_path", pa.string(), nullable=False, metadata={b"PARQUET:field_id": str(FILE_PATH_ID).encode()}),
    pa.field("pos", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": str(POS_ID).encode()}),
])


def write_position_deletes(table: Table, deletes: pa.Table, data_files: Mapping[str, DataFile]) -> list[DataFile]:
    """Write ``deletes`` (columns ``file_path``, ``pos``; duplicates allowed) as one delete file per data file.

    ``data_files`` maps each referenced path to its live :class:`DataFile` (its spec and partition are
    the delete file's); a path missing from it is a caller's bug (ValueError naming it). Nothing is
    committed: hand the returned files to :func:`connector.iceberg.row_delta.commit_row_delta`.
    """
    rows = _normalized(deletes)
    if rows.num_rows == 0:
        return []
    paths = rows.column("file_path")
    missing = sorted(set(pc.unique(paths).to_pylist()) - set(data_files))
    if missing:
        raise ValueError(f"Position deletes reference data file(s) not given as live: {', '.join(missing)}")
    return [_write_one(table, rows.slice(start, length), data_files[path]) for path, start, length in _runs(paths)]


def _runs(paths: pa.ChunkedArray) -> list[tuple[str, int, int]]:
    """(path, start, length) of each run of one path in the sorted ``paths``."""
    flat = paths.combine_chunks()
    changes = pc.indices_nonzero(pc.not_equal(flat[1:], flat[:-1])).to_pylist()
    starts = [0, *(index + 1 for index in changes)]
    ends = [*starts[1:], len(flat)]
    return [(flat[start].as_py(), start, end - start) for start, end in zip(starts, ends)]


def _normalized(deletes: pa.Table) -> pa.Table:
    """The distinct (file_path, pos) rows of ``deletes``, sorted by path then position."""
    rows = deletes.select(["file_path", "pos"])
    if rows.column("file_path").null_count or rows.column("pos").null_count:
        raise ValueError("Position deletes must have neither a null file_path nor a null pos")
    rows = pa.table({"file_path": rows.column("file_path").cast(pa.string()),
                     "pos": rows.column("pos").cast(pa.int64())})
    if rows.num_rows and pc.min(rows.column("pos")).as_py() < 0:
        raise ValueError("Position deletes must have no negative pos")
    distinct = rows.group_by(["file_path", "pos"], use_threads=False).aggregate([])
    return distinct.sort_by([("file_path", "ascending"), ("pos", "ascending")]).cast(DELETE_SCHEMA)


def _write_one(table: Table, rows: pa.Table, data_file: DataFile) -> DataFile:
    """One delete file holding ``rows`` (all of ``data_file``, sorted by pos)."""
    location = table.location_provider().new_data_location(
        data_file_name=f"{uuid.uuid4()}-deletes.parquet", partition_key=_partition_key(table, data_file))
    output = table.io.new_output(location)
    with output.create(overwrite=False) as stream:
        with pq.ParquetWriter(stream, DELETE_SCHEMA, **_get_parquet_writer_kwargs(table.metadata.properties)) \
                as writer:
            writer.write_table(rows)
    metadata = writer.writer.metadata  # the footer, complete once the writer is closed
    positions = rows.column("pos")
    lower_pos, upper_pos = pc.min(positions).as_py(), pc.max(positions).as_py()
    path_bytes = data_file.file_path.encode("utf-8")
    delete_file = DataFile.from_args(
        _table_format_version=3,  # the v3 record carries `referenced_data_file`; v2 manifests store it too
        content=DataFileContent.POSITION_DELETES,
        file_path=location,
        file_format=FileFormat.PARQUET,
        partition=data_file.partition,
        record_count=rows.num_rows,
        file_size_in_bytes=len(output),
        column_sizes=_column_sizes(metadata),
        value_counts={FILE_PATH_ID: rows.num_rows, POS_ID: rows.num_rows},
        null_value_counts={FILE_PATH_ID: 0, POS_ID: 0},
        nan_value_counts={},
        lower_bounds={FILE_PATH_ID: path_bytes, POS_ID: to_bytes(LongType(), lower_pos)},
        upper_bounds={FILE_PATH_ID: path_bytes, POS_ID: to_bytes(LongType(), upper_pos)},
        split_offsets=None,
        sort_order_id=None,
        referenced_data_file=data_file.file_path,
    )
    delete_file.spec_id = spec_id_of(data_file, table.metadata.default_spec_id)
    return delete_file


def _partition_key(table: Table, data_file: DataFile) -> PartitionKey | None:
    """The partition key of ``data_file`` in its own spec (None when unpartitioned): the directory."""
    metadata = table.metadata
    spec = metadata.specs()[spec_id_of(data_file, metadata.default_spec_id)]
    if spec.is_unpartitioned():
        return None
    values = [PartitionFieldValue(field=spec_field, value=data_file.partition[index])
              for index, spec_field in enumerate(spec.fields)]
    return PartitionKey(field_values=values, partition_spec=spec, schema=metadata.schema())


def _column_sizes(metadata: pq.FileMetaData) -> dict[int, int]:
    sizes = {FILE_PATH_ID: 0, POS_ID: 0}
    ids = {"file_path": FILE_PATH_ID, "pos": POS_ID}
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for column in range(row_group.num_columns):
            chunk = row_group.column(column)
            sizes[ids[chunk.path_in_schema]] += chunk.total_compressed_size
    return sizes


def read_position_deletes(io: FileIO, delete_files: Iterable[DataFile]) -> pa.Table:
    """The (file_path, pos) rows of ``delete_files`` (Parquet position delete files), in file order."""
    tables = []
    for delete_file in delete_files:
        if delete_file.content != DataFileContent.POSITION_DELETES:
            raise ValueError(f"{delete_file.file_path} is not a position delete file")
        with io.new_input(delete_file.file_path).open() as stream:
            tables.append(pq.read_table(stream, columns=["file_path", "pos"]).cast(DELETE_SCHEMA))
    return pa.concat_tables(tables) if tables else DELETE_SCHEMA.empty_table()
