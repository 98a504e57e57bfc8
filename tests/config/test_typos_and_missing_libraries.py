"""A typo in a key or class name gets a did-you-mean; a missing driver names what to install."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from connector import cli
from connector.api.errors import ConfigException
from connector.config.sink_config import SinkConfig
from connector.data.catalog import open_catalog
from connector.tolerance.catalog_faults import CatalogRefused

BASE = {"name": "orders", "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector", "topics": "orders",
        "iceberg.tables": "db.orders", "iceberg.catalog.type": "sql", "iceberg.catalog.uri": "sqlite:///:memory:"}


def test_run_names_the_mistyped_key_behind_an_invalid_config(tmp_path, caplog):
    props = {k: v for k, v in BASE.items() if k != "iceberg.tables"}
    (tmp_path / "c.json").write_text(json.dumps({**props, "iceberg.tabels": "db.orders"}))
    args = cli._parser().parse_args(["run", str(tmp_path / "c.json"), "--bootstrap-servers", "127.0.0.1:1"])

    with caplog.at_level(logging.WARNING, logger="icefloe"), pytest.raises(ConfigException,
                                                                          match="Must specify table name"):
        cli._load(args)

    assert ("The configuration 'iceberg.tabels' was supplied but isn't a known config. "
            "Did you mean 'iceberg.tables'?") in caplog.text


def test_validate_suggests_the_key_too(tmp_path, capsys):
    (tmp_path / "c.json").write_text(json.dumps({**BASE, "iceberg.tables.auto-create-enabeld": "true"}))

    assert cli.main(["validate", str(tmp_path / "c.json"), "--offline"]) == 0

    assert "Did you mean 'iceberg.tables.auto-create-enabled'?" in capsys.readouterr().err


def test_an_unrelated_key_gets_no_guess(tmp_path, capsys):
    (tmp_path / "c.json").write_text(json.dumps({**BASE, "my.own.setting": "1"}))
    cli.main(["validate", str(tmp_path / "c.json"), "--offline"])
    err = capsys.readouterr().err
    assert "'my.own.setting' was supplied but isn't a known config." in err and "Did you mean" not in err


@pytest.mark.parametrize("key, typo, meant", [
    ("value.converter", "org.apache.kafka.connect.json.JsonConvertor", "org.apache.kafka.connect.json.JsonConverter"),
    ("value.converter", "io.confluent.connect.avro.AvroConvertor", "io.confluent.connect.avro.AvroConverter"),
    ("transforms.a.type", "org.apache.kafka.connect.transforms.InsertFeld$Value",
     "org.apache.kafka.connect.transforms.InsertField$Value"),
    ("transforms.a.type", "org.apache.kafka.connect.transforms.TimestampConvertor$Value",
     "org.apache.kafka.connect.transforms.TimestampConverter$Value"),
])
def test_a_mistyped_class_gets_the_class_it_is_closest_to(key, typo, meant):
    extra = {"transforms": "a"} if key.startswith("transforms") else {}
    with pytest.raises(ConfigException) as raised:
        SinkConfig.parse({**BASE, **extra, key: typo})
    assert f"Class {typo} could not be found. Did you mean '{meant}'?" in str(raised.value)


@pytest.mark.parametrize("catalog, module, extra", [
    ({"iceberg.catalog.type": "jdbc", "iceberg.catalog.uri": "jdbc:postgresql://db:5432/iceberg"}, "psycopg",
     "'icefloe[postgres]'"),
    ({"iceberg.catalog.type": "hive", "iceberg.catalog.uri": "thrift://metastore:9083"}, "thrift", "'icefloe[hive]'"),
])
def test_a_missing_driver_names_the_extra_that_installs_it(monkeypatch, catalog, module, extra):
    for name in ("psycopg", "psycopg2", "thrift"):
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    with pytest.raises(CatalogRefused) as raised:
        open_catalog(catalog)
    message = str(raised.value)
    assert message.startswith("The catalog 'iceberg' (")
    assert f"import of {module}" in message or f"No module named '{module}" in message
    assert f"pip install {extra}" in message


def test_validate_names_the_extra_for_a_missing_database_driver(tmp_path, capsys, monkeypatch):
    for name in ("psycopg", "psycopg2"):
        monkeypatch.setitem(sys.modules, name, None)
    (tmp_path / "c.json").write_text(json.dumps({**BASE, "iceberg.catalog.uri": "postgresql+psycopg2://db/ice"}))

    assert cli.main(["validate", str(tmp_path / "c.json"), "--offline"]) == 2

    assert "the database driver cannot be loaded: " in capsys.readouterr().err
