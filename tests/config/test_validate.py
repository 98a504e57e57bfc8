"""``icefloe validate``: Connect's ConfigInfos per key, no broker needed, nothing written, the catalog class loaded."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from connector import cli
from connector.commands import validate as validate_command
from connector.config.sink_config import SinkConfig
from connector.herder.validation import validate_connector_config

SINK = "org.apache.iceberg.connect.IcebergSinkConnector"


def config(**extra: str) -> dict[str, str]:
    """A valid config on a SQLite catalog whose file and warehouse are relative (resolved from the cwd)."""
    return {"name": "orders", "connector.class": SINK, "topics": "orders", "iceberg.tables": "db.orders",
            "iceberg.catalog.type": "sql", "iceberg.catalog.uri": "sqlite:///catalog/db.sqlite",
            "iceberg.catalog.warehouse": "warehouse", **extra}


def validate(tmp_path: Path, capsys, props: dict[str, str], *flags: str) -> tuple[int, dict, str]:
    """Run ``icefloe validate`` on ``props`` from ``tmp_path``: exit code, stdout JSON, stderr."""
    path = tmp_path / "connector.json"
    path.write_text(json.dumps({"name": props["name"], "config": {k: v for k, v in props.items() if k != "name"}}))
    code = cli.main(["validate", str(path), *flags])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


def errors(report: dict) -> dict[str, list[str]]:
    return {c["value"]["name"]: c["value"]["errors"] for c in report["configs"] if c["value"]["errors"]}


@pytest.fixture
def in_tmp(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_valid_config_without_a_broker_exits_0_and_creates_nothing(in_tmp, capsys):
    code, report, err = validate(in_tmp, capsys, config())

    assert code == 0, err
    assert report["name"] == SINK and report["connector"] == "orders" and report["error_count"] == 0
    assert {"definition", "value"} <= set(report["configs"][0])  # Connect's ConfigInfo entries
    assert sorted(os.listdir(in_tmp)) == ["connector.json"]  # neither the SQLite file nor its folders


def test_errors_are_listed_on_the_keys_they_are_about_and_exit_2(in_tmp, capsys):
    props = config(**{"tasks.max": "0", "transforms": "x", "transforms.x.type": "com.example.NoSuchSmt"})

    code, report, err = validate(in_tmp, capsys, props)

    assert code == 2
    found = errors(report)
    assert found["tasks.max"] == ["Invalid value 0 for configuration tasks.max: Value must be at least 1"]
    assert "com.example.NoSuchSmt" in found["transforms.x.type"][0]
    assert report["error_count"] == 2
    assert "Invalid configuration: 2 error(s)" in err and "  tasks.max: Invalid value 0" in err


@pytest.mark.parametrize("catalog, key, text", [
    ({"iceberg.catalog.type": "hadoop"}, "iceberg.catalog.type", "pyiceberg has no Hadoop"),
    ({"iceberg.catalog.catalog-impl": "org.apache.iceberg.nessie.NessieCatalog"}, "iceberg.catalog.catalog-impl",
     "pyiceberg has no Nessie catalog"),
    ({"iceberg.catalog.type": "rest"}, "iceberg.catalog.uri", "the rest catalog needs its address"),
    ({"iceberg.catalog.uri": "mysql+nosuchdriver://u:pw@db/iceberg"}, "iceberg.catalog.uri",
     "the database driver cannot be loaded"),
])
def test_a_catalog_that_cannot_be_loaded_fails_validation_on_its_key(in_tmp, capsys, catalog, key, text):
    props = {k: v for k, v in config().items() if not k.startswith("iceberg.catalog.")}
    props.update({"iceberg.catalog.warehouse": "warehouse", **catalog})
    if catalog.get("iceberg.catalog.uri", "").startswith("mysql"):
        props["iceberg.catalog.type"] = "sql"

    code, report, err = validate(in_tmp, capsys, props)

    assert code == 2
    assert list(errors(report)) == [key] and text in errors(report)[key][0]
    assert "pw@" not in json.dumps(report) + err  # a URI with credentials is not echoed
    assert sorted(os.listdir(in_tmp)) == ["connector.json"]


def test_no_catalog_type_names_the_java_default(in_tmp, capsys):
    props = {k: v for k, v in config().items() if not k.startswith("iceberg.catalog.")}
    props["iceberg.catalog.warehouse"] = "warehouse"

    code, report, _ = validate(in_tmp, capsys, props)

    assert code == 2
    assert "default catalog type 'hive'" in errors(report)["iceberg.catalog.type"][0]


def test_the_rest_worker_validation_loads_the_catalog_class_too():
    infos = validate_connector_config(config(**{"iceberg.catalog.type": "hadoop"}))

    assert infos["error_count"] == 1
    assert "pyiceberg has no Hadoop" in errors(infos)["iceberg.catalog.type"][0]


def test_keys_with_no_effect_are_reported_with_the_reason(in_tmp, capsys):
    props = config(**{"iceberg.coordinator-executor-keep-alive-timeout-ms": "60000",
                      "iceberg.control.commit.threads": "4", "iceberg.control.commit.timeout-ms": "60000",
                      "iceberg.hadoop-conf-dir": "/etc/hadoop", "iceberg.kafka.acks": "all",
                      "iceberg.control.group-id-prefix": "cg-control-", "not.a.key": "1"})

    code, report, err = validate(in_tmp, capsys, props)

    assert code == 0
    warned = {note.split("=")[0].split(" ")[0] for note in report["warnings"]}
    # group-id-prefix is at its default; commit.timeout-ms is honoured (a partial commit)
    assert warned == {"iceberg.coordinator-executor-keep-alive-timeout-ms", "iceberg.control.commit.threads",
                      "iceberg.hadoop-conf-dir", "iceberg.kafka.acks"}
    keep_alive = next(n for n in report["warnings"] if n.startswith("iceberg.coordinator-executor-keep-alive"))
    assert "has no effect in icefloe: it keeps the Java coordinator's commit threads alive" in keep_alive
    assert report["unused"] == ["not.a.key"]
    assert f"Warning: {keep_alive}" in err
    assert "Warning: The configuration 'not.a.key' was supplied but isn't a known config." in err


def test_a_key_at_its_default_is_not_reported(in_tmp, capsys):
    code, report, _ = validate(in_tmp, capsys, config(**{
        "iceberg.coordinator-executor-keep-alive-timeout-ms": "120000", "tasks.max.enforce": "true"}))

    assert code == 0 and report["warnings"] == []


def test_an_invalid_config_still_reports_the_keys_with_no_effect(in_tmp, capsys):
    code, report, _ = validate(in_tmp, capsys, config(**{"tasks.max": "x", "iceberg.control.commit.threads": "8"}))

    assert code == 2
    assert [n.split("=")[0] for n in report["warnings"]] == ["iceberg.control.commit.threads"]


def test_icefloe_run_warns_at_start_about_keys_with_no_effect(in_tmp, caplog):
    (in_tmp / "c.json").write_text(json.dumps(config(**{"iceberg.control.commit.threads": "5"})))
    args = cli._parser().parse_args(["run", str(in_tmp / "c.json"), "--bootstrap-servers", "127.0.0.1:1"])

    with caplog.at_level(logging.WARNING, logger="icefloe"):
        cli._load(args)

    assert "iceberg.control.commit.threads=5 has no effect in icefloe" in caplog.text


def test_parsing_a_config_creates_no_folder(in_tmp):
    parsed = SinkConfig.parse(config())

    assert parsed.props["iceberg.catalog.uri"] == f"sqlite:///{in_tmp}/catalog/db.sqlite"
    assert os.listdir(in_tmp) == []


def test_an_unreachable_broker_given_for_the_topic_check_exits_1(in_tmp, capsys, monkeypatch):
    monkeypatch.setattr(validate_command, "BROKER_TIMEOUT_SECONDS", 1.0)

    code, report, err = validate(in_tmp, capsys, config(), "--bootstrap-servers", "127.0.0.1:1")

    assert code == 1 and report["error_count"] == 0
    assert "Could not reach the Kafka cluster at 127.0.0.1:1" in err


def test_offline_skips_the_broker(in_tmp, capsys):
    code, report, _ = validate(in_tmp, capsys, config(), "--bootstrap-servers", "127.0.0.1:1", "--offline")

    assert code == 0 and "broker" not in report


@pytest.mark.integration
def test_with_a_broker_a_missing_topic_is_an_error_on_topics(kafka_broker, in_tmp, capsys):
    from tests.integration.harness import unique
    from tests.support.tansu import create_topic

    present = unique("validate")
    create_topic(kafka_broker.bootstrap, present, partitions=2)
    ok = validate(in_tmp, capsys, config(topics=present), "--bootstrap-servers", kafka_broker.bootstrap)
    missing = validate(in_tmp, capsys, config(topics=f"{present},{present}_nope"),
                       "--bootstrap-servers", kafka_broker.bootstrap)

    assert ok[0] == 0 and ok[1]["broker"]["partitions"] == 2
    assert missing[0] == 2
    assert errors(missing[1])["topics"] == [f"Topic(s) not found on the Kafka cluster: {present}_nope"]


def rest_config(uri: str, **extra: str) -> dict[str, str]:
    return config(**{"iceberg.catalog.type": "rest", "iceberg.catalog.uri": uri, "iceberg.catalog.warehouse": "wh",
                     **extra})


def test_a_catalog_that_refuses_the_credentials_is_an_error_naming_the_keys(in_tmp, capsys):
    from tests.support.unreachable import refusing_rest_catalog

    with refusing_rest_catalog(401, "NotAuthorizedException", "Credentials are invalid") as url:
        code, report, err = validate(in_tmp, capsys, rest_config(url, **{"iceberg.catalog.token": "t"}))

    assert code == 2
    [message] = errors(report)["iceberg.catalog.uri"]
    assert message.startswith(f"The catalog 'iceberg' (rest at {url}) refused the credentials")
    assert "check iceberg.catalog.credential or iceberg.catalog.token" in message
    assert "Traceback" not in err


def test_a_catalog_that_does_not_serve_the_warehouse_is_an_error(in_tmp, capsys):
    from tests.support.unreachable import refusing_rest_catalog

    with refusing_rest_catalog(400, "BadRequestException", "Unknown warehouse wh") as url:
        code, report, _ = validate(in_tmp, capsys, rest_config(url))

    assert code == 2
    assert "Unknown warehouse wh); check iceberg.catalog.warehouse" in errors(report)["iceberg.catalog.uri"][0]


def test_an_unreachable_catalog_exits_1_and_offline_does_not_ask_it(in_tmp, capsys):
    from tests.support.unreachable import closed_port

    props = rest_config(f"http://127.0.0.1:{closed_port()}")
    code, report, err = validate(in_tmp, capsys, props)
    offline = validate(in_tmp, capsys, props, "--offline")

    assert code == 1 and report["error_count"] == 0
    assert err.startswith("Could not reach the catalog: The catalog 'iceberg' (rest at http://127.0.0.1:")
    assert "Connection refused" in err
    assert offline[0] == 0 and "catalog" not in offline[1]
