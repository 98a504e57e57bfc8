"""GroupMirror: a failed mirror of the tables' offsets waits, is retried after each cycle, and says how far off."""

from __future__ import annotations

import concurrent.futures
import logging

from confluent_kafka import KafkaError, KafkaException
from prometheus_client import CollectorRegistry

from connector.commit.coordinator import CycleReport
from connector.commit.group_mirror import MIRROR_TIMEOUT, GroupMirror
from connector.metrics import JobMetrics

OCCUPIED = KafkaException(KafkaError(KafkaError.UNKNOWN_MEMBER_ID, "Could not commit offsets of group g"))


class Group:
    """A consumer group that refuses commits while ``members`` is set (as a broker does)."""

    def __init__(self, held: dict):
        self.held = dict(held)
        self.members = True
        self.commits = 0

    def commit(self, conf, group_id, offsets, timeout: float = 30.0) -> None:
        self.commits += 1
        if self.members:
            raise OCCUPIED
        self.held.update(offsets)

    def read(self, conf, group_id, partitions) -> dict:
        return {tp: self.held[tp] for tp in partitions if tp in self.held}


def test_offsets_wait_while_the_group_refuses_and_catch_up_on_a_later_cycle(caplog):
    group = Group({("t", 0): 30, ("t", 1): 22})  # where a killed Java sink left it
    mirror = GroupMirror({}, "connect-x", commit=group.commit, read=group.read)

    with caplog.at_level(logging.INFO, logger="connector.commit.group_mirror"):
        mirror.mirror({("t", 0): 25, ("t", 1): 40})
        assert mirror.lag == 5 + 18  # ahead on one partition, behind on the other: both are off
        mirror.mirror({("t", 1): 45, ("t", 2): 7})
        assert mirror.pending == {("t", 0): 25, ("t", 1): 45, ("t", 2): 7}
        assert mirror.lag == 5 + 23 + 7  # a partition the group has no offset for: all of it
        group.members = False  # the dead member is gone
        mirror.retry()  # an idle cycle

    assert group.held == {("t", 0): 25, ("t", 1): 45, ("t", 2): 7}
    assert mirror.pending == {} and mirror.lag == 0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "still has a member" in warnings[0] and "23 record(s) off" in warnings[0]
    assert caplog.records[-1].getMessage() == "Consumer group connect-x caught up with the tables: t[0]@25, " \
                                              "t[1]@45, t[2]@7"


def test_nothing_pending_commits_nothing():
    group = Group({})
    group.members = False
    mirror = GroupMirror({}, "connect-x", commit=group.commit, read=group.read)
    mirror.retry()
    mirror.mirror({("t", 0): 3})
    mirror.retry()
    assert group.commits == 1 and group.held == {("t", 0): 3}


def test_an_unreachable_broker_keeps_the_last_figure_and_names_the_cause(caplog):
    def unreachable(*args, **kwargs):
        raise KafkaException(KafkaError(KafkaError._TRANSPORT, "broker down"))

    mirror = GroupMirror({}, "connect-x", commit=unreachable, read=unreachable)
    mirror.lag = 12
    with caplog.at_level(logging.WARNING):
        mirror.mirror({("t", 0): 3})
    assert mirror.lag == 12 and "broker down" in caplog.text


def test_the_lag_is_a_metric_until_the_group_has_the_offsets():
    registry = CollectorRegistry()
    metrics = JobMetrics("sink", registry=registry)
    metrics.cycle_done(CycleReport(group_mirror_lag=23), {})
    assert registry.get_sample_value("icefloe_group_mirror_lag_records", {"connector": "sink"}) == 23
    metrics.cycle_done(CycleReport(), {})
    assert registry.get_sample_value("icefloe_group_mirror_lag_records", {"connector": "sink"}) == 0


def test_what_status_shows_while_the_group_lags_and_after():
    group = Group({})
    mirror = GroupMirror({}, "connect-x", commit=group.commit, read=group.read)
    assert mirror.lagging() is None
    mirror.mirror({("t", 0): 10})
    shown = mirror.lagging()
    assert shown is not None and shown["group"] == "connect-x" and shown["records"] == 10
    assert "still has a member" in shown["reason"]
    group.members = False
    mirror.retry()
    assert mirror.lagging() is None


def test_the_connectors_status_shows_the_lag_only_while_there_is_one():
    from types import SimpleNamespace

    from connector.herder.connector_runtime import ConnectorRuntime

    group = Group({})
    mirror = GroupMirror({}, "connect-x", commit=group.commit, read=group.read)
    runtime = ConnectorRuntime("x", {"tasks.max": "1"}, "RUNNING", worker={}, runner=None, worker_id="w:1",
                               resolve=dict)
    runtime.job = SimpleNamespace(coordinator=SimpleNamespace(group_mirror=mirror))  # type: ignore[assignment]
    assert "group_mirror_lag" not in runtime.status()["connector"]
    mirror.mirror({("t", 0): 4})
    assert runtime.status()["connector"]["group_mirror_lag"]["records"] == 4
    group.members = False
    mirror.retry()
    assert "group_mirror_lag" not in runtime.status()["connector"]


def test_a_broker_that_does_not_answer_holds_the_cycle_no_longer_than_connects_flush_timeout(caplog):
    waited = []

    def silent(conf, group_id, offsets, timeout: float = 30.0):
        waited.append(timeout)
        raise concurrent.futures.TimeoutError()  # what a request future raises: no text of its own

    mirror = GroupMirror({}, "connect-x", commit=silent, read=silent)
    with caplog.at_level(logging.WARNING, logger="connector.commit.group_mirror"):
        mirror.mirror({("t", 0): 3})

    assert waited == [MIRROR_TIMEOUT] and MIRROR_TIMEOUT == 5.0  # offset.flush.timeout.ms's default
    assert mirror.lagging()["reason"] == "TimeoutError after 5 s"
    assert caplog.records[-1].getMessage().endswith("retried after each cycle: TimeoutError after 5 s")
