"""Local locations are read as Hadoop reads them (connector/config/locations.py), wherever a config gives one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connector.config.catalog_config import with_absolute_local_paths
from connector.config.locations import local_location
from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from tests.integration.harness import sink_props, unique
from tests.maintenance.test_compaction import ids, tiny_commits

#: Every way a Java config spells the folder /<tmp>/wh when the working directory is /<tmp>/cwd.
SPELLINGS = ["file:{root}/wh", "file://{root}/wh", "file://localhost{root}/wh", "{root}/wh", "{root}//wh/",
             "../wh", "file:../wh", "file:{root}/cwd/../wh"]


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    return tmp_path


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_of_a_local_folder_names_that_folder(root, spelling):
    assert local_location(spelling.format(root=root)) == f"file://{root}/wh"


@pytest.mark.parametrize("location", ["s3://bucket/wh", "s3a://bucket/wh", "gs://bucket/wh",
                                      "hdfs://namenode:8020/wh", "abfss://c@account.dfs.core.windows.net/wh"])
def test_other_schemes_are_left_as_they_are(location):
    assert local_location(location) == location


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_warehouse_in_any_spelling_gets_the_tables_where_java_puts_them(root, spelling):
    config = SinkConfig.parse(sink_props(unique("loc"), "t", "db.events", root / "work",
                                         **{"iceberg.catalog.warehouse": spelling.format(root=root)}))
    tiny_commits(config, 2)

    table = load_catalog(config.props).load_table("db.events")
    assert table.location() == f"file://{root}/wh/db/events"
    assert len(list((root / "wh" / "db" / "events" / "data").glob("*.parquet"))) == 2
    assert list((root / "cwd").iterdir()) == []  # no ./file:/... folder
    assert ids(table) == list(range(20))


def test_a_data_path_given_to_new_tables_is_read_the_same_way(root):
    config = SinkConfig.parse(sink_props(unique("loc"), "t", "db.events", root / "work", **{
        "iceberg.tables.auto-create-props.write.data.path": f"file:{root}/data",
        "iceberg.tables.auto-create-props.write.metadata.path": "../meta"}))
    tiny_commits(config, 1)

    table = load_catalog(config.props).load_table("db.events")
    assert table.properties["write.data.path"] == f"file://{root}/data"
    assert len(list((root / "data").glob("*.parquet"))) == 1
    assert list((root / "meta").glob("*.metadata.json"))
    assert list((root / "cwd").iterdir()) == []
    assert ids(table) == list(range(10))


def test_a_data_path_laid_over_by_write_props_is_read_the_same_way(root):
    config = SinkConfig.parse(sink_props(unique("loc"), "t", "db.events", root / "work", **{
        "iceberg.tables.write-props.write.data.path": "file:../written"}))
    assert config.iceberg.write_props["write.data.path"] == f"file://{root}/written"
    tiny_commits(config, 1)
    assert len(list((root / "written").glob("*.parquet"))) == 1
    assert list((root / "cwd").iterdir()) == []


def test_a_rest_catalogs_warehouse_is_the_servers_name_not_a_folder(root):
    for catalog in ({"iceberg.catalog.type": "rest"},
                    {"iceberg.catalog.catalog-impl": "org.apache.iceberg.rest.RESTCatalog"}):
        config = {**catalog, "iceberg.catalog.uri": "http://127.0.0.1:1", "iceberg.catalog.warehouse": "bronze"}
        assert with_absolute_local_paths(config)["iceberg.catalog.warehouse"] == "bronze"


def test_a_spark_checkpoint_location_with_one_slash_is_read_for_the_query_id(root):
    from connector.spark.iceberg_sink import streaming_query_id

    (root / "ckpt").mkdir()
    (root / "ckpt" / "metadata").write_text(json.dumps({"id": "q-1"}) + "\n")
    config = SinkConfig.parse(sink_props(unique("loc"), "t", "db.events", root / "work"))
    for spelling in (f"file:{root}/ckpt", f"file://{root}/ckpt", "../ckpt"):
        assert streaming_query_id({"checkpointLocation": spelling}, config) == "q-1", spelling
