"""The maintenance status a connector shows (``GET /connectors/{name}/maintenance``), fed by real rounds."""

from __future__ import annotations

import json

import pytest

from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.maintenance import runner
from connector.maintenance.runner import Maintainer
from connector.maintenance.status import MaintenanceStatus, timestamp
from tests.integration.harness import sink_props, unique
from tests.maintenance.test_compaction import tiny_commits

WALL = 1_750_000_000.0  # the status's wall clock, fixed: 2025-06-15T15:06:40Z


@pytest.fixture
def config(tmp_path) -> SinkConfig:
    return SinkConfig.parse(sink_props(unique("maint"), "t", "db.events", tmp_path, **{
        "icefloe.maintenance.compaction.min-input-files": "3", "icefloe.maintenance.snapshot.max-age-ms": "0",
        "icefloe.maintenance.snapshot.min-to-keep": "1"}))


def watched(config: SinkConfig, **kwargs) -> tuple[Maintainer, MaintenanceStatus]:
    status = MaintenanceStatus(clock=lambda: WALL)
    maintainer = Maintainer(config, load_catalog(config.props), **kwargs)
    maintainer.watch(status)
    return maintainer, status


def test_before_any_round_the_tables_are_known_and_nothing_ran(config):
    _, status = watched(config)
    assert status.as_dict() == {
        "enabled": True, "running": False, "round_started": None, "last_round": None,
        "tables": {"db.events": {"running": False, "step": None, "last_round": None, "last_compaction": None,
                                 "table": None, "totals": {"files_rewritten": 0, "bytes_rewritten": 0,
                                                           "snapshots_expired": 0, "files_deleted": 0}}}}


def test_a_round_that_compacted_and_expired_shows_what_it_did_per_table(config):
    tiny_commits(config, 6)
    maintainer, status = watched(config)
    seen_during: list[dict] = []
    report = maintainer.run_round(on_step=lambda table, step: seen_during.append(status.as_dict()))

    shown = status.as_dict()
    done = report.tables["db.events"]
    table = shown["tables"]["db.events"]
    assert shown["running"] is False and shown["round_started"] is None
    assert shown["last_round"] == {"started": "2025-06-15T15:06:40.000Z", "seconds": round(report.seconds, 3),
                                   "outcome": "succeeded", "errors": []}
    assert table["running"] is False and table["step"] is None
    assert table["last_round"]["outcome"] == "succeeded" and table["last_round"]["errors"] == []
    assert table["last_round"]["files_rewritten"] == 6 == done.compaction.files_removed
    assert table["last_round"]["bytes_rewritten"] == done.compaction.bytes_rewritten > 0
    assert table["last_round"]["snapshots_expired"] == done.expiry.expired > 0
    compaction = table["last_compaction"]
    assert compaction["files_rewritten"] == 6 and compaction["files_written"] == 1
    assert compaction["seconds"] == round(done.compaction.seconds, 3) and compaction["started"] == timestamp(WALL)
    assert compaction["snapshots"] == done.compaction.snapshots
    assert table["table"] == {"data_files": 1, "average_file_size_bytes": round(done.average_file_size),
                              "snapshots": done.snapshots}
    assert json.loads(json.dumps(shown)) == shown  # what the REST worker sends as is
    # while the round ran, the status said so, naming the step on the way (on_step sees the one before)
    assert [(s["running"], s["tables"]["db.events"]["running"], s["tables"]["db.events"]["step"])
            for s in seen_during] == [(True, False, None), (True, True, "compact"), (True, True, "manifests"),
                                      (True, True, "expire")]
    assert seen_during[1]["tables"]["db.events"]["last_round"] is None


def test_the_step_running_now_is_shown(config, monkeypatch):
    tiny_commits(config, 2)
    maintainer, status = watched(config)
    seen: list[dict] = []
    real_expire = runner.expire

    def expire_looking(*args, **kwargs):
        seen.append(status.as_dict())
        return real_expire(*args, **kwargs)

    monkeypatch.setattr("connector.maintenance.runner.expire", expire_looking)
    maintainer.run_round()
    assert seen[0]["running"] is True and seen[0]["round_started"] == timestamp(WALL)
    assert (seen[0]["tables"]["db.events"]["running"], seen[0]["tables"]["db.events"]["step"]) == (True, "expire")
    assert status.as_dict()["tables"]["db.events"]["running"] is False


def test_a_failed_step_is_the_round_and_the_tables_error_and_the_next_round_clears_it(config, monkeypatch):
    tiny_commits(config, 6)
    maintainer, status = watched(config)

    def broken(*args, **kwargs):
        raise OSError("the object store said no")

    monkeypatch.setattr("connector.maintenance.runner.expire", broken)
    maintainer.run_round()
    shown = status.as_dict()
    assert shown["last_round"]["outcome"] == "failed"
    assert shown["last_round"]["errors"] == [{"table": "db.events", "step": "expire",
                                              "error": "OSError: the object store said no"}]
    table = shown["tables"]["db.events"]
    assert table["last_round"]["outcome"] == "failed"
    assert table["last_round"]["errors"] == [{"step": "expire", "error": "OSError: the object store said no"}]
    assert table["last_round"]["files_rewritten"] == 6  # the compaction before it committed

    monkeypatch.undo()
    tiny_commits(config, 3, first=6)
    maintainer.run_round()
    again = status.as_dict()
    assert again["last_round"]["outcome"] == "succeeded" and again["last_round"]["errors"] == []
    assert again["tables"]["db.events"]["last_round"]["errors"] == []
    assert again["tables"]["db.events"]["totals"]["files_rewritten"] == 6 + 4  # the first file and three new


def test_a_round_the_budget_cut_short_is_unfinished_where_it_stopped(config):
    tiny_commits(config, 4)
    now = [0.0]
    maintainer, status = watched(config, clock=lambda: now[0])

    def slow(table, step):  # every step takes an hour
        now[0] += 3600

    maintainer.run_round(budget_seconds=1.0, on_step=slow)
    shown = status.as_dict()
    assert shown["last_round"]["outcome"] == "unfinished"
    assert shown["tables"]["db.events"]["last_round"]["outcome"] == "unfinished"
    assert shown["tables"]["db.events"]["last_compaction"]["files_rewritten"] == 4
