"""Writing data files, committing them elsewhere, reading them back."""

from __future__ import annotations

import datetime as dt
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.manifest import DataFile
from pyiceberg.table import Table

from connector.data.convert.record_converter import RecordConverter
from connector.data.convert.type_mapping import infer_iceberg_schema
from connector.data.write.partition_spec import partition_spec_for
from connector.data.write.writer import write_data_files

UTC = dt.timezone.utc
ROWS = [
    {"id": i, "name": f"n{i % 7}", "ts": 1_700_000_000_000 + i * 600_000, "amount": i / 4}
    for i in range(500)
]


def _table(catalog: Catalog, name: str, partition_by: list[str], properties: dict[str, str] | None = None) -> Table:
    schema = infer_iceberg_schema({"id": 1, "name": "x", "ts": dt.datetime.now(UTC), "amount": 1.5})
    from pyiceberg.schema import assign_fresh_schema_ids

    schema = assign_fresh_schema_ids(schema)
    spec = partition_spec_for(schema, partition_by)
    return catalog.create_table(f"db.{name}", schema, partition_spec=spec, properties=properties or {})


def _data(table: Table) -> pa.Table:
    result = RecordConverter(table.schema(), evolve=False).convert(ROWS)
    assert result.table is not None
    return result.table


def _commit(table: Table, files: list[DataFile]) -> None:
    with table.transaction() as tx:
        with tx.update_snapshot(snapshot_properties={"kafka.connect.commit-id": "c1"}).fast_append() as append:
            for data_file in files:
                append.append_data_file(data_file)


def _sorted(data: pa.Table) -> pa.Table:
    return data.sort_by("id")


@pytest.mark.parametrize(
    "partition_by",
    [[], ["days(ts)"], ["bucket(id, 16)"], ["name"], ["days(ts)", "bucket(id, 4)", "name"]],
)
def test_round_trip(catalog: Catalog, partition_by: list[str]) -> None:
    table = _table(catalog, "rt", partition_by)
    data = _data(table)
    files = write_data_files(table, data, task_id="0")
    assert files and sum(f.record_count for f in files) == len(ROWS)
    if partition_by:
        assert len(files) > 1
    _commit(catalog.load_table("db.rt"), files)
    read = catalog.load_table("db.rt").scan().to_arrow()
    assert _sorted(read).equals(_sorted(data).cast(read.schema))
    assert read.num_rows == len(ROWS)


def test_null_and_many_partition_values(catalog: Catalog) -> None:
    table = _table(catalog, "nulls", ["name", "days(ts)"])
    rows = [{"id": i, "name": None if i % 5 == 0 else f"n{i % 150}", "ts": None if i % 7 == 0 else ROWS[i]["ts"]}
            for i in range(len(ROWS))]
    data = RecordConverter(table.schema(), evolve=False).convert(rows).table
    files = write_data_files(table, data, task_id="0")
    assert sum(f.record_count for f in files) == len(rows)
    assert any(f.partition[0] is None for f in files) and any(f.partition[1] is None for f in files)
    _commit(table, files)
    read = catalog.load_table("db.nulls").scan().to_arrow()
    assert _sorted(read).equals(_sorted(data).cast(read.schema))


def test_file_names_unique_across_calls(catalog: Catalog) -> None:
    table = _table(catalog, "u", ["bucket(id, 4)"])
    data = _data(table)
    first = write_data_files(table, data, task_id="0")
    second = write_data_files(table, data, task_id="0")
    paths = [f.file_path for f in first + second]
    assert len(paths) == len(set(paths))
    _commit(table, first + second)
    assert catalog.load_table("db.u").scan().to_arrow().num_rows == 2 * len(ROWS)


def test_empty_table_writes_nothing(catalog: Catalog) -> None:
    table = _table(catalog, "e", [])
    assert write_data_files(table, schema_to_pyarrow(table.schema()).empty_table(), task_id="0") == []


def test_table_properties_codec_and_target_size(catalog: Catalog) -> None:
    table = _table(
        catalog, "p", [], {"write.parquet.compression-codec": "snappy", "write.target-file-size-bytes": "4096"}
    )
    files = write_data_files(table, _data(table), task_id="7")
    assert len(files) > 1  # target size splits the rows
    local = files[0].file_path.removeprefix("file://")
    assert pq.ParquetFile(local).metadata.row_group(0).column(0).compression == "SNAPPY"


def test_pickled_data_files_equal_and_committable(catalog: Catalog) -> None:
    table = _table(catalog, "pk", ["days(ts)"])
    files = write_data_files(table, _data(table), task_id="0")
    copies = pickle.loads(pickle.dumps(files))
    assert copies == files
    assert [c.partition for c in copies] == [f.partition for f in files]


def test_data_files_from_another_process(catalog: Catalog, tmp_path: Path) -> None:
    """Files written by one process are appended by another process's table handle."""
    _table(catalog, "xp", ["days(ts)", "bucket(id, 4)"])
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from pyiceberg.catalog import load_catalog
        from connector.data.convert.record_converter import RecordConverter
        import pickle
        from connector.data.write.writer import write_data_files
        from tests.data.test_writer import ROWS
        catalog = load_catalog("t", type="sql", uri="sqlite:///{tmp_path}/cat.db", warehouse="file://{tmp_path}/wh")
        table = catalog.load_table("db.xp")
        data = RecordConverter(table.schema(), evolve=False).convert(ROWS).table
        sys.stdout.buffer.write(pickle.dumps(write_data_files(table, data, task_id="3")))
        """
    )
    blob = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True).stdout
    files = pickle.loads(blob)
    table = catalog.load_table("db.xp")
    _commit(table, files)
    read = catalog.load_table("db.xp").scan().to_arrow()
    expected = _data(table)
    assert _sorted(read).equals(_sorted(expected).cast(read.schema))
