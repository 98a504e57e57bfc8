"""``icefloe migrate``: from a Connect worker's connector to icefloe, with the takeover in between."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from connector.cli import main
from connector.commands.migrate import differences
from tests.deploy.fake_connect import FakeWorker, RunningFake
from tests.integration.harness import table_rows
from tests.takeover.test_replay import PER_PARTITION, _ids, _java_history

pytestmark = pytest.mark.integration


def test_differences_name_the_keys_icefloe_treats_differently():
    lines = differences({"iceberg.control.commit.threads": "4", "iceberg.kafka.acks": "all",
                         "iceberg.kafka.linger.ms": "5", "iceberg.control.commit.timeout-ms": "1000", "topics": "t"})
    assert lines[0].startswith("iceberg.control.commit.threads: no effect in icefloe: the Java coordinator commits")
    assert lines[1].startswith("iceberg.kafka.acks, iceberg.kafka.linger.ms: no effect in icefloe: icefloe's Kafka")
    assert len(lines) == 2


def test_dry_run_prints_the_plan_and_changes_nothing_then_migrate_takes_over(kafka_broker, spark, tmp_path,
                                                                           capsys):
    props, topic, java = _java_history(kafka_broker, tmp_path)
    name = props["name"]
    fake = FakeWorker(configs={name: {k: v for k, v in props.items() if k != "name"}}, stop_delay=2)
    with RunningFake(fake) as connect:
        common = ["migrate", "--from-connect", connect.url, "--connector", name,
                  "--bootstrap-servers", kafka_broker.bootstrap]
        assert main([*common, "--dry-run"]) == 0
        out = capsys.readouterr().out
        assert f"Connector {name} on {connect.url}: RUNNING, 2 task(s)" in out
        assert "incomplete commit" in out and "complete commit" in out
        assert f'Would resume from: {{"{topic}[0]": 25, "{topic}[1]": 22}}' in out
        assert fake.stopped == set() and fake.count("PUT") == 0
        assert len(table_rows(props, "db.b")) == 18  # only the Java sink's first commit

        assert main([*common, "--until-caught-up", "--quiet"]) == 0
        out = capsys.readouterr().out
        assert fake.stopped == {name}
        assert f"Stopped {name}" in out
        assert f'Resuming from: {{"{topic}[0]": 25, "{topic}[1]": 22}}' in out
    expected = sorted(_ids(0, 0, PER_PARTITION) + _ids(1, 0, PER_PARTITION))
    for table_name in ("db.a", "db.b"):
        counts = Counter(row["id"] for row in table_rows(props, table_name))
        assert sorted(counts) == expected and max(counts.values()) == 1
    assert json.loads(out.strip().splitlines()[-1])["connector"] == name


def test_migrate_to_an_icefloe_worker_puts_the_config_there(kafka_broker, tmp_path, capsys):
    props, topic, _ = _java_history(kafka_broker, tmp_path)
    name = props["name"]
    config = {k: v for k, v in props.items() if k != "name"}
    source, target = FakeWorker(configs={name: config}), FakeWorker()
    with RunningFake(source) as connect, RunningFake(target) as icefloe:
        assert main(["migrate", "--from-connect", connect.url, "--connector", name, "--to", icefloe.url,
                     "--bootstrap-servers", kafka_broker.bootstrap]) == 0
    out = capsys.readouterr().out
    assert f"Started {name} on {icefloe.url}" in out
    assert {k: v for k, v in target.configs[name].items() if k != "name"} == config
    # the takeover already finished the Java sink's complete commits: the worker resumes from the tables
    assert len(table_rows(props, "db.b")) == 25 + 22


@pytest.mark.slow
def test_migrate_to_a_real_icefloe_serve_worker_which_finishes_the_topic_exactly(kafka_broker, tmp_path, capsys):
    from tests.integration.test_rest_worker import WorkerProcess

    props, topic, _ = _java_history(kafka_broker, tmp_path)
    name = props["name"]
    config = {k: v for k, v in props.items() if k != "name"}
    config["iceberg.control.commit.interval-ms"] = "500"
    source = FakeWorker(configs={name: config})
    (tmp_path / "icefloe").mkdir()
    worker = WorkerProcess(kafka_broker.bootstrap, tmp_path / "icefloe").start()
    try:
        with RunningFake(source) as connect:
            assert main(["migrate", "--from-connect", connect.url, "--connector", name, "--to", worker.url,
                         "--bootstrap-servers", kafka_broker.bootstrap]) == 0
        out = capsys.readouterr().out
        assert f"Stopped {name}" in out and f"Started {name} on {worker.url}" in out
        assert f'Resuming from: {{"{topic}[0]": 25, "{topic}[1]": 22}}' in out
        assert worker.get(f"/connectors/{name}/config")["iceberg.tables"] == "db.a,db.b"
        worker.wait_for_state(name, "RUNNING")
        expected = sorted(_ids(0, 0, PER_PARTITION) + _ids(1, 0, PER_PARTITION))

        def caught_up() -> bool:
            return all(sorted(row["id"] for row in table_rows(props, t)) == expected for t in ("db.a", "db.b"))

        worker.wait_until(caught_up, "both tables to hold every record of the topic once")
        assert worker.terminate() == 0
    finally:
        if worker.process is not None and worker.process.poll() is None:
            worker.kill()
    for table_name in ("db.a", "db.b"):  # nothing twice, also after the worker's last commit
        counts = Counter(row["id"] for row in table_rows(props, table_name))
        assert sorted(counts) == expected and max(counts.values()) == 1
