"""Taking over from a stopped Java sink: its complete commits are finished, nothing read twice or skipped."""

from __future__ import annotations

import json
import logging
from collections import Counter

import pytest
from confluent_kafka import KafkaException
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.iceberg.snapshot_offsets import committed_offsets, control_offsets, java_keys
from connector.kafka.group_offsets import commit_group_offsets, group_occupied, read_group_offsets
from connector.takeover.replay import plan, take_over_if_needed
from tests.integration.harness import produce_round_robin, run_until_caught_up, sink_props, table_rows, unique
from tests.support.tansu import create_topic
from tests.takeover.java_sink import JavaSink, kill_a_member

pytestmark = pytest.mark.integration

PER_PARTITION = 40


def _ids(partition: int, start: int, end: int) -> list[int]:
    """Value i sits at offset i // 2 of partition i % 2."""
    return [offset * 2 + partition for offset in range(start, end)]


TABULAR = "io.tabular.iceberg.connect.IcebergSinkConnector"


def _java_history(broker, tmp_path, tabular=False):
    """Four Java commits: both tables committed; one table only; none; and one incomplete."""
    topic, control, name = unique("src"), unique("control"), unique("java")
    create_topic(broker.bootstrap, topic, partitions=2)
    create_topic(broker.bootstrap, control, partitions=2)
    produce_round_robin(broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(2 * PER_PARTITION)], 2)
    props = sink_props(name, topic, "db.a,db.b", tmp_path, **{"iceberg.control.topic": control})
    if tabular:
        props["connector.class"] = TABULAR
    catalog = load_catalog(props)
    catalog.create_namespace_if_not_exists("db")
    for table in ("db.a", "db.b"):
        catalog.create_table(table, Schema(NestedField(1, "id", LongType(), required=False)))
    java = JavaSink(broker.bootstrap, catalog, name, topic, control, ["db.a", "db.b"], workers={0: 1, 1: 0},
                    tabular=tabular)

    def commit(ranges, commit_to=(), complete=(0, 1)):
        commit_id = java.start_commit()
        files: dict[str, list] = {"db.a": [], "db.b": []}
        for partition, (start, end) in ranges.items():
            written = java.worker_round(commit_id, partition, start, end, _ids(partition, start, end),
                                        complete=partition in complete)
            for table, table_files in written.items():
                files[table].extend(table_files)
        for table in commit_to:
            java.coordinator_commit(commit_id, table, files[table])
        if commit_to:
            java.commit_complete(commit_id)

    commit({0: (0, 10), 1: (0, 8)}, commit_to=("db.a", "db.b"))
    commit({0: (10, 20), 1: (8, 15)}, commit_to=("db.a",))  # the coordinator failed on db.b
    commit({0: (20, 25), 1: (15, 22)})  # complete, but the connector stopped before the coordinator committed
    commit({0: (25, 30), 1: (22, 28)}, complete=(0,))  # incomplete: the worker of partition 1 never finished
    return props, topic, java


def test_the_plan_finishes_complete_commits_per_table_and_leaves_the_incomplete_one(kafka_broker, tmp_path):
    props, topic, java = _java_history(kafka_broker, tmp_path)
    config = SinkConfig.parse(props, {"bootstrap.servers": kafka_broker.bootstrap})
    catalog = load_catalog(props)
    conf = {"bootstrap.servers": kafka_broker.bootstrap}
    # the Java sink's group is ahead of the tables: starting there would skip records
    assert read_group_offsets(conf, config.group_id, [(topic, 0), (topic, 1)]) == {(topic, 0): 30, (topic, 1): 22}
    takeover = plan(catalog, config, conf, [(topic, 0), (topic, 1)])
    assert takeover.resume == {(topic, 0): 25, (topic, 1): 22}
    # commit 1 is in both tables (not even read again); commit 2 only in db.a; commit 3 in neither
    assert [sorted(c.tables) for c in takeover.commits] == [["db.a", "db.b"], ["db.a", "db.b"]]
    second, third = takeover.commits
    assert second.tables["db.a"] == [] and second.already_held["db.a"] == 2
    assert len(second.tables["db.b"]) == 2 and len(third.tables["db.a"]) == 2 and len(third.tables["db.b"]) == 2
    assert sum(takeover.incomplete.values()) == 4  # 2 workers x 2 tables, never committed
    assert "incomplete commit" in takeover.describe()


@pytest.mark.parametrize("tabular", [False, True], ids=["apache", "tabular"])
def test_run_takes_over_and_the_tables_hold_the_topic_exactly(kafka_broker, spark, tmp_path, tabular):
    props, topic, java = _java_history(kafka_broker, tmp_path, tabular)
    run_until_caught_up(props, kafka_broker.bootstrap, spark)
    expected = sorted(_ids(0, 0, PER_PARTITION) + _ids(1, 0, PER_PARTITION))
    config = SinkConfig.parse(props)
    for table_name in ("db.a", "db.b"):
        counts = Counter(row["id"] for row in table_rows(props, table_name))
        assert not {i: n for i, n in counts.items() if n > 1}, f"{table_name}: records twice"
        assert sorted(counts) == expected, f"{table_name}: records missing"
        table = load_catalog(props).load_table(table_name)
        assert committed_offsets(table, config.group_id, None, java_keys(config)) == {
            (topic, 0): PER_PARTITION, (topic, 1): PER_PARTITION}
        # the Java key now says every complete commit is in the table: a rollback would not add them again
        # and the abandoned incomplete commit's events are behind it too (icefloe re-read those records)
        assert control_offsets(table, java_keys(config))[java.group] == java.positions
    # what the Java coordinator would find to commit after a rollback: nothing
    conf = {"bootstrap.servers": kafka_broker.bootstrap}
    again = plan(load_catalog(props), config, conf, [(topic, 0), (topic, 1)])
    assert not again.found_events and again.commits == []
    # a second run finds nothing to do and duplicates nothing
    run_until_caught_up(props, kafka_broker.bootstrap, spark)
    assert len(table_rows(props, "db.a")) == 2 * PER_PARTITION


def test_takeover_none_resumes_from_the_group_and_reads_no_control_topic(kafka_broker, tmp_path):
    props, topic, _ = _java_history(kafka_broker, tmp_path)
    from connector.job import SinkJob

    config = SinkConfig.parse({**props, "icefloe.takeover": "none"}, {"bootstrap.servers": kafka_broker.bootstrap})
    job = SinkJob(config, runner=None, default_parallelism=1, until_caught_up=True)  # type: ignore[arg-type]
    # the group the Java workers left: partition 0 is 5 records ahead of the last complete commit
    assert job.start_offsets([(topic, 0), (topic, 1)]) == {(topic, 0): 30, (topic, 1): 22}
    assert len(table_rows(props, "db.b")) == 18  # nothing committed


def test_a_forced_takeover_on_every_start_adds_nothing_twice(kafka_broker, tmp_path):
    props, topic, _ = _java_history(kafka_broker, tmp_path)
    from connector.job import SinkJob

    config = SinkConfig.parse({**props, "icefloe.takeover": "control-topic"},
                              {"bootstrap.servers": kafka_broker.bootstrap})
    for _ in range(2):
        job = SinkJob(config, runner=None, default_parallelism=1, until_caught_up=True)  # type: ignore[arg-type]
        assert job.start_offsets([(topic, 0), (topic, 1)]) == {(topic, 0): 25, (topic, 1): 22}
        assert sorted(r["id"] for r in table_rows(props, "db.b")) == sorted(_ids(0, 0, 25) + _ids(1, 0, 22))


def _setup(broker, tmp_path):
    topic, control, name = unique("src"), unique("control"), unique("java")
    create_topic(broker.bootstrap, topic, partitions=2)
    create_topic(broker.bootstrap, control, partitions=2)
    produce_round_robin(broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(2 * PER_PARTITION)], 2)
    props = sink_props(name, topic, "db.a,db.b", tmp_path, **{"iceberg.control.topic": control})
    catalog = load_catalog(props)
    catalog.create_namespace_if_not_exists("db")
    for table in ("db.a", "db.b"):
        catalog.create_table(table, Schema(NestedField(1, "id", LongType(), required=False)))
    java = JavaSink(broker.bootstrap, catalog, name, topic, control, ["db.a", "db.b"], workers={0: 1, 1: 0})
    config = SinkConfig.parse(props, {"bootstrap.servers": broker.bootstrap})
    return props, topic, java, catalog, config


def test_a_table_the_java_sink_never_committed_to_gets_every_complete_commit(kafka_broker, tmp_path):
    props, topic, java, catalog, config = _setup(kafka_broker, tmp_path)
    for start, end in ((0, 10), (10, 20)):
        commit_id = java.start_commit()
        files = [f for p in (0, 1) for f in java.worker_round(commit_id, p, start, end, _ids(p, start, end))["db.a"]]
        java.coordinator_commit(commit_id, "db.a", files)  # db.b failed every time: it has no Java key
    takeover = plan(catalog, config, {"bootstrap.servers": kafka_broker.bootstrap}, [(topic, 0), (topic, 1)])
    assert [len(c.tables["db.b"]) for c in takeover.commits] == [2, 2]
    assert [c.tables["db.a"] for c in takeover.commits] == [[], []]
    assert takeover.resume == {(topic, 0): 20, (topic, 1): 20}


def test_files_of_a_later_commit_met_before_the_earlier_completes_wait_for_their_own(kafka_broker, tmp_path):
    props, topic, java, catalog, config = _setup(kafka_broker, tmp_path)
    first = java.start_commit()
    java.worker_round(first, 0, 0, 10, _ids(0, 0, 10))
    second = java.start_commit()  # met before the first commit is complete (clocks, interleaving)
    java.worker_round(second, 0, 10, 20, _ids(0, 10, 20))
    java.worker_round(first, 1, 0, 10, _ids(1, 0, 10))  # the first commit is complete here
    takeover = plan(catalog, config, {"bootstrap.servers": kafka_broker.bootstrap}, [(topic, 0), (topic, 1)])
    assert [c.commit_id for c in takeover.commits] == [first]
    assert len(takeover.commits[0].tables["db.a"]) == 2  # not the second commit's file
    assert takeover.incomplete == {str(second): 2}
    assert takeover.resume == {(topic, 0): 10, (topic, 1): 10}


def test_an_unreadable_control_record_of_this_connector_stops_the_takeover(kafka_broker, tmp_path):
    # e.g. Tabular's legacy event format: skipping it could drop a commit's files whose records the
    # group's offsets already passed, so the takeover refuses; another connector's is only skipped
    from connector.takeover.replay import TakeoverError
    from tests.support.tansu import produce

    props, topic, _ = _java_history(kafka_broker, tmp_path)
    config = SinkConfig.parse(props, {"bootstrap.servers": kafka_broker.bootstrap})
    conf = {"bootstrap.servers": kafka_broker.bootstrap}
    control = props["iceberg.control.topic"]
    produce(kafka_broker.bootstrap, control, [b"\x00\x07legacy" + b"connect-someone-else"], partition=0)
    assert plan(load_catalog(props), config, conf, [(topic, 0), (topic, 1)]).resume == {(topic, 0): 25,
                                                                                        (topic, 1): 22}

    produce(kafka_broker.bootstrap, control, [b"\x00\x07legacy" + config.group_id.encode()], partition=1)
    with pytest.raises(TakeoverError, match=rf"Control record {control}\[1\]@\d+ of group {config.group_id} "
                                            r"cannot be read .* icefloe.takeover=none"):
        plan(load_catalog(props), config, conf, [(topic, 0), (topic, 1)])


def test_a_fresh_connector_without_a_control_topic_checks_with_one_metadata_request(kafka_broker, tmp_path,
                                                                                     monkeypatch):
    from connector.kafka import topics
    from connector.takeover import replay

    config = SinkConfig.parse(sink_props(unique("fresh"), "t", "db.fresh", tmp_path,
                                         **{"iceberg.control.topic": unique("no-control")}),
                              {"bootstrap.servers": kafka_broker.bootstrap})
    requests = []
    real = topics._topic_partitions
    monkeypatch.setattr(topics, "_topic_partitions", lambda *args: requests.append(args) or real(*args))

    def never(*args, **kwargs):
        raise AssertionError("the takeover read Kafka beyond the metadata")

    for reader in ("read_range", "end_offsets", "earliest_offsets", "read_group_offsets"):
        monkeypatch.setattr(replay, reader, never)

    client = {"bootstrap.servers": kafka_broker.bootstrap}
    assert replay.take_over_if_needed(load_catalog(config.props), config, client, [("t", 0)]) is None
    assert len(requests) == 1


def test_a_killed_java_worker_still_in_the_group_is_dropped_and_the_mirror_catches_up(kafka_broker, spark, tmp_path,
                                                                                    caplog):
    """The Java worker was killed without leaving its group: the broker refuses commits from outside
    the group while its member lingers (Tansu keeps it until a rebalance). The takeover joins the group
    to set it, which drops the dead member, and every cycle after mirrors the tables again."""
    props, topic, java = _java_history(kafka_broker, tmp_path)
    config = SinkConfig.parse(props, {"bootstrap.servers": kafka_broker.bootstrap})
    conf = {"bootstrap.servers": kafka_broker.bootstrap}
    kill_a_member(kafka_broker.bootstrap, config.group_id, [topic])
    with pytest.raises(KafkaException) as refused:  # what every mirror got before
        commit_group_offsets(conf, config.group_id, {(topic, 0): 1})
    assert group_occupied(refused.value)

    with caplog.at_level(logging.INFO, logger="connector"):
        run_until_caught_up(props, kafka_broker.bootstrap, spark)

    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Takeover of the Java sink: ")]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "2 complete Java commit(s) finished" in lines[0] and "in-flight Java commit " in lines[0]
    assert f"consumer group {config.group_id} set by joining it" in lines[0]
    assert not [r for r in caplog.records if "Could not commit offsets to consumer group" in r.getMessage()]
    everything = {(topic, 0): PER_PARTITION, (topic, 1): PER_PARTITION}
    assert read_group_offsets(conf, config.group_id, list(everything)) == everything
    commit_group_offsets(conf, config.group_id, everything)  # the group is empty again: commits from outside work


def test_the_takeover_line_says_when_no_java_commit_was_in_flight(kafka_broker, tmp_path, caplog):
    topic, control, name = unique("src"), unique("control"), unique("java")
    create_topic(kafka_broker.bootstrap, topic, partitions=1)
    create_topic(kafka_broker.bootstrap, control, partitions=1)
    props = sink_props(name, topic, "db.a", tmp_path, **{"iceberg.control.topic": control})
    catalog = load_catalog(props)
    catalog.create_namespace_if_not_exists("db")
    catalog.create_table("db.a", Schema(NestedField(1, "id", LongType(), required=False)))
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(4)], 1)
    java = JavaSink(kafka_broker.bootstrap, catalog, name, topic, control, ["db.a"], workers={0: 0})
    java.worker_round(java.start_commit(), 0, 0, 4, list(range(4)))  # complete; the coordinator never committed
    config = SinkConfig.parse(props, {"bootstrap.servers": kafka_broker.bootstrap})

    with caplog.at_level(logging.INFO, logger="connector.takeover"):
        takeover = take_over_if_needed(catalog, config, {"bootstrap.servers": kafka_broker.bootstrap}, [(topic, 0)])

    assert takeover is not None and takeover.resume == {(topic, 0): 4}
    [line] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Takeover of the Java sink: ")]
    assert "1 complete Java commit(s) finished (1 file(s) added); no in-flight Java commit; resume from " in line
    assert line.endswith(f"; consumer group {config.group_id} set")
