"""Row deltas (connector/iceberg/row_delta.py) on a real SQL catalog, read back by pyiceberg and by DuckDB."""

from __future__ import annotations

import pathlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import BucketTransform, IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from connector.api.errors import ConnectException
from connector.data.write.writer import write_data_files
from connector.iceberg.append import append_files
from connector.iceberg.live_files import live_files
from connector.iceberg.position_deletes import write_position_deletes
from connector.iceberg.row_delta import RowDeltaConflict, commit_row_delta
from tests.data.conftest import make_catalog
from tests.support.duckdb_iceberg import scan
from tests.support.positions import positions_of

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "region", StringType(),
                                                                                required=False))
BY_REGION_AND_BUCKET = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"),
                                     PartitionField(1, 1001, BucketTransform(4), "id_bucket"))


@pytest.fixture
def catalog(tmp_path) -> Catalog:
    cat = make_catalog(tmp_path)
    cat.create_namespace("db")
    return cat


def new_table(catalog: Catalog, *, spec: PartitionSpec | None = None, version: int = 2) -> Table:
    return catalog.create_table("db.t", SCHEMA, partition_spec=spec or PartitionSpec(),
                                properties={"format-version": str(version)})


def write(table: Table, ids, region: str = "eu") -> list:
    """Data files holding ``ids`` (in this order) in ``region``."""
    rows = pa.Table.from_pylist([{"id": i, "region": region} for i in ids], schema=table.schema().as_arrow())
    return write_data_files(table, rows, task_id="test")


def pyiceberg_ids(table: Table, snapshot_id: int | None = None) -> list[int]:
    return sorted(table.scan(snapshot_id=snapshot_id).to_arrow().column("id").to_pylist())


def duckdb_ids(table: Table) -> list[int]:
    return sorted(scan(table).column("id").to_pylist())


def delete_rows(table: Table, files: list, doomed: set[int], *, also_live: list | None = None) -> list:
    """Position delete files for the rows of ``files`` with an id in ``doomed``."""
    by_path = {f.file_path: f for f in (*files, *(also_live or []))}
    return write_position_deletes(table, positions_of(table, files, doomed), by_path)


def test_deletes_apply_to_older_files_and_to_a_file_of_the_same_snapshot(catalog):
    table = new_table(catalog)
    old = write(table, range(0, 10))
    commit_row_delta(table, "main", {"offsets": "10"}, added_data=old)
    new = write(table, range(10, 15))
    deletes = delete_rows(table, old + new, {1, 2, 9, 11})
    snapshot = commit_row_delta(table, "main", {"offsets": "15"}, added_data=new, added_deletes=deletes)

    expected = sorted(set(range(15)) - {1, 2, 9, 11})
    table = catalog.load_table("db.t")
    assert table.current_snapshot().snapshot_id == snapshot
    assert pyiceberg_ids(table) == duckdb_ids(table) == expected
    summary = table.current_snapshot().summary
    assert summary.operation.value == "overwrite"
    assert {k: summary[k] for k in ("added-data-files", "added-records", "added-delete-files",
                                    "added-position-delete-files", "added-position-deletes", "total-data-files",
                                    "total-records", "total-delete-files", "total-position-deletes",
                                    "offsets")} == {
        "added-data-files": "1", "added-records": "5", "added-delete-files": "2",
        "added-position-delete-files": "2", "added-position-deletes": "4", "total-data-files": "2",
        "total-records": "15", "total-delete-files": "2", "total-position-deletes": "4", "offsets": "15"}
    assert catalog.load_table("db.t").snapshot_by_id(snapshot).summary.operation.value == "overwrite"


def test_a_row_delta_that_only_adds_data_is_an_append(catalog):
    table = new_table(catalog)
    commit_row_delta(table, "main", {}, added_data=write(table, range(3)))
    assert table.current_snapshot().summary.operation.value == "append"
    assert pyiceberg_ids(table) == duckdb_ids(table) == [0, 1, 2]


def test_deletes_in_several_partitions_of_an_identity_and_bucket_spec(catalog):
    table = new_table(catalog, spec=BY_REGION_AND_BUCKET)
    eu, us = write(table, range(0, 40), "eu"), write(table, range(40, 80), "us")
    assert len(eu) > 1 and len(us) > 1  # several buckets per region
    commit_row_delta(table, "main", {}, added_data=eu + us)
    doomed = {0, 5, 17, 39, 40, 41, 63, 79}
    deletes = delete_rows(table, eu + us, doomed)
    commit_row_delta(table, "main", {}, added_deletes=deletes)

    table = catalog.load_table("db.t")
    assert pyiceberg_ids(table) == duckdb_ids(table) == sorted(set(range(80)) - doomed)
    live = live_files(table, None)
    data_partitions = {f.file.file_path: f.file.partition for f in live.data}
    for delete in live.deletes:  # each delete file sits in its data file's partition
        (target,) = [p for p, deletes in live.deletes_by_data_file().items() if delete in deletes]
        assert delete.file.partition == data_partitions[target]
    assert len(live.deletes) == len({p for p in positions_of(table, eu + us, doomed).column("file_path").to_pylist()})


def test_the_first_row_delta_to_a_branch_of_an_empty_table_creates_the_branch(catalog):
    table = new_table(catalog)
    files = write(table, range(5))
    first = commit_row_delta(table, "audit", {"n": "1"}, added_data=files,
                             added_deletes=delete_rows(table, files, {0}))
    table = catalog.load_table("db.t")
    assert set(table.metadata.refs) == {"audit"} and table.current_snapshot() is None
    more = write(table, range(5, 8))
    second = commit_row_delta(table, "audit", {"n": "2"}, added_data=more,
                              added_deletes=delete_rows(table, files + more, {1, 6}))
    table = catalog.load_table("db.t")
    assert table.snapshot_by_name("audit").snapshot_id == second
    assert table.snapshot_by_id(second).parent_snapshot_id == first
    assert pyiceberg_ids(table, second) == [2, 3, 4, 5, 7]
    assert table.current_snapshot() is None  # main untouched


def test_append_files_commits_delete_files_among_the_files_as_a_row_delta(catalog):
    table = new_table(catalog)
    old = write(table, range(4))
    append_files(table, "main", {}, old)
    new = write(table, range(4, 6))
    append_files(table, "main", {"k": "v"}, new + delete_rows(table, old + new, {0, 5}))
    table = catalog.load_table("db.t")
    assert pyiceberg_ids(table) == duckdb_ids(table) == [1, 2, 3, 4]
    assert table.current_snapshot().summary["added-position-deletes"] == "2"


def test_removing_delete_files_brings_nothing_back_when_their_data_file_goes_too(catalog):
    table = new_table(catalog)
    kept, rewritten = write(table, range(0, 5)), write(table, range(5, 10))
    commit_row_delta(table, "main", {}, added_data=kept + rewritten)
    commit_row_delta(table, "main", {}, added_deletes=delete_rows(table, kept + rewritten, {1, 6, 7}))
    table = catalog.load_table("db.t")
    live = live_files(table, None)
    (path,) = [f.file_path for f in rewritten]
    old_deletes = [d.file for d in live.deletes_by_data_file()[path]]
    replacement = write(table, [5, 8, 9])  # the rewritten file's rows, deletes applied
    commit_row_delta(table, "main", {}, added_data=replacement, removed_data=rewritten,
                     removed_deletes=old_deletes)

    table = catalog.load_table("db.t")
    assert pyiceberg_ids(table) == duckdb_ids(table) == [0, 2, 3, 4, 5, 8, 9]
    summary = table.current_snapshot().summary
    assert (summary["removed-delete-files"], summary["removed-position-deletes"], summary["deleted-data-files"],
            summary["total-delete-files"], summary["total-position-deletes"], summary["total-records"]) == (
        "1", "2", "1", "1", "1", "8")
    live = live_files(table, None)
    assert {d.file.file_path for d in live.deletes} == {
        d.file.file_path for d in live.deletes_by_data_file()[kept[0].file_path]}
    # the delete file kept EXISTING in its rewritten manifest keeps its sequence number (still applies)
    (kept_delete,) = live.deletes
    assert kept_delete.sequence_number == 2


def test_files_removed_from_many_manifests_leave_one_manifest_of_deletions_per_content(catalog):
    # A compaction after many small commits removes every file of many manifests: readers that open
    # each manifest of the snapshot (pyiceberg does) should find a few, not one per commit compacted.
    table = new_table(catalog)
    commits = [write(table, range(n * 3, n * 3 + 3)) for n in range(6)]
    for files in commits:
        commit_row_delta(table, "main", {}, added_data=files)
        commit_row_delta(table, "main", {}, added_deletes=delete_rows(table, files, {files_first_id(table, files)}))
        table = catalog.load_table("db.t")
    live = live_files(table, None)
    old_data = [f.file for f in live.data]
    old_deletes = [d.file for d in live.deletes]
    expected = pyiceberg_ids(table)
    commit_row_delta(table, "main", {}, added_data=write(table, expected), removed_data=old_data,
                     removed_deletes=old_deletes)

    table = catalog.load_table("db.t")
    manifests = table.current_snapshot().manifests(table.io)
    assert sorted((m.content.name, m.added_files_count, m.existing_files_count, m.deleted_files_count)
                  for m in manifests) == [("DATA", 0, 0, 6), ("DATA", 1, 0, 0), ("DELETES", 0, 0, 6)]
    assert pyiceberg_ids(table) == duckdb_ids(table) == expected
    summary = table.current_snapshot().summary
    assert (summary["deleted-data-files"], summary["removed-delete-files"], summary["total-delete-files"]) == (
        "6", "6", "0")


def files_first_id(table: Table, files: list) -> int:
    with table.io.new_input(files[0].file_path).open() as stream:
        return pq.read_table(stream, columns=["id"]).column("id")[0].as_py()


def test_removing_a_data_file_without_the_deletes_against_it_is_a_conflict(catalog):
    table = new_table(catalog)
    files = write(table, range(5))
    commit_row_delta(table, "main", {}, added_data=files)
    commit_row_delta(table, "main", {}, added_deletes=delete_rows(table, files, {2}))
    table = catalog.load_table("db.t")
    head = table.current_snapshot().snapshot_id
    with pytest.raises(RowDeltaConflict, match="have delete files it does not remove"):
        commit_row_delta(table, "main", {}, added_data=write(table, [0, 1, 3, 4]), removed_data=files)
    with pytest.raises(RowDeltaConflict, match="not live"):  # deletes against a file no longer there
        commit_row_delta(table, "main", {}, removed_data=files,
                         added_deletes=delete_rows(table, files, {3}))
    assert catalog.load_table("db.t").current_snapshot().snapshot_id == head


def test_a_stale_table_raises_the_catalogs_conflict_and_leaves_no_manifest(catalog):
    table = new_table(catalog)
    files = write(table, range(5))
    commit_row_delta(table, "main", {}, added_data=files)
    stale = catalog.load_table("db.t")
    commit_row_delta(catalog.load_table("db.t"), "main", {}, added_data=write(table, [9]))
    manifests_before = _manifest_files(stale)
    with pytest.raises(CommitFailedException) as raised:
        commit_row_delta(stale, "main", {}, added_deletes=delete_rows(stale, files, {1}))
    assert not isinstance(raised.value, RowDeltaConflict)
    assert _manifest_files(stale) == manifests_before  # the attempt's manifests and list are deleted
    fresh = catalog.load_table("db.t")
    commit_row_delta(fresh, "main", {}, added_deletes=delete_rows(fresh, files, {1}))
    assert pyiceberg_ids(fresh) == [0, 2, 3, 4, 9]


def _manifest_files(table: Table) -> set[str]:
    return {p.name for p in pathlib.Path(table.location().removeprefix("file://"), "metadata").glob("*.avro")}


def test_a_v1_table_takes_data_only_deltas_and_refuses_delete_files(catalog):
    table = new_table(catalog, version=1)
    files = write(table, [1, 2])
    commit_row_delta(table, "main", {}, added_data=files)  # data only: any format version
    with pytest.raises(ConnectException, match="upsert mode needs an Iceberg format-version 2 table; db.t is v1"):
        commit_row_delta(table, "main", {}, added_deletes=delete_rows(table, files, {1}))
    commit_row_delta(table, "main", {}, added_data=write(table, [2, 3]), removed_data=files)  # as compaction
    assert pyiceberg_ids(catalog.load_table("db.t")) == [2, 3]


def test_files_of_the_wrong_content_are_refused(catalog):
    table = new_table(catalog)
    files = write(table, range(3))
    with pytest.raises(ValueError, match="added_deletes must hold POSITION_DELETES files only"):
        commit_row_delta(table, "main", {}, added_deletes=files)


# --- a model: random upserts and deletes through row deltas ---------------------------------------------

STEP = st.tuples(st.lists(st.integers(0, 30), max_size=6, unique=True),  # ids upserted (a new row replaces)
                 st.lists(st.integers(0, 30), max_size=4, unique=True))  # ids deleted


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(STEP, min_size=1, max_size=5))
def test_random_upserts_and_deletes_read_back_as_the_model(tmp_path_factory, steps):
    """Each step: one row delta adding the upserted rows, each written twice (a stale copy first, deleted
    in the same snapshot), and deleting the rows the table held for every upserted or deleted id."""
    catalog = make_catalog(tmp_path_factory.mktemp("model"))
    catalog.create_namespace("db")
    table = new_table(catalog)
    model: set[int] = set()
    for upserts, removals in steps:
        removals = [i for i in removals if i not in upserts]
        table = catalog.load_table("db.t")
        live = [f.file for f in live_files(table, None).data]
        added = write(table, upserts + upserts) if upserts else []  # a stale copy of each, then the row
        doomed = positions_of(table, live, (set(upserts) | set(removals)) & model)
        stale = positions_of(table, added, set(upserts)).slice(0, len(upserts))  # first copies
        deletes = write_position_deletes(table, pa.concat_tables([doomed, stale]),
                                         {f.file_path: f for f in live + added})
        commit_row_delta(table, "main", {}, added_data=added, added_deletes=deletes)
        model = (model - set(removals)) | set(upserts)
    table = catalog.load_table("db.t")
    assert pyiceberg_ids(table) == sorted(model)
    if table.current_snapshot() is not None:
        assert duckdb_ids(table) == sorted(model)


def test_delete_files_go_through_the_tables_file_io_to_object_storage(tmp_path, s3_endpoint):
    from pyiceberg.catalog import load_catalog

    bucket = f"deletes-{tmp_path.name[-10:].lower().replace('_', '-')}"
    s3_endpoint.client().create_bucket(Bucket=bucket)
    catalog = load_catalog("s3", type="sql", uri=f"sqlite:///{tmp_path}/cat.db", warehouse=f"s3://{bucket}/wh", **{
        "s3.endpoint": s3_endpoint.url, "s3.access-key-id": s3_endpoint.access_key_id,
        "s3.secret-access-key": s3_endpoint.secret_access_key, "s3.region": s3_endpoint.region,
        "s3.path-style-access": "true"})
    catalog.create_namespace("db")
    table = new_table(catalog, spec=BY_REGION_AND_BUCKET)
    files = write(table, range(8))
    deletes = delete_rows(table, files, {2, 5})
    commit_row_delta(table, "main", {}, added_data=files, added_deletes=deletes)
    assert all(d.file_path.startswith(f"s3://{bucket}/wh/") and "/data/region=eu/" in d.file_path for d in deletes)
    keys = s3_endpoint.object_keys(bucket)
    assert all(any(d.file_path.endswith(k) for k in keys) for d in deletes)
    assert pyiceberg_ids(catalog.load_table("db.t")) == [0, 1, 3, 4, 6, 7]
