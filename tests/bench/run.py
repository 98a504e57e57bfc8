"""``make bench``: throughput of icefloe against a raw confluent-kafka baseline, in one run.

Figures are reported as ratios to the baseline measured in the same run on the
same machine (this machine is shared and noisy; absolute numbers drift).

Scenarios, each over the same topic of small JSON records in 4 partitions:
  raw        confluent-kafka consumption of the whole topic (tuned librdkafka), as a script of
             its own (tests/bench/raw_consume.py)
  hand-rolled  a single process a user writes by hand: consumer → pyarrow.json → pyiceberg
             append every 100,000 records (tests/bench/hand_rolled.py), as a script of its own,
             its rate from assignment to the last append
             (both baselines run in processes of their own, as a user runs them: in the bench's
             process, which holds a Spark session and the sample records, Python's cyclic GC
             walks a far larger heap for every batch of consumed records, and raw consume ran
             there at ~0.55 x the rate it reaches on its own)
  icefloe    `--until-caught-up` into a fresh table, no SMTs (columnar path), timed with the maintenance
             round at its end; `icefloe ingestion only` is the same runs without that round, and
             `icefloe cycles only` the same runs from the start of the first cycle to the end of the
             last (timed as the baselines are: from their assignment to their last append)
  smt3       the same with three common SMTs (InsertField, ReplaceField, MaskField),
             on the columnar path with batch SMTs (checked before measuring)
  avro       the same records as Confluent Avro through the test Schema Registry
             (columnar Avro strategy, checked before measuring), in a topic of their own
  avro-smt3  the Avro topic through the smt3 chain (columnar Avro with batch SMTs: the path is
             checked before measuring, and one task's pipeline over a slice of the values must
             take every batch column-wise after the table exists)
  json-schemas  the same records as JsonConverter envelopes (`schemas.enable=true`; columnar
             JSON with schemas strategy, checked before measuring), in a topic of their own
  json-schema  the same records as Confluent JSON Schema values through the test Schema Registry
             (columnar JSON Schema strategy, checked before measuring), in a topic of their own
  protobuf   the same records as Confluent Protobuf values through the test Schema Registry
             (columnar Protobuf strategy: the path is checked before measuring, and one task's
             pipeline over a slice of the values must take every batch column-wise after the
             table exists), in a topic of their own
  cli        what a user times: `icefloe run --until-caught-up` as a new process, from the
             command to its exit, on the JSON and the Avro topic and on a topic of 1,000
             records (the fixed cost), with the peak memory of its process tree; and the
             hand-rolled pipeline run as a script of its own, timed the same way (`cli hand-rolled`)
  cluster    the `cli json` run on a Spark standalone cluster on loopback (a master and one
             worker with 2 cores), against the same run on local[*]
  latency    continuous mode (`icefloe run`, commit interval 2 s) while 2,000 records/s
             arrive: time to the first visible commit, record-to-visible latency p50/p95
  tolerance-e2e  `--until-caught-up` with ``errors.tolerance=all`` and a dead letter queue, on the
             clean topic and on a copy with every 100th value malformed (1 %), against ``icefloe``
  tolerance-clean, tolerance-1pct
             one task's pipeline (no Kafka, no Spark, warm, like ``pipeline``) with
             ``errors.tolerance=all``: on the clean records, and on the same records with every
             100th value malformed JSON (1 %), against the same pipeline with ``errors.tolerance=none``
             on the clean records; the 1 % run checks that the good rows went column-wise
             (screened batches) and that exactly the bad rows were reported
  maintenance  streaming-sized commits with and without table maintenance, Kafka- and
             Spark-free (tests/bench/maintenance.py): files, metadata size, scan time against
             the same rows in one batch, commit latency p50/p99

``icefloe`` and ``smt3`` run ``ICEFLOE_BENCH_REPEAT`` times each, interleaved
(so drift hits both alike); medians are reported, and the SMT cost is
``1 - smt3 / icefloe``. A second, Kafka- and Spark-free measurement feeds the
same records as raw Arrow batches straight into one task's pipeline
(``TaskPipeline.process``, Parquet files included), which isolates what the
SMTs cost from broker and scheduling noise; it also times the per-record path
on a slice of the records for comparison.

Environment: ICEFLOE_BENCH_RECORDS (default 1000000), ICEFLOE_BENCH_ONLY
(comma list of raw, hand-rolled, icefloe, smt3, avro, avro-smt3, json-schemas, json-schema, protobuf, cli, cluster,
latency,
pipeline, tolerance-e2e, tolerance-clean, tolerance-1pct, maintenance), ICEFLOE_BENCH_MAINT_COMMITS
(default 1800), ICEFLOE_BENCH_MAINT_ROWS (default 500),
ICEFLOE_BENCH_REPEAT (default 3).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from tests.support.schema_registry import SchemaRegistryServer
from tests.support.tansu import TansuBroker, create_topic, produce

RECORDS = int(os.environ.get("ICEFLOE_BENCH_RECORDS", "1000000"))
REPEAT = int(os.environ.get("ICEFLOE_BENCH_REPEAT", "3"))
PARTITIONS = 4
BATCH = 50_000  # the task's read batch size
WORK = Path("bench-work")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"

SMT3 = {
    "transforms": "insert,rename,mask",
    "transforms.insert.type": "org.apache.kafka.connect.transforms.InsertField$Value",
    "transforms.insert.static.field": "source",
    "transforms.insert.static.value": "bench",
    "transforms.rename.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
    "transforms.rename.renames": "name:customer",
    "transforms.mask.type": "org.apache.kafka.connect.transforms.MaskField$Value",
    "transforms.mask.fields": "amount",
}


def sample_values(count: int) -> list[bytes]:
    """~93-byte JSON objects, like the prototype's."""
    return [json.dumps({"id": i, "name": f"user-{i % 1000:04d}", "ts": 1_700_000_000_000 + i,
                        "amount": (i % 10000) / 100, "active": i % 2 == 0}).encode() for i in range(count)]


def props_for(name: str, topic: str, extra: dict[str, str] | None = None, work: Path = WORK) -> dict[str, str]:
    work = (work / name).resolve()
    work.mkdir(parents=True, exist_ok=True)
    return {
        "name": name, "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
        "tasks.max": "4", "topics": topic,
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "iceberg.tables": f"bench.{name}", "iceberg.tables.auto-create-enabled": "true",
        "iceberg.catalog.type": "sql", "iceberg.catalog.uri": f"sqlite:///{work}/catalog.db",
        "iceberg.catalog.warehouse": f"file://{work}/warehouse", **(extra or {}),
    }


AVRO_SCHEMA = {"type": "record", "name": "Sample", "namespace": "bench", "fields": [
    {"name": "id", "type": "long"}, {"name": "name", "type": "string"}, {"name": "ts", "type": "long"},
    {"name": "amount", "type": "double"}, {"name": "active", "type": "boolean"}]}


def avro_values(registry_url: str, topic: str, count: int) -> list[bytes]:
    """The sample records as Confluent-framed Avro (the schema registered under ``<topic>-value``)."""
    import io

    import fastavro
    import requests

    answer = requests.post(f"{registry_url}/subjects/{topic}-value/versions",
                           json={"schema": json.dumps(AVRO_SCHEMA)}, timeout=10)
    answer.raise_for_status()
    frame = b"\x00" + answer.json()["id"].to_bytes(4, "big")
    parsed = fastavro.parse_schema(AVRO_SCHEMA)
    out = []
    for value in sample_values(count):
        body = io.BytesIO()
        fastavro.schemaless_writer(body, parsed, json.loads(value))
        out.append(frame + body.getvalue())
    return out


ENVELOPE_SCHEMA = {"type": "struct", "optional": False, "fields": [
    {"type": "int64", "optional": False, "field": "id"}, {"type": "string", "optional": False, "field": "name"},
    {"type": "int64", "optional": False, "field": "ts"}, {"type": "double", "optional": False, "field": "amount"},
    {"type": "boolean", "optional": False, "field": "active"}]}


def envelope_values(values: list[bytes]) -> list[bytes]:
    """The sample records in JsonConverter envelopes, as Kafka's JsonConverter writes them."""
    head = b'{"schema":' + json.dumps(ENVELOPE_SCHEMA, separators=(",", ":")).encode() + b',"payload":'
    return [head + value + b"}" for value in values]


JSON_SCHEMA = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "bench.Sample", "type": "object",
               "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "ts": {"type": "integer"},
                              "amount": {"type": "number"}, "active": {"type": "boolean"}},
               "required": ["id", "name", "ts", "amount", "active"]}


def json_schema_values(registry_url: str, topic: str, values: list[bytes]) -> list[bytes]:
    """The sample records as Confluent JSON Schema values (the schema registered under ``<topic>-value``)."""
    import requests

    answer = requests.post(f"{registry_url}/subjects/{topic}-value/versions",
                           json={"schema": json.dumps(JSON_SCHEMA), "schemaType": "JSON"}, timeout=10)
    answer.raise_for_status()
    frame = b"\x00" + answer.json()["id"].to_bytes(4, "big")
    return [frame + value for value in values]


def protobuf_values(registry_url: str, topic: str, count: int) -> list[bytes]:
    """The sample records as Confluent Protobuf values, written by confluent-kafka's ProtobufSerializer
    (``bench.Sample``: id int64, name string, ts int64, amount double, active bool)."""
    import warnings

    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # confluent_kafka.schema_registry's import warns about authlib's httpx
        from confluent_kafka.schema_registry import SchemaRegistryClient
        from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    kinds = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="bench/sample.proto", package="bench", syntax="proto3")
    message = file.message_type.add(name="Sample")
    for number, (name, kind) in enumerate((("id", kinds.TYPE_INT64), ("name", kinds.TYPE_STRING),
                                           ("ts", kinds.TYPE_INT64), ("amount", kinds.TYPE_DOUBLE),
                                           ("active", kinds.TYPE_BOOL)), 1):
        message.field.add(name=name, number=number, type=kind, label=kinds.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    sample = message_factory.GetMessageClass(pool.FindMessageTypeByName("bench.Sample"))
    serializer = ProtobufSerializer(sample, SchemaRegistryClient({"url": registry_url}),
                                    {"use.deprecated.format": False})
    context = SerializationContext(topic, MessageField.VALUE)
    return [serializer(sample(**json.loads(value)), context) for value in sample_values(count)]


def protobuf_props(name: str, topic: str, registry_url: str) -> dict[str, str]:
    return props_for(name, topic, {"value.converter": "io.confluent.connect.protobuf.ProtobufConverter",
                                   "value.converter.schema.registry.url": registry_url})


def json_schema_props(name: str, topic: str, registry_url: str) -> dict[str, str]:
    return props_for(name, topic, {"value.converter": "io.confluent.connect.json.JsonSchemaConverter",
                                   "value.converter.schema.registry.url": registry_url})


def envelope_props(name: str, topic: str) -> dict[str, str]:
    return props_for(name, topic, {"value.converter.schemas.enable": "true"})


def avro_props(name: str, topic: str, registry_url: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    return props_for(name, topic, {"value.converter": "io.confluent.connect.avro.AvroConverter",
                                   "value.converter.schema.registry.url": registry_url, **(extra or {})})


def check_path(props: dict[str, str], expected: str) -> None:
    """Fail unless a task of this config takes the ``expected`` path (decided from the config alone)."""
    from connector.config.sink_config import SinkConfig
    from connector.task import new_pipeline

    pipeline = new_pipeline(SinkConfig.parse(props, {"bootstrap.servers": "unused:9092"}), "bench-check")
    if pipeline.path != expected:
        raise SystemExit(f"{props['name']}: expected the {expected} path, the task would take {pipeline.path}")


def check_columnar(props: dict[str, str], batches: list[pa.RecordBatch], expected: str) -> None:
    """Fail unless one task's pipeline takes every batch column-wise by ``expected`` once the table exists."""
    pipeline_rate(props, batches, columnar=True, expected_path=expected)


def run_icefloe(spark, bootstrap: str, props: dict[str, str], expected: int | None = None,
                ingestion: list[float] | None = None, cycles: list[float] | None = None) -> float:
    """Records/s of the whole run, as a user times it (the maintenance round at its end included).

    ``ingestion``: where to add the records/s of the run without that maintenance round, if one ran.
    ``cycles``: where to add the records/s from the start of the first cycle to the end of the last
    (the job's set-up before it and the maintenance round after it left out), the engine timed as
    the two baselines are, from their assignment to their last append.
    """
    from connector.config.sink_config import SinkConfig
    from connector.job import SinkJob
    from connector.spark.runner import SparkTaskRunner

    class CycleTimedJob(SinkJob):
        first_began: float | None = None
        last_ended: float | None = None

        def cycle(self, start, target):
            if self.first_began is None:
                self.first_began = time.perf_counter()
            try:
                return super().cycle(start, target)
            finally:
                self.last_ended = time.perf_counter()

    config = SinkConfig.parse(props, {"bootstrap.servers": bootstrap})
    runner = SparkTaskRunner(spark)
    began = time.perf_counter()
    job = CycleTimedJob(config, runner, default_parallelism=runner.default_parallelism, until_caught_up=True)
    summary = job.run()
    elapsed = time.perf_counter() - began
    written = sum(sum(c.rows_written.values()) for c in summary.cycles)
    if written != (RECORDS if expected is None else expected):
        raise SystemExit(f"{props['name']}: wrote {written} rows, expected {expected or RECORDS}")
    maintenance = job.maintainer.last_report
    if ingestion is not None and maintenance is not None:
        ingestion.append(RECORDS / (elapsed - maintenance.seconds))
    if cycles is not None and job.first_began is not None and job.last_ended is not None:
        cycles.append(RECORDS / (job.last_ended - job.first_began))
    return RECORDS / elapsed


# --- one task's pipeline, without Kafka and Spark ---------------------------------------------------


def raw_batches(values: list[bytes], topic: str = "bench") -> list[pa.RecordBatch]:
    from connector.kafka.range_reader import RAW_SCHEMA

    batches = []
    for start in range(0, len(values), BATCH):
        chunk = values[start:start + BATCH]
        n = len(chunk)
        batches.append(pa.RecordBatch.from_arrays([
            pa.array([topic] * n, pa.string()), pa.array([0] * n, pa.int32()),
            pa.array(range(start, start + n), pa.int64()),
            pa.array(range(1_700_000_000_000 + start, 1_700_000_000_000 + start + n), pa.int64()),
            pa.array([1] * n, pa.int8()), pa.array([None] * n, pa.binary()), pa.array(chunk, pa.binary()),
            pa.array([[]] * n, RAW_SCHEMA.field("headers").type),
        ], schema=RAW_SCHEMA))
    return batches


def pipeline_rate(props: dict[str, str], batches: list[pa.RecordBatch], *, columnar: bool,
                  expected_path: str) -> float:
    """Records/s of one TaskPipeline over ``batches`` (table created first, files written)."""
    from connector.commit.schema_changes import apply_schema_needs
    from connector.config.sink_config import SinkConfig
    from connector.task import new_pipeline

    config = SinkConfig.parse(props, {"bootstrap.servers": "unused:9092"})
    setup = new_pipeline(config, "bench-setup", columnar=False)
    needs = setup.process(batches[0].slice(0, 10))
    apply_schema_needs(setup.catalog, config, needs.create, needs.updates)
    pipeline = new_pipeline(config, "bench", columnar=columnar)
    if pipeline.path != expected_path:
        raise SystemExit(f"{props['name']}: took the {pipeline.path} path, expected {expected_path}")
    records = sum(b.num_rows for b in batches)
    began = time.perf_counter()
    for batch in batches:
        if pipeline.process(batch):
            raise SystemExit(f"{props['name']}: unexpected schema change")
    _, rows = pipeline.close()
    elapsed = time.perf_counter() - began
    if sum(rows.values()) != records:
        raise SystemExit(f"{props['name']}: wrote {rows}, expected {records}")
    if columnar and pipeline.batches.get("columnar", 0) != len(batches):
        raise SystemExit(f"{props['name']}: some batches left the columnar path: {dict(pipeline.batches)}")
    return records / elapsed


def measure_pipeline(values: list[bytes]) -> dict[str, list[float]]:
    batches = raw_batches(values)
    per_record_batches = batches[:max(1, len(batches) // 10)]  # the slow path on a tenth
    results: dict[str, list[float]] = {"pipeline plain": [], "pipeline smt3": [], "pipeline smt3 per-record": []}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(REPEAT + 2):  # cheap: a few more runs for steadier medians
            results["pipeline plain"].append(pipeline_rate(
                props_for(f"p{run}", "bench", work=Path(tmp)), batches, columnar=True, expected_path="columnar"))
            results["pipeline smt3"].append(pipeline_rate(
                props_for(f"s{run}", "bench", SMT3, work=Path(tmp)), batches, columnar=True,
                expected_path="columnar with batch SMTs"))
        results["pipeline smt3 per-record"].append(pipeline_rate(
            props_for("r", "bench", SMT3, work=Path(tmp)), per_record_batches, columnar=False,
            expected_path="per-record"))
    return results


TOLERANT = {"errors.tolerance": "all"}
BAD_EVERY = 100  # 1 % bad records


def dirty_values(values: list[bytes]) -> list[bytes]:
    """The values with every 100th one cut short (malformed JSON)."""
    return [b'{"id": %d, "name": ' % i if i % BAD_EVERY == BAD_EVERY - 1 else v for i, v in enumerate(values)]


def bad_count(count: int) -> int:
    return sum(1 for i in range(count) if i % BAD_EVERY == BAD_EVERY - 1)


def tolerant_rate(props: dict[str, str], batches: list[pa.RecordBatch], bad: int) -> float:
    """Records/s of one tolerant TaskPipeline over ``batches`` holding ``bad`` malformed values."""
    from connector.commit.schema_changes import apply_schema_needs
    from connector.config.sink_config import SinkConfig
    from connector.task import new_pipeline

    config = SinkConfig.parse(props, {"bootstrap.servers": "unused:9092"})
    setup = new_pipeline(config, "bench-setup", columnar=False)
    needs = setup.process(batches[0].slice(0, 10))
    apply_schema_needs(setup.catalog, config, needs.create, needs.updates)
    pipeline = new_pipeline(config, "bench", columnar=True)
    records = sum(b.num_rows for b in batches)
    began = time.perf_counter()
    for batch in batches:
        if pipeline.process(batch):
            raise SystemExit(f"{props['name']}: unexpected schema change")
    _, rows = pipeline.close()
    elapsed = time.perf_counter() - began
    errant = len(pipeline.take_errant())
    if sum(rows.values()) != records - bad or errant != bad:
        raise SystemExit(f"{props['name']}: wrote {rows} and reported {errant}, expected {records - bad} and {bad}")
    if pipeline.batches.get("columnar", 0) < len(batches):  # every batch's good rows went column-wise
        raise SystemExit(f"{props['name']}: good rows left the columnar path: {dict(pipeline.batches)}")
    return records / elapsed


def measure_tolerance(values: list[bytes], only: set[str]) -> dict[str, list[float]]:
    """errors.tolerance=all on clean data and with 1 % bad records, against tolerance=none, interleaved."""
    clean = raw_batches(values)
    dirty = raw_batches(dirty_values(values))
    bad = bad_count(len(values))
    results: dict[str, list[float]] = {"pipeline tolerance none": []}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(REPEAT + 2):
            results["pipeline tolerance none"].append(pipeline_rate(
                props_for(f"n{run}", "bench", work=Path(tmp)), clean, columnar=True, expected_path="columnar"))
            if not only or "tolerance-clean" in only:
                results.setdefault("pipeline tolerance-clean", []).append(
                    tolerant_rate(props_for(f"c{run}", "bench", TOLERANT, work=Path(tmp)), clean, 0))
            if not only or "tolerance-1pct" in only:
                results.setdefault("pipeline tolerance-1pct", []).append(
                    tolerant_rate(props_for(f"d{run}", "bench", TOLERANT, work=Path(tmp)), dirty, bad))
    return results


def main() -> int:
    from connector.spark.session import build_session

    only = set(filter(None, os.environ.get("ICEFLOE_BENCH_ONLY", "").split(",")))
    shutil.rmtree(WORK, ignore_errors=True)
    results: dict[str, list[float]] = {}
    values = sample_values(RECORDS)
    print(f"{RECORDS} records of ~{sum(map(len, values[:1000])) // 1000} B in {PARTITIONS} partitions, "
          f"{REPEAT} run(s) per scenario, {os.cpu_count()} CPUs")
    memory: dict[str, list[float]] = {}
    fixed: list[float] = []
    latency = None
    cdc = None
    if not only or only & BROKER_SCENARIOS:
        with TansuBroker() as broker, SchemaRegistryServer() as registry:
            topic = "bench"
            create_topic(broker.bootstrap, topic, partitions=PARTITIONS)
            for p in range(PARTITIONS):
                produce(broker.bootstrap, topic, values[p::PARTITIONS], partition=p)
            check_path(props_for("check-plain", topic), "columnar")
            check_path(props_for("check-smt3", topic, SMT3), "columnar with batch SMTs")
            if not only or only & {"avro", "avro-smt3", "cli"}:
                encoded = avro_values(registry.url, "bench-avro", RECORDS)
                create_topic(broker.bootstrap, "bench-avro", partitions=PARTITIONS)
                for p in range(PARTITIONS):
                    produce(broker.bootstrap, "bench-avro", encoded[p::PARTITIONS], partition=p)
                check_path(avro_props("check-avro", "bench-avro", registry.url), "columnar Avro")
                check_path(avro_props("check-avro-smt3", "bench-avro", registry.url, SMT3),
                           "columnar Avro with batch SMTs")
                check_columnar(avro_props("check-avro-smt3-batches", "bench-avro", registry.url, SMT3),
                               raw_batches(encoded[:2 * BATCH], "bench-avro"), "columnar Avro with batch SMTs")
            if not only or "json-schemas" in only:
                create_topic(broker.bootstrap, "bench-envelope", partitions=PARTITIONS)
                enveloped = envelope_values(values)
                for p in range(PARTITIONS):
                    produce(broker.bootstrap, "bench-envelope", enveloped[p::PARTITIONS], partition=p)
                check_path(envelope_props("check-envelope", "bench-envelope"), "columnar JSON with schemas")
            if not only or "json-schema" in only:
                create_topic(broker.bootstrap, "bench-json-schema", partitions=PARTITIONS)
                framed = json_schema_values(registry.url, "bench-json-schema", values)
                for p in range(PARTITIONS):
                    produce(broker.bootstrap, "bench-json-schema", framed[p::PARTITIONS], partition=p)
                check_path(json_schema_props("check-json-schema", "bench-json-schema", registry.url),
                           "columnar JSON Schema")
            if not only or "protobuf" in only:
                create_topic(broker.bootstrap, "bench-protobuf", partitions=PARTITIONS)
                messages = protobuf_values(registry.url, "bench-protobuf", RECORDS)
                for p in range(PARTITIONS):
                    produce(broker.bootstrap, "bench-protobuf", messages[p::PARTITIONS], partition=p)
                check_path(protobuf_props("check-protobuf", "bench-protobuf", registry.url), "columnar Protobuf")
                check_columnar(protobuf_props("check-protobuf-batches", "bench-protobuf", registry.url),
                               raw_batches(messages[:2 * BATCH], "bench-protobuf"), "columnar Protobuf")
            if not only or "tolerance-e2e" in only:
                create_topic(broker.bootstrap, "bench-dirty", partitions=PARTITIONS)
                dirty = dirty_values(values)
                for p in range(PARTITIONS):
                    produce(broker.bootstrap, "bench-dirty", dirty[p::PARTITIONS], partition=p)
            spark = build_session("icefloe-bench")
            try:
                run_icefloe(spark, broker.bootstrap, props_for("warm-up", topic))  # Spark and Python workers
                results["raw"] = [raw_consume_rate(broker.bootstrap, topic)]
                for run in range(REPEAT):
                    if not only or "icefloe" in only:
                        results.setdefault("icefloe", []).append(run_icefloe(
                            spark, broker.bootstrap, props_for(f"plain{run}", topic),
                            ingestion=results.setdefault("icefloe ingestion only", []),
                            cycles=results.setdefault("icefloe cycles only", [])))
                    if not only or "tolerance-e2e" in only:
                        if only and "icefloe" not in only:
                            results.setdefault("icefloe", []).append(
                                run_icefloe(spark, broker.bootstrap, props_for(f"plain{run}", topic)))
                        dlq = {**TOLERANT, "errors.deadletterqueue.topic.name": f"bench-dlq-{run}",
                               "errors.deadletterqueue.topic.replication.factor": "1",
                               "errors.deadletterqueue.context.headers.enable": "true"}
                        results.setdefault("e2e tolerance-clean", []).append(
                            run_icefloe(spark, broker.bootstrap, props_for(f"tolclean{run}", topic, dlq)))
                        results.setdefault("e2e tolerance-1pct", []).append(run_icefloe(
                            spark, broker.bootstrap, props_for(f"toldirty{run}", "bench-dirty", dlq),
                            expected=RECORDS - bad_count(RECORDS)))
                    if not only or "smt3" in only:
                        results.setdefault("smt3", []).append(
                            run_icefloe(spark, broker.bootstrap, props_for(f"smt3_{run}", topic, SMT3)))
                    if not only or "avro" in only:
                        results.setdefault("avro", []).append(run_icefloe(
                            spark, broker.bootstrap, avro_props(f"avro{run}", "bench-avro", registry.url)))
                    if not only or "avro-smt3" in only:
                        results.setdefault("avro-smt3", []).append(run_icefloe(
                            spark, broker.bootstrap, avro_props(f"avro_smt3_{run}", "bench-avro", registry.url,
                                                                SMT3)))
                    if not only or "json-schemas" in only:
                        results.setdefault("json-schemas", []).append(run_icefloe(
                            spark, broker.bootstrap, envelope_props(f"envelope{run}", "bench-envelope")))
                        # the envelopes carry their schema: ~4x the bytes of the same records to read
                        results.setdefault("raw envelopes", []).append(
                            raw_consume_rate(broker.bootstrap, "bench-envelope"))
                    if not only or "json-schema" in only:
                        results.setdefault("json-schema", []).append(run_icefloe(
                            spark, broker.bootstrap,
                            json_schema_props(f"json_schema{run}", "bench-json-schema", registry.url)))
                    if not only or "protobuf" in only:
                        results.setdefault("protobuf", []).append(run_icefloe(
                            spark, broker.bootstrap, protobuf_props(f"protobuf{run}", "bench-protobuf", registry.url)))
                    results["raw"].append(raw_consume_rate(broker.bootstrap, topic))
                    if not only or "hand-rolled" in only:
                        results.setdefault("hand-rolled", []).append(
                            hand_rolled_rate(broker.bootstrap, topic, (WORK / f"hand{run}").resolve()))
                if not only or "cdc" in only:
                    from tests.bench.cdc import measure_cdc

                    cdc = measure_cdc(spark, broker.bootstrap, props_for, PARTITIONS)
            finally:
                spark.stop()
            if not only or "cli" in only:
                measure_cli(broker.bootstrap, registry.url, values, results, memory, fixed)
            if not only or "cluster" in only:
                measure_cluster(broker.bootstrap, results)
            if not only or "latency" in only:
                latency = measure_continuous(broker.bootstrap, values)
    if not only or "pipeline" in only:
        results.update(measure_pipeline(values))
    if not only or only & {"tolerance-clean", "tolerance-1pct"}:
        results.update(measure_tolerance(values, only))
    maintenance = None
    if not only or "maintenance" in only:
        from tests.bench.maintenance import measure_maintenance

        maintenance = measure_maintenance()
    printed = io.StringIO()
    with contextlib.redirect_stdout(_Tee(sys.stdout, printed)):
        report(results)
        report_cli(memory, fixed)
        report_latency(latency)
        from tests.bench.maintenance import report_maintenance

        report_maintenance(maintenance)
        from tests.bench.cdc import report_cdc

        report_cdc(cdc)
    append_to_docs(printed.getvalue(), only)
    return 0


def raw_consume_rate(bootstrap: str, topic: str, records: int = RECORDS) -> float:
    """Records/s of one raw consume of ``topic``, run as a script of its own (see the module's docstring)."""
    from tests.bench.cli import run_script

    _, printed = run_script(["-m", "tests.bench.raw_consume", "--bootstrap", bootstrap, "--topic", topic,
                             "--records", str(records), "--repeat", "1"])
    return float(json.loads(printed.splitlines()[-1])["raw"]["median"])


def hand_rolled_rate(bootstrap: str, topic: str, work: Path, records: int = RECORDS) -> float:
    """Records/s of the hand-rolled pipeline from assignment to its last append, run as a script of its own."""
    from tests.bench.cli import run_script

    _, printed = run_script(["-m", "tests.bench.hand_rolled", bootstrap, topic, str(records), str(work)])
    return float(printed.split()[0])


def report_latency(latency) -> None:
    if latency is not None:
        print(f"continuous mode (commit interval {LATENCY_INTERVAL_MS / 1000:.0f} s): first commit visible "
              f"{latency.first_commit_seconds:.1f} s after start (target <= 10 s); record-to-visible latency "
              f"p50 {latency.p50_seconds:.1f} s, p95 {latency.p95_seconds:.1f} s over {latency.records:,} records "
              f"(target p95 <= interval + 2 s)")


class _Tee(io.TextIOBase):
    def __init__(self, *streams):
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)


def append_to_docs(report_text: str, only: set[str]) -> None:
    """Append this run's figures to docs/benchmarks.md, with the machine they were measured on."""
    cpu = "unknown CPU"
    with contextlib.suppress(OSError):
        models = [line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")]
        cpu = models[0] if models else cpu
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    scenarios = ", ".join(sorted(only)) if only else "all"
    section = (f"\n## make bench, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n\n"
               f"{os.cpu_count()} CPUs ({cpu}), load average {load}; Python {platform.python_version()}, "
               f"{RECORDS:,} records, {REPEAT} run(s) per scenario; scenarios: {scenarios}.\n\n"
               f"```\n{report_text.strip()}\n```\n")
    with open(DOCS, "a", encoding="utf-8") as handle:
        handle.write(section)
    print(f"\nappended to {DOCS}")


LATENCY_INTERVAL_MS = 2000
#: The scenarios that need the broker (and the registry).
BROKER_SCENARIOS = {"raw", "hand-rolled", "icefloe", "smt3", "avro", "avro-smt3", "json-schemas", "json-schema",
                    "protobuf", "cli", "cluster", "latency", "tolerance-e2e", "cdc"}


def measure_cluster(bootstrap: str, results: dict[str, list[float]]) -> None:
    """The backfill on a standalone cluster on loopback against local[*], same topic, alternated."""
    from tests.bench.cli import run_cli
    from tests.support.spark_cluster import SparkStandaloneCluster

    work = (WORK / "cluster").resolve()
    work.mkdir(parents=True, exist_ok=True)
    cluster = SparkStandaloneCluster(cores=2, memory="2g").start()
    try:
        for run in range(REPEAT):
            local = run_cli(props_for(f"local{run}", "bench"), bootstrap, work)
            standalone = run_cli(props_for(f"standalone{run}", "bench"), bootstrap, work,
                                 {"spark.master": cluster.master_url})
            for name, outcome in (("cli json local[*]", local), ("cli json standalone", standalone)):
                if outcome.records != RECORDS:
                    raise SystemExit(f"{name}: read {outcome.records} records, expected {RECORDS}")
                results.setdefault(name, []).append(RECORDS / outcome.seconds)
    finally:
        cluster.stop()


def measure_continuous(bootstrap: str, values: list[bytes]):
    from tests.bench.latency import measure_latency

    create_topic(bootstrap, "bench-live", partitions=PARTITIONS)
    for p in range(PARTITIONS):
        produce(bootstrap, "bench-live", values[:1000][p::PARTITIONS], partition=p)
    work = (WORK / "latency").resolve()
    work.mkdir(parents=True, exist_ok=True)
    props = props_for("live", "bench-live", {"iceberg.control.commit.interval-ms": str(LATENCY_INTERVAL_MS)})
    return measure_latency(props, bootstrap, "bench-live", work)


def measure_cli(bootstrap: str, registry_url: str, values: list[bytes], results: dict[str, list[float]],
                memory: dict[str, list[float]], fixed: list[float]) -> None:
    """``icefloe run`` as a user runs it: records/s end to end, peak memory, and the fixed cost."""
    from tests.bench.cli import run_cli, time_script

    create_topic(bootstrap, "bench-tiny", partitions=PARTITIONS)
    for p in range(PARTITIONS):
        produce(bootstrap, "bench-tiny", values[:1000][p::PARTITIONS], partition=p)
    work = (WORK / "cli").resolve()
    work.mkdir(parents=True, exist_ok=True)
    for run in range(REPEAT):
        scenarios = {"cli json": props_for(f"cli-json{run}", "bench"),
                     "cli avro": avro_props(f"cli-avro{run}", "bench-avro", registry_url)}
        for name, props in scenarios.items():
            outcome = run_cli(props, bootstrap, work)
            if outcome.records != RECORDS:
                raise SystemExit(f"{name}: read {outcome.records} records, expected {RECORDS}")
            results.setdefault(name, []).append(RECORDS / outcome.seconds)
            memory.setdefault(name, []).append(outcome.peak_rss_mb)
        fixed.append(run_cli(props_for(f"cli-tiny{run}", "bench-tiny"), bootstrap, work).seconds)
        results.setdefault("cli hand-rolled", []).append(RECORDS / time_script(
            ["-m", "tests.bench.hand_rolled", bootstrap, "bench", str(RECORDS), str(work / f"hand{run}")]))


def report_cli(memory: dict[str, list[float]], fixed: list[float]) -> None:
    for name, peaks in memory.items():
        print(f"{name}: peak memory of the process tree {statistics.median(peaks):,.0f} MB "
              f"(median of: {', '.join(f'{p:,.0f}' for p in peaks)})")
    if fixed:
        print(f"icefloe run --until-caught-up on 1,000 records: {statistics.median(fixed):.2f} s "
              f"(median of: {', '.join(f'{s:.2f}' for s in fixed)}; target <= 8 s)")


def report(results: dict[str, list[float]]) -> None:
    results = {name: rates for name, rates in results.items() if rates}
    median = {name: statistics.median(rates) for name, rates in results.items()}
    baseline = median.get("raw")
    print()
    for name, rates in results.items():
        versus = f"   {median[name] / baseline:5.2f} x raw" if baseline and not name.startswith("pipeline") else ""
        runs = ", ".join(f"{r:,.0f}" for r in rates)
        print(f"{name:26s} {median[name]:12,.0f} records/s (median of: {runs}){versus}")
    if "icefloe ingestion only" in median:
        print("icefloe: timed as a user times it, with the maintenance round at the end of --until-caught-up; "
              "icefloe ingestion only: the same runs without that round")
    if "hand-rolled" in median and "icefloe" in median:
        print(f"end to end: icefloe runs at {median['icefloe'] / median['hand-rolled']:.2f} x the hand-rolled "
              f"pipeline (target >= 2)")
    if "icefloe cycles only" in median and baseline:
        print("icefloe cycles only: the same runs from the start of the first cycle to the end of the last, as the "
              "baselines are timed from their assignment to their last append (the job's set-up left out: "
              "catalog, end offsets, resume positions)")
        versus_hand = (f" and {median['icefloe cycles only'] / median['hand-rolled']:.2f} x the hand-rolled pipeline "
                       f"(target >= 2)") if "hand-rolled" in median else ""
        print(f"steady state: icefloe cycles run at {median['icefloe cycles only'] / baseline:.2f} x raw consume "
              f"(target >= 0.5){versus_hand}")
    if "cli hand-rolled" in median and "cli json" in median:
        print(f"as a user times it (each a command, timed to its exit): icefloe run at "
              f"{median['cli json'] / median['cli hand-rolled']:.2f} x the hand-rolled pipeline's script")
    if "avro" in median and "icefloe" in median:
        print(f"end to end: Confluent Avro runs at {median['avro'] / median['icefloe']:.2f} x the schemaless "
              f"JSON rate on the same records (target >= 0.8)")
    if "avro-smt3" in median and "avro" in median:
        print(f"end to end: smt3 on Confluent Avro costs {1 - median['avro-smt3'] / median['avro']:.1%} of the "
              f"Avro throughput (target <= 20%)")
    if "json-schemas" in median and "icefloe" in median:
        print(f"end to end: JSON with schemas runs at {median['json-schemas'] / median['icefloe']:.2f} x the "
              f"schemaless JSON rate on the same records (target >= 0.8)")
    if {"json-schemas", "raw envelopes", "icefloe"} <= set(median) and baseline:
        print(f"  reading the envelopes alone (raw consume) runs at {median['raw envelopes'] / baseline:.2f} x "
              f"raw consume of the schemaless records; JSON with schemas at "
              f"{median['json-schemas'] / median['raw envelopes']:.2f} x its raw consume "
              f"(schemaless: {median['icefloe'] / baseline:.2f} x)")
    if "json-schema" in median and "icefloe" in median:
        print(f"end to end: Confluent JSON Schema runs at {median['json-schema'] / median['icefloe']:.2f} x the "
              f"schemaless JSON rate on the same records (target >= 0.8)")
    if "protobuf" in median and "icefloe" in median:
        print(f"end to end: Confluent Protobuf runs at {median['protobuf'] / median['icefloe']:.2f} x the "
              f"schemaless JSON rate on the same records (target >= 0.5)")
    if "smt3" in median and "icefloe" in median:
        print(f"\nend to end: smt3 costs {1 - median['smt3'] / median['icefloe']:.1%} of the no-SMT throughput "
              f"(target <= 20%)")
    if "icefloe" in median:
        for name in ("e2e tolerance-clean", "e2e tolerance-1pct"):
            if name in median:
                print(f"end to end: errors.tolerance=all with a DLQ ({name.split(' ')[-1]}) costs "
                      f"{1 - median[name] / median['icefloe']:.1%} of the icefloe throughput on clean data")
    if "pipeline tolerance none" in median:
        for name in ("pipeline tolerance-clean", "pipeline tolerance-1pct"):
            if name in median:
                print(f"one task's pipeline: errors.tolerance=all ({name.split(' ')[-1]}) costs "
                      f"{1 - median[name] / median['pipeline tolerance none']:.1%} of the tolerance=none "
                      f"throughput on clean data" + (" (target <= 5%)" if name.endswith("clean") else ""))
    if "pipeline smt3" in median and "pipeline plain" in median:
        print(f"one task's pipeline: smt3 costs {1 - median['pipeline smt3'] / median['pipeline plain']:.1%} "
              f"of the no-SMT throughput; the per-record path runs at "
              f"{median['pipeline smt3 per-record'] / median['pipeline smt3']:.2f} x the batch SMT path")


if __name__ == "__main__":
    sys.exit(main())
