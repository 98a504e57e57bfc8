"""The herder's rules that need no running job: errors with Connect's texts, the store, readiness."""

from __future__ import annotations

import threading
from concurrent.futures import Future

import pytest

from connector.herder.errors import (
    AlreadyExistsError,
    BadRequestError,
    ConnectRestError,
    NotFoundError,
    StartingError,
)
from connector.herder.herder import Herder
from connector.herder.sink_offsets import parse_alter_request
from connector.herder.store import ConnectorStore
from tests.integration.harness import sink_props


@pytest.fixture
def idle_herder(tmp_path):
    """A herder whose Spark session never comes up: enough for connectors that do not run."""
    herder = Herder({"bootstrap.servers": "127.0.0.1:1"}, data_dir=tmp_path / "worker", spark=Future(),
                    worker_id="w:1")
    herder.start()
    yield herder
    herder.shutdown()


def props(tmp_path, name="c1", **extra):
    config = sink_props(name, "t", "db.t", tmp_path / "lake", **extra)
    del config["name"]
    return config


def test_ready_only_once_started_and_the_session_is_up(tmp_path):
    session: Future = Future()
    herder = Herder({}, data_dir=tmp_path, spark=session, worker_id="w:1")
    assert not herder.ready()
    herder.start()
    assert not herder.ready()
    session.set_result(object())
    assert herder.ready()
    herder.shutdown()


def test_create_appends_the_name_and_refuses_a_second_create(idle_herder, tmp_path):
    config = props(tmp_path)
    info = idle_herder.create_connector("c1", config, "STOPPED")
    assert info == {"name": "c1", "config": {**config, "name": "c1"}, "tasks": [], "type": "sink"}
    assert list(info["config"])[-1] == "name"
    with pytest.raises(AlreadyExistsError, match="^Connector c1 already exists$"):
        idle_herder.create_connector("c1", config, None)


def test_name_mismatch_and_invalid_config_are_400(idle_herder, tmp_path):
    with pytest.raises(BadRequestError) as mismatch:
        idle_herder.put_connector_config("a", {**props(tmp_path), "name": "b"})
    assert mismatch.value.message == "Connector name configuration (b) doesn't match connector name in the URL (a)"
    with pytest.raises(BadRequestError) as invalid:
        idle_herder.create_connector("c2", props(tmp_path, **{"tasks.max": "many"}), None)
    assert invalid.value.message.startswith("Connector configuration is invalid and contains the following")
    assert "tasks.max" in invalid.value.message
    assert idle_herder.connector_names() == []


@pytest.mark.parametrize("call, message", [
    (lambda h: h.connector_info("x"), "Connector x not found"),
    (lambda h: h.connector_config("x"), "Connector x not found"),
    (lambda h: h.connector_status("x"), "No status found for connector x"),
    (lambda h: h.task_status("x", 0), "No status found for task x-0"),
    (lambda h: h.pause("x"), "Unknown connector x"),
    (lambda h: h.resume("x"), "Unknown connector x"),
    (lambda h: h.delete_connector("x"), "Connector x not found"),
    (lambda h: h.patch_connector_config("x", {}), "Connector x not found"),
    (lambda h: h.restart_connector("x", False, False), "Unknown connector: x"),
    (lambda h: h.restart_task("x", 0), "Unknown connector: x"),
])
def test_unknown_connectors_are_404_with_connects_texts(idle_herder, call, message):
    with pytest.raises(NotFoundError) as failure:
        call(idle_herder)
    assert failure.value.message == message and failure.value.status == 404


def test_states_and_configs_survive_a_new_herder_on_the_same_data_dir(tmp_path):
    data_dir = tmp_path / "worker"
    first = Herder({}, data_dir=data_dir, spark=Future(), worker_id="w:1")
    first.start()
    first.create_connector("s", props(tmp_path), "STOPPED")
    first.create_connector("p", props(tmp_path), "PAUSED")
    first.patch_connector_config("p", {"tasks.max": "3"})
    first.shutdown()

    second = Herder({}, data_dir=data_dir, spark=Future(), worker_id="w:1")
    second.start()
    assert second.connector_names() == ["s", "p"]
    assert second.connector_status("p")["connector"]["state"] == "PAUSED"
    assert [t["state"] for t in second.connector_status("p")["tasks"]] == ["PAUSED"] * 3
    assert second.connector_status("s")["tasks"] == []
    assert second.tasks_config("p")["p-2"]["task.class"] == "org.apache.iceberg.connect.IcebergSinkTask"
    with pytest.raises(NotFoundError, match="^Unknown task: p-3$"):
        second.restart_task("p", 3)
    second.delete_connector("s")
    second.shutdown()
    assert [c.name for c in ConnectorStore(data_dir).load()] == ["p"]


def test_offsets_behind_an_unreachable_catalog_are_a_500_naming_the_connector_and_the_cause(idle_herder, tmp_path):
    unreachable = {**props(tmp_path), "iceberg.catalog.type": "rest", "iceberg.catalog.uri": "http://127.0.0.1:1"}
    idle_herder.create_connector("c1", unreachable, "STOPPED")
    with pytest.raises(ConnectRestError, match="^Failed to retrieve the offsets of sink connector c1, as what holds "
                                               "them could not be reached: ConnectionError: ") as raised:
        idle_herder.offsets("c1")
    assert raised.value.status == 500
    with pytest.raises(ConnectRestError, match="^Failed to reset the offsets of sink connector c1, "):
        idle_herder.reset_offsets("c1")


def test_alter_requests_are_checked_before_the_connector_state(idle_herder, tmp_path):
    idle_herder.create_connector("c1", props(tmp_path), "PAUSED")
    with pytest.raises(BadRequestError, match="^Partitions / offsets need to be provided"):
        idle_herder.alter_offsets("c1", {})
    with pytest.raises(BadRequestError, match="STOPPED state"):
        idle_herder.reset_offsets("c1")


@pytest.mark.parametrize("body, expected", [
    ({"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 1}, "offset": {"kafka_offset": 5}}]},
     {("t", 1): 5}),
    ({"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": "2"}, "offset": None}]}, {("t", 2): None}),
])
def test_alter_bodies(body, expected):
    assert parse_alter_request(body) == expected


@pytest.mark.parametrize("body", [
    {"offsets": [{"partition": {"kafka_topic": "t"}, "offset": {"kafka_offset": 5}}]},
    {"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": "x"}, "offset": {"kafka_offset": 5}}]},
    {"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"other": 5}}]},
    {"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": -1}}]},
])
def test_bad_alter_bodies_are_400(body):
    with pytest.raises(BadRequestError):
        parse_alter_request(body)


def test_a_running_connector_is_unassigned_until_the_session_is_up_and_shuts_down_meanwhile(idle_herder, tmp_path):
    idle_herder.create_connector("r", props(tmp_path, **{"tasks.max": "2"}), None)
    status = idle_herder.connector_status("r")
    assert status["connector"] == {"state": "UNASSIGNED", "worker_id": "w:1"}
    assert [t["state"] for t in status["tasks"]] == ["UNASSIGNED", "UNASSIGNED"]
    idle_herder.stop("r")  # returns although the job still waited for Spark
    assert idle_herder.connector_status("r")["connector"]["state"] == "STOPPED"


def test_concurrent_updates_of_one_connector_apply_one_after_the_other(idle_herder, tmp_path):
    base = props(tmp_path)
    idle_herder.create_connector("c", base, "PAUSED")
    configs = [{**base, "tasks.max": str(n)} for n in range(1, 9)]
    errors: list[BaseException] = []

    def put(config):
        try:
            idle_herder.put_connector_config("c", config)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=put, args=(config,)) for config in configs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert not errors
    final = idle_herder.connector_config("c")
    assert final in [{**c, "name": "c"} for c in configs]
    assert ConnectorStore(idle_herder.data_dir).load()[0].config == final
    assert len(idle_herder.connector_status("c")["tasks"]) == int(final["tasks.max"])


def test_put_creates_a_missing_connector_and_answers_201_info(idle_herder, tmp_path):
    config = props(tmp_path)
    created, info = idle_herder.put_connector_config("fresh", config)
    assert created is True
    assert info["name"] == "fresh" and info["config"] == {**config, "name": "fresh"}
    assert idle_herder.connector_names() == ["fresh"]
    assert idle_herder.put_connector_config("fresh", config)[0] is False


def test_requests_before_the_store_is_loaded_are_told_the_worker_is_starting(tmp_path):
    herder = Herder({}, data_dir=tmp_path, spark=Future(), worker_id="w:1")
    with pytest.raises(StartingError, match="still starting"):
        herder.connector_names()
    with pytest.raises(StartingError):
        herder.create_connector("c", props(tmp_path), None)
    with pytest.raises(StartingError):
        herder.connector_status("c")


@pytest.mark.integration
def test_offsets_of_a_connector_never_run_on_a_missing_topic_are_empty_and_reset_succeeds(kafka_broker, tmp_path):
    herder = Herder({"bootstrap.servers": kafka_broker.bootstrap}, data_dir=tmp_path / "worker", spark=Future(),
                    worker_id="w:1")
    herder.start()
    try:
        config = sink_props("never", "no-such-topic-yet", "db.never", tmp_path / "lake")
        herder.create_connector("never", config, "STOPPED")
        assert herder.offsets("never") == {"offsets": []}
        assert herder.reset_offsets("never") == {"message": "The offsets for this connector have been reset "
                                                            "successfully"}
    finally:
        herder.shutdown()
