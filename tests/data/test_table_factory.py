"""Loading and auto-creating tables (TestIcebergWriterFactory, reference §3.6, §6.3 #13)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.schema import Schema
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType, TimestamptzType

from connector.api import ConfigException, DataException, NotFoundException, SchemaBuilder
from connector.api.logical import Timestamp
from connector.data.convert.type_mapping import iceberg_schema_for, infer_iceberg_schema
from connector.data.write.partition_spec import table_partition_by_key
from connector.data.write.table_factory import ensure_table

from .conftest import make_catalog


def test_auto_create_nested_namespaces(catalog: Catalog) -> None:
    schema = infer_iceberg_schema({"id": 123, "data": "foo2"})
    table = ensure_table(
        catalog, "foo1.foo2.foo3.bar", sample_schema=schema, partition_by=[], properties={"k": "v"}, auto_create=True
    )
    assert table.name() == ("foo1", "foo2", "foo3", "bar")
    assert table.schema().find_field("id").field_type == LongType()
    assert table.schema().find_field("data").field_type == StringType()
    assert table.properties["k"] == "v"
    assert table.spec().is_unpartitioned()
    namespaces = {tuple(ns) for ns in catalog.list_namespaces()} | {
        tuple(ns) for ns in catalog.list_namespaces(("foo1",))
    } | {tuple(ns) for ns in catalog.list_namespaces(("foo1", "foo2"))}
    assert {("foo1",), ("foo1", "foo2"), ("foo1", "foo2", "foo3")} <= namespaces


def test_auto_create_with_partition_spec_and_connect_schema(catalog: Catalog) -> None:
    connect = (
        SchemaBuilder.struct()
        .field("id", SchemaBuilder.int64())
        .field("ts", Timestamp.builder().optional())
        .field("region", SchemaBuilder.string().optional())
        .build()
    )
    table = ensure_table(
        catalog,
        "db.events",
        sample_schema=iceberg_schema_for(connect),
        partition_by=["days(ts)", "bucket(id, 16)", "region"],
        properties={},
        auto_create=True,
    )
    transforms = [f.transform for f in table.spec().fields]
    assert transforms == [DayTransform(), BucketTransform(16), IdentityTransform()]
    assert table.schema().find_field("id").required
    assert table.schema().find_field("ts").field_type == TimestamptzType()
    sources = [table.schema().find_column_name(f.source_id) for f in table.spec().fields]
    assert sources == ["ts", "id", "region"]


def test_existing_table_is_loaded(catalog: Catalog) -> None:
    catalog.create_table("db.t", Schema(NestedField(1, "x", LongType())))
    table = ensure_table(catalog, "db.t", sample_schema=None, partition_by=["nope"], properties={}, auto_create=False)
    assert table.schema().find_field("x")


def test_missing_table_without_auto_create(catalog: Catalog) -> None:
    with pytest.raises(NotFoundException) as info:
        ensure_table(catalog, "db.missing", sample_schema=None, partition_by=[], properties={}, auto_create=False)
    assert "db.missing" in str(info.value) and "iceberg.tables.auto-create-enabled" in str(info.value)


@pytest.mark.parametrize("schema", [None, Schema()])
def test_empty_schema(catalog: Catalog, schema) -> None:
    with pytest.raises(DataException, match="Unable to create table from empty object: db.empty"):
        ensure_table(catalog, "db.empty", sample_schema=schema, partition_by=[], properties={}, auto_create=True)


def test_bad_partition_spec_names_the_setting(catalog: Catalog) -> None:
    schema = infer_iceberg_schema({"id": 1})
    key = table_partition_by_key("db.bad")
    with pytest.raises(ConfigException) as info:
        ensure_table(
            catalog, "db.bad", sample_schema=schema, partition_by=["day(id)"], properties={}, auto_create=True,
            partition_by_key=key,
        )
    assert key in str(info.value) and "day(id)" in str(info.value)
    assert not catalog.table_exists("db.bad")


def test_concurrent_creators_get_the_same_table(tmp_path: Path) -> None:
    make_catalog(tmp_path).create_namespace("db")
    schema = infer_iceberg_schema({"id": 1})

    def create(_: int):
        return ensure_table(
            make_catalog(tmp_path), "db.race", sample_schema=schema, partition_by=[], properties={}, auto_create=True
        ).metadata.table_uuid

    with ThreadPoolExecutor(4) as pool:
        uuids = set(pool.map(create, range(4)))
    assert len(uuids) == 1


def test_id_columns_become_required_identifier_fields_top_level_and_nested(catalog: Catalog) -> None:
    schema = infer_iceberg_schema({"id": 1, "acct": {"no": "x", "name": "n"}, "v": 1.5}, force_optional=True)
    table = ensure_table(catalog, "db.keyed", sample_schema=schema, partition_by=[], properties={},
                         auto_create=True, id_columns=("id", "acct.no"))
    created = table.schema()
    assert created.identifier_field_names() == {"id", "acct.no"}
    assert [created.find_column_name(i) for i in created.identifier_field_ids] == ["id", "acct.no"]
    assert created.find_field("id").required and created.find_field("acct").required
    assert created.find_field("acct.no").required
    assert not created.find_field("acct.name").required and not created.find_field("v").required


def test_id_columns_that_cannot_be_identifier_fields(catalog: Catalog) -> None:
    schema = infer_iceberg_schema({"id": 1, "v": 1.5})
    with pytest.raises(ConfigException, match="Id column v of table db.up is a double"):
        ensure_table(catalog, "db.up", sample_schema=schema, partition_by=[], properties={}, auto_create=True,
                     id_columns=("v",))
    assert not catalog.table_exists("db.up")


def test_a_namespace_another_job_created_between_the_catalogs_check_and_its_insert(tmp_path: Path,
                                                                                    monkeypatch) -> None:
    # pyiceberg's SQL catalog checks, then inserts; the database refuses the insert of the slower job
    catalog, other = make_catalog(tmp_path), make_catalog(tmp_path)
    real_exists = catalog.namespace_exists
    checked = []

    def exists(namespace) -> bool:
        checked.append(namespace)
        return len(checked) > 1 and real_exists(namespace)  # the slower job's check finds it missing ...

    monkeypatch.setattr(catalog, "namespace_exists", exists)
    other.create_namespace("db")  # ... while the other job creates it
    schema = infer_iceberg_schema({"id": 1})

    table = ensure_table(catalog, "db.raced", sample_schema=schema, partition_by=[], properties={}, auto_create=True)

    assert table.name() == ("db", "raced")
