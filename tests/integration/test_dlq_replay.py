"""``icefloe dlq replay``: after the cause is fixed, the DLQ's records reach the table once, no more.

Real Tansu broker, Spark for the job's runs, the replay in-process (it runs on
the driver) or as the ``icefloe`` command (to SIGKILL it at a fault point).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from connector.config.sink_config import SinkConfig
from connector.dlq_replay import DlqReplay, ReplayRefused, replayed_key
from connector.kafka.offsets import OffsetRange, end_offsets
from connector.kafka.range_reader import read_range
from connector.tolerance.dead_letters import ensure_topic
from tests.integration.harness import load_table, run_until_caught_up, sink_props, table_rows, unique, write_config_file
from tests.support.tansu import create_topic, produce

pytestmark = pytest.mark.integration

# (value, good under the first config, good after the fix)
RECORDS = [
    (b'{"id": 0, "n": 10, "c": "1"}', True, True),
    (b'{"id": 1, "n": 11, "c": "seven"}', False, True),  # Cast c:int32 fails; the fix drops c first
    (b'{"id": 2, "n": 12}', True, True),
    (b'{"id": 3, "n": "x"}', False, False),  # n does not fit the long column, fixed or not
    (b'{"id": 4, "n": 14, "c": "eight"}', False, True),
    (b'{"id": 5, "n": 15, "c": "5"}', True, True),
]


def _props(tmp_path, name, topic, dlq, *, fixed=False):
    transforms = {
        "transforms": "drop,meta,cast" if fixed else "meta,cast",
        "transforms.meta.type": "org.apache.kafka.connect.transforms.InsertField$Value",
        "transforms.meta.offset.field": "src_offset",
        "transforms.meta.partition.field": "src_partition",
        "transforms.cast.type": "org.apache.kafka.connect.transforms.Cast$Value",
        "transforms.cast.spec": "c:int32",
    }
    if fixed:
        transforms.update({"transforms.drop.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
                           "transforms.drop.exclude": "c"})
    return sink_props(name, topic, "db.t", tmp_path, **{
        "tasks.max": "1",
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.context.headers.enable": "true",
        **transforms,
    })


def _dlq(bootstrap, dlq, start=0) -> list[dict]:
    conf = {"bootstrap.servers": bootstrap}
    end = end_offsets(conf, [(dlq, 0)])[(dlq, 0)]
    rows = []
    for batch in read_range(conf, OffsetRange(dlq, 0, start, end)):
        rows.extend(batch.to_pylist())
    for row in rows:
        row["headers"] = {h["key"]: h["value"] for h in row["headers"]}
    return rows


def _replay(props, bootstrap):
    return DlqReplay(SinkConfig.parse(props, {"bootstrap.servers": bootstrap})).run()


def _replay_position(props, dlq) -> int:
    summary = load_table(props, "db.t").current_snapshot().summary.additional_properties
    return json.loads(summary[replayed_key(dlq, f"connect-{props['name']}")])["0"]


def _ids(props) -> Counter:
    return Counter(r["id"] for r in table_rows(props, "db.t"))


def test_replay_after_the_fix_lands_each_record_once_and_keeps_what_still_fails(kafka_broker, spark, tmp_path):
    bootstrap = kafka_broker.bootstrap
    name, topic, dlq = unique("replay"), unique("replay_src"), unique("replay_dlq")
    props, fixed = _props(tmp_path, name, topic, dlq), _props(tmp_path, name, topic, dlq, fixed=True)
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, [r[0] for r in RECORDS], partition=0, headers=[[("h", b"%d" % i)] for i in range(6)])
    summary = run_until_caught_up(props, bootstrap, spark)
    assert sum((Counter(c.dlq_records) for c in summary.cycles), Counter()) == {topic: 3}  # the cycle report
    assert _ids(props) == Counter([0, 2, 5])
    assert len(_dlq(bootstrap, dlq)) == 3

    report = _replay(fixed, bootstrap)
    assert report.replayed == {"db.t": 2} and report.failed_again == 1 and report.records == 3
    assert [(f["topic"], f["partition"], f["offset"], f["stage"]) for f in report.failures] == \
        [(topic, 0, 3, "TASK_PUT")]
    assert _ids(props) == Counter([0, 1, 2, 4, 5])
    replayed = {r["id"]: r for r in table_rows(props, "db.t") if r["id"] in (1, 4)}
    assert {i: (r["src_offset"], r["src_partition"], r["c"]) for i, r in replayed.items()} == \
        {1: (1, 0, None), 4: (4, 0, None)}  # the original coordinates
    rows = _dlq(bootstrap, dlq)
    assert len(rows) == 4
    copy = rows[3]
    assert copy["value"] == RECORDS[3][0] and copy["headers"]["h"] == b"3"
    assert copy["headers"]["icefloe.dlq.replays"] == b"1"
    assert copy["headers"]["icefloe.dlq.replayed.from"] == b"0:1"
    assert copy["headers"]["__connect.errors.offset"] == b"3"
    assert copy["headers"]["__connect.errors.stage"] == b"TASK_PUT"
    assert _replay_position(props, dlq) == 3

    # again: the table does not change; the record that still fails is sent on with its count
    snapshot_rows = sorted(map(json.dumps, table_rows(props, "db.t")), key=str)
    report = _replay(fixed, bootstrap)
    assert report.replayed == {} and report.failed_again == 1 and report.records == 1
    assert sorted(map(json.dumps, table_rows(props, "db.t")), key=str) == snapshot_rows
    after = _dlq(bootstrap, dlq, start=_replay_position(props, dlq))
    assert [(r["value"], r["headers"]["icefloe.dlq.replays"]) for r in after] == [(RECORDS[3][0], b"2")]

    # new bad traffic, then a replay SIGKILLed after its DLQ writes, before its commit; a re-run
    produce(bootstrap, topic, [b'{"id": 6, "n": 16, "c": "nine"}'], partition=0)
    run_until_caught_up(props, bootstrap, spark)
    config_file = write_config_file(tmp_path / "fixed.json", fixed)
    command = [sys.executable, "-m", "connector.cli", "dlq", "replay", str(config_file), "--bootstrap-servers",
               bootstrap]
    crashed = subprocess.run(command, capture_output=True, text=True, timeout=120, start_new_session=True,
                             env={**os.environ, "ICEFLOE_FAULT_POINT": "replay.after-dlq-writes"})
    assert crashed.returncode == -9, crashed.stderr[-2000:]
    assert _ids(props) == Counter([0, 1, 2, 4, 5])  # nothing committed
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["replayed"] == {"db.t": 1} and summary["failed_again"] == 1
    assert summary["skipped"] == {"copy from an unfinished replay": 1}
    assert _ids(props) == Counter([0, 1, 2, 4, 5, 6])
    after = _dlq(bootstrap, dlq, start=_replay_position(props, dlq))
    assert [(r["value"], r["headers"]["icefloe.dlq.replays"]) for r in after] == [(RECORDS[3][0], b"3")]


def test_replay_refuses_dlq_records_without_context_headers(kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    name, topic, dlq = unique("noctx"), unique("noctx_src"), unique("noctx_dlq")
    props = _props(tmp_path, name, topic, dlq)
    ensure_topic({"bootstrap.servers": bootstrap}, dlq, 1)
    produce(bootstrap, dlq, [b'{"id": 1}'], partition=0)
    with pytest.raises(ReplayRefused, match="no __connect.errors.\\* context headers"):
        _replay(props, bootstrap)


def test_a_replay_killed_between_two_tables_commits_completes_without_duplicates(kafka_broker, spark, tmp_path):
    bootstrap = kafka_broker.bootstrap
    name, topic, dlq = unique("replay2"), unique("replay2_src"), unique("replay2_dlq")
    props, fixed = _props(tmp_path, name, topic, dlq), _props(tmp_path, name, topic, dlq, fixed=True)
    for p in (props, fixed):
        p["iceberg.tables"] = "db.t,db.u"
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, [r[0] for r in RECORDS], partition=0)
    run_until_caught_up(props, bootstrap, spark)
    command = [sys.executable, "-m", "connector.cli", "dlq", "replay",
               str(write_config_file(tmp_path / "fixed2.json", fixed)), "--bootstrap-servers", bootstrap]
    crashed = subprocess.run(command, capture_output=True, text=True, timeout=120, start_new_session=True,
                             env={**os.environ, "ICEFLOE_FAULT_POINT": "replay.after-table-commit"})
    assert crashed.returncode == -9, crashed.stderr[-2000:]
    ids = {t: Counter(r["id"] for r in table_rows(props, t)) for t in ("db.t", "db.u")}
    assert ids == {"db.t": Counter([0, 1, 2, 4, 5]), "db.u": Counter([0, 2, 5])}  # one table committed

    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1])["replayed"] == {"db.u": 2}
    for table in ("db.t", "db.u"):
        assert Counter(r["id"] for r in table_rows(props, table)) == Counter([0, 1, 2, 4, 5]), table
    again = _replay(fixed, bootstrap)
    assert again.replayed == {} and again.failed_again == 1


def test_the_rest_worker_replays_a_connectors_dlq(kafka_broker, spark, tmp_path):
    from concurrent.futures import Future

    from fastapi.testclient import TestClient

    from connector.herder.herder import Herder
    from connector.rest.app import create_app

    bootstrap = kafka_broker.bootstrap
    name, topic, dlq = unique("replayrest"), unique("replayrest_src"), unique("replayrest_dlq")
    props, fixed = _props(tmp_path, name, topic, dlq), _props(tmp_path, name, topic, dlq, fixed=True)
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, [r[0] for r in RECORDS], partition=0)
    run_until_caught_up(props, bootstrap, spark)

    session: Future = Future()
    session.set_result(spark)
    herder = Herder({"bootstrap.servers": bootstrap}, data_dir=tmp_path / "worker", spark=session,
                    worker_id="127.0.0.1:8083")
    herder.start()
    try:
        with TestClient(create_app(herder, {})) as client:
            config = {k: v for k, v in fixed.items() if k != "name"}
            created = client.post("/connectors", json={"name": name, "config": config, "initial_state": "STOPPED"})
            assert created.status_code == 201, created.text
            replayed = client.post(f"/connectors/{name}/dlq/replay")
            assert replayed.status_code == 200, replayed.text
            assert replayed.json()["replayed"] == {"db.t": 2} and replayed.json()["failed_again"] == 1
            assert client.post("/connectors/nope/dlq/replay").status_code == 404
    finally:
        herder.shutdown()
    assert _ids(props) == Counter([0, 1, 2, 4, 5])
