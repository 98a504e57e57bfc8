"""Connector lifecycle on a real broker and Spark: create, pause, resume, stop, update, delete, offsets."""

from __future__ import annotations

import json

import pytest
from prometheus_client import REGISTRY, generate_latest

from connector.data.catalog import load_catalog
from connector.herder.errors import BadRequestError
from tests.herder.conftest import WORKER_ID, states, wait_until
from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration


def records(first: int, count: int) -> list[bytes]:
    return [json.dumps({"id": i}).encode() for i in range(first, first + count)]


def connector_props(tmp_path, topic: str, table: str, **extra) -> dict[str, str]:
    props = sink_props(unique("conn"), topic, table, tmp_path / "lake",
                       **{"iceberg.control.commit.interval-ms": "500", "tasks.max": "2", **extra})
    # Create the SQLite catalog's tables now: the test polls the catalog while the job opens it, and two
    # processes creating a new SQLite catalog at once can collide.
    load_catalog(props)
    return props


def ids(props, table) -> list[int]:
    return sorted(row["id"] for row in table_rows(props, table))


def wait_for_ids(props, table, expected: list[int]) -> None:
    wait_until(lambda: ids(props, table) == expected, f"{table} to hold ids {expected[:3]}..{expected[-3:]}")


def test_create_pause_resume_stop(herder, kafka_broker, tmp_path):
    topic, table = unique("life"), "db.life"
    props = connector_props(tmp_path, topic, table)
    name = props["name"]
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, records(0, 100), 2)

    info = herder.create_connector(name, props, None)

    assert info == {"name": name, "config": props, "tasks": [{"connector": name, "task": 0},
                                                             {"connector": name, "task": 1}], "type": "sink"}
    wait_until(lambda: states(herder.connector_status(name)) == ("RUNNING", ["RUNNING", "RUNNING"]), "RUNNING")
    wait_for_ids(props, table, list(range(100)))
    assert herder.connector_status(name)["tasks"][1] == {"id": 1, "state": "RUNNING", "worker_id": WORKER_ID}
    wait_until(lambda: herder.offsets(name)["offsets"] == [
        {"partition": {"kafka_partition": 0, "kafka_topic": topic}, "offset": {"kafka_offset": 50}},
        {"partition": {"kafka_partition": 1, "kafka_topic": topic}, "offset": {"kafka_offset": 50}}], "offsets")
    # the topics read are known once the cycle that committed them has ended
    wait_until(lambda: herder.active_topics(name) == {name: {"topics": [topic]}}, "active topics")
    assert herder.server_info() == {"version": "0.1.0", "commit": herder.server_info()["commit"],
                                    "kafka_cluster_id": "tansu_cluster"}
    herder.reset_active_topics(name)
    assert herder.active_topics(name) == {name: {"topics": []}}

    herder.pause(name)
    assert states(herder.connector_status(name)) == ("PAUSED", ["PAUSED", "PAUSED"])
    snapshots = len(_snapshots(props, table))
    produce_round_robin(kafka_broker.bootstrap, topic, records(100, 20), 2)
    # pause returned once the job had ended: nothing can commit while paused
    assert not herder._runtimes[name].alive
    assert len(_snapshots(props, table)) == snapshots and ids(props, table) == list(range(100))

    herder.resume(name)
    wait_for_ids(props, table, list(range(120)))
    wait_until(lambda: states(herder.connector_status(name)) == ("RUNNING", ["RUNNING", "RUNNING"]), "RUNNING")

    herder.stop(name)
    assert herder.connector_status(name) == {
        "name": name, "connector": {"state": "STOPPED", "worker_id": WORKER_ID}, "tasks": [], "type": "sink"}
    assert herder.connector_info(name)["tasks"] == [] and herder.task_configs(name) == []


def test_offsets_altered_and_reset_while_stopped_decide_where_the_next_run_starts(herder, kafka_broker, tmp_path):
    topic, table = unique("offs"), "db.offs"
    props = connector_props(tmp_path, topic, table)
    name = props["name"]
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, records(0, 100), 2)  # p0: even ids, p1: odd ids
    herder.create_connector(name, props, None)
    wait_for_ids(props, table, list(range(100)))

    change = {"offsets": [
        {"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 40}},
        {"partition": {"kafka_topic": topic, "kafka_partition": "1"}, "offset": {"kafka_offset": "45"}}]}
    with pytest.raises(BadRequestError) as running:
        herder.alter_offsets(name, change)
    assert running.value.message == (
        "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the "
        f"specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint")
    herder.stop(name)
    with pytest.raises(BadRequestError) as empty:
        herder.alter_offsets(name, {"offsets": []})
    assert empty.value.message == "Partitions / offsets need to be provided for an alter offsets request"

    assert herder.alter_offsets(name, change) == {
        "message": "The offsets for this connector have been altered successfully"}
    assert [entry["offset"]["kafka_offset"] for entry in herder.offsets(name)["offsets"]] == [40, 45]

    herder.resume(name)
    again = [2 * o for o in range(40, 50)] + [2 * o + 1 for o in range(45, 50)]  # p0 from 40, p1 from 45
    wait_for_ids(props, table, sorted(list(range(100)) + again))

    herder.stop(name)
    assert herder.reset_offsets(name) == {"message": "The offsets for this connector have been reset successfully"}
    assert herder.offsets(name) == {"offsets": []}
    herder.resume(name)
    wait_for_ids(props, table, sorted(list(range(100)) * 2 + again))


def test_a_config_update_restarts_the_job_with_the_new_config(herder, kafka_broker, tmp_path):
    topic = unique("upd")
    props = connector_props(tmp_path, topic, "db.first", **{"tasks.max": "1"})
    name = props["name"]
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, records(0, 40), 2)
    herder.create_connector(name, props, None)
    wait_for_ids(props, "db.first", list(range(40)))
    wait_until(lambda: herder.offsets(name)["offsets"], "offsets")

    updated = {**props, "iceberg.tables": "db.second", "tasks.max": "2"}
    created, info = herder.put_connector_config(name, updated)

    assert not created and info["config"] == updated and len(info["tasks"]) == 2
    assert herder.connector_config(name) == updated
    produce_round_robin(kafka_broker.bootstrap, topic, records(40, 10), 2)
    # the new table has no offsets yet: the job resumes from the connector's group, past the first 40
    wait_for_ids(updated, "db.second", list(range(40, 50)))
    wait_until(lambda: states(herder.connector_status(name)) == ("RUNNING", ["RUNNING", "RUNNING"]), "RUNNING")
    assert ids(props, "db.first") == list(range(40))

    patched = herder.patch_connector_config(name, {"tasks.max": None})
    assert "tasks.max" not in patched["config"] and len(patched["tasks"]) == 1


def test_delete_ends_the_job(herder, kafka_broker, tmp_path):
    topic, table = unique("del"), "db.del"
    props = connector_props(tmp_path, topic, table)
    name = props["name"]
    create_topic(kafka_broker.bootstrap, topic, partitions=1)
    produce_round_robin(kafka_broker.bootstrap, topic, records(0, 10), 1)
    herder.create_connector(name, props, None)
    wait_for_ids(props, table, list(range(10)))
    runtime = herder._runtimes[name]
    wait_until(lambda: f'connector="{name}"' in generate_latest(REGISTRY).decode(), "the connector's metrics")

    herder.delete_connector(name)

    assert not runtime.alive and name not in herder.connector_names()
    assert f'connector="{name}"' not in generate_latest(REGISTRY).decode()
    produce_round_robin(kafka_broker.bootstrap, topic, records(10, 5), 1)
    assert ids(props, table) == list(range(10))


def _snapshots(props, table) -> list:
    from tests.integration.harness import load_table

    return load_table(props, table).snapshots()

