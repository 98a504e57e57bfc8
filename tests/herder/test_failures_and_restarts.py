"""A failing task fails alone and recovers on restart; a restarted worker brings its connectors back."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from prometheus_client import REGISTRY

from tests.herder.conftest import new_herder, states, wait_until
from tests.herder.test_lifecycle import connector_props, ids, records, wait_for_ids
from tests.integration.harness import produce_round_robin, table_rows, unique
from tests.support.tansu import create_topic, produce

pytestmark = pytest.mark.integration


def task_failures(connector: str, task: int) -> float | None:
    return REGISTRY.get_sample_value("icefloe_task_failures_total", {"connector": connector, "task": str(task)})


def test_a_failed_task_fails_alone_and_recovers_after_its_offsets_are_fixed(herder, kafka_broker, tmp_path):
    topic, table = unique("taskfail"), "db.taskfail"
    props = connector_props(tmp_path, topic, table)
    name = props["name"]
    create_topic(kafka_broker.bootstrap, topic, partitions=2)  # p0 → task 0, p1 → task 1
    produce_round_robin(kafka_broker.bootstrap, topic, records(0, 20), 2)
    herder.create_connector(name, props, None)
    wait_for_ids(props, table, list(range(20)))

    produce(kafka_broker.bootstrap, topic, [b'{"id": 100}', b'{"id": 101', b'{"id": 102}'], partition=0)
    produce(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(200, 205)], partition=1)

    failed = wait_until(lambda: herder.task_status(name, 0)["state"] == "FAILED" and herder.task_status(name, 0),
                        "task 0 FAILED")
    assert f"topic: {topic}" in failed["trace"] and "partition: 0" in failed["trace"]
    assert "offset: 11" in failed["trace"] and "Traceback" in failed["trace"]
    assert task_failures(name, 0) == 1
    wait_for_ids(props, table, list(range(20)) + list(range(200, 205)))  # task 1's records land
    status = herder.connector_status(name)
    assert states(status) == ("RUNNING", ["FAILED", "RUNNING"])
    produce(kafka_broker.bootstrap, topic, [b'{"id": 205}'], partition=1)
    wait_for_ids(props, table, list(range(20)) + list(range(200, 206)))  # later cycles go on without task 0

    # restarting only the failed task, with the bad record still there, fails it again
    answer = herder.restart_connector(name, include_tasks=True, only_failed=True)
    assert states(answer) == ("RUNNING", ["RESTARTING", "RUNNING"])
    wait_until(lambda: herder.task_status(name, 0)["state"] == "FAILED", "task 0 FAILED again")
    assert task_failures(name, 0) == 2

    herder.stop(name)
    herder.alter_offsets(name, {"offsets": [
        {"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 12}}]})
    herder.resume(name)
    wait_for_ids(props, table, list(range(20)) + [102] + list(range(200, 206)))
    wait_until(lambda: states(herder.connector_status(name)) == ("RUNNING", ["RUNNING", "RUNNING"]), "RUNNING")
    herder.restart_task(name, 0)
    assert herder.task_status(name, 0)["state"] == "RUNNING"


def test_a_failing_connector_does_not_affect_another(herder, kafka_broker, tmp_path):
    good_topic, table = unique("good"), "db.good"
    good = connector_props(tmp_path / "good", good_topic, table)
    bad = connector_props(tmp_path / "bad", unique("missing"), "db.bad")  # its topic does not exist
    create_topic(kafka_broker.bootstrap, good_topic, partitions=1)
    produce_round_robin(kafka_broker.bootstrap, good_topic, records(0, 10), 1)

    herder.create_connector(bad["name"], bad, None)
    herder.create_connector(good["name"], good, None)

    failed = wait_until(lambda: herder.connector_status(bad["name"])["connector"].get("trace"), "bad FAILED")
    assert herder.connector_status(bad["name"])["connector"]["state"] == "FAILED" and "Traceback" in failed
    wait_for_ids(good, table, list(range(10)))
    assert herder.connector_status(good["name"])["connector"]["state"] == "RUNNING"
    assert herder.restart_connector(bad["name"]) is None  # 204: restarts, and fails again
    wait_until(lambda: herder.connector_status(bad["name"])["connector"]["state"] == "FAILED", "bad FAILED again")


def test_a_restarted_worker_brings_connectors_back_in_their_states(kafka_broker, spark, tmp_path):
    data_dir = tmp_path / "worker"
    topics = {state: unique(state.lower()) for state in ("RUNNING", "PAUSED", "STOPPED")}
    props = {state: connector_props(tmp_path / state, topic, "db.t") for state, topic in topics.items()}
    for topic in topics.values():
        create_topic(kafka_broker.bootstrap, topic, partitions=2)
        produce_round_robin(kafka_broker.bootstrap, topic, records(0, 60), 2)
    first = new_herder(kafka_broker.bootstrap, spark, data_dir)
    try:
        for state, conf in props.items():
            first.create_connector(conf["name"], conf, state)
        wait_for_ids(props["RUNNING"], "db.t", list(range(60)))
    finally:
        first.shutdown()
    for topic in topics.values():
        produce_round_robin(kafka_broker.bootstrap, topic, records(60, 40), 2)

    second = new_herder(kafka_broker.bootstrap, spark, data_dir)
    try:
        assert second.connector_names() == [conf["name"] for conf in props.values()]
        assert second.connector_config(props["PAUSED"]["name"]) == props["PAUSED"]
        for state, conf in props.items():
            wait_until(lambda c=conf, s=state: second.connector_status(c["name"])["connector"]["state"] == s, state)
        assert second.connector_status(props["STOPPED"]["name"])["tasks"] == []
        wait_for_ids(props["RUNNING"], "db.t", list(range(100)))
        running = props["RUNNING"]["name"]
        assert second.active_topics(running) == {running: {"topics": [topics["RUNNING"]]}}

        second.resume(props["PAUSED"]["name"])
        wait_for_ids(props["PAUSED"], "db.t", list(range(100)))
        counts = Counter(row["id"] for row in table_rows(props["RUNNING"], "db.t"))
        assert not [i for i, n in counts.items() if n > 1]
        assert ids(props["RUNNING"], "db.t") == list(range(100))
    finally:
        second.shutdown()


def test_a_bad_first_record_fails_its_task_not_the_connector(herder, kafka_broker, tmp_path):
    topic, table = unique("badfirst"), "db.badfirst"
    props = connector_props(tmp_path, topic, table)
    name = props["name"]
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce(kafka_broker.bootstrap, topic, [b"{oops", b'{"id": 1}'], partition=0)
    produce(kafka_broker.bootstrap, topic, [b'{"id": 2}', b'{"id": 3}'], partition=1)

    herder.create_connector(name, props, None)

    wait_for_ids(props, table, [2, 3])
    failed = wait_until(lambda: herder.task_status(name, 0).get("trace"), "task 0 FAILED")
    assert "partition: 0" in failed and "offset: 0" in failed
    assert states(herder.connector_status(name)) == ("RUNNING", ["FAILED", "RUNNING"])
