"""The fence (connector/commit/fencing.py) and the Java sinks' snapshot keys (connector/iceberg/snapshot_offsets.py)."""

from __future__ import annotations

import json

import pytest

from connector.commit.commit import commit_table
from connector.commit.coordinator import Coordinator
from connector.commit.fencing import FencedException, capture
from connector.commit.messages import TaskAssignment, TaskResult
from connector.commit.schema_changes import apply_schema_needs
from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.iceberg.snapshot_offsets import (
    committed_offsets,
    control_offsets,
    java_keys,
    java_snapshot_is_newest,
)
from connector.kafka.offsets import OffsetRange
from connector.task import run_task
from tests.commit.test_commit import _written
from tests.integration.harness import produce_round_robin, sink_props, unique
from tests.support.tansu import create_topic


@pytest.fixture
def config(tmp_path) -> SinkConfig:
    return SinkConfig.parse(sink_props(unique("fence"), "t", "db.events", tmp_path))


def _java_commit(catalog, table_name: str, key: str, control: dict[str, int], data_files=()) -> None:
    """A snapshot as the Apache sink's coordinator writes it: control-topic offsets only."""
    table = catalog.load_table(table_name)
    props = {key: json.dumps(control), "kafka.connect.commit-id": "java-commit"}
    with table.transaction() as transaction:
        with transaction.update_snapshot(snapshot_properties=props).fast_append() as append:
            for data_file in data_files:
                append.append_data_file(data_file)


def test_a_commit_is_refused_when_another_writer_moved_the_offsets_since_the_cycle_started(config):
    catalog = load_catalog(config.props)
    commit_table(catalog, config, "db.events", _written(config, range(0, 10)), {("t", 0): 10}, "c1", None)
    fence = capture(catalog, config, ["db.events"], {("t", 0): 10})
    ours = _written(config, range(10, 20))
    # another job of the same connector commits 10..20 first
    commit_table(catalog, config, "db.events", _written(config, range(10, 20)), {("t", 0): 20}, "c2", None)
    with pytest.raises(FencedException) as refused:
        commit_table(catalog, config, "db.events", ours, {("t", 0): 20}, "c3", None, fence=fence)
    message = str(refused.value)
    assert "db.events" in message and "topic t partition 0" in message
    assert "expected next offset 10, found next offset 20" in message
    table = catalog.load_table("db.events")
    assert table.scan().to_arrow().num_rows == 20  # nothing of the refused commit landed
    assert committed_offsets(table, config.group_id) == {("t", 0): 20}


def test_a_fence_passes_when_nobody_else_wrote_and_ignores_partitions_the_cycle_does_not_cover(config):
    catalog = load_catalog(config.props)
    commit_table(catalog, config, "db.events", _written(config, range(0, 5)), {("t", 0): 5}, "c1", None)
    fence = capture(catalog, config, ["db.events"], {("t", 0): 5, ("t", 1): 0})
    commit_table(catalog, config, "db.events", [], {("t", 1): 7}, "other", None)  # moves only partition 1
    commit_table(catalog, config, "db.events", _written(config, range(5, 8)), {("t", 0): 8}, "c2", None,
                 fence=fence)
    assert committed_offsets(catalog.load_table("db.events"), config.group_id) == {("t", 0): 8, ("t", 1): 7}


def test_a_table_created_during_the_cycle_must_hold_nothing_beyond_the_cycle_start(config):
    catalog = load_catalog(config.props)
    fence = capture(catalog, config, ["db.events"], {("t", 0): 0})  # the table does not exist yet
    assert fence.tables == {}
    ours = _written(config, range(0, 4))
    commit_table(catalog, config, "db.events", _written(config, range(0, 4)), {("t", 0): 4}, "other", None)
    with pytest.raises(FencedException, match="expected at most 0, found 4"):
        commit_table(catalog, config, "db.events", ours, {("t", 0): 4}, "c1", None, fence=fence)


def test_a_java_sink_left_running_is_fenced_by_its_control_topic_key(config):
    catalog = load_catalog(config.props)
    commit_table(catalog, config, "db.events", _written(config, range(0, 3)), {("t", 0): 3}, "c1", None)
    fence = capture(catalog, config, ["db.events"], {("t", 0): 3})
    key = f"kafka.connect.offsets.control-iceberg.{config.group_id}"
    _java_commit(catalog, "db.events", key, {"0": 12})
    with pytest.raises(FencedException, match=rf"Java sink key {key}: expected none, found"):
        commit_table(catalog, config, "db.events", _written(config, range(3, 5)), {("t", 0): 5}, "c2", None,
                     fence=fence)


def test_the_java_control_topic_key_is_never_read_as_source_offsets_and_is_carried_forward(config):
    catalog = load_catalog(config.props)
    commit_table(catalog, config, "db.events", _written(config, range(0, 3)), {("t", 0): 3}, "c1", None)
    apache = f"kafka.connect.offsets.control-iceberg.{config.group_id}"
    _java_commit(catalog, "db.events", apache, {"0": 12, "1": 4})
    table = catalog.load_table("db.events")
    java = java_keys(config)
    # the Java sink committed after icefloe: the table holds no icefloe source offsets any more,
    # and neither the old icefloe offsets nor the control-topic offsets are taken for them
    assert committed_offsets(table, config.group_id, None, java) == {}
    assert committed_offsets(table, config.group_id) == {}  # the default control topic, without a config
    assert java_snapshot_is_newest(table, config.group_id, java)
    assert control_offsets(table, java) == {config.group_id: {0: 12, 1: 4}}
    commit_table(catalog, config, "db.events", _written(config, range(3, 6)), {("t", 0): 6}, "c2", None)
    table = catalog.load_table("db.events")
    summary = table.current_snapshot().summary.additional_properties
    assert json.loads(summary[apache]) == {"0": 12, "1": 4}  # kept, unchanged, for a rollback
    assert committed_offsets(table, config.group_id, None, java) == {("t", 0): 6}
    assert not java_snapshot_is_newest(table, config.group_id, java)


def test_tabulars_control_group_key_is_recognised(tmp_path):
    config = SinkConfig.parse(sink_props(unique("tab"), "t", "db.events", tmp_path, **{
        "connector.class": "io.tabular.iceberg.connect.IcebergSinkConnector",
        "iceberg.control.topic": "ctl", "iceberg.control.group-id": "my-cg"}))
    catalog = load_catalog(config.props)
    commit_table(catalog, config, "db.events", _written(config, range(0, 3)), {("t", 0): 3}, "c1", None)
    _java_commit(catalog, "db.events", "kafka.connect.offsets.ctl.my-cg", {"0": 2})
    table = catalog.load_table("db.events")
    java = java_keys(config)
    assert java.groups == (config.group_id, "my-cg")
    assert java_snapshot_is_newest(table, config.group_id, java)
    assert committed_offsets(table, config.group_id, None, java) == {}
    assert control_offsets(table, java) == {"my-cg": {0: 2}}


def test_an_unnoted_table_holding_what_its_tasks_saw_is_not_fenced(config):
    catalog = load_catalog(config.props)
    commit_table(catalog, config, "db.events", _written(config, range(0, 10)), {("t", 0): 10}, "c1", None)
    # a dynamic table met for the first time; the job started from a lagging group (offset 4)
    fence = capture(catalog, config, [], {("t", 0): 4})
    ours = _written(config, range(4, 12))  # the task skips 4..9, which the table holds
    fence.tasks_saw([{"db.events": [{("t", 0): 10}]}])
    commit_table(catalog, config, "db.events", ours, {("t", 0): 12}, "c2", None, fence=fence)
    assert sorted(r["id"] for r in catalog.load_table("db.events").scan().to_arrow().to_pylist()) == list(range(12))


def test_an_unnoted_table_moved_after_its_tasks_loaded_it_is_fenced(config):
    catalog = load_catalog(config.props)
    commit_table(catalog, config, "db.events", _written(config, range(0, 10)), {("t", 0): 10}, "c1", None)
    fence = capture(catalog, config, [], {("t", 0): 4})  # a dynamic table, met for the first time
    ours = _written(config, range(4, 14))  # the task saw offset 10 and wrote 10..13
    fence.tasks_saw([{"db.events": [{("t", 0): 10}]}])
    # another job commits 10..14 after our task loaded the table
    commit_table(catalog, config, "db.events", _written(config, range(10, 14)), {("t", 0): 14}, "other", None)
    with pytest.raises(FencedException, match="its tasks saw next offset 10, found next offset 14"):
        commit_table(catalog, config, "db.events", ours, {("t", 0): 14}, "c2", None, fence=fence)
    assert sorted(r["id"] for r in catalog.load_table("db.events").scan().to_arrow().to_pylist()) == list(range(14))


def test_a_writer_committing_between_the_resume_positions_and_the_cycle_is_fenced(config):
    catalog = load_catalog(config.props)
    commit_table(catalog, config, "db.events", _written(config, range(0, 10)), {("t", 0): 10}, "c1", None)
    coordinator = Coordinator(config, catalog, {"bootstrap.servers": "127.0.0.1:1"}, max_tasks=1, split_large=False)
    start = coordinator.start_offsets([("t", 0)])
    ours = _written(config, range(10, 20))
    # another job of the same connector commits 10..20 after this one read where to resume, before its cycle
    commit_table(catalog, config, "db.events", _written(config, range(10, 20)), {("t", 0): 20}, "other", None)

    def tasks(assignments):
        return [TaskResult(a.task_id, data_files={"db.events": ours}, next_offsets={("t", 0): 20}, records_read=10)
                for a in assignments]

    with pytest.raises(FencedException, match="expected next offset 10, found next offset 20"):
        coordinator.run_cycle(tasks, start, {("t", 0): 20})
    assert catalog.load_table("db.events").scan().to_arrow().num_rows == 20  # no record twice


def test_a_writer_committing_between_the_check_and_the_append_is_fenced_not_built_upon(config, monkeypatch):
    catalog = load_catalog(config.props)
    commit_table(catalog, config, "db.events", _written(config, range(0, 10)), {("t", 0): 10}, "c1", None)
    fence = capture(catalog, config, ["db.events"], {("t", 0): 10})
    ours, theirs = _written(config, range(10, 20)), _written(config, range(10, 20))
    check, raced = fence.check, []

    def check_then_lose_the_race(*args, **kwargs):
        check(*args, **kwargs)
        if not raced:  # another job commits 10..20 after our check passed, before our append lands
            raced.append(True)
            commit_table(catalog, config, "db.events", theirs, {("t", 0): 20}, "other", None)

    monkeypatch.setattr(fence, "check", check_then_lose_the_race)
    # pyiceberg must not rebuild our append on the other job's snapshot: the retry re-checks the fence
    with pytest.raises(FencedException, match="expected next offset 10, found next offset 20"):
        commit_table(catalog, config, "db.events", ours, {("t", 0): 20}, "c2", None, fence=fence)
    table = catalog.load_table("db.events")
    assert sorted(r["id"] for r in table.scan().to_arrow().to_pylist()) == list(range(20))  # no record twice
    assert committed_offsets(table, config.group_id) == {("t", 0): 20}


@pytest.mark.parametrize("other_commits_first", [True, False])
def test_a_table_created_during_the_cycle_is_checked_against_what_the_tasks_saw(config, other_commits_first):
    catalog = load_catalog(config.props)
    coordinator = Coordinator(config, catalog, {"bootstrap.servers": "127.0.0.1:1"}, max_tasks=1, split_large=False)

    def tasks(assignments):
        # another job of the connector creates the table and commits 0..10, before or after our task loads it
        if other_commits_first:
            commit_table(catalog, config, "db.events", _written(config, range(0, 10)), {("t", 0): 10}, "other", None)
        seen = {("t", 0): 10} if other_commits_first else {("t", 0): None}
        ours = _written(config, range(10, 20) if other_commits_first else range(0, 20))
        if not other_commits_first:
            commit_table(catalog, config, "db.events", _written(config, range(0, 10)), {("t", 0): 10}, "other", None)
        return [TaskResult(a.task_id, data_files={"db.events": ours}, next_offsets={("t", 0): 20}, records_read=20,
                           offsets_seen={"db.events": [seen]}) for a in assignments]

    assert not catalog.table_exists("db.events")
    if other_commits_first:  # our task skipped 0..9, which the table held when it loaded it
        coordinator.run_cycle(tasks, {("t", 0): 0}, {("t", 0): 20})
    else:
        with pytest.raises(FencedException, match="its tasks saw no offset, found next offset 10"):
            coordinator.run_cycle(tasks, {("t", 0): 0}, {("t", 0): 20})
    ids = sorted(r["id"] for r in catalog.load_table("db.events").scan().to_arrow().to_pylist())
    assert ids == list(range(20 if other_commits_first else 10))  # each record once


def test_a_task_reports_the_offsets_each_table_held_when_it_loaded_it(kafka_broker, tmp_path):
    topic = unique("seen")
    props = sink_props(unique("seen"), topic, "db.seen", tmp_path)
    config = SinkConfig.parse(props, {"bootstrap.servers": kafka_broker.bootstrap})
    create_topic(kafka_broker.bootstrap, topic, partitions=1)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(20)], 1)
    first = run_task(TaskAssignment("t1", (OffsetRange(topic, 0, 0, 12),), config))
    assert first.needs.create  # the table is created first: the task loaded nothing
    assert first.offsets_seen == {}
    apply_schema_needs(load_catalog(props), config, first.needs.create, first.needs.updates)
    first = run_task(TaskAssignment("t1", (OffsetRange(topic, 0, 0, 12),), config))
    commit_table(load_catalog(props), config, "db.seen", first.data_files["db.seen"], {(topic, 0): 12}, "c1", None)

    second = run_task(TaskAssignment("t2", (OffsetRange(topic, 0, 8, 20),), config))
    assert second.offsets_seen == {"db.seen": [{(topic, 0): 12}]}
    assert second.records_written == {"db.seen": 8}  # 8..11 skipped: the table held them
