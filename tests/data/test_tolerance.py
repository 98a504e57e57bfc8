"""errors.tolerance=all in the task pipeline: bad records are skipped and reported, the rest is written.

The property: for random batches with random bad rows, the tolerant columnar
strategies give the same table rows and the same errant records as the
tolerant per-record strategy, and a clean batch stays columnar.
"""

from __future__ import annotations

import json
import logging

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connector.data.decoder import RecordConversionFailed
from connector.data.strategy import COLUMNAR, PER_RECORD
from connector.tolerance.dead_letters import DeadLetterQueue, identity, producer_config
from connector.tolerance.errant import ErrantRecord
from tests.smt_batch.harness import raw_batch, run_pipeline, sink_props

TOLERANT = {"errors.tolerance": "all"}
INSERT = {"transforms": "ins", "transforms.ins.type": "org.apache.kafka.connect.transforms.InsertField$Value",
          "transforms.ins.static.field": "src", "transforms.ins.static.value": "k"}
CAST = {"transforms": "cast", "transforms.cast.type": "org.apache.kafka.connect.transforms.Cast$Value",
        "transforms.cast.spec": "n:int32"}

GOOD = [b'{"id": %d, "n": 5, "s": "x"}']
BAD_VALUES = {
    "malformed": b'{"id": 1, "n": ',
    "array": b'[1, 2, 3]',
    "scalar": b'42',
    "does not fit": b'{"id": 2, "n": "not a number", "s": "y"}',
    "boolean for a long": b'{"id": 3, "n": true, "s": "z"}',
    "deep": b'[' * 10_000 + b']' * 10_000,
    "deep object": b'{"a": ' * 10_000 + b'1' + b'}' * 10_000,
}


def _rows(tables) -> list:
    table = tables.get("db.t")
    return [] if table is None else sorted(json.dumps(r, sort_keys=True, default=str) for r in table.to_pylist())


def _errant(pipeline) -> list[tuple]:
    return sorted((r.offset, r.stage, r.executing_class, r.exception_class, r.value)
                  for r in pipeline.take_errant())


def _seed_table(tmp_path, extra):
    """A table with id, n (long) and s (string) columns, so a value can fail to fit its column."""
    props = {**sink_props(tmp_path), **extra}
    run_pipeline(props, [raw_batch([b'{"id": 0, "n": 1, "s": "a"}'], first_offset=10_000)], columnar=False)
    return props


def _values(kinds: list[str | None]) -> list[bytes]:
    return [BAD_VALUES[k] if k else b'{"id": %d, "n": %d, "s": "v%d"}' % (i, i, i) for i, k in enumerate(kinds)]


def test_bad_records_are_skipped_and_reported_with_their_stage(tmp_path):
    props = _seed_table(tmp_path, TOLERANT)
    kinds = [None, "malformed", None, "array", "does not fit", None, "scalar", None]
    tables, pipeline = run_pipeline(props, [raw_batch(_values(kinds))], columnar=True)

    assert sorted(r["id"] for r in tables["db.t"].to_pylist()) == [0, 2, 5, 7]
    errant = pipeline.take_errant()
    assert [(r.offset, r.stage) for r in errant] == [
        (1, "VALUE_CONVERTER"), (3, "TASK_PUT"), (4, "TASK_PUT"), (6, "TASK_PUT")]
    first = errant[0]
    assert isinstance(first, ErrantRecord) and first.value == BAD_VALUES["malformed"]
    assert first.executing_class == "org.apache.kafka.connect.json.JsonConverter"
    assert first.exception_class == "org.apache.kafka.connect.errors.DataException"
    assert errant[1].executing_class == "org.apache.kafka.connect.sink.SinkTask"
    assert any(k.startswith("screened: ") for k in pipeline.batches)


def test_tolerance_none_still_fails_naming_the_record(tmp_path):
    props = _seed_table(tmp_path, {})
    with pytest.raises(RecordConversionFailed, match="offset: 1"):
        run_pipeline(props, [raw_batch(_values([None, "malformed"]))], columnar=True)


def test_a_failing_smt_is_a_transformation_error(tmp_path):
    props = {**sink_props(tmp_path), **TOLERANT, **CAST}
    batch = raw_batch([b'{"id": 1, "n": "7"}', b'{"id": 2, "n": "seven"}', b'{"id": 3, "n": 8}'])
    tables, pipeline = run_pipeline(props, [batch], columnar=True)
    assert sorted(r["id"] for r in tables["db.t"].to_pylist()) == [1, 3]
    [errant] = pipeline.take_errant()
    assert (errant.offset, errant.stage) == (1, "TRANSFORMATION")
    assert errant.executing_class == "org.apache.kafka.connect.transforms.Cast$Value"


def test_log_reporter_text(tmp_path, caplog):
    props = {**sink_props(tmp_path), **TOLERANT, "errors.log.enable": "true",
             "errors.log.include.messages": "true"}
    with caplog.at_level(logging.ERROR, logger="connector.tolerance.errant"):
        run_pipeline(props, [raw_batch([b'{"id": 1}', b'{oops'], timestamps=[5, 6])], columnar=True)
    assert ("Error encountered in task smt-batch-0. Executing stage 'VALUE_CONVERTER' with class "
            "'org.apache.kafka.connect.json.JsonConverter', where consumed record is {topic='orders', "
            "partition=0, offset=1, timestamp=6, timestampType=CreateTime}.") in caplog.messages


def test_a_clean_batch_stays_columnar_with_tolerance(tmp_path):
    props = _seed_table(tmp_path, TOLERANT)
    _, pipeline = run_pipeline(props, [raw_batch(_values([None] * 50))], columnar=True)
    assert dict(pipeline.batches) == {COLUMNAR: 1}


def test_one_percent_bad_is_screened_not_per_record_as_a_whole(tmp_path):
    props = _seed_table(tmp_path, TOLERANT)
    kinds = ["malformed" if i % 100 == 7 else None for i in range(2000)]
    tables, pipeline = run_pipeline(props, [raw_batch(_values(kinds))], columnar=True)
    assert len(tables["db.t"]) == 2000 - 20
    assert len(pipeline.take_errant()) == 20
    assert pipeline.batches[COLUMNAR] == 1 and pipeline.batches[PER_RECORD] == 1  # the 20 bad rows only


KIND = st.one_of(st.none(), st.none(), st.none(), st.sampled_from(sorted(BAD_VALUES)))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kinds=st.lists(KIND, min_size=1, max_size=400), smt=st.booleans())
def test_tolerant_columnar_equals_tolerant_per_record(tmp_path_factory, kinds, smt):
    outcomes = []
    for columnar in (False, True):
        root = tmp_path_factory.mktemp("tol")
        props = _seed_table(root, {**TOLERANT, **(INSERT if smt else {})})
        tables, pipeline = run_pipeline(props, [raw_batch(_values(kinds))], columnar=columnar)
        outcomes.append((_rows(tables), _errant(pipeline)))
    assert outcomes[0] == outcomes[1]
    bad = sum(1 for k in kinds if k)
    assert len(outcomes[0][1]) == bad
    assert len(outcomes[0][0]) == len(kinds) - bad


def test_bad_rows_in_an_avro_free_table_are_not_written_twice(tmp_path):
    """A record routed to two tables that fails in one is written to neither."""
    props = {**sink_props(tmp_path), **TOLERANT, "iceberg.tables": "db.a,db.b"}
    batch = raw_batch([b'{"id": 1, "n": 1}', b'{"id": 2, "n": 2}'])
    run_pipeline(props, [batch], columnar=False)
    from connector.data.catalog import load_catalog
    load_catalog(props).load_table("db.b")  # both exist
    tables, pipeline = run_pipeline(props, [raw_batch([b'{"id": 3, "n": 3}', b'{"id": 4, "n": "x"}'],
                                                      first_offset=2)], columnar=False)
    assert pa.concat_tables([tables["db.a"]]).column("id").to_pylist() == [3]
    assert tables["db.b"].column("id").to_pylist() == [3]
    assert [r.offset for r in pipeline.take_errant()] == [3]


def test_a_header_that_its_converter_rejects_is_a_header_converter_error(tmp_path):
    props = {**sink_props(tmp_path), **TOLERANT,
             "header.converter": "org.apache.kafka.connect.json.JsonConverter",
             "header.converter.schemas.enable": "false"}
    batch = raw_batch([b'{"id": 1}', b'{"id": 2}'], headers=[[("h", b'"ok"')], [("h", b"{bad")]])
    tables, pipeline = run_pipeline(props, [batch], columnar=True)
    assert tables["db.t"].column("id").to_pylist() == [1]
    [errant] = pipeline.take_errant()
    assert (errant.offset, errant.stage, errant.headers) == (1, "HEADER_CONVERTER", (("h", b"{bad"),))
    assert errant.executing_class == "org.apache.kafka.connect.json.JsonConverter"


def test_dlq_producer_settings_and_context_headers(tmp_path):
    from connector.config.sink_config import SinkConfig
    from connector.tolerance.errant import ErrantRecord

    props = {**sink_props(tmp_path), **TOLERANT, "errors.deadletterqueue.topic.name": "dlq",
             "errors.deadletterqueue.context.headers.enable": "true", "producer.override.linger.ms": "7",
             "producer.override.compression.type": "zstd"}
    config = SinkConfig.parse(props, {"bootstrap.servers": "localhost:1", "producer.acks": "1"})
    conf = producer_config(config, "smt-batch-3-1-2")
    assert conf["client.id"] == "connector-dlq-producer-smt-batch-2"
    assert (conf["linger.ms"], conf["compression.type"], conf["acks"]) == ("7", "zstd", "1")
    data_exception = "org.apache.kafka.connect.errors.DataException"
    record = ErrantRecord("orders", 4, 17, 5, 1, b"k", b"{", (("a", b"1"),), "VALUE_CONVERTER",
                          "org.apache.kafka.connect.json.JsonConverter", data_exception, None, data_exception)
    headers = DeadLetterQueue(config, "smt-batch-3-1-2").headers(record)
    assert headers == [
        ("a", b"1"), ("__connect.errors.topic", b"orders"), ("__connect.errors.partition", b"4"),
        ("__connect.errors.offset", b"17"), ("__connect.errors.connector.name", b"smt-batch"),
        ("__connect.errors.task.id", b"2"), ("__connect.errors.stage", b"VALUE_CONVERTER"),
        ("__connect.errors.class.name", b"org.apache.kafka.connect.json.JsonConverter"),
        ("__connect.errors.exception.class.name", b"org.apache.kafka.connect.errors.DataException"),
        ("__connect.errors.exception.message", None),
        ("__connect.errors.exception.stacktrace", b"org.apache.kafka.connect.errors.DataException"),
    ]
    assert identity(headers, b"k", b"{", 5, "smt-batch") == ("source", "orders", 4, 17)
    assert identity(headers, b"k", b"{", 5, "other")[0] == "other connector"
    assert identity(headers[:1], b"k", b"{", 5, "smt-batch") == identity(headers[:1], b"k", b"{", 6, "smt-batch")
    assert identity(headers[:1], b"k", b"{", 5, "smt-batch") != identity([], b"k", b"{", 5, "smt-batch")


POISON = {
    "malformed JSON": b'{"id": 1, "n": ',
    "a JSON array where an object is expected": b"[1, 2]",
    "a JSON scalar": b'"text"',
    "invalid UTF-8 in a string": b'{"id": 1, "s": "\xff\xfe"}',
    "invalid UTF-8 outside strings": b'{"id": 1, "n": \xff}',
    "JSON nested 10,000 levels (arrays)": b"[" * 10_000 + b"]" * 10_000,
    "JSON nested 10,000 levels (objects)": b'{"a": ' * 10_000 + b"1" + b"}" * 10_000,
    "a number out of range for its long column": b'{"id": 1, "n": 1e300}',
    "a boolean for a long column": b'{"id": 1, "n": true}',
    "a string for a long column": b'{"id": 1, "n": "x"}',
}


@pytest.mark.parametrize("case", list(POISON))
@pytest.mark.parametrize("columnar", [True, False], ids=["columnar", "per-record"])
def test_poison_fails_naming_the_record_or_is_skipped_with_tolerance(tmp_path, case, columnar):
    values = [b'{"id": 10, "n": 1}', POISON[case], b'{"id": 12, "n": 3}']
    strict = _seed_table(tmp_path / "none", {})
    with pytest.raises(Exception, match="offset: 1") as failure:
        run_pipeline(strict, [raw_batch(values)], columnar=columnar)
    assert "Recursion" not in type(failure.value).__name__

    tolerant = _seed_table(tmp_path / "all", TOLERANT)
    tables, pipeline = run_pipeline(tolerant, [raw_batch(values)], columnar=columnar)
    assert tables["db.t"].column("id").to_pylist() == [10, 12]
    assert [r.offset for r in pipeline.take_errant()] == [1]


def test_a_10_mb_record_is_written(tmp_path):
    props = _seed_table(tmp_path, TOLERANT)
    big = b'{"id": 1, "n": 1, "s": "' + b"x" * 10_000_000 + b'"}'
    tables, pipeline = run_pipeline(props, [raw_batch([big, b'{"id": 2, "n": 2, "s": "y"}'])], columnar=True)
    assert tables["db.t"].column("id").to_pylist() == [1, 2]
    assert len(tables["db.t"].column("s")[0].as_py()) == 10_000_000
    assert pipeline.take_errant() == []


class FlakyConverter:
    """A schemaless JSON value converter whose value ``{"id": 2}`` fails transiently twice (a user plugin)."""

    failures = 0

    def configure(self, configs, is_key=False):
        pass

    def to_connect_data(self, topic, data, headers=None):
        from connector.api.errors import RetriableException
        from connector.api.record import SchemaAndValue

        if data == b'{"id": 2}' and FlakyConverter.failures < 2:
            FlakyConverter.failures += 1
            raise RetriableException("the service behind the converter is away")
        return SchemaAndValue(None, None if data is None else json.loads(data))

    def from_connect_data(self, topic, schema, value, headers=None):
        return json.dumps(value).encode()


@pytest.mark.parametrize("timeout,outcome", [("5000", "written"), ("0", "fails")])
def test_transient_converter_errors_are_retried_for_errors_retry_timeout_then_fail(tmp_path, timeout, outcome):
    from connector.api.errors import ConnectException

    FlakyConverter.failures = 0
    props = {**sink_props(tmp_path), **TOLERANT, "value.converter": "tests.data.test_tolerance:FlakyConverter",
             "errors.retry.timeout": timeout, "errors.retry.delay.max.ms": "100"}
    batch = raw_batch([b'{"id": 1}', b'{"id": 2}'])
    if outcome == "fails":  # never tolerated: not the record's fault
        with pytest.raises(ConnectException, match="offset: 1.*away"):
            run_pipeline(props, [batch], columnar=True)
        return
    tables, pipeline = run_pipeline(props, [batch], columnar=True)
    assert tables["db.t"].column("id").to_pylist() == [1, 2]
    assert pipeline.take_errant() == [] and FlakyConverter.failures == 2


def test_retry_policy_backs_off_and_gives_up_after_the_timeout():
    from connector.api.errors import RetriableException
    from connector.tolerance.errant import RetryPolicy

    pauses: list[float] = []

    def always_fails():
        raise RetriableException("down")

    with pytest.raises(RetriableException):
        RetryPolicy(timeout_ms=50, max_delay_ms=1_000).run(always_fails, sleep=pauses.append)
    assert pauses and all(0 <= p <= 0.05 for p in pauses)  # never beyond the time left
    assert RetryPolicy().run(lambda: 7) == 7
    with pytest.raises(ValueError):  # not transient: no retry
        RetryPolicy(timeout_ms=10_000).run(lambda: int("x"), sleep=pauses.append)


def _timestamp_envelope(ts: int) -> bytes:
    return json.dumps({"schema": {"type": "struct", "fields": [
        {"field": "id", "type": "int64"},
        {"field": "ts", "type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "optional": True}]},
        "payload": {"id": ts, "ts": ts}}).encode()


@pytest.mark.parametrize("columnar", [True, False], ids=["columnar", "per-record"])
def test_a_timestamp_out_of_range_fails_naming_the_record_or_goes_to_the_errant_records(tmp_path, columnar):
    values = [_timestamp_envelope(5), _timestamp_envelope(2**63 - 1), _timestamp_envelope(6)]
    for tolerance in ("none", "all"):
        props = {**sink_props(tmp_path / tolerance), "value.converter.schemas.enable": "true",
                 "errors.tolerance": tolerance}
        run_pipeline(props, [raw_batch([_timestamp_envelope(1000)], first_offset=10_000)], columnar=False)
        if tolerance == "none":
            with pytest.raises(Exception, match="offset: 1.*outside"):
                run_pipeline(props, [raw_batch(values)], columnar=columnar)
            continue
        tables, pipeline = run_pipeline(props, [raw_batch(values)], columnar=columnar)
        assert tables["db.t"].column("id").to_pylist() == [5, 6]
        assert [r.offset for r in pipeline.take_errant()] == [1]
