"""The config and status records, compared with the ones a Kafka Connect 3.9 distributed cluster wrote.

connect_3_9_records.json holds every record of the config and status topics of
a real Connect 3.9 cluster (two workers, FileStream sink connectors: created,
paused, stopped, resumed, moved between workers, deleted), in the order written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connector.cluster import config_records as records
from connector.cluster.config_records import ConfigState
from connector.cluster.status_records import (
    Status,
    StatusState,
    connector_status_record,
    task_status_record,
    topic_record,
)

RECORDED = json.loads((Path(__file__).parent / "connect_3_9_records.json").read_text())


def _of(topic_suffix: str) -> list[tuple[str, bytes | None]]:
    return [(r["key"], None if r["value"] is None else r["value"].encode())
            for r in RECORDED if r["topic"].endswith(topic_suffix)]


def _recorded(key: str, index: int = 0) -> bytes | None:
    values = [value for k, value in _of("") if k == key]
    return values[index]


def test_a_connect_config_topic_folds_into_the_state_connect_shows():
    state = ConfigState()
    for key, value in _of("-configs"):
        state.apply(key, value)
    assert list(state.connectors) == ["fs-a"]  # fs-b was deleted by its tombstone
    assert state.connectors["fs-a"]["file"] == "/data/fs-a.txt"
    assert state.target_state("fs-a") == "RUNNING"  # paused, stopped, then resumed
    assert state.tasks["fs-a"] == []  # the stop committed no tasks; nothing newer was committed
    assert "fs-b" not in state.tasks and state.target_state("fs-b") == "RUNNING"


def test_the_target_states_read_at_each_step():
    state = ConfigState()
    seen = []
    for key, value in _of("-configs"):
        if state.apply(key, value) == "fs-a" and key.startswith("target-state-"):
            seen.append(state.target_state("fs-a"))
    assert seen == ["PAUSED", "STOPPED", "RUNNING"]


def test_task_configs_apply_only_with_their_commit():
    state = ConfigState()
    connector, task, commit = _of("-configs")[1:4]
    state.apply(*connector)
    state.apply(*task)
    assert "fs-a" not in state.tasks
    state.apply(*commit)
    assert state.tasks["fs-a"][0]["task.class"] == "org.apache.kafka.connect.file.FileStreamSinkTask"


def test_the_config_records_written_are_connects_own_byte_for_byte():
    state = ConfigState()
    for key, value in _of("-configs"):
        state.apply(key, value)
    config = json.loads(_recorded("connector-fs-a"))["properties"]
    assert records.connector_record("fs-a", config) == ("connector-fs-a", _recorded("connector-fs-a"))
    task = json.loads(_recorded("task-fs-a-0"))["properties"]
    assert records.task_records("fs-a", [task]) == [("task-fs-a-0", _recorded("task-fs-a-0")),
                                                    ("commit-fs-a", _recorded("commit-fs-a", 0))]
    assert records.task_records("fs-a", []) == [("commit-fs-a", _recorded("commit-fs-a", 1))]
    assert records.target_state_record("fs-a", "PAUSED") == ("target-state-fs-a", _recorded("target-state-fs-a", 0))
    assert records.target_state_record("fs-a", "STOPPED") == ("target-state-fs-a",
                                                              _recorded("target-state-fs-a", 1))
    assert records.target_state_record("fs-a", "RUNNING") == ("target-state-fs-a",
                                                              _recorded("target-state-fs-a", 2))
    assert records.connector_record("fs-b", None) == ("connector-fs-b", None)
    assert records.target_state_record("fs-b", None) == ("target-state-fs-b", None)


@pytest.mark.parametrize("key", ["status-connector-fs-a", "status-task-fs-a-0", "status-task-fs-b-0"])
def test_the_status_records_written_are_connects_own_byte_for_byte(key):
    for index, value in enumerate(v for k, v in _of("-status") if k == key and v is not None):
        body = json.loads(value)
        status = Status(body["state"], body["trace"], body["worker_id"], body["generation"])
        name = key.split("-", 2)[2]
        written = (connector_status_record(name, status) if key.startswith("status-connector-")
                   else task_status_record(name.rsplit("-", 1)[0], int(name.rsplit("-", 1)[1]), status))
        assert written == (key, value), index


def test_the_topic_record_is_connects_own_byte_for_byte():
    key = "status-topic-fs1:connector-fs-b"
    recorded = _recorded(key)
    stamp = json.loads(recorded)["topic"]["discoverTimestamp"]
    assert topic_record("fs-b", "fs1", task=0, now_ms=stamp) == (key, recorded)


def test_a_connect_status_topic_folds_into_the_statuses_connect_shows():
    state = StatusState()
    for key, value in _of("-status"):
        state.apply(key, value)
    assert state.connectors["fs-a"].info() == {"state": "RUNNING", "worker_id": "127.0.0.1:18084"}
    assert "fs-b" not in state.connectors  # its tombstone
    assert state.task_statuses("fs-a") == {} and state.task_statuses("fs-b") == {}
    assert state.topics == {"fs-b": {"fs1"}}


def test_a_stale_workers_late_status_does_not_replace_the_current_owners():
    state = StatusState()
    state.apply(*connector_status_record("c", Status("RUNNING", None, "new:8083", 7)))
    state.apply(*connector_status_record("c", Status("RUNNING", None, "old:8083", 5)))
    assert state.connectors["c"].worker_id == "new:8083"
    state.apply(*connector_status_record("c", Status("FAILED", "boom", "new:8083", 7)))
    assert state.connectors["c"].info() == {"state": "FAILED", "worker_id": "new:8083", "trace": "boom"}


def test_records_of_unknown_kinds_are_ignored_as_connect_ignores_them():
    state = ConfigState()
    assert state.apply("session-key", b'{"key":"x","algorithm":"HmacSHA256","creation-timestamp":1}') is None
    assert state.apply("something-else", b"{}") is None
    assert state.apply("task-count-record-x", b'{"task-count":2}') is None
    assert state.connectors == {} and state.tasks == {}
