"""The `icefloe` command: worker properties, validation, exit codes."""

from __future__ import annotations

import json

import pytest

from connector import cli
from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique, write_config_file
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration


def test_worker_properties_supply_the_kafka_connection_and_topics_regex_works(kafka_broker, spark, tmp_path):
    prefix = unique("rx")
    for suffix in ("a", "b"):
        create_topic(kafka_broker.bootstrap, f"{prefix}.{suffix}")
        produce_round_robin(kafka_broker.bootstrap, f"{prefix}.{suffix}",
                            [json.dumps({"id": i, "src": suffix}).encode() for i in range(20)], 1)
    props = sink_props(unique("rx"), "unused", "db.regex", tmp_path)
    del props["topics"]
    props["topics.regex"] = rf"{prefix}\.(a|b)"
    worker = tmp_path / "worker.properties"
    worker.write_text(f"# Connect worker\nbootstrap.servers={kafka_broker.bootstrap}\n"
                      "consumer.max.poll.records=500\nkey.converter=org.apache.kafka.connect.storage.StringConverter\n")
    config = write_config_file(tmp_path / "c.json", props)

    assert cli.main(["run", str(config), "--worker", str(worker), "--until-caught-up", "--quiet"]) == 0

    rows = table_rows(props, "db.regex")
    assert sorted((r["src"], r["id"]) for r in rows) == sorted((s, i) for s in "ab" for i in range(20))


def test_validate_reports_unused_keys(tmp_path, capsys):
    props = sink_props("v", "t", "db.t", tmp_path, **{"not.a.real.key": "x"})
    config = write_config_file(tmp_path / "c.json", props)

    assert cli.main(["validate", str(config)]) == 0  # no broker needed

    assert json.loads(capsys.readouterr().out)["unused"] == ["not.a.real.key"]


def test_a_bad_config_exits_2_naming_the_key(tmp_path, capsys):
    props = sink_props("bad", "t", "db.t", tmp_path, **{"tasks.max": "-1"})
    config = write_config_file(tmp_path / "c.json", props)

    assert cli.main(["run", str(config), "--bootstrap-servers", "127.0.0.1:1", "--until-caught-up"]) == 2

    assert "tasks.max" in capsys.readouterr().err


def test_no_kafka_connection_exits_2(tmp_path, capsys):
    config = write_config_file(tmp_path / "c.json", sink_props("nok", "t", "db.t", tmp_path))

    assert cli.main(["run", str(config), "--until-caught-up"]) == 2

    assert "bootstrap.servers" in capsys.readouterr().err


def test_a_failing_job_exits_1_naming_the_record(kafka_broker, spark, tmp_path, capsys):
    topic = unique("cli_bad")
    create_topic(kafka_broker.bootstrap, topic)
    produce_round_robin(kafka_broker.bootstrap, topic, [b"not json"], 1)
    config = write_config_file(tmp_path / "c.json", sink_props(unique("clibad"), topic, "db.t", tmp_path))

    code = cli.main(["run", str(config), "--bootstrap-servers", kafka_broker.bootstrap, "--until-caught-up"])

    assert code == 1
    assert f"topic: {topic}, partition: 0, offset: 0" in capsys.readouterr().err
