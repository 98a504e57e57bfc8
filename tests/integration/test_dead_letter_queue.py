"""errors.tolerance=all end to end: the table holds the good records, the DLQ exactly the bad ones.

Real Tansu broker, real Spark tasks, SQLite catalog. The DLQ records are
compared byte for byte with what was produced (original key, value, headers,
timestamp) and with Connect's ``__connect.errors.*`` headers; a crash after
the DLQ writes and before the commit, then a re-run, leaves each bad record
in the DLQ once.
"""

from __future__ import annotations

import json
import logging

import pytest

import connector.commit.commit as commit_module
from connector.api.errors import ConnectException
from connector.data.catalog import load_catalog
from connector.kafka.offsets import OffsetRange, end_offsets
from connector.kafka.range_reader import read_range
from connector.tolerance.dead_letters import ensure_topic
from tests.integration.harness import run_until_caught_up, sink_props, snapshot_offsets, table_rows, unique
from tests.support.tansu import create_topic, produce

pytestmark = pytest.mark.integration

CONTEXT_KEYS = [
    "__connect.errors.topic", "__connect.errors.partition", "__connect.errors.offset",
    "__connect.errors.connector.name", "__connect.errors.task.id", "__connect.errors.stage",
    "__connect.errors.class.name", "__connect.errors.exception.class.name",
    "__connect.errors.exception.message", "__connect.errors.exception.stacktrace",
]
DATA_EXCEPTION = "org.apache.kafka.connect.errors.DataException"

# (key, value, expected: None = good, else (stage, class name))
RECORDS = [
    (b"k0", b'{"id": 0, "n": 10}', None),
    (b"k1", b'{"id": 1, "n": ', ("VALUE_CONVERTER", "org.apache.kafka.connect.json.JsonConverter")),
    (b"k2", b'{"id": 2, "n": 12}', None),
    (b"k3", b'[1, 2, 3]', ("TRANSFORMATION", "org.apache.kafka.connect.transforms.Cast$Value")),  # not a map
    (b"k4", b'{"id": 4, "n": "not a number"}', ("TASK_PUT", "org.apache.kafka.connect.sink.SinkTask")),
    (b"k5", b'{"id": 5, "n": 15, "c": "seven"}',
     ("TRANSFORMATION", "org.apache.kafka.connect.transforms.Cast$Value")),
    (b"\xff\xfe bad utf-8 key", b'{"id": 6, "n": 16}', None),  # StringConverter replaces, as Java does
    (b"k7", b'{"id": 7, "n": \xff}', ("VALUE_CONVERTER", "org.apache.kafka.connect.json.JsonConverter")),
    (None, b'{"id": 8, "n": 18, "c": "8"}', None),
]
GOOD_IDS = [0, 2, 6, 8]


def _props(tmp_path, topic, dlq, *, headers=True, **extra):
    return sink_props(unique("dlq"), topic, "db.t", tmp_path, **{
        "errors.tolerance": "all",
        "errors.log.enable": "true",
        "errors.log.include.messages": "true",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.context.headers.enable": str(headers).lower(),
        "transforms": "cast",
        "transforms.cast.type": "org.apache.kafka.connect.transforms.Cast$Value",
        "transforms.cast.spec": "c:int32",
        **extra,
    })


def _produce(bootstrap, topic):
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, [r[1] for r in RECORDS], keys=[r[0] for r in RECORDS], partition=0,
            headers=[[("h", b"v%d" % i), ("empty", None)] for i in range(len(RECORDS))],
            timestamps=[1_700_000_000_000 + i for i in range(len(RECORDS))])


def _dlq_records(bootstrap, dlq) -> list[dict]:
    conf = {"bootstrap.servers": bootstrap}
    end = end_offsets(conf, [(dlq, 0)])[(dlq, 0)]
    rows = []
    for batch in read_range(conf, OffsetRange(dlq, 0, 0, end)):
        rows.extend(batch.to_pylist())
    return rows


def test_good_records_reach_the_table_and_bad_ones_the_dlq_with_connects_headers(kafka_broker, spark, tmp_path):
    topic, dlq = unique("mixed"), unique("mixed_dlq")
    props = _props(tmp_path, topic, dlq)
    _produce(kafka_broker.bootstrap, topic)

    run_until_caught_up(props, kafka_broker.bootstrap, spark)

    assert sorted(r["id"] for r in table_rows(props, "db.t")) == GOOD_IDS
    assert snapshot_offsets(props, "db.t")[f"{topic}.connect-{props['name']}"] == {"0": len(RECORDS)}

    dlq_rows = _dlq_records(kafka_broker.bootstrap, dlq)
    bad = [(offset, r) for offset, r in enumerate(RECORDS) if r[2] is not None]
    assert len(dlq_rows) == len(bad)
    for row, (offset, (key, value, (stage, class_name))) in zip(dlq_rows, bad):
        assert (row["key"], row["value"]) == (key, value)
        assert row["timestamp"] == 1_700_000_000_000 + offset
        headers = [(h["key"], h["value"]) for h in row["headers"]]
        assert headers[:2] == [("h", b"v%d" % offset), ("empty", None)]
        assert [k for k, _ in headers[2:]] == CONTEXT_KEYS
        context = {k: (v.decode() if v is not None else None) for k, v in headers[2:]}
        assert context["__connect.errors.topic"] == topic
        assert context["__connect.errors.partition"] == "0"
        assert context["__connect.errors.offset"] == str(offset)
        assert context["__connect.errors.connector.name"] == props["name"]
        assert context["__connect.errors.task.id"].isdigit()
        assert context["__connect.errors.stage"] == stage
        assert context["__connect.errors.class.name"] == class_name
        assert context["__connect.errors.exception.class.name"] == DATA_EXCEPTION
        assert context["__connect.errors.exception.message"]
        assert context["__connect.errors.exception.stacktrace"].startswith(DATA_EXCEPTION + ": ")


def test_tolerance_none_with_a_dlq_fails_on_the_first_bad_record_and_writes_no_dlq(kafka_broker, spark, tmp_path):
    topic, dlq = unique("strict"), unique("strict_dlq")
    props = _props(tmp_path, topic, dlq, **{"errors.tolerance": "none"})
    _produce(kafka_broker.bootstrap, topic)

    with pytest.raises(ConnectException, match="offset: 1"):
        run_until_caught_up(props, kafka_broker.bootstrap, spark)

    assert dlq not in _topics(kafka_broker.bootstrap)


def test_the_dlq_topic_is_created_with_one_partition_and_a_capped_replication_factor(kafka_broker, caplog):
    dlq = unique("created_dlq")
    with caplog.at_level(logging.INFO, logger="connector.tolerance.dead_letters"):
        ensure_topic({"bootstrap.servers": kafka_broker.bootstrap}, dlq, 3)
        ensure_topic({"bootstrap.servers": kafka_broker.bootstrap}, dlq, 3)  # exists: nothing to do
    assert any("replication factor 1" in m and "fewer than" in m for m in caplog.messages)
    assert end_offsets({"bootstrap.servers": kafka_broker.bootstrap}, [(dlq, 0)]) == {(dlq, 0): 0}


def _dlq_end(bootstrap, dlq) -> int:
    if dlq not in _topics(bootstrap):
        return 0
    return end_offsets({"bootstrap.servers": bootstrap}, [(dlq, 0)])[(dlq, 0)]


def _topics(bootstrap) -> set[str]:
    from confluent_kafka.admin import AdminClient

    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics)


@pytest.mark.parametrize("headers,rerun_cycle", [(True, None), (False, None), (True, 3)],
                         ids=["context-headers", "content-identity", "smaller-cycles-on-re-run"])
def test_a_crash_after_the_dlq_writes_and_before_the_commit_sends_nothing_twice(kafka_broker, spark, tmp_path,
                                                                                monkeypatch, headers, rerun_cycle):
    """The re-run may also cut the crashed cycle into smaller ones (``icefloe.commit.max-records``
    lowered): the DLQ position recorded by its first commit stays before the DLQ records of source
    offsets that commit did not cover."""
    topic, dlq = unique("crash"), unique("crash_dlq")
    props = _props(tmp_path, topic, dlq, headers=headers)
    _produce(kafka_broker.bootstrap, topic)
    expected = [(k, v) for k, v, outcome in RECORDS if outcome is not None]

    def crash(*args, **kwargs):
        raise ConnectException("simulated crash before the Iceberg commit")

    with monkeypatch.context() as patch:
        patch.setattr(commit_module, "commit_table", crash)  # what commit_tables calls for each table
        with pytest.raises(ConnectException, match="simulated crash"):
            run_until_caught_up(props, kafka_broker.bootstrap, spark)
    assert [(r["key"], r["value"]) for r in _dlq_records(kafka_broker.bootstrap, dlq)] == expected

    rerun = props if rerun_cycle is None else {**props, "icefloe.commit.max-records": str(rerun_cycle)}
    run_until_caught_up(rerun, kafka_broker.bootstrap, spark)  # the re-run of the uncommitted cycle
    assert [(r["key"], r["value"]) for r in _dlq_records(kafka_broker.bootstrap, dlq)] == expected
    assert sorted(r["id"] for r in table_rows(props, "db.t")) == GOOD_IDS

    summary = _summary(props)
    assert json.loads(summary[f"icefloe.dlq.offsets.{dlq}.connect-{props['name']}"]) == {"0": len(expected)}

    # more records, a second cycle: only the new bad one is added
    produce(kafka_broker.bootstrap, topic, [b'{"id": 9, "n": 19}', b"{oops"], keys=[b"k9", b"k10"], partition=0)
    run_until_caught_up(props, kafka_broker.bootstrap, spark)
    assert [(r["key"], r["value"]) for r in _dlq_records(kafka_broker.bootstrap, dlq)] == \
        expected + [(b"k10", b"{oops")]
    assert sorted(r["id"] for r in table_rows(props, "db.t")) == GOOD_IDS + [9]


def _summary(props) -> dict[str, str]:
    from tests.integration.harness import load_table

    return load_table(props, "db.t").current_snapshot().summary.additional_properties


@pytest.mark.parametrize("headers", [True, False], ids=["context-headers", "content-identity"])
def test_a_task_that_died_during_its_dlq_writes_is_completed_not_repeated(kafka_broker, tmp_path, headers):
    """Part of a task's DLQ records were written when it died; its re-run writes only the rest."""
    from connector.config.sink_config import SinkConfig
    from connector.tolerance.dead_letters import DeadLetterQueue
    from connector.tolerance.errant import ErrantRecord

    topic, dlq = unique("partial"), unique("partial_dlq")
    props = _props(tmp_path, topic, dlq, headers=headers)
    config = SinkConfig.parse(props, {"bootstrap.servers": kafka_broker.bootstrap})
    records = [ErrantRecord(topic, 0, offset, 1_700_000_000_000 + offset, 1, b"k%d" % offset, b"{bad %d" % offset,
                            (("h", b"v"),), "VALUE_CONVERTER", "org.apache.kafka.connect.json.JsonConverter",
                            DATA_EXCEPTION, "bad", DATA_EXCEPTION)
               for offset in (3, 5, 8, 13)]
    records.append(records[-1].__class__(**{**records[-1].__dict__, "offset": 21}))  # same bytes, other offset

    catalog = load_catalog(props)
    first = DeadLetterQueue(config, f"{props['name']}-1-1-0", catalog)
    first.send(records[:2])
    first.flush()
    first.close()  # ... and the task dies here

    again = DeadLetterQueue(config, f"{props['name']}-1-1-0", catalog)  # the re-run of the same ranges
    again.send(records)
    again.flush()
    again.close()

    written = _dlq_records(kafka_broker.bootstrap, dlq)
    assert [(r["key"], r["value"]) for r in written] == [(r.key, r.value) for r in records]
    assert (again.sent, again.skipped) == (3, 2)


@pytest.mark.slow
def test_sigkill_during_streaming_with_dlq_traffic_keeps_table_and_dlq_exact(kafka_broker, tmp_path):
    """SIGKILL a streaming job with bad records flowing, at random moments; then finish: the table holds
    each good record once and the DLQ each bad one once."""
    import os
    import random
    import signal
    import subprocess
    import sys
    import time
    from collections import Counter

    from tests.integration.harness import produce_round_robin, write_config_file
    from tests.integration.test_crash_recovery import start_streaming_job

    rng = random.Random(4321)
    topic, dlq = unique("dlqkill"), unique("dlqkill_dlq")
    props = _props(tmp_path, topic, dlq, **{"iceberg.control.commit.interval-ms": "500", "tasks.max": "2",
                                            "errors.log.enable": "false"})
    config_file = write_config_file(tmp_path / "dlqkill.json", props)
    create_topic(kafka_broker.bootstrap, topic, partitions=3)
    produced, bad = 0, set()
    with open(tmp_path / "job.log", "wb") as log_file:
        for _ in range(4):
            values = []
            for i in range(produced, produced + 3000):
                if i % 50 == 7:
                    bad.add(i)
                    values.append(b'{"id": %d, "n": ' % i)
                else:
                    values.append(json.dumps({"id": i, "n": i}).encode())
            produce_round_robin(kafka_broker.bootstrap, topic, values, 3)
            produced += len(values)
            before = _dlq_end(kafka_broker.bootstrap, dlq)
            job = start_streaming_job(config_file, kafka_broker.bootstrap, log_file)
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and _dlq_end(kafka_broker.bootstrap, dlq) == before:
                time.sleep(0.1)  # until this run's first DLQ writes ...
            time.sleep(rng.uniform(0.0, 1.5))  # ... then kill around them and the commit that follows
            os.killpg(job.pid, signal.SIGKILL)
            job.wait(timeout=30)
    finish = subprocess.run(
        [sys.executable, "-m", "connector.cli", "run", str(config_file), "--bootstrap-servers",
         kafka_broker.bootstrap, "--until-caught-up", "--spark-conf", "spark.master=local[2]"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})
    assert finish.returncode == 0, finish.stderr[-3000:]

    counts = Counter(row["id"] for row in table_rows(props, "db.t"))
    assert {i for i, n in counts.items() if n > 1} == set()
    assert set(counts) == set(range(produced)) - bad
    dead = Counter(int(json.loads(b"[" + r["value"].split(b":")[1].split(b",")[0] + b"]")[0])
                   for r in _dlq_records(kafka_broker.bootstrap, dlq))
    assert {i for i, n in dead.items() if n > 1} == set(), "a bad record reached the DLQ twice"
    assert set(dead) == bad


# Tokens Kafka's JsonConverter refuses (to the DLQ), and ones it reads as other numbers than they look
# (to the table, as it reads them): the column-wise path must make the same decisions in every batch.
REFUSED = ["NaN", "-NaN", "Infinity", "-Infinity", "Inf"]
READ = {"007": 7.0, "-01.5": -1.5, "-0.0": 0.0, "1E+2": 100.0}
SLOT_TEXT = {"x": "{}", "other": "{}", "tags": "[0.5, {}]", "place": '{{"z": {}}}'}
SLOTS = list(SLOT_TEXT)


def _poisoned(count: int) -> tuple[list[bytes], dict[int, tuple], set[bytes]]:
    """Values with a refused or oddly read token every few records, in a slot that varies; the
    (x, tags, place.z) each landing id must have, as JsonConverter reads them; the refused values."""
    values, landing, refused = [], {}, set()
    tokens = REFUSED + list(READ)
    for i in range(count):
        fields = {"x": f"{1.5 + i}", "tags": "[0.5]", "place": '{"z": 0.25}'}
        token, slot = None, None
        if i % 7 == 3 and i >= 100:  # the first cycle creates the table (without "other", a key it ignores)
            token, slot = tokens[i % len(tokens)], SLOTS[(i // 7) % len(SLOTS)]
            fields[slot] = SLOT_TEXT[slot].format(token)
        body = ", ".join(f'"{key}": {text}' for key, text in fields.items())
        value = f'{{"id": {i}, "s": "r{i}", {body}}}'.encode()
        values.append(value)
        if token in REFUSED:
            refused.add(value)
        else:
            read = READ.get(token)  # type: ignore[arg-type]
            landing[i] = (read if slot == "x" and token else 1.5 + i,
                          [0.5, read] if slot == "tags" and token else [0.5],
                          {"z": read if slot == "place" and token else 0.25})
    return values, landing, refused


@pytest.mark.parametrize("transforms", [{}, {
    "transforms": "insert", "transforms.insert.type": "org.apache.kafka.connect.transforms.InsertField$Value",
    "transforms.insert.static.field": "source", "transforms.insert.static.value": "t"}], ids=["raw", "smt"])
def test_tokens_json_converter_refuses_go_to_the_dlq_from_every_batch(kafka_broker, spark, tmp_path, transforms):
    """~600 records over two partitions, read in cycles of 100 (so in many batches, the first one
    creating the table per record, the rest column-wise): every record with NaN or
    Infinity anywhere goes to the DLQ and none lands as a row; leading zeros and -0.0 land as
    JsonConverter reads them."""
    topic, dlq = unique("poison"), unique("poison_dlq")
    props = sink_props(unique("poison"), topic, "db.t", tmp_path, **{
        "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
        "icefloe.commit.max-records": "100", **transforms})
    create_topic(kafka_broker.bootstrap, topic, 2)
    values, landing, refused = _poisoned(600)
    for partition in (0, 1):
        produce(kafka_broker.bootstrap, topic, values[partition::2], partition=partition)

    run_until_caught_up(props, kafka_broker.bootstrap, spark)

    rows = table_rows(props, "db.t")
    assert sorted(r["id"] for r in rows) == sorted(landing)
    assert {r["id"]: (r["x"], r["tags"], r["place"]) for r in rows} == landing
    assert {r["value"] for r in _dlq_records(kafka_broker.bootstrap, dlq)} == refused
    assert len(_dlq_records(kafka_broker.bootstrap, dlq)) == len(refused)
