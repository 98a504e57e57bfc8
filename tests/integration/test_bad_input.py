"""Bad records fail the job, naming the record; nothing committed is lost or duplicated."""

from __future__ import annotations

import json

import pytest

from connector.api.errors import ConnectException
from tests.integration.harness import (
    produce_round_robin,
    run_until_caught_up,
    sink_props,
    table_rows,
    unique,
)
from tests.support.tansu import create_topic, produce

pytestmark = pytest.mark.integration


def test_malformed_json_names_topic_partition_offset_and_keeps_committed_rows(kafka_broker, spark, tmp_path):
    topic, table = unique("bad"), "db.bad"
    props = sink_props(unique("bad"), topic, table, tmp_path)
    create_topic(kafka_broker.bootstrap, topic)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(5)], 1)
    run_until_caught_up(props, kafka_broker.bootstrap, spark)
    produce(kafka_broker.bootstrap, topic, [b'{"id": 5}', b'{"id": 6', b'{"id": 7}'], partition=0)

    with pytest.raises(ConnectException) as failure:
        run_until_caught_up(props, kafka_broker.bootstrap, spark)

    message = str(failure.value)
    assert f"topic: {topic}" in message and "partition: 0" in message and "offset: 6" in message
    assert sorted(r["id"] for r in table_rows(props, table)) == list(range(5))


def test_a_value_that_is_not_an_object_is_rejected_with_its_offset(kafka_broker, spark, tmp_path):
    topic, table = unique("scalar"), "db.scalar"
    props = sink_props(unique("scalar"), topic, table, tmp_path)
    create_topic(kafka_broker.bootstrap, topic)
    produce(kafka_broker.bootstrap, topic, [b'{"id": 1}', b'42'], partition=0)

    with pytest.raises(ConnectException) as failure:
        run_until_caught_up(props, kafka_broker.bootstrap, spark)

    assert "offset: 1" in str(failure.value)


def test_tombstones_are_skipped_and_their_offsets_committed(kafka_broker, spark, tmp_path):
    topic, table = unique("tomb"), "db.tomb"
    props = sink_props(unique("tomb"), topic, table, tmp_path)
    create_topic(kafka_broker.bootstrap, topic)
    produce(kafka_broker.bootstrap, topic, [b'{"id": 1}', None, b'{"id": 2}', None], partition=0)

    run_until_caught_up(props, kafka_broker.bootstrap, spark)

    assert sorted(r["id"] for r in table_rows(props, table)) == [1, 2]
    from tests.integration.harness import snapshot_offsets

    assert snapshot_offsets(props, table)[f"{topic}.connect-{props['name']}"] == {"0": 4}


def test_a_malformed_json_key_fails_the_columnar_path_too(kafka_broker, spark, tmp_path):
    topic, table = unique("badkey"), "db.badkey"
    props = sink_props(unique("badkey"), topic, table, tmp_path, **{
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "false"})
    create_topic(kafka_broker.bootstrap, topic)
    produce(kafka_broker.bootstrap, topic, [b'{"id": 1}', b'{"id": 2}'], keys=[b'"k1"', b'{broken'], partition=0)

    with pytest.raises(ConnectException) as failure:
        run_until_caught_up(props, kafka_broker.bootstrap, spark)

    assert "key" in str(failure.value) and "offset: 1" in str(failure.value)
