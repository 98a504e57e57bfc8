"""Bad Schema Registry input fails the job naming topic, partition, offset and what was expected.

Covered: a schema id the registry does not know, a wrong magic byte, a payload
that does not match its schema, a JSON envelope without ``schema``/``payload``,
and an unreachable registry (retried with backoff, then a clear error). In
every case what was committed before stays exactly as it was, and a rerun once
the cause is fixed neither loses nor duplicates a record.
"""

from __future__ import annotations

import json
import socket
import struct

import pytest

from connector.api.errors import ConnectException
from tests.integration.harness import load_table, run_until_caught_up, sink_props, table_rows, unique
from tests.integration.test_registry_evolution import avro_serialize, registry_config
from tests.support.tansu import create_topic, produce

pytestmark = pytest.mark.integration

SCHEMA = {"type": "record", "name": "Event", "namespace": "bad", "fields": [
    {"name": "id", "type": "long"}, {"name": "label", "type": "string"}]}


def events(url: str, topic: str, ids) -> list[bytes]:
    return avro_serialize(url, SCHEMA, topic, [{"id": i, "label": f"l{i}"} for i in ids])


def envelope(i: int) -> bytes:
    schema = {"type": "struct", "optional": False, "fields": [{"type": "int64", "optional": False, "field": "id"}]}
    return json.dumps({"schema": schema, "payload": {"id": i}}).encode()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _unknown_schema_id(good: bytes) -> bytes:
    return b"\x00" + struct.pack(">i", 987_654) + good[5:]


def _wrong_magic_byte(good: bytes) -> bytes:
    return b"\x07" + good[1:]


def _payload_not_matching_schema(good: bytes) -> bytes:
    return good[:5] + b"\xff" * 12


CASES = {
    "unknown schema id": (_unknown_schema_id, "Schema 987654 not found"),
    "wrong magic byte": (_wrong_magic_byte, "Unknown magic byte! Expected 0 (schema id) or 1 (schema GUID)"),
    "payload not matching its schema": (_payload_not_matching_schema, "does not match schema"),
    "JSON envelope without schema/payload": (None, 'requires "schema" and "payload" fields'),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_value_fails_naming_the_record_and_keeps_what_was_committed(
        case, kafka_broker, spark, schema_registry, tmp_path):
    corrupt, expected = CASES[case]
    topic = unique("badreg")
    if corrupt is None:
        props = sink_props(unique("badjson"), topic, "db.badjson", tmp_path,
                           **{"value.converter.schemas.enable": "true"})
        first, good, bad = [envelope(i) for i in range(5)], [envelope(5), envelope(7)], b'{"id": 6}'
    else:
        props = registry_config("avro-schema-registry", schema_registry.url, topic, tmp_path)
        values = events(schema_registry.url, topic, range(8))
        first, good, bad = values[:5], [values[5], values[7]], corrupt(values[6])
    table = props["iceberg.tables"]
    create_topic(kafka_broker.bootstrap, topic)
    produce(kafka_broker.bootstrap, topic, first, partition=0)
    run_until_caught_up(props, kafka_broker.bootstrap, spark)
    committed = load_table(props, table).metadata.current_snapshot_id
    produce(kafka_broker.bootstrap, topic, [good[0], bad, good[1]], partition=0)

    with pytest.raises(ConnectException) as failure:
        run_until_caught_up(props, kafka_broker.bootstrap, spark)

    message = str(failure.value)
    assert f"topic: {topic}, partition: 0, offset: 6" in message, message
    assert expected in message, message
    assert load_table(props, table).metadata.current_snapshot_id == committed
    assert sorted(r["id"] for r in table_rows(props, table)) == list(range(5))


def test_unreachable_registry_is_retried_then_named_and_a_rerun_is_exact(
        kafka_broker, spark, schema_registry, tmp_path):
    topic = unique("noreg")
    props = registry_config("avro-schema-registry", schema_registry.url, topic, tmp_path)
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce(kafka_broker.bootstrap, topic, events(schema_registry.url, topic, range(0, 10)), partition=0)
    run_until_caught_up(props, kafka_broker.bootstrap, spark)
    produce(kafka_broker.bootstrap, topic, events(schema_registry.url, topic, range(10, 15)), partition=0)
    produce(kafka_broker.bootstrap, topic, events(schema_registry.url, topic, range(15, 20)), partition=1)
    down = f"http://127.0.0.1:{closed_port()}"
    broken = {**props, "value.converter.schema.registry.url": down,
              "value.converter.max.retries": "2", "value.converter.retries.wait.ms": "200",
              "icefloe.transient.retry-timeout-ms": "1000"}  # the job's own re-runs: give up soon

    with pytest.raises(ConnectException) as failure:
        run_until_caught_up(broken, kafka_broker.bootstrap, spark)

    message = str(failure.value)
    assert "on a transient error, beyond icefloe.transient.retry-timeout-ms=1000" in message, message
    assert "Schema Registry unavailable while fetching schema" in message, message
    assert f"no answer from {down} after 3 attempt(s)" in message, message
    assert f"topic: {topic}, partition: " in message and "offset: " in message, message
    assert sorted(r["id"] for r in table_rows(props, props["iceberg.tables"])) == list(range(10))

    run_until_caught_up(props, kafka_broker.bootstrap, spark)  # the registry is reachable again

    assert sorted(r["id"] for r in table_rows(props, props["iceberg.tables"])) == list(range(20))


def test_with_tolerance_bad_registry_values_go_to_the_dlq_and_the_good_ones_to_the_table(
        kafka_broker, spark, schema_registry, tmp_path):
    from tests.integration.test_dead_letter_queue import _dlq_records

    topic, dlq = unique("tolreg"), unique("tolreg_dlq")
    props = registry_config("avro-schema-registry", schema_registry.url, topic, tmp_path, **{
        "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.context.headers.enable": "true"})
    values = events(schema_registry.url, topic, range(300))
    bad = {40: _wrong_magic_byte(values[40]), 41: _unknown_schema_id(values[41]),
           250: _payload_not_matching_schema(values[250]), 251: b"\x00\x00"}
    create_topic(kafka_broker.bootstrap, topic)
    produce(kafka_broker.bootstrap, topic, [bad.get(i, v) for i, v in enumerate(values)], partition=0)

    run_until_caught_up(props, kafka_broker.bootstrap, spark)

    assert sorted(r["id"] for r in table_rows(props, props["iceberg.tables"])) == \
        [i for i in range(300) if i not in bad]
    dlq_rows = _dlq_records(kafka_broker.bootstrap, dlq)
    assert [r["value"] for r in dlq_rows] == [bad[i] for i in sorted(bad)]
    stages = [{h["key"]: h["value"] for h in r["headers"]}[b"__connect.errors.stage".decode()] for r in dlq_rows]
    assert stages == [b"VALUE_CONVERTER"] * len(bad)


def test_with_tolerance_an_unreachable_registry_still_fails_the_job(kafka_broker, spark, schema_registry, tmp_path):
    topic = unique("tolnoreg")
    props = registry_config("avro-schema-registry", schema_registry.url, topic, tmp_path,
                            **{"errors.tolerance": "all"})
    create_topic(kafka_broker.bootstrap, topic)
    produce(kafka_broker.bootstrap, topic, events(schema_registry.url, topic, range(5)), partition=0)
    broken = {**props, "value.converter.schema.registry.url": f"http://127.0.0.1:{closed_port()}",
              "value.converter.max.retries": "1", "value.converter.retries.wait.ms": "100",
              "icefloe.transient.retry-timeout-ms": "1000"}  # the job's own re-runs: give up soon

    with pytest.raises(ConnectException, match="Schema Registry unavailable"):
        run_until_caught_up(broken, kafka_broker.bootstrap, spark)
