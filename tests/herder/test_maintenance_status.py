"""A connector's table maintenance through the real herder and its REST app: rounds, compactions, errors."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from connector.herder.states import RUNNING
from connector.rest.app import create_app
from tests.herder.conftest import states, wait_until
from tests.herder.test_lifecycle import connector_props
from tests.integration.harness import load_table, produce_round_robin, unique
from tests.maintenance.readers import ids_by_both
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration

MAINTAINED = {"icefloe.maintenance.interval-ms": "0", "icefloe.maintenance.compaction.min-input-files": "3",
              "icefloe.maintenance.snapshot.max-age-ms": "0", "icefloe.maintenance.snapshot.min-to-keep": "1",
              "iceberg.control.commit.interval-ms": "300", "tasks.max": "1"}


def produce(bootstrap: str, topic: str, first: int, count: int) -> None:
    produce_round_robin(bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(first, first + count)], 1)


def test_the_maintenance_endpoint_shows_rounds_compactions_and_the_errors_of_the_last_round(
        herder, kafka_broker, tmp_path, monkeypatch):
    topic, table = unique("kept"), "db.kept"
    props = connector_props(tmp_path, topic, table, **MAINTAINED)
    name = props["name"]
    create_topic(kafka_broker.bootstrap, topic, partitions=1)

    def broken_orphans(*args, **kwargs):  # the job's thread runs in this process: its orphan step fails
        raise OSError("listing the warehouse failed")

    monkeypatch.setattr("connector.maintenance.runner.delete_orphans", broken_orphans)
    herder.create_connector(name, props, None)
    client = TestClient(create_app(herder, {}))
    before = client.get(f"/connectors/{name}/maintenance").json()
    assert before["name"] == name and before["enabled"] is True

    produced = 0

    def compacted() -> dict | None:  # small commits until a round has compacted some of them
        nonlocal produced
        produce(kafka_broker.bootstrap, topic, produced, 10)
        produced += 10
        shown = client.get(f"/connectors/{name}/maintenance").json()
        return shown if shown["tables"].get(table, {}).get("last_compaction") else None

    shown = wait_until(compacted, "a round that compacted")
    entry = shown["tables"][table]
    assert entry["last_compaction"]["files_rewritten"] >= 3 and entry["last_compaction"]["bytes_rewritten"] > 0
    assert entry["last_compaction"]["files_written"] == 1 and entry["last_compaction"]["seconds"] >= 0
    assert entry["totals"]["files_rewritten"] >= 3
    # every round since the first ended with the orphan step's error, and the job went on
    assert shown["last_round"]["outcome"] == "failed"
    assert {"table": table, "step": "orphans", "error": "OSError: listing the warehouse failed"} \
        in shown["last_round"]["errors"]
    assert entry["last_round"]["errors"] == [{"step": "orphans", "error": "OSError: listing the warehouse failed"}]
    assert states(herder.connector_status(name))[0] == RUNNING

    monkeypatch.undo()  # the store is reachable again: the next round succeeds
    healed = wait_until(lambda: _succeeded(client.get(f"/connectors/{name}/maintenance").json(), table),
                        "a round without errors")
    assert healed["tables"][table]["last_round"]["errors"] == [] and healed["tables"][table]["totals"][
        "snapshots_expired"] > 0
    wait_until(lambda: ids_by_both(load_table(props, table)) == list(range(produced)), "every row")

    herder.pause(name)  # the last round stays visible while the connector is paused, and none runs
    paused = client.get(f"/connectors/{name}/maintenance").json()
    assert paused["running"] is False and paused["tables"][table]["last_compaction"] is not None
    assert client.get("/connectors/nope/maintenance").status_code == 404


def _succeeded(shown: dict, table: str) -> dict | None:
    last = shown["last_round"]
    entry = shown["tables"].get(table, {}).get("last_round")
    return shown if last and last["outcome"] == "succeeded" and entry and entry["outcome"] == "succeeded" else None
