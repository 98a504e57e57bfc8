"""iceberg.catalog.* → pyiceberg catalog, with the Java-config translations."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from connector.api import ConfigException
from connector.config.catalog_config import catalog_properties, pyiceberg_properties, sqlalchemy_url
from connector.data.catalog import load_catalog


def test_catalog_name_and_properties() -> None:
    config = {
        "iceberg.catalog": "prod",
        "iceberg.catalog.type": "rest",
        "iceberg.catalog.uri": "http://localhost:8181",
        "iceberg.tables": "db.t",
    }
    assert catalog_properties(config) == ("prod", {"type": "rest", "uri": "http://localhost:8181"})
    assert catalog_properties({"iceberg.catalog.type": "rest"})[0] == "iceberg"


def test_empty_catalog_properties() -> None:
    with pytest.raises(ConfigException, match="Must specify Iceberg catalog properties"):
        catalog_properties({"iceberg.tables": "db.t", "iceberg.catalog": "x"})


def test_loads_sql_catalog(tmp_path: Path) -> None:
    catalog = load_catalog(
        {"iceberg.catalog.type": "sql", "iceberg.catalog.uri": f"sqlite:///{tmp_path}/c.db",
         "iceberg.catalog.warehouse": f"file://{tmp_path}/wh"}
    )
    assert isinstance(catalog, SqlCatalog) and catalog.name == "iceberg"


@pytest.mark.parametrize("uri", ["jdbc:sqlite:{p}/c.db", "jdbc:sqlite:file:{p}/c.db"])
def test_jdbc_sqlite_becomes_sql_catalog(tmp_path: Path, uri: str) -> None:
    catalog = load_catalog(
        {"iceberg.catalog.catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
         "iceberg.catalog.uri": uri.format(p=tmp_path), "iceberg.catalog.warehouse": f"file://{tmp_path}/wh"}
    )
    assert isinstance(catalog, SqlCatalog)
    catalog.create_namespace("db")
    assert (tmp_path / "c.db").exists()


def test_jdbc_urls() -> None:
    assert sqlalchemy_url("jdbc:sqlite:/tmp/x.db") == "sqlite:////tmp/x.db"
    assert sqlalchemy_url("jdbc:sqlite::memory:") == "sqlite:///:memory:"
    url = sqlalchemy_url("jdbc:postgresql://db:5432/iceberg?sslmode=require", "me", "p@ss")
    assert url.endswith("://me:p%40ss@db:5432/iceberg?sslmode=require") and url.startswith("postgresql")
    assert sqlalchemy_url("jdbc:postgresql://db/ice?user=u&password=pw").endswith("://u:pw@db/ice")
    with pytest.raises(ConfigException, match="iceberg.catalog.uri"):
        sqlalchemy_url("jdbc:mysql://db/x")


@pytest.mark.parametrize(
    "impl, expected",
    [
        ("org.apache.iceberg.rest.RESTCatalog", "rest"),
        ("org.apache.iceberg.aws.glue.GlueCatalog", "glue"),
        ("org.apache.iceberg.hive.HiveCatalog", "hive"),
    ],
)
def test_catalog_impl_class_names(impl: str, expected: str) -> None:
    props, defaulted = pyiceberg_properties({"catalog-impl": impl, "uri": "x"})
    assert props["type"] == expected and "catalog-impl" not in props and not defaulted


@pytest.mark.parametrize("catalog_type", ["hadoop", "nessie", "bogus"])
def test_unsupported_types_name_the_key(catalog_type: str) -> None:
    with pytest.raises(ConfigException, match="iceberg.catalog.type"):
        load_catalog({"iceberg.catalog.type": catalog_type, "iceberg.catalog.warehouse": "s3://b/w"})


def test_type_and_impl_together_rejected() -> None:
    with pytest.raises(ConfigException, match="catalog-impl"):
        pyiceberg_properties({"type": "rest", "catalog-impl": "org.apache.iceberg.rest.RESTCatalog"})


def test_default_type_is_hive_and_error_says_so() -> None:
    props, defaulted = pyiceberg_properties({"uri": "thrift://localhost:1"})
    assert props["type"] == "hive" and defaulted
    with pytest.raises(ConfigException) as info:
        load_catalog({"iceberg.catalog.uri": "thrift://127.0.0.1:1", "iceberg.catalog.warehouse": "/tmp/w"})
    assert "iceberg.catalog.type" in str(info.value) and "'hive'" in str(info.value)


def test_s3_file_io_translation() -> None:
    props, _ = pyiceberg_properties(
        {
            "type": "rest",
            "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
            "s3.endpoint": "http://minio:9000",
            "s3.access-key-id": "a",
            "s3.secret-access-key": "s",
            "s3.path-style-access": "true",
            "client.region": "us-east-1",
        }
    )
    assert props["py-io-impl"] == "pyiceberg.io.pyarrow.PyArrowFileIO"
    assert props["s3.force-virtual-addressing"] == "false"
    assert props["s3.endpoint"] == "http://minio:9000" and props["client.region"] == "us-east-1"
    assert "io-impl" not in props


def test_unknown_io_impl_rejected() -> None:
    with pytest.raises(ConfigException, match="io-impl"):
        pyiceberg_properties({"type": "rest", "io-impl": "com.example.MyIO"})


def test_a_new_sql_catalog_opened_by_two_jobs_at_once_opens_in_both(tmp_path: Path, monkeypatch) -> None:
    # Two jobs started at once on a new SQLite catalog: both find its tables missing, the other
    # creates them first, and this one's CREATE fails "already exists" — then it opens it again.
    from pyiceberg.catalog.sql import SqlCatalogBaseTable

    from connector.data import catalog as module

    real = module._pyiceberg_load_catalog
    calls = []

    def racing(name, **props):
        calls.append(name)
        if len(calls) == 1:
            other = real(name, **props)  # the other job got there first
            SqlCatalogBaseTable.metadata.create_all(other.engine, checkfirst=False)  # our CREATE, too late
        return real(name, **props)

    monkeypatch.setattr(module, "_pyiceberg_load_catalog", racing)
    config = {"iceberg.catalog.type": "sql", "iceberg.catalog.uri": f"sqlite:///{tmp_path}/c.db",
              "iceberg.catalog.warehouse": f"file://{tmp_path}/wh"}

    catalog = load_catalog(config)

    assert isinstance(catalog, SqlCatalog) and len(calls) == 2
    catalog.create_namespace("db")
    assert [ns for ns in catalog.list_namespaces()] == [("db",)]
