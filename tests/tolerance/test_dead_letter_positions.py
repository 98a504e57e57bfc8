"""The DLQ position a connector's tables recorded: per DLQ partition, the smallest over the tables."""

from __future__ import annotations

import json
from types import SimpleNamespace

import connector.tolerance.dead_letters as dlq
from connector.tolerance.dead_letters import position_key, recorded_position


class _Catalog:
    def load_table(self, name):
        return name


def _config(*tables):
    return SimpleNamespace(group_id="connect-sink", iceberg=SimpleNamespace(
        tables=tables, table_config=lambda name: SimpleNamespace(commit_branch=None)))


def test_the_position_is_the_smallest_over_the_tables_whichever_table_comes_first(monkeypatch):
    key = position_key("dlq", "connect-sink")
    positions = {"db.a": {"0": 40, "1": 7}, "db.b": {"0": 25, "1": 9}}  # a crash between the two commits
    monkeypatch.setattr(dlq, "_summaries", lambda table, branch: [{key: json.dumps(positions[table])}])

    assert recorded_position(_Catalog(), _config("db.a", "db.b"), "dlq") == {0: 25, 1: 7}
    assert recorded_position(_Catalog(), _config("db.b", "db.a"), "dlq") == {0: 25, 1: 7}


def test_a_partition_a_table_has_no_position_for_is_read_from_its_start(monkeypatch):
    key = position_key("dlq", "connect-sink")
    positions = {"db.a": {"0": 40, "1": 7}, "db.b": {"0": 25}}
    monkeypatch.setattr(dlq, "_summaries", lambda table, branch: [{key: json.dumps(positions[table])}])

    assert recorded_position(_Catalog(), _config("db.a", "db.b"), "dlq") == {0: 25, 1: 0}
