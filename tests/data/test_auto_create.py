"""Auto-created tables, field by field, as Iceberg's Java catalogs create them for the Java sink.

The Apache sink calls ``catalog.createTable(identifier, schema, spec, autoCreateProps)``; Java's
catalogs add their ``table-default.*`` and ``table-override.*`` properties, and
``TableMetadata.newTableMetadata`` gives the table format version 2 (unless ``format-version`` says
otherwise), fresh field ids from 1, spec 0 with partition field ids from 1000, the unsorted order 0,
and ``write.parquet.compression-codec=zstd`` as a persisted property. It sets no identifier fields.
"""

from __future__ import annotations

from connector.commit.commit import commit_table, schema_rounds
from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.task import new_pipeline
from tests.commit.test_commit import _batch, _process
from tests.integration.harness import sink_props, unique

ZSTD = {"write.parquet.compression-codec": "zstd"}


def write(config: SinkConfig, rows: list[dict], first: int = 0, *, commit: bool = True) -> None:
    """One cycle of ``rows`` into db.events (creating it from the first), committed if ``commit``."""
    offsets = range(first, first + len(rows))
    pipeline = new_pipeline(config, unique("task"))
    schema_rounds(pipeline.catalog, config, _batch(offsets, rows), lambda b: _process(pipeline, b))
    files, _ = pipeline.close()
    if commit:
        commit_table(load_catalog(config.props), config, "db.events", files.get("db.events", []),
                     {("t", 0): offsets[-1] + 1}, unique("c"), None)


def created(tmp_path, rows=({"id": 1, "name": "a", "ts": 1},), commit=True, **extra) -> tuple[SinkConfig, object]:
    config = SinkConfig.parse(sink_props(unique("create"), "t", "db.events", tmp_path, **extra))
    write(config, list(rows), commit=commit)
    return config, load_catalog(config.props).load_table("db.events")


def test_a_new_table_has_what_icebergs_table_metadata_gives_a_new_table(tmp_path):
    _, table = created(tmp_path, **{"iceberg.tables.default-partition-by": "name"})
    metadata = table.metadata
    assert metadata.format_version == 2
    assert metadata.properties == ZSTD
    assert [(f.field_id, f.name, f.required) for f in metadata.schema().fields] == [
        (1, "id", False), (2, "name", False), (3, "ts", False)]
    assert (metadata.current_schema_id, metadata.last_column_id) == (0, 3)
    assert metadata.schema().identifier_field_ids == []
    assert (metadata.default_spec_id, [(f.source_id, f.field_id, f.name) for f in metadata.spec().fields]) == (
        0, [(2, 1000, "name")])
    assert metadata.last_partition_id == 1000
    assert (metadata.default_sort_order_id, metadata.sort_order_by_id(0).is_unsorted) == (0, True)
    assert table.location() == f"file://{tmp_path}/warehouse/db/events"  # JdbcCatalog: <warehouse>/<ns>/<table>
    assert metadata.snapshots[0].sequence_number == 1 and len(metadata.snapshots) == 1


def test_auto_create_props_and_the_catalogs_table_defaults_and_overrides_are_laid_over_in_javas_order(tmp_path):
    _, table = created(tmp_path, **{
        "iceberg.tables.auto-create-props.format-version": "1",
        "iceberg.tables.auto-create-props.write.parquet.compression-codec": "snappy",
        "iceberg.tables.auto-create-props.commit.retry.num-retries": "7",
        "iceberg.catalog.table-default.commit.retry.num-retries": "5",
        "iceberg.catalog.table-default.write.metadata.previous-versions-max": "12",
        "iceberg.catalog.table-override.write.target-file-size-bytes": "1000000",
        "iceberg.tables.auto-create-props.write.target-file-size-bytes": "5"})
    assert table.metadata.format_version == 1  # format-version chooses the version, is not a property
    assert table.properties == {"write.parquet.compression-codec": "snappy", "commit.retry.num-retries": "7",
                                "write.metadata.previous-versions-max": "12",
                                "write.target-file-size-bytes": "1000000"}


def test_an_append_only_connectors_id_columns_make_no_identifier_fields_so_a_later_null_lands(tmp_path):
    config, table = created(tmp_path, **{"iceberg.tables.default-id-columns": "id"})
    assert table.schema().identifier_field_ids == [] and not table.schema().find_field("id").required

    write(config, [{"id": None, "name": "b", "ts": 2}], first=1)
    rows = load_catalog(config.props).load_table("db.events").scan().to_arrow().sort_by("name").to_pylist()
    assert [r["id"] for r in rows] == [1, None]


def test_an_upsert_or_cdc_connectors_id_columns_become_identifier_fields(tmp_path):
    for mode in ({"iceberg.tables.upsert-mode-enabled": "true"}, {"iceberg.tables.cdc-field": "op"}):
        work = tmp_path / unique("mode")
        _, table = created(work, rows=[{"id": 1, "name": "a", "op": "I"}], commit=False,
                           **{"iceberg.tables.default-id-columns": "id", **mode})
        assert table.schema().identifier_field_names() == {"id"} and table.schema().find_field("id").required
        assert table.properties == ZSTD


def test_a_table_of_a_nested_namespace_lands_where_javas_jdbc_catalog_puts_it(tmp_path):
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    from connector.data.write.table_factory import ensure_table

    config = SinkConfig.parse(sink_props(unique("create"), "t", "a.b.events", tmp_path))
    catalog = load_catalog(config.props)
    schema = Schema(NestedField(1, "id", LongType()))
    nested = ensure_table(catalog, "a.b.events", sample_schema=schema, partition_by=[], properties={},
                          auto_create=True)
    assert nested.location() == f"file://{tmp_path}/warehouse/a/b/events"  # not .../a.b/events

    unique_config = SinkConfig.parse(sink_props(unique("create"), "t", "db.other", tmp_path / "u", **{
        "iceberg.catalog.unique-table-location": "true"}))
    other = ensure_table(load_catalog(unique_config.props), "db.other", sample_schema=schema, partition_by=[],
                         properties={}, auto_create=True)
    folder = other.location().rsplit("/", 1)[1]
    assert folder.startswith("other-") and len(folder) == len("other-") + 32
