"""Position delete files (connector/iceberg/position_deletes.py): layout, metadata, and reading them back."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.conversions import from_bytes
from pyiceberg.manifest import DataFileContent, FileFormat
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from connector.data.write.writer import write_data_files
from connector.iceberg.live_files import FILE_PATH_ID, POS_ID, referenced_data_file
from connector.iceberg.position_deletes import read_position_deletes, write_position_deletes

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "region", StringType(),
                                                                                required=False))


@pytest.fixture
def table(catalog):
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"))
    return catalog.create_table("db.t", SCHEMA, partition_spec=spec, properties={"format-version": "2"})


def _files(table) -> dict:
    rows = pa.Table.from_pylist([{"id": i, "region": "eu" if i % 2 else "us"} for i in range(20)],
                                schema=table.schema().as_arrow())
    return {f.file_path: f for f in write_data_files(table, rows, task_id="t")}


def test_one_sorted_distinct_file_per_data_file_with_the_reserved_ids_and_exact_metadata(table):
    files = _files(table)
    eu, us = sorted(files, key=lambda p: "region=eu" not in p)
    deletes = pa.table({"pos": [7, 2, 7, 0, 3], "file_path": [eu, eu, eu, us, eu]})  # any order, duplicates

    written = write_position_deletes(table, deletes, files)

    assert len(written) == 2
    by_target = {referenced_data_file(f): f for f in written}
    assert set(by_target) == {eu, us}
    delete = by_target[eu]
    assert (delete.content, delete.file_format, delete.record_count) == (
        DataFileContent.POSITION_DELETES, FileFormat.PARQUET, 3)
    assert delete.partition == files[eu].partition and delete.spec_id == table.metadata.default_spec_id
    assert "/data/region=eu/" in delete.file_path and delete.file_path.endswith("-deletes.parquet")
    assert delete.lower_bounds[FILE_PATH_ID] == delete.upper_bounds[FILE_PATH_ID] == eu.encode()
    assert from_bytes(LongType(), delete.lower_bounds[POS_ID]) == 2
    assert from_bytes(LongType(), delete.upper_bounds[POS_ID]) == 7
    assert delete.value_counts == {FILE_PATH_ID: 3, POS_ID: 3}
    assert delete.null_value_counts == {FILE_PATH_ID: 0, POS_ID: 0}
    with table.io.new_input(delete.file_path).open() as stream:
        stored = pq.read_table(stream)
        assert delete.file_size_in_bytes == len(table.io.new_input(delete.file_path))
    assert stored.column("pos").to_pylist() == [2, 3, 7] and set(stored.column("file_path").to_pylist()) == {eu}
    fields = {f.name: f for f in stored.schema}
    assert {n: (f.metadata[b"PARQUET:field_id"], f.nullable, f.type) for n, f in fields.items()} == {
        "file_path": (b"2147483546", False, pa.string()), "pos": (b"2147483545", False, pa.int64())}


def test_a_delete_file_pickles_with_its_reference_and_spec_as_commit_messages_carry_it(table):
    files = _files(table)
    path = next(iter(files))
    (written,) = write_position_deletes(table, pa.table({"file_path": [path], "pos": [1]}), files)
    back = pickle.loads(pickle.dumps(written))
    assert back == written and referenced_data_file(back) == path and back.spec_id == written.spec_id


def test_reading_them_back_gives_every_deleted_position(table):
    files = _files(table)
    paths = sorted(files)
    deletes = pa.table({"file_path": [paths[0], paths[1], paths[0]], "pos": [4, 1, 0]})
    written = write_position_deletes(table, deletes, files)
    read = read_position_deletes(table.io, written)
    assert read.schema.names == ["file_path", "pos"]
    assert sorted(zip(read.column("file_path").to_pylist(), read.column("pos").to_pylist())) == sorted(
        zip(deletes.column("file_path").to_pylist(), deletes.column("pos").to_pylist()))
    assert read_position_deletes(table.io, []).num_rows == 0


def test_a_path_not_given_as_live_or_a_bad_position_is_refused(table):
    files = _files(table)
    with pytest.raises(ValueError, match="not given as live: s3://elsewhere/x.parquet"):
        write_position_deletes(table, pa.table({"file_path": ["s3://elsewhere/x.parquet"], "pos": [0]}), files)
    path = next(iter(files))
    with pytest.raises(ValueError, match="negative"):
        write_position_deletes(table, pa.table({"file_path": [path], "pos": [-1]}), files)
    with pytest.raises(ValueError, match="null"):
        write_position_deletes(table, pa.table({"file_path": [path], "pos": pa.array([None], pa.int64())}), files)
    assert write_position_deletes(table, pa.table({"file_path": pa.array([], pa.string()),
                                                   "pos": pa.array([], pa.int64())}), files) == []
