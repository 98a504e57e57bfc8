"""The Schema Registry answering 500 for a while: a job with Avro values rides it out, the table exact."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter

import pytest

from tests.confluent import confluent_client, serialization_context
from tests.integration.harness import produce_round_robin, run_until_caught_up, sink_props, table_rows, unique
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration

OUTAGE_SECONDS = 8
SCHEMA = {"type": "record", "name": "Reading", "namespace": "faults",
          "fields": [{"name": "id", "type": "long"}, {"name": "v", "type": "string"}]}


def test_a_registry_answering_500_for_a_while_is_ridden_out(kafka_broker, spark, schema_registry, tmp_path,
                                                     caplog):
    from confluent_kafka.schema_registry.avro import AvroSerializer

    topic = unique("sr500")
    serializer = AvroSerializer(confluent_client(schema_registry.url), json.dumps(SCHEMA))
    values = [serializer({"id": i, "v": f"v{i}"}, serialization_context(topic)) for i in range(300)]
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, values, 2)
    props = sink_props(unique("sr500"), topic, "db.sr500", tmp_path, **{
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter.schema.registry.url": schema_registry.url,
        # the client gives up quickly, so the outage outlasts its own retries: the job's retries ride it out
        "value.converter.max.retries": "1", "value.converter.retries.wait.ms": "200",
        "icefloe.driver.max-records": "0",  # the tasks on Spark's executors, not in the driver
        "errors.retry.delay.max.ms": "1000", "icefloe.transient.retry-timeout-ms": "120000"})

    caplog.set_level(logging.WARNING, logger="connector.tolerance.transient")
    schema_registry.inject_failures(10 ** 9, 500)  # every request, until cleared
    healed = threading.Timer(OUTAGE_SECONDS, schema_registry.clear_failures)
    healed.start()
    began = time.monotonic()
    try:
        run_until_caught_up(props, kafka_broker.bootstrap, spark)
    finally:
        healed.cancel()
        schema_registry.clear_failures()
    assert time.monotonic() - began >= OUTAGE_SECONDS  # it did meet the outage (on the driver: the table's probe)
    assert any("A commit cycle failed" in r.getMessage() and "Schema Registry unavailable" in r.getMessage()
               for r in caplog.records), "the job's retries were not needed"
    assert Counter(row["id"] for row in table_rows(props, "db.sr500")) == Counter(range(300))

    # a new schema version while the registry fails again: now the tasks meet it, on the executors
    v2 = {**SCHEMA, "fields": [*SCHEMA["fields"], {"name": "w", "type": ["null", "long"], "default": None}]}
    serializer = AvroSerializer(confluent_client(schema_registry.url), json.dumps(v2))
    produce_round_robin(kafka_broker.bootstrap, topic, [serializer({"id": i, "v": f"v{i}", "w": i},
                                                                   serialization_context(topic))
                                                        for i in range(300, 500)], 2)
    caplog.clear()
    schema_registry.inject_failures(10 ** 9, 500)
    healed = threading.Timer(OUTAGE_SECONDS, schema_registry.clear_failures)
    healed.start()
    try:
        run_until_caught_up(props, kafka_broker.bootstrap, spark)
    finally:
        healed.cancel()
        schema_registry.clear_failures()
    assert any("A commit cycle failed" in r.getMessage() and "Schema Registry unavailable" in r.getMessage()
               for r in caplog.records), "the job's retries were not needed"
    assert Counter(row["id"] for row in table_rows(props, "db.sr500")) == Counter(range(500))
